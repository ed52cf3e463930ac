//! The `silt` command: run a scene, check it, run validation cases and benchmarks.

use clap::{Parser, Subcommand};
use silt_io::coupled_run::{CoupledRunError, CoupledSimulation};
use silt_io::coupled_scene::{is_coupled_scene, CoupledScene};
use silt_io::fiber_scene::is_fiber_scene;
use silt_io::fluid_run::FluidSimulation;
use silt_io::fluid_scene::{is_fluid_scene, FluidScene};
use silt_io::rod_scene::is_rod_scene;
use silt_io::scene::Scene;
use silt_io::simulation::{RunError, Simulation};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

mod fibers;
mod progress;
mod rods;
mod validate;

/// The built-in default scene: a polydisperse bed poured onto a floor.
const DEFAULT_SCENE: &str = include_str!("../../../examples/default-bed.toml");
const DEFAULT_SCENE_NAME: &str = "<built-in default scene: examples/default-bed.toml>";

#[derive(Parser)]
#[command(
    name = "silt",
    version,
    about = "Grain- and fiber-resolved simulation of particle-laden flows"
)]
struct Cli {
    /// Worker threads (default: all cores). Results do not depend on it.
    #[arg(long, global = true)]
    threads: Option<usize>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a scene (without SCENE: the built-in default scene, a polydisperse bed poured onto a floor).
    /// A scene with a top-level [fluid] table is a fluid scene (incompressible flow on a grid); one
    /// with only a [fibers] table is a fiber scene (bead chains at low Reynolds number); one with only a
    /// [rods] table is a rod scene (geometrically exact Cosserat rods).
    Run {
        scene: Option<PathBuf>,
        /// Output directory (default: silt-output/<scene name>).
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Continue from the checkpoint in the output directory.
        #[arg(long)]
        resume: bool,
        /// Stop at this simulated time (a later `--resume` continues to the end time).
        #[arg(long)]
        until: Option<f64>,
        /// No progress display.
        #[arg(short, long)]
        quiet: bool,
    },
    /// Check a scene and print derived quantities (particles: contact time, overlaps, Stokes numbers,
    /// memory; fluid: grid, time step and its limits, Reynolds number, memory; fibers: bending time
    /// and the step against it, solver, B and shear numbers; rods: stiffnesses, frequencies, the
    /// explicit stability limit and the recommended integrator).
    Check { scene: Option<PathBuf> },
    /// Print the built-in default scene (a commented example of the format).
    DefaultScene,
    /// Run validation cases and write plots and tables (default: all cases).
    Validate {
        /// Case name; `silt validate --list` shows them.
        case: Option<String>,
        /// Report directory.
        #[arg(short, long, default_value = "validation-report")]
        output: PathBuf,
        /// Scaled-down versions (as in the test suite).
        #[arg(long)]
        quick: bool,
        #[arg(long)]
        list: bool,
    },
    /// Benchmarks: `silt bench dem` runs the LAMMPS settling problem, `silt bench fluid` the Taylor–Green
    /// and channel flows at 128^3, `silt bench ibm` the coupled spheres (ten Cate E3, 500 spheres),
    /// `silt bench fibers` the RPY product (beside pystokes when installed) and constrained fiber steps,
    /// `silt bench rods` Cosserat rods (beside PyElastica when installed).
    Bench {
        /// Benchmark name: dem, fluid, ibm, fibers or rods.
        name: String,
        /// Smaller problem and fewer steps, for a smoke test.
        #[arg(long)]
        quick: bool,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Some(threads) = cli.threads {
        if threads == 0 {
            eprintln!("error: --threads must be at least 1");
            return ExitCode::from(2);
        }
        if let Err(e) = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build_global()
        {
            eprintln!("error: cannot start {threads} threads: {e}");
            return ExitCode::from(2);
        }
    }
    match cli.command {
        Command::Run {
            scene,
            output,
            resume,
            until,
            quiet,
        } => run(scene.as_deref(), output, resume, until, quiet),
        Command::Check { scene } => check(scene.as_deref()),
        Command::DefaultScene => {
            print!("{DEFAULT_SCENE}");
            ExitCode::SUCCESS
        }
        Command::Validate {
            case,
            output,
            quick,
            list,
        } => validate::run(case.as_deref(), &output, quick, list),
        Command::Bench { name, quick } => validate::bench(&name, quick),
    }
}

/// Reads the scene text (or the built-in one) and where it came from; on error prints it and returns
/// exit code 2.
fn read_scene(scene: Option<&Path>) -> Result<(String, PathBuf), ExitCode> {
    match scene {
        Some(path) => match std::fs::read_to_string(path) {
            Ok(t) => Ok((t, path.to_path_buf())),
            Err(e) => {
                eprintln!("error: {}: cannot read the scene file: {e}", path.display());
                Err(ExitCode::from(2))
            }
        },
        None => Ok((DEFAULT_SCENE.to_string(), PathBuf::from(DEFAULT_SCENE_NAME))),
    }
}

/// Parses a particle scene; on error prints it and returns exit code 2.
fn load(text: String, source: &Path) -> Result<(Scene, String), ExitCode> {
    match Scene::parse(&text, source) {
        Ok(s) => Ok((s, text)),
        Err(e) => {
            eprintln!("error: {e}");
            Err(ExitCode::from(2))
        }
    }
}

fn check(scene: Option<&Path>) -> ExitCode {
    let (text, source) = match read_scene(scene) {
        Ok(s) => s,
        Err(code) => return code,
    };
    if is_fluid_scene(&text) {
        return check_fluid(&text, &source);
    }
    if is_coupled_scene(&text) {
        return check_coupled(&text, &source);
    }
    if is_fiber_scene(&text) {
        return fibers::check(&text, &source);
    }
    if is_rod_scene(&text) {
        return rods::check(&text, &source);
    }
    let (scene, _) = match load(text, &source) {
        Ok(s) => s,
        Err(code) => return code,
    };
    match scene.build() {
        Ok(system) => {
            print!("{}", silt_io::derived::check_report(&scene, &system));
            println!("ok: the scene is valid");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

fn run(
    scene_path: Option<&Path>,
    output: Option<PathBuf>,
    resume: bool,
    until: Option<f64>,
    quiet: bool,
) -> ExitCode {
    let (text, source) = match read_scene(scene_path) {
        Ok(s) => s,
        Err(code) => return code,
    };
    if is_fluid_scene(&text) {
        return run_fluid(&text, &source, output, resume, until, quiet);
    }
    if is_coupled_scene(&text) {
        return run_coupled(&text, &source, output, resume, until, quiet);
    }
    if is_fiber_scene(&text) {
        return fibers::run(&text, &source, output, resume, until, quiet);
    }
    if is_rod_scene(&text) {
        return rods::run(&text, &source, output, resume, until, quiet);
    }
    let (scene, text) = match load(text, &source) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let out_dir = output.unwrap_or_else(|| {
        let name = scene_path
            .and_then(|p| p.file_stem())
            .map(|s| s.to_string_lossy().into_owned());
        PathBuf::from("silt-output").join(name.unwrap_or_else(|| "default-bed".into()))
    });
    if let Err(code) = check_until(until) {
        return code;
    }
    let system = match scene.build() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let n = system.particles.len();
    let started = if resume {
        Simulation::resume(&scene, &text, system, &out_dir)
    } else {
        Simulation::start(&scene, &text, system, &out_dir)
    };
    let mut sim = match started {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(if matches!(e, RunError::Checkpoint(_)) {
                2
            } else {
                1
            });
        }
    };
    let until_step = until.map_or(sim.end_step, |t| (t / scene.simulation.dt).round() as u64);
    if !quiet {
        eprintln!(
            "silt: {} particles, dt {:e}, {} steps to t = {:e}, output in {}",
            n,
            scene.simulation.dt,
            until_step
                .min(sim.end_step)
                .saturating_sub(sim.system.step_count),
            until_step.min(sim.end_step) as f64 * scene.simulation.dt,
            out_dir.display()
        );
    }
    let mut display = progress::Progress::new(
        quiet,
        std::io::stderr().is_terminal(),
        sim.system.step_count,
        until_step.min(sim.end_step),
        (n, "particle"),
    );
    let result = sim.run_until(until_step, &mut |step, _| display.update(step));
    display.finish();
    match result {
        Ok(summary) => {
            if !quiet {
                eprintln!(
                    "silt: done: t = {:e} after {} steps in {:.1} s ({:.2} us per particle-step); {} frames in {}",
                    summary.time,
                    summary.steps,
                    summary.wall_seconds,
                    1e6 * summary.wall_seconds / (summary.steps.max(1) as f64 * n as f64),
                    summary.frames,
                    out_dir.display()
                );
            }
            ExitCode::SUCCESS
        }
        Err(e) => stopped(&e, &out_dir),
    }
}

fn check_fluid(text: &str, source: &Path) -> ExitCode {
    let built = FluidScene::parse(text, source).and_then(|scene| {
        let solver = scene.build()?;
        Ok((scene, solver))
    });
    report_check(built, |(scene, solver)| {
        silt_io::fluid_scene::check_report(scene, solver)
    })
}

fn run_fluid(
    text: &str,
    source: &Path,
    output: Option<PathBuf>,
    resume: bool,
    until: Option<f64>,
    quiet: bool,
) -> ExitCode {
    if let Err(code) = check_until(until) {
        return code;
    }
    let built = FluidScene::parse(text, source).and_then(|scene| {
        let solver = scene.build()?;
        Ok((scene, solver))
    });
    let (scene, solver) = match crate::built(built) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let out_dir = output_dir(output, source, "fluid");
    let cells = solver.grid().cell_count();
    let started = if resume {
        FluidSimulation::resume(&scene, text, solver, &out_dir)
    } else {
        FluidSimulation::start(&scene, text, solver, &out_dir)
    };
    let mut sim = match crate::started(started) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let stop = until.map_or(sim.final_time(), |t| t.min(sim.final_time()));
    if !quiet {
        let cells_per_axis = sim.solver.grid().cells;
        let step = match scene.fixed_time_step() {
            Some(dt) => format!("dt {dt}"),
            None => format!("adaptive dt (initially {:.4e})", sim.solver.next_dt()),
        };
        eprintln!(
            "silt: fluid, {} x {} x {} cells, {step}, from t = {} to t = {stop}, output in {}",
            cells_per_axis[0],
            cells_per_axis[1],
            cells_per_axis[2],
            sim.solver.state.time,
            out_dir.display()
        );
    }
    let mut display = FluidProgress::new(
        quiet,
        std::io::stderr().is_terminal(),
        sim.solver.state.time,
        stop,
        cells,
    );
    let result = sim.run_until(until.unwrap_or(f64::INFINITY), &mut |s| {
        display.update(s.state.time, s.state.steps, s.state.last_dt)
    });
    display.finish();
    match result {
        Ok(summary) => {
            if !quiet {
                eprintln!(
                    "silt: done: t = {} after {} steps in {:.1} s ({:.3} us per cell-step); {} frames in {}",
                    summary.time,
                    summary.steps,
                    summary.wall_seconds,
                    1e6 * summary.wall_seconds / (summary.steps.max(1) as f64 * cells as f64),
                    summary.frames,
                    out_dir.display()
                );
            }
            ExitCode::SUCCESS
        }
        Err(e) => stopped(&e, &out_dir),
    }
}

fn check_coupled(text: &str, source: &Path) -> ExitCode {
    let built = CoupledScene::parse(text, source).and_then(|scene| {
        let (fluid, coupled) = scene.build()?;
        Ok((scene, fluid, coupled))
    });
    report_check(built, |(scene, fluid, coupled)| {
        silt_io::coupled_scene::check_report(scene, fluid, coupled)
    })
}

fn run_coupled(
    text: &str,
    source: &Path,
    output: Option<PathBuf>,
    resume: bool,
    until: Option<f64>,
    quiet: bool,
) -> ExitCode {
    if let Err(code) = check_until(until) {
        return code;
    }
    let built = CoupledScene::parse(text, source).and_then(|scene| {
        let (fluid, coupled) = scene.build()?;
        Ok((scene, fluid, coupled))
    });
    let (scene, fluid, coupled) = match built {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let out_dir = output_dir(output, source, "coupled");
    let cells = fluid.grid().cell_count();
    let particles = coupled.dem.particles.len();
    let started = if resume {
        CoupledSimulation::resume(&scene, text, fluid, coupled, &out_dir)
    } else {
        CoupledSimulation::start(&scene, text, fluid, coupled, &out_dir)
    };
    let mut sim = match started {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(if matches!(e, CoupledRunError::Checkpoint(_)) {
                2
            } else {
                1
            });
        }
    };
    let dt = sim.dt;
    let until_step = until.map_or(sim.end_step, |t| (t / dt).round() as u64);
    let stop = until_step.min(sim.end_step);
    if !quiet {
        let c = sim.fluid.grid().cells;
        eprintln!(
            "silt: {particles} particles in a fluid of {} x {} x {} cells, dt {dt:e}, {} steps to t = {:e}, \
             output in {}",
            c[0],
            c[1],
            c[2],
            stop.saturating_sub(sim.step_count()),
            stop as f64 * dt,
            out_dir.display()
        );
    }
    let mut display = progress::Progress::new(
        quiet,
        std::io::stderr().is_terminal(),
        sim.step_count(),
        stop,
        (cells, "cell"),
    );
    let result = sim.run_until(until_step, &mut |step, _| display.update(step));
    display.finish();
    match result {
        Ok(summary) => {
            if !quiet {
                let fluid_seconds =
                    summary.wall_seconds - summary.forcing_seconds - summary.particle_seconds;
                eprintln!(
                    "silt: done: t = {:e} after {} steps in {:.1} s ({:.3} s per step: fluid and output {:.1}%, forcing \
                     {:.1}%, particles {:.1}%); {} frames in {}",
                    summary.time,
                    summary.steps,
                    summary.wall_seconds,
                    summary.wall_seconds / summary.steps.max(1) as f64,
                    100.0 * fluid_seconds / summary.wall_seconds.max(1e-12),
                    100.0 * summary.forcing_seconds / summary.wall_seconds.max(1e-12),
                    100.0 * summary.particle_seconds / summary.wall_seconds.max(1e-12),
                    summary.frames,
                    out_dir.display()
                );
            }
            ExitCode::SUCCESS
        }
        Err(e) => stopped(&e, &out_dir),
    }
}

/// Progress of a fluid run, measured in simulated time (an adaptive step makes the step count unknown):
/// a bar with ETA on a terminal, a plain line every 5 s otherwise (as `progress::Progress` for particles).
struct FluidProgress {
    bar: Option<indicatif::ProgressBar>,
    plain: bool,
    start: Instant,
    last_log: Instant,
    first_time: f64,
    end_time: f64,
    first_step: Option<u64>,
    cells: usize,
}

impl FluidProgress {
    const TICKS: u64 = 1000;

    fn new(quiet: bool, terminal: bool, first_time: f64, end_time: f64, cells: usize) -> Self {
        let bar = (!quiet && terminal).then(|| {
            let bar = indicatif::ProgressBar::new(Self::TICKS);
            bar.set_style(
                indicatif::ProgressStyle::with_template("{bar:40} {percent:>3}%  ETA {eta}  {msg}")
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
            );
            bar
        });
        let now = Instant::now();
        FluidProgress {
            bar,
            plain: !quiet && !terminal,
            start: now,
            last_log: now,
            first_time,
            end_time,
            first_step: None,
            cells,
        }
    }

    /// Fraction of the simulated time done, in [0, 1].
    fn fraction(&self, time: f64) -> f64 {
        let span = self.end_time - self.first_time;
        if span > 0.0 {
            ((time - self.first_time) / span).clamp(0.0, 1.0)
        } else {
            1.0
        }
    }

    fn update(&mut self, time: f64, step: u64, dt: f64) {
        let first_step = *self.first_step.get_or_insert(step.saturating_sub(1));
        let fraction = self.fraction(time);
        if let Some(bar) = &self.bar {
            bar.set_position((fraction * Self::TICKS as f64) as u64);
            bar.set_message(format!("t {time:.4e}, step {step}, dt {dt:.3e}"));
        } else if self.plain
            && (self.last_log.elapsed() >= Duration::from_secs(5) || fraction >= 1.0)
        {
            self.last_log = Instant::now();
            let elapsed = self.start.elapsed().as_secs_f64().max(1e-9);
            let steps = (step - first_step) as f64;
            let rate = steps / elapsed;
            let remaining = elapsed * (1.0 - fraction) / fraction.max(1e-9);
            eprintln!(
                "t = {time:.4e}/{:.4e} ({:.1}%), step {step}, dt {dt:.3e}, {rate:.1} steps/s, \
                 {:.3} us per cell-step, ETA {remaining:.0} s",
                self.end_time,
                100.0 * fraction,
                1e6 / (rate * self.cells as f64).max(1e-9)
            );
        }
    }

    fn finish(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

/// `--until` must be a time >= 0 (else exit code 2).
pub(crate) fn check_until(until: Option<f64>) -> Result<(), ExitCode> {
    match until {
        Some(t) if !(t.is_finite() && t >= 0.0) => {
            eprintln!("error: --until must be a time >= 0, got {t}");
            Err(ExitCode::from(2))
        }
        _ => Ok(()),
    }
}

/// The output directory: `--output`, else silt-output/<scene file stem> (or `fallback`).
pub(crate) fn output_dir(output: Option<PathBuf>, source: &Path, fallback: &str) -> PathBuf {
    output.unwrap_or_else(|| {
        let name = source
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| fallback.into());
        PathBuf::from("silt-output").join(name)
    })
}

/// A run that stopped early (diverged, or could not write): the message, where its output is, exit code 1.
pub(crate) fn stopped(error: &dyn std::fmt::Display, out_dir: &Path) -> ExitCode {
    eprintln!("error: {error}");
    eprintln!(
        "the output written before the failure is kept in {}",
        out_dir.display()
    );
    ExitCode::from(1)
}

/// Prints a built scene's `silt check` report, or the scene's error (exit code 2).
pub(crate) fn report_check<T>(
    built: Result<T, silt_io::scene::SceneError>,
    report: impl FnOnce(&T) -> String,
) -> ExitCode {
    match built {
        Ok(built) => {
            print!("{}", report(&built));
            println!("ok: the scene is valid");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

/// A started or resumed run, or, printed, the exit code of its failure: 2 for a checkpoint that
/// cannot be resumed (bad input), 1 otherwise.
pub(crate) fn started<S, D: std::fmt::Display>(
    result: Result<S, silt_io::run_failure::RunFailure<D>>,
) -> Result<S, ExitCode> {
    result.map_err(|e| {
        eprintln!("error: {e}");
        ExitCode::from(
            if matches!(e, silt_io::run_failure::RunFailure::Checkpoint(_)) {
                2
            } else {
                1
            },
        )
    })
}

/// A parsed and built scene, or, printed, exit code 2 (bad input).
pub(crate) fn built<T>(result: Result<T, silt_io::scene::SceneError>) -> Result<T, ExitCode> {
    result.map_err(|e| {
        eprintln!("error: {e}");
        ExitCode::from(2)
    })
}
