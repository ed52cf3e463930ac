//! A steel sphere driven towards a wall through a viscous fluid and let go one radius above it: the wet
//! collisions of Gondret, Lance & Petit (2002) at St = 27 and St = 152 (`shared/notes/validation-data.md`),
//! set up as in the seed (sec. 5.2, Table 1) in `validation/gondret/st27.toml` and `st152.toml`: the
//! approach velocity is prescribed as u = u_in (exp(-40 t) - 1) until the gap is R, then the sphere is
//! free; lubrication slows it, the adaptive normal contact makes it rebound, and the trajectory (gap
//! against time) is compared with the digitised rebound peaks of the experiment. The domain is periodic
//! in x and z with no-slip walls at y = 0 and at the top, reduced from the seed's (a resolution and domain
//! study shows the effect). The same runs, released at contact with the fluid forces on or off during it,
//! make the seed's Fig. 9 (`crate::wall_collisions`). Reference numbers and tolerance:
//! `validation/gondret/reference.toml`.

use crate::case::yes;
use crate::case::CaseFiles;
use crate::report::{case_dir, pct, png, CaseReport};
use serde::Deserialize;
use silt_core::model::{Horizon, Model};
use silt_io::scenes::coupled::CoupledScene;
use silt_io::scenes::{Override, SceneKind};
use silt_report::{Axis, Plot, Series, Style, Table};
use std::collections::BTreeMap;
use std::path::Path;

/// The experiment as its scene has it.
#[derive(Clone, Copy, Debug)]
pub struct Sphere {
    pub diameter: f64,
    /// u_in and the rate of the prescribed approach u = u_in (exp(-rate t) - 1).
    pub impact_velocity: f64,
    pub ramp_rate: f64,
    pub particle_density: f64,
    /// mu = rho_f nu.
    pub dynamic_viscosity: f64,
}

impl Sphere {
    /// The sphere, fluid and approach of scene `file`, as written.
    pub fn of(case: &CaseFiles, file: &str) -> Result<Sphere, String> {
        let n = |key: &str| case.scene_number(file, key);
        Ok(Sphere {
            diameter: n("particles.0.diameters.0")?,
            impact_velocity: -n("particles.0.velocity.1.to")?,
            ramp_rate: n("particles.0.velocity.1.rate")?,
            particle_density: n("material.0.density")?,
            dynamic_viscosity: n("fluid.density")? * n("fluid.viscosity")?,
        })
    }

    /// Stokes number St = rho_p u D / (9 mu) at speed `u`.
    pub fn stokes(&self, u: f64) -> f64 {
        self.particle_density * u * self.diameter / (9.0 * self.dynamic_viscosity)
    }
}

/// One run: a scene of the case and what the case sets in it.
#[derive(Clone, Debug)]
pub struct Approach {
    pub scene: String,
    pub sphere: Sphere,
    /// Cells per diameter.
    pub d_over_h: f64,
    /// Periodic width along x and z, in diameters.
    pub width: f64,
    /// Gap between the sphere and the wall at the start, in diameters (before `start_shift`).
    pub start_gap: f64,
    /// The start is lowered by this fraction of a cell from the one whose steps land on the release gap:
    /// the release, at the first step ending at or below it, falls at another point of a step (the
    /// seed's Fig. 5 study).
    pub start_shift: f64,
    /// Distance from the sphere's top at the start to the upper wall, in diameters.
    pub headroom: f64,
    /// Simulated time after the sphere would reach the wall at u_in.
    pub after_contact: f64,
    pub dt: f64,
    /// Particle sub-steps per RK stage ({8, 2, 5} in the seed; {1, 1, 1}: none).
    pub substeps: [u32; 3],
    /// u_in and the rate of the prescribed approach (the scene's, or others for the seed's Fig. 9).
    pub impact_velocity: f64,
    pub ramp_rate: f64,
    /// The sphere is let go when its gap falls to this many diameters (R: 0.5; at contact: 0).
    pub release_gap: f64,
    /// `coupling.fluid_forces_in_contact`: "st-crit" (the seed's rule), "on" (wet), "off" (dry).
    pub fluid_forces_in_contact: &'static str,
    /// Stop at the first rebound peak (or when the sphere nears the upper wall).
    pub stop_at_first_peak: bool,
}

impl Approach {
    /// The validation's settings for the scene `file` of an experiment with rebound `peaks`: a 5 D wide
    /// periodic domain, a start gap long enough for the prescribed velocity to reach 99 % of u_in
    /// (after `ramp_time`), dt = courant h / u_in, T_c = 10 dt (the scene's).
    pub fn standard(
        case: &CaseFiles,
        file: &str,
        peaks: &[[f64; 2]],
        d_over_h: f64,
        courant: f64,
        ramp_time: f64,
    ) -> Result<Approach, String> {
        let sphere = Sphere::of(case, file)?;
        let d = sphere.diameter;
        let u = sphere.impact_velocity;
        let ramp_distance = u * (ramp_time - 0.99 / sphere.ramp_rate);
        let last_peak = peaks.iter().map(|p| p[0]).fold(0.0, f64::max);
        let highest_peak = peaks.iter().map(|p| p[1]).fold(0.0, f64::max);
        Ok(Approach {
            scene: file.into(),
            sphere,
            d_over_h,
            width: 5.0,
            start_gap: (ramp_distance / d).ceil() + 0.5,
            start_shift: 0.0,
            headroom: (highest_peak / d).max(1.0) + 1.0,
            after_contact: 1.3 * last_peak + 0.01,
            dt: courant * d / d_over_h / u,
            substeps: scene_substeps(case, file)?,
            impact_velocity: u,
            ramp_rate: sphere.ramp_rate,
            release_gap: 0.5,
            fluid_forces_in_contact: "st-crit",
            stop_at_first_peak: false,
        })
    }

    pub fn spacing(&self) -> f64 {
        self.sphere.diameter / self.d_over_h
    }

    /// Cells along x, y (wall-normal) and z.
    pub fn cells(&self) -> [usize; 3] {
        let across = (self.width * self.d_over_h).round() as usize;
        let tall = ((self.start_gap + 1.0 + self.headroom) * self.d_over_h).ceil() as usize;
        [across, tall, across]
    }

    /// Prescribed velocity (along y) at time t.
    pub fn approach_velocity(&self, t: f64) -> f64 {
        self.impact_velocity * ((-self.ramp_rate * t).exp() - 1.0)
    }

    /// The gap at the start: about `start_gap` D, raised by less than a step's travel so that the
    /// prescribed motion (a displacement dt u(t + dt / 2) per step) ends a step exactly at the release
    /// gap. The sphere is let go there: free when it reaches the wall, without a prescribed step into an
    /// overlap, and (released at contact) without lubrication slowing it before (the seed's Fig. 9).
    pub fn landing_start_gap(&self) -> f64 {
        let d = self.sphere.diameter;
        let (nominal, target) = (self.start_gap * d, self.release_gap * d);
        let mut travelled = 0.0;
        let mut step = 0u64;
        loop {
            let next = travelled - self.dt * self.approach_velocity((step as f64 + 0.5) * self.dt);
            if nominal - next <= target {
                // Steps 0..=step bring the sphere from target + next to the target.
                return target + next;
            }
            travelled = next;
            step += 1;
        }
    }

    /// The number of prescribed steps from the start gap `gap`: the first step that ends at or below
    /// the release gap (to round-off) is the last.
    fn prescribed_steps(&self, gap: f64) -> u64 {
        let limit = (self.release_gap + 1e-9) * self.sphere.diameter;
        let mut travelled = 0.0;
        let mut step = 0u64;
        while gap - travelled > limit {
            travelled -= self.dt * self.approach_velocity((step as f64 + 0.5) * self.dt);
            step += 1;
        }
        step
    }
}

/// `simulation.substeps` of scene `file`, as written.
pub fn scene_substeps(case: &CaseFiles, file: &str) -> Result<[u32; 3], String> {
    let mut substeps = [0; 3];
    for (k, s) in substeps.iter_mut().enumerate() {
        *s = case.scene_number(file, &format!("simulation.substeps.{k}"))? as u32;
    }
    Ok(substeps)
}

#[derive(Clone, Debug)]
pub struct ApproachResult {
    /// (t in s, gap over D, u_y in m/s) every step.
    pub history: Vec<(f64, f64, f64)>,
    /// When the prescribed motion ended (the end of the step that reaches the release gap), and the
    /// speed then.
    pub release_time: f64,
    pub release_speed: f64,
    pub first_contact: Option<f64>,
    /// Rebound peaks after the first contact: (time after it in s, gap in m), in order.
    pub peaks: Vec<(f64, f64)>,
    /// Speed towards the wall at the first contact (the last step before it), m/s.
    pub contact_speed: f64,
    /// Largest speed away from the wall after the first contact (in contact or not), m/s.
    pub rebound_speed: f64,
    /// Speed away from the wall when the sphere leaves the wall after the first contact (at the first
    /// step with a gap again; 0 if it stays), m/s: over the contact speed, the effective restitution.
    pub separation_speed: f64,
    pub cells: [usize; 3],
    pub seconds: f64,
}

/// Runs the approach (prescribed), the release and the rebounds of `run` from its scene.
pub fn run(case: &CaseFiles, run: &Approach) -> Result<ApproachResult, String> {
    let d = run.sphere.diameter;
    let h = run.spacing();
    let cells = run.cells();
    let lengths = cells.map(|n| n as f64 * h);
    let start_gap = run.landing_start_gap() - run.start_shift * h;
    let release_time = run.prescribed_steps(start_gap) as f64 * run.dt;
    let end_time = release_time + run.release_gap * d / run.impact_velocity + run.after_contact;
    let ramp: toml::Table = [
        ("from", 0.0),
        ("to", -run.impact_velocity),
        ("rate", run.ramp_rate),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), toml::Value::Float(v)))
    .collect();
    let changes = [
        Override::new("fluid.spacing", h),
        Override::new("fluid.cells", cells.map(|n| n as i64).to_vec()),
        Override::new("simulation.dt", run.dt),
        Override::new("simulation.end_time", end_time),
        Override::new("simulation.substeps", run.substeps.map(i64::from).to_vec()),
        Override::new(
            "particles.0.positions",
            vec![vec![
                0.5 * lengths[0],
                0.5 * d + start_gap,
                0.5 * lengths[2],
            ]],
        ),
        Override::new("particles.0.velocity.1", ramp),
        Override::new("particles.0.release_time", release_time),
        Override::new(
            "coupling.fluid_forces_in_contact",
            run.fluid_forces_in_contact,
        ),
    ];
    let scene = Box::new(case.scene(&run.scene, &changes, CoupledScene::parse)?);
    let mut model = scene.build().map_err(|e| e.to_string())?;
    let clock = std::time::Instant::now();
    let ceiling = (lengths[1] - 1.5 * d) / d;
    let steps = (end_time / run.dt).round() as usize;
    let mut history: Vec<(f64, f64, f64)> = Vec::with_capacity(steps);
    let mut release_speed = None;
    for _ in 0..steps {
        model
            .advance(Horizon::Steps(1))
            .map_err(|e| e.to_string())?;
        let p = &model.particles.dem.particles;
        let gap = (p.position[0].y - p.radius[0]) / d;
        let velocity = p.velocity[0].y;
        history.push((model.time(), gap, velocity));
        if release_speed.is_none() && model.time() >= release_time - 0.5 * run.dt {
            release_speed = Some(-velocity);
        }
        if run.stop_at_first_peak {
            let touched = history.iter().any(|h| h.1 <= 0.0);
            let falling_again = touched
                && velocity < 0.0
                && history.iter().rev().nth(1).is_some_and(|h| h.2 >= 0.0);
            if falling_again || gap > ceiling {
                break;
            }
        }
    }
    let release_speed = release_speed.ok_or("the run ended before the release")?;
    let contact_step = history.iter().position(|h| h.1 <= 0.0);
    let first_contact = contact_step.map(|k| history[k].0);
    let contact_speed = contact_step.map_or(0.0, |k| -history[k.saturating_sub(1)].2);
    let rebound_speed = contact_step.map_or(0.0, |k| {
        history[k..].iter().map(|h| h.2).fold(0.0, f64::max)
    });
    let separation_speed = contact_step
        .and_then(|k| history[k..].iter().find(|h| h.1 > 0.0))
        .map_or(0.0, |h| h.2.max(0.0));
    let mut peaks = Vec::new();
    if let Some(t0) = first_contact {
        // Local maxima of the gap in flight (above the contact) after the first contact.
        let after: Vec<&(f64, f64, f64)> = history.iter().filter(|h| h.0 > t0).collect();
        for w in after.windows(3) {
            if w[1].1 > 0.0 && w[1].1 >= w[0].1 && w[1].1 > w[2].1 {
                peaks.push((w[1].0 - t0, w[1].1 * d));
            }
        }
        // A run stopped at its first peak ends on it or just past it.
        if run.stop_at_first_peak && peaks.is_empty() {
            if let Some(top) = after.iter().max_by(|a, b| a.1.total_cmp(&b.1)) {
                if top.1 > 0.0 {
                    peaks.push((top.0 - t0, top.1 * d));
                }
            }
        }
    }
    Ok(ApproachResult {
        history,
        release_time,
        release_speed,
        first_contact,
        peaks,
        contact_speed,
        rebound_speed,
        separation_speed,
        cells,
        seconds: clock.elapsed().as_secs_f64(),
    })
}

/// One experiment of `[experiments]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Experiment {
    scene: String,
    stokes: f64,
    reynolds: f64,
    /// [time after the first contact (s), gap (m)].
    peaks: Vec<[f64; 2]>,
}

/// `[tolerance]` of `validation/gondret/reference.toml`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Tolerances {
    first_peak: f64,
}

/// `[full]` / `[quick]` of `validation/gondret/reference.toml`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Parameters {
    /// (experiment, D/h, width in D).
    runs: Vec<(String, f64, f64)>,
    start_shifts: Vec<f64>,
    substeps: Vec<[u32; 3]>,
    courant: f64,
    ramp_time: f64,
}

/// The case: rebound peaks against the experiment over resolutions and widths (the finest 5 D wide
/// run of each experiment judged), and the seed's Fig. 5 study of the start position within a cell.
pub fn report(out: &Path, quick: bool) -> Result<CaseReport, String> {
    let case = CaseFiles::open("gondret", quick)?;
    let tol: Tolerances = case.tolerances()?;
    let p: Parameters = case.parameters()?;
    let experiments: BTreeMap<String, Experiment> = case.table("experiments")?;
    let dir = case_dir(out, case.name)?;
    let experiment = |name: &str| {
        experiments.get(name).ok_or_else(|| {
            format!("validation/gondret/reference.toml: no experiment {name} in [experiments]")
        })
    };
    let mut passed = true;
    let judged = |name: &str, d_over_h: f64, width: f64| {
        let finest = p
            .runs
            .iter()
            .filter(|r| r.0 == name && r.2 == 5.0)
            .map(|r| r.1)
            .fold(0.0, f64::max);
        width == 5.0 && d_over_h == finest
    };
    let mut table = Table::new(
        [
            "St",
            "D/h",
            "width / D",
            "cells",
            "speed at release / u_in",
            "peak",
            "gap (mm)",
            "experiment (mm)",
            "error",
            "time after contact (s)",
            "experiment (s)",
            "wall time (s)",
            "judged, met",
        ]
        .map(String::from)
        .to_vec(),
    );
    let mut series: BTreeMap<String, Vec<Series>> = BTreeMap::new();
    for (name, d_over_h, width) in &p.runs {
        let e = experiment(name)?;
        let mut approach =
            Approach::standard(&case, &e.scene, &e.peaks, *d_over_h, p.courant, p.ramp_time)?;
        approach.width = *width;
        let r = run(&case, &approach)?;
        let t0 = r.first_contact.unwrap_or(f64::NAN);
        for (k, &[t_exp, gap_exp]) in e.peaks.iter().enumerate() {
            let simulated = r.peaks.get(k).copied();
            let error = simulated.map(|p| p.1 / gap_exp - 1.0);
            let judge = k == 0 && judged(name, *d_over_h, *width);
            let ok = error.is_some_and(|x| x.abs() <= tol.first_peak);
            if judge {
                passed &= ok;
            }
            table.push_row([
                format!("{}", e.stokes),
                format!("{d_over_h}"),
                format!("{width}"),
                format!("{} x {} x {}", r.cells[0], r.cells[1], r.cells[2]),
                format!("{:.3}", r.release_speed / approach.impact_velocity),
                format!("{}", k + 1),
                simulated.map_or("none".into(), |p| format!("{:.2}", 1e3 * p.1)),
                format!("{:.2}", 1e3 * gap_exp),
                error.map_or("-".into(), pct),
                simulated.map_or("-".into(), |p| format!("{:.4}", p.0)),
                format!("{t_exp}"),
                format!("{:.0}", r.seconds),
                if judge { yes(ok) } else { "-".into() },
            ]);
        }
        let diameter = approach.sphere.diameter;
        series.entry(name.clone()).or_default().push(Series::new(
            format!("D/h = {d_over_h}, width {width} D"),
            r.history
                .iter()
                .filter(|h| h.0 >= t0 - 0.01)
                .map(|h| (h.0 - t0, h.1 * diameter * 1e3))
                .collect(),
            Style::Line,
        ));
    }

    // The seed's Fig. 5: start positions within one cell, with and without sub-steps (St = 27, D/h = 8).
    let mut spread_table = Table::new(
        [
            "sub-steps",
            "start shifts (h)",
            "first peaks (mm)",
            "spread (mm)",
            "spread / mean",
        ]
        .map(String::from)
        .to_vec(),
    );
    let mut spreads = Vec::new();
    let st27 = experiment("St27")?;
    for substeps in &p.substeps {
        let mut heights = Vec::new();
        for &shift in &p.start_shifts {
            let mut approach =
                Approach::standard(&case, &st27.scene, &st27.peaks, 8.0, p.courant, p.ramp_time)?;
            approach.start_shift = shift;
            approach.substeps = *substeps;
            approach.stop_at_first_peak = true;
            let r = run(&case, &approach)?;
            heights.push(r.peaks.first().map_or(0.0, |p| p.1));
        }
        let (low, high) = heights
            .iter()
            .fold((f64::MAX, f64::MIN), |(lo, hi), &x| (lo.min(x), hi.max(x)));
        let mean = heights.iter().sum::<f64>() / heights.len() as f64;
        spreads.push(high - low);
        spread_table.push_row([
            format!("{substeps:?}"),
            format!("{:?}", p.start_shifts),
            heights
                .iter()
                .map(|x| format!("{:.3}", 1e3 * x))
                .collect::<Vec<_>>()
                .join(", "),
            format!("{:.3}", 1e3 * (high - low)),
            format!("{:.3}", (high - low) / mean),
        ]);
    }

    let mut figures = Vec::new();
    for (name, mut s) in series {
        let e = experiment(&name)?;
        s.push(Series::new(
            "Gondret et al. (2002), rebound peaks",
            e.peaks.iter().map(|p| (p[0], 1e3 * p[1])).collect(),
            Style::Markers,
        ));
        figures.push(png(
            &dir,
            &format!("trajectory-st{}.png", e.stokes),
            &Plot {
                title: format!(
                    "Gap after the first contact, St = {} (Re = {})",
                    e.stokes, e.reynolds
                ),
                x: Axis::linear("t - t_contact (s)"),
                y: Axis::linear("gap (mm)"),
                series: s,
            },
        )?);
    }
    let spread_note = match spreads.as_slice() {
        [with, without, ..] => format!(
            "Fig. 5 effect: spread of the first peak over the start positions {:.3} mm with sub-steps, {:.3} mm without.",
            1e3 * with,
            1e3 * without
        ),
        _ => "Fig. 5 study: see the table.".into(),
    };
    let report = CaseReport {
        name: case.name.into(),
        passed,
        tables: vec![
            ("Rebound peaks against the experiment".into(), table),
            (
                "Start position within a cell, with and without sub-steps (St = 27, D/h = 8; seed Fig. 5)".into(),
                spread_table,
            ),
        ],
        figures,
        notes: vec![
            "Source: Gondret, Lance & Petit (2002), Phys. Fluids 14, 643, digitised rebound peaks via shared/notes/validation-data.md; set-up of the seed (Biegert et al. 2017, sec. 5.2): u = u_in (exp(-40 t) - 1) prescribed until the gap is R, then free. Scenes, references and tolerance in validation/gondret/.".into(),
            format!("Judged: the first rebound peak's height of the finest 5 D wide run of each Stokes number, within {} of the experiment; peak times and later peaks are reported. The domain is periodic in x and z (width 5 D) with walls below and above, its height the start gap plus room for the rebound: reduced from the seed's (0.08 x 0.16 x 0.08 m at St = 27); the 8 D run shows the effect of the width.", tol.first_peak),
            spread_note,
        ],
        runs: case.runs(),
    };
    report.write(&dir)?;
    Ok(report)
}
