//! The periodic product's error against the direct Ewald sum at the benchmark's density (development
//! aid): `cargo run --release -p silt-validation --example spectral_error -- N TOL[,TOL...]`, threads from
//! `RAYON_NUM_THREADS`. Beads of radius 1 at random in a cube at 5 % volume fraction, random forces
//! and torques (as `silt bench fibers`); the direct sum (`EwaldRpy`, O(N²), ~1.5 min at N = 2,000 on
//! 2 threads) once, then per tolerance the relative 2-norm errors of V and W, the parameters chosen
//! and the repeated product's best time of three.
use silt_core::relative_difference;
use silt_core::Vec3;
use silt_fibers::ewald::EwaldRpy;
use silt_fibers::rpy::RpyKernel;
use silt_fibers::spectral::SpectralRpy;
use silt_validation::bench_fibers::{cube_side, loads, product_positions};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(2000);
    let tolerances: Vec<f64> = args
        .get(2)
        .map_or("1e-3,1e-4,1e-6", |s| s.as_str())
        .split(',')
        .map(|s| s.parse().expect("tolerances like 1e-4,1e-6"))
        .collect();
    let side = cube_side(n);
    let positions = product_positions(n);
    let (forces, torques) = loads(n);
    let kernel = RpyKernel::new(1.0, 1.0).unwrap();
    let reference = EwaldRpy::new(kernel, Vec3::splat(side), None).unwrap();
    let (v_direct, w_direct) = reference.product(&positions, &forces, &torques);
    for tolerance in tolerances {
        let spectral = SpectralRpy::new(kernel, Vec3::splat(side), tolerance, n).unwrap();
        let (v, w) = spectral.product(&positions, &forces, &torques);
        let best = (0..3)
            .map(|_| {
                let (_, timing) = spectral.timed_product(&positions, &forces, &torques, 0.0);
                timing.total()
            })
            .fold(f64::INFINITY, f64::min);
        let p = spectral.parameters();
        let (ev, ew) = (
            relative_difference(&v, &v_direct),
            relative_difference(&w, &w_direct),
        );
        println!(
            "tolerance {tolerance:e}: V {ev:.2e} W {ew:.2e} ({:.2} / {:.2} of it); grid {:?}, \
             {} points per axis, {}; real-space cutoff {:.2}; repeated product {:.1} ms",
            ev / tolerance,
            ew / tolerance,
            p.grid,
            p.support[0],
            p.window,
            p.real_cutoff,
            best * 1e3
        );
    }
}
