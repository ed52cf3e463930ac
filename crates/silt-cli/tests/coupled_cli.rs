//! Coupled scenes through the `silt` command: `silt check` prints both halves and the coupling, `silt run`
//! with `--until` and `--resume` gives the files of a run in one go byte for byte, bad input exits with 2.

mod common;
use common::*;

/// One heavy sphere sinking in a small periodic column with a floor and a lid.
const SCENE: &str = r#"
[simulation]
dt = 0.01
end_time = 0.1
gravity = [0.0, 0.0, -1.0]

[[material]]
name = "grain"
density = 3.0
e_dry = 0.9
mu_s = 0.5
mu_k = 0.3

[contact]

[[particles]]
material = "grain"
positions = [[0.8, 0.8, 0.8]]
diameters = [0.5]

[output]
interval = 0.02
checkpoint_interval = 0.04
track = [0]

[fluid]
cells = [16, 16, 16]
spacing = 0.1
density = 1.0
viscosity = 0.05

[fluid.boundaries]
z_low = { type = "no-slip" }
z_high = { type = "no-slip" }
"#;

#[test]
fn coupled_scene_checks_runs_and_resumes_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("sink.toml"), SCENE).unwrap();

    let out = silt(&["check", "sink.toml"], dir.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let report = String::from_utf8_lossy(&out.stdout);
    for line in [
        "particles        1 (1 free, 0 fixed)",
        "grid             16 x 16 x 16",
        "resolution       D/h from 5.00 to 5.00",
        "density ratio    rho_p / rho_f from 3.0000",
        "ok: the scene is valid",
    ] {
        assert!(report.contains(line), "missing {line:?} in:\n{report}");
    }

    let out = silt(&["run", "sink.toml", "-o", "whole"], dir.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let out = silt(
        &["run", "sink.toml", "-o", "split", "--until", "0.05"],
        dir.path(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let out = silt(&["run", "sink.toml", "-o", "split", "--resume"], dir.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let whole = all_files(&dir.path().join("whole"));
    assert_eq!(whole, all_files(&dir.path().join("split")));
    let names: Vec<&str> = whole.iter().map(|(n, _)| n.as_str()).collect();
    for name in [
        "series.pvd",
        "diagnostics.csv",
        "track_0.csv",
        "particles/particles_000005.vtp",
        "fluid/fluid_000005.vti",
        "profiles/profile_000005.csv",
        "checkpoint.bin",
    ] {
        assert!(names.contains(&name), "{name} missing from {names:?}");
    }

    // Bad input: exit code 2 with the file and the key.
    let bad = SCENE.replace("density = 1.0\n", "");
    std::fs::write(dir.path().join("bad.toml"), bad).unwrap();
    for args in [
        &["run", "bad.toml", "-o", "out"][..],
        &["check", "bad.toml"],
    ] {
        let out = silt(args, dir.path());
        assert_eq!(out.status.code(), Some(2));
        let message = stderr(&out);
        assert!(
            message.contains("bad.toml: key `fluid.density`: missing"),
            "{message}"
        );
    }
    // Resuming a run that has no checkpoint.
    let out = silt(&["run", "sink.toml", "-o", "none", "--resume"], dir.path());
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}
