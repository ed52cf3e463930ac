//! `silt bench dem`: the LAMMPS granular settling benchmark (`/work/shared/peers/lammps-settle.in`)
//! run with Silt, so that both codes can be timed on the same problem and the same machine.
//!
//! 22 x 22 x 21 spheres on a simple-cubic lattice of spacing 1.05, diameters uniform in [0.8, 1.0],
//! density 1, in a box 23.1 x 23.1 (periodic) x 44.1 with a frictional floor at z = 0, gravity 10, dt = 2e-4.
//! The bed settles with the LAMMPS law (`gran/hertz/history 2.0e5 NULL 50.0 NULL 0.5 1` + velocity Verlet);
//! then the settled bed is timed with that law and with the seed's full model (ACTM + spring with history,
//! RK3 predictor–corrector with {8, 2, 5} sub-steps), each in a rayon pool of every requested thread count.
//! Results do not depend on the thread count, so every row of a law ends in the same state.
//!
//! The seed's contacts are far stiffer than these Hertz contacts (k_n from u_in,crit with T_c = 10 dt), so
//! the Hertz overlaps of the settled bed (up to 4% of a radius) push it apart: over the default 200 steps the
//! bed expands and its contacts open (see `docs/performance.md`); the first 20 steps still time a packed bed.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use silt_dem::contact::hertz::HertzCoefficients;
use silt_dem::contact::{ContactModel, EnduringContact, NormalLaw, TangentialLaw};
use silt_dem::diagnostics::contact_statistics;
use silt_dem::domain::Domain;
use silt_dem::integrator::Integrator;
use silt_dem::material::Material;
use silt_dem::particles::Particles;
use silt_dem::system::DemSystem;
use silt_dem::wall::Wall;
use silt_dem::Vec3;
use silt_io::placement::lattice_positions;
use std::time::Instant;

/// Lattice spacing of the LAMMPS input (`lattice sc` of density 1/1.05^3).
pub const SPACING: f64 = 1.05;
/// Time step of the LAMMPS input.
pub const DT: f64 = 2.0e-4;
/// |g| of the LAMMPS input (`fix gravity 10.0 vector 0 0 -1`).
pub const GRAVITY: f64 = 10.0;
/// Neighbour skin of the LAMMPS input (`neighbor 0.2 bin`).
pub const SKIN: f64 = 0.2;
/// Smallest and largest diameter.
pub const DIAMETERS: (f64, f64) = (0.8, 1.0);
/// Temperature of `velocity all create 0.1 87287`.
pub const TEMPERATURE: f64 = 0.1;
/// Coulomb coefficient of the LAMMPS input (used for mu_s and mu_k of both models).
pub const FRICTION: f64 = 0.5;
/// Seed of the diameter and velocity draws.
pub const SEED: u64 = 87287;

/// What to run.
#[derive(Clone, Debug, PartialEq)]
pub struct BenchOptions {
    /// Thread counts to time, each in its own rayon pool.
    pub threads: Vec<usize>,
    /// Steps of the settling phase (LAMMPS `nsettle`), run once with the largest thread count.
    pub settle_steps: u64,
    /// Timed steps of the settled bed with the LAMMPS law (LAMMPS `nsteps`).
    pub timed_steps: u64,
    /// Timed steps with the seed's full model (30 force evaluations each).
    pub seed_model_steps: u64,
    /// Lattice sites along x, y and z (LAMMPS `nx`, `nx`, `nz`).
    pub lattice: [usize; 3],
}

impl Default for BenchOptions {
    fn default() -> Self {
        BenchOptions {
            threads: vec![1, 2],
            settle_steps: 20_000,
            timed_steps: 2_000,
            seed_model_steps: 20,
            lattice: [22, 22, 21],
        }
    }
}

/// One timed run: one contact law at one thread count.
#[derive(Clone, Debug, PartialEq)]
pub struct BenchRow {
    pub law: String,
    pub threads: usize,
    /// Wall-clock milliseconds per time step.
    pub ms_per_step: f64,
    /// Wall-clock microseconds per particle and time step.
    pub us_per_particle_step: f64,
    /// Force evaluations per time step (1 for velocity Verlet, 30 for the seed's sub-stepping).
    pub evaluations_per_step: u32,
    pub ms_per_evaluation: f64,
    /// Touching sphere pairs per particle, counted twice (LAMMPS `compute contact/atom` averaged).
    pub contacts_per_particle: f64,
    /// Highest particle centre at the end of the run (LAMMPS `c_zmax`).
    pub bed_top_max_centre_z: f64,
    /// 99th percentile of the particle tops z + r at the end of the run.
    pub bed_top_p99: f64,
}

/// Everything `silt bench dem` prints.
#[derive(Clone, Debug, PartialEq)]
pub struct BenchReport {
    pub particles: usize,
    pub rows: Vec<BenchRow>,
    /// CPU model and number of CPUs.
    pub machine: String,
    /// Wall-clock seconds of the settling phase.
    pub settle_seconds: f64,
}

impl BenchReport {
    /// The rows as a Markdown table.
    pub fn table(&self) -> String {
        let mut out = String::from(
            "| law | threads | ms/step | us/particle-step | evaluations/step | ms/evaluation | contacts/particle | max centre z | p99(z+r) |\n\
             |-----|--------:|--------:|-----------------:|-----------------:|--------------:|------------------:|-------------:|---------:|\n",
        );
        for r in &self.rows {
            out += &format!(
                "| {} | {} | {:.3} | {:.4} | {} | {:.4} | {:.3} | {:.3} | {:.3} |\n",
                r.law,
                r.threads,
                r.ms_per_step,
                r.us_per_particle_step,
                r.evaluations_per_step,
                r.ms_per_evaluation,
                r.contacts_per_particle,
                r.bed_top_max_centre_z,
                r.bed_top_p99
            );
        }
        out
    }
}

/// The material of spheres and floor: density 1, Coulomb coefficient 0.5 (static = kinetic).
pub fn material() -> Material {
    Material {
        name: "lammps-settle".into(),
        density: 1.0,
        e_dry: 0.9,
        poisson: 0.3,
        mu_s: FRICTION,
        mu_k: FRICTION,
    }
}

/// `pair_style gran/hertz/history 2.0e5 NULL 50.0 NULL 0.5 1`: k_t = 2/7 k_n, gamma_t = gamma_n / 2.
pub fn lammps_model(materials: &[Material]) -> ContactModel {
    let k_n = 2.0e5;
    let gamma_n = 50.0;
    ContactModel::new(
        NormalLaw::Hertz(HertzCoefficients {
            k_n,
            k_t: k_n * 2.0 / 7.0,
            gamma_n,
            gamma_t: 0.5 * gamma_n,
        }),
        TangentialLaw::ShearHistory,
        materials,
        10.0 * DT,
        EnduringContact::MinimumSpeed(0.0),
        1e-3,
        GRAVITY,
        None,
    )
}

/// The seed's dry model: ACTM + spring with history, T_c = 10 dt, e_dry = 0.9, impact-speed floor
/// 0.01 sqrt(g d) with the mean diameter, overlap bound 1e-3.
pub fn seed_model(materials: &[Material]) -> ContactModel {
    let mean_diameter = 0.5 * (DIAMETERS.0 + DIAMETERS.1);
    ContactModel::new(
        NormalLaw::Actm,
        TangentialLaw::SpringHistory,
        materials,
        10.0 * DT,
        EnduringContact::MinimumSpeed(0.01 * (GRAVITY * mean_diameter).sqrt()),
        1e-3,
        GRAVITY,
        None,
    )
}

/// The initial state of the LAMMPS input for a lattice of `lattice` sites (Hertz law, velocity Verlet).
///
/// Sites sit at integer multiples of the spacing: x, y = 0 .. (nx - 1) a and z = a .. nz a (LAMMPS
/// `region fill block 0 nx 0 nx 0.5 nz`); the box is nx a wide and 2 nz a high.
pub fn lammps_bed(lattice: [usize; 3]) -> DemSystem {
    let [nx, ny, nz] = lattice;
    let a = SPACING;
    let domain = Domain {
        min: Vec3::ZERO,
        max: Vec3::new(nx as f64 * a, ny as f64 * a, 2.0 * nz as f64 * a),
        periodic: [true, true, false],
    };
    // lattice_positions puts the first site half a spacing inside the region's corner.
    let region = (
        Vec3::new(-0.5 * a, -0.5 * a, 0.5 * a),
        Vec3::new(
            (nx as f64 - 0.5) * a,
            (ny as f64 - 0.5) * a,
            (nz as f64 + 0.5) * a,
        ),
    );
    let positions = lattice_positions(region, a, nx * ny * nz);
    assert_eq!(positions.len(), nx * ny * nz, "lattice does not fit");

    let materials = vec![material()];
    let mut rng = ChaCha8Rng::seed_from_u64(SEED);
    let mut particles = Particles::default();
    for &x in &positions {
        let diameter = rng.gen_range(DIAMETERS.0..DIAMETERS.1);
        particles.push(
            domain.wrap(x),
            Vec3::ZERO,
            0.5 * diameter,
            materials[0].density,
            0,
            false,
        );
    }
    thermal_velocities(&mut particles, TEMPERATURE, &mut rng);

    let floor = Wall {
        point: Vec3::ZERO,
        normal: Vec3::Z,
        material: 0,
        velocity: Vec3::ZERO,
    };
    let model = lammps_model(&materials);
    DemSystem::new(
        domain,
        Vec3::new(0.0, 0.0, -GRAVITY),
        materials,
        model,
        particles,
        vec![floor],
        Integrator::VelocityVerlet,
        DT,
        SKIN,
    )
}

/// Gaussian velocity components of variance T/m, zero net momentum, rescaled to temperature T over
/// 3N - 3 degrees of freedom (as LAMMPS `velocity create` does).
fn thermal_velocities(particles: &mut Particles, temperature: f64, rng: &mut impl Rng) {
    let n = particles.len();
    for i in 0..n {
        let sigma = (temperature / particles.mass[i]).sqrt();
        let v = Vec3::new(gaussian(rng), gaussian(rng), gaussian(rng));
        particles.velocity[i] = sigma * v;
    }
    let total_mass: f64 = particles.mass.iter().sum();
    let momentum: Vec3 = (0..n)
        .map(|i| particles.mass[i] * particles.velocity[i])
        .sum();
    let drift = momentum / total_mass;
    let mut twice_kinetic = 0.0;
    for i in 0..n {
        particles.velocity[i] -= drift;
        twice_kinetic += particles.mass[i] * particles.velocity[i].length_squared();
    }
    let degrees_of_freedom = (3 * n).saturating_sub(3).max(1) as f64;
    let scale = (temperature * degrees_of_freedom / twice_kinetic).sqrt();
    for v in &mut particles.velocity {
        *v *= scale;
    }
}

/// Standard normal draw (Box–Muller).
fn gaussian(rng: &mut impl Rng) -> f64 {
    let u: f64 = 1.0 - rng.gen::<f64>();
    let v: f64 = rng.gen();
    (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
}

/// The same particles, walls and box with the seed's model and integrator; all contact memory is dropped
/// (Hertz contacts carry no ACTM stiffness), so every contact starts as an enduring one, with the stiffness
/// of an impact at u_in,crit.
pub fn with_seed_model(bed: &DemSystem) -> DemSystem {
    let materials = bed.materials.clone();
    let model = seed_model(&materials);
    let mut system = DemSystem::new(
        bed.domain.clone(),
        bed.gravity,
        materials,
        model,
        bed.particles.clone(),
        bed.walls.clone(),
        Integrator::SEED,
        bed.dt,
        bed.neighbors.skin,
    );
    system.step_count = bed.step_count;
    system
}

/// Highest particle centre and 99th percentile (linear interpolation) of the particle tops z + r.
pub fn bed_top(system: &DemSystem) -> (f64, f64) {
    let p = &system.particles;
    let max_centre = p.position.iter().map(|x| x.z).fold(f64::MIN, f64::max);
    let mut tops: Vec<f64> = (0..p.len())
        .map(|i| p.position[i].z + p.radius[i])
        .collect();
    tops.sort_by(f64::total_cmp);
    (max_centre, percentile(&tops, 0.99))
}

/// Percentile of sorted values with linear interpolation between closest ranks (numpy's default).
fn percentile(sorted: &[f64], fraction: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = fraction * (sorted.len() - 1) as f64;
    let low = rank.floor() as usize;
    let high = (low + 1).min(sorted.len() - 1);
    sorted[low] + (rank - low as f64) * (sorted[high] - sorted[low])
}

/// Touching sphere pairs per particle, each pair counted for both members (LAMMPS `c_zc`).
pub fn contacts_per_particle(system: &DemSystem) -> f64 {
    2.0 * contact_statistics(system).pair_contacts as f64 / system.particles.len() as f64
}

/// Advances `steps` steps; a diverging bed is a bug in the benchmark, not a user error.
pub fn advance(system: &mut DemSystem, steps: u64) {
    for _ in 0..steps {
        if let Err(e) = system.step() {
            panic!("the benchmark bed failed: {e}");
        }
    }
}

/// A rayon pool of exactly `threads` threads.
pub fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("cannot start a thread pool")
}

/// CPU model and CPU count of this machine.
pub fn machine() -> String {
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_string());
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    format!("{model}, {cpus} CPUs")
}

/// Times `steps` steps of a copy of `start` in a pool of `threads` threads and measures the end state.
fn time_run(law: &str, start: &DemSystem, threads: usize, steps: u64) -> BenchRow {
    let mut system = start.clone();
    let evaluations = system.evaluations;
    let seconds = pool(threads).install(|| {
        let clock = Instant::now();
        advance(&mut system, steps);
        clock.elapsed().as_secs_f64()
    });
    let steps = steps.max(1);
    let ms_per_step = 1e3 * seconds / steps as f64;
    let evaluations_per_step =
        ((system.evaluations - evaluations) as f64 / steps as f64).round() as u32;
    let (max_centre, p99) = bed_top(&system);
    BenchRow {
        law: law.to_string(),
        threads,
        ms_per_step,
        us_per_particle_step: 1e3 * ms_per_step / system.particles.len() as f64,
        evaluations_per_step,
        ms_per_evaluation: ms_per_step / evaluations_per_step.max(1) as f64,
        contacts_per_particle: contacts_per_particle(&system),
        bed_top_max_centre_z: max_centre,
        bed_top_p99: p99,
    }
}

/// Name of the LAMMPS-law rows.
pub const HERTZ_LAW: &str = "hertz/history, velocity Verlet";
/// Name of the seed-model rows.
pub const SEED_LAW: &str = "seed ACTM + spring, RK3 PC {8,2,5}";

/// Settles the bed, then times both laws at every thread count from the same settled state.
pub fn run(options: &BenchOptions, progress: &mut dyn FnMut(&str)) -> BenchReport {
    let mut bed = lammps_bed(options.lattice);
    let n = bed.particles.len();
    let settle_threads = options.threads.iter().copied().max().unwrap_or(1);
    progress(&format!(
        "settling {n} spheres for {} steps on {settle_threads} thread(s)",
        options.settle_steps
    ));
    let clock = Instant::now();
    let settle_pool = pool(settle_threads);
    let chunk = (options.settle_steps / 10).max(1);
    let mut done = 0;
    while done < options.settle_steps {
        let steps = chunk.min(options.settle_steps - done);
        settle_pool.install(|| advance(&mut bed, steps));
        done += steps;
        let (top, _) = bed_top(&bed);
        progress(&format!(
            "  step {done}/{}: max centre z {top:.3}",
            options.settle_steps
        ));
    }
    let settle_seconds = clock.elapsed().as_secs_f64();

    let mut rows = Vec::new();
    for &threads in &options.threads {
        progress(&format!(
            "timing {} steps of {HERTZ_LAW} on {threads} thread(s)",
            options.timed_steps
        ));
        rows.push(time_run(HERTZ_LAW, &bed, threads, options.timed_steps));
    }
    let seed = with_seed_model(&bed);
    for &threads in &options.threads {
        progress(&format!(
            "timing {} steps of {SEED_LAW} on {threads} thread(s)",
            options.seed_model_steps
        ));
        rows.push(time_run(SEED_LAW, &seed, threads, options.seed_model_steps));
    }
    BenchReport {
        particles: n,
        rows,
        machine: machine(),
        settle_seconds,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lattice_matches_the_lammps_input() {
        let bed = lammps_bed([22, 22, 21]);
        let p = &bed.particles;
        assert_eq!(p.len(), 10_164);
        let z_min = p.position.iter().map(|x| x.z).fold(f64::MAX, f64::min);
        let z_max = p.position.iter().map(|x| x.z).fold(f64::MIN, f64::max);
        assert!((z_min - 1.05).abs() < 1e-12 && (z_max - 22.05).abs() < 1e-9);
        assert!((bed.domain.max - Vec3::new(23.1, 23.1, 44.1)).length() < 1e-12);
        assert!(p.radius.iter().all(|&r| (0.4..0.5).contains(&r)));
        let momentum: Vec3 = (0..p.len()).map(|i| p.mass[i] * p.velocity[i]).sum();
        assert!(momentum.length() < 1e-10);
        let twice_kinetic: f64 = (0..p.len())
            .map(|i| p.mass[i] * p.velocity[i].length_squared())
            .sum();
        let temperature = twice_kinetic / (3.0 * p.len() as f64 - 3.0);
        assert!((temperature - TEMPERATURE).abs() < 1e-12);
    }

    #[test]
    fn percentile_interpolates_between_ranks() {
        let values: Vec<f64> = (0..=100).map(f64::from).collect();
        assert_eq!(percentile(&values, 0.99), 99.0);
        assert_eq!(percentile(&[0.0, 1.0], 0.99), 0.99);
    }
}
