//! Bead chains as a [`Model`] of the run loop: Adams–Bashforth steps of [`FiberSystem::step_with`],
//! the fibers as polylines with their velocities and forces, and the chain's figures as diagnostics.
//!
//! The motion of the current state (multipliers, velocities) is what both the output of that state
//! and the next step need: it is solved once and kept until the step that uses it.

use crate::constraints::ConstraintSystem;
use crate::dynamics::{AdamsBashforth, Diagnostics, FiberSystem, StepRates};
use crate::multipliers::ConstrainedMotion;
use glam::DQuat;
use serde::{Deserialize, Serialize};
use silt_core::model::{
    Array, Clock, Dataset, Frame, FrameContent, Geometry, Horizon, Model, Series, StepFailure,
    Table,
};
use silt_core::Vec3;

/// Columns of the diagnostics table.
pub const DIAGNOSTIC_COLUMNS: [&str; 19] = [
    "time",
    "step",
    "end_to_end",
    "mean_velocity_x",
    "mean_velocity_y",
    "mean_velocity_z",
    "link_error",
    "link_correction",
    "constraint_residual",
    "bending_energy",
    "twist_energy",
    "beads",
    "solver_iterations",
    "stresslet_xx",
    "stresslet_xy",
    "stresslet_xz",
    "stresslet_yy",
    "stresslet_yz",
    "stresslet_zz",
];

/// Columns of `fibers.csv`: a row per fiber and frame, its centre (mean of the bead centres) and the
/// unit vector from its first bead to its last (its orientation: a tumbling period can be read from it).
pub const FIBER_COLUMNS: [&str; 9] = [
    "time",
    "fiber",
    "centre_x",
    "centre_y",
    "centre_z",
    "direction_x",
    "direction_y",
    "direction_z",
    "end_to_end",
];

/// Everything needed to continue a fiber run bit for bit.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FiberCheckpoint {
    pub steps: u64,
    pub time: f64,
    pub positions: Vec<Vec3>,
    pub orientations: Vec<DQuat>,
    pub spins: Vec<f64>,
    pub history: Vec<StepRates>,
    pub link_correction: f64,
    pub last_multipliers: Vec<f64>,
    pub previous_multipliers: Vec<f64>,
    pub older_multipliers: Vec<f64>,
}

/// A bead system, its integrator and its fixed time step.
pub struct FiberModel {
    pub system: FiberSystem,
    pub integrator: AdamsBashforth,
    pub dt: f64,
    pub steps: u64,
    /// The motion of the current state, once solved.
    solved: Option<(ConstrainedMotion, ConstraintSystem)>,
    /// The motion the last step took and the state's diagnostics before it (for measurements).
    pub last_step: Option<(ConstrainedMotion, Diagnostics)>,
}

impl FiberModel {
    pub fn new(system: FiberSystem, dt: f64) -> Self {
        FiberModel {
            system,
            integrator: AdamsBashforth::default(),
            dt,
            steps: 0,
            solved: None,
            last_step: None,
        }
    }

    /// Replaces the forces and torques on single beads (`FiberSystem::point_loads`) from the next
    /// step on; the motion of the current state is solved again with them.
    pub fn set_point_loads(&mut self, loads: Vec<crate::dynamics::PointLoad>) {
        self.system.point_loads = loads;
        self.solved = None;
    }

    /// The beads' motion in the current state (velocities, constraint and total forces and torques),
    /// solved once per state: the step that follows uses the same solve, so asking changes nothing.
    pub fn motion(&mut self) -> Result<&ConstrainedMotion, StepFailure> {
        Ok(&self.solved()?.0)
    }

    /// The motion of the current state (solved now, or kept from the output of this state).
    fn solved(&mut self) -> Result<&(ConstrainedMotion, ConstraintSystem), StepFailure> {
        if self.solved.is_none() {
            let solved = self.system.solve_motion().map_err(|m| {
                StepFailure::new(format!(
                    "the constraint solve failed at t = {}: {m}",
                    silt_core::format_time(self.system.time)
                ))
            })?;
            self.solved = Some(solved);
        }
        Ok(self.solved.as_ref().expect("solved above"))
    }
}

impl Model for FiberModel {
    type Checkpoint = FiberCheckpoint;

    fn kind(&self) -> &'static str {
        "fibers"
    }

    fn time(&self) -> f64 {
        self.system.time
    }

    fn steps(&self) -> u64 {
        self.steps
    }

    fn clock(&self) -> Clock {
        Clock::Fixed(self.dt)
    }

    fn advance(&mut self, _: Horizon) -> Result<(), StepFailure> {
        self.solved()?;
        let solved = self.solved.take().expect("solved above");
        let step = self
            .system
            .step_with(self.dt, &mut self.integrator, solved)
            .map_err(|m| {
                StepFailure::new(format!(
                    "step {} (t = {}) failed: {m}",
                    self.steps + 1,
                    silt_core::format_time(self.system.time)
                ))
            })?;
        self.last_step = Some(step);
        self.steps += 1;
        Ok(())
    }

    fn checkpoint(&mut self) -> FiberCheckpoint {
        let s = &self.system;
        FiberCheckpoint {
            steps: self.steps,
            time: s.time,
            positions: s.fibers.positions.clone(),
            orientations: s.orientations.clone(),
            spins: s.spins.clone(),
            history: self.integrator.history().to_vec(),
            link_correction: s.link_correction,
            last_multipliers: s.last_multipliers.clone(),
            previous_multipliers: s.previous_multipliers.clone(),
            older_multipliers: s.older_multipliers.clone(),
        }
    }

    fn restore(&mut self, c: FiberCheckpoint) -> Result<(), String> {
        let n = self.system.fibers.bead_count();
        if c.positions.len() != n
            || c.orientations.len() != n
            || c.spins.len() != n
            || c.history.iter().any(|h| h.0.len() != n || h.1.len() != n)
        {
            return Err(format!("the checkpoint does not hold {n} beads"));
        }
        self.integrator = AdamsBashforth::from_history(c.history)?;
        let s = &mut self.system;
        s.fibers.positions = c.positions;
        s.orientations = c.orientations;
        s.spins = c.spins;
        s.time = c.time;
        s.link_correction = c.link_correction;
        s.last_multipliers = c.last_multipliers;
        s.previous_multipliers = c.previous_multipliers;
        s.older_multipliers = c.older_multipliers;
        self.steps = c.steps;
        self.solved = None;
        self.last_step = None;
        Ok(())
    }

    /// Every rank holds the whole state (the ranks share out only the hydrodynamics), so rank 0's
    /// checkpoint resumes a run on any number of ranks.
    fn checkpoint_from_ranks(
        &self,
        _ranks: usize,
        load: &mut dyn FnMut(usize) -> Result<FiberCheckpoint, String>,
    ) -> Option<Result<FiberCheckpoint, String>> {
        Some(load(0))
    }

    fn diagnostic_columns(&self) -> Vec<String> {
        DIAGNOSTIC_COLUMNS.iter().map(|c| c.to_string()).collect()
    }

    fn diagnostics(&mut self) -> Result<Vec<Vec<f64>>, StepFailure> {
        self.solved()?;
        let (motion, rows) = self.solved.as_ref().expect("solved above");
        let d = self.system.diagnostics_with(motion, rows);
        Ok(vec![vec![
            d.time,
            self.steps as f64,
            d.end_to_end,
            d.mean_velocity.x,
            d.mean_velocity.y,
            d.mean_velocity.z,
            d.link_error,
            d.link_correction,
            d.constraint_residual,
            d.bending_energy,
            d.twist_energy,
            self.system.fibers.bead_count() as f64,
            d.solver_iterations as f64,
            d.stresslet.x_axis.x,
            d.stresslet.y_axis.x,
            d.stresslet.z_axis.x,
            d.stresslet.y_axis.y,
            d.stresslet.z_axis.y,
            d.stresslet.z_axis.z,
        ]])
    }

    fn frame(&mut self, content: FrameContent) -> Result<Frame, StepFailure> {
        let mut frame = Frame::default();
        if content != FrameContent::NoDatasets {
            self.solved()?;
            let (motion, _) = self.solved.as_ref().expect("solved above");
            frame.datasets.push(fiber_dataset(&self.system, motion));
        }
        frame.series.push(fiber_table(&self.system));
        Ok(frame)
    }

    fn size(&self) -> (usize, &'static str) {
        (self.system.fibers.bead_count(), "bead")
    }
}

/// `fibers.csv`: per fiber its centre, the unit vector from its first bead to its last, and that
/// distance ([`FIBER_COLUMNS`]).
pub fn fiber_table(system: &FiberSystem) -> Series {
    let y = &system.fibers.positions;
    let rows = system
        .fibers
        .fibers()
        .iter()
        .enumerate()
        .map(|(k, beads)| {
            let centre = y[beads.clone()].iter().sum::<Vec3>() / beads.len() as f64;
            let span = y[beads.end - 1] - y[beads.start];
            let direction = span.normalize_or_zero();
            vec![
                system.time,
                k as f64,
                centre.x,
                centre.y,
                centre.z,
                direction.x,
                direction.y,
                direction.z,
                span.length(),
            ]
        })
        .collect();
    Series {
        file: "fibers.csv".into(),
        table: Table {
            columns: FIBER_COLUMNS.iter().map(|c| c.to_string()).collect(),
            rows,
        },
    }
}

/// The fibers as polylines; point data per bead: `fiber`, `velocity`, `angular_velocity`, `force`,
/// `torque`, `constraint_force`, `constraint_torque`; cell data per fiber: `fiber`, `end_to_end`,
/// `direction` (the unit vector from its first bead to its last).
pub fn fiber_dataset(system: &FiberSystem, motion: &ConstrainedMotion) -> Dataset {
    let y = &system.fibers.positions;
    let lines = system.fibers.fibers();
    let owner = system.fibers.fiber_of_bead();
    Dataset {
        name: "fibers",
        geometry: Geometry::Lines {
            points: y.clone(),
            lines: lines.to_vec(),
        },
        point_data: vec![
            Array::i32("fiber", owner.into_iter().map(|f| f as i32).collect()),
            Array::vec3("velocity", motion.velocities.clone()),
            Array::vec3("angular_velocity", motion.angular_velocities.clone()),
            Array::vec3("force", motion.forces.clone()),
            Array::vec3("torque", motion.torques.clone()),
            Array::vec3("constraint_force", motion.constraint_forces.clone()),
            Array::vec3("constraint_torque", motion.constraint_torques.clone()),
        ],
        cell_data: vec![
            Array::i32("fiber", (0..lines.len() as i32).collect()),
            Array::f64(
                "end_to_end",
                lines
                    .iter()
                    .map(|f| (y[f.end - 1] - y[f.start]).length())
                    .collect(),
            ),
            Array::vec3(
                "direction",
                lines
                    .iter()
                    .map(|f| (y[f.end - 1] - y[f.start]).normalize_or_zero())
                    .collect(),
            ),
        ],
        pieces: false,
    }
}
