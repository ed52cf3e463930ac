//! Fluid scenes: every malformed or non-physical scene gives one clear error naming the file and the key,
//! no scene makes Silt panic, the initial conditions are what the documentation says, and a run stopped
//! and resumed from its checkpoint equals a continuous run bit for bit, output files included.

mod common;

use silt_fluid::model::FluidModel;
use silt_io::scenes::fluid::{FluidScene, InitialCondition};

/// Whether `text` is a fluid scene (and a valid one).
fn is_fluid_scene(text: &str) -> bool {
    silt_io::scenes::Scene::parse(text, Path::new("x.toml")).is_ok_and(|s| s.kind() == "fluid")
}
use silt_io::run::{RunError, Simulation};
use silt_io::scenes::simulation;
use std::path::Path;

/// A small valid scene with most keys; each case below breaks it in one place.
const BASE: &str = r#"
[fluid]
cells = [8, 8, 4]
spacing = 0.125
origin = [0.0, 0.0, 0.0]
viscosity = 0.05
viscous = "crank-nicolson"
body_force = [0.0, 0.0, 0.0]
end_time = 0.2
time_step = 0.01

[fluid.boundaries]
y_low = { type = "no-slip" }
y_high = { type = "no-slip", velocity = [0.5, 0.0, 0.0] }

[fluid.driving]
type = "pressure-gradient"
axis = "x"
gradient = -0.5

[fluid.initial]
type = "poiseuille"

[fluid.output]
interval = 0.05
checkpoint_interval = 0.1
vorticity = true
profile_axis = "y"
"#;

fn error_of(text: &str) -> String {
    let path = Path::new("broken.toml");
    match FluidScene::parse(text, path).and_then(|s| s.solver().map(|_| ())) {
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
fn the_base_scene_is_valid_and_detected() {
    assert!(is_fluid_scene(BASE));
    assert!(!is_fluid_scene("[simulation]\ndt = 1.0\n"));
    assert!(!is_fluid_scene("[fluid\n"));
    let scene = FluidScene::parse(BASE, Path::new("base.toml")).unwrap();
    assert_eq!(scene.config.grid.cells, [8, 8, 4]);
    assert_eq!(scene.initial, InitialCondition::Poiseuille { wall_axis: 1 });
    let solver = scene.solver().unwrap();
    let report = silt_io::scenes::fluid::report(&scene, &solver);
    for expected in [
        "8 x 8 x 4 = 256 cells, h = 0.125",
        "Reynolds number",
        "viscous limit    2.51 h^2 / (12 nu) = 0.065365",
        "fixed dt = 0.01: 20 steps",
        "memory",
    ] {
        assert!(report.contains(expected), "{expected}: {report}");
    }
}

#[test]
fn each_mistake_names_the_file_the_key_and_what_is_allowed() {
    let cases: Vec<(String, &str, &str)> = vec![
        // With a particle table it is a coupled scene, checked as one.
        (format!("{BASE}\n[simulation]\ndt = 1\n"), "simulation", "missing field `end_time`"),
        (replace("viscosity = 0.05", "viscosity = 0.05\ndensity = 1.0"), "fluid.density", "used only by coupled scenes"),
        (replace("vorticity = true", "vorticity = true\nformat = \"vtk\""), "fluid.output.format", "unknown field"),
        (replace("viscosity = 0.05", "viscosity = \"water\""), "fluid.viscosity", "invalid type"),
        (replace("viscosity = 0.05", "viscosity = -0.05"), "fluid.viscosity", "> 0"),
        (replace("viscosity = 0.05", "viscosity = nan"), "fluid.viscosity", "> 0"),
        (replace("cells = [8, 8, 4]", "cells = [8, -8, 4]"), "fluid.cells[1]", "invalid value"),
        (replace("cells = [8, 8, 4]", "cells = [8, 8]"), "fluid.cells", "invalid length"),
        (replace("cells = [8, 8, 4]", "cells = [8.5, 8, 4]"), "fluid.cells[0]", "invalid type"),
        (replace("cells = [8, 8, 4]", "cells = [8, 8, 0]"), "fluid.cells", "at least 1 cell"),
        (replace("cells = [8, 8, 4]", "cells = [8, 8, 1]"), "fluid.cells", "at least 2"),
        (replace("cells = [8, 8, 4]", "cells = [8, 2, 4]"), "fluid.cells", "axis between walls"),
        (replace("cells = [8, 8, 4]", "cells = [100000, 100000, 100000]"), "fluid.cells", "at most"),
        (replace("spacing = 0.125", "spacing = 0.0"), "fluid.spacing", "> 0"),
        (replace("spacing = 0.125", ""), "fluid.spacing", "`lengths`"),
        (replace("spacing = 0.125", "spacing = 0.125\nlengths = [1.0, 1.0, 0.5]"), "fluid.lengths", "not both"),
        (replace("spacing = 0.125", "lengths = [1.0, 2.0, 0.5]"), "fluid.lengths", "0.25 along y"),
        (replace("spacing = 0.125", "lengths = [1.0, 1.0, -0.5]"), "fluid.lengths", "> 0"),
        (replace("origin = [0.0, 0.0, 0.0]", "origin = [0.0, inf, 0.0]"), "fluid.origin", "finite"),
        (replace("viscous = \"crank-nicolson\"", "viscous = \"implicit\""), "fluid.viscous", "\"explicit\""),
        (replace("body_force = [0.0, 0.0, 0.0]", "body_force = [0.0, nan, 0.0]"), "fluid.body_force[1]", "not finite"),
        (replace("end_time = 0.2", "end_time = 0.0"), "fluid.end_time", "> 0"),
        (replace("time_step = 0.01", ""), "fluid.time_step", "`cfl`"),
        (replace("time_step = 0.01", "time_step = 0.01\ncfl = 0.5"), "fluid.cfl", "not both"),
        (replace("time_step = 0.01", "time_step = -0.01"), "fluid.time_step", "> 0"),
        (replace("time_step = 0.01", "time_step = 1.0"), "fluid.time_step", "at least one step"),
        (replace("time_step = 0.01", "time_step = 0.01\nmax_time_step = 0.1"), "fluid.max_time_step", "only an adaptive step"),
        (replace("time_step = 0.01", "cfl = 2.0"), "fluid.cfl", "[0.01, 1.7321]"),
        (replace("time_step = 0.01", "cfl = 0.5\nmax_time_step = 0.0"), "fluid.max_time_step", "> 0"),
        (
            replace("viscous = \"crank-nicolson\"", "viscous = \"explicit\"")
                .replace("time_step = 0.01", "time_step = 0.1"),
            "fluid.time_step",
            "explicit viscous stability limit",
        ),
        (replace("gradient = -0.5", "gradient = -500.0").replace("time_step = 0.01", "time_step = 0.1"), "fluid.time_step", "of the initial flow is"),
        (replace("y_low = { type = \"no-slip\" }", "y_low = { type = \"sticky\" }"), "fluid.boundaries.y_low.type", "\"free-slip\""),
        (replace("y_low = { type = \"no-slip\" }", ""), "fluid.boundaries.y_low", "periodic (the default)"),
        (replace("y_low = { type = \"no-slip\" }", "y_low = { type = \"periodic\" }"), "fluid.boundaries.y_low", "periodic at both ends"),
        (replace("y_low = { type = \"no-slip\" }", "y_low = { type = \"free-slip\", velocity = [1.0, 0.0, 0.0] }"), "fluid.boundaries.y_low.velocity", "only a \"no-slip\" wall"),
        (replace("velocity = [0.5, 0.0, 0.0]", "velocity = [0.5, 0.1, 0.0]"), "fluid.boundaries.y_high.velocity", "velocity[1] = 0"),
        (replace("velocity = [0.5, 0.0, 0.0]", "velocity = [0.5, 0.0, nan]"), "fluid.boundaries.y_high.velocity", "finite"),
        (replace("velocity = [0.5, 0.0, 0.0]", "speed = 0.5"), "fluid.boundaries.y_high.speed", "unknown field"),
        (replace("y_low = { type = \"no-slip\" }", "y_low = { type = \"no-slip\", profile = \"parabolic\" }"), "fluid.boundaries.y_low.profile", "only an \"inflow\""),
        (replace("[fluid.boundaries]", "[fluid.boundaries]\nx_low = { type = \"inflow\", velocity = [1.0, 0.0, 0.0] }\nx_high = { type = \"no-slip\" }"), "fluid.boundaries.x_low", "needs an \"outflow\""),
        (replace("[fluid.boundaries]", "[fluid.boundaries]\nx_low = { type = \"inflow\", velocity = [-1.0, 0.0, 0.0] }\nx_high = { type = \"outflow\" }"), "fluid.boundaries.x_low.velocity", "into the domain"),
        (replace("[fluid.boundaries]", "[fluid.boundaries]\nx_low = { type = \"inflow\" }\nx_high = { type = \"outflow\" }"), "fluid.boundaries.x_low.velocity", "missing"),
        (replace("[fluid.boundaries]", "[fluid.boundaries]\nw_low = { type = \"no-slip\" }"), "fluid.boundaries.w_low", "unknown field"),
        (replace("type = \"pressure-gradient\"", "type = \"pump\""), "fluid.driving.type", "\"flow-rate\""),
        (replace("axis = \"x\"", "axis = \"u\""), "fluid.driving.axis", "\"x\", \"y\", \"z\""),
        (replace("axis = \"x\"", "axis = \"y\""), "fluid.driving.axis", "periodic axis"),
        (replace("axis = \"x\"", "axis = 0"), "fluid.driving.axis", "invalid type"),
        (replace("axis = \"x\"\n", ""), "fluid.driving.axis", "missing"),
        (replace("gradient = -0.5", ""), "fluid.driving.gradient", "missing"),
        (replace("gradient = -0.5", "gradient = -0.5\nbulk_velocity = 1.0"), "fluid.driving.bulk_velocity", "takes `gradient`"),
        (replace("type = \"pressure-gradient\"", "type = \"flow-rate\""), "fluid.driving.gradient", "takes `bulk_velocity`"),
        (replace("type = \"pressure-gradient\"", "type = \"flow-rate\"").replace("gradient = -0.5", ""), "fluid.driving.bulk_velocity", "missing"),
        (replace("type = \"pressure-gradient\"", "type = \"none\""), "fluid.driving.axis", "remove it"),
        (replace("type = \"poiseuille\"", "type = \"vortex\""), "fluid.initial.type", "\"taylor-green-2d\""),
        (replace("type = \"poiseuille\"", "type = \"taylor-green-2d\""), "fluid.initial.type", "periodic x, y faces"),
        (replace("type = \"poiseuille\"", "type = \"poiseuille\"\namplitude = 2.0"), "fluid.initial.amplitude", "follows from the walls"),
        (replace("type = \"poiseuille\"", "type = \"uniform\""), "fluid.initial.velocity", "missing"),
        (replace("type = \"poiseuille\"", "type = \"uniform\"\nvelocity = [0.0, 1.0, 0.0]"), "fluid.initial.velocity", "impermeable"),
        (replace("type = \"poiseuille\"", "type = \"rest\"\nvelocity = [0.0, 0.0, 0.0]"), "fluid.initial.velocity", "remove it"),
        (replace("y_low = { type = \"no-slip\" }", "y_low = { type = \"free-slip\" }"), "fluid.initial.type", "exactly one axis"),
        (replace("interval = 0.05", "interval = -1.0"), "fluid.output.interval", "> 0"),
        (replace("checkpoint_interval = 0.1", "checkpoint_interval = 0.0"), "fluid.output.checkpoint_interval", "> 0"),
        (replace("profile_axis = \"y\"", "profile_axis = \"r\""), "fluid.output.profile_axis", "allowed: \"x\", \"y\", \"z\""),
        (replace("vorticity = true", "vorticity = true\nvtk = false"), "fluid.output.vorticity", "vtk = false"),
        (replace("interval = 0.05", "interval = 0.05\nvtk_interval = 0.07"), "fluid.output.vtk_interval", "whole multiple"),
        (replace("[fluid.output]", "[fluid.output\n"), "", "line "),
        (replace("interval = 0.05", "interval = 1e-300"), "fluid.output.interval", "more than"),
        (replace("spacing = 0.125", "spacing = 1e308"), "fluid.spacing", "too large"),
        (String::from("[fluid]\n"), "fluid", "missing field"),
        (replace("gradient = -0.5", "gradient = \"strong\""), "fluid.driving.gradient", "a Fourier series"),
        (replace("gradient = -0.5", "gradient = { period = 0.0, cos = [1.0] }"), "fluid.driving.gradient", "period"),
        (replace("gradient = -0.5", "gradient = { cos = [1.0] }"), "fluid.driving.gradient.period", "missing"),
        (replace("gradient = -0.5", "gradient = { table = [[1.0, 2.0], [0.5, 1.0]] }"), "fluid.driving.gradient", "must increase"),
        (replace("gradient = -0.5", "gradient = { table = [[1.0, 2.0, 3.0]] }"), "fluid.driving.gradient.table", "[time, value] pairs"),
        (replace("gradient = -0.5", "gradient = { period = 1.0, phase = 2.0 }"), "fluid.driving.gradient.phase", "unknown"),
    ];
    let wrong = common::wrong_messages(cases, "broken.toml", error_of);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Face types, beside the shared stressing values.
const FACE_VALUES: &[&str] = &[
    "{ type = \"no-slip\" }",
    "{ type = \"inflow\", velocity = [1.0, 0.0, 0.0] }",
    "{ type = \"outflow\" }",
];

/// No mutant of the base scene (a line dropped, a value replaced, a face of each type added after a
/// table header) makes Silt panic; some are still valid and build their solver.
#[test]
fn no_fluid_scene_makes_silt_panic() {
    let values: Vec<&str> = common::NASTY_VALUES
        .iter()
        .chain(FACE_VALUES)
        .copied()
        .collect();
    let mut scenes = common::mutants(BASE, &values);
    let lines: Vec<&str> = BASE.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        if line.starts_with("[fluid") {
            for face in ["x_low", "x_high", "z_low", "z_high", "y_low"] {
                for value in FACE_VALUES {
                    let mut changed = lines.clone();
                    let added = format!("{line}\n{face} = {value}");
                    changed[i] = &added;
                    scenes.push(changed.join("\n"));
                }
            }
        }
    }
    // Accepted scenes are small; build them to run the checks that need the solver.
    let (checked, accepted) = common::fuzz(&scenes, "fuzz.toml", |text| {
        FluidScene::parse(text, Path::new("fuzz.toml"))
            .and_then(|s| s.solver().map(|_| ()))
            .map_err(|e| e.to_string())
    });
    assert!(checked > 300, "{checked}");
    assert!(accepted > 10, "{accepted}");
}

fn max_abs_diff(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

#[test]
fn initial_conditions_are_divergence_free_and_as_documented() {
    // 2D Taylor–Green on a box of 2 x 1 (kx != ky): divergence-free to round-off, vorticity as analytic.
    let text = r#"
[fluid]
cells = [32, 16, 2]
lengths = [2.0, 1.0, 0.125]
viscosity = 0.01
end_time = 0.1
time_step = 0.01
[fluid.initial]
type = "taylor-green-2d"
amplitude = 2.0
"#;
    let scene = FluidScene::parse(text, Path::new("tg.toml")).unwrap();
    let solver = scene.solver().unwrap();
    let mut work = Vec::new();
    let divergence = silt_fluid::projection::max_divergence(
        &solver.state.velocity,
        solver.cells(),
        solver.grid().spacing,
        &mut work,
    );
    assert!(divergence < 1e-12, "{divergence}");
    // omega_z = dv/dx - du/dy = U (kx^2 / ky + ky) cos(kx x) cos(ky y) at the cell centres.
    let vorticity = silt_fluid::model::cell_vorticity(&solver.state.velocity, 0.0625);
    let (kx, ky) = (std::f64::consts::PI, 2.0 * std::f64::consts::PI);
    let mut worst: f64 = 0.0;
    for (n, w) in vorticity.iter().enumerate() {
        let (i, j) = (n % 32, (n / 32) % 16);
        let (x, y) = ((i as f64 + 0.5) * 0.0625, (j as f64 + 0.5) * 0.0625);
        let exact = 2.0 * (kx * kx / ky + ky) * (kx * x).cos() * (ky * y).cos();
        worst = worst.max((w.z - exact).abs());
        assert!(w.x.abs() < 1e-12 && w.y.abs() < 1e-12);
    }
    assert!(worst < 0.05 * 2.0 * (kx * kx / ky + ky), "{worst}");

    // The Poiseuille-Couette profile of the base scene is the discrete steady state: steps keep it.
    let scene = FluidScene::parse(BASE, Path::new("base.toml")).unwrap();
    let mut solver = scene.solver().unwrap();
    let before = solver.state.velocity[0].data.clone();
    for _ in 0..5 {
        solver.step().unwrap();
    }
    let change = max_abs_diff(&before, &solver.state.velocity[0].data);
    assert!(change < 1e-12, "the steady profile drifts by {change}");
    // It is within O(h^2) of the analytic profile u = 0.5 y + G / (2 nu) y (1 - y), G = 0.5, nu = 0.05.
    for j in 1..=8 {
        let y = scene
            .config
            .grid
            .point(silt_fluid::Location::Face(0), [1, j, 1])[1];
        let exact = 0.5 * y + 0.5 / 0.1 * y * (1.0 - y);
        let value = before[solver.state.velocity[0].index(1, j, 1)];
        assert!(
            (value - exact).abs() < 0.5 / 0.1 * 0.125f64.powi(2) / 4.0 * 1.01,
            "{value} {exact}"
        );
    }
    // With flow-rate driving the profile carries the bulk velocity and is steady too.
    let text = BASE
        .replace("type = \"pressure-gradient\"", "type = \"flow-rate\"")
        .replace("gradient = -0.5", "bulk_velocity = 2.0");
    let scene = FluidScene::parse(&text, Path::new("flow-rate.toml")).unwrap();
    let mut solver = scene.solver().unwrap();
    let bulk = |s: &silt_fluid::FluidSolver| {
        silt_fluid::diagnostics::mean_over(&s.state.velocity[0], s.velocity_unknowns(0))
    };
    assert!((bulk(&solver) - 2.0).abs() < 1e-12, "{}", bulk(&solver));
    let before = solver.state.velocity[0].data.clone();
    for _ in 0..5 {
        solver.step().unwrap();
    }
    let change = max_abs_diff(&before, &solver.state.velocity[0].data);
    assert!(change < 1e-12, "the steady profile drifts by {change}");
}

/// A cavity with a moving lid on 12 x 12 x 2 cells (adaptive step), and a channel held at a flow rate
/// (fixed step): both resume bit for bit.
const CAVITY: &str = r#"
[fluid]
cells = [12, 12, 2]
lengths = [1.0, 1.0, 0.16666666666666666]
viscosity = 0.02
end_time = 0.6
cfl = 0.9
[fluid.boundaries]
x_low = { type = "no-slip" }
x_high = { type = "no-slip" }
y_low = { type = "no-slip" }
y_high = { type = "no-slip", velocity = [1.0, 0.0, 0.0] }
[fluid.output]
interval = 0.1
checkpoint_interval = 0.25
vorticity = true
profile_axis = "x"
"#;

const CHANNEL: &str = r#"
[fluid]
cells = [8, 8, 4]
spacing = 0.125
viscosity = 0.02
end_time = 0.3
time_step = 0.01
[fluid.boundaries]
y_low = { type = "no-slip" }
y_high = { type = "no-slip" }
[fluid.driving]
type = "flow-rate"
axis = "x"
bulk_velocity = 1.0
[fluid.initial]
type = "uniform"
velocity = [0.0, 0.0, 0.5]
[fluid.output]
interval = 0.05
checkpoint_interval = 0.1
profile_axis = "y"
"#;

fn bits(s: &Simulation<FluidModel>) -> Vec<u64> {
    let state = &s.model.solver.state;
    state
        .velocity
        .iter()
        .chain([&state.pressure])
        .flat_map(|f| f.data.iter().map(|x| x.to_bits()))
        .chain([state.time.to_bits(), state.steps])
        .collect()
}

/// Runs `text` in one go and in two legs with a simulated crash (output past the checkpoint written, then
/// the older checkpoint put back), and compares the states and every output file.
fn check_restart(text: &str, stop: f64, crash: f64) {
    let scene = FluidScene::parse(text, Path::new("restart.toml")).unwrap();
    let continuous_dir = tempfile::tempdir().unwrap();
    let mut continuous = simulation(&scene, text, continuous_dir.path(), false).unwrap();
    continuous.run(None, &mut |_| {}).unwrap();
    assert!(continuous.finished());

    let split_dir = tempfile::tempdir().unwrap();
    let mut first = simulation(&scene, text, split_dir.path(), false).unwrap();
    first.run(Some(stop), &mut |_| {}).unwrap();
    let checkpoint = split_dir.path().join("checkpoint.bin");
    let at_stop = std::fs::read(&checkpoint).unwrap();
    let stopped_at = first.model.solver.state.steps;
    first.run(Some(crash), &mut |_| {}).unwrap();
    assert!(first.model.solver.state.steps > stopped_at);
    std::fs::write(&checkpoint, at_stop).unwrap();
    drop(first);
    let mut resumed = simulation(&scene, text, split_dir.path(), true).unwrap();
    assert_eq!(resumed.model.solver.state.steps, stopped_at);
    resumed.run(None, &mut |_| {}).unwrap();

    assert!(bits(&continuous) == bits(&resumed), "the fields differ");
    let (a, b) = (
        common::all_files(continuous_dir.path()),
        common::all_files(split_dir.path()),
    );
    let names = |f: &[(String, Vec<u8>)]| f.iter().map(|x| x.0.clone()).collect::<Vec<_>>();
    assert_eq!(names(&a), names(&b));
    for ((name, x), (_, y)) in a.iter().zip(&b) {
        assert!(x == y, "{name} differs after the restart");
    }
    for expected in [
        "series.pvd",
        "diagnostics.csv",
        "fluid/fluid_000000.vti",
        "profiles/profile_000000.csv",
        "checkpoint.bin",
    ] {
        assert!(
            names(&a).iter().any(|n| n == expected),
            "{expected} missing"
        );
    }
}

#[test]
fn resumed_runs_equal_continuous_runs_with_fixed_and_adaptive_steps() {
    check_restart(CAVITY, 0.33, 0.47);
    check_restart(CHANNEL, 0.12, 0.23);
}

#[test]
fn adaptive_steps_land_on_the_frame_times_and_the_diagnostics_are_sane() {
    let scene = FluidScene::parse(CAVITY, Path::new("cavity.toml")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut sim = simulation(&scene, CAVITY, dir.path(), false).unwrap();
    sim.run(None, &mut |_| {}).unwrap();
    assert_eq!(sim.model.solver.state.time, 0.6);
    let csv = std::fs::read_to_string(dir.path().join("diagnostics.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(
        header,
        [
            "time",
            "step",
            "dt",
            "kinetic_energy",
            "max_divergence",
            "cfl",
            "bulk_velocity",
            "driving_gradient",
            "wall_shear_x_low_y",
            "wall_shear_x_low_z",
            "wall_shear_x_high_y",
            "wall_shear_x_high_z",
            "wall_shear_y_low_x",
            "wall_shear_y_low_z",
            "wall_shear_y_high_x",
            "wall_shear_y_high_z",
        ]
    );
    let rows: Vec<Vec<f64>> = lines
        .map(|l| l.split(',').map(|v| v.parse().unwrap()).collect())
        .collect();
    assert_eq!(rows.len(), 7);
    for (n, row) in rows.iter().enumerate() {
        // Frames at multiples of the interval, exactly.
        assert_eq!(
            row[0],
            [0.0, 0.1, 0.2, 0.30000000000000004, 0.4, 0.5, 0.6][n]
        );
        assert!(row[4] < 1e-9, "divergence {}", row[4]);
        if n > 0 {
            assert!(row[3] > 0.0 && row[5] > 0.0 && row[5] <= 0.9 + 1e-12);
            // The lid drags the fluid along +x: the shear on the lid is negative.
            assert!(row[14] < 0.0, "{row:?}");
        }
    }
    let vti = std::fs::read_to_string(dir.path().join("fluid/fluid_000006.vti")).unwrap();
    assert!(vti.contains("WholeExtent=\"0 12 0 12 0 2\""), "{vti}");
    assert!(
        vti.contains("Spacing=\"8.333333333333333e-2 8.333333333333333e-2"),
        "{vti}"
    );
    for name in ["velocity", "pressure", "vorticity"] {
        assert!(vti.contains(&format!("Name=\"{name}\"")), "{name}");
    }
    let profile = std::fs::read_to_string(dir.path().join("profiles/profile_000006.csv")).unwrap();
    assert!(profile.starts_with("time,x,u,v,w,p\n"), "{profile}");
    assert_eq!(profile.lines().count(), 13);
}

#[test]
fn results_do_not_depend_on_the_thread_count() {
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            let scene = FluidScene::parse(CAVITY, Path::new("cavity.toml")).unwrap();
            let mut solver = scene.solver().unwrap();
            for _ in 0..20 {
                solver.step().unwrap();
            }
            solver.state
        })
    };
    assert!(run(1) == run(2));
}

#[test]
fn resuming_with_another_scene_or_without_checkpoint_is_refused() {
    let scene = FluidScene::parse(CHANNEL, Path::new("channel.toml")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let missing = simulation(&scene, CHANNEL, dir.path(), true).err().unwrap();
    assert!(matches!(missing, RunError::Checkpoint(_)), "{missing}");
    let mut sim = simulation(&scene, CHANNEL, dir.path(), false).unwrap();
    sim.run(Some(0.05), &mut |_| {}).unwrap();
    let other_text = CHANNEL.replace("viscosity = 0.02", "viscosity = 0.03");
    let other = FluidScene::parse(&other_text, Path::new("other.toml")).unwrap();
    let err = simulation(&other, &other_text, dir.path(), true)
        .err()
        .unwrap();
    assert!(err.to_string().contains("other physics"), "{err}");
}

#[test]
fn a_diverging_run_stops_and_keeps_its_output() {
    // A uniform force accelerates a periodic flow until its CFL number passes the RK3 limit.
    let text = r#"
[fluid]
cells = [4, 4, 4]
spacing = 0.1
viscosity = 0.01
body_force = [100.0, 0.0, 0.0]
end_time = 1.0
time_step = 0.01
[fluid.output]
interval = 0.02
checkpoint_interval = 0.05
"#;
    let scene = FluidScene::parse(text, Path::new("runaway.toml")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut sim = simulation(&scene, text, dir.path(), false).unwrap();
    let err = sim.run(None, &mut |_| {}).err().unwrap();
    assert!(matches!(err, RunError::Diverged(_)), "{err}");
    assert!(err.to_string().contains("CFL"), "{err}");
    let rows = std::fs::read_to_string(dir.path().join("diagnostics.csv")).unwrap();
    assert!(rows.lines().count() >= 5, "{rows}");
    assert!(dir.path().join("checkpoint.bin").exists());
}

/// A complex number, for the Womersley solution.
#[derive(Clone, Copy)]
struct C(f64, f64);

impl C {
    fn mul(self, o: C) -> C {
        C(self.0 * o.0 - self.1 * o.1, self.0 * o.1 + self.1 * o.0)
    }
    fn div(self, o: C) -> C {
        let d = o.0 * o.0 + o.1 * o.1;
        C(
            (self.0 * o.0 + self.1 * o.1) / d,
            (self.1 * o.0 - self.0 * o.1) / d,
        )
    }
    fn cosh(self) -> C {
        C(self.0.cosh() * self.1.cos(), self.0.sinh() * self.1.sin())
    }
}

/// Womersley's oscillating channel flow driven through the scene file by a pressure gradient that
/// varies in time (a Fourier series): after the start-up has decayed (exp(-pi^2 nu t / H^2) = 3e-9),
/// the profile is Re[(G / (i w)) (1 - cosh(k (y - H/2)) / cosh(k H / 2)) e^(i w t)] with
/// k = sqrt(i w / nu), for dp/dx = -G cos(w t).
#[test]
fn an_oscillating_pressure_gradient_gives_the_womersley_profile() {
    let text = r#"
[fluid]
cells = [2, 16, 2]
spacing = 0.0625
viscosity = 1.0
end_time = 2.0
time_step = 0.002
[fluid.boundaries]
y_low = { type = "no-slip" }
y_high = { type = "no-slip" }
[fluid.driving]
type = "pressure-gradient"
axis = "x"
gradient = { period = 1.0, cos = [-10.0] }
[fluid.output]
interval = 0.5
vtk = false
"#;
    let scene = FluidScene::parse(text, Path::new("womersley.toml")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut sim = simulation(&scene, text, dir.path(), false).unwrap();
    sim.run(None, &mut |_| {}).unwrap();
    let state = &sim.model.solver.state;
    let (g, omega, nu, height) = (10.0, 2.0 * std::f64::consts::PI, 1.0, 1.0);
    // k = sqrt(i w / nu) = (1 + i) sqrt(w / (2 nu)).
    let root = (omega / (2.0 * nu)).sqrt();
    let k = C(root, root);
    let amplitude = C(1.0, 0.0).div(C(0.0, omega / g));
    let phase = C((omega * state.time).cos(), (omega * state.time).sin());
    let exact = |y: f64| {
        let ratio = k
            .mul(C(y - 0.5 * height, 0.0))
            .cosh()
            .div(k.mul(C(0.5 * height, 0.0)).cosh());
        amplitude.mul(C(1.0 - ratio.0, -ratio.1)).mul(phase).0
    };
    let u = &state.velocity[0];
    let (mut worst, mut peak) = (0.0f64, 0.0f64);
    for j in 1..=16 {
        let y = (j as f64 - 0.5) * 0.0625;
        let value = u.at(1, j, 1);
        worst = worst.max((value - exact(y)).abs());
        peak = peak.max(exact(y).abs());
    }
    assert!(peak > 0.1, "{peak}");
    println!("Womersley: largest error {worst:.3e} of a peak {peak:.3e}");
    // Second order in h and dt: 0.52 % of the peak at h = H/16, dt = T/500 when this was written.
    assert!(worst < 1e-2 * peak, "error {worst} of a peak {peak}");
}

/// A flow rate read from a table (a protocol that changes it mid-run): after every step the bulk
/// velocity is the table's value at that time, to round-off, with both a fixed and an adaptive step.
#[test]
fn a_flow_rate_table_is_held_step_by_step() {
    let table = "bulk_velocity = { table = [[0.0, 1.0], [0.1, 1.0], [0.15, 3.0], [0.3, 3.0]] }";
    for text in [
        CHANNEL.replace("bulk_velocity = 1.0", table),
        CHANNEL
            .replace("bulk_velocity = 1.0", table)
            .replace("time_step = 0.01", "cfl = 0.5"),
    ] {
        let scene = FluidScene::parse(&text, Path::new("table.toml")).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let mut sim = simulation(&scene, &text, dir.path(), false).unwrap();
        sim.run(None, &mut |_| {}).unwrap();
        let csv = std::fs::read_to_string(dir.path().join("diagnostics.csv")).unwrap();
        let mut lines = csv.lines();
        let header: Vec<&str> = lines.next().unwrap().split(',').collect();
        let bulk = header.iter().position(|c| *c == "bulk_velocity").unwrap();
        let mut rows = 0;
        for line in lines.skip(1) {
            let row: Vec<f64> = line.split(',').map(|v| v.parse().unwrap()).collect();
            let t = row[0];
            let expected = if t <= 0.1 {
                1.0
            } else if t >= 0.15 {
                3.0
            } else {
                1.0 + 2.0 * (t - 0.1) / 0.05
            };
            assert!((row[bulk] - expected).abs() < 1e-12, "t = {t}: {row:?}");
            rows += 1;
        }
        assert!(rows >= 6, "{csv}");
    }
}
