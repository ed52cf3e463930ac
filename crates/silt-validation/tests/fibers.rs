//! Scaled-down fiber validations (full versions: `silt validate fiber-cantilever`, `jeffery-orbit`,
//! `active-filament`, `sedimenting-fiber`; sources and tolerances in validation/<case>/).

mod common;

use silt_validation::sedimenting_fiber::{self, SedimentingCase};

/// The quick version of `validation/fiber-cantilever` from its scenes `gears.toml` (10 free beads) and
/// `joint.toml` (7 free beads, gap 0.1 a, 0.25 bending times per step): tip deflection against
/// q L⁴ / (8 K_b) and the link drift of the seed's scheme, within its reference.toml.
#[test]
fn fiber_cantilever_quick() {
    let report = common::quick_case_passes("fiber-cantilever");
    assert_eq!(report.tables[0].1.rows.len(), 2);
}

/// The quick version of `validation/jeffery-orbit` from its scene `chain.toml`: the tumbling period of
/// a rigid chain of 8 beads and of a stiff elastic one against Jeffery's with the rigid chain's own
/// aspect ratio, within its reference.toml.
#[test]
fn jeffery_orbit_quick() {
    let report = common::quick_case_passes("jeffery-orbit");
    assert_eq!(report.tables[0].1.rows.len(), 2);
}

/// The quick version of `validation/active-filament` from its scene `swimmer.toml` (16 beads, two
/// periods): the filament swims against its wave, the reversed wave mirrors it, free drain does not
/// swim, the link drift is second order in dt and restoring the links leaves the speed, within its
/// reference.toml.
#[test]
fn active_filament_quick() {
    let report = common::quick_case_passes("active-filament");
    assert_eq!(report.tables[1].1.rows.len(), 5);
}

#[test]
fn sedimenting_fiber_bends_more_with_b() {
    let results: Vec<_> = [10.0, 100.0, 1000.0, 10000.0]
        .into_iter()
        .map(|b| sedimenting_fiber::run(SedimentingCase::standard(12, b)).unwrap())
        .collect();
    for r in &results {
        eprintln!(
            "B {}: deflection {:.5} L, speed {:.5} (rigid {:.5}), {:.1} T, link error {:.1e}",
            r.elastogravitational, r.deflection, r.speed, r.rigid_speed, r.time, r.link_error
        );
        assert!(r.link_error / r.time < 1e-6, "drift per T");
    }
    let d: Vec<f64> = results.iter().map(|r| r.deflection).collect();
    assert!(d.windows(2).all(|w| w[1] > w[0]), "{d:?}");
    assert!(d[3] - d[2] < 0.1 * (d[2] - d[0]), "saturates: {d:?}");
    assert!((results[0].speed / results[0].rigid_speed - 1.0).abs() < 0.01);
    assert!(results[3].speed > 1.2 * results[3].rigid_speed);
}
