//! The fluid as a [`Model`] of the run loop: steps of [`FluidSolver::step_by`] (fixed, or adaptive and
//! shortened to land on the times the run loop asks for), the cell-centred fields as an image, global
//! figures as diagnostics and plane-averaged profiles.

use crate::decomposition::{Decomposition, MIN_SLAB_PLANES};
use crate::solver::NoForcing;
use crate::{Boundary, Driving, Field, FluidSolver, FluidState, Grid, TimeStep};
use silt_core::model::{
    Array, Clock, Dataset, Frame, FrameContent, FrameTable, Geometry, Horizon, Model, StepFailure,
    Table,
};
use silt_core::Vec3;

/// Axis names.
pub const AXIS_NAMES: [&str; 3] = ["x", "y", "z"];
/// Face names `FACE_NAMES[axis][side]`, side 0 at the low end.
pub const FACE_NAMES: [[&str; 2]; 3] = [
    ["x_low", "x_high"],
    ["y_low", "y_high"],
    ["z_low", "z_high"],
];

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

/// A fluid solver with what its output shows.
pub struct FluidModel {
    pub solver: FluidSolver,
    /// Add the vorticity to the images.
    pub vorticity: bool,
    /// Write plane-averaged profiles along this axis every frame.
    pub profile_axis: Option<usize>,
    work: Vec<f64>,
}

impl FluidModel {
    pub fn new(solver: FluidSolver, vorticity: bool, profile_axis: Option<usize>) -> Self {
        FluidModel {
            solver,
            vorticity,
            profile_axis,
            work: Vec::new(),
        }
    }

    /// One adaptive step, shortened to end exactly at `target` when it is within reach (halved when it
    /// is within two steps, so that the last one is not a sliver).
    fn adaptive_step(&mut self, target: f64) -> Result<(), StepFailure> {
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
            .map_err(|e| StepFailure::new(e.to_string()))?;
        if lands {
            self.solver.state.time = target;
        }
        Ok(())
    }
}

/// The state of `solver`'s slab cut from the slabs of a run on `ranks` ranks (`load(r)`: rank r's
/// state): [`block_from_ranks`] of the process grid `1 × ranks`.
pub fn slab_from_ranks(
    solver: &FluidSolver,
    ranks: usize,
    load: &mut dyn FnMut(usize) -> Result<FluidState, String>,
) -> Result<FluidState, String> {
    block_from_ranks(solver, [1, ranks], load)
}

/// The state of `solver`'s block cut from the blocks of a run on the process grid `dims` (`load(r)`:
/// rank r's state): the rows and planes of cells it holds, copied from the pieces that hold them
/// (the ghosts follow from them on restore); only the pieces it needs are loaded.
pub fn block_from_ranks(
    solver: &FluidSolver,
    dims: [usize; 2],
    load: &mut dyn FnMut(usize) -> Result<FluidState, String>,
) -> Result<FluidState, String> {
    let [_, n1, n2] = solver.config.grid.cells;
    let [py, pz] = dims;
    let ranks = py * pz;
    if ranks == 0 || n1 < py || n2 < pz {
        return Err(format!(
            "{py} x {pz} ranks cannot have split {n1} rows and {n2} planes"
        ));
    }
    let decomposition = solver.decomposition();
    let (my_rows, my_planes) = (decomposition.rows(), decomposition.slab());
    let local = *solver.grid();
    let mut state = FluidState {
        velocity: [0, 1, 2].map(|_| Field::zeros(&local)),
        pressure: Field::zeros(&local),
        time: 0.0,
        steps: 0,
        last_dt: 0.0,
        driving_gradient: 0.0,
    };
    let mut clock: Option<(f64, u64, f64, f64)> = None;
    for rank in 0..ranks {
        let rows = silt_parallel::block(n1, py, rank % py);
        let planes = silt_parallel::block(n2, pz, rank / py);
        let (row_first, row_end) = (rows.start.max(my_rows.start), rows.end.min(my_rows.end));
        let (first, end) = (
            planes.start.max(my_planes.start),
            planes.end.min(my_planes.end),
        );
        if first >= end || row_first >= row_end {
            continue;
        }
        let piece = load(rank)?;
        let dims = [local.cells[0] + 2, rows.len() + 2, planes.len() + 2];
        let fields = |s: &FluidState| -> [Field; 4] {
            let [u, v, w] = s.velocity.clone();
            [u, v, w, s.pressure.clone()]
        };
        let pieces = fields(&piece);
        if pieces.iter().any(|f| f.dims != dims) {
            return Err(format!(
                "rank {rank}'s checkpoint holds fields of {:?} points, its block of the grid needs \
                 {dims:?}",
                pieces[0].dims
            ));
        }
        let this = (
            piece.time,
            piece.steps,
            piece.last_dt,
            piece.driving_gradient,
        );
        if clock.is_some_and(|c| c != this) {
            return Err(format!(
                "rank {rank}'s checkpoint is of another step than rank 0's"
            ));
        }
        clock = Some(this);
        let copy = |to: &mut Field, from: &Field| {
            let row = from.dims[0];
            for k in first..end {
                for j in row_first..row_end {
                    // Interior row j of plane k of the domain: local row j - start + 1 of each block.
                    let old = from.index(0, j - rows.start + 1, k - planes.start + 1);
                    let new = to.index(0, j - my_rows.start + 1, k - my_planes.start + 1);
                    to.data[new..new + row].copy_from_slice(&from.data[old..old + row]);
                }
            }
        };
        for (to, from) in state.velocity.iter_mut().zip(&pieces) {
            copy(to, from);
        }
        copy(&mut state.pressure, &pieces[3]);
    }
    let (time, steps, last_dt, driving_gradient) =
        clock.ok_or("no checkpoint holds this rank's cells")?;
    state.time = time;
    state.steps = steps;
    state.last_dt = last_dt;
    state.driving_gradient = driving_gradient;
    Ok(state)
}

/// (axis, side, component) of each wall shear stress column: the tangential components at every
/// no-slip face.
pub fn wall_shear_columns(solver: &FluidSolver) -> Vec<(usize, usize, usize)> {
    let mut columns = Vec::new();
    for axis in 0..3 {
        for side in 0..2 {
            if matches!(
                solver.config.boundaries.faces[axis][side],
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

/// The axis of the driving (the bulk velocity's), x without driving.
pub fn bulk_axis(solver: &FluidSolver) -> usize {
    solver.config.driving.axis().unwrap_or(0)
}

/// The mean pressure gradient dp/dx_axis: the prescribed one now, the one that held the flow rate
/// over the last step, or 0.
pub fn driving_gradient(solver: &FluidSolver) -> f64 {
    match &solver.config.driving {
        Driving::None => 0.0,
        Driving::PressureGradient { gradient, .. } => gradient.at(solver.state.time),
        Driving::FlowRate { .. } => solver.state.driving_gradient,
    }
}

impl Model for FluidModel {
    type Checkpoint = FluidState;

    fn kind(&self) -> &'static str {
        "fluid"
    }

    fn time(&self) -> f64 {
        self.solver.state.time
    }

    fn steps(&self) -> u64 {
        self.solver.state.steps
    }

    fn clock(&self) -> Clock {
        match self.solver.config.time_step {
            TimeStep::Fixed(dt) => Clock::Fixed(dt),
            TimeStep::Cfl { .. } => Clock::Adaptive,
        }
    }

    fn advance(&mut self, horizon: Horizon) -> Result<(), StepFailure> {
        match horizon {
            Horizon::Time(target) if self.clock() == Clock::Adaptive => self.adaptive_step(target),
            _ => self
                .solver
                .step()
                .map_err(|e| StepFailure::new(e.to_string())),
        }
    }

    fn checkpoint(&mut self) -> FluidState {
        self.solver.state.clone()
    }

    fn restore(&mut self, state: FluidState) -> Result<(), String> {
        self.solver.restore(state)
    }

    /// This rank's block cut from the blocks of a run on `ranks` ranks (whose process grid follows
    /// from the rank count and the grid: [`Decomposition::process_grid`]): the cells it holds,
    /// copied from the pieces that hold them (the ghosts follow from them on restore).
    fn checkpoint_from_ranks(
        &self,
        ranks: usize,
        load: &mut dyn FnMut(usize) -> Result<FluidState, String>,
    ) -> Option<Result<FluidState, String>> {
        let cells = self.solver.config.grid.cells;
        let Some(dims) = Decomposition::process_grid(ranks, cells, MIN_SLAB_PLANES) else {
            return Some(Err(format!(
                "no process grid of {ranks} ranks fits the grid of {cells:?} cells"
            )));
        };
        Some(block_from_ranks(&self.solver, dims, load))
    }

    fn diagnostic_columns(&self) -> Vec<String> {
        let mut columns: Vec<String> = BASE_COLUMNS.iter().map(|s| s.to_string()).collect();
        for (axis, side, c) in wall_shear_columns(&self.solver) {
            columns.push(format!(
                "wall_shear_{}_{}",
                FACE_NAMES[axis][side], AXIS_NAMES[c]
            ));
        }
        columns
    }

    /// The figures of the whole domain (the same row on every rank of a distributed run).
    fn diagnostics(&mut self) -> Result<Vec<Vec<f64>>, StepFailure> {
        let s = &self.solver;
        let state = &s.state;
        let dt = if state.steps > 0 {
            state.last_dt
        } else {
            s.next_dt()
        };
        let mut row = vec![
            state.time,
            state.steps as f64,
            dt,
            s.kinetic_energy(),
            s.max_divergence(&mut self.work),
            s.cfl(dt),
            s.mean_velocity(bulk_axis(s)),
            driving_gradient(s),
        ];
        for (axis, side, c) in wall_shear_columns(s) {
            row.push(s.wall_shear_stress(axis, side, c).unwrap_or(f64::NAN));
        }
        Ok(vec![row])
    }

    fn frame(&mut self, content: FrameContent) -> Result<Frame, StepFailure> {
        let s = &self.solver;
        let mut frame = Frame::default();
        if content == FrameContent::All {
            frame
                .datasets
                .push(fluid_image(s.grid(), &s.state, self.vorticity, Vec::new()));
        }
        if let Some(axis) = self.profile_axis {
            let time = s.state.time;
            let rows = s
                .profiles(axis)
                .into_iter()
                .map(|r| std::iter::once(time).chain(r).collect())
                .collect();
            frame.tables.push(FrameTable {
                folder: "profiles",
                table: Table {
                    columns: ["time", AXIS_NAMES[axis], "u", "v", "w", "p"]
                        .map(String::from)
                        .to_vec(),
                    rows,
                },
            });
        }
        Ok(frame)
    }

    /// The domain's cells (all ranks').
    fn size(&self) -> (usize, &'static str) {
        (self.solver.config.grid.cell_count(), "cell")
    }
}

/// The fluid as an image of the grid's cells: cell-centred `velocity`, `pressure`, the `extra` arrays
/// and, with `vorticity`, the cell-centred `vorticity`.
pub fn fluid_image(grid: &Grid, state: &FluidState, vorticity: bool, extra: Vec<Array>) -> Dataset {
    let mut cell_data = vec![
        Array::vec3("velocity", cell_velocity(&state.velocity)),
        Array::f64("pressure", cell_values(&state.pressure)),
    ];
    cell_data.extend(extra);
    if vorticity {
        cell_data.push(Array::vec3(
            "vorticity",
            cell_vorticity(&state.velocity, grid.spacing),
        ));
    }
    Dataset {
        name: "fluid",
        geometry: Geometry::Image {
            origin: Vec3::from(grid.origin),
            spacing: grid.spacing,
            cells: grid.cells,
            offset: grid.offset,
        },
        point_data: Vec::new(),
        cell_data,
        pieces: false,
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
pub fn cell_velocity(u: &[Field; 3]) -> Vec<Vec3> {
    let dims = u[0].dims;
    let mut out = Vec::with_capacity(dims.iter().map(|d| d - 2).product());
    for_each_cell(dims, |i, j, k| {
        let mut v = [0.0; 3];
        for c in 0..3 {
            let x = u[c].index(i, j, k);
            v[c] = 0.5 * (u[c].data[x] + u[c].data[x - u[c].stride(c)]);
        }
        out.push(Vec3::from(v));
    });
    out
}

/// Cell-centred vorticity: the staggered curl, which lives on the cell edges (omega_a on the edges along
/// a, from the differences of the two neighbouring face values of each other component), averaged over
/// the four edges along a around the cell. Ghost values (walls, periodic copies) enter at the boundary.
pub fn cell_vorticity(u: &[Field; 3], spacing: f64) -> Vec<Vec3> {
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
        out.push(Vec3::from(w));
    });
    out
}
