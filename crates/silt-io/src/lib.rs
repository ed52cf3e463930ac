//! Input and output of Silt: scene files, initial placement of particles, VTK/ParaView writers, CSV
//! series and checkpoints. Every file is written whole or not at all.

pub mod atomic;
pub mod coupled_scene;
pub mod csv_series;
pub mod derived;
pub mod fiber_scene;
pub mod fluid_scene;
pub mod placement;
pub mod pvd;
pub mod rod_scene;
pub mod run;
pub mod scene;
pub mod scenes;
pub mod vtk;
