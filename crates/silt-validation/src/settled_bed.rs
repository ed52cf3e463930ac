//! Settled bed (issue "settled-bed"; Biegert et al. 2017, sec. 4.5 and 5), from
//! `validation/settled-bed/bed.toml`: a dry polydisperse bed poured onto a floor comes to rest, its
//! overlaps respect the enduring-contact bound, and its solid fraction is that of a random packing.
//! Sources, derivations and criteria: `validation/settled-bed/README.md` and `reference.toml`.
//!
//! The floor is a wall under a layer of fixed spheres at random heights, as under the seed's bed (sec. 6): on a
//! flat floor a caged sphere touching nothing but the floor rolls and spins for ever (the model has no rolling
//! or twisting resistance), which keeps the kinetic energy from falling by 10^6.
//!
//! Units: the mean diameter D, gravity g and the particle density are 1; times are in sqrt(D/g), speeds in
//! sqrt(g D), forces in the weight m g of a sphere of the mean diameter.

use crate::case::yes;
use crate::case::{advance_steps, CaseFiles};
use crate::report::{case_dir, png, CaseReport};
use serde::Deserialize;
use silt_dem::contact::actm::ActmShape;
use silt_dem::diagnostics::{contact_statistics, energies};
use silt_dem::particles::Particles;
use silt_dem::system::DemSystem;
use silt_io::scenes::particles::ParticleScene;
use silt_io::scenes::{Override, SceneKind};
use silt_report::{Axis, Plot, Series, Style, Table};
use std::f64::consts::PI;
use std::ops::Range;
use std::path::Path;
use std::time::Instant;

const SCENE: &str = "bed.toml";
/// Largest overlap of an undamped Hertzian impact over u_in t*: (5/4)^(2/5).
const HERTZ_OVERLAP: f64 = 1.0935;

/// `[tolerance]` of `validation/settled-bed/reference.toml`.
#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Criteria {
    /// "Comes to rest": final kinetic energy at most this fraction of its peak.
    pub kinetic_energy_ratio: f64,
    /// Accepted solid fraction of the bed: random loose to random close packing.
    pub solid_fraction: [f64; 2],
    /// Largest contact force over the hydrostatic load of one grain's column (README, "Overlap bound").
    pub force_chain_factor: f64,
}

/// `[full]` / `[quick]` of `validation/settled-bed/reference.toml`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BedOptions {
    /// Number of free spheres.
    pub particles: usize,
    /// Side of the periodic square box, in mean diameters.
    pub width: f64,
    /// Solid fraction of the random cloud the bed is poured from.
    pub initial_solid_fraction: f64,
    /// Largest overlap, over R, of an impact at the fall speed sqrt(2 g (cloud height - bed height)); sets T_c.
    pub impact_overlap: f64,
    /// T_c / dt.
    pub steps_per_contact: f64,
    /// Gap between the measuring slab and the floor, and between the slab and the free surface, in D.
    pub slab_margin: f64,
    /// How long the kinetic energy must stay below the rest ratio times its peak before the run stops.
    pub rest_hold: f64,
    /// Steps between samples of the kinetic energy and the overlaps.
    pub sample_every: u64,
}

/// What a settled-bed run measured.
#[derive(Clone, Debug)]
pub struct BedResult {
    pub criteria: Criteria,
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
    /// First time from which the kinetic energy stayed below the rest ratio times its peak.
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
        self.peak_kinetic_energy > 0.0
            && self.kinetic_energy_ratio() <= self.criteria.kinetic_energy_ratio
    }

    pub fn respects_overlap_bound(&self) -> bool {
        self.max_overlap <= self.overlap_limit
    }

    /// The largest contact force at rest within the estimate the overlap bound rests on.
    pub fn force_within_estimate(&self) -> bool {
        self.max_contact_force <= self.estimated_max_force
    }

    pub fn solid_fraction_in_range(&self) -> bool {
        (self.criteria.solid_fraction[0]..=self.criteria.solid_fraction[1])
            .contains(&self.solid_fraction)
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
            self.criteria.kinetic_energy_ratio,
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
            self.criteria.solid_fraction[0],
            self.criteria.solid_fraction[1],
            self.contacts_per_particle,
            self.rattlers,
            self.smallest_radius,
        )
    }
}

/// The scene with the options' count and box, a cloud of the options' solid fraction (for the mean
/// sphere volume of the diameter distribution, (pi / 6) (1 + 3 sigma^2) D^3) above the rough floor, and
/// T_c chosen so that an impact at the fall speed from the top of the cloud onto a bed of solid fraction
/// 0.6 overlaps by `impact_overlap` R (largest overlap 1.09 u_in t*, t* proportional to T_c); and the
/// fall speed.
fn scene(case: &CaseFiles, o: &BedOptions) -> Result<(ParticleScene, f64), String> {
    let n = |key: &str| case.scene_number(SCENE, key);
    let sigma = n("particles.1.diameter.std")? / n("particles.1.diameter.mean")?;
    let mean_diameter = n("particles.1.diameter.mean")?;
    let floor_top = n("particles.0.region.max.2")? + 0.5 * n("particles.0.diameter.value")?;
    let solid_volume =
        o.particles as f64 * PI / 6.0 * (1.0 + 3.0 * sigma * sigma) * mean_diameter.powi(3);
    let cloud_height = solid_volume / (o.initial_solid_fraction * o.width * o.width);
    let bed_estimate = solid_volume / (0.6 * o.width * o.width);
    let gravity = -n("simulation.gravity.2")?;
    let design_impact_speed = (2.0 * gravity * (cloud_height - bed_estimate)).sqrt();
    let t_star_per_collision_time = ActmShape::new(n("material.0.e_dry")?, 1.0).t_star;
    let collision_time = o.impact_overlap * 0.5 * mean_diameter
        / (HERTZ_OVERLAP * design_impact_speed * t_star_per_collision_time);
    let w = o.width;
    let changes = [
        Override::new("simulation.dt", collision_time / o.steps_per_contact),
        Override::new("contact.collision_steps", o.steps_per_contact),
        Override::new("domain.max", vec![w, w, floor_top + 3.0 * cloud_height]),
        Override::new("particles.0.region.max.0", w),
        Override::new("particles.0.region.max.1", w),
        Override::new("particles.1.count", o.particles as i64),
        Override::new("particles.1.region.min", vec![0.0, 0.0, floor_top]),
        Override::new(
            "particles.1.region.max",
            vec![w, w, floor_top + cloud_height],
        ),
    ];
    Ok((
        case.scene(SCENE, &changes, ParticleScene::parse)?,
        design_impact_speed,
    ))
}

/// Pours the bed from a random cloud, runs it to rest and measures it.
pub fn run(
    case: &CaseFiles,
    o: &BedOptions,
    progress: &mut dyn FnMut(&str),
) -> Result<BedResult, String> {
    let criteria: Criteria = case.tolerances()?;
    let start = Instant::now();
    let (scene, design_impact_speed) = scene(case, o)?;
    let max_time = scene.settings().end_time;
    let mut model = scene.build().map_err(|e| e.to_string())?;
    let system = &model.system;
    let (density, gravity) = (system.materials[0].density, -system.gravity.z);
    let collision_time = system.model.collision_time;
    let dt = system.dt;
    // The floor's spheres are fixed, the bed's free.
    let p = &system.particles;
    let free: Vec<usize> = (0..p.len()).filter(|&i| !p.fixed[i]).collect();
    let free = free[0]..free[free.len() - 1] + 1;
    let floor_top = (0..p.len())
        .filter(|&i| p.fixed[i])
        .map(|i| p.position[i].z + p.radius[i])
        .fold(0.0, f64::max);
    let smallest_radius = free
        .clone()
        .map(|i| p.radius[i])
        .fold(f64::INFINITY, f64::min);
    progress(&format!(
        "settled bed: {} spheres poured onto {} fixed ones, T_c = {collision_time:.3e}, dt = {dt:.3e}",
        free.len(),
        p.len() - free.len()
    ));

    // Pour until the kinetic energy has stayed below the rest ratio times its peak for `rest_hold`.
    let mut kinetic_energy = vec![(0.0, 0.0)];
    let (mut peak_time, mut peak) = (0.0, 0.0);
    let mut max_impact_overlap: f64 = 0.0;
    let mut rest_time = None;
    let mut next_report = 0.0;
    loop {
        advance_steps(&mut model, o.sample_every)?;
        let system = &model.system;
        let t = system.time();
        let ke = energies(system).kinetic();
        kinetic_energy.push((t, ke));
        if ke > peak {
            (peak_time, peak) = (t, ke);
        }
        max_impact_overlap = max_impact_overlap.max(contact_extremes(system).0);
        if ke < criteria.kinetic_energy_ratio * peak {
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
        if rested || t >= max_time {
            break;
        }
    }

    // The bed at rest; its statistics over the free spheres.
    let system = &model.system;
    let contacts = contact_statistics(system).per_particle;
    let p = &system.particles;
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
    let estimated_max_force = criteria.force_chain_factor * column_load / weight;
    let overlap_limit = system.model.overlap_bound
        * estimated_max_force.powf(2.0 / 3.0)
        * (0.5 / smallest_radius).powi(2);

    let (max_overlap, max_force) = contact_extremes(system);
    let contact_count: u32 = free.clone().map(|i| contacts[i]).sum();
    let result = BedResult {
        criteria,
        particles: free.len(),
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
        contacts_per_particle: contact_count as f64 / free.len() as f64,
        rattlers: free.filter(|&i| contacts[i] == 0).count(),
        smallest_radius,
    };
    progress(&result.summary());
    Ok(result)
}

/// The case: the bed comes to rest, its overlaps within the enduring-contact bound (and the contact
/// forces within the estimate the bound rests on), its solid fraction that of a random packing.
pub fn report(out: &Path, quick: bool) -> Result<CaseReport, String> {
    let case = CaseFiles::open("settled-bed", quick)?;
    let options: BedOptions = case.parameters()?;
    let dir = case_dir(out, case.name)?;
    let r = run(&case, &options, &mut |line: &str| {
        eprintln!("settled-bed: {line}")
    })?;
    let c = r.criteria;
    let mut table = Table::new(
        ["criterion", "measured", "required", "met"]
            .map(String::from)
            .to_vec(),
    );
    table.push_row(vec![
        "final / peak kinetic energy".into(),
        format!("{:.2e}", r.kinetic_energy_ratio()),
        format!("<= {:.0e}", c.kinetic_energy_ratio),
        yes(r.at_rest()),
    ]);
    table.push_row(vec![
        "max overlap / R at rest".into(),
        format!("{:.3e}", r.max_overlap),
        format!(
            "<= {:.3e} (enduring-contact bound for this bed)",
            r.overlap_limit
        ),
        yes(r.respects_overlap_bound()),
    ]);
    table.push_row(vec![
        "largest contact force at rest / m g".into(),
        format!("{:.1}", r.max_contact_force),
        format!(
            "<= {:.1} (the estimate the bound rests on)",
            r.estimated_max_force
        ),
        yes(r.force_within_estimate()),
    ]);
    table.push_row(vec![
        "solid fraction (slab away from floor and surface)".into(),
        format!("{:.4}", r.solid_fraction),
        format!("{} .. {}", c.solid_fraction[0], c.solid_fraction[1]),
        yes(r.solid_fraction_in_range()),
    ]);
    let passed = r.at_rest()
        && r.respects_overlap_bound()
        && r.force_within_estimate()
        && r.solid_fraction_in_range();
    let figures = vec![png(
        &dir,
        "kinetic-energy.png",
        &Plot {
            title: format!(
                "Settling of {} polydisperse spheres (sigma = 0.1 D)",
                r.particles
            ),
            x: Axis::linear("t / sqrt(D/g)"),
            y: Axis::log("kinetic energy / m g D"),
            series: vec![Series::new(
                "total kinetic energy",
                r.kinetic_energy.clone(),
                Style::Line,
            )],
        },
    )?];
    let report = CaseReport {
        name: case.name.into(),
        passed,
        tables: vec![("Settled bed".into(), table)],
        figures,
        notes: vec![
            "Source: the issue's criteria; Biegert et al. (2017) sec. 4.5, 5, 6. Scene, set-up and derivation of the overlap bound: validation/settled-bed/.".into(),
            format!("```\n{}\n```", r.summary()),
        ],
        runs: case.runs(),
    };
    report.write(&dir)?;
    Ok(report)
}

/// Volume of the sphere (centre height z, radius r) between the heights a < b.
pub fn sphere_slab_volume(z: f64, r: f64, a: f64, b: f64) -> f64 {
    let primitive = |t: f64| {
        let t = t.clamp(-r, r);
        PI * (r * r * t - t * t * t / 3.0)
    };
    primitive(b - z) - primitive(a - z)
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
}
