//! The quick versions of the rod validation cases, from their scene files and reference.toml (full
//! versions: `silt validate rod-statics`, `rod-cantilever-dynamics`, `rod-conservation`,
//! `rod-steel-pendulum`, `rod-helical-buckling`, `rod-elastica`).

mod common;

/// `validation/rod-statics` (`stretch.toml`, `timoshenko.toml`): axial stretch by the static solver
/// and a damped Radau run, the Timoshenko tip and its unshearable limit, second order in h.
#[test]
fn rod_statics_quick() {
    let report = common::quick_case_passes("rod-statics");
    assert_eq!(report.tables[1].1.rows.len(), 3);
}

/// `validation/rod-elastica` (`elastica.toml`): the large-deflection cantilever against the elastica
/// for stiff and soft rods, from one load increment, and second order in h.
#[test]
fn rod_elastica_quick() {
    let report = common::quick_case_passes("rod-elastica");
    assert_eq!(report.tables[0].1.rows.len(), 6);
}

/// `validation/rod-cantilever-dynamics` (`cantilever.toml`): Radau IIA and position Verlet at
/// PyElastica's step settle on the Timoshenko tip.
#[test]
fn rod_cantilever_dynamics_quick() {
    let report = common::quick_case_passes("rod-cantilever-dynamics");
    assert_eq!(report.tables[0].1.rows.len(), 2);
}

/// `validation/rod-conservation` (`free-rod.toml`): a free spinning rod keeps its energy and angular
/// momentum under Radau IIA, and a bounded energy band under position Verlet.
#[test]
fn rod_conservation_quick() {
    common::quick_case_passes("rod-conservation");
}

/// `validation/rod-steel-pendulum` (`pendulum.toml`, 20 segments for 0.05 s): Radau IIA far above
/// the explicit limit agrees with a fine Verlet run.
#[test]
fn rod_steel_pendulum_quick() {
    common::quick_case_passes("rod-steel-pendulum");
}

/// `validation/rod-helical-buckling` (`buckling.toml` and `static.toml`, 100 segments, 10 turns,
/// slack 10): the envelope of the localized helix against the analytic one, by a damped Radau run and
/// by the static solver along the load path, and the analytic helix of PyElastica's case against its
/// quoted loads.
#[test]
fn rod_helical_buckling_quick() {
    let report = common::quick_case_passes("rod-helical-buckling");
    assert_eq!(report.tables[0].1.rows.len(), 2);
}
