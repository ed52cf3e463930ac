//! Initial flows: rest, a uniform flow, Taylor–Green vortices in two and three dimensions, and the
//! steady laminar flow of a plane channel (Couette and Poiseuille parts), each divergence-free on the
//! staggered grid.

use crate::{Boundary, Driving, FluidConfig, FluidSolver};
use std::f64::consts::PI;

/// The initial flow.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum InitialCondition {
    Rest,
    Uniform([f64; 3]),
    /// u = -U cos(kx x) sin(ky y), v = U r sin(kx x) cos(ky y), w = 0, k = 2 pi / length, r = kx / ky
    /// on the grid (see [`InitialCondition::velocity`]).
    TaylorGreen2d {
        amplitude: f64,
    },
    /// u = U sin(kx x) cos(ky y) cos(kz z), v = -U r cos(kx x) sin(ky y) cos(kz z), w = 0.
    TaylorGreen3d {
        amplitude: f64,
    },
    /// The steady laminar profile of the plane channel with walls at both ends of `wall_axis`
    /// (Couette and Poiseuille parts).
    Poiseuille {
        wall_axis: usize,
    },
}

impl InitialCondition {
    /// Sets the solver's velocity and pressure to this flow.
    pub fn apply(&self, solver: &mut FluidSolver) {
        let config = solver.config.clone();
        solver.set_velocity(|c, x| self.velocity(&config, c, x));
        if *self != InitialCondition::Rest {
            solver.set_pressure(|x| self.pressure(&config, x));
        }
    }

    /// Initial velocity component `c` at `x`. The Taylor–Green ratio r of the v and u amplitudes is
    /// sin(kx h / 2) / sin(ky h / 2) (kx / ky as h -> 0, 1 in a square box), which makes the initial field
    /// divergence-free on the grid.
    pub fn velocity(&self, config: &FluidConfig, c: usize, x: [f64; 3]) -> f64 {
        let o = config.grid.origin;
        let [kx, ky, kz] = wavenumbers(config);
        let half_h = 0.5 * config.grid.spacing;
        let ratio = (kx * half_h).sin() / (ky * half_h).sin();
        let (px, py, pz) = (kx * (x[0] - o[0]), ky * (x[1] - o[1]), kz * (x[2] - o[2]));
        match *self {
            InitialCondition::Rest => 0.0,
            InitialCondition::Uniform(v) => v[c],
            InitialCondition::TaylorGreen2d { amplitude: u } => match c {
                0 => -u * px.cos() * py.sin(),
                1 => u * ratio * px.sin() * py.cos(),
                _ => 0.0,
            },
            InitialCondition::TaylorGreen3d { amplitude: u } => match c {
                0 => u * px.sin() * py.cos() * pz.cos(),
                1 => -u * ratio * px.cos() * py.sin() * pz.cos(),
                _ => 0.0,
            },
            InitialCondition::Poiseuille { wall_axis } => {
                if c == wall_axis {
                    return 0.0;
                }
                let height = config.grid.lengths()[wall_axis];
                let y = x[wall_axis] - o[wall_axis];
                let (low, high, a, d) = Self::channel_profile(config, wall_axis, c);
                low + (high - low) * y / height + a * (y + d) * (height + d - y)
            }
        }
    }

    /// Steady plane-channel profile of component `c` between the walls of `wall_axis`, the exact steady
    /// solution of the discrete equations: u = U_low + (U_high - U_low) y / H + a (y + d)(H + d - y), with
    /// y measured from the low wall, a = (f - dp/dx) / (2 nu) and d = (sqrt(H^2 + h^2) - H) / 2 ~ h^2 / (4 H)
    /// (the no-slip ghost value extrapolates linearly, so the parabola's roots sit d beyond the walls).
    /// With flow-rate driving a gives the bulk velocity over the cells. Returns (U_low, U_high, a, d).
    fn channel_profile(config: &FluidConfig, wall_axis: usize, c: usize) -> (f64, f64, f64, f64) {
        let wall = |side: usize| match config.boundaries.faces[wall_axis][side] {
            Boundary::NoSlip { velocity } => velocity[c],
            _ => 0.0,
        };
        let (low, high) = (wall(0), wall(1));
        let height = config.grid.lengths()[wall_axis];
        let h = config.grid.spacing;
        let d = 0.5 * ((height * height + h * h).sqrt() - height);
        let nu = config.viscosity;
        let force = config.body_force[c].at(0.0);
        let a = match &config.driving {
            Driving::FlowRate {
                axis,
                bulk_velocity,
            } if *axis == c => {
                let n = config.grid.cells[wall_axis];
                let mean = (1..=n)
                    .map(|j| {
                        let y = (j as f64 - 0.5) * h;
                        (y + d) * (height + d - y)
                    })
                    .sum::<f64>()
                    / n as f64;
                (bulk_velocity.at(0.0) - 0.5 * (low + high)) / mean
            }
            Driving::PressureGradient { axis, gradient } if *axis == c => {
                (force - gradient.at(0.0)) / (2.0 * nu)
            }
            _ => force / (2.0 * nu),
        };
        (low, high, a, d)
    }

    /// Initial (kinematic) pressure at `x`.
    pub fn pressure(&self, config: &FluidConfig, x: [f64; 3]) -> f64 {
        let o = config.grid.origin;
        let [a, b, c] = wavenumbers(config);
        let (px, py, pz) = (a * (x[0] - o[0]), b * (x[1] - o[1]), c * (x[2] - o[2]));
        match *self {
            InitialCondition::Rest | InitialCondition::Uniform(_) => 0.0,
            InitialCondition::TaylorGreen2d { amplitude: u } => {
                -0.25 * u * u * ((2.0 * px).cos() + (a / b).powi(2) * (2.0 * py).cos())
            }
            InitialCondition::TaylorGreen3d { amplitude: u } => {
                // Solution of the pressure Poisson equation of the initial field (for a cubic box
                // U^2/16 (cos 2x + cos 2y)(cos 2z + 2)).
                let (a2, b2, c2) = (a * a, b * b, c * c);
                u * u * a2 / 8.0
                    * ((2.0 * px).cos() / a2
                        + (2.0 * py).cos() / b2
                        + (2.0 * px).cos() * (2.0 * pz).cos() / (a2 + c2)
                        + (2.0 * py).cos() * (2.0 * pz).cos() / (b2 + c2))
            }
            InitialCondition::Poiseuille { wall_axis } => {
                // Hydrostatic balance with a body force across the channel.
                let middle = o[wall_axis] + 0.5 * config.grid.lengths()[wall_axis];
                config.body_force[wall_axis].at(0.0) * (x[wall_axis] - middle)
            }
        }
    }
}

/// Wavenumbers 2 pi / length along each axis.
fn wavenumbers(config: &FluidConfig) -> [f64; 3] {
    config.grid.lengths().map(|l| 2.0 * PI / l)
}
