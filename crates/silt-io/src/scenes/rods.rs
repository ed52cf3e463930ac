//! Rod scenes: a top-level `[rods]` table of geometrically exact Cosserat rods (`silt_rods`, the seed
//! `001_*.txt`), advanced by Radau IIA, position Verlet or the static solver. The format is documented
//! key by key in `docs/scene-format.md` ("Rod scenes").

use super::keys::{num, Keys, Range, SceneError};
use super::output::{fits_in_memory, fixed_steps, OutputSection};
use super::{SceneFile, SceneKind};
use crate::run::RunSettings;
use serde::Deserialize;
use silt_core::model::Model;
use silt_core::Vec3;
use silt_rods::boundary::{Boundary, EndMotion, Support};
use silt_rods::dissipation::Damping;
use silt_rods::dynamics::{Inertia, RodModel, RodMotion};
use silt_rods::loads::{EndLoad, Loads};
use silt_rods::model::{Integrator, Rods};
use silt_rods::radau::RadauOptions;
use silt_rods::rod::{End, Rod, Stiffness};
use silt_rods::verlet::{explicit_step_limit, StepLimit, DEFAULT_STEP_OVER_LIMIT};
use std::fmt::Write as _;
use std::path::PathBuf;

/// Largest number of segments in a scene.
const MAX_SEGMENTS: usize = 10_000_000;
/// Estimated bytes per segment: Radau IIA's Jacobian and its real and complex band factorisations;
/// position Verlet's state and workspace.
const RADAU_BYTES_PER_SEGMENT: f64 = 6144.0;
const VERLET_BYTES_PER_SEGMENT: f64 = 1024.0;

/// The `[rods]` table.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RodsSection {
    /// Simulated time (not with `integrator = "static"`).
    pub end_time: Option<f64>,
    pub integrator: Option<String>,
    /// Position-Verlet step (default: half the estimated stability limit).
    pub time_step: Option<f64>,
    /// Radau IIA tolerances (default 1e-6 each) and largest step (default none).
    pub relative_tolerance: Option<f64>,
    pub absolute_tolerance: Option<f64>,
    pub max_step: Option<f64>,
    /// Uniform gravitational acceleration.
    #[serde(default)]
    pub gravity: [f64; 3],
    /// The static solver's first load increment is 1 / load_steps (default 1); later ones adapt.
    pub load_steps: Option<usize>,
    #[serde(default)]
    pub rod: Vec<RodGroup>,
    #[serde(default)]
    pub output: OutputSection,
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
    #[serde(default = "default_one")]
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
    /// Static scenes: the displacement and rotation vector (world) of a held end at the end of the
    /// load path (a load path, e.g. an end twisted by a given angle).
    #[serde(default)]
    pub first_end_displacement: [f64; 3],
    #[serde(default)]
    pub first_end_rotation: [f64; 3],
    #[serde(default)]
    pub last_end_displacement: [f64; 3],
    #[serde(default)]
    pub last_end_rotation: [f64; 3],
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
    /// Initial velocities of the nodes (world frame), one per node (segments + 1); default at rest.
    pub node_velocities: Option<Vec<[f64; 3]>>,
    /// Initial angular velocity of every segment in its body frame (components along d1, d2, d3).
    #[serde(default)]
    pub spin: [f64; 3],
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
fn default_one() -> f64 {
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

/// A checked rod scene: the rods with their models, the integrator and the output schedule.
#[derive(Clone, Debug)]
pub struct RodScene {
    pub source: PathBuf,
    pub section: RodsSection,
    pub integrator: Integrator,
    /// The simulated time (1 for a static scene: the load goes from 0 to 1).
    pub end_time: f64,
    pub settings: RunSettings,
    /// Every rod with its model and the index of its group.
    pub rods: Vec<(Rod, RodModel, usize)>,
}

/// How a `[[rods.rod]]` end is held.
const SUPPORTS: [(&str, Option<Support>); 3] = [
    ("free", None),
    ("hinged", Some(Support::Hinged)),
    ("clamped", Some(Support::Clamped)),
];

impl RodScene {
    /// Parses and checks the text of a rod scene; `source` names it in messages.
    pub fn parse(text: &str, source: &std::path::Path) -> Result<RodScene, SceneError> {
        super::parse_kind(text, source, "rod", |scene| match scene {
            super::Scene::Rods(s) => Some(s),
            _ => None,
        })
    }

    /// Checks the `[rods]` table of `file` and builds its rods.
    pub fn new(file: SceneFile, keys: Keys) -> Result<RodScene, SceneError> {
        let s = file.rods.expect("a rod scene has [rods]");
        let name = s.integrator.as_deref().unwrap_or("radau");
        let kind = keys.choice(
            "rods.integrator",
            name,
            &[("radau", 0), ("verlet", 1), ("static", 2)],
        )?;
        let is_static = kind == 2;
        keys.vector("rods.gravity", s.gravity)?;
        let only = |key: &str, present: bool, which: &str| {
            keys.forbid(
                present,
                &format!("rods.{key}"),
                &format!("applies to integrator = {which} only; remove it"),
            )
        };
        only(
            "time_step",
            s.time_step.is_some() && kind != 1,
            "\"verlet\"",
        )?;
        for (key, present) in [
            ("relative_tolerance", s.relative_tolerance.is_some()),
            ("absolute_tolerance", s.absolute_tolerance.is_some()),
            ("max_step", s.max_step.is_some()),
        ] {
            only(key, present && kind != 0, "\"radau\"")?;
        }
        only(
            "load_steps",
            s.load_steps.is_some() && !is_static,
            "\"static\"",
        )?;
        keys.forbid(
            is_static && s.end_time.is_some(),
            "rods.end_time",
            "a static solve has no time (it goes from the unloaded rod at 0 to its equilibrium at \
             1); remove end_time",
        )?;
        let end_time = match s.end_time {
            Some(t) => keys.number("rods.end_time", t, Range::Positive)?,
            None if is_static => 1.0,
            None => {
                return Err(keys.missing(
                    "rods.end_time",
                    "give the simulated time (only a static scene goes without)",
                ))
            }
        };
        s.output.allow(&keys, "rods.output", &[], "a rod scene")?;
        let mut settings = s.output.settings(&keys, "rods.output", end_time)?;
        if is_static {
            keys.forbid(
                s.output.interval.is_some() || s.output.checkpoint_interval.is_some(),
                "rods.output.interval",
                "a static solve writes the unloaded rod and its equilibrium; remove the interval",
            )?;
            settings.interval = 1.0;
        }
        if s.rod.is_empty() {
            return Err(keys.missing("rods.rod", "add at least one [[rods.rod]] table"));
        }
        let mut total = 0usize;
        for (g, group) in s.rod.iter().enumerate() {
            total = total.saturating_add(check_group(&keys, g, group, is_static, end_time)?);
        }
        keys.require(
            total <= MAX_SEGMENTS,
            "rods.rod",
            format!("{total} segments"),
            &format!("at most {MAX_SEGMENTS} segments in all"),
        )?;
        let per_segment = if kind == 0 {
            RADAU_BYTES_PER_SEGMENT
        } else {
            VERLET_BYTES_PER_SEGMENT
        };
        fits_in_memory(&keys, "rods.rod", total as f64 * per_segment, "the rods")?;
        let rods = build_rods(&keys, &s)?;
        let limit = step_limit(&rods);
        let integrator = match kind {
            0 => {
                let defaults = RadauOptions::default();
                let rtol = s.relative_tolerance.unwrap_or(defaults.relative_tolerance);
                let atol = s.absolute_tolerance.unwrap_or(defaults.absolute_tolerance);
                Integrator::Radau(RadauOptions {
                    relative_tolerance: keys.number(
                        "rods.relative_tolerance",
                        rtol,
                        Range::Open(0.0, 1.0),
                    )?,
                    absolute_tolerance: keys.number(
                        "rods.absolute_tolerance",
                        atol,
                        Range::Positive,
                    )?,
                    max_step: keys
                        .optional("rods.max_step", s.max_step, Range::Positive)?
                        .unwrap_or(f64::INFINITY),
                    ..defaults
                })
            }
            1 => {
                let dt = s.time_step.unwrap_or(DEFAULT_STEP_OVER_LIMIT * limit.step);
                keys.number("rods.time_step", dt, Range::Positive)?;
                keys.require(
                    dt <= limit.largest_step(),
                    "rods.time_step",
                    num(dt),
                    &format!(
                        "position Verlet is unstable above the stability limit of the {} mode, \
                         estimated {} (allowed up to {} of it); use a smaller step or integrator = \
                         \"radau\"",
                        limit.mode,
                        num(limit.step),
                        num(limit.largest_step() / limit.step)
                    ),
                )?;
                fixed_steps(&keys, "rods.time_step", dt, end_time)?;
                Integrator::Verlet { dt }
            }
            _ => {
                let load_steps = s.load_steps.unwrap_or(1);
                keys.require(
                    (1..=100_000).contains(&load_steps),
                    "rods.load_steps",
                    load_steps,
                    "between 1 and 100000 load steps",
                )?;
                Integrator::Static { load_steps }
            }
        };
        Ok(RodScene {
            source: keys.file.to_path_buf(),
            section: s,
            integrator,
            end_time,
            settings,
            rods,
        })
    }
}

/// Checks one group; returns its number of segments.
fn check_group(
    keys: &Keys,
    g: usize,
    r: &RodGroup,
    is_static: bool,
    end_time: f64,
) -> Result<usize, SceneError> {
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
    for (name, v) in [
        ("length", r.length),
        ("radius", r.radius),
        ("density", r.density),
        ("youngs_modulus", r.youngs_modulus),
        ("shear_coefficient", r.shear_coefficient),
    ] {
        keys.number(&key(name), v, Range::Positive)?;
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
    keys.number_note(
        &key("imperfection"),
        r.imperfection,
        Range::Closed(-0.1, 0.1),
        "the bow is at most 0.1 of the length",
    )?;
    for (name, v) in [
        ("extensional_viscosity", r.extensional_viscosity),
        ("shear_viscosity", r.shear_viscosity),
        ("drag", r.drag),
    ] {
        keys.number(&key(name), v, Range::NonNegative)?;
    }
    match (r.shear_modulus, r.poisson_ratio) {
        (Some(_), Some(_)) => {
            return Err(keys.error(
                key("poisson_ratio"),
                "give shear_modulus or poisson_ratio, not both",
            ))
        }
        (None, None) => {
            return Err(keys.missing(key("shear_modulus"), "give shear_modulus or poisson_ratio"))
        }
        (Some(g_mod), None) => {
            keys.number(&key("shear_modulus"), g_mod, Range::Positive)?;
        }
        (None, Some(nu)) => {
            keys.number(&key("poisson_ratio"), nu, Range::Open(-1.0, 0.5))?;
        }
    }
    keys.choice(
        &key("kirchhoff"),
        &r.kirchhoff,
        &[("none", ()), ("unshearable", ()), ("inextensible", ())],
    )?;
    keys.number(
        &key("kirchhoff_factor"),
        r.kirchhoff_factor,
        Range::AtLeast(1.0),
    )?;
    let first = keys.choice(&key("first_end"), &r.first_end, &SUPPORTS)?;
    let last = keys.choice(&key("last_end"), &r.last_end, &SUPPORTS)?;
    // End motion: velocities in dynamic runs, displacements and rotations along a static load
    // path; (key, value, support, along the static path, a turn).
    for (name, v, support, path, turn) in [
        (
            "first_end_velocity",
            r.first_end_velocity,
            first,
            false,
            false,
        ),
        (
            "first_end_angular_velocity",
            r.first_end_angular_velocity,
            first,
            false,
            true,
        ),
        ("last_end_velocity", r.last_end_velocity, last, false, false),
        (
            "last_end_angular_velocity",
            r.last_end_angular_velocity,
            last,
            false,
            true,
        ),
        (
            "first_end_displacement",
            r.first_end_displacement,
            first,
            true,
            false,
        ),
        (
            "first_end_rotation",
            r.first_end_rotation,
            first,
            true,
            true,
        ),
        (
            "last_end_displacement",
            r.last_end_displacement,
            last,
            true,
            false,
        ),
        ("last_end_rotation", r.last_end_rotation, last, true, true),
    ] {
        let moving = keys.vector(&key(name), v)? != Vec3::ZERO;
        keys.forbid(
            moving && support.is_none(),
            &key(name),
            "a free end cannot be moved: make it \"hinged\" or \"clamped\"",
        )?;
        // The key of the other kind for the same end and motion.
        let (end, _) = name.split_once("_end_").unwrap_or((name, ""));
        let counterpart = match (path, turn) {
            (false, false) => "displacement",
            (false, true) => "rotation",
            (true, false) => "velocity",
            (true, true) => "angular_velocity",
        };
        keys.forbid(
            moving && is_static && !path,
            &key(name),
            &format!(
                "a static solve has no time: give where the end gets to along its load path, \
                 {end}_end_{counterpart}, instead"
            ),
        )?;
        keys.forbid(
            moving && !is_static && path,
            &key(name),
            &format!(
                "an end displacement or rotation is reached along a static load path; a dynamic \
                 run moves an end by its {end}_end_{counterpart} instead"
            ),
        )?;
        keys.forbid(
            moving && turn && support == Some(Support::Hinged),
            &key(name),
            "a hinged end turns freely: only a \"clamped\" end can be turned",
        )?;
    }
    for (name, duration) in [
        ("first_end_motion_duration", r.first_end_motion_duration),
        ("last_end_motion_duration", r.last_end_motion_duration),
    ] {
        keys.optional(&key(name), duration, Range::NonNegative)?;
        keys.forbid(
            duration.is_some() && is_static,
            &key(name),
            "a static solve has no time: its end displacements and rotations are reached at the \
             end of the load path; remove it",
        )?;
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
        keys.vector(&key(name), v)?;
    }
    let direction = keys.direction(&key("direction"), r.direction)?;
    let normal = keys.vector(&key("normal"), r.normal)?;
    let across = normal - direction * direction.dot(normal);
    keys.require(
        across.length() > 1e-9 * normal.length().max(1e-300),
        &key("normal"),
        format!("{:?}", r.normal),
        "the normal (first director) must not be parallel to the direction",
    )?;
    keys.forbid(
        is_static && first.is_none() && last.is_none(),
        &key("first_end"),
        "a static solve needs a held end (\"hinged\" or \"clamped\"): a free rod has no equilibrium",
    )?;
    if let Some(v) = &r.node_velocities {
        keys.require(
            v.len() == r.segments + 1,
            &key("node_velocities"),
            format!("{} velocities", v.len()),
            &format!("one per node: segments + 1 = {}", r.segments + 1),
        )?;
        for (j, u) in v.iter().enumerate() {
            keys.vector(&key(&format!("node_velocities[{j}]")), *u)?;
        }
    }
    keys.vector(&key("spin"), r.spin)?;
    keys.forbid(
        is_static && (r.node_velocities.is_some() || r.spin != [0.0; 3]),
        &key(if r.spin != [0.0; 3] {
            "spin"
        } else {
            "node_velocities"
        }),
        "a static solve starts from rest and has no time to move in; remove it",
    )?;
    let turn = turn_per_segment(r, end_time);
    let turned_end = if r.last_end_angular_velocity != [0.0; 3] {
        "last_end_angular_velocity"
    } else if r.first_end_angular_velocity != [0.0; 3] {
        "first_end_angular_velocity"
    } else if r.last_end_rotation != [0.0; 3] {
        "last_end_rotation"
    } else if r.first_end_rotation != [0.0; 3] {
        "first_end_rotation"
    } else {
        "rest_curvature"
    };
    keys.require(
        turn <= std::f64::consts::PI,
        &key(turned_end),
        format!("{} rad between neighbouring segments", num(turn)),
        "at most pi: the prescribed end rotations (spread over the segments) and the rest curvature \
         ask for more turn between neighbouring segments than the discrete rod can hold (its \
         curvature (2/h) sin(theta/2) stops resisting at pi/2); use more segments, a slower or \
         shorter end rotation, or less curvature",
    )?;
    Ok(r.segments.saturating_mul(r.count))
}

/// The largest turn between neighbouring segments (rad) that the prescribed end rotations (dynamic
/// or along a static load path), spread evenly over the segments, and the rest curvature ask for. The discrete curvature
/// (2/h) sin(θ/2) stops passing on more moment at a turn of π/2.
fn turn_per_segment(r: &RodGroup, end_time: f64) -> f64 {
    let end_turn: f64 = [
        (r.first_end_angular_velocity, r.first_end_motion_duration),
        (r.last_end_angular_velocity, r.last_end_motion_duration),
    ]
    .iter()
    .map(|(w, d)| Vec3::from_array(*w).length() * d.unwrap_or(end_time).min(end_time))
    .sum::<f64>()
        + Vec3::from_array(r.first_end_rotation).length()
        + Vec3::from_array(r.last_end_rotation).length();
    let h = r.length / r.segments as f64;
    end_turn / r.segments as f64 + Vec3::from_array(r.rest_curvature).length() * h
}

fn add(a: [f64; 3], b: [f64; 3]) -> Vec3 {
    Vec3::from_array(a) + Vec3::from_array(b)
}

/// Every rod of the scene with its model and group, in group order.
fn build_rods(keys: &Keys, s: &RodsSection) -> Result<Vec<(Rod, RodModel, usize)>, SceneError> {
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
                // Along the given normal made perpendicular to the direction (exactly the normal when
                // it is already: the frame's d1 may differ from it in the last bit).
                let d3 = Vec3::from_array(group.direction).normalize();
                let normal = Vec3::from_array(group.normal);
                let d1 = (normal - d3 * d3.dot(normal)).normalize();
                rod.bow(group.imperfection * group.length, d1);
            }
            let curvature = Vec3::from_array(group.rest_curvature);
            rod.rest_curvature = vec![curvature; group.segments - 1];
            let mut boundaries = Vec::new();
            // A static load path runs from time 0 to 1: an end displaced by u and turned by θ
            // moves at velocity u and angular velocity θ (the dynamic keys are refused there).
            for (end, name, velocity, angular, duration) in [
                (
                    End::First,
                    &group.first_end,
                    add(group.first_end_velocity, group.first_end_displacement),
                    add(group.first_end_angular_velocity, group.first_end_rotation),
                    group.first_end_motion_duration,
                ),
                (
                    End::Last,
                    &group.last_end,
                    add(group.last_end_velocity, group.last_end_displacement),
                    add(group.last_end_angular_velocity, group.last_end_rotation),
                    group.last_end_motion_duration,
                ),
            ] {
                if let Some(support) = keys.choice(&key("first_end"), name, &SUPPORTS)? {
                    let motion = EndMotion {
                        velocity,
                        angular_velocity: angular,
                        duration: duration.unwrap_or(f64::INFINITY),
                    };
                    boundaries.push(Boundary::new(&mut rod, end, support, motion));
                }
            }
            let mut end_loads = Vec::new();
            for (force, torque, follower) in [
                (group.end_force, group.end_torque, false),
                (group.follower_force, group.follower_torque, true),
            ] {
                if force != [0.0; 3] || torque != [0.0; 3] {
                    end_loads.push(EndLoad {
                        end: End::Last,
                        force: Vec3::from_array(force),
                        torque: Vec3::from_array(torque),
                        follower,
                    });
                }
            }
            let damping =
                (group.extensional_viscosity > 0.0 || group.shear_viscosity > 0.0).then(|| {
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
            out.push((rod, model, g));
        }
    }
    Ok(out)
}

/// The tightest explicit stability limit over the rods.
fn step_limit(rods: &[(Rod, RodModel, usize)]) -> StepLimit {
    rods.iter()
        .map(|(rod, model, _)| explicit_step_limit(rod, model))
        .min_by(|a, b| a.step.total_cmp(&b.step))
        .unwrap_or(StepLimit {
            step: f64::INFINITY,
            mode: "none",
        })
}

impl RodScene {
    /// The scene's rods, each with its initial motion, advanced by `integrator`.
    pub fn build_with(&self, integrator: Integrator) -> Rods {
        let rods = self
            .rods
            .iter()
            .map(|(rod, model, g)| {
                let group = &self.section.rod[*g];
                let mut motion = RodMotion::rest(rod);
                if let Some(v) = &group.node_velocities {
                    motion.velocities = v.iter().map(|u| Vec3::from_array(*u)).collect();
                }
                motion.angular_velocities = vec![Vec3::from_array(group.spin); rod.segments()];
                (rod.clone(), motion, model.clone())
            })
            .collect();
        Rods::new(rods, integrator)
    }
}

impl SceneKind for RodScene {
    type Model = Rods;

    fn settings(&self) -> RunSettings {
        self.settings
    }

    fn build(&self) -> Result<Rods, SceneError> {
        Ok(self.build_with(self.integrator))
    }

    fn check(&self) -> Result<String, SceneError> {
        Ok(report(self))
    }

    fn describe(&self, model: &Rods) -> String {
        let integrator = match self.integrator {
            Integrator::Radau(o) => format!(
                "Radau IIA (rtol {:e}, atol {:e})",
                o.relative_tolerance, o.absolute_tolerance
            ),
            Integrator::Verlet { dt } => format!("position Verlet (dt {dt:e})"),
            Integrator::Static { load_steps } => {
                format!("static equilibrium (first load increment 1/{load_steps}, adaptive)")
            }
        };
        format!(
            "{} rod(s), {} segments, {integrator}",
            model.len(),
            model.size().0
        )
    }
}

/// Wall time of the Radau IIA probe at most (s); the Verlet probe takes a fifth of it.
const PROBE_SECONDS: f64 = 1.0;

/// Probes are skipped above this many segments (their cost and memory grow with it).
const PROBE_SEGMENTS: usize = 20_000;

/// The integrator advice of `silt check`, from what damps the stiffest mode and from short probe runs
/// of both integrators on this scene, on this machine (issue 21). Radau IIA pays when its steps are
/// far above the explicit limit, which needs the fast modes damped or hardly excited; an undamped
/// rod under a sudden load keeps them ringing, and Radau (each step 85-230 times a Verlet step) then
/// takes steps only 10-300 times the explicit limit. Rather than guess that ratio, the probes measure
/// it: Verlet for a fifth of `PROBE_SECONDS` (its cost per step is uniform), Radau until
/// `PROBE_SECONDS` or the end, extrapolated linearly (an upper estimate: its steps grow as the start's
/// transients die down).
fn advise(out: &mut String, scene: &RodScene, verlet_dt: f64, radau: RadauOptions) {
    use std::fmt::Write;
    let end = scene.end_time;
    // What damps the stiffest mode: drag (rate nu/2) and the inner viscosity of its kind (rate
    // tau omega^2 / 2, tau = viscous over elastic modulus).
    let slowest_decay = scene
        .rods
        .iter()
        .map(|(rod, model, _)| {
            let limit = explicit_step_limit(rod, model);
            let omega = 2.0 / limit.step;
            let tau = model.damping.map_or(0.0, |d| {
                let (viscous, elastic) = match limit.mode {
                    "axial" => (d.shear_extension.z, rod.stiffness.shear_extension.z),
                    "torsion" => (d.bending_torsion.z, rod.stiffness.bending_torsion.z),
                    _ => (d.shear_extension.x, rod.stiffness.shear_extension.x),
                };
                viscous / elastic
            });
            0.5 * model.drag + 0.5 * tau * omega * omega
        })
        .fold(f64::INFINITY, f64::min);
    let _ = if slowest_decay > 0.0 {
        writeln!(
            out,
            "fast modes: the stiffest decays at {}/s at least (e-fold time {} s, {} of the run)",
            num(slowest_decay),
            num(1.0 / slowest_decay),
            num(1.0 / (slowest_decay * end))
        )
    } else {
        writeln!(
            out,
            "fast modes: undamped (no drag or inner viscosity): what a sudden load or the start \
             excites keeps ringing, and Radau IIA must follow or damp it with its steps"
        )
    };
    let segments: usize = scene.rods.iter().map(|r| r.0.segments()).sum();
    if segments > PROBE_SEGMENTS {
        let _ = writeln!(
            out,
            "integrator estimate: skipped above {PROBE_SEGMENTS} segments; Radau IIA pays when its \
             steps are far above the explicit limit (the fast modes damped or hardly excited)"
        );
        return;
    }
    let Some((verlet, radau)) = probe(scene, verlet_dt, radau) else {
        let _ = writeln!(out, "integrator estimate: a probe run failed; none made");
        return;
    };
    let _ = writeln!(
        out,
        "integrator estimate (probes of this scene on this machine): position Verlet about {} s of \
         wall time ({} steps of {} s, {} us each); Radau IIA about {} s (t = {} reached in {} s, \
         mean step {} times the explicit limit; an upper estimate, its steps grow as the start's \
         transients die down)",
        num(verlet.total),
        num((end / verlet_dt).ceil()),
        num(verlet_dt),
        num(verlet.seconds_per_step * 1e6),
        num(radau.total),
        num(radau.reached),
        num(radau.seconds),
        num(radau.mean_step_over_limit),
    );
    let ratio = radau.total / verlet.total;
    let _ = if ratio < 0.5 {
        writeln!(
            out,
            "recommended: integrator = \"radau\" ({} times cheaper by the estimate)",
            num(1.0 / ratio)
        )
    } else if ratio > 2.0 {
        writeln!(
            out,
            "recommended: integrator = \"verlet\" ({} times cheaper by the estimate)",
            num(ratio)
        )
    } else {
        writeln!(
            out,
            "recommended: either (the estimates are within a factor 2; Radau IIA's grows less \
             than linearly with the run's length)"
        )
    };
}

/// A probe's measure: estimated wall time of the whole run, and what it rests on.
struct ProbeResult {
    total: f64,
    seconds_per_step: f64,
    reached: f64,
    seconds: f64,
    mean_step_over_limit: f64,
}

/// Short runs of both integrators on `scene` (see [`advise`]).
fn probe(
    scene: &RodScene,
    verlet_dt: f64,
    radau: RadauOptions,
) -> Option<(ProbeResult, ProbeResult)> {
    use silt_core::model::{Horizon, Model};
    use std::time::Instant;
    let end = scene.end_time;
    let limit = step_limit(&scene.rods).step;
    let mut verlet = scene.build_with(Integrator::Verlet { dt: verlet_dt });
    let start = Instant::now();
    let mut steps = 0u64;
    let budget = (end / verlet_dt).ceil() as u64;
    while steps < budget && start.elapsed().as_secs_f64() < 0.2 * PROBE_SECONDS {
        let chunk = 100.min(budget - steps);
        verlet.advance(Horizon::Steps(chunk)).ok()?;
        steps += chunk;
    }
    let seconds_per_step = start.elapsed().as_secs_f64() / steps.max(1) as f64;
    let verlet_result = ProbeResult {
        total: seconds_per_step * (end / verlet_dt).ceil(),
        seconds_per_step,
        reached: steps as f64 * verlet_dt,
        seconds: start.elapsed().as_secs_f64(),
        mean_step_over_limit: verlet_dt / limit,
    };
    let mut implicit = scene.build_with(Integrator::Radau(radau));
    let start = Instant::now();
    let mut reached = 0.0;
    let mut k = 0;
    while reached < end && start.elapsed().as_secs_f64() < PROBE_SECONDS {
        k += 1;
        // Ever longer stretches from ten explicit limits, each doubling the time reached: the wall
        // budget is overrun by at most the last stretch, which costs about what all before it did.
        let target = (10.0 * limit * 2f64.powi(k)).min(end);
        implicit.advance(Horizon::Time(target)).ok()?;
        reached = target;
    }
    let seconds = start.elapsed().as_secs_f64();
    let radau_steps: f64 = (0..implicit.len())
        .map(|r| implicit.solver_statistics(r)[0])
        .sum::<f64>()
        / implicit.len().max(1) as f64;
    let radau_result = ProbeResult {
        total: seconds * end / reached,
        seconds_per_step: seconds / radau_steps.max(1.0),
        reached,
        seconds,
        mean_step_over_limit: reached / radau_steps.max(1.0) / limit,
    };
    Some((verlet_result, radau_result))
}

/// What `silt check` prints for a rod scene.
fn report(scene: &RodScene) -> String {
    let mut out = String::new();
    let segments: usize = scene.rods.iter().map(|r| r.0.segments()).sum();
    let _ = writeln!(
        out,
        "rods: {} in {} group(s), {segments} segments in all",
        scene.rods.len(),
        scene.section.rod.len()
    );
    for (g, group) in scene.section.rod.iter().enumerate() {
        let Some((rod, model, _)) = scene.rods.iter().find(|r| r.2 == g) else {
            continue;
        };
        let h = group.length / group.segments as f64;
        let c_g = rod.stiffness.shear_extension;
        let c_k = rod.stiffness.bending_torsion;
        let mass: f64 = model.inertia.node_masses.iter().sum();
        // From the stiffness the rod has (EA may be given explicitly): c = sqrt(EA / (rho A)).
        let area = std::f64::consts::PI * group.radius * group.radius;
        let wave_speed = (c_g.z / (group.density * area)).sqrt();
        // First bending mode of a cantilever, (1.875)² sqrt(EI / (ρ A L⁴)).
        let first_mode =
            1.875f64.powi(2) * (c_k.x / (group.density * area * group.length.powi(4))).sqrt();
        let limit = explicit_step_limit(rod, model);
        let _ = writeln!(
            out,
            "  group {g}: {} x {} segments of {} m (L/r = {}), mass {} kg each",
            group.count,
            group.segments,
            num(h),
            num(group.length / group.radius),
            num(mass)
        );
        let _ = writeln!(
            out,
            "    stiffness: EA {}, kGA {}, EI {}, GJ {}; axial wave speed sqrt(EA / (rho A)) {} m/s",
            num(c_g.z),
            num(c_g.x),
            num(c_k.x),
            num(c_k.z),
            num(wave_speed)
        );
        let _ = writeln!(
            out,
            "    first cantilever bending frequency {} rad/s (period {} s)",
            num(first_mode),
            num(2.0 * std::f64::consts::PI / first_mode)
        );
        let _ = writeln!(
            out,
            "    explicit stability limit (estimate): {} s, set by the {} mode",
            num(limit.step),
            limit.mode
        );
        let per_segment = turn_per_segment(group, scene.end_time);
        if per_segment > 0.5 {
            let _ = writeln!(
                out,
                "    warning: up to {} rad of turn between neighbouring segments (prescribed end rotation \
                 and rest curvature); the discrete curvature (2/h) sin(theta/2) is 4 % soft at 0.5 rad \
                 and stops resisting at pi/2: use more segments",
                num(per_segment)
            );
        }
        if group.kirchhoff != "none" {
            let _ = writeln!(
                out,
                "    Kirchhoff limit \"{}\" by penalty: stiffness x {} (the constraint holds to about \
                 1/{} of the elastic strain)",
                group.kirchhoff,
                num(group.kirchhoff_factor),
                num(group.kirchhoff_factor)
            );
        }
    }
    let limit = step_limit(&scene.rods);
    let end = scene.end_time;
    match scene.integrator {
        Integrator::Verlet { dt } => {
            let _ = writeln!(
                out,
                "integrator: position Verlet, dt {} s = {:.3} of the stability limit, {} steps to t = {}",
                num(dt),
                dt / limit.step,
                num((end / dt).round()),
                num(end)
            );
            if dt > 0.9 * limit.step {
                let _ = writeln!(
                    out,
                    "warning: the step is close to the estimated stability limit; a diverging run \
                     stops with a message (keeping its last good frame)"
                );
            }
            advise(&mut out, scene, dt, RadauOptions::default());
        }
        Integrator::Radau(options) => {
            let _ = writeln!(
                out,
                "integrator: Radau IIA (order 5, adaptive), rtol {}, atol {}; an explicit run would \
                 need at least {} steps to t = {}",
                num(options.relative_tolerance),
                num(options.absolute_tolerance),
                num((end / limit.step).ceil()),
                num(end)
            );
            advise(
                &mut out,
                scene,
                DEFAULT_STEP_OVER_LIMIT * limit.step,
                options,
            );
        }
        Integrator::Static { load_steps } => {
            let _ = writeln!(
                out,
                "integrator: static equilibrium (mixed Newton, trust region); first load increment \
                 1/{load_steps}, then cut on failure and grown on easy convergence"
            );
        }
    }
    let frames = (scene.settings.end_time / scene.settings.interval).ceil() as u64 + 1;
    let _ = writeln!(
        out,
        "output: {frames} frame(s){}",
        if scene.settings.vtk {
            ", VTK line cells (series.pvd)"
        } else {
            ""
        }
    );
    out
}
