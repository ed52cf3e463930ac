//! Every scene in examples/ is valid and runs.

use silt_io::coupled_scene::{is_coupled_scene, CoupledScene};
use silt_io::fiber_scene::{is_fiber_scene, FiberScene};
use silt_io::fluid_scene::{is_fluid_scene, FluidScene};
use silt_io::rod_run::RodSimulation;
use silt_io::rod_scene::{is_rod_scene, RodScene};
use silt_io::scene::Scene;

#[test]
fn every_example_scene_builds_and_steps() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut count = 0;
    let mut fluid = 0;
    let mut coupled = 0;
    let mut fibers = 0;
    let mut rods = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("toml") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        // Coupled scenes (particle tables and [fluid]): build both and take a step.
        if is_coupled_scene(&text) {
            let scene = CoupledScene::load(&path).unwrap_or_else(|e| panic!("{e}"));
            let (mut solver, mut particles) = scene.build().unwrap_or_else(|e| panic!("{e}"));
            solver
                .step_with(&mut particles)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            if let Some(e) = particles.error {
                panic!("{}: {e}", path.display());
            }
            coupled += 1;
            continue;
        }
        // Fiber scenes (a top-level [fibers] table): build and take a few steps.
        if is_fiber_scene(&text) {
            let scene = FiberScene::load(&path).unwrap_or_else(|e| panic!("{e}"));
            let mut system = scene.build().unwrap_or_else(|e| panic!("{e}"));
            let mut integrator = silt_fibers::dynamics::AdamsBashforth::default();
            for _ in 0..3 {
                system
                    .step(scene.dt, &mut integrator)
                    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            }
            fibers += 1;
            continue;
        }
        // Rod scenes (a top-level [rods] table): build, write the initial frame, and advance each
        // rod by Radau IIA for a thousandth of the first frame.
        if is_rod_scene(&text) {
            let scene = RodScene::load(&path).unwrap_or_else(|e| panic!("{e}"));
            let built = scene.build().unwrap_or_else(|e| panic!("{e}"));
            let dir = tempfile::tempdir().unwrap();
            RodSimulation::start(&scene, &text, built.clone(), dir.path())
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let horizon = 1e-3 * scene.frame_time(1).max(1e-3);
            for rod in built {
                let mut implicit = silt_rods::implicit::ImplicitRod::new(
                    &rod.rod,
                    &silt_rods::dynamics::RodMotion::rest(&rod.rod),
                    rod.model,
                    silt_rods::radau::RadauOptions::default(),
                );
                implicit
                    .advance_to(horizon)
                    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            }
            rods += 1;
            continue;
        }
        // Fluid scenes (a top-level [fluid] table): build the solver and take a few steps.
        if is_fluid_scene(&text) {
            let scene = FluidScene::load(&path).unwrap_or_else(|e| panic!("{e}"));
            let mut solver = scene.build().unwrap_or_else(|e| panic!("{e}"));
            for _ in 0..3 {
                solver
                    .step()
                    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            }
            fluid += 1;
            continue;
        }
        let scene = Scene::load(&path).unwrap_or_else(|e| panic!("{e}"));
        let mut system = scene.build().unwrap_or_else(|e| panic!("{e}"));
        for _ in 0..5 {
            system
                .step()
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        }
        count += 1;
    }
    assert!(count >= 3, "found {count} example scenes");
    assert!(fluid >= 7, "found {fluid} fluid example scenes");
    assert!(coupled >= 4, "found {coupled} coupled example scenes");
    assert!(fibers >= 3, "found {fibers} fiber example scenes");
    assert!(rods >= 3, "found {rods} rod example scenes");
}

#[test]
fn bouncing_sphere_loses_e_squared_of_its_height_per_bounce() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/wall-collision.toml");
    let scene = Scene::load(&path).unwrap();
    let mut system = scene.build().unwrap();
    let radius = system.particles.radius[0];
    // Record apex heights of the bottom of the sphere (velocity changes sign from + to -).
    let mut apexes = vec![system.particles.position[0].z - radius];
    let mut previous_velocity = system.particles.velocity[0].z;
    for _ in 0..15_000 {
        system.step().unwrap();
        let v = system.particles.velocity[0].z;
        if previous_velocity > 0.0 && v <= 0.0 {
            apexes.push(system.particles.position[0].z - radius);
        }
        previous_velocity = v;
    }
    assert!(apexes.len() >= 3, "{apexes:?}");
    for pair in apexes.windows(2).take(2) {
        let ratio = pair[1] / pair[0];
        // e_dry^2 = 0.9409; the ACTM reproduces e_dry to < 0.1% at 0.97.
        assert!(
            (ratio - 0.97f64.powi(2)).abs() < 0.005,
            "apex ratio {ratio}, apexes {apexes:?}"
        );
    }
}
