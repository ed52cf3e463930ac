//! Fiber scenes: every malformed or non-physical scene gives one clear error naming the file and the
//! key, no scene makes Silt panic, the placements are what the documentation says, and a run stopped
//! and resumed from its checkpoint (on another thread count) equals a continuous run bit for bit,
//! output files included.

mod common;

use silt_fibers::model::FiberModel;
use silt_io::scenes::fibers::FiberScene;
use silt_io::scenes::SceneKind;

/// Whether `text` is a fiber scene (and a valid one).
fn is_fiber_scene(text: &str) -> bool {
    silt_io::scenes::Scene::parse(text, Path::new("x.toml")).is_ok_and(|s| s.kind() == "fibers")
}
use silt_io::run::Simulation;
use std::path::Path;

/// A small valid scene with most keys; each case below breaks it in one place.
const BASE: &str = r#"
[fibers]
bead_radius = 0.5
viscosity = 1.0
bending_rigidity = 50.0
hydrodynamics = "rpy"
bead_force = [0.0, -0.1, 0.0]
twist_rigidity = 2.0
end_time = 0.1
time_step = 0.005
restore_links = true
solver = "conjugate-gradient"
solver_tolerance = 1e-12

[fibers.flow]
type = "simple-shear"
shear_rate = 1.0

[[fibers.fiber]]
beads = 6
shape = "arc"
curvature = 0.1
start = [0.0, 0.0, 0.0]
direction = [1.0, 0.0, 0.0]
binormal = [0.0, 0.0, 1.0]
count = 2
offset = [0.0, 4.0, 0.0]
first_end = "hinged"
rest_curvature = 0.05
end_torque = [0.0, 0.0, 0.1]

[[fibers.fiber]]
beads = 5
count = 3
region = { min = [-10.0, 10.0, -5.0], max = [10.0, 20.0, 5.0] }
seed = 3
wave = { amplitude = 0.1, wavelength = 5.0, period = 2.0, direction = "last-to-first" }

[[fibers.fiber]]
shape = "points"
positions = [[0.0, -5.0, 0.0], [1.0, -5.0, 0.0], [2.0, -5.0, 0.0]]
first_end = "clamped"

[fibers.output]
interval = 0.025
diagnostics_every = 2
checkpoint_interval = 0.05
"#;

fn parse(text: &str) -> Result<FiberScene, silt_io::scenes::SceneError> {
    FiberScene::parse(text, Path::new("fibers.toml"))
}

fn error_of(text: &str) -> String {
    let path = Path::new("broken.toml");
    match FiberScene::parse(text, path).and_then(|s| s.build().map(|_| ())) {
        Ok(()) => panic!("the scene should be refused:\n{text}"),
        Err(e) => {
            assert_eq!(e.file, path);
            e.to_string()
        }
    }
}

fn replace(from: &str, to: &str) -> String {
    assert!(BASE.contains(from), "{from}");
    BASE.replacen(from, to, 1)
}

#[test]
fn the_base_scene_is_valid_and_places_what_it_says() {
    assert!(is_fiber_scene(BASE));
    assert!(!is_fiber_scene("[fluid]\ncells = [1, 1, 1]\n"));
    assert!(!is_fiber_scene("[fibers\n"));
    let scene = parse(BASE).unwrap();
    let system = scene.build().unwrap().system;
    let fibers = system.fibers.fibers();
    assert_eq!(fibers.len(), 6);
    assert_eq!(system.fibers.bead_count(), 2 * 6 + 3 * 5 + 3);
    assert!(system.fibers.link_length_error() < 1e-12);
    // The arcs: the second is the first shifted by the offset, on a circle of radius 10.
    let y = &system.fibers.positions;
    for k in 0..6 {
        assert!((y[6 + k] - y[k] - glam::DVec3::new(0.0, 4.0, 0.0)).length() < 1e-12);
        let centre = glam::DVec3::new(0.0, 10.0, 0.0);
        assert!(((y[k] - centre).length() - 10.0).abs() < 1e-9);
    }
    // Random fibers inside the region, no two beads of different fibers closer than 2a.
    for f in &fibers[2..5] {
        let centre = y[f.clone()].iter().sum::<glam::DVec3>() / f.len() as f64;
        assert!(centre.y > 10.0 && centre.y < 20.0 && centre.x.abs() < 10.0);
    }
    for (i, a) in y.iter().enumerate() {
        for (j, b) in y.iter().enumerate().skip(i + 1) {
            let same = fibers.iter().any(|f| f.contains(&i) && f.contains(&j));
            assert!(
                same || (*a - *b).length() >= 1.0 - 1e-12,
                "beads {i} and {j}"
            );
        }
    }
    // 5 links per arc, 4 per random fiber, 2 for the points; hinges (3 rows), a clamp (9 rows); the
    // alternating spin held at zero on the five fibers without a clamped end (3 rows each).
    let rows: usize = system.constraints.iter().map(|c| c.rows()).sum();
    assert_eq!(rows, 3 * (2 * 5 + 3 * 4 + 2) + 2 * 3 + 9 + 5 * 3);
    assert_eq!((scene.section.end_time / scene.dt).round(), 20.0);
    let report = scene.check().unwrap();
    assert!(report.contains("bending time"), "{report}");
}

/// An actuated end (gears): a rigid fiber whose base turns at a constant rate turns rigidly with it,
/// its tip moving at Ω × r; with an oscillating lateral velocity the base bead follows U(t).
#[test]
fn an_actuated_end_drives_the_fiber() {
    let text = r#"
[fibers]
bead_radius = 0.5
viscosity = 1.0
bending_rigidity = 0.0
rigid = true
end_time = 0.5
time_step = 0.01

[[fibers.fiber]]
beads = 6
first_end = "actuated"
actuation = { angular_velocity = [0.0, 0.0, 0.2] }
"#;
    let scene = parse(text).unwrap();
    let system = scene.build().unwrap().system;
    let motion = system.motion().unwrap();
    let tip = system.fibers.positions[5] - system.fibers.positions[0];
    let expected = glam::DVec3::new(0.0, 0.0, 0.2).cross(tip);
    assert!(
        (motion.velocities[5] - expected).length() < 1e-12,
        "{}",
        motion.velocities[5]
    );
    assert!(motion.velocities[0].length() < 1e-14);

    let text = text
        .replace("rigid = true", "rigid = false")
        .replace("bending_rigidity = 0.0", "bending_rigidity = 10.0")
        .replace(
            "actuation = { angular_velocity = [0.0, 0.0, 0.2] }",
            "actuation = { velocity = [0.0, 0.3, 0.0], frequency = 2.0 }",
        );
    let scene = parse(&text).unwrap();
    let mut system = scene.build().unwrap().system;
    let mut integrator = silt_fibers::dynamics::AdamsBashforth::default();
    for _ in 0..10 {
        let (motion, _) = system.step(0.01, &mut integrator).unwrap();
        let t = system.time - 0.01;
        let prescribed = 0.3 * (2.0 * std::f64::consts::PI * 2.0 * t).cos();
        assert!((motion.velocities[0].y - prescribed).abs() < 1e-12);
        assert!(
            (motion.velocities[1].y - prescribed).abs() < 1e-12,
            "the pair moves rigidly"
        );
    }
}

/// The joint model: the same scene with links = "joint" builds (arms along the links, clamped end
/// held by its first bead alone) and its joints stay closed over a short run.
#[test]
fn the_joint_model_builds_and_keeps_its_joints_closed() {
    let text = replace(
        "time_step = 0.005",
        "time_step = 0.002\nlinks = \"joint\"\njoint_gap = 0.05",
    )
    .replace(
        "[1.0, -5.0, 0.0], [2.0, -5.0, 0.0]",
        "[1.1, -5.0, 0.0], [2.2, -5.0, 0.0]",
    )
    .replace("twist_rigidity = 2.0\n", "");
    let scene = parse(&text).unwrap();
    let mut system = scene.build().unwrap().system;
    assert_eq!(system.joints.len(), 2 * 5 + 3 * 4 + 2);
    assert!((system.fibers.spacing() - 1.1).abs() < 1e-15);
    let mut integrator = silt_fibers::dynamics::AdamsBashforth::default();
    for _ in 0..20 {
        system.step(scene.dt, &mut integrator).unwrap();
    }
    assert!(system.link_error() < 1e-12, "{}", system.link_error());
}

#[test]
fn each_mistake_names_the_file_the_key_and_what_is_allowed() {
    let cases: &[(&str, &str, &[&str])] = &[
        (
            "bead_radius = 0.5",
            "bead_radius = -0.5",
            &["fibers.bead_radius", "> 0"],
        ),
        ("viscosity = 1.0", "viscosity = 0.0", &["fibers.viscosity"]),
        (
            "bending_rigidity = 50.0",
            "bending_rigidity = -1.0",
            &["fibers.bending_rigidity"],
        ),
        (
            "hydrodynamics = \"rpy\"",
            "hydrodynamics = \"oseen\"",
            &["fibers.hydrodynamics", "free-drain"],
        ),
        (
            "solver = \"conjugate-gradient\"",
            "solver = \"lu\"",
            &["fibers.solver", "direct"],
        ),
        (
            "solver_tolerance = 1e-12",
            "solver_tolerance = 2.0",
            &["fibers.solver_tolerance"],
        ),
        (
            "time_step = 0.005",
            "time_step = 1.0",
            &["fibers.time_step", "bending times"],
        ),
        ("end_time = 0.1", "end_time = nan", &["fibers.end_time"]),
        (
            "bead_force = [0.0, -0.1, 0.0]",
            "bead_force = [0.0, inf, 0.0]",
            &["fibers.bead_force"],
        ),
        (
            "type = \"simple-shear\"",
            "type = \"vortex\"",
            &["fibers.flow.type", "poiseuille"],
        ),
        (
            "shear_rate = 1.0",
            "strain_rate = 1.0",
            &["fibers.flow.shear_rate", "missing"],
        ),
        (
            "type = \"simple-shear\"",
            "type = \"uniform\"",
            &["fibers.flow.velocity", "missing"],
        ),
        (
            "shape = \"arc\"",
            "shape = \"helix\"",
            &["fibers.fiber[0].shape", "straight"],
        ),
        (
            "curvature = 0.1",
            "curvature = inf",
            &["fibers.fiber[0].curvature"],
        ),
        (
            "first_end = \"hinged\"",
            "first_end = \"glued\"",
            &["fibers.fiber[0].first_end", "clamped"],
        ),
        ("count = 2", "count = 0", &["fibers.fiber[0].count"]),
        (
            "binormal = [0.0, 0.0, 1.0]",
            "binormal = [0.0, 0.0, 0.0]",
            &["fibers.fiber[0].binormal"],
        ),
        (
            "beads = 6",
            "beads = 1",
            &["fibers.fiber[0].beads", "at least 2"],
        ),
        (
            "rest_curvature = 0.05",
            "rest_curvature = 0.05\nwave = { amplitude = 1.0, wavelength = 1.0, period = 1.0 }",
            &["fibers.fiber[0].rest_curvature", "not both"],
        ),
        (
            "period = 2.0",
            "period = 0.0",
            &["fibers.fiber[1].wave.period"],
        ),
        (
            "direction = \"last-to-first\"",
            "direction = \"up\"",
            &["fibers.fiber[1].wave.direction"],
        ),
        (
            "max = [10.0, 20.0, 5.0]",
            "max = [10.0, 9.0, 5.0]",
            &["fibers.fiber[1].region", "min < max"],
        ),
        (
            "count = 3",
            "count = 3000",
            &["fibers.fiber[1].region", "crowded"],
        ),
        (
            "[2.0, -5.0, 0.0]",
            "[2.5, -5.0, 0.0]",
            &["fibers.fiber[2].positions[2]", "2 bead_radius"],
        ),
        (
            "shape = \"points\"",
            "shape = \"points\"\nbeads = 3",
            &["fibers.fiber[2].beads", "not used"],
        ),
        (
            "interval = 0.025",
            "interval = -1.0",
            &["fibers.output.interval"],
        ),
        (
            "diagnostics_every = 2",
            "diagnostics_every = 0",
            &["fibers.output.diagnostics_every"],
        ),
        ("[fibers.output]", "[fibers.outputs]", &["unknown field"]),
        (
            "restore_links = true",
            "restore_links = 3",
            &["fibers.restore_links"],
        ),
    ];
    for (from, to, needles) in cases {
        let message = error_of(&replace(from, to));
        assert!(message.starts_with("broken.toml"), "{message}");
        for needle in *needles {
            assert!(message.contains(needle), "`{to}`: {message} lacks {needle}");
        }
    }
    // Another table next to [fibers].
    let message = error_of(&format!(
        "{BASE}\n[fluid]\ncells = [4, 4, 4]\nspacing = 0.1\nviscosity = 1.0\n"
    ));
    assert!(
        message.contains("fluid") && message.contains("only the [fibers] table"),
        "{message}"
    );
    // A two-bead fiber clamped at both ends is over-constrained: refused when built.
    let message = error_of(&replace(
        "first_end = \"clamped\"",
        "first_end = \"clamped\"\nlast_end = \"clamped\"",
    ));
    assert!(message.contains("redundant"), "{message}");
    // No fibers at all.
    let message = error_of(
        "[fibers]\nbead_radius = 0.5\nviscosity = 1.0\nbending_rigidity = 1.0\nend_time = 1.0\n",
    );
    assert!(
        message.contains("fibers.fiber") && message.contains("at least one"),
        "{message}"
    );
}

/// No mutant of the base scene (a line dropped, a value replaced) makes Silt panic; some are still
/// valid and build.
#[test]
fn no_fiber_scene_makes_silt_panic() {
    let scenes = common::mutants(BASE, common::NASTY_VALUES);
    let (checked, accepted) = common::fuzz(&scenes, "fibers.toml", |text| {
        parse(text)
            .and_then(|s| s.build().map(|_| ()))
            .map_err(|e| e.to_string())
    });
    assert!(checked > 300, "{checked}");
    assert!(accepted > 10, "{accepted}");
}

fn run(scene: &FiberScene, dir: &Path, until: u64, resume: bool) -> Simulation<FiberModel> {
    let mut sim = silt_io::scenes::simulation(scene, BASE, dir, resume).unwrap();
    let until = (until < u64::MAX).then_some(until as f64 * sim.model.dt);
    sim.run(until, &mut |_| {}).unwrap();
    sim
}

/// A run stopped and resumed (on one thread) equals a continuous one on two, bit for bit, output
/// files included; the fibers move, the links keep 2a, the clamped bead stays put.
#[test]
fn resumed_and_single_threaded_runs_equal_the_continuous_run() {
    let scene = parse(BASE).unwrap();
    let whole_dir = tempfile::tempdir().unwrap();
    let whole = run(&scene, whole_dir.path(), u64::MAX, false);
    assert_eq!(whole.model.steps, 20);
    let split_dir = tempfile::tempdir().unwrap();
    drop(run(&scene, split_dir.path(), 7, false));
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let split = pool.install(|| run(&scene, split_dir.path(), u64::MAX, true));
    let bits = |v: &[glam::DVec3]| -> Vec<[u64; 3]> {
        v.iter()
            .map(|x| [x.x.to_bits(), x.y.to_bits(), x.z.to_bits()])
            .collect()
    };
    assert_eq!(
        bits(&whole.model.system.fibers.positions),
        bits(&split.model.system.fibers.positions)
    );
    for file in ["diagnostics.csv", "series.pvd", "fibers/fibers_000004.vtp"] {
        let expected = std::fs::read(whole_dir.path().join(file)).unwrap();
        let got = std::fs::read(split_dir.path().join(file)).unwrap();
        assert!(got == expected, "{file} differs");
    }
    let start = parse(BASE).unwrap().build().unwrap().system;
    let moved = whole
        .model
        .system
        .fibers
        .positions
        .iter()
        .zip(&start.fibers.positions)
        .filter(|(a, b)| (**a - **b).length() > 1e-6)
        .count();
    assert!(moved > 20, "{moved} beads moved");
    assert!(whole.model.system.fibers.link_length_error() < 1e-12);
    let clamped = start.fibers.fibers()[5].start;
    assert!(
        (whole.model.system.fibers.positions[clamped] - start.fibers.positions[clamped]).length()
            < 1e-12
    );
    let csv = std::fs::read_to_string(whole_dir.path().join("diagnostics.csv")).unwrap();
    // Rows at steps 0, 2, ..., 20 and at the frames (every 5 steps): 5 and 15 besides.
    assert_eq!(
        csv.lines().count(),
        1 + 11 + 2,
        "header, every 2nd step and every frame"
    );
    assert!(csv.starts_with("time,step,end_to_end"));
    assert!(
        whole.model.system.spins.iter().any(|s| s.abs() > 1e-6),
        "the fibers twist"
    );
}
