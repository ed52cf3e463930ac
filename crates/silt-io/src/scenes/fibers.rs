//! Fiber scenes: a top-level `[fibers]` table of flexible fibers and active filaments as bead chains at
//! low Reynolds number (`silt_fibers`, the seed `002_*.txt`). The format is documented key by key in
//! `docs/scene-format.md` ("Fiber scenes").

use super::keys::{mib, num, Keys, Range, SceneError};
use super::output::{fits_in_memory, fixed_steps, OutputSection};
use super::{SceneFile, SceneKind};
use crate::run::RunSettings;
use serde::Deserialize;
use silt_core::Vec3;
use silt_fibers::chain::Fibers;
use silt_fibers::constraints::{
    actuated_end, alternating_spins, clamped_end, rigid_links, Constraint, PrescribedMotion,
    Prescription,
};
use silt_fibers::dynamics::{
    FiberSystem, PointLoad, DEFAULT_JOINT_STEP_OVER_BENDING_TIME, DEFAULT_STEP_OVER_BENDING_TIME,
    DEFAULT_STEP_OVER_TWIST_TIME, MAX_JOINT_STEP_OVER_BENDING_TIME, MAX_STEP_OVER_BENDING_TIME,
    MAX_STEP_OVER_TWIST_TIME,
};
use silt_fibers::elasticity::{Bending, RestCurvature, Twist};
use silt_fibers::flows::AmbientFlow;
use silt_fibers::mobility::{Hydrodynamics, Mobility, Periodic};
use silt_fibers::model::FiberModel;
use silt_fibers::multipliers::{solve_cost, MultiplierSolver, AUTO_DIRECT_ROWS};
use silt_fibers::rpy::RpyKernel;
use silt_fibers::spectral::SpectralRpy;
use std::f64::consts::PI;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::Arc;

/// The periodic product's relative error unless the scene sets `hydrodynamics_tolerance`.
const DEFAULT_HYDRODYNAMICS_TOLERANCE: f64 = 1e-4;
/// Largest number of beads a scene may ask for.
const MAX_BEADS: usize = 1_000_000;
/// Relative tolerance on the spacing of explicitly given bead positions.
const SPACING_TOLERANCE: f64 = 1e-6;
/// `silt check` solves the initial state (to find redundant end conditions) up to this many flops of
/// factorisation; beyond it the solve is left to the run.
const CHECK_SOLVE_FLOPS: f64 = 1e9;
/// Estimated bytes per bead besides the multiplier matrices: positions, orientations, loads,
/// velocities, constraint rows, the Adams–Bashforth history.
const BYTES_PER_BEAD: f64 = 2048.0;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FibersSection {
    pub bead_radius: f64,
    pub viscosity: f64,
    pub bending_rigidity: f64,
    #[serde(default = "default_hydrodynamics")]
    pub hydrodynamics: String,
    pub periodic_box: Option<[f64; 3]>,
    pub hydrodynamics_tolerance: Option<f64>,
    #[serde(default = "default_links")]
    pub links: String,
    pub joint_gap: Option<f64>,
    #[serde(default)]
    pub bead_force: [f64; 3],
    #[serde(default)]
    pub twist_rigidity: f64,
    #[serde(default)]
    pub rest_twist: f64,
    pub end_time: f64,
    pub time_step: Option<f64>,
    #[serde(default = "default_true")]
    pub restore_links: bool,
    #[serde(default)]
    pub rigid: bool,
    #[serde(default = "default_solver")]
    pub solver: String,
    #[serde(default = "default_tolerance")]
    pub solver_tolerance: f64,
    #[serde(default)]
    pub flow: FlowSection,
    #[serde(default)]
    pub fiber: Vec<FiberGroup>,
    #[serde(default)]
    pub output: OutputSection,
}

fn default_hydrodynamics() -> String {
    "rpy".into()
}
fn default_true() -> bool {
    true
}
fn default_links() -> String {
    "gears".into()
}
fn default_solver() -> String {
    "auto".into()
}
fn default_tolerance() -> f64 {
    1e-10
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowSection {
    #[serde(rename = "type", default = "default_flow")]
    pub kind: String,
    pub velocity: Option<[f64; 3]>,
    pub shear_rate: Option<f64>,
    pub strain_rate: Option<f64>,
    pub max_velocity: Option<f64>,
    pub centre: Option<f64>,
    pub half_width: Option<f64>,
}

fn default_flow() -> String {
    "quiescent".into()
}

impl Default for FlowSection {
    fn default() -> Self {
        FlowSection {
            kind: default_flow(),
            velocity: None,
            shear_rate: None,
            strain_rate: None,
            max_velocity: None,
            centre: None,
            half_width: None,
        }
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FiberGroup {
    pub beads: Option<usize>,
    #[serde(default = "default_shape")]
    pub shape: String,
    #[serde(default)]
    pub start: [f64; 3],
    #[serde(default = "default_direction")]
    pub direction: [f64; 3],
    pub curvature: Option<f64>,
    pub positions: Option<Vec<[f64; 3]>>,
    #[serde(default = "default_count")]
    pub count: usize,
    #[serde(default)]
    pub offset: [f64; 3],
    pub region: Option<RegionSection>,
    #[serde(default)]
    pub seed: u64,
    #[serde(default = "default_end")]
    pub first_end: String,
    #[serde(default = "default_end")]
    pub last_end: String,
    pub rest_curvature: Option<f64>,
    #[serde(default = "default_binormal")]
    pub binormal: [f64; 3],
    pub wave: Option<WaveSection>,
    pub actuation: Option<ActuationSection>,
    #[serde(default)]
    pub end_force: [f64; 3],
    #[serde(default)]
    pub end_torque: [f64; 3],
}

fn default_shape() -> String {
    "straight".into()
}
fn default_direction() -> [f64; 3] {
    [1.0, 0.0, 0.0]
}
fn default_count() -> usize {
    1
}
fn default_end() -> String {
    "free".into()
}
fn default_binormal() -> [f64; 3] {
    [0.0, 0.0, 1.0]
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ActuationSection {
    #[serde(default)]
    pub velocity: [f64; 3],
    #[serde(default)]
    pub angular_velocity: [f64; 3],
    #[serde(default)]
    pub frequency: f64,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegionSection {
    pub min: [f64; 3],
    pub max: [f64; 3],
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WaveSection {
    pub amplitude: f64,
    pub wavelength: f64,
    pub period: f64,
    #[serde(default = "default_wave_direction")]
    pub direction: String,
}

fn default_wave_direction() -> String {
    "first-to-last".into()
}

const SHAPES: [(&str, ()); 3] = [("straight", ()), ("arc", ()), ("points", ())];
const ENDS: [(&str, ()); 4] = [
    ("free", ()),
    ("clamped", ()),
    ("hinged", ()),
    ("actuated", ()),
];

/// A checked fiber scene.
#[derive(Clone, Debug)]
pub struct FiberScene {
    pub source: PathBuf,
    pub section: FibersSection,
    pub dt: f64,
    pub settings: RunSettings,
    pub solver: MultiplierSolver,
    pub flow: AmbientFlow,
}

impl FiberScene {
    /// Parses and checks the text of a fiber scene; `source` names it in messages.
    pub fn parse(text: &str, source: &std::path::Path) -> Result<FiberScene, SceneError> {
        super::parse_kind(text, source, "fiber", |scene| match scene {
            super::Scene::Fibers(s) => Some(s),
            _ => None,
        })
    }

    /// Checks the `[fibers]` table of `file` and derives the time step.
    pub fn new(file: SceneFile, keys: Keys) -> Result<FiberScene, SceneError> {
        let s = file.fibers.expect("a fiber scene has [fibers]");
        keys.number("fibers.bead_radius", s.bead_radius, Range::Positive)?;
        keys.number("fibers.viscosity", s.viscosity, Range::Positive)?;
        keys.number(
            "fibers.bending_rigidity",
            s.bending_rigidity,
            Range::NonNegative,
        )?;
        keys.number("fibers.end_time", s.end_time, Range::Positive)?;
        let periodic = keys.choice(
            "fibers.hydrodynamics",
            &s.hydrodynamics,
            &[
                ("rpy", false),
                ("free-drain", false),
                ("periodic-rpy", true),
            ],
        )?;
        check_periodic(&keys, &s, periodic)?;
        let joint = keys.choice(
            "fibers.links",
            &s.links,
            &[("gears", false), ("joint", true)],
        )?;
        match (joint, s.joint_gap) {
            (true, Some(gap)) => {
                keys.number("fibers.joint_gap", gap, Range::NonNegative)?;
            }
            (true, None) => {
                return Err(keys.missing(
                    "fibers.joint_gap",
                    "the joint model needs the gap between a bead's surface and its joint (seed \
                     sec. 2.2.1)",
                ))
            }
            (false, gap) => keys.forbid(
                gap.is_some(),
                "fibers.joint_gap",
                "only used with links = \"joint\"; remove it",
            )?,
        }
        keys.number(
            "fibers.twist_rigidity",
            s.twist_rigidity,
            Range::NonNegative,
        )?;
        keys.number("fibers.rest_twist", s.rest_twist, Range::Finite)?;
        keys.forbid(
            s.twist_rigidity > 0.0 && joint,
            "fibers.twist_rigidity",
            "twist elasticity is implemented for gears links only; use links = \"gears\" or remove it",
        )?;
        keys.forbid(
            s.rigid && joint,
            "fibers.rigid",
            "rigid fibers are made of gears links (rigid links hold the angular velocities of \
             neighbouring beads equal); use links = \"gears\"",
        )?;
        let tolerance = keys.number(
            "fibers.solver_tolerance",
            s.solver_tolerance,
            Range::Open(0.0, 1.0),
        )?;
        let solver = keys.choice(
            "fibers.solver",
            &s.solver,
            &[
                ("auto", MultiplierSolver::Auto),
                ("direct", MultiplierSolver::Direct),
                (
                    "conjugate-gradient",
                    MultiplierSolver::ConjugateGradient {
                        tolerance,
                        max_iterations: 2000,
                    },
                ),
            ],
        )?;
        keys.vector("fibers.bead_force", s.bead_force)?;
        let flow = check_flow(&keys, &s.flow)?;
        keys.forbid(
            periodic
                && !matches!(
                    flow,
                    AmbientFlow::Quiescent
                        | AmbientFlow::Uniform { .. }
                        | AmbientFlow::SimpleShear { .. }
                ),
            "fibers.flow.type",
            &format!(
                "a \"{}\" flow is not periodic; in a periodic box (hydrodynamics = \
                 \"periodic-rpy\") use \"quiescent\", \"uniform\" or \"simple-shear\" (with \
                 Lees–Edwards images)",
                s.flow.kind
            ),
        )?;
        keys.forbid(
            periodic && solver == MultiplierSolver::Direct,
            "fibers.solver",
            "the direct solve assembles the mobility pair by pair; the periodic mobility is a \
             product only: use \"conjugate-gradient\" or \"auto\"",
        )?;
        if s.fiber.is_empty() {
            return Err(keys.missing(
                "fibers.fiber",
                "a fiber scene needs at least one [[fibers.fiber]] group",
            ));
        }
        let mut total_beads = 0usize;
        for (g, group) in s.fiber.iter().enumerate() {
            total_beads = total_beads.saturating_add(check_group(&keys, g, group)?);
        }
        keys.require(
            total_beads <= MAX_BEADS,
            "fibers.fiber",
            format!("{total_beads} beads"),
            &format!("at most {MAX_BEADS} beads"),
        )?;
        fits_in_memory(
            &keys,
            "fibers.fiber",
            total_beads as f64 * BYTES_PER_BEAD,
            "the beads",
        )?;
        let (bending, twist) = (bending_time(&s), twist_time(&s));
        let (max_ratio, default_ratio) = if joint {
            (
                MAX_JOINT_STEP_OVER_BENDING_TIME,
                DEFAULT_JOINT_STEP_OVER_BENDING_TIME,
            )
        } else {
            (MAX_STEP_OVER_BENDING_TIME, DEFAULT_STEP_OVER_BENDING_TIME)
        };
        let dt = match s.time_step {
            Some(dt) => {
                keys.number("fibers.time_step", dt, Range::Positive)?;
                keys.require(
                    dt <= max_ratio * bending,
                    "fibers.time_step",
                    num(dt),
                    &format!(
                        "the Adams–Bashforth steps of the {} model are unstable above {max_ratio} \
                         bending times η (2a)⁴ / K_b = {}; allowed: at most {}",
                        s.links,
                        num(bending),
                        num(max_ratio * bending)
                    ),
                )?;
                keys.require(
                    dt <= MAX_STEP_OVER_TWIST_TIME * twist,
                    "fibers.time_step",
                    num(dt),
                    &format!(
                        "the Adams–Bashforth steps are unstable above {MAX_STEP_OVER_TWIST_TIME} twist \
                         times 8π η a³ (2a) / K_t = {}; allowed: at most {}",
                        num(twist),
                        num(MAX_STEP_OVER_TWIST_TIME * twist)
                    ),
                )?;
                dt
            }
            None if bending.is_finite() || twist.is_finite() => {
                (default_ratio * bending).min(DEFAULT_STEP_OVER_TWIST_TIME * twist)
            }
            None => {
                return Err(keys.missing(
                    "fibers.time_step",
                    "rigid or unbendable fibers have no bending time to take the step from; give \
                     time_step",
                ))
            }
        };
        fixed_steps(&keys, "fibers.time_step", dt, s.end_time)?;
        s.output.allow(
            &keys,
            "fibers.output",
            &["diagnostics_every"],
            "a fiber scene",
        )?;
        let mut settings = s.output.settings(&keys, "fibers.output", s.end_time)?;
        settings.diagnostics_every = Some(s.output.diagnostics_every.unwrap_or(1));
        Ok(FiberScene {
            source: keys.file.to_path_buf(),
            section: s,
            dt,
            settings,
            solver,
            flow,
        })
    }

    fn keys(&self) -> Keys<'_> {
        Keys::new(&self.source)
    }

    /// Bending time `η (2a)⁴ / K_b` (infinite for rigid or unbendable fibers).
    pub fn bending_time(&self) -> f64 {
        bending_time(&self.section)
    }

    /// Places the fibers and sets up bending, constraints, loads and flow (without solving anything).
    pub fn system(&self) -> Result<FiberSystem, SceneError> {
        let s = &self.section;
        let keys = self.keys();
        let a = s.bead_radius;
        let joint_model = s.links == "joint";
        let mut fibers = Fibers::with_gap(a, s.joint_gap.unwrap_or(0.0))
            .map_err(|m| keys.error("fibers.joint_gap", m))?;
        let mut rest = Vec::new();
        let mut point_loads = Vec::new();
        let mut ends: Vec<Box<dyn Constraint>> = Vec::new();
        // Links whose both angular velocities an end prescribes (see `rigid_links`), and the fibers
        // with such an end (see `alternating_spins`).
        let mut held_links = Vec::new();
        let mut held_fibers = Vec::new();
        for (g, group) in s.fiber.iter().enumerate() {
            let key = |k: &str| format!("fibers.fiber[{g}].{k}");
            let first = fibers.fibers().len();
            place_group(&mut fibers, group, g, &keys)?;
            let binormal = Vec3::from_array(group.binormal);
            let law = match (&group.wave, group.rest_curvature) {
                (Some(w), _) => {
                    let sign = if w.direction == "last-to-first" {
                        -1.0
                    } else {
                        1.0
                    };
                    Some(RestCurvature::travelling_wave(
                        w.amplitude,
                        2.0 * PI / w.wavelength,
                        sign * 2.0 * PI / w.period,
                        binormal,
                    ))
                }
                (None, Some(k)) => Some(RestCurvature::constant(k, binormal)),
                (None, None) => None,
            }
            .transpose()
            .map_err(|m| keys.error(key("binormal"), m))?;
            for fiber in first..fibers.fibers().len() {
                rest.push(law.clone());
                let beads = fibers.fibers()[fiber].clone();
                if group.end_force != [0.0; 3] || group.end_torque != [0.0; 3] {
                    point_loads.push(PointLoad {
                        bead: beads.end - 1,
                        force: Vec3::from_array(group.end_force),
                        torque: Vec3::from_array(group.end_torque),
                    });
                }
                for (end, bead, next) in [
                    (&group.first_end, beads.start, beads.start + 1),
                    (&group.last_end, beads.end - 1, beads.end - 2),
                ] {
                    match end.as_str() {
                        // A joint-model bead held still also holds its joint.
                        "clamped" if joint_model => {
                            ends.push(Box::new(PrescribedMotion::clamped(bead)))
                        }
                        "clamped" => {
                            ends.extend(clamped_end(bead, next));
                            held_links.push(bead.min(next));
                            held_fibers.push(fiber);
                        }
                        "hinged" => ends.push(Box::new(PrescribedMotion::hinged(bead))),
                        "actuated" => {
                            let motion = group.actuation.clone().unwrap_or(ActuationSection {
                                velocity: [0.0; 3],
                                angular_velocity: [0.0; 3],
                                frequency: 0.0,
                            });
                            let (u, w, f) = (
                                Vec3::from_array(motion.velocity),
                                Vec3::from_array(motion.angular_velocity),
                                motion.frequency,
                            );
                            let velocity: Prescription =
                                Arc::new(move |t| u * (2.0 * PI * f * t).cos());
                            let angular: Prescription =
                                Arc::new(move |t| w * (2.0 * PI * f * t).cos());
                            if joint_model {
                                ends.push(Box::new(PrescribedMotion {
                                    bead,
                                    velocity: Some(velocity),
                                    angular_velocity: Some(angular),
                                }));
                            } else {
                                ends.extend(actuated_end(bead, next, velocity, angular));
                                held_links.push(bead.min(next));
                                held_fibers.push(fiber);
                            }
                        }
                        _ => {}
                    }
                }
            }
        }
        let kernel =
            RpyKernel::new(a, s.viscosity).map_err(|m| keys.error("fibers.viscosity", m))?;
        let mobility = Mobility {
            kernel,
            hydrodynamics: match s.hydrodynamics.as_str() {
                "free-drain" => Hydrodynamics::FreeDrain,
                "periodic-rpy" => Hydrodynamics::PeriodicRpy(Periodic::new(
                    self.periodic_product(kernel, fibers.bead_count())?,
                )),
                _ => Hydrodynamics::Rpy,
            },
        };
        let mut bending = Bending::straight(if s.rigid { 0.0 } else { s.bending_rigidity }, 0)
            .map_err(|m| keys.error("fibers.bending_rigidity", m))?;
        bending.rest = rest;
        let mut system = if joint_model {
            FiberSystem::with_joints(fibers, mobility, bending)
        } else {
            FiberSystem::new(fibers, mobility, bending)
        };
        if s.rigid {
            let links = rigid_links(&system.fibers, &held_links);
            system.constraints.extend(links);
        } else if !joint_model {
            let spins = alternating_spins(&system.fibers, &held_fibers);
            system.constraints.extend(spins);
        }
        system.constraints.extend(ends);
        system.bead_force = Vec3::from_array(s.bead_force);
        system.point_loads = point_loads;
        system.twist = Twist {
            rigidity: s.twist_rigidity,
            rest: s.rest_twist,
        };
        system.flow = self.flow;
        system.solver = self.solver;
        system.restore_links = s.restore_links;
        Ok(system)
    }

    /// The periodic RPY product of the scene's box and tolerance for `beads` beads (its grid refused
    /// when it does not fit in memory).
    fn periodic_product(&self, kernel: RpyKernel, beads: usize) -> Result<SpectralRpy, SceneError> {
        let s = &self.section;
        let keys = self.keys();
        let lengths = Vec3::from_array(s.periodic_box.expect("checked"));
        let tolerance = s
            .hydrodynamics_tolerance
            .unwrap_or(DEFAULT_HYDRODYNAMICS_TOLERANCE);
        let product = if matches!(self.flow, AmbientFlow::SimpleShear { .. }) {
            SpectralRpy::new_sheared(kernel, lengths, tolerance, beads)
        } else {
            SpectralRpy::new(kernel, lengths, tolerance, beads)
        }
        .map_err(|m| keys.error("fibers.periodic_box", m))?;
        fits_in_memory(
            &keys,
            "fibers.periodic_box",
            product.parameters().grid_bytes(),
            "the periodic mobility's grids",
        )?;
        Ok(product)
    }

    /// Refuses a system whose multiplier solve does not fit in memory; returns its cost (bytes, flops).
    fn solve_cost(&self, system: &FiberSystem) -> Result<(f64, f64), SceneError> {
        let periodic = system.mobility.hydrodynamics.is_periodic();
        let cost = solve_cost(&system.constraint_system(), self.solver, periodic);
        fits_in_memory(
            &self.keys(),
            "fibers.fiber",
            cost.0,
            "the multiplier solve (dense J M Jᵀ blocks of each fiber)",
        )?;
        Ok(cost)
    }

    /// Solves the initial state: redundant end conditions (a two-bead fiber clamped at both ends) fail
    /// here with the solver's message rather than at the first step.
    fn solve_initial(&self, system: &FiberSystem) -> Result<(), SceneError> {
        system.motion().map(|_| ()).map_err(|m| {
            self.keys().error(
                "fibers.fiber",
                format!("the initial state cannot be solved: {m}"),
            )
        })
    }
}

/// Checks the periodic box and the hydrodynamic tolerance: required and allowed with
/// `hydrodynamics = "periodic-rpy"` only.
fn check_periodic(keys: &Keys, s: &FibersSection, periodic: bool) -> Result<(), SceneError> {
    if !periodic {
        for (name, present) in [
            ("periodic_box", s.periodic_box.is_some()),
            (
                "hydrodynamics_tolerance",
                s.hydrodynamics_tolerance.is_some(),
            ),
        ] {
            keys.forbid(
                present,
                &format!("fibers.{name}"),
                "only used with hydrodynamics = \"periodic-rpy\"; remove it",
            )?;
        }
        return Ok(());
    }
    let lengths = s.periodic_box.ok_or_else(|| {
        keys.missing(
            "fibers.periodic_box",
            "hydrodynamics = \"periodic-rpy\" needs the box's side lengths [Lx, Ly, Lz] (the \
             fluid is periodic from the origin to them)",
        )
    })?;
    for (axis, length) in lengths.iter().enumerate() {
        keys.number(
            &format!("fibers.periodic_box[{axis}]"),
            *length,
            Range::Positive,
        )?;
    }
    if let Some(tolerance) = s.hydrodynamics_tolerance {
        keys.require(
            (1e-10..=1e-2).contains(&tolerance),
            "fibers.hydrodynamics_tolerance",
            num(tolerance),
            "from 1e-10 to 1e-2 (the periodic product's relative error)",
        )?;
    }
    Ok(())
}

/// Bending time `η (2a)⁴ / K_b` (infinite for rigid or unbendable fibers).
fn bending_time(s: &FibersSection) -> f64 {
    if s.rigid || s.bending_rigidity == 0.0 {
        f64::INFINITY
    } else {
        s.viscosity * (2.0 * s.bead_radius).powi(4) / s.bending_rigidity
    }
}

/// Twist time `8π η a³ (2a) / K_t` (infinite without twist).
fn twist_time(s: &FibersSection) -> f64 {
    if s.twist_rigidity > 0.0 {
        8.0 * PI * s.viscosity * s.bead_radius.powi(3) * 2.0 * s.bead_radius / s.twist_rigidity
    } else {
        f64::INFINITY
    }
}

fn check_flow(keys: &Keys, f: &FlowSection) -> Result<AmbientFlow, SceneError> {
    let kind = keys.choice(
        "fibers.flow.type",
        &f.kind,
        &[
            ("quiescent", 0),
            ("uniform", 1),
            ("simple-shear", 2),
            ("planar-extension", 3),
            ("poiseuille", 4),
        ],
    )?;
    let need = |value: Option<f64>, name: &str| -> Result<f64, SceneError> {
        let key = format!("fibers.flow.{name}");
        let v = value
            .ok_or_else(|| keys.missing(&key, &format!("a \"{}\" flow needs {name}", f.kind)))?;
        keys.number(&key, v, Range::Finite)
    };
    let flow = match kind {
        1 => AmbientFlow::Uniform {
            velocity: keys.vector(
                "fibers.flow.velocity",
                f.velocity.ok_or_else(|| {
                    keys.missing("fibers.flow.velocity", "a \"uniform\" flow needs velocity")
                })?,
            )?,
        },
        2 => AmbientFlow::SimpleShear {
            shear_rate: need(f.shear_rate, "shear_rate")?,
        },
        3 => AmbientFlow::PlanarExtension {
            strain_rate: need(f.strain_rate, "strain_rate")?,
        },
        4 => {
            let (max_velocity, centre) = (
                need(f.max_velocity, "max_velocity")?,
                need(f.centre, "centre")?,
            );
            let half_width = need(f.half_width, "half_width")?;
            keys.number("fibers.flow.half_width", half_width, Range::Positive)?;
            AmbientFlow::Poiseuille {
                max_velocity,
                centre,
                half_width,
            }
        }
        _ => AmbientFlow::Quiescent,
    };
    for (name, present, used_by) in [
        ("velocity", f.velocity.is_some(), 1),
        ("shear_rate", f.shear_rate.is_some(), 2),
        ("strain_rate", f.strain_rate.is_some(), 3),
        ("max_velocity", f.max_velocity.is_some(), 4),
        ("centre", f.centre.is_some(), 4),
        ("half_width", f.half_width.is_some(), 4),
    ] {
        keys.forbid(
            present && used_by != kind,
            &format!("fibers.flow.{name}"),
            &format!("not used by a \"{}\" flow; remove it", f.kind),
        )?;
    }
    Ok(flow)
}

/// Checks one group and returns its number of beads.
fn check_group(keys: &Keys, g: usize, group: &FiberGroup) -> Result<usize, SceneError> {
    let key = |k: &str| format!("fibers.fiber[{g}].{k}");
    keys.choice(&key("shape"), &group.shape, &SHAPES)?;
    keys.choice(&key("first_end"), &group.first_end, &ENDS)?;
    keys.choice(&key("last_end"), &group.last_end, &ENDS)?;
    let actuated = group.first_end == "actuated" || group.last_end == "actuated";
    match (&group.actuation, actuated) {
        (Some(motion), true) => {
            keys.vector(&key("actuation.velocity"), motion.velocity)?;
            keys.vector(&key("actuation.angular_velocity"), motion.angular_velocity)?;
            keys.number(
                &key("actuation.frequency"),
                motion.frequency,
                Range::NonNegative,
            )?;
        }
        (None, true) => {
            return Err(keys.missing(
                key("actuation"),
                "an \"actuated\" end needs actuation = { velocity, angular_velocity, frequency }",
            ))
        }
        (Some(_), false) => {
            return Err(keys.error(
                key("actuation"),
                "only used with first_end or last_end = \"actuated\"; remove it",
            ))
        }
        (None, false) => {}
    }
    for (name, v) in [
        ("end_force", group.end_force),
        ("end_torque", group.end_torque),
        ("start", group.start),
        ("offset", group.offset),
    ] {
        keys.vector(&key(name), v)?;
    }
    keys.direction(&key("direction"), group.direction)?;
    keys.direction(&key("binormal"), group.binormal)?;
    keys.require(group.count >= 1, &key("count"), group.count, "at least 1")?;
    let beads = if group.shape == "points" {
        keys.forbid(
            group.beads.is_some(),
            &key("beads"),
            "not used with shape = \"points\" (the number of positions is the number of beads); \
             remove it",
        )?;
        let points = group
            .positions
            .as_ref()
            .ok_or_else(|| keys.missing(key("positions"), "shape = \"points\" needs positions"))?;
        for (k, p) in points.iter().enumerate() {
            keys.vector(&key(&format!("positions[{k}]")), *p)?;
        }
        points.len()
    } else {
        keys.forbid(
            group.positions.is_some(),
            &key("positions"),
            &format!(
                "only used with shape = \"points\", not \"{}\"; remove it",
                group.shape
            ),
        )?;
        group
            .beads
            .ok_or_else(|| keys.missing(key("beads"), "the number of beads per fiber"))?
    };
    keys.require(
        beads >= 2,
        &key("beads"),
        beads,
        "at least 2 beads per fiber",
    )?;
    if group.shape == "arc" {
        let c = group
            .curvature
            .ok_or_else(|| keys.missing(key("curvature"), "an \"arc\" needs curvature"))?;
        keys.number(&key("curvature"), c, Range::Finite)?;
    } else {
        keys.forbid(
            group.curvature.is_some(),
            &key("curvature"),
            "only used with shape = \"arc\"; remove it (rest_curvature sets the rest shape)",
        )?;
    }
    if let Some(region) = &group.region {
        keys.forbid(
            group.shape != "straight",
            &key("region"),
            "random placement places straight fibers; use shape = \"straight\"",
        )?;
        keys.require(
            (0..3).all(|k| {
                region.min[k].is_finite()
                    && region.max[k].is_finite()
                    && region.min[k] < region.max[k]
            }),
            &key("region"),
            format!("min {:?}, max {:?}", region.min, region.max),
            "finite corners with min < max on every axis",
        )?;
    }
    if let Some(k) = group.rest_curvature {
        keys.number(&key("rest_curvature"), k, Range::Finite)?;
        keys.forbid(
            group.wave.is_some(),
            &key("rest_curvature"),
            "give either rest_curvature or wave, not both",
        )?;
    }
    if let Some(w) = &group.wave {
        keys.number(&key("wave.amplitude"), w.amplitude, Range::Finite)?;
        keys.number(&key("wave.wavelength"), w.wavelength, Range::Positive)?;
        keys.number(&key("wave.period"), w.period, Range::Positive)?;
        keys.choice(
            &key("wave.direction"),
            &w.direction,
            &[("first-to-last", ()), ("last-to-first", ())],
        )?;
    }
    Ok(beads.saturating_mul(group.count))
}

/// Places the fibers of one group.
fn place_group(
    fibers: &mut Fibers,
    group: &FiberGroup,
    g: usize,
    keys: &Keys,
) -> Result<(), SceneError> {
    let key = |k: &str| format!("fibers.fiber[{g}].{k}");
    let beads = group.beads.unwrap_or(0);
    if let Some(r) = &group.region {
        let region = (Vec3::from_array(r.min), Vec3::from_array(r.max));
        return fibers
            .add_random_straight(group.count, beads, region, group.seed)
            .map_err(|fiber| {
                keys.error(
                    key("region"),
                    format!(
                        "could not place fiber {fiber} of {} without overlapping the others in 1000 \
                         tries: the region is too crowded; enlarge it or place fewer fibers",
                        group.count
                    ),
                )
            });
    }
    for copy in 0..group.count {
        let shift = copy as f64 * Vec3::from_array(group.offset);
        let start = Vec3::from_array(group.start) + shift;
        let direction = Vec3::from_array(group.direction).normalize();
        let placed = match group.shape.as_str() {
            "points" => {
                let points: Vec<Vec3> = group
                    .positions
                    .iter()
                    .flatten()
                    .map(|p| Vec3::from_array(*p) + shift)
                    .collect();
                fibers
                    .add_through(&points, SPACING_TOLERANCE)
                    .map_err(|(k, m)| keys.error(key(&format!("positions[{k}]")), m))?;
                Ok(0)
            }
            "arc" => {
                let curvature = group.curvature.unwrap_or(0.0);
                let binormal = Vec3::from_array(group.binormal).normalize();
                let normal = binormal.cross(direction);
                fibers.add(beads, |s| {
                    if curvature == 0.0 {
                        start + s * direction
                    } else {
                        let r = 1.0 / curvature;
                        start + r * (s / r).sin() * direction + r * (1.0 - (s / r).cos()) * normal
                    }
                })
            }
            _ => fibers.add(beads, |s| start + s * direction),
        };
        placed.map_err(|m| keys.error(key("shape"), m))?;
    }
    Ok(())
}

impl SceneKind for FiberScene {
    type Model = FiberModel;

    fn settings(&self) -> RunSettings {
        self.settings
    }

    fn build(&self) -> Result<FiberModel, SceneError> {
        self.build_on(&silt_parallel::SingleRank::comm())
    }

    /// Every rank builds the whole system and computes its rows of the mobility products
    /// ([`silt_fibers::mobility::Mobility::apply_on`]): the serial run's numbers on any number of
    /// ranks.
    fn build_on(&self, comm: &silt_parallel::Comm) -> Result<FiberModel, SceneError> {
        let mut system = self.system()?;
        system.comm = comm.clone();
        self.solve_cost(&system)?;
        self.solve_initial(&system)?;
        Ok(FiberModel::new(system, self.dt))
    }

    fn check(&self) -> Result<String, SceneError> {
        let system = self.system()?;
        let (bytes, flops) = self.solve_cost(&system)?;
        let solved = flops <= CHECK_SOLVE_FLOPS;
        if solved {
            self.solve_initial(&system)?;
        }
        Ok(report(self, &system, bytes, flops, solved))
    }

    fn describe(&self, model: &FiberModel) -> String {
        format!(
            "{} fibers of {} beads in all, dt {:e} ({:.3} bending times)",
            model.system.fibers.fibers().len(),
            model.system.fibers.bead_count(),
            self.dt,
            self.dt / self.bending_time()
        )
    }
}

/// What `silt check` prints for a fiber scene.
fn report(
    scene: &FiberScene,
    system: &FiberSystem,
    bytes: f64,
    flops: f64,
    solved: bool,
) -> String {
    let s = &scene.section;
    let mut out = String::new();
    let fibers = system.fibers.fibers().len();
    let beads = system.fibers.bead_count();
    let rows: usize = system.constraints.iter().map(|c| c.rows()).sum();
    let _ = writeln!(out, "scene: {}", scene.source.display());
    let _ = writeln!(
        out,
        "fibers: {fibers}, beads: {beads} (radius {}), constraint rows: {rows}",
        num(s.bead_radius)
    );
    let _ = writeln!(
        out,
        "links: {}{}; hydrodynamics: {}; multiplier solver: {}",
        s.links,
        s.joint_gap.map_or(String::new(), |g| format!(" (gap {})", num(g))),
        s.hydrodynamics,
        match scene.solver {
            MultiplierSolver::Direct => "direct (Cholesky)".to_string(),
            MultiplierSolver::ConjugateGradient { tolerance, .. } =>
                format!("conjugate gradients, tolerance {tolerance:e}"),
            MultiplierSolver::Auto
                if rows <= AUTO_DIRECT_ROWS && !system.mobility.hydrodynamics.is_periodic() =>
                format!("auto: direct (Cholesky), {rows} <= {AUTO_DIRECT_ROWS} rows"),
            MultiplierSolver::Auto if system.mobility.hydrodynamics.is_periodic() => format!(
                "auto: conjugate gradients with per-fiber preconditioner (periodic mobility), \
                 tolerance {:e} (a tenth of the product's)",
                system.mobility.hydrodynamics.multiplier_tolerance()
            ),
            MultiplierSolver::Auto => format!(
                "auto: conjugate gradients with per-fiber preconditioner, {rows} > {AUTO_DIRECT_ROWS} \
                 rows, tolerance {:e}",
                system.mobility.hydrodynamics.multiplier_tolerance()
            ),
        }
    );
    if let Hydrodynamics::PeriodicRpy(periodic) = &system.mobility.hydrodynamics {
        let p = periodic.product.parameters();
        let lengths = periodic.product.lengths();
        let density = beads as f64 / (lengths.x * lengths.y * lengths.z);
        let neighbours = density * 4.0 / 3.0 * PI * p.real_cutoff.powi(3);
        let _ = writeln!(
            out,
            "periodic box {} x {} x {} (volume fraction {}); RPY Ewald sum to relative error {:e}: \
             splitting ξ = {}, real-space cutoff {} (about {} beads), grid {} x {} x {} \
             ({} MiB), windows of {} x {} x {} points ({}); about {} s per product on one \
             core",
            num(lengths.x),
            num(lengths.y),
            num(lengths.z),
            num(density * 4.0 / 3.0 * PI * s.bead_radius.powi(3)),
            s.hydrodynamics_tolerance
                .unwrap_or(DEFAULT_HYDRODYNAMICS_TOLERANCE),
            num(p.xi),
            num(p.real_cutoff),
            num(neighbours.round()),
            p.grid[0],
            p.grid[1],
            p.grid[2],
            mib(p.grid_bytes()),
            p.support[0],
            p.support[1],
            p.support[2],
            p.window,
            num(p.cost(beads, neighbours * beads as f64))
        );
    }
    let bending = scene.bending_time();
    let ratio = scene.dt / bending;
    let steps = (s.end_time / scene.dt).round().max(1.0);
    let _ = writeln!(
        out,
        "time step: {} ({steps} steps to t = {}); bending time η (2a)⁴ / K_b = {}; dt / bending time = {}",
        num(scene.dt),
        num(s.end_time),
        num(bending),
        num(ratio)
    );
    if ratio > 1.0 {
        let _ = writeln!(
            out,
            "warning: the step is above the bending time (the seed asks dt < η (2a)⁴ / K_b); stable in \
             tests up to {MAX_STEP_OVER_BENDING_TIME}, check the link drift in the diagnostics"
        );
    }
    if s.links == "joint" && ratio > DEFAULT_JOINT_STEP_OVER_BENDING_TIME {
        let _ = writeln!(
            out,
            "warning: the joint model diverged in tests at 0.6 bending times and ran at 0.45; \
             allowed up to {MAX_JOINT_STEP_OVER_BENDING_TIME}"
        );
    }
    if s.twist_rigidity > 0.0 {
        let twist = system.twist.twist_time(&system.fibers, s.viscosity);
        let _ = writeln!(
            out,
            "twist rigidity {}; twist time 8π η a³ l / K_t = {}; dt / twist time = {} (stable in tests up to 0.13)",
            num(s.twist_rigidity),
            num(twist),
            num(scene.dt / twist)
        );
    }
    let length = 2.0 * s.bead_radius * beads as f64 / fibers.max(1) as f64;
    let _ = writeln!(out, "mean fiber length: {}", num(length));
    let force = Vec3::from_array(s.bead_force).length();
    if force > 0.0 && !s.rigid && s.bending_rigidity > 0.0 {
        let weight = force / (2.0 * s.bead_radius);
        let _ = writeln!(
            out,
            "elasto-gravitational number B = W L³ / K_b = {} (W = |bead_force| / 2a); settling time η L / W = {}",
            num(weight * length.powi(3) / s.bending_rigidity),
            num(s.viscosity * length / weight)
        );
    }
    if let AmbientFlow::SimpleShear { shear_rate } = scene.flow {
        if s.bending_rigidity > 0.0 && !s.rigid {
            let _ = writeln!(
                out,
                "shear: 1/γ̇ = {}; η γ̇ L⁴ / K_b = {}",
                num(1.0 / shear_rate.abs()),
                num(s.viscosity * shear_rate.abs() * length.powi(4) / s.bending_rigidity)
            );
        }
    }
    let o = &scene.settings;
    let _ = writeln!(
        out,
        "output: a frame every {}, diagnostics every {} steps and at every frame, {}",
        num(o.interval),
        o.diagnostics_every.unwrap_or(1),
        o.checkpoint_interval
            .map_or("a checkpoint every 10 frames".into(), |t| format!(
                "a checkpoint every {}",
                num(t)
            ))
    );
    let _ = writeln!(
        out,
        "multiplier solve: about {} MiB of dense matrices, {} flops of factorisation per step{}",
        mib(bytes),
        num(flops),
        if solved {
            ""
        } else {
            " (the initial state is solved by `silt run`, not here: too large to do in a moment)"
        }
    );
    if flops > 1e11 {
        let _ = writeln!(
            out,
            "warning: each step factorises dense blocks of about {} flops (minutes per step); split \
             long fibers or use fewer beads",
            num(flops)
        );
    }
    out
}
