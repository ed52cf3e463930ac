//! The quick version of `validation/normal-collisions`, from its scene files `wall.toml` and
//! `spheres.toml` with the tolerances of its `reference.toml`: restitution against the exact contact
//! ODE and contact duration against T_c with the seed's integrator, for a wall and equal and unequal
//! spheres; at T_c = 10 dt without sub-steps, forward Euler/Crank–Nicolson overshoots while the
//! predictor–corrector does not (seed sec. 4.2).

mod common;

#[test]
fn normal_collisions_quick() {
    let report = common::quick_case_passes("normal-collisions");
    // Three partners times four judged restitutions, and the scheme comparison.
    assert_eq!(report.tables[0].1.rows.len(), 12);
    assert_eq!(report.tables[1].1.rows.len(), 2);
}
