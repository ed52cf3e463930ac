//! PyElastica's Timoshenko cantilever (notes: validation-data.md): N = 100, L = 3, r = 0.25, ρ = 5000,
//! E = 1e6, G = 1e4, shear coefficient 27/28, tip force 15 perpendicular, clamped at the other end;
//! damped to rest with position Verlet, the tip deflection against F L³/(3 E I) + F L/(k G A) =
//! 0.044003 + 0.023767 = 0.067770 (issue 6: within 1 %).

use silt_core::Vec3;
use silt_rods::boundary::{Boundary, EndMotion, Support};
use silt_rods::dynamics::{Inertia, Loads, RodModel, RodMotion};
use silt_rods::rod::{End, Rod, Stiffness};
use silt_rods::verlet::position_verlet_step;

#[test]
fn damped_verlet_cantilever_reaches_the_timoshenko_deflection() {
    let (segments, length, radius, density) = (100, 3.0, 0.25, 5000.0);
    let (young, shear) = (1e6, 1e4);
    let stiffness = Stiffness::circular(radius, young, shear, 27.0 / 28.0);
    let mut rod = Rod::straight(segments, length, Vec3::ZERO, Vec3::Z, Vec3::X, stiffness).unwrap();
    let clamp = Boundary::new(&mut rod, End::First, Support::Clamped, EndMotion::default());
    let mut motion = RodMotion::rest(&rod);
    let force = 15.0;
    let model = RodModel {
        loads: Loads {
            node_forces: vec![(segments, Vec3::new(-force, 0.0, 0.0))],
            ..Loads::default()
        },
        boundaries: vec![clamp],
        ..RodModel::new(Inertia::circular(&rod, radius, density))
    };
    let dt = 1e-3;
    // A numerical damper as PyElastica's: velocities decay as exp(-nu t), nu near the first bending
    // frequency (0.69 rad/s) for the quickest approach to rest.
    let nu: f64 = 1.0;
    let decay = (-nu * dt).exp();
    let mut time = 0.0;
    let mut last_tip = f64::NAN;
    while time < 200.0 {
        position_verlet_step(&mut rod, &mut motion, &model, time, dt);
        for v in motion.velocities.iter_mut() {
            *v *= decay;
        }
        for w in motion.angular_velocities.iter_mut() {
            *w *= decay;
        }
        time += dt;
        let tip = -rod.nodes[segments].x;
        if (time % 10.0) < dt {
            if (tip - last_tip).abs() < 1e-7 {
                break;
            }
            last_tip = tip;
        }
    }
    let tip = -rod.nodes[segments].x;
    let expected = 0.044003 + 0.023767;
    eprintln!(
        "tip {tip} vs {expected}: {:+.3} % at t = {time:.0}",
        100.0 * (tip / expected - 1.0)
    );
    assert!((tip / expected - 1.0).abs() < 0.01, "tip {tip}");
}
