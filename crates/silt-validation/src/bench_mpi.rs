//! `silt bench mpi` (issue 23): the fluid's step on MPI ranks beside its step on threads and beside
//! CaNS (Costa 2018) on the same ranks, on the two problems of `silt bench fluid` at 128^3 with
//! explicit viscous terms (as CaNS is run): (a) the Taylor–Green vortex, (b) the channel held at its
//! flow rate; and the weak scaling of the channel (128 x 128 x 64 cells per rank on 1, 2 and 4
//! ranks; 4 oversubscribe a 2-core machine: reported, not judged); and a fiber suspension (every rank
//! holding all the beads, the RPY products shared out by rows) on threads and on ranks; and (c) the
//! LAMMPS settling bed (examples/lammps-settle.toml, 10,164 spheres split into slabs) settled once,
//! then timed on threads and ranks beside LAMMPS on as many ranks in the same run (`lmp` on the
//! path, its input `LAMMPS_SETTLE_INPUT`, by default ../shared/peers/lammps-settle.in).
//!
//! Every figure is a `silt run` of a scene as a user runs it (`mpirun -np N silt run`), timed by the
//! run itself ("after N steps in X s", the step loop without the set-up): the seconds per step are
//! the difference of a long and a short run over the difference of their steps, so that the first
//! and last frames and checkpoints cancel, the best of a few rounds (the machine's speed drifts).

use std::path::{Path, PathBuf};
use std::process::Command;

/// What to run.
#[derive(Clone, Debug)]
pub struct MpiBenchOptions {
    /// Cells per axis of the strong-scaling problems (the weak scaling's per rank: n x n x n/2).
    pub cells: usize,
    /// Run the strong scaling of the fluid (Taylor–Green and the channel, beside CaNS).
    pub strong: bool,
    /// Steps of the short and the long run of each measurement.
    pub steps: [u64; 2],
    pub rounds: usize,
    /// CaNS's run script (`run_case.sh <tgv|channel> <ranks>` printing `seconds_per_step=<x>`), if
    /// installed: `CANS_RUN_CASE`.
    pub cans: Option<PathBuf>,
    /// Also the weak scaling.
    pub weak: bool,
    /// Fibers of 20 beads in the fiber suspension (0: not run).
    pub fibers: usize,
    /// The LAMMPS bed: settling steps, then the short and long timed legs (0 settling: not run).
    pub bed_steps: [u64; 3],
    /// LAMMPS's input of the bed, if `lmp` is to be run beside it.
    pub lammps_input: Option<PathBuf>,
    /// The sheared bed (A10 of validation/sheared-bed at D/h = 8): steps to settle and to start the
    /// flow, then the short and long timed legs (0 settling: not run).
    pub sheared_bed_steps: [u64; 3],
}

/// The parts of `silt bench mpi`, as `SILT_BENCH_MPI_PARTS` names them (comma-separated; all by default).
pub const PARTS: [&str; 5] = ["fluid", "weak", "fibers", "lammps-bed", "sheared-bed"];

impl MpiBenchOptions {
    /// The default benchmark with only the parts listed in `parts` (comma-separated names of [`PARTS`]).
    pub fn with_parts(parts: &str) -> Result<Self, String> {
        let wanted: Vec<&str> = parts.split(',').map(str::trim).collect();
        if let Some(bad) = wanted.iter().find(|p| !PARTS.contains(p)) {
            return Err(format!(
                "SILT_BENCH_MPI_PARTS: no part is named \"{bad}\"; the parts: {}",
                PARTS.join(", ")
            ));
        }
        let has = |part: &str| wanted.contains(&part);
        let mut options = MpiBenchOptions {
            strong: has("fluid"),
            weak: has("weak"),
            ..Self::default()
        };
        if !has("fibers") {
            options.fibers = 0;
        }
        if !has("lammps-bed") {
            options.bed_steps[0] = 0;
        }
        if !has("sheared-bed") {
            options.sheared_bed_steps[0] = 0;
        }
        Ok(options)
    }
}

impl Default for MpiBenchOptions {
    fn default() -> Self {
        MpiBenchOptions {
            cells: 128,
            strong: true,
            steps: [5, 25],
            rounds: 2,
            cans: std::env::var_os("CANS_RUN_CASE").map(PathBuf::from),
            weak: true,
            fibers: 200,
            bed_steps: [20_000, 200, 2_200],
            lammps_input: Some(std::env::var_os("LAMMPS_SETTLE_INPUT").map_or_else(
                || PathBuf::from("../shared/peers/lammps-settle.in"),
                PathBuf::from,
            )),
            // 2.0 of dry settling and 0.05 of the mobilisation at dt = 5e-4.
            sheared_bed_steps: [4_100, 5, 25],
        }
    }
}

impl MpiBenchOptions {
    /// A small version for a smoke test.
    pub fn quick() -> Self {
        MpiBenchOptions {
            cells: 32,
            strong: true,
            steps: [2, 6],
            rounds: 1,
            cans: None,
            weak: false,
            fibers: 6,
            bed_steps: [50, 10, 30],
            lammps_input: None,
            sheared_bed_steps: [0, 0, 0],
        }
    }
}

/// How a run is launched.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Launch {
    /// One process with this many threads.
    Threads(usize),
    /// `mpirun -np N`, one thread per rank.
    Ranks(usize),
}

impl std::fmt::Display for Launch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Launch::Threads(1) => write!(f, "1 process, 1 thread"),
            Launch::Threads(n) => write!(f, "1 process, {n} threads"),
            Launch::Ranks(n) => write!(f, "mpirun -np {n}, 1 thread each"),
        }
    }
}

/// One measured configuration.
#[derive(Clone, Debug)]
pub struct MpiBenchRow {
    pub case: &'static str,
    pub cells: [usize; 3],
    pub launch: Launch,
    pub seconds_per_step: f64,
    /// CaNS on the same number of ranks, if measured.
    pub cans: Option<f64>,
}

/// What `silt bench mpi` measured.
#[derive(Clone, Debug)]
pub struct MpiBenchReport {
    pub machine: String,
    pub options: MpiBenchOptions,
    pub strong: Vec<MpiBenchRow>,
    pub weak: Vec<MpiBenchRow>,
    /// Why CaNS was not measured, if it was not.
    pub cans_note: Option<String>,
    /// The fiber suspension: seconds per step on each launch.
    pub fibers: Vec<(Launch, f64)>,
    /// The LAMMPS bed: seconds per step on each launch, and LAMMPS's on as many ranks.
    pub bed: Vec<(Launch, f64, Option<f64>)>,
    /// Why LAMMPS was not measured, if it was not.
    pub lammps_note: Option<String>,
    /// The sheared bed: seconds per coupled step on each launch.
    pub sheared_bed: Vec<(Launch, f64)>,
}

/// The fiber suspension: `count` stiff fibers of 20 beads at random in a cube holding 50 per
/// 40^3 (as examples/fiber-suspension-shear.toml), simple shear, RPY, conjugate-gradient
/// multipliers (tolerance 1e-10), dt 5e-4.
fn fiber_suspension(count: usize, steps: u64) -> String {
    let half = 20.0 * (count as f64 / 50.0).cbrt();
    let dt = 5e-4;
    format!(
        "[fibers]\nbead_radius = 0.5\nviscosity = 1.0\nbending_rigidity = 2000.0\n\
         hydrodynamics = \"rpy\"\nsolver = \"conjugate-gradient\"\nsolver_tolerance = 1e-10\n\
         time_step = {dt}\nend_time = {}\n\n[fibers.flow]\ntype = \"simple-shear\"\nshear_rate = 1.0\n\n\
         [[fibers.fiber]]\nbeads = 20\ncount = {count}\nregion = {{ min = [-{half}, -{half}, -{half}], \
         max = [{half}, {half}, {half}] }}\nseed = 1\n\n[fibers.output]\ninterval = {}\nvtk = false\n",
        dt * steps as f64,
        dt * steps as f64
    )
}

/// The Taylor–Green scene: [0, 2 pi)^3, Re = 1600, explicit viscous terms, dt = 0.2 h (CFL ~ 0.4).
fn taylor_green(n: usize, steps: u64) -> String {
    let h = 2.0 * std::f64::consts::PI / n as f64;
    let dt = 0.2 * h;
    format!(
        "[fluid]\ncells = [{n}, {n}, {n}]\nspacing = {h}\nviscosity = 0.000625\nviscous = \"explicit\"\n\
         time_step = {dt}\nend_time = {}\ninitial = {{ type = \"taylor-green-3d\", amplitude = 1.0 }}\n\n\
         [fluid.output]\ninterval = {}\nvtk = false\n",
        dt * steps as f64,
        dt * steps as f64
    )
}

/// The channel scene: walls at z = 0 and n_z h, h = 1/n, bulk velocity 1, Re_b = 5600, explicit
/// viscous terms, the laminar profile, dt = h / 3 (CFL 0.5 at the centreline's 1.5).
fn channel(cells: [usize; 3], steps: u64) -> String {
    let h = 1.0 / cells[0] as f64;
    let dt = h / 3.0;
    format!(
        "[fluid]\ncells = [{}, {}, {}]\nspacing = {h}\nviscosity = {}\nviscous = \"explicit\"\n\
         time_step = {dt}\nend_time = {}\ninitial = {{ type = \"poiseuille\" }}\n\n\
         [fluid.boundaries]\nz_low = {{ type = \"no-slip\" }}\nz_high = {{ type = \"no-slip\" }}\n\n\
         [fluid.driving]\ntype = \"flow-rate\"\naxis = \"x\"\nbulk_velocity = 1.0\n\n\
         [fluid.output]\ninterval = {}\nvtk = false\n",
        cells[0],
        cells[1],
        cells[2],
        1.0 / 5600.0,
        dt * steps as f64,
        dt * steps as f64
    )
}

/// Runs `scene` as `launch` and returns (steps, seconds of the step loop) from the run's summary.
fn timed_run(silt: &Path, launch: Launch, scene: &str, dir: &Path) -> Result<(u64, f64), String> {
    timed_leg(silt, launch, scene, dir, None)
}

/// [`timed_run`], continuing the run in `resume` (copied first) when given.
fn timed_leg(
    silt: &Path,
    launch: Launch,
    scene: &str,
    dir: &Path,
    resume: Option<&Path>,
) -> Result<(u64, f64), String> {
    let file = dir.join("scene.toml");
    std::fs::write(&file, scene).map_err(|e| format!("{}: {e}", file.display()))?;
    let out = dir.join("out");
    if let Some(from) = resume {
        let _ = std::fs::remove_dir_all(&out);
        copy_folder(from, &out)?;
    }
    let mut command = match launch {
        Launch::Threads(n) => {
            let mut c = Command::new(silt);
            c.args(["--threads", &n.to_string()]);
            c
        }
        Launch::Ranks(n) => {
            let mut c = Command::new("mpirun");
            c.args(["--oversubscribe", "-np", &n.to_string()]).arg(silt);
            c.args(["--threads", "1"]);
            c
        }
    };
    command.arg("run").arg(&file).arg("-o").arg(&out);
    if resume.is_some() {
        command.arg("--resume");
    }
    command
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
    let output = command
        .output()
        .map_err(|e| format!("cannot start {launch}: {e}"))?;
    let stderr = String::from_utf8_lossy(&output.stderr);
    if !output.status.success() {
        return Err(format!("{launch}: the run failed: {stderr}"));
    }
    // "silt: done: t = ... after N steps in X s (...)"
    let line = stderr
        .lines()
        .find(|l| l.starts_with("silt: done"))
        .ok_or_else(|| format!("{launch}: no summary in the output: {stderr}"))?;
    let after = line
        .split(" after ")
        .nth(1)
        .ok_or_else(|| format!("unexpected summary: {line}"))?;
    let mut words = after.split_whitespace();
    let steps: u64 = words
        .next()
        .and_then(|w| w.parse().ok())
        .ok_or_else(|| format!("unexpected summary: {line}"))?;
    let seconds: f64 = words
        .nth(2)
        .and_then(|w| w.parse().ok())
        .ok_or_else(|| format!("unexpected summary: {line}"))?;
    Ok((steps, seconds))
}

/// Copies the files of folder `from` into a new folder `to` (one level of subfolders).
fn copy_folder(from: &Path, to: &Path) -> Result<(), String> {
    let fail =
        |e: std::io::Error| format!("cannot copy {} to {}: {e}", from.display(), to.display());
    std::fs::create_dir_all(to).map_err(fail)?;
    for entry in std::fs::read_dir(from).map_err(fail)? {
        let entry = entry.map_err(fail)?;
        let target = to.join(entry.file_name());
        if entry.file_type().map_err(fail)?.is_dir() {
            copy_folder(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), target).map_err(fail)?;
        }
    }
    Ok(())
}

/// The LAMMPS bed (examples/lammps-settle.toml) to `steps` steps of 2e-4, writing only what a
/// restart needs.
fn lammps_bed_scene(steps: u64) -> Result<String, String> {
    let text = include_str!("../../../examples/lammps-settle.toml");
    let end = format!("end_time = {}", steps as f64 * 2.0e-4);
    let replaced = text
        .replace("end_time = 4.0", &end)
        .replace("interval = 0.2", "interval = 1000.0\nvtk = false");
    if !replaced.contains(&end) || !replaced.contains("vtk = false") {
        return Err(
            "examples/lammps-settle.toml no longer has the expected end_time and interval".into(),
        );
    }
    Ok(replaced)
}

/// Case A10 of the sheared-bed validation at its resolution to `steps` steps of 5e-4, writing only what
/// a restart needs.
fn sheared_bed_scene(steps: u64) -> Result<String, String> {
    use silt_io::scenes::Override;
    let case = crate::case::CaseFiles::open("sheared-bed", false)?;
    let changes = [
        Override::new("simulation.end_time", steps as f64 * 5e-4),
        Override::new("output.interval", 1000.0),
        Override::new("output.checkpoint_interval", 1000.0),
        Override::new("output.vtk", false),
        Override::new("fluid.output.vtk_interval", 1000.0),
    ];
    Ok(case.scene_text("a10.toml", &changes)?.0)
}

/// The LAMMPS bed settled once (2 threads), then timed from there on each launch: (long leg - short
/// leg) / their steps' difference, the best of the rounds.
fn bed_seconds_per_step(
    silt: &Path,
    options: &MpiBenchOptions,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<(Launch, f64)>, String> {
    settled_seconds_per_step(
        silt,
        options,
        "LAMMPS bed",
        options.bed_steps,
        &lammps_bed_scene,
        progress,
    )
}

/// `make(steps)`'s scene run once to `steps[0]` steps (2 threads), then timed from there on each
/// launch: (long leg - short leg) / their steps' difference, the best of the rounds.
fn settled_seconds_per_step(
    silt: &Path,
    options: &MpiBenchOptions,
    name: &str,
    [settle, short, long]: [u64; 3],
    make: &dyn Fn(u64) -> Result<String, String>,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<(Launch, f64)>, String> {
    let dir = tempfile::tempdir().map_err(|e| format!("cannot make a folder: {e}"))?;
    let settled = dir.path().join("settled");
    std::fs::create_dir_all(&settled).map_err(|e| format!("{e}"))?;
    timed_leg(silt, Launch::Threads(2), &make(settle)?, &settled, None)?;
    progress(&format!("{name} settled ({settle} steps)"));
    let mut rows = Vec::new();
    for launch in [
        Launch::Threads(1),
        Launch::Threads(2),
        Launch::Ranks(1),
        Launch::Ranks(2),
    ] {
        let mut best = f64::INFINITY;
        for _ in 0..options.rounds {
            let leg = |steps: u64| {
                let leg_dir = dir.path().join("leg");
                let _ = std::fs::remove_dir_all(&leg_dir);
                std::fs::create_dir_all(&leg_dir).map_err(|e| format!("{e}"))?;
                timed_leg(
                    silt,
                    launch,
                    &make(settle + steps)?,
                    &leg_dir,
                    Some(&settled.join("out")),
                )
            };
            let (short_steps, short_seconds) = leg(short)?;
            let (long_steps, long_seconds) = leg(long)?;
            if long_steps <= short_steps {
                return Err(format!("{launch}: {long_steps} steps after {short_steps}"));
            }
            best = best
                .min((long_seconds - short_seconds).max(0.0) / (long_steps - short_steps) as f64);
        }
        progress(&format!("{name}, {launch}: {:.3} ms/step", 1e3 * best));
        rows.push((launch, best));
    }
    Ok(rows)
}

/// LAMMPS's seconds per step of the timed phase of its settling input on `ranks` ranks ("Loop time"
/// of the last run, 2,000 steps).
fn lammps(input: &Path, ranks: usize) -> Result<f64, String> {
    let dir = tempfile::tempdir().map_err(|e| format!("cannot make a folder: {e}"))?;
    let input = std::fs::canonicalize(input)
        .map_err(|e| format!("LAMMPS input {}: {e}", input.display()))?;
    let mut command = if ranks == 1 {
        Command::new("lmp")
    } else {
        let mut c = Command::new("mpirun");
        c.args(["--oversubscribe", "-np", &ranks.to_string(), "lmp"]);
        c
    };
    let output = command
        .arg("-in")
        .arg(&input)
        .args(["-var", "nx", "22", "-log", "log.lammps"])
        .current_dir(dir.path())
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .output()
        .map_err(|e| format!("cannot start lmp: {e}"))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    // "Loop time of 3.80083 on 1 procs for 2000 steps with 10164 atoms"
    let (seconds, steps) = stdout
        .lines()
        .rev()
        .find_map(|l| {
            let rest = l.strip_prefix("Loop time of ")?;
            let mut words = rest.split_whitespace();
            let seconds: f64 = words.next()?.parse().ok()?;
            let steps: f64 = words.nth(4)?.parse().ok()?;
            Some((seconds, steps))
        })
        .ok_or_else(|| {
            format!(
                "lmp on {ranks} rank(s): no \"Loop time\" in its output: {}",
                String::from_utf8_lossy(&output.stderr)
            )
        })?;
    Ok(seconds / steps)
}

/// Seconds per step of `make(steps)` run as `launch`: (long - short) / (their steps' difference),
/// the best of the rounds.
fn seconds_per_step(
    silt: &Path,
    launch: Launch,
    make: &dyn Fn(u64) -> String,
    options: &MpiBenchOptions,
) -> Result<f64, String> {
    let dir = tempfile::tempdir().map_err(|e| format!("cannot make a folder: {e}"))?;
    let mut best = f64::INFINITY;
    for _ in 0..options.rounds {
        let (short_steps, short) = timed_run(silt, launch, &make(options.steps[0]), dir.path())?;
        let (long_steps, long) = timed_run(silt, launch, &make(options.steps[1]), dir.path())?;
        if long_steps <= short_steps {
            return Err(format!("{launch}: {long_steps} steps after {short_steps}"));
        }
        best = best.min((long - short).max(0.0) / (long_steps - short_steps) as f64);
    }
    Ok(best)
}

/// CaNS's seconds per step of `case` ("tgv" or "channel") on `ranks` ranks from its run script.
fn cans(script: &Path, case: &str, ranks: usize) -> Result<f64, String> {
    let output = Command::new(script)
        .args([case, &ranks.to_string()])
        .output()
        .map_err(|e| format!("cannot start {}: {e}", script.display()))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    stdout
        .split_whitespace()
        .find_map(|w| w.strip_prefix("seconds_per_step=")?.parse().ok())
        .ok_or_else(|| {
            format!(
                "{} {case} {ranks}: no seconds_per_step in its output: {stdout}{}",
                script.display(),
                String::from_utf8_lossy(&output.stderr)
            )
        })
}

/// Runs the benchmark with the MPI-enabled `silt` at `silt`.
pub fn run(
    silt: &Path,
    options: &MpiBenchOptions,
    progress: &mut dyn FnMut(&str),
) -> Result<MpiBenchReport, String> {
    let n = options.cells;
    let mut strong = Vec::new();
    let mut cans_note = None;
    type Make = Box<dyn Fn(u64) -> String>;
    let cases: [(&'static str, &'static str, Make); 2] = [
        ("Taylor–Green", "tgv", Box::new(move |s| taylor_green(n, s))),
        (
            "channel",
            "channel",
            Box::new(move |s| channel([n, n, n], s)),
        ),
    ];
    for (case, cans_case, make) in cases.iter().filter(|_| options.strong) {
        for launch in [
            Launch::Threads(1),
            Launch::Threads(2),
            Launch::Ranks(1),
            Launch::Ranks(2),
        ] {
            let seconds = seconds_per_step(silt, launch, make.as_ref(), options)?;
            let peer = match (launch, &options.cans) {
                (Launch::Ranks(r), Some(script)) => match cans(script, cans_case, r) {
                    Ok(s) => Some(s),
                    Err(e) => {
                        cans_note.get_or_insert(e);
                        None
                    }
                },
                _ => None,
            };
            progress(&format!("{case} {n}^3, {launch}: {seconds:.4} s/step"));
            strong.push(MpiBenchRow {
                case,
                cells: [n; 3],
                launch,
                seconds_per_step: seconds,
                cans: peer,
            });
        }
    }
    if options.cans.is_none() && options.strong {
        cans_note = Some(
            "CaNS not measured: set CANS_RUN_CASE to its run script (docs/performance.md says how \
             to build it)"
                .into(),
        );
    }
    let mut weak = Vec::new();
    if options.weak {
        for ranks in [1, 2, 4] {
            let cells = [n, n, n / 2 * ranks];
            let seconds = seconds_per_step(
                silt,
                Launch::Ranks(ranks),
                &move |s| channel(cells, s),
                options,
            )?;
            progress(&format!(
                "weak channel {cells:?}, {ranks} ranks: {seconds:.4} s/step"
            ));
            weak.push(MpiBenchRow {
                case: "channel",
                cells,
                launch: Launch::Ranks(ranks),
                seconds_per_step: seconds,
                cans: None,
            });
        }
    }
    let mut fibers = Vec::new();
    if options.fibers > 0 {
        let count = options.fibers;
        for launch in [
            Launch::Threads(1),
            Launch::Threads(2),
            Launch::Ranks(1),
            Launch::Ranks(2),
        ] {
            let seconds =
                seconds_per_step(silt, launch, &move |s| fiber_suspension(count, s), options)?;
            progress(&format!(
                "fiber suspension, {count} x 20 beads, {launch}: {seconds:.4} s/step"
            ));
            fibers.push((launch, seconds));
        }
    }
    let mut bed = Vec::new();
    let mut lammps_note = None;
    if options.bed_steps[0] > 0 {
        for (launch, seconds) in bed_seconds_per_step(silt, options, progress)? {
            let peer = match (launch, &options.lammps_input) {
                (Launch::Ranks(r), Some(input)) => match lammps(input, r) {
                    Ok(s) => {
                        progress(&format!("LAMMPS on {r} rank(s): {:.3} ms/step", 1e3 * s));
                        Some(s)
                    }
                    Err(e) => {
                        lammps_note.get_or_insert(e);
                        None
                    }
                },
                _ => None,
            };
            bed.push((launch, seconds, peer));
        }
        if options.lammps_input.is_none() {
            lammps_note = Some("LAMMPS not run (the quick benchmark)".into());
        }
    }
    let mut sheared_bed = Vec::new();
    if options.sheared_bed_steps[0] > 0 {
        sheared_bed = settled_seconds_per_step(
            silt,
            options,
            "sheared bed A10",
            options.sheared_bed_steps,
            &sheared_bed_scene,
            progress,
        )?;
    }
    Ok(MpiBenchReport {
        machine: crate::bench_dem::machine(),
        options: options.clone(),
        strong,
        weak,
        cans_note,
        fibers,
        bed,
        lammps_note,
        sheared_bed,
    })
}

impl MpiBenchReport {
    /// The tables of docs/performance.md.
    pub fn table(&self) -> String {
        let mut out = format!(
            "{}; best of {} round(s)\n",
            self.machine, self.options.rounds
        );
        if !self.strong.is_empty() {
            out.push_str(&format!(
                "\nThe fluid, explicit viscous terms; seconds per step: ({} - {} steps) / {}\n\n\
                 | case | cells | launch | s/step | speed-up over 1 thread | CaNS s/step | Silt / CaNS |\n\
                 |---|---|---|---|---|---|---|\n",
                self.options.steps[1],
                self.options.steps[0],
                self.options.steps[1] - self.options.steps[0],
            ));
        }
        for row in &self.strong {
            let serial = self
                .strong
                .iter()
                .find(|r| r.case == row.case && r.launch == Launch::Threads(1))
                .map_or(f64::NAN, |r| r.seconds_per_step);
            let (cans, ratio) = match row.cans {
                Some(c) => (
                    format!("{c:.4}"),
                    format!("{:.2}", row.seconds_per_step / c),
                ),
                None => ("-".into(), "-".into()),
            };
            out.push_str(&format!(
                "| {} | {}^3 | {} | {:.4} | {:.2} | {cans} | {ratio} |\n",
                row.case,
                row.cells[0],
                row.launch,
                row.seconds_per_step,
                serial / row.seconds_per_step
            ));
        }
        if let Some(note) = &self.cans_note {
            out.push_str(&format!("\n{note}\n"));
        }
        // The targets of issue 23 at 2 ranks.
        for case in ["Taylor–Green", "channel"] {
            let find = |launch| {
                self.strong
                    .iter()
                    .find(|r| r.case == case && r.launch == launch)
            };
            if let (Some(ranks), Some(threads)) = (find(Launch::Ranks(2)), find(Launch::Threads(2)))
            {
                out.push_str(&format!(
                    "\n{case}: 2 ranks / 2 threads = {:.2} (target <= 1)",
                    ranks.seconds_per_step / threads.seconds_per_step
                ));
                if let Some(c) = ranks.cans {
                    out.push_str(&format!(
                        "; CaNS / Silt at 2 ranks = {:.2} (target >= 1.5)",
                        c / ranks.seconds_per_step
                    ));
                }
            }
        }
        out.push('\n');
        if !self.weak.is_empty() {
            out.push_str(
                "\nWeak scaling of the channel (n x n x n/2 cells per rank; 4 ranks oversubscribe this \
                 machine's cores: reported, not judged)\n\n| ranks | cells | s/step | efficiency |\n|---|---|---|---|\n",
            );
            let one = self.weak[0].seconds_per_step;
            for row in &self.weak {
                let Launch::Ranks(r) = row.launch else {
                    continue;
                };
                out.push_str(&format!(
                    "| {r} | {} x {} x {} | {:.4} | {:.2} |\n",
                    row.cells[0],
                    row.cells[1],
                    row.cells[2],
                    row.seconds_per_step,
                    one / row.seconds_per_step
                ));
            }
        }
        if let Some((_, one)) = self.fibers.first() {
            out.push_str(&format!(
                "\nFiber suspension ({} fibers of 20 beads, RPY, conjugate-gradient multipliers; every \
                 rank holds all the beads and computes its rows of the products)\n\n\
                 | launch | s/step | speed-up over 1 thread |\n|---|---|---|\n",
                self.options.fibers
            ));
            for (launch, seconds) in &self.fibers {
                out.push_str(&format!(
                    "| {launch} | {seconds:.4} | {:.2} |\n",
                    one / seconds
                ));
            }
        }
        if let Some((_, one, _)) = self.bed.first() {
            let [settle, short, long] = self.options.bed_steps;
            out.push_str(&format!(
                "\nThe LAMMPS settling bed (10,164 spheres, hertz/history, velocity Verlet; settled \
                 {settle} steps, then ({long} - {short} steps) / {}; on ranks split into slabs along x) \
                 beside LAMMPS (the timed 2,000 steps of its input, \"Loop time\")\n\n\
                 | launch | ms/step | speed-up over 1 thread | LAMMPS ms/step | Silt / LAMMPS |\n\
                 |---|---|---|---|---|\n",
                long - short
            ));
            for (launch, seconds, peer) in &self.bed {
                let (lmp, ratio) = match peer {
                    Some(p) => (format!("{:.3}", 1e3 * p), format!("{:.2}", seconds / p)),
                    None => ("-".into(), "-".into()),
                };
                out.push_str(&format!(
                    "| {launch} | {:.3} | {:.2} | {lmp} | {ratio} |\n",
                    1e3 * seconds,
                    one / seconds
                ));
            }
            if let Some(note) = &self.lammps_note {
                out.push_str(&format!("\n{note}\n"));
            }
        }
        if let Some((_, one)) = self.sheared_bed.first() {
            let [settle, short, long] = self.options.sheared_bed_steps;
            out.push_str(&format!(
                "\nThe sheared bed (A10 of validation/sheared-bed: 90 x 45 x 130 cells, D/h = 8, 266 \
                 spheres; {settle} steps of dry settling and mobilisation, then ({long} - {short} steps) \
                 / {}; on ranks the fluid and the spheres in slabs)\n\n\
                 | launch | s/step | speed-up over 1 thread |\n|---|---|---|\n",
                long - short
            ));
            for (launch, seconds) in &self.sheared_bed {
                out.push_str(&format!(
                    "| {launch} | {seconds:.4} | {:.2} |\n",
                    one / seconds
                ));
            }
        }
        if let Some(serial) = self
            .strong
            .iter()
            .find(|r| r.case == "channel" && r.launch == Launch::Threads(1))
        {
            let rate = serial.seconds_per_step / serial.cells.iter().product::<usize>() as f64;
            out.push_str(&projection_table(rate, &Network::default()));
        }
        out
    }
}

/// The projected efficiency of the 1024^3 channel and of the seed's sheared bed (its fluid, at
/// D/h = 22.7: 256 x 128 x 368 cells) at 64, 512 and 4,096 cores, from the measured compute rate.
/// The planes per rank below which a fluid scene's ranks split y as well (the rule of
/// `silt_io`'s fluid scenes, passed to `Decomposition::process_grid`).
pub const MIN_SLAB_PLANES: usize = silt_fluid::decomposition::MIN_SLAB_PLANES;

/// The most even `[p_y, p_z]` with `p_y · p_z = ranks` (`p_y <= p_z`).
fn even_grid(ranks: usize) -> [usize; 2] {
    let mut py = (ranks as f64).sqrt() as usize;
    while py > 1 && !ranks.is_multiple_of(py) {
        py -= 1;
    }
    [py.max(1), ranks / py.max(1)]
}

pub fn projection_table(seconds_per_cell_step: f64, network: &Network) -> String {
    let mut out = format!(
        "\nProjected parallel efficiency (a model: measured compute rate {:.3e} s per cell-step on one \
         core, ideal compute scaling; network {:.0} us per message, {:.1} GB/s per node of {} cores \
         into the network, {:.0} GB/s between a node's ranks; the efficiency is the compute time over \
         compute + communication, without overlap)\n\n\
         | problem | solves/step | cores | Silt slabs: ranks x threads | slabs: comm s/step | slabs: efficiency | Silt pencils: p_y x p_z | pencils: comm s/step | pencils: efficiency | Silt's choice (`process_grid`) | CaNS pencils model: efficiency |\n\
         |---|---|---|---|---|---|---|---|---|---|---|\n",
        seconds_per_cell_step,
        network.latency * 1e6,
        network.node_bandwidth / 1e9,
        network.cores_per_node,
        network.shared_memory_bandwidth / 1e9
    );
    let problems: [(&str, [usize; 3], usize); 3] = [
        ("channel 1024^3, explicit", [1024, 1024, 1024], 3),
        (
            "channel 1024^3, Crank–Nicolson direct",
            [1024, 1024, 1024],
            12,
        ),
        (
            "sheared bed's fluid, seed D/h = 22.7 (256 x 128 x 368)",
            [256, 128, 368],
            12,
        ),
    ];
    for (name, cells, solves) in problems {
        for cores in [64, 512, 4096] {
            let slabs = project_slabs(cells, cores, seconds_per_cell_step, solves, network);
            let pencils = project_pencils(cells, cores, seconds_per_cell_step, solves, network);
            let dims = even_grid(cores);
            let silt_pencils =
                project_silt_pencils(cells, dims, seconds_per_cell_step, solves, network);
            let choice = match silt_fluid::decomposition::Decomposition::process_grid(
                cores,
                cells,
                crate::bench_mpi::MIN_SLAB_PLANES,
            ) {
                Some([1, _]) => format!("slabs {:.2}", slabs.efficiency),
                Some([py, pz]) => {
                    let chosen = project_silt_pencils(
                        cells,
                        [py, pz],
                        seconds_per_cell_step,
                        solves,
                        network,
                    );
                    format!("{py} x {pz} pencils {:.2}", chosen.efficiency)
                }
                None => "none fits".into(),
            };
            out.push_str(&format!(
                "| {name} | {solves} | {cores} | {} x {} | {:.3} | {:.2} | {} x {} | {:.3} | {:.2} | {choice} | {:.2} |\n",
                slabs.ranks,
                slabs.threads,
                slabs.communication,
                slabs.efficiency,
                dims[0],
                dims[1],
                silt_pencils.communication,
                silt_pencils.efficiency,
                pencils.efficiency
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_model_costs_nothing_on_one_core_and_more_with_more_ranks() {
        let net = Network::default();
        let one = project_slabs([256, 256, 256], 1, 1e-7, 3, &net);
        assert_eq!((one.communication, one.efficiency), (0.0, 1.0));
        let mut last = 1.0;
        for cores in [2, 8, 64, 128] {
            let p = project_slabs([256, 256, 256], cores, 1e-7, 3, &net);
            assert!(p.efficiency < last, "{p:?}");
            last = p.efficiency;
        }
        // More solves per step: 18 more transposes of (P - 1)/P of the slab.
        let few = project_slabs([256, 256, 256], 64, 1e-7, 3, &net);
        let many = project_slabs([256, 256, 256], 64, 1e-7, 12, &net);
        let slab = 8.0 * 256f64.powi(3) / 64.0;
        let extra = 18.0 * slab * 63.0 / 64.0;
        assert!((many.bytes_per_rank - few.bytes_per_rank - extra).abs() < 1.0);
        assert!(many.communication > few.communication, "{few:?} {many:?}");
    }

    #[test]
    fn slabs_stop_at_two_planes_per_rank_and_use_threads_beyond() {
        let p = project_slabs([1024, 1024, 1024], 4096, 1e-7, 3, &Network::default());
        assert_eq!((p.ranks, p.threads), (512, 8));
        let bed = project_slabs([256, 128, 368], 512, 1e-7, 12, &Network::default());
        assert_eq!((bed.ranks, bed.threads), (184, 3));
    }

    #[test]
    fn silt_pencils_cost_nothing_on_one_rank_and_split_their_transposes() {
        let net = Network::default();
        let one = project_silt_pencils([256, 256, 256], [1, 1], 1e-7, 3, &net);
        assert_eq!((one.communication, one.efficiency), (0.0, 1.0));
        // 4 x 4 ranks: each solve moves 3/4 of the pencil within the row and 3/4 within the
        // column, each way; per stage 5 fields' two rows and two planes and one low row and plane
        // (as the slabs' 11 planes: 5 fields on both sides and w's low one).
        let p = project_silt_pencils([256, 256, 256], [4, 4], 1e-7, 3, &net);
        let pencil = 8.0 * 256f64.powi(3) / 16.0;
        let face = 8.0 * 256.0 * 64.0;
        let expected = 3.0 * 2.0 * pencil * 1.5 + 3.0 * (5.0 * 4.0 * face + 2.0 * face);
        assert!((p.bytes_per_rank - expected).abs() < 1.0, "{p:?}");
        assert!(p.efficiency < 1.0 && p.efficiency > 0.0);
        assert_eq!(even_grid(512), [16, 32]);
        assert_eq!(even_grid(7), [1, 7]);
    }

    #[test]
    fn an_all_to_all_moves_what_it_should() {
        // Two ranks, no latency: each sends half its slab per transpose.
        let net = Network {
            latency: 0.0,
            node_bandwidth: 1e9,
            shared_memory_bandwidth: 1e12,
            cores_per_node: 1,
        };
        let p = project_slabs([64, 64, 64], 2, 0.0, 1, &net);
        let slab = 8.0 * 64.0 * 64.0 * 32.0;
        let halos = 3.0 * 11.0 * 8.0 * 64.0 * 64.0;
        assert!((p.bytes_per_rank - (2.0 * slab / 2.0 + halos)).abs() < 1e-6);
        assert!((p.communication - p.bytes_per_rank / 1e9).abs() < 1e-12);
    }
}

/// The network and machine a projection assumes.
#[derive(Clone, Copy, Debug)]
pub struct Network {
    /// Seconds per message (latency).
    pub latency: f64,
    /// Bytes per second a node injects into the network (shared by its ranks).
    pub node_bandwidth: f64,
    /// Bytes per second a node moves between its own ranks (shared memory; shared by its ranks).
    pub shared_memory_bandwidth: f64,
    /// Cores per node.
    pub cores_per_node: usize,
}

impl Default for Network {
    /// An InfiniBand HDR100 cluster of 64-core nodes: 2 us per message, 12.5 GB/s per node into the
    /// network, 50 GB/s between the ranks of a node.
    fn default() -> Self {
        Network {
            latency: 2e-6,
            node_bandwidth: 12.5e9,
            shared_memory_bandwidth: 50e9,
            cores_per_node: 64,
        }
    }
}

impl Network {
    /// Seconds for every rank of a node to send `bytes` each, a share `remote` of it to other nodes.
    fn transfer(&self, bytes: f64, remote: f64, ranks_per_node: f64) -> f64 {
        let network = bytes * remote * ranks_per_node / self.node_bandwidth;
        let local = bytes * (1.0 - remote) * ranks_per_node / self.shared_memory_bandwidth;
        network.max(local)
    }
}

/// A projected step of the fluid on `cores` cores.
#[derive(Clone, Debug, PartialEq)]
pub struct Projection {
    pub cores: usize,
    /// Ranks and threads per rank used (slabs need at least 2 z planes per rank).
    pub ranks: usize,
    pub threads: usize,
    pub compute: f64,
    pub communication: f64,
    /// Bytes each rank sends per step.
    pub bytes_per_rank: f64,
    pub efficiency: f64,
}

/// The projected step of Silt's slab-decomposed fluid on `cores` cores for a grid of `cells`, from
/// the measured compute rate `seconds_per_cell_step` (one core) and `solves` pressure-type solves
/// per step (3: explicit or Jacobi viscous terms; 12: direct Crank–Nicolson as well):
/// each solve transposes twice (an all-to-all of the rank's slab: P - 1 messages, (P - 1)/P of its
/// bytes); each of the 3 stages sends 11 halo planes to its 2 neighbours and makes 4 small
/// all-gathers (log2 P latencies). Ranks are at most n_z / 2 (2 planes each) and n_x; beyond that
/// the cores are ranks x threads (threads assumed to scale as the ranks do). The node's injection
/// bandwidth is shared by its ranks. Efficiency: the one-core step over (cores x the step).
pub fn project_slabs(
    cells: [usize; 3],
    cores: usize,
    seconds_per_cell_step: f64,
    solves: usize,
    network: &Network,
) -> Projection {
    let n = cells.iter().product::<usize>() as f64;
    let max_ranks = (cells[2] / 2).min(cells[0]).max(1);
    let ranks = cores.min(max_ranks);
    let threads = cores.div_ceil(ranks);
    let p = ranks as f64;
    let ranks_per_node = (network.cores_per_node / threads).max(1).min(ranks) as f64;
    let slab_bytes = 8.0 * n / p;
    // Of an all-to-all, the share to other nodes; of the halos, the slabs at a node's ends.
    let remote = if ranks > 1 {
        (p - ranks_per_node) / (p - 1.0)
    } else {
        0.0
    };
    let all_to_all = if ranks > 1 {
        (p - 1.0) * network.latency
            + network.transfer(slab_bytes * (p - 1.0) / p, remote, ranks_per_node)
    } else {
        0.0
    };
    let plane_bytes = 8.0 * (cells[0] * cells[1]) as f64;
    let halo_remote = if ranks as f64 > ranks_per_node {
        1.0 / ranks_per_node
    } else {
        0.0
    };
    // Per stage 11 halo planes: w's low one after the Crank–Nicolson solve, the pressure
    // correction's two, and the two of u, v, w and p after the projection.
    let halos = if ranks > 1 {
        3.0 * (11.0 * network.latency
            + network.transfer(11.0 * plane_bytes, halo_remote, ranks_per_node))
    } else {
        0.0
    };
    let gathers = if ranks > 1 {
        3.0 * 4.0 * p.log2().ceil() * network.latency
    } else {
        0.0
    };
    let communication = 2.0 * solves as f64 * all_to_all + halos + gathers;
    let compute = seconds_per_cell_step * n / cores as f64;
    let bytes_per_rank = if ranks > 1 {
        2.0 * solves as f64 * slab_bytes * (p - 1.0) / p + 3.0 * 11.0 * plane_bytes
    } else {
        0.0
    };
    Projection {
        cores,
        ranks,
        threads,
        compute,
        communication,
        bytes_per_rank,
        efficiency: compute / (compute + communication),
    }
}

/// The model of Silt's pencils (`silt_fluid::pencil_solver`) on a process grid `dims = [p_y, p_z]`
/// of `cores` ranks (one per core): each solve transposes within the process-grid row (p_y ranks)
/// and within the column (p_z ranks), each way, each an exchange of the rank's pencil ((p - 1)/p
/// of it); each of the 3 stages exchanges the halos of 5 fields with its neighbours (u, v, w, p
/// and the pressure correction: each sends a row of `n_x · n_z / p_z` values to each of its 2
/// neighbours along y and a plane of `n_x · n_y / p_y` to each of its 2 along z) and v's low row
/// and w's low plane once more (the slabs' 11 planes per stage), and makes 4 reductions (the rows' sums
/// within the row, then a gather: 2 (p_y - 1) + log2 P latencies). The ranks of a row sit on one
/// node while it fits (consecutive ranks).
pub fn project_silt_pencils(
    cells: [usize; 3],
    dims: [usize; 2],
    seconds_per_cell_step: f64,
    solves: usize,
    network: &Network,
) -> Projection {
    let [py, pz] = dims;
    let cores = py * pz;
    let n = cells.iter().product::<usize>() as f64;
    let p = cores as f64;
    let ranks_per_node = network.cores_per_node.min(cores) as f64;
    let pencil_bytes = 8.0 * n / p;
    let transpose = |group: usize, remote: f64| {
        if group > 1 {
            let g = group as f64;
            (g - 1.0) * network.latency
                + network.transfer(pencil_bytes * (g - 1.0) / g, remote, ranks_per_node)
        } else {
            0.0
        }
    };
    // A row spans p_y consecutive ranks; a column's ranks are p_y apart.
    let row_remote = ((py as f64 - ranks_per_node) / py as f64).max(0.0);
    let column_remote = if (py as f64) < ranks_per_node {
        ((pz as f64 - ranks_per_node / py as f64) / pz as f64).max(0.0)
    } else {
        1.0
    };
    let per_solve = 2.0 * (transpose(py, row_remote) + transpose(pz, column_remote));
    let row_face = 8.0 * (cells[0] * cells[2]) as f64 / pz as f64;
    let plane_face = 8.0 * (cells[0] * cells[1]) as f64 / py as f64;
    let neighbours = 2.0 * (usize::from(py > 1) + usize::from(pz > 1)) as f64;
    let face_bytes =
        if py > 1 { 2.0 * row_face } else { 0.0 } + if pz > 1 { 2.0 * plane_face } else { 0.0 };
    // Per stage: 5 fields' faces on every side, and one low face along each split axis.
    let low_faces = if py > 1 { row_face } else { 0.0 } + if pz > 1 { plane_face } else { 0.0 };
    let split_axes = (usize::from(py > 1) + usize::from(pz > 1)) as f64;
    let stage_halo_bytes = 5.0 * face_bytes + low_faces;
    let halos = if cores > 1 {
        3.0 * ((5.0 * neighbours + split_axes) * network.latency
            + network.transfer(stage_halo_bytes, 0.5, ranks_per_node))
    } else {
        0.0
    };
    let reductions = if cores > 1 {
        3.0 * 4.0 * (2.0 * (py as f64 - 1.0) + p.log2().ceil()) * network.latency
    } else {
        0.0
    };
    let communication = solves as f64 * per_solve + halos + reductions;
    let compute = seconds_per_cell_step * n / p;
    Projection {
        cores,
        ranks: cores,
        threads: 1,
        compute,
        communication,
        bytes_per_rank: solves as f64
            * 2.0
            * pencil_bytes
            * ((py as f64 - 1.0) / py as f64 + (pz as f64 - 1.0) / pz as f64)
            + 3.0 * stage_halo_bytes,
        efficiency: compute / (compute + communication),
    }
}

/// The same model for CaNS's pencils (2DECOMP&FFT, a sqrt(P) x sqrt(P) process grid): each solve
/// transposes four times (x to y to z and back), each an all-to-all among sqrt(P) ranks of the
/// rank's whole pencil; halos with 4 neighbours; one rank per core.
pub fn project_pencils(
    cells: [usize; 3],
    cores: usize,
    seconds_per_cell_step: f64,
    solves: usize,
    network: &Network,
) -> Projection {
    let n = cells.iter().product::<usize>() as f64;
    let p = cores as f64;
    let row = p.sqrt();
    let ranks_per_node = network.cores_per_node.min(cores) as f64;
    let pencil_bytes = 8.0 * n / p;
    // A row of the process grid spans sqrt(P) ranks: within a node while it fits.
    let remote = ((row - ranks_per_node) / row).max(0.0);
    let transpose = if cores > 1 {
        (row - 1.0) * network.latency
            + network.transfer(
                pencil_bytes * (row - 1.0) / row,
                remote.max(0.5),
                ranks_per_node,
            )
    } else {
        0.0
    };
    let face_bytes = 8.0 * (cells[0] as f64) * (cells[2] as f64) / row;
    let halos = if cores > 1 {
        3.0 * 8.0
            * (4.0 * network.latency + network.transfer(4.0 * face_bytes, 0.5, ranks_per_node))
    } else {
        0.0
    };
    let communication = 4.0 * solves as f64 * transpose + halos;
    let compute = seconds_per_cell_step * n / p;
    Projection {
        cores,
        ranks: cores,
        threads: 1,
        compute,
        communication,
        bytes_per_rank: 4.0 * solves as f64 * pencil_bytes * (row - 1.0) / row,
        efficiency: compute / (compute + communication),
    }
}
