//! The immersed-boundary benchmark runs in its quick form (figures in docs/performance.md come from
//! `silt bench ibm`).

use silt_validation::bench_ibm::{run, IbmBenchOptions};

#[test]
fn quick_benchmark_runs_and_splits_every_step() {
    let report = run(&IbmBenchOptions::quick(), &mut |_| {}).unwrap();
    assert_eq!(report.rows.len(), 4);
    for row in &report.rows {
        assert!(row.seconds_per_step > 0.0 && row.markers > 0, "{row:?}");
        assert!(
            row.fluid > 0.0 && row.forcing > 0.0 && row.particles > 0.0,
            "{row:?}"
        );
    }
    assert!(report.table().contains("ten Cate E3"));
}

/// The sheared-bed benchmark in its quick form: every part of the step is timed, beside the fluid alone.
#[test]
fn sheared_bed_benchmark_splits_the_step() {
    use silt_validation::bench_sheared_bed::{run, BedBenchOptions};
    let report = run(&BedBenchOptions::quick(), &mut |_| {}).unwrap();
    assert_eq!(report.rows.len(), 2);
    for row in &report.rows {
        assert!(
            row.seconds_per_step > 0.0 && row.fluid_alone > 0.0,
            "{row:?}"
        );
        assert!(
            row.forcing > 0.0 && row.particles > 0.0 && row.weights > 0.0 && row.fluid > 0.0,
            "{row:?}"
        );
    }
    assert!(report.table().contains("fluid alone"));
}
