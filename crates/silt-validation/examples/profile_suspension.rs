//! Steps the 500-sphere suspension of `silt bench ibm` for profiling (`perf record`):
//! `cargo run --release -p silt-validation --example profile_suspension -- [steps] [threads]`.

use silt_validation::bench_ibm::{suspension, IbmBenchOptions};
use std::time::Instant;

fn main() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let steps: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(5);
    let threads: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(1);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| e.to_string())?;
    pool.install(|| {
        let mut problem = suspension(&IbmBenchOptions::default())?;
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
            "{steps} steps, {threads} thread(s): {total:.4} s/step, fluid {:.4}, forcing {forcing:.4}, particles {particles:.4}",
            total - forcing - particles
        );
        Ok(())
    })
}
