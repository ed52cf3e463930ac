//! Times one Crank–Nicolson Helmholtz solve by fused Jacobi sweeps at 128^3 (walls in z), for several
//! ring sizes: `cargo run --release -p silt-fluid --example jacobi_timed [threads]`.
use silt_fluid::jacobi::JacobiSolver;
use silt_fluid::poisson::AxisKind;

fn main() {
    let threads: usize = std::env::args().nth(1).map_or(1, |a| a.parse().unwrap());
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    let n = 128;
    let h = 1.0 / n as f64;
    // The benchmark channel's first stage: b = -alpha dt nu, alpha = 4/15, dt = 0.2 h, nu = 1/5600.
    let b = -(4.0 / 15.0) * 0.2 * h / 5600.0;
    let kinds = [
        AxisKind::Periodic,
        AxisKind::Periodic,
        AxisKind::DirichletDirichlet,
    ];
    for ring_kib in [128usize, 256, 384, 512, 768, 1024] {
        let mut solver = JacobiSolver::new([n; 3], kinds, [h; 3]).with_ring_bytes(ring_kib * 1024);
        let sweeps = solver.sweeps_for(1.0, b, 1e-12, 8).unwrap();
        let mut field: Vec<f64> = (0..n * n * n)
            .map(|i| ((i * 7919) % 1000) as f64 * 1e-3)
            .collect();
        let mut out = Vec::new();
        let mut best = f64::INFINITY;
        pool.install(|| {
            for _ in 0..15 {
                let clock = std::time::Instant::now();
                solver.solve(1.0, b, sweeps, &mut field, &mut out);
                best = best.min(clock.elapsed().as_secs_f64());
            }
        });
        println!(
            "ring {ring_kib:5} KiB, {sweeps} sweeps: best {:.2} ms",
            best * 1e3
        );
    }
}
