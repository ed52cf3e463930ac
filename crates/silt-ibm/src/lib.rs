//! Immersed boundary coupling of resolved spheres and the fluid (seed 000 sec. 2; Uhlmann 2005; Kempe &
//! Froehlich 2012): Lagrangian markers on each sphere surface ([`markers`]), the regularised 3-point delta
//! of Roma, Peskin & Berger 1999 ([`delta`]), interpolation and spreading between the staggered grid and
//! the markers ([`transfer`]), and multi-direct forcing inside each Runge–Kutta stage ([`forcing`]).

pub mod bed;
pub mod coupling;
pub mod delta;
pub mod forcing;
pub mod markers;
pub mod model;
pub mod profiles;
pub mod protocol;
pub mod rank_block;
pub mod transfer;
pub mod volume_fraction;

pub use glam::DVec3 as Vec3;
