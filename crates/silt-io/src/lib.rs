//! Input and output of Silt: scene files of every kind ([`scenes`]), initial placement of particles,
//! the run loop of every model ([`run`]), VTK/ParaView writers, CSV series and checkpoints. Every file
//! is written whole or not at all.

pub mod atomic;
pub mod csv_series;
pub mod placement;
pub mod pvd;
pub mod run;
pub mod scenes;
pub mod vtk;
