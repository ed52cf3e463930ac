//! The performance target of issue 4: ten Cate E3 at D/h = 16 from release to rest, timed
//! (`cargo run --release -p silt-validation --example ten_cate_to_rest -- [D/h] [seconds simulated]`).

use silt_validation::ten_cate::{self, TenCateCase};

fn main() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let d_over_h: f64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(16.0);
    let mut case = TenCateCase::standard(2, d_over_h);
    if let Some(duration) = args.next().and_then(|s| s.parse().ok()) {
        case.duration = duration;
    }
    let r = ten_cate::run(case)?;
    println!(
        "ten Cate E3, D/h = {d_over_h}, {:?} cells, {} threads: {:.3} s simulated in {:.1} s (forcing {:.1} s, particles {:.1} s); plateau {:.4} m/s, first contact {:?} s, stops {:?} s",
        r.cells,
        rayon::current_num_threads(),
        case.duration,
        r.seconds,
        r.forcing_seconds,
        r.particle_seconds,
        r.plateau,
        r.first_contact,
        r.stop_time
    );
    Ok(())
}
