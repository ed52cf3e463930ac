//! Time per constrained step of the periodic step benchmark's scene (development aid):
//! `cargo run --release -p silt-validation --example periodic_step_timing -- FIBERS [STEPS]`, threads
//! from `RAYON_NUM_THREADS`; the scene is `silt bench fibers`' (`periodic_step_scene`), 3 warm-up steps.
use silt_fibers::dynamics::AdamsBashforth;
use silt_io::scenes::fibers::FiberScene;
use silt_io::scenes::SceneKind;
use std::path::Path;
use std::time::Instant;

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    let fibers: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(1000);
    let steps: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(5);
    let text = silt_validation::bench_fibers::periodic_step_scene(fibers, 20);
    let scene = FiberScene::parse(&text, Path::new("<bench>")).map_err(|e| e.to_string())?;
    let mut system = scene.build().map_err(|e| e.to_string())?.system;
    let mut integrator = AdamsBashforth::default();
    for step in 0..3 + steps {
        let clock = Instant::now();
        let iterations = system.step(scene.dt, &mut integrator)?.0.iterations;
        println!(
            "step {step}: {:.1} ms, {iterations} CG iterations{}",
            clock.elapsed().as_secs_f64() * 1e3,
            if step < 3 { " (warm-up)" } else { "" }
        );
    }
    Ok(())
}
