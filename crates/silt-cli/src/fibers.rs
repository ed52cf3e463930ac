//! `silt check` and `silt run` for fiber scenes (a top-level `[fibers]` table).

use crate::progress;
use silt_io::fiber_run::FiberSimulation;
use silt_io::fiber_scene::FiberScene;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

pub fn check(text: &str, source: &Path) -> ExitCode {
    let built = FiberScene::parse(text, source).and_then(|scene| {
        let system = scene.build()?;
        Ok((scene, system))
    });
    crate::report_check(built, |(scene, system)| {
        silt_io::fiber_scene::check_report(scene, system)
    })
}

pub fn run(
    text: &str,
    source: &Path,
    output: Option<PathBuf>,
    resume: bool,
    until: Option<f64>,
    quiet: bool,
) -> ExitCode {
    if let Err(code) = crate::check_until(until) {
        return code;
    }
    let built = FiberScene::parse(text, source).and_then(|scene| {
        let system = scene.build()?;
        Ok((scene, system))
    });
    let (scene, system) = match crate::built(built) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let out_dir = crate::output_dir(output, source, "fibers");
    let beads = system.fibers.bead_count();
    let fibers = system.fibers.fibers().len();
    let started = if resume {
        FiberSimulation::resume(&scene, text, system, &out_dir)
    } else {
        FiberSimulation::start(&scene, text, system, &out_dir)
    };
    let mut sim = match crate::started(started) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let until_step = until.map_or(sim.end_step(), |t| (t / scene.dt).round() as u64);
    let stop = until_step.min(sim.end_step());
    if !quiet {
        eprintln!(
            "silt: {fibers} fibers of {beads} beads in all, dt {:e} ({:.3} bending times), {} steps to t = {:e}, output in {}",
            scene.dt,
            scene.dt / scene.bending_time(),
            stop.saturating_sub(sim.step),
            stop as f64 * scene.dt,
            out_dir.display()
        );
    }
    let mut display = progress::Progress::new(
        quiet,
        std::io::stderr().is_terminal(),
        sim.step,
        stop,
        (beads, "bead"),
    );
    let result = sim.run_until(until_step, &mut |step, _| display.update(step));
    display.finish();
    match result {
        Ok(summary) => {
            if !quiet {
                eprintln!(
                    "silt: done: t = {:e} after {} steps in {:.1} s ({:.3} ms per step); largest link error {:.2e}; {} frames in {}",
                    summary.time,
                    summary.steps,
                    summary.wall_seconds,
                    1e3 * summary.wall_seconds / summary.steps.max(1) as f64,
                    summary.max_link_error,
                    summary.frames,
                    out_dir.display()
                );
            }
            ExitCode::SUCCESS
        }
        Err(e) => crate::stopped(&e, &out_dir),
    }
}
