//! Fluid scenes through the `silt` command: detection by the [fluid] table, `silt check`, output files,
//! `--until` and `--resume` byte for byte, exit codes 2 (bad input) and 1 (diverged).

mod common;
use common::*;

use std::path::Path;

/// A small lid-driven cavity with an adaptive step and every output.
const CAVITY: &str = r#"
[fluid]
cells = [12, 12, 2]
lengths = [1.0, 1.0, 0.16666666666666666]
viscosity = 0.02
end_time = 0.5
cfl = 0.9

[fluid.boundaries]
x_low = { type = "no-slip" }
x_high = { type = "no-slip" }
y_low = { type = "no-slip" }
y_high = { type = "no-slip", velocity = [1.0, 0.0, 0.0] }

[fluid.output]
interval = 0.1
checkpoint_interval = 0.2
vorticity = true
profile_axis = "y"
"#;

#[test]
fn fluid_scene_checks_runs_and_resumes_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("cavity.toml"), CAVITY).unwrap();
    let check = silt(&["check", "cavity.toml"], dir.path());
    assert!(check.status.success(), "{}", stderr(&check));
    let report = String::from_utf8_lossy(&check.stdout);
    for expected in [
        "12 x 12 x 2 = 288 cells",
        "Reynolds number  U L / nu = 50",
        "viscous limit",
        "memory",
        "ok: the scene is valid",
    ] {
        assert!(report.contains(expected), "{expected}: {report}");
    }

    let one = silt(
        &["run", "cavity.toml", "-o", "one", "--threads", "2"],
        dir.path(),
    );
    assert!(one.status.success(), "{}", stderr(&one));
    assert!(
        stderr(&one).contains("silt: done: t = 0.5"),
        "{}",
        stderr(&one)
    );
    for file in [
        "series.pvd",
        "diagnostics.csv",
        "fluid/fluid_000000.vti",
        "fluid/fluid_000005.vti",
        "profiles/profile_000005.csv",
        "checkpoint.bin",
    ] {
        assert!(dir.path().join("one").join(file).exists(), "{file} missing");
    }

    // Two legs: stop at 0.27 (between frames and checkpoints), then continue.
    let first = silt(
        &["run", "cavity.toml", "-o", "two", "--until", "0.27"],
        dir.path(),
    );
    assert!(first.status.success(), "{}", stderr(&first));
    let second = silt(
        &["run", "cavity.toml", "-o", "two", "--resume", "-q"],
        dir.path(),
    );
    assert!(second.status.success(), "{}", stderr(&second));
    assert!(stderr(&second).is_empty(), "quiet: {}", stderr(&second));
    let (a, b) = (
        all_files(&dir.path().join("one")),
        all_files(&dir.path().join("two")),
    );
    let names = |f: &[(String, Vec<u8>)]| f.iter().map(|x| x.0.clone()).collect::<Vec<_>>();
    assert_eq!(names(&a), names(&b));
    for ((name, x), (_, y)) in a.iter().zip(&b) {
        assert!(
            x == y,
            "{name} differs between the run in one go and the run in two legs"
        );
    }
    // Resuming a finished run does nothing and succeeds.
    let again = silt(&["run", "cavity.toml", "-o", "two", "--resume"], dir.path());
    assert!(again.status.success(), "{}", stderr(&again));
    assert_eq!(all_files(&dir.path().join("two")), b);
}

#[test]
fn the_default_output_directory_is_named_after_the_scene() {
    let dir = tempfile::tempdir().unwrap();
    let scene = CAVITY.replace("end_time = 0.5", "end_time = 0.05");
    std::fs::write(dir.path().join("tiny.toml"), scene).unwrap();
    let out = silt(&["run", "tiny.toml", "-q"], dir.path());
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(dir.path().join("silt-output/tiny/series.pvd").exists());
}

#[test]
fn bad_fluid_scenes_exit_with_code_2_and_name_file_and_key() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            CAVITY.replace("viscosity = 0.02", "viscosity = -0.02"),
            "key `fluid.viscosity`: -0.02 is not allowed",
        ),
        (
            CAVITY.replace("cfl = 0.9", "cfl = 0.9\ntime_step = 0.01"),
            "key `fluid.cfl`: give either",
        ),
        (
            CAVITY.replace("x_high = { type = \"no-slip\" }", ""),
            "key `fluid.boundaries.x_high`: x_high is periodic (the default)",
        ),
        (
            CAVITY.replace("velocity = [1.0, 0.0, 0.0]", "velocity = [1.0, 1.0, 0.0]"),
            "key `fluid.boundaries.y_high.velocity`",
        ),
        (
            CAVITY.replace("profile_axis = \"y\"", "profile_axis = \"w\""),
            "key `fluid.output.profile_axis`: \"w\" is unknown; allowed: \"x\", \"y\", \"z\"",
        ),
        (
            format!("{CAVITY}\n[[particles]]\nmaterial = \"glass\"\n"),
            // [fluid] with particle tables is a coupled scene, which needs the rest of a particle scene.
            "key `simulation`: missing: a particle scene needs a [simulation] table",
        ),
    ];
    for (text, expected) in cases {
        std::fs::write(dir.path().join("bad.toml"), &text).unwrap();
        for args in [
            &["run", "bad.toml", "-o", "out"][..],
            &["check", "bad.toml"],
        ] {
            let command = args[0];
            let out = silt(args, dir.path());
            assert_eq!(out.status.code(), Some(2), "{command}: {}", stderr(&out));
            let message = stderr(&out);
            assert!(
                message.contains(&format!("bad.toml: {expected}")),
                "{message}"
            );
            assert!(!message.contains("panicked"), "{message}");
        }
    }
    // Resuming without a checkpoint, and with a bad --until.
    std::fs::write(dir.path().join("good.toml"), CAVITY).unwrap();
    let out = silt(&["run", "good.toml", "-o", "none", "--resume"], dir.path());
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("checkpoint"), "{}", stderr(&out));
    let out = silt(&["run", "good.toml", "--until", "-1"], dir.path());
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

#[test]
fn no_malformed_fluid_scene_makes_silt_panic() {
    let dir = tempfile::tempdir().unwrap();
    let lines: Vec<&str> = CAVITY.lines().collect();
    let mut variants = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let mut without = lines.clone();
        without.remove(i);
        variants.push(without.join("\n"));
        if let Some((key, _)) = line.split_once(" = ") {
            for value in ["-1", "0", "nan", "1e308", "\"x\"", "[]", "{}"] {
                let mut changed = lines.clone();
                let replaced = format!("{key} = {value}");
                changed[i] = &replaced;
                variants.push(changed.join("\n"));
            }
        }
    }
    for text in &variants {
        std::fs::write(dir.path().join("fuzz.toml"), text).unwrap();
        let out = silt(&["check", "fuzz.toml"], dir.path());
        let message = stderr(&out);
        assert!(
            matches!(out.status.code(), Some(0) | Some(2)),
            "{message}\n{text}"
        );
        assert!(!message.contains("panicked"), "{message}\n{text}");
        if out.status.code() == Some(2) {
            assert!(message.starts_with("error: fuzz.toml"), "{message}");
        }
    }
    assert!(variants.len() > 100);
}

#[test]
fn a_diverging_fluid_run_exits_1_and_keeps_its_output() {
    let dir = tempfile::tempdir().unwrap();
    let scene = r#"
[fluid]
cells = [4, 4, 4]
spacing = 0.1
viscosity = 0.01
body_force = [100.0, 0.0, 0.0]
end_time = 1.0
time_step = 0.01
[fluid.output]
interval = 0.02
"#;
    std::fs::write(dir.path().join("runaway.toml"), scene).unwrap();
    let out = silt(&["run", "runaway.toml", "-o", "out"], dir.path());
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let message = stderr(&out);
    assert!(message.contains("the flow diverged at step"), "{message}");
    assert!(
        message.contains("last good frame and checkpoint) is kept"),
        "{message}"
    );
    let rows = std::fs::read_to_string(dir.path().join("out/diagnostics.csv")).unwrap();
    assert!(rows.lines().count() >= 5, "{rows}");
}

#[test]
fn every_fluid_example_checks() {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let dir = tempfile::tempdir().unwrap();
    for name in [
        "taylor-green-3d",
        "taylor-green-2d",
        "poiseuille",
        "couette",
        "cavity-re100",
        "cavity-re1000",
        "channel-flow-rate",
    ] {
        let path = examples.join(format!("{name}.toml"));
        let out = silt(&["check", path.to_str().unwrap()], dir.path());
        assert!(out.status.success(), "{name}: {}", stderr(&out));
        let report = String::from_utf8_lossy(&out.stdout);
        assert!(report.contains("(fluid)"), "{report}");
    }
}
