//! Static solver (Newton with the analytic Hessian) on the known answers: the axial stretch
//! dx = F L / (E A) (within 0.1 %) and PyElastica's Timoshenko cantilever, 0.067770 (within 1 %), also
//! in the unshearable limit 0.044003 (shear stiffness raised a thousandfold).

use silt_core::Vec3;
use silt_rods::dynamics::{Inertia, Loads};
use silt_rods::rod::{End, Rod, Stiffness};
use silt_rods::statics::{solve_static, StaticOptions};

#[test]
fn axial_stretch_is_f_l_over_e_a() {
    let (radius, young) = (0.025, 1e4);
    let stiffness = Stiffness::circular(radius, young, young / 3.0, 1.0);
    let mut rod = Rod::straight(19, 1.0, Vec3::ZERO, Vec3::X, Vec3::Y, stiffness).unwrap();
    rod.clamp(End::First);
    let inertia = Inertia::circular(&rod, radius, 1000.0);
    let loads = Loads {
        node_forces: vec![(19, Vec3::new(1.0, 0.0, 0.0))],
        ..Loads::default()
    };
    let report = solve_static(&mut rod, &inertia, &loads, &[0], StaticOptions::default()).unwrap();
    let stretch = rod.nodes[19].x - 1.0;
    let expected = 1.0 / (young * std::f64::consts::PI * radius * radius);
    eprintln!("stretch {stretch} vs {expected}, {report:?}");
    assert!((stretch / expected - 1.0).abs() < 1e-3);
}

fn cantilever(shear_factor: f64) -> (f64, silt_rods::statics::StaticReport) {
    let (segments, length, radius) = (100, 3.0, 0.25);
    let stiffness = Stiffness::circular(radius, 1e6, 1e4 * shear_factor, 27.0 / 28.0);
    let mut rod = Rod::straight(segments, length, Vec3::ZERO, Vec3::Z, Vec3::X, stiffness).unwrap();
    rod.clamp(End::First);
    let inertia = Inertia::circular(&rod, radius, 5000.0);
    let loads = Loads {
        node_forces: vec![(segments, Vec3::new(-15.0, 0.0, 0.0))],
        ..Loads::default()
    };
    let report = solve_static(&mut rod, &inertia, &loads, &[0], StaticOptions::default()).unwrap();
    (-rod.nodes[segments].x, report)
}

#[test]
fn timoshenko_cantilever_by_the_static_solver() {
    let (tip, report) = cantilever(1.0);
    let expected = 0.044003 + 0.023767;
    eprintln!(
        "tip {tip} vs {expected}: {:+.3} %, {report:?}",
        100.0 * (tip / expected - 1.0)
    );
    assert!((tip / expected - 1.0).abs() < 0.01);
    assert!(report.newton_steps <= 10, "{report:?}");
    let (tip, report) = cantilever(1000.0);
    let expected = 0.044003;
    eprintln!(
        "unshearable: tip {tip} vs {expected}: {:+.3} %, {report:?}",
        100.0 * (tip / expected - 1.0)
    );
    assert!((tip / expected - 1.0).abs() < 0.01);
}
