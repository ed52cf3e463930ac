//! Taylor–Green vortices: second-order convergence in space (2D against the exact solution, 3D by
//! Richardson differences between three grids), and the 2D kinetic energy decay e^(-4 nu t), from
//! the scenes `validation/taylor-green/vortex-2d.toml` and `vortex-3d.toml`.
//!
//! 2D (validation-data.md): u = -U cos x sin y e^(-2 nu t), v = U sin x cos y e^(-2 nu t) on [0, 2 pi)^2,
//! run on an n x n x 2 grid periodic in z (the flow stays two-dimensional).
//! 3D (Brachet et al. 1983): u = U sin x cos y cos z, v = -U cos x sin y cos z, w = 0 on [0, 2 pi)^3.

use crate::case::yes;
use crate::case::{advance_to, CaseFiles};
use crate::report::{case_dir, pct, png, CaseReport};
use serde::Deserialize;
use silt_fluid::diagnostics::kinetic_energy;
use silt_fluid::model::FluidModel;
use silt_fluid::{
    Boundaries, Driving, FluidConfig, FluidSolver, Grid, Location, TimeStep, Viscous,
};
use silt_io::scenes::fluid::FluidScene;
use silt_io::scenes::{Override, SceneKind};
use silt_report::{Axis, Plot, Series, Style, Table};
use std::f64::consts::PI;
use std::path::Path;

/// Solver for a Taylor–Green vortex of amplitude 1 on `cells` cells per axis (2 along z when `three_d`
/// is false), with viscosity `nu` and a time step of `cfl` h / U (at most half the explicit viscous limit
/// with explicit viscous terms), built in code for the benchmarks (`silt bench fluid`).
pub fn solver(
    cells: usize,
    three_d: bool,
    nu: f64,
    cfl: f64,
    viscous: Viscous,
) -> Result<FluidSolver, String> {
    let h = 2.0 * PI / cells as f64;
    let grid = Grid {
        cells: [cells, cells, if three_d { cells } else { 2 }],
        spacing: h,
        origin: [0.0; 3],
        offset: [0; 3],
    };
    let config = FluidConfig {
        grid,
        boundaries: Boundaries::periodic(),
        viscosity: nu,
        viscous,
        driving: Driving::None,
        body_force: silt_fluid::Signal::constants([0.0; 3]),
        time_step: TimeStep::Fixed(largest_step(h, nu, cfl, viscous)),
    };
    let mut solver = FluidSolver::new(config)?;
    if three_d {
        solver.set_velocity(|c, [x, y, z]| match c {
            0 => x.sin() * y.cos() * z.cos(),
            1 => -x.cos() * y.sin() * z.cos(),
            _ => 0.0,
        });
        solver.set_pressure(|[x, y, z]| {
            ((2.0 * x).cos() + (2.0 * y).cos()) * ((2.0 * z).cos() + 2.0) / 16.0
        });
    } else {
        solver.set_velocity(|c, p| exact_2d(c, p, 0.0, nu));
        solver.set_pressure(|[x, y, _]| -((2.0 * x).cos() + (2.0 * y).cos()) / 4.0);
    }
    Ok(solver)
}

/// Exact 2D Taylor–Green velocity component `c` at `p` and time `t`.
pub fn exact_2d(c: usize, [x, y, _]: [f64; 3], t: f64, nu: f64) -> f64 {
    let decay = (-2.0 * nu * t).exp();
    match c {
        0 => -x.cos() * y.sin() * decay,
        1 => x.sin() * y.cos() * decay,
        _ => 0.0,
    }
}

/// Largest time step of the studies: `cfl` h / U, and at most half the explicit viscous limit with
/// explicit viscous terms.
fn largest_step(h: f64, nu: f64, cfl: f64, viscous: Viscous) -> f64 {
    let dt = cfl * h;
    match viscous {
        Viscous::Explicit => dt.min(0.5 * silt_fluid::solver::viscous_limit(nu, h)),
        Viscous::CrankNicolson => dt,
    }
}

/// The largest fixed step of at most `cfl` h (and half the explicit viscous limit) that divides
/// `interval` exactly.
fn step_dividing(interval: f64, h: f64, nu: f64, cfl: f64, viscous: Viscous) -> f64 {
    let steps = (interval / largest_step(h, nu, cfl, viscous))
        .ceil()
        .max(1.0);
    interval / steps
}

/// Root-mean-square difference between the velocity and `exact(c, position)` over all unknowns, over the
/// rms of the exact field.
pub fn relative_l2_error(solver: &FluidSolver, exact: impl Fn(usize, [f64; 3]) -> f64) -> f64 {
    let grid = *solver.grid();
    let (mut error, mut norm) = (0.0, 0.0);
    for c in 0..3 {
        let unknowns = *solver.velocity_unknowns(c);
        let field = &solver.state.velocity[c];
        for k in 0..unknowns.shape[2] {
            for j in 0..unknowns.shape[1] {
                for i in 0..unknowns.shape[0] {
                    let index = [
                        i + unknowns.start[0],
                        j + unknowns.start[1],
                        k + unknowns.start[2],
                    ];
                    let value = field.at(index[0], index[1], index[2]);
                    let reference = exact(c, grid.point(Location::Face(c), index));
                    error += (value - reference).powi(2);
                    norm += reference * reference;
                }
            }
        }
    }
    (error / norm).sqrt()
}

/// Projection of the u component on sin x cos y cos z (the initial 3D mode): 8 / (2 pi)^3 times the
/// integral, exact on the grid for this trigonometric polynomial.
pub fn mode_amplitude_3d(solver: &FluidSolver) -> f64 {
    let grid = *solver.grid();
    let unknowns = *solver.velocity_unknowns(0);
    let field = &solver.state.velocity[0];
    let mut sum = 0.0;
    for k in 0..unknowns.shape[2] {
        for j in 0..unknowns.shape[1] {
            for i in 0..unknowns.shape[0] {
                let index = [i + 1, j + 1, k + 1];
                let [x, y, z] = grid.point(Location::Face(0), index);
                sum += field.at(index[0], index[1], index[2]) * x.sin() * y.cos() * z.cos();
            }
        }
    }
    8.0 * sum / unknowns.len() as f64
}

/// One grid of a convergence study.
#[derive(Clone, Debug)]
pub struct ConvergenceRow {
    pub cells: usize,
    pub spacing: f64,
    /// 2D: relative L2 error against the exact solution. 3D: amplitude of the initial mode.
    pub value: f64,
    /// Largest |div u| h / U after the last step.
    pub divergence: f64,
    pub steps: u64,
}

/// Observed orders between successive rows: log2(e_n / e_2n) for errors (2D), and
/// log2((a_n - a_2n) / (a_2n - a_4n)) for the 3D amplitudes (Richardson).
pub fn observed_orders(rows: &[ConvergenceRow], three_d: bool) -> Vec<f64> {
    if three_d {
        rows.windows(3)
            .map(|w| {
                ((w[0].value - w[1].value) / (w[1].value - w[2].value))
                    .abs()
                    .log2()
            })
            .collect()
    } else {
        rows.windows(2)
            .map(|w| (w[0].value / w[1].value).log2())
            .collect()
    }
}

/// `[tolerance]` of `validation/taylor-green/reference.toml`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Tolerances {
    order: (f64, f64),
    energy: f64,
    divergence: f64,
}

/// `[full]` / `[quick]` of `validation/taylor-green/reference.toml`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Parameters {
    grids_2d: Vec<usize>,
    grids_3d: Vec<usize>,
    viscous_3d: Vec<String>,
    cfl: f64,
    end_2d: f64,
    end_3d: f64,
    energy_cells: usize,
    energy_viscosity: f64,
    energy_samples: usize,
}

/// One run of a vortex scene: `file` on `cells` per axis (2 along z in 2D) with the viscous scheme,
/// viscosity `nu` and a fixed step of at most `cfl` h dividing `interval`, to `end_time`.
struct VortexRun {
    file: &'static str,
    cells: usize,
    viscous: Viscous,
    nu: f64,
    cfl: f64,
    interval: f64,
    end_time: f64,
}

impl VortexRun {
    /// The model, built from the scene with this run's changes.
    fn build(&self, case: &CaseFiles) -> Result<FluidModel, String> {
        let h = 2.0 * PI / self.cells as f64;
        let n = self.cells as i64;
        let cells = [n, n, if self.file.contains("3d") { n } else { 2 }];
        let dt = step_dividing(self.interval, h, self.nu, self.cfl, self.viscous);
        let changes = [
            Override::new("fluid.cells", cells.to_vec()),
            Override::new("fluid.spacing", h),
            Override::new("fluid.viscosity", self.nu),
            Override::new("fluid.viscous", viscous_key(self.viscous)),
            Override::new("fluid.end_time", self.end_time),
            Override::new("fluid.time_step", dt),
            Override::new("fluid.output.interval", self.end_time),
        ];
        let scene = case.scene(self.file, &changes, FluidScene::parse)?;
        scene.build().map_err(|e| e.to_string())
    }
}

fn viscous_key(v: Viscous) -> &'static str {
    match v {
        Viscous::Explicit => "explicit",
        Viscous::CrankNicolson => "crank-nicolson",
    }
}

pub(crate) fn viscous_name(v: Viscous) -> &'static str {
    match v {
        Viscous::Explicit => "explicit",
        Viscous::CrankNicolson => "Crank–Nicolson",
    }
}

/// Convergence study on `grids` (cells per axis), nu = 0.1 to `end_time` with dt = cfl h.
fn convergence(
    case: &CaseFiles,
    p: &Parameters,
    grids: &[usize],
    three_d: bool,
    viscous: Viscous,
) -> Result<Vec<ConvergenceRow>, String> {
    let (file, end_time) = if three_d {
        ("vortex-3d.toml", p.end_3d)
    } else {
        ("vortex-2d.toml", p.end_2d)
    };
    let nu = 0.1;
    grids
        .iter()
        .map(|&n| {
            let mut model = VortexRun {
                file,
                cells: n,
                viscous,
                nu,
                cfl: p.cfl,
                interval: end_time,
                end_time,
            }
            .build(case)?;
            advance_to(&mut model, end_time)?;
            let s = &model.solver;
            let value = if three_d {
                mode_amplitude_3d(s)
            } else {
                relative_l2_error(s, |c, x| exact_2d(c, x, end_time, nu))
            };
            let h = s.grid().spacing;
            let mut work = Vec::new();
            let divergence =
                silt_fluid::projection::max_divergence(&s.state.velocity, s.cells(), h, &mut work)
                    * h;
            Ok(ConvergenceRow {
                cells: n,
                spacing: h,
                value,
                divergence,
                steps: s.state.steps,
            })
        })
        .collect()
}

/// Kinetic energy history of the 2D vortex over one decay time 1 / (4 nu): rows of (t, E / E_0
/// computed, e^(-4 nu t)).
fn energy_decay(case: &CaseFiles, p: &Parameters) -> Result<Vec<(f64, f64, f64)>, String> {
    let nu = p.energy_viscosity;
    let decay_time = 1.0 / (4.0 * nu);
    let samples = p.energy_samples;
    let mut model = VortexRun {
        file: "vortex-2d.toml",
        cells: p.energy_cells,
        viscous: Viscous::CrankNicolson,
        nu,
        cfl: p.cfl,
        interval: decay_time / samples as f64,
        end_time: decay_time,
    }
    .build(case)?;
    let energy = |s: &FluidSolver| {
        let unknowns = [0, 1, 2].map(|c| *s.velocity_unknowns(c));
        kinetic_energy(s.grid(), &s.state.velocity, &unknowns)
    };
    let e0 = energy(&model.solver);
    let mut rows = vec![(0.0, 1.0, 1.0)];
    for sample in 1..=samples {
        let t = decay_time * sample as f64 / samples as f64;
        advance_to(&mut model, t)?;
        let e = energy(&model.solver);
        rows.push((t, e / e0, (-4.0 * nu * t).exp()));
    }
    Ok(rows)
}

/// The case: second-order convergence of the 2D and 3D vortices with both viscous schemes, and the
/// 2D kinetic energy decay.
pub fn report(out: &Path, quick: bool) -> Result<CaseReport, String> {
    let case = CaseFiles::open("taylor-green", quick)?;
    let tol: Tolerances = case.tolerances()?;
    let p: Parameters = case.parameters()?;
    let dir = case_dir(out, case.name)?;
    let in_range = |o: f64| (tol.order.0..=tol.order.1).contains(&o);
    let mut passed = true;
    let mut table = Table::new(
        [
            "case",
            "viscous",
            "cells",
            "steps",
            "error / amplitude",
            "observed order",
            "max |div u| h / U",
            "met",
        ]
        .map(String::from)
        .to_vec(),
    );
    let mut convergence_series = Vec::new();
    let schemes = [Viscous::Explicit, Viscous::CrankNicolson];
    for three_d in [false, true] {
        let grids = if three_d { &p.grids_3d } else { &p.grids_2d };
        for viscous in schemes {
            if three_d && !p.viscous_3d.iter().any(|v| v == viscous_key(viscous)) {
                continue;
            }
            let rows = convergence(&case, &p, grids, three_d, viscous)?;
            let orders = observed_orders(&rows, three_d);
            let label = if three_d {
                "3D (Richardson)"
            } else {
                "2D (exact)"
            };
            for (i, row) in rows.iter().enumerate() {
                // 2D: order between this grid and the previous one; 3D: from the three grids ending here.
                let order = if three_d {
                    i.checked_sub(2).map(|k| orders[k])
                } else {
                    i.checked_sub(1).map(|k| orders[k])
                };
                let ok = order.is_none_or(in_range) && row.divergence < tol.divergence;
                passed &= ok;
                table.push_row(vec![
                    label.into(),
                    viscous_name(viscous).into(),
                    format!("{}", row.cells),
                    format!("{}", row.steps),
                    if three_d {
                        i.checked_sub(1).map_or("-".into(), |k| {
                            format!("{:.3e}", (rows[k].value - row.value).abs())
                        })
                    } else {
                        format!("{:.3e}", row.value)
                    },
                    order.map_or("-".into(), |o| format!("{o:.3}")),
                    format!("{:.1e}", row.divergence),
                    yes(ok),
                ]);
            }
            let points: Vec<(f64, f64)> = if three_d {
                rows.windows(2)
                    .map(|w| (w[1].spacing, (w[0].value - w[1].value).abs()))
                    .collect()
            } else {
                rows.iter().map(|r| (r.spacing, r.value)).collect()
            };
            convergence_series.push(Series::new(
                format!("{label}, {}", viscous_name(viscous)),
                points,
                Style::LineMarkers,
            ));
        }
    }
    let h0 = 2.0 * PI / 16.0;
    convergence_series.push(Series::new(
        "slope 2",
        vec![(h0, 2e-3), (h0 / 8.0, 2e-3 / 64.0)],
        Style::Dashed,
    ));
    let mut figures = vec![png(
        &dir,
        "convergence.png",
        &Plot {
            title: "Taylor–Green vortex: velocity error against cell size".into(),
            x: Axis::log("h"),
            y: Axis::log("relative L2 error (2D) / |a_h - a_2h| (3D)"),
            series: convergence_series,
        },
    )?];

    let decay = energy_decay(&case, &p)?;
    let worst = decay
        .iter()
        .map(|&(_, e, exact)| (e / exact - 1.0).abs())
        .fold(0.0, f64::max);
    passed &= worst < tol.energy;
    let mut energy = Table::new(
        ["t nu", "E / E_0", "exp(-4 nu t)", "error"]
            .map(String::from)
            .to_vec(),
    );
    for &(t, e, exact) in &decay {
        energy.push_row(vec![
            format!("{:.4}", t * p.energy_viscosity),
            format!("{e:.6}"),
            format!("{exact:.6}"),
            pct(e / exact - 1.0),
        ]);
    }
    figures.push(png(
        &dir,
        "energy-decay.png",
        &Plot {
            title: format!(
                "2D Taylor–Green vortex, {}^2, nu = {}, Crank–Nicolson",
                p.energy_cells, p.energy_viscosity
            ),
            x: Axis::linear("t"),
            y: Axis::linear("E / E_0"),
            series: vec![
                Series::new(
                    "Silt",
                    decay.iter().map(|&(t, e, _)| (t, e)).collect(),
                    Style::Markers,
                ),
                Series::new(
                    "exp(-4 nu t)",
                    decay.iter().map(|&(t, _, x)| (t, x)).collect(),
                    Style::Line,
                ),
            ],
        },
    )?);
    let report = CaseReport {
        name: case.name.into(),
        passed,
        tables: vec![
            (
                format!(
                    "Convergence (nu = 0.1, dt = {} h (explicit: at most half the viscous limit); 2D \
                     to t = {}, 3D to t = {}; order within {}..{}, divergence below {:e})",
                    p.cfl, p.end_2d, p.end_3d, tol.order.0, tol.order.1, tol.divergence
                ),
                table,
            ),
            (
                format!(
                    "Kinetic energy over one decay time 1/(4 nu) (error below {}): largest error {}",
                    pct(tol.energy),
                    pct(worst)
                ),
                energy,
            ),
        ],
        figures,
        notes: vec!["Source: Taylor & Green (1937); 3D initial field of Brachet et al. (1983); references and tolerances in validation/taylor-green/. The 2D energy error is the discrete Laplacian's decay rate, 4 nu (1 - h^2/12): 0.08% after one decay time on 64^2.".into()],
        runs: case.runs(),
    };
    report.write(&dir)?;
    Ok(report)
}
