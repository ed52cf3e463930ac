//! The `silt` command: run a scene, check it, run validation cases and benchmarks.

use clap::{Parser, Subcommand};
use silt_io::scene::Scene;
use silt_io::simulation::{RunError, Simulation};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

mod progress;
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
    /// Check a scene and print derived quantities (contact time, overlaps, Stokes numbers, memory).
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
    /// Benchmarks: `silt bench dem` runs the LAMMPS settling problem.
    Bench {
        /// Benchmark name: dem.
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

/// Reads the scene (or the built-in one); on error prints it and returns exit code 2.
fn load(scene: Option<&Path>) -> Result<(Scene, String), ExitCode> {
    let (text, source) = match scene {
        Some(path) => match std::fs::read_to_string(path) {
            Ok(t) => (t, path.to_path_buf()),
            Err(e) => {
                eprintln!("error: {}: cannot read the scene file: {e}", path.display());
                return Err(ExitCode::from(2));
            }
        },
        None => (DEFAULT_SCENE.to_string(), PathBuf::from(DEFAULT_SCENE_NAME)),
    };
    match Scene::parse(&text, &source) {
        Ok(s) => Ok((s, text)),
        Err(e) => {
            eprintln!("error: {e}");
            Err(ExitCode::from(2))
        }
    }
}

fn check(scene: Option<&Path>) -> ExitCode {
    let (scene, _) = match load(scene) {
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
    let (scene, text) = match load(scene_path) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let out_dir = output.unwrap_or_else(|| {
        let name = scene_path
            .and_then(|p| p.file_stem())
            .map(|s| s.to_string_lossy().into_owned());
        PathBuf::from("silt-output").join(name.unwrap_or_else(|| "default-bed".into()))
    });
    if let Some(t) = until {
        if !(t.is_finite() && t >= 0.0) {
            eprintln!("error: --until must be a time >= 0, got {t}");
            return ExitCode::from(2);
        }
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
        n,
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
        Err(e) => {
            eprintln!("error: {e}");
            eprintln!(
                "the output written before the failure is kept in {}",
                out_dir.display()
            );
            ExitCode::from(1)
        }
    }
}
