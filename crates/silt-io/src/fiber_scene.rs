//! Fiber scene files (TOML): a top-level `[fibers]` table describing flexible fibers and active
//! filaments as bead chains at low Reynolds number (`silt_fibers`, the seed `002_*.txt`).
//! [`FiberScene::parse`] reads and checks one; [`FiberScene::build`] makes the [`FiberSystem`]. Every
//! mistake is one [`SceneError`] naming the file, the key, what was wrong and what is allowed. The
//! format is documented key by key in `docs/scene-format.md` ("Fiber scenes"); [`check_report`] is
//! what `silt check` prints.

use crate::csv_series::format_f64;
use crate::scene::{parse_error, read_scene_file, KeyChecker, SceneError};
use glam::DVec3 as Vec3;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Deserialize;
use silt_fibers::chain::Fibers;
use silt_fibers::constraints::{
    actuated_end, clamped_end, rigid_joints, Constraint, PrescribedMotion, Prescription,
};
use silt_fibers::dynamics::{FiberSystem, PointLoad};
use silt_fibers::elasticity::{Bending, RestCurvature, Twist};
use silt_fibers::flows::AmbientFlow;
use silt_fibers::mobility::{Hydrodynamics, Mobility};
use silt_fibers::multipliers::{MultiplierSolver, AUTO_DIRECT_ROWS};
use silt_fibers::rpy::RpyKernel;
use std::f64::consts::PI;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Largest step over the bending time `η (2a)⁴ / K_b` a gears scene may ask for: the Adams–Bashforth
/// scheme diverged in tests at 4 and ran stably at 2; the seed asks for less than 1, and `silt check`
/// warns above it.
pub const MAX_STEP_OVER_BENDING_TIME: f64 = 2.0;
/// Default step over the bending time when `time_step` is left out (gears).
pub const DEFAULT_STEP_OVER_BENDING_TIME: f64 = 0.5;
/// The same two for the joint model, whose beads turn directly under the joint moments: stable in
/// tests at 0.45, diverging at 0.6.
pub const MAX_JOINT_STEP_OVER_BENDING_TIME: f64 = 0.4;
pub const DEFAULT_JOINT_STEP_OVER_BENDING_TIME: f64 = 0.2;
/// With twist, the step over the twist time `8π η a³ l / K_t`: stable in tests at 0.13, diverging at
/// 0.16.
pub const MAX_STEP_OVER_TWIST_TIME: f64 = 0.12;
pub const DEFAULT_STEP_OVER_TWIST_TIME: f64 = 0.06;
/// Largest number of beads a scene may ask for.
const MAX_BEADS: usize = 1_000_000;
/// Largest number of steps.
const MAX_STEPS: f64 = 1e12;
/// Largest number of frames.
const MAX_FRAMES: f64 = 1e9;
/// Relative tolerance on the spacing of explicitly given bead positions.
const SPACING_TOLERANCE: f64 = 1e-6;

pub const HYDRODYNAMICS: &str = "\"rpy\", \"free-drain\"";
pub const SOLVERS: &str = "\"auto\", \"direct\", \"conjugate-gradient\"";
pub const FLOWS: &str =
    "\"quiescent\", \"uniform\", \"simple-shear\", \"planar-extension\", \"poiseuille\"";
pub const SHAPES: &str = "\"straight\", \"arc\", \"points\"";
pub const ENDS: &str = "\"free\", \"clamped\", \"hinged\", \"actuated\"";
pub const LINKS: &str = "\"gears\", \"joint\"";
pub const WAVE_DIRECTIONS: &str = "\"first-to-last\", \"last-to-first\"";

/// Whether `text` is a fiber scene: a TOML document whose only top-level table is `[fibers]`.
pub fn is_fiber_scene(text: &str) -> bool {
    toml::from_str::<toml::Table>(text).is_ok_and(|t| t.contains_key("fibers") && t.len() == 1)
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FiberSceneFile {
    fibers: FibersSection,
}

/// The `[fibers]` table.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FibersSection {
    /// Bead radius a.
    pub bead_radius: f64,
    /// Dynamic viscosity η.
    pub viscosity: f64,
    /// Bending rigidity K_b.
    pub bending_rigidity: f64,
    #[serde(default = "default_hydrodynamics")]
    pub hydrodynamics: String,
    /// How neighbouring beads are linked: the gears model (no slip at the contact point) or the joint
    /// model (ball-and-socket joints `joint_gap` beyond the bead surfaces).
    #[serde(default = "default_links")]
    pub links: String,
    /// Gap ε_g of the joint model.
    pub joint_gap: Option<f64>,
    /// External force on every bead (a buoyant weight W 2a, a uniform load).
    #[serde(default)]
    pub bead_force: [f64; 3],
    /// Twist rigidity K_t (0: no twist elasticity; gears only).
    #[serde(default)]
    pub twist_rigidity: f64,
    /// Rest twist rate (radians per length).
    #[serde(default)]
    pub rest_twist: f64,
    pub end_time: f64,
    /// Fixed time step; default `DEFAULT_STEP_OVER_BENDING_TIME` bending times.
    pub time_step: Option<f64>,
    /// Put links back to 2a after each step.
    #[serde(default = "default_true")]
    pub restore_links: bool,
    /// Hold every fiber straight (rigid joints) instead of elastic bending.
    #[serde(default)]
    pub rigid: bool,
    #[serde(default = "default_solver")]
    pub solver: String,
    /// Relative residual of the conjugate gradients.
    #[serde(default = "default_tolerance")]
    pub solver_tolerance: f64,
    #[serde(default)]
    pub flow: FlowSection,
    #[serde(default)]
    pub fiber: Vec<FiberGroup>,
    #[serde(default)]
    pub output: FiberOutputSection,
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

/// `[fibers.flow]`: the ambient flow.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowSection {
    #[serde(rename = "type")]
    pub kind: String,
    pub velocity: Option<[f64; 3]>,
    pub shear_rate: Option<f64>,
    pub strain_rate: Option<f64>,
    pub max_velocity: Option<f64>,
    pub centre: Option<f64>,
    pub half_width: Option<f64>,
}

impl Default for FlowSection {
    fn default() -> Self {
        FlowSection {
            kind: "quiescent".into(),
            velocity: None,
            shear_rate: None,
            strain_rate: None,
            max_velocity: None,
            centre: None,
            half_width: None,
        }
    }
}

/// One `[[fibers.fiber]]` group: `count` fibers of the same make.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FiberGroup {
    /// Beads per fiber (not with `shape = "points"`).
    pub beads: Option<usize>,
    #[serde(default = "default_shape")]
    pub shape: String,
    /// First bead of the first fiber (`straight`, `arc`).
    #[serde(default)]
    pub start: [f64; 3],
    /// Initial tangent (`straight`, `arc`).
    #[serde(default = "default_direction")]
    pub direction: [f64; 3],
    /// Curvature 1/R of an `arc`, turning about `binormal`.
    pub curvature: Option<f64>,
    /// Bead centres (`points`), 2a apart.
    pub positions: Option<Vec<[f64; 3]>>,
    #[serde(default = "default_count")]
    pub count: usize,
    /// Shift between consecutive copies.
    #[serde(default)]
    pub offset: [f64; 3],
    /// Random placement (straight fibers with centres uniform in the box, isotropic directions,
    /// no bead closer than 2a to a bead of another fiber).
    pub region: Option<RegionSection>,
    #[serde(default)]
    pub seed: u64,
    #[serde(default = "default_end")]
    pub first_end: String,
    #[serde(default = "default_end")]
    pub last_end: String,
    /// Constant rest curvature about `binormal`.
    pub rest_curvature: Option<f64>,
    /// Normal of the plane of the rest shape, the arc and the wave.
    #[serde(default = "default_binormal")]
    pub binormal: [f64; 3],
    pub wave: Option<WaveSection>,
    /// Motion of an "actuated" end: `U(t) = velocity cos(2π f t)`, `Ω(t) = angular_velocity cos(2π f t)`.
    pub actuation: Option<ActuationSection>,
    /// Force and torque on the last bead of each fiber (a pulled or twisted end).
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

/// `actuation = { velocity = [..], angular_velocity = [..], frequency = f }`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ActuationSection {
    #[serde(default)]
    pub velocity: [f64; 3],
    #[serde(default)]
    pub angular_velocity: [f64; 3],
    /// 0: constant motion.
    #[serde(default)]
    pub frequency: f64,
}

/// A box for random placement.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegionSection {
    pub min: [f64; 3],
    pub max: [f64; 3],
}

/// `wave = { amplitude, wavelength, period, direction }`: rest curvature
/// `κ_eq(s, t) = amplitude sin(2π s / wavelength ∓ 2π t / period)`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WaveSection {
    /// Curvature amplitude (1 / length).
    pub amplitude: f64,
    pub wavelength: f64,
    pub period: f64,
    #[serde(default = "default_wave_direction")]
    pub direction: String,
}

fn default_wave_direction() -> String {
    "first-to-last".into()
}

/// `[fibers.output]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FiberOutputSection {
    /// Time between frames (default: end_time / 100).
    pub interval: Option<f64>,
    /// A diagnostics row every this many steps.
    #[serde(default = "default_every")]
    pub diagnostics_every: u64,
    /// Time between checkpoints (default: 10 frames).
    pub checkpoint_interval: Option<f64>,
    #[serde(default = "default_true")]
    pub vtk: bool,
}

fn default_every() -> u64 {
    1
}

impl Default for FiberOutputSection {
    fn default() -> Self {
        FiberOutputSection {
            interval: None,
            diagnostics_every: 1,
            checkpoint_interval: None,
            vtk: true,
        }
    }
}

/// A parsed and checked fiber scene.
#[derive(Clone, Debug)]
pub struct FiberScene {
    pub source: PathBuf,
    pub section: FibersSection,
    /// The fixed time step (given, or the default fraction of the bending time).
    pub dt: f64,
    pub end_step: u64,
    pub output_every: u64,
    pub checkpoint_every: u64,
}

fn finite_vec(v: [f64; 3]) -> bool {
    v.iter().all(|x| x.is_finite())
}

fn nonzero_vec(v: [f64; 3]) -> bool {
    finite_vec(v) && Vec3::from_array(v).length() > 0.0
}

impl FiberScene {
    /// Reads, parses and checks a fiber scene file.
    pub fn load(path: &Path) -> Result<FiberScene, SceneError> {
        FiberScene::parse(&read_scene_file(path)?, path)
    }

    /// Parses and checks fiber scene text; `source` names it in messages.
    pub fn parse(text: &str, source: &Path) -> Result<FiberScene, SceneError> {
        let keys = KeyChecker::new(source);
        if let Ok(table) = toml::from_str::<toml::Table>(text) {
            if let Some(other) = table.keys().find(|k| k.as_str() != "fibers") {
                return Err(keys.error(
                    other.as_str(),
                    "a fiber scene has only the [fibers] table and its sub-tables ([fibers.flow], \
                     [[fibers.fiber]], [fibers.output])",
                ));
            }
        }
        let deserializer = toml::Deserializer::new(text);
        let file: FiberSceneFile = serde_path_to_error::deserialize(deserializer)
            .map_err(|e| parse_error(text, source, e))?;
        check(file.fibers, source)
    }

    fn keys(&self) -> KeyChecker<'_> {
        KeyChecker::new(&self.source)
    }

    /// Bending time `η (2a)⁴ / K_b` (infinite for rigid or unbendable fibers).
    pub fn bending_time(&self) -> f64 {
        let s = &self.section;
        if s.rigid || s.bending_rigidity == 0.0 {
            f64::INFINITY
        } else {
            s.viscosity * (2.0 * s.bead_radius).powi(4) / s.bending_rigidity
        }
    }

    /// The multiplier solver asked for.
    pub fn solver(&self) -> MultiplierSolver {
        match self.section.solver.as_str() {
            "direct" => MultiplierSolver::Direct,
            "conjugate-gradient" => MultiplierSolver::ConjugateGradient {
                tolerance: self.section.solver_tolerance,
                max_iterations: 2000,
            },
            _ => MultiplierSolver::Auto,
        }
    }

    /// The ambient flow.
    pub fn flow(&self) -> AmbientFlow {
        let f = &self.section.flow;
        match f.kind.as_str() {
            "uniform" => AmbientFlow::Uniform {
                velocity: Vec3::from_array(f.velocity.unwrap_or_default()),
            },
            "simple-shear" => AmbientFlow::SimpleShear {
                shear_rate: f.shear_rate.unwrap_or(0.0),
            },
            "planar-extension" => AmbientFlow::PlanarExtension {
                strain_rate: f.strain_rate.unwrap_or(0.0),
            },
            "poiseuille" => AmbientFlow::Poiseuille {
                max_velocity: f.max_velocity.unwrap_or(0.0),
                centre: f.centre.unwrap_or(0.0),
                half_width: f.half_width.unwrap_or(1.0),
            },
            _ => AmbientFlow::Quiescent,
        }
    }

    /// Places the fibers, sets up bending, constraints and flow.
    pub fn build(&self) -> Result<FiberSystem, SceneError> {
        let s = &self.section;
        let keys = self.keys();
        let a = s.bead_radius;
        let joint_model = s.links == "joint";
        let mut fibers = Fibers::with_gap(a, s.joint_gap.unwrap_or(0.0))
            .map_err(|m| keys.error("fibers.joint_gap", m))?;
        let mut rest = Vec::new();
        let mut point_loads = Vec::new();
        let mut ends: Vec<Box<dyn Constraint>> = Vec::new();
        for (g, group) in s.fiber.iter().enumerate() {
            let key = |k: &str| format!("fibers.fiber[{g}].{k}");
            let first = fibers.fibers().len();
            place_group(&mut fibers, group, g, &keys)?;
            let binormal = Vec3::from_array(group.binormal);
            let law = if let Some(w) = &group.wave {
                let sign = if w.direction == "last-to-first" {
                    -1.0
                } else {
                    1.0
                };
                Some(
                    RestCurvature::travelling_wave(
                        w.amplitude,
                        2.0 * PI / w.wavelength,
                        sign * 2.0 * PI / w.period,
                        binormal,
                    )
                    .map_err(|m| keys.error(key("binormal"), m))?,
                )
            } else if let Some(k) = group.rest_curvature {
                Some(
                    RestCurvature::constant(k, binormal)
                        .map_err(|m| keys.error(key("binormal"), m))?,
                )
            } else {
                None
            };
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
                        "clamped" => ends.extend(clamped_end(bead, next)),
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
                            }
                        }
                        _ => {}
                    }
                }
            }
        }
        let mobility = Mobility {
            kernel: RpyKernel::new(a, s.viscosity)
                .map_err(|m| keys.error("fibers.viscosity", m))?,
            hydrodynamics: if s.hydrodynamics == "free-drain" {
                Hydrodynamics::FreeDrain
            } else {
                Hydrodynamics::Rpy
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
            let joints = rigid_joints(&system.fibers);
            system.constraints.extend(joints);
        }
        system.constraints.extend(ends);
        system.bead_force = Vec3::from_array(s.bead_force);
        system.point_loads = point_loads;
        system.twist = Twist {
            rigidity: s.twist_rigidity,
            rest: s.rest_twist,
        };
        system.flow = self.flow();
        system.solver = self.solver();
        system.restore_links = s.restore_links;
        // Redundant end conditions (a fiber of two beads clamped at both ends, say) fail here with the
        // solver's message rather than at the first step.
        system.motion().map_err(|m| {
            keys.error(
                "fibers.fiber",
                format!("the initial state cannot be solved: {m}"),
            )
        })?;
        Ok(system)
    }
}

/// Places the fibers of one group.
fn place_group(
    fibers: &mut Fibers,
    group: &FiberGroup,
    g: usize,
    keys: &KeyChecker,
) -> Result<(), SceneError> {
    let key = |k: &str| format!("fibers.fiber[{g}].{k}");
    if let Some(region) = &group.region {
        return place_random(fibers, group, region, g, keys);
    }
    for copy in 0..group.count {
        let shift = copy as f64 * Vec3::from_array(group.offset);
        let start = Vec3::from_array(group.start) + shift;
        let direction = Vec3::from_array(group.direction).normalize();
        let placed = match group.shape.as_str() {
            "points" => {
                let points = group.positions.as_deref().unwrap_or(&[]);
                let beads: Vec<Vec3> = points
                    .iter()
                    .map(|p| Vec3::from_array(*p) + shift)
                    .collect();
                let spacing = fibers.spacing();
                for (k, pair) in beads.windows(2).enumerate() {
                    let gap = (pair[1] - pair[0]).length();
                    if ((gap - spacing) / spacing).abs() > SPACING_TOLERANCE {
                        return Err(keys.error(
                            key(&format!("positions[{}]", k + 1)),
                            format!(
                                "is {gap} from the previous bead; neighbouring beads touch: their \
                                 centres must be 2 bead_radius (+ 2 joint_gap) = {spacing} apart \
                                 (relative tolerance {SPACING_TOLERANCE:e})"
                            ),
                        ));
                    }
                }
                let count = beads.len();
                fibers.add(count, |t| {
                    // Piecewise-linear through the given centres, which are `spacing` apart.
                    let k = ((t / spacing).floor() as usize).min(count - 2);
                    let f = t / spacing - k as f64;
                    beads[k] + f * (beads[k + 1] - beads[k])
                })
            }
            "arc" => {
                let curvature = group.curvature.unwrap_or(0.0);
                let binormal = Vec3::from_array(group.binormal).normalize();
                let normal = binormal.cross(direction);
                fibers.add(group.beads.unwrap_or(0), |s| {
                    if curvature == 0.0 {
                        start + s * direction
                    } else {
                        let r = 1.0 / curvature;
                        start + r * (s / r).sin() * direction + r * (1.0 - (s / r).cos()) * normal
                    }
                })
            }
            _ => fibers.add(group.beads.unwrap_or(0), |s| start + s * direction),
        };
        placed.map_err(|m| keys.error(key("shape"), m))?;
    }
    Ok(())
}

/// Random straight fibers in `region`: centres uniform, directions isotropic, no bead within 2a of
/// a bead already placed (a cell list of size 2a); up to 1000 tries per fiber.
fn place_random(
    fibers: &mut Fibers,
    group: &FiberGroup,
    region: &RegionSection,
    g: usize,
    keys: &KeyChecker,
) -> Result<(), SceneError> {
    let key = |k: &str| format!("fibers.fiber[{g}].{k}");
    let a = fibers.radius();
    let beads = group.beads.unwrap_or(0);
    let mut rng = ChaCha8Rng::seed_from_u64(group.seed);
    let cell = 2.0 * a;
    let cell_of = |p: Vec3| {
        [
            (p.x / cell).floor() as i64,
            (p.y / cell).floor() as i64,
            (p.z / cell).floor() as i64,
        ]
    };
    let mut occupied: std::collections::HashMap<[i64; 3], Vec<Vec3>> =
        std::collections::HashMap::new();
    for &p in &fibers.positions {
        occupied.entry(cell_of(p)).or_default().push(p);
    }
    let (low, high) = (Vec3::from_array(region.min), Vec3::from_array(region.max));
    for fiber in 0..group.count {
        let mut placed = false;
        for _ in 0..1000 {
            let centre = low + (high - low) * Vec3::new(rng.gen(), rng.gen(), rng.gen());
            let z: f64 = rng.gen_range(-1.0..1.0);
            let phi: f64 = rng.gen_range(0.0..2.0 * PI);
            let r = (1.0 - z * z).sqrt();
            let direction = Vec3::new(r * phi.cos(), r * phi.sin(), z);
            let start = centre - direction * a * (beads as f64 - 1.0);
            let chain: Vec<Vec3> = (0..beads)
                .map(|k| start + direction * (2.0 * a * k as f64))
                .collect();
            let clear = chain.iter().all(|&p| {
                let c = cell_of(p);
                (-1..=1).all(|i| {
                    (-1..=1).all(|j| {
                        (-1..=1).all(|k| {
                            occupied
                                .get(&[c[0] + i, c[1] + j, c[2] + k])
                                .is_none_or(|list| {
                                    list.iter().all(|q| (p - *q).length() >= 2.0 * a)
                                })
                        })
                    })
                })
            });
            if clear {
                fibers
                    .add_straight(beads, start, direction)
                    .map_err(|m| keys.error(key("beads"), m))?;
                for &p in &chain {
                    occupied.entry(cell_of(p)).or_default().push(p);
                }
                placed = true;
                break;
            }
        }
        if !placed {
            return Err(keys.error(
                key("region"),
                format!(
                    "could not place fiber {fiber} of {} without overlapping the others in 1000 \
                     tries: the region is too crowded; enlarge it or place fewer fibers",
                    group.count
                ),
            ));
        }
    }
    Ok(())
}

/// Checks every key and derives the step schedule.
fn check(s: FibersSection, source: &Path) -> Result<FiberScene, SceneError> {
    let keys = KeyChecker::new(source);
    let positive = |v: f64, key: &str| {
        keys.require(
            v.is_finite() && v > 0.0,
            key,
            v,
            "allowed: a positive finite number",
        )
    };
    positive(s.bead_radius, "fibers.bead_radius")?;
    positive(s.viscosity, "fibers.viscosity")?;
    keys.require(
        s.bending_rigidity.is_finite() && s.bending_rigidity >= 0.0,
        "fibers.bending_rigidity",
        s.bending_rigidity,
        "allowed: a non-negative finite number",
    )?;
    positive(s.end_time, "fibers.end_time")?;
    keys.require(
        ["rpy", "free-drain"].contains(&s.hydrodynamics.as_str()),
        "fibers.hydrodynamics",
        format!("{:?}", s.hydrodynamics),
        &format!("allowed: {HYDRODYNAMICS}"),
    )?;
    keys.require(
        ["gears", "joint"].contains(&s.links.as_str()),
        "fibers.links",
        format!("{:?}", s.links),
        &format!("allowed: {LINKS}"),
    )?;
    match (s.links.as_str(), s.joint_gap) {
        ("joint", Some(gap)) => keys.require(
            gap.is_finite() && gap >= 0.0,
            "fibers.joint_gap",
            gap,
            "allowed: a non-negative finite length",
        )?,
        ("joint", None) => {
            return Err(keys.error(
                "fibers.joint_gap",
                "missing: the joint model needs the gap between a bead's surface and its joint (seed sec. 2.2.1)",
            ))
        }
        (_, Some(_)) => {
            return Err(keys.error(
                "fibers.joint_gap",
                "only used with links = \"joint\"; remove it",
            ))
        }
        _ => {}
    }
    keys.require(
        s.twist_rigidity.is_finite() && s.twist_rigidity >= 0.0,
        "fibers.twist_rigidity",
        s.twist_rigidity,
        "allowed: a non-negative finite number",
    )?;
    keys.require(
        s.rest_twist.is_finite(),
        "fibers.rest_twist",
        s.rest_twist,
        "allowed: a finite number",
    )?;
    if s.twist_rigidity > 0.0 && s.links == "joint" {
        return Err(keys.error(
            "fibers.twist_rigidity",
            "twist elasticity is implemented for gears links only; use links = \"gears\" or remove it",
        ));
    }
    if s.rigid && s.links == "joint" {
        return Err(keys.error(
            "fibers.rigid",
            "rigid fibers are made of gears links (rigid joints hold the beads either side of each \
             bead together); use links = \"gears\"",
        ));
    }
    keys.require(
        ["auto", "direct", "conjugate-gradient"].contains(&s.solver.as_str()),
        "fibers.solver",
        format!("{:?}", s.solver),
        &format!("allowed: {SOLVERS}"),
    )?;
    keys.require(
        s.solver_tolerance.is_finite() && s.solver_tolerance > 0.0 && s.solver_tolerance < 1.0,
        "fibers.solver_tolerance",
        s.solver_tolerance,
        "allowed: a number in (0, 1)",
    )?;
    keys.require(
        finite_vec(s.bead_force),
        "fibers.bead_force",
        format!("{:?}", s.bead_force),
        "allowed: three finite numbers",
    )?;
    check_flow(&s.flow, &keys)?;
    if s.fiber.is_empty() {
        return Err(keys.error(
            "fibers.fiber",
            "missing: a fiber scene needs at least one [[fibers.fiber]] group",
        ));
    }
    let mut total_beads = 0usize;
    for (g, group) in s.fiber.iter().enumerate() {
        total_beads = total_beads.saturating_add(check_group(group, g, &keys)?);
    }
    keys.require(
        total_beads <= MAX_BEADS,
        "fibers.fiber",
        format!("{total_beads} beads"),
        &format!("allowed: at most {MAX_BEADS} beads"),
    )?;
    let bending_time = if s.rigid || s.bending_rigidity == 0.0 {
        f64::INFINITY
    } else {
        s.viscosity * (2.0 * s.bead_radius).powi(4) / s.bending_rigidity
    };
    let (max_ratio, default_ratio) = if s.links == "joint" {
        (
            MAX_JOINT_STEP_OVER_BENDING_TIME,
            DEFAULT_JOINT_STEP_OVER_BENDING_TIME,
        )
    } else {
        (MAX_STEP_OVER_BENDING_TIME, DEFAULT_STEP_OVER_BENDING_TIME)
    };
    let twist_time = if s.twist_rigidity > 0.0 {
        8.0 * PI * s.viscosity * s.bead_radius.powi(3) * 2.0 * s.bead_radius / s.twist_rigidity
    } else {
        f64::INFINITY
    };
    let dt = match s.time_step {
        Some(dt) => {
            positive(dt, "fibers.time_step")?;
            keys.require(
                dt <= max_ratio * bending_time,
                "fibers.time_step",
                dt,
                &format!(
                    "the Adams–Bashforth steps of the {} model are unstable above {max_ratio} bending \
                     times η (2a)⁴ / K_b = {}; allowed: at most {}",
                    s.links,
                    format_f64(bending_time),
                    format_f64(max_ratio * bending_time)
                ),
            )?;
            keys.require(
                dt <= MAX_STEP_OVER_TWIST_TIME * twist_time,
                "fibers.time_step",
                dt,
                &format!(
                    "the Adams–Bashforth steps are unstable above {MAX_STEP_OVER_TWIST_TIME} twist times \
                     8π η a³ (2a) / K_t = {}; allowed: at most {}",
                    format_f64(twist_time),
                    format_f64(MAX_STEP_OVER_TWIST_TIME * twist_time)
                ),
            )?;
            dt
        }
        None if bending_time.is_finite() || twist_time.is_finite() => {
            (default_ratio * bending_time).min(DEFAULT_STEP_OVER_TWIST_TIME * twist_time)
        }
        None => {
            return Err(keys.error(
                "fibers.time_step",
                "missing: rigid or unbendable fibers have no bending time to take the step from; \
                 give time_step",
            ))
        }
    };
    let steps = (s.end_time / dt).round();
    keys.require(
        steps <= MAX_STEPS,
        "fibers.end_time",
        s.end_time,
        &format!("end_time / time_step must be at most {MAX_STEPS:e} steps"),
    )?;
    let end_step = (steps as u64).max(1);
    let interval = s.output.interval.unwrap_or(s.end_time / 100.0);
    positive(interval, "fibers.output.interval")?;
    keys.require(
        s.end_time / interval <= MAX_FRAMES,
        "fibers.output.interval",
        interval,
        &format!("at most {MAX_FRAMES:e} frames"),
    )?;
    let output_every = ((interval / dt).round() as u64).max(1);
    let checkpoint_every = match s.output.checkpoint_interval {
        Some(t) => {
            positive(t, "fibers.output.checkpoint_interval")?;
            ((t / dt).round() as u64).max(1)
        }
        None => 10 * output_every,
    };
    keys.require(
        s.output.diagnostics_every >= 1,
        "fibers.output.diagnostics_every",
        s.output.diagnostics_every,
        "allowed: at least 1",
    )?;
    Ok(FiberScene {
        source: source.to_path_buf(),
        section: s,
        dt,
        end_step,
        output_every,
        checkpoint_every,
    })
}

fn check_flow(f: &FlowSection, keys: &KeyChecker) -> Result<(), SceneError> {
    let need = |value: Option<f64>, name: &str| -> Result<f64, SceneError> {
        let key = format!("fibers.flow.{name}");
        let v = value.ok_or_else(|| {
            keys.error(&key, format!("missing: a {:?} flow needs {name}", f.kind))
        })?;
        keys.require(v.is_finite(), &key, v, "allowed: a finite number")?;
        Ok(v)
    };
    let unused = |present: bool, name: &str| {
        if present {
            Err(keys.error(
                format!("fibers.flow.{name}"),
                format!("not used by a {:?} flow; remove it", f.kind),
            ))
        } else {
            Ok(())
        }
    };
    let (velocity, shear, strain, poiseuille) = (
        f.velocity.is_some(),
        f.shear_rate.is_some(),
        f.strain_rate.is_some(),
        f.max_velocity.is_some() || f.centre.is_some() || f.half_width.is_some(),
    );
    match f.kind.as_str() {
        "quiescent" => {
            unused(velocity, "velocity")?;
            unused(shear, "shear_rate")?;
            unused(strain, "strain_rate")?;
            unused(poiseuille, "max_velocity")
        }
        "uniform" => {
            let v = f.velocity.ok_or_else(|| {
                keys.error(
                    "fibers.flow.velocity",
                    "missing: a \"uniform\" flow needs velocity",
                )
            })?;
            keys.require(
                finite_vec(v),
                "fibers.flow.velocity",
                format!("{v:?}"),
                "allowed: three finite numbers",
            )?;
            unused(shear, "shear_rate")?;
            unused(strain, "strain_rate")?;
            unused(poiseuille, "max_velocity")
        }
        "simple-shear" => {
            need(f.shear_rate, "shear_rate")?;
            unused(velocity, "velocity")?;
            unused(strain, "strain_rate")?;
            unused(poiseuille, "max_velocity")
        }
        "planar-extension" => {
            need(f.strain_rate, "strain_rate")?;
            unused(velocity, "velocity")?;
            unused(shear, "shear_rate")?;
            unused(poiseuille, "max_velocity")
        }
        "poiseuille" => {
            need(f.max_velocity, "max_velocity")?;
            need(f.centre, "centre")?;
            let h = need(f.half_width, "half_width")?;
            keys.require(
                h > 0.0,
                "fibers.flow.half_width",
                h,
                "allowed: a positive number",
            )?;
            unused(velocity, "velocity")?;
            unused(shear, "shear_rate")?;
            unused(strain, "strain_rate")
        }
        other => Err(keys.error(
            "fibers.flow.type",
            format!("{other:?} is not a flow; allowed: {FLOWS}"),
        )),
    }
}

/// Checks one group and returns its number of beads.
fn check_group(group: &FiberGroup, g: usize, keys: &KeyChecker) -> Result<usize, SceneError> {
    let key = |k: &str| format!("fibers.fiber[{g}].{k}");
    keys.require(
        ["straight", "arc", "points"].contains(&group.shape.as_str()),
        &key("shape"),
        format!("{:?}", group.shape),
        &format!("allowed: {SHAPES}"),
    )?;
    for (name, end) in [
        ("first_end", &group.first_end),
        ("last_end", &group.last_end),
    ] {
        keys.require(
            ["free", "clamped", "hinged", "actuated"].contains(&end.as_str()),
            &key(name),
            format!("{end:?}"),
            &format!("allowed: {ENDS}"),
        )?;
    }
    let actuated = group.first_end == "actuated" || group.last_end == "actuated";
    match (&group.actuation, actuated) {
        (Some(motion), true) => {
            for (name, v) in [
                ("actuation.velocity", motion.velocity),
                ("actuation.angular_velocity", motion.angular_velocity),
            ] {
                keys.require(
                    finite_vec(v),
                    &key(name),
                    format!("{v:?}"),
                    "allowed: three finite numbers",
                )?;
            }
            keys.require(
                motion.frequency.is_finite() && motion.frequency >= 0.0,
                &key("actuation.frequency"),
                motion.frequency,
                "allowed: a non-negative finite number",
            )?;
        }
        (None, true) => {
            return Err(keys.error(
                key("actuation"),
                "missing: an \"actuated\" end needs actuation = { velocity, angular_velocity, frequency }",
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
    ] {
        keys.require(
            finite_vec(v),
            &key(name),
            format!("{v:?}"),
            "allowed: three finite numbers",
        )?;
    }
    keys.require(
        group.count >= 1,
        &key("count"),
        group.count,
        "allowed: at least 1",
    )?;
    keys.require(
        finite_vec(group.start),
        &key("start"),
        format!("{:?}", group.start),
        "allowed: three finite numbers",
    )?;
    keys.require(
        finite_vec(group.offset),
        &key("offset"),
        format!("{:?}", group.offset),
        "allowed: three finite numbers",
    )?;
    keys.require(
        nonzero_vec(group.direction),
        &key("direction"),
        format!("{:?}", group.direction),
        "allowed: a non-zero finite vector",
    )?;
    keys.require(
        nonzero_vec(group.binormal),
        &key("binormal"),
        format!("{:?}", group.binormal),
        "allowed: a non-zero finite vector",
    )?;
    let beads = if group.shape == "points" {
        if group.beads.is_some() {
            return Err(keys.error(
                key("beads"),
                "not used with shape = \"points\" (the number of positions is the number of beads); remove it",
            ));
        }
        let points = group.positions.as_ref().ok_or_else(|| {
            keys.error(
                key("positions"),
                "missing: shape = \"points\" needs positions",
            )
        })?;
        for (k, p) in points.iter().enumerate() {
            keys.require(
                finite_vec(*p),
                &key(&format!("positions[{k}]")),
                format!("{p:?}"),
                "allowed: three finite numbers",
            )?;
        }
        points.len()
    } else {
        if group.positions.is_some() {
            return Err(keys.error(
                key("positions"),
                format!(
                    "only used with shape = \"points\", not {:?}; remove it",
                    group.shape
                ),
            ));
        }
        group
            .beads
            .ok_or_else(|| keys.error(key("beads"), "missing: the number of beads per fiber"))?
    };
    keys.require(
        beads >= 2,
        &key("beads"),
        beads,
        "allowed: at least 2 beads per fiber",
    )?;
    if group.shape == "arc" {
        let c = group
            .curvature
            .ok_or_else(|| keys.error(key("curvature"), "missing: an \"arc\" needs curvature"))?;
        keys.require(
            c.is_finite(),
            &key("curvature"),
            c,
            "allowed: a finite number",
        )?;
    } else if group.curvature.is_some() {
        return Err(keys.error(
            key("curvature"),
            "only used with shape = \"arc\"; remove it (rest_curvature sets the rest shape)",
        ));
    }
    if let Some(region) = &group.region {
        if group.shape != "straight" {
            return Err(keys.error(
                key("region"),
                "random placement places straight fibers; use shape = \"straight\"",
            ));
        }
        for k in 0..3 {
            keys.require(
                region.min[k].is_finite()
                    && region.max[k].is_finite()
                    && region.min[k] < region.max[k],
                &key("region"),
                format!("min {:?}, max {:?}", region.min, region.max),
                "allowed: finite corners with min < max on every axis",
            )?;
        }
    }
    if let Some(k) = group.rest_curvature {
        keys.require(
            k.is_finite(),
            &key("rest_curvature"),
            k,
            "allowed: a finite number",
        )?;
        if group.wave.is_some() {
            return Err(keys.error(
                key("rest_curvature"),
                "give either rest_curvature or wave, not both",
            ));
        }
    }
    if let Some(w) = &group.wave {
        keys.require(
            w.amplitude.is_finite(),
            &key("wave.amplitude"),
            w.amplitude,
            "allowed: a finite number",
        )?;
        for (name, v) in [("wavelength", w.wavelength), ("period", w.period)] {
            keys.require(
                v.is_finite() && v > 0.0,
                &key(&format!("wave.{name}")),
                v,
                "allowed: a positive finite number",
            )?;
        }
        keys.require(
            ["first-to-last", "last-to-first"].contains(&w.direction.as_str()),
            &key("wave.direction"),
            format!("{:?}", w.direction),
            &format!("allowed: {WAVE_DIRECTIONS}"),
        )?;
    }
    Ok(beads.saturating_mul(group.count))
}

/// What `silt check` prints for a fiber scene.
pub fn check_report(scene: &FiberScene, system: &FiberSystem) -> String {
    let s = &scene.section;
    let mut out = String::new();
    let fibers = system.fibers.fibers().len();
    let beads = system.fibers.bead_count();
    let rows: usize = system.constraints.iter().map(|c| c.rows()).sum();
    let _ = writeln!(out, "scene: {}", scene.source.display());
    let _ = writeln!(
        out,
        "fibers: {fibers}, beads: {beads} (radius {}), constraint rows: {rows}",
        format_f64(s.bead_radius)
    );
    let _ = writeln!(
        out,
        "links: {}{}; hydrodynamics: {}; multiplier solver: {}",
        s.links,
        s.joint_gap
            .map_or(String::new(), |g| format!(" (gap {})", format_f64(g))),
        s.hydrodynamics,
        match scene.solver() {
            MultiplierSolver::Direct => "direct (Cholesky)".to_string(),
            MultiplierSolver::ConjugateGradient { tolerance, .. } =>
                format!("conjugate gradients, tolerance {tolerance:e}"),
            MultiplierSolver::Auto if rows <= AUTO_DIRECT_ROWS =>
                format!("auto: direct (Cholesky), {rows} <= {AUTO_DIRECT_ROWS} rows"),
            MultiplierSolver::Auto => format!(
                "auto: conjugate gradients with per-fiber preconditioner, {rows} > {AUTO_DIRECT_ROWS} rows"
            ),
        }
    );
    let bending = scene.bending_time();
    let ratio = scene.dt / bending;
    let _ = writeln!(
        out,
        "time step: {} ({} steps to t = {}); bending time η (2a)⁴ / K_b = {}; dt / bending time = {}",
        format_f64(scene.dt),
        scene.end_step,
        format_f64(s.end_time),
        format_f64(bending),
        format_f64(ratio)
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
        let twist_time = system.twist.twist_time(&system.fibers, s.viscosity);
        let _ = writeln!(
            out,
            "twist rigidity {}; twist time 8π η a³ l / K_t = {}; dt / twist time = {} (stable in tests up to 0.13)",
            format_f64(s.twist_rigidity),
            format_f64(twist_time),
            format_f64(scene.dt / twist_time)
        );
    }
    let length = 2.0 * s.bead_radius * beads as f64 / fibers.max(1) as f64;
    let _ = writeln!(out, "mean fiber length: {}", format_f64(length));
    let force = Vec3::from_array(s.bead_force).length();
    if force > 0.0 && !s.rigid && s.bending_rigidity > 0.0 {
        let weight = force / (2.0 * s.bead_radius);
        let _ = writeln!(
            out,
            "elasto-gravitational number B = W L³ / K_b = {} (W = |bead_force| / 2a); settling time η L / W = {}",
            format_f64(weight * length.powi(3) / s.bending_rigidity),
            format_f64(s.viscosity * length / weight)
        );
    }
    if let Some(rate) = s.flow.shear_rate {
        if s.bending_rigidity > 0.0 && !s.rigid {
            let _ = writeln!(
                out,
                "shear: 1/γ̇ = {}; η γ̇ L⁴ / K_b = {}",
                format_f64(1.0 / rate.abs()),
                format_f64(s.viscosity * rate.abs() * length.powi(4) / s.bending_rigidity)
            );
        }
    }
    let _ = writeln!(
        out,
        "output: a frame every {} steps, diagnostics every {} steps, a checkpoint every {} steps",
        scene.output_every, s.output.diagnostics_every, scene.checkpoint_every
    );
    if matches!(scene.solver(), MultiplierSolver::Direct) || rows <= AUTO_DIRECT_ROWS {
        let _ = writeln!(
            out,
            "memory of the direct multiplier matrix: {:.1} MiB",
            (rows * rows * 8) as f64 / (1 << 20) as f64
        );
    }
    out
}
