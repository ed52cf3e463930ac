//! Rods as a [`Model`] of the run loop: every rod with the same integrator (Radau IIA, position Verlet
//! or the static solve), the rods as line cells with their strains and internal loads, and a
//! diagnostics row per rod.
//!
//! Rods do not interact, so they advance in parallel, each with its own integrator: the numbers do not
//! depend on the thread count. A checkpoint holds Radau IIA's whole memory (its Jacobian by the point
//! it was taken at), so a resumed run takes the steps of a continuing one. A static run goes from the
//! unloaded rod at time 0 to its equilibrium at time 1 in one step.

use crate::dynamics::{RodModel, RodMotion};
use crate::fields::{energies, node_fields, segment_fields};
use crate::implicit::ImplicitRod;
use crate::quaternion::to_world;
use crate::radau::{RadauMemory, RadauOptions};
use crate::rod::Rod;
use crate::statics::{solve_static, StaticOptions};
use crate::verlet::Verlet;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use silt_core::model::{
    Array, Clock, Dataset, Frame, FrameContent, Geometry, Horizon, Model, StepFailure,
};
use silt_core::Vec3;

/// Columns of the diagnostics table (a row per rod).
pub const DIAGNOSTIC_COLUMNS: [&str; 14] = [
    "time",
    "rod",
    "tip_x",
    "tip_y",
    "tip_z",
    "elastic_energy",
    "kinetic_energy",
    "max_shear_strain",
    "steps",
    "rejected_steps",
    "rhs_evaluations",
    "jacobian_evaluations",
    "factorizations",
    "newton_failures",
];

/// A shear or extension strain |Γ| above this is no state of a rod (a segment stretched tenfold):
/// the run has diverged.
pub const DIVERGED_STRAIN: f64 = 10.0;

/// How the rods are advanced.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Integrator {
    /// Radau IIA of order 5, adaptive.
    Radau(RadauOptions),
    /// Position Verlet with a fixed step.
    Verlet { dt: f64 },
    /// Newton to the equilibrium, the loads applied in `load_steps` increments.
    Static { load_steps: usize },
}

/// One rod and its integrator.
#[allow(clippy::large_enum_variant)]
enum Stepper {
    Implicit(Box<ImplicitRod>),
    /// Position Verlet, or the static solve (`solved` after its one step).
    Explicit {
        rod: Rod,
        motion: RodMotion,
        model: RodModel,
        verlet: Verlet,
        newton_steps: u64,
        /// Load increments of the static solve that failed and were cut.
        rejected_increments: u64,
    },
}

/// The state of one rod in a checkpoint.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum RodCheckpoint {
    Implicit {
        time: f64,
        state: Vec<f64>,
        memory: RadauMemory,
    },
    Explicit {
        nodes: Vec<Vec3>,
        orientations: Vec<[f64; 4]>,
        velocities: Vec<Vec3>,
        angular_velocities: Vec<Vec3>,
        newton_steps: u64,
        #[serde(default)]
        rejected_increments: u64,
    },
}

/// Everything needed to continue a rod run bit for bit.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RodsCheckpoint {
    pub steps: u64,
    pub rods: Vec<RodCheckpoint>,
}

/// Rods that share an integrator and a clock.
pub struct Rods {
    rods: Vec<Stepper>,
    pub integrator: Integrator,
    /// Steps taken (Verlet steps; accepted Radau steps over all rods; 1 after a static solve).
    steps: u64,
    time: f64,
}

impl Stepper {
    /// The configuration, motion and model now.
    fn state(&self) -> (Rod, RodMotion, &RodModel) {
        match self {
            Stepper::Implicit(implicit) => {
                let (rod, motion) = implicit.state();
                (rod, motion, &implicit.model)
            }
            Stepper::Explicit {
                rod, motion, model, ..
            } => (rod.clone(), motion.clone(), model),
        }
    }

    /// The rod's model.
    fn state_model(&self) -> &RodModel {
        match self {
            Stepper::Implicit(implicit) => &implicit.model,
            Stepper::Explicit { model, .. } => model,
        }
    }

    /// Steps, rejections, f evaluations, Jacobians, factorisations, Newton failures.
    fn statistics(&self, verlet_steps: u64) -> [f64; 6] {
        match self {
            Stepper::Implicit(implicit) => {
                let s = implicit.stats();
                [
                    s.accepted_steps as f64,
                    s.rejected_steps as f64,
                    s.rhs_evaluations as f64,
                    s.jacobian_evaluations as f64,
                    s.factorizations as f64,
                    s.newton_failures as f64,
                ]
            }
            Stepper::Explicit {
                newton_steps,
                rejected_increments,
                ..
            } if *newton_steps > 0 => {
                let n = *newton_steps as f64;
                [n, *rejected_increments as f64, 0.0, n, n, 0.0]
            }
            Stepper::Explicit { .. } => {
                let n = verlet_steps as f64;
                [n, 0.0, n, 0.0, 0.0, 0.0]
            }
        }
    }
}

impl Rods {
    /// The rods, each with its initial motion and its model, advanced by `integrator`.
    pub fn new(rods: Vec<(Rod, RodMotion, RodModel)>, integrator: Integrator) -> Self {
        let rods = rods
            .into_iter()
            .map(|(rod, motion, model)| match integrator {
                Integrator::Radau(options) => {
                    Stepper::Implicit(Box::new(ImplicitRod::new(&rod, &motion, model, options)))
                }
                _ => Stepper::Explicit {
                    motion,
                    rod,
                    model,
                    verlet: Verlet::default(),
                    newton_steps: 0,
                    rejected_increments: 0,
                },
            })
            .collect();
        Rods {
            rods,
            integrator,
            steps: 0,
            time: 0.0,
        }
    }

    /// The number of rods.
    pub fn len(&self) -> usize {
        self.rods.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rods.is_empty()
    }

    /// The model (inertia, loads, supports) of rod `k`.
    pub fn rod_model(&self, k: usize) -> &RodModel {
        self.rods[k].state_model()
    }

    /// The node positions of rod `k` now.
    pub fn rod_nodes(&self, k: usize) -> Vec<Vec3> {
        self.rods[k].state().0.nodes
    }

    /// The model of rod `k`, to change its loads between steps (dead loads only: the implicit
    /// integrator's Jacobian does not depend on them).
    pub fn rod_model_mut(&mut self, k: usize) -> &mut RodModel {
        match &mut self.rods[k] {
            Stepper::Implicit(implicit) => &mut implicit.model,
            Stepper::Explicit { model, .. } => model,
        }
    }

    /// Accepted and rejected steps, f evaluations, Jacobians, factorisations and Newton failures of
    /// rod `k` (Newton steps of a static solve; Verlet steps).
    pub fn solver_statistics(&self, k: usize) -> [f64; 6] {
        self.rods[k].statistics(self.steps)
    }

    /// The configuration and motion of every rod now.
    pub fn states(&self) -> Vec<(Rod, RodMotion)> {
        self.rods
            .iter()
            .map(|r| {
                let (rod, motion, _) = r.state();
                (rod, motion)
            })
            .collect()
    }

    /// Advances every rod (in parallel) with `advance`; the first failure names its rod.
    fn each_rod(
        &mut self,
        advance: impl Fn(&mut Stepper) -> Result<(), String> + Sync + Send,
    ) -> Result<(), StepFailure> {
        let results: Vec<Result<(), String>> = self.rods.par_iter_mut().map(advance).collect();
        match results.into_iter().enumerate().find(|(_, r)| r.is_err()) {
            Some((k, Err(m))) => Err(StepFailure::new(format!("rod {k}: {m}"))),
            _ => Ok(()),
        }
    }

    /// Stops a run whose rods are no longer finite or are stretched beyond any rod's strain.
    fn check(&self, from: f64) -> Result<(), StepFailure> {
        for (k, stepper) in self.rods.iter().enumerate() {
            let (rod, motion, _) = stepper.state();
            let finite = rod.nodes.iter().all(|x| x.is_finite())
                && motion.velocities.iter().all(|v| v.is_finite())
                && motion.angular_velocities.iter().all(|w| w.is_finite());
            let strain = segment_fields(&rod)
                .iter()
                .map(|f| f.shear_strain.length())
                .fold(0.0, f64::max);
            if !finite || strain.is_nan() || strain > DIVERGED_STRAIN {
                let what = if finite {
                    format!("its strain |Gamma| reached {strain:.3e}")
                } else {
                    "its state became non-finite".into()
                };
                let advice = match self.integrator {
                    Integrator::Verlet { .. } => {
                        "the step is above position Verlet's stability limit for this state; \
                         use a smaller time_step or integrator = \"radau\""
                    }
                    _ => "reduce the tolerances or the loads",
                };
                return Err(StepFailure::new(format!(
                    "rod {k} diverged between t = {} and {}: {what}; {advice}",
                    silt_core::format_time(from),
                    silt_core::format_time(self.time)
                )));
            }
        }
        Ok(())
    }
}

impl Model for Rods {
    type Checkpoint = RodsCheckpoint;

    fn kind(&self) -> &'static str {
        "rods"
    }

    fn time(&self) -> f64 {
        self.time
    }

    fn steps(&self) -> u64 {
        self.steps
    }

    fn clock(&self) -> Clock {
        match self.integrator {
            Integrator::Verlet { dt } => Clock::Fixed(dt),
            Integrator::Radau(_) => Clock::Adaptive,
            Integrator::Static { .. } => Clock::Fixed(1.0),
        }
    }

    fn advance(&mut self, horizon: Horizon) -> Result<(), StepFailure> {
        let from = self.time;
        match (self.integrator, horizon) {
            (Integrator::Verlet { dt }, Horizon::Steps(n)) => {
                let t = self.steps as f64 * dt;
                self.each_rod(|r| {
                    if let Stepper::Explicit {
                        rod,
                        motion,
                        model,
                        verlet,
                        ..
                    } = r
                    {
                        verlet.advance(rod, motion, model, t, dt, n as usize);
                    }
                    Ok(())
                })?;
                self.steps += n;
                self.time = self.steps as f64 * dt;
            }
            (Integrator::Radau(_), Horizon::Time(target)) => {
                self.each_rod(|r| match r {
                    Stepper::Implicit(implicit) => {
                        implicit.advance_to(target).map_err(|e| e.to_string())
                    }
                    _ => Ok(()),
                })?;
                self.time = target;
                self.steps = self
                    .rods
                    .iter()
                    .map(|r| r.statistics(0)[0] as u64)
                    .sum::<u64>()
                    .max(self.steps + 1);
            }
            // The static solve is the whole run, its one step: done once (solving again from the
            // equilibrium would restart the load path, its ends back where they started).
            (Integrator::Static { .. }, _) if self.steps >= 1 => {}
            (Integrator::Static { load_steps }, _) => {
                self.each_rod(|r| {
                    if let Stepper::Explicit {
                        rod,
                        model,
                        newton_steps,
                        rejected_increments,
                        ..
                    } = r
                    {
                        let options = StaticOptions {
                            load_steps,
                            ..StaticOptions::default()
                        };
                        let report = solve_static(rod, model, options)?;
                        *newton_steps = report.newton_steps as u64;
                        *rejected_increments = report.rejected_steps as u64;
                    }
                    Ok(())
                })?;
                self.steps = 1;
                self.time = 1.0;
            }
            (integrator, horizon) => {
                return Err(StepFailure::new(format!(
                    "{integrator:?} cannot advance to {horizon:?}"
                )))
            }
        }
        self.check(from)
    }

    fn checkpoint(&mut self) -> RodsCheckpoint {
        let rods = self
            .rods
            .iter_mut()
            .map(|r| match r {
                Stepper::Implicit(implicit) => RodCheckpoint::Implicit {
                    time: implicit.time,
                    state: implicit.state_vector().to_vec(),
                    memory: implicit.radau.memory(),
                },
                Stepper::Explicit {
                    rod,
                    motion,
                    newton_steps,
                    rejected_increments,
                    ..
                } => RodCheckpoint::Explicit {
                    nodes: rod.nodes.clone(),
                    orientations: rod.orientations.clone(),
                    velocities: motion.velocities.clone(),
                    angular_velocities: motion.angular_velocities.clone(),
                    newton_steps: *newton_steps,
                    rejected_increments: *rejected_increments,
                },
            })
            .collect();
        RodsCheckpoint {
            steps: self.steps,
            rods,
        }
    }

    fn restore(&mut self, checkpoint: RodsCheckpoint) -> Result<(), String> {
        if checkpoint.rods.len() != self.rods.len() {
            return Err(format!(
                "the checkpoint holds {} rods, the scene {}",
                checkpoint.rods.len(),
                self.rods.len()
            ));
        }
        for (stepper, saved) in self.rods.iter_mut().zip(checkpoint.rods) {
            match (stepper, saved) {
                (
                    Stepper::Implicit(implicit),
                    RodCheckpoint::Implicit {
                        time,
                        state,
                        memory,
                    },
                ) => {
                    implicit.restore(time, state, memory)?;
                    self.time = time;
                }
                (
                    Stepper::Explicit {
                        rod,
                        motion,
                        newton_steps,
                        rejected_increments,
                        ..
                    },
                    RodCheckpoint::Explicit {
                        nodes,
                        orientations,
                        velocities,
                        angular_velocities,
                        newton_steps: solved,
                        rejected_increments: rejected,
                    },
                ) => {
                    if nodes.len() != rod.nodes.len()
                        || orientations.len() != rod.segments()
                        || velocities.len() != nodes.len()
                        || angular_velocities.len() != orientations.len()
                    {
                        return Err(format!(
                            "the checkpoint's rod has {} segments, the scene's {}",
                            orientations.len(),
                            rod.segments()
                        ));
                    }
                    rod.nodes = nodes;
                    rod.orientations = orientations;
                    motion.velocities = velocities;
                    motion.angular_velocities = angular_velocities;
                    *newton_steps = solved;
                    *rejected_increments = rejected;
                }
                _ => return Err("the checkpoint was written by another integrator".into()),
            }
        }
        self.steps = checkpoint.steps;
        self.time = match self.integrator {
            Integrator::Verlet { dt } => self.steps as f64 * dt,
            Integrator::Static { .. } => self.steps as f64,
            Integrator::Radau(_) => self.time,
        };
        Ok(())
    }

    fn diagnostic_columns(&self) -> Vec<String> {
        DIAGNOSTIC_COLUMNS.iter().map(|c| c.to_string()).collect()
    }

    fn diagnostics(&mut self) -> Result<Vec<Vec<f64>>, StepFailure> {
        let mut rows = Vec::new();
        for (k, stepper) in self.rods.iter().enumerate() {
            let (rod, motion, model) = stepper.state();
            let (elastic, kinetic) = energies(&rod, &motion, model);
            let tip = rod.nodes[rod.segments()];
            let max_shear = segment_fields(&rod)
                .iter()
                .map(|f| f.shear_strain.length())
                .fold(0.0, f64::max);
            let stats = stepper.statistics(self.steps);
            rows.push(vec![
                self.time, k as f64, tip.x, tip.y, tip.z, elastic, kinetic, max_shear, stats[0],
                stats[1], stats[2], stats[3], stats[4], stats[5],
            ]);
        }
        Ok(rows)
    }

    fn frame(&mut self, content: FrameContent) -> Result<Frame, StepFailure> {
        let mut frame = Frame::default();
        if content != FrameContent::NoDatasets {
            frame.datasets.push(rods_dataset(&self.states()));
        }
        Ok(frame)
    }

    fn size(&self) -> (usize, &'static str) {
        let segments = self.rods.iter().map(|r| r.state().0.segments()).sum();
        (segments, "segment")
    }
}

/// Rods as line cells (one per segment); point data per node: `rod`, `velocity`, `curvature`,
/// `internal_moment`; cell data per segment: `rod`, `shear_strain`, `internal_force`, `d1`, `d2`,
/// `d3`, `angular_velocity`.
pub fn rods_dataset(rods: &[(Rod, RodMotion)]) -> Dataset {
    let mut points = Vec::new();
    let mut lines = Vec::new();
    let (mut node_rod, mut velocity, mut curvature, mut moment) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut segment_rod, mut strain, mut force, mut angular) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut directors: [Vec<Vec3>; 3] = [Vec::new(), Vec::new(), Vec::new()];
    for (k, (rod, motion)) in rods.iter().enumerate() {
        let offset = points.len();
        points.extend_from_slice(&rod.nodes);
        velocity.extend_from_slice(&motion.velocities);
        for node in node_fields(rod) {
            curvature.push(node.curvature);
            moment.push(node.internal_moment);
            node_rod.push(k as i32);
        }
        for (j, fields) in segment_fields(rod).into_iter().enumerate() {
            lines.push(offset + j..offset + j + 2);
            strain.push(fields.shear_strain);
            force.push(fields.internal_force);
            for (d, list) in fields.directors.iter().zip(directors.iter_mut()) {
                list.push(*d);
            }
            angular.push(to_world(rod.orientations[j], motion.angular_velocities[j]));
            segment_rod.push(k as i32);
        }
    }
    let [d1, d2, d3] = directors;
    Dataset {
        name: "rods",
        geometry: Geometry::Lines { points, lines },
        point_data: vec![
            Array::i32("rod", node_rod),
            Array::vec3("velocity", velocity),
            Array::vec3("curvature", curvature),
            Array::vec3("internal_moment", moment),
        ],
        cell_data: vec![
            Array::i32("rod", segment_rod),
            Array::vec3("shear_strain", strain),
            Array::vec3("internal_force", force),
            Array::vec3("d1", d1),
            Array::vec3("d2", d2),
            Array::vec3("d3", d3),
            Array::vec3("angular_velocity", angular),
        ],
        pieces: false,
    }
}
