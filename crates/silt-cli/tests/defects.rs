//! Defects found when main was tried as a new user would (issue 20), each with the user's input and
//! what Silt must do with it: stop a diverging run of any kind with exit code 1 keeping its last good
//! output, refuse what does not fit in memory or in reason with exit code 2 before allocating it, and
//! say so in plain words.

mod common;
use common::*;

use std::path::Path;

/// The steel pendulum by position Verlet: at 1.3 times the estimated limit of its rotation mode
/// (where the estimate is sharp) the scene is refused; a load that tears the rod apart stops the run
/// as diverged (it once reached an elastic energy of 1e88 and exited 0 with "done"), keeping the
/// first frame and a checkpoint.
#[test]
fn a_diverging_rod_run_stops_with_exit_1_and_keeps_its_output() {
    let dir = tempfile::tempdir().unwrap();
    let verlet = replaced(
        &replaced(
            &example("rod-steel-pendulum"),
            "integrator = \"radau\"",
            "integrator = \"verlet\"",
        ),
        "relative_tolerance = 1e-4\nabsolute_tolerance = 1e-4\n",
        "",
    );
    let too_long = replaced(
        &verlet,
        "integrator = \"verlet\"",
        "integrator = \"verlet\"\ntime_step = 4.36e-7",
    );
    refused(
        &silt_on(dir.path(), "long.toml", &too_long, &["check"]),
        "rods.time_step",
        "stability limit of the rotation mode",
    );
    let torn = replaced(
        &verlet,
        "first_end = \"hinged\"",
        "first_end = \"hinged\"\nend_force = [1e12, 0.0, 0.0]",
    );
    let out = silt_on(
        dir.path(),
        "torn.toml",
        &torn,
        &["run", "-o", "out", "--until", "0.05"],
    );
    let message = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{message}");
    assert!(message.contains("rod 0 diverged"), "{message}");
    for kept in [
        "out/series.pvd",
        "out/rods/rods_000000.vtp",
        "out/checkpoint.bin",
    ] {
        assert!(dir.path().join(kept).exists(), "{kept}: {message}");
    }
}

/// Fibers in a periodic box under loads that throw them out of range in one step: the run stops as
/// diverged (it once went on to a constraint solve that blamed "redundant constraints" on beads whose
/// links had been lost to rounding at 1e297), with exit code 1, keeping the first frame and a
/// checkpoint (the unbounded fluid's case: `fiber_cli`).
#[test]
fn fibers_thrown_out_of_range_stop_as_diverged() {
    let dir = tempfile::tempdir().unwrap();
    for (name, hydrodynamics) in [(
        "periodic",
        "hydrodynamics = \"periodic-rpy\"\nperiodic_box = [40, 40, 40]",
    )] {
        let scene = format!(
            "[fibers]\nbead_radius = 0.5\nviscosity = 1.0\nbending_rigidity = 2000\n{hydrodynamics}\n\
             bead_force = [0.0, -1e300, 0.0]\nend_time = 0.01\ntime_step = 1e-3\n\n\
             [[fibers.fiber]]\nbeads = 9\ncount = 2\nregion = {{ min = [0, 0, 0], max = [40, 40, 40] }}\n\
             seed = 3\n"
        );
        let out = silt_on(
            dir.path(),
            &format!("{name}.toml"),
            &scene,
            &["run", "-o", name],
        );
        let message = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{name}: {message}");
        assert!(
            message.contains("radii from the origin") && message.contains("the run diverged"),
            "{name}: {message}"
        );
        for kept in ["series.pvd", "checkpoint.bin", "diagnostics.csv"] {
            assert!(
                dir.path().join(name).join(kept).exists(),
                "{name}: {kept}: {message}"
            );
        }
    }
}

/// A static scene whose only equilibrium lies far from the unloaded rod (a slender hinged rod pulled
/// across: it would swing about the hinge until it hangs along the force, which no load increment
/// reaches) stops with exit 1, says why, and keeps the unloaded frame; the example's static load path
/// (twist buckling) runs to its equilibrium through `silt run`.
#[test]
fn a_static_solve_without_equilibrium_stops_with_exit_1_and_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let swinging = r#"
[rods]
integrator = "static"

[[rods.rod]]
segments = 20
length = 1.0
direction = [1.0, 0.0, 0.0]
normal = [0.0, 1.0, 0.0]
radius = 0.01
density = 1000.0
youngs_modulus = 1e6
poisson_ratio = 0.0
first_end = "hinged"
end_force = [0.0, -1.0, 0.0]
"#;
    let out = silt_on(dir.path(), "swing.toml", swinging, &["run", "-o", "out"]);
    let message = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{message}");
    assert!(message.contains("held against rigid motion"), "{message}");
    for kept in ["out/series.pvd", "out/rods/rods_000000.vtp"] {
        assert!(dir.path().join(kept).exists(), "{kept}: {message}");
    }
    let twisted = example("rod-helical-buckling-static");
    let out = silt_on(dir.path(), "twist.toml", &twisted, &["run", "-o", "twist"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(dir.path().join("twist/rods/rods_000001.vtp").exists());
}

/// Particle counts that overflow or exhaust memory are refused in `check` and `run` before anything is
/// allocated, with the memory they would need.
#[test]
fn huge_inputs_are_refused_with_the_memory_they_need() {
    let dir = tempfile::tempdir().unwrap();
    let bed = example("default-bed");
    for count in ["9223372036854775807", "1000000000"] {
        let text = replaced(&bed, "count = 800", &format!("count = {count}"));
        for command in ["check", "run"] {
            refused(
                &silt_on(
                    dir.path(),
                    "huge.toml",
                    &text,
                    &[command, "-o", "out"][..if command == "check" { 1 } else { 3 }],
                ),
                "particles[0].count",
                "GiB of memory",
            );
        }
    }
    // A grid of 1.7e9 cells (about 200 GiB with Crank–Nicolson), on a machine with less.
    let grid = replaced(
        &replaced(
            &example("cavity-re100"),
            "cells = [64, 64, 2]",
            "cells = [1200, 1200, 2]",
        ),
        "lengths = [1.0, 1.0, 0.03125]",
        "spacing = 0.001",
    )
    .replacen("cells = [1200, 1200, 2]", "cells = [1200, 1200, 1200]", 1);
    let memory = silt_io::scenes::output::machine_memory().unwrap_or(f64::INFINITY);
    if memory < 150e9 {
        refused(
            &silt_on(dir.path(), "grid.toml", &grid, &["check"]),
            "fluid.cells",
            "GiB of memory",
        );
    }
    // A scene file of any size is not read whole.
    if Path::new("/dev/zero").exists() {
        let out = silt(&["check", "/dev/zero"], dir.path());
        assert_eq!(out.status.code(), Some(2));
        assert!(
            stderr(&out).contains("larger than 64 MiB"),
            "{}",
            stderr(&out)
        );
    }
    std::fs::write(dir.path().join("binary.toml"), [0xff, 0xfe, 0x00, 0x41]).unwrap();
    let out = silt(&["check", "binary.toml"], dir.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("not UTF-8"), "{}", stderr(&out));
}

/// A 5,000-bead fiber: `check` says what its multiplier solve costs and leaves the initial solve to
/// the run (it once took over a minute and 5 GB in `check`).
#[test]
fn a_long_fiber_is_checked_without_being_solved() {
    let dir = tempfile::tempdir().unwrap();
    let text =
        "[fibers]\nbead_radius = 0.5\nviscosity = 1.0\nbending_rigidity = 1.0\nend_time = 1.0\n\
                [[fibers.fiber]]\nbeads = 5000\n";
    let out = silt_on(dir.path(), "long.toml", text, &["check"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(report.contains("solved by `silt run`"), "{report}");
    assert!(report.contains("minutes per step"), "{report}");
}

/// Time steps, end times, step and frame counts out of reason, and a fourth sub-step value, once
/// accepted without a word, are refused naming the key.
#[test]
fn unreasonable_schedules_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let bed = example("default-bed");
    let cases = [
        (
            "end_time = 0.2 ",
            "end_time = 1e-6 ",
            "simulation.dt",
            "longer than end_time",
        ),
        (
            "end_time = 0.2 ",
            "end_time = 1e308 ",
            "simulation.dt",
            "more than 1e10",
        ),
        (
            "end_time = 0.2 ",
            "end_time = 5e6 ",
            "simulation.dt",
            "more than 1e10",
        ),
        (
            "interval = 0.005 ",
            "interval = 1e-9 ",
            "output.interval",
            "frames is more than",
        ),
        (
            "substeps = [1, 1, 1]",
            "substeps = [2, 3, 4, 5]",
            "simulation.substeps",
            "three numbers",
        ),
    ];
    for (from, to, key, hint) in cases {
        let text = replaced(&bed, from, to);
        refused(
            &silt_on(dir.path(), "bad.toml", &text, &["check"]),
            key,
            hint,
        );
    }
}

/// An impact that would drive a sphere through the wall (an overlap of 466 R, once "ok" in check, then
/// blamed on a missing wall by the run), and a Couette lid at a CFL number of 16 (once judged from the
/// fluid at rest), are refused by `check`.
#[test]
fn impacts_and_lids_too_fast_for_the_step_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let fast = replaced(
        &example("wall-collision"),
        "diameters = [0.006]",
        "diameters = [0.006]\nvelocity = [0.0, 0.0, -2000.0]",
    );
    refused(
        &silt_on(dir.path(), "fast.toml", &fast, &["check"]),
        "contact.collision_steps",
        "pass through",
    );
    let lid = replaced(
        &example("couette"),
        "velocity = [1.0, 0.0, 0.0]",
        "velocity = [100.0, 0.0, 0.0]",
    );
    refused(
        &silt_on(dir.path(), "lid.toml", &lid, &["check"]),
        "fluid.time_step",
        "y_high face's speed",
    );
}

/// A fresh run into a directory of a longer earlier run leaves none of its frames behind; a Radau run
/// stopped by `--until` resumes from the checkpoint it left.
#[test]
fn a_fresh_run_clears_the_earlier_run_and_until_leaves_a_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    let bed = replaced(
        &example("default-bed"),
        "end_time = 0.2 ",
        "end_time = 0.002 ",
    );
    let long = replaced(&bed, "interval = 0.005 ", "interval = 0.0002 ");
    assert!(
        silt_on(dir.path(), "bed.toml", &long, &["run", "-q", "-o", "out"])
            .status
            .success()
    );
    assert!(dir
        .path()
        .join("out/particles/particles_000010.vtp")
        .exists());
    assert!(
        silt_on(dir.path(), "bed.toml", &bed, &["run", "-q", "-o", "out"])
            .status
            .success()
    );
    let frames = std::fs::read_dir(dir.path().join("out/particles"))
        .unwrap()
        .count();
    assert_eq!(frames, 2, "only the new run's frames");
    let pvd = std::fs::read_to_string(dir.path().join("out/series.pvd")).unwrap();
    assert_eq!(pvd.matches("<DataSet").count(), 2, "{pvd}");

    let rod = example("rod-twisted-cantilever");
    let first = silt_on(
        dir.path(),
        "rod.toml",
        &rod,
        &["run", "-q", "-o", "rod", "--until", "0.03"],
    );
    assert!(first.status.success(), "{}", stderr(&first));
    assert!(dir.path().join("rod/checkpoint.bin").exists());
    let resumed = silt_on(
        dir.path(),
        "rod.toml",
        &replaced(&rod, "end_time = 4.0", "end_time = 0.1"),
        &["run", "-q", "-o", "rod", "--resume"],
    );
    assert!(resumed.status.success(), "{}", stderr(&resumed));
}

/// Messages and reports show names and times as a user writes them: no Rust debug output, no
/// accumulated round-off in times.
#[test]
fn messages_read_as_a_user_writes() {
    let dir = tempfile::tempdir().unwrap();
    let check = silt(&["check"], dir.path());
    let report = String::from_utf8_lossy(&check.stdout);
    assert!(report.contains("predictor-corrector"), "{report}");
    for debug in ["PredictorCorrector", "Actm", "SpringHistory", " { "] {
        assert!(!report.contains(debug), "{debug} in {report}");
    }
    // 100 fiber steps of 0.05: the accumulated time is 4.999999999999916 or so.
    let text =
        "[fibers]\nbead_radius = 0.5\nviscosity = 1.0\nbending_rigidity = 1.0\nend_time = 5.0\n\
                time_step = 0.05\n[[fibers.fiber]]\nbeads = 4\n";
    let out = silt_on(dir.path(), "fiber.toml", text, &["run", "-o", "f"]);
    let message = stderr(&out);
    assert!(out.status.success(), "{message}");
    assert!(
        message.contains("silt: done: t = 5 after 100 steps"),
        "{message}"
    );
}

/// Example scenes say what they are: the LAMMPS settling problem starts with LAMMPS' random
/// velocities, and the helical-buckling example runs to the end time of its validation case.
#[test]
fn examples_match_what_they_say() {
    let settle = example("lammps-settle");
    let scene = silt_io::scenes::particles::ParticleScene::parse(&settle, Path::new("settle.toml"))
        .unwrap();
    let p = scene.system().unwrap().particles;
    let energy: f64 = (0..p.len())
        .map(|i| p.mass[i] * p.velocity[i].length_squared())
        .sum();
    let temperature = energy / (3.0 * (p.len() - 1) as f64);
    assert!((temperature / 0.1 - 1.0).abs() < 1e-12, "{temperature}");
    let momentum: silt_core::Vec3 = (0..p.len()).map(|i| p.mass[i] * p.velocity[i]).sum();
    assert!(momentum.length() < 1e-9, "{momentum}");
    // The helical-buckling example is the validation case's scene (the same tables, comments aside),
    // and the case's full version runs to its end time.
    let validation =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../validation/rod-helical-buckling");
    let tables = |text: &str| toml::from_str::<toml::Table>(text).unwrap();
    let scene = std::fs::read_to_string(validation.join("buckling.toml")).unwrap();
    assert_eq!(tables(&example("rod-helical-buckling")), tables(&scene));
    let reference = tables(&std::fs::read_to_string(validation.join("reference.toml")).unwrap());
    assert_eq!(reference["full"]["end_time"].as_float(), Some(3000.0));
    assert_eq!(tables(&scene)["rods"]["end_time"].as_float(), Some(3000.0));
}

/// `silt check` gives a rod's axial wave speed from the extensional stiffness it has, EA given
/// explicitly included: sqrt(EA / (rho A)).
#[test]
fn the_axial_wave_speed_follows_the_stiffness_given() {
    let dir = tempfile::tempdir().unwrap();
    let out = silt(
        &[
            "check",
            &format!(
                "{}/../../examples/rod-helical-buckling.toml",
                env!("CARGO_MANIFEST_DIR")
            ),
        ],
        dir.path(),
    );
    let report = String::from_utf8_lossy(&out.stdout);
    // EA = 1e5, rho A = 2.598 * pi 0.35^2 = 1: c = sqrt(1e5) = 316.23 (E / rho would give 620).
    assert!(
        report.contains("axial wave speed sqrt(EA / (rho A)) 316.23"),
        "{report}"
    );
}

/// What the full fuzz (300 mutants of every example) found: an output interval of 1e308 overflowed the
/// checkpoint schedule (a panic); a CFL number of 1e-300 and an end of a rod turned at 1e6 turns per
/// second ran for ever on a short `--until`. The first now runs (a frame at the start and the end),
/// the other two are refused naming the key.
#[test]
fn what_the_full_fuzz_found() {
    let dir = tempfile::tempdir().unwrap();
    let couette = replaced(&example("couette"), "interval = 0.25", "interval = 1e308");
    let run = silt_on(
        dir.path(),
        "couette.toml",
        &couette,
        &["run", "-q", "-o", "out", "--until", "1e-9"],
    );
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));

    let vortex = replaced(&example("taylor-green-3d"), "cfl = 0.5", "cfl = 1e-300");
    refused(
        &silt_on(dir.path(), "tg.toml", &vortex, &["check"]),
        "fluid.cfl",
        "fifty times the steps",
    );

    let twisted = replaced(
        &example("rod-twisted-cantilever"),
        "last_end_angular_velocity = [0.0, 0.0, 6.283185307179586]",
        "last_end_angular_velocity = [0.0, 0.0, 6283185.307179586]",
    );
    refused(
        &silt_on(dir.path(), "rod.toml", &twisted, &["check"]),
        "rods.rod[0].last_end_angular_velocity",
        "than the discrete rod can hold",
    );
}
