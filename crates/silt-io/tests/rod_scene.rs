//! Rod scenes: every malformed or non-physical scene gives one clear error naming the file and the
//! key, no scene makes Silt panic, the rods are built as the documentation says, a static scene
//! finds the Timoshenko answer, and a run stopped and resumed from its checkpoint (on another thread
//! count) equals a continuous run bit for bit, output files included, for both integrators.

mod common;

use silt_core::model::Model;
use silt_io::scenes::rods::RodScene;
use silt_io::scenes::SceneKind;
use silt_rods::model::Integrator as RodIntegrator;

/// Whether `text` is a rod scene (and a valid one).
fn is_rod_scene(text: &str) -> bool {
    silt_io::scenes::Scene::parse(text, Path::new("x.toml")).is_ok_and(|s| s.kind() == "rods")
}

/// Frames after the initial one.
fn frames(scene: &RodScene) -> u64 {
    let s = scene.settings();
    (s.end_time / s.interval).ceil() as u64
}
use silt_io::run::Simulation;
use silt_rods::model::Rods;
use std::path::Path;

/// A small valid scene with most keys; each case below breaks it in one place.
const BASE: &str = r#"
[rods]
end_time = 0.02
integrator = "radau"
relative_tolerance = 1e-6
absolute_tolerance = 1e-8
gravity = [0.0, 0.0, -9.81]

[[rods.rod]]
segments = 8
length = 0.5
start = [0.0, 0.0, 0.0]
direction = [1.0, 0.0, 0.0]
normal = [0.0, 0.0, 1.0]
radius = 0.01
density = 1000.0
youngs_modulus = 1e6
poisson_ratio = 0.45
shear_coefficient = 0.9
extensional_viscosity = 100.0
shear_viscosity = 30.0
drag = 0.5
rest_curvature = [0.0, 1.0, 0.5]
first_end = "clamped"
first_end_angular_velocity = [3.0, 0.0, 0.0]
first_end_motion_duration = 0.01
last_end = "free"
end_force = [0.0, 0.0, 0.01]
follower_torque = [0.0, 0.0, 1e-4]
distributed_force = [0.0, 0.01, 0.0]
count = 2
offset = [0.0, 1.0, 0.0]

[[rods.rod]]
segments = 5
length = 0.3
start = [0.0, -1.0, 0.0]
radius = 0.005
density = 2000.0
youngs_modulus = 5e5
shear_modulus = 2e5
kirchhoff = "unshearable"
first_end = "hinged"
last_end = "clamped"
last_end_velocity = [0.01, 0.0, 0.0]

[rods.output]
interval = 0.005
checkpoint_interval = 0.01
"#;

fn parse(text: &str) -> Result<RodScene, silt_io::scenes::SceneError> {
    RodScene::parse(text, Path::new("rods.toml"))
}

fn error_of(text: &str) -> String {
    let path = Path::new("broken.toml");
    match RodScene::parse(text, path).and_then(|s| s.build().map(|_| ())) {
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

/// A rod of the scene with its model.
struct Built<'a> {
    rod: &'a silt_rods::rod::Rod,
    model: &'a silt_rods::dynamics::RodModel,
}

#[test]
fn the_base_scene_builds_what_it_says() {
    assert!(is_rod_scene(BASE));
    let scene = parse(BASE).unwrap();
    assert!(matches!(scene.integrator, RodIntegrator::Radau(_)));
    assert_eq!(frames(&scene), 4);
    assert_eq!(
        scene.settings().checkpoint_interval,
        Some(2.0 * scene.settings().interval)
    );
    let rods: Vec<_> = scene
        .rods
        .iter()
        .map(|(rod, model, _)| Built { rod, model })
        .collect();
    assert_eq!(rods.len(), 3);
    assert_eq!(rods[1].rod.nodes[0], glam::DVec3::new(0.0, 1.0, 0.0));
    assert_eq!(rods[0].rod.segments(), 8);
    // Clamped first end; the third rod hinged and clamped (one clamp frame), its end moving.
    assert_eq!(rods[0].rod.clamps.len(), 1);
    assert_eq!(rods[2].rod.clamps.len(), 1);
    assert_eq!(rods[2].model.boundaries.len(), 2);
    assert!(rods[0].model.damping.is_some() && rods[2].model.damping.is_none());
    assert_eq!(rods[0].model.loads.end_loads.len(), 2);
    // Unshearable: shear stiffness raised a thousandfold, extension unchanged.
    let s = rods[2].rod.stiffness.shear_extension;
    let area = std::f64::consts::PI * 0.005f64.powi(2);
    assert!((s.x / (1e3 * 2e5 * area) - 1.0).abs() < 1e-12);
    assert!((s.z / (5e5 * area) - 1.0).abs() < 1e-12);
    assert_eq!(
        rods[0].rod.rest_curvature[3],
        glam::DVec3::new(0.0, 1.0, 0.5)
    );
    let report = scene.check().unwrap();
    assert!(report.contains("explicit stability limit"), "{report}");
    assert!(report.contains("Radau IIA"), "{report}");
    // The integrator advice rests on what damps the fast modes and on probes of both integrators.
    assert!(report.contains("fast modes:"), "{report}");
    assert!(report.contains("integrator estimate (probes"), "{report}");
    assert!(report.contains("recommended: "), "{report}");
}

/// The steel pendulum of validation/rod-steel-pendulum: undamped, but its fast modes are hardly
/// excited, and the probes measure Radau IIA's steps far above the explicit limit: `silt check`
/// recommends it (measured: about 18 times cheaper; the validation's runs: 2.0 s against 26.8 s).
#[test]
fn check_recommends_radau_for_the_steel_pendulum() {
    let text = r#"
[rods]
end_time = 0.5
integrator = "verlet"
gravity = [0.0, 0.0, -9.81]

[[rods.rod]]
segments = 20
length = 1.0
direction = [1.0, 0.0, 0.0]
normal = [0.0, 0.0, 1.0]
radius = 1e-3
density = 7850.0
youngs_modulus = 200e9
poisson_ratio = 0.3
shear_coefficient = 0.9
first_end = "hinged"

[rods.output]
interval = 0.05
"#;
    let report = parse(text).unwrap().check().unwrap();
    eprintln!("{report}");
    assert!(report.contains("fast modes: undamped"), "{report}");
    assert!(
        report.contains("recommended: integrator = \"radau\""),
        "{report}"
    );
}

#[test]
fn each_mistake_names_the_file_the_key_and_what_is_allowed() {
    let cases: &[(&str, &str, &[&str])] = &[
        (
            "end_time = 0.02",
            "end_time = -1.0",
            &["rods.end_time", "> 0"],
        ),
        ("end_time = 0.02\n", "\n", &["rods.end_time", "missing"]),
        (
            "integrator = \"radau\"",
            "integrator = \"euler\"",
            &["rods.integrator", "verlet"],
        ),
        (
            "relative_tolerance = 1e-6",
            "relative_tolerance = 2.0",
            &["rods.relative_tolerance"],
        ),
        (
            "absolute_tolerance = 1e-8",
            "absolute_tolerance = 0.0",
            &["rods.absolute_tolerance"],
        ),
        ("segments = 8", "segments = 0", &["rods.rod[0].segments"]),
        ("length = 0.5", "length = nan", &["rods.rod[0].length"]),
        ("radius = 0.01", "radius = -0.01", &["rods.rod[0].radius"]),
        (
            "poisson_ratio = 0.45",
            "poisson_ratio = 0.7",
            &["rods.rod[0].poisson_ratio", "(-1, 0.5)"],
        ),
        (
            "poisson_ratio = 0.45",
            "poisson_ratio = 0.45\nshear_modulus = 1e5",
            &["rods.rod[0].poisson_ratio", "not both"],
        ),
        (
            "shear_modulus = 2e5\n",
            "",
            &["rods.rod[1].shear_modulus", "missing"],
        ),
        (
            "normal = [0.0, 0.0, 1.0]",
            "normal = [2.0, 0.0, 0.0]",
            &["rods.rod[0].normal", "parallel"],
        ),
        (
            "direction = [1.0, 0.0, 0.0]",
            "direction = [0.0, 0.0, 0.0]",
            &["rods.rod[0].direction"],
        ),
        (
            "first_end = \"clamped\"",
            "first_end = \"welded\"",
            &["rods.rod[0].first_end", "hinged"],
        ),
        (
            "last_end = \"free\"",
            "last_end = \"free\"\nlast_end_velocity = [1.0, 0.0, 0.0]",
            &[".last_end_velocity", "free end"],
        ),
        (
            "first_end = \"hinged\"",
            "first_end = \"hinged\"\nfirst_end_angular_velocity = [1.0, 0.0, 0.0]",
            &["angular_velocity", "hinged"],
        ),
        (
            "kirchhoff = \"unshearable\"",
            "kirchhoff = \"rigid\"",
            &["rods.rod[1].kirchhoff", "inextensible"],
        ),
        ("drag = 0.5", "drag = -0.5", &["rods.rod[0].drag", ">= 0"]),
        (
            "extensional_viscosity = 100.0",
            "extensional_viscosity = inf",
            &["rods.rod[0].extensional_viscosity"],
        ),
        (
            "first_end_motion_duration = 0.01",
            "first_end_motion_duration = -1.0",
            &["rods.rod[0].first_end_motion_duration"],
        ),
        (
            "integrator = \"radau\"\nrelative_tolerance = 1e-6\nabsolute_tolerance = 1e-8",
            "integrator = \"verlet\"\ntime_step = 1.0",
            &["rods.time_step", "stability limit"],
        ),
        (
            "integrator = \"radau\"",
            "integrator = \"verlet\"",
            &[
                "rods.relative_tolerance",
                "applies to integrator = \"radau\" only",
            ],
        ),
        (
            "integrator = \"radau\"\nrelative_tolerance = 1e-6\nabsolute_tolerance = 1e-8",
            "integrator = \"static\"",
            &["rods.end_time", "a static solve has no time"],
        ),
        (
            "relative_tolerance = 1e-6",
            "relative_tolerance = 1e-6\ntime_step = 1e-4",
            &["rods.time_step", "applies to integrator = \"verlet\" only"],
        ),
        (
            "interval = 0.005",
            "interval = 0.0",
            &["rods.output.interval"],
        ),
        (
            "youngs_modulus = 1e6",
            "youngs_modulus = 1e6\ncolour = \"red\"",
            &["rods.rod[0]", "colour"],
        ),
        (
            "[rods.output]",
            "[fluid]\ncells = [4, 4, 4]\nspacing = 0.1\nviscosity = 1.0\n[rods.output]",
            &["fluid", "only the [rods]"],
        ),
    ];
    for (from, to, needles) in cases {
        let message = error_of(&replace(from, to));
        for needle in *needles {
            assert!(
                message.contains(needle),
                "{from} -> {to}: {message:?} lacks {needle:?}"
            );
        }
        assert!(message.starts_with("broken.toml"), "{message}");
    }
    let no_rods = BASE.split("[[rods.rod]]").next().unwrap().to_string() + "\n[rods.output]\n";
    assert!(error_of(&no_rods).contains("at least one [[rods.rod]]"));
    // A static solve: no time, no moving ends, no output interval; a held end needed.
    let static_scene = BASE
        .replace(
            "end_time = 0.02\nintegrator = \"radau\"\nrelative_tolerance = 1e-6\nabsolute_tolerance = 1e-8",
            "integrator = \"static\"",
        )
        .replace("first_end_angular_velocity = [3.0, 0.0, 0.0]\n", "")
        .replace("first_end_motion_duration = 0.01\n", "")
        .replace("last_end_velocity = [0.01, 0.0, 0.0]\n", "")
        .replace("[rods.output]\ninterval = 0.005\ncheckpoint_interval = 0.01\n", "");
    assert!(
        parse(&static_scene).is_ok(),
        "{:?}",
        parse(&static_scene).err()
    );
    let free_static = static_scene.replace("first_end = \"clamped\"", "first_end = \"free\"");
    assert!(error_of(&free_static).contains("held end"));
    let moving_static = static_scene.replace(
        "last_end = \"clamped\"",
        "last_end = \"clamped\"\nlast_end_velocity = [0.01, 0.0, 0.0]",
    );
    let message = error_of(&moving_static);
    assert!(message.contains(".last_end_velocity"), "{message}");
    assert!(message.contains("last_end_displacement"), "{message}");
    // Along the static load path, an end is displaced and turned instead; not a free end, turned
    // only when clamped, and not in a dynamic run.
    let path = static_scene.replace(
        "last_end = \"clamped\"",
        "last_end = \"clamped\"\nlast_end_displacement = [-0.01, 0.0, 0.0]\nlast_end_rotation = [3.0, 0.0, 0.0]",
    );
    assert!(parse(&path).is_ok(), "{:?}", parse(&path).err());
    for (from, to, needles) in [
        (
            "last_end = \"clamped\"",
            "last_end = \"free\"",
            &[".last_end_displacement", "free end"][..],
        ),
        (
            "last_end = \"clamped\"",
            "last_end = \"hinged\"",
            &[".last_end_rotation", "hinged end turns freely"][..],
        ),
        (
            "last_end_rotation = [3.0, 0.0, 0.0]",
            "last_end_rotation = [3000.0, 0.0, 0.0]",
            &[".last_end_rotation", "at most pi"][..],
        ),
    ] {
        let message = error_of(&path.replace(from, to));
        for needle in needles {
            assert!(
                message.contains(needle),
                "{to}: {message:?} lacks {needle:?}"
            );
        }
    }
    let dynamic_path = replace(
        "last_end_velocity = [0.01, 0.0, 0.0]",
        "last_end_rotation = [0.0, 0.0, 1.0]",
    );
    let message = error_of(&dynamic_path);
    assert!(message.contains(".last_end_rotation"), "{message}");
    assert!(
        message.contains("static load path") && message.contains("last_end_angular_velocity"),
        "{message}"
    );
}

/// No mutant of the base scene (a line dropped, a value replaced) makes Silt panic; some are still
/// valid and build.
#[test]
fn no_rod_scene_makes_silt_panic() {
    let scenes = common::mutants(BASE, common::NASTY_VALUES);
    let (checked, accepted) = common::fuzz(&scenes, "rods.toml", |text| {
        parse(text)
            .and_then(|s| s.build().map(|_| ()))
            .map_err(|e| e.to_string())
    });
    assert!(checked > 300, "{checked}");
    assert!(accepted > 10, "{accepted}");
}

fn run(text: &str, dir: &Path, until: Option<f64>, resume: bool) -> Simulation<Rods> {
    let scene = parse(text).unwrap();
    let mut sim = silt_io::scenes::simulation(&scene, text, dir, resume).unwrap();
    sim.run(until, &mut |_| {}).unwrap();
    sim
}

/// A run stopped at a checkpoint and resumed on one thread equals a continuous run on two, bit for
/// bit, in every output file: Radau IIA and position Verlet.
#[test]
fn resumed_and_single_threaded_runs_equal_the_continuous_run() {
    let verlet = replace("integrator = \"radau\"", "integrator = \"verlet\"")
        .replace("relative_tolerance = 1e-6\n", "")
        .replace("absolute_tolerance = 1e-8\n", "");
    for text in [BASE.to_string(), verlet] {
        let whole_dir = tempfile::tempdir().unwrap();
        let whole = run(&text, whole_dir.path(), None, false);
        // Four frames after the first (Verlet: a fifth at the last step, off the frame grid).
        let frames = whole.frames();
        assert!(frames == 5 || frames == 6, "{frames}");
        let split_dir = tempfile::tempdir().unwrap();
        drop(run(&text, split_dir.path(), Some(0.01), false));
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let split = pool.install(|| run(&text, split_dir.path(), None, true));
        assert_eq!(split.frames(), frames);
        for file in [
            "diagnostics.csv",
            "series.pvd",
            "rods/rods_000004.vtp",
            "checkpoint.bin",
        ] {
            let expected = std::fs::read(whole_dir.path().join(file)).unwrap();
            let got = std::fs::read(split_dir.path().join(file)).unwrap();
            assert!(got == expected, "{file} differs");
        }
        let csv = std::fs::read_to_string(whole_dir.path().join("diagnostics.csv")).unwrap();
        let rows = 1 + 3 * frames as usize;
        assert_eq!(csv.lines().count(), rows, "header, frames of 3 rods");
        // The first rod's free tip has moved.
        let last: Vec<f64> = csv
            .lines()
            .nth(rows - 3)
            .unwrap()
            .split(',')
            .map(|v| v.parse().unwrap())
            .collect();
        // The last frame is at the end time (Verlet: at the last whole step, within dt of it).
        assert_eq!((last[0], last[1]), (whole.model.time(), 0.0));
        assert!((last[0] - 0.02).abs() < 2e-6, "{}", last[0]);
        let moved = (last[2] - 0.5).abs() + last[3].abs() + last[4].abs();
        assert!(moved > 1e-5, "tip moved {moved}");
    }
}

/// Runs the static scene `text` in `dir` (two frames: the unloaded rod and its equilibrium) and gives
/// the equilibrium's diagnostics by column name.
fn solve_static(text: &str, dir: &Path) -> impl Fn(&str) -> f64 {
    let sim = run(text, dir, None, false);
    assert_eq!(sim.frames(), 2);
    let csv = std::fs::read_to_string(dir.join("diagnostics.csv")).unwrap();
    let header: Vec<String> = csv
        .lines()
        .next()
        .unwrap()
        .split(',')
        .map(String::from)
        .collect();
    let row: Vec<f64> = csv
        .lines()
        .nth(2)
        .unwrap()
        .split(',')
        .map(|v| v.parse().unwrap())
        .collect();
    move |name| row[header.iter().position(|h| h == name).unwrap()]
}

/// A static load path that twists a clamped–clamped rod by 1.5 rad, well below Greenhill's twist
/// buckling (M L / EI = 8.99, here 23 rad): the rod stays straight, twisted uniformly, and stores the
/// torsion energy GJ φ² / (2 L) (to the discretisation, O(h²)).
#[test]
fn a_static_load_path_twists_a_clamped_rod() {
    let text = r#"
[rods]
integrator = "static"

[[rods.rod]]
segments = 40
length = 1.0
direction = [1.0, 0.0, 0.0]
normal = [0.0, 1.0, 0.0]
radius = 0.01
density = 1000.0
youngs_modulus = 1e6
poisson_ratio = 0.0
shear_stiffness = [1e7, 1e7, 1e7]
bending_stiffness = [1.0, 1.0, 0.4]
first_end = "clamped"
last_end = "clamped"
last_end_rotation = [1.5, 0.0, 0.0]
"#;
    let dir = tempfile::tempdir().unwrap();
    let column = solve_static(text, dir.path());
    let torsion = 0.4 * 1.5 * 1.5 / 2.0;
    let energy = column("elastic_energy");
    assert!(
        (energy / torsion - 1.0).abs() < 1e-3,
        "{energy} vs {torsion}"
    );
    assert!((column("tip_x") - 1.0).abs() < 1e-9 && column("tip_y").abs() < 1e-9);
}

/// A static scene: PyElastica's Timoshenko cantilever, 0.067770 within 1 %.
#[test]
fn a_static_scene_finds_the_timoshenko_deflection() {
    let text = r#"
[rods]
integrator = "static"

[[rods.rod]]
segments = 100
length = 3.0
direction = [0.0, 0.0, 1.0]
normal = [1.0, 0.0, 0.0]
radius = 0.25
density = 5000.0
youngs_modulus = 1e6
shear_modulus = 1e4
shear_coefficient = 0.9642857142857143
first_end = "clamped"
end_force = [-15.0, 0.0, 0.0]
"#;
    let dir = tempfile::tempdir().unwrap();
    let tip = -solve_static(text, dir.path())("tip_x");
    assert!((tip / 0.067770 - 1.0).abs() < 0.01, "tip {tip}");
    assert!(dir.path().join("rods/rods_000001.vtp").exists());
}
