//! Stokes drag of a simple-cubic array of fixed spheres (issue 4), from
//! `validation/stokes-array/array.toml`: one sphere in a triply periodic box, the fluid driven by a
//! uniform body force G along x until steady. The force on the sphere F and the superficial velocity U
//! (the mean over the box) give the drag coefficient K = F / (6 pi mu a U), compared with the
//! Hasimoto/Sangani series for the same volume fraction (within 0.1 % of Zick & Homsy's exact values for
//! phi <= 0.125). And a free sphere settling in a periodic box (`settling.toml`, the four-way coupling of
//! `silt_ibm::coupling`): seen from the sphere its Stokes flow is the fixed array's, so the drag from the
//! slip must be the array's of the same box. Reference numbers and tolerances:
//! `validation/stokes-array/reference.toml`.

use crate::case::yes;
use crate::case::CaseFiles;
use crate::report::{case_dir, pct, png, CaseReport};
use serde::Deserialize;
use silt_core::model::{Horizon, Model};
use silt_fluid::diagnostics::mean_over;
use silt_ibm::model::CoupledModel;
use silt_io::scenes::coupled::CoupledScene;
use silt_io::scenes::{Override, SceneKind};
use silt_report::{Axis, Plot, Series, Style, Table};
use std::f64::consts::PI;
use std::path::Path;

const ARRAY: &str = "array.toml";
const SETTLING: &str = "settling.toml";

/// `[reference]` of `validation/stokes-array/reference.toml`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Reference {
    hasimoto_sangani: [f64; 4],
    zick_homsy: Vec<[f64; 2]>,
}

impl Reference {
    /// K(phi) of Hasimoto (1959) as extended by Sangani & Acrivos (1982).
    fn drag(&self, phi: f64) -> f64 {
        let [a, b, c, d] = self.hasimoto_sangani;
        let r = phi.cbrt();
        1.0 / (1.0 - a * r + phi - b * phi * phi + c * r.powi(8) - d * r.powi(10))
    }
}

/// `[tolerance]` of `validation/stokes-array/reference.toml`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Tolerances {
    drag: f64,
    error_falls_with_resolution: bool,
    force_balance: f64,
    steady: f64,
    max_steps: usize,
    settling_drag: f64,
    settling_steadiness: f64,
}

/// `[full]` / `[quick]` of `validation/stokes-array/reference.toml`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Parameters {
    volume_fractions: Vec<f64>,
    resolutions: Vec<f64>,
    reynolds: f64,
    variants_resolution: f64,
    viscous_numbers: Vec<f64>,
    density_ratios: Vec<f64>,
    settling_reynolds: f64,
}

/// One drag computation of the fixed array.
#[derive(Clone, Copy, Debug)]
struct DragResult {
    cells: usize,
    phi: f64,
    drag: f64,
    reference: f64,
    error: f64,
    /// Sphere force over G L^3 (1 at steady state: the body force on the box is all taken by the sphere).
    force_balance: f64,
    steps: usize,
    /// Whether K settled within the step limit.
    converged: bool,
    markers: usize,
}

/// The mean of velocity component `axis` over the box (the superficial velocity).
fn mean_velocity(model: &CoupledModel, axis: usize) -> f64 {
    let unknowns = *model.fluid.velocity_unknowns(axis);
    mean_over(&model.fluid.state.velocity[axis], &unknowns)
}

/// The fixed array at `d_over_h` cells per diameter in the whole box nearest volume fraction `phi`,
/// with `changes` on top, run until K is steady.
fn drag(
    case: &CaseFiles,
    reference: &Reference,
    tol: &Tolerances,
    reynolds: f64,
    (d_over_h, phi): (f64, f64),
    changes: &[Override],
) -> Result<DragResult, String> {
    let h = case.scene_number(ARRAY, "fluid.spacing")?;
    let nu = case.scene_number(ARRAY, "fluid.viscosity")?;
    let radius = 0.5 * d_over_h * h;
    let sphere_volume = 4.0 / 3.0 * PI * radius.powi(3);
    let cells = (sphere_volume / phi).cbrt().round() as usize;
    let length = cells as f64 * h;
    let phi = sphere_volume / length.powi(3);
    let reference_drag = reference.drag(phi);
    // A small force keeps the Reynolds number U a / nu near `reynolds` (Stokes flow).
    let body_force = reynolds * 6.0 * PI * nu * nu * reference_drag / length.powi(3);
    let mut all = vec![
        Override::new("fluid.cells", vec![cells as i64; 3]),
        Override::new("particles.0.diameters", vec![2.0 * radius]),
        Override::new("particles.0.positions", vec![vec![0.5 * length; 3]]),
        Override::new("fluid.body_force", vec![body_force, 0.0, 0.0]),
    ];
    all.extend_from_slice(changes);
    let scene = Box::new(case.scene(ARRAY, &all, CoupledScene::parse)?);
    let mut model = scene.build().map_err(|e| e.to_string())?;
    let markers = model.particles.forcing.markers(0).len();
    let mut history = Vec::new();
    let (mut steps, mut drag, mut converged) = (0, 0.0, false);
    while steps < tol.max_steps {
        model
            .advance(Horizon::Steps(1))
            .map_err(|e| e.to_string())?;
        steps += 1;
        let force = model.particles.forcing.step_force[0].x;
        drag = force / (6.0 * PI * nu * radius * mean_velocity(&model, 0));
        history.push(drag);
        if steps > 10 && (drag - history[steps - 11]).abs() < tol.steady * drag.abs() {
            converged = true;
            break;
        }
    }
    Ok(DragResult {
        cells,
        phi,
        drag,
        reference: reference_drag,
        error: drag / reference_drag - 1.0,
        force_balance: model.particles.forcing.step_force[0].x / (body_force * length.powi(3)),
        steps,
        converged,
        markers,
    })
}

/// A free sphere settling in the periodic box of `settling.toml`.
struct SettlingResult {
    /// Settling velocity u_p,z at the end.
    velocity: f64,
    /// Drag coefficient from the slip <u_z> - u_p,z.
    drag: f64,
    /// rho_f F_h,z over the buoyant weight (rho_p - rho_f) V_p |g| (1 at steady state).
    force_balance: f64,
    /// Relative change of u_p over the last 10 % of the steps.
    unsteadiness: f64,
    /// (time, u_p,z) every step.
    history: Vec<(f64, f64)>,
}

/// The sphere's diameter and its volume fraction in the box of `settling.toml`.
fn settling_geometry(case: &CaseFiles) -> Result<(f64, f64, f64), String> {
    let diameter = case.scene_number(SETTLING, "particles.0.diameters.0")?;
    let h = case.scene_number(SETTLING, "fluid.spacing")?;
    let cells = case.scene_number(SETTLING, "fluid.cells.0")?;
    let phi = PI / 6.0 * diameter.powi(3) / (cells * h).powi(3);
    Ok((diameter, diameter / h, phi))
}

/// `settling.toml` at density ratio rho_p / rho_f = `ratio`, with gravity set for a settling Reynolds
/// number u a / nu of about `reynolds`, run to its end time.
fn settling(case: &CaseFiles, ratio: f64, reynolds: f64) -> Result<SettlingResult, String> {
    let (diameter, _, _) = settling_geometry(case)?;
    let nu = case.scene_number(SETTLING, "fluid.viscosity")?;
    let rho_f = case.scene_number(SETTLING, "fluid.density")?;
    let radius = 0.5 * diameter;
    let volume = 4.0 / 3.0 * PI * radius.powi(3);
    let rho_p = ratio * rho_f;
    let target_speed = reynolds * nu / radius;
    let g = target_speed * 6.0 * PI * rho_f * nu * radius * 2.0 / ((rho_p - rho_f) * volume);
    let changes = [
        Override::new("material.0.density", rho_p),
        Override::new("simulation.gravity", vec![0.0, 0.0, -g]),
    ];
    let scene = Box::new(case.scene(SETTLING, &changes, CoupledScene::parse)?);
    let (dt, end_time) = (scene.particles.dt(), scene.settings().end_time);
    let mut model = scene.build().map_err(|e| e.to_string())?;
    let steps = (end_time / dt).round() as usize;
    let mut history = Vec::with_capacity(steps);
    for _ in 0..steps {
        model
            .advance(Horizon::Steps(1))
            .map_err(|e| e.to_string())?;
        history.push((model.time(), model.particles.dem.particles.velocity[0].z));
    }
    let velocity = model.particles.dem.particles.velocity[0].z;
    let slip = mean_velocity(&model, 2) - velocity;
    let force = rho_f * model.particles.forcing.step_force[0].z;
    let late = history[history.len() - history.len() / 10 - 1].1;
    Ok(SettlingResult {
        velocity,
        drag: force / (6.0 * PI * rho_f * nu * radius * slip),
        force_balance: force / ((rho_p - rho_f) * volume * g),
        unsteadiness: (velocity - late).abs() / velocity.abs(),
        history,
    })
}

/// The case: K of the fixed array against Hasimoto/Sangani over volume fractions and resolutions (the
/// tolerance at the finest, the error falling with resolution, the force balancing the body force),
/// variants (markers on the surface, other time steps), and the free sphere's drag against the array's.
pub fn report(out: &Path, quick: bool) -> Result<CaseReport, String> {
    let case = CaseFiles::open("stokes-array", quick)?;
    let tol: Tolerances = case.tolerances()?;
    let p: Parameters = case.parameters()?;
    let reference: Reference = case.table("reference")?;
    let dir = case_dir(out, case.name)?;
    let finest = p.resolutions.iter().copied().fold(0.0, f64::max);
    let mut passed = true;
    let mut table = Table::new(
        [
            "phi (target)",
            "D/h",
            "box (cells)",
            "phi",
            "markers",
            "K",
            "K Hasimoto/Sangani",
            "error",
            "force / (G L^3)",
            "steps",
            "met",
        ]
        .map(String::from)
        .to_vec(),
    );
    let mut curves = Vec::new();
    for &phi in &p.volume_fractions {
        let mut errors: Vec<(f64, f64)> = Vec::new();
        for &d_over_h in &p.resolutions {
            let r = drag(&case, &reference, &tol, p.reynolds, (d_over_h, phi), &[])?;
            let balance_ok = (r.force_balance - 1.0).abs() <= tol.force_balance;
            let drag_ok = d_over_h < finest || r.error.abs() <= tol.drag;
            let falls = !tol.error_falls_with_resolution
                || errors
                    .last()
                    .is_none_or(|&(_, previous)| r.error.abs() < previous.abs());
            let ok = balance_ok && drag_ok && falls && r.converged;
            passed &= ok;
            table.push_row([
                format!("{phi}"),
                format!("{d_over_h}"),
                format!("{}", r.cells),
                format!("{:.4}", r.phi),
                format!("{}", r.markers),
                format!("{:.4}", r.drag),
                format!("{:.4}", r.reference),
                pct(r.error),
                format!("{:.5}", r.force_balance),
                format!("{}", r.steps),
                yes(ok),
            ]);
            errors.push((d_over_h, r.error));
        }
        curves.push((phi, errors));
    }
    // How the figures depend on the choices: markers on the surface, and the time step.
    let mut variants = Table::new(["variant", "K", "error"].map(String::from).to_vec());
    let base = (p.variants_resolution, 0.125);
    let mut variant_runs = vec![(
        "markers on the surface (retraction 0)".to_string(),
        base,
        vec![Override::new("coupling.marker_retraction", 0.0)],
    )];
    let (h, nu) = (
        case.scene_number(ARRAY, "fluid.spacing")?,
        case.scene_number(ARRAY, "fluid.viscosity")?,
    );
    for &number in &p.viscous_numbers {
        variant_runs.push((
            format!("nu dt / h^2 = {number}"),
            base,
            vec![Override::new("simulation.dt", number * h * h / nu)],
        ));
    }
    for (label, (d_over_h, phi), changes) in variant_runs {
        let r = drag(
            &case,
            &reference,
            &tol,
            p.reynolds,
            (d_over_h, phi),
            &changes,
        )?;
        variants.push_row([
            format!("{label}, D/h = {d_over_h}, phi = {:.4}", r.phi),
            format!("{:.4}", r.drag),
            pct(r.error),
        ]);
    }
    // A free sphere settling in a periodic box, against the fixed array of the same box.
    let (_, settling_d_over_h, settling_phi) = settling_geometry(&case)?;
    let fixed = drag(
        &case,
        &reference,
        &tol,
        p.reynolds,
        (settling_d_over_h, settling_phi),
        &[],
    )?;
    let mut settling_table = Table::new(
        [
            "rho_p / rho_f",
            "Re = |u_p| a / nu",
            "K from the slip",
            "K fixed array",
            "difference",
            "rho_f F_h / buoyant weight",
            "change of u_p over the last 10 %",
            "met",
        ]
        .map(String::from)
        .to_vec(),
    );
    let mut settling_curves = Vec::new();
    for &ratio in &p.density_ratios {
        let r = settling(&case, ratio, p.settling_reynolds)?;
        let difference = r.drag / fixed.drag - 1.0;
        let ok = difference.abs() < tol.settling_drag
            && (r.force_balance - 1.0).abs() < tol.force_balance
            && r.unsteadiness < tol.settling_steadiness;
        passed &= ok;
        settling_table.push_row([
            format!("{ratio}"),
            format!("{:.2e}", r.velocity.abs() * 0.5 * settling_d_over_h),
            format!("{:.4}", r.drag),
            format!("{:.4}", fixed.drag),
            pct(difference),
            format!("{:.5}", r.force_balance),
            format!("{:.1e}", r.unsteadiness),
            yes(ok),
        ]);
        let terminal = r.velocity;
        settling_curves.push((
            ratio,
            r.history
                .iter()
                .map(|&(t, u)| (t, u / terminal))
                .collect::<Vec<_>>(),
        ));
    }
    let styles = [Style::LineMarkers, Style::LineMarkers, Style::LineMarkers];
    let figures = vec![
        png(
            &dir,
            "drag-error.png",
            &Plot {
                title: "Stokes drag of a simple-cubic array: K / K_ref - 1 against resolution"
                    .into(),
                x: Axis::linear("D / h"),
                y: Axis::linear("K / K_Hasimoto-Sangani - 1 (%)"),
                series: curves
                    .iter()
                    .zip(styles.into_iter().cycle())
                    .map(|((phi, errors), style)| {
                        Series::new(
                            format!("phi = {phi}"),
                            errors.iter().map(|&(d, e)| (d, 100.0 * e)).collect(),
                            style,
                        )
                    })
                    .collect(),
            },
        )?,
        png(
            &dir,
            "settling.png",
            &Plot {
                title: format!(
                    "Free sphere settling in a periodic box ({} cells, D/h = {settling_d_over_h})",
                    fixed.cells
                ),
                x: Axis::linear("t nu / h^2"),
                y: Axis::linear("u_p / u_p(end)"),
                series: settling_curves
                    .into_iter()
                    .map(|(ratio, points)| {
                        Series::new(format!("rho_p / rho_f = {ratio}"), points, Style::Line)
                    })
                    .collect(),
            },
        )?,
    ];
    let zick_homsy: Vec<String> = reference
        .zick_homsy
        .iter()
        .map(|[phi, k]| {
            format!(
                "K = {k} at phi = {phi} (series: {:.3})",
                reference.drag(*phi)
            )
        })
        .collect();
    let report = CaseReport {
        name: case.name.into(),
        passed,
        tables: vec![
            (
                "Drag coefficient K = F / (6 pi mu a U) of the fixed array (array.toml: markers retracted by 0.3 h, 3 forcing passes, nu dt / h^2 = 0.5)".into(),
                table,
            ),
            ("Variants".into(), variants),
            (
                format!(
                    "Free sphere settling in a periodic box of {} cells, D/h = {settling_d_over_h} (phi = {settling_phi:.4}; settling.toml): drag from the slip against the fixed array of the same box",
                    fixed.cells
                ),
                settling_table,
            ),
        ],
        figures,
        notes: vec![
            format!("Source: Hasimoto (1959), Sangani & Acrivos (1982), Zick & Homsy (1982), via shared/notes/validation-data.md; Zick & Homsy's exact values: {}. Scenes, references and tolerances in validation/stokes-array/.", zick_homsy.join(", ")),
            format!("Tolerances: |K / K_ref - 1| <= {} at the finest D/h ({finest}; the issue's D/h = 16 in the full case), the error falling as D/h grows, and the force on the sphere equal to the body force on the box, G L^3, within {} (steady state: K changing by less than {:e} over 10 steps). A free sphere settling in the box (the fluid carrying a body force that balances its buoyant weight) must show the fixed array's drag within {}, with its velocity steady to {:e} over the last 10 % of the run (Stokes flow seen from the sphere is the fixed array's).", tol.drag, tol.force_balance, tol.steady, tol.settling_drag, tol.settling_steadiness),
        ],
        runs: case.runs(),
    };
    report.write(&dir)?;
    Ok(report)
}
