//! The run loop of a rod scene: advances every rod to each frame time (Radau IIA, position Verlet, or
//! one static solve), writes ParaView files, diagnostics and checkpoints, and resumes from them bit
//! for bit.
//!
//! Output directory layout:
//!   rods.pvd, rods/rods_NNNNNN.vtp   every segment a line cell; point data per node: velocity,
//!                                    curvature K and internal moment (world), rod index; cell data
//!                                    per segment: shear strain Γ, internal force (world), directors
//!                                    d1 d2 d3, angular velocity (world), rod index
//!   rod_diagnostics.csv              a row per rod and frame: tip position, elastic and kinetic
//!                                    energy, largest |Γ|, integrator statistics
//!   checkpoint.bin                   latest checkpoint (bincode)
//!
//! Rods do not interact, so they advance in parallel, each with its own integrator: the numbers do
//! not depend on the thread count. At a checkpoint Radau IIA forgets its Jacobian and start values
//! in the continuing run as in a resumed one, so both take the same steps.

use crate::atomic::write_atomic;
use crate::checkpoint::read_checkpoint;
use crate::csv_series::CsvSeries;
use crate::pvd::PvdSeries;
use crate::rod_scene::{BuiltRod, RodIntegrator, RodScene};
use crate::run_failure::{io_error, RunFailure};
use crate::simulation::fingerprint;
use crate::vtk::{write_vtp_polylines, ArrayData, DataArray};
use glam::DVec3 as Vec3;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use silt_rods::dynamics::{RodModel, RodMotion};
use silt_rods::fields::{energies, node_fields, segment_fields};
use silt_rods::implicit::ImplicitRod;
use silt_rods::quaternion::to_world;
use silt_rods::radau::{RadauMemory, RadauStats};
use silt_rods::rod::Rod;
use silt_rods::statics::{solve_static, StaticOptions};
use silt_rods::verlet::Verlet;
use std::path::{Path, PathBuf};

/// Why a rod run stopped early.
pub type RodRunError = RunFailure<String>;

const CHECKPOINT_FORMAT: u32 = 1;
const CHECKPOINT_KIND: &str = "silt-rods";

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

/// One rod and its integrator (one per rod: the variants' sizes do not matter).
#[allow(clippy::large_enum_variant)]
enum Stepper {
    Implicit(Box<ImplicitRod>),
    Explicit {
        rod: Rod,
        motion: RodMotion,
        model: RodModel,
        verlet: Verlet,
        time: f64,
        steps: u64,
    },
    Static {
        rod: Rod,
        model: RodModel,
        newton_steps: u64,
    },
}

#[derive(Serialize, Deserialize)]
struct MemoryFile {
    step: f64,
    first: bool,
    last_rejected: bool,
    previous_step: f64,
    previous_error: f64,
    accepted_with_controller: usize,
    theta: f64,
    faccon: f64,
    newton_limit: f64,
    stats: [usize; 7],
}

#[derive(Serialize, Deserialize)]
enum RodCheckpoint {
    Implicit {
        time: f64,
        state: Vec<f64>,
        memory: MemoryFile,
    },
    Explicit {
        time: f64,
        steps: u64,
        nodes: Vec<Vec3>,
        orientations: Vec<[f64; 4]>,
        velocities: Vec<Vec3>,
        angular_velocities: Vec<Vec3>,
    },
}

#[derive(Serialize, Deserialize)]
struct CheckpointFile {
    format: u32,
    kind: String,
    scene_fingerprint: u64,
    frame: u64,
    rods: Vec<RodCheckpoint>,
}

fn memory_file(m: RadauMemory) -> MemoryFile {
    let s = m.stats;
    MemoryFile {
        step: m.step,
        first: m.first,
        last_rejected: m.last_rejected,
        previous_step: m.previous_step,
        previous_error: m.previous_error,
        accepted_with_controller: m.accepted_with_controller,
        theta: m.theta,
        faccon: m.faccon,
        newton_limit: m.newton_limit,
        stats: [
            s.accepted_steps,
            s.rejected_steps,
            s.rhs_evaluations,
            s.jacobian_evaluations,
            s.factorizations,
            s.newton_iterations,
            s.newton_failures,
        ],
    }
}

fn memory(m: &MemoryFile) -> RadauMemory {
    let s = m.stats;
    RadauMemory {
        step: m.step,
        first: m.first,
        last_rejected: m.last_rejected,
        previous_step: m.previous_step,
        previous_error: m.previous_error,
        accepted_with_controller: m.accepted_with_controller,
        theta: m.theta,
        faccon: m.faccon,
        newton_limit: m.newton_limit,
        stats: RadauStats {
            accepted_steps: s[0],
            rejected_steps: s[1],
            rhs_evaluations: s[2],
            jacobian_evaluations: s[3],
            factorizations: s[4],
            newton_iterations: s[5],
            newton_failures: s[6],
        },
    }
}

impl Stepper {
    fn new(built: BuiltRod, integrator: RodIntegrator) -> Stepper {
        match integrator {
            RodIntegrator::Radau(options) => Stepper::Implicit(Box::new(ImplicitRod::new(
                &built.rod,
                &RodMotion::rest(&built.rod),
                built.model,
                options,
            ))),
            RodIntegrator::Verlet { .. } => Stepper::Explicit {
                motion: RodMotion::rest(&built.rod),
                rod: built.rod,
                model: built.model,
                verlet: Verlet::default(),
                time: 0.0,
                steps: 0,
            },
            RodIntegrator::Static { .. } => Stepper::Static {
                rod: built.rod,
                model: built.model,
                newton_steps: 0,
            },
        }
    }

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
            Stepper::Static { rod, model, .. } => (rod.clone(), RodMotion::rest(rod), model),
        }
    }

    /// Steps, rejections, f evaluations, Jacobians, factorisations, Newton failures.
    fn statistics(&self) -> [f64; 6] {
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
            Stepper::Explicit { steps, .. } => [*steps as f64, 0.0, *steps as f64, 0.0, 0.0, 0.0],
            Stepper::Static { newton_steps, .. } => [
                *newton_steps as f64,
                0.0,
                0.0,
                *newton_steps as f64,
                *newton_steps as f64,
                0.0,
            ],
        }
    }

    /// Advances to `time` (Verlet: `steps` more steps of dt).
    fn advance(&mut self, time: f64, dt: f64, steps: u64, load_steps: usize) -> Result<(), String> {
        match self {
            Stepper::Implicit(implicit) => implicit.advance_to(time).map_err(|e| e.to_string()),
            Stepper::Explicit {
                rod,
                motion,
                model,
                verlet,
                time: now,
                steps: done,
            } => {
                let first = *done;
                verlet.advance(rod, motion, model, first as f64 * dt, dt, steps as usize);
                *done += steps;
                *now = *done as f64 * dt;
                let finite = rod.nodes.iter().all(|x| x.is_finite())
                    && motion.velocities.iter().all(|v| v.is_finite());
                if finite {
                    Ok(())
                } else {
                    Err(format!(
                        "position Verlet diverged between t = {} and {} (the step is above the \
                         stability limit for this state; use a smaller time_step or integrator = \
                         \"radau\")",
                        first as f64 * dt,
                        *now
                    ))
                }
            }
            Stepper::Static {
                rod,
                model,
                newton_steps,
            } => {
                let report = solve_static(
                    rod,
                    model,
                    StaticOptions {
                        load_steps,
                        ..StaticOptions::default()
                    },
                )?;
                *newton_steps = report.newton_steps as u64;
                Ok(())
            }
        }
    }

    fn checkpoint(&mut self) -> Option<RodCheckpoint> {
        match self {
            Stepper::Implicit(implicit) => {
                // Both the continuing and a resumed run start afresh from here.
                implicit.radau.reset();
                Some(RodCheckpoint::Implicit {
                    time: implicit.time,
                    state: implicit.state_vector().to_vec(),
                    memory: memory_file(implicit.radau.memory()),
                })
            }
            Stepper::Explicit {
                rod,
                motion,
                time,
                steps,
                ..
            } => Some(RodCheckpoint::Explicit {
                time: *time,
                steps: *steps,
                nodes: rod.nodes.clone(),
                orientations: rod.orientations.clone(),
                velocities: motion.velocities.clone(),
                angular_velocities: motion.angular_velocities.clone(),
            }),
            Stepper::Static { .. } => None,
        }
    }

    fn restore(&mut self, checkpoint: RodCheckpoint) -> Result<(), String> {
        match (self, checkpoint) {
            (
                Stepper::Implicit(implicit),
                RodCheckpoint::Implicit {
                    time,
                    state,
                    memory: m,
                },
            ) => implicit.restore(time, state, memory(&m)),
            (
                Stepper::Explicit {
                    rod,
                    motion,
                    time,
                    steps,
                    ..
                },
                RodCheckpoint::Explicit {
                    time: t,
                    steps: s,
                    nodes,
                    orientations,
                    velocities,
                    angular_velocities,
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
                *time = t;
                *steps = s;
                Ok(())
            }
            _ => Err("the checkpoint was written by another integrator".into()),
        }
    }
}

/// A rod run in progress.
pub struct RodSimulation {
    scene: RodScene,
    rods: Vec<Stepper>,
    /// Frames written after the initial one.
    pub frame: u64,
    fingerprint: u64,
    out_dir: PathBuf,
    pvd: PvdSeries,
    diagnostics: CsvSeries,
}

/// What a finished (or stopped) leg of a run did.
#[derive(Clone, Copy, Debug)]
pub struct RodRunSummary {
    pub frames: u64,
    pub time: f64,
    pub wall_seconds: f64,
    /// Integrator steps over all rods in this leg (Newton steps for a static solve).
    pub steps: u64,
}

impl RodSimulation {
    /// Starts a fresh run in `out_dir` (created if needed), writing the initial frame.
    pub fn start(
        scene: &RodScene,
        scene_text: &str,
        rods: Vec<BuiltRod>,
        out_dir: &Path,
    ) -> Result<RodSimulation, RodRunError> {
        std::fs::create_dir_all(out_dir.join("rods")).map_err(io_error(out_dir))?;
        let mut sim = Self::with_writers(scene, scene_text, rods, out_dir, None)?;
        sim.write_frame(0.0)?;
        sim.write_diagnostics(0.0)?;
        Ok(sim)
    }

    /// Continues the run in `out_dir` from its checkpoint; later output is discarded and rewritten.
    pub fn resume(
        scene: &RodScene,
        scene_text: &str,
        rods: Vec<BuiltRod>,
        out_dir: &Path,
    ) -> Result<RodSimulation, RodRunError> {
        let path = out_dir.join("checkpoint.bin");
        let bad = |m: String| RodRunError::Checkpoint(format!("{}: {m}", path.display()));
        let file: CheckpointFile = read_checkpoint(
            &path,
            ("rod", CHECKPOINT_KIND, CHECKPOINT_FORMAT),
            scene_text,
            |f: &CheckpointFile| (f.format, f.kind.clone(), f.scene_fingerprint),
        )
        .map_err(RodRunError::Checkpoint)?;
        if file.rods.len() != rods.len() {
            return Err(bad(format!(
                "the checkpoint holds {} rods, the scene {}",
                file.rods.len(),
                rods.len()
            )));
        }
        let time = scene.frame_time(file.frame);
        let mut sim = Self::with_writers(scene, scene_text, rods, out_dir, Some(time))?;
        for (stepper, checkpoint) in sim.rods.iter_mut().zip(file.rods) {
            stepper.restore(checkpoint).map_err(bad)?;
        }
        sim.frame = file.frame;
        sim.pvd.truncate_after(time);
        sim.pvd.write().map_err(io_error(sim.pvd.path()))?;
        Ok(sim)
    }

    /// The run's writers: fresh ones, or (resuming at `resume_time`) the existing series cut after
    /// that time.
    fn with_writers(
        scene: &RodScene,
        scene_text: &str,
        rods: Vec<BuiltRod>,
        out_dir: &Path,
        resume_time: Option<f64>,
    ) -> Result<RodSimulation, RodRunError> {
        let pvd_path = out_dir.join("rods.pvd");
        let csv_path = out_dir.join("rod_diagnostics.csv");
        let (pvd, diagnostics) = match resume_time {
            Some(time) => (
                PvdSeries::from_existing(&pvd_path).unwrap_or_else(|_| PvdSeries::new(&pvd_path)),
                CsvSeries::open_append_truncated(&csv_path, &DIAGNOSTIC_COLUMNS, time)
                    .map_err(io_error(&csv_path))?,
            ),
            None => (
                PvdSeries::new(&pvd_path),
                CsvSeries::create(&csv_path, &DIAGNOSTIC_COLUMNS).map_err(io_error(&csv_path))?,
            ),
        };
        let integrator = scene.integrator;
        let rods: Vec<Stepper> = rods
            .into_iter()
            .map(|r| Stepper::new(r, integrator))
            .collect();
        Ok(RodSimulation {
            scene: scene.clone(),
            rods,
            frame: 0,
            fingerprint: fingerprint(scene_text),
            out_dir: out_dir.to_path_buf(),
            pvd,
            diagnostics,
        })
    }

    /// The frame count of the whole run.
    pub fn end_frame(&self) -> u64 {
        self.scene.frames
    }

    /// Advances frame by frame until `until` (simulated time; the end time at most), writing output
    /// and checkpoints; `progress(frame, end_frame)` after every frame. When a rod fails, the output
    /// written so far (the last good frame and checkpoint) is kept and the error says why.
    pub fn run_until(
        &mut self,
        until: Option<f64>,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<RodRunSummary, RodRunError> {
        let start = std::time::Instant::now();
        let steps_before: f64 = self.rods.iter().map(|r| r.statistics()[0]).sum();
        let stop_time = until.unwrap_or(f64::INFINITY).min(self.scene.end_time);
        let (dt, steps_per_frame, load_steps) = match self.scene.integrator {
            RodIntegrator::Verlet { dt } => (dt, self.scene.steps_per_frame, 1),
            RodIntegrator::Static { load_steps } => (0.0, 0, load_steps),
            RodIntegrator::Radau(_) => (0.0, 0, 1),
        };
        while self.frame < self.scene.frames {
            let target = self.scene.frame_time(self.frame + 1);
            let is_static = matches!(self.scene.integrator, RodIntegrator::Static { .. });
            if !is_static && target > stop_time + 1e-12 * target.abs().max(1.0) {
                break;
            }
            // Verlet: whole steps; the last frame may be shorter.
            let steps = if dt > 0.0 {
                let done = self.frame * steps_per_frame;
                let all = (self.scene.end_time / dt).round() as u64;
                steps_per_frame.min(all.saturating_sub(done))
            } else {
                0
            };
            let results: Vec<Result<(), String>> = self
                .rods
                .par_iter_mut()
                .map(|r| r.advance(target, dt, steps, load_steps))
                .collect();
            if let Some((k, Err(m))) = results.into_iter().enumerate().find(|(_, r)| r.is_err()) {
                return Err(RodRunError::Diverged(format!(
                    "rod {k}: {m}; the last good frame and checkpoint are kept"
                )));
            }
            self.frame += 1;
            self.write_frame(target)?;
            self.write_diagnostics(target)?;
            let last = self.frame == self.scene.frames;
            if self.frame.is_multiple_of(self.scene.checkpoint_every) || last {
                self.write_checkpoint()?;
            }
            progress(self.frame, self.scene.frames);
        }
        let steps_after: f64 = self.rods.iter().map(|r| r.statistics()[0]).sum();
        Ok(RodRunSummary {
            frames: self.frame,
            time: self.scene.frame_time(self.frame),
            wall_seconds: start.elapsed().as_secs_f64(),
            steps: (steps_after - steps_before).max(0.0) as u64,
        })
    }

    fn write_diagnostics(&mut self, time: f64) -> Result<(), RodRunError> {
        let path = self.diagnostics.path().to_path_buf();
        for (k, stepper) in self.rods.iter().enumerate() {
            let (rod, motion, model) = stepper.state();
            let (elastic, kinetic) = energies(&rod, &motion, model);
            let tip = rod.nodes[rod.segments()];
            let max_shear = segment_fields(&rod)
                .iter()
                .map(|f| f.shear_strain.length())
                .fold(0.0, f64::max);
            let stats = stepper.statistics();
            let row = [
                time, k as f64, tip.x, tip.y, tip.z, elastic, kinetic, max_shear, stats[0],
                stats[1], stats[2], stats[3], stats[4], stats[5],
            ];
            self.diagnostics.push(&row).map_err(io_error(&path))?;
        }
        Ok(())
    }

    /// Writes the checkpoint of the current state (atomically).
    pub fn write_checkpoint(&mut self) -> Result<(), RodRunError> {
        let rods: Vec<RodCheckpoint> = self
            .rods
            .iter_mut()
            .filter_map(|r| r.checkpoint())
            .collect();
        if rods.is_empty() {
            return Ok(()); // a static scene has nothing to resume
        }
        let file = CheckpointFile {
            format: CHECKPOINT_FORMAT,
            kind: CHECKPOINT_KIND.into(),
            scene_fingerprint: self.fingerprint,
            frame: self.frame,
            rods,
        };
        let bytes = bincode::serialize(&file)
            .map_err(|e| RodRunError::Checkpoint(format!("cannot encode the checkpoint: {e}")))?;
        let path = self.out_dir.join("checkpoint.bin");
        write_atomic(&path, &bytes).map_err(io_error(&path))
    }

    /// Writes one frame of the current state.
    fn write_frame(&mut self, time: f64) -> Result<(), RodRunError> {
        if self.scene.section.output.vtk {
            let name = format!("rods/rods_{:06}.vtp", self.frame);
            let path = self.out_dir.join(&name);
            let states: Vec<(Rod, RodMotion)> = self
                .rods
                .iter()
                .map(|r| {
                    let (rod, motion, _) = r.state();
                    (rod, motion)
                })
                .collect();
            write_rods(&path, &states).map_err(io_error(&path))?;
            self.pvd
                .push(time, &name)
                .map_err(io_error(self.pvd.path()))?;
        }
        Ok(())
    }
}

/// Writes rods as VTK line cells (one per segment) with per-node and per-segment data.
pub fn write_rods(path: &Path, rods: &[(Rod, RodMotion)]) -> std::io::Result<()> {
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
    let point_data = [
        DataArray {
            name: "rod",
            data: ArrayData::I32(&node_rod),
        },
        DataArray {
            name: "velocity",
            data: ArrayData::Vec3(&velocity),
        },
        DataArray {
            name: "curvature",
            data: ArrayData::Vec3(&curvature),
        },
        DataArray {
            name: "internal_moment",
            data: ArrayData::Vec3(&moment),
        },
    ];
    let cell_data = [
        DataArray {
            name: "rod",
            data: ArrayData::I32(&segment_rod),
        },
        DataArray {
            name: "shear_strain",
            data: ArrayData::Vec3(&strain),
        },
        DataArray {
            name: "internal_force",
            data: ArrayData::Vec3(&force),
        },
        DataArray {
            name: "d1",
            data: ArrayData::Vec3(&directors[0]),
        },
        DataArray {
            name: "d2",
            data: ArrayData::Vec3(&directors[1]),
        },
        DataArray {
            name: "d3",
            data: ArrayData::Vec3(&directors[2]),
        },
        DataArray {
            name: "angular_velocity",
            data: ArrayData::Vec3(&angular),
        },
    ];
    write_vtp_polylines(path, &points, &lines, &point_data, &cell_data)
}
