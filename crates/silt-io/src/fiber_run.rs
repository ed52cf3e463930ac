//! The run loop of a fiber scene: steps the bead system to the end time, writes ParaView polylines,
//! per-step diagnostics and checkpoints, and resumes from them bit for bit.
//!
//! Output directory layout:
//!   fibers.pvd, fibers/fibers_NNNNNN.vtp   one polyline per fiber; point data per bead: velocity,
//!                                          angular velocity, force and torque (total), constraint
//!                                          force and torque; cell data: fiber index, end-to-end
//!                                          distance
//!   fiber_diagnostics.csv                  a row every `diagnostics_every` steps (the state at the
//!                                          start of the step) and at the end
//!   checkpoint.bin                         latest checkpoint (bincode)

use crate::atomic::write_atomic;
use crate::csv_series::CsvSeries;
use crate::fiber_scene::FiberScene;
use crate::pvd::PvdSeries;
use crate::run_failure::{io_error, RunFailure};
use crate::simulation::fingerprint;
use crate::vtk::{write_vtp_polylines, ArrayData, DataArray};
use glam::{DQuat, DVec3 as Vec3};
use serde::{Deserialize, Serialize};
use silt_fibers::dynamics::{AdamsBashforth, Diagnostics, FiberSystem};
use silt_fibers::multipliers::ConstrainedMotion;
use std::path::{Path, PathBuf};

/// Why a fiber run stopped early.
pub type FiberRunError = RunFailure<String>;

const CHECKPOINT_FORMAT: u32 = 1;
const CHECKPOINT_KIND: &str = "silt-fibers";

pub const DIAGNOSTIC_COLUMNS: [&str; 13] = [
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
];

#[derive(Serialize, Deserialize)]
struct CheckpointFile {
    format: u32,
    kind: String,
    scene_fingerprint: u64,
    frame: u64,
    step: u64,
    time: f64,
    positions: Vec<Vec3>,
    orientations: Vec<DQuat>,
    spins: Vec<f64>,
    history: Vec<(Vec<Vec3>, Vec<DQuat>, Vec<f64>)>,
    link_correction: f64,
    last_multipliers: Vec<f64>,
}

/// A fiber run in progress.
pub struct FiberSimulation {
    pub system: FiberSystem,
    integrator: AdamsBashforth,
    pub step: u64,
    end_step: u64,
    dt: f64,
    output_every: u64,
    diagnostics_every: u64,
    checkpoint_every: u64,
    frame: u64,
    fingerprint: u64,
    write_vtk: bool,
    out_dir: PathBuf,
    pvd: PvdSeries,
    diagnostics: CsvSeries,
}

/// What a finished (or stopped) leg of a run did.
#[derive(Clone, Copy, Debug)]
pub struct FiberRunSummary {
    pub steps: u64,
    pub time: f64,
    pub frames: u64,
    pub wall_seconds: f64,
    /// Largest link-length error seen at the start of a step in this leg.
    pub max_link_error: f64,
}

impl FiberSimulation {
    /// Starts a fresh run in `out_dir` (created if needed), writing the initial frame.
    pub fn start(
        scene: &FiberScene,
        scene_text: &str,
        system: FiberSystem,
        out_dir: &Path,
    ) -> Result<FiberSimulation, FiberRunError> {
        std::fs::create_dir_all(out_dir.join("fibers")).map_err(io_error(out_dir))?;
        let mut sim = Self::with_writers(scene, scene_text, system, out_dir, false)?;
        let motion = sim.system.motion().map_err(FiberRunError::Diverged)?;
        sim.write_frame(&motion)?;
        Ok(sim)
    }

    /// Continues the run in `out_dir` from its checkpoint; later output is discarded and rewritten.
    pub fn resume(
        scene: &FiberScene,
        scene_text: &str,
        mut system: FiberSystem,
        out_dir: &Path,
    ) -> Result<FiberSimulation, FiberRunError> {
        let path = out_dir.join("checkpoint.bin");
        let bytes = std::fs::read(&path).map_err(io_error(&path))?;
        let bad = |m: String| FiberRunError::Checkpoint(format!("{}: {m}", path.display()));
        let file: CheckpointFile = bincode::deserialize(&bytes)
            .map_err(|e| bad(format!("not a Silt fiber checkpoint ({e})")))?;
        if file.format != CHECKPOINT_FORMAT || file.kind != CHECKPOINT_KIND {
            return Err(bad(format!(
                "checkpoint kind {:?} format {} is not a fiber checkpoint of this version",
                file.kind, file.format
            )));
        }
        if file.scene_fingerprint != fingerprint(scene_text) {
            return Err(bad(
                "the checkpoint was written for a different scene file; resume with the same scene"
                    .into(),
            ));
        }
        let n = system.fibers.bead_count();
        if file.positions.len() != n
            || file.orientations.len() != n
            || file
                .history
                .iter()
                .any(|h| h.0.len() != n || h.1.len() != n)
        {
            return Err(bad(format!("the checkpoint does not hold {n} beads")));
        }
        system.fibers.positions = file.positions;
        system.orientations = file.orientations;
        system.spins = file.spins;
        system.time = file.time;
        system.link_correction = file.link_correction;
        system.last_multipliers = file.last_multipliers;
        let mut sim = Self::with_writers(scene, scene_text, system, out_dir, true)?;
        sim.integrator = AdamsBashforth::from_history(file.history).map_err(bad)?;
        sim.step = file.step;
        sim.frame = file.frame;
        Ok(sim)
    }

    fn with_writers(
        scene: &FiberScene,
        scene_text: &str,
        system: FiberSystem,
        out_dir: &Path,
        resuming: bool,
    ) -> Result<FiberSimulation, FiberRunError> {
        let pvd_path = out_dir.join("fibers.pvd");
        let csv_path = out_dir.join("fiber_diagnostics.csv");
        let time = system.time;
        let (pvd, diagnostics) = if resuming {
            let mut pvd =
                PvdSeries::from_existing(&pvd_path).unwrap_or_else(|_| PvdSeries::new(&pvd_path));
            pvd.truncate_after(time);
            pvd.write().map_err(io_error(&pvd_path))?;
            // Rows are written for the state at the start of a step: those before `time` stay.
            let keep = time - 0.5 * scene.dt;
            let csv = CsvSeries::open_append_truncated(&csv_path, &DIAGNOSTIC_COLUMNS, keep)
                .map_err(io_error(&csv_path))?;
            (pvd, csv)
        } else {
            (
                PvdSeries::new(&pvd_path),
                CsvSeries::create(&csv_path, &DIAGNOSTIC_COLUMNS).map_err(io_error(&csv_path))?,
            )
        };
        Ok(FiberSimulation {
            system,
            integrator: AdamsBashforth::default(),
            step: 0,
            end_step: scene.end_step,
            dt: scene.dt,
            output_every: scene.output_every,
            diagnostics_every: scene.section.output.diagnostics_every,
            checkpoint_every: scene.checkpoint_every,
            frame: 0,
            fingerprint: fingerprint(scene_text),
            write_vtk: scene.section.output.vtk,
            out_dir: out_dir.to_path_buf(),
            pvd,
            diagnostics,
        })
    }

    /// The last step of the run.
    pub fn end_step(&self) -> u64 {
        self.end_step
    }

    /// Steps until `until_step` (at most the end step), writing output and checkpoints on schedule;
    /// `progress(step, end_step)` after every step. When a step fails, the output written so far (the
    /// last good frame and checkpoint) is kept and the error says why.
    pub fn run_until(
        &mut self,
        until_step: u64,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<FiberRunSummary, FiberRunError> {
        let start = std::time::Instant::now();
        let until = until_step.min(self.end_step);
        let first_step = self.step;
        let mut max_link_error: f64 = 0.0;
        while self.step < until {
            let (_, diagnostics) =
                self.system
                    .step(self.dt, &mut self.integrator)
                    .map_err(|m| {
                        FiberRunError::Diverged(format!(
                        "step {} (t = {}) failed: {m}; the last good frame and checkpoint are kept",
                        self.step + 1,
                        self.system.time
                    ))
                    })?;
            max_link_error = max_link_error.max(diagnostics.link_error);
            if self.step.is_multiple_of(self.diagnostics_every) {
                self.write_diagnostics(&diagnostics, self.step)?;
            }
            self.step += 1;
            let last = self.step == self.end_step;
            if self.step.is_multiple_of(self.output_every) || last {
                let motion = self.system.motion().map_err(FiberRunError::Diverged)?;
                if last {
                    let d = self.system.diagnostics(&motion);
                    self.write_diagnostics(&d, self.step)?;
                }
                self.write_frame(&motion)?;
            }
            if self.step.is_multiple_of(self.checkpoint_every) || last {
                self.write_checkpoint()?;
            }
            progress(self.step, self.end_step);
        }
        if !self.step.is_multiple_of(self.checkpoint_every) && self.step != self.end_step {
            self.write_checkpoint()?;
        }
        Ok(FiberRunSummary {
            steps: self.step - first_step,
            time: self.system.time,
            frames: self.frame,
            wall_seconds: start.elapsed().as_secs_f64(),
            max_link_error,
        })
    }

    fn write_diagnostics(&mut self, d: &Diagnostics, step: u64) -> Result<(), FiberRunError> {
        let row = [
            d.time,
            step as f64,
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
        ];
        let path = self.diagnostics.path().to_path_buf();
        self.diagnostics.push(&row).map_err(io_error(&path))
    }

    /// Writes the checkpoint of the current state (atomically).
    pub fn write_checkpoint(&self) -> Result<(), FiberRunError> {
        let file = CheckpointFile {
            format: CHECKPOINT_FORMAT,
            kind: CHECKPOINT_KIND.into(),
            scene_fingerprint: self.fingerprint,
            frame: self.frame,
            step: self.step,
            time: self.system.time,
            positions: self.system.fibers.positions.clone(),
            orientations: self.system.orientations.clone(),
            spins: self.system.spins.clone(),
            history: self.integrator.history().to_vec(),
            link_correction: self.system.link_correction,
            last_multipliers: self.system.last_multipliers.clone(),
        };
        let bytes = bincode::serialize(&file)
            .map_err(|e| FiberRunError::Checkpoint(format!("cannot encode the checkpoint: {e}")))?;
        let path = self.out_dir.join("checkpoint.bin");
        write_atomic(&path, &bytes).map_err(io_error(&path))
    }

    /// Writes one frame of the current state with its `motion`.
    fn write_frame(&mut self, motion: &ConstrainedMotion) -> Result<(), FiberRunError> {
        if self.write_vtk {
            let name = format!("fibers/fibers_{:06}.vtp", self.frame);
            let path = self.out_dir.join(&name);
            write_fibers(&path, &self.system, motion).map_err(io_error(&path))?;
            self.pvd
                .push(self.system.time, &name)
                .map_err(io_error(self.pvd.path()))?;
        }
        self.frame += 1;
        Ok(())
    }
}

/// Writes the fibers as VTK polylines with per-bead and per-fiber data.
pub fn write_fibers(
    path: &Path,
    system: &FiberSystem,
    motion: &ConstrainedMotion,
) -> std::io::Result<()> {
    let y = &system.fibers.positions;
    let lines = system.fibers.fibers();
    let owner: Vec<i32> = system
        .fibers
        .fiber_of_bead()
        .into_iter()
        .map(|f| f as i32)
        .collect();
    let fiber_ids: Vec<i32> = (0..lines.len() as i32).collect();
    let end_to_end: Vec<f64> = lines
        .iter()
        .map(|f| (y[f.end - 1] - y[f.start]).length())
        .collect();
    let point_data = [
        DataArray {
            name: "fiber",
            data: ArrayData::I32(&owner),
        },
        DataArray {
            name: "velocity",
            data: ArrayData::Vec3(&motion.velocities),
        },
        DataArray {
            name: "angular_velocity",
            data: ArrayData::Vec3(&motion.angular_velocities),
        },
        DataArray {
            name: "force",
            data: ArrayData::Vec3(&motion.forces),
        },
        DataArray {
            name: "torque",
            data: ArrayData::Vec3(&motion.torques),
        },
        DataArray {
            name: "constraint_force",
            data: ArrayData::Vec3(&motion.constraint_forces),
        },
        DataArray {
            name: "constraint_torque",
            data: ArrayData::Vec3(&motion.constraint_torques),
        },
    ];
    let cell_data = [
        DataArray {
            name: "fiber",
            data: ArrayData::I32(&fiber_ids),
        },
        DataArray {
            name: "end_to_end",
            data: ArrayData::F64(&end_to_end),
        },
    ];
    write_vtp_polylines(path, y, lines, &point_data, &cell_data)
}
