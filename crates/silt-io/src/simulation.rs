//! The run loop: steps a system to the end time, writes ParaView frames, diagnostics and trajectories
//! on schedule, writes checkpoints, and resumes from them bit for bit.
//!
//! Output directory layout:
//!   particles.pvd, particles/particles_NNNNNN.vtp   ParaView time series
//!   diagnostics.csv                                  global diagnostics per output step
//!   track_<id>.csv                                   trajectory of each tracked particle
//!   checkpoint.bin                                   latest checkpoint (bincode)

use crate::atomic::write_atomic;
use crate::csv_series::CsvSeries;
use crate::pvd::PvdSeries;
use crate::scene::Scene;
use crate::vtk::{write_vtp_points, ArrayData, DataArray};
use serde::{Deserialize, Serialize};
use silt_dem::diagnostics::{contact_statistics, energies};
use silt_dem::system::{DemCheckpoint, DemSystem, StepError};
use std::path::{Path, PathBuf};

/// Why a run stopped early.
#[derive(Debug)]
pub enum RunError {
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    Diverged(StepError),
    Checkpoint(String),
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::Io { path, source } => write!(f, "{}: {source}", path.display()),
            RunError::Diverged(e) => write!(f, "{e}"),
            RunError::Checkpoint(m) => write!(f, "{m}"),
        }
    }
}

impl std::error::Error for RunError {}

fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> RunError + '_ {
    move |source| RunError::Io {
        path: path.to_path_buf(),
        source,
    }
}

const CHECKPOINT_FORMAT: u32 = 1;
const DIAGNOSTIC_COLUMNS: [&str; 8] = [
    "time",
    "step",
    "kinetic_energy",
    "rotational_energy",
    "max_overlap_over_radius",
    "contacts",
    "wall_contacts",
    "sliding_contacts",
];
const TRACK_COLUMNS: [&str; 11] = [
    "time", "x", "y", "z", "vx", "vy", "vz", "wx", "wy", "wz", "contacts",
];

#[derive(Serialize, Deserialize)]
struct CheckpointFile {
    format: u32,
    /// Hash of the scene text, to refuse resuming a different scene.
    scene_fingerprint: u64,
    frame: u64,
    dem: DemCheckpoint,
}

/// A system with its output schedule and writers.
pub struct Simulation {
    pub system: DemSystem,
    pub out_dir: PathBuf,
    pub end_step: u64,
    output_every: u64,
    checkpoint_every: u64,
    frame: u64,
    fingerprint: u64,
    write_vtk: bool,
    pvd: PvdSeries,
    diagnostics: CsvSeries,
    tracks: Vec<(usize, CsvSeries)>,
}

/// Summary of a finished (or stopped) run.
#[derive(Clone, Debug)]
pub struct RunSummary {
    pub steps: u64,
    pub time: f64,
    pub frames: u64,
    pub wall_seconds: f64,
}

/// FNV-1a hash of the scene text (stable across platforms and versions).
pub fn fingerprint(text: &str) -> u64 {
    text.bytes().fold(0xcbf29ce484222325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100000001b3)
    })
}

impl Simulation {
    /// Starts a fresh run in `out_dir` (created if needed), writing the initial frame.
    pub fn start(
        scene: &Scene,
        scene_text: &str,
        system: DemSystem,
        out_dir: &Path,
    ) -> Result<Simulation, RunError> {
        std::fs::create_dir_all(out_dir.join("particles")).map_err(io_error(out_dir))?;
        let mut sim = Simulation::with_writers(scene, scene_text, system, out_dir, None)?;
        sim.write_output()?;
        Ok(sim)
    }

    /// Continues the run in `out_dir` from its checkpoint; later output is discarded and rewritten.
    pub fn resume(
        scene: &Scene,
        scene_text: &str,
        mut system: DemSystem,
        out_dir: &Path,
    ) -> Result<Simulation, RunError> {
        let path = out_dir.join("checkpoint.bin");
        let bytes = std::fs::read(&path).map_err(io_error(&path))?;
        let file: CheckpointFile = bincode::deserialize(&bytes).map_err(|e| {
            RunError::Checkpoint(format!("{}: not a Silt checkpoint ({e})", path.display()))
        })?;
        if file.format != CHECKPOINT_FORMAT {
            return Err(RunError::Checkpoint(format!(
                "{}: checkpoint format {} is not supported",
                path.display(),
                file.format
            )));
        }
        if file.scene_fingerprint != fingerprint(scene_text) {
            return Err(RunError::Checkpoint(format!(
                "{}: the checkpoint was written for a different scene file; resume with the same scene",
                path.display()
            )));
        }
        system
            .restore(file.dem)
            .map_err(|m| RunError::Checkpoint(format!("{}: {m}", path.display())))?;
        let mut sim =
            Simulation::with_writers(scene, scene_text, system, out_dir, Some(file.frame))?;
        sim.frame = file.frame;
        Ok(sim)
    }

    fn with_writers(
        scene: &Scene,
        scene_text: &str,
        system: DemSystem,
        out_dir: &Path,
        resume_frame: Option<u64>,
    ) -> Result<Simulation, RunError> {
        let dt = scene.simulation.dt;
        let end_step = (scene.simulation.end_time / dt).round() as u64;
        let output_interval = scene
            .output
            .interval
            .unwrap_or(scene.simulation.end_time / 100.0);
        let output_every = ((output_interval / dt).round() as u64).max(1);
        let checkpoint_every = scene
            .output
            .checkpoint_interval
            .map(|t| ((t / dt).round() as u64).max(1))
            .unwrap_or(10 * output_every);
        let time = system.time();
        let diagnostics_path = out_dir.join("diagnostics.csv");
        let pvd_path = out_dir.join("particles.pvd");
        let (pvd, diagnostics) = if resume_frame.is_some() {
            let mut pvd =
                PvdSeries::from_existing(&pvd_path).unwrap_or_else(|_| PvdSeries::new(&pvd_path));
            pvd.truncate_after(time);
            pvd.write().map_err(io_error(&pvd_path))?;
            let csv =
                CsvSeries::open_append_truncated(&diagnostics_path, &DIAGNOSTIC_COLUMNS, time)
                    .map_err(io_error(&diagnostics_path))?;
            (pvd, csv)
        } else {
            (
                PvdSeries::new(&pvd_path),
                CsvSeries::create(&diagnostics_path, &DIAGNOSTIC_COLUMNS)
                    .map_err(io_error(&diagnostics_path))?,
            )
        };
        let mut tracks = Vec::new();
        for &id in &scene.output.track {
            let path = out_dir.join(format!("track_{id}.csv"));
            let csv = if resume_frame.is_some() {
                CsvSeries::open_append_truncated(&path, &TRACK_COLUMNS, time)
            } else {
                CsvSeries::create(&path, &TRACK_COLUMNS)
            }
            .map_err(io_error(&path))?;
            tracks.push((id, csv));
        }
        Ok(Simulation {
            system,
            out_dir: out_dir.to_path_buf(),
            end_step,
            output_every,
            checkpoint_every,
            frame: 0,
            fingerprint: fingerprint(scene_text),
            write_vtk: scene.output.vtk,
            pvd,
            diagnostics,
            tracks,
        })
    }

    /// Steps until `until_step` (at most the end step), writing output and checkpoints on schedule.
    /// `progress(step, end_step)` is called after every step. On divergence, the output written so far
    /// (the last good frame and checkpoint) is kept and the error names the particle and time.
    pub fn run_until(
        &mut self,
        until_step: u64,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<RunSummary, RunError> {
        let start = std::time::Instant::now();
        let until = until_step.min(self.end_step);
        let first_step = self.system.step_count;
        while self.system.step_count < until {
            self.system.step().map_err(RunError::Diverged)?;
            let step = self.system.step_count;
            if step.is_multiple_of(self.output_every) || step == self.end_step {
                self.write_output()?;
            }
            if step.is_multiple_of(self.checkpoint_every) || step == self.end_step {
                self.write_checkpoint()?;
            }
            progress(step, self.end_step);
        }
        // A run stopped early leaves a checkpoint of where it stopped, for `--resume`.
        if !self.system.step_count.is_multiple_of(self.checkpoint_every)
            && self.system.step_count != self.end_step
        {
            self.write_checkpoint()?;
        }
        Ok(RunSummary {
            steps: self.system.step_count - first_step,
            time: self.system.time(),
            frames: self.frame,
            wall_seconds: start.elapsed().as_secs_f64(),
        })
    }

    /// Writes the checkpoint of the current state (atomically).
    pub fn write_checkpoint(&self) -> Result<(), RunError> {
        let file = CheckpointFile {
            format: CHECKPOINT_FORMAT,
            scene_fingerprint: self.fingerprint,
            frame: self.frame,
            dem: self.system.checkpoint(),
        };
        let bytes = bincode::serialize(&file)
            .map_err(|e| RunError::Checkpoint(format!("cannot encode the checkpoint: {e}")))?;
        let path = self.out_dir.join("checkpoint.bin");
        write_atomic(&path, &bytes).map_err(io_error(&path))
    }

    /// Writes one frame: VTK particles, a diagnostics row and the trajectory rows.
    fn write_output(&mut self) -> Result<(), RunError> {
        let s = &self.system;
        let p = &s.particles;
        let time = s.time();
        let stats = contact_statistics(s);
        let e = energies(s);
        if self.write_vtk {
            let name = format!("particles/particles_{:06}.vtp", self.frame);
            let path = self.out_dir.join(&name);
            write_particles(&path, p, &stats.per_particle, &[]).map_err(io_error(&path))?;
            self.pvd
                .push(time, &name)
                .map_err(io_error(self.pvd.path()))?;
        }
        let row = [
            time,
            s.step_count as f64,
            e.kinetic(),
            e.rotational,
            stats.max_overlap_over_radius,
            stats.pair_contacts as f64,
            stats.wall_contacts as f64,
            stats.sliding_contacts as f64,
        ];
        let path = self.diagnostics.path().to_path_buf();
        self.diagnostics.push(&row).map_err(io_error(&path))?;
        for (id, csv) in &mut self.tracks {
            let (x, u, w) = (p.position[*id], p.velocity[*id], p.angular_velocity[*id]);
            let row = [
                time,
                x.x,
                x.y,
                x.z,
                u.x,
                u.y,
                u.z,
                w.x,
                w.y,
                w.z,
                stats.per_particle[*id] as f64,
            ];
            let path = csv.path().to_path_buf();
            csv.push(&row).map_err(io_error(&path))?;
        }
        self.frame += 1;
        Ok(())
    }
}

/// Writes the spheres as VTK points with id, radius, diameter, velocity, angular velocity, contact count,
/// fixed flag and material, followed by the `extra` arrays.
pub(crate) fn write_particles(
    path: &Path,
    p: &silt_dem::particles::Particles,
    contacts_per_particle: &[u32],
    extra: &[DataArray],
) -> std::io::Result<()> {
    let contacts: Vec<i32> = contacts_per_particle.iter().map(|&c| c as i32).collect();
    let fixed: Vec<i32> = p.fixed.iter().map(|&f| f as i32).collect();
    let material: Vec<i32> = p.material.iter().map(|&m| m as i32).collect();
    let ids: Vec<i32> = (0..p.len() as i32).collect();
    let diameter: Vec<f64> = p.radius.iter().map(|r| 2.0 * r).collect();
    let mut arrays = vec![
        DataArray {
            name: "id",
            data: ArrayData::I32(&ids),
        },
        DataArray {
            name: "radius",
            data: ArrayData::F64(&p.radius),
        },
        DataArray {
            name: "diameter",
            data: ArrayData::F64(&diameter),
        },
        DataArray {
            name: "velocity",
            data: ArrayData::Vec3(&p.velocity),
        },
        DataArray {
            name: "angular_velocity",
            data: ArrayData::Vec3(&p.angular_velocity),
        },
        DataArray {
            name: "contacts",
            data: ArrayData::I32(&contacts),
        },
        DataArray {
            name: "fixed",
            data: ArrayData::I32(&fixed),
        },
        DataArray {
            name: "material",
            data: ArrayData::I32(&material),
        },
    ];
    arrays.extend(extra.iter().map(|a| DataArray {
        name: a.name,
        data: a.data,
    }));
    write_vtp_points(path, &p.position, &arrays)
}
