//! The `silt` command: run a scene, check it, run validation cases and benchmarks.

use clap::{Parser, Subcommand};
use silt_core::model::Model;
use silt_io::run::format_time;
use silt_io::scenes::{overrides, read_scene, Override, Scene, SceneKind};
use silt_parallel::Comm;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether this process prints (rank 0 of a distributed run, or the only one): the other ranks of
/// `mpirun -np N silt run` stay silent but for their own failures.
static PRINTS: AtomicBool = AtomicBool::new(true);

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
        /// Change a key of the scene before it is read, e.g. `--set fluid.grid.cells=[64,64,64]` or
        /// `--set particles.0.velocity=[0,0,-1]` (repeatable; the scene written to the output
        /// directory has the changes, and `--resume` needs the same ones).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Remove a key of the scene before it is read, e.g. `--unset rods.relative_tolerance`
        /// (repeatable; applied after the `--set` changes).
        #[arg(long = "unset", value_name = "KEY")]
        unset: Vec<String>,
    },
    /// Check a scene and print derived quantities (particles: contact time, overlaps, Stokes numbers,
    /// memory; fluid: grid, time step and its limits, Reynolds number, memory; fibers: bending time
    /// and the step against it, solver, B and shear numbers; rods: stiffnesses, frequencies, the
    /// explicit stability limit and the recommended integrator).
    Check {
        scene: Option<PathBuf>,
        /// Change a key of the scene before it is read (as for `run`).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Remove a key of the scene before it is read (as for `run`).
        #[arg(long = "unset", value_name = "KEY")]
        unset: Vec<String>,
    },
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
        /// Only these runs of a case made of long runs (comma-separated; the sheared bed: a1, a2, a9,
        /// a10, a10m, a10-coarse), so that it can be run in parts.
        #[arg(long, value_delimiter = ',')]
        runs: Option<Vec<String>>,
    },
    /// Benchmarks: `silt bench dem` runs the LAMMPS settling problem, `silt bench fluid` the Taylor–Green
    /// and channel flows at 128^3, `silt bench ibm` the coupled spheres (ten Cate E3, 500 spheres),
    /// `silt bench fibers` the RPY product (beside pystokes when installed) and constrained fiber steps,
    /// `silt bench rods` Cosserat rods (beside PyElastica when installed), `silt bench sheared-bed` the
    /// seed's sheared bed (A10 at D/h = 8) split into its parts beside the fluid alone, `silt bench mpi`
    /// the fluid on MPI ranks beside threads and CaNS (a build with `--features mpi`).
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
    // Under `mpirun` (a build with the `mpi` feature) every process of `silt run` is a rank of one
    // run. The other commands do not start MPI (`silt bench mpi` starts mpirun itself).
    let ranks_launched = launched_ranks();
    if ranks_launched.1 > 1 && !matches!(cli.command, Command::Run { .. }) {
        PRINTS.store(ranks_launched.0 == 0, Ordering::Relaxed);
        return bad_input(format!(
            "only `silt run` runs on several ranks; run this command without mpirun (it was \
             started on {} ranks)",
            ranks_launched.1
        ));
    }
    #[cfg(feature = "mpi")]
    let (_universe, comm) = if matches!(cli.command, Command::Run { .. }) {
        match silt_mpi::MpiWorld::initialize() {
            Some((universe, comm)) => (Some(universe), comm),
            None => return bad_input("MPI was initialised already"),
        }
    } else {
        (None, silt_parallel::SingleRank::comm())
    };
    #[cfg(not(feature = "mpi"))]
    let comm = silt_parallel::SingleRank::comm();
    #[cfg(not(feature = "mpi"))]
    if ranks_launched.1 > 1 {
        PRINTS.store(ranks_launched.0 == 0, Ordering::Relaxed);
        return bad_input(format!(
            "this silt was built without MPI but started on {} ranks: build it with `cargo build \
             --release -p silt-cli --features mpi` (README, \"Running on a cluster\")",
            ranks_launched.1
        ));
    }
    PRINTS.store(comm.rank() == 0, Ordering::Relaxed);
    if comm.size() > 1 {
        // A rank that panics (a bug) must not leave the others waiting for it in a collective, nor
        // wait for them in MPI_Finalize: it ends its process at once, and mpirun ends the others.
        let report = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            report(info);
            std::process::exit(101);
        }));
    }
    let threads = match cli.threads {
        Some(0) => return bad_input("--threads must be at least 1"),
        Some(n) => Some(n),
        // Ranks on one machine share its cores.
        None if comm.size() > 1 => Some(threads_per_rank(comm.size())),
        None => None,
    };
    if let Some(threads) = threads {
        if let Err(e) = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build_global()
        {
            return bad_input(format!("cannot start {threads} threads: {e}"));
        }
    }
    match cli.command {
        Command::Run {
            scene,
            output,
            resume,
            until,
            quiet,
            set,
            unset,
        } => run(
            scene.as_deref(),
            (&set, &unset),
            output,
            RunOptions {
                out_dir: PathBuf::new(),
                resume,
                until,
                // Rank 0 shows the progress of a distributed run.
                quiet: quiet || comm.rank() != 0,
                comm,
            },
        ),
        Command::Check { scene, set, unset } => check(scene.as_deref(), (&set, &unset)),
        Command::DefaultScene => {
            print!("{DEFAULT_SCENE}");
            ExitCode::SUCCESS
        }
        Command::Validate {
            case,
            output,
            quick,
            list,
            runs,
        } => validate::run(case.as_deref(), &output, quick, list, runs.as_deref()),
        Command::Bench { name, quick } => validate::bench(&name, quick),
    }
}

/// The `--set` and `--unset` arguments.
type Changes<'a> = (&'a [String], &'a [String]);

/// The scene text with the `--set` and `--unset` changes applied, and where it came from (the
/// built-in scene without a path); on error prints it and returns exit code 2.
fn scene_text(scene: Option<&Path>, (set, unset): Changes) -> Result<(String, PathBuf), ExitCode> {
    let (text, source) = match scene {
        Some(path) => (read_scene(path).map_err(bad_input)?, path.to_path_buf()),
        None => (DEFAULT_SCENE.to_string(), PathBuf::from(DEFAULT_SCENE_NAME)),
    };
    let mut overrides: Vec<Override> = set
        .iter()
        .map(|s| Override::parse(s).map_err(|e| bad_input(format!("--set {e}"))))
        .collect::<Result<_, _>>()?;
    overrides.extend(unset.iter().map(|key| Override::remove(key.trim())));
    let text = overrides::apply(&text, &source, &overrides).map_err(bad_input)?;
    Ok((text, source))
}

/// Prints a bad-input error (rank 0 only: every rank finds the same); exit code 2.
fn bad_input(error: impl std::fmt::Display) -> ExitCode {
    if PRINTS.load(Ordering::Relaxed) {
        eprintln!("error: {error}");
    }
    ExitCode::from(2)
}

/// (rank, ranks) of this process as mpirun (Open MPI, or PMI: MPICH, Slurm) started it; (0, 1) when
/// it was started alone.
fn launched_ranks() -> (usize, usize) {
    let read = |names: &[&str]| {
        names
            .iter()
            .find_map(|name| std::env::var(name).ok()?.parse::<usize>().ok())
    };
    let size = read(&["OMPI_COMM_WORLD_SIZE", "PMI_SIZE"]).unwrap_or(1);
    let rank = read(&["OMPI_COMM_WORLD_RANK", "PMI_RANK"]).unwrap_or(0);
    (rank, size)
}

/// Worker threads of each of `ranks` ranks: the machine's cores shared among the ranks that run on
/// it (Open MPI's and MPICH's local rank counts, else all ranks), at least one.
fn threads_per_rank(ranks: usize) -> usize {
    let local = ["OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS"]
        .iter()
        .find_map(|name| std::env::var(name).ok()?.parse::<usize>().ok())
        .unwrap_or(ranks)
        .max(1);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    (cores / local).max(1)
}

fn check(scene_path: Option<&Path>, changes: Changes) -> ExitCode {
    let (text, source) = match scene_text(scene_path, changes) {
        Ok(s) => s,
        Err(code) => return code,
    };
    match Scene::parse(&text, &source) {
        Ok(Scene::Particles(s)) => check_scene(&s),
        Ok(Scene::Fluid(s)) => check_scene(&s),
        Ok(Scene::Coupled(s)) => check_scene(&s),
        Ok(Scene::Fibers(s)) => check_scene(&s),
        Ok(Scene::Rods(s)) => check_scene(&s),
        Err(e) => bad_input(e),
    }
}

/// Prints the scene's report (exit code 0), or the scene's error (exit code 2).
fn check_scene<K: SceneKind>(kind: &K) -> ExitCode {
    match kind.check() {
        Ok(report) => {
            print!("{report}");
            println!("ok: the scene is valid");
            ExitCode::SUCCESS
        }
        Err(e) => bad_input(e),
    }
}

/// How `silt run` was asked to run.
struct RunOptions {
    out_dir: PathBuf,
    resume: bool,
    until: Option<f64>,
    quiet: bool,
    /// The ranks of the run (one without mpirun).
    comm: Comm,
}

fn run(
    scene_path: Option<&Path>,
    changes: Changes,
    output: Option<PathBuf>,
    mut options: RunOptions,
) -> ExitCode {
    if let Some(t) = options.until {
        if !(t.is_finite() && t >= 0.0) {
            return bad_input(format!("--until must be a time >= 0, got {t}"));
        }
    }
    let (text, source) = match scene_text(scene_path, changes) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let out_dir = output.unwrap_or_else(|| {
        let name = scene_path.and_then(|p| p.file_stem()).map_or_else(
            || "default-bed".into(),
            |s| s.to_string_lossy().into_owned(),
        );
        PathBuf::from("silt-output").join(name)
    });
    options.out_dir = out_dir;
    match Scene::parse(&text, &source) {
        Ok(Scene::Particles(s)) => run_scene(&s, &text, &options),
        Ok(Scene::Fluid(s)) => run_scene(&s, &text, &options),
        Ok(Scene::Coupled(s)) => run_scene(&s, &text, &options),
        Ok(Scene::Fibers(s)) => run_scene(&s, &text, &options),
        Ok(Scene::Rods(s)) => run_scene(&s, &text, &options),
        Err(e) => bad_input(e),
    }
}

/// Builds, starts (or resumes) and runs a scene of any kind, with a progress display and a summary.
fn run_scene<K: SceneKind>(kind: &K, text: &str, o: &RunOptions) -> ExitCode {
    let mut sim = match silt_io::scenes::simulation_on(kind, text, &o.out_dir, o.resume, &o.comm) {
        Ok(sim) => sim,
        Err(e) => {
            report_failure(&e, &o.comm);
            return ExitCode::from(e.exit_code());
        }
    };
    let describe = kind.describe(&sim.model);
    let size = sim.model.size();
    let ranks = match o.comm.size() {
        1 => String::new(),
        n => format!(" on {n} ranks"),
    };
    if !o.quiet {
        eprintln!(
            "silt: {describe}{ranks}, from t = {} to t = {}, output in {}",
            format_time(sim.model.time()),
            format_time(sim.stop_time(o.until)),
            o.out_dir.display()
        );
    }
    let mut display = progress::Display::new(o.quiet, std::io::stderr().is_terminal(), size);
    let result = sim.run(o.until, &mut |p| display.update(p));
    display.finish();
    match result {
        Ok(summary) => {
            if !o.quiet {
                let seconds = summary.wall_seconds.max(1e-12);
                let (items, unit) = size;
                let parts: Vec<String> = summary
                    .timers
                    .iter()
                    .map(|(name, s)| format!("{name} {:.1}%", 100.0 * s / seconds))
                    .collect();
                let parts = if parts.is_empty() {
                    String::new()
                } else {
                    format!("; {}", parts.join(", "))
                };
                eprintln!(
                    "silt: done: t = {} after {} steps in {:.3} s ({:.3} us per {unit}-step{parts}); {} frames in {}",
                    format_time(summary.time),
                    summary.steps,
                    summary.wall_seconds,
                    1e6 * summary.wall_seconds / (summary.steps.max(1) as f64 * items.max(1) as f64),
                    summary.frames,
                    o.out_dir.display()
                );
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            report_failure(&e, &o.comm);
            if o.comm.rank() == 0 {
                eprintln!(
                    "the output written before the failure (the last good frame and checkpoint) is kept in {}",
                    o.out_dir.display()
                );
            }
            ExitCode::from(e.exit_code())
        }
    }
}

/// Prints why the run stopped: rank 0 for all (every rank meets the same failure of the model or
/// the scene), and a rank whose own file or checkpoint failed, named.
fn report_failure(e: &silt_io::run::RunError, comm: &Comm) {
    let own = !matches!(e, silt_io::run::RunError::OtherRank(_));
    match (comm.rank(), comm.size()) {
        (0, _) => eprintln!("error: {e}"),
        (rank, size)
            if own
                && matches!(
                    e,
                    silt_io::run::RunError::Io { .. } | silt_io::run::RunError::Checkpoint(_)
                ) =>
        {
            eprintln!("error (rank {rank} of {size}): {e}")
        }
        _ => {}
    }
}
