//! Resolved spheres in a fluid split over ranks (slabs of z planes, or pencils: blocks of y rows and z
//! planes; ranks as threads: the code that runs under `mpirun`) follow the serial run bit for bit: the
//! forcing of each rank's block, the loads and inner integrals of the spheres each rank owns, and the
//! particles, split with the fluid's blocks (each rank holding the spheres near its block, as `silt
//! run` does) or held whole on every rank; a periodic box with spheres across the seams and the block
//! boundaries, and a channel with walls across z with a bed of touching spheres on its floor, on 1-4
//! ranks in slabs and in pencils (with windows of rows that wrap around the periodic y).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use silt_dem::domain::Domain;
use silt_dem::integrator::Integrator;
use silt_dem::material::Material;
use silt_dem::particles::Particles;
use silt_dem::system::DemSystem;
use silt_dem::wall::Wall;
use silt_dem::Vec3;
use silt_fluid::boundary::Boundaries;
use silt_fluid::solver::{FluidConfig, FluidSolver};
use silt_ibm::coupling::{coupled_step, CoupledParticles};
use silt_parallel::LocalGroup;
use silt_validation::setup::{crank_nicolson_fluid, wet_seed_model};

/// A fluid of `cells` (h = 1) with `boundaries` and `spheres` spheres of radii 1.8-2.6 h placed at
/// random (at least 0.3 h apart; in the lower half where z is walled) under gravity along -z; walls
/// for the spheres where z is bounded.
fn problem(cells: [usize; 3], boundaries: Boundaries, spheres: usize) -> (FluidConfig, DemSystem) {
    let (h, rho_f, nu, g, dt) = (1.0, 1.0, 0.1, 2e-3, 0.25);
    let config = crank_nicolson_fluid(cells, h, boundaries, nu, dt, [0.0; 3]);
    let lengths = cells.map(|n| n as f64 * h);
    let periodic: [bool; 3] = std::array::from_fn(|a| boundaries.is_periodic(a));
    let materials = vec![Material {
        name: "grain".into(),
        density: 1.5,
        e_dry: 0.97,
        poisson: 0.3,
        mu_s: 0.3,
        mu_k: 0.3,
    }];
    let model = wet_seed_model(&materials, dt, rho_f, nu, h, g);
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let mut particles = Particles::default();
    // A bed: the spheres in the lower half of a walled z.
    let z_top = if periodic[2] {
        lengths[2]
    } else {
        lengths[2] / 2.0
    };
    let mut attempts = 0;
    while particles.len() < spheres {
        attempts += 1;
        assert!(attempts < 100_000, "could not place {spheres} spheres");
        let radius = rng.gen_range(1.8..2.6);
        let x = Vec3::from_array(std::array::from_fn(|a| {
            let (low, high) = match (periodic[a], a) {
                (true, _) => (0.0, lengths[a]),
                (false, 2) => (radius + 0.5 * h, z_top),
                (false, _) => (radius + 0.5 * h, lengths[a] - radius - 0.5 * h),
            };
            low + rng.gen::<f64>() * (high - low)
        }));
        let clear = (0..particles.len()).all(|q| {
            let mut d = particles.position[q] - x;
            for a in 0..3 {
                if periodic[a] {
                    d[a] -= lengths[a] * (d[a] / lengths[a]).round();
                }
            }
            d.length() > particles.radius[q] + radius + 0.3 * h
        });
        if clear {
            particles.push(x, Vec3::ZERO, radius, 1.5, 0, false);
        }
    }
    let walls = if periodic[2] {
        Vec::new()
    } else {
        let wall = |z: f64, normal: f64| Wall {
            point: Vec3::new(0.0, 0.0, z),
            normal: Vec3::new(0.0, 0.0, normal),
            material: 0,
            velocity: Vec3::ZERO,
        };
        vec![wall(0.0, 1.0), wall(lengths[2], -1.0)]
    };
    let dem = DemSystem::new(
        Domain {
            min: Vec3::ZERO,
            max: Vec3::from_array(lengths),
            periodic,
        },
        Vec3::new(0.0, 0.0, -g),
        materials,
        model,
        particles,
        walls,
        Integrator::SEED,
        dt,
        0.2 * h,
    );
    (config, dem)
}

/// What a rank ends with: its block of cells, its fields (ghosts included) and the position,
/// velocity, angular velocity and last hydrodynamic force of every sphere it owns (all of them when it
/// holds them whole), by global index, as bits.
struct Outcome {
    block: [std::ops::Range<usize>; 2],
    fields: Vec<Vec<f64>>,
    spheres: Vec<(usize, [u64; 12])>,
}

fn run(fluid: &mut FluidSolver, coupled: &mut CoupledParticles, steps: usize) -> Outcome {
    let dt = 0.25;
    for _ in 0..steps {
        coupled_step(fluid, coupled, dt).expect("a stable step");
    }
    let p = &coupled.dem.particles;
    let halo = coupled.dem.halo.as_ref();
    let spheres = (0..p.len())
        .filter(|&i| halo.is_none_or(|h| h.owned[i]))
        .map(|i| {
            let mut bits = [0; 12];
            let values = [
                p.position[i],
                p.velocity[i],
                p.angular_velocity[i],
                coupled.forcing.force[i],
            ];
            for (k, v) in values.iter().flat_map(|v| v.to_array()).enumerate() {
                bits[k] = v.to_bits();
            }
            (coupled.dem.global_index(i), bits)
        })
        .collect();
    let s = &fluid.state;
    Outcome {
        block: [fluid.decomposition().rows(), fluid.decomposition().slab()],
        fields: vec![
            s.velocity[0].data.clone(),
            s.velocity[1].data.clone(),
            s.velocity[2].data.clone(),
            s.pressure.data.clone(),
        ],
        spheres,
    }
}

/// Runs the problem serially and on the process grids `grids` (`[p_y, p_z]`) and compares every
/// rank's block and spheres with the serial run's.
fn same_on_every_process_grid(
    cells: [usize; 3],
    boundaries: Boundaries,
    spheres: usize,
    steps: usize,
    grids: &[[usize; 2]],
) {
    let (config, dem) = problem(cells, boundaries, spheres);
    let couple = |dem: DemSystem| {
        let mut coupled = CoupledParticles::new(dem, config.grid, &config.boundaries, 1.0, 3, 0.3);
        coupled.in_contact = silt_ibm::coupling::ContactHydrodynamics::Seed;
        coupled
    };
    let mut fluid = FluidSolver::new(config.clone()).unwrap();
    let mut coupled = couple(dem.clone());
    let expected = run(&mut fluid, &mut coupled, steps);
    let (between, moved) = (
        coupled.forcing.disabled_between_spheres,
        coupled
            .dem
            .particles
            .velocity
            .iter()
            .all(|v| *v != Vec3::ZERO),
    );
    assert!(between > 0, "no markers are disabled between close spheres");
    assert!(moved, "some sphere did not move");
    let whole = &fluid.state.pressure;
    for (&dims, split) in grids.iter().flat_map(|d| [(d, true), (d, false)]) {
        let ranks = dims[0] * dims[1];
        let outcomes = LocalGroup::run(ranks, |comm| {
            let mut fluid = FluidSolver::on_process_grid(config.clone(), comm, dims).unwrap();
            let mut coupled = couple(dem.clone());
            if split {
                coupled.distribute(fluid.decomposition());
            } else {
                coupled.forcing.split(fluid.decomposition());
            }
            run(&mut fluid, &mut coupled, steps)
        });
        let mut owners = vec![0; expected.spheres.len()];
        for (rank, outcome) in outcomes.iter().enumerate() {
            let [rows, slab] = &outcome.block;
            for (f, (mine, serial)) in outcome.fields.iter().zip(&expected.fields).enumerate() {
                // Local rows and planes 0..=n+1 (ghosts included) are the serial rows
                // rows.start..=rows.end + 1 of planes slab.start..=slab.end + 1.
                let row = whole.dims[0];
                let global: Vec<f64> = (slab.start..slab.end + 2)
                    .flat_map(|k| {
                        let first = whole.index(0, rows.start, k);
                        serial[first..first + row * (rows.len() + 2)].to_vec()
                    })
                    .collect();
                let worst = mine
                    .iter()
                    .zip(&global)
                    .map(|(a, b)| (a - b).abs())
                    .fold(0.0, f64::max);
                assert!(
                    *mine == global,
                    "{cells:?}: field {f} on rank {rank} of {dims:?} (rows {rows:?}, planes \
                     {slab:?}, split: {split}) differs from the serial one by up to {worst:e}"
                );
            }
            for (i, mine) in &outcome.spheres {
                owners[*i] += 1;
                assert_eq!(
                    mine, &expected.spheres[*i].1,
                    "{cells:?}: sphere {i} on rank {rank} of {dims:?} (split: {split}): position, \
                     velocities, force"
                );
            }
        }
        let once = if split { 1 } else { ranks };
        assert!(
            owners.iter().all(|&n| n == once),
            "{cells:?}, {dims:?} (split: {split}): spheres held {owners:?} times"
        );
    }
}

/// Slabs of 1-4 ranks and pencils of 2 x 1, 3 x 1 and 2 x 2.
const GRIDS: [[usize; 2]; 7] = [[1, 1], [1, 2], [1, 3], [1, 4], [2, 1], [3, 1], [2, 2]];

#[test]
fn spheres_in_a_periodic_box_are_the_same_on_slabs_and_pencils() {
    same_on_every_process_grid([14, 12, 20], Boundaries::periodic(), 10, 3, &GRIDS);
}

#[test]
fn a_bed_on_a_walled_floor_is_the_same_on_slabs_and_pencils() {
    same_on_every_process_grid([14, 12, 24], Boundaries::channel(2), 12, 3, &GRIDS);
}

/// A wide bed split across y in pencils whose windows hold only some of the rows (a window reaches 9
/// rows beyond its block: 10 of 30 rows per rank on 3 x 1 and 4 x 1 leave rows out, wrapped around
/// the periodic y), and in slabs for comparison.
#[test]
fn a_wide_bed_is_the_same_on_pencils_with_windows_of_some_rows() {
    same_on_every_process_grid(
        [12, 30, 20],
        Boundaries::channel(2),
        20,
        3,
        &[[1, 2], [3, 1], [4, 1], [3, 2]],
    );
}
