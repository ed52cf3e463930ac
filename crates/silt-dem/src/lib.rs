//! Dry and wet granular dynamics of polydisperse spheres with the collision model of
//! Biegert, Vowinckel & Meiburg (2017, J. Comput. Phys. 340): lubrication, adaptive-collision-time
//! normal contact, tangential friction with memory, enduring contact and RK3 sub-stepping.
//!
//! A time step reads top to bottom in [`system::DemSystem::step`]; each contact law lives in its own
//! file under [`contact`]; neighbour search is in [`neighbor`]; the pair loop is in [`forces`].

pub mod contact;
pub mod diagnostics;
pub mod distributed;
pub mod domain;
pub mod estimates;
pub mod forces;
pub mod geometry;
pub mod integrator;
pub mod material;
pub mod model;
pub mod neighbor;
pub mod particles;
pub mod system;
pub mod wall;

pub use silt_core::Vec3;
