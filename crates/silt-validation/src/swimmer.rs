//! An active filament driven by a travelling wave of rest curvature, `κ_eq(s, t) = A sin(k s - ω t)`
//! (seed sec. 2.4, a sperm-like swimmer), with RPY hydrodynamics: a wave running from the first bead to
//! the last pushes the fluid backwards, so the filament swims towards its first bead, against the
//! wave (Taylor 1951; Lighthill 1976); reversing the wave reverses the swimming. Free drain (isotropic
//! bead drag) cannot swim (Purcell's scallop-free limit of resistive-force theory with equal drag
//! coefficients), which the case also checks. The runs are the scene
//! `validation/active-filament/swimmer.toml` with the changes of each variant (`--set`); source and
//! numbers in validation/active-filament/.

use crate::case::yes;
use crate::case::CaseFiles;
use crate::report::{case_dir, CaseReport};
use serde::Deserialize;
use silt_core::model::{Horizon, Model};
use silt_core::Vec3;
use silt_fibers::dynamics::FiberSystem;
use silt_io::scenes::fibers::FiberScene;
use silt_io::scenes::{Override, SceneKind};
use silt_report::{write_png_grid, Axis, Plot, Series, Style, Table};
use std::f64::consts::PI;
use std::path::Path;

#[derive(Clone, Copy, Debug)]
pub struct SwimmerCase {
    pub beads: usize,
    /// Sperm number `Sp = L (ζ⊥ ω / K_b)^(1/4)`, `ζ⊥ = 4πη / ln(L/a)`.
    pub sperm_number: f64,
    /// Rest-curvature amplitude times the length, `A L`.
    pub amplitude: f64,
    /// Wavelengths along the filament.
    pub wavelengths: f64,
    /// `+1`: wave from the first bead to the last; `-1`: the other way.
    pub wave_direction: f64,
    /// The scene's `fibers.hydrodynamics` ("rpy" or "free-drain").
    pub hydrodynamics: &'static str,
    /// Beat periods simulated; the velocity is averaged over all but the first.
    pub periods: usize,
    /// Step over the bending time.
    pub step_ratio: f64,
    /// Link lengths put back to 2a after each step.
    pub restore_links: bool,
}

#[derive(Clone, Debug)]
pub struct SwimmerResult {
    /// Mean swimming velocity along the filament's mean axis (first bead minus last, unit), in
    /// lengths per period: positive means towards the first bead.
    pub speed: f64,
    /// `(t / T, displacement of the centre of mass along the initial axis / L)`.
    pub history: Vec<(f64, f64)>,
    /// Final bead positions (x, y) / L.
    pub shape: Vec<(f64, f64)>,
    pub link_error: f64,
    pub steps: usize,
    pub seconds: f64,
}

/// Runs the swimmer scene with `case`'s changes for `case.periods` beat periods.
pub fn run(files: &CaseFiles, case: SwimmerCase) -> Result<SwimmerResult, String> {
    let (a, viscosity) = (0.5, 1.0);
    let length = 2.0 * a * case.beads as f64;
    let frequency = 1.0; // ω
    let drag = 4.0 * PI * viscosity / (length / a).ln();
    let rigidity = length.powi(4) * drag * frequency / case.sperm_number.powi(4);
    let period = 2.0 * PI / frequency;
    let bending_time = viscosity * (2.0 * a).powi(4) / rigidity;
    let steps_per_period = (period / (case.step_ratio * bending_time)).ceil() as usize;
    let dt = period / steps_per_period as f64;
    let wave = toml::toml! {
        amplitude = (case.amplitude / length)
        wavelength = (length / case.wavelengths)
        period = period
        direction = (if case.wave_direction > 0.0 { "first-to-last" } else { "last-to-first" })
    };
    let changes = [
        Override::new("fibers.fiber.0.beads", case.beads as i64),
        Override::new("fibers.fiber.0.wave", toml::Value::Table(wave)),
        Override::new("fibers.bending_rigidity", rigidity),
        Override::new("fibers.hydrodynamics", case.hydrodynamics),
        Override::new("fibers.restore_links", case.restore_links),
        Override::new("fibers.time_step", dt),
        Override::new(
            "fibers.end_time",
            (case.periods * steps_per_period) as f64 * dt,
        ),
        Override::new("fibers.output.interval", period),
    ];
    let scene = files.scene("swimmer.toml", &changes, FiberScene::parse)?;
    let mut model = scene.build().map_err(|e| e.to_string())?;
    let centre =
        |s: &FiberSystem| s.fibers.positions.iter().sum::<Vec3>() / s.fibers.bead_count() as f64;
    let mut history = vec![(0.0, 0.0)];
    let mut link_error: f64 = 0.0;
    let start = std::time::Instant::now();
    let mut after_first = Vec3::ZERO;
    let mut axis = Vec3::ZERO;
    for step in 1..=case.periods * steps_per_period {
        model
            .advance(Horizon::Steps(1))
            .map_err(|e| e.to_string())?;
        let (_, diagnostics) = model.last_step.as_ref().expect("a step was taken");
        link_error = link_error.max(diagnostics.link_error);
        let system = &model.system;
        let y = &system.fibers.positions;
        if step > steps_per_period {
            axis += (y[0] - y[y.len() - 1]).normalize();
        }
        if step == steps_per_period {
            after_first = centre(system);
        }
        if step % (steps_per_period / 50).max(1) == 0 {
            history.push((system.time / period, centre(system).x / length));
        }
    }
    let system = &model.system;
    let axis = axis.normalize_or_zero();
    let travelled = (centre(system) - after_first).dot(axis);
    let speed = travelled / length / (case.periods - 1) as f64;
    let shape = system
        .fibers
        .positions
        .iter()
        .map(|p| (p.x / length, p.y / length))
        .collect();
    Ok(SwimmerResult {
        speed,
        history,
        shape,
        link_error,
        steps: case.periods * steps_per_period,
        seconds: start.elapsed().as_secs_f64(),
    })
}

/// `[tolerance]` of `validation/active-filament/reference.toml`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Tolerances {
    min_speed: f64,
    mirror: f64,
    free_drain: f64,
    drift_order: (f64, f64),
    restored_speed: f64,
    restored_links: f64,
    drift_per_unit_time: f64,
}

/// `[full]` / `[quick]` of `validation/active-filament/reference.toml`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Parameters {
    beads: usize,
    periods: usize,
    amplitude_times_length: f64,
    wavelengths: f64,
    sperm_number: f64,
    step_over_bending_time: f64,
}

/// The case: the swimmer and its variants (reversed wave, free drain, half the step, links restored)
/// and the checks on them.
pub fn report(out: &Path, quick: bool) -> Result<CaseReport, String> {
    let files = CaseFiles::open("active-filament", quick)?;
    let tol: Tolerances = files.tolerances()?;
    let p: Parameters = files.parameters()?;
    let dir = case_dir(out, files.name)?;
    let (beads, periods) = (p.beads, p.periods);
    let base = SwimmerCase {
        beads,
        sperm_number: p.sperm_number,
        amplitude: p.amplitude_times_length,
        wavelengths: p.wavelengths,
        wave_direction: 1.0,
        hydrodynamics: "rpy",
        periods,
        step_ratio: p.step_over_bending_time,
        restore_links: false,
    };
    let variants: Vec<(&str, SwimmerCase)> = vec![
        ("wave first-to-last, RPY", base),
        (
            "wave last-to-first, RPY",
            SwimmerCase {
                wave_direction: -1.0,
                ..base
            },
        ),
        (
            "wave first-to-last, free drain",
            SwimmerCase {
                hydrodynamics: "free-drain",
                ..base
            },
        ),
        (
            "RPY, dt / 2",
            SwimmerCase {
                step_ratio: 0.5 * p.step_over_bending_time,
                ..base
            },
        ),
        (
            "RPY, links restored",
            SwimmerCase {
                restore_links: true,
                ..base
            },
        ),
    ];
    let mut table = Table::new(
        [
            "run",
            "speed (L per period, + towards the first bead)",
            "largest link error",
            "link error per unit time",
            "steps",
            "wall time (s)",
        ]
        .map(String::from)
        .to_vec(),
    );
    let mut results = Vec::new();
    let mut displacement = Plot::new(
        "centre of mass",
        Axis::linear("t / T"),
        Axis::linear("x / L"),
    );
    let mut shape = Plot::new("final shape", Axis::linear("x / L"), Axis::linear("y / L"));
    for (name, case) in &variants {
        let r = run(&files, *case)?;
        let time = 2.0 * std::f64::consts::PI * periods as f64;
        table.push_row([
            name.to_string(),
            format!("{:+.5}", r.speed),
            format!("{:.2e}", r.link_error),
            format!("{:.2e}", r.link_error / time),
            format!("{}", r.steps),
            format!("{:.1}", r.seconds),
        ]);
        if results.len() < 3 {
            displacement
                .series
                .push(Series::new(*name, r.history.clone(), Style::Line));
            shape
                .series
                .push(Series::new(*name, r.shape.clone(), Style::LineMarkers));
        }
        results.push(r);
    }
    let (forward, backward, drained, half, restored) = (
        &results[0],
        &results[1],
        &results[2],
        &results[3],
        &results[4],
    );
    let order = (forward.link_error / half.link_error).log2();
    let checks = [
        (
            format!(
                "swims against the wave (speed > {} L per period)",
                tol.min_speed
            ),
            forward.speed > tol.min_speed,
        ),
        (
            format!("reversed wave: mirror speed within {:e}", tol.mirror),
            (forward.speed + backward.speed).abs() < tol.mirror * forward.speed,
        ),
        (
            format!(
                "free drain (isotropic drag) does not swim (below {:e} of the speed)",
                tol.free_drain
            ),
            drained.speed.abs() < tol.free_drain * forward.speed,
        ),
        (
            format!(
                "link drift of the seed's scheme is second order in dt (order {:.2}, within {}..{})",
                order, tol.drift_order.0, tol.drift_order.1
            ),
            (tol.drift_order.0..tol.drift_order.1).contains(&order),
        ),
        (
            format!(
                "restoring links leaves the speed within {:e} and the links within {:e}",
                tol.restored_speed, tol.restored_links
            ),
            (restored.speed / forward.speed - 1.0).abs() < tol.restored_speed
                && restored.link_error < tol.restored_links,
        ),
    ];
    let mut check_table = Table::new(["check", "met"].map(String::from).to_vec());
    let mut passed = true;
    for (what, ok) in checks {
        passed &= ok;
        check_table.push_row([what, yes(ok)]);
    }
    let path = dir.join("swimmer.png");
    write_png_grid(&path, &[displacement, shape], 2).map_err(|e| e.to_string())?;
    let report = CaseReport {
        runs: files.runs(),
        name: files.name.into(),
        passed,
        tables: vec![
            ("Active filament driven by a travelling curvature wave".into(), table),
            ("Checks".into(), check_table),
        ],
        figures: vec![path],
        notes: vec![
            format!("{beads} beads (L = {beads} for a = 0.5), rest curvature kappa_eq(s, t) = A sin(k s - omega t) with A L = 4, one wavelength along the filament, sperm number L (zeta omega / K_b)^(1/4) = 4 (zeta = 4 pi eta / ln(L/a)), dt = the bending time, {periods} periods; speed averaged over all but the first. A wave running from the first bead to the last pushes fluid backwards: the filament swims towards its first bead (Taylor 1951, Lighthill 1976; the seed's sperm-like swimmer)."),
            {
                let drift = forward.link_error / (2.0 * std::f64::consts::PI * periods as f64);
                let side = if drift > tol.drift_per_unit_time { "above" } else { "below" };
                format!("Link drift: the seed's Adams–Bashforth scheme has no constraint on positions; at dt = the bending time the link error grows by {drift:.1e} per unit time here (1/omega = 1), {side} the issue's {:e}. It is second order in dt (order {order:.2}); the optional correction (restore_links, on by default in scenes) removes it to round-off without changing the swimming speed. Source: validation/active-filament/.", tol.drift_per_unit_time)
            },
        ],
    };
    report.write(&dir)?;
    Ok(report)
}
