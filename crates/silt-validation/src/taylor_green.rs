//! Taylor–Green vortices: second-order convergence in space (2D against the exact solution, 3D by
//! Richardson differences between three grids), and the 2D kinetic energy decay e^(-4 nu t).
//!
//! 2D (validation-data.md): u = -U cos x sin y e^(-2 nu t), v = U sin x cos y e^(-2 nu t) on [0, 2 pi)^2,
//! run on an n x n x 2 grid periodic in z (the flow stays two-dimensional).
//! 3D (Brachet et al. 1983): u = U sin x cos y cos z, v = -U cos x sin y cos z, w = 0 on [0, 2 pi)^3.

use crate::setup::run_to;
use silt_fluid::diagnostics::kinetic_energy;
use silt_fluid::{
    Boundaries, Driving, FluidConfig, FluidSolver, Grid, Location, TimeStep, Viscous,
};
use std::f64::consts::PI;

/// Solver for a Taylor–Green vortex of amplitude 1 on `cells` cells per axis (2 along z when `three_d`
/// is false), with viscosity `nu` and a time step of `cfl` h / U (at most half the explicit viscous limit
/// with explicit viscous terms).
pub fn solver(
    cells: usize,
    three_d: bool,
    nu: f64,
    cfl: f64,
    viscous: Viscous,
) -> Result<FluidSolver, String> {
    let h = 2.0 * PI / cells as f64;
    let grid = Grid {
        cells: [cells, cells, if three_d { cells } else { 2 }],
        spacing: h,
        origin: [0.0; 3],
    };
    let config = FluidConfig {
        grid,
        boundaries: Boundaries::periodic(),
        viscosity: nu,
        viscous,
        driving: Driving::None,
        body_force: silt_fluid::Signal::constants([0.0; 3]),
        time_step: TimeStep::Fixed(largest_step(h, nu, cfl, viscous)),
    };
    let mut solver = FluidSolver::new(config)?;
    if three_d {
        solver.set_velocity(|c, [x, y, z]| match c {
            0 => x.sin() * y.cos() * z.cos(),
            1 => -x.cos() * y.sin() * z.cos(),
            _ => 0.0,
        });
        solver.set_pressure(|[x, y, z]| {
            ((2.0 * x).cos() + (2.0 * y).cos()) * ((2.0 * z).cos() + 2.0) / 16.0
        });
    } else {
        solver.set_velocity(|c, p| exact_2d(c, p, 0.0, nu));
        solver.set_pressure(|[x, y, _]| -((2.0 * x).cos() + (2.0 * y).cos()) / 4.0);
    }
    Ok(solver)
}

/// Exact 2D Taylor–Green velocity component `c` at `p` and time `t`.
pub fn exact_2d(c: usize, [x, y, _]: [f64; 3], t: f64, nu: f64) -> f64 {
    let decay = (-2.0 * nu * t).exp();
    match c {
        0 => -x.cos() * y.sin() * decay,
        1 => x.sin() * y.cos() * decay,
        _ => 0.0,
    }
}

/// Largest time step of the studies: `cfl` h / U, and at most half the explicit viscous limit with
/// explicit viscous terms.
fn largest_step(h: f64, nu: f64, cfl: f64, viscous: Viscous) -> f64 {
    let dt = cfl * h;
    match viscous {
        Viscous::Explicit => dt.min(0.5 * silt_fluid::solver::viscous_limit(nu, h)),
        Viscous::CrankNicolson => dt,
    }
}

/// Sets a fixed time step of at most `cfl` h (and half the explicit viscous limit) that divides
/// `interval` exactly.
pub fn set_step_dividing(solver: &mut FluidSolver, interval: f64, cfl: f64) {
    let c = &solver.config;
    let largest = largest_step(c.grid.spacing, c.viscosity, cfl, c.viscous);
    let steps = (interval / largest).ceil().max(1.0);
    solver.config.time_step = TimeStep::Fixed(interval / steps);
}

/// Root-mean-square difference between the velocity and `exact(c, position)` over all unknowns, over the
/// rms of the exact field.
pub fn relative_l2_error(solver: &FluidSolver, exact: impl Fn(usize, [f64; 3]) -> f64) -> f64 {
    let grid = *solver.grid();
    let (mut error, mut norm) = (0.0, 0.0);
    for c in 0..3 {
        let unknowns = *solver.velocity_unknowns(c);
        let field = &solver.state.velocity[c];
        for k in 0..unknowns.shape[2] {
            for j in 0..unknowns.shape[1] {
                for i in 0..unknowns.shape[0] {
                    let index = [
                        i + unknowns.start[0],
                        j + unknowns.start[1],
                        k + unknowns.start[2],
                    ];
                    let value = field.at(index[0], index[1], index[2]);
                    let reference = exact(c, grid.point(Location::Face(c), index));
                    error += (value - reference).powi(2);
                    norm += reference * reference;
                }
            }
        }
    }
    (error / norm).sqrt()
}

/// Projection of the u component on sin x cos y cos z (the initial 3D mode): 8 / (2 pi)^3 times the
/// integral, exact on the grid for this trigonometric polynomial.
pub fn mode_amplitude_3d(solver: &FluidSolver) -> f64 {
    let grid = *solver.grid();
    let unknowns = *solver.velocity_unknowns(0);
    let field = &solver.state.velocity[0];
    let mut sum = 0.0;
    for k in 0..unknowns.shape[2] {
        for j in 0..unknowns.shape[1] {
            for i in 0..unknowns.shape[0] {
                let index = [i + 1, j + 1, k + 1];
                let [x, y, z] = grid.point(Location::Face(0), index);
                sum += field.at(index[0], index[1], index[2]) * x.sin() * y.cos() * z.cos();
            }
        }
    }
    8.0 * sum / unknowns.len() as f64
}

/// One grid of a convergence study.
#[derive(Clone, Debug)]
pub struct ConvergenceRow {
    pub cells: usize,
    pub spacing: f64,
    /// 2D: relative L2 error against the exact solution. 3D: amplitude of the initial mode.
    pub value: f64,
    /// Largest |div u| h / U after the last step.
    pub divergence: f64,
    pub steps: u64,
}

/// Observed orders between successive rows: log2(e_n / e_2n) for errors (2D), and
/// log2((a_n - a_2n) / (a_2n - a_4n)) for the 3D amplitudes (Richardson).
pub fn observed_orders(rows: &[ConvergenceRow], three_d: bool) -> Vec<f64> {
    if three_d {
        rows.windows(3)
            .map(|w| {
                ((w[0].value - w[1].value) / (w[1].value - w[2].value))
                    .abs()
                    .log2()
            })
            .collect()
    } else {
        rows.windows(2)
            .map(|w| (w[0].value / w[1].value).log2())
            .collect()
    }
}

/// Convergence study on `grids` (cells per axis), to `end_time` with dt = cfl h.
pub fn convergence(
    grids: &[usize],
    three_d: bool,
    nu: f64,
    end_time: f64,
    cfl: f64,
    viscous: Viscous,
) -> Result<Vec<ConvergenceRow>, String> {
    grids
        .iter()
        .map(|&n| {
            let mut s = solver(n, three_d, nu, cfl, viscous)?;
            set_step_dividing(&mut s, end_time, cfl);
            run_to(&mut s, end_time)?;
            let value = if three_d {
                mode_amplitude_3d(&s)
            } else {
                relative_l2_error(&s, |c, p| exact_2d(c, p, end_time, nu))
            };
            let h = s.grid().spacing;
            let mut work = Vec::new();
            let divergence =
                silt_fluid::projection::max_divergence(&s.state.velocity, s.cells(), h, &mut work)
                    * h;
            Ok(ConvergenceRow {
                cells: n,
                spacing: h,
                value,
                divergence,
                steps: s.state.steps,
            })
        })
        .collect()
}

/// Kinetic energy history of the 2D vortex on n x n cells over one decay time 1 / (4 nu):
/// rows of (t, E / E_0 computed, e^(-4 nu t)).
pub fn energy_decay(
    cells: usize,
    nu: f64,
    cfl: f64,
    viscous: Viscous,
    samples: usize,
) -> Result<Vec<(f64, f64, f64)>, String> {
    let mut s = solver(cells, false, nu, cfl, viscous)?;
    let decay_time = 1.0 / (4.0 * nu);
    set_step_dividing(&mut s, decay_time / samples as f64, cfl);
    let unknowns = [0, 1, 2].map(|c| *s.velocity_unknowns(c));
    let e0 = kinetic_energy(s.grid(), &s.state.velocity, &unknowns);
    let mut rows = vec![(0.0, 1.0, 1.0)];
    for sample in 1..=samples {
        let t = decay_time * sample as f64 / samples as f64;
        run_to(&mut s, t)?;
        let e = kinetic_energy(s.grid(), &s.state.velocity, &unknowns);
        rows.push((t, e / e0, (-4.0 * nu * t).exp()));
    }
    Ok(rows)
}
