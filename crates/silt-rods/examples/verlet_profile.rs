use silt_core::Vec3;
use silt_rods::boundary::{Boundary, EndMotion, Support};
use silt_rods::dynamics::{Inertia, Loads, RodModel, RodMotion};
use silt_rods::rod::{End, Rod, Stiffness};
use silt_rods::verlet::Verlet;

fn main() {
    let steps: usize = std::env::args()
        .nth(1)
        .map(|a| a.parse().unwrap())
        .unwrap_or(200_000);
    let (segments, length, radius, density) = (100, 3.0, 0.25, 5000.0);
    let stiffness = Stiffness::circular(radius, 1e6, 1e4, 27.0 / 28.0);
    let mut rod = Rod::straight(segments, length, Vec3::ZERO, Vec3::Z, Vec3::X, stiffness).unwrap();
    let clamp = Boundary::new(&mut rod, End::First, Support::Clamped, EndMotion::default());
    let model = RodModel {
        loads: Loads {
            node_forces: vec![(segments, Vec3::new(-15.0, 0.0, 0.0))],
            ..Loads::default()
        },
        boundaries: vec![clamp],
        drag: 1.0,
        ..RodModel::new(Inertia::circular(&rod, radius, density))
    };
    let mut motion = RodMotion::rest(&rod);
    let dt = 0.07 * length / segments as f64;
    let mut verlet = Verlet::default();
    let start = std::time::Instant::now();
    verlet.advance(&mut rod, &mut motion, &model, 0.0, dt, steps);
    let el = start.elapsed();
    println!(
        "{:.3} us/step, tip {}",
        el.as_secs_f64() / steps as f64 * 1e6,
        rod.nodes[segments]
    );
}
