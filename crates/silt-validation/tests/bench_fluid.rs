//! The fluid benchmark: a smoke run at 32^3 (the figures themselves are not tested), and the full
//! benchmark as an ignored test that prints its table.

use silt_validation::bench_fluid::{run, FluidBenchOptions};

#[test]
fn quick_benchmark_runs_and_reports_every_configuration() {
    let report = run(&FluidBenchOptions::quick(), &mut |_| {}).unwrap();
    assert_eq!(report.rows.len(), 8);
    for row in &report.rows {
        assert!(row.seconds_per_step > 0.0 && row.seconds_per_step.is_finite());
        assert!(
            row.doubles_per_cell > 10.0 && row.doubles_per_cell < 60.0,
            "{row:?}"
        );
    }
    assert!(report.table().contains("Taylor–Green"));
}

#[test]
#[ignore = "benchmark: run with --release -- --ignored --nocapture"]
fn full_benchmark() {
    let report = run(&FluidBenchOptions::default(), &mut |m| eprintln!("{m}")).unwrap();
    println!("{}", report.table());
}
