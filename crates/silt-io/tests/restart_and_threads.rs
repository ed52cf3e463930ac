//! A run stopped and resumed from its checkpoint equals a continuous run bit for bit, and results do not
//! depend on the number of threads.

use silt_io::scenes::particles::ParticleScene as Scene;
use silt_io::scenes::simulation;
use std::path::Path;

/// Frictional polydisperse spheres falling onto a floor and colliding: contacts start, slide, stick and
/// end during the run, so contact memory must survive the restart; one sphere driven by a prescribed
/// velocity until it is let go after the checkpoint the run resumes from.
const SCENE: &str = r#"
[simulation]
dt = 2e-5
end_time = 0.012
gravity = [0.0, 0.0, -9.81]
integrator = "seed"
substeps = [8, 2, 5]
seed = 11

[domain]
min = [0.0, 0.0, 0.0]
max = [0.005, 0.005, 0.008]
periodic = [true, true, false]

[[material]]
name = "glass"
density = 2500.0
e_dry = 0.7
mu_s = 0.5
mu_k = 0.3

[contact]
min_impact_velocity = 0.01

[[wall]]
point = [0.0, 0.0, 0.0]
normal = [0.0, 0.0, 1.0]
material = "glass"

[[particles]]
material = "glass"
count = 60
region = { min = [0.0, 0.0, 0.0], max = [0.005, 0.005, 0.004] }
diameter = { distribution = "gaussian", mean = 0.001, std = 0.0001 }
velocity = [0.05, 0.0, -0.2]

[[particles]]                 # driven down by a prescribed velocity (a signal), let go mid-run
material = "glass"
positions = [[0.0025, 0.0025, 0.0065]]
diameters = [0.001]
fixed = true
velocity = [0.0, 0.0, { from = 0.0, to = -0.3, rate = 500.0 }]
release_time = 0.006

[output]
interval = 0.001
checkpoint_interval = 0.004
track = [3]
"#;

fn scene() -> Scene {
    Scene::parse(SCENE, Path::new("restart.toml")).unwrap()
}

fn bits(v: &[glam::DVec3]) -> Vec<[u64; 3]> {
    v.iter()
        .map(|x| [x.x.to_bits(), x.y.to_bits(), x.z.to_bits()])
        .collect()
}

#[test]
fn resumed_run_equals_continuous_run() {
    let scene = scene();
    let continuous_dir = tempfile::tempdir().unwrap();
    let mut continuous = simulation(&scene, SCENE, continuous_dir.path(), false).unwrap();
    continuous.run(None, &mut |_| {}).unwrap();
    let contacts: usize =
        silt_dem::diagnostics::contact_statistics(&continuous.model.system).pair_contacts;
    assert!(contacts > 0, "the test must exercise contacts");

    let split_dir = tempfile::tempdir().unwrap();
    let mut first = simulation(&scene, SCENE, split_dir.path(), false).unwrap();
    // Simulate a run killed at step 270, after its regular checkpoint at step 200: output up to step 270
    // exists, the checkpoint is that of step 200. The resumed run must rewrite the later output.
    first.run(Some(200.0 * 2e-5), &mut |_| {}).unwrap();
    let checkpoint = split_dir.path().join("checkpoint.bin");
    let at_200 = std::fs::read(&checkpoint).unwrap();
    first.run(Some(270.0 * 2e-5), &mut |_| {}).unwrap();
    assert_eq!(first.model.system.step_count, 270);
    std::fs::write(&checkpoint, at_200).unwrap();
    drop(first);
    let mut resumed = simulation(&scene, SCENE, split_dir.path(), true).unwrap();
    assert_eq!(resumed.model.system.step_count, 200);
    resumed.run(None, &mut |_| {}).unwrap();

    let (a, b) = (
        &continuous.model.system.particles,
        &resumed.model.system.particles,
    );
    assert_eq!(bits(&a.position), bits(&b.position));
    assert_eq!(bits(&a.velocity), bits(&b.velocity));
    assert_eq!(bits(&a.angular_velocity), bits(&b.angular_velocity));
    for file in [
        "diagnostics.csv",
        "track_3.csv",
        "series.pvd",
        "particles/particles_000012.vtp",
    ] {
        let x = std::fs::read(continuous_dir.path().join(file)).unwrap();
        let y = std::fs::read(split_dir.path().join(file)).unwrap();
        assert!(x == y, "{file} differs after the restart");
    }
}

#[test]
fn results_do_not_depend_on_the_thread_count() {
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            let mut system = scene().system().unwrap();
            for _ in 0..400 {
                system.step().unwrap();
            }
            system
        })
    };
    let (one, two) = (run(1), run(2));
    assert_eq!(bits(&one.particles.position), bits(&two.particles.position));
    assert_eq!(
        bits(&one.particles.angular_velocity),
        bits(&two.particles.angular_velocity)
    );
}

/// A folder holding the scene's run stopped after 200 steps, with its checkpoint.
fn checkpointed_run() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let mut sim = simulation(&scene(), SCENE, dir.path(), false).unwrap();
    sim.run(Some(200.0 * 2e-5), &mut |_| {}).unwrap();
    dir
}

#[test]
fn resuming_with_another_scene_is_refused() {
    let dir = checkpointed_run();
    let other_text = SCENE.replace("e_dry = 0.7", "e_dry = 0.8");
    let other = Scene::parse(&other_text, Path::new("other.toml")).unwrap();
    let err = simulation(&other, &other_text, dir.path(), true)
        .err()
        .unwrap();
    assert!(err.to_string().contains("other physics"), "{err}");
    assert_eq!(err.exit_code(), 2);
}

/// A damaged or foreign checkpoint (garbage that claims a string of ~7.5e18 bytes, a truncated file, an
/// empty one) is refused with the file and the reason, without exhausting the memory.
#[test]
fn a_damaged_checkpoint_is_refused_not_allocated() {
    let scene = scene();
    let dir = checkpointed_run();
    let path = dir.path().join("checkpoint.bin");
    let good = std::fs::read(&path).unwrap();
    for damaged in [
        b"not a checkpoint".to_vec(),
        good[..good.len() / 2].to_vec(),
        Vec::new(),
    ] {
        std::fs::write(&path, &damaged).unwrap();
        let err = simulation(&scene, SCENE, dir.path(), true).err().unwrap();
        let message = err.to_string();
        assert!(
            message.contains("checkpoint.bin") && message.contains("not a checkpoint"),
            "{message}"
        );
        assert_eq!(err.exit_code(), 2, "{message}");
    }
    std::fs::write(&path, &good).unwrap();
    assert!(simulation(&scene, SCENE, dir.path(), true).is_ok());
}
