//! The quick versions of the fiber validation cases, from their scene files and reference.toml (full
//! versions: `silt validate fiber-cantilever`, `jeffery-orbit`, `active-filament`, `sedimenting-fiber`,
//! `fiber-viscosity`).

mod common;

/// The quick version of `validation/fiber-cantilever` from its scenes `gears.toml` (10 free beads) and
/// `joint.toml` (7 free beads, gap 0.1 a, 0.25 bending times per step): tip deflection against
/// q L⁴ / (8 K_b) and the link drift of the seed's scheme, within its reference.toml.
#[test]
fn fiber_cantilever_quick() {
    let report = common::quick_case_passes("fiber-cantilever");
    assert_eq!(report.tables[0].1.rows.len(), 2);
}

/// The quick version of `validation/jeffery-orbit` from its scene `chain.toml`: the tumbling periods of
/// rigid chains of 3, 5 and 8 beads and of two elastic ones against Jeffery's with the rigid chain's
/// own aspect ratio, and the rigid chains' and the stiff elastic 5-bead chain's against the same beads
/// as one rigid body (the projection of the mobility: odd chains were up to 8 % slow before issue 21,
/// rigid ones for the joints, elastic ones for the alternating spin mode), within its reference.toml.
#[test]
fn jeffery_orbit_quick() {
    let report = common::quick_case_passes("jeffery-orbit");
    // Rigid chains of 3, 5 and 8 beads (odd and even), a stiff elastic 5-bead chain and a softer 8.
    assert_eq!(report.tables[0].1.rows.len(), 5);
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

/// The quick version of `validation/sedimenting-fiber` from its scene `fiber.toml` (12 beads, B = 10 to
/// 10^4): the deflection grows with B and saturates, the stiff fiber settles like the rigid one, the
/// bent one faster, and the links drift little, within its reference.toml.
#[test]
fn sedimenting_fiber_quick() {
    let report = common::quick_case_passes("sedimenting-fiber");
    assert_eq!(report.tables[0].1.rows.len(), 4);
}

/// The quick version of `validation/fiber-viscosity` from its scene `fiber.toml` (l/a = 20 to 160): the
/// intrinsic viscosity of isotropic rigid fibers follows slender-body theory's form with its offset
/// settling, and six fibers in a sheared periodic box give the unbounded value, within its
/// reference.toml.
#[test]
fn fiber_viscosity_quick() {
    let report = common::quick_case_passes("fiber-viscosity");
    assert_eq!(report.tables[0].1.rows.len(), 4);
}
