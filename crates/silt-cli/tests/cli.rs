//! The `silt` command as a user runs it: exit codes, messages and output files.

mod common;
use common::*;

#[test]
fn default_scene_checks_and_runs() {
    let dir = tempfile::tempdir().unwrap();
    let check = silt(&["check"], dir.path());
    assert!(check.status.success(), "{}", stderr(&check));
    let report = String::from_utf8_lossy(&check.stdout);
    assert!(report.contains("particles        800"), "{report}");
    assert!(report.contains("contact time"), "{report}");

    let run = silt(
        &["run", "-o", "out", "--until", "0.0002", "--threads", "2"],
        dir.path(),
    );
    assert!(run.status.success(), "{}", stderr(&run));
    for file in [
        "out/series.pvd",
        "out/diagnostics.csv",
        "out/track_0.csv",
        "out/checkpoint.bin",
        "out/particles/particles_000000.vtp",
    ] {
        assert!(
            dir.path().join(file).exists(),
            "{file} missing; stderr: {}",
            stderr(&run)
        );
    }
    // Resume to a later time: continues from the checkpoint written at the stop.
    let resumed = silt(
        &["run", "-o", "out", "--resume", "--until", "0.0003"],
        dir.path(),
    );
    assert!(resumed.status.success(), "{}", stderr(&resumed));
}

#[test]
fn bad_scene_exits_with_code_2_and_names_file_and_key() {
    let dir = tempfile::tempdir().unwrap();
    let default = silt(&["default-scene"], dir.path());
    let text = String::from_utf8_lossy(&default.stdout).replace("e_dry = 0.9", "e_dry = 1.9");
    std::fs::write(dir.path().join("bad.toml"), text).unwrap();
    for command in ["run", "check"] {
        let out = silt(&[command, "bad.toml"], dir.path());
        assert_eq!(out.status.code(), Some(2));
        let message = stderr(&out);
        assert!(
            message.contains("bad.toml: key `material[0].e_dry`: 1.9 is not allowed"),
            "{message}"
        );
        assert!(!message.contains("panicked"), "{message}");
    }
    let missing = silt(&["run", "missing.toml"], dir.path());
    assert_eq!(missing.status.code(), Some(2));
    assert!(stderr(&missing).contains("missing.toml: cannot read the scene file"));
    let no_checkpoint = silt(&["run", "bad.toml", "--resume"], dir.path());
    assert_eq!(no_checkpoint.status.code(), Some(2));
}

#[test]
fn a_run_that_fails_stops_with_a_message_and_keeps_its_output() {
    let dir = tempfile::tempdir().unwrap();
    // One sphere shot upwards out of a box without a lid.
    let scene = r#"
[simulation]
dt = 1e-4
end_time = 1.0
integrator = "velocity-verlet"
[domain]
min = [0.0, 0.0, 0.0]
max = [0.01, 0.01, 0.01]
periodic = [true, true, false]
[[material]]
name = "steel"
density = 7800.0
e_dry = 0.97
mu_s = 0.2
mu_k = 0.1
[contact]
normal = "linear"
min_impact_velocity = 0.01
[[particles]]
material = "steel"
positions = [[0.005, 0.005, 0.005]]
diameters = [0.001]
velocity = [0.0, 0.0, 0.5]
[output]
interval = 0.001
"#;
    std::fs::write(dir.path().join("escape.toml"), scene).unwrap();
    let out = silt(&["run", "escape.toml", "-o", "out"], dir.path());
    assert_eq!(out.status.code(), Some(1));
    let message = stderr(&out);
    assert!(
        message.contains("particle 0 left the domain at t = "),
        "{message}"
    );
    let rows = std::fs::read_to_string(dir.path().join("out/diagnostics.csv")).unwrap();
    assert!(
        rows.lines().count() >= 5,
        "the output before the failure is kept: {rows}"
    );
}

/// `--set key=value` (and `--unset key`) changes a scene before it is read, for run and check alike: the run's scene.toml
/// has the change (with the file's comments), a bad key or value is refused with exit 2 naming it,
/// and `--resume` needs the same changes (the fingerprint is the changed scene's).
#[test]
fn set_changes_a_scene_key_for_check_and_run() {
    let dir = tempfile::tempdir().unwrap();
    let scene = example("poiseuille");
    std::fs::write(dir.path().join("p.toml"), &scene).unwrap();
    let check = silt(
        &["check", "p.toml", "--set", "fluid.viscosity=0.05"],
        dir.path(),
    );
    assert!(check.status.success(), "{}", stderr(&check));
    let report = String::from_utf8_lossy(&check.stdout).into_owned();
    let plain = silt(&["check", "p.toml"], dir.path());
    assert_ne!(report, String::from_utf8_lossy(&plain.stdout), "{report}");

    let args = ["run", "p.toml", "-q", "-o", "out", "--until", "0.05"];
    let set = [
        "--set",
        "fluid.viscosity=0.05",
        "--set",
        "fluid.cells=[4, 16, 4]",
    ];
    let run = silt(&[&args[..], &set[..]].concat(), dir.path());
    assert!(run.status.success(), "{}", stderr(&run));
    let written = std::fs::read_to_string(dir.path().join("out/scene.toml")).unwrap();
    assert!(written.contains("viscosity = 0.05"), "{written}");
    assert!(written.contains("cells = [4, 16, 4]"), "{written}");
    let first_comment = scene.lines().next().unwrap();
    assert!(written.starts_with(first_comment), "{written}");

    let resume_other = silt(
        &["run", "p.toml", "-q", "-o", "out", "--resume"],
        dir.path(),
    );
    assert_eq!(
        resume_other.status.code(),
        Some(2),
        "{}",
        stderr(&resume_other)
    );
    let resume = silt(
        &[
            &["run", "p.toml", "-q", "-o", "out", "--resume"][..],
            &set[..],
        ]
        .concat(),
        dir.path(),
    );
    assert!(resume.status.success(), "{}", stderr(&resume));

    // --unset removes a key: without the viscosity the scene lacks a required key.
    let unset = silt(
        &["check", "p.toml", "--unset", "fluid.viscosity"],
        dir.path(),
    );
    assert_eq!(unset.status.code(), Some(2), "{}", stderr(&unset));
    assert!(stderr(&unset).contains("viscosity"), "{}", stderr(&unset));
    let missing = silt(
        &["check", "p.toml", "--unset", "fluid.no_such_key"],
        dir.path(),
    );
    assert!(
        stderr(&missing).contains("cannot be removed"),
        "{}",
        stderr(&missing)
    );
    for (bad, hint) in [
        ("fluid.viscosity=-1", "key `fluid.viscosity`"),
        ("fluid.viscosity.value=1", "is a float, not a table"),
        ("fluid.viscosity", "key=value"),
        ("fluid.cells=[4,", "not a TOML value"),
    ] {
        let out = silt(&["check", "p.toml", "--set", bad], dir.path());
        assert_eq!(out.status.code(), Some(2), "{bad}: {}", stderr(&out));
        assert!(stderr(&out).contains(hint), "{bad}: {}", stderr(&out));
    }
}

/// `--runs` picks runs of the sheared-bed validation by label; other labels and other cases are refused
/// with exit code 2, naming what is allowed, before anything runs.
#[test]
fn validate_runs_are_checked_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let bad = silt(
        &[
            "validate",
            "sheared-bed",
            "--runs",
            "a9,a11",
            "-o",
            "report",
        ],
        dir.path(),
    );
    assert_eq!(bad.status.code(), Some(2), "{}", stderr(&bad));
    let message = stderr(&bad);
    assert!(
        message.contains("\"a11\"") && message.contains("a1, a2, a9, a10, a10m, a10-coarse"),
        "{message}"
    );
    let other = silt(&["validate", "gondret", "--runs", "a9"], dir.path());
    assert_eq!(other.status.code(), Some(2));
    assert!(stderr(&other).contains("sheared-bed"));
    assert!(!dir.path().join("report").exists());
}
