//! Spheres split over ranks (ranks as threads: the code that runs under `mpirun`) follow the serial
//! run bit for bit: the LAMMPS bed under velocity Verlet and the seed's model under its RK3
//! predictor–corrector, split along a periodic axis (spheres migrate through the periodic sides) and
//! along the wall-bounded axis of gravity, on 2, 3 and 4 ranks, through several distributions.

use silt_dem::system::DemSystem;
use silt_dem::Vec3;
use silt_parallel::LocalGroup;
use silt_validation::bench_dem::{lammps_bed, with_seed_model};

type State = Vec<[u64; 9]>;

fn bits(x: Vec3, u: Vec3, w: Vec3) -> [u64; 9] {
    let mut out = [0; 9];
    for (k, v) in x
        .to_array()
        .into_iter()
        .chain(u.to_array())
        .chain(w.to_array())
        .enumerate()
    {
        out[k] = v.to_bits();
    }
    out
}

fn serial_state(system: &DemSystem) -> State {
    let p = &system.particles;
    (0..p.len())
        .map(|i| bits(p.position[i], p.velocity[i], p.angular_velocity[i]))
        .collect()
}

/// Runs `make()`'s system for `steps` on `ranks` ranks split along `axis`; checks every owned sphere
/// against `serial`, each sphere owned once; returns the fewest distributions of a rank.
fn compare(
    make: &(dyn Fn() -> DemSystem + Sync),
    steps: u64,
    ranks: usize,
    axis: usize,
    serial: &State,
) -> u64 {
    let pieces = LocalGroup::run(ranks, |comm| {
        let mut system = make();
        system.distribute(comm, axis);
        for _ in 0..steps {
            system.step().unwrap();
        }
        let halo = system.halo.as_ref().unwrap();
        let p = &system.particles;
        let owned: Vec<(u32, [u64; 9])> = halo
            .owned_indices()
            .map(|k| {
                (
                    halo.ids[k],
                    bits(p.position[k], p.velocity[k], p.angular_velocity[k]),
                )
            })
            .collect();
        (owned, halo.distributions, halo.ids.len())
    });
    let mut seen = vec![false; serial.len()];
    let mut fewest = u64::MAX;
    for (rank, (owned, distributions, _held)) in pieces.into_iter().enumerate() {
        fewest = fewest.min(distributions);
        for (id, state) in owned {
            let id = id as usize;
            assert!(!seen[id], "sphere {id} owned twice");
            seen[id] = true;
            assert_eq!(
                state, serial[id],
                "sphere {id} on rank {rank} of {ranks} (axis {axis}) after {steps} steps"
            );
        }
    }
    assert!(seen.iter().all(|&s| s), "every sphere owned");
    fewest
}

#[test]
fn the_lammps_bed_on_two_to_four_ranks_is_the_serial_bed() {
    let make = || lammps_bed([6, 6, 6]);
    let steps = 6000;
    let mut serial = make();
    for _ in 0..steps {
        serial.step().unwrap();
    }
    let touching = serial.neighbors.state.iter().filter(|s| s.touching).count();
    assert!(
        touching > 50,
        "a settled bed with contact memory: {touching}"
    );
    let serial = serial_state(&serial);
    for (ranks, axis) in [(2, 0), (3, 0), (4, 1), (2, 2), (3, 2)] {
        let distributions = compare(&make, steps, ranks, axis, &serial);
        assert!(
            distributions >= 3,
            "{distributions} distributions on {ranks} ranks, axis {axis}"
        );
    }
}

#[test]
fn the_seed_model_on_two_and_three_ranks_is_the_serial_bed() {
    // A bed settled under the LAMMPS law, continued with the seed's contacts (enduring from the
    // start) under the predictor–corrector with sub-steps.
    let mut settled = lammps_bed([5, 5, 4]);
    for _ in 0..8000 {
        settled.step().unwrap();
    }
    let settled = with_seed_model(&settled);
    let make = || settled.clone();
    let steps = 300;
    let mut serial = make();
    let mut most_touching = 0;
    for _ in 0..steps {
        serial.step().unwrap();
        let touching = serial.neighbors.state.iter().filter(|s| s.touching).count();
        most_touching = most_touching.max(touching);
    }
    assert!(most_touching >= 15, "spheres in contact: {most_touching}");
    let serial = serial_state(&serial);
    for (ranks, axis) in [(2, 0), (3, 2)] {
        compare(&make, steps, ranks, axis, &serial);
    }
}
