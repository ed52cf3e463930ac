//! The MPI stage (`scripts/test` runs it where MPI is installed): `mpirun -np N silt run` of a
//! silt built with `--features mpi`, against the serial run of the same binary. The diagnostics and
//! profiles are the serial run's to the byte on 2, 3 and 4 ranks (the decomposed solver does every
//! value's arithmetic in the serial order), the fluid image is one `.pvti` of per-rank pieces, and a
//! run stopped on 2 ranks and resumed on 3 continues bit for bit. A fiber scene, a bed of spheres
//! split into slabs and a small sheared bed of resolved spheres (the seed's protocol) give the serial
//! files.
#![cfg(feature = "mpi")]

use std::path::Path;
use std::process::{Command, Output};

/// The distributed examples: a channel across z (the axis the ranks split) held at its flow rate,
/// and a periodic Taylor–Green box.
const CHANNEL: &str = include_str!("../../../examples/mpi-channel.toml");
const BOX: &str = include_str!("../../../examples/mpi-taylor-green.toml");
/// A flat duct split into pencils beyond 2 ranks (3 x 1, 2 x 2).
const PENCILS: &str = include_str!("../../../examples/mpi-pencils.toml");
/// Fibers in shear, the hydrodynamics shared out by rows.
const FIBERS: &str = include_str!("../../../examples/mpi-fibers.toml");
/// Spheres split into slabs, Hertz contacts with shear history.
const BED: &str = include_str!("../../../examples/mpi-bed.toml");
/// Resolved spheres sheared by the fluid (the fluid and the spheres in slabs).
const SHEARED_BED: &str = include_str!("../../../examples/mpi-sheared-bed.toml");
/// A rod scene (not split yet).
const ROD: &str = include_str!("../../../examples/rod-steel-pendulum.toml");

fn silt(ranks: Option<usize>, args: &[&str], dir: &Path) -> Output {
    let silt = env!("CARGO_BIN_EXE_silt");
    let mut command = match ranks {
        None => Command::new(silt),
        Some(n) => {
            let mut c = Command::new("mpirun");
            c.args(["--oversubscribe", "-np", &n.to_string(), silt]);
            c
        }
    };
    command
        .args(args)
        .current_dir(dir)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .output()
        .expect("mpirun and silt start")
}

fn succeeds(output: Output, what: &str) -> String {
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{what}: {stderr}");
    stderr
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn mpirun_gives_the_serial_run_to_the_byte() {
    let dir = tempfile::tempdir().unwrap();
    for (name, scene, cells) in [
        ("channel", CHANNEL, "0 16 0 12 0 21"),
        ("box", BOX, "0 16 0 16 0 15"),
        ("pencils", PENCILS, "0 16 0 13 0 5"),
    ] {
        std::fs::write(dir.path().join(format!("{name}.toml")), scene).unwrap();
        let file = format!("{name}.toml");
        let serial = format!("{name}-serial");
        succeeds(
            silt(None, &["run", &file, "-o", &serial, "--quiet"], dir.path()),
            "serial run",
        );
        let diagnostics = read(&dir.path().join(&serial).join("diagnostics.csv"));
        let profile = read(&dir.path().join(&serial).join("profiles/profile_000005.csv"));
        for ranks in 2..=4 {
            let out = format!("{name}-np{ranks}");
            let stderr = succeeds(
                silt(Some(ranks), &["run", &file, "-o", &out], dir.path()),
                &out,
            );
            assert!(stderr.contains(&format!("on {ranks} ranks")), "{stderr}");
            // Rank 0 alone reports.
            assert_eq!(stderr.matches("silt: done").count(), 1, "{stderr}");
            let out = dir.path().join(&out);
            assert_eq!(
                read(&out.join("diagnostics.csv")),
                diagnostics,
                "{name} on {ranks} ranks"
            );
            assert_eq!(
                read(&out.join("profiles/profile_000005.csv")),
                profile,
                "{name} on {ranks} ranks"
            );
            let pvti = read(&out.join("fluid/fluid_000005.pvti"));
            assert_eq!(pvti.matches("<Piece ").count(), ranks, "{pvti}");
            assert!(pvti.contains(&format!("WholeExtent=\"{cells}\"")), "{pvti}");
        }
    }
}

#[test]
fn mpirun_runs_fibers_to_the_serial_numbers() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("fibers.toml"), FIBERS).unwrap();
    succeeds(
        silt(
            None,
            &["run", "fibers.toml", "-o", "serial", "--quiet"],
            dir.path(),
        ),
        "serial run",
    );
    let stderr = succeeds(
        silt(Some(3), &["run", "fibers.toml", "-o", "np3"], dir.path()),
        "3 ranks",
    );
    assert_eq!(stderr.matches("silt: done").count(), 1, "{stderr}");
    for file in ["diagnostics.csv", "fibers.csv", "fibers/fibers_000004.vtp"] {
        assert_eq!(
            read(&dir.path().join("np3").join(file)),
            read(&dir.path().join("serial").join(file)),
            "{file}"
        );
    }
}

/// Runs `scene` serially into `serial` and with `mpirun -np ranks` into `npN`; checks that `files` are
/// the same in both; returns the folder and what the distributed run printed.
fn serial_and_on_ranks(scene: &str, ranks: usize, files: &[&str]) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("scene.toml"), scene).unwrap();
    succeeds(
        silt(
            None,
            &["run", "scene.toml", "-o", "serial", "--quiet"],
            dir.path(),
        ),
        "serial run",
    );
    let out = format!("np{ranks}");
    let stderr = succeeds(
        silt(Some(ranks), &["run", "scene.toml", "-o", &out], dir.path()),
        &format!("{ranks} ranks"),
    );
    for file in files {
        assert_eq!(
            read(&dir.path().join(&out).join(file)),
            read(&dir.path().join("serial").join(file)),
            "{file}"
        );
    }
    (dir, stderr)
}

#[test]
fn mpirun_runs_a_bed_to_the_serial_numbers() {
    let files = ["diagnostics.csv", "track_0.csv", "track_299.csv"];
    let (dir, stderr) = serial_and_on_ranks(BED, 3, &files);
    assert!(stderr.contains("split along x into 3 slabs"), "{stderr}");
    let pvtp = read(&dir.path().join("np3/particles/particles_000008.pvtp"));
    assert_eq!(pvtp.matches("<Piece ").count(), 3, "{pvtp}");
}

#[test]
fn mpirun_runs_a_sheared_bed_to_the_serial_numbers() {
    let files = ["diagnostics.csv", "bed.csv", "profiles/profile_000006.csv"];
    let (dir, _) = serial_and_on_ranks(SHEARED_BED, 3, &files);
    let pvti = read(&dir.path().join("np3/fluid/fluid_000003.pvti"));
    assert_eq!(pvti.matches("<Piece ").count(), 3, "{pvti}");
}

#[test]
fn mpirun_resumes_on_another_number_of_ranks() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("channel.toml"), CHANNEL).unwrap();
    succeeds(
        silt(
            Some(2),
            &["run", "channel.toml", "-o", "whole", "--quiet"],
            dir.path(),
        ),
        "whole",
    );
    succeeds(
        silt(
            Some(2),
            &[
                "run",
                "channel.toml",
                "-o",
                "legs",
                "--quiet",
                "--until",
                "0.2",
            ],
            dir.path(),
        ),
        "first leg",
    );
    // The checkpoints of 2 ranks, cut anew for 3.
    succeeds(
        silt(
            Some(3),
            &["run", "channel.toml", "-o", "legs", "--resume", "--quiet"],
            dir.path(),
        ),
        "second leg",
    );
    assert_eq!(
        read(&dir.path().join("legs/diagnostics.csv")),
        read(&dir.path().join("whole/diagnostics.csv"))
    );
}

#[test]
fn mpirun_refuses_scenes_that_cannot_be_split_yet() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("rod.toml"), ROD).unwrap();
    let output = silt(Some(2), &["run", "rod.toml", "-o", "rod"], dir.path());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("cannot run on 2 ranks yet"), "{stderr}");
    // Printed once, by rank 0.
    assert_eq!(stderr.matches("error:").count(), 1, "{stderr}");
}

#[test]
fn mpirun_stops_a_diverging_run_on_every_rank_with_exit_1() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("box.toml"), BOX).unwrap();
    // A runaway body force at a fixed step: the CFL limit is passed at t ~ 0.14.
    let args = [
        "run",
        "box.toml",
        "-o",
        "runaway",
        "--set",
        "fluid.body_force=[100.0, 0.0, 0.0]",
        "--unset",
        "fluid.cfl",
        "--set",
        "fluid.time_step=0.05",
    ];
    let output = silt(Some(3), &args, dir.path());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert_eq!(
        stderr.matches("the flow diverged at step").count(),
        1,
        "{stderr}"
    );
    assert_eq!(stderr.matches("is kept in").count(), 1, "{stderr}");
    let rows = read(&dir.path().join("runaway/diagnostics.csv"));
    assert!(rows.lines().count() >= 2, "{rows}");
    for r in 0..3 {
        assert!(dir
            .path()
            .join(format!("runaway/checkpoint.rank{r}-of-3.bin"))
            .exists());
    }
}

/// The sheared bed driven far too hard (a flow rate 200 times the scene's): the run on 2 ranks stops at the
/// serial run's step with exit 1, one message, the output kept and a checkpoint per rank. (The serial run
/// names the flow's divergence; on ranks the spheres flung by it may first outrun the ghost layers in the
/// same step, which stops the run with that message.)
#[test]
fn mpirun_stops_a_diverging_sheared_bed_at_the_serial_runs_step() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bed.toml"), SHEARED_BED).unwrap();
    let run = |ranks, out: &str| {
        let args = ["run", "bed.toml", "-o", out, "--set", "bed.flow_rate=50.0"];
        let output = silt(ranks, &args, dir.path());
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        assert_eq!(output.status.code(), Some(1), "{out}: {stderr}");
        let error: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
        assert_eq!(error.len(), 1, "{out}: {stderr}");
        assert_eq!(stderr.matches("is kept in").count(), 1, "{stderr}");
        error[0].to_string()
    };
    let serial = run(None, "serial");
    assert!(
        serial.contains("the flow diverged at step 451 (t = 0.451)"),
        "{serial}"
    );
    let ranks = run(Some(2), "np2");
    assert!(
        ranks == serial || ranks.contains("within one step at t = 0.451"),
        "{ranks}"
    );
    for file in ["diagnostics.csv", "bed.csv"] {
        assert_eq!(
            read(&dir.path().join("np2").join(file)),
            read(&dir.path().join("serial").join(file)),
            "{file}"
        );
    }
    for r in 0..2 {
        let checkpoint = format!("np2/checkpoint.rank{r}-of-2.bin");
        assert!(dir.path().join(&checkpoint).exists(), "{checkpoint}");
    }
}

#[test]
fn mpirun_refuses_more_ranks_than_the_grid_can_split_naming_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("box.toml"), BOX).unwrap();
    // 16 x 16 x 15 cells: at most 7 slabs of 2 planes, and 11 ranks factor only as 1 x 11 or
    // 11 x 1, each needing 22 rows or planes (8 ranks would run, as 2 x 4 pencils).
    let output = silt(Some(11), &["run", "box.toml", "-o", "out"], dir.path());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("fluid.cells") && stderr.contains("use at most 7 ranks"),
        "{stderr}"
    );
    assert_eq!(stderr.matches("error:").count(), 1, "{stderr}");
}
