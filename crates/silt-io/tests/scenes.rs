//! Scene files: every malformed or non-physical scene gives one clear error naming the file and the key,
//! and no scene makes Silt panic.

mod common;

use silt_io::scenes::particles::ParticleScene as Scene;
use std::path::Path;

/// A small valid scene that each case below breaks in one place.
const BASE: &str = r#"
[simulation]
dt = 1e-5
end_time = 0.01
gravity = [0.0, 0.0, -9.81]

[domain]
min = [0.0, 0.0, 0.0]
max = [0.01, 0.01, 0.02]
periodic = [true, true, false]

[[material]]
name = "glass"
density = 2500.0
e_dry = 0.9
mu_s = 0.8
mu_k = 0.15

[contact]
min_impact_velocity = 0.01

[[wall]]
point = [0.0, 0.0, 0.0]
normal = [0.0, 0.0, 1.0]
material = "glass"

[[particles]]
material = "glass"
count = 20
region = { min = [0.0, 0.0, 0.0], max = [0.01, 0.01, 0.01] }
diameter = { distribution = "gaussian", mean = 0.001, std = 0.0001 }
"#;

fn error_of(text: &str) -> String {
    let path = Path::new("broken.toml");
    match Scene::parse(text, path).and_then(|s| s.system().map(|_| ())) {
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
fn the_base_scene_is_valid() {
    let scene = Scene::parse(BASE, Path::new("base.toml")).unwrap();
    let system = scene.system().unwrap();
    assert_eq!(system.particles.len(), 20);
}

#[test]
fn each_mistake_names_the_file_the_key_and_what_is_allowed() {
    let cases: Vec<(String, &str, &str)> = vec![
        (format!("{BASE}\n[extra]\nx = 1\n"), "extra", "unknown field"),
        (replace("dt = 1e-5", "dt = 1e-5\ntimestep = 2"), "simulation.timestep", "unknown field"),
        (replace("dt = 1e-5", "dt = \"small\""), "simulation.dt", "invalid type"),
        (replace("dt = 1e-5", "dt = -1e-5"), "simulation.dt", "> 0"),
        (replace("dt = 1e-5", "dt = nan"), "simulation.dt", "> 0"),
        (replace("e_dry = 0.9", "e_dry = 1.5"), "material[0].e_dry", "(0, 1]"),
        (replace("e_dry = 0.9", "e_dry = 0.0"), "material[0].e_dry", "(0, 1]"),
        (replace("mu_k = 0.15", "mu_k = 0.9"), "material[0].mu_k", "mu_s"),
        (replace("density = 2500.0", "density = 0.0"), "material[0].density", "> 0"),
        (replace("mean = 0.001", "mean = -0.001"), "particles[0].diameter.mean", "> 0"),
        (replace("std = 0.0001", "std = -0.0001"), "particles[0].diameter.std", "[0, 0.3 mean]"),
        (replace("distribution = \"gaussian\"", "distribution = \"lognormal\""), "particles[0].diameter.distribution", "allowed"),
        (replace("material = \"glass\"\ncount", "material = \"sand\"\ncount"), "particles[0].material", "\"glass\""),
        (replace("min_impact_velocity = 0.01", "normal = \"actm\""), "contact.min_impact_velocity", "required"),
        (replace("min_impact_velocity = 0.01", "min_impact_velocity = 0.01\nnormal = \"hooke\""), "contact.normal", "\"actm\""),
        (replace("count = 20", "count = 0"), "particles[0].count", "at least 1"),
        (replace("count = 20", "count = 100000"), "particles[0].count", "fit in the region"),
        (replace("max = [0.01, 0.01, 0.01]", "max = [0.01, 0.01, 0.05]"), "particles[0].region", "inside the domain"),
        (
            replace("max = [0.01, 0.01, 0.02]", "max = [0.002, 0.002, 0.02]")
                .replace("max = [0.01, 0.01, 0.01]", "max = [0.002, 0.002, 0.01]")
                .replace("count = 20", "count = 2"),
            "domain.max",
            "periodic length",
        ),
        (replace("normal = [0.0, 0.0, 1.0]", "normal = [0.0, 0.0, 0.0]"), "wall[0].normal", "non-zero"),
        (format!("{BASE}\n[output]\ntrack = [25]\n"), "output.track", "does not exist"),
        (replace("[simulation]", "[simulation\n"), "", "line 2, column 12"),
        (String::new(), "", "the scene has no tables"),
        (
            replace(
                "count = 20\nregion = { min = [0.0, 0.0, 0.0], max = [0.01, 0.01, 0.01] }\ndiameter = { distribution = \"gaussian\", mean = 0.001, std = 0.0001 }",
                "positions = [[0.005, 0.005, 0.002], [0.0055, 0.005, 0.002]]\ndiameters = [0.001, 0.001]",
            ),
            "particles[0]",
            "overlap",
        ),
        (
            replace(
                "count = 20\nregion = { min = [0.0, 0.0, 0.0], max = [0.01, 0.01, 0.01] }\ndiameter = { distribution = \"gaussian\", mean = 0.001, std = 0.0001 }",
                "positions = [[0.005, 0.005, 0.03]]\ndiameters = [0.001]",
            ),
            "particles[0].positions[0]",
            "outside the domain",
        ),
        (
            replace(
                "count = 20\nregion = { min = [0.0, 0.0, 0.0], max = [0.01, 0.01, 0.01] }\ndiameter = { distribution = \"gaussian\", mean = 0.001, std = 0.0001 }",
                "positions = [[0.005, 0.005, 0.0002]]\ndiameters = [0.001]",
            ),
            "particles[0]",
            "overlaps wall[0]",
        ),
        (
            replace(
                "count = 20\nregion = { min = [0.0, 0.0, 0.0], max = [0.01, 0.01, 0.01] }\ndiameter = { distribution = \"gaussian\", mean = 0.001, std = 0.0001 }",
                "positions = [[0.005, 0.005, 0.002]]\ndiameters = [-0.001]",
            ),
            "particles[0].diameters[0]",
            "> 0",
        ),
        (
            replace("min_impact_velocity = 0.01", "normal = \"hertz\"\ntangential = \"shear-history\"\nhertz = { k_n = 1e9, gamma_n = 0.0 }")
                .replace("dt = 1e-5", "dt = 1e-3"),
            "simulation.dt",
            "too large",
        ),
        (
            replace(
                "count = 20\nregion = { min = [0.0, 0.0, 0.0], max = [0.01, 0.01, 0.01] }\ndiameter = { distribution = \"gaussian\", mean = 0.001, std = 0.0001 }",
                "positions = [[0.005, 0.005, 0.008]]\ndiameters = [0.0105]",
            ),
            "domain.max",
            "touch its own image",
        ),
        (
            replace("count = 20", "count = 20\nvelocity = [0.0, 0.0, { from = 0.0, to = -1.0, rate = 40.0 }]"),
            "particles[0].velocity[2]",
            "applies to fixed spheres",
        ),
        (
            replace("count = 20", "count = 20\nfixed = true\nvelocity = [0.0, 0.0, { from = 0.0, to = -1.0, rate = 0.0 }]"),
            "particles[0].velocity[2]",
            "rate 0 must be > 0",
        ),
        (
            replace("count = 20", "count = 20\nfixed = true\nvelocity = [0.0, 0.0, { from = 0.0, rate = 4.0 }]"),
            "particles[0].velocity[2].to",
            "needs `from`, `to` and `rate`",
        ),
        (
            replace("count = 20", "count = 200\nfixed = true\nplacement = \"hexagonal\""),
            "particles[0].count",
            "hexagonal sites",
        ),
        (
            replace("count = 20\n", "fixed = true\nplacement = \"lattice\"\n"),
            "particles[0].count",
            "a \"hexagonal\" layer may leave it out",
        ),
    ];
    let wrong = common::wrong_messages(cases, "broken.toml", error_of);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// No mutant of the base scene (a line dropped, a value replaced) makes Silt panic; some are still
/// valid scenes (a dropped optional key, a value still in range).
#[test]
fn no_scene_makes_silt_panic() {
    let scenes = common::mutants(BASE, common::NASTY_VALUES);
    let (checked, accepted) = common::fuzz(&scenes, "fuzz.toml", |text| {
        Scene::parse(text, Path::new("fuzz.toml"))
            .and_then(|s| s.system().map(|_| ()))
            .map_err(|e| e.to_string())
    });
    assert!(checked > 100, "{checked}");
    assert!(accepted > 10, "{accepted} of {checked}");
}

/// A fixed group whose velocity is a signal moves at it, taken at the middle of each step, until its
/// release; then it falls freely. A hexagonal layer without a count fills its region, sunk into the
/// floor (fixed spheres may overlap the wall and each other).
#[test]
fn prescribed_motion_follows_its_signal_until_the_release() {
    use silt_core::model::{Horizon, Model};
    use silt_io::scenes::SceneKind;
    let text = replace(
        "count = 20\nregion = { min = [0.0, 0.0, 0.0], max = [0.01, 0.01, 0.01] }\ndiameter = { distribution = \"gaussian\", mean = 0.001, std = 0.0001 }",
        "positions = [[0.005, 0.005, 0.015]]\ndiameters = [0.001]\nfixed = true\n\
         velocity = [0.0, 0.0, { from = 0.0, to = -0.5, rate = 400.0 }]\nrelease_time = 0.005\n\
         [[particles]]\nmaterial = \"glass\"\nfixed = true\nplacement = \"hexagonal\"\n\
         lattice_spacing = 0.001\nregion = { min = [0.0, 0.0, 0.0], max = [0.01, 0.01, 0.0005] }\n\
         diameter = { distribution = \"fixed\", value = 0.001 }",
    );
    let scene = Scene::parse(&text, Path::new("prescribed.toml")).unwrap();
    let mut model = scene.build().unwrap();
    // The layer: 10 columns, 2 round(10 / sqrt 3) = 12 rows, every site filled.
    assert_eq!(model.system.particles.len(), 1 + 120);
    let dt = 1e-5;
    let velocity = |t: f64| -0.5 * (1.0 - (-400.0 * t).exp());
    let mut z = 0.015;
    for step in 0..500 {
        z += dt * velocity((step as f64 + 0.5) * dt);
    }
    let advance = |model: &mut silt_dem::model::DemModel, steps: u64| {
        let target = model.steps() + steps;
        while model.steps() < target {
            model.advance(Horizon::Steps(1)).unwrap();
        }
    };
    advance(&mut model, 500);
    let p = &model.system.particles;
    assert!(
        (p.position[0].z - z).abs() < 1e-12,
        "{} against {z}",
        p.position[0].z
    );
    assert_eq!(p.velocity[0].z, velocity(499.5 * dt));
    assert!(p.fixed[0]);
    // Released at t = 0.005: gravity takes over from the last prescribed velocity.
    advance(&mut model, 100);
    let p = &model.system.particles;
    assert!(!p.fixed[0]);
    let expected = velocity(499.5 * dt) - 9.81 * 100.0 * dt;
    assert!(
        (p.velocity[0].z - expected).abs() < 1e-9,
        "{} against {expected}",
        p.velocity[0].z
    );
}
