//! Spheres split over ranks (ranks as threads: the code that runs under `mpirun`) follow the serial
//! run bit for bit: the LAMMPS bed under velocity Verlet and the seed's model under its RK3
//! predictor–corrector, split along a periodic axis (spheres migrate through the periodic sides) and
//! along the wall-bounded axis of gravity, on 2, 3 and 4 ranks, through several distributions.

use silt_dem::distributed::Slabs;
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
    let split = |system: &mut DemSystem, comm| system.distribute(comm, axis);
    compare_split(make, &split, steps, ranks, serial, &format!("axis {axis}"))
}

/// [`compare`] with the system split by `split`.
fn compare_split(
    make: &(dyn Fn() -> DemSystem + Sync),
    split: &(dyn Fn(&mut DemSystem, silt_parallel::Comm) + Sync),
    steps: u64,
    ranks: usize,
    serial: &State,
    how: &str,
) -> u64 {
    let pieces = LocalGroup::run(ranks, |comm| {
        let mut system = make();
        split(&mut system, comm);
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
                "sphere {id} on rank {rank} of {ranks} ({how}) after {steps} steps"
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
fn the_lammps_bed_in_blocks_of_two_axes_is_the_serial_bed() {
    // Blocks across gravity (x and y), and x and z: 2 x 2, 3 x 2 and 2 x 3 ranks; a sphere near a
    // block's corner is a ghost of the diagonal block too.
    use silt_dem::distributed::Slabs;
    let make = || lammps_bed([6, 6, 6]);
    let steps = 6000;
    let mut serial = make();
    for _ in 0..steps {
        serial.step().unwrap();
    }
    let serial = serial_state(&serial);
    for (counts, axes) in [([2, 2], [0, 1]), ([3, 2], [0, 1]), ([2, 3], [0, 2])] {
        let split = |system: &mut DemSystem, comm| {
            let domain = system.domain.clone();
            let blocks = Slabs::blocks(
                Slabs::new(&domain, axes[0], counts[0]),
                Slabs::new(&domain, axes[1], counts[1]),
            );
            system.distribute_on(comm, blocks, 0.0);
        };
        let how = format!("{} x {} blocks along {axes:?}", counts[0], counts[1]);
        let distributions =
            compare_split(&make, &split, steps, counts[0] * counts[1], &serial, &how);
        assert!(distributions >= 3, "{distributions} distributions, {how}");
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

/// Two spheres far apart in an open box (no gravity), one of them at `speed` along x; x is periodic
/// when `periodic`.
fn two_spheres(speed: f64, periodic: bool) -> DemSystem {
    use silt_dem::domain::Domain;
    use silt_dem::integrator::Integrator;
    use silt_dem::particles::Particles;
    use silt_validation::bench_dem::{lammps_model, material, DT, SKIN};
    let materials = vec![material()];
    let mut particles = Particles::default();
    particles.push(
        Vec3::new(1.0, 5.0, 5.0),
        Vec3::new(speed, 0.0, 0.0),
        0.5,
        1.0,
        0,
        false,
    );
    particles.push(Vec3::new(7.0, 5.0, 5.0), Vec3::ZERO, 0.5, 1.0, 0, false);
    DemSystem::new(
        Domain {
            min: Vec3::ZERO,
            max: Vec3::splat(10.0),
            periodic: [periodic, false, false],
        },
        Vec3::ZERO,
        materials.clone(),
        lammps_model(&materials),
        particles,
        Vec::new(),
        Integrator::VelocityVerlet,
        DT,
        SKIN,
    )
}

/// Runs `make()` for up to `steps` on `ranks` ranks split along x; returns each rank's outcome.
fn outcomes(
    make: &(dyn Fn() -> DemSystem + Sync),
    steps: u64,
    ranks: usize,
) -> Vec<Result<(), String>> {
    LocalGroup::run(ranks, |comm| {
        let mut system = make();
        system.distribute(comm, 0);
        (0..steps).try_for_each(|_| system.step().map_err(|e| e.to_string()))
    })
}

#[test]
fn a_sphere_faster_than_the_ghost_layers_allow_stops_every_rank_with_a_message() {
    // More than a quarter skin (0.05) in one step of 2e-4: the serial run has no such limit.
    let make = || two_spheres(1500.0, true);
    let mut serial = make();
    for _ in 0..5 {
        serial.step().unwrap();
    }
    for ranks in [2, 3] {
        for (rank, outcome) in outcomes(&make, 5, ranks).into_iter().enumerate() {
            let message = outcome.expect_err("the step fails");
            assert!(
                message.contains("moved more than a quarter of the neighbour skin")
                    && message.contains("time step"),
                "rank {rank} of {ranks}: {message}"
            );
        }
    }
    // Just within the allowance, the split run follows the serial one.
    let make = || two_spheres(200.0, true);
    for outcome in outcomes(&make, 40, 3) {
        outcome.unwrap();
    }
}

#[test]
fn a_sphere_leaving_the_box_is_named_by_every_rank_as_in_the_serial_run() {
    let make = || two_spheres(200.0, false);
    let mut serial = make();
    let expected = (0..400)
        .try_for_each(|_| serial.step().map_err(|e| e.to_string()))
        .expect_err("sphere 0 knocks sphere 1 out through x = 10");
    assert!(
        expected.contains("particle 1 left the domain"),
        "{expected}"
    );
    for ranks in [2, 3, 4] {
        for (rank, outcome) in outcomes(&make, 400, ranks).into_iter().enumerate() {
            assert_eq!(outcome, Err(expected.clone()), "rank {rank} of {ranks}");
        }
    }
}

#[test]
fn slabs_thinner_than_the_ghost_layer_still_give_the_serial_bed() {
    // Six slabs of 1.05 along x, each thinner than its ghost layer (1.4): ghosts come from several
    // ranks on each side.
    let make = || lammps_bed([6, 6, 3]);
    let steps = 2500;
    let mut serial = make();
    for _ in 0..steps {
        serial.step().unwrap();
    }
    let serial = serial_state(&serial);
    compare(&make, steps, 6, 0, &serial);
}

#[test]
fn slabs_of_a_grids_cells_with_wider_ghost_layers_give_the_serial_bed() {
    // As a coupled run splits its spheres: along z at the cells of the fluid's slabs (uneven blocks
    // of a grid of 16 cells over the box's height), with ghost layers as wide as the markers' reach.
    let make = || lammps_bed([6, 6, 6]);
    let steps = 4000;
    let mut serial = make();
    for _ in 0..steps {
        serial.step().unwrap();
    }
    let serial = serial_state(&serial);
    for blocks in [vec![0..5, 5..16], vec![0..4, 4..9, 9..16]] {
        let split = |system: &mut DemSystem, comm| {
            let domain = system.domain.clone();
            let spacing = domain.length()[2] / 16.0;
            let slabs = Slabs::of_cells(&domain, 2, (domain.min[2], spacing), &blocks);
            let layer = 6.0 * system.particles.max_radius();
            system.distribute_on(comm, slabs, layer);
            assert_eq!(
                system.halo.as_ref().unwrap().layer,
                layer,
                "wider than contacts need"
            );
        };
        let distributions = compare_split(
            &make,
            &split,
            steps,
            blocks.len(),
            &serial,
            &format!("{blocks:?}"),
        );
        assert!(
            distributions >= 2,
            "{distributions} distributions, {blocks:?}"
        );
    }
}
