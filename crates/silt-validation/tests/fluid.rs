//! Quick versions of the fluid validation cases (references and tolerances: validation/taylor-green and
//! validation/channel-flows).

use silt_fluid::Viscous;
use silt_validation::channel;

mod common;

/// The quick version of `validation/taylor-green` from its scenes `vortex-2d.toml` and
/// `vortex-3d.toml`: second-order convergence in 2D (both viscous schemes) and 3D, divergence-free to
/// round-off, and the 2D kinetic energy decaying as exp(-4 nu t), within its reference.toml.
#[test]
fn taylor_green_quick() {
    let report = common::quick_case_passes("taylor-green");
    // 2D: three grids for each viscous scheme; 3D: three grids, explicit.
    assert_eq!(report.tables[0].1.rows.len(), 9);
}

#[test]
fn steady_poiseuille_is_the_discrete_parabola_and_second_order() {
    let coarse = channel::steady_poiseuille(16, Viscous::CrankNicolson, 0.01, 3.0).unwrap();
    let fine = channel::steady_poiseuille(32, Viscous::CrankNicolson, 0.01, 3.0).unwrap();
    for r in [&coarse, &fine] {
        assert!(
            r.discrete_error < 1e-10,
            "{} cells: {:e}",
            r.cells,
            r.discrete_error
        );
    }
    let order = (coarse.analytic_error / fine.analytic_error).log2();
    assert!((1.9..=2.1).contains(&order), "order {order}");
}

#[test]
fn steady_couette_is_exact() {
    for viscous in [Viscous::CrankNicolson, Viscous::Explicit] {
        let dt = if viscous == Viscous::Explicit {
            4e-4
        } else {
            0.01
        };
        let r = channel::steady_couette(16, viscous, dt, 3.0).unwrap();
        assert!(
            r.discrete_error < 1e-10,
            "{viscous:?}: {:e}",
            r.discrete_error
        );
    }
}

#[test]
fn poiseuille_startup_matches_the_series_solution() {
    for viscous in [Viscous::CrankNicolson, Viscous::Explicit] {
        let dt = if viscous == Viscous::Explicit {
            1e-4
        } else {
            1e-3
        };
        let (error, _) = channel::startup(32, viscous, dt).unwrap();
        assert!(error < 5e-3, "{viscous:?}: {error:e}");
    }
}

#[test]
fn flow_rate_is_held_and_its_gradient_balances_the_walls() {
    for viscous in [Viscous::CrankNicolson, Viscous::Explicit] {
        let (dt, steps) = if viscous == Viscous::Explicit {
            (2e-4, 15_000)
        } else {
            (0.01, 300)
        };
        let (deviation, gradient) = channel::flow_rate(16, viscous, dt, steps).unwrap();
        assert!(
            deviation < 1e-12,
            "{viscous:?}: bulk velocity off by {deviation:e}"
        );
        // Steady discrete balance: the bulk velocity of the discrete parabola for dp/dx = -G.
        let expected = -1.0 / channel::discrete_bulk_velocity_per_gradient(16, 1.0);
        assert!(
            (gradient / expected - 1.0).abs() < 1e-9,
            "{viscous:?}: gradient {gradient}, expected {expected}"
        );
    }
}

#[test]
fn lid_driven_cavity_at_re_100_matches_ghia() {
    let r = silt_validation::cavity::run(32, 100, 20.0).unwrap();
    assert!(r.u_error < 0.02, "u off by {}", r.u_error);
    assert!(r.v_error < 0.02, "v off by {}", r.v_error);
    assert!(r.last_change < 1e-4, "not steady: {}", r.last_change);
}
