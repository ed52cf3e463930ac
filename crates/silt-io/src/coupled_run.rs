//! The run loop of a coupled scene (resolved spheres in a fluid): steps the fluid with the particles
//! sub-stepping inside its stages, writes one ParaView time series of both, diagnostics, averaged profiles
//! and trajectories on schedule, writes checkpoints, and resumes from them bit for bit.
//!
//! Output directory layout:
//!   series.pvd                                  ParaView time series: part 0 the particles, part 1 the fluid
//!   particles/particles_NNNNNN.vtp              spheres (velocity, hydrodynamic force and torque, contacts)
//!   fluid/fluid_NNNNNN.vti                      cell data: velocity, pressure p / rho_f, solid fraction phi
//!   diagnostics.csv                             global figures per frame
//!   profiles/profile_NNNNNN.csv                 solid fraction, fluid velocity weighted by 1 - phi (seed
//!                                               eq. 33) and particle velocity per plane of cells
//!   track_<id>.csv                              trajectory and hydrodynamic force of each tracked particle
//!   checkpoint.bin                              latest checkpoint (bincode)
//!
//! The schedule counts steps of the fixed time step, as in particle runs: a frame every
//! round(interval / dt) steps, a checkpoint every round(checkpoint_interval / dt), both at the last step.

use crate::atomic::write_atomic;
use crate::checkpoint::read_checkpoint;
use crate::coupled_scene::CoupledScene;
use crate::csv_series::{format_f64, CsvSeries};
use crate::fluid_run::write_fluid_image;
use crate::fluid_scene::{FluidOutput, AXIS_NAMES};
use crate::pvd::PvdSeries;
use crate::simulation::{fingerprint, write_particles};
use crate::vtk::{ArrayData, DataArray};
use glam::DVec3 as Vec3;
use serde::{Deserialize, Serialize};
use silt_dem::diagnostics::{contact_statistics, energies};
use silt_dem::system::{DemCheckpoint, StepError};
use silt_fluid::diagnostics::{kinetic_energy, max_speed_sum, mean_over};
use silt_fluid::projection::max_divergence;
use silt_fluid::{Driving, FluidError, FluidSolver, FluidState};
use silt_ibm::coupling::CoupledParticles;
use silt_ibm::profiles::{fluid_profile, particle_profile, solid_fraction};
use std::path::{Path, PathBuf};

/// Why a coupled run stopped early.
#[derive(Debug)]
pub enum CoupledRunError {
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The fluid diverged.
    Fluid(FluidError),
    /// The particles diverged or left the domain.
    Particles(StepError),
    /// The checkpoint is missing, of another scene or unreadable (bad input: exit code 2).
    Checkpoint(String),
}

impl std::fmt::Display for CoupledRunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CoupledRunError::Io { path, source } => write!(f, "{}: {source}", path.display()),
            CoupledRunError::Fluid(e) => write!(f, "{e}"),
            CoupledRunError::Particles(e) => write!(f, "{e}"),
            CoupledRunError::Checkpoint(m) => write!(f, "{m}"),
        }
    }
}

impl std::error::Error for CoupledRunError {}

fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> CoupledRunError + '_ {
    move |source| CoupledRunError::Io {
        path: path.to_path_buf(),
        source,
    }
}

const CHECKPOINT_FORMAT: u32 = 1;
/// Marks a coupled checkpoint.
const CHECKPOINT_KIND: &str = "silt-coupled";
/// Columns of diagnostics.csv.
pub const DIAGNOSTIC_COLUMNS: [&str; 18] = [
    "time",
    "step",
    "particle_kinetic_energy",
    "particle_rotational_energy",
    "fluid_kinetic_energy",
    "mean_particle_vx",
    "mean_particle_vy",
    "mean_particle_vz",
    "max_divergence",
    "cfl",
    "contacts",
    "wall_contacts",
    "sliding_contacts",
    "max_overlap_over_radius",
    "dry_contacts",
    "markers_disabled",
    "bulk_velocity",
    "driving_gradient",
];
const TRACK_COLUMNS: [&str; 14] = [
    "time", "x", "y", "z", "vx", "vy", "vz", "wx", "wy", "wz", "fx", "fy", "fz", "contacts",
];

#[derive(Serialize, Deserialize)]
struct CheckpointFile {
    format: u32,
    kind: String,
    /// Hash of the scene text, to refuse resuming a different scene.
    scene_fingerprint: u64,
    /// Frames written so far.
    frame: u64,
    fluid: FluidState,
    particles: DemCheckpoint,
    /// The fluid momentum inside each sphere at the last stage (see `CoupledParticles::inner`).
    inner: Option<Vec<(Vec3, Vec3)>>,
}

/// A fluid and its coupled particles with their output schedule and writers.
pub struct CoupledSimulation {
    pub fluid: FluidSolver,
    pub coupled: CoupledParticles,
    pub out_dir: PathBuf,
    pub dt: f64,
    pub end_step: u64,
    output_every: u64,
    checkpoint_every: u64,
    output: FluidOutput,
    particle_vtk: bool,
    profile_axis: usize,
    fluid_density: f64,
    frame: u64,
    fingerprint: u64,
    series: PvdSeries,
    diagnostics: CsvSeries,
    tracks: Vec<(usize, CsvSeries)>,
    /// Axis of the driving (bulk velocity column), 0 without one.
    bulk_axis: usize,
    work: Vec<f64>,
}

/// Summary of a finished (or stopped) run.
#[derive(Clone, Debug)]
pub struct CoupledRunSummary {
    pub steps: u64,
    pub time: f64,
    pub frames: u64,
    pub wall_seconds: f64,
    /// Seconds in the forcing and in the particles' sub-steps (the rest is the fluid).
    pub forcing_seconds: f64,
    pub particle_seconds: f64,
}

impl CoupledSimulation {
    /// Starts a fresh run in `out_dir` (created if needed), writing the initial frame.
    pub fn start(
        scene: &CoupledScene,
        scene_text: &str,
        fluid: FluidSolver,
        coupled: CoupledParticles,
        out_dir: &Path,
    ) -> Result<CoupledSimulation, CoupledRunError> {
        create_directories(out_dir)?;
        let mut sim =
            CoupledSimulation::with_writers(scene, scene_text, fluid, coupled, out_dir, false)?;
        sim.write_output()?;
        Ok(sim)
    }

    /// Continues the run in `out_dir` from its checkpoint; later output is discarded and rewritten.
    pub fn resume(
        scene: &CoupledScene,
        scene_text: &str,
        mut fluid: FluidSolver,
        mut coupled: CoupledParticles,
        out_dir: &Path,
    ) -> Result<CoupledSimulation, CoupledRunError> {
        let path = out_dir.join("checkpoint.bin");
        let file: CheckpointFile = read_checkpoint(
            &path,
            ("coupled", CHECKPOINT_KIND, CHECKPOINT_FORMAT),
            scene_text,
            |f: &CheckpointFile| (f.format, f.kind.clone(), f.scene_fingerprint),
        )
        .map_err(CoupledRunError::Checkpoint)?;
        let corrupt = |m: String| CoupledRunError::Checkpoint(format!("{}: {m}", path.display()));
        fluid.restore(file.fluid).map_err(corrupt)?;
        coupled.dem.restore(file.particles).map_err(corrupt)?;
        if let Some(inner) = &file.inner {
            if inner.len() != coupled.dem.particles.len() {
                return Err(corrupt(format!(
                    "{} inner momenta for {} particles",
                    inner.len(),
                    coupled.dem.particles.len()
                )));
            }
        }
        coupled.inner = file.inner;
        create_directories(out_dir)?;
        let mut sim =
            CoupledSimulation::with_writers(scene, scene_text, fluid, coupled, out_dir, true)?;
        sim.frame = file.frame;
        Ok(sim)
    }

    fn with_writers(
        scene: &CoupledScene,
        scene_text: &str,
        fluid: FluidSolver,
        coupled: CoupledParticles,
        out_dir: &Path,
        resuming: bool,
    ) -> Result<CoupledSimulation, CoupledRunError> {
        let particles = &scene.particles;
        let dt = particles.simulation.dt;
        let end_step = ((particles.simulation.end_time / dt).round() as u64).max(1);
        let output = scene.fluid.output;
        let output_every = ((output.interval / dt).round() as u64).max(1);
        let checkpoint_every = ((output.checkpoint_interval / dt).round() as u64).max(1);
        let time = fluid.state.time;
        let series_path = out_dir.join("series.pvd");
        let diagnostics_path = out_dir.join("diagnostics.csv");
        let open = |path: &Path, columns: &[&str]| {
            if resuming {
                CsvSeries::open_append_truncated(path, columns, time)
            } else {
                CsvSeries::create(path, columns)
            }
            .map_err(io_error(path))
        };
        let series = if resuming {
            let mut series = PvdSeries::from_existing(&series_path)
                .unwrap_or_else(|_| PvdSeries::new(&series_path));
            series.truncate_after(time);
            series.write().map_err(io_error(&series_path))?;
            series
        } else {
            PvdSeries::new(&series_path)
        };
        let diagnostics = open(&diagnostics_path, &DIAGNOSTIC_COLUMNS)?;
        let mut tracks = Vec::new();
        for &id in &particles.output.track {
            let path = out_dir.join(format!("track_{id}.csv"));
            tracks.push((id, open(&path, &TRACK_COLUMNS)?));
        }
        let bulk_axis = match fluid.config.driving {
            Driving::PressureGradient { axis, .. } | Driving::FlowRate { axis, .. } => axis,
            Driving::None => 0,
        };
        Ok(CoupledSimulation {
            fluid,
            coupled,
            out_dir: out_dir.to_path_buf(),
            dt,
            end_step,
            output_every,
            checkpoint_every,
            output,
            particle_vtk: particles.output.vtk,
            profile_axis: scene.profile_axis,
            fluid_density: scene.fluid_density,
            frame: 0,
            fingerprint: fingerprint(scene_text),
            series,
            diagnostics,
            tracks,
            bulk_axis,
            work: Vec::new(),
        })
    }

    /// Steps taken so far.
    pub fn step_count(&self) -> u64 {
        self.fluid.state.steps
    }

    /// Steps until `until_step` (at most the end step), writing output and checkpoints on schedule.
    /// `progress(step, end_step)` is called after every step. A run stopped before the end leaves a
    /// checkpoint where it stopped, for `--resume`. On divergence the output written so far (the last good
    /// frame and checkpoint) is kept and the error says what diverged, where and when.
    pub fn run_until(
        &mut self,
        until_step: u64,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<CoupledRunSummary, CoupledRunError> {
        let start = std::time::Instant::now();
        let first_step = self.step_count();
        let (forcing_before, particles_before) =
            (self.coupled.forcing_seconds, self.coupled.particle_seconds);
        let until = until_step.min(self.end_step);
        let mut checkpoint_at = None;
        while self.step_count() < until {
            self.fluid
                .step_by(self.dt, &mut self.coupled)
                .map_err(CoupledRunError::Fluid)?;
            if let Some(e) = self.coupled.error.take() {
                return Err(CoupledRunError::Particles(e));
            }
            let step = self.step_count();
            if step.is_multiple_of(self.output_every) || step == self.end_step {
                self.write_output()?;
            }
            if step.is_multiple_of(self.checkpoint_every) || step == self.end_step {
                self.write_checkpoint()?;
                checkpoint_at = Some(step);
            }
            progress(step, self.end_step);
        }
        if checkpoint_at != Some(self.step_count()) && self.step_count() > first_step {
            self.write_checkpoint()?;
        }
        Ok(CoupledRunSummary {
            steps: self.step_count() - first_step,
            time: self.fluid.state.time,
            frames: self.frame,
            wall_seconds: start.elapsed().as_secs_f64(),
            forcing_seconds: self.coupled.forcing_seconds - forcing_before,
            particle_seconds: self.coupled.particle_seconds - particles_before,
        })
    }

    /// Writes the checkpoint of the current state (atomically).
    pub fn write_checkpoint(&self) -> Result<(), CoupledRunError> {
        let file = CheckpointFile {
            format: CHECKPOINT_FORMAT,
            kind: CHECKPOINT_KIND.into(),
            scene_fingerprint: self.fingerprint,
            frame: self.frame,
            fluid: self.fluid.state.clone(),
            particles: self.coupled.dem.checkpoint(),
            inner: self.coupled.inner.clone(),
        };
        let bytes = bincode::serialize(&file).map_err(|e| {
            CoupledRunError::Checkpoint(format!("cannot encode the checkpoint: {e}"))
        })?;
        let path = self.out_dir.join("checkpoint.bin");
        write_atomic(&path, &bytes).map_err(io_error(&path))
    }

    /// Writes one frame: the particles and the fluid into the time series, a diagnostics row, the
    /// profiles and the trajectory rows.
    fn write_output(&mut self) -> Result<(), CoupledRunError> {
        let time = self.fluid.state.time;
        let dem = &self.coupled.dem;
        let p = &dem.particles;
        let layout = &self.coupled.forcing.layout;
        let grid = layout.grid;
        let stats = contact_statistics(dem);
        let spheres: Vec<(Vec3, f64)> = p.position.iter().copied().zip(p.radius.clone()).collect();
        let phi = solid_fraction(layout, &spheres);
        let rho = self.fluid_density;
        let hydrodynamic_force: Vec<Vec3> = self
            .coupled
            .forcing
            .step_force
            .iter()
            .map(|f| rho * *f)
            .collect();
        let hydrodynamic_torque: Vec<Vec3> = self
            .coupled
            .forcing
            .step_torque
            .iter()
            .map(|t| rho * *t)
            .collect();

        // One time series with both parts.
        let last = self.step_count() >= self.end_step;
        let fluid_vtk =
            self.output.vtk && (self.frame.is_multiple_of(self.output.vtk_every) || last);
        let mut files = Vec::new();
        if self.particle_vtk {
            let name = format!("particles/particles_{:06}.vtp", self.frame);
            let path = self.out_dir.join(&name);
            write_particles(
                &path,
                p,
                &stats.per_particle,
                &[
                    DataArray {
                        name: "hydrodynamic_force",
                        data: ArrayData::Vec3(&hydrodynamic_force),
                    },
                    DataArray {
                        name: "hydrodynamic_torque",
                        data: ArrayData::Vec3(&hydrodynamic_torque),
                    },
                ],
            )
            .map_err(io_error(&path))?;
            files.push(name);
        }
        let state = &self.fluid.state;
        if fluid_vtk {
            let name = format!("fluid/fluid_{:06}.vti", self.frame);
            let path = self.out_dir.join(&name);
            let solid_fraction = [DataArray {
                name: "solid_fraction",
                data: ArrayData::F64(&phi),
            }];
            write_fluid_image(&path, &grid, state, self.output.vorticity, &solid_fraction)
                .map_err(io_error(&path))?;
            files.push(name);
        }
        if !files.is_empty() {
            let names: Vec<&str> = files.iter().map(|s| s.as_str()).collect();
            self.series
                .push_parts(time, &names)
                .map_err(io_error(self.series.path()))?;
        }

        // Diagnostics.
        let unknowns = [0, 1, 2].map(|c| *self.fluid.velocity_unknowns(c));
        let h = grid.spacing;
        let e = energies(dem);
        let free: Vec<usize> = (0..p.len()).filter(|&i| !p.fixed[i]).collect();
        let mean_velocity = if free.is_empty() {
            Vec3::ZERO
        } else {
            free.iter().map(|&i| p.velocity[i]).sum::<Vec3>() / free.len() as f64
        };
        let driving_gradient = match self.fluid.config.driving {
            Driving::None => 0.0,
            Driving::PressureGradient { gradient, .. } => gradient,
            Driving::FlowRate { .. } => state.driving_gradient,
        };
        let forcing = &self.coupled.forcing;
        let row = [
            time,
            state.steps as f64,
            e.kinetic(),
            e.rotational,
            rho * kinetic_energy(&grid, &state.velocity, &unknowns),
            mean_velocity.x,
            mean_velocity.y,
            mean_velocity.z,
            max_divergence(&state.velocity, self.fluid.cells(), h, &mut self.work),
            max_speed_sum(&state.velocity) * self.dt / h,
            stats.pair_contacts as f64,
            stats.wall_contacts as f64,
            stats.sliding_contacts as f64,
            stats.max_overlap_over_radius,
            self.coupled.dry_contacts as f64,
            (forcing.disabled_at_walls + forcing.disabled_between_spheres) as f64,
            mean_over(&state.velocity[self.bulk_axis], &unknowns[self.bulk_axis]),
            driving_gradient,
        ];
        let path = self.diagnostics.path().to_path_buf();
        self.diagnostics.push(&row).map_err(io_error(&path))?;

        // Profiles along the profile axis: one row per plane of cells.
        let axis = self.profile_axis;
        let fluid_rows = fluid_profile(layout, &state.velocity, &phi, axis);
        let low = grid.origin[axis];
        let high = low + grid.lengths()[axis];
        let particle_rows = particle_profile(
            &p.position,
            &p.velocity,
            axis,
            (low, high),
            grid.cells[axis],
        );
        let mut text = format!(
            "time,{},solid_fraction,fluid_u,fluid_v,fluid_w,particles,particle_u,particle_v,particle_w\n",
            AXIS_NAMES[axis]
        );
        let time_text = format_f64(time);
        for (f, q) in fluid_rows.iter().zip(&particle_rows) {
            let values = [
                f.position,
                f.solid_fraction,
                f.velocity[0],
                f.velocity[1],
                f.velocity[2],
                q.count as f64,
                q.velocity[0],
                q.velocity[1],
                q.velocity[2],
            ];
            text.push_str(&time_text);
            for v in values {
                text.push(',');
                text.push_str(&format_f64(v));
            }
            text.push('\n');
        }
        let path = self
            .out_dir
            .join(format!("profiles/profile_{:06}.csv", self.frame));
        write_atomic(&path, text.as_bytes()).map_err(io_error(&path))?;

        // Trajectories.
        for (id, csv) in &mut self.tracks {
            let i = *id;
            let (x, u, w, f) = (
                p.position[i],
                p.velocity[i],
                p.angular_velocity[i],
                hydrodynamic_force[i],
            );
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
                f.x,
                f.y,
                f.z,
                stats.per_particle[i] as f64,
            ];
            let path = csv.path().to_path_buf();
            csv.push(&row).map_err(io_error(&path))?;
        }
        self.frame += 1;
        Ok(())
    }
}

fn create_directories(out_dir: &Path) -> Result<(), CoupledRunError> {
    for sub in ["particles", "fluid", "profiles"] {
        let dir = out_dir.join(sub);
        std::fs::create_dir_all(&dir).map_err(io_error(&dir))?;
    }
    Ok(())
}
