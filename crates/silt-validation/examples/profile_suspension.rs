//! Steps the 500-sphere suspension of `silt bench ibm` for profiling (`perf record`):
//! `cargo run --release -p silt-validation --example profile_suspension -- [steps] [threads] [passes]`
//! (passes: forcing passes per stage, 3 as in the benchmark).

use silt_validation::bench_ibm::{suspension, IbmBenchOptions};
use std::time::Instant;

fn main() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let steps: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(5);
    let threads: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(1);
    let passes: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(3);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| e.to_string())?;
    pool.install(|| {
        let mut problem = suspension(&IbmBenchOptions::default())?;
        problem.coupled.forcing.iterations = passes;
        let clock = Instant::now();
        for _ in 0..steps {
            problem
                .fluid
                .step_with(&mut problem.coupled)
                .map_err(|e| e.to_string())?;
        }
        let total = clock.elapsed().as_secs_f64() / steps as f64;
        let forcing = problem.coupled.forcing_seconds / steps as f64;
        let particles = problem.coupled.particle_seconds / steps as f64;
        println!(
            "{steps} steps, {threads} thread(s), {passes} forcing passes: {total:.4} s/step, fluid {:.4}, forcing {forcing:.4}, particles {particles:.4}",
            total - forcing - particles
        );
        let forcing = &problem.coupled.forcing;
        println!(
            "forcing: placing markers {:.4}, passes {:.4}, inner-fluid integrals {:.4} s/step",
            forcing.placing_seconds / steps as f64,
            forcing.passes_seconds / steps as f64,
            problem.coupled.inner_seconds / steps as f64
        );
        Ok(())
    })
}
