//! Flexible fibers and active filaments as chains of beads at low Reynolds number (Delmotte, Climent &
//! Plouraboué 2015, the seed `002_*.txt`; clean equations in `shared/notes/bead-model.md`).
//!
//! Each bead `n` has a centre `Y_n`, a velocity `V_n` and an angular velocity `W_n`; forces `F_n` and
//! torques `T_n` act on it. The beads' velocities follow from the forces through a mobility
//! ([`mobility`]): free drain (no hydrodynamic interaction) or the Rotne–Prager–Yamakawa tensors with
//! the overlap correction of Wajnryb et al. (2013) ([`rpy`]).

pub mod chain;
pub mod constraints;
pub mod dynamics;
pub mod elasticity;
pub mod ewald;
pub mod flows;
pub mod mobility;
pub mod model;
pub mod multipliers;
mod real_space;
pub mod rpy;
pub mod spectral;
mod wave_grid;
pub mod window;
