//! `silt check` and `silt run` for rod scenes (a top-level `[rods]` table).

use crate::progress;
use silt_io::rod_run::RodSimulation;
use silt_io::rod_scene::{RodIntegrator, RodScene};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

pub fn check(text: &str, source: &Path) -> ExitCode {
    let built = RodScene::parse(text, source).and_then(|scene| {
        let rods = scene.build()?;
        Ok((scene, rods))
    });
    crate::report_check(built, |(scene, rods)| {
        silt_io::rod_scene::check_report(scene, rods)
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
    let built = RodScene::parse(text, source).and_then(|scene| {
        let rods = scene.build()?;
        Ok((scene, rods))
    });
    let (scene, rods) = match crate::built(built) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let out_dir = crate::output_dir(output, source, "rods");
    let count = rods.len();
    let segments: usize = rods.iter().map(|r| r.rod.segments()).sum();
    let started = if resume {
        RodSimulation::resume(&scene, text, rods, &out_dir)
    } else {
        RodSimulation::start(&scene, text, rods, &out_dir)
    };
    let mut sim = match crate::started(started) {
        Ok(s) => s,
        Err(code) => return code,
    };
    if !quiet {
        let integrator = match scene.integrator {
            RodIntegrator::Radau(o) => format!(
                "Radau IIA (rtol {:e}, atol {:e})",
                o.relative_tolerance, o.absolute_tolerance
            ),
            RodIntegrator::Verlet { dt } => format!("position Verlet (dt {dt:e})"),
            RodIntegrator::Static { load_steps } => {
                format!("static equilibrium ({load_steps} load steps)")
            }
        };
        eprintln!(
            "silt: {count} rod(s), {segments} segments, {integrator}, {} frames to t = {:e}, output in {}",
            sim.end_frame(),
            scene.end_time,
            out_dir.display()
        );
    }
    let mut display = progress::Progress::new(
        quiet,
        std::io::stderr().is_terminal(),
        sim.frame,
        sim.end_frame(),
        (count, "rod"),
    )
    .counting("frame");
    let result = sim.run_until(until, &mut |frame, _| display.update(frame));
    display.finish();
    match result {
        Ok(summary) => {
            if !quiet {
                eprintln!(
                    "silt: done: t = {:e}, {} integrator steps in {:.2} s; {} frames in {}",
                    summary.time,
                    summary.steps,
                    summary.wall_seconds,
                    summary.frames,
                    out_dir.display()
                );
            }
            ExitCode::SUCCESS
        }
        Err(e) => crate::stopped(&e, &out_dir),
    }
}
