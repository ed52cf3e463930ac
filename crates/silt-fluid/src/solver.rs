//! One time step of the fluid: three low-storage Runge–Kutta stages (Rai & Moin 1991), each an explicit
//! momentum increment, an optional volume force (the immersed boundary hook), a Crank–Nicolson Helmholtz
//! solve of the increment, a projection and the pressure update (seed sec. 2).

use crate::boundary::Boundaries;
use crate::decomposition::Decomposition;
use crate::grid::{Field, Grid, Unknowns};
use crate::jacobi::JacobiSolver;
use crate::momentum::{add_increment, explicit_increments, MomentumTerms, Stage};
use crate::pencil_solver::DecomposedSolver;
use crate::projection::{
    divergence_and_row_sums, drive_and_subtract_gradient, scatter, subtract_gradient,
    update_pressure, FlowRateAddition,
};
pub use crate::signal::Signal;
use rayon::prelude::*;
use silt_core::rk3::{ALPHA, GAMMA, ZETA};
use silt_parallel::Comm;

/// Treatment of the viscous term.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Viscous {
    /// In the Runge–Kutta right-hand side (time step limited by nu dt / h^2).
    Explicit,
    /// Crank–Nicolson over each stage, solved directly (seed sec. 2).
    CrankNicolson,
}

/// How the flow is driven along one axis (which must be periodic).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Driving {
    None,
    /// Mean pressure gradient dp/dx_axis (kinematic, i.e. divided by the density), a function of time.
    PressureGradient {
        axis: usize,
        gradient: Signal,
    },
    /// Bulk velocity (flow rate per cross-section area), a function of time, held by a uniform
    /// correction after every projection; the mean pressure gradient this takes is recorded.
    FlowRate {
        axis: usize,
        bulk_velocity: Signal,
    },
}

impl Driving {
    /// The axis of the driving, if there is one.
    pub fn axis(&self) -> Option<usize> {
        match self {
            Driving::None => None,
            Driving::PressureGradient { axis, .. } | Driving::FlowRate { axis, .. } => Some(*axis),
        }
    }
}

/// Start of Runge–Kutta stage `k` as a fraction of the step: 0, 8/15, 2/3.
pub fn stage_start(k: usize) -> f64 {
    (0..k).map(|j| 2.0 * ALPHA[j]).sum()
}

/// How the time step is chosen.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum TimeStep {
    Fixed(f64),
    /// dt = cfl h / max(|u| + |v| + |w|), at most `max` and within the explicit viscous limit.
    Cfl {
        cfl: f64,
        max: f64,
    },
}

/// How the Crank–Nicolson Helmholtz systems are solved.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HelmholtzMethod {
    /// Jacobi sweeps fused across planes ([`JacobiSolver`]) when at most [`MAX_JACOBI_SWEEPS`] reach
    /// the relative accuracy [`JACOBI_TOLERANCE`] (small viscous numbers, the usual case), otherwise
    /// the direct solver.
    #[default]
    Auto,
    /// Always the direct FFT/tridiagonal solver ([`SeparableSolver`]).
    Direct,
}

/// Relative max-norm accuracy (a priori bound) of a Jacobi solve of a Helmholtz system.
pub const JACOBI_TOLERANCE: f64 = 1e-12;
/// Most Jacobi sweeps worth making: one sweep costs about a tenth of a direct solve (measured at 128^3).
pub const MAX_JACOBI_SWEEPS: usize = 8;

/// Jacobi sweeps for `(1 + b L) x = f` under `method`, or `None` for the direct solver.
fn sweeps_for(method: HelmholtzMethod, solver: &JacobiSolver, b: f64) -> Option<usize> {
    match method {
        HelmholtzMethod::Auto => solver.sweeps_for(1.0, b, JACOBI_TOLERANCE, MAX_JACOBI_SWEEPS),
        HelmholtzMethod::Direct => None,
    }
}

/// Convective stability limit of RK3 with central differences: the CFL number (sum over the axes of
/// |u_c| dt / h) must stay below sqrt(3) (the scheme's reach along the imaginary axis).
pub const CFL_LIMIT: f64 = 1.732_050_807_568_877_2;
/// Reach of the three-stage RK3 along the negative real axis (|lambda dt| <= 2.51): with the 7-point
/// Laplacian, nu dt (4/h^2) * 3 <= 2.51.
pub const VISCOUS_LIMIT: f64 = 2.51;

/// Everything fixed for a run.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FluidConfig {
    pub grid: Grid,
    pub boundaries: Boundaries,
    /// Kinematic viscosity nu.
    pub viscosity: f64,
    pub viscous: Viscous,
    pub driving: Driving,
    /// Uniform body force per unit mass (gravity, or a driving force), each component a function of
    /// time.
    pub body_force: [Signal; 3],
    pub time_step: TimeStep,
}

impl FluidConfig {
    /// Estimated memory of the solver in bytes: 5 fields with ghost layers (3 velocity components, pressure,
    /// pressure correction), 7 compact arrays (3 right-hand sides, 3 increments, the Poisson right-hand side),
    /// plus [`FluidConfig::factorisation_estimate`] (at most: as if every Helmholtz system took the direct solver).
    pub fn memory_estimate(&self) -> f64 {
        let n = self.grid.cell_count() as f64;
        let ghosted = self.grid.field_dims().iter().product::<usize>() as f64;
        8.0 * (5.0 * ghosted + 7.0 * n) + self.factorisation_estimate(false)
    }

    /// Estimated bytes the solver allocates during its first step: the cached z factorisations of the direct
    /// solvers (one field's worth per (a, b) pair: the Poisson problem, and with Crank–Nicolson 3 components
    /// x 3 stages unless `jacobi_only` (all three stages solve them by Jacobi sweeps); half that when x is
    /// periodic, twice when z is), and 3 response fields for flow-rate driving with Crank–Nicolson.
    pub fn factorisation_estimate(&self, jacobi_only: bool) -> f64 {
        let n = self.grid.cell_count() as f64;
        let crank_nicolson = self.viscous == Viscous::CrankNicolson;
        let pairs = if crank_nicolson && !jacobi_only {
            10.0
        } else {
            1.0
        };
        let x_factor = if self.boundaries.is_periodic(0) {
            0.5
        } else {
            1.0
        };
        let z_factor = if self.boundaries.is_periodic(2) {
            2.0
        } else {
            1.0
        };
        let flow_rate = if crank_nicolson && matches!(self.driving, Driving::FlowRate { .. }) {
            3.0
        } else {
            0.0
        };
        8.0 * (flow_rate + pairs * x_factor * z_factor) * n
    }
}

/// The fluid's state at the end of a step: enough to continue bit for bit.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FluidState {
    pub velocity: [Field; 3],
    /// Kinematic pressure p / rho.
    pub pressure: Field,
    pub time: f64,
    pub steps: u64,
    /// Time step of the last step (0 before the first).
    pub last_dt: f64,
    /// Mean pressure gradient that held the flow rate over the last step (flow-rate driving only).
    pub driving_gradient: f64,
}

/// Why a step could not be taken.
#[derive(Clone, Debug, PartialEq)]
pub enum FluidError {
    /// A value became non-finite or the CFL number left the stable range.
    Diverged {
        time: f64,
        step: u64,
        message: String,
    },
}

impl std::fmt::Display for FluidError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FluidError::Diverged {
                time,
                step,
                message,
            } => write!(
                f,
                "the flow diverged at step {step} (t = {}): {message}",
                silt_core::format_time(*time)
            ),
        }
    }
}

impl std::error::Error for FluidError {}

/// A volume force added inside each stage (the immersed boundary method's direct forcing).
pub trait StageForcing {
    /// Called in stage `stage` (0, 1, 2) of a step of length `dt`, after the explicit increment: the
    /// predicted velocity is u + delta at the unknowns (`unknowns[c]` of component c, compact arrays).
    /// Adds to `delta` the velocity change the force causes over the stage (its length is
    /// 2 alpha_k dt, `silt_core::rk3::stage_fraction(stage) * dt`).
    fn add_force(
        &mut self,
        stage: usize,
        dt: f64,
        velocity: &[Field; 3],
        unknowns: &[Unknowns; 3],
        delta: &mut [Vec<f64>; 3],
    );
}

/// No volume force.
pub struct NoForcing;

impl StageForcing for NoForcing {
    fn add_force(
        &mut self,
        _: usize,
        _: f64,
        _: &[Field; 3],
        _: &[Unknowns; 3],
        _: &mut [Vec<f64>; 3],
    ) {
    }
}

/// Seconds spent in each part of the step, summed over steps (for the benchmark).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StageTimes {
    pub momentum: f64,
    pub helmholtz: f64,
    pub poisson: f64,
    pub correction: f64,
    /// Helmholtz systems solved by Jacobi sweeps and by the direct solver.
    pub jacobi_solves: u64,
    pub direct_solves: u64,
}

/// The incompressible Navier–Stokes solver.
///
/// In a distributed run each rank's solver holds a slab of the grid ([`Decomposition`]): its
/// fields, unknowns and [`FluidSolver::grid`] are the slab's, `config` is the whole domain's.
pub struct FluidSolver {
    pub config: FluidConfig,
    pub state: FluidState,
    decomposition: Decomposition,
    velocity_unknowns: [Unknowns; 3],
    cells: Unknowns,
    /// Helmholtz solvers of the three velocity increments (Crank–Nicolson only): direct and
    /// iterative.
    helmholtz: Option<[DecomposedSolver; 3]>,
    jacobi: Option<[JacobiSolver; 3]>,
    /// How the Helmholtz systems are solved.
    pub helmholtz_method: HelmholtzMethod,
    poisson: DecomposedSolver,
    /// H_{k-1} of each component at its unknowns.
    previous_rhs: [Vec<f64>; 3],
    /// The stage increment of each component at its unknowns.
    delta: [Vec<f64>; 3],
    /// Right-hand side and solution of the pressure Poisson equation.
    phi_compact: Vec<f64>,
    /// Pressure correction with ghost values.
    phi: Field,
    /// Response of the streamwise increment to a unit uniform force per stage, with the dt it was
    /// computed for and its mean (flow-rate driving with Crank–Nicolson).
    flow_rate_response: [(f64, f64, Vec<f64>); 3],
    /// Weights of the driving component's unknowns in the held flow rate (the fluid fraction 1 - phi
    /// at each face, seed eq. 32), in the unknowns' compact order; `None`: the plain mean.
    flow_rate_weights: Option<Vec<f64>>,
    pub times: StageTimes,
}

impl FluidSolver {
    /// Sets up the solver for `config`, with the fluid at rest.
    pub fn new(config: FluidConfig) -> Result<Self, String> {
        validate(&config)?;
        let decomposition = Decomposition::serial(config.grid, config.boundaries);
        Self::with_decomposition(config, decomposition)
    }

    /// Sets up this rank's part of a solver for `config` distributed on the ranks of `comm` (every
    /// rank calls it), with the fluid at rest.
    pub fn distributed(config: FluidConfig, comm: Comm) -> Result<Self, String> {
        validate(&config)?;
        let decomposition = Decomposition::slabs(config.grid, config.boundaries, comm)?;
        Self::with_decomposition(config, decomposition)
    }

    /// The solver of [`FluidSolver::distributed`] on the process grid `dims = [p_y, p_z]`: each
    /// rank holds whole x lines of a block of y rows and z planes (pencils; `[1, N]` are slabs).
    pub fn on_process_grid(
        config: FluidConfig,
        comm: Comm,
        dims: [usize; 2],
    ) -> Result<Self, String> {
        validate(&config)?;
        let decomposition = Decomposition::pencils(config.grid, config.boundaries, comm, dims)?;
        Self::with_decomposition(config, decomposition)
    }

    fn with_decomposition(
        config: FluidConfig,
        decomposition: Decomposition,
    ) -> Result<Self, String> {
        let grid = config.grid;
        let b = &config.boundaries;
        let spacing = [grid.spacing; 3];
        let local = *decomposition.local_grid();
        let own = decomposition.boundaries();
        let velocity_unknowns = [0, 1, 2].map(|c| own.velocity_unknowns(&local, c));
        let cells = own.pressure_unknowns(&local);
        let comm = decomposition.comm();
        let helmholtz = match config.viscous {
            Viscous::Explicit => None,
            Viscous::CrankNicolson => {
                let solvers = [0, 1, 2].map(|c| {
                    let shape = velocity_unknowns[c].shape;
                    DecomposedSolver::new(
                        grid.cells,
                        b.velocity_kinds(c),
                        spacing,
                        comm.clone(),
                        decomposition.dims(),
                        [shape[1], shape[2]],
                    )
                });
                let [a, b_, c] = solvers;
                Some([a?, b_?, c?])
            }
        };
        let jacobi = helmholtz.as_ref().map(|solvers| {
            [0, 1, 2].map(|c| JacobiSolver::new(solvers[c].shape(), b.velocity_kinds(c), spacing))
        });
        let poisson = DecomposedSolver::new(
            grid.cells,
            b.pressure_kinds(),
            spacing,
            comm.clone(),
            decomposition.dims(),
            [cells.shape[1], cells.shape[2]],
        )?;
        let state = FluidState {
            velocity: [0, 1, 2].map(|_| Field::zeros(&local)),
            pressure: Field::zeros(&local),
            time: 0.0,
            steps: 0,
            last_dt: 0.0,
            driving_gradient: 0.0,
        };
        let mut solver = FluidSolver {
            previous_rhs: velocity_unknowns.map(|u| vec![0.0; u.len()]),
            delta: velocity_unknowns.map(|u| vec![0.0; u.len()]),
            phi_compact: vec![0.0; cells.len()],
            phi: Field::zeros(&local),
            flow_rate_response: [0, 1, 2].map(|_| (0.0, 0.0, Vec::new())),
            flow_rate_weights: None,
            velocity_unknowns,
            cells,
            helmholtz,
            jacobi,
            helmholtz_method: HelmholtzMethod::Auto,
            poisson,
            config,
            decomposition,
            state,
            times: StageTimes::default(),
        };
        solver.fill_ghosts();
        Ok(solver)
    }

    /// This rank's grid (the whole domain's on one rank).
    pub fn grid(&self) -> &Grid {
        self.decomposition.local_grid()
    }

    /// How the grid is split among the ranks (one rank: not at all).
    pub fn decomposition(&self) -> &Decomposition {
        &self.decomposition
    }

    /// Unknowns of velocity component `c` in the whole domain.
    pub(crate) fn global_unknowns(&self, c: usize) -> usize {
        self.config
            .boundaries
            .velocity_unknowns(&self.config.grid, c)
            .len()
    }

    /// The unknowns of velocity component `c`.
    pub fn velocity_unknowns(&self, c: usize) -> &Unknowns {
        &self.velocity_unknowns[c]
    }

    pub fn cells(&self) -> &Unknowns {
        &self.cells
    }

    /// Sets velocity component c at each of its unknowns to `velocity(c, position)` (boundary values
    /// follow from the boundary conditions).
    pub fn set_velocity(&mut self, velocity: impl Fn(usize, [f64; 3]) -> f64 + Sync) {
        let grid = *self.grid();
        for c in 0..3 {
            let outflows = self.decomposition.boundaries().outflow_planes(&grid, c);
            let field = &mut self.state.velocity[c];
            for points in std::iter::once(self.velocity_unknowns[c]).chain(outflows) {
                for_each_unknown(field, &points, |index, value| {
                    *value = velocity(c, grid.point(crate::grid::Location::Face(c), index));
                });
            }
        }
        self.fill_ghosts();
    }

    /// Sets the pressure at the cells to `pressure(position)`.
    pub fn set_pressure(&mut self, pressure: impl Fn([f64; 3]) -> f64 + Sync) {
        let grid = *self.grid();
        let cells = self.cells;
        for_each_unknown(&mut self.state.pressure, &cells, |index, value| {
            *value = pressure(grid.point(crate::grid::Location::Centre, index));
        });
        self.fill_pressure_ghosts();
    }

    /// Replaces the state (restart from a checkpoint); the ghost values follow from it (the same
    /// as the checkpoint's, or those of a slab cut from another decomposition's).
    pub fn restore(&mut self, state: FluidState) -> Result<(), String> {
        let dims = self.grid().field_dims();
        let fits = state.pressure.dims == dims && state.velocity.iter().all(|f| f.dims == dims);
        // Every rank learns whether every rank's fits before the ghost fill (a collective).
        let all_fit = self.decomposition.max(if fits { 0.0 } else { 1.0 }) == 0.0;
        if !fits {
            return Err(format!(
                "the checkpoint's fields have {:?} points per axis, the grid needs {dims:?}",
                state.pressure.dims
            ));
        }
        if !all_fit {
            return Err("another rank's checkpoint does not fit its part of the grid".into());
        }
        self.state = state;
        self.fill_ghosts();
        Ok(())
    }

    fn fill_ghosts(&mut self) {
        self.fill_velocity_ghosts();
        self.fill_pressure_ghosts();
    }

    /// The ghost and boundary values of the velocity: the boundary conditions, then the
    /// neighbouring ranks' planes.
    fn fill_velocity_ghosts(&mut self) {
        let (grid, own) = (
            self.decomposition.local_grid(),
            self.decomposition.boundaries(),
        );
        for c in 0..3 {
            own.fill_velocity_ghosts(grid, c, &mut self.state.velocity[c]);
        }
        let [u, v, w] = &mut self.state.velocity;
        self.decomposition.exchange_halos(&mut [u, v, w]);
    }

    fn fill_pressure_ghosts(&mut self) {
        let own = self.decomposition.boundaries();
        own.fill_scalar_ghosts(&mut self.state.pressure);
        self.decomposition
            .exchange_halos(&mut [&mut self.state.pressure]);
    }

    /// Bytes of the solver's arrays: fields, stage arrays and the linear solvers' tables.
    pub fn allocated_bytes(&self) -> usize {
        let f64s = |v: &Vec<f64>| v.capacity() * std::mem::size_of::<f64>();
        let fields: usize = self
            .state
            .velocity
            .iter()
            .chain([&self.state.pressure, &self.phi])
            .map(|f| f64s(&f.data))
            .sum();
        let stage: usize = self
            .previous_rhs
            .iter()
            .chain(&self.delta)
            .chain(self.flow_rate_response.iter().map(|r| &r.2))
            .map(f64s)
            .sum::<usize>()
            + f64s(&self.phi_compact);
        let solvers = self.poisson.allocated_bytes()
            + self
                .helmholtz
                .iter()
                .flatten()
                .map(DecomposedSolver::allocated_bytes)
                .sum::<usize>()
            + self
                .jacobi
                .iter()
                .flatten()
                .map(JacobiSolver::allocated_bytes)
                .sum::<usize>();
        fields + stage + solvers
    }

    /// How each Runge–Kutta stage of a step of length `dt` solves its Crank–Nicolson systems: per stage,
    /// `Some(sweeps)` (Jacobi, the most sweeps of the three components) or `None` (the direct solver for
    /// at least one component). `None` overall with explicit viscous terms.
    pub fn helmholtz_plan(&self, dt: f64) -> Option<[Option<usize>; 3]> {
        self.helmholtz.as_ref()?;
        let Some(jacobi) = self.jacobi.as_ref() else {
            return Some([None; 3]);
        };
        Some(std::array::from_fn(|k| {
            let b = -ALPHA[k] * dt * self.config.viscosity;
            jacobi.iter().try_fold(0, |most, solver| {
                let sweeps = sweeps_for(self.helmholtz_method, solver, b)?;
                Some(usize::max(most, sweeps))
            })
        }))
    }

    /// The time step the next step will take.
    pub fn next_dt(&self) -> f64 {
        match self.config.time_step {
            TimeStep::Fixed(dt) => dt,
            TimeStep::Cfl { cfl, max } => {
                let speed = self
                    .decomposition
                    .max(crate::diagnostics::max_speed_sum(&self.state.velocity));
                let h = self.config.grid.spacing;
                let mut dt = max;
                if speed > 0.0 {
                    dt = dt.min(cfl * h / speed);
                }
                if self.config.viscous == Viscous::Explicit {
                    dt = dt.min(0.9 * viscous_limit(self.config.viscosity, h));
                }
                dt
            }
        }
    }

    /// Advances the flow by one time step.
    pub fn step(&mut self) -> Result<(), FluidError> {
        self.step_with(&mut NoForcing)
    }

    /// Advances the flow by one time step with a volume force inside each stage.
    pub fn step_with(&mut self, forcing: &mut dyn StageForcing) -> Result<(), FluidError> {
        self.step_by(self.next_dt(), forcing)
    }

    /// Advances the flow by a step of length `dt` chosen by the caller (e.g. shortened to land on an output
    /// time), with a volume force inside each stage.
    pub fn step_by(&mut self, dt: f64, forcing: &mut dyn StageForcing) -> Result<(), FluidError> {
        let mut driving_gradient = 0.0;
        for k in 0..3 {
            // 1. Explicit increment: convection, forcing, pressure gradient of the previous stage.
            self.explicit_increment(k, dt);
            // 2. Volume force (immersed boundaries) on the predicted velocity u + delta.
            let clock = std::time::Instant::now();
            let (velocity, unknowns, increment) = self.stage_increment();
            forcing.add_force(k, dt, velocity, unknowns, increment);
            self.times.momentum += clock.elapsed().as_secs_f64();
            // 3. Crank–Nicolson solve of the increment; 4.-5. projection and pressure update.
            self.solve_helmholtz(k, dt);
            driving_gradient += self.project(k, dt) * 2.0 * ALPHA[k];
        }
        self.finish_step(dt, driving_gradient)
    }

    /// Closes a step of length `dt` whose stages held the flow rate with the mean pressure gradient
    /// `driving_gradient` (0 without flow-rate driving): advances the clock and stops a run whose
    /// velocities are no longer finite or whose CFL number left the stable range.
    pub fn finish_step(&mut self, dt: f64, driving_gradient: f64) -> Result<(), FluidError> {
        self.state.time += dt;
        self.state.steps += 1;
        self.state.last_dt = dt;
        self.state.driving_gradient = driving_gradient;
        self.check(dt)
    }

    /// The stage's increment of each velocity component at its unknowns (the predicted velocity is
    /// u + delta), with the velocity and the unknowns, for a volume force between
    /// [`FluidSolver::explicit_increment`] and [`FluidSolver::solve_helmholtz`].
    pub fn stage_increment(&mut self) -> (&[Field; 3], &[Unknowns; 3], &mut [Vec<f64>; 3]) {
        (
            &self.state.velocity,
            &self.velocity_unknowns,
            &mut self.delta,
        )
    }

    /// Step 1 of Runge–Kutta stage `k` of a step of length `dt`: the explicit increment of the
    /// momentum equation (convection in divergence form, the explicit part of the viscous term, the
    /// body force and driving, the pressure gradient of the previous stage), and the outflow faces
    /// carried over the stage.
    pub fn explicit_increment(&mut self, k: usize, dt: f64) {
        let stage = Stage {
            gamma: GAMMA[k],
            zeta: ZETA[k],
            alpha: ALPHA[k],
            dt,
        };
        let grid = *self.grid();
        let h = grid.spacing;
        let nu = self.config.viscosity;
        let terms = MomentumTerms {
            viscosity: nu,
            explicit_viscous: self.config.viscous == Viscous::Explicit,
            body_force: self.body_force(self.state.time + stage_start(k) * dt),
        };

        let clock = std::time::Instant::now();
        explicit_increments(
            &self.state.velocity,
            &self.state.pressure,
            &self.velocity_unknowns,
            h,
            &terms,
            &stage,
            &mut self.previous_rhs,
            &mut self.delta,
        );
        // Outflow faces are carried out of the domain over the stage (held in the Helmholtz solve).
        for c in 0..3 {
            self.decomposition.boundaries().advect_outflow(
                &grid,
                c,
                &mut self.state.velocity[c],
                2.0 * stage.alpha * dt,
            );
        }
        self.times.momentum += clock.elapsed().as_secs_f64();
    }

    /// Step 3 of stage `k`: the Crank–Nicolson system (1 - alpha_k dt nu L) delta = the increment,
    /// boundary values held, and the velocity u* = u + delta (explicit viscous terms: the increment as
    /// it is).
    pub fn solve_helmholtz(&mut self, k: usize, dt: f64) {
        let nu = self.config.viscosity;
        let alpha = ALPHA[k];
        let clock = std::time::Instant::now();
        // A component solved by Jacobi sweeps is added to the velocity by the last sweep.
        let mut added = [false; 3];
        if let Some(direct) = &mut self.helmholtz {
            let b = -alpha * dt * nu;
            for c in 0..3 {
                let sweeps = self
                    .jacobi
                    .as_ref()
                    .and_then(|jacobi| sweeps_for(self.helmholtz_method, &jacobi[c], b));
                let delta = &mut self.delta[c];
                match (sweeps, &mut self.jacobi) {
                    (Some(sweeps), Some(jacobi)) => {
                        let velocity = &mut self.state.velocity[c];
                        let layout = [velocity.stride(1), velocity.stride(2)];
                        let start = self.velocity_unknowns[c].start;
                        if self.decomposition.is_distributed() {
                            // The sweeps of this block read the right-hand side `sweeps` rows
                            // and planes beyond it: those come from the neighbouring ranks.
                            let blocks = direct[c].all_blocks();
                            let window =
                                |rank: usize| jacobi[c].window_needed(&blocks[rank], sweeps);
                            let row_len = self.velocity_unknowns[c].shape[0];
                            let f = self
                                .decomposition
                                .gather_box(&blocks, row_len, delta, &window);
                            let rank = self.decomposition.comm().rank();
                            let [(row_first, row_end), (plane_first, _)] = window(rank);
                            jacobi[c].solve_block_adding_to(
                                1.0,
                                b,
                                sweeps,
                                &f,
                                [row_first, plane_first],
                                (row_end - row_first) as usize,
                                blocks[rank].clone(),
                                &mut velocity.data,
                                layout,
                                start,
                            );
                        } else {
                            jacobi[c].solve_adding_to(
                                1.0,
                                b,
                                sweeps,
                                delta,
                                &mut velocity.data,
                                layout,
                                start,
                            );
                        }
                        added[c] = true;
                        self.times.jacobi_solves += 1;
                    }
                    _ => {
                        direct[c].solve(1.0, b, delta);
                        self.times.direct_solves += 1;
                    }
                }
            }
        }
        for c in 0..3 {
            if !added[c] {
                add_increment(
                    &mut self.state.velocity[c],
                    &self.velocity_unknowns[c],
                    &self.delta[c],
                );
            }
        }
        // Until the projection ends with a full ghost fill, only the divergence reads ghost values
        // of u*: those of the domain's faces and, between blocks, v's and w's below the block.
        let (grid, own) = (
            self.decomposition.local_grid(),
            self.decomposition.boundaries(),
        );
        for c in 0..3 {
            own.fill_velocity_ghosts(grid, c, &mut self.state.velocity[c]);
        }
        let [_, v, w] = &mut self.state.velocity;
        self.decomposition.exchange_low_halo(1, v);
        self.decomposition.exchange_low_halo(2, w);
        self.times.helmholtz += clock.elapsed().as_secs_f64();
    }

    /// Steps 4-5 of stage `k`: the pressure correction L phi = D u* / (2 alpha_k dt), the projection
    /// (with the flow-rate driving) and the pressure update. Returns the mean pressure gradient that held
    /// the flow rate over the stage (0 without flow-rate driving).
    pub fn project(&mut self, k: usize, dt: f64) -> f64 {
        let grid = *self.grid();
        let h = grid.spacing;
        let nu = self.config.viscosity;
        let alpha = ALPHA[k];
        let clock = std::time::Instant::now();
        let stage_length = 2.0 * alpha * dt;
        // The flow rate the stage ends with.
        let stage_end = self.state.time + (stage_start(k) + 2.0 * alpha) * dt;
        let flow_rate = match &self.config.driving {
            Driving::FlowRate {
                axis,
                bulk_velocity,
            } => Some((*axis, bulk_velocity.at(stage_end))),
            _ => None,
        };
        let driving_axis = flow_rate.map(|(axis, _)| axis);
        let streamwise_sums = divergence_and_row_sums(
            &self.state.velocity,
            &self.cells,
            h,
            1.0 / stage_length,
            &mut self.phi_compact,
            driving_axis,
        );
        let streamwise_mean = streamwise_sums.map(|rows| {
            self.decomposition.sum_of_rows(&rows, self.cells.shape[2])
                / self.config.grid.cell_count() as f64
        });
        self.poisson.solve(0.0, 1.0, &mut self.phi_compact);
        scatter(&self.phi_compact, &self.cells, &mut self.phi);
        self.decomposition
            .boundaries()
            .fill_scalar_ghosts(&mut self.phi);
        self.decomposition.exchange_halos(&mut [&mut self.phi]);
        self.times.poisson += clock.elapsed().as_secs_f64();

        // 5. Projection (with the flow-rate driving) and pressure update.
        let clock = std::time::Instant::now();
        let driving_force = match (flow_rate, streamwise_mean) {
            (Some((axis, bulk_velocity)), Some(plain)) => {
                // The weighted mean after the projection (which, unlike the plain mean along a
                // periodic axis, the pressure correction changes).
                let current = match &self.flow_rate_weights {
                    Some(weights) => self.weighted_mean(axis, weights, stage_length / h),
                    None => plain,
                };
                let force = self.flow_rate_force(k, dt, axis, bulk_velocity - current);
                let driving = match self.helmholtz {
                    None => FlowRateAddition::Uniform(force * stage_length),
                    Some(_) => FlowRateAddition::Response {
                        force,
                        response: &self.flow_rate_response[k].2,
                    },
                };
                drive_and_subtract_gradient(
                    &mut self.state.velocity[axis],
                    axis,
                    &self.velocity_unknowns[axis],
                    &self.phi,
                    stage_length / h,
                    driving,
                );
                force
            }
            _ => 0.0,
        };
        for c in 0..3 {
            let outflows = self.decomposition.boundaries().outflow_planes(&grid, c);
            let unknowns = (Some(c) != driving_axis).then_some(self.velocity_unknowns[c]);
            for points in unknowns.into_iter().chain(outflows) {
                subtract_gradient(
                    &mut self.state.velocity[c],
                    c,
                    &points,
                    &self.phi,
                    stage_length / h,
                );
            }
        }
        let beta = match self.config.viscous {
            Viscous::Explicit => 0.0,
            Viscous::CrankNicolson => alpha * dt * nu,
        };
        update_pressure(&mut self.state.pressure, &self.cells, &self.phi, h, beta);
        self.fill_ghosts();
        self.times.correction += clock.elapsed().as_secs_f64();
        -driving_force
    }

    /// Body force per unit mass at time `t`, including a prescribed mean pressure gradient. The
    /// explicit right-hand side of a stage is taken at the stage's start, so a force that varies in
    /// time is integrated by RK3 as the convection is.
    pub fn body_force(&self, t: f64) -> [f64; 3] {
        let mut force = [0, 1, 2].map(|c| self.config.body_force[c].at(t));
        if let Driving::PressureGradient { axis, gradient } = &self.config.driving {
            force[*axis] -= gradient.at(t);
        }
        force
    }

    /// Flow-rate driving: the uniform force g along `axis` that changes the mean of the streamwise
    /// velocity by `shortfall` (the prescribed bulk velocity minus the current mean). The projection leaves the mean of a periodic
    /// component unchanged, so the bulk velocity is held to round-off. Explicit viscous terms: g adds
    /// g 2 alpha dt everywhere. Crank–Nicolson: g adds g r, with r the response (1 - alpha dt nu L) r =
    /// 2 alpha dt (walls slow it down), kept per stage in `flow_rate_response` while dt does not change.
    ///
    /// With flow-rate weights (seed eq. 32) the shortfall is that of the weighted mean, and g moves the
    /// weighted mean by g times the weighted mean of the response: held to round-off as well.
    fn flow_rate_force(&mut self, k: usize, dt: f64, axis: usize, shortfall: f64) -> f64 {
        let stage_length = 2.0 * ALPHA[k] * dt;
        let count = self.global_unknowns(axis) as f64;
        let unknowns = self.velocity_unknowns[axis];
        let [row, _, planes] = unknowns.shape;
        // Means over the domain by rows in parallel, the rows chained along y in each plane and the
        // planes' sums added in z order (any thread or rank count).
        let row_sums = |values: &[f64]| -> Vec<f64> {
            values
                .par_chunks(row)
                .map(|r| r.iter().fold(0.0, |sum, v| sum + v))
                .collect()
        };
        let Some(solvers) = &mut self.helmholtz else {
            let gain = match &self.flow_rate_weights {
                Some(weights) => {
                    stage_length * self.decomposition.sum_of_rows(&row_sums(weights), planes)
                        / count
                }
                None => stage_length,
            };
            return shortfall / gain;
        };
        let cached = &mut self.flow_rate_response[k];
        if cached.0 != dt {
            let mut response = vec![stage_length; unknowns.len()];
            solvers[axis].solve(1.0, -ALPHA[k] * dt * self.config.viscosity, &mut response);
            let mean = self.decomposition.sum_of_rows(&row_sums(&response), planes) / count;
            *cached = (dt, mean, response);
        }
        let gain = match &self.flow_rate_weights {
            Some(weights) => {
                let rows: Vec<f64> = weights
                    .par_chunks(row)
                    .zip(cached.2.par_chunks(row))
                    .map(|(w, r)| w.iter().zip(r).fold(0.0, |sum, (w, r)| sum + w * r))
                    .collect();
                self.decomposition.sum_of_rows(&rows, planes) / count
            }
            None => cached.1,
        };
        shortfall / gain
    }

    /// Holds the flow rate as the mean of `weights` times the driving component over its unknowns
    /// (compact order, see [`crate::grid::Unknowns`]): with the fluid fraction 1 - phi at each face,
    /// the seed's eq. 32, `q_f = (1 / (L_x L_z)) ∫ (1 - phi) u dV`, over the height. `None` goes back
    /// to the plain mean. Refused when the flow is not driven by a flow rate or the length is wrong.
    pub fn set_flow_rate_weights(&mut self, weights: Option<Vec<f64>>) -> Result<(), String> {
        if let Some(w) = &weights {
            let Driving::FlowRate { axis, .. } = self.config.driving else {
                return Err("flow-rate weights need flow-rate driving".into());
            };
            let unknowns = self.velocity_unknowns[axis].len();
            if w.len() != unknowns {
                return Err(format!(
                    "{} flow-rate weights for {unknowns} unknowns of the driving component",
                    w.len()
                ));
            }
        }
        self.flow_rate_weights = weights;
        Ok(())
    }

    /// The flow rate the solver holds: the weighted mean of the driving component (the plain mean
    /// without weights); `None` without flow-rate driving.
    pub fn held_flow_rate(&self) -> Option<f64> {
        let Driving::FlowRate { axis, .. } = self.config.driving else {
            return None;
        };
        let ones;
        let weights = match &self.flow_rate_weights {
            Some(w) => w,
            None => {
                ones = vec![1.0; self.velocity_unknowns[axis].len()];
                &ones
            }
        };
        Some(self.weighted_mean(axis, weights, 0.0))
    }

    /// `Σ w (u_axis - factor G_axis phi) / N` over the unknowns of component `axis`, in their compact
    /// order: the weighted mean the projection with `factor` leaves (0: of the velocity now).
    fn weighted_mean(&self, axis: usize, weights: &[f64], factor: f64) -> f64 {
        let unknowns = &self.velocity_unknowns[axis];
        let field = &self.state.velocity[axis];
        let stride = self.phi.stride(axis);
        let [n0, n1, n2] = unknowns.shape;
        // Row by row in parallel, the rows chained along y in each plane and the planes' sums
        // added in z order: the same sum for any thread or rank count.
        let rows: Vec<f64> = (0..n2)
            .into_par_iter()
            .flat_map_iter(|d| (0..n1).map(move |b| (b, d)))
            .map(|(b, d)| {
                let mut sum = 0.0;
                let first = field.index(
                    unknowns.start[0],
                    unknowns.start[1] + b,
                    unknowns.start[2] + d,
                );
                let row_weights = &weights[n0 * (b + n1 * d)..n0 * (b + n1 * d + 1)];
                for (a, weight) in row_weights.iter().enumerate() {
                    let index = first + a;
                    let gradient = if factor != 0.0 {
                        factor * (self.phi.data[index + stride] - self.phi.data[index])
                    } else {
                        0.0
                    };
                    sum += weight * (field.data[index] - gradient);
                }
                sum
            })
            .collect();
        self.decomposition.sum_of_rows(&rows, n2) / self.global_unknowns(axis) as f64
    }

    /// Stops a run whose velocities are no longer finite or whose CFL number left the stable range.
    fn check(&self, dt: f64) -> Result<(), FluidError> {
        let speed = self
            .decomposition
            .max(crate::diagnostics::max_speed_sum(&self.state.velocity));
        let cfl = speed * dt / self.config.grid.spacing;
        let message = if !speed.is_finite() {
            Some("the velocity is no longer finite".to_string())
        } else if cfl > CFL_LIMIT {
            Some(format!(
                "the CFL number reached {cfl:.3}, above the stability limit {CFL_LIMIT:.3} of RK3 \
                 (reduce the time step or the CFL number)"
            ))
        } else {
            None
        };
        match message {
            Some(message) => Err(FluidError::Diverged {
                time: self.state.time,
                step: self.state.steps,
                message,
            }),
            None => Ok(()),
        }
    }
}

/// Largest stable explicit viscous time step of RK3 on the 7-point Laplacian: nu dt 12 / h^2 <= 2.51.
pub fn viscous_limit(viscosity: f64, spacing: f64) -> f64 {
    VISCOUS_LIMIT * spacing * spacing / (12.0 * viscosity)
}

/// Refuses configurations the solver cannot run.
fn validate(config: &FluidConfig) -> Result<(), String> {
    let grid = &config.grid;
    config.boundaries.validate()?;
    for axis in 0..3 {
        let minimum = if config.boundaries.is_periodic(axis) {
            2
        } else {
            3
        };
        if grid.cells[axis] < minimum {
            return Err(format!(
                "the grid has {} cell(s) along {}; at least {minimum} are needed ({})",
                grid.cells[axis],
                ["x", "y", "z"][axis],
                if minimum == 2 {
                    "periodic axis"
                } else {
                    "bounded axis"
                }
            ));
        }
    }
    if !(grid.spacing.is_finite() && grid.spacing > 0.0) {
        return Err(format!(
            "the cell size must be positive and finite, got {}",
            grid.spacing
        ));
    }
    if !(config.viscosity.is_finite() && config.viscosity > 0.0) {
        return Err(format!(
            "the viscosity must be positive and finite, got {}",
            config.viscosity
        ));
    }
    match &config.driving {
        Driving::None => {}
        Driving::PressureGradient { axis, gradient } => {
            check_driving_axis(config, *axis)?;
            if let Some(problem) = gradient.problem() {
                return Err(format!("the driving pressure gradient: {problem}"));
            }
        }
        Driving::FlowRate {
            axis,
            bulk_velocity,
        } => {
            check_driving_axis(config, *axis)?;
            if let Some(problem) = bulk_velocity.problem() {
                return Err(format!("the driving bulk velocity: {problem}"));
            }
        }
    }
    if let Some(problem) = config.body_force.iter().find_map(Signal::problem) {
        return Err(format!("the body force: {problem}"));
    }
    match config.time_step {
        TimeStep::Fixed(dt) => {
            if !(dt.is_finite() && dt > 0.0) {
                return Err(format!("the time step must be positive, got {dt}"));
            }
            let limit = viscous_limit(config.viscosity, grid.spacing);
            if config.viscous == Viscous::Explicit && dt > limit {
                return Err(format!(
                    "the time step {dt:e} is above the explicit viscous stability limit \
                     2.51 h^2 / (12 nu) = {limit:e}; use a smaller time step or Crank–Nicolson"
                ));
            }
        }
        TimeStep::Cfl { cfl, max } => {
            if !(cfl > 0.0 && cfl <= CFL_LIMIT) {
                return Err(format!(
                    "the CFL number must lie in (0, {CFL_LIMIT:.4}] (stability limit of RK3 with \
                     central differences), got {cfl}"
                ));
            }
            if !(max.is_finite() && max > 0.0) {
                return Err(format!("the largest time step must be positive, got {max}"));
            }
        }
    }
    Ok(())
}

fn check_driving_axis(config: &FluidConfig, axis: usize) -> Result<(), String> {
    if axis > 2 {
        return Err(format!("the driving axis must be 0, 1 or 2, got {axis}"));
    }
    if !config.boundaries.is_periodic(axis) {
        return Err(format!(
            "the flow is driven along {}, which is not periodic: driving needs a periodic axis",
            ["x", "y", "z"][axis]
        ));
    }
    Ok(())
}

/// Calls `visit(index, value)` for every unknown of `field`, in parallel over z-planes.
pub(crate) fn for_each_unknown(
    field: &mut Field,
    unknowns: &Unknowns,
    visit: impl Fn([usize; 3], &mut f64) + Sync,
) {
    let [d0, d1, _] = field.dims;
    crate::grid::for_each_row(field, unknowns, |row, first, _| {
        let (i0, j, k) = (first % d0, (first / d0) % d1, first / (d0 * d1));
        for (i, value) in row.iter_mut().enumerate() {
            visit([i0 + i, j, k], value);
        }
    });
}
