use silt_fluid::Viscous;
use silt_validation::taylor_green as tg;
use std::time::Instant;
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = args.get(1).map_or(128, |s| s.parse().unwrap());
    let threads: usize = args.get(2).map_or(1, |s| s.parse().unwrap());
    let steps: usize = args.get(3).map_or(5, |s| s.parse().unwrap());
    let v = if args.get(4).is_some_and(|s| s == "cn") {
        Viscous::CrankNicolson
    } else {
        Viscous::Explicit
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    pool.install(|| {
        let mut s = tg::solver(n, true, 1.0 / 1600.0, 0.2, v);
        s.step().unwrap();
        s.times = Default::default();
        let t = Instant::now();
        for _ in 0..steps { s.step().unwrap(); }
        let dt = t.elapsed().as_secs_f64() / steps as f64;
        let st = s.times; let k = 1e3 / steps as f64;
        println!("{n}^3 {v:?} {threads}t: {:.1} ms/step, {:.2} M cell-steps/s | momentum {:.1} helmholtz {:.1} poisson {:.1} correction {:.1} ms/step", dt * 1e3, (n as f64).powi(3) / dt / 1e6, st.momentum * k, st.helmholtz * k, st.poisson * k, st.correction * k);
    });
}
