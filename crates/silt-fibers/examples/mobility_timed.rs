//! Times the matrix-free RPY product (translation and rotation, overlap correction on) for beads placed
//! at random at 5 % volume fraction (`cargo run --release -p silt-fibers --example mobility_timed -- [N]`).

use std::time::Instant;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use silt_core::Vec3;
use silt_fibers::mobility::{Hydrodynamics, Mobility};
use silt_fibers::rpy::RpyKernel;

fn main() -> Result<(), String> {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1000);
    let radius = 1.0;
    let side = (n as f64 * 4.0 / 3.0 * std::f64::consts::PI / 0.05).cbrt() * radius;
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let mut point = || Vec3::new(rng.gen(), rng.gen(), rng.gen());
    let positions: Vec<Vec3> = (0..n).map(|_| side * point()).collect();
    let forces: Vec<Vec3> = (0..n).map(|_| point() - 0.5).collect();
    let torques: Vec<Vec3> = (0..n).map(|_| point() - 0.5).collect();
    let mobility = Mobility {
        kernel: RpyKernel::new(radius, 1.0)?,
        hydrodynamics: Hydrodynamics::Rpy,
    };
    let mut v = vec![Vec3::ZERO; n];
    let mut w = vec![Vec3::ZERO; n];
    mobility.apply(&positions, &forces, &torques, &mut v, &mut w);
    let repeats = (4_000_000 / (n * n)).max(3);
    let mut best = f64::INFINITY;
    for _ in 0..repeats {
        let clock = Instant::now();
        mobility.apply(&positions, &forces, &torques, &mut v, &mut w);
        best = best.min(clock.elapsed().as_secs_f64());
    }
    println!(
        "RPY product, N = {n}, {} threads: {:.3} ms (best of {repeats})",
        rayon::current_num_threads(),
        best * 1e3
    );
    Ok(())
}
