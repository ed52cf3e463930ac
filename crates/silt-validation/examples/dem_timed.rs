//! Times the packed bed of `silt bench dem` with the LAMMPS law (and, with `seed`, the seed model),
//! starting from a settled bed cached in the file given by `SILT_SETTLED` (default
//! `target/settled-bed.bin`; settled once, 20,000 steps), and prints a hash of the end state so that
//! versions of the kernels can be compared bit for bit.
//!
//! `cargo run --release -p silt-validation --example dem_timed -- [steps] [threads] [hertz|seed]`
use silt_validation::bench_dem::{advance, lammps_bed, pool, with_seed_model, BenchOptions};
use std::hash::{Hash, Hasher};
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let steps: u64 = args.get(1).map_or(1000, |s| s.parse().expect("steps"));
    let threads: usize = args.get(2).map_or(1, |s| s.parse().expect("threads"));
    let law = args.get(3).map_or("hertz", |s| s.as_str());
    let path = std::env::var("SILT_SETTLED").unwrap_or("target/settled-bed.bin".into());
    let options = BenchOptions::default();
    let mut bed = lammps_bed(options.lattice);
    match std::fs::read(&path) {
        Ok(bytes) => bed
            .restore(bincode::deserialize(&bytes).expect("cached bed"))
            .expect("cached bed"),
        Err(_) => {
            eprintln!("settling {} steps", options.settle_steps);
            pool(2).install(|| advance(&mut bed, options.settle_steps));
            std::fs::write(&path, bincode::serialize(&bed.checkpoint()).unwrap()).unwrap();
        }
    }
    let mut system = if law == "seed" {
        with_seed_model(&bed)
    } else {
        bed
    };
    let mut each = Vec::with_capacity(steps as usize);
    let seconds = pool(threads).install(|| {
        let clock = Instant::now();
        for _ in 0..steps {
            let step = Instant::now();
            advance(&mut system, 1);
            each.push(step.elapsed().as_secs_f64());
        }
        clock.elapsed().as_secs_f64()
    });
    each.sort_by(f64::total_cmp);
    let quantile = |f: f64| 1e3 * each[((each.len() - 1) as f64 * f) as usize];
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    let p = &system.particles;
    for i in 0..p.len() {
        for v in [p.position[i], p.velocity[i], p.angular_velocity[i]] {
            v.to_array().map(f64::to_bits).hash(&mut hasher);
        }
    }
    println!(
        "{law} {threads}T: {:.3} ms/step over {steps} steps (min {:.3}, p10 {:.3}, median {:.3}), hash {:016x}",
        1e3 * seconds / steps as f64,
        quantile(0.0),
        quantile(0.1),
        quantile(0.5),
        hasher.finish()
    );
}
