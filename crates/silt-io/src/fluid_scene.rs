//! Fluid scene files (TOML): a top-level `[fluid]` table describing an incompressible flow on a uniform
//! staggered grid (`silt_fluid`). [`FluidScene::parse`] reads and checks a scene into a
//! [`FluidConfig`], an initial condition and output settings; [`FluidScene::build`] makes the solver and
//! sets the initial condition. Every mistake is one [`SceneError`] naming the file, the key, what was
//! wrong and what is allowed. The format is documented key by key in `docs/scene-format.md` ("Fluid
//! scenes"); [`check_report`] is what `silt check` prints.

use crate::csv_series::format_f64;
use crate::scene::{parse_error, read_scene_file, KeyChecker, SceneError};
use serde::Deserialize;
use silt_fluid::boundary::InflowProfile;
use silt_fluid::solver::{viscous_limit, CFL_LIMIT};
use silt_fluid::{
    Boundaries, Boundary, Driving, FluidConfig, FluidSolver, Grid, TimeStep, Viscous,
};
use std::f64::consts::PI;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Axis names, as written in scene files.
pub const AXIS_NAMES: [&str; 3] = ["x", "y", "z"];
/// Face names `FACE_NAMES[axis][side]`, side 0 at the low end.
pub const FACE_NAMES: [[&str; 2]; 3] = [
    ["x_low", "x_high"],
    ["y_low", "y_high"],
    ["z_low", "z_high"],
];
/// Allowed names, for messages.
pub const FACE_TYPES: &str = "\"periodic\", \"no-slip\", \"free-slip\", \"inflow\", \"outflow\"";
pub const INFLOW_PROFILES: &str = "\"uniform\", \"parabolic\"";
pub const VISCOUS_TREATMENTS: &str = "\"crank-nicolson\", \"explicit\"";
pub const DRIVINGS: &str = "\"none\", \"pressure-gradient\", \"flow-rate\"";
pub const INITIAL_CONDITIONS: &str =
    "\"rest\", \"uniform\", \"taylor-green-2d\", \"taylor-green-3d\", \"poiseuille\"";
const AXES_ALLOWED: &str = "allowed: \"x\", \"y\", \"z\"";

/// Largest grid a scene may ask for (2^31 cells, about 200 GiB with Crank–Nicolson).
pub const MAX_CELLS: usize = 1 << 31;
/// Largest number of time steps a fixed-step scene may ask for.
const MAX_STEPS: f64 = 1e12;
/// Largest number of frames or checkpoints a scene may ask for.
const MAX_FRAMES: f64 = 1e9;
/// Relative tolerance on the cell size given by `lengths` along the three axes.
const LENGTH_TOLERANCE: f64 = 1e-9;

/// Whether `text` is a fluid scene: a TOML document whose only top-level table is `[fluid]`. Text that
/// is not valid TOML is not (the particle scene parser then reports the syntax error); a `[fluid]` table
/// with particle tables is a coupled scene ([`crate::coupled_scene::is_coupled_scene`]).
pub fn is_fluid_scene(text: &str) -> bool {
    toml::from_str::<toml::Table>(text).is_ok_and(|t| t.contains_key("fluid") && t.len() == 1)
}

/// The whole fluid scene file.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FluidSceneFile {
    pub fluid: FluidSection,
}

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
    /// Uniform body force per unit mass.
    #[serde(default)]
    pub body_force: [f64; 3],
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
    pub output: FluidOutputSection,
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
    /// Mean pressure gradient dp/dx_axis (kinematic), for "pressure-gradient".
    pub gradient: Option<f64>,
    /// Bulk velocity held constant, for "flow-rate".
    pub bulk_velocity: Option<f64>,
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

/// `[fluid.output]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FluidOutputSection {
    pub interval: Option<f64>,
    /// Simulated time between VTK images (a multiple of `interval`; default `interval`).
    pub vtk_interval: Option<f64>,
    pub checkpoint_interval: Option<f64>,
    #[serde(default = "default_true")]
    pub vtk: bool,
    #[serde(default)]
    pub vorticity: bool,
    pub profile_axis: Option<String>,
}

impl Default for FluidOutputSection {
    fn default() -> Self {
        FluidOutputSection {
            interval: None,
            vtk_interval: None,
            checkpoint_interval: None,
            vtk: true,
            vorticity: false,
            profile_axis: None,
        }
    }
}

fn default_viscous() -> String {
    "crank-nicolson".into()
}
fn default_true() -> bool {
    true
}

/// The initial flow.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum InitialCondition {
    Rest,
    Uniform([f64; 3]),
    /// u = -U cos(kx x) sin(ky y), v = U r sin(kx x) cos(ky y), w = 0, k = 2 pi / length, r = kx / ky
    /// on the grid (see [`FluidScene::initial_velocity`]).
    TaylorGreen2d {
        amplitude: f64,
    },
    /// u = U sin(kx x) cos(ky y) cos(kz z), v = -U r cos(kx x) sin(ky y) cos(kz z), w = 0.
    TaylorGreen3d {
        amplitude: f64,
    },
    /// The steady laminar profile of the plane channel with walls at both ends of `wall_axis`
    /// (Couette and Poiseuille parts).
    Poiseuille {
        wall_axis: usize,
    },
}

/// Output settings with their defaults resolved.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FluidOutput {
    /// Simulated time between frames (diagnostics row, profiles, VTK image).
    pub interval: f64,
    /// A VTK image every `vtk_every` frames (and at the last one).
    pub vtk_every: u64,
    /// Simulated time between checkpoints.
    pub checkpoint_interval: f64,
    pub vtk: bool,
    pub vorticity: bool,
    pub profile_axis: Option<usize>,
}

/// A checked fluid scene.
#[derive(Clone, Debug)]
pub struct FluidScene {
    /// The `[fluid]` table as written.
    pub section: FluidSection,
    /// The solver configuration.
    pub config: FluidConfig,
    pub end_time: f64,
    pub initial: InitialCondition,
    pub output: FluidOutput,
    /// Where the scene came from (for messages).
    pub source: PathBuf,
}

/// A scene being checked: the shared key checks plus the fluid ones.
struct Checker<'a> {
    keys: KeyChecker<'a>,
}

impl Checker<'_> {
    fn error(&self, key: impl Into<String>, message: impl Into<String>) -> SceneError {
        self.keys.error(key, message)
    }

    fn require(
        &self,
        ok: bool,
        key: &str,
        value: impl std::fmt::Display,
        allowed: &str,
    ) -> Result<(), SceneError> {
        self.keys.require(ok, key, value, allowed)
    }

    fn positive(&self, value: f64, key: &str) -> Result<(), SceneError> {
        self.require(
            value.is_finite() && value > 0.0,
            key,
            format_f64(value),
            "must be > 0 and finite",
        )
    }

    fn finite3(&self, value: [f64; 3], key: &str) -> Result<(), SceneError> {
        self.require(
            value.iter().all(|v| v.is_finite()),
            key,
            format!("{value:?}"),
            "components must be finite",
        )
    }

    fn axis(&self, name: &str, key: &str) -> Result<usize, SceneError> {
        AXIS_NAMES
            .iter()
            .position(|&a| a == name)
            .ok_or_else(|| self.error(key, format!("\"{name}\" is not an axis; {AXES_ALLOWED}")))
    }
}

impl FluidScene {
    /// Reads, parses and checks a fluid scene file.
    pub fn load(path: &Path) -> Result<FluidScene, SceneError> {
        FluidScene::parse(&read_scene_file(path)?, path)
    }

    /// Parses and checks fluid scene text; `source` names it in messages.
    pub fn parse(text: &str, source: &Path) -> Result<FluidScene, SceneError> {
        let checker = Checker {
            keys: KeyChecker::new(source),
        };
        // A clearer message than "unknown field" for particle tables next to [fluid].
        if let Ok(table) = toml::from_str::<toml::Table>(text) {
            if table.contains_key("fluid") {
                if let Some(other) = table.keys().find(|k| k.as_str() != "fluid") {
                    return Err(checker.error(
                        other.as_str(),
                        "a fluid scene has only the [fluid] table and its sub-tables ([fluid.boundaries], \
                         [fluid.driving], [fluid.initial], [fluid.output]); with particle tables it is a \
                         coupled scene (read by `CoupledScene::parse`, run by `silt run`)",
                    ));
                }
            }
        }
        let deserializer = toml::Deserializer::new(text);
        let file: FluidSceneFile = serde_path_to_error::deserialize(deserializer)
            .map_err(|e| parse_error(text, source, e))?;
        check(file.fluid, source)
    }

    fn checker(&self) -> Checker<'_> {
        Checker {
            keys: KeyChecker::new(&self.source),
        }
    }

    /// Whether the time step is fixed (else adaptive, by the CFL number).
    pub fn fixed_time_step(&self) -> Option<f64> {
        match self.config.time_step {
            TimeStep::Fixed(dt) => Some(dt),
            TimeStep::Cfl { .. } => None,
        }
    }

    /// Makes the solver and sets the initial condition. With a fixed time step, refuses one that the
    /// initial flow would make unstable (CFL number above sqrt(3)).
    pub fn build(&self) -> Result<FluidSolver, SceneError> {
        let mut solver = FluidSolver::new(self.config.clone())
            .map_err(|message| self.checker().error(solver_error_key(&message), message))?;
        solver.set_velocity(|c, x| self.initial_velocity(c, x));
        if self.initial != InitialCondition::Rest {
            solver.set_pressure(|x| self.initial_pressure(x));
        }
        if let TimeStep::Fixed(dt) = self.config.time_step {
            let h = self.config.grid.spacing;
            let speed = silt_fluid::diagnostics::max_speed_sum(&solver.state.velocity);
            let cfl = speed * dt / h;
            if !(cfl.is_finite() && cfl <= CFL_LIMIT) {
                return Err(self.checker().error(
                    "fluid.time_step",
                    format!(
                        "{} is too large for the initial flow: its CFL number (|u| + |v| + |w|) dt / h \
                         is {cfl:.3}, above the stability limit {CFL_LIMIT:.3} of RK3; allowed: \
                         time_step < {} (or use `cfl` for an adaptive step)",
                        format_f64(dt),
                        num(CFL_LIMIT * h / speed)
                    ),
                ));
            }
        }
        Ok(solver)
    }

    /// Wavenumbers 2 pi / length along each axis.
    fn wavenumbers(&self) -> [f64; 3] {
        self.config.grid.lengths().map(|l| 2.0 * PI / l)
    }

    /// Initial velocity component `c` at `x`. The Taylor–Green ratio r of the v and u amplitudes is
    /// sin(kx h / 2) / sin(ky h / 2) (kx / ky as h -> 0, 1 in a square box), which makes the initial field
    /// divergence-free on the grid.
    pub fn initial_velocity(&self, c: usize, x: [f64; 3]) -> f64 {
        let o = self.config.grid.origin;
        let [kx, ky, kz] = self.wavenumbers();
        let half_h = 0.5 * self.config.grid.spacing;
        let ratio = (kx * half_h).sin() / (ky * half_h).sin();
        let (px, py, pz) = (kx * (x[0] - o[0]), ky * (x[1] - o[1]), kz * (x[2] - o[2]));
        match self.initial {
            InitialCondition::Rest => 0.0,
            InitialCondition::Uniform(v) => v[c],
            InitialCondition::TaylorGreen2d { amplitude: u } => match c {
                0 => -u * px.cos() * py.sin(),
                1 => u * ratio * px.sin() * py.cos(),
                _ => 0.0,
            },
            InitialCondition::TaylorGreen3d { amplitude: u } => match c {
                0 => u * px.sin() * py.cos() * pz.cos(),
                1 => -u * ratio * px.cos() * py.sin() * pz.cos(),
                _ => 0.0,
            },
            InitialCondition::Poiseuille { wall_axis } => {
                if c == wall_axis {
                    return 0.0;
                }
                let height = self.config.grid.lengths()[wall_axis];
                let y = x[wall_axis] - o[wall_axis];
                let (low, high, a, d) = self.channel_profile(wall_axis, c);
                low + (high - low) * y / height + a * (y + d) * (height + d - y)
            }
        }
    }

    /// Steady plane-channel profile of component `c` between the walls of `wall_axis`, the exact steady
    /// solution of the discrete equations: u = U_low + (U_high - U_low) y / H + a (y + d)(H + d - y), with
    /// y measured from the low wall, a = (f - dp/dx) / (2 nu) and d = (sqrt(H^2 + h^2) - H) / 2 ~ h^2 / (4 H)
    /// (the no-slip ghost value extrapolates linearly, so the parabola's roots sit d beyond the walls).
    /// With flow-rate driving a gives the bulk velocity over the cells. Returns (U_low, U_high, a, d).
    fn channel_profile(&self, wall_axis: usize, c: usize) -> (f64, f64, f64, f64) {
        let wall = |side: usize| match self.config.boundaries.faces[wall_axis][side] {
            Boundary::NoSlip { velocity } => velocity[c],
            _ => 0.0,
        };
        let (low, high) = (wall(0), wall(1));
        let height = self.config.grid.lengths()[wall_axis];
        let h = self.config.grid.spacing;
        let d = 0.5 * ((height * height + h * h).sqrt() - height);
        let nu = self.config.viscosity;
        let force = self.config.body_force[c];
        let a = match self.config.driving {
            Driving::FlowRate {
                axis,
                bulk_velocity,
            } if axis == c => {
                let n = self.config.grid.cells[wall_axis];
                let mean = (1..=n)
                    .map(|j| {
                        let y = (j as f64 - 0.5) * h;
                        (y + d) * (height + d - y)
                    })
                    .sum::<f64>()
                    / n as f64;
                (bulk_velocity - 0.5 * (low + high)) / mean
            }
            Driving::PressureGradient { axis, gradient } if axis == c => {
                (force - gradient) / (2.0 * nu)
            }
            _ => force / (2.0 * nu),
        };
        (low, high, a, d)
    }

    /// Initial (kinematic) pressure at `x`.
    pub fn initial_pressure(&self, x: [f64; 3]) -> f64 {
        let o = self.config.grid.origin;
        let [a, b, c] = self.wavenumbers();
        let (px, py, pz) = (a * (x[0] - o[0]), b * (x[1] - o[1]), c * (x[2] - o[2]));
        match self.initial {
            InitialCondition::Rest | InitialCondition::Uniform(_) => 0.0,
            InitialCondition::TaylorGreen2d { amplitude: u } => {
                -0.25 * u * u * ((2.0 * px).cos() + (a / b).powi(2) * (2.0 * py).cos())
            }
            InitialCondition::TaylorGreen3d { amplitude: u } => {
                // Solution of the pressure Poisson equation of the initial field (for a cubic box
                // U^2/16 (cos 2x + cos 2y)(cos 2z + 2)).
                let (a2, b2, c2) = (a * a, b * b, c * c);
                u * u * a2 / 8.0
                    * ((2.0 * px).cos() / a2
                        + (2.0 * py).cos() / b2
                        + (2.0 * px).cos() * (2.0 * pz).cos() / (a2 + c2)
                        + (2.0 * py).cos() * (2.0 * pz).cos() / (b2 + c2))
            }
            InitialCondition::Poiseuille { wall_axis } => {
                // Hydrostatic balance with a body force across the channel.
                let middle = o[wall_axis] + 0.5 * self.config.grid.lengths()[wall_axis];
                self.config.body_force[wall_axis] * (x[wall_axis] - middle)
            }
        }
    }

    /// Number of steps to the end time with a fixed time step.
    pub fn fixed_steps(&self) -> Option<u64> {
        self.fixed_time_step()
            .map(|dt| (self.end_time / dt).round() as u64)
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

/// Checks the `[fluid]` table and resolves it into a scene.
pub(crate) fn check(f: FluidSection, source: &Path) -> Result<FluidScene, SceneError> {
    let ck = Checker {
        keys: KeyChecker::new(source),
    };
    if f.density.is_some() {
        return Err(ck.error(
            "fluid.density",
            "is used only by coupled scenes (with particles); a fluid-only run is kinematic (its \
             pressure is p / rho), remove it",
        ));
    }
    let end_time = f.end_time.ok_or_else(|| {
        ck.error(
            "fluid.end_time",
            "missing: the simulated time to stop at is required",
        )
    })?;
    ck.positive(end_time, "fluid.end_time")?;

    // Grid.
    ck.require(
        f.cells.iter().all(|&n| n >= 1),
        "fluid.cells",
        format!("{:?}", f.cells),
        "each axis needs at least 1 cell (2 on a periodic axis, 3 between walls)",
    )?;
    let count = f
        .cells
        .iter()
        .try_fold(1usize, |acc, &n| acc.checked_mul(n))
        .filter(|&n| n <= MAX_CELLS);
    ck.require(
        count.is_some(),
        "fluid.cells",
        format!("{:?}", f.cells),
        &format!("at most {MAX_CELLS} cells in all (about 100 bytes each)"),
    )?;
    let spacing = match (f.spacing, f.lengths) {
        (Some(h), None) => {
            ck.positive(h, "fluid.spacing")?;
            h
        }
        (None, Some(lengths)) => {
            for (a, &l) in lengths.iter().enumerate() {
                ck.require(
                    l.is_finite() && l > 0.0,
                    "fluid.lengths",
                    format!("{lengths:?}"),
                    &format!(
                        "each length must be > 0 and finite ({} is {l})",
                        AXIS_NAMES[a]
                    ),
                )?;
            }
            let h = lengths[0] / f.cells[0] as f64;
            for a in 1..3 {
                let ha = lengths[a] / f.cells[a] as f64;
                if (ha - h).abs() > LENGTH_TOLERANCE * h {
                    return Err(ck.error(
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
        (None, None) => {
            return Err(ck.error(
                "fluid.spacing",
                "missing: give `spacing` (the cell size h, the same on every axis) or `lengths` \
                 (the domain lengths, with lengths[a] / cells[a] the same on every axis)",
            ))
        }
        (Some(_), Some(_)) => {
            return Err(ck.error(
                "fluid.lengths",
                "give either `spacing` or `lengths`, not both",
            ))
        }
    };
    ck.finite3(f.origin, "fluid.origin")?;
    for a in 0..3 {
        let end = f.origin[a] + f.cells[a] as f64 * spacing;
        if !end.is_finite() {
            return Err(ck.error(
                if f.spacing.is_some() {
                    "fluid.spacing"
                } else {
                    "fluid.lengths"
                },
                format!(
                    "the domain is too large: origin + cells x h along {} is not a finite number",
                    AXIS_NAMES[a]
                ),
            ));
        }
    }
    let grid = Grid {
        cells: f.cells,
        spacing,
        origin: f.origin,
    };

    // Fluid.
    ck.positive(f.viscosity, "fluid.viscosity")?;
    let viscous = match f.viscous.as_str() {
        "crank-nicolson" => Viscous::CrankNicolson,
        "explicit" => Viscous::Explicit,
        other => {
            return Err(ck.error(
                "fluid.viscous",
                format!("\"{other}\" is unknown; allowed: {VISCOUS_TREATMENTS}"),
            ))
        }
    };
    ck.finite3(f.body_force, "fluid.body_force")?;

    // Boundaries.
    let boundaries = check_boundaries(&ck, &f)?;
    for a in 0..3 {
        let periodic = boundaries.is_periodic(a);
        let minimum = if periodic { 2 } else { 3 };
        if f.cells[a] < minimum {
            return Err(ck.error(
                "fluid.cells",
                format!(
                    "{:?} has {} cell(s) along {}; at least {minimum} are needed ({})",
                    f.cells,
                    f.cells[a],
                    AXIS_NAMES[a],
                    if periodic {
                        "periodic axis; use 2 for a two-dimensional flow"
                    } else {
                        "axis between walls"
                    }
                ),
            ));
        }
    }

    // Driving.
    let driving = match &f.driving {
        None => Driving::None,
        Some(d) => check_driving(&ck, d, &boundaries)?,
    };

    // Output (before the time step: the adaptive step's default maximum is the output interval).
    let o = &f.output;
    let interval = o.interval.unwrap_or(end_time / 100.0);
    ck.positive(interval, "fluid.output.interval")?;
    let checkpoint_interval = o.checkpoint_interval.unwrap_or(10.0 * interval);
    ck.positive(checkpoint_interval, "fluid.output.checkpoint_interval")?;
    for (value, key) in [
        (interval, "fluid.output.interval"),
        (checkpoint_interval, "fluid.output.checkpoint_interval"),
    ] {
        if end_time / value > MAX_FRAMES {
            return Err(ck.error(
                key,
                format!(
                    "{} is not allowed; end_time / {} is more than {MAX_FRAMES:e}",
                    format_f64(value),
                    key.rsplit('.').next().unwrap_or(key)
                ),
            ));
        }
    }
    let vtk_every = match o.vtk_interval {
        None => 1,
        Some(t) => {
            ck.positive(t, "fluid.output.vtk_interval")?;
            let ratio = t / interval;
            if !o.vtk {
                return Err(ck.error(
                    "fluid.output.vtk_interval",
                    "`vtk = false` turns the VTK images off; remove one of the two",
                ));
            }
            if ratio.round() < 1.0 || (ratio - ratio.round()).abs() > 1e-6 * ratio || ratio > 1e12 {
                return Err(ck.error(
                    "fluid.output.vtk_interval",
                    format!(
                        "{t} is not allowed; it must be a whole multiple of the output interval {interval} \
                         (VTK images are written with some of the diagnostics rows)"
                    ),
                ));
            }
            ratio.round() as u64
        }
    };
    let profile_axis = match &o.profile_axis {
        None => None,
        Some(name) => Some(ck.axis(name, "fluid.output.profile_axis")?),
    };
    let output = FluidOutput {
        interval,
        vtk_every,
        checkpoint_interval,
        vtk: o.vtk,
        vorticity: o.vorticity,
        profile_axis,
    };
    if o.vorticity && !o.vtk {
        return Err(ck.error(
            "fluid.output.vorticity",
            "vorticity is written into the VTK images, and `vtk = false` turns them off; \
             remove one of the two",
        ));
    }

    // Time step.
    let time_step = match (f.time_step, f.cfl) {
        (Some(dt), None) => {
            ck.positive(dt, "fluid.time_step")?;
            if let Some(_max) = f.max_time_step {
                return Err(ck.error(
                    "fluid.max_time_step",
                    "only an adaptive step (`cfl`) has a maximum; with a fixed `time_step` remove it",
                ));
            }
            let steps = (end_time / dt).round();
            if steps < 1.0 {
                return Err(ck.error(
                    "fluid.time_step",
                    format!(
                        "{} is not allowed; end_time = {} must be at least one time step",
                        format_f64(dt),
                        format_f64(end_time)
                    ),
                ));
            }
            if steps > MAX_STEPS {
                return Err(ck.error(
                    "fluid.time_step",
                    format!(
                        "{} is not allowed; end_time / time_step = {steps:e} steps is more than {MAX_STEPS:e}",
                        format_f64(dt)
                    ),
                ));
            }
            let limit = viscous_limit(f.viscosity, spacing);
            if viscous == Viscous::Explicit && dt > limit {
                return Err(ck.error(
                    "fluid.time_step",
                    format!(
                        "{} is above the explicit viscous stability limit 2.51 h^2 / (12 nu) = {}; \
                         allowed: time_step <= {}, or viscous = \"crank-nicolson\"",
                        format_f64(dt),
                        num(limit),
                        format_f64(limit)
                    ),
                ));
            }
            TimeStep::Fixed(dt)
        }
        (None, Some(cfl)) => {
            ck.require(
                cfl.is_finite() && cfl > 0.0 && cfl <= CFL_LIMIT,
                "fluid.cfl",
                format_f64(cfl),
                &format!(
                    "the CFL number must lie in (0, {CFL_LIMIT:.4}] (stability limit of RK3 with central \
                     differences); 0.5 is a good choice"
                ),
            )?;
            let max = match f.max_time_step {
                Some(max) => {
                    ck.positive(max, "fluid.max_time_step")?;
                    max
                }
                None => default_max_time_step(cfl, spacing, interval, &f, driving, &boundaries),
            };
            if end_time / max > MAX_STEPS {
                return Err(ck.error(
                    "fluid.max_time_step",
                    format!(
                        "{} (given, or by default the output interval, at most sqrt(cfl h / |force|) \
                         and cfl h / (bulk velocity, wall or inflow speed)) is not allowed: end_time / \
                         max_time_step is more than {MAX_STEPS:e}",
                        format_f64(max)
                    ),
                ));
            }
            TimeStep::Cfl { cfl, max }
        }
        (None, None) => {
            return Err(ck.error(
                "fluid.time_step",
                "missing: give a fixed `time_step` or a CFL number `cfl` for an adaptive step",
            ))
        }
        (Some(_), Some(_)) => {
            return Err(ck.error(
                "fluid.cfl",
                "give either a fixed `time_step` or an adaptive `cfl`, not both",
            ))
        }
    };

    // Initial condition.
    let initial = match &f.initial {
        None => InitialCondition::Rest,
        Some(i) => check_initial(&ck, i, &boundaries)?,
    };

    let config = FluidConfig {
        grid,
        boundaries,
        viscosity: f.viscosity,
        viscous,
        driving,
        body_force: f.body_force,
        time_step,
    };
    Ok(FluidScene {
        end_time,
        section: f,
        config,
        initial,
        output,
        source: source.to_path_buf(),
    })
}

/// Default largest adaptive step: the output interval, and short enough that a flow started from rest
/// by a force, a prescribed bulk velocity, a moving wall or an inflow does not pass the CFL number within
/// one step.
fn default_max_time_step(
    cfl: f64,
    h: f64,
    interval: f64,
    f: &FluidSection,
    driving: Driving,
    boundaries: &Boundaries,
) -> f64 {
    let mut force = f.body_force.iter().map(|x| x.abs()).sum::<f64>();
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
        Driving::PressureGradient { gradient, .. } => force += gradient.abs(),
        Driving::FlowRate { bulk_velocity, .. } if bulk_velocity != 0.0 => {
            max = max.min(cfl * h / bulk_velocity.abs())
        }
        _ => {}
    }
    if force > 0.0 {
        max = max.min((cfl * h / force).sqrt());
    }
    max
}

fn check_boundaries(ck: &Checker, f: &FluidSection) -> Result<Boundaries, SceneError> {
    let mut b = Boundaries::periodic();
    for axis in 0..3 {
        for side in 0..2 {
            let Some(face) = f.boundaries.face(axis, side) else {
                continue;
            };
            let key = format!("fluid.boundaries.{}", FACE_NAMES[axis][side]);
            let name = FACE_NAMES[axis][side];
            if face.profile.is_some() && face.kind != "inflow" {
                return Err(ck.error(
                    format!("{key}.profile"),
                    format!(
                        "a \"{}\" face has no profile; only an \"inflow\" has one",
                        face.kind
                    ),
                ));
            }
            let boundary = match face.kind.as_str() {
                "periodic" => Boundary::Periodic,
                "no-slip" => Boundary::NoSlip {
                    velocity: face.velocity.unwrap_or([0.0; 3]),
                },
                "free-slip" => Boundary::FreeSlip,
                "outflow" => Boundary::Outflow,
                "inflow" => {
                    let velocity = face.velocity.ok_or_else(|| {
                        ck.error(
                            format!("{key}.velocity"),
                            "missing: an inflow needs its velocity (the mean over the face), pointing \
                             into the domain",
                        )
                    })?;
                    let profile = match face.profile.as_deref().unwrap_or("uniform") {
                        "uniform" => InflowProfile::Uniform,
                        "parabolic" => InflowProfile::Parabolic,
                        other => {
                            return Err(ck.error(
                                format!("{key}.profile"),
                                format!("\"{other}\" is unknown; allowed: {INFLOW_PROFILES}"),
                            ))
                        }
                    };
                    Boundary::Inflow { velocity, profile }
                }
                other => {
                    return Err(ck.error(
                        format!("{key}.type"),
                        format!("\"{other}\" is unknown; allowed: {FACE_TYPES}"),
                    ))
                }
            };
            if let Some(v) = face.velocity {
                let key = format!("{key}.velocity");
                match boundary {
                    Boundary::NoSlip { .. } => {
                        ck.finite3(v, &key)?;
                        if v[axis] != 0.0 {
                            return Err(ck.error(
                                key,
                                format!(
                                    "{v:?} has a component {} normal to the {name} wall; a wall moves only \
                                     in its own plane (allowed: velocity[{axis}] = 0)",
                                    v[axis]
                                ),
                            ));
                        }
                    }
                    Boundary::Inflow { .. } => {
                        ck.finite3(v, &key)?;
                        let inward = if side == 0 { v[axis] } else { -v[axis] };
                        if inward <= 0.0 {
                            return Err(ck.error(
                                key,
                                format!(
                                    "{v:?} does not point into the domain; allowed: velocity[{axis}] {} 0 \
                                     at the {name} face",
                                    if side == 0 { ">" } else { "<" }
                                ),
                            ));
                        }
                    }
                    _ => {
                        return Err(ck.error(
                            key,
                            format!(
                                "a \"{}\" face has no velocity; only a \"no-slip\" wall or an \"inflow\" has one",
                                face.kind
                            ),
                        ))
                    }
                }
            }
            b.faces[axis][side] = boundary;
        }
        let periodic = b.faces[axis].map(|x| x == Boundary::Periodic);
        if periodic[0] != periodic[1] {
            let (p, w) = if periodic[0] { (0, 1) } else { (1, 0) };
            let explicit = f.boundaries.face(axis, p).is_some();
            let wall_kind = f.boundaries.face(axis, w).map_or("", |x| x.kind.as_str());
            return Err(ck.error(
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
        if !has_outflow {
            return Err(ck.error(
                format!("fluid.boundaries.{}", FACE_NAMES[a][s]),
                "an \"inflow\" needs an \"outflow\" face somewhere: otherwise the fluid cannot leave and \
                 the pressure equation has no solution",
            ));
        }
    }
    Ok(b)
}

fn check_driving(
    ck: &Checker,
    d: &DrivingSection,
    boundaries: &Boundaries,
) -> Result<Driving, SceneError> {
    let forbid = |present: bool, key: &str, what: &str| -> Result<(), SceneError> {
        if present {
            Err(ck.error(
                format!("fluid.driving.{key}"),
                format!("a \"{}\" driving has no `{key}`; {what}", d.kind),
            ))
        } else {
            Ok(())
        }
    };
    let axis = |d: &DrivingSection| -> Result<usize, SceneError> {
        let name = d.axis.as_deref().ok_or_else(|| {
            ck.error(
                "fluid.driving.axis",
                format!(
                    "missing: a \"{}\" driving needs the axis of the flow; {AXES_ALLOWED}",
                    d.kind
                ),
            )
        })?;
        let axis = ck.axis(name, "fluid.driving.axis")?;
        if !boundaries.is_periodic(axis) {
            return Err(ck.error(
                "fluid.driving.axis",
                format!(
                    "\"{name}\" is not allowed: the {name} faces are walls; the flow can be driven only \
                     along a periodic axis"
                ),
            ));
        }
        Ok(axis)
    };
    match d.kind.as_str() {
        "none" => {
            forbid(d.axis.is_some(), "axis", "remove it")?;
            forbid(d.gradient.is_some(), "gradient", "remove it")?;
            forbid(d.bulk_velocity.is_some(), "bulk_velocity", "remove it")?;
            Ok(Driving::None)
        }
        "pressure-gradient" => {
            forbid(
                d.bulk_velocity.is_some(),
                "bulk_velocity",
                "it takes `gradient` (a \"flow-rate\" driving takes `bulk_velocity`)",
            )?;
            let axis = axis(d)?;
            let gradient = d.gradient.ok_or_else(|| {
                ck.error(
                    "fluid.driving.gradient",
                    "missing: the mean pressure gradient dp/dx along the axis (kinematic, i.e. divided \
                     by the density; negative drives the flow towards +axis)",
                )
            })?;
            ck.require(
                gradient.is_finite(),
                "fluid.driving.gradient",
                gradient,
                "must be finite",
            )?;
            Ok(Driving::PressureGradient { axis, gradient })
        }
        "flow-rate" => {
            forbid(
                d.gradient.is_some(),
                "gradient",
                "it takes `bulk_velocity` (a \"pressure-gradient\" driving takes `gradient`)",
            )?;
            let axis = axis(d)?;
            let bulk_velocity = d.bulk_velocity.ok_or_else(|| {
                ck.error(
                    "fluid.driving.bulk_velocity",
                    "missing: the bulk velocity (flow rate per cross-section area) to hold",
                )
            })?;
            ck.require(
                bulk_velocity.is_finite(),
                "fluid.driving.bulk_velocity",
                bulk_velocity,
                "must be finite",
            )?;
            Ok(Driving::FlowRate {
                axis,
                bulk_velocity,
            })
        }
        other => Err(ck.error(
            "fluid.driving.type",
            format!("\"{other}\" is unknown; allowed: {DRIVINGS}"),
        )),
    }
}

fn check_initial(
    ck: &Checker,
    i: &InitialSection,
    b: &Boundaries,
) -> Result<InitialCondition, SceneError> {
    let forbid = |present: bool, key: &str, what: &str| -> Result<(), SceneError> {
        if present {
            Err(ck.error(
                format!("fluid.initial.{key}"),
                format!("a \"{}\" initial condition has no `{key}`; {what}", i.kind),
            ))
        } else {
            Ok(())
        }
    };
    let amplitude = || -> Result<f64, SceneError> {
        let u = i.amplitude.unwrap_or(1.0);
        ck.require(
            u.is_finite(),
            "fluid.initial.amplitude",
            u,
            "must be finite",
        )?;
        Ok(u)
    };
    let need_periodic = |axes: &[usize]| -> Result<(), SceneError> {
        for &a in axes {
            if !b.is_periodic(a) {
                return Err(ck.error(
                    "fluid.initial.type",
                    format!(
                        "\"{}\" needs periodic {} faces (one vortex period fills the box); the {} faces \
                         are walls",
                        i.kind,
                        axes.iter().map(|&a| AXIS_NAMES[a]).collect::<Vec<_>>().join(", "),
                        AXIS_NAMES[a]
                    ),
                ));
            }
        }
        Ok(())
    };
    match i.kind.as_str() {
        "rest" => {
            forbid(i.amplitude.is_some(), "amplitude", "remove it")?;
            forbid(i.velocity.is_some(), "velocity", "remove it")?;
            Ok(InitialCondition::Rest)
        }
        "uniform" => {
            forbid(i.amplitude.is_some(), "amplitude", "it takes `velocity`")?;
            let v = i.velocity.ok_or_else(|| {
                ck.error(
                    "fluid.initial.velocity",
                    "missing: the velocity [u, v, w] of the uniform flow",
                )
            })?;
            ck.finite3(v, "fluid.initial.velocity")?;
            let wall = |f: &Boundary| matches!(f, Boundary::NoSlip { .. } | Boundary::FreeSlip);
            for a in 0..3 {
                if b.faces[a].iter().any(wall) && v[a] != 0.0 {
                    return Err(ck.error(
                        "fluid.initial.velocity",
                        format!(
                            "{v:?} flows through the {} walls; allowed: velocity[{a}] = 0 (walls are \
                             impermeable)",
                            AXIS_NAMES[a]
                        ),
                    ));
                }
            }
            Ok(InitialCondition::Uniform(v))
        }
        "taylor-green-2d" => {
            forbid(i.velocity.is_some(), "velocity", "it takes `amplitude`")?;
            need_periodic(&[0, 1])?;
            Ok(InitialCondition::TaylorGreen2d {
                amplitude: amplitude()?,
            })
        }
        "taylor-green-3d" => {
            forbid(i.velocity.is_some(), "velocity", "it takes `amplitude`")?;
            need_periodic(&[0, 1, 2])?;
            Ok(InitialCondition::TaylorGreen3d {
                amplitude: amplitude()?,
            })
        }
        "poiseuille" => {
            forbid(
                i.amplitude.is_some(),
                "amplitude",
                "the profile follows from the walls, the driving and the body force",
            )?;
            forbid(
                i.velocity.is_some(),
                "velocity",
                "the profile follows from the walls, the driving and the body force",
            )?;
            let bounded: Vec<usize> = (0..3).filter(|&a| !b.is_periodic(a)).collect();
            let no_slip = |a: usize| {
                b.faces[a]
                    .iter()
                    .all(|f| matches!(f, Boundary::NoSlip { .. }))
            };
            if bounded.len() != 1 || !no_slip(bounded[0]) {
                return Err(ck.error(
                    "fluid.initial.type",
                    "\"poiseuille\" (the steady plane-channel profile) needs \"no-slip\" walls at both ends \
                     of exactly one axis and periodic faces on the other two",
                ));
            }
            Ok(InitialCondition::Poiseuille {
                wall_axis: bounded[0],
            })
        }
        other => Err(ck.error(
            "fluid.initial.type",
            format!("\"{other}\" is unknown; allowed: {INITIAL_CONDITIONS}"),
        )),
    }
}

/// The velocity scale of the flow, the length it is measured over, and how they were chosen.
pub struct ReynoldsNumber {
    pub velocity: f64,
    pub velocity_from: String,
    pub length: f64,
    pub length_from: String,
}

impl ReynoldsNumber {
    pub fn value(&self, viscosity: f64) -> f64 {
        self.velocity * self.length / viscosity
    }
}

/// Reynolds number U L / nu of a scene: U the largest of the wall speeds, the driving's bulk (or laminar
/// centreline) velocity and the initial flow's amplitude; L 1/k of a Taylor–Green vortex, else the
/// distance between the walls (those of a moving wall first), else the box length along x.
pub fn reynolds_number(scene: &FluidScene) -> ReynoldsNumber {
    let c = &scene.config;
    let lengths = c.grid.lengths();
    let mut candidates: Vec<(f64, String)> = Vec::new();
    let mut moving_axis = None;
    for a in 0..3 {
        for s in 0..2 {
            let speed = |v: [f64; 3]| v.iter().map(|x| x * x).sum::<f64>().sqrt();
            match c.boundaries.faces[a][s] {
                Boundary::NoSlip { velocity } if speed(velocity) > 0.0 => {
                    moving_axis.get_or_insert(a);
                    candidates.push((
                        speed(velocity),
                        format!("speed of the {} wall", FACE_NAMES[a][s]),
                    ));
                }
                Boundary::Inflow { velocity, .. } => candidates.push((
                    speed(velocity),
                    format!("mean inflow speed at {}", FACE_NAMES[a][s]),
                )),
                _ => {}
            }
        }
    }
    let is_wall = |f: &Boundary| matches!(f, Boundary::NoSlip { .. } | Boundary::FreeSlip);
    let bounded: Vec<usize> = (0..3)
        .filter(|&a| c.boundaries.faces[a].iter().all(is_wall))
        .collect();
    match c.driving {
        Driving::FlowRate { bulk_velocity, .. } => {
            candidates.push((bulk_velocity.abs(), "bulk velocity of the driving".into()))
        }
        Driving::PressureGradient { axis, gradient } => {
            if bounded.len() == 1 {
                let h = lengths[bounded[0]];
                let g = (gradient - c.body_force[axis]).abs();
                candidates.push((
                    g * h * h / (8.0 * c.viscosity),
                    "centreline speed G H^2 / (8 nu) of the laminar Poiseuille flow".into(),
                ));
            }
        }
        Driving::None => {}
    }
    match scene.initial {
        InitialCondition::TaylorGreen2d { amplitude }
        | InitialCondition::TaylorGreen3d { amplitude } => {
            candidates.push((amplitude.abs(), "Taylor–Green amplitude".into()))
        }
        InitialCondition::Uniform(v) => candidates.push((
            v.iter().map(|x| x * x).sum::<f64>().sqrt(),
            "initial uniform speed".into(),
        )),
        InitialCondition::Poiseuille { wall_axis } => {
            let mut max: f64 = 0.0;
            for comp in (0..3).filter(|&x| x != wall_axis) {
                for k in 0..=20 {
                    let mut x = c.grid.origin;
                    x[wall_axis] += lengths[wall_axis] * k as f64 / 20.0;
                    max = max.max(scene.initial_velocity(comp, x).abs());
                }
            }
            candidates.push((max, "largest speed of the initial channel profile".into()));
        }
        InitialCondition::Rest => {}
    }
    let (velocity, velocity_from) = candidates.into_iter().fold(
        (0.0, "nothing moves or drives the flow".to_string()),
        |best, c| {
            if c.0 > best.0 {
                c
            } else {
                best
            }
        },
    );
    let (length, length_from) = if matches!(
        scene.initial,
        InitialCondition::TaylorGreen2d { .. } | InitialCondition::TaylorGreen3d { .. }
    ) {
        (
            lengths[0] / (2.0 * PI),
            "1/k = length / (2 pi) of the vortex".to_string(),
        )
    } else if let Some(a) = moving_axis.or(bounded.first().copied()) {
        (
            lengths[a],
            format!("distance between the {} walls", AXIS_NAMES[a]),
        )
    } else {
        (lengths[0], "box length along x".to_string())
    };
    ReynoldsNumber {
        velocity,
        velocity_from,
        length,
        length_from,
    }
}

/// Estimated memory of the solver in bytes: 5 fields with ghost layers (3 velocity components, pressure,
/// pressure correction), 7 compact arrays (3 right-hand sides, 3 increments, the Poisson right-hand side),
/// plus [`factorisation_estimate`] (at most: as if every Helmholtz system took the direct solver).
pub fn memory_estimate(config: &FluidConfig) -> f64 {
    let n = config.grid.cell_count() as f64;
    let ghosted = config.grid.field_dims().iter().product::<usize>() as f64;
    8.0 * (5.0 * ghosted + 7.0 * n) + factorisation_estimate(config, false)
}

/// Estimated bytes the solver allocates during its first step: the cached z factorisations of the direct
/// solvers (one field's worth per (a, b) pair: the Poisson problem, and with Crank–Nicolson 3 components
/// x 3 stages unless `jacobi_only` (all three stages solve them by Jacobi sweeps); half that when x is
/// periodic, twice when z is), and 3 response fields for flow-rate driving with Crank–Nicolson.
pub fn factorisation_estimate(config: &FluidConfig, jacobi_only: bool) -> f64 {
    let n = config.grid.cell_count() as f64;
    let crank_nicolson = config.viscous == Viscous::CrankNicolson;
    // The Poisson solver's, plus those of the Helmholtz systems the direct solver takes.
    let pairs = if crank_nicolson && !jacobi_only {
        10.0
    } else {
        1.0
    };
    let x_factor = if config.boundaries.is_periodic(0) {
        0.5
    } else {
        1.0
    };
    let z_factor = if config.boundaries.is_periodic(2) {
        2.0
    } else {
        1.0
    };
    let flow_rate = if crank_nicolson && matches!(config.driving, Driving::FlowRate { .. }) {
        3.0
    } else {
        0.0
    };
    8.0 * (flow_rate + pairs * x_factor * z_factor) * n
}

fn face_description(b: Boundary) -> String {
    match b {
        Boundary::Periodic => "periodic".into(),
        Boundary::FreeSlip => "free-slip".into(),
        Boundary::NoSlip { velocity } if velocity == [0.0; 3] => "no-slip".into(),
        Boundary::NoSlip { velocity } => format!("no-slip moving at {velocity:?}"),
        Boundary::Inflow { velocity, profile } => {
            format!(
                "inflow {velocity:?} ({})",
                match profile {
                    InflowProfile::Uniform => "uniform",
                    InflowProfile::Parabolic => "parabolic",
                }
            )
        }
        Boundary::Outflow => "outflow".into(),
    }
}

/// A number with 5 significant digits in the shortest form (`0.015625`, `100`, `1.6e-5`).
fn num(x: f64) -> String {
    let rounded: f64 = format!("{x:.4e}").parse().unwrap_or(x);
    format_f64(rounded)
}

fn nums(x: [f64; 3]) -> String {
    format!("[{}, {}, {}]", num(x[0]), num(x[1]), num(x[2]))
}

/// The report of `silt check` for a fluid scene (`solver` as built by [`FluidScene::build`]).
pub fn check_report(scene: &FluidScene, solver: &FluidSolver) -> String {
    let c = &scene.config;
    let g = &c.grid;
    let h = g.spacing;
    let lengths = g.lengths();
    let mut out = String::new();
    let _ = writeln!(out, "scene            {} (fluid)", scene.source.display());
    let _ = writeln!(
        out,
        "grid             {} x {} x {} = {} cells, h = {}",
        g.cells[0],
        g.cells[1],
        g.cells[2],
        g.cell_count(),
        num(h)
    );
    let upper: Vec<f64> = (0..3).map(|a| g.origin[a] + lengths[a]).collect();
    let _ = writeln!(
        out,
        "domain           {} .. {}, lengths {} x {} x {}",
        nums(g.origin),
        nums([upper[0], upper[1], upper[2]]),
        num(lengths[0]),
        num(lengths[1]),
        num(lengths[2])
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
    let _ = writeln!(out, "boundaries       {}", faces.join("; "));
    let driving = match c.driving {
        Driving::None => "none".to_string(),
        Driving::PressureGradient { axis, gradient } => {
            format!(
                "mean pressure gradient dp/d{} = {}",
                AXIS_NAMES[axis],
                num(gradient)
            )
        }
        Driving::FlowRate {
            axis,
            bulk_velocity,
        } => format!(
            "bulk velocity {} along {}",
            num(bulk_velocity),
            AXIS_NAMES[axis]
        ),
    };
    let _ = writeln!(
        out,
        "fluid            nu = {}, viscous term {}, body force {}, driving: {driving}",
        num(c.viscosity),
        match c.viscous {
            Viscous::CrankNicolson => "Crank–Nicolson",
            Viscous::Explicit => "explicit",
        },
        nums(c.body_force)
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
    let _ = writeln!(out, "initial          {initial}");
    let re = reynolds_number(scene);
    if re.velocity > 0.0 {
        let _ = writeln!(
            out,
            "Reynolds number  U L / nu = {} (U = {}: {}; L = {}: {})",
            num(re.value(c.viscosity)),
            num(re.velocity),
            re.velocity_from,
            num(re.length),
            re.length_from
        );
    } else {
        let _ = writeln!(out, "Reynolds number  0 ({})", re.velocity_from);
    }
    let limit = viscous_limit(c.viscosity, h);
    let speed = silt_fluid::diagnostics::max_speed_sum(&solver.state.velocity);
    let dt = solver.next_dt();
    match c.time_step {
        TimeStep::Fixed(dt) => {
            let _ = writeln!(
                out,
                "time step        fixed dt = {}: {} steps to end_time {}; initial CFL number {}",
                num(dt),
                scene.fixed_steps().unwrap_or(0),
                num(scene.end_time),
                num(speed * dt / h)
            );
        }
        TimeStep::Cfl { cfl, max } => {
            let _ = writeln!(
                out,
                "time step        adaptive, CFL number {} (dt at most {}); initially dt = {}, about {} steps \
                 to end_time {} at that step (the flow's speed sets the later ones)",
                num(cfl),
                num(max),
                num(dt),
                (scene.end_time / dt).ceil(),
                num(scene.end_time)
            );
        }
    }
    let _ = writeln!(
        out,
        "viscous limit    2.51 h^2 / (12 nu) = {}; dt / limit = {}{}",
        num(limit),
        num(dt / limit),
        match c.viscous {
            Viscous::CrankNicolson => " (Crank–Nicolson: stable beyond it)",
            Viscous::Explicit => " (explicit: must stay <= 1)",
        }
    );
    let viscous_time = re.length.powi(2) / c.viscosity;
    let _ = writeln!(
        out,
        "viscous time     L^2 / nu = {} (end_time is {} of it)",
        num(viscous_time),
        num(scene.end_time / viscous_time)
    );
    let plan = solver.helmholtz_plan(dt);
    if let Some(stages) = plan {
        let described: Vec<String> = stages
            .iter()
            .map(|s| s.map_or("direct".to_string(), |n| format!("{n} Jacobi sweeps")))
            .collect();
        let _ = writeln!(
            out,
            "implicit solves  Crank–Nicolson systems at the initial dt, stages 1-3: {} (Jacobi: max-norm \
             error <= {:e} of the solution; direct where more than {} sweeps would be needed)",
            described.join(", "),
            silt_fluid::solver::JACOBI_TOLERANCE,
            silt_fluid::solver::MAX_JACOBI_SWEEPS
        );
    }
    let all_jacobi = plan.is_some_and(|stages| stages.iter().all(Option::is_some));
    let mib = |bytes: f64| format!("{:.1}", bytes / (1024.0 * 1024.0));
    let set_up = solver.allocated_bytes() as f64;
    // Jacobi rings: per component, one per thread, about RING_BYTES each.
    let rings = if plan.is_some_and(|stages| stages.iter().any(Option::is_some)) {
        3.0 * silt_fluid::jacobi::ring_bytes_estimate() as f64
    } else {
        0.0
    };
    let later = factorisation_estimate(c, all_jacobi) + rings;
    let _ = writeln!(
        out,
        "memory           about {} MiB: {} MiB allocated at set-up (fields, stage arrays, solver tables) \
         + about {} MiB of factorisations and Jacobi rings made in the first step",
        mib(set_up + later),
        mib(set_up),
        mib(later)
    );
    let o = &scene.output;
    let frames = (scene.end_time / o.interval).floor() as u64 + 1;
    let images = (frames - 1) / o.vtk_every + 1;
    let per_cell = if o.vorticity { 7.0 } else { 4.0 };
    let image_bytes = g.cell_count() as f64 * per_cell * 8.0 * 4.0 / 3.0;
    let _ = writeln!(
        out,
        "output           about {frames} frames every {}{}, checkpoints every {}",
        num(o.interval),
        if o.vtk {
            format!(
                ", {images} VTK images of about {} MiB each",
                mib(image_bytes)
            )
        } else {
            String::new()
        },
        num(o.checkpoint_interval)
    );
    out
}
