//! The fiber benchmark runs in its quick form (figures in docs/performance.md come from
//! `silt bench fibers`).

use silt_validation::bench_fibers::{run, step_scene, FiberBenchOptions};

#[test]
fn quick_benchmark_runs() {
    let report = run(&FiberBenchOptions::quick(), &mut |_| {}).unwrap();
    assert_eq!(report.products.len(), 2);
    assert_eq!(report.steps.len(), 2);
    assert!(report.products.iter().all(|r| r.silt_ms > 0.0));
    assert!(report
        .steps
        .iter()
        .all(|r| r.step_ms > 0.0 && r.beads == 100));
    assert!(report.table().contains("constrained step"));
    // The full benchmark's scenes are valid.
    for fibers in [50, 200] {
        let text = step_scene(fibers, 20);
        silt_io::scenes::fibers::FiberScene::parse(&text, std::path::Path::new("bench.toml"))
            .unwrap();
    }
}
