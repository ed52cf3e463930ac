//! Scaled-down version of `validation/normal-collisions` (tolerances in its README): restitution within
//! 0.5% of the exact contact ODE and contact duration within 5% of T_c with the seed's integrator
//! (T_c = 10 dt, {8, 2, 5} sub-steps); at T_c = 10 dt without sub-steps, forward Euler/Crank–Nicolson
//! overshoots by more than 10% while the predictor–corrector stays within 0.5% (seed sec. 4.2).

use silt_dem::integrator::Integrator;
use silt_validation::normal_collision::{run, Collision, Partner};

pub const NO_SUBSTEPS: Integrator = Integrator::PredictorCorrector {
    substeps: [1, 1, 1],
};

#[test]
fn rebound_matches_the_exact_ode_for_walls_and_unequal_spheres() {
    for partner in [Partner::Wall, Partner::Sphere(1.0), Partner::Sphere(0.6)] {
        for e_dry in [0.5, 0.7, 0.9, 0.97] {
            let r = run(&Collision {
                e_dry,
                partner,
                steps_per_contact: 10.0,
                integrator: Integrator::SEED,
            });
            println!(
                "{partner:?} e = {e_dry}: e_sim = {:.5}, e_ode = {:.5}, error {:+.3}%, duration error {:+.2}%",
                r.restitution,
                r.exact.restitution,
                100.0 * r.restitution_error(),
                100.0 * r.duration_error()
            );
            assert!(
                r.restitution_error().abs() < 0.005,
                "{partner:?} e = {e_dry}: {}",
                r.restitution_error()
            );
            assert!(
                r.duration_error().abs() < 0.05,
                "{partner:?} e = {e_dry}: {}",
                r.duration_error()
            );
        }
    }
}

#[test]
fn predictor_corrector_without_substeps_beats_forward_euler() {
    for e_dry in [0.9, 0.97] {
        let pc = run(&Collision {
            e_dry,
            partner: Partner::Wall,
            steps_per_contact: 10.0,
            integrator: NO_SUBSTEPS,
        });
        let euler = Integrator::EulerCrankNicolson {
            substeps: [1, 1, 1],
        };
        let fe = run(&Collision {
            e_dry,
            partner: Partner::Wall,
            steps_per_contact: 10.0,
            integrator: euler,
        });
        println!(
            "e = {e_dry}: PC {:+.3}%, Euler/CN {:+.2}%",
            100.0 * pc.restitution_error(),
            100.0 * fe.restitution_error()
        );
        assert!(
            pc.restitution_error().abs() < 0.005,
            "{}",
            pc.restitution_error()
        );
        assert!(fe.restitution_error() > 0.10, "{}", fe.restitution_error());
    }
}
