//! Quick versions of the fluid validation cases (references and tolerances: validation/taylor-green and
//! validation/channel-flows).

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

/// The quick version of `validation/channel-flows` from its scenes `poiseuille.toml`, `couette.toml`
/// and `flow-rate.toml`: the steady profiles (exact on the grid, second order against the analytic
/// parabola), the start-up against the series solution and the held flow rate with its balancing
/// gradient, for both viscous schemes, within its reference.toml.
#[test]
fn channel_flows_quick() {
    let report = common::quick_case_passes("channel-flows");
    // Poiseuille on two grids (two rows each), Couette, start-up and flow rate for two schemes.
    assert_eq!(report.tables[0].1.rows.len(), 10);
}

#[test]
fn lid_driven_cavity_at_re_100_matches_ghia() {
    let r = silt_validation::cavity::run(32, 100, 20.0).unwrap();
    assert!(r.u_error < 0.02, "u off by {}", r.u_error);
    assert!(r.v_error < 0.02, "v off by {}", r.v_error);
    assert!(r.last_change < 1e-4, "not steady: {}", r.last_change);
}
