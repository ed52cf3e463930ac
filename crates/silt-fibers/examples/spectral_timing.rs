//! Where one periodic RPY product's time goes (development aid): `cargo run --release -p silt-fibers
//! --example spectral_timing -- N TOLERANCE [REPEATS]`, threads from `RAYON_NUM_THREADS`. Beads of
//! radius 1 at random in a cube at 5 % volume fraction, as `silt bench fibers`.
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use silt_core::Vec3;
use silt_fibers::rpy::RpyKernel;
use silt_fibers::spectral::SpectralRpy;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(10_000);
    let tolerance: f64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1e-4);
    let repeats: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(10);
    let side = (n as f64 * 4.0 / 3.0 * std::f64::consts::PI / 0.05).cbrt();
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let positions: Vec<Vec3> = (0..n)
        .map(|_| side * Vec3::new(rng.gen(), rng.gen(), rng.gen()))
        .collect();
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    let mut random = || Vec3::new(rng.gen(), rng.gen(), rng.gen()) - 0.5;
    let forces: Vec<Vec3> = (0..n).map(|_| random()).collect();
    let torques: Vec<Vec3> = (0..n).map(|_| random()).collect();
    let kernel = RpyKernel::new(1.0, 1.0).unwrap();
    let spectral = SpectralRpy::new(kernel, Vec3::splat(side), tolerance, n).unwrap();
    println!("N = {n}, side {side:.2}, {:?}", spectral.parameters());
    let mut best = None::<silt_fibers::spectral::ProductTiming>;
    let mut minima = [f64::INFINITY; 4];
    for r in 0..repeats {
        let (_, t) = spectral.timed_product(&positions, &forces, &torques, 0.0);
        println!(
            "{r}: total {:.1} ms: prep {:.1} real {:.1} spread {:.1} fft {:.1} interp {:.1}",
            t.total() * 1e3,
            t.preparation * 1e3,
            t.real_space * 1e3,
            t.spreading * 1e3,
            t.transforms * 1e3,
            t.interpolation * 1e3
        );
        if r > 0 {
            for (m, v) in
                minima
                    .iter_mut()
                    .zip([t.real_space, t.spreading, t.transforms, t.interpolation])
            {
                *m = m.min(v);
            }
        }
        if r > 0 && best.is_none_or(|b| t.total() < b.total()) {
            best = Some(t);
        }
    }
    if std::env::var("DIRECT").is_ok() {
        let mobility = silt_fibers::mobility::Mobility {
            kernel,
            hydrodynamics: silt_fibers::mobility::Hydrodynamics::Rpy,
        };
        let (mut v, mut w) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
        let mut fastest = f64::INFINITY;
        for _ in 0..3 {
            let clock = std::time::Instant::now();
            mobility.apply(&positions, &forces, &torques, &mut v, &mut w);
            fastest = fastest.min(clock.elapsed().as_secs_f64());
        }
        println!("unbounded O(N^2) product: {:.1} ms", fastest * 1e3);
    }
    if let Some(t) = best {
        println!("best repeated: {:.1} ms", t.total() * 1e3);
    }
    println!(
        "stage minima over the repeats: real {:.1} spread {:.1} fft {:.1} interp {:.1} ms",
        minima[0] * 1e3,
        minima[1] * 1e3,
        minima[2] * 1e3,
        minima[3] * 1e3
    );
}
