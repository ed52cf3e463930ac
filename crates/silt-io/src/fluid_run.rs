//! The run loop of a fluid scene: steps the solver to the end time, writes ParaView images, diagnostics
//! and profiles on schedule, writes checkpoints, and resumes from them bit for bit.
//!
//! Output directory layout:
//!   fluid.pvd, fluid/fluid_NNNNNN.vti   ParaView time series (cell data: velocity, pressure, vorticity)
//!   fluid_diagnostics.csv               global figures per frame
//!   profiles/profile_NNNNNN.csv         plane-averaged profiles per frame (with `profile_axis`)
//!   checkpoint.bin                      latest checkpoint (bincode)
//!
//! Schedule. With a fixed time step everything counts steps, as in particle runs: a frame every
//! round(interval / dt) steps, a checkpoint every round(checkpoint_interval / dt) steps, both at the last
//! step round(end_time / dt). With an adaptive step (`cfl`) the steps are shortened to land exactly on
//! the frame times (multiples of the interval), the checkpoint times and the end time; `--until` then
//! stops after the first step that reaches the time asked for, without shortening it, so that a run in
//! two legs takes the same steps as a run in one.

use crate::atomic::write_atomic;
use crate::checkpoint::read_checkpoint;
use crate::csv_series::{format_f64, CsvSeries};
use crate::fluid_scene::{FluidOutput, FluidScene, AXIS_NAMES, FACE_NAMES};
use crate::pvd::PvdSeries;
use crate::run_failure::{io_error, RunFailure};
use crate::simulation::fingerprint;
use crate::vtk::{write_vti, ArrayData, DataArray};
use glam::DVec3;
use serde::{Deserialize, Serialize};
use silt_fluid::diagnostics::{
    kinetic_energy, max_speed_sum, mean_over, profiles, wall_shear_stress,
};
use silt_fluid::projection::max_divergence;
use silt_fluid::solver::NoForcing;
use silt_fluid::{Boundary, Driving, Field, FluidError, FluidSolver, FluidState, TimeStep};
use std::path::{Path, PathBuf};

/// Why a fluid run stopped early.
pub type FluidRunError = RunFailure<FluidError>;

const CHECKPOINT_FORMAT: u32 = 1;
/// Marks a fluid checkpoint (particle checkpoints have none).
const CHECKPOINT_KIND: &str = "silt-fluid";
const BASE_COLUMNS: [&str; 8] = [
    "time",
    "step",
    "dt",
    "kinetic_energy",
    "max_divergence",
    "cfl",
    "bulk_velocity",
    "driving_gradient",
];

#[derive(Serialize, Deserialize)]
struct CheckpointFile {
    format: u32,
    kind: String,
    /// Hash of the scene text, to refuse resuming a different scene.
    scene_fingerprint: u64,
    /// Frames written so far.
    frame: u64,
    state: FluidState,
}

/// When frames and checkpoints are due.
#[derive(Clone, Copy, Debug)]
enum Schedule {
    Steps {
        dt: f64,
        end_step: u64,
        output_every: u64,
        checkpoint_every: u64,
    },
    Times {
        interval: f64,
        checkpoint_interval: f64,
    },
}

/// A fluid solver with its output schedule and writers.
pub struct FluidSimulation {
    pub solver: FluidSolver,
    pub out_dir: PathBuf,
    pub end_time: f64,
    schedule: Schedule,
    output: FluidOutput,
    frame: u64,
    /// Step count of the last frame written (or of the state resumed from).
    output_at: u64,
    /// Step count of the last checkpoint written or read.
    checkpoint_at: Option<u64>,
    fingerprint: u64,
    pvd: PvdSeries,
    diagnostics: CsvSeries,
    /// (axis, side, component) of each wall shear stress column.
    wall_columns: Vec<(usize, usize, usize)>,
    /// Axis of the bulk velocity column.
    bulk_axis: usize,
    work: Vec<f64>,
}

/// Summary of a finished (or stopped) run.
#[derive(Clone, Debug)]
pub struct FluidRunSummary {
    pub steps: u64,
    pub time: f64,
    pub frames: u64,
    pub wall_seconds: f64,
}

/// The names of the diagnostics columns of a scene.
pub fn diagnostic_columns(scene: &FluidScene) -> Vec<String> {
    let mut columns: Vec<String> = BASE_COLUMNS.iter().map(|s| s.to_string()).collect();
    for (axis, side, c) in wall_shear_columns(scene) {
        columns.push(format!(
            "wall_shear_{}_{}",
            FACE_NAMES[axis][side], AXIS_NAMES[c]
        ));
    }
    columns
}

fn wall_shear_columns(scene: &FluidScene) -> Vec<(usize, usize, usize)> {
    let mut columns = Vec::new();
    for axis in 0..3 {
        for side in 0..2 {
            if matches!(
                scene.config.boundaries.faces[axis][side],
                Boundary::NoSlip { .. }
            ) {
                for c in (0..3).filter(|&c| c != axis) {
                    columns.push((axis, side, c));
                }
            }
        }
    }
    columns
}

impl FluidSimulation {
    /// Starts a fresh run in `out_dir` (created if needed), writing the initial frame.
    pub fn start(
        scene: &FluidScene,
        scene_text: &str,
        solver: FluidSolver,
        out_dir: &Path,
    ) -> Result<FluidSimulation, FluidRunError> {
        std::fs::create_dir_all(out_dir.join("fluid")).map_err(io_error(out_dir))?;
        if scene.output.profile_axis.is_some() {
            std::fs::create_dir_all(out_dir.join("profiles")).map_err(io_error(out_dir))?;
        }
        let mut sim = FluidSimulation::with_writers(scene, scene_text, solver, out_dir, false)?;
        sim.write_output()?;
        Ok(sim)
    }

    /// Continues the run in `out_dir` from its checkpoint; later output is discarded and rewritten.
    pub fn resume(
        scene: &FluidScene,
        scene_text: &str,
        mut solver: FluidSolver,
        out_dir: &Path,
    ) -> Result<FluidSimulation, FluidRunError> {
        let path = out_dir.join("checkpoint.bin");
        let file: CheckpointFile = read_checkpoint(
            &path,
            ("fluid", CHECKPOINT_KIND, CHECKPOINT_FORMAT),
            scene_text,
            |f: &CheckpointFile| (f.format, f.kind.clone(), f.scene_fingerprint),
        )
        .map_err(FluidRunError::Checkpoint)?;
        solver
            .restore(file.state)
            .map_err(|m| FluidRunError::Checkpoint(format!("{}: {m}", path.display())))?;
        std::fs::create_dir_all(out_dir.join("fluid")).map_err(io_error(out_dir))?;
        if scene.output.profile_axis.is_some() {
            std::fs::create_dir_all(out_dir.join("profiles")).map_err(io_error(out_dir))?;
        }
        let mut sim = FluidSimulation::with_writers(scene, scene_text, solver, out_dir, true)?;
        sim.frame = file.frame;
        sim.output_at = sim.solver.state.steps;
        sim.checkpoint_at = Some(sim.solver.state.steps);
        Ok(sim)
    }

    fn with_writers(
        scene: &FluidScene,
        scene_text: &str,
        solver: FluidSolver,
        out_dir: &Path,
        resuming: bool,
    ) -> Result<FluidSimulation, FluidRunError> {
        let output = scene.output;
        let schedule = match scene.config.time_step {
            TimeStep::Fixed(dt) => {
                let output_every = ((output.interval / dt).round() as u64).max(1);
                Schedule::Steps {
                    dt,
                    end_step: scene.fixed_steps().unwrap_or(1).max(1),
                    output_every,
                    checkpoint_every: ((output.checkpoint_interval / dt).round() as u64).max(1),
                }
            }
            TimeStep::Cfl { .. } => Schedule::Times {
                interval: output.interval,
                checkpoint_interval: output.checkpoint_interval,
            },
        };
        let columns = diagnostic_columns(scene);
        let columns: Vec<&str> = columns.iter().map(|s| s.as_str()).collect();
        let time = solver.state.time;
        let diagnostics_path = out_dir.join("fluid_diagnostics.csv");
        let pvd_path = out_dir.join("fluid.pvd");
        let (pvd, diagnostics) = if resuming {
            let mut pvd =
                PvdSeries::from_existing(&pvd_path).unwrap_or_else(|_| PvdSeries::new(&pvd_path));
            pvd.truncate_after(time);
            pvd.write().map_err(io_error(&pvd_path))?;
            let csv = CsvSeries::open_append_truncated(&diagnostics_path, &columns, time)
                .map_err(io_error(&diagnostics_path))?;
            (pvd, csv)
        } else {
            (
                PvdSeries::new(&pvd_path),
                CsvSeries::create(&diagnostics_path, &columns)
                    .map_err(io_error(&diagnostics_path))?,
            )
        };
        let bulk_axis = match scene.config.driving {
            Driving::PressureGradient { axis, .. } | Driving::FlowRate { axis, .. } => axis,
            Driving::None => 0,
        };
        Ok(FluidSimulation {
            solver,
            out_dir: out_dir.to_path_buf(),
            end_time: scene.end_time,
            schedule,
            output,
            frame: 0,
            output_at: 0,
            checkpoint_at: None,
            fingerprint: fingerprint(scene_text),
            pvd,
            diagnostics,
            wall_columns: wall_shear_columns(scene),
            bulk_axis,
            work: Vec::new(),
        })
    }

    /// Tolerance of time comparisons.
    fn epsilon(&self) -> f64 {
        1e-9 * self.output.interval.min(self.end_time)
    }

    /// Whether the run has reached its end time.
    pub fn finished(&self) -> bool {
        match self.schedule {
            Schedule::Steps { end_step, .. } => self.solver.state.steps >= end_step,
            Schedule::Times { .. } => self.solver.state.time >= self.end_time,
        }
    }

    /// The time the run ends at: end_time, or with a fixed step the time of the last whole step.
    pub fn final_time(&self) -> f64 {
        match self.schedule {
            Schedule::Steps { dt, end_step, .. } => end_step as f64 * dt,
            Schedule::Times { .. } => self.end_time,
        }
    }

    /// Steps until the simulated time reaches `until` (at most the end time), writing output and
    /// checkpoints on schedule. `progress(solver)` is called after every step. A run stopped before the
    /// end leaves a checkpoint where it stopped, for `--resume`. On divergence the output written so far
    /// (the last good frame and checkpoint) is kept and the error names the step and time.
    pub fn run_until(
        &mut self,
        until: f64,
        progress: &mut dyn FnMut(&FluidSolver),
    ) -> Result<FluidRunSummary, FluidRunError> {
        let start = std::time::Instant::now();
        let first_step = self.solver.state.steps;
        match self.schedule {
            Schedule::Steps {
                dt,
                end_step,
                output_every,
                checkpoint_every,
            } => {
                let until_step = if until.is_finite() {
                    ((until / dt).round().max(0.0) as u64).min(end_step)
                } else {
                    end_step
                };
                while self.solver.state.steps < until_step {
                    self.solver.step().map_err(FluidRunError::Diverged)?;
                    let step = self.solver.state.steps;
                    if step.is_multiple_of(output_every) || step == end_step {
                        self.write_output()?;
                    }
                    if step.is_multiple_of(checkpoint_every) || step == end_step {
                        self.write_checkpoint()?;
                    }
                    progress(&self.solver);
                }
            }
            Schedule::Times {
                interval,
                checkpoint_interval,
            } => {
                let eps = self.epsilon();
                let until = until.min(self.end_time);
                while self.solver.state.time < self.end_time && self.solver.state.time < until - eps
                {
                    let time = self.solver.state.time;
                    let next_output = self.frame as f64 * interval;
                    let next_checkpoint =
                        ((time / checkpoint_interval + 1e-9).floor() + 1.0) * checkpoint_interval;
                    let target = next_output.min(next_checkpoint).min(self.end_time);
                    self.adaptive_step(target)?;
                    let time = self.solver.state.time;
                    let last = time >= self.end_time;
                    if time >= next_output || (last && self.output_at != self.solver.state.steps) {
                        self.write_output()?;
                    }
                    if time >= next_checkpoint || last {
                        self.write_checkpoint()?;
                    }
                    progress(&self.solver);
                }
            }
        }
        if self.checkpoint_at != Some(self.solver.state.steps) {
            self.write_checkpoint()?;
        }
        Ok(FluidRunSummary {
            steps: self.solver.state.steps - first_step,
            time: self.solver.state.time,
            frames: self.frame,
            wall_seconds: start.elapsed().as_secs_f64(),
        })
    }

    /// One adaptive step, shortened to end exactly at `target` when it is within reach (halved when it is
    /// within two steps, so the last one is not a sliver).
    fn adaptive_step(&mut self, target: f64) -> Result<(), FluidRunError> {
        let time = self.solver.state.time;
        let dt_cfl = self.solver.next_dt();
        let remaining = target - time;
        let (dt, lands) = if remaining <= dt_cfl {
            (remaining, true)
        } else if remaining < 2.0 * dt_cfl {
            (0.5 * remaining, false)
        } else {
            (dt_cfl, false)
        };
        self.solver
            .step_by(dt, &mut NoForcing)
            .map_err(FluidRunError::Diverged)?;
        if lands {
            self.solver.state.time = target;
        }
        Ok(())
    }

    /// Writes the checkpoint of the current state (atomically).
    pub fn write_checkpoint(&mut self) -> Result<(), FluidRunError> {
        let file = CheckpointFile {
            format: CHECKPOINT_FORMAT,
            kind: CHECKPOINT_KIND.into(),
            scene_fingerprint: self.fingerprint,
            frame: self.frame,
            state: self.solver.state.clone(),
        };
        let bytes = bincode::serialize(&file)
            .map_err(|e| FluidRunError::Checkpoint(format!("cannot encode the checkpoint: {e}")))?;
        let path = self.out_dir.join("checkpoint.bin");
        write_atomic(&path, &bytes).map_err(io_error(&path))?;
        self.checkpoint_at = Some(self.solver.state.steps);
        Ok(())
    }

    /// Writes one frame: the VTK image, a diagnostics row and the profiles.
    fn write_output(&mut self) -> Result<(), FluidRunError> {
        let s = &self.solver;
        let grid = *s.grid();
        let state = &s.state;
        let time = state.time;
        let last = match self.schedule {
            Schedule::Steps { end_step, .. } => state.steps >= end_step,
            Schedule::Times { .. } => time >= self.end_time,
        };
        if self.output.vtk && (self.frame.is_multiple_of(self.output.vtk_every) || last) {
            let name = format!("fluid/fluid_{:06}.vti", self.frame);
            let path = self.out_dir.join(&name);
            write_fluid_image(&path, &grid, state, self.output.vorticity, &[])
                .map_err(io_error(&path))?;
            self.pvd
                .push(time, &name)
                .map_err(io_error(self.pvd.path()))?;
        }

        let unknowns = [0, 1, 2].map(|c| *s.velocity_unknowns(c));
        let h = grid.spacing;
        let dt = if state.steps > 0 {
            state.last_dt
        } else {
            s.next_dt()
        };
        let driving_gradient = match s.config.driving {
            Driving::None => 0.0,
            Driving::PressureGradient { gradient, .. } => gradient,
            Driving::FlowRate { .. } => state.driving_gradient,
        };
        let mut row = vec![
            time,
            state.steps as f64,
            dt,
            kinetic_energy(&grid, &state.velocity, &unknowns),
            max_divergence(&state.velocity, s.cells(), h, &mut self.work),
            max_speed_sum(&state.velocity) * dt / h,
            mean_over(&state.velocity[self.bulk_axis], &unknowns[self.bulk_axis]),
            driving_gradient,
        ];
        for &(axis, side, c) in &self.wall_columns {
            row.push(
                wall_shear_stress(
                    &grid,
                    &s.config.boundaries,
                    &state.velocity,
                    s.config.viscosity,
                    axis,
                    side,
                    c,
                )
                .unwrap_or(f64::NAN),
            );
        }
        let path = self.diagnostics.path().to_path_buf();
        self.diagnostics.push(&row).map_err(io_error(&path))?;

        if let Some(axis) = self.output.profile_axis {
            let path = self
                .out_dir
                .join(format!("profiles/profile_{:06}.csv", self.frame));
            let mut text = format!("time,{},u,v,w,p\n", AXIS_NAMES[axis]);
            let time_text = format_f64(time);
            for r in profiles(&grid, &state.velocity, &state.pressure, axis) {
                text.push_str(&time_text);
                for v in r {
                    text.push(',');
                    text.push_str(&format_f64(v));
                }
                text.push('\n');
            }
            write_atomic(&path, text.as_bytes()).map_err(io_error(&path))?;
        }
        self.frame += 1;
        self.output_at = state.steps;
        Ok(())
    }
}

/// Visits the cells (1..=n along each axis) x fastest.
fn for_each_cell(dims: [usize; 3], mut visit: impl FnMut(usize, usize, usize)) {
    for k in 1..dims[2] - 1 {
        for j in 1..dims[1] - 1 {
            for i in 1..dims[0] - 1 {
                visit(i, j, k);
            }
        }
    }
}

/// The values of a cell-centred field at its cells, x fastest.
pub fn cell_values(f: &Field) -> Vec<f64> {
    let mut out = Vec::with_capacity(f.dims.iter().map(|d| d - 2).product());
    for_each_cell(f.dims, |i, j, k| out.push(f.at(i, j, k)));
    out
}

/// Cell-centred velocity: each component is the mean of its two faces of the cell.
pub fn cell_velocity(u: &[Field; 3]) -> Vec<DVec3> {
    let dims = u[0].dims;
    let mut out = Vec::with_capacity(dims.iter().map(|d| d - 2).product());
    for_each_cell(dims, |i, j, k| {
        let mut v = [0.0; 3];
        for c in 0..3 {
            let x = u[c].index(i, j, k);
            v[c] = 0.5 * (u[c].data[x] + u[c].data[x - u[c].stride(c)]);
        }
        out.push(DVec3::from(v));
    });
    out
}

/// Cell-centred vorticity: the staggered curl, which lives on the cell edges (omega_a on the edges along
/// a, from the differences of the two neighbouring face values of each other component), averaged over
/// the four edges along a around the cell. Ghost values (walls, periodic copies) enter at the boundary.
pub fn cell_vorticity(u: &[Field; 3], spacing: f64) -> Vec<DVec3> {
    let dims = u[0].dims;
    let inverse_h = 1.0 / spacing;
    let mut out = Vec::with_capacity(dims.iter().map(|d| d - 2).product());
    for_each_cell(dims, |i, j, k| {
        let mut w = [0.0; 3];
        for a in 0..3 {
            let (b, c) = ((a + 1) % 3, (a + 2) % 3);
            let (uc, ub) = (&u[c], &u[b]);
            let (sb, sc) = (uc.stride(b), ub.stride(c));
            let centre = uc.index(i, j, k);
            let mut sum = 0.0;
            for db in 0..2 {
                for dc in 0..2 {
                    // Edge at index (i, j, k) - db e_b - dc e_c.
                    let x = centre - db * uc.stride(b) - dc * uc.stride(c);
                    sum += uc.data[x + sb] - uc.data[x] - ub.data[x + sc] + ub.data[x];
                }
            }
            w[a] = 0.25 * sum * inverse_h;
        }
        out.push(DVec3::from(w));
    });
    out
}

/// Writes the fluid as VTK ImageData of the grid's cells: cell-centred `velocity`, `pressure`, the `extra`
/// arrays and, with `vorticity`, the cell-centred `vorticity`.
pub(crate) fn write_fluid_image(
    path: &Path,
    grid: &silt_fluid::Grid,
    state: &FluidState,
    vorticity: bool,
    extra: &[DataArray],
) -> std::io::Result<()> {
    let velocity = cell_velocity(&state.velocity);
    let pressure = cell_values(&state.pressure);
    let curl = if vorticity {
        cell_vorticity(&state.velocity, grid.spacing)
    } else {
        Vec::new()
    };
    let mut arrays = vec![
        DataArray {
            name: "velocity",
            data: ArrayData::Vec3(&velocity),
        },
        DataArray {
            name: "pressure",
            data: ArrayData::F64(&pressure),
        },
    ];
    arrays.extend(extra.iter().map(|a| DataArray {
        name: a.name,
        data: a.data,
    }));
    if vorticity {
        arrays.push(DataArray {
            name: "vorticity",
            data: ArrayData::Vec3(&curl),
        });
    }
    write_vti(
        path,
        DVec3::from(grid.origin),
        DVec3::splat(grid.spacing),
        grid.cells,
        &arrays,
    )
}
