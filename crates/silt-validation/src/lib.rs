//! Validation cases of Silt. Each case runs scaled down inside the test suite and at full size through
//! `silt validate`, which also writes plots and tables. Sources, reference numbers and tolerances are kept
//! beside each case in `validation/<case>/`.

pub mod bench_dem;
pub mod bench_fibers;
pub mod bench_fluid;
pub mod bench_ibm;
pub mod bench_mpi;
pub mod bench_rods;
pub mod bench_sheared_bed;
pub mod case;
pub mod cavity;
pub mod channel;
pub mod couette_sphere;
pub mod elastica;
pub mod fiber_cantilever;
pub mod fiber_viscosity;
pub mod gondret;
pub mod jeffery_orbit;
pub mod normal_collision;
pub mod oblique_collision;
pub mod report;
pub mod rod_cases;
pub mod sedimenting_fiber;
pub mod settled_bed;
pub mod setup;
pub mod sheared_bed;
pub mod stokes_array;
pub mod swimmer;
pub mod taylor_green;
pub mod ten_cate;
pub mod wall_collisions;
