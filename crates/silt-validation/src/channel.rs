//! Plane channel flows between walls at y = 0 and y = H (periodic in x and z): steady Poiseuille and
//! Couette profiles, the start-up of Poiseuille flow from rest (series solution), and flow-rate driving.
//!
//! The tangential velocity sits half a cell from the walls, and the no-slip ghost value u_0 = 2 U_w - u_1
//! is a linear extrapolation (seed sec. 2). It is exact for the linear Couette profile. For Poiseuille
//! flow the discrete steady solution is the parabola a (y + d)(H + d - y), a = G / (2 nu), whose roots lie
//! d = (sqrt(H^2 + h^2) - H) / 2 ~ h^2 / (4 H) outside the walls: the scheme is exact for that parabola
//! and second-order accurate against the analytic one.

use crate::setup::run_to;
use silt_fluid::{
    Boundaries, Boundary, Driving, FluidConfig, FluidSolver, Grid, Location, TimeStep, Viscous,
};
use std::f64::consts::PI;

/// Channel of height 1 with `ny` cells across and 4 x 4 along the periodic directions.
pub fn channel(
    ny: usize,
    nu: f64,
    dt: f64,
    viscous: Viscous,
    driving: Driving,
    top_wall_velocity: f64,
) -> Result<FluidSolver, String> {
    let h = 1.0 / ny as f64;
    let mut boundaries = Boundaries::channel(1);
    boundaries.faces[1][1] = Boundary::NoSlip {
        velocity: [top_wall_velocity, 0.0, 0.0],
    };
    let config = FluidConfig {
        grid: Grid {
            cells: [4, ny, 4],
            spacing: h,
            origin: [0.0; 3],
        },
        boundaries,
        viscosity: nu,
        viscous,
        driving,
        body_force: silt_fluid::Signal::constants([0.0; 3]),
        time_step: TimeStep::Fixed(dt),
    };
    FluidSolver::new(config)
}

/// The channel with nu = 1 driven by dp/dx = -1, from rest.
fn pressure_driven(ny: usize, viscous: Viscous, dt: f64) -> Result<FluidSolver, String> {
    let driving = Driving::PressureGradient {
        axis: 0,
        gradient: silt_fluid::Signal::Constant(-1.0),
    };
    channel(ny, 1.0, dt, viscous, driving, 0.0)
}

/// Cell-centre heights and the x-velocity of one column (all columns are equal).
pub fn profile(solver: &FluidSolver) -> Vec<(f64, f64)> {
    let grid = *solver.grid();
    (1..=grid.cells[1])
        .map(|j| {
            let y = grid.point(Location::Face(0), [1, j, 1])[1];
            (y, solver.state.velocity[0].at(1, j, 1))
        })
        .collect()
}

/// Analytic steady Poiseuille profile u = G y (H - y) / (2 nu), H = 1.
pub fn poiseuille(y: f64, gradient: f64, nu: f64) -> f64 {
    gradient * y * (1.0 - y) / (2.0 * nu)
}

/// Exact steady solution of the discrete equations (module doc): the parabola with roots at -d and 1 + d.
pub fn discrete_poiseuille(y: f64, gradient: f64, nu: f64, h: f64) -> f64 {
    let d = 0.5 * ((1.0 + h * h).sqrt() - 1.0);
    gradient * (y + d) * (1.0 + d - y) / (2.0 * nu)
}

/// Start-up of Poiseuille flow from rest (H = 1): u = G/(2 nu) y (1 - y)
/// - sum over odd n of 4 G / (nu pi^3 n^3) sin(n pi y) e^(-n^2 pi^2 nu t).
pub fn poiseuille_startup(y: f64, t: f64, gradient: f64, nu: f64) -> f64 {
    let mut u = poiseuille(y, gradient, nu);
    for n in (1..2000).step_by(2) {
        let n = n as f64;
        let term = 4.0 * gradient / (nu * PI.powi(3) * n.powi(3))
            * (n * PI * y).sin()
            * (-(n * PI).powi(2) * nu * t).exp();
        u -= term;
        if term.abs() < 1e-18 {
            break;
        }
    }
    u
}

/// Largest |a - b| over a profile against `reference(y)`.
pub fn max_difference(profile: &[(f64, f64)], reference: impl Fn(f64) -> f64) -> f64 {
    profile
        .iter()
        .map(|&(y, u)| (u - reference(y)).abs())
        .fold(0.0, f64::max)
}

/// Result of the steady channel runs.
#[derive(Clone, Debug)]
pub struct SteadyResult {
    pub cells: usize,
    /// Largest deviation from the discrete-exact profile over its centreline velocity.
    pub discrete_error: f64,
    /// Largest deviation from the analytic profile over its centreline velocity.
    pub analytic_error: f64,
    pub steps: u64,
    pub profile: Vec<(f64, f64)>,
}

/// Poiseuille flow driven by dp/dx = -gradient from rest to t = `end_time` (in H^2 / nu).
pub fn steady_poiseuille(
    ny: usize,
    viscous: Viscous,
    dt: f64,
    end_time: f64,
) -> Result<SteadyResult, String> {
    let (nu, gradient) = (1.0, 1.0);
    let mut s = pressure_driven(ny, viscous, dt)?;
    run_to(&mut s, end_time)?;
    let h = s.grid().spacing;
    let centre = poiseuille(0.5, gradient, nu);
    let p = profile(&s);
    Ok(SteadyResult {
        cells: ny,
        discrete_error: max_difference(&p, |y| discrete_poiseuille(y, gradient, nu, h)) / centre,
        analytic_error: max_difference(&p, |y| poiseuille(y, gradient, nu)) / centre,
        steps: s.state.steps,
        profile: p,
    })
}

/// Couette flow (top wall at U = 1) from rest to `end_time`: deviation from u = y over U.
pub fn steady_couette(
    ny: usize,
    viscous: Viscous,
    dt: f64,
    end_time: f64,
) -> Result<SteadyResult, String> {
    let mut s = channel(ny, 1.0, dt, viscous, Driving::None, 1.0)?;
    run_to(&mut s, end_time)?;
    let p = profile(&s);
    let error = max_difference(&p, |y| y);
    Ok(SteadyResult {
        cells: ny,
        discrete_error: error,
        analytic_error: error,
        steps: s.state.steps,
        profile: p,
    })
}

/// Start-up from rest to t = 0.1 H^2 / nu: largest deviation from the series solution over the steady
/// centreline velocity, and the profile.
pub fn startup(ny: usize, viscous: Viscous, dt: f64) -> Result<(f64, Vec<(f64, f64)>), String> {
    let (nu, gradient, end) = (1.0, 1.0, 0.1);
    let mut s = pressure_driven(ny, viscous, dt)?;
    run_to(&mut s, end)?;
    let p = profile(&s);
    let error = max_difference(&p, |y| poiseuille_startup(y, end, gradient, nu))
        / poiseuille(0.5, gradient, nu);
    Ok((error, p))
}

/// Flow-rate driving at bulk velocity 1 from rest: largest |U_b - 1| after any step, and the final
/// driving pressure gradient against the steady value -12 nu U_b / H^2 (analytic).
pub fn flow_rate(ny: usize, viscous: Viscous, dt: f64, steps: u64) -> Result<(f64, f64), String> {
    let mut s = channel(
        ny,
        1.0,
        dt,
        viscous,
        Driving::FlowRate {
            axis: 0,
            bulk_velocity: 1.0.into(),
        },
        0.0,
    )?;
    let mut worst: f64 = 0.0;
    for _ in 0..steps {
        s.step().map_err(|e| e.to_string())?;
        let unknowns = *s.velocity_unknowns(0);
        let bulk = silt_fluid::diagnostics::mean_over(&s.state.velocity[0], &unknowns);
        worst = worst.max((bulk - 1.0).abs());
    }
    Ok((worst, s.state.driving_gradient))
}

/// Bulk velocity of the discrete steady Poiseuille solution per unit driving gradient G (H = 1): the
/// mean over the cell centres of the discrete parabola.
pub fn discrete_bulk_velocity_per_gradient(ny: usize, nu: f64) -> f64 {
    let h = 1.0 / ny as f64;
    (1..=ny)
        .map(|j| discrete_poiseuille((j as f64 - 0.5) * h, 1.0, nu, h))
        .sum::<f64>()
        / ny as f64
}
