//! Fluid scenes: a top-level `[fluid]` table describing an incompressible flow on a uniform staggered
//! grid (`silt_fluid`). The format is documented key by key in `docs/scene-format.md` ("Fluid
//! scenes"); the same table is the fluid half of a coupled scene (`super::coupled`).

use super::keys::{mib, names, num, nums, Keys, Range, SceneError};
use super::output::{fits_in_memory, fixed_steps, OutputSection, MAX_STEPS};
use super::{SceneFile, SceneKind};
use crate::run::RunSettings;
use serde::Deserialize;
use silt_fluid::boundary::InflowProfile;
use silt_fluid::decomposition::{Decomposition, MIN_SLAB_PLANES};
pub use silt_fluid::initial::InitialCondition;
use silt_fluid::model::{FluidModel, AXIS_NAMES, FACE_NAMES};
use silt_fluid::scales::{reynolds_number, speed_scale};
use silt_fluid::solver::{viscous_limit, CFL_LIMIT};
use silt_fluid::{
    Boundaries, Boundary, Driving, FluidConfig, FluidSolver, Grid, Signal, TimeStep, Viscous,
};
use std::fmt::Write as _;
use std::path::PathBuf;

/// Largest grid a scene may ask for (2^31 cells, about 200 GiB with Crank–Nicolson).
pub const MAX_CELLS: usize = 1 << 31;
/// Relative tolerance on the cell size given by `lengths` along the three axes.
const LENGTH_TOLERANCE: f64 = 1e-9;
const AXES: [(&str, usize); 3] = [("x", 0), ("y", 1), ("z", 2)];

/// The `[fluid]` table.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FluidSection {
    /// Cells along x, y and z.
    pub cells: [usize; 3],
    /// Cell size h (the same along every axis); or `lengths`.
    pub spacing: Option<f64>,
    /// Domain lengths; `lengths[a] / cells[a]` must be the same h on every axis.
    pub lengths: Option<[f64; 3]>,
    #[serde(default)]
    pub origin: [f64; 3],
    /// Kinematic viscosity nu.
    pub viscosity: f64,
    #[serde(default = "default_viscous")]
    pub viscous: String,
    /// Uniform body force per unit mass: three numbers or signals of time ([`signal`]).
    pub body_force: Option<[toml::Value; 3]>,
    /// Fluid density rho_f (coupled scenes only: a fluid-only run is kinematic, p / rho).
    pub density: Option<f64>,
    /// Required in a fluid scene; a coupled scene takes it from `simulation.end_time`.
    pub end_time: Option<f64>,
    /// Fixed time step; or `cfl`.
    pub time_step: Option<f64>,
    /// Adaptive time step dt = cfl h / max(|u| + |v| + |w|).
    pub cfl: Option<f64>,
    /// Largest adaptive time step.
    pub max_time_step: Option<f64>,
    #[serde(default)]
    pub boundaries: BoundariesSection,
    pub driving: Option<DrivingSection>,
    pub initial: Option<InitialSection>,
    #[serde(default)]
    pub output: OutputSection,
}

fn default_viscous() -> String {
    "crank-nicolson".into()
}

/// `[fluid.boundaries]`: each face optional, periodic by default.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BoundariesSection {
    pub x_low: Option<FaceSection>,
    pub x_high: Option<FaceSection>,
    pub y_low: Option<FaceSection>,
    pub y_high: Option<FaceSection>,
    pub z_low: Option<FaceSection>,
    pub z_high: Option<FaceSection>,
}

impl BoundariesSection {
    fn face(&self, axis: usize, side: usize) -> Option<&FaceSection> {
        [
            [&self.x_low, &self.x_high],
            [&self.y_low, &self.y_high],
            [&self.z_low, &self.z_high],
        ][axis][side]
            .as_ref()
    }
}

/// One face: `{ type = "no-slip", velocity = [1.0, 0.0, 0.0] }`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FaceSection {
    #[serde(rename = "type")]
    pub kind: String,
    /// Wall velocity (no-slip, in the wall's plane) or mean inflow velocity (inflow, pointing inwards).
    pub velocity: Option<[f64; 3]>,
    /// Shape of an inflow over its face: "uniform" or "parabolic".
    pub profile: Option<String>,
}

/// `[fluid.driving]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DrivingSection {
    #[serde(rename = "type")]
    pub kind: String,
    pub axis: Option<String>,
    /// Mean pressure gradient dp/dx_axis (kinematic), for "pressure-gradient": a number or a signal
    /// of time ([`signal`]).
    pub gradient: Option<toml::Value>,
    /// Bulk velocity held, for "flow-rate": a number or a signal of time.
    pub bulk_velocity: Option<toml::Value>,
}

/// `[fluid.initial]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InitialSection {
    #[serde(rename = "type")]
    pub kind: String,
    /// Velocity amplitude U of the Taylor–Green vortices.
    pub amplitude: Option<f64>,
    /// Velocity of a uniform flow.
    pub velocity: Option<[f64; 3]>,
}

/// A checked fluid scene.
#[derive(Clone, Debug)]
pub struct FluidScene {
    pub source: PathBuf,
    /// The `[fluid]` table as written.
    pub section: FluidSection,
    /// The solver configuration.
    pub config: FluidConfig,
    pub end_time: f64,
    pub initial: InitialCondition,
    pub settings: RunSettings,
    pub vorticity: bool,
    pub profile_axis: Option<usize>,
}

impl FluidScene {
    /// Parses and checks the text of a fluid scene; `source` names it in messages.
    pub fn parse(text: &str, source: &std::path::Path) -> Result<FluidScene, SceneError> {
        super::parse_kind(text, source, "fluid", |scene| match scene {
            super::Scene::Fluid(s) => Some(s),
            _ => None,
        })
    }

    /// Checks the `[fluid]` table of `file`.
    pub fn new(file: SceneFile, keys: Keys) -> Result<FluidScene, SceneError> {
        let f = file.fluid.expect("a fluid scene has [fluid]");
        keys.forbid(
            f.density.is_some(),
            "fluid.density",
            "is used only by coupled scenes (with particles); a fluid-only run is kinematic (its \
             pressure is p / rho), remove it",
        )?;
        let end_time = f.end_time.ok_or_else(|| {
            keys.missing(
                "fluid.end_time",
                "the simulated time to stop at is required",
            )
        })?;
        keys.number("fluid.end_time", end_time, Range::Positive)?;
        f.output.allow(
            &keys,
            "fluid.output",
            &["vtk_interval", "vorticity", "profile_axis"],
            "a fluid scene",
        )?;
        let settings = f.output.settings(&keys, "fluid.output", end_time)?;
        FluidScene::check(f, keys, end_time, settings, None)
    }

    /// Checks the table for a run to `end_time` with the output schedule `settings`; `coupled_dt` is
    /// the fixed step of a coupled scene (whose fluid takes no time step of its own).
    pub fn check(
        f: FluidSection,
        keys: Keys,
        end_time: f64,
        settings: RunSettings,
        coupled_dt: Option<f64>,
    ) -> Result<FluidScene, SceneError> {
        let grid = check_grid(&keys, &f)?;
        keys.number("fluid.viscosity", f.viscosity, Range::Positive)?;
        let viscous = keys.choice(
            "fluid.viscous",
            &f.viscous,
            &[
                ("crank-nicolson", Viscous::CrankNicolson),
                ("explicit", Viscous::Explicit),
            ],
        )?;
        let body_force = match &f.body_force {
            None => Signal::constants([0.0; 3]),
            Some(values) => {
                let key = |c: usize| format!("fluid.body_force[{c}]");
                let [x, y, z] = values;
                [
                    signal(&keys, &key(0), x)?,
                    signal(&keys, &key(1), y)?,
                    signal(&keys, &key(2), z)?,
                ]
            }
        };
        let boundaries = check_boundaries(&keys, &f)?;
        for a in 0..3 {
            let periodic = boundaries.is_periodic(a);
            let minimum = if periodic { 2 } else { 3 };
            keys.require(
                f.cells[a] >= minimum,
                "fluid.cells",
                format!("{:?}", f.cells),
                &format!(
                    "{} cell(s) along {}; at least {minimum} are needed ({})",
                    f.cells[a],
                    AXIS_NAMES[a],
                    if periodic {
                        "periodic axis; use 2 for a two-dimensional flow"
                    } else {
                        "axis between walls"
                    }
                ),
            )?;
        }
        let driving = match &f.driving {
            None => Driving::None,
            Some(d) => check_driving(&keys, d, &boundaries)?,
        };
        let profile_axis = f
            .output
            .profile_axis
            .as_deref()
            .map(|name| keys.choice("fluid.output.profile_axis", name, &AXES))
            .transpose()?;
        let time_step = match coupled_dt {
            Some(dt) => TimeStep::Fixed(dt),
            None => check_time_step(
                &keys,
                &f,
                grid.spacing,
                end_time,
                settings.interval,
                viscous,
                (&driving, &body_force),
                &boundaries,
            )?,
        };
        let initial = match &f.initial {
            None => InitialCondition::Rest,
            Some(i) => check_initial(&keys, i, &boundaries)?,
        };
        let config = FluidConfig {
            grid,
            boundaries,
            viscosity: f.viscosity,
            viscous,
            driving,
            body_force,
            time_step,
        };
        fits_in_memory(&keys, "fluid.cells", config.memory_estimate(), "the grid")?;
        Ok(FluidScene {
            source: keys.file.to_path_buf(),
            vorticity: f.output.vorticity.unwrap_or(false),
            section: f,
            config,
            end_time,
            initial,
            settings,
            profile_axis,
        })
    }

    fn keys(&self) -> Keys<'_> {
        Keys::new(&self.source)
    }

    /// The fixed time step, or `None` for an adaptive one (by the CFL number).
    pub fn fixed_time_step(&self) -> Option<f64> {
        match self.config.time_step {
            TimeStep::Fixed(dt) => Some(dt),
            TimeStep::Cfl { .. } => None,
        }
    }

    /// Makes the solver and sets the initial condition. With a fixed time step, refuses one that the
    /// initial flow or the boundaries would make unstable (CFL number above sqrt(3)).
    pub fn solver(&self) -> Result<FluidSolver, SceneError> {
        self.solver_on(&silt_parallel::SingleRank::comm())
    }

    /// This rank's part of [`FluidScene::solver`] on the ranks of `comm`: slabs of z planes while
    /// every rank keeps 2 planes, else pencils of x lines on the most even process grid that fits
    /// (`Decomposition::process_grid`, the rule a restart uses to cut the pieces).
    pub fn solver_on(&self, comm: &silt_parallel::Comm) -> Result<FluidSolver, SceneError> {
        let ranks = comm.size();
        let cells = self.config.grid.cells;
        let dims = Decomposition::process_grid(ranks, cells, MIN_SLAB_PLANES).ok_or_else(|| {
            self.keys().error(
                "fluid.cells",
                format!(
                    "the fluid's {} x {} x {} cells cannot be split among {ranks} ranks: a rank \
                     needs at least 2 rows (y) and 2 planes (z) of cells, and p_y x p_z ranks at \
                     most {} x {} (use at most {} ranks in slabs, or a count that factors so)",
                    cells[0],
                    cells[1],
                    cells[2],
                    (cells[1] / 2).min(cells[0]),
                    (cells[2] / 2).min(cells[1]),
                    (cells[2] / 2).min(cells[0])
                ),
            )
        })?;
        self.solver_with(comm, dims)
    }

    /// This rank's part of [`FluidScene::solver`] on the process grid `dims` (`[p_y, p_z]`; the
    /// coupled scenes choose theirs across gravity).
    pub(crate) fn solver_with(
        &self,
        comm: &silt_parallel::Comm,
        dims: [usize; 2],
    ) -> Result<FluidSolver, SceneError> {
        let keys = self.keys();
        let mut solver = FluidSolver::on_process_grid(self.config.clone(), comm.clone(), dims)
            .map_err(|message| keys.error(solver_error_key(&message), message))?;
        self.initial.apply(&mut solver);
        if let TimeStep::Fixed(dt) = self.config.time_step {
            let h = self.config.grid.spacing;
            let (speed, what) = speed_scale(&solver);
            let cfl = speed * dt / h;
            keys.require(
                cfl.is_finite() && cfl <= CFL_LIMIT,
                if self.section.time_step.is_some() {
                    "fluid.time_step"
                } else {
                    "simulation.dt"
                },
                num(dt),
                &format!(
                    "the CFL number (|u| + |v| + |w|) dt / h of {what} is {cfl:.3}, above the \
                     stability limit {CFL_LIMIT:.3} of RK3; allowed: a step < {} (or `cfl` for an \
                     adaptive step)",
                    num(CFL_LIMIT * h / speed)
                ),
            )?;
        }
        Ok(solver)
    }
}

/// Which key a message of `FluidSolver::new` is about.
fn solver_error_key(message: &str) -> &'static str {
    let m = message.to_lowercase();
    if m.contains("periodic at one end")
        || m.contains("wall")
        || m.contains("inflow")
        || m.contains("outflow")
    {
        "fluid.boundaries"
    } else if m.contains("cell size") {
        "fluid.spacing"
    } else if m.contains("cell") {
        "fluid.cells"
    } else if m.contains("viscosity") {
        "fluid.viscosity"
    } else if m.contains("driv") {
        "fluid.driving"
    } else if m.contains("cfl") {
        "fluid.cfl"
    } else if m.contains("largest time step") {
        "fluid.max_time_step"
    } else if m.contains("time step") {
        "fluid.time_step"
    } else {
        "fluid"
    }
}

/// The grid: cells, and the cell size from `spacing` or `lengths`.
fn check_grid(keys: &Keys, f: &FluidSection) -> Result<Grid, SceneError> {
    let count = f
        .cells
        .iter()
        .try_fold(1usize, |acc, &n| acc.checked_mul(n))
        .filter(|&n| n <= MAX_CELLS);
    keys.require(
        f.cells.iter().all(|&n| n >= 1) && count.is_some(),
        "fluid.cells",
        format!("{:?}", f.cells),
        &format!(
            "each axis needs at least 1 cell (2 on a periodic axis, 3 between walls), at most \
             {MAX_CELLS} cells in all (about 100 bytes each)"
        ),
    )?;
    let spacing = match (f.spacing, f.lengths) {
        (Some(h), None) => keys.number("fluid.spacing", h, Range::Positive)?,
        (None, Some(lengths)) => {
            for &l in &lengths {
                keys.number("fluid.lengths", l, Range::Positive)?;
            }
            let h = lengths[0] / f.cells[0] as f64;
            for a in 1..3 {
                let ha = lengths[a] / f.cells[a] as f64;
                if (ha - h).abs() > LENGTH_TOLERANCE * h {
                    return Err(keys.error(
                        "fluid.lengths",
                        format!(
                            "{lengths:?} with cells {:?} gives cells that are not cubes: h = {} / {} = {h} along x \
                             but {} / {} = {ha} along {}; the cell size must be the same on every axis \
                             (make lengths proportional to cells, or give `spacing` instead)",
                            f.cells, lengths[0], f.cells[0], lengths[a], f.cells[a], AXIS_NAMES[a]
                        ),
                    ));
                }
            }
            h
        }
        (None, None) => return Err(keys.missing(
            "fluid.spacing",
            "give `spacing` (the cell size h, the same on every axis) or `lengths` (the domain \
                 lengths, with lengths[a] / cells[a] the same on every axis)",
        )),
        (Some(_), Some(_)) => {
            return Err(keys.error(
                "fluid.lengths",
                "give either `spacing` or `lengths`, not both",
            ))
        }
    };
    keys.vector("fluid.origin", f.origin)?;
    let key = if f.spacing.is_some() {
        "fluid.spacing"
    } else {
        "fluid.lengths"
    };
    keys.require(
        (0..3).all(|a| (f.origin[a] + f.cells[a] as f64 * spacing).is_finite()),
        key,
        num(spacing),
        "the domain is too large: origin + cells x h is not a finite number",
    )?;
    Ok(Grid {
        cells: f.cells,
        spacing,
        origin: f.origin,
        offset: [0; 3],
    })
}

/// The smallest adaptive CFL number accepted.
const MIN_CFL: f64 = 0.01;

/// The time step: fixed (`time_step`) or adaptive (`cfl`, with its largest step).
#[allow(clippy::too_many_arguments)]
fn check_time_step(
    keys: &Keys,
    f: &FluidSection,
    spacing: f64,
    end_time: f64,
    interval: f64,
    viscous: Viscous,
    (driving, body_force): (&Driving, &[Signal; 3]),
    boundaries: &Boundaries,
) -> Result<TimeStep, SceneError> {
    match (f.time_step, f.cfl) {
        (Some(dt), None) => {
            keys.number("fluid.time_step", dt, Range::Positive)?;
            keys.forbid(
                f.max_time_step.is_some(),
                "fluid.max_time_step",
                "only an adaptive step (`cfl`) has a maximum; with a fixed `time_step` remove it",
            )?;
            fixed_steps(keys, "fluid.time_step", dt, end_time)?;
            let limit = viscous_limit(f.viscosity, spacing);
            keys.require(
                viscous != Viscous::Explicit || dt <= limit,
                "fluid.time_step",
                num(dt),
                &format!(
                    "it is above the explicit viscous stability limit 2.51 h^2 / (12 nu) = {}; \
                     allowed: time_step <= {}, or viscous = \"crank-nicolson\"",
                    num(limit),
                    num(limit)
                ),
            )?;
            Ok(TimeStep::Fixed(dt))
        }
        (None, Some(cfl)) => {
            keys.number_note(
                "fluid.cfl",
                cfl,
                Range::Closed(MIN_CFL, CFL_LIMIT),
                "up to the stability limit of RK3 with central differences, 0.5 is a good choice; \
                 below 0.01 a run takes fifty times the steps of 0.5 for nothing (give a fixed \
                 `time_step` for tiny steps)",
            )?;
            let max = match f.max_time_step {
                Some(max) => keys.number("fluid.max_time_step", max, Range::Positive)?,
                None => {
                    default_max_time_step(cfl, spacing, interval, driving, body_force, boundaries)
                }
            };
            keys.require(
                end_time / max <= MAX_STEPS,
                "fluid.max_time_step",
                num(max),
                &format!(
                    "(given, or by default the output interval, at most sqrt(cfl h / |force|) and cfl h \
                     / (bulk velocity, wall or inflow speed)): end_time / max_time_step is more than \
                     {MAX_STEPS:e}"
                ),
            )?;
            Ok(TimeStep::Cfl { cfl, max })
        }
        (None, None) => Err(keys.missing(
            "fluid.time_step",
            "give a fixed `time_step` or a CFL number `cfl` for an adaptive step",
        )),
        (Some(_), Some(_)) => Err(keys.error(
            "fluid.cfl",
            "give either a fixed `time_step` or an adaptive `cfl`, not both",
        )),
    }
}

/// Default largest adaptive step: the output interval, and short enough that a flow started from rest
/// by a force, a prescribed bulk velocity, a moving wall or an inflow does not pass the CFL number within
/// one step.
fn default_max_time_step(
    cfl: f64,
    h: f64,
    interval: f64,
    driving: &Driving,
    body_force: &[Signal; 3],
    boundaries: &Boundaries,
) -> f64 {
    let mut force = body_force.iter().map(Signal::max_abs).sum::<f64>();
    let mut max = interval;
    for face in boundaries.faces.iter().flatten() {
        if let Boundary::NoSlip { velocity } | Boundary::Inflow { velocity, .. } = face {
            let speed = velocity.iter().map(|v| v.abs()).sum::<f64>();
            if speed > 0.0 {
                max = max.min(cfl * h / speed);
            }
        }
    }
    match driving {
        Driving::PressureGradient { gradient, .. } => force += gradient.max_abs(),
        Driving::FlowRate { bulk_velocity, .. } if bulk_velocity.max_abs() != 0.0 => {
            max = max.min(cfl * h / bulk_velocity.max_abs())
        }
        _ => {}
    }
    if force > 0.0 {
        max = max.min((cfl * h / force).sqrt());
    }
    max
}

/// A number, or a signal of time: a Fourier series `{ mean, period, cos = [..], sin = [..] }`
/// (mean + sum_k cos[k-1] cos(2 pi k t / period) + sin[k-1] sin(2 pi k t / period)), a table
/// `{ table = [[t, value], ...] }` interpolated linearly in time, or a relaxation `{ from, to, rate }`
/// (to + (from - to) exp(-rate t)).
pub fn signal(keys: &Keys, key: &str, value: &toml::Value) -> Result<Signal, SceneError> {
    let number = |v: &toml::Value| v.as_float().or_else(|| v.as_integer().map(|i| i as f64));
    let numbers = |name: &str, v: Option<&toml::Value>| -> Result<Vec<f64>, SceneError> {
        match v {
            None => Ok(Vec::new()),
            Some(toml::Value::Array(items)) => items
                .iter()
                .map(|i| {
                    number(i).ok_or_else(|| {
                        keys.error(format!("{key}.{name}"), "must be a list of numbers")
                    })
                })
                .collect(),
            Some(_) => Err(keys.error(format!("{key}.{name}"), "must be a list of numbers")),
        }
    };
    let allowed = "a number, a Fourier series { mean, period, cos = [..], sin = [..] }, a table \
                   { table = [[t, value], ...] } or a relaxation { from, to, rate }";
    let signal = match value {
        toml::Value::Table(t) if t.contains_key("table") => {
            if let Some(other) = t.keys().find(|k| *k != "table") {
                return Err(keys.error(
                    format!("{key}.{other}"),
                    format!("unknown; {key} is {allowed}"),
                ));
            }
            let rows = t["table"].as_array().map(|rows| {
                rows.iter()
                    .map(|r| {
                        match r
                            .as_array()
                            .map(|p| p.iter().map(number).collect::<Vec<_>>())
                        {
                            Some(p) if p.len() == 2 && p.iter().all(Option::is_some) => {
                                Some([p[0].unwrap_or(0.0), p[1].unwrap_or(0.0)])
                            }
                            _ => None,
                        }
                    })
                    .collect::<Option<Vec<[f64; 2]>>>()
            });
            match rows.flatten() {
                Some(points) => Signal::Table(points),
                None => {
                    return Err(keys.error(
                        format!("{key}.table"),
                        "must be a list of [time, value] pairs",
                    ))
                }
            }
        }
        toml::Value::Table(t) if t.contains_key("rate") => {
            if let Some(other) = t
                .keys()
                .find(|k| !["from", "to", "rate"].contains(&k.as_str()))
            {
                return Err(keys.error(
                    format!("{key}.{other}"),
                    format!("unknown; {key} is {allowed}"),
                ));
            }
            let value = |name: &str| {
                t.get(name).and_then(number).ok_or_else(|| {
                    keys.missing(
                        format!("{key}.{name}"),
                        "a relaxation needs `from`, `to` and `rate` (numbers)",
                    )
                })
            };
            Signal::Relaxation {
                from: value("from")?,
                to: value("to")?,
                rate: value("rate")?,
            }
        }
        toml::Value::Table(t) => {
            if let Some(other) = t
                .keys()
                .find(|k| !["mean", "period", "cos", "sin"].contains(&k.as_str()))
            {
                return Err(keys.error(
                    format!("{key}.{other}"),
                    format!("unknown; {key} is {allowed}"),
                ));
            }
            let period = t.get("period").and_then(number).ok_or_else(|| {
                keys.missing(format!("{key}.period"), "a Fourier series needs its period")
            })?;
            let (mut cos, mut sin) = (numbers("cos", t.get("cos"))?, numbers("sin", t.get("sin"))?);
            let harmonics = cos.len().max(sin.len());
            cos.resize(harmonics, 0.0);
            sin.resize(harmonics, 0.0);
            Signal::Fourier {
                mean: t
                    .get("mean")
                    .map_or(Some(0.0), number)
                    .ok_or_else(|| keys.error(format!("{key}.mean"), "must be a number"))?,
                period,
                cos,
                sin,
            }
        }
        other => Signal::Constant(number(other).ok_or_else(|| {
            keys.error(key, format!("{other} is not allowed; it must be {allowed}"))
        })?),
    };
    match signal.problem() {
        Some(problem) => Err(keys.error(key, format!("{problem}; it must be {allowed}"))),
        None => Ok(signal),
    }
}

/// A signal for reports: a constant with 5 digits, else in words.
fn describe(s: &Signal) -> String {
    match s.constant() {
        Some(v) => num(v),
        None => s.describe(),
    }
}

const FACE_TYPES: [(&str, u8); 5] = [
    ("periodic", 0),
    ("no-slip", 1),
    ("free-slip", 2),
    ("inflow", 3),
    ("outflow", 4),
];

fn check_boundaries(keys: &Keys, f: &FluidSection) -> Result<Boundaries, SceneError> {
    let mut b = Boundaries::periodic();
    for axis in 0..3 {
        for side in 0..2 {
            let Some(face) = f.boundaries.face(axis, side) else {
                continue;
            };
            let name = FACE_NAMES[axis][side];
            let key = |k: &str| format!("fluid.boundaries.{name}.{k}");
            let kind = keys.choice(&key("type"), &face.kind, &FACE_TYPES)?;
            keys.forbid(
                face.profile.is_some() && kind != 3,
                &key("profile"),
                &format!(
                    "a \"{}\" face has no profile; only an \"inflow\" has one",
                    face.kind
                ),
            )?;
            keys.forbid(
                face.velocity.is_some() && !matches!(kind, 1 | 3),
                &key("velocity"),
                &format!(
                    "a \"{}\" face has no velocity; only a \"no-slip\" wall or an \"inflow\" has one",
                    face.kind
                ),
            )?;
            let velocity = face
                .velocity
                .map(|v| keys.vector(&key("velocity"), v))
                .transpose()?
                .map(|v| v.to_array());
            b.faces[axis][side] = match kind {
                0 => Boundary::Periodic,
                1 => {
                    let v = velocity.unwrap_or([0.0; 3]);
                    keys.require(
                        v[axis] == 0.0,
                        &key("velocity"),
                        format!("{v:?}"),
                        &format!(
                            "a wall moves only in its own plane: the component normal to the {name} \
                             wall must be 0 (allowed: velocity[{axis}] = 0)"
                        ),
                    )?;
                    Boundary::NoSlip { velocity: v }
                }
                2 => Boundary::FreeSlip,
                4 => Boundary::Outflow,
                _ => {
                    let v = velocity.ok_or_else(|| {
                        keys.missing(
                            key("velocity"),
                            "an inflow needs its velocity (the mean over the face), pointing into \
                             the domain",
                        )
                    })?;
                    let inward = if side == 0 { v[axis] } else { -v[axis] };
                    keys.require(
                        inward > 0.0,
                        &key("velocity"),
                        format!("{v:?}"),
                        &format!(
                            "it must point into the domain: velocity[{axis}] {} 0 at the {name} face",
                            if side == 0 { ">" } else { "<" }
                        ),
                    )?;
                    let profile = keys.choice(
                        &key("profile"),
                        face.profile.as_deref().unwrap_or("uniform"),
                        &[
                            ("uniform", InflowProfile::Uniform),
                            ("parabolic", InflowProfile::Parabolic),
                        ],
                    )?;
                    Boundary::Inflow {
                        velocity: v,
                        profile,
                    }
                }
            };
        }
        let periodic = b.faces[axis].map(|x| x == Boundary::Periodic);
        if periodic[0] != periodic[1] {
            let (p, w) = if periodic[0] { (0, 1) } else { (1, 0) };
            let explicit = f.boundaries.face(axis, p).is_some();
            let wall_kind = f.boundaries.face(axis, w).map_or("", |x| x.kind.as_str());
            return Err(keys.error(
                format!("fluid.boundaries.{}", FACE_NAMES[axis][p]),
                format!(
                    "{} is periodic{} but {} is \"{wall_kind}\": an axis is periodic at both ends or at \
                     neither; give {} a wall type too (\"no-slip\" or \"free-slip\")",
                    FACE_NAMES[axis][p],
                    if explicit { "" } else { " (the default)" },
                    FACE_NAMES[axis][w],
                    FACE_NAMES[axis][p]
                ),
            ));
        }
    }
    let faces = || (0..3).flat_map(|a| (0..2).map(move |s| (a, s)));
    let has_outflow = faces().any(|(a, s)| b.faces[a][s] == Boundary::Outflow);
    if let Some((a, s)) = faces().find(|&(a, s)| matches!(b.faces[a][s], Boundary::Inflow { .. })) {
        keys.forbid(
            !has_outflow,
            &format!("fluid.boundaries.{}", FACE_NAMES[a][s]),
            "an \"inflow\" needs an \"outflow\" face somewhere: otherwise the fluid cannot leave and \
             the pressure equation has no solution",
        )?;
    }
    Ok(b)
}

fn check_driving(
    keys: &Keys,
    d: &DrivingSection,
    boundaries: &Boundaries,
) -> Result<Driving, SceneError> {
    let kind = keys.choice(
        "fluid.driving.type",
        &d.kind,
        &[("none", 0), ("pressure-gradient", 1), ("flow-rate", 2)],
    )?;
    let forbid = |present: bool, key: &str, what: &str| {
        keys.forbid(
            present,
            &format!("fluid.driving.{key}"),
            &format!("a \"{}\" driving has no `{key}`; {what}", d.kind),
        )
    };
    let axis = || -> Result<usize, SceneError> {
        let name = d.axis.as_deref().ok_or_else(|| {
            keys.missing(
                "fluid.driving.axis",
                &format!(
                    "a \"{}\" driving needs the axis of the flow; allowed: {}",
                    d.kind,
                    names(&AXES)
                ),
            )
        })?;
        let axis = keys.choice("fluid.driving.axis", name, &AXES)?;
        keys.require(
            boundaries.is_periodic(axis),
            "fluid.driving.axis",
            format!("\"{name}\""),
            &format!(
                "the {name} faces are walls; the flow can be driven only along a periodic axis"
            ),
        )?;
        Ok(axis)
    };
    match kind {
        0 => {
            forbid(d.axis.is_some(), "axis", "remove it")?;
            forbid(d.gradient.is_some(), "gradient", "remove it")?;
            forbid(d.bulk_velocity.is_some(), "bulk_velocity", "remove it")?;
            Ok(Driving::None)
        }
        1 => {
            forbid(
                d.bulk_velocity.is_some(),
                "bulk_velocity",
                "it takes `gradient` (a \"flow-rate\" driving takes `bulk_velocity`)",
            )?;
            let axis = axis()?;
            let gradient = d.gradient.as_ref().ok_or_else(|| {
                keys.missing(
                    "fluid.driving.gradient",
                    "the mean pressure gradient dp/dx along the axis (kinematic, i.e. divided by the \
                     density; negative drives the flow towards +axis)",
                )
            })?;
            let gradient = signal(keys, "fluid.driving.gradient", gradient)?;
            Ok(Driving::PressureGradient { axis, gradient })
        }
        _ => {
            forbid(
                d.gradient.is_some(),
                "gradient",
                "it takes `bulk_velocity` (a \"pressure-gradient\" driving takes `gradient`)",
            )?;
            let axis = axis()?;
            let bulk_velocity = d.bulk_velocity.as_ref().ok_or_else(|| {
                keys.missing(
                    "fluid.driving.bulk_velocity",
                    "the bulk velocity (flow rate per cross-section area) to hold",
                )
            })?;
            let bulk_velocity = signal(keys, "fluid.driving.bulk_velocity", bulk_velocity)?;
            Ok(Driving::FlowRate {
                axis,
                bulk_velocity,
            })
        }
    }
}

fn check_initial(
    keys: &Keys,
    i: &InitialSection,
    b: &Boundaries,
) -> Result<InitialCondition, SceneError> {
    let kind = keys.choice(
        "fluid.initial.type",
        &i.kind,
        &[
            ("rest", 0),
            ("uniform", 1),
            ("taylor-green-2d", 2),
            ("taylor-green-3d", 3),
            ("poiseuille", 4),
        ],
    )?;
    let forbid = |present: bool, key: &str, what: &str| {
        keys.forbid(
            present,
            &format!("fluid.initial.{key}"),
            &format!("a \"{}\" initial condition has no `{key}`; {what}", i.kind),
        )
    };
    let amplitude = || {
        keys.number(
            "fluid.initial.amplitude",
            i.amplitude.unwrap_or(1.0),
            Range::Finite,
        )
    };
    let need_periodic = |axes: &[usize]| {
        let walls: Vec<&str> = axes
            .iter()
            .filter(|&&a| !b.is_periodic(a))
            .map(|&a| AXIS_NAMES[a])
            .collect();
        keys.forbid(
            !walls.is_empty(),
            "fluid.initial.type",
            &format!(
                "\"{}\" needs periodic {} faces (one vortex period fills the box); the {} faces are \
                 walls",
                i.kind,
                axes.iter().map(|&a| AXIS_NAMES[a]).collect::<Vec<_>>().join(", "),
                walls.join(", ")
            ),
        )
    };
    match kind {
        0 => {
            forbid(i.amplitude.is_some(), "amplitude", "remove it")?;
            forbid(i.velocity.is_some(), "velocity", "remove it")?;
            Ok(InitialCondition::Rest)
        }
        1 => {
            forbid(i.amplitude.is_some(), "amplitude", "it takes `velocity`")?;
            let v = i.velocity.ok_or_else(|| {
                keys.missing(
                    "fluid.initial.velocity",
                    "the velocity [u, v, w] of the uniform flow",
                )
            })?;
            keys.vector("fluid.initial.velocity", v)?;
            let wall = |f: &Boundary| matches!(f, Boundary::NoSlip { .. } | Boundary::FreeSlip);
            for a in 0..3 {
                keys.require(
                    !(b.faces[a].iter().any(wall) && v[a] != 0.0),
                    "fluid.initial.velocity",
                    format!("{v:?}"),
                    &format!(
                        "it flows through the {} walls; allowed: velocity[{a}] = 0 (walls are \
                         impermeable)",
                        AXIS_NAMES[a]
                    ),
                )?;
            }
            Ok(InitialCondition::Uniform(v))
        }
        2 | 3 => {
            forbid(i.velocity.is_some(), "velocity", "it takes `amplitude`")?;
            if kind == 2 {
                need_periodic(&[0, 1])?;
                Ok(InitialCondition::TaylorGreen2d {
                    amplitude: amplitude()?,
                })
            } else {
                need_periodic(&[0, 1, 2])?;
                Ok(InitialCondition::TaylorGreen3d {
                    amplitude: amplitude()?,
                })
            }
        }
        _ => {
            let why = "the profile follows from the walls, the driving and the body force";
            forbid(i.amplitude.is_some(), "amplitude", why)?;
            forbid(i.velocity.is_some(), "velocity", why)?;
            let bounded: Vec<usize> = (0..3).filter(|&a| !b.is_periodic(a)).collect();
            let no_slip = |a: usize| {
                b.faces[a]
                    .iter()
                    .all(|f| matches!(f, Boundary::NoSlip { .. }))
            };
            keys.forbid(
                bounded.len() != 1 || !no_slip(bounded[0]),
                "fluid.initial.type",
                "\"poiseuille\" (the steady plane-channel profile) needs \"no-slip\" walls at both \
                 ends of exactly one axis and periodic faces on the other two",
            )?;
            Ok(InitialCondition::Poiseuille {
                wall_axis: bounded[0],
            })
        }
    }
}

fn face_description(b: Boundary) -> String {
    match b {
        Boundary::Periodic => "periodic".into(),
        Boundary::FreeSlip => "free-slip".into(),
        Boundary::NoSlip { velocity } if velocity == [0.0; 3] => "no-slip".into(),
        Boundary::NoSlip { velocity } => format!("no-slip moving at {velocity:?}"),
        Boundary::Inflow { velocity, profile } => format!(
            "inflow {velocity:?} ({})",
            match profile {
                InflowProfile::Uniform => "uniform",
                InflowProfile::Parabolic => "parabolic",
            }
        ),
        Boundary::Outflow => "outflow".into(),
        Boundary::Neighbour => "another rank's".into(),
    }
}

impl SceneKind for FluidScene {
    type Model = FluidModel;

    fn settings(&self) -> RunSettings {
        self.settings
    }

    fn build(&self) -> Result<FluidModel, SceneError> {
        Ok(FluidModel::new(
            self.solver()?,
            self.vorticity,
            self.profile_axis,
        ))
    }

    fn build_on(&self, comm: &silt_parallel::Comm) -> Result<FluidModel, SceneError> {
        Ok(FluidModel::new(
            self.solver_on(comm)?,
            self.vorticity,
            self.profile_axis,
        ))
    }

    fn check(&self) -> Result<String, SceneError> {
        Ok(report(self, &self.solver()?))
    }

    fn describe(&self, model: &FluidModel) -> String {
        let c = model.solver.config.grid.cells;
        let step = match self.fixed_time_step() {
            Some(dt) => format!("dt {dt}"),
            None => format!("adaptive dt (initially {:.4e})", model.solver.next_dt()),
        };
        format!("fluid, {} x {} x {} cells, {step}", c[0], c[1], c[2])
    }
}

/// The report of `silt check` for a fluid scene (`solver` as built by [`FluidScene::solver`]).
pub fn report(scene: &FluidScene, solver: &FluidSolver) -> String {
    let c = &scene.config;
    let g = &c.grid;
    let h = g.spacing;
    let lengths = g.lengths();
    let mut out = String::new();
    let mut line = |label: &str, text: String| {
        let _ = writeln!(out, "{label:<16} {text}");
    };
    line("scene", format!("{} (fluid)", scene.source.display()));
    line(
        "grid",
        format!(
            "{} x {} x {} = {} cells, h = {}",
            g.cells[0],
            g.cells[1],
            g.cells[2],
            g.cell_count(),
            num(h)
        ),
    );
    let upper = [0, 1, 2].map(|a| g.origin[a] + lengths[a]);
    line(
        "domain",
        format!(
            "{} .. {}, lengths {} x {} x {}",
            nums(g.origin),
            nums(upper),
            num(lengths[0]),
            num(lengths[1]),
            num(lengths[2])
        ),
    );
    let faces: Vec<String> = (0..3)
        .map(|a| {
            if c.boundaries.is_periodic(a) {
                format!("{} periodic", AXIS_NAMES[a])
            } else {
                format!(
                    "{} {} | {}",
                    AXIS_NAMES[a],
                    face_description(c.boundaries.faces[a][0]),
                    face_description(c.boundaries.faces[a][1])
                )
            }
        })
        .collect();
    line("boundaries", faces.join("; "));
    let driving = match &c.driving {
        Driving::None => "none".to_string(),
        Driving::PressureGradient { axis, gradient } => format!(
            "mean pressure gradient dp/d{} = {}",
            AXIS_NAMES[*axis],
            describe(gradient)
        ),
        Driving::FlowRate {
            axis,
            bulk_velocity,
        } => format!(
            "bulk velocity {} along {}",
            describe(bulk_velocity),
            AXIS_NAMES[*axis]
        ),
    };
    line(
        "fluid",
        format!(
            "nu = {}, viscous term {}, body force [{}], driving: {driving}",
            num(c.viscosity),
            match c.viscous {
                Viscous::CrankNicolson => "Crank–Nicolson",
                Viscous::Explicit => "explicit",
            },
            c.body_force
                .iter()
                .map(describe)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    );
    let initial = match scene.initial {
        InitialCondition::Rest => "rest".to_string(),
        InitialCondition::Uniform(v) => format!("uniform {}", nums(v)),
        InitialCondition::TaylorGreen2d { amplitude } => {
            format!("2D Taylor–Green vortex, amplitude {}", num(amplitude))
        }
        InitialCondition::TaylorGreen3d { amplitude } => {
            format!("3D Taylor–Green vortex, amplitude {}", num(amplitude))
        }
        InitialCondition::Poiseuille { wall_axis } => format!(
            "steady laminar profile between the {} walls",
            AXIS_NAMES[wall_axis]
        ),
    };
    line("initial", initial);
    let re = reynolds_number(&scene.config, &scene.initial);
    line(
        "Reynolds number",
        if re.velocity > 0.0 {
            format!(
                "U L / nu = {} (U = {}: {}; L = {}: {})",
                num(re.value(c.viscosity)),
                num(re.velocity),
                re.velocity_from,
                num(re.length),
                re.length_from
            )
        } else {
            format!("0 ({})", re.velocity_from)
        },
    );
    let limit = viscous_limit(c.viscosity, h);
    let (speed, what) = speed_scale(solver);
    let dt = solver.next_dt();
    line(
        "time step",
        match c.time_step {
            TimeStep::Fixed(dt) => format!(
                "fixed dt = {}: {} steps to end_time {}; CFL number {} (of {what})",
                num(dt),
                (scene.end_time / dt).round(),
                num(scene.end_time),
                num(speed * dt / h)
            ),
            TimeStep::Cfl { cfl, max } => format!(
                "adaptive, CFL number {} (dt at most {}); initially dt = {}, about {} steps to end_time \
                 {} at that step (the flow's speed sets the later ones)",
                num(cfl),
                num(max),
                num(dt),
                (scene.end_time / dt).ceil(),
                num(scene.end_time)
            ),
        },
    );
    line(
        "viscous limit",
        format!(
            "2.51 h^2 / (12 nu) = {}; dt / limit = {}{}",
            num(limit),
            num(dt / limit),
            match c.viscous {
                Viscous::CrankNicolson => " (Crank–Nicolson: stable beyond it)",
                Viscous::Explicit => " (explicit: must stay <= 1)",
            }
        ),
    );
    let viscous_time = re.length.powi(2) / c.viscosity;
    line(
        "viscous time",
        format!(
            "L^2 / nu = {} (end_time is {} of it)",
            num(viscous_time),
            num(scene.end_time / viscous_time)
        ),
    );
    let plan = solver.helmholtz_plan(dt);
    if let Some(stages) = plan {
        let described: Vec<String> = stages
            .iter()
            .map(|s| s.map_or("direct".to_string(), |n| format!("{n} Jacobi sweeps")))
            .collect();
        line(
            "implicit solves",
            format!(
                "Crank–Nicolson systems at the initial dt, stages 1-3: {} (Jacobi: max-norm error <= \
                 {:e} of the solution; direct where more than {} sweeps would be needed)",
                described.join(", "),
                silt_fluid::solver::JACOBI_TOLERANCE,
                silt_fluid::solver::MAX_JACOBI_SWEEPS
            ),
        );
    }
    let all_jacobi = plan.is_some_and(|stages| stages.iter().all(Option::is_some));
    let set_up = solver.allocated_bytes() as f64;
    // Jacobi rings: per component, one per thread, about RING_BYTES each.
    let rings = if plan.is_some_and(|stages| stages.iter().any(Option::is_some)) {
        3.0 * silt_fluid::jacobi::ring_bytes_estimate() as f64
    } else {
        0.0
    };
    let later = c.factorisation_estimate(all_jacobi) + rings;
    line(
        "memory",
        format!(
            "about {} MiB: {} MiB allocated at set-up (fields, stage arrays, solver tables) + about {} \
             MiB of factorisations and Jacobi rings made in the first step",
            mib(set_up + later),
            mib(set_up),
            mib(later)
        ),
    );
    let o = &scene.settings;
    let frames = (scene.end_time / o.interval).floor() as u64 + 1;
    let images = (frames - 1) / o.vtk_every + 1;
    let per_cell = if scene.vorticity { 7.0 } else { 4.0 };
    let image_bytes = g.cell_count() as f64 * per_cell * 8.0 * 4.0 / 3.0;
    line(
        "output",
        format!(
            "about {frames} frames every {}{}, {}",
            num(o.interval),
            if o.vtk {
                format!(
                    ", {images} VTK images of about {} MiB each",
                    mib(image_bytes)
                )
            } else {
                String::new()
            },
            o.checkpoint_interval
                .map_or("checkpoints every 10 frames".into(), |t| format!(
                    "checkpoints every {}",
                    num(t)
                ))
        ),
    );
    out
}
