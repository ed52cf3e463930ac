//! Fiber scenes through the `silt` command: detection by the [fibers] table, `silt check`, output files,
//! `--until` and `--resume` byte for byte, exit codes 2 (bad input) and 1 (a failed step).

mod common;
use common::*;

/// A sedimenting fiber with every output.
const SEDIMENTING: &str = r#"
[fibers]
bead_radius = 0.5
viscosity = 1.0
bending_rigidity = 2.0
bead_force = [0.0, -1.0, 0.0]
end_time = 2.0

[[fibers.fiber]]
beads = 8
start = [-3.5, 0.0, 0.0]

[fibers.output]
interval = 0.5
checkpoint_interval = 1.0
"#;

#[test]
fn a_fiber_scene_checks_runs_and_resumes_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("fiber.toml"), SEDIMENTING).unwrap();
    let check = silt(&["check", "fiber.toml"], dir.path());
    assert!(check.status.success(), "{}", stderr(&check));
    let report = String::from_utf8_lossy(&check.stdout);
    assert!(
        report.contains("bending time") && report.contains("B = W L"),
        "{report}"
    );

    let whole = silt(&["run", "fiber.toml", "-q", "-o", "whole"], dir.path());
    assert!(whole.status.success(), "{}", stderr(&whole));
    let first = silt(
        &["run", "fiber.toml", "-q", "-o", "split", "--until", "0.7"],
        dir.path(),
    );
    assert!(first.status.success(), "{}", stderr(&first));
    let rest = silt(
        &[
            "--threads",
            "1",
            "run",
            "fiber.toml",
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
        "fibers/fibers_000004.vtp",
        "checkpoint.bin",
    ] {
        let a = std::fs::read(dir.path().join("whole").join(file)).unwrap();
        let b = std::fs::read(dir.path().join("split").join(file)).unwrap();
        assert!(a == b, "{file} differs");
    }
}

#[test]
fn bad_fiber_scenes_exit_with_2_and_failed_steps_with_1() {
    let dir = tempfile::tempdir().unwrap();
    let bad = SEDIMENTING.replace("viscosity = 1.0", "viscosity = -1.0");
    std::fs::write(dir.path().join("bad.toml"), bad).unwrap();
    let out = silt(&["run", "bad.toml", "-q"], dir.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("fibers.viscosity"),
        "{}",
        stderr(&out)
    );
    // A force so large that the beads are thrown out of range: the step fails as diverged, the run
    // stops with exit code 1 and keeps what it wrote (the initial frame).
    let wild = SEDIMENTING
        .replace(
            "bead_force = [0.0, -1.0, 0.0]",
            "bead_force = [0.0, -1e300, 0.0]",
        )
        .replace("end_time = 2.0", "end_time = 200.0");
    std::fs::write(dir.path().join("wild.toml"), wild).unwrap();
    let out = silt(&["run", "wild.toml", "-q", "-o", "wild"], dir.path());
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("the run diverged"),
        "{}",
        stderr(&out)
    );
    assert!(dir.path().join("wild/fibers/fibers_000000.vtp").exists());
}

/// A tumbling period read from `fibers.csv` as a user would read it: the rigid 8-bead chain of
/// validation/jeffery-orbit/chain.toml turns by pi in half a period. The reference, 42.0244 / gamma, is
/// the period of the same beads as one rigid body from the projection of the RPY mobility
/// (validation/jeffery-orbit/README.md, `silt validate jeffery-orbit`), not from this output.
#[test]
fn a_tumbling_period_can_be_read_from_fibers_csv() {
    let dir = tempfile::tempdir().unwrap();
    let scene = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../validation/jeffery-orbit/chain.toml"),
    )
    .unwrap();
    std::fs::write(dir.path().join("chain.toml"), scene).unwrap();
    let run = silt(
        &[
            "run",
            "chain.toml",
            "-q",
            "-o",
            "out",
            "--set",
            "fibers.end_time=22.0",
            "--set",
            "fibers.output.interval=0.05",
        ],
        dir.path(),
    );
    assert!(run.status.success(), "{}", stderr(&run));
    let csv = std::fs::read_to_string(dir.path().join("out/fibers.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let column = |name: &str| header.iter().position(|c| *c == name).unwrap();
    let (t, dx, dy) = (column("time"), column("direction_x"), column("direction_y"));
    let rows: Vec<Vec<f64>> = lines
        .map(|l| l.split(',').map(|v| v.parse().unwrap()).collect())
        .collect();
    assert!(rows.len() > 400, "{} rows", rows.len());
    // The in-plane angle, unwrapped, until it passes -pi.
    let (mut previous, mut unwrapped, mut last_time) = (0.0f64, 0.0f64, 0.0);
    let mut half_period = None;
    for row in &rows {
        let angle = row[dy].atan2(row[dx]);
        let mut change = angle - previous;
        if change > std::f64::consts::PI {
            change -= 2.0 * std::f64::consts::PI;
        } else if change < -std::f64::consts::PI {
            change += 2.0 * std::f64::consts::PI;
        }
        let before = unwrapped;
        unwrapped += change;
        previous = angle;
        if unwrapped <= -std::f64::consts::PI {
            let fraction = (-std::f64::consts::PI - before) / (unwrapped - before);
            half_period = Some(last_time + fraction * (row[t] - last_time));
            break;
        }
        last_time = row[t];
    }
    let period = 2.0 * half_period.expect("the chain turned by pi");
    assert!(
        (period / 42.0244 - 1.0).abs() < 1e-3,
        "period {period} from fibers.csv"
    );
}
