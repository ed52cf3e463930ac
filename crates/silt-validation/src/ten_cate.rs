//! A sphere settling towards the bottom of a closed box: ten Cate et al. (2002), cases E1-E4
//! (`shared/notes/validation-data.md`), from `validation/ten-cate/settling.toml`: nylon sphere D = 15 mm,
//! rho_p = 1120 kg/m^3, in silicone oil in a box of 100 x 100 x 160 mm, released with its bottom 120 mm
//! above the floor. The immersed boundary coupling (`silt_ibm::coupling`) carries it through the fluid;
//! lubrication, the adaptive contact and the enduring-contact rule (seed eq. 22-26) bring it to rest on
//! the floor. Reference numbers and tolerances: `validation/ten-cate/reference.toml`.

use crate::case::yes;
use crate::case::CaseFiles;
use crate::report::{case_dir, pct, png, CaseReport};
use serde::Deserialize;
use silt_core::model::{Horizon, Model};
use silt_ibm::model::CoupledModel;
use silt_io::scenes::coupled::CoupledScene;
use silt_io::scenes::{Override, SceneKind};
use silt_report::{Axis, Plot, Series, Style, Table};
use std::collections::BTreeMap;
use std::path::Path;

const SCENE: &str = "settling.toml";

/// One experiment of `[experiments]`.
#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Experiment {
    /// rho_f in kg/m^3 and mu in Pa s.
    pub fluid_density: f64,
    pub viscosity: f64,
    pub reynolds: f64,
    /// u_inf in m/s.
    pub terminal_velocity: f64,
    /// Measured largest speed in the box over u_inf.
    pub measured_peak_ratio: f64,
}

impl Experiment {
    /// The measured largest settling speed in the box (m/s): the reference of the plateau.
    pub fn measured_peak(&self) -> f64 {
        self.measured_peak_ratio * self.terminal_velocity
    }
}

/// `[full]` / `[quick]` of `validation/ten-cate/reference.toml`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Parameters {
    pub experiments: Vec<String>,
    pub d_over_h: f64,
    /// u_inf dt / h.
    pub courant: f64,
    /// Time after the start gap is fallen at 0.9 u_inf.
    pub settle_time: f64,
}

/// `[tolerance]` of `validation/ten-cate/reference.toml`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Tolerances {
    velocity: f64,
    overlap: f64,
    rebound: f64,
}

/// `[reported]` of `validation/ten-cate/reference.toml`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Reported {
    e3_plateau_notes: f64,
    e3_stop_time: f64,
}

/// The experiment named `name` (E1-E4).
pub fn experiment(case: &CaseFiles, name: &str) -> Result<Experiment, String> {
    let all: BTreeMap<String, Experiment> = case.table("experiments")?;
    all.get(name).copied().ok_or_else(|| {
        format!("validation/ten-cate/reference.toml: no experiment {name} in [experiments]")
    })
}

/// The sphere's diameter and the start gap below it, as the scene has them.
fn geometry(case: &CaseFiles) -> Result<(f64, f64), String> {
    let diameter = case.scene_number(SCENE, "particles.0.diameters.0")?;
    let centre = case.scene_number(SCENE, "particles.0.positions.0.2")?;
    Ok((diameter, centre - 0.5 * diameter))
}

/// The scene's sphere and box in the fluid of experiment `name`, at `d_over_h` cells per diameter, with
/// dt = courant h / u_inf, built as `silt run` builds it; and the number of steps of the run.
pub fn model(
    case: &CaseFiles,
    name: &str,
    p: &Parameters,
) -> Result<(CoupledModel, usize), String> {
    let e = experiment(case, name)?;
    let (diameter, start_gap) = geometry(case)?;
    let h = diameter / p.d_over_h;
    let [spacing, cells] = case.grid_at(SCENE, h)?;
    let dt = p.courant * h / e.terminal_velocity;
    let duration = start_gap / (0.9 * e.terminal_velocity) + p.settle_time;
    let changes = [
        Override::new("fluid.density", e.fluid_density),
        Override::new("fluid.viscosity", e.viscosity / e.fluid_density),
        spacing,
        cells,
        Override::new("simulation.dt", dt),
        Override::new("simulation.end_time", duration),
    ];
    let scene = case.scene(SCENE, &changes, CoupledScene::parse)?;
    let model = Box::new(scene).build().map_err(|e| e.to_string())?;
    Ok((model, (duration / dt).round() as usize))
}

#[derive(Clone, Debug)]
pub struct TenCateResult {
    /// (t in s, gap between sphere and floor over D, u_z in m/s) every step.
    pub history: Vec<(f64, f64, f64)>,
    /// Largest settling speed (the plateau), m/s.
    pub plateau: f64,
    /// Smallest gap over D (negative: overlap).
    pub smallest_gap: f64,
    /// Largest gap over D after the first contact (a rebound).
    pub rebound: f64,
    /// Time of the first contact, s (None: never touched).
    pub first_contact: Option<f64>,
    /// When the sphere, past its plateau, slowed below 5 % of it (ten Cate's "stops"), s.
    pub stop_time: Option<f64>,
    pub cells: [usize; 3],
    /// Wall time of the run, s.
    pub seconds: f64,
}

/// Runs experiment `name` from release to rest.
pub fn run(case: &CaseFiles, name: &str, p: &Parameters) -> Result<TenCateResult, String> {
    let (diameter, _) = geometry(case)?;
    let (mut model, steps) = model(case, name, p)?;
    let cells = model.fluid.grid().cells;
    let clock = std::time::Instant::now();
    let mut history = Vec::with_capacity(steps);
    for _ in 0..steps {
        model
            .advance(Horizon::Steps(1))
            .map_err(|e| e.to_string())?;
        let particles = &model.particles.dem.particles;
        history.push((
            model.time(),
            (particles.position[0].z - particles.radius[0]) / diameter,
            particles.velocity[0].z,
        ));
    }
    let plateau = history.iter().map(|h| -h.2).fold(0.0, f64::max);
    let smallest_gap = history.iter().map(|h| h.1).fold(f64::MAX, f64::min);
    let first_contact = history.iter().find(|h| h.1 <= 0.0).map(|h| h.0);
    let rebound = match first_contact {
        Some(t0) => history
            .iter()
            .filter(|h| h.0 > t0)
            .map(|h| h.1)
            .fold(0.0, f64::max),
        None => 0.0,
    };
    let fastest = history.iter().position(|h| -h.2 == plateau).unwrap_or(0);
    let stop_time = history[fastest..]
        .iter()
        .find(|h| h.2.abs() < 0.05 * plateau)
        .map(|h| h.0);
    Ok(TenCateResult {
        history,
        plateau,
        smallest_gap,
        rebound,
        first_contact,
        stop_time,
        cells,
        seconds: clock.elapsed().as_secs_f64(),
    })
}

/// The case: each experiment's plateau against the measured largest speed in the box, its landing
/// without tunnelling (overlap) or bouncing (gap after the first contact).
pub fn report(out: &Path, quick: bool) -> Result<CaseReport, String> {
    let case = CaseFiles::open("ten-cate", quick)?;
    let tol: Tolerances = case.tolerances()?;
    let p: Parameters = case.parameters()?;
    let reported: Reported = case.table("reported")?;
    let dir = case_dir(out, case.name)?;
    let mut passed = true;
    let mut table = Table::new(
        [
            "case",
            "Re",
            "D/h",
            "cells",
            "plateau (m/s)",
            "measured peak (m/s)",
            "error",
            "u_inf (m/s)",
            "plateau / u_inf",
            "stops (s)",
            "first contact (s)",
            "deepest overlap / D",
            "largest gap after contact / D",
            "wall time (s)",
            "met",
        ]
        .map(String::from)
        .to_vec(),
    );
    let mut velocity_series = Vec::new();
    let mut gap_series = Vec::new();
    let mut references = Vec::new();
    for name in &p.experiments {
        let e = experiment(&case, name)?;
        let r = run(&case, name, &p)?;
        let reference = e.measured_peak();
        let error = r.plateau / reference - 1.0;
        let overlap = (-r.smallest_gap).max(0.0);
        let ok = error.abs() <= tol.velocity
            && overlap <= tol.overlap
            && r.rebound <= tol.rebound
            && r.first_contact.is_some();
        passed &= ok;
        table.push_row([
            name.clone(),
            format!("{}", e.reynolds),
            format!("{}", p.d_over_h),
            format!("{} x {} x {}", r.cells[0], r.cells[1], r.cells[2]),
            format!("{:.4}", r.plateau),
            format!("{reference:.4}"),
            pct(error),
            format!("{:.3}", e.terminal_velocity),
            format!("{:.3}", r.plateau / e.terminal_velocity),
            r.stop_time.map_or("-".into(), |t| {
                if name == "E3" {
                    format!("{t:.3} (exp. {})", reported.e3_stop_time)
                } else {
                    format!("{t:.3}")
                }
            }),
            r.first_contact.map_or("none".into(), |t| format!("{t:.3}")),
            format!("{overlap:.1e}"),
            format!("{:.1e}", r.rebound),
            format!("{:.0}", r.seconds),
            yes(ok),
        ]);
        let label = format!("{name} (Re {})", e.reynolds);
        velocity_series.push(Series::new(
            label.clone(),
            r.history.iter().map(|h| (h.0, -h.2)).collect(),
            Style::Line,
        ));
        gap_series.push(Series::new(
            label,
            r.history.iter().map(|h| (h.0, h.1)).collect(),
            Style::Line,
        ));
        references.push(Series::new(
            format!("{name} measured peak, ten Cate et al. (2002)"),
            vec![(0.0, reference), (3.0, reference)],
            Style::Dashed,
        ));
    }
    velocity_series.extend(references);
    let figures = vec![
        png(
            &dir,
            "velocity.png",
            &Plot {
                title: format!("Settling velocity, D/h = {}", p.d_over_h),
                x: Axis::linear("t (s)"),
                y: Axis::linear("-u_z (m/s)"),
                series: velocity_series,
            },
        )?,
        png(
            &dir,
            "gap.png",
            &Plot {
                title: format!("Gap between sphere and floor, D/h = {}", p.d_over_h),
                x: Axis::linear("t (s)"),
                y: Axis::linear("gap / D"),
                series: gap_series,
            },
        )?,
    ];
    let ratios: Vec<String> = ["E2", "E3", "E4"]
        .iter()
        .map(|n| experiment(&case, n).map(|e| format!("{} ({n})", e.measured_peak_ratio)))
        .collect::<Result<_, _>>()?;
    let report = CaseReport {
        name: case.name.into(),
        passed,
        tables: vec![("Sphere settling onto the floor of a closed box".into(), table)],
        figures,
        notes: vec![
            format!(
                "Source: ten Cate, Nieuwstad, Derksen & Van den Akker (2002), Phys. Fluids 14: the fluids and u_inf from shared/notes/validation-data.md; the measured largest speed in the box, u_max / u_inf = {} from the paper's Table II, as quoted in rmuenste/FeatFloWer tc-ref/README.md (the notes give about {} m/s for E3 around t = 1.25 s); E3 comes to rest at about {} s. References and tolerances in validation/ten-cate/.",
                ratios.join(", "),
                reported.e3_plateau_notes,
                reported.e3_stop_time
            ),
            format!(
                "\"Stops\": the sphere, past its plateau, slower than 5 % of it. Tolerances: plateau within {} of the reference; deepest overlap within the enduring-contact bound ({} D = 1e-3 R); no gap above {} D after the first contact.",
                tol.velocity, tol.overlap, tol.rebound
            ),
        ],
        runs: case.runs(),
    };
    report.write(&dir)?;
    Ok(report)
}
