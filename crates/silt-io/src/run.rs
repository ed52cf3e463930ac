//! The run loop of every model: steps a [`Model`] to the end time, writes its frames, diagnostics and
//! series on one schedule, writes checkpoints, and resumes (or extends) a run from them bit for bit.
//!
//! Output directory layout (the same for every kind of scene):
//!   scene.toml                         the scene as run
//!   series.pvd                         ParaView time series of the frames' data sets (one part each)
//!   <set>/<set>_NNNNNN.<vtp|vti>       one file per data set and frame (`particles`, `fluid`, ...)
//!   diagnostics.csv                    the model's diagnostics rows
//!   <series>.csv                       the model's own series (`track_<id>.csv`, `fibers.csv`, `bed.csv`), rows per frame
//!   <folder>/<folder minus s>_NNNNNN.csv  the model's per-frame tables (`profiles/profile_NNNNNN.csv`)
//!   checkpoint.bin                     the latest checkpoint: a header (kind, format, scene fingerprint,
//!                                      frame, step, time), then the model's state (bincode)
//!
//! A distributed run (`mpirun -np N silt run`) writes the same folder: rank 0 writes the shared files
//! (scene, series, diagnostics, tables) from the model's global figures, every rank its own piece of
//! an image (`fluid/fluid_NNNNNN_rRRRR.vti`, gathered by rank 0's `fluid/fluid_NNNNNN.pvti`, which the
//! `.pvd` lists) and its own checkpoint (`checkpoint.rankR-of-N.bin`: a run resumes on as many ranks
//! as it was written by). A failure on any rank stops every rank at the same point.
//!
//! Schedule. With a fixed time step everything counts steps: a frame every round(interval / dt) steps
//! and at the last step round(end_time / dt); a checkpoint every round(checkpoint_interval / dt) steps
//! (ten frames by default) and at the end; with `diagnostics_every`, a diagnostics row also every that
//! many steps. With an adaptive step the model lands on the frame times (multiples of the interval),
//! the checkpoint times and the end time. `until` stops after the first step that reaches it, without
//! shortening that step, so a run in two legs takes the same steps as a run in one; the stop leaves a
//! checkpoint. A fresh run into an existing directory first removes what an earlier run of Silt wrote
//! there (the files named above), nothing else.

use crate::atomic::write_atomic;
use crate::csv_series::{format_f64, CsvSeries};
use crate::pvd::PvdSeries;
use crate::vtk::{
    write_pvti, write_pvtp, write_vti_piece, write_vtp_points, write_vtp_polylines, ArrayData,
    DataArray, ImagePiece,
};
use bincode::Options as _;
use serde::{Deserialize, Serialize};
pub use silt_core::format_time;
use silt_core::model::{
    Array, Clock, Dataset, FrameContent, Geometry, Horizon, Model, StepFailure, Table, Values,
};
use silt_core::Vec3;
use silt_parallel::{Comm, SingleRank};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Why a run stopped early.
#[derive(Debug)]
pub enum RunError {
    /// A file could not be written or read.
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The model diverged or failed (exit code 1); the last good frame and checkpoint are kept.
    Diverged(StepFailure),
    /// The checkpoint is missing, of another scene or unreadable (bad input: exit code 2).
    Checkpoint(String),
    /// The scene cannot be built (bad input: exit code 2).
    Scene(crate::scenes::SceneError),
    /// Another rank of a distributed run failed (it reports why).
    OtherRank(usize),
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::Io { path, source } => write!(f, "{}: {source}", path.display()),
            RunError::Diverged(e) => write!(f, "{e}"),
            RunError::Checkpoint(m) => write!(f, "{m}"),
            RunError::Scene(e) => write!(f, "{e}"),
            RunError::OtherRank(n) => {
                write!(f, "{n} other rank(s) of the run failed (see their message)")
            }
        }
    }
}

impl std::error::Error for RunError {}

impl RunError {
    /// The exit code of the command: 2 for bad input (a scene or a checkpoint that cannot be used),
    /// else 1.
    pub fn exit_code(&self) -> u8 {
        match self {
            RunError::Checkpoint(_) | RunError::Scene(_) => 2,
            _ => 1,
        }
    }
}

fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> RunError + '_ {
    move |source| RunError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// The output schedule of a run, from the scene.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RunSettings {
    pub end_time: f64,
    /// Simulated time between frames.
    pub interval: f64,
    /// Simulated time between checkpoints; `None`: every ten frames.
    pub checkpoint_interval: Option<f64>,
    /// Write ParaView data sets.
    pub vtk: bool,
    /// Grids (the fluid) only every this many frames, and at the end.
    pub vtk_every: u64,
    /// A diagnostics row also every this many steps (fixed steps only); `None`: at the frames only.
    pub diagnostics_every: Option<u64>,
}

/// When frames, rows and checkpoints are due.
#[derive(Clone, Copy, Debug)]
enum Schedule {
    Steps {
        dt: f64,
        end_step: u64,
        output_every: u64,
        checkpoint_every: u64,
        diagnostics_every: Option<u64>,
    },
    Times {
        interval: f64,
        checkpoint_interval: f64,
    },
}

impl Schedule {
    fn new(clock: Clock, s: &RunSettings) -> Schedule {
        match clock {
            Clock::Fixed(dt) => {
                let output_every = ((s.interval / dt).round() as u64).max(1);
                Schedule::Steps {
                    dt,
                    end_step: ((s.end_time / dt).round() as u64).max(1),
                    output_every,
                    checkpoint_every: s
                        .checkpoint_interval
                        .map_or(output_every.saturating_mul(10), |t| {
                            ((t / dt).round() as u64).max(1)
                        }),
                    diagnostics_every: s.diagnostics_every,
                }
            }
            Clock::Adaptive => Schedule::Times {
                interval: s.interval,
                checkpoint_interval: s.checkpoint_interval.unwrap_or(10.0 * s.interval),
            },
        }
    }
}

const CHECKPOINT_MAGIC: &str = "silt checkpoint";
const CHECKPOINT_FORMAT: u32 = 4;

/// What a checkpoint file starts with: enough to refuse the wrong file before reading the state.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CheckpointHeader {
    pub magic: String,
    pub format: u32,
    /// The model kind ([`Model::kind`]).
    pub kind: String,
    /// The scene's fingerprint ([`crate::scenes::fingerprint`]): its physics, not its end time or output.
    pub fingerprint: u64,
    /// Frames written so far.
    pub frame: u64,
    pub steps: u64,
    pub time: f64,
}

/// What one leg of a run did.
#[derive(Clone, Debug)]
pub struct RunSummary {
    pub steps: u64,
    pub time: f64,
    pub frames: u64,
    pub wall_seconds: f64,
    /// Seconds in named parts of the step over this leg ([`Model::timers`]).
    pub timers: Vec<(&'static str, f64)>,
}

/// Where a run stands, for a progress display.
#[derive(Clone, Debug)]
pub struct Progress {
    pub time: f64,
    pub steps: u64,
    /// The time this leg started from and the time it stops at.
    pub first_time: f64,
    pub stop_time: f64,
    /// The model's own line ([`Model::status`]).
    pub status: Option<String>,
}

/// A model with its output schedule and writers.
pub struct Simulation<M: Model> {
    pub model: M,
    settings: RunSettings,
    schedule: Schedule,
    out_dir: PathBuf,
    fingerprint: u64,
    /// Frames written so far (the number of the next one).
    frame: u64,
    /// Step count of the last frame and of the last diagnostics row, checkpoint written (or read).
    frame_at: Option<u64>,
    row_at: Option<u64>,
    checkpoint_at: Option<u64>,
    pvd: PvdSeries,
    /// Rank 0's diagnostics file (None on the other ranks).
    diagnostics: Option<CsvSeries>,
    series: BTreeMap<String, CsvSeries>,
    /// The time of the checkpoint this run resumed from: the series keep their rows up to it.
    resumed_from: Option<f64>,
    /// The ranks of the run (one: the serial run); rank 0 writes the shared files.
    comm: Comm,
}

/// The checkpoint file of rank `rank` of `size`.
pub fn checkpoint_file(rank: usize, size: usize) -> String {
    if size == 1 {
        "checkpoint.bin".into()
    } else {
        format!("checkpoint.rank{rank}-of-{size}.bin")
    }
}

/// The result of a step every rank takes: an error on any rank is an error on all (the failing rank
/// keeps its own; the others say a rank failed), so that no rank waits for the others forever.
fn on_every_rank<T>(comm: &Comm, result: Result<T, RunError>) -> Result<T, RunError> {
    if comm.size() == 1 {
        return result;
    }
    let failed = comm.sum_in_rank_order(if result.is_err() { 1.0 } else { 0.0 }) as usize;
    match result {
        Ok(_) if failed > 0 => Err(RunError::OtherRank(failed)),
        other => other,
    }
}

/// Files and folders a run writes: removed before a fresh run so that no stale frame is left.
const DATASET_FOLDERS: [&str; 7] = [
    "particles",
    "fluid",
    "fibers",
    "rods",
    "profiles",
    "bed_particles",
    "bed_fluid",
];

impl<M: Model> Simulation<M> {
    /// Starts a fresh run in `out_dir` (created if needed; what an earlier run wrote there is removed),
    /// writing the scene text and the initial frame.
    pub fn start(
        model: M,
        settings: RunSettings,
        scene_text: &str,
        fingerprint: u64,
        out_dir: &Path,
    ) -> Result<Self, RunError> {
        Self::start_on(
            model,
            settings,
            scene_text,
            fingerprint,
            out_dir,
            SingleRank::comm(),
        )
    }

    /// [`Simulation::start`] of this rank's part of a run on the ranks of `comm` (every rank calls
    /// it with its part of the model): rank 0 prepares the folder and writes the shared files.
    pub fn start_on(
        model: M,
        settings: RunSettings,
        scene_text: &str,
        fingerprint: u64,
        out_dir: &Path,
        comm: Comm,
    ) -> Result<Self, RunError> {
        let root = comm.rank() == 0;
        let prepared = (|| {
            if !root {
                return Ok(None);
            }
            clear_earlier_run(out_dir)?;
            let path = out_dir.join("scene.toml");
            write_atomic(&path, scene_text.as_bytes()).map_err(io_error(&path))?;
            let columns = model.diagnostic_columns();
            let columns: Vec<&str> = columns.iter().map(String::as_str).collect();
            let path = out_dir.join("diagnostics.csv");
            Ok(Some(
                CsvSeries::create(&path, &columns).map_err(io_error(&path))?,
            ))
        })();
        // The other ranks write into the folder once rank 0 has cleared it.
        let diagnostics = on_every_rank(&comm, prepared)?;
        let mut sim = Simulation {
            schedule: Schedule::new(model.clock(), &settings),
            model,
            settings,
            out_dir: out_dir.to_path_buf(),
            fingerprint,
            frame: 0,
            frame_at: None,
            row_at: None,
            checkpoint_at: None,
            pvd: PvdSeries::new(out_dir.join("series.pvd")),
            diagnostics,
            series: BTreeMap::new(),
            resumed_from: None,
            comm,
        };
        sim.write_frame()?;
        // A run that fails at its first step still has a checkpoint to restart from.
        sim.write_checkpoint()?;
        Ok(sim)
    }

    /// Continues the run in `out_dir` from its checkpoint; output after it is discarded and written
    /// again. The scene may differ from the one the checkpoint was written for in its end time and
    /// output settings only (a finished run is extended by a later end time).
    pub fn resume(
        model: M,
        settings: RunSettings,
        scene_text: &str,
        fingerprint: u64,
        out_dir: &Path,
    ) -> Result<Self, RunError> {
        Self::resume_on(
            model,
            settings,
            scene_text,
            fingerprint,
            out_dir,
            SingleRank::comm(),
        )
    }

    /// [`Simulation::resume`] of this rank's part of a run on the ranks of `comm`, from this rank's
    /// checkpoint ([`checkpoint_file`]): a run resumes on as many ranks as wrote its checkpoints.
    pub fn resume_on(
        mut model: M,
        settings: RunSettings,
        scene_text: &str,
        fingerprint: u64,
        out_dir: &Path,
        comm: Comm,
    ) -> Result<Self, RunError> {
        let path = out_dir.join(checkpoint_file(comm.rank(), comm.size()));
        // Each rank reads its state (no collectives), then all restore together.
        let read = (|| {
            if path.exists() {
                return read_checkpoint::<M>(&path, model.kind(), fingerprint);
            }
            // Written by another number of ranks: this rank's part cut from theirs, where the
            // model can.
            let (written_by, _) = checkpoint_files(out_dir);
            let Some(other) = written_by.filter(|&n| n != comm.size()) else {
                return Err(missing_checkpoint(out_dir, &path, comm.size()));
            };
            let mut first_header = None;
            let cut = {
                let mut load = |rank: usize| {
                    let file = out_dir.join(checkpoint_file(rank, other));
                    let (header, state) = read_checkpoint::<M>(&file, model.kind(), fingerprint)
                        .map_err(|e| e.to_string())?;
                    first_header.get_or_insert(header);
                    Ok(state)
                };
                model.checkpoint_from_ranks(other, &mut load)
            };
            match cut {
                None => Err(missing_checkpoint(out_dir, &path, comm.size())),
                Some(Err(m)) => Err(RunError::Checkpoint(format!(
                    "{}: cannot resume on {} rank(s) from the checkpoints of {other}: {m}",
                    out_dir.display(),
                    comm.size()
                ))),
                Some(Ok(state)) => {
                    let header = first_header.expect("a piece was read");
                    Ok((header, state))
                }
            }
        })();
        let (header, state) = on_every_rank(&comm, read)?;
        let restored = model
            .restore(state)
            .map_err(|m| RunError::Checkpoint(format!("{}: {m}", path.display())));
        on_every_rank(&comm, restored)?;
        let time = model.time();
        let pvd_path = out_dir.join("series.pvd");
        let csv_path = out_dir.join("diagnostics.csv");
        let shared = (|| {
            if comm.rank() != 0 {
                return Ok((PvdSeries::new(&pvd_path), None));
            }
            let scene_path = out_dir.join("scene.toml");
            write_atomic(&scene_path, scene_text.as_bytes()).map_err(io_error(&scene_path))?;
            let mut pvd =
                PvdSeries::from_existing(&pvd_path).unwrap_or_else(|_| PvdSeries::new(&pvd_path));
            pvd.truncate_after(time);
            pvd.write().map_err(io_error(&pvd_path))?;
            let columns = model.diagnostic_columns();
            let columns: Vec<&str> = columns.iter().map(String::as_str).collect();
            let diagnostics = CsvSeries::open_append_truncated(&csv_path, &columns, time)
                .map_err(io_error(&csv_path))?;
            Ok((pvd, Some(diagnostics)))
        })();
        let (pvd, diagnostics) = on_every_rank(&comm, shared)?;
        let steps = model.steps();
        Ok(Simulation {
            schedule: Schedule::new(model.clock(), &settings),
            model,
            settings,
            out_dir: out_dir.to_path_buf(),
            fingerprint,
            frame: header.frame,
            frame_at: Some(steps),
            row_at: Some(steps),
            checkpoint_at: Some(steps),
            pvd,
            diagnostics,
            series: BTreeMap::new(),
            resumed_from: Some(time),
            comm,
        })
    }

    /// Frames written so far.
    pub fn frames(&self) -> u64 {
        self.frame
    }

    /// The output directory.
    pub fn out_dir(&self) -> &Path {
        &self.out_dir
    }

    /// The time the run ends at: the end time, or with a fixed step the time of the last whole step.
    pub fn end_time(&self) -> f64 {
        match self.schedule {
            Schedule::Steps { dt, end_step, .. } => end_step as f64 * dt,
            Schedule::Times { .. } => self.settings.end_time,
        }
    }

    /// Whether the run has reached its end time.
    pub fn finished(&self) -> bool {
        match self.schedule {
            Schedule::Steps { end_step, .. } => self.model.steps() >= end_step,
            Schedule::Times { .. } => self.model.time() >= self.settings.end_time - self.epsilon(),
        }
    }

    /// The time a run with `until` stops at (the end time at most).
    pub fn stop_time(&self, until: Option<f64>) -> f64 {
        match (self.schedule, until) {
            (Schedule::Steps { dt, .. }, Some(t)) => self.until_step(t) as f64 * dt,
            (_, Some(t)) => t.min(self.end_time()),
            (_, None) => self.end_time(),
        }
    }

    /// Tolerance of time comparisons.
    fn epsilon(&self) -> f64 {
        1e-9 * self.settings.interval.min(self.settings.end_time)
    }

    /// The step a fixed-step run with `until` stops at: the first that reaches `until`.
    fn until_step(&self, until: f64) -> u64 {
        match self.schedule {
            Schedule::Steps { dt, end_step, .. } => {
                let step = (until / dt - 1e-9).ceil().max(0.0);
                (step as u64).min(end_step)
            }
            Schedule::Times { .. } => 0,
        }
    }

    /// Steps until `until` (simulated time; at most the end time), writing output and checkpoints on
    /// schedule; `progress` after every advance. A run stopped before the end leaves a checkpoint where
    /// it stopped, for `--resume`. When the model fails, the output written so far (the last good frame
    /// and checkpoint) is kept and the error says why.
    pub fn run(
        &mut self,
        until: Option<f64>,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<RunSummary, RunError> {
        let clock = std::time::Instant::now();
        let first_step = self.model.steps();
        let first_time = self.model.time();
        let timers_before = self.model.timers();
        let stop_time = self.stop_time(until);
        let report = |model: &M| Progress {
            time: model.time(),
            steps: model.steps(),
            first_time,
            stop_time,
            status: model.status(),
        };
        match self.schedule {
            Schedule::Steps {
                end_step,
                output_every,
                checkpoint_every,
                diagnostics_every,
                ..
            } => {
                let stop = until.map_or(end_step, |t| self.until_step(t));
                while self.model.steps() < stop {
                    let now = self.model.steps();
                    let next = |every: u64| (now / every + 1) * every;
                    let mut target = next(output_every).min(next(checkpoint_every)).min(stop);
                    if let Some(every) = diagnostics_every {
                        target = target.min(next(every));
                    }
                    self.model
                        .advance(Horizon::Steps(target - now))
                        .map_err(RunError::Diverged)?;
                    let step = self.model.steps();
                    let last = step >= end_step;
                    if step.is_multiple_of(output_every) || last {
                        self.write_frame()?;
                    } else if diagnostics_every.is_some_and(|every| step.is_multiple_of(every)) {
                        self.write_diagnostics()?;
                    }
                    if step.is_multiple_of(checkpoint_every) || last {
                        self.write_checkpoint()?;
                    }
                    progress(report(&self.model));
                }
            }
            Schedule::Times {
                interval,
                checkpoint_interval,
            } => {
                let eps = self.epsilon();
                let end = self.settings.end_time;
                let until = until.unwrap_or(f64::INFINITY);
                while self.model.time() < end - eps && self.model.time() < until - eps {
                    let time = self.model.time();
                    let next_output = self.frame as f64 * interval;
                    let mut next_checkpoint =
                        ((time / checkpoint_interval + 1e-9).floor() + 1.0) * checkpoint_interval;
                    // A checkpoint due with a frame goes with it (no sliver of a step in between).
                    if (next_checkpoint - next_output).abs() <= eps {
                        next_checkpoint = next_output;
                    }
                    let target = next_output.min(next_checkpoint).min(end);
                    self.model
                        .advance(Horizon::Time(target))
                        .map_err(RunError::Diverged)?;
                    let time = self.model.time();
                    let last = time >= end - eps;
                    if time >= next_output - eps || last {
                        self.write_frame()?;
                    }
                    if time >= next_checkpoint - eps || last {
                        self.write_checkpoint()?;
                    }
                    progress(report(&self.model));
                }
            }
        }
        if self.checkpoint_at != Some(self.model.steps()) {
            self.write_checkpoint()?;
        }
        let timers = self
            .model
            .timers()
            .into_iter()
            .map(|(name, seconds)| {
                let before = timers_before
                    .iter()
                    .find(|t| t.0 == name)
                    .map_or(0.0, |t| t.1);
                (name, seconds - before)
            })
            .collect();
        Ok(RunSummary {
            steps: self.model.steps() - first_step,
            time: self.model.time(),
            frames: self.frame,
            wall_seconds: clock.elapsed().as_secs_f64(),
            timers,
        })
    }

    /// Writes the checkpoint of the current state (atomically).
    pub fn write_checkpoint(&mut self) -> Result<(), RunError> {
        let written = self.write_own_checkpoint();
        on_every_rank(&self.comm, written)?;
        self.checkpoint_at = Some(self.model.steps());
        Ok(())
    }

    /// This rank's checkpoint file.
    fn write_own_checkpoint(&mut self) -> Result<(), RunError> {
        let path = self
            .out_dir
            .join(checkpoint_file(self.comm.rank(), self.comm.size()));
        write_checkpoint(&path, &mut self.model, self.fingerprint, self.frame)
    }

    /// Appends the diagnostics rows of the current state; a value that is not finite stops the run.
    fn write_diagnostics(&mut self) -> Result<(), RunError> {
        let steps = self.model.steps();
        if self.row_at == Some(steps) {
            return Ok(());
        }
        let rows = self.model.diagnostics().map_err(RunError::Diverged)?;
        let columns = self.model.diagnostic_columns();
        for row in &rows {
            if let Some(c) = row.iter().position(|v| !v.is_finite()) {
                return Err(RunError::Diverged(StepFailure::new(format!(
                    "the run diverged: {} became {} at t = {} (step {steps}); reduce the time step",
                    columns.get(c).map_or("a diagnostic", String::as_str),
                    row[c],
                    format_time(self.model.time())
                ))));
            }
        }
        // The rows are the domain's, the same on every rank: rank 0 writes them.
        let written = match &mut self.diagnostics {
            Some(diagnostics) => {
                let path = diagnostics.path().to_path_buf();
                rows.iter()
                    .try_for_each(|row| diagnostics.push(row).map_err(io_error(&path)))
            }
            None => Ok(()),
        };
        on_every_rank(&self.comm, written)?;
        self.row_at = Some(steps);
        Ok(())
    }

    /// Writes one frame: its data sets into the time series, a diagnostics row, the series rows and
    /// the tables.
    fn write_frame(&mut self) -> Result<(), RunError> {
        let steps = self.model.steps();
        if self.frame_at == Some(steps) {
            return Ok(());
        }
        self.write_diagnostics()?;
        let last = self.finished();
        let content = if !self.settings.vtk {
            FrameContent::NoDatasets
        } else if self.frame.is_multiple_of(self.settings.vtk_every) || last {
            FrameContent::All
        } else {
            FrameContent::Light
        };
        let frame = self.model.frame(content).map_err(RunError::Diverged)?;
        let written = self.write_frame_files(&frame);
        on_every_rank(&self.comm, written)?;
        self.frame += 1;
        self.frame_at = Some(steps);
        Ok(())
    }

    /// The files of one frame: this rank's pieces of the images; on rank 0 also the other data
    /// sets, the series rows and the tables (the model's, the same on every rank).
    fn write_frame_files(&mut self, frame: &silt_core::model::Frame) -> Result<(), RunError> {
        let time = self.model.time();
        let (rank, ranks) = (self.comm.rank(), self.comm.size());
        let root = rank == 0;
        // The extents of every rank's pieces first (collectives, so that a rank that fails to
        // write below does not leave the others waiting).
        let extents: Vec<Vec<f64>> = frame
            .datasets
            .iter()
            .map(|set| match &set.geometry {
                Geometry::Image { cells, offset, .. } if ranks > 1 => {
                    let mine = [offset.map(|o| o as f64), cells.map(|c| c as f64)].concat();
                    self.comm.all_gather_v(&mine).0
                }
                _ => Vec::new(),
            })
            .collect();
        let mut files = Vec::new();
        for (set, extents) in frame.datasets.iter().zip(&extents) {
            let folder = self.out_dir.join(set.name);
            std::fs::create_dir_all(&folder).map_err(io_error(&folder))?;
            let stem = format!("{0}/{0}_{1:06}", set.name, self.frame);
            match &set.geometry {
                Geometry::Image {
                    origin, spacing, ..
                } if ranks > 1 => {
                    let name = format!("{stem}_r{rank:04}.vti");
                    let path = self.out_dir.join(&name);
                    write_dataset(&path, set).map_err(io_error(&path))?;
                    if root {
                        // One image of the pieces, for ParaView.
                        let pieces: Vec<ImagePiece> = extents
                            .chunks_exact(6)
                            .enumerate()
                            .map(|(r, e)| ImagePiece {
                                source: format!("{0}_{1:06}_r{r:04}.vti", set.name, self.frame),
                                offset: [e[0], e[1], e[2]].map(|v| v as usize),
                                cells: [e[3], e[4], e[5]].map(|v| v as usize),
                            })
                            .collect();
                        let whole: [usize; 3] = std::array::from_fn(|a| {
                            pieces
                                .iter()
                                .map(|p| p.offset[a] + p.cells[a])
                                .max()
                                .unwrap_or(0)
                        });
                        let name = format!("{stem}.pvti");
                        let path = self.out_dir.join(&name);
                        let arrays = data_arrays(&set.cell_data);
                        write_pvti(
                            &path,
                            *origin,
                            Vec3::splat(*spacing),
                            whole,
                            &pieces,
                            &arrays,
                        )
                        .map_err(io_error(&path))?;
                        files.push(name);
                    }
                }
                Geometry::Points(_) | Geometry::Lines { .. } if ranks > 1 && set.pieces => {
                    let name = format!("{stem}_r{rank:04}.vtp");
                    let path = self.out_dir.join(&name);
                    write_dataset(&path, set).map_err(io_error(&path))?;
                    if root {
                        // One data set of the pieces, for ParaView.
                        let sources: Vec<String> = (0..ranks)
                            .map(|r| format!("{0}_{1:06}_r{r:04}.vtp", set.name, self.frame))
                            .collect();
                        let name = format!("{stem}.pvtp");
                        let path = self.out_dir.join(&name);
                        write_pvtp(
                            &path,
                            &data_arrays(&set.point_data),
                            &data_arrays(&set.cell_data),
                            &sources,
                        )
                        .map_err(io_error(&path))?;
                        files.push(name);
                    }
                }
                _ if root => {
                    let extension = match set.geometry {
                        Geometry::Image { .. } => "vti",
                        _ => "vtp",
                    };
                    let name = format!("{stem}.{extension}");
                    let path = self.out_dir.join(&name);
                    write_dataset(&path, set).map_err(io_error(&path))?;
                    files.push(name);
                }
                _ => {}
            }
        }
        if !root {
            return Ok(());
        }
        if !files.is_empty() {
            let names: Vec<&str> = files.iter().map(String::as_str).collect();
            self.pvd
                .push_parts(time, &names)
                .map_err(io_error(self.pvd.path()))?;
        }
        for series in &frame.series {
            let csv = match self.series.entry(series.file.clone()) {
                std::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
                std::collections::btree_map::Entry::Vacant(e) => {
                    let path = self.out_dir.join(&series.file);
                    let columns: Vec<&str> =
                        series.table.columns.iter().map(String::as_str).collect();
                    let csv = match self.resumed_from {
                        Some(t) => CsvSeries::open_append_truncated(&path, &columns, t),
                        None => CsvSeries::create(&path, &columns),
                    }
                    .map_err(io_error(&path))?;
                    e.insert(csv)
                }
            };
            let path = csv.path().to_path_buf();
            for row in &series.table.rows {
                csv.push(row).map_err(io_error(&path))?;
            }
        }
        for table in &frame.tables {
            let folder = self.out_dir.join(table.folder);
            std::fs::create_dir_all(&folder).map_err(io_error(&folder))?;
            let stem = table.folder.strip_suffix('s').unwrap_or(table.folder);
            let path = folder.join(format!("{stem}_{:06}.csv", self.frame));
            write_atomic(&path, table_text(&table.table).as_bytes()).map_err(io_error(&path))?;
        }
        Ok(())
    }
}

/// The checkpoint files in `out_dir` (sorted) and the number of ranks that wrote them (from the
/// first name that says).
fn checkpoint_files(out_dir: &Path) -> (Option<usize>, Vec<String>) {
    let mut found: Vec<String> = std::fs::read_dir(out_dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("checkpoint") && n.ends_with(".bin"))
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    let written_by = |name: &str| -> Option<usize> {
        if name == "checkpoint.bin" {
            return Some(1);
        }
        name.strip_suffix(".bin")?
            .split_once("-of-")?
            .1
            .parse()
            .ok()
    };
    (found.iter().find_map(|n| written_by(n)), found)
}

/// Why a run on `ranks` ranks cannot resume from `out_dir`: the checkpoints there were written by
/// another number of ranks (named) and the model cannot be cut anew, or there are none.
fn missing_checkpoint(out_dir: &Path, path: &Path, ranks: usize) -> RunError {
    let (written_by, found) = checkpoint_files(out_dir);
    match written_by {
        Some(other) if other != ranks => RunError::Checkpoint(format!(
            "{}: the run in {} was written by {other} rank(s) ({}), this one has {ranks}: resume it \
             on {other} ({})",
            path.display(),
            out_dir.display(),
            found.join(", "),
            if other == 1 {
                "without mpirun".to_string()
            } else {
                format!("mpirun -np {other}")
            }
        )),
        _ => RunError::Checkpoint(format!(
            "{}: cannot read the checkpoint (no such file); run without --resume first",
            path.display()
        )),
    }
}

/// The checkpoint at `path`, refused unless it is Silt's, of `kind` and of the scene with `fingerprint`.
/// Writes `model`'s checkpoint to `path` (whole or not at all), in the format `silt run --resume`
/// reads: the header (`fingerprint` of the scene's text, [`fingerprint`](crate::scenes::fingerprint);
/// `frame`, the number of the last frame written) and the model's state.
pub fn write_checkpoint<M: Model>(
    path: &Path,
    model: &mut M,
    fingerprint: u64,
    frame: u64,
) -> Result<(), RunError> {
    let header = CheckpointHeader {
        magic: CHECKPOINT_MAGIC.into(),
        format: CHECKPOINT_FORMAT,
        kind: model.kind().into(),
        fingerprint,
        frame,
        steps: model.steps(),
        time: model.time(),
    };
    let state = model.checkpoint();
    let encode =
        |e: bincode::Error| RunError::Checkpoint(format!("cannot encode the checkpoint: {e}"));
    let mut bytes = bincode::serialize(&header).map_err(encode)?;
    bincode::serialize_into(&mut bytes, &state).map_err(encode)?;
    write_atomic(path, &bytes).map_err(io_error(path))
}

/// Reads a checkpoint written by [`write_checkpoint`] for a model of `kind` and a scene of
/// `fingerprint`: its header and state, or why it does not fit.
pub fn read_checkpoint<M: Model>(
    path: &Path,
    kind: &str,
    fingerprint: u64,
) -> Result<(CheckpointHeader, M::Checkpoint), RunError> {
    let bytes = std::fs::read(path).map_err(|e| {
        RunError::Checkpoint(format!(
            "{}: cannot read the checkpoint ({e}); run without --resume first",
            path.display()
        ))
    })?;
    let not_ours = |detail: String| {
        RunError::Checkpoint(format!(
            "{}: not a checkpoint of this version of Silt ({detail})",
            path.display()
        ))
    };
    // bincode's own encoding (that of `bincode::serialize`), limited to the file's length: a damaged
    // or foreign file claiming a huge string or array is refused instead of exhausting the memory.
    let options = bincode::DefaultOptions::new()
        .with_fixint_encoding()
        .allow_trailing_bytes()
        .with_limit(bytes.len() as u64);
    let mut reader = bytes.as_slice();
    let header: CheckpointHeader = options
        .deserialize_from(&mut reader)
        .map_err(|e| not_ours(e.to_string()))?;
    if header.magic != CHECKPOINT_MAGIC || header.format != CHECKPOINT_FORMAT {
        return Err(not_ours(format!("format {}", header.format)));
    }
    if header.kind != kind {
        return Err(RunError::Checkpoint(format!(
            "{}: the checkpoint is of a {} run, the scene is a {kind} scene",
            path.display(),
            header.kind
        )));
    }
    if header.fingerprint != fingerprint {
        return Err(RunError::Checkpoint(format!(
            "{}: the checkpoint was written for a scene with other physics (only the end time and \
             the output settings may change on --resume); resume with the same scene",
            path.display()
        )));
    }
    let state = options
        .deserialize_from(&mut reader)
        .map_err(|e| not_ours(e.to_string()))?;
    Ok((header, state))
}

/// Removes what an earlier run wrote into `out_dir` (and creates it): the files of the layout above
/// and the numbered frame files in the data set folders, nothing else.
fn clear_earlier_run(out_dir: &Path) -> Result<(), RunError> {
    std::fs::create_dir_all(out_dir).map_err(io_error(out_dir))?;
    let entries = std::fs::read_dir(out_dir).map_err(io_error(out_dir))?;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let path = entry.path();
        let ours = matches!(
            name.as_str(),
            "scene.toml" | "series.pvd" | "diagnostics.csv" | "checkpoint.bin" | "bed.csv"
        ) || (name.starts_with("track_") && name.ends_with(".csv"))
            || (name.starts_with("checkpoint.rank") && name.ends_with(".bin"));
        if ours && path.is_file() {
            std::fs::remove_file(&path).map_err(io_error(&path))?;
        } else if DATASET_FOLDERS.contains(&name.as_str()) && path.is_dir() {
            let stem = name.strip_suffix('s').unwrap_or(&name).to_string();
            let frames = std::fs::read_dir(&path).map_err(io_error(&path))?;
            for frame in frames.flatten() {
                let file = frame.file_name().to_string_lossy().into_owned();
                if is_frame_file(&file, &stem) || is_frame_file(&file, &name) {
                    let frame_path = frame.path();
                    std::fs::remove_file(&frame_path).map_err(io_error(&frame_path))?;
                }
            }
        }
    }
    Ok(())
}

/// Whether `file` is `<stem>_NNNNNN.<vtp|vti|pvti|csv>` or a rank's piece `<stem>_NNNNNN_rRRRR.vti`.
fn is_frame_file(file: &str, stem: &str) -> bool {
    let Some(rest) = file.strip_prefix(stem).and_then(|r| r.strip_prefix('_')) else {
        return false;
    };
    let Some((number, extension)) = rest.split_once('.') else {
        return false;
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let (number, piece) = match number.split_once("_r") {
        Some((number, rank)) => (number, Some(rank)),
        None => (number, None),
    };
    number.len() >= 6
        && digits(number)
        && match piece {
            Some(rank) => digits(rank) && extension == "vti",
            None => matches!(extension, "vtp" | "vti" | "pvti" | "csv"),
        }
}

/// A table as CSV text, each value in its shortest round-trip form.
fn table_text(table: &Table) -> String {
    let mut text = table.columns.join(",");
    text.push('\n');
    for row in &table.rows {
        for (i, v) in row.iter().enumerate() {
            if i > 0 {
                text.push(',');
            }
            text.push_str(&format_f64(*v));
        }
        text.push('\n');
    }
    text
}

/// Writes one data set as VTK PolyData (points, lines) or ImageData (a grid).
fn write_dataset(path: &Path, set: &Dataset) -> std::io::Result<()> {
    let (point_data, cell_data) = (data_arrays(&set.point_data), data_arrays(&set.cell_data));
    match &set.geometry {
        Geometry::Points(points) => write_vtp_points(path, points, &point_data),
        Geometry::Lines { points, lines } => {
            write_vtp_polylines(path, points, lines, &point_data, &cell_data)
        }
        Geometry::Image {
            origin,
            spacing,
            cells,
            offset,
        } => write_vti_piece(
            path,
            *origin,
            Vec3::splat(*spacing),
            *cells,
            *offset,
            &cell_data,
        ),
    }
}

/// The writer's view of a data set's arrays.
fn data_arrays(arrays: &[Array]) -> Vec<DataArray<'_>> {
    arrays
        .iter()
        .map(|a| DataArray {
            name: a.name,
            data: match &a.values {
                Values::F64(v) => ArrayData::F64(v),
                Values::I32(v) => ArrayData::I32(v),
                Values::Vec3(v) => ArrayData::Vec3(v),
            },
        })
        .collect()
}
