//! Coupled scenes (particles in a fluid): what the two halves share is filled in and checked, every
//! mistake is one clear error, a run writes one time series of both, resumes bit for bit and does not
//! depend on the thread count, and prescribed motion holds until the release.

mod common;

use silt_ibm::model::{CoupledModel, DIAGNOSTIC_COLUMNS};
use silt_io::scenes::coupled::CoupledScene;

/// The kind of `text`'s scene, when it is valid.
fn kind_of(text: &str) -> Option<&'static str> {
    silt_io::scenes::Scene::parse(text, Path::new("x.toml"))
        .ok()
        .map(|s| s.kind())
}
use silt_io::pvd::PvdSeries;
use silt_io::run::Simulation;
use std::path::Path;

/// Three heavy spheres (D = 5 h) sinking in a box periodic along x and y with walls at z = 0 and 1.6;
/// one more, fixed, resting on the floor as a roughness element, and one moving at a prescribed
/// velocity until t = 0.1.
const BASE: &str = r#"
[simulation]
dt = 0.01
end_time = 0.2
gravity = [0.0, 0.0, -1.0]

[[material]]
name = "grain"
density = 2.0
e_dry = 0.9
mu_s = 0.5
mu_k = 0.3

[contact]
collision_steps = 10

[[particles]]
material = "grain"
positions = [[0.4, 0.4, 1.0], [1.2, 0.4, 1.1], [0.4, 1.2, 0.9]]
diameters = [0.5, 0.5, 0.5]

[[particles]]
material = "grain"
fixed = true
positions = [[1.2, 1.2, 0.25]]
diameters = [0.5]

[[particles]]
material = "grain"
fixed = true
release_time = 0.1
velocity = [0.0, 0.0, -0.5]
positions = [[0.8, 0.8, 1.3]]
diameters = [0.5]

[output]
interval = 0.05
checkpoint_interval = 0.1
track = [0, 4]

[fluid]
cells = [16, 16, 16]
spacing = 0.1
density = 1.0
viscosity = 0.05

[fluid.boundaries]
z_low = { type = "no-slip" }
z_high = { type = "no-slip" }

[fluid.output]
vtk_interval = 0.1
"#;

fn parse(text: &str) -> Result<CoupledScene, String> {
    CoupledScene::parse(text, Path::new("coupled.toml")).map_err(|e| e.to_string())
}

/// The error of `text` (parse and build), which must name `key`.
fn error_of(text: &str, key: &str) -> String {
    let result =
        CoupledScene::parse(text, Path::new("bad.toml")).and_then(|s| s.halves().map(|_| ()));
    let message = match result {
        Ok(()) => panic!("accepted a bad scene (expected an error at `{key}`):\n{text}"),
        Err(e) => e.to_string(),
    };
    assert!(
        message.contains(&format!("`{key}`")) && message.starts_with("bad.toml"),
        "expected an error naming `{key}`, got: {message}"
    );
    message
}

#[test]
fn shared_settings_come_from_one_place() {
    assert_eq!(kind_of(BASE), Some("coupled"));
    let scene = parse(BASE).unwrap();
    // The domain is the grid's box, periodic where the fluid is.
    let d = &scene.particles.domain;
    assert!((d.max - glam::DVec3::new(1.6, 1.6, 1.6)).length() < 1e-12);
    assert_eq!(d.periodic, [true, true, false]);
    // The fluid's walls are the particles' walls.
    let walls = &scene.particles.walls;
    assert_eq!(walls.len(), 2);
    assert_eq!(walls[0].normal, glam::DVec3::Z);
    assert_eq!(walls[1].point[2], 1.6);
    assert_eq!(walls[1].normal, -glam::DVec3::Z);
    // Lubrication from the fluid, for gaps up to 2 h.
    let l = scene.particles.model.lubrication.as_ref().unwrap();
    assert_eq!((l.fluid_density, l.kinematic_viscosity), (1.0, 0.05));
    assert!((l.range - 0.2).abs() < 1e-15);
    // Time step, end time and output schedule from the particle half.
    assert_eq!(scene.fluid.fixed_time_step(), Some(0.01));
    assert_eq!(scene.fluid.end_time, 0.2);
    assert_eq!(scene.particles.settings.interval, 0.05);
    assert_eq!(scene.particles.settings.vtk_every, 2);
    assert_eq!(scene.profile_axis, 2);

    let (fluid, coupled) = scene.halves().unwrap();
    assert_eq!(coupled.dem.particles.len(), 5);
    assert_eq!(coupled.dem.releases.len(), 1);
    assert_eq!(coupled.dem.releases[0].particles, 4..5);
    // Gravity along a bounded axis: the walls carry the weight, no body force.
    assert_eq!(fluid.body_force(0.0), [0.0; 3]);

    // A given [domain] must match the grid.
    let with_domain = BASE.replace(
        "[output]",
        "[domain]\nmin = [0.0, 0.0, 0.0]\nmax = [1.6, 1.6, 1.6]\nperiodic = [true, true, false]\n\n[output]",
    );
    parse(&with_domain).unwrap();
}

/// Fully periodic: the fluid holds up the free spheres' buoyant weight with a uniform body force,
/// f = -sum (rho_p / rho_f - 1) V_p g / V_box.
#[test]
fn a_periodic_suspension_gets_the_body_force_that_carries_its_weight() {
    let text = BASE
        .replace("z_low = { type = \"no-slip\" }\n", "")
        .replace("z_high = { type = \"no-slip\" }\n", "");
    let scene = parse(&text).unwrap();
    assert!(scene.particles.walls.is_empty());
    let (fluid, coupled) = scene.halves().unwrap();
    // Four free spheres once released (the fixed ones are held by their supports): three free now.
    let free = coupled.dem.particles.fixed.iter().filter(|f| !**f).count();
    assert_eq!(free, 3);
    let volume = std::f64::consts::PI / 6.0 * 0.5f64.powi(3);
    let expected = 3.0 * (2.0 - 1.0) * volume * 1.0 / (1.6 * 1.6 * 1.6);
    let f = fluid.body_force(0.0);
    assert!(
        f[0] == 0.0 && f[1] == 0.0 && (f[2] - expected).abs() < 1e-14,
        "{f:?}"
    );
}

#[test]
fn mistakes_in_coupled_scenes_are_named() {
    let m = error_of(
        &BASE.replace("viscosity = 0.05", "viscosity = 0.05\nend_time = 1.0"),
        "fluid.end_time",
    );
    assert!(m.contains("simulation.end_time"), "{m}");
    // The coupling's stability limit nu dt / h^2 <= 1 (here 1.5).
    let m = error_of(
        &BASE.replace("viscosity = 0.05", "viscosity = 1.5"),
        "simulation.dt",
    );
    assert!(
        m.contains("nu dt / h^2 = 1.500") && m.contains("dt <= 0.0066667"),
        "{m}"
    );
    error_of(
        &BASE.replace("viscosity = 0.05", "viscosity = 0.05\ncfl = 0.5"),
        "fluid.cfl",
    );
    // Velocity Verlet has no stages to sub-step in the fluid's (issue 20).
    let m = error_of(
        &BASE.replace(
            "end_time = 0.2",
            "end_time = 0.2\nintegrator = \"velocity-verlet\"",
        ),
        "simulation.integrator",
    );
    assert!(m.contains("no Runge–Kutta stages"), "{m}");
    error_of(
        &BASE.replace("viscosity = 0.05", "viscosity = 0.05\ntime_step = 0.01"),
        "fluid.time_step",
    );
    error_of(
        &BASE.replace("vtk_interval = 0.1", "interval = 0.1"),
        "fluid.output.interval",
    );
    let m = error_of(&BASE.replace("density = 1.0\n", ""), "fluid.density");
    assert!(m.contains("missing"), "{m}");
    error_of(
        &BASE.replace("density = 1.0\n", "density = -1.0\n"),
        "fluid.density",
    );
    let m = error_of(
        &BASE.replace(
            "[output]",
            "[[wall]]\npoint = [0.0, 0.0, 0.0]\nnormal = [0.0, 0.0, 1.0]\nmaterial = \"grain\"\n\n[output]",
        ),
        "wall",
    );
    assert!(m.contains("fluid.boundaries"), "{m}");
    error_of(
        &BASE.replace(
            "collision_steps = 10",
            "collision_steps = 10\nlubrication = { fluid_density = 1.0, kinematic_viscosity = 0.05, range = 0.2 }",
        ),
        "contact.lubrication",
    );
    let m = error_of(
        &BASE.replace(
            "[output]",
            "[domain]\nmin = [0.0, 0.0, 0.0]\nmax = [1.6, 1.6, 1.5]\nperiodic = [true, true, false]\n\n[output]",
        ),
        "domain",
    );
    assert!(m.contains("does not match the fluid grid"), "{m}");
    error_of(
        &BASE.replace(
            "z_high = { type = \"no-slip\" }",
            "z_high = { type = \"outflow\" }",
        ),
        "fluid.boundaries.z_high",
    );
    error_of(
        &format!("{BASE}\n[coupling]\nforcing_iterations = 0\n"),
        "coupling.forcing_iterations",
    );
    error_of(
        &format!("{BASE}\n[coupling]\nmarker_retraction = 2.0\n"),
        "coupling.marker_retraction",
    );
    error_of(
        &format!("{BASE}\n[coupling]\nwall_material = \"steel\"\n"),
        "coupling.wall_material",
    );
    error_of(
        &format!("{BASE}\n[coupling]\nforcing = 3\n"),
        "coupling.forcing",
    );
    let message = error_of(
        &format!("{BASE}\n[coupling]\nfluid_forces_in_contact = \"wet\"\n"),
        "coupling.fluid_forces_in_contact",
    );
    assert!(
        message.contains("\"st-crit\", \"on\", \"off\""),
        "{message}"
    );
    error_of(
        &BASE.replace("fixed = true\nrelease_time", "release_time"),
        "particles[2].release_time",
    );
    error_of(
        &BASE.replace("release_time = 0.1", "release_time = -1.0"),
        "particles[2].release_time",
    );
    // Spheres the grid cannot resolve.
    let m = error_of(
        &BASE.replace("diameters = [0.5, 0.5, 0.5]", "diameters = [0.5, 0.3, 0.5]"),
        "fluid.spacing",
    );
    assert!(m.contains("particle 1") && m.contains("3.00 cells"), "{m}");
    // The particle half's own checks still apply.
    error_of(
        &BASE.replace("e_dry = 0.9", "e_dry = 1.5"),
        "material[0].e_dry",
    );
    error_of(
        &BASE.replace("[1.2, 0.4, 1.1]", "[1.2, 0.4, 1.7]"),
        "particles[0].positions[1]",
    );
    // And a particle scene parser refuses a coupled scene, saying what it is.
    let m = silt_io::scenes::particles::ParticleScene::parse(BASE, Path::new("bad.toml"))
        .unwrap_err()
        .to_string();
    assert!(m.contains("coupled scene"), "{m}");
}

/// Runs `scene` in `dir`, stopping at `until` steps (and resuming from `dir`'s checkpoint when asked).
fn run(scene: &CoupledScene, dir: &Path, until: u64, resume: bool) -> Simulation<CoupledModel> {
    let scene = Box::new(scene.clone());
    let mut sim = silt_io::scenes::simulation(&scene, BASE, dir, resume).unwrap();
    let until = (until < u64::MAX).then_some(until as f64 * sim.model.dt);
    sim.run(until, &mut |_| {}).unwrap();
    sim
}

fn bits(v: &[glam::DVec3]) -> Vec<[u64; 3]> {
    v.iter()
        .map(|x| [x.x.to_bits(), x.y.to_bits(), x.z.to_bits()])
        .collect()
}

/// A run stopped and resumed equals a continuous one bit for bit (fluid, particles, all output files),
/// and one thread gives the same numbers as two.
#[test]
fn resumed_and_single_threaded_runs_equal_the_continuous_run() {
    let scene = parse(BASE).unwrap();
    let whole_dir = tempfile::tempdir().unwrap();
    let whole = run(&scene, whole_dir.path(), u64::MAX, false);
    assert_eq!(whole.model.fluid.state.steps, 20);

    let split_dir = tempfile::tempdir().unwrap();
    // Stop between checkpoints (step 7), then continue.
    drop(run(&scene, split_dir.path(), 7, false));
    let split = run(&scene, split_dir.path(), u64::MAX, true);

    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let single_dir = tempfile::tempdir().unwrap();
    let single = pool.install(|| run(&scene, single_dir.path(), u64::MAX, false));

    for (name, other) in [("split", &split), ("single", &single)] {
        assert!(other.model.fluid.state == whole.model.fluid.state, "{name}");
        let (a, b) = (
            &whole.model.particles.dem.particles,
            &other.model.particles.dem.particles,
        );
        assert_eq!(bits(&a.position), bits(&b.position));
        assert_eq!(bits(&a.velocity), bits(&b.velocity));
        assert_eq!(bits(&a.angular_velocity), bits(&b.angular_velocity));
    }
    for file in [
        "diagnostics.csv",
        "track_0.csv",
        "track_4.csv",
        "series.pvd",
        "profiles/profile_000004.csv",
    ] {
        let expected = std::fs::read_to_string(whole_dir.path().join(file)).unwrap();
        for dir in [split_dir.path(), single_dir.path()] {
            let got = std::fs::read_to_string(dir.join(file)).unwrap();
            assert_eq!(got, expected, "{file} differs in {}", dir.display());
        }
    }
}

/// The output: one time series with the particles (part 0) in every frame and the fluid (part 1) every
/// `vtk_interval`; diagnostics, profiles and trajectories with their columns; the spheres sink, the
/// prescribed one keeps its velocity until its release and the fixed one stays put.
#[test]
fn a_run_writes_one_series_and_moves_the_spheres() {
    let scene = parse(BASE).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let sim = run(&scene, dir.path(), u64::MAX, false);

    let series = PvdSeries::from_existing(dir.path().join("series.pvd")).unwrap();
    let parts = series.parts();
    let fluid_frames = parts.iter().filter(|&&p| p == 1).count();
    let particle_frames = parts.iter().filter(|&&p| p == 0).count();
    assert_eq!((particle_frames, fluid_frames), (5, 3));
    for (_, file) in series.entries() {
        assert!(dir.path().join(file).is_file(), "{file}");
    }
    let vti = std::fs::read_to_string(dir.path().join("fluid/fluid_000004.vti")).unwrap();
    assert!(vti.contains("Name=\"solid_fraction\""));
    let vtp = std::fs::read_to_string(dir.path().join("particles/particles_000004.vtp")).unwrap();
    assert!(vtp.contains("Name=\"hydrodynamic_force\""));

    let diagnostics = std::fs::read_to_string(dir.path().join("diagnostics.csv")).unwrap();
    let mut lines = diagnostics.lines();
    assert_eq!(lines.next().unwrap(), DIAGNOSTIC_COLUMNS.join(","));
    assert_eq!(lines.count(), 5);

    let profile = std::fs::read_to_string(dir.path().join("profiles/profile_000004.csv")).unwrap();
    let rows: Vec<Vec<f64>> = profile
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(|v| v.parse().unwrap()).collect())
        .collect();
    assert_eq!(rows.len(), 16);
    // The planes' solid fractions are those of the grid's cells, whose mean is the spheres' volume over
    // the box's to the accuracy of the level-set fractions (about 5% low at R = 2.5 h).
    let p = &sim.model.particles.dem.particles;
    let spheres: Vec<(glam::DVec3, f64)> =
        p.position.iter().copied().zip(p.radius.clone()).collect();
    let phi = silt_ibm::profiles::solid_fraction(
        &sim.model.particles.forcing.layout,
        &sim.model.particles.forcing.layout.grid,
        &spheres,
    );
    for (plane, row) in rows.iter().enumerate() {
        let mean = phi[256 * plane..256 * (plane + 1)].iter().sum::<f64>() / 256.0;
        assert!(
            (row[2] - mean).abs() < 1e-15,
            "plane {plane}: {row:?} vs {mean}"
        );
    }
    let mean_phi = rows.iter().map(|r| r[2]).sum::<f64>() / 16.0;
    let exact = 5.0 * std::f64::consts::PI / 6.0 * 0.125 / (1.6 * 1.6 * 1.6);
    assert!(
        (mean_phi / exact - 0.95).abs() < 0.03,
        "{mean_phi} vs {exact}"
    );
    assert_eq!(rows.iter().map(|r| r[6]).sum::<f64>(), 5.0);

    for i in 0..3 {
        assert!(
            p.velocity[i].z < -0.01,
            "sphere {i} sinks: {}",
            p.velocity[i]
        );
    }
    assert_eq!(p.position[3], glam::DVec3::new(1.2, 1.2, 0.25));
    assert!(!p.fixed[4], "released at t = 0.1");
    let track = std::fs::read_to_string(dir.path().join("track_4.csv")).unwrap();
    let rows: Vec<Vec<f64>> = track
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(|v| v.parse().unwrap()).collect())
        .collect();
    for r in rows.iter().filter(|r| r[0] <= 0.1 + 1e-9) {
        // Prescribed: z = 1.3 - 0.5 t, w = -0.5, whatever the fluid does; the fluid pushes back on it.
        assert!((r[3] - (1.3 - 0.5 * r[0])).abs() < 1e-12, "{r:?}");
        assert_eq!(r[6], -0.5);
    }
    let last = rows.last().unwrap();
    assert!(
        last[6] > -0.5,
        "slowed by the fluid after its release: {last:?}"
    );
    assert!(
        rows[1][12] > 0.0,
        "the fluid resists the prescribed motion: {:?}",
        rows[1]
    );
}

/// No mutant of a coupled scene (a line dropped, a value replaced) makes Silt panic; some are still
/// valid and build.
#[test]
fn no_coupled_scene_makes_silt_panic() {
    let scenes = common::mutants(BASE, common::NASTY_VALUES);
    let (checked, accepted) = common::fuzz(&scenes, "fuzz.toml", |text| {
        CoupledScene::parse(text, Path::new("fuzz.toml"))
            .and_then(|s| s.halves().map(|_| ()))
            .map_err(|e| e.to_string())
    });
    assert!(checked > 300, "{checked}");
    assert!(accepted > 10, "{accepted} of {checked}");
}

/// `coupling.flow_rate = "fluid-fraction"` holds the seed's eq. 32 (the flux of (1 - phi) u) instead of
/// the plain mean: with the base scene's spheres in a flow driven along x, after a few steps the
/// fluid-weighted mean is at the prescribed bulk velocity to round-off, and differs from the plain mean.
/// Without flow-rate driving the key is refused.
#[test]
fn the_flow_rate_can_be_the_flux_of_the_fluid_fraction() {
    let driven = BASE.replace(
        "[fluid.boundaries]",
        "[fluid.driving]\ntype = \"flow-rate\"\naxis = \"x\"\nbulk_velocity = 0.2\n\n[fluid.boundaries]",
    );
    let weighted = driven.replace(
        "[output]",
        "[coupling]\nflow_rate = \"fluid-fraction\"\n\n[output]",
    );
    for (text, fluid_fraction) in [(&driven, false), (&weighted, true)] {
        let scene = parse(text).unwrap();
        assert_eq!(scene.fluid_fraction_flow_rate, fluid_fraction);
        let (mut fluid, mut particles) = scene.halves().unwrap();
        for _ in 0..4 {
            silt_ibm::coupling::coupled_step(&mut fluid, &mut particles, scene.particles.dt())
                .unwrap();
        }
        let held = fluid.held_flow_rate().unwrap();
        assert!((held - 0.2).abs() < 1e-12, "{fluid_fraction}: {held}");
        // The other measure, from the spheres now.
        let weights = particles.face_fluid_fractions(0);
        let other = if fluid_fraction {
            fluid.set_flow_rate_weights(None).unwrap();
            fluid.held_flow_rate().unwrap()
        } else {
            fluid.set_flow_rate_weights(Some(weights)).unwrap();
            fluid.held_flow_rate().unwrap()
        };
        assert!((other - 0.2).abs() > 1e-4, "{fluid_fraction}: {other}");
    }
    error_of(
        &BASE.replace(
            "[output]",
            "[coupling]\nflow_rate = \"fluid-fraction\"\n\n[output]",
        ),
        "coupling.flow_rate",
    );
}

/// A small sheared bed ([bed]): heavy spheres on a rough fixed layer in a viscous channel, settled dry,
/// mobilised, then at the target flow rate.
const BED: &str = r#"
[simulation]
dt = 0.02
end_time = 1.2
gravity = [0.0, 0.0, -1.0]
seed = 3

[[material]]
name = "grain"
density = 2.0
e_dry = 0.9
mu_s = 0.5
mu_k = 0.3

[contact]
collision_steps = 5

[[particles]]
material = "grain"
fixed = true
placement = "hexagonal"
lattice_spacing = 1.0
region = { min = [0.0, 0.0, 0.5], max = [6.0, 4.0, 1.0] }
diameter = { distribution = "fixed", value = 1.0 }

[[particles]]
material = "grain"
count = 10
placement = "random"
region = { min = [0.0, 0.0, 1.6], max = [6.0, 4.0, 4.0] }
diameter = { distribution = "gaussian", mean = 1.2, std = 0.05 }

[output]
interval = 0.1
checkpoint_interval = 0.3

[fluid]
cells = [24, 16, 24]
spacing = 0.25
density = 1.0
viscosity = 2.0

[fluid.boundaries]
z_low = { type = "no-slip" }
z_high = { type = "no-slip" }

[bed]
flow_rate = 1.0
settling_time = 0.4
target_clear_height = 3.5
mobilisation_limit = 0.2
transient = 0.1
sample_interval = 0.04
"#;

/// The sheared-bed protocol through the run path: it settles dry, mobilises at 8 q_f, holds q_f
/// (eq. 32) after the switch and averages; a run stopped in the averaging phase and resumed, and a run
/// on one thread, give the continuous run's averages, bed.csv and averaged profiles bit for bit; the
/// scene's mistakes are named.
#[test]
fn a_sheared_bed_resumes_with_its_averages_intact() {
    let scene = Box::new(parse(BED).unwrap());
    let bed = scene.bed.clone().unwrap();
    assert_eq!((bed.streamwise, bed.vertical, bed.sample_every), (0, 2, 2));
    let run = |dir: &Path, until: Option<f64>, resume: bool| {
        let mut sim = silt_io::scenes::simulation(&scene, BED, dir, resume).unwrap();
        sim.run(until, &mut |_| {}).unwrap();
        sim
    };
    let whole_dir = tempfile::tempdir().unwrap();
    let whole = run(whole_dir.path(), None, false);
    let state = &whole.model.bed.as_ref().unwrap().state;
    assert_eq!(state.phase, silt_ibm::protocol::Phase::Averaging);
    assert_eq!(state.mobilised_at.map(|t| (t / 0.02).round()), Some(20.0));
    assert!(state.switched_at.unwrap() <= 0.6 + 1e-9);
    assert!(
        state.particle_flux.len() >= 10,
        "{}",
        state.particle_flux.len()
    );
    // The flow rate per unit span after the switch is q_f, as eq. 32 measures it.
    let held = whole.model.fluid.held_flow_rate().unwrap() * 6.0;
    assert!((held - 1.0).abs() < 1e-10, "{held}");

    let split_dir = tempfile::tempdir().unwrap();
    drop(run(split_dir.path(), Some(0.95), false));
    let split = run(split_dir.path(), None, true);
    assert_eq!(
        split.model.bed.as_ref().unwrap().state,
        whole.model.bed.as_ref().unwrap().state
    );
    // One thread gives the same numbers as two.
    let single_dir = tempfile::tempdir().unwrap();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let single = pool.install(|| run(single_dir.path(), None, false));
    assert_eq!(
        single.model.bed.as_ref().unwrap().state,
        whole.model.bed.as_ref().unwrap().state
    );
    let last = format!("bed_particles/bed_particle_{:06}.csv", whole.frames() - 1);
    for file in ["bed.csv", last.as_str(), "diagnostics.csv"] {
        let expected = std::fs::read_to_string(whole_dir.path().join(file)).unwrap();
        for dir in [split_dir.path(), single_dir.path()] {
            let got = std::fs::read_to_string(dir.join(file)).unwrap();
            assert_eq!(got, expected, "{file} in {}", dir.display());
        }
    }

    for (change, key) in [
        ("flow_rate = 1.0", "bed.flow_rate"),
        ("target_clear_height = 3.5", "bed.target_clear_height"),
        ("sample_interval = 0.04", "bed.sample_interval"),
    ] {
        let bad = match key {
            "bed.flow_rate" => BED.replace(change, "flow_rate = -1.0"),
            "bed.target_clear_height" => BED.replace(change, "target_clear_height = 7.0"),
            _ => BED.replace(change, "sample_interval = 0.001"),
        };
        error_of(&bad, key);
    }
    error_of(
        &BED.replace(
            "[fluid.boundaries]",
            "[fluid.driving]\ntype = \"flow-rate\"\naxis = \"x\"\nbulk_velocity = 0.2\n\n[fluid.boundaries]",
        ),
        "fluid.driving",
    );
    error_of(
        &BED.replace("gravity = [0.0, 0.0, -1.0]", "gravity = [0.0, 0.0, 1.0]"),
        "simulation.gravity",
    );
    // Contacts too soft for the dry settling's free fall.
    let soft = error_of(
        &BED.replace("collision_steps = 5", "collision_steps = 400"),
        "contact.collision_steps",
    );
    assert!(soft.contains("dry settling"), "{soft}");
}

/// `coupling.close_sphere_markers` chooses which markers of close spheres are disabled; the default is
/// the overlapping supports, the other reading reaches the coupled model, and a wrong value is named.
#[test]
fn the_close_sphere_rule_is_a_coupling_choice() {
    use silt_ibm::forcing::CloseSphereMarkers;
    let default = parse(BASE).unwrap();
    assert_eq!(
        default.close_sphere_markers,
        CloseSphereMarkers::OverlappingSupports
    );
    let reaching = BASE.replace(
        "[output]",
        "[coupling]\nclose_sphere_markers = \"reaching-surface\"\n\n[output]",
    );
    let scene = parse(&reaching).unwrap();
    assert_eq!(
        scene.close_sphere_markers,
        CloseSphereMarkers::ReachingTheSurface
    );
    let (_, particles) = scene.halves().unwrap();
    assert_eq!(
        particles.forcing.close_sphere_markers,
        CloseSphereMarkers::ReachingTheSurface
    );
    let message = error_of(
        &BASE.replace(
            "[output]",
            "[coupling]\nclose_sphere_markers = \"surface\"\n\n[output]",
        ),
        "coupling.close_sphere_markers",
    );
    assert!(
        message.contains("\"overlapping-supports\", \"reaching-surface\""),
        "{message}"
    );
}
