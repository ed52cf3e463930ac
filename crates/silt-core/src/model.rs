//! The interface every model of Silt implements (particles, fluid, particles in a fluid, fibers, rods),
//! so that one run loop (`silt_io::run::Simulation`) can step any of them, write its output, checkpoint
//! it and resume it.
//!
//! A model holds its state and physics and nothing about files: it advances its clock, says how it
//! chooses its steps, serialises its full state into a checkpoint, reports a diagnostics table and
//! describes an output frame as data sets of named arrays. The run loop owns the schedule, the writers,
//! the checkpoint file and the progress display.

use crate::Vec3;
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::ops::Range;

/// How a model chooses the length of its steps.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Clock {
    /// Every step has this length; the time after n steps is n dt (no accumulated round-off), and the
    /// run loop counts its schedule in steps.
    Fixed(f64),
    /// The model chooses each step (a CFL condition, an error estimate) and shortens the step that
    /// reaches the time it is asked to stop at, so that frames land on their times.
    Adaptive,
}

/// How far one call of [`Model::advance`] may go.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Horizon {
    /// At most this many steps (at least 1); a [`Clock::Fixed`] model is always given a step count.
    Steps(u64),
    /// Not past this time; a [`Clock::Adaptive`] model lands on it exactly when it reaches it.
    Time(f64),
}

/// Why a model cannot continue: it diverged, left its domain, or a solve failed. The message says
/// what, where and when, and what to change.
#[derive(Clone, Debug, PartialEq)]
pub struct StepFailure {
    pub message: String,
}

impl StepFailure {
    pub fn new(message: impl Into<String>) -> Self {
        StepFailure {
            message: message.into(),
        }
    }
}

impl std::fmt::Display for StepFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for StepFailure {}

/// The values of one array of a data set.
#[derive(Clone, Debug, PartialEq)]
pub enum Values {
    F64(Vec<f64>),
    I32(Vec<i32>),
    Vec3(Vec<Vec3>),
}

impl Values {
    pub fn len(&self) -> usize {
        match self {
            Values::F64(v) => v.len(),
            Values::I32(v) => v.len(),
            Values::Vec3(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A named array of a data set (one value per point or per cell).
#[derive(Clone, Debug, PartialEq)]
pub struct Array {
    pub name: &'static str,
    pub values: Values,
}

impl Array {
    pub fn f64(name: &'static str, values: Vec<f64>) -> Self {
        Array {
            name,
            values: Values::F64(values),
        }
    }

    pub fn i32(name: &'static str, values: Vec<i32>) -> Self {
        Array {
            name,
            values: Values::I32(values),
        }
    }

    pub fn vec3(name: &'static str, values: Vec<Vec3>) -> Self {
        Array {
            name,
            values: Values::Vec3(values),
        }
    }
}

/// Where the values of a data set live.
#[derive(Clone, Debug, PartialEq)]
pub enum Geometry {
    /// Points (spheres): point data only.
    Points(Vec<Vec3>),
    /// Polylines through the points (fibers, rod segments): point and cell data.
    Lines {
        points: Vec<Vec3>,
        lines: Vec<Range<usize>>,
    },
    /// A uniform grid of cubic cells (the fluid): cell data only. In a distributed run each rank's
    /// image is a piece of the domain's: its `cells` start `offset` cells from the domain's `origin`.
    Image {
        origin: Vec3,
        spacing: f64,
        cells: [usize; 3],
        offset: [usize; 3],
    },
}

/// One data set of a frame; `name` names its folder and files (`particles/particles_000012.vtp`).
#[derive(Clone, Debug, PartialEq)]
pub struct Dataset {
    pub name: &'static str,
    pub geometry: Geometry,
    pub point_data: Vec<Array>,
    pub cell_data: Vec<Array>,
    /// Points or lines held by this rank only, of a system split over ranks: each rank writes its
    /// piece and rank 0 one file that lists them (an image on several ranks always is a piece).
    pub pieces: bool,
}

/// A table of numbers with named columns.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<f64>>,
}

/// Rows appended to a CSV series of its own at every frame (a tracked particle's trajectory).
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// File name in the output directory, e.g. `track_12.csv`.
    pub file: String,
    pub table: Table,
}

/// A CSV file of its own per frame (profiles), written as `<folder>/<folder minus s>_NNNNNN.csv`.
#[derive(Clone, Debug, PartialEq)]
pub struct FrameTable {
    /// Folder in the output directory, e.g. `profiles`; the file is `profiles/profile_000012.csv`.
    pub folder: &'static str,
    pub table: Table,
}

/// Which data sets a frame should include.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameContent {
    /// No data sets (output of ParaView files is off): only the series and tables.
    NoDatasets,
    /// The light data sets (particles, fibers, rods), not the grids.
    Light,
    /// Every data set.
    All,
}

/// What a model writes at one output time.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Frame {
    pub datasets: Vec<Dataset>,
    pub series: Vec<Series>,
    pub tables: Vec<FrameTable>,
}

/// A model that the run loop can step, checkpoint and write.
pub trait Model {
    /// Everything needed to continue bit for bit.
    type Checkpoint: Serialize + DeserializeOwned;

    /// The model kind, stored in checkpoints: "particles", "fluid", "coupled", "fibers" or "rods".
    fn kind(&self) -> &'static str;

    /// Simulated time.
    fn time(&self) -> f64;

    /// Steps taken since the start of the run.
    fn steps(&self) -> u64;

    /// How the steps are chosen.
    fn clock(&self) -> Clock;

    /// Takes one step or more, not past `horizon` (see [`Horizon`]); a model may stop after one
    /// step. A step that leaves a non-finite or unphysical state is an error, and the run stops.
    fn advance(&mut self, horizon: Horizon) -> Result<(), StepFailure>;

    /// The full state. A model may drop caches here (an implicit integrator's Jacobian) so that the
    /// run that continues takes the same steps as one resumed from this checkpoint.
    fn checkpoint(&mut self) -> Self::Checkpoint;

    /// Continues from a checkpoint of the same scene; an error says why it does not fit.
    fn restore(&mut self, checkpoint: Self::Checkpoint) -> Result<(), String>;

    /// This rank's checkpoint cut from the checkpoints of the same run written by `ranks` ranks
    /// (`load(r)` reads rank r's; a model loads only those it needs), to resume a distributed run on
    /// another number of ranks; `None`: this model cannot (the default).
    fn checkpoint_from_ranks(
        &self,
        _ranks: usize,
        _load: &mut dyn FnMut(usize) -> Result<Self::Checkpoint, String>,
    ) -> Option<Result<Self::Checkpoint, String>> {
        None
    }

    /// Column names of the diagnostics table.
    fn diagnostic_columns(&self) -> Vec<String>;

    /// Diagnostics rows of the current state (one per body for some models), one value per column.
    fn diagnostics(&mut self) -> Result<Vec<Vec<f64>>, StepFailure>;

    /// The output frame of the current state.
    fn frame(&mut self, content: FrameContent) -> Result<Frame, StepFailure>;

    /// What the model is made of, for the progress display and the cost per unit: a count and its
    /// unit in the singular ("particle", "cell", "bead", "segment").
    fn size(&self) -> (usize, &'static str);

    /// Seconds spent so far in named parts of the step, for the run summary (empty: no breakdown).
    fn timers(&self) -> Vec<(&'static str, f64)> {
        Vec::new()
    }

    /// A short line on what the model measures as it goes, for the progress display (e.g. the sheared
    /// bed's q_v and h_f); `None`: nothing beyond the time and step.
    fn status(&self) -> Option<String> {
        None
    }
}
