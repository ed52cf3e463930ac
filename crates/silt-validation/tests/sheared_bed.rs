//! Scaled-down `validation/sheared-bed` (sources, criteria and set-up in its README and reference.toml):
//! the A10 scene on a small box at D/h = 6 runs the seed's protocol through the user's run path (dry
//! settling, mobilisation, the switch to q_f, the averages), holds the eq. 32 flow rate and measures a
//! particle flux. The comparison with the experiments is `silt validate sheared-bed` (hours).

mod common;

#[test]
fn sheared_bed_quick() {
    common::quick_case_passes("sheared-bed");
}
