//! `silt bench dem` scaled down (thread-count determinism of a settling bed) and at full size (ignored:
//! `cargo test --release -p silt-validation --test bench_dem -- --ignored --nocapture`).

use silt_dem::diagnostics::energies;
use silt_dem::system::DemSystem;
use silt_validation::bench_dem::{self, advance, bed_top, lammps_bed, pool, BenchOptions};

/// Positions, velocities and angular velocities as raw bits.
fn state_bits(system: &DemSystem) -> Vec<u64> {
    let p = &system.particles;
    p.position
        .iter()
        .chain(&p.velocity)
        .chain(&p.angular_velocity)
        .flat_map(|v| v.to_array())
        .map(f64::to_bits)
        .collect()
}

#[test]
fn settling_bed_is_identical_on_one_and_two_threads_and_comes_to_rest() {
    let start = lammps_bed([6, 6, 6]);
    let (initial_top, _) = bed_top(&start);
    let mut beds = [start.clone(), start];
    for (bed, threads) in beds.iter_mut().zip([1, 2]) {
        pool(threads).install(|| advance(bed, 2_000));
    }
    assert_eq!(state_bits(&beds[0]), state_bits(&beds[1]));
    assert!(beds[0].neighbors.rebuilds > 1);

    // 2,000 steps (0.4 time units) are a free fall of only 0.8: let both beds settle for as long as the
    // benchmark does (20,000 steps) and compare again.
    for (bed, threads) in beds.iter_mut().zip([1, 2]) {
        pool(threads).install(|| advance(bed, 18_000));
    }
    assert_eq!(state_bits(&beds[0]), state_bits(&beds[1]));
    let bed = &beds[0];
    let (top, p99) = bed_top(bed);
    let p = &bed.particles;
    let weight_scale: f64 = (0..p.len())
        .map(|i| p.mass[i] * bench_dem::GRAVITY * 2.0 * p.radius[i])
        .sum();
    let kinetic = energies(bed).kinetic();
    println!(
        "initial top {initial_top:.3}, max centre z {top:.3}, p99(z+r) {p99:.3}, kinetic / (m g d) {:.2e}",
        kinetic / weight_scale
    );
    assert!(top < initial_top - 0.5, "the bed did not settle: {top}");
    assert!(kinetic < 1e-3 * weight_scale, "the bed is not at rest");
}

fn option<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The full benchmark; steps can be shortened with BENCH_SETTLE, BENCH_TIMED, BENCH_SEED for profiling.
#[test]
#[ignore]
fn full_benchmark() {
    let defaults = BenchOptions::default();
    let options = BenchOptions {
        settle_steps: option("BENCH_SETTLE", defaults.settle_steps),
        timed_steps: option("BENCH_TIMED", defaults.timed_steps),
        seed_model_steps: option("BENCH_SEED", defaults.seed_model_steps),
        ..defaults
    };
    let report = bench_dem::run(&options, &mut |line| println!("{line}"));
    println!(
        "{} particles on {}; settling took {:.1} s",
        report.particles, report.machine, report.settle_seconds
    );
    println!("{}", report.table());
}
