//! A sphere resting on the bottom wall of a Couette flow (seed sec. 5.3, Fig. 11), from
//! `validation/couette-sphere/sphere.toml`, in units of the gap H and the lid speed U: the sphere
//! (D = 0.2 H) sits 1e-3 R above the wall in the linear shear profile, held fixed until t U / H = 0.01,
//! then free. The fluid forces act during its enduring contact with the wall (its Stokes number is far
//! below St_crit), so the shear drags and spins it; friction decides between rolling without slip
//! (u_p = -omega_z R_cp, the contact point at rest) and sliding. The seed finds sliding at
//! Re_H = U H / nu = 10 and rolling at 50. Tolerance and parameters: `validation/couette-sphere/`.

use crate::case::yes;
use crate::case::CaseFiles;
use crate::report::{case_dir, CaseReport};
use serde::Deserialize;
use silt_core::model::{Horizon, Model};
use silt_io::scenes::coupled::CoupledScene;
use silt_io::scenes::{Override, SceneKind};
use silt_report::{Axis, Plot, Series, Style, Table};
use std::path::Path;

const SCENE: &str = "sphere.toml";

/// `[full]` / `[quick]` of `validation/couette-sphere/reference.toml`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Parameters {
    reynolds: Vec<f64>,
    expected: Vec<String>,
    d_over_h: f64,
    /// U dt / h, unless nu dt / h^2 would exceed `max_viscous_number`.
    courant: f64,
    max_viscous_number: f64,
}

/// `[tolerance]` of `validation/couette-sphere/reference.toml`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Tolerances {
    rolling: f64,
}

#[derive(Clone, Debug)]
pub struct CouetteResult {
    /// (t, u_p, -omega_z R_cp, gap / D) every step; R_cp the distance from the centre to the wall.
    pub history: Vec<(f64, f64, f64, f64)>,
    /// Means over the last quarter of the run.
    pub velocity: f64,
    pub rolling_velocity: f64,
    /// (u_p - (-omega_z R_cp)) / u_p over the last quarter: 0 when rolling without slip.
    pub slip: f64,
    pub cells: [usize; 3],
    pub seconds: f64,
}

/// Runs the scene at Re_H = `reynolds` with `p.d_over_h` cells per diameter and dt = courant h / U
/// (at most max_viscous_number h^2 / nu: the coupling's limit), to the scene's end time.
fn run(case: &CaseFiles, reynolds: f64, p: &Parameters) -> Result<CouetteResult, String> {
    let diameter = case.scene_number(SCENE, "particles.0.diameters.0")?;
    let h = diameter / p.d_over_h;
    let [spacing, cells] = case.grid_at(SCENE, h)?;
    let dt = (p.courant * h).min(p.max_viscous_number * h * h * reynolds);
    let changes = [
        Override::new("fluid.viscosity", 1.0 / reynolds),
        spacing,
        cells,
        Override::new("simulation.dt", dt),
    ];
    let scene = Box::new(case.scene(SCENE, &changes, CoupledScene::parse)?);
    let end_time = scene.settings().end_time;
    let mut model = scene.build().map_err(|e| e.to_string())?;
    let cells = model.fluid.grid().cells;
    let clock = std::time::Instant::now();
    let steps = (end_time / dt).round() as usize;
    let mut history = Vec::with_capacity(steps);
    for _ in 0..steps {
        model
            .advance(Horizon::Steps(1))
            .map_err(|e| e.to_string())?;
        let p = &model.particles.dem.particles;
        let contact_radius = p.position[0].y;
        history.push((
            model.time(),
            p.velocity[0].x,
            -p.angular_velocity[0].z * contact_radius,
            (p.position[0].y - p.radius[0]) / diameter,
        ));
    }
    let tail = &history[3 * history.len() / 4..];
    let mean =
        |f: fn(&(f64, f64, f64, f64)) -> f64| tail.iter().map(f).sum::<f64>() / tail.len() as f64;
    let velocity = mean(|h| h.1);
    let rolling_velocity = mean(|h| h.2);
    Ok(CouetteResult {
        slip: (velocity - rolling_velocity) / velocity,
        velocity,
        rolling_velocity,
        history,
        cells,
        seconds: clock.elapsed().as_secs_f64(),
    })
}

/// The case: at each Re_H the sphere rolls without slip (|slip| within the tolerance) or slides (above
/// it), as the seed finds.
pub fn report(out: &Path, quick: bool) -> Result<CaseReport, String> {
    let case = CaseFiles::open("couette-sphere", quick)?;
    let tol: Tolerances = case.tolerances()?;
    let p: Parameters = case.parameters()?;
    let dir = case_dir(out, case.name)?;
    let mut table = Table::new(
        [
            "Re_H",
            "D/h",
            "cells",
            "u_p / U",
            "-omega_z R_cp / U",
            "slip (u_p + omega_z R_cp) / u_p",
            "expected (seed)",
            "met",
            "wall time (s)",
        ]
        .map(String::from)
        .to_vec(),
    );
    if p.reynolds.len() != p.expected.len() {
        return Err("validation/couette-sphere/reference.toml: `reynolds` and `expected` must have the same length".into());
    }
    let mut passed = true;
    let mut plots = Vec::new();
    for (&reynolds, expected) in p.reynolds.iter().zip(&p.expected) {
        let rolls = match expected.as_str() {
            "rolls" => true,
            "slides" => false,
            other => {
                return Err(format!(
                    "validation/couette-sphere/reference.toml: expected \"{other}\"; allowed: \"rolls\", \"slides\""
                ))
            }
        };
        let r = run(&case, reynolds, &p)?;
        let ok = if rolls {
            r.slip.abs() <= tol.rolling
        } else {
            r.slip > tol.rolling
        };
        passed &= ok;
        table.push_row([
            format!("{reynolds}"),
            format!("{}", p.d_over_h),
            format!("{} x {} x {}", r.cells[0], r.cells[1], r.cells[2]),
            format!("{:.4}", r.velocity),
            format!("{:.4}", r.rolling_velocity),
            format!("{:.4}", r.slip),
            expected.clone(),
            yes(ok),
            format!("{:.0}", r.seconds),
        ]);
        plots.push(Plot {
            title: format!("Re_H = {reynolds}"),
            x: Axis::linear("t U / H"),
            y: Axis::linear("velocity / U"),
            series: vec![
                Series::new(
                    "u_p",
                    r.history.iter().map(|h| (h.0, h.1)).collect(),
                    Style::Line,
                ),
                Series::new(
                    "-omega_z R_cp",
                    r.history.iter().map(|h| (h.0, h.2)).collect(),
                    Style::Dashed,
                ),
            ],
        });
    }
    let path = dir.join("velocities.png");
    silt_report::write_png_grid(&path, &plots, 2).map_err(|e| e.to_string())?;
    let report = CaseReport {
        name: case.name.into(),
        passed,
        tables: vec![("Sphere on the wall of a Couette flow".into(), table)],
        figures: vec![path],
        notes: vec![
            "Source: Biegert, Vowinckel & Meiburg (2017), sec. 5.3 and Fig. 11: in units of the gap H and lid speed U, a sphere of D = 0.2 H held 1e-3 R above the bottom wall in the linear shear profile until t U / H = 0.01, then free; the fluid forces act during its enduring contact. The seed's density, gravity and friction (Table 2) are lost in the text: here rho_p / rho_f = 2.5, g = 3 U^2 / H (inside the window where the seed's regimes appear, see the README's scan), mu_s = 0.8, mu_k = 0.15, e_dry = 0.97; periodic 6 D x 4 D. Scene, reference and tolerance in validation/couette-sphere/.".into(),
            format!("Rolling: |u_p + omega_z R_cp| <= {} u_p over the last quarter of the run (R_cp the distance from the centre to the wall); sliding: above it.", tol.rolling),
        ],
        runs: case.runs(),
    };
    report.write(&dir)?;
    Ok(report)
}
