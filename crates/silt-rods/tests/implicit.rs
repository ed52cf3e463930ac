//! Radau IIA on rods: the damped Timoshenko cantilever to rest, conservation of energy and angular
//! momentum without damping, and a stiff steel rod swinging under gravity against a fine explicit run.

use silt_core::Vec3;
use silt_rods::boundary::{Boundary, EndMotion, Support};
use silt_rods::dissipation::Damping;
use silt_rods::dynamics::{angular_momentum, kinetic_energy, Inertia, Loads, RodModel, RodMotion};
use silt_rods::implicit::ImplicitRod;
use silt_rods::potential::energy;
use silt_rods::radau::RadauOptions;
use silt_rods::rod::{End, Rod, Stiffness};
use silt_rods::verlet::position_verlet_step;

/// PyElastica's Timoshenko cantilever with Antman damping, integrated to rest by Radau IIA.
#[test]
fn damped_timoshenko_cantilever_by_radau() {
    let (segments, length, radius, density) = (100, 3.0, 0.25, 5000.0);
    let stiffness = Stiffness::circular(radius, 1e6, 1e4, 27.0 / 28.0);
    let mut rod = Rod::straight(segments, length, Vec3::ZERO, Vec3::Z, Vec3::X, stiffness).unwrap();
    let clamp = Boundary::new(&mut rod, End::First, Support::Clamped, EndMotion::default());
    let model = RodModel {
        loads: Loads {
            node_forces: vec![(segments, Vec3::new(-15.0, 0.0, 0.0))],
            ..Loads::default()
        },
        damping: Some(Damping::circular(radius, 2e5, 2e3)),
        boundaries: vec![clamp],
        ..RodModel::new(Inertia::circular(&rod, radius, density))
    };
    let mut implicit = ImplicitRod::new(
        &rod,
        &RodMotion::rest(&rod),
        model,
        RadauOptions {
            relative_tolerance: 1e-6,
            absolute_tolerance: 1e-8,
            ..RadauOptions::default()
        },
    );
    let start = std::time::Instant::now();
    let expected = 0.044003 + 0.023767;
    let mut tip = 0.0;
    for k in 1..=40 {
        implicit.advance_to(5.0 * k as f64).unwrap();
        let (rod, _) = implicit.state();
        tip = -rod.nodes[segments].x;
        eprintln!(
            "t {}: tip {tip:.6} ({:+.3} %)",
            5 * k,
            100.0 * (tip / expected - 1.0)
        );
    }
    eprintln!("{:?} in {:?}", implicit.stats(), start.elapsed());
    assert!((tip / expected - 1.0).abs() < 0.01, "tip {tip}");
}

/// A free rod, bent and spinning, without damping or loads: Radau IIA keeps the energy within its
/// tolerance and the angular momentum to round-off of the tolerance, over several vibration periods.
#[test]
fn radau_conserves_energy_and_angular_momentum() {
    let (radius, density) = (0.05, 1000.0);
    let stiffness = Stiffness::circular(radius, 1e5, 4e4, 1.0);
    let rod = Rod::straight(20, 1.0, Vec3::ZERO, Vec3::X, Vec3::Y, stiffness).unwrap();
    let inertia = Inertia::circular(&rod, radius, density);
    let mut motion = RodMotion::rest(&rod);
    for (j, v) in motion.velocities.iter_mut().enumerate() {
        let s = j as f64 / 20.0;
        *v = Vec3::new(0.0, 0.5 * (std::f64::consts::PI * s).sin(), 0.1 * s);
    }
    for w in motion.angular_velocities.iter_mut() {
        *w = Vec3::new(0.0, 0.0, 2.0);
    }
    let model = RodModel::new(inertia.clone());
    let total = |rod: &Rod, motion: &RodMotion| energy(rod) + kinetic_energy(motion, &inertia);
    let e0 = total(&rod, &motion);
    let l0 = angular_momentum(&rod, &motion, &inertia);
    let mut implicit = ImplicitRod::new(
        &rod,
        &motion,
        model,
        RadauOptions {
            relative_tolerance: 1e-8,
            absolute_tolerance: 1e-10,
            ..RadauOptions::default()
        },
    );
    // The first bending period of the free rod is about 0.6 (ω = 22.4 sqrt(EI/(ρ A L⁴)) = 10.6).
    let mut worst_energy: f64 = 0.0;
    let mut worst_momentum: f64 = 0.0;
    for k in 1..=40 {
        implicit.advance_to(0.05 * k as f64).unwrap();
        let (rod, motion) = implicit.state();
        worst_energy = worst_energy.max((total(&rod, &motion) / e0 - 1.0).abs());
        let l = angular_momentum(&rod, &motion, &inertia);
        worst_momentum = worst_momentum.max((l - l0).length() / l0.length());
    }
    eprintln!(
        "energy {worst_energy:e}, angular momentum {worst_momentum:e}, {:?}",
        implicit.stats()
    );
    assert!(worst_energy < 1e-5, "energy {worst_energy}");
    assert!(worst_momentum < 1e-6, "angular momentum {worst_momentum}");
}

/// Steel rod of the issue (E = 200 GPa, r = 1 mm, L = 1 m, ρ = 7850, Poisson 0.3; the full case
/// has 50 segments), hinged at one end, released horizontal under gravity. The explicit limit is
/// set by the shear-rotation mode of a segment, `ω = 2 sqrt(k G / ρ) / r`: dt < 2/ω = 3.4e-7 s.
fn steel_rod(segments: usize) -> (Rod, RodModel) {
    let (radius, young, poisson, density) = (1e-3, 200e9, 0.3, 7850.0);
    let stiffness = Stiffness::circular(radius, young, young / (2.0 * (1.0 + poisson)), 0.9);
    let mut rod = Rod::straight(segments, 1.0, Vec3::ZERO, Vec3::X, Vec3::Z, stiffness).unwrap();
    let hinge = Boundary::new(&mut rod, End::First, Support::Hinged, EndMotion::default());
    let model = RodModel {
        loads: Loads {
            gravity: Vec3::new(0.0, 0.0, -9.81),
            ..Loads::default()
        },
        boundaries: vec![hinge],
        ..RodModel::new(Inertia::circular(&rod, radius, density))
    };
    (rod, model)
}

/// The stiff steel rod swinging (20 segments, the first 0.05 s): Radau IIA with steps far above
/// the explicit limit against position Verlet at dt = 2.5e-7 s; the tip positions agree within 1e-3
/// of the tip's displacement.
#[test]
fn stiff_swinging_rod_matches_a_fine_explicit_run() {
    let segments = 20;
    let (rod, model) = steel_rod(segments);
    let duration: f64 = 0.05;
    let (mut explicit, mut motion) = (rod.clone(), RodMotion::rest(&rod));
    let dt = 2.5e-7;
    let steps = (duration / dt).round() as usize;
    let start = std::time::Instant::now();
    for step in 0..steps {
        position_verlet_step(&mut explicit, &mut motion, &model, step as f64 * dt, dt);
    }
    let explicit_time = start.elapsed();
    let mut implicit = ImplicitRod::new(
        &rod,
        &RodMotion::rest(&rod),
        model,
        RadauOptions {
            relative_tolerance: 1e-6,
            absolute_tolerance: 1e-8,
            ..RadauOptions::default()
        },
    );
    let start = std::time::Instant::now();
    implicit.advance_to(duration).unwrap();
    let implicit_time = start.elapsed();
    let (state, _) = implicit.state();
    let (a, b) = (state.nodes[segments], explicit.nodes[segments]);
    let displacement = (b - rod.nodes[segments]).length();
    let stats = implicit.stats();
    eprintln!(
        "tip implicit {a} explicit {b}: difference {:e} of the displacement {displacement:e}; implicit {implicit_time:?} ({:?}, mean step {:e}), explicit {explicit_time:?}",
        (a - b).length() / displacement,
        stats,
        duration / stats.accepted_steps as f64
    );
    assert!((a - b).length() < 1e-3 * displacement, "{a} vs {b}");
    assert!(duration / stats.accepted_steps as f64 > 10.0 * 3.4e-7);
}
