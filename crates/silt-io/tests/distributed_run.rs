//! A fluid scene run through the user's run path on several ranks (ranks as threads: the same code as
//! `mpirun -np N silt run`) writes the serial run's diagnostics and profiles to the byte, a ParaView
//! image of per-rank pieces, and per-rank checkpoints that resume on any number of ranks. A fiber scene
//! (every rank holding all the beads, the hydrodynamics shared out by rows) writes the serial files, and
//! so does a bed of spheres split into slabs (ghosts, migration, contact memory moving with its pair),
//! its frames one `.pvtp` of the ranks' pieces, and a small sheared bed of resolved spheres (the fluid in
//! slabs, each rank stepping the spheres of its slab and forcing its own planes) through the seed's
//! protocol, and spheres settling in a flat periodic box whose fluid runs in slabs on 2 and 3 ranks and
//! in 2 x 2 pencils on 4.

use silt_io::scenes::{simulation, simulation_on, Scene, SceneKind};
use silt_parallel::LocalGroup;
use std::path::Path;

/// The distributed examples: a channel across z (the axis the ranks split) held at its flow rate,
/// with profiles across the walls, and a periodic Taylor–Green box with profiles along x.
const CHANNEL: &str = include_str!("../../../examples/mpi-channel.toml");
const BOX: &str = include_str!("../../../examples/mpi-taylor-green.toml");
/// A flat duct whose ranks split y as well as z beyond 2 ranks (pencils).
const PENCILS: &str = include_str!("../../../examples/mpi-pencils.toml");
/// Fibers of odd and even bead counts in shear, conjugate-gradient multipliers.
const FIBERS: &str = include_str!("../../../examples/mpi-fibers.toml");
/// Spheres poured onto a floor, split across gravity (slabs along x, or 2 x 2 blocks on 4 ranks), Hertz
/// contacts with shear history, velocity Verlet.
const BED: &str = include_str!("../../../examples/mpi-bed.toml");
/// The seed's sheared bed, small: settled dry, mobilised, held at its flow rate (eq. 32).
const SHEARED_BED: &str = include_str!("../../../examples/mpi-sheared-bed.toml");

fn scene(text: &str) -> (String, Scene) {
    let scene = Scene::parse(text, Path::new("scene.toml")).unwrap();
    (text.to_string(), scene)
}

fn run_on(ranks: usize, text: &str, scene: &Scene, out: &Path, resume: bool, until: Option<f64>) {
    let Scene::Fluid(fluid) = scene else {
        panic!("a fluid scene")
    };
    let results = LocalGroup::run(ranks, |comm| {
        let mut sim = simulation_on(fluid, text, out, resume, &comm).map_err(|e| e.to_string())?;
        sim.run(until, &mut |_| {}).map_err(|e| e.to_string())?;
        Ok::<_, String>(())
    });
    for (rank, r) in results.into_iter().enumerate() {
        r.unwrap_or_else(|e| panic!("rank {rank} of {ranks}: {e}"));
    }
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn a_run_on_one_to_four_ranks_writes_the_serial_figures() {
    for (text, cells) in [
        (CHANNEL, "0 16 0 12 0 21"),
        (BOX, "0 16 0 16 0 15"),
        (PENCILS, "0 16 0 13 0 5"),
    ] {
        let (text, scene) = scene(text);
        let serial = tempfile::tempdir().unwrap();
        let Scene::Fluid(fluid) = &scene else {
            unreachable!()
        };
        let mut sim = simulation(fluid, &text, serial.path(), false).unwrap();
        sim.run(None, &mut |_| {}).unwrap();
        let diagnostics = read(&serial.path().join("diagnostics.csv"));
        assert!(diagnostics.lines().count() >= 4, "{diagnostics}");
        let profile = read(&serial.path().join("profiles/profile_000005.csv"));
        for ranks in 2..=4 {
            let dir = tempfile::tempdir().unwrap();
            run_on(ranks, &text, &scene, dir.path(), false, None);
            assert_eq!(
                read(&dir.path().join("diagnostics.csv")),
                diagnostics,
                "diagnostics on {ranks} ranks ({cells})"
            );
            assert_eq!(
                read(&dir.path().join("profiles/profile_000005.csv")),
                profile,
                "profile on {ranks} ranks ({cells})"
            );
            // One image of the ranks' pieces, listed by the series.
            let pvti = read(&dir.path().join("fluid/fluid_000005.pvti"));
            assert_eq!(pvti.matches("<Piece ").count(), ranks, "{pvti}");
            assert!(pvti.contains(&format!("WholeExtent=\"{cells}\"")), "{pvti}");
            for r in 0..ranks {
                assert!(dir
                    .path()
                    .join(format!("fluid/fluid_000005_r{r:04}.vti"))
                    .exists());
            }
            assert!(read(&dir.path().join("series.pvd")).contains("fluid/fluid_000005.pvti"));
        }
    }
}

#[test]
fn a_distributed_run_resumes_on_any_number_of_ranks() {
    let (text, scene) = scene(CHANNEL);
    let whole = tempfile::tempdir().unwrap();
    run_on(3, &text, &scene, whole.path(), false, None);
    let expected = read(&whole.path().join("diagnostics.csv"));
    // Stopped at 0.2 on 3 ranks (a checkpoint per rank), resumed to the end on 3, 2, 4 and 1 rank(s):
    // each rank's slab is cut from the pieces that hold its planes; the same rows.
    for resumed_on in [3, 2, 4, 1] {
        let legs = tempfile::tempdir().unwrap();
        run_on(3, &text, &scene, legs.path(), false, Some(0.2));
        for r in 0..3 {
            assert!(legs
                .path()
                .join(format!("checkpoint.rank{r}-of-3.bin"))
                .exists());
        }
        assert!(!legs.path().join("checkpoint.bin").exists());
        if resumed_on == 1 {
            let Scene::Fluid(fluid) = &scene else {
                unreachable!()
            };
            let mut sim = simulation(fluid, &text, legs.path(), true).unwrap();
            sim.run(None, &mut |_| {}).unwrap();
        } else {
            run_on(resumed_on, &text, &scene, legs.path(), true, None);
        }
        assert_eq!(
            read(&legs.path().join("diagnostics.csv")),
            expected,
            "resumed on {resumed_on} rank(s)"
        );
    }
    // A serial run resumed on 2 ranks, too.
    let serial = tempfile::tempdir().unwrap();
    let Scene::Fluid(fluid) = &scene else {
        unreachable!()
    };
    let mut sim = simulation(fluid, &text, serial.path(), false).unwrap();
    sim.run(Some(0.2), &mut |_| {}).unwrap();
    run_on(2, &text, &scene, serial.path(), true, None);
    assert_eq!(read(&serial.path().join("diagnostics.csv")), expected);
}

#[test]
fn a_run_in_pencils_resumes_on_any_process_grid() {
    // 4 ranks: 2 x 2 blocks of y rows and z planes; 3: 3 x 1; 2: 2 x 1; 1: the whole grid.
    let (text, scene) = scene(PENCILS);
    let whole = tempfile::tempdir().unwrap();
    run_on(4, &text, &scene, whole.path(), false, None);
    let expected = read(&whole.path().join("diagnostics.csv"));
    for (stopped_on, resumed_on) in [(4, 3), (4, 2), (3, 4), (2, 4), (4, 1)] {
        let legs = tempfile::tempdir().unwrap();
        run_on(stopped_on, &text, &scene, legs.path(), false, Some(0.2));
        if resumed_on == 1 {
            let Scene::Fluid(fluid) = &scene else {
                unreachable!()
            };
            let mut sim = simulation(fluid, &text, legs.path(), true).unwrap();
            sim.run(None, &mut |_| {}).unwrap();
        } else {
            run_on(resumed_on, &text, &scene, legs.path(), true, None);
        }
        assert_eq!(
            read(&legs.path().join("diagnostics.csv")),
            expected,
            "stopped on {stopped_on} ranks, resumed on {resumed_on}"
        );
    }
}

#[test]
fn a_damaged_piece_stops_every_rank_with_its_name() {
    let (text, scene) = scene(CHANNEL);
    let dir = tempfile::tempdir().unwrap();
    run_on(3, &text, &scene, dir.path(), false, Some(0.2));
    std::fs::write(
        dir.path().join("checkpoint.rank1-of-3.bin"),
        b"not a checkpoint",
    )
    .unwrap();
    let Scene::Fluid(fluid) = &scene else {
        unreachable!()
    };
    for ranks in [3, 2] {
        let errors = LocalGroup::run(ranks, |comm| {
            match simulation_on(fluid, &text, dir.path(), true, &comm) {
                Ok(_) => String::new(),
                Err(e) => e.to_string(),
            }
        });
        assert!(
            errors.iter().all(|e| !e.is_empty()),
            "every rank stops on {ranks} ranks: {errors:?}"
        );
        assert!(
            errors.iter().any(|e| e.contains("not a checkpoint")),
            "{errors:?}"
        );
    }
}

#[test]
fn scenes_that_cannot_be_split_yet_say_so() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/rod-steel-pendulum.toml"
    ))
    .unwrap();
    let Scene::Rods(rods) = Scene::parse(&text, Path::new("rod-steel-pendulum.toml")).unwrap()
    else {
        panic!("a rod scene")
    };
    let dir = tempfile::tempdir().unwrap();
    let errors = LocalGroup::run(2, |comm| {
        match simulation_on(&rods, &text, dir.path(), false, &comm) {
            Ok(_) => String::new(),
            Err(e) => e.to_string(),
        }
    });
    assert!(
        errors[0].contains("cannot run on 2 ranks yet"),
        "{}",
        errors[0]
    );
}

/// Runs scene `kind` (from `text`) on `ranks` ranks (one: the serial path) into `out`.
fn run_kind<K: SceneKind + Sync>(
    kind: &K,
    text: &str,
    ranks: usize,
    out: &Path,
    resume: bool,
    until: Option<f64>,
) {
    if ranks == 1 {
        let mut sim = simulation(kind, text, out, resume).unwrap();
        sim.run(until, &mut |_| {}).unwrap();
        return;
    }
    let results = LocalGroup::run(ranks, |comm| {
        let mut sim = simulation_on(kind, text, out, resume, &comm).map_err(|e| e.to_string())?;
        sim.run(until, &mut |_| {}).map_err(|e| e.to_string())?;
        Ok::<_, String>(())
    });
    for (rank, r) in results.into_iter().enumerate() {
        r.unwrap_or_else(|e| panic!("rank {rank} of {ranks}: {e}"));
    }
}

fn run_fibers(ranks: usize, text: &str, out: &Path, resume: bool, until: Option<f64>) {
    let Scene::Fibers(fibers) = Scene::parse(text, Path::new("scene.toml")).unwrap() else {
        panic!("a fiber scene")
    };
    run_kind(&fibers, text, ranks, out, resume, until);
}

/// The files a fiber run writes that must match the serial run's to the byte.
const FIBER_FILES: [&str; 4] = [
    "diagnostics.csv",
    "fibers.csv",
    "fibers/fibers_000002.vtp",
    "series.pvd",
];

#[test]
fn a_fiber_run_on_two_to_four_ranks_writes_the_serial_files_and_resumes_on_any() {
    let serial = tempfile::tempdir().unwrap();
    run_fibers(1, FIBERS, serial.path(), false, None);
    let expected: Vec<String> = FIBER_FILES
        .iter()
        .map(|f| read(&serial.path().join(f)))
        .collect();
    assert!(expected[0].lines().count() >= 5, "{}", expected[0]);
    let compare = |dir: &Path, what: &str| {
        for (file, want) in FIBER_FILES.iter().zip(&expected) {
            assert_eq!(&read(&dir.join(file)), want, "{file}, {what}");
        }
    };
    for ranks in 2..=4 {
        let dir = tempfile::tempdir().unwrap();
        run_fibers(ranks, FIBERS, dir.path(), false, None);
        compare(dir.path(), &format!("{ranks} ranks"));
        // One set of files: the per-rank checkpoints only.
        assert!(dir
            .path()
            .join(format!("checkpoint.rank{}-of-{ranks}.bin", ranks - 1))
            .exists());
    }
    // Stopped at 0.1 on 3 ranks, resumed on 3, 2 and 1; a serial run resumed on 4.
    for (first, then) in [(3, 3), (3, 2), (3, 1), (1, 4)] {
        let dir = tempfile::tempdir().unwrap();
        run_fibers(first, FIBERS, dir.path(), false, Some(0.1));
        run_fibers(then, FIBERS, dir.path(), true, None);
        compare(dir.path(), &format!("{first} ranks resumed on {then}"));
    }
}

/// Runs the sphere bed on `ranks` ranks (one: the serial path) into `out`.
fn run_bed(ranks: usize, out: &Path, resume: bool, until: Option<f64>) {
    let Scene::Particles(bed) = Scene::parse(BED, Path::new("scene.toml")).unwrap() else {
        panic!("a particle scene")
    };
    run_kind(&bed, BED, ranks, out, resume, until);
}

/// The files of the bed that must match the serial run's to the byte.
const BED_FILES: [&str; 4] = [
    "diagnostics.csv",
    "track_0.csv",
    "track_150.csv",
    "track_299.csv",
];

#[test]
fn a_bed_split_over_two_to_four_ranks_writes_the_serial_files_and_resumes_on_any() {
    let serial = tempfile::tempdir().unwrap();
    run_bed(1, serial.path(), false, None);
    let expected: Vec<String> = BED_FILES
        .iter()
        .map(|f| read(&serial.path().join(f)))
        .collect();
    // The bed is in contact by the end (the memory that moves with the pairs is exercised).
    let last = expected[0].lines().last().unwrap().to_string();
    let contacts: f64 = last.split(',').nth(5).unwrap().parse().unwrap();
    assert!(contacts >= 20.0, "{last}");
    let compare = |dir: &Path, what: &str| {
        for (file, want) in BED_FILES.iter().zip(&expected) {
            assert_eq!(&read(&dir.join(file)), want, "{file}, {what}");
        }
    };
    for ranks in 2..=4 {
        let dir = tempfile::tempdir().unwrap();
        run_bed(ranks, dir.path(), false, None);
        compare(dir.path(), &format!("{ranks} ranks"));
        // One data set of the ranks' pieces per frame, every sphere in one piece.
        let pvtp = read(&dir.path().join("particles/particles_000008.pvtp"));
        assert_eq!(pvtp.matches("<Piece ").count(), ranks, "{pvtp}");
        let mut spheres = 0;
        for r in 0..ranks {
            let piece = read(
                &dir.path()
                    .join(format!("particles/particles_000008_r{r:04}.vtp")),
            );
            let at = piece.find("NumberOfPoints=\"").unwrap() + 16;
            let count: usize = piece[at..].split('"').next().unwrap().parse().unwrap();
            spheres += count;
        }
        assert_eq!(spheres, 300, "{ranks} ranks");
        assert!(read(&dir.path().join("series.pvd")).contains("particles/particles_000008.pvtp"));
    }
    // Stopped at 0.2 on 3 ranks, resumed on 3, 2 and 1; a serial run resumed on 4.
    for (first, then) in [(3, 3), (3, 2), (3, 1), (1, 4)] {
        let dir = tempfile::tempdir().unwrap();
        run_bed(first, dir.path(), false, Some(0.2));
        run_bed(then, dir.path(), true, None);
        compare(dir.path(), &format!("{first} ranks resumed on {then}"));
    }
}

/// Runs the small sheared bed on `ranks` ranks (one: the serial path) into `out`.
fn run_sheared_bed(ranks: usize, out: &Path, resume: bool, until: Option<f64>) {
    let Scene::Coupled(bed) = Scene::parse(SHEARED_BED, Path::new("scene.toml")).unwrap() else {
        panic!("a coupled scene")
    };
    run_kind(&bed, SHEARED_BED, ranks, out, resume, until);
}

/// `dir` holds the files of the run in `serial` (but its checkpoints, fluid images and series), each
/// equal to the byte; `what` names the run in a failure.
fn same_files_as(serial: &Path, dir: &Path, what: &str) {
    let files = written_files(serial);
    assert_eq!(written_files(dir), files, "{what}");
    for file in &files {
        assert_eq!(
            read(&dir.join(file)),
            read(&serial.join(file)),
            "{file}, {what}"
        );
    }
}

/// The files of a run's folder (relative paths, sorted) but its checkpoints, fluid images and series.
fn written_files(dir: &Path) -> Vec<String> {
    let mut files = Vec::new();
    let mut folders = vec![dir.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
                continue;
            }
            let name = path
                .strip_prefix(dir)
                .unwrap()
                .to_string_lossy()
                .to_string();
            let skipped = name.starts_with("checkpoint")
                || name.starts_with("fluid/")
                || name == "series.pvd";
            if !skipped {
                files.push(name);
            }
        }
    }
    files.sort();
    files
}

#[test]
fn a_sheared_bed_on_two_to_four_ranks_writes_the_serial_files_and_resumes_on_any() {
    let serial = tempfile::tempdir().unwrap();
    run_sheared_bed(1, serial.path(), false, None);
    let files = written_files(serial.path());
    for needed in ["diagnostics.csv", "bed.csv", "profiles/profile_000006.csv"] {
        assert!(files.iter().any(|f| f == needed), "{needed} in {files:?}");
    }
    // The protocol went through to its averages (phase 3), the particles moving (q_v > 0).
    let bed = read(&serial.path().join("bed.csv"));
    let last: Vec<f64> = bed
        .lines()
        .last()
        .unwrap()
        .split(',')
        .map(|v| v.parse().unwrap())
        .collect();
    assert!(last[1] == 3.0 && last[6] > 0.0, "{bed}");
    let compare = |dir: &Path, what: &str| same_files_as(serial.path(), dir, what);
    for ranks in 2..=4 {
        let dir = tempfile::tempdir().unwrap();
        run_sheared_bed(ranks, dir.path(), false, None);
        compare(dir.path(), &format!("{ranks} ranks"));
        // The fluid frames: one image of the ranks' pieces.
        let pvti = read(&dir.path().join("fluid/fluid_000003.pvti"));
        assert_eq!(pvti.matches("<Piece ").count(), ranks, "{pvti}");
    }
    // Stopped on 3 ranks while mobilising, resumed on 2 and 1; a serial run resumed on 4.
    for (first, then) in [(3, 2), (3, 1), (1, 4)] {
        let dir = tempfile::tempdir().unwrap();
        run_sheared_bed(first, dir.path(), false, Some(0.5));
        run_sheared_bed(then, dir.path(), true, None);
        compare(dir.path(), &format!("{first} ranks resumed on {then}"));
    }
}

/// Glass spheres settling in water onto the floor of a flat box of 24 x 24 x 12 cells (D/h = 6,
/// periodic along x and y, walls across z): too few planes for slabs of 4 on 4 ranks, so its fluid
/// runs there in 2 x 2 pencils (slabs on 2 and 3).
const FLAT_BOX: &str = r#"
[simulation]
dt = 2e-4
end_time = 0.008
gravity = [0.0, 0.0, -9.81]
seed = 5

[[material]]
name = "glass"
density = 2500.0
e_dry = 0.97
poisson = 0.22
mu_s = 0.8
mu_k = 0.15

[[particles]]
material = "glass"
count = 5
placement = "random"
region = { min = [0.0, 0.0, 0.0], max = [0.0043, 0.0043, 0.0021] }
diameter = { distribution = "gaussian", mean = 0.0011, std = 0.0001 }

[output]
interval = 0.002
checkpoint_interval = 0.004

[fluid]
cells = [24, 24, 12]
spacing = 1.8333333e-4
density = 1000.0
viscosity = 1e-6

[fluid.boundaries]
z_low = { type = "no-slip" }
z_high = { type = "no-slip" }

[fluid.output]
vtk_interval = 0.004
"#;

#[test]
fn spheres_in_a_fluid_on_pencils_write_the_serial_files_and_resume_on_any_grid() {
    let Scene::Coupled(scene) = Scene::parse(FLAT_BOX, Path::new("scene.toml")).unwrap() else {
        panic!("a coupled scene")
    };
    let run = |ranks: usize, out: &Path, resume: bool, until: Option<f64>| {
        run_kind(&scene, FLAT_BOX, ranks, out, resume, until)
    };
    let serial = tempfile::tempdir().unwrap();
    run(1, serial.path(), false, None);
    let files = written_files(serial.path());
    assert!(files.iter().any(|f| f == "diagnostics.csv"), "{files:?}");
    let compare = |dir: &Path, what: &str| same_files_as(serial.path(), dir, what);
    for ranks in 2..=4 {
        let dir = tempfile::tempdir().unwrap();
        run(ranks, dir.path(), false, None);
        compare(dir.path(), &format!("{ranks} ranks"));
        // The pieces of the fluid image: slabs of whole planes on 2 and 3 ranks, 2 x 2 pencils
        // (pieces of half the rows) on 4.
        let pvti = read(&dir.path().join("fluid/fluid_000002.pvti"));
        let rows: Vec<&str> = pvti
            .split("<Piece Extent=\"")
            .skip(1)
            .map(|piece| piece.split(' ').nth(3).unwrap())
            .collect();
        let split_rows = rows.iter().any(|&end| end != "24");
        assert_eq!(split_rows, ranks == 4, "{ranks} ranks: {pvti}");
    }
    // Stopped on 4 ranks (pencils) and resumed on 3 (slabs) and 1; stopped on 2 and resumed on 4.
    for (first, then) in [(4, 3), (4, 1), (2, 4)] {
        let dir = tempfile::tempdir().unwrap();
        run(first, dir.path(), false, Some(0.004));
        run(then, dir.path(), true, None);
        compare(dir.path(), &format!("{first} ranks resumed on {then}"));
    }
}
