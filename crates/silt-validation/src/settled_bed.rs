//! Settled bed (issue "settled-bed"; Biegert et al. 2017, sec. 4.5 and 5): a dry polydisperse bed poured onto a
//! floor comes to rest, its overlaps respect the enduring-contact bound, and its solid fraction is that of a
//! random packing. Sources, derivations and tolerances are in `validation/settled-bed/README.md`.
//!
//! The floor is a wall under a layer of fixed spheres at random heights, as under the seed's bed (sec. 6): on a
//! flat floor a caged sphere touching nothing but the floor rolls and spins for ever (the model has no rolling
//! or twisting resistance), which keeps the kinetic energy from falling by 10^6.
//!
//! Units: the mean diameter D, gravity g and the particle density are 1; times are in sqrt(D/g), speeds in
//! sqrt(g D), forces in the weight m g of a sphere of the mean diameter.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use silt_dem::contact::actm::ActmShape;
use silt_dem::contact::{ContactModel, EnduringContact, NormalLaw, TangentialLaw};
use silt_dem::diagnostics::{contact_statistics, energies};
use silt_dem::domain::Domain;
use silt_dem::integrator::Integrator;
use silt_dem::material::Material;
use silt_dem::particles::Particles;
use silt_dem::system::DemSystem;
use silt_dem::wall::Wall;
use silt_dem::Vec3;
use silt_io::placement::{random_positions, DiameterDistribution};
use std::f64::consts::PI;
use std::ops::Range;
use std::time::Instant;

/// "Comes to rest": final kinetic energy at most this fraction of its peak.
pub const REST_RATIO: f64 = 1e-6;
/// Accepted solid fraction of the bed: random loose to random close packing.
pub const SOLID_FRACTION_RANGE: (f64, f64) = (0.55, 0.64);
/// Largest contact force over the hydrostatic load of one grain's column (README, "Overlap bound").
pub const FORCE_CHAIN_FACTOR: f64 = 10.0;
/// Largest overlap of an undamped Hertzian impact over u_in t*: (5/4)^(2/5).
const HERTZ_OVERLAP: f64 = 1.0935;

/// Parameters of a settled-bed run.
#[derive(Clone, Debug)]
pub struct BedOptions {
    /// Number of free spheres.
    pub particles: usize,
    /// Side of the periodic square box, in mean diameters.
    pub width: f64,
    /// Standard deviation of the Gaussian diameters, in mean diameters.
    pub diameter_std: f64,
    /// Seed of the diameters and positions.
    pub seed: u64,
    pub e_dry: f64,
    pub mu_s: f64,
    pub mu_k: f64,
    pub poisson: f64,
    /// Impact-speed floor u_in,crit of enduring contacts, in sqrt(g D).
    pub critical_speed: f64,
    /// eps of the stiffness floor k_n,grav = m g (eps R)^(-3/2) (seed eq. 26).
    pub overlap_bound: f64,
    /// Fixed spheres of the mean diameter on the floor wall (seed sec. 6); a flat floor otherwise.
    pub rough_floor: bool,
    /// Solid fraction of the random cloud the bed is poured from.
    pub initial_solid_fraction: f64,
    /// Largest overlap, over R, of an impact at the fall speed sqrt(2 g (cloud height - bed height)); sets T_c.
    pub impact_overlap: f64,
    /// T_c / dt.
    pub steps_per_contact: f64,
    pub integrator: Integrator,
    /// Gap between the measuring slab and the floor, and between the slab and the free surface, in D.
    pub slab_margin: f64,
    /// How long the kinetic energy must stay below `REST_RATIO` times its peak before the run stops.
    pub rest_hold: f64,
    /// The run stops here if the bed has not come to rest.
    pub max_time: f64,
    /// Steps between samples of the kinetic energy and the overlaps.
    pub sample_every: u64,
}

impl BedOptions {
    /// Full case for `silt validate settled-bed`: 2,000 spheres, free surface about 12.8 D up.
    pub fn full() -> Self {
        BedOptions {
            particles: 2_000,
            width: 12.0,
            ..Self::quick()
        }
    }

    /// Scaled-down case for the test suite: 400 spheres, free surface about 10.6 D up.
    pub fn quick() -> Self {
        BedOptions {
            particles: 400,
            width: 6.0,
            diameter_std: 0.1,
            seed: 2017,
            e_dry: 0.9,
            mu_s: 0.3,
            mu_k: 0.15,
            poisson: 0.22,
            critical_speed: 0.01,
            overlap_bound: 1e-3,
            rough_floor: true,
            initial_solid_fraction: 0.25,
            impact_overlap: 0.01,
            steps_per_contact: 10.0,
            // The seed's 15 sub-steps resolve lubrication, which is absent in a dry run; without sub-steps the
            // predictor-corrector keeps the restitution within 0.5% at T_c = 10 dt (tests/normal_collisions.rs).
            integrator: Integrator::PredictorCorrector {
                substeps: [1, 1, 1],
            },
            slab_margin: 2.5,
            rest_hold: 1.0,
            max_time: 100.0,
            sample_every: 5,
        }
    }
}

/// What a settled-bed run measured.
#[derive(Clone, Debug)]
pub struct BedResult {
    pub particles: usize,
    /// Contact duration T_c and time step dt = T_c / steps_per_contact.
    pub collision_time: f64,
    pub dt: f64,
    /// Fall speed T_c was chosen for.
    pub design_impact_speed: f64,
    pub steps: u64,
    pub simulated_time: f64,
    pub wall_time_s: f64,
    /// (time, total kinetic energy) every `sample_every` steps.
    pub kinetic_energy: Vec<(f64, f64)>,
    pub peak_kinetic_energy: f64,
    pub peak_time: f64,
    pub final_kinetic_energy: f64,
    /// First time from which the kinetic energy stayed below `REST_RATIO` times its peak.
    pub rest_time: Option<f64>,
    /// Largest overlap over the smaller radius seen in the samples during the run (the impacts).
    pub max_impact_overlap: f64,
    /// Largest overlap over the smaller radius in the bed at rest.
    pub max_overlap: f64,
    /// Enduring-contact bound on `max_overlap` for this bed (README, "Overlap bound").
    pub overlap_limit: f64,
    /// Hydrostatic estimate of the largest contact force the bound assumes, in m g.
    pub estimated_max_force: f64,
    /// Largest normal contact force k_n overlap^(3/2) at rest, in m g.
    pub max_contact_force: f64,
    /// Top of the floor: the highest fixed sphere, or 0 for a flat floor.
    pub floor_top: f64,
    /// Height of the free surface, where the solid fraction falls to half its bulk value.
    pub bed_height: f64,
    /// Measuring slab (bottom, top).
    pub slab: (f64, f64),
    pub solid_fraction: f64,
    /// Mean number of touching contacts (spheres and floor) per free sphere, and free spheres without any.
    pub contacts_per_particle: f64,
    pub rattlers: usize,
    pub smallest_radius: f64,
}

impl BedResult {
    pub fn kinetic_energy_ratio(&self) -> f64 {
        self.final_kinetic_energy / self.peak_kinetic_energy
    }

    pub fn at_rest(&self) -> bool {
        self.peak_kinetic_energy > 0.0 && self.kinetic_energy_ratio() <= REST_RATIO
    }

    pub fn respects_overlap_bound(&self) -> bool {
        self.max_overlap <= self.overlap_limit
    }

    pub fn solid_fraction_in_range(&self) -> bool {
        (SOLID_FRACTION_RANGE.0..=SOLID_FRACTION_RANGE.1).contains(&self.solid_fraction)
    }

    /// The figures, a few per line, for logs and the README.
    pub fn summary(&self) -> String {
        let rest = self
            .rest_time
            .map_or("never".to_string(), |t| format!("{t:.2}"));
        format!(
            "particles {}, T_c {:.4e}, dt {:.4e} (design impact speed {:.2})\n\
             steps {}, simulated time {:.2}, wall time {:.1} s\n\
             kinetic energy: peak {:.4e} at t = {:.2}, final {:.3e}, ratio {:.2e} (limit {:.0e}), at rest from t = {rest}\n\
             overlap / R: impacts {:.4}, at rest {:.3e}, bound {:.4} (largest contact force {:.1} m g, estimate {:.1} m g)\n\
             floor top {:.2}, bed height {:.2}, slab [{:.2}, {:.2}], solid fraction {:.4} (range {}-{})\n\
             contacts per particle {:.2}, rattlers {}, smallest radius {:.3}",
            self.particles,
            self.collision_time,
            self.dt,
            self.design_impact_speed,
            self.steps,
            self.simulated_time,
            self.wall_time_s,
            self.peak_kinetic_energy,
            self.peak_time,
            self.final_kinetic_energy,
            self.kinetic_energy_ratio(),
            REST_RATIO,
            self.max_impact_overlap,
            self.max_overlap,
            self.overlap_limit,
            self.max_contact_force,
            self.estimated_max_force,
            self.floor_top,
            self.bed_height,
            self.slab.0,
            self.slab.1,
            self.solid_fraction,
            SOLID_FRACTION_RANGE.0,
            SOLID_FRACTION_RANGE.1,
            self.contacts_per_particle,
            self.rattlers,
            self.smallest_radius,
        )
    }
}

/// Pours the bed from a random cloud, runs it to rest and measures it.
pub fn run(options: &BedOptions, progress: &mut dyn FnMut(&str)) -> BedResult {
    let o = options;
    let start = Instant::now();
    let (density, gravity) = (1.0, 1.0);

    // Diameters, the floor, and a random cloud of spheres above it without overlap.
    let mut rng = ChaCha8Rng::seed_from_u64(o.seed);
    let distribution = DiameterDistribution::Gaussian {
        mean: 1.0,
        std: o.diameter_std,
    };
    let radii: Vec<f64> = (0..o.particles)
        .map(|_| 0.5 * distribution.sample(&mut rng))
        .collect();
    let floor_spheres = if o.rough_floor {
        rough_floor(o.width, &mut rng)
    } else {
        vec![]
    };
    let floor_top = floor_spheres.iter().map(|x| x.z + 0.5).fold(0.0, f64::max);
    let solid_volume: f64 = radii.iter().map(|r| 4.0 / 3.0 * PI * r.powi(3)).sum();
    let cloud_height = solid_volume / (o.initial_solid_fraction * o.width * o.width);
    let domain = Domain {
        min: Vec3::ZERO,
        max: Vec3::new(o.width, o.width, floor_top + 3.0 * cloud_height),
        periodic: [true, true, false],
    };
    let region = (
        Vec3::new(0.0, 0.0, floor_top),
        Vec3::new(o.width, o.width, floor_top + cloud_height),
    );
    let existing: Vec<(Vec3, f64)> = floor_spheres.iter().map(|&x| (x, 0.5)).collect();
    let positions = random_positions(&domain, region, &radii, &existing, &mut rng)
        .unwrap_or_else(|e| panic!("settled bed: {e}"));
    // Free spheres first (indices 0..particles), then the fixed floor spheres.
    let mut particles = Particles::default();
    for (&x, &r) in positions.iter().zip(&radii) {
        particles.push(x, Vec3::ZERO, r, density, 0, false);
    }
    for &x in &floor_spheres {
        particles.push(x, Vec3::ZERO, 0.5, density, 0, true);
    }

    // T_c: an impact at the fall speed from the top of the cloud onto a bed of solid fraction 0.6 overlaps by
    // `impact_overlap` R (largest overlap 1.09 u_in t*, with t* proportional to T_c).
    let bed_estimate = solid_volume / (0.6 * o.width * o.width);
    let design_impact_speed = (2.0 * gravity * (cloud_height - bed_estimate)).sqrt();
    let t_star_per_collision_time = ActmShape::new(o.e_dry, 1.0).t_star;
    let collision_time =
        o.impact_overlap * 0.5 / (HERTZ_OVERLAP * design_impact_speed * t_star_per_collision_time);
    let dt = collision_time / o.steps_per_contact;

    let materials = vec![Material {
        name: "glass-like".into(),
        density,
        e_dry: o.e_dry,
        poisson: o.poisson,
        mu_s: o.mu_s,
        mu_k: o.mu_k,
    }];
    let model = ContactModel::new(
        NormalLaw::Actm,
        TangentialLaw::SpringHistory,
        &materials,
        collision_time,
        EnduringContact::MinimumSpeed(o.critical_speed),
        o.overlap_bound,
        gravity,
        None,
    );
    let floor = Wall {
        point: Vec3::ZERO,
        normal: Vec3::Z,
        material: 0,
        velocity: Vec3::ZERO,
    };
    let mut system = DemSystem::new(
        domain,
        Vec3::new(0.0, 0.0, -gravity),
        materials,
        model,
        particles,
        vec![floor],
        o.integrator,
        dt,
        0.1,
    );
    progress(&format!(
        "settled bed: {} spheres poured from a cloud {cloud_height:.1} D high onto {} fixed ones, \
         T_c = {collision_time:.3e}, dt = {dt:.3e}",
        o.particles,
        floor_spheres.len()
    ));

    // Pour until the kinetic energy has stayed below REST_RATIO times its peak for `rest_hold`.
    let mut kinetic_energy = vec![(0.0, 0.0)];
    let (mut peak_time, mut peak) = (0.0, 0.0);
    let mut max_impact_overlap: f64 = 0.0;
    let mut rest_time = None;
    let mut next_report = 0.0;
    loop {
        for _ in 0..o.sample_every {
            system.step().unwrap_or_else(|e| panic!("settled bed: {e}"));
        }
        let t = system.time();
        let ke = energies(&system).kinetic();
        kinetic_energy.push((t, ke));
        if ke > peak {
            (peak_time, peak) = (t, ke);
        }
        max_impact_overlap = max_impact_overlap.max(contact_extremes(&system).0);
        if ke < REST_RATIO * peak {
            rest_time.get_or_insert(t);
        } else {
            rest_time = None;
        }
        if t >= next_report {
            progress(&format!(
                "t = {t:.1}: kinetic energy {ke:.3e} = {:.2e} of its peak",
                ke / peak.max(f64::MIN_POSITIVE)
            ));
            next_report += 2.0;
        }
        let rested = rest_time.is_some_and(|t0| t - t0 >= o.rest_hold);
        if rested || t >= o.max_time {
            break;
        }
    }

    // The bed at rest; its statistics over the free spheres.
    let contacts = contact_statistics(&system).per_particle;
    let p = &system.particles;
    let free = 0..o.particles;
    let smallest_radius = radii.iter().copied().fold(f64::INFINITY, f64::min);
    let bottom = floor_top + o.slab_margin;
    let (bed_height, bulk_fraction) = free_surface(p, free.clone(), o.width, bottom);
    let slab = (bottom, bed_height - o.slab_margin);
    let slab_volume: f64 = free
        .clone()
        .map(|i| sphere_slab_volume(p.position[i].z, p.radius[i], slab.0, slab.1))
        .sum();
    let solid_fraction = slab_volume / (o.width * o.width * (slab.1 - slab.0));

    // Enduring-contact bound: overlap / R <= eps (F_max / m g)^(2/3) (R_mean / R_min)^2, with F_max a multiple
    // of the weight of the bed column standing on one grain's cross-section (README).
    let weight = density * gravity * PI / 6.0;
    let column_load = bulk_fraction * density * gravity * bed_height * PI / 4.0;
    let estimated_max_force = FORCE_CHAIN_FACTOR * column_load / weight;
    let overlap_limit =
        o.overlap_bound * estimated_max_force.powf(2.0 / 3.0) * (0.5 / smallest_radius).powi(2);

    let (max_overlap, max_force) = contact_extremes(&system);
    let contact_count: u32 = free.clone().map(|i| contacts[i]).sum();
    let result = BedResult {
        particles: o.particles,
        collision_time,
        dt,
        design_impact_speed,
        steps: system.step_count,
        simulated_time: system.time(),
        wall_time_s: start.elapsed().as_secs_f64(),
        peak_kinetic_energy: peak,
        peak_time,
        final_kinetic_energy: kinetic_energy.last().map_or(0.0, |s| s.1),
        kinetic_energy,
        rest_time,
        max_impact_overlap,
        max_overlap,
        overlap_limit,
        estimated_max_force,
        max_contact_force: max_force / weight,
        floor_top,
        bed_height,
        slab,
        solid_fraction,
        contacts_per_particle: contact_count as f64 / o.particles as f64,
        rattlers: free.filter(|&i| contacts[i] == 0).count(),
        smallest_radius,
    };
    progress(&result.summary());
    result
}

/// Volume of the sphere (centre height z, radius r) between the heights a < b.
pub fn sphere_slab_volume(z: f64, r: f64, a: f64, b: f64) -> f64 {
    let primitive = |t: f64| {
        let t = t.clamp(-r, r);
        PI * (r * r * t - t * t * t / 3.0)
    };
    primitive(b - z) - primitive(a - z)
}

/// Fixed spheres of the mean diameter on a hexagonal lattice of spacing about D (stretched to fit the periodic
/// box), centres at random heights in [0, R]: the holes are too narrow for any free sphere (D >= 0.7) to
/// reach the wall beneath.
fn rough_floor(width: f64, rng: &mut impl Rng) -> Vec<Vec3> {
    let columns = width.round() as usize;
    let rows = 2 * (width / 3f64.sqrt()).round() as usize;
    let (dx, dy) = (width / columns as f64, width / rows as f64);
    let mut sites = Vec::with_capacity(rows * columns);
    for j in 0..rows {
        for i in 0..columns {
            let x = (i as f64 + 0.5 * (j % 2) as f64) * dx;
            sites.push(Vec3::new(x, (j as f64 + 0.5) * dy, rng.gen_range(0.0..0.5)));
        }
    }
    sites
}

/// Height of the free surface of `spheres`, where their horizontally averaged solid fraction falls to half its
/// bulk value, and that bulk value (averaged from `bottom` to 2 `bottom` below the highest sphere top).
fn free_surface(p: &Particles, spheres: Range<usize>, width: f64, bottom: f64) -> (f64, f64) {
    let bin = 0.05;
    let top = spheres
        .clone()
        .map(|i| p.position[i].z + p.radius[i])
        .fold(0.0, f64::max);
    let bins = (top / bin).ceil() as usize + 1;
    let mut profile = vec![0.0; bins];
    for i in spheres {
        let (z, r) = (p.position[i].z, p.radius[i]);
        let first = ((z - r) / bin).floor().max(0.0) as usize;
        let last = (((z + r) / bin).floor() as usize).min(bins - 1);
        for (k, phi) in profile.iter_mut().enumerate().take(last + 1).skip(first) {
            let a = k as f64 * bin;
            *phi += sphere_slab_volume(z, r, a, a + bin) / (width * width * bin);
        }
    }
    let bulk_bins = (bottom / bin) as usize..((top - 2.0 * bottom) / bin) as usize;
    let bulk = profile[bulk_bins.clone()].iter().sum::<f64>() / bulk_bins.len() as f64;
    let surface = profile
        .iter()
        .rposition(|&phi| phi >= 0.5 * bulk)
        .map_or(0.0, |k| (k as f64 + 0.5) * bin);
    (surface, bulk)
}

/// Largest overlap (over the smaller radius, or the radius against a wall) and largest normal contact force
/// k_n overlap^(3/2) among the touching contacts of free spheres (fixed spheres may overlap the wall and each
/// other).
fn contact_extremes(system: &DemSystem) -> (f64, f64) {
    let p = &system.particles;
    let list = &system.neighbors;
    let (mut overlap_over_radius, mut force): (f64, f64) = (0.0, 0.0);
    for pair in 0..list.pair_count() {
        let (i, j) = (list.first[pair] as usize, list.second[pair] as usize);
        let distance = system
            .domain
            .separation(p.position[i], p.position[j])
            .length();
        let overlap = p.radius[i] + p.radius[j] - distance;
        if overlap > 0.0 && !(p.fixed[i] && p.fixed[j]) {
            overlap_over_radius = overlap_over_radius.max(overlap / p.radius[i].min(p.radius[j]));
            force = force.max(list.state[pair].stiffness * overlap.powf(1.5));
        }
    }
    let walls = system.walls.len();
    for i in (0..p.len()).filter(|&i| !p.fixed[i]) {
        for (w, wall) in system.walls.iter().enumerate() {
            let overlap = p.radius[i] - wall.distance(p.position[i]);
            if overlap > 0.0 {
                overlap_over_radius = overlap_over_radius.max(overlap / p.radius[i]);
                force = force.max(system.wall_states[i * walls + w].stiffness * overlap.powf(1.5));
            }
        }
    }
    (overlap_over_radius, force)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slab_volumes_add_up_to_the_sphere() {
        let (z, r): (f64, f64) = (1.3, 0.45);
        let whole = 4.0 / 3.0 * PI * r.powi(3);
        assert!((sphere_slab_volume(z, r, -10.0, 10.0) - whole).abs() < 1e-14);
        assert!((sphere_slab_volume(z, r, 0.0, z) - 0.5 * whole).abs() < 1e-14);
        let parts: f64 = (0..40)
            .map(|k| sphere_slab_volume(z, r, 0.05 * k as f64, 0.05 * (k + 1) as f64))
            .sum();
        assert!((parts - whole).abs() < 1e-13);
        assert_eq!(sphere_slab_volume(z, r, 2.0, 3.0), 0.0);
    }

    #[test]
    fn no_free_sphere_fits_through_the_rough_floor() {
        // Every point of the wall plane lies closer than R_f + R_min to some fixed centre, measured in 3D from a
        // free sphere touching the wall (centre at height R_min).
        let width = 6.0;
        let floor = rough_floor(width, &mut ChaCha8Rng::seed_from_u64(1));
        let domain = Domain {
            min: Vec3::ZERO,
            max: Vec3::new(width, width, 10.0),
            periodic: [true, true, false],
        };
        let r_min = 0.35;
        for i in 0..60 {
            for j in 0..60 {
                let x = Vec3::new(0.1 * i as f64, 0.1 * j as f64, r_min);
                let blocked = floor
                    .iter()
                    .any(|&c| domain.separation(x, c).length() < 0.5 + r_min);
                assert!(
                    blocked,
                    "a sphere of radius {r_min} reaches the wall at {x}"
                );
            }
        }
    }
}
