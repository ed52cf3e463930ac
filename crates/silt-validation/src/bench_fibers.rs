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
//! (c) The periodic RPY product (issue 25, `silt_fibers::spectral`), all four blocks with the overlap
//!     correction, at N = 10³ … 10⁶ beads of radius 1 at 5 % volume fraction in a cube (the positions
//!     of (a)), at tolerances 1e-4 and 1e-6: the first product at a configuration (cell list,
//!     Gaussians and real-space kernels prepared) and a repeated one (the multiplier solve's case),
//!     beside the unbounded O(N²) product on the same positions (up to N = 10⁴) and, at N = 10³ with
//!     pystokes importable, pystokes' periodic translational product (`benches/peers/
//!     pystokes_periodic.py`: O(N²) Ewald sum, 5⁵ images and 6³ modes), whose velocities are
//!     compared with Silt's translational product without the overlap correction.
//! (d) A constrained step of fibers of 20 beads sedimenting in a periodic box at 5 % volume fraction
//!     (`hydrodynamics = "periodic-rpy"`, tolerance 1e-4): the multipliers by conjugate gradients to
//!     a tenth of the product's tolerance (the default), warm-started from the last two steps'
//!     multipliers extrapolated; three steps, then five timed.

use crate::bench_dem::{machine, pool};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use silt_core::{relative_difference, Vec3};
use silt_fibers::dynamics::AdamsBashforth;
use silt_fibers::mobility::{Hydrodynamics, Mobility};
use silt_fibers::rpy::RpyKernel;
use silt_fibers::spectral::{SpectralParameters, SpectralRpy};
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
    /// Beads of the periodic product benchmark, its tolerances, the largest N the unbounded
    /// product is timed beside it, and the N at which pystokes' periodic product runs.
    pub periodic_sizes: Vec<usize>,
    pub periodic_tolerances: Vec<f64>,
    pub unbounded_up_to: usize,
    pub periodic_peer_sizes: Vec<usize>,
    /// Fibers of 20 beads of the periodic step benchmark, and its steps: warm-up steps until the
    /// multipliers' warm start has its three steps of history and the Adams–Bashforth start has
    /// passed (the cost a long run pays per step), then timed steps.
    pub periodic_fiber_counts: Vec<usize>,
    pub periodic_warmup_steps: usize,
    pub periodic_timed_steps: usize,
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
            periodic_sizes: vec![1000, 10_000, 100_000, 1_000_000],
            periodic_tolerances: vec![1e-4, 1e-6],
            unbounded_up_to: 100_000,
            periodic_peer_sizes: vec![1000],
            periodic_fiber_counts: vec![200, 1000],
            periodic_warmup_steps: 10,
            periodic_timed_steps: 10,
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
            periodic_sizes: vec![500],
            periodic_tolerances: vec![1e-4],
            unbounded_up_to: 500,
            periodic_peer_sizes: vec![],
            periodic_fiber_counts: vec![10],
            periodic_warmup_steps: 1,
            periodic_timed_steps: 2,
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
pub struct PeriodicRow {
    pub beads: usize,
    pub tolerance: f64,
    pub threads: usize,
    /// The grid and the windows' support the tolerance chose, and the real-space neighbours.
    pub grid: [usize; 3],
    pub support: usize,
    pub neighbours: f64,
    /// The first product at the configuration (preparation included) and the best repeated one, ms.
    pub first_ms: f64,
    pub repeated_ms: f64,
    /// The unbounded O(N²) product on the same positions, ms.
    pub unbounded_ms: Option<f64>,
    /// pystokes' periodic translational product, ms, and its relative difference from Silt's.
    pub peer: Option<(f64, f64)>,
}

#[derive(Clone, Debug)]
pub struct FiberBenchReport {
    pub machine: String,
    pub products: Vec<ProductRow>,
    pub steps: Vec<StepRow>,
    pub periodic: Vec<PeriodicRow>,
    pub periodic_steps: Vec<StepRow>,
    /// The periodic steps' warm-up and timed steps.
    pub periodic_step_counts: (usize, usize),
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
        step_table(&mut s, "shear, RPY, gears, CG", &self.steps);
        s.push_str(
            "\n| periodic RPY product (6N, overlap correction) | tolerance | threads | grid | window | \
             neighbours | first ms | repeated ms | unbounded O(N²) ms | unbounded / repeated | \
             pystokes.periodic TT ms (difference) |\n|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n",
        );
        for r in &self.periodic {
            let (unbounded, ratio) = match r.unbounded_ms {
                Some(u) => (format!("{u:.1}"), format!("{:.1}", u / r.repeated_ms)),
                None => ("-".into(), "-".into()),
            };
            let peer = r
                .peer
                .map_or("-".into(), |(ms, d)| format!("{ms:.0} ({d:.1e})"));
            s.push_str(&format!(
                "| N = {} at 5 % | {:e} | {} | {}x{}x{} | {}³ | {:.0} | {:.1} | {:.1} | {unbounded} | \
                 {ratio} | {peer} |\n",
                r.beads,
                r.tolerance,
                r.threads,
                r.grid[0],
                r.grid[1],
                r.grid[2],
                r.support,
                r.neighbours,
                r.first_ms,
                r.repeated_ms
            ));
        }
        let (warmup, timed) = self.periodic_step_counts;
        step_table(
            &mut s,
            &format!(
                "periodic box, sedimenting, periodic RPY 1e-4, gears, CG to 1e-5; mean of {timed} \
                 steps after {warmup}"
            ),
            &self.periodic_steps,
        );
        s
    }
}

/// A table of constrained steps under the heading `what`.
fn step_table(s: &mut String, what: &str, rows: &[StepRow]) {
    s.push_str(&format!(
        "\n| constrained step ({what}) | threads | ms / step | CG iterations |\n|---|--:|--:|--:|\n"
    ));
    for r in rows {
        s.push_str(&format!(
            "| {} fibers x {} beads | {} | {:.1} | {:.1} |\n",
            r.fibers,
            r.beads / r.fibers,
            r.threads,
            r.step_ms,
            r.iterations
        ));
    }
}

/// A fiber scene's constrained steps: `warmup` steps, then the mean wall time (ms) and
/// conjugate-gradient iterations of `timed` steps.
fn time_steps(scene: &FiberScene, warmup: usize, timed: usize) -> Result<(f64, f64), String> {
    let mut system = scene.build().map_err(|e| e.to_string())?.system;
    let mut integrator = AdamsBashforth::default();
    for _ in 0..warmup {
        system.step(scene.dt, &mut integrator)?;
    }
    let clock = Instant::now();
    let mut iterations = 0;
    for _ in 0..timed {
        iterations += system.step(scene.dt, &mut integrator)?.0.iterations;
    }
    Ok((
        clock.elapsed().as_secs_f64() * 1e3 / timed as f64,
        iterations as f64 / timed as f64,
    ))
}

/// The side of the cube holding `n` beads of radius 1 at 5 % volume fraction.
pub fn cube_side(n: usize) -> f64 {
    (n as f64 * 4.0 / 3.0 * std::f64::consts::PI / 0.05).cbrt()
}

/// Random loads (seed 2), the same for every product timed.
pub fn loads(n: usize) -> (Vec<Vec3>, Vec<Vec3>) {
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    let mut random = || Vec3::new(rng.gen(), rng.gen(), rng.gen()) - 0.5;
    let forces = (0..n).map(|_| random()).collect();
    let torques = (0..n).map(|_| random()).collect();
    (forces, torques)
}

/// The periodic product at `positions` to `tolerance`: the first product (preparation included)
/// and the best of the repeated ones, in ms, with the parameters it chose.
fn time_periodic(
    positions: &[Vec3],
    tolerance: f64,
) -> Result<(f64, f64, SpectralParameters), String> {
    let n = positions.len();
    let (forces, torques) = loads(n);
    let kernel = RpyKernel::new(1.0, 1.0)?;
    let spectral = SpectralRpy::new(kernel, Vec3::splat(cube_side(n)), tolerance, n)?;
    let clock = Instant::now();
    spectral.product(positions, &forces, &torques);
    let first = clock.elapsed().as_secs_f64();
    let repeats = (200_000 / n).clamp(2, 20);
    let mut best = f64::INFINITY;
    for _ in 0..repeats {
        let clock = Instant::now();
        spectral.product(positions, &forces, &torques);
        best = best.min(clock.elapsed().as_secs_f64());
    }
    Ok((first * 1e3, best * 1e3, spectral.parameters()))
}

/// pystokes' periodic translational product on `positions` with `threads` OpenMP threads: its time
/// in ms and the relative difference of its velocities from Silt's (translation only, no overlap
/// correction, tolerance 1e-7).
fn time_periodic_peer(
    positions: &[Vec3],
    threads: usize,
    dir: &Path,
) -> Result<(f64, f64), String> {
    let n = positions.len();
    let side = cube_side(n);
    let csv = dir.join(format!("periodic_{n}.csv"));
    write_positions(&csv, positions)?;
    let velocities = dir.join(format!("periodic_{n}_v.csv"));
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../benches/peers/pystokes_periodic.py");
    let mut command = std::process::Command::new("python3");
    command
        .arg(script)
        .arg(&csv)
        .arg(format!("{side:e}"))
        .arg("--velocities")
        .arg(&velocities);
    let ms = peer_best_ms(command, threads)?;
    let table = std::fs::read_to_string(&velocities)
        .map_err(|e| format!("{}: {e}", velocities.display()))?;
    let rows: Vec<Vec<f64>> = table
        .lines()
        .skip(1)
        .map(|l| l.split(',').filter_map(|v| v.trim().parse().ok()).collect())
        .collect();
    if rows.len() != n || rows.iter().any(|r| r.len() != 6) {
        return Err(format!(
            "{}: expected {n} rows of 6 numbers",
            velocities.display()
        ));
    }
    let forces: Vec<Vec3> = rows.iter().map(|r| Vec3::new(r[0], r[1], r[2])).collect();
    let theirs: Vec<Vec3> = rows.iter().map(|r| Vec3::new(r[3], r[4], r[5])).collect();
    let kernel = RpyKernel::new(1.0, 1.0)?.without_overlap_correction();
    let spectral = SpectralRpy::new(kernel, Vec3::splat(side), 1e-7, n)?;
    let (ours, _) = spectral.product(positions, &forces, &vec![Vec3::ZERO; n]);
    Ok((ms, relative_difference(&theirs, &ours)))
}

/// The scene of the periodic step benchmark: `fibers` fibers of `beads` beads (a = 0.5) at 5 %
/// volume fraction sedimenting in a periodic cube.
pub fn periodic_step_scene(fibers: usize, beads: usize) -> String {
    let a: f64 = 0.5;
    let volume = (fibers * beads) as f64 * 4.0 / 3.0 * std::f64::consts::PI * a.powi(3) / 0.05;
    let side = volume.cbrt();
    format!(
        r#"[fibers]
bead_radius = 0.5
viscosity = 1.0
bending_rigidity = 2000.0
hydrodynamics = "periodic-rpy"
periodic_box = [{side}, {side}, {side}]
bead_force = [0.0, -1.0, 0.0]
end_time = 1.0
time_step = 5e-4

[[fibers.fiber]]
beads = {beads}
count = {fibers}
region = {{ min = [0.0, 0.0, 0.0], max = [{side}, {side}, {side}] }}
seed = 1
"#
    )
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
    // Seconds per product beyond N = 20,000: one timed product.
    let repeats = if n > 20_000 {
        1
    } else {
        (4_000_000 / (n * n)).max(5)
    };
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
    write_positions(&csv, positions)?;
    let mut command = std::process::Command::new("python3");
    command.arg(peer_script()).arg(&csv).arg("--repeats").arg(
        (4_000_000 / (positions.len() * positions.len()))
            .max(5)
            .to_string(),
    );
    peer_best_ms(command, threads)
}

/// Bead centres as the peer scripts read them: a header `x,y,z`, then one bead per line.
fn write_positions(csv: &Path, positions: &[Vec3]) -> Result<(), String> {
    let mut text = String::from("x,y,z\n");
    for p in positions {
        text.push_str(&format!("{:e},{:e},{:e}\n", p.x, p.y, p.z));
    }
    std::fs::write(csv, text).map_err(|e| format!("{}: {e}", csv.display()))
}

/// Runs a peer script (`command`) with `threads` OpenMP threads and reads its best time in ms from
/// the JSON line it prints last.
fn peer_best_ms(mut command: std::process::Command, threads: usize) -> Result<f64, String> {
    let output = command
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
            let (step_ms, iterations) = pool(threads)
                .install(|| time_steps(&scene, options.warmup_steps, options.timed_steps))?;
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
    let scratch = std::env::temp_dir().join(format!("silt-bench-periodic-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).map_err(|e| format!("{}: {e}", scratch.display()))?;
    let mut periodic = Vec::new();
    for &n in &options.periodic_sizes {
        let positions = product_positions(n);
        for &tolerance in &options.periodic_tolerances {
            for &threads in &options.threads {
                let (first_ms, repeated_ms, p) =
                    match pool(threads).install(|| time_periodic(&positions, tolerance)) {
                        Ok(result) => result,
                        Err(e) => {
                            log(&format!("periodic product N = {n} at {tolerance:e}: {e}"));
                            continue;
                        }
                    };
                let unbounded_ms = if n <= options.unbounded_up_to
                    && tolerance == options.periodic_tolerances[0]
                {
                    Some(pool(threads).install(|| time_product(&positions))?)
                } else {
                    None
                };
                let peer_run = peer.is_ok()
                    && options.periodic_peer_sizes.contains(&n)
                    && tolerance == options.periodic_tolerances[0];
                let peer_result = if peer_run {
                    match time_periodic_peer(&positions, threads, &scratch) {
                        Ok(result) => Some(result),
                        Err(e) => {
                            peer_note = Some(e);
                            None
                        }
                    }
                } else {
                    None
                };
                let density = n as f64 / cube_side(n).powi(3);
                let neighbours = density * 4.0 / 3.0 * std::f64::consts::PI * p.real_cutoff.powi(3);
                log(&format!(
                    "periodic product N = {n}, tolerance {tolerance:e}, {threads} threads: first \
                     {first_ms:.1} ms, repeated {repeated_ms:.1} ms, grid {:?}, unbounded \
                     {unbounded_ms:?} ms, pystokes {peer_result:?}",
                    p.grid
                ));
                periodic.push(PeriodicRow {
                    beads: n,
                    tolerance,
                    threads,
                    grid: p.grid,
                    support: p.support[0],
                    neighbours,
                    first_ms,
                    repeated_ms,
                    unbounded_ms,
                    peer: peer_result,
                });
            }
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
    let mut periodic_steps = Vec::new();
    for &fibers in &options.periodic_fiber_counts {
        let text = periodic_step_scene(fibers, 20);
        let scene = FiberScene::parse(&text, Path::new("<bench>")).map_err(|e| e.to_string())?;
        for &threads in &options.threads {
            let (step_ms, iterations) = pool(threads).install(|| {
                time_steps(
                    &scene,
                    options.periodic_warmup_steps,
                    options.periodic_timed_steps,
                )
            })?;
            log(&format!(
                "periodic: {fibers} fibers, {threads} threads, {step_ms:.1} ms per step, \
                 {iterations:.1} CG iterations"
            ));
            periodic_steps.push(StepRow {
                fibers,
                beads: fibers * 20,
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
        periodic,
        periodic_steps,
        periodic_step_counts: (options.periodic_warmup_steps, options.periodic_timed_steps),
        peer_note,
    })
}
