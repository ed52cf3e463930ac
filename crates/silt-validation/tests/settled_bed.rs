//! Scaled-down `validation/settled-bed` (criteria and derivations in its README and reference.toml): a
//! dry polydisperse bed of 400 spheres poured onto a rough floor comes to rest (kinetic energy down by
//! 10^6 from its peak), its largest overlap respects the enduring-contact bound, and its solid fraction
//! lies in 0.55-0.64. The full case (2,000 spheres) is `silt validate settled-bed`.

mod common;

#[test]
fn quick_bed_settles_within_the_overlap_bound_at_random_packing_fraction() {
    common::quick_case_passes("settled-bed");
}
