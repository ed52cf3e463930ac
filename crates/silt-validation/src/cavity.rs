//! Lid-driven square cavity against Ghia, Ghia & Shin (1982), Tables I and II: u along the vertical
//! centreline x = 0.5 and v along the horizontal centreline y = 0.5 of the steady flow, Re = U L / nu.
//!
//! Unit cavity with walls at x = 0, 1 and y = 0, 1, the top wall moving at U = 1; two cells along a
//! periodic z keep the flow two-dimensional: `validation/lid-driven-cavity/cavity.toml`, with the grid,
//! the viscosity, the step and the end time changed by `--set`. Ghia's tables are in its
//! `reference.toml`.

use crate::case::{advance_to, CaseFiles};
use crate::report::{case_dir, png, CaseReport};
use serde::Deserialize;
use silt_fluid::FluidSolver;
use silt_io::scenes::fluid::FluidScene;
use silt_io::scenes::{Override, SceneKind};
use silt_report::{Axis, Plot, Series, Style, Table};
use std::collections::BTreeMap;
use std::path::Path;

/// Ghia et al. (1982), Tables I and II (`[reference]` of reference.toml): the positions along the
/// centrelines (y for u, x for v) and `u_re<Re>`, `v_re<Re>` for each Reynolds number.
#[derive(Deserialize)]
struct Ghia {
    y: Vec<f64>,
    x: Vec<f64>,
    #[serde(flatten)]
    profiles: BTreeMap<String, Vec<f64>>,
}

impl Ghia {
    /// u(0.5, y) and v(x, 0.5) at Reynolds number `reynolds`.
    fn at(&self, reynolds: u32) -> Result<(&[f64], &[f64]), String> {
        let profile = |name: String| {
            self.profiles
                .get(&name)
                .map(|v| v.as_slice())
                .ok_or_else(|| {
                    format!("no `{name}` in validation/lid-driven-cavity/reference.toml")
                })
        };
        Ok((
            profile(format!("u_re{reynolds}"))?,
            profile(format!("v_re{reynolds}"))?,
        ))
    }
}

/// Linear interpolation of the samples (ascending positions) at `x`.
fn interpolate(samples: &[(f64, f64)], x: f64) -> f64 {
    let k = samples
        .windows(2)
        .position(|w| x <= w[1].0)
        .unwrap_or(samples.len() - 2);
    let ((x0, y0), (x1, y1)) = (samples[k], samples[k + 1]);
    y0 + (y1 - y0) * (x - x0) / (x1 - x0)
}

/// Samples (position, value) along a line.
pub type Profile = Vec<(f64, f64)>;

/// u along x = 0.5 (faces i = n/2) against y, with the wall values, and v along y = 0.5 against x.
pub fn centrelines(s: &FluidSolver) -> (Profile, Profile) {
    let n = s.grid().cells[0];
    let h = s.grid().spacing;
    let (u, v) = (&s.state.velocity[0], &s.state.velocity[1]);
    let mut u_line = vec![(0.0, 0.0)];
    u_line.extend((1..=n).map(|j| ((j as f64 - 0.5) * h, u.at(n / 2, j, 1))));
    u_line.push((1.0, 1.0));
    let mut v_line = vec![(0.0, 0.0)];
    v_line.extend((1..=n).map(|i| ((i as f64 - 0.5) * h, v.at(i, n / 2, 1))));
    v_line.push((1.0, 0.0));
    (u_line, v_line)
}

/// Result of a cavity run.
#[derive(Clone, Debug)]
pub struct CavityResult {
    pub cells: usize,
    pub reynolds: u32,
    pub time: f64,
    /// Largest change of any velocity over the last time unit (steadiness).
    pub last_change: f64,
    /// Largest |u - u_Ghia| and |v - v_Ghia| over Ghia's points, in units of the lid velocity.
    pub u_error: f64,
    pub v_error: f64,
    pub u_line: Vec<(f64, f64)>,
    pub v_line: Vec<(f64, f64)>,
}

/// Runs the cavity scene on n x n cells at `reynolds` from rest to `end_time` and compares with Ghia.
fn run(
    case: &CaseFiles,
    ghia: &Ghia,
    n: usize,
    reynolds: u32,
    end_time: f64,
) -> Result<CavityResult, String> {
    let (u_ghia, v_ghia) = ghia.at(reynolds)?;
    let h = 1.0 / n as f64;
    let changes = [
        Override::new("fluid.cells", vec![n as i64, n as i64, 2]),
        Override::new("fluid.spacing", h),
        Override::new("fluid.viscosity", 1.0 / reynolds as f64),
        Override::new("fluid.time_step", 0.5 * h),
        Override::new("fluid.end_time", end_time),
    ];
    let scene = case.scene("cavity.toml", &changes, FluidScene::parse)?;
    let mut model = scene.build().map_err(|e| e.to_string())?;
    advance_to(&mut model, end_time - 1.0)?;
    let before = model.solver.state.velocity.clone();
    advance_to(&mut model, end_time)?;
    let s = &model.solver;
    let last_change = (0..3)
        .flat_map(|c| {
            s.state.velocity[c]
                .data
                .iter()
                .zip(&before[c].data)
                .map(|(a, b)| (a - b).abs())
        })
        .fold(0.0, f64::max);
    let (u_line, v_line) = centrelines(s);
    let error = |line: &[(f64, f64)], at: &[f64], reference: &[f64]| {
        at.iter()
            .zip(reference)
            .map(|(&x, &r)| (interpolate(line, x) - r).abs())
            .fold(0.0, f64::max)
    };
    Ok(CavityResult {
        cells: n,
        reynolds,
        time: s.state.time,
        last_change,
        u_error: error(&u_line, &ghia.y, u_ghia),
        v_error: error(&v_line, &ghia.x, v_ghia),
        u_line,
        v_line,
    })
}

/// `[tolerance]` of `validation/lid-driven-cavity/reference.toml`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Tolerances {
    centreline: f64,
    steady: f64,
}

/// One run of `[full]` / `[quick]`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CavityRun {
    cells: usize,
    reynolds: u32,
    end_time: f64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Parameters {
    runs: Vec<CavityRun>,
}

/// The case: the centreline velocities of each run against Ghia's, and the flow steady.
pub fn report(out: &Path, quick: bool) -> Result<CaseReport, String> {
    let case = CaseFiles::open("lid-driven-cavity", quick)?;
    let tol: Tolerances = case.tolerances()?;
    let p: Parameters = case.parameters()?;
    let ghia: Ghia = case.table("reference")?;
    let dir = case_dir(out, case.name)?;
    let mut passed = true;
    let mut table = Table::new(
        [
            "Re",
            "cells",
            "t U / L",
            "max |u - u_Ghia| / U",
            "max |v - v_Ghia| / U",
            "change over the last time unit",
            "met",
        ]
        .map(String::from)
        .to_vec(),
    );
    let mut figures = Vec::new();
    for spec in &p.runs {
        let (n, re) = (spec.cells, spec.reynolds);
        let r = run(&case, &ghia, n, re, spec.end_time)?;
        let ok =
            r.u_error < tol.centreline && r.v_error < tol.centreline && r.last_change < tol.steady;
        passed &= ok;
        table.push_row(vec![
            format!("{re}"),
            format!("{n}^2"),
            format!("{:.0}", r.time),
            format!("{:.4}", r.u_error),
            format!("{:.4}", r.v_error),
            format!("{:.1e}", r.last_change),
            String::from(if ok { "yes" } else { "NO" }),
        ]);
        let (u_ref, v_ref) = ghia.at(re)?;
        figures.push(png(
            &dir,
            &format!("centrelines-re{re}.png"),
            &Plot {
                title: format!("Lid-driven cavity, Re = {re}, {n}^2 cells: centreline velocities"),
                x: Axis::linear("position along the centreline (y for u, x for v)"),
                y: Axis::linear("velocity / U"),
                series: vec![
                    Series::new("u(0.5, y), Silt", r.u_line.clone(), Style::Line),
                    Series::new(
                        "u, Ghia et al. (1982)",
                        ghia.y.iter().copied().zip(u_ref.iter().copied()).collect(),
                        Style::Markers,
                    ),
                    Series::new("v(x, 0.5), Silt", r.v_line.clone(), Style::Line),
                    Series::new(
                        "v, Ghia et al. (1982)",
                        ghia.x.iter().copied().zip(v_ref.iter().copied()).collect(),
                        Style::Markers,
                    ),
                ],
            },
        )?);
    }
    let report = CaseReport {
        name: case.name.into(),
        passed,
        tables: vec![(
            format!(
                "Centreline velocities against Ghia et al. (1982), Tables I and II (within {} U; \
                 steady: change below {:e})",
                tol.centreline, tol.steady
            ),
            table,
        )],
        figures,
        notes: vec!["Source: Ghia, Ghia & Shin (1982), J. Comput. Phys. 48, 387 (129^2 multigrid solution); reference numbers in validation/lid-driven-cavity/reference.toml. Unit cavity, 2 cells along a periodic z, Crank–Nicolson, dt = 0.5 h / U, from rest.".into()],
        runs: case.runs(),
    };
    report.write(&dir)?;
    Ok(report)
}
