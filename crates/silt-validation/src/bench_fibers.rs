//! `silt bench fibers`: the problems of issue 5, at 1 and 2 threads.
//!
//! (a) The RPY mobility product, translation and rotation, all four blocks, with the overlap correction:
//!     N = 1,000 and 4,000 beads of radius 1 placed uniformly at random at 5 % volume fraction (seed 1).
//!     With pystokes importable (`pip install pystokes==2.3.2`), its unbounded `Rbm.mobilityTT/TR/RT/RR`
//!     on the same positions (`benches/peers/pystokes_rpy.py`, one process per thread count, threads by
//!     `OMP_NUM_THREADS`) is timed beside it.
//! (b) A full constrained time step (bending, gears constraints, multipliers, RPY, Adams–Bashforth) of
//!     50 and 200 fibers of 20 beads (a = 0.5, K_b = 2000, dt = the bending time) placed at random in
//!     simple shear at 5 % volume fraction; the multipliers by conjugate gradients (warm-started, per-fiber
//!     preconditioner), the iterations reported.

use crate::bench_dem::{machine, pool};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use silt_core::Vec3;
use silt_fibers::dynamics::AdamsBashforth;
use silt_fibers::mobility::{Hydrodynamics, Mobility};
use silt_fibers::rpy::RpyKernel;
use silt_io::scenes::fibers::FiberScene;
use silt_io::scenes::SceneKind;
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(Clone, Debug)]
pub struct FiberBenchOptions {
    pub threads: Vec<usize>,
    pub product_sizes: Vec<usize>,
    /// Fibers of `beads_per_fiber` beads for the step benchmark.
    pub fiber_counts: Vec<usize>,
    pub beads_per_fiber: usize,
    pub warmup_steps: usize,
    pub timed_steps: usize,
    /// Run the pystokes peer when it can be imported.
    pub peer: bool,
}

impl Default for FiberBenchOptions {
    fn default() -> Self {
        FiberBenchOptions {
            threads: vec![1, 2],
            product_sizes: vec![1000, 4000],
            fiber_counts: vec![50, 200],
            beads_per_fiber: 20,
            warmup_steps: 3,
            timed_steps: 10,
            peer: true,
        }
    }
}

impl FiberBenchOptions {
    pub fn quick() -> Self {
        FiberBenchOptions {
            threads: vec![1, 2],
            product_sizes: vec![200],
            fiber_counts: vec![10],
            beads_per_fiber: 10,
            warmup_steps: 1,
            timed_steps: 2,
            peer: false,
        }
    }
}

#[derive(Clone, Debug)]
pub struct ProductRow {
    pub beads: usize,
    pub threads: usize,
    /// Best time of one full 6N product, ms.
    pub silt_ms: f64,
    /// pystokes' best time on the same positions, ms (when run).
    pub peer_ms: Option<f64>,
}

#[derive(Clone, Debug)]
pub struct StepRow {
    pub fibers: usize,
    pub beads: usize,
    pub threads: usize,
    /// Mean wall time of one constrained step, ms.
    pub step_ms: f64,
    /// Mean conjugate-gradient iterations per step.
    pub iterations: f64,
}

#[derive(Clone, Debug)]
pub struct FiberBenchReport {
    pub machine: String,
    pub products: Vec<ProductRow>,
    pub steps: Vec<StepRow>,
    /// Why the peer did not run, if it did not.
    pub peer_note: Option<String>,
}

impl FiberBenchReport {
    pub fn table(&self) -> String {
        let mut s = format!("Machine: {}\n\n", self.machine);
        s.push_str(
            "| RPY product (6N, overlap correction) | threads | Silt ms | pystokes 2.3.2 ms | pystokes / Silt |\n\
             |---|--:|--:|--:|--:|\n",
        );
        for r in &self.products {
            let (peer, ratio) = match r.peer_ms {
                Some(p) => (format!("{p:.2}"), format!("{:.1}", p / r.silt_ms)),
                None => ("-".into(), "-".into()),
            };
            s.push_str(&format!(
                "| N = {} at 5 % | {} | {:.2} | {peer} | {ratio} |\n",
                r.beads, r.threads, r.silt_ms
            ));
        }
        if let Some(note) = &self.peer_note {
            s.push_str(&format!("\npystokes: {note}\n"));
        }
        s.push_str(
            "\n| constrained step (shear, RPY, gears, CG) | threads | ms / step | CG iterations |\n\
             |---|--:|--:|--:|\n",
        );
        for r in &self.steps {
            s.push_str(&format!(
                "| {} fibers x {} beads | {} | {:.1} | {:.1} |\n",
                r.fibers,
                r.beads / r.fibers,
                r.threads,
                r.step_ms,
                r.iterations
            ));
        }
        s
    }
}

/// Beads of radius 1 uniform at random in a cube at 5 % volume fraction (the positions both codes use).
pub fn product_positions(n: usize) -> Vec<Vec3> {
    let side = (n as f64 * 4.0 / 3.0 * std::f64::consts::PI / 0.05).cbrt();
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    (0..n)
        .map(|_| side * Vec3::new(rng.gen(), rng.gen(), rng.gen()))
        .collect()
}

fn time_product(positions: &[Vec3]) -> Result<f64, String> {
    let n = positions.len();
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    let mut random = || Vec3::new(rng.gen(), rng.gen(), rng.gen()) - 0.5;
    let forces: Vec<Vec3> = (0..n).map(|_| random()).collect();
    let torques: Vec<Vec3> = (0..n).map(|_| random()).collect();
    let mobility = Mobility {
        kernel: RpyKernel::new(1.0, 1.0)?,
        hydrodynamics: Hydrodynamics::Rpy,
    };
    let (mut v, mut w) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
    mobility.apply(positions, &forces, &torques, &mut v, &mut w);
    let repeats = (4_000_000 / (n * n)).max(5);
    let mut best = f64::INFINITY;
    for _ in 0..repeats {
        let clock = Instant::now();
        mobility.apply(positions, &forces, &torques, &mut v, &mut w);
        best = best.min(clock.elapsed().as_secs_f64());
    }
    Ok(best * 1e3)
}

/// The peer script, next to the sources.
fn peer_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../benches/peers/pystokes_rpy.py")
}

/// Runs pystokes on `positions` with `threads` OpenMP threads; its best time in ms.
fn time_peer(positions: &[Vec3], threads: usize, dir: &Path) -> Result<f64, String> {
    let csv = dir.join(format!("positions_{}.csv", positions.len()));
    let mut text = String::from("x,y,z\n");
    for p in positions {
        text.push_str(&format!("{:e},{:e},{:e}\n", p.x, p.y, p.z));
    }
    std::fs::write(&csv, text).map_err(|e| format!("{}: {e}", csv.display()))?;
    let output = std::process::Command::new("python3")
        .arg(peer_script())
        .arg(&csv)
        .arg("--repeats")
        .arg(
            (4_000_000 / (positions.len() * positions.len()))
                .max(5)
                .to_string(),
        )
        .env("OMP_NUM_THREADS", threads.to_string())
        .env("NUMBA_NUM_THREADS", threads.to_string())
        .output()
        .map_err(|e| format!("cannot run python3: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "the peer script failed: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    let line = stdout
        .lines()
        .rev()
        .find(|l| l.trim_start().starts_with('{'))
        .ok_or_else(|| format!("no result line from the peer script: {stdout}"))?;
    // The one number we need from the JSON line: "best_ms": <value>.
    let value = line
        .split("\"best_ms\":")
        .nth(1)
        .and_then(|rest| rest.split([',', '}']).next())
        .and_then(|v| v.trim().parse::<f64>().ok())
        .ok_or_else(|| format!("no best_ms in the peer's line: {line}"))?;
    Ok(value)
}

/// Whether pystokes can be imported (else why not).
fn peer_available() -> Result<(), String> {
    if !peer_script().exists() {
        return Err(format!("{} is missing", peer_script().display()));
    }
    let output = std::process::Command::new("python3")
        .args(["-c", "import pystokes"])
        .output()
        .map_err(|e| format!("cannot run python3: {e}"))?;
    if output.status.success() {
        Ok(())
    } else {
        Err("not installed (pip install pystokes==2.3.2); Silt's figures only".into())
    }
}

/// The scene of the step benchmark: `fibers` fibers of `beads` beads at 5 % volume fraction in shear.
pub fn step_scene(fibers: usize, beads: usize) -> String {
    let a: f64 = 0.5;
    let volume = (fibers * beads) as f64 * 4.0 / 3.0 * std::f64::consts::PI * a.powi(3) / 0.05;
    let half = 0.5 * volume.cbrt();
    format!(
        r#"[fibers]
bead_radius = 0.5
viscosity = 1.0
bending_rigidity = 2000.0
hydrodynamics = "rpy"
end_time = 1.0
time_step = 5e-4

[fibers.flow]
type = "simple-shear"
shear_rate = 1.0

[[fibers.fiber]]
beads = {beads}
count = {fibers}
region = {{ min = [-{half}, -{half}, -{half}], max = [{half}, {half}, {half}] }}
seed = 1
"#
    )
}

pub fn run(
    options: &FiberBenchOptions,
    log: &mut dyn FnMut(&str),
) -> Result<FiberBenchReport, String> {
    let peer = if options.peer {
        peer_available()
    } else {
        Err("not run (quick benchmark)".into())
    };
    let scratch = std::env::temp_dir().join(format!("silt-bench-fibers-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).map_err(|e| format!("{}: {e}", scratch.display()))?;
    let mut products = Vec::new();
    let mut peer_note = peer.as_ref().err().cloned();
    for &n in &options.product_sizes {
        let positions = product_positions(n);
        for &threads in &options.threads {
            let silt_ms = pool(threads).install(|| time_product(&positions))?;
            let peer_ms = match &peer {
                Ok(()) => match time_peer(&positions, threads, &scratch) {
                    Ok(ms) => Some(ms),
                    Err(e) => {
                        peer_note = Some(e);
                        None
                    }
                },
                Err(_) => None,
            };
            log(&format!(
                "RPY product N = {n}, {threads} threads: Silt {silt_ms:.2} ms, pystokes {peer_ms:?} ms"
            ));
            products.push(ProductRow {
                beads: n,
                threads,
                silt_ms,
                peer_ms,
            });
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
    let mut steps = Vec::new();
    for &fibers in &options.fiber_counts {
        let text = step_scene(fibers, options.beads_per_fiber);
        let scene = FiberScene::parse(&text, Path::new("<bench>")).map_err(|e| e.to_string())?;
        for &threads in &options.threads {
            let (step_ms, iterations) =
                pool(threads).install(|| -> Result<(f64, f64), String> {
                    let mut system = scene.build().map_err(|e| e.to_string())?.system;
                    let mut integrator = AdamsBashforth::default();
                    for _ in 0..options.warmup_steps {
                        system.step(scene.dt, &mut integrator)?;
                    }
                    let clock = Instant::now();
                    let mut iterations = 0;
                    for _ in 0..options.timed_steps {
                        iterations += system.step(scene.dt, &mut integrator)?.0.iterations;
                    }
                    let steps = options.timed_steps as f64;
                    Ok((
                        clock.elapsed().as_secs_f64() * 1e3 / steps,
                        iterations as f64 / steps,
                    ))
                })?;
            log(&format!(
                "{fibers} fibers: {threads} threads, {step_ms:.1} ms per step, {iterations:.1} CG iterations"
            ));
            steps.push(StepRow {
                fibers,
                beads: fibers * options.beads_per_fiber,
                threads,
                step_ms,
                iterations,
            });
        }
    }
    Ok(FiberBenchReport {
        machine: machine(),
        products,
        steps,
        peer_note,
    })
}
