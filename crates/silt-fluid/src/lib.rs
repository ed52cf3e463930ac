//! Incompressible Navier–Stokes solver on a uniform staggered (MAC) grid, as in Biegert, Vowinckel &
//! Meiburg (2017, sec. 2): second-order central differences, low-storage RK3 (Rai & Moin) for convection,
//! Crank–Nicolson (or explicit) viscous terms, a fractional-step projection and a direct FFT-based
//! pressure solver.

pub mod boundary;
pub mod decomposition;
pub(crate) mod dense_transform;
pub mod diagnostics;
mod figures;
pub mod grid;
pub mod initial;
pub mod jacobi;
pub mod model;
pub mod momentum;
pub mod pencil_solver;
pub mod poisson;
pub mod projection;
pub mod scales;
pub mod slab_solver;
pub use silt_core::signal;
pub mod solver;
#[cfg(test)]
pub(crate) mod test_support;

pub use boundary::{Boundaries, Boundary};
pub use grid::{Field, Grid, Location, Unknowns};
pub use signal::Signal;
pub use solver::{
    Driving, FluidConfig, FluidError, FluidSolver, FluidState, HelmholtzMethod, StageForcing,
    TimeStep, Viscous,
};
