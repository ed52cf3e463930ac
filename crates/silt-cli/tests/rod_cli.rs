//! Rod scenes through the `silt` command: detection by the [rods] table, `silt check` (the explicit
//! stability limit and the integrator), output files, `--until` and `--resume` byte for byte, exit
//! codes 2 (bad input, including a Verlet step over the sharp stability limit).

mod common;
use common::*;

/// A short steel pendulum (20 segments) by Radau IIA, with a follower load and some damping.
const PENDULUM: &str = r#"
[rods]
end_time = 0.04
relative_tolerance = 1e-5
absolute_tolerance = 1e-7
gravity = [0.0, 0.0, -9.81]

[[rods.rod]]
segments = 20
length = 1.0
radius = 1e-3
density = 7850.0
youngs_modulus = 200e9
poisson_ratio = 0.3
extensional_viscosity = 1e3
first_end = "hinged"
follower_force = [0.0, 0.0, 1e-3]

[rods.output]
interval = 0.005
checkpoint_interval = 0.02
"#;

#[test]
fn a_rod_scene_checks_runs_and_resumes_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("rod.toml"), PENDULUM).unwrap();
    let check = silt(&["check", "rod.toml"], dir.path());
    assert!(check.status.success(), "{}", stderr(&check));
    let report = String::from_utf8_lossy(&check.stdout);
    assert!(
        report.contains("explicit stability limit") && report.contains("Radau IIA"),
        "{report}"
    );

    let whole = silt(&["run", "rod.toml", "-q", "-o", "whole"], dir.path());
    assert!(whole.status.success(), "{}", stderr(&whole));
    // Stop between checkpoints (0.03): the resumed run starts from the checkpoint at 0.02.
    let first = silt(
        &["run", "rod.toml", "-q", "-o", "split", "--until", "0.03"],
        dir.path(),
    );
    assert!(first.status.success(), "{}", stderr(&first));
    let rest = silt(
        &[
            "--threads",
            "1",
            "run",
            "rod.toml",
            "-q",
            "-o",
            "split",
            "--resume",
        ],
        dir.path(),
    );
    assert!(rest.status.success(), "{}", stderr(&rest));
    for file in [
        "diagnostics.csv",
        "series.pvd",
        "rods/rods_000008.vtp",
        "checkpoint.bin",
    ] {
        let a = std::fs::read(dir.path().join("whole").join(file)).unwrap();
        let b = std::fs::read(dir.path().join("split").join(file)).unwrap();
        assert!(a == b, "{file} differs");
    }
    let vtp = std::fs::read_to_string(dir.path().join("whole/rods/rods_000008.vtp")).unwrap();
    for field in [
        "shear_strain",
        "internal_force",
        "internal_moment",
        "curvature",
        "d3",
    ] {
        assert!(vtp.contains(field), "{field}");
    }
}

#[test]
fn bad_rod_scenes_exit_with_2() {
    let dir = tempfile::tempdir().unwrap();
    let broken = PENDULUM.replace("segments = 20", "segments = -3");
    std::fs::write(dir.path().join("broken.toml"), broken).unwrap();
    let out = silt(&["check", "broken.toml"], dir.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("segments"), "{}", stderr(&out));

    // Position Verlet at 1.25 times the rotation mode's limit: the estimate is sharp for that mode
    // (a steel rod diverged at 1.0 of it), so the check refuses the step, naming the mode and the
    // limit. A run that diverges anyway is covered in defects.rs.
    std::fs::write(dir.path().join("rod.toml"), PENDULUM).unwrap();
    let check = silt(&["check", "rod.toml"], dir.path());
    let text = String::from_utf8_lossy(&check.stdout).into_owned();
    let limit: f64 = text
        .split("explicit stability limit (estimate): ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no limit in {text}"));
    let verlet = PENDULUM
        .replace("relative_tolerance = 1e-5\n", "")
        .replace("absolute_tolerance = 1e-7\n", "")
        .replace(
            "end_time = 0.04",
            &format!(
                "end_time = 0.04\nintegrator = \"verlet\"\ntime_step = {}",
                1.25 * limit
            ),
        );
    std::fs::write(dir.path().join("verlet.toml"), verlet).unwrap();
    let report = silt(&["check", "verlet.toml"], dir.path());
    assert_eq!(report.status.code(), Some(2), "{}", stderr(&report));
    let message = stderr(&report);
    assert!(message.contains("rods.time_step"), "{message}");
    assert!(message.contains("rotation mode"), "{message}");
    let run = silt(&["run", "verlet.toml", "-q", "-o", "out"], dir.path());
    assert_eq!(run.status.code(), Some(2), "{}", stderr(&run));
    assert!(!dir.path().join("out").exists());
}
