use silt_core::Vec3;
use silt_rods::boundary::{Boundary, EndMotion, Support};
use silt_rods::dynamics::{Inertia, Loads, RodModel, RodMotion};
use silt_rods::rod::{End, Rod, Stiffness};
use silt_rods::verlet::{explicit_step_limit, Verlet};

fn main() {
    for case in 0..2 {
        let (segments, length, radius, density, e, g, k) = if case == 0 {
            (100, 3.0, 0.25, 5000.0, 1e6, 1e4, 27.0 / 28.0)
        } else {
            (50, 1.0, 1e-3, 7850.0, 200e9, 200e9 / 2.6, 0.9)
        };
        let stiffness = Stiffness::circular(radius, e, g, k);
        let mut rod =
            Rod::straight(segments, length, Vec3::ZERO, Vec3::Z, Vec3::X, stiffness).unwrap();
        let clamp = Boundary::new(&mut rod, End::First, Support::Clamped, EndMotion::default());
        let model = RodModel {
            loads: if case == 0 {
                Loads {
                    node_forces: vec![(segments, Vec3::new(-15.0, 0.0, 0.0))],
                    ..Loads::default()
                }
            } else {
                Loads {
                    gravity: Vec3::new(-9.81, 0.0, 0.0),
                    ..Loads::default()
                }
            },
            boundaries: vec![clamp],
            ..RodModel::new(Inertia::circular(&rod, radius, density))
        };
        let limit = explicit_step_limit(&rod, &model);
        println!("case {case}: limit {:e} ({})", limit.step, limit.mode);
        for factor in [0.8, 0.95, 1.0, 1.05, 1.1, 1.2, 1.4] {
            let mut r = rod.clone();
            let mut m = RodMotion::rest(&r);
            let dt = factor * limit.step;
            let mut v = Verlet::default();
            let steps = 20000;
            v.advance(&mut r, &mut m, &model, 0.0, dt, steps);
            let tip = r.nodes[segments];
            println!(
                "  {factor}: tip {tip} finite {}",
                tip.is_finite() && tip.length() < 10.0 * length
            );
        }
    }
}
