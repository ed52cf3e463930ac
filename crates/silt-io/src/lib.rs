//! silt-io
pub mod atomic;
pub mod csv_series;
pub mod pvd;
pub mod vtk;
