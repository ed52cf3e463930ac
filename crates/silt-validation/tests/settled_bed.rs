//! Scaled-down `validation/settled-bed` (criteria and derivations in its README): a dry polydisperse bed poured
//! onto a floor comes to rest (kinetic energy down by 10^6 from its peak), its largest overlap respects the
//! enduring-contact bound, and its solid fraction lies in 0.55-0.64.

use silt_validation::settled_bed::{run, BedOptions, BedResult};

fn check(r: &BedResult) {
    assert!(
        r.at_rest(),
        "not at rest: kinetic energy ratio {:.3e}",
        r.kinetic_energy_ratio()
    );
    assert!(
        r.respects_overlap_bound(),
        "overlap / R {:.3e} above the bound {:.3e}",
        r.max_overlap,
        r.overlap_limit
    );
    assert!(
        r.max_contact_force <= r.estimated_max_force,
        "largest contact force {:.2} m g above the estimate {:.2} m g the bound rests on",
        r.max_contact_force,
        r.estimated_max_force
    );
    assert!(
        r.solid_fraction_in_range(),
        "solid fraction {:.4}",
        r.solid_fraction
    );
}

#[test]
fn quick_bed_settles_within_the_overlap_bound_at_random_packing_fraction() {
    let r = run(&BedOptions::quick(), &mut |line| println!("{line}"));
    check(&r);
}

/// The full case; prints the figures quoted in the README:
/// `cargo test --release -p silt-validation --test settled_bed -- --ignored --nocapture`.
#[test]
#[ignore = "full size, a few minutes in release"]
fn full_bed_settles_within_the_overlap_bound_at_random_packing_fraction() {
    let r = run(&BedOptions::full(), &mut |line| println!("{line}"));
    check(&r);
}
