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

/// The quick version of `validation/lid-driven-cavity` from its scene `cavity.toml`: Re = 100 on 32^2,
/// centreline velocities against Ghia et al. (1982) and the flow steady, within its reference.toml.
#[test]
fn lid_driven_cavity_quick() {
    let report = common::quick_case_passes("lid-driven-cavity");
    assert_eq!(report.tables[0].1.rows.len(), 1);
}
