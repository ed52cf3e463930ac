//! Rod scene files (TOML): a top-level `[rods]` table describing geometrically exact Cosserat rods
//! (`silt_rods`, the seed `001_*.txt`). [`RodScene::parse`] reads and checks one; [`RodScene::build`]
//! makes the rods and their models. Every mistake is one [`SceneError`] naming the file, the key,
//! what was wrong and what is allowed. The format is documented key by key in
//! `docs/scene-format.md` ("Rod scenes"); [`check_report`] is what `silt check` prints.

use crate::csv_series::format_f64;
use crate::scene::{parse_error, read_scene_file, KeyChecker, SceneError};
use glam::DVec3 as Vec3;
use serde::Deserialize;
use silt_rods::boundary::{Boundary, EndMotion, Support};
use silt_rods::dissipation::Damping;
use silt_rods::dynamics::{Inertia, RodModel};
use silt_rods::loads::{EndLoad, Loads};
use silt_rods::radau::RadauOptions;
use silt_rods::rod::{End, Rod, Stiffness};
use silt_rods::verlet::{explicit_step_limit, StepLimit};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

pub const INTEGRATORS: &str = "\"radau\", \"verlet\", \"static\"";
pub const ENDS: &str = "\"free\", \"hinged\", \"clamped\"";
pub const KIRCHHOFF: &str = "\"none\", \"unshearable\", \"inextensible\"";
/// Largest position-Verlet step over the estimated stability limit a scene may ask for: the
/// estimate is sharp for the rotation of thin segments (divergence at 1.0 in tests) and about 20 %
/// low for the axial waves of a chain (stable at 1.2, diverging at 1.4); `silt check` warns above 0.9.
pub const MAX_STEP_OVER_LIMIT: f64 = 1.3;
/// Default Verlet step over the estimated limit.
pub const DEFAULT_STEP_OVER_LIMIT: f64 = 0.5;
/// Largest number of segments in one rod, and in a scene.
const MAX_SEGMENTS: usize = 10_000_000;
/// Largest number of Verlet steps or frames.
const MAX_STEPS: f64 = 1e12;
const MAX_FRAMES: f64 = 1e7;

/// Whether `text` is a rod scene: a TOML document whose only top-level table is `[rods]`.
pub fn is_rod_scene(text: &str) -> bool {
    toml::from_str::<toml::Table>(text).is_ok_and(|t| t.contains_key("rods") && t.len() == 1)
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RodSceneFile {
    rods: RodsSection,
}

/// The `[rods]` table.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RodsSection {
    /// Simulated time (not with `integrator = "static"`).
    pub end_time: Option<f64>,
    #[serde(default = "default_integrator")]
    pub integrator: String,
    /// Position-Verlet step (default: half the estimated stability limit).
    pub time_step: Option<f64>,
    /// Radau IIA tolerances.
    #[serde(default = "default_tolerance")]
    pub relative_tolerance: f64,
    #[serde(default = "default_tolerance")]
    pub absolute_tolerance: f64,
    /// Largest Radau step (default: none).
    pub max_step: Option<f64>,
    /// Uniform gravitational acceleration.
    #[serde(default)]
    pub gravity: [f64; 3],
    /// Load increments of the static solver.
    #[serde(default = "default_load_steps")]
    pub load_steps: usize,
    #[serde(default)]
    pub rod: Vec<RodGroup>,
    #[serde(default)]
    pub output: RodOutputSection,
}

fn default_integrator() -> String {
    "radau".into()
}
fn default_tolerance() -> f64 {
    1e-6
}
fn default_load_steps() -> usize {
    1
}

/// One `[[rods.rod]]` group: `count` straight rods of the same make.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RodGroup {
    pub segments: usize,
    pub length: f64,
    #[serde(default)]
    pub start: [f64; 3],
    /// Tangent d3 of the straight rod.
    #[serde(default = "default_direction")]
    pub direction: [f64; 3],
    /// First director d1 (made perpendicular to the direction).
    #[serde(default = "default_normal")]
    pub normal: [f64; 3],
    /// Circular cross-section.
    pub radius: f64,
    pub density: f64,
    pub youngs_modulus: f64,
    /// Give one of these two.
    pub shear_modulus: Option<f64>,
    pub poisson_ratio: Option<f64>,
    #[serde(default = "default_shear_coefficient")]
    pub shear_coefficient: f64,
    /// Explicit stiffness diagonals in place of the circular section's: `[k G A, k G A, E A]` and
    /// `[E I_1, E I_2, G J]`.
    pub shear_stiffness: Option<[f64; 3]>,
    pub bending_stiffness: Option<[f64; 3]>,
    /// Antman's inner damping: η_E and η_S (Pa s).
    #[serde(default)]
    pub extensional_viscosity: f64,
    #[serde(default)]
    pub shear_viscosity: f64,
    /// Linear drag rate of a surrounding medium (1/s).
    #[serde(default)]
    pub drag: f64,
    /// Rest curvature and twist (body frame: about d1, d2, and the twist rate), uniform.
    #[serde(default)]
    pub rest_curvature: [f64; 3],
    /// Kirchhoff limits by penalty: shear (and extension) stiffness times `kirchhoff_factor`.
    #[serde(default = "default_kirchhoff")]
    pub kirchhoff: String,
    #[serde(default = "default_kirchhoff_factor")]
    pub kirchhoff_factor: f64,
    #[serde(default = "default_end")]
    pub first_end: String,
    #[serde(default = "default_end")]
    pub last_end: String,
    /// Prescribed constant velocity and angular velocity (world) of a held end.
    #[serde(default)]
    pub first_end_velocity: [f64; 3],
    #[serde(default)]
    pub first_end_angular_velocity: [f64; 3],
    #[serde(default)]
    pub last_end_velocity: [f64; 3],
    #[serde(default)]
    pub last_end_angular_velocity: [f64; 3],
    /// How long the ends move (default: the whole run); then they stay where they got to.
    pub first_end_motion_duration: Option<f64>,
    pub last_end_motion_duration: Option<f64>,
    /// Dead force and torque on the last end (world).
    #[serde(default)]
    pub end_force: [f64; 3],
    #[serde(default)]
    pub end_torque: [f64; 3],
    /// Follower force and torque on the last end (components along its d1, d2, d3).
    #[serde(default)]
    pub follower_force: [f64; 3],
    #[serde(default)]
    pub follower_torque: [f64; 3],
    /// Dead force per unit length.
    #[serde(default)]
    pub distributed_force: [f64; 3],
    /// A sideways bow of this amplitude (times the length) along the normal: an imperfection that
    /// lets a buckling rod choose its way.
    #[serde(default)]
    pub imperfection: f64,
    #[serde(default = "default_count")]
    pub count: usize,
    /// Shift between consecutive copies.
    #[serde(default)]
    pub offset: [f64; 3],
}

fn default_direction() -> [f64; 3] {
    [1.0, 0.0, 0.0]
}
fn default_normal() -> [f64; 3] {
    [0.0, 0.0, 1.0]
}
fn default_shear_coefficient() -> f64 {
    1.0
}
fn default_kirchhoff() -> String {
    "none".into()
}
fn default_kirchhoff_factor() -> f64 {
    1e3
}
fn default_end() -> String {
    "free".into()
}
fn default_count() -> usize {
    1
}

/// `[rods.output]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RodOutputSection {
    /// Time between frames (default: end_time / 100).
    pub interval: Option<f64>,
    /// Time between checkpoints (default: 10 frames).
    pub checkpoint_interval: Option<f64>,
    #[serde(default = "default_true")]
    pub vtk: bool,
}

fn default_true() -> bool {
    true
}

impl Default for RodOutputSection {
    fn default() -> Self {
        RodOutputSection {
            interval: None,
            checkpoint_interval: None,
            vtk: true,
        }
    }
}

/// Which integrator a scene asks for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RodIntegrator {
    Radau(RadauOptions),
    /// Fixed step.
    Verlet {
        dt: f64,
    },
    Static {
        load_steps: usize,
    },
}

/// A parsed and checked rod scene.
#[derive(Clone, Debug)]
pub struct RodScene {
    pub source: PathBuf,
    pub section: RodsSection,
    pub integrator: RodIntegrator,
    /// 0 for a static scene.
    pub end_time: f64,
    /// Frames after the initial one (1 for a static scene: the equilibrium).
    pub frames: u64,
    /// Frames between checkpoints.
    pub checkpoint_every: u64,
    /// Verlet steps per frame (1 otherwise).
    pub steps_per_frame: u64,
}

/// One rod ready to run: its configuration and model.
#[derive(Clone, Debug)]
pub struct BuiltRod {
    pub rod: Rod,
    pub model: RodModel,
    /// Index of its `[[rods.rod]]` group.
    pub group: usize,
}

fn finite_vec(v: [f64; 3]) -> bool {
    v.iter().all(|x| x.is_finite())
}

impl RodScene {
    /// Reads, parses and checks a rod scene file.
    pub fn load(path: &Path) -> Result<RodScene, SceneError> {
        RodScene::parse(&read_scene_file(path)?, path)
    }

    /// Parses and checks rod scene text; `source` names it in messages.
    pub fn parse(text: &str, source: &Path) -> Result<RodScene, SceneError> {
        let keys = KeyChecker::new(source);
        if let Ok(table) = toml::from_str::<toml::Table>(text) {
            if let Some(other) = table.keys().find(|k| k.as_str() != "rods") {
                return Err(keys.error(
                    other.as_str(),
                    "a rod scene has only the [rods] table and its sub-tables ([[rods.rod]], \
                     [rods.output])",
                ));
            }
        }
        let deserializer = toml::Deserializer::new(text);
        let file: RodSceneFile = serde_path_to_error::deserialize(deserializer)
            .map_err(|e| parse_error(text, source, e))?;
        check(file.rods, source)
    }

    /// Every rod of the scene with its model, in group order.
    pub fn build(&self) -> Result<Vec<BuiltRod>, SceneError> {
        let keys = KeyChecker::new(&self.source);
        let s = &self.section;
        let mut out = Vec::new();
        for (g, group) in s.rod.iter().enumerate() {
            let key = |k: &str| format!("rods.rod[{g}].{k}");
            let shear = group.shear_modulus.unwrap_or_else(|| {
                group.youngs_modulus / (2.0 * (1.0 + group.poisson_ratio.unwrap_or(0.0)))
            });
            let mut stiffness = Stiffness::circular(
                group.radius,
                group.youngs_modulus,
                shear,
                group.shear_coefficient,
            );
            if let Some(c) = group.shear_stiffness {
                stiffness.shear_extension = Vec3::from_array(c);
            }
            if let Some(c) = group.bending_stiffness {
                stiffness.bending_torsion = Vec3::from_array(c);
            }
            match group.kirchhoff.as_str() {
                "unshearable" => {
                    stiffness.shear_extension.x *= group.kirchhoff_factor;
                    stiffness.shear_extension.y *= group.kirchhoff_factor;
                }
                "inextensible" => stiffness.shear_extension *= group.kirchhoff_factor,
                _ => {}
            }
            for copy in 0..group.count {
                let start =
                    Vec3::from_array(group.start) + copy as f64 * Vec3::from_array(group.offset);
                let mut rod = Rod::straight(
                    group.segments,
                    group.length,
                    start,
                    Vec3::from_array(group.direction),
                    Vec3::from_array(group.normal),
                    stiffness,
                )
                .map_err(|m| keys.error(key("direction"), m))?;
                if group.imperfection != 0.0 {
                    let d1 = silt_rods::fields::directors(rod.orientations[0])[0];
                    rod.bow(group.imperfection * group.length, d1);
                }
                let curvature = Vec3::from_array(group.rest_curvature);
                rod.rest_curvature = vec![curvature; group.segments - 1];
                let mut boundaries = Vec::new();
                for (end, name, velocity, angular, duration) in [
                    (
                        End::First,
                        &group.first_end,
                        group.first_end_velocity,
                        group.first_end_angular_velocity,
                        group.first_end_motion_duration,
                    ),
                    (
                        End::Last,
                        &group.last_end,
                        group.last_end_velocity,
                        group.last_end_angular_velocity,
                        group.last_end_motion_duration,
                    ),
                ] {
                    let support = match name.as_str() {
                        "hinged" => Support::Hinged,
                        "clamped" => Support::Clamped,
                        _ => continue,
                    };
                    let motion = EndMotion {
                        velocity: Vec3::from_array(velocity),
                        angular_velocity: Vec3::from_array(angular),
                        duration: duration.unwrap_or(f64::INFINITY),
                    };
                    boundaries.push(Boundary::new(&mut rod, end, support, motion));
                }
                let mut end_loads = Vec::new();
                if group.end_force != [0.0; 3] || group.end_torque != [0.0; 3] {
                    end_loads.push(EndLoad {
                        end: End::Last,
                        force: Vec3::from_array(group.end_force),
                        torque: Vec3::from_array(group.end_torque),
                        follower: false,
                    });
                }
                if group.follower_force != [0.0; 3] || group.follower_torque != [0.0; 3] {
                    end_loads.push(EndLoad {
                        end: End::Last,
                        force: Vec3::from_array(group.follower_force),
                        torque: Vec3::from_array(group.follower_torque),
                        follower: true,
                    });
                }
                let damping = (group.extensional_viscosity > 0.0 || group.shear_viscosity > 0.0)
                    .then(|| {
                        Damping::circular(
                            group.radius,
                            group.extensional_viscosity,
                            group.shear_viscosity,
                        )
                    });
                let model = RodModel {
                    inertia: Inertia::circular(&rod, group.radius, group.density),
                    damping,
                    drag: group.drag,
                    loads: Loads {
                        gravity: Vec3::from_array(s.gravity),
                        node_forces: Vec::new(),
                        distributed_force: Vec3::from_array(group.distributed_force),
                        end_loads,
                    },
                    boundaries,
                };
                out.push(BuiltRod {
                    rod,
                    model,
                    group: g,
                });
            }
        }
        Ok(out)
    }

    /// The tightest explicit stability limit over the scene's rods.
    pub fn step_limit(rods: &[BuiltRod]) -> StepLimit {
        rods.iter()
            .map(|r| explicit_step_limit(&r.rod, &r.model))
            .min_by(|a, b| a.step.total_cmp(&b.step))
            .unwrap_or(StepLimit {
                step: f64::INFINITY,
                mode: "none",
            })
    }
}

fn check(section: RodsSection, source: &Path) -> Result<RodScene, SceneError> {
    let keys = KeyChecker::new(source);
    let s = &section;
    let positive = |v: f64| v.is_finite() && v > 0.0;
    let non_negative = |v: f64| v.is_finite() && v >= 0.0;
    if !matches!(s.integrator.as_str(), "radau" | "verlet" | "static") {
        return Err(keys.error(
            "rods.integrator",
            format!(
                "{:?} is not an integrator; use one of {INTEGRATORS}",
                s.integrator
            ),
        ));
    }
    let is_static = s.integrator == "static";
    let end_time = match (s.end_time, is_static) {
        (Some(t), _) => {
            keys.require(
                positive(t),
                "rods.end_time",
                t,
                "the end time must be positive and finite",
            )?;
            t
        }
        (None, true) => 0.0,
        (None, false) => {
            return Err(keys.error(
                "rods.end_time",
                "missing: give the simulated time (only a static scene goes without)",
            ))
        }
    };
    keys.require(
        finite_vec(s.gravity),
        "rods.gravity",
        format!("{:?}", s.gravity),
        "the gravity must be finite",
    )?;
    keys.require(
        positive(s.relative_tolerance) && s.relative_tolerance < 1.0,
        "rods.relative_tolerance",
        s.relative_tolerance,
        "the relative tolerance must lie in (0, 1)",
    )?;
    keys.require(
        positive(s.absolute_tolerance),
        "rods.absolute_tolerance",
        s.absolute_tolerance,
        "the absolute tolerance must be positive",
    )?;
    if let Some(m) = s.max_step {
        keys.require(
            positive(m),
            "rods.max_step",
            m,
            "the largest step must be positive",
        )?;
    }
    keys.require(
        (1..=100_000).contains(&s.load_steps),
        "rods.load_steps",
        s.load_steps,
        "between 1 and 100000 load steps",
    )?;
    if s.rod.is_empty() {
        return Err(keys.error("rods.rod", "no rods: add at least one [[rods.rod]] table"));
    }
    let mut total = 0usize;
    for (g, r) in s.rod.iter().enumerate() {
        let key = |k: &str| format!("rods.rod[{g}].{k}");
        keys.require(
            (1..=MAX_SEGMENTS).contains(&r.segments),
            &key("segments"),
            r.segments,
            &format!("a rod has 1 to {MAX_SEGMENTS} segments"),
        )?;
        keys.require(
            (1..=1_000_000).contains(&r.count),
            &key("count"),
            r.count,
            "between 1 and 1000000 copies",
        )?;
        total = total.saturating_add(r.segments.saturating_mul(r.count));
        for (name, v) in [
            ("length", r.length),
            ("radius", r.radius),
            ("density", r.density),
            ("youngs_modulus", r.youngs_modulus),
            ("shear_coefficient", r.shear_coefficient),
        ] {
            keys.require(positive(v), &key(name), v, "must be positive and finite")?;
        }
        for (name, v) in [
            ("shear_stiffness", r.shear_stiffness),
            ("bending_stiffness", r.bending_stiffness),
        ] {
            if let Some(c) = v {
                keys.require(
                    c.iter().all(|x| x.is_finite() && *x > 0.0),
                    &key(name),
                    format!("{c:?}"),
                    "three positive, finite stiffnesses",
                )?;
            }
        }
        keys.require(
            r.imperfection.is_finite() && r.imperfection.abs() <= 0.1,
            &key("imperfection"),
            r.imperfection,
            "the bow is at most 0.1 of the length",
        )?;
        for (name, v) in [
            ("extensional_viscosity", r.extensional_viscosity),
            ("shear_viscosity", r.shear_viscosity),
            ("drag", r.drag),
        ] {
            keys.require(non_negative(v), &key(name), v, "must be zero or positive")?;
        }
        match (r.shear_modulus, r.poisson_ratio) {
            (Some(_), Some(_)) => {
                return Err(keys.error(
                    key("poisson_ratio"),
                    "give shear_modulus or poisson_ratio, not both",
                ))
            }
            (None, None) => {
                return Err(keys.error(
                    key("shear_modulus"),
                    "missing: give shear_modulus or poisson_ratio",
                ))
            }
            (Some(g_mod), None) => keys.require(
                positive(g_mod),
                &key("shear_modulus"),
                g_mod,
                "must be positive and finite",
            )?,
            (None, Some(nu)) => keys.require(
                nu.is_finite() && nu > -1.0 && nu < 0.5,
                &key("poisson_ratio"),
                nu,
                "Poisson's ratio lies in (-1, 0.5)",
            )?,
        }
        if !matches!(
            r.kirchhoff.as_str(),
            "none" | "unshearable" | "inextensible"
        ) {
            return Err(keys.error(
                key("kirchhoff"),
                format!(
                    "{:?} is not a Kirchhoff limit; use one of {KIRCHHOFF}",
                    r.kirchhoff
                ),
            ));
        }
        keys.require(
            r.kirchhoff_factor.is_finite() && r.kirchhoff_factor >= 1.0,
            &key("kirchhoff_factor"),
            r.kirchhoff_factor,
            "the penalty factor must be at least 1",
        )?;
        for (name, end) in [("first_end", &r.first_end), ("last_end", &r.last_end)] {
            if !matches!(end.as_str(), "free" | "hinged" | "clamped") {
                return Err(keys.error(
                    key(name),
                    format!("{end:?} is not an end condition; use one of {ENDS}"),
                ));
            }
        }
        for (name, v, end) in [
            ("first_end_velocity", r.first_end_velocity, &r.first_end),
            (
                "first_end_angular_velocity",
                r.first_end_angular_velocity,
                &r.first_end,
            ),
            ("last_end_velocity", r.last_end_velocity, &r.last_end),
            (
                "last_end_angular_velocity",
                r.last_end_angular_velocity,
                &r.last_end,
            ),
        ] {
            keys.require(
                finite_vec(v),
                &key(name),
                format!("{v:?}"),
                "must be finite",
            )?;
            if v != [0.0; 3] && end == "free" {
                return Err(keys.error(
                    key(name),
                    "a free end cannot be moved: make it \"hinged\" or \"clamped\"",
                ));
            }
        }
        for (name, duration) in [
            ("first_end_motion_duration", r.first_end_motion_duration),
            ("last_end_motion_duration", r.last_end_motion_duration),
        ] {
            if let Some(d) = duration {
                keys.require(
                    d.is_finite() && d >= 0.0,
                    &key(name),
                    d,
                    "the duration must be zero or positive",
                )?;
            }
        }
        if r.first_end_angular_velocity != [0.0; 3] && r.first_end == "hinged"
            || r.last_end_angular_velocity != [0.0; 3] && r.last_end == "hinged"
        {
            return Err(keys.error(
                key("first_end_angular_velocity"),
                "a hinged end turns freely: only a \"clamped\" end can be turned",
            ));
        }
        for (name, v) in [
            ("start", r.start),
            ("offset", r.offset),
            ("rest_curvature", r.rest_curvature),
            ("end_force", r.end_force),
            ("end_torque", r.end_torque),
            ("follower_force", r.follower_force),
            ("follower_torque", r.follower_torque),
            ("distributed_force", r.distributed_force),
        ] {
            keys.require(
                finite_vec(v),
                &key(name),
                format!("{v:?}"),
                "must be finite",
            )?;
        }
        let direction = Vec3::from_array(r.direction);
        keys.require(
            finite_vec(r.direction) && direction.length() > 0.0,
            &key("direction"),
            format!("{:?}", r.direction),
            "the direction must be a finite, non-zero vector",
        )?;
        let normal = Vec3::from_array(r.normal);
        let across = normal - direction.normalize() * direction.normalize().dot(normal);
        keys.require(
            finite_vec(r.normal) && across.length() > 1e-9 * normal.length().max(1e-300),
            &key("normal"),
            format!("{:?}", r.normal),
            "the normal (first director) must be finite and not parallel to the direction",
        )?;
        if is_static && (r.first_end == "free" && r.last_end == "free") {
            return Err(keys.error(
                key("first_end"),
                "a static solve needs a held end (\"hinged\" or \"clamped\"): a free rod has no \
                 equilibrium",
            ));
        }
    }
    keys.require(
        total <= MAX_SEGMENTS,
        "rods.rod",
        total,
        &format!("at most {MAX_SEGMENTS} segments in all"),
    )?;

    let mut scene = RodScene {
        source: source.to_path_buf(),
        section: section.clone(),
        integrator: RodIntegrator::Static {
            load_steps: section.load_steps,
        },
        end_time,
        frames: 1,
        checkpoint_every: 1,
        steps_per_frame: 1,
    };
    let out = &section.output;
    if is_static {
        return Ok(scene);
    }
    let interval = out.interval.unwrap_or(end_time / 100.0);
    keys.require(
        positive(interval) && end_time / interval <= MAX_FRAMES,
        "rods.output.interval",
        interval,
        &format!("the frame interval must be positive, with at most {MAX_FRAMES:e} frames"),
    )?;
    let rods = scene.build()?;
    let limit = RodScene::step_limit(&rods);
    scene.integrator = if section.integrator == "verlet" {
        let dt = section
            .time_step
            .unwrap_or(DEFAULT_STEP_OVER_LIMIT * limit.step);
        keys.require(
            positive(dt),
            "rods.time_step",
            dt,
            "the time step must be positive",
        )?;
        keys.require(
            dt <= MAX_STEP_OVER_LIMIT * limit.step,
            "rods.time_step",
            format_f64(dt),
            &format!(
                "position Verlet is unstable above the stability limit of the {} mode, estimated {} \
                 (allowed up to {MAX_STEP_OVER_LIMIT} of it); use a smaller step or integrator = \
                 \"radau\"",
                limit.mode,
                format_f64(limit.step)
            ),
        )?;
        keys.require(
            end_time / dt <= MAX_STEPS,
            "rods.time_step",
            dt,
            &format!("at most {MAX_STEPS:e} steps"),
        )?;
        // Whole steps per frame; the frame interval rounds to them.
        scene.steps_per_frame = ((interval / dt).round() as u64).max(1);
        RodIntegrator::Verlet { dt }
    } else {
        if section.time_step.is_some() {
            return Err(keys.error(
                "rods.time_step",
                "Radau IIA chooses its own steps: set relative_tolerance / absolute_tolerance (or \
                 max_step) instead",
            ));
        }
        RodIntegrator::Radau(RadauOptions {
            relative_tolerance: section.relative_tolerance,
            absolute_tolerance: section.absolute_tolerance,
            max_step: section.max_step.unwrap_or(f64::INFINITY),
            ..RadauOptions::default()
        })
    };
    let frame_time = match scene.integrator {
        RodIntegrator::Verlet { dt } => dt * scene.steps_per_frame as f64,
        _ => interval,
    };
    scene.frames = ((end_time / frame_time).ceil() as u64).max(1);
    let checkpoint = out.checkpoint_interval.unwrap_or(10.0 * frame_time);
    keys.require(
        positive(checkpoint),
        "rods.output.checkpoint_interval",
        checkpoint,
        "must be positive",
    )?;
    scene.checkpoint_every = ((checkpoint / frame_time).round() as u64).max(1);
    Ok(scene)
}

impl RodScene {
    /// Time of frame k (frame 0 is the initial state).
    pub fn frame_time(&self, frame: u64) -> f64 {
        match self.integrator {
            RodIntegrator::Verlet { dt } => {
                ((frame * self.steps_per_frame) as f64 * dt).min(self.end_time)
            }
            RodIntegrator::Radau(_) => {
                let interval = self
                    .section
                    .output
                    .interval
                    .unwrap_or(self.end_time / 100.0);
                (frame as f64 * interval).min(self.end_time)
            }
            RodIntegrator::Static { .. } => 0.0,
        }
    }
}

/// What `silt check` prints for a rod scene.
pub fn check_report(scene: &RodScene, rods: &[BuiltRod]) -> String {
    let mut out = String::new();
    let segments: usize = rods.iter().map(|r| r.rod.segments()).sum();
    let _ = writeln!(
        out,
        "rods: {} in {} group(s), {segments} segments in all",
        rods.len(),
        scene.section.rod.len()
    );
    for (g, group) in scene.section.rod.iter().enumerate() {
        let Some(built) = rods.iter().find(|r| r.group == g) else {
            continue;
        };
        let rod = &built.rod;
        let h = group.length / group.segments as f64;
        let c_g = rod.stiffness.shear_extension;
        let c_k = rod.stiffness.bending_torsion;
        let mass: f64 = built.model.inertia.node_masses.iter().sum();
        let wave_speed = (group.youngs_modulus / group.density).sqrt();
        // First bending mode of a cantilever, (1.875)² sqrt(EI / (ρ A L⁴)).
        let area = std::f64::consts::PI * group.radius * group.radius;
        let first_mode =
            1.875f64.powi(2) * (c_k.x / (group.density * area * group.length.powi(4))).sqrt();
        let limit = explicit_step_limit(rod, &built.model);
        let _ = writeln!(
            out,
            "  group {g}: {} x {} segments of {} m (L/r = {}), mass {} kg each",
            group.count,
            group.segments,
            format_f64(h),
            format_f64(group.length / group.radius),
            format_f64(mass)
        );
        let _ = writeln!(
            out,
            "    stiffness: EA {}, kGA {}, EI {}, GJ {}; axial wave speed {} m/s",
            format_f64(c_g.z),
            format_f64(c_g.x),
            format_f64(c_k.x),
            format_f64(c_k.z),
            format_f64(wave_speed)
        );
        let _ = writeln!(
            out,
            "    first cantilever bending frequency {} rad/s (period {} s)",
            format_f64(first_mode),
            format_f64(2.0 * std::f64::consts::PI / first_mode)
        );
        let _ = writeln!(
            out,
            "    explicit stability limit (estimate): {} s, set by the {} mode",
            format_f64(limit.step),
            limit.mode
        );
        // The discrete curvature (2/h) sin(θ/2) stops passing on more moment at a turn of π/2 between
        // neighbouring segments: warn when an end's turning or the rest curvature asks for a lot.
        let end_turn = [
            (
                group.first_end_angular_velocity,
                group.first_end_motion_duration,
            ),
            (
                group.last_end_angular_velocity,
                group.last_end_motion_duration,
            ),
        ]
        .iter()
        .map(|(w, d)| {
            Vec3::from_array(*w).length() * d.unwrap_or(scene.end_time).min(scene.end_time)
        })
        .sum::<f64>();
        let rest_turn = Vec3::from_array(group.rest_curvature).length() * h;
        let per_segment = end_turn / group.segments as f64 + rest_turn;
        if per_segment > 0.5 {
            let _ = writeln!(
                out,
                "    warning: up to {} rad of turn between neighbouring segments (prescribed end rotation \
                 and rest curvature); the discrete curvature (2/h) sin(theta/2) is 4 % soft at 0.5 rad \
                 and stops resisting at pi/2: use more segments",
                format_f64(per_segment)
            );
        }
        if group.kirchhoff != "none" {
            let _ = writeln!(
                out,
                "    Kirchhoff limit \"{}\" by penalty: stiffness x {} (the constraint holds to about \
                 1/{} of the elastic strain)",
                group.kirchhoff,
                format_f64(group.kirchhoff_factor),
                format_f64(group.kirchhoff_factor)
            );
        }
    }
    let limit = RodScene::step_limit(rods);
    match scene.integrator {
        RodIntegrator::Verlet { dt } => {
            let _ = writeln!(
                out,
                "integrator: position Verlet, dt {} s = {:.3} of the stability limit, {} steps to t = {}",
                format_f64(dt),
                dt / limit.step,
                format_f64((scene.end_time / dt).ceil()),
                format_f64(scene.end_time)
            );
            if dt > 0.9 * limit.step {
                let _ = writeln!(
                    out,
                    "warning: the step is close to the estimated stability limit; a diverging run \
                     stops with a message (keeping its last good frame)"
                );
            }
            if scene.end_time / limit.step > 1e6 {
                let _ = writeln!(
                    out,
                    "recommended: integrator = \"radau\" (Verlet needs {} steps here)",
                    format_f64((scene.end_time / limit.step).ceil())
                );
            }
        }
        RodIntegrator::Radau(options) => {
            let _ = writeln!(
                out,
                "integrator: Radau IIA (order 5, adaptive), rtol {}, atol {}; an explicit run would \
                 need at least {} steps to t = {}",
                format_f64(options.relative_tolerance),
                format_f64(options.absolute_tolerance),
                format_f64((scene.end_time / limit.step).ceil()),
                format_f64(scene.end_time)
            );
            if scene.end_time / limit.step < 1e4 {
                let _ = writeln!(
                    out,
                    "note: the explicit limit is not restrictive here; integrator = \"verlet\" may \
                     be cheaper"
                );
            }
        }
        RodIntegrator::Static { load_steps } => {
            let _ = writeln!(
                out,
                "integrator: static equilibrium (Newton), {load_steps} load step(s)"
            );
        }
    }
    let _ = writeln!(
        out,
        "output: {} frame(s){}",
        scene.frames + 1,
        if scene.section.output.vtk {
            ", VTK polylines (rods.pvd)"
        } else {
            ""
        }
    );
    out
}
