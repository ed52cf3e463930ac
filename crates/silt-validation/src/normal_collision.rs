//! Normal collisions with the adaptive collision-time model (seed sec. 3.2, 4.2; Fig. 4).
//!
//! A sphere hits a wall, or two spheres (equal or unequal radii) hit head-on, without gravity or fluid.
//! The measured restitution is compared with the exact solution of the contact ODE with the same
//! k_n and d_n, and the contact duration with T_c.

use crate::case::CaseFiles;
use crate::report::{case_dir, pct, png, CaseReport};
use serde::Deserialize;
use silt_core::model::{Horizon, Model};
use silt_dem::contact::actm::{exact_collision, ActmShape, ExactCollision};
use silt_dem::system::DemSystem;
use silt_io::scenes::particles::ParticleScene;
use silt_io::scenes::{Override, SceneKind};
use silt_report::{Axis, Plot, Series, Style, Table};
use std::path::Path;

/// Partner of the moving sphere.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Partner {
    /// The floor (`wall.toml`).
    Wall,
    /// A free sphere of this radius, relative to the first one's radius 1 (`spheres.toml`).
    Sphere(f64),
}

/// How the collision is integrated.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scheme {
    /// The seed's predictor-corrector with {8, 2, 5} sub-steps (the scenes' integrator).
    Seed,
    /// The predictor-corrector without sub-steps.
    PredictorCorrector,
    /// Forward Euler / Crank-Nicolson without sub-steps.
    EulerCrankNicolson,
}

/// One collision experiment.
#[derive(Clone, Copy, Debug)]
pub struct Collision {
    pub e_dry: f64,
    pub partner: Partner,
    pub scheme: Scheme,
}

impl Collision {
    /// The scene file and its changes for this experiment.
    fn scene(&self) -> (&'static str, Vec<Override>) {
        let mut changes = vec![Override::new("material.0.e_dry", self.e_dry)];
        let substeps = || Override::new("simulation.substeps", vec![1i64, 1, 1]);
        match self.scheme {
            Scheme::Seed => {}
            Scheme::PredictorCorrector => changes.extend([
                Override::new("simulation.integrator", "predictor-corrector"),
                substeps(),
            ]),
            Scheme::EulerCrankNicolson => changes.extend([
                Override::new("simulation.integrator", "euler-crank-nicolson"),
                substeps(),
            ]),
        }
        match self.partner {
            Partner::Wall => ("wall.toml", changes),
            Partner::Sphere(1.0) => ("spheres.toml", changes),
            Partner::Sphere(radius) => {
                // Zero total momentum at relative speed 1; the start gap of the scene (0.37 dt).
                let mass = |r: f64| 4.0 / 3.0 * std::f64::consts::PI * r.powi(3);
                let (m1, m2) = (mass(1.0), mass(radius));
                changes.extend([
                    Override::new("particles.1.diameters", vec![2.0 * radius]),
                    Override::new(
                        "particles.1.positions",
                        toml::Value::Array(vec![vec![0.0, 0.0, 1.0 + radius + 0.00074].into()]),
                    ),
                    Override::new("particles.0.velocity", vec![0.0, 0.0, m2 / (m1 + m2)]),
                    Override::new("particles.1.velocity", vec![0.0, 0.0, -m1 / (m1 + m2)]),
                ]);
                ("spheres.toml", changes)
            }
        }
    }
}

/// What the experiment measured.
#[derive(Clone, Debug)]
pub struct CollisionResult {
    pub restitution: f64,
    pub duration: f64,
    pub collision_time: f64,
    pub exact: ExactCollision,
    /// Normal contact force magnitude against time since first touch, sampled once per time step.
    pub force_history: Vec<(f64, f64)>,
}

impl CollisionResult {
    /// Relative error of the rebound against the exact ODE with the same coefficients.
    pub fn restitution_error(&self) -> f64 {
        self.restitution / self.exact.restitution - 1.0
    }

    pub fn duration_error(&self) -> f64 {
        self.duration / self.collision_time - 1.0
    }
}

/// Runs one collision from the case's scenes: the sphere(s) of the scene at relative impact speed
/// `u_in`, stepped until a T_c after the release (or the scene's end time).
pub fn run(case: &CaseFiles, c: &Collision) -> Result<CollisionResult, String> {
    let (file, changes) = c.scene();
    let scene = case.scene(file, &changes, ParticleScene::parse)?;
    let end_time = scene.settings().end_time;
    let mut model = scene.build().map_err(|e| e.to_string())?;
    let gap = |s: &DemSystem| match c.partner {
        Partner::Wall => s.particles.position[0].z - s.particles.radius[0],
        Partner::Sphere(_) => {
            (s.particles.position[1] - s.particles.position[0]).length()
                - s.particles.radius[0]
                - s.particles.radius[1]
        }
    };
    let normal_speed = |s: &DemSystem| match c.partner {
        Partner::Wall => -s.particles.velocity[0].z,
        Partner::Sphere(_) => s.particles.velocity[0].z - s.particles.velocity[1].z,
    };
    let contact_state = |s: &DemSystem| match c.partner {
        Partner::Wall => s.wall_states[0],
        Partner::Sphere(_) => s
            .neighbors
            .find(0, 1)
            .map(|p| s.neighbors.state[p])
            .unwrap_or_default(),
    };
    let effective_mass = {
        let m = &model.system.particles.mass;
        match c.partner {
            Partner::Wall => m[0],
            Partner::Sphere(_) => m[0] * m[1] / (m[0] + m[1]),
        }
    };
    let impact_speed = normal_speed(&model.system);
    let collision_time = model.system.model.collision_time;
    let dt = model.system.dt;

    let mut previous_gap = gap(&model.system);
    let mut touch_time = None;
    let mut release_time = None;
    let mut coefficients = (0.0, 0.0);
    let mut recorded_impact_speed = impact_speed;
    let mut force_history = vec![(0.0, 0.0)];
    while model.time() < end_time {
        let t_before = model.time();
        model
            .advance(Horizon::Steps(1))
            .map_err(|e| e.to_string())?;
        let system = &model.system;
        let g = gap(system);
        let t = system.time();
        if touch_time.is_none() && g <= 0.0 {
            touch_time = Some(t_before + dt * previous_gap / (previous_gap - g));
        }
        let state = contact_state(system);
        if state.touching {
            coefficients = (state.stiffness, state.damping);
            recorded_impact_speed = state.impact_speed;
        }
        if let Some(t0) = touch_time {
            if release_time.is_none() {
                let overlap = (-g).max(0.0);
                let (k, d) = coefficients;
                let force = if g <= 0.0 {
                    (k * overlap * overlap.sqrt() + d * normal_speed(system)).abs()
                } else {
                    0.0
                };
                force_history.push((t - t0, force));
                if g > 0.0 {
                    release_time = Some(t_before + dt * previous_gap / (previous_gap - g));
                }
            } else if let Some(release) = release_time {
                if t - release > collision_time {
                    break;
                }
            }
        }
        previous_gap = g;
    }
    let (k, d) = coefficients;
    // The ODE started at the recorded u_in with the k_n tuned to it is the model's ideal collision; its
    // restitution does not depend on u_in (the ACTM is scale-free), so it is the reference for u_out / u_in.
    let exact = exact_collision(k, d, effective_mass, recorded_impact_speed, collision_time);
    let restitution = -normal_speed(&model.system) / impact_speed;
    let duration = release_time.unwrap_or(f64::INFINITY) - touch_time.unwrap_or(0.0);
    Ok(CollisionResult {
        restitution,
        duration,
        collision_time,
        exact,
        force_history,
    })
}

/// Exact force history of the contact ODE with the coefficients of `result`'s contact, for plots.
pub fn exact_force_history(
    k: f64,
    d: f64,
    mass: f64,
    impact_speed: f64,
    duration: f64,
    samples: usize,
) -> Vec<(f64, f64)> {
    let h = duration / (samples as f64 * 200.0);
    let (mut z, mut v, mut t) = (0.0f64, -impact_speed, 0.0);
    let mut out = vec![(0.0, 0.0)];
    let rhs = |z: f64, v: f64| {
        let overlap = (-z).max(0.0);
        (k * overlap * overlap.sqrt() - d * v) / mass
    };
    for step in 1..=samples * 200 {
        let (k1z, k1v) = (v, rhs(z, v));
        let (k2z, k2v) = (v + 0.5 * h * k1v, rhs(z + 0.5 * h * k1z, v + 0.5 * h * k1v));
        let (k3z, k3v) = (v + 0.5 * h * k2v, rhs(z + 0.5 * h * k2z, v + 0.5 * h * k2v));
        let (k4z, k4v) = (v + h * k3v, rhs(z + h * k3z, v + h * k3v));
        z += h / 6.0 * (k1z + 2.0 * k2z + 2.0 * k3z + k4z);
        v += h / 6.0 * (k1v + 2.0 * k2v + 2.0 * k3v + k4v);
        t += h;
        if z > 0.0 {
            out.push((t, 0.0));
            break;
        }
        if step % 200 == 0 {
            let overlap = -z;
            out.push((t, (k * overlap * overlap.sqrt() - d * v).abs()));
        }
    }
    out
}

/// `[tolerance]` of `validation/normal-collisions/reference.toml`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Tolerances {
    restitution: f64,
    contact_time: f64,
    euler_min_overshoot: f64,
}

/// `[full]` / `[quick]` of `validation/normal-collisions/reference.toml`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Parameters {
    e_dry: Vec<f64>,
    judged_e_dry: Vec<f64>,
    scheme_e_dry: Vec<f64>,
    unequal_radius: f64,
}

/// The case: restitution and contact time for every partner and e_dry with the seed's integrator,
/// then the integrators without sub-steps (seed Fig. 4).
pub fn report(out: &Path, quick: bool) -> Result<CaseReport, String> {
    let case = CaseFiles::open("normal-collisions", quick)?;
    let tol: Tolerances = case.tolerances()?;
    let p: Parameters = case.parameters()?;
    let dir = case_dir(out, case.name)?;
    let mut passed = true;
    let unequal = format!("sphere, R_q = {} R_p", p.unequal_radius);
    let partners = [
        (Partner::Wall, "wall".to_string()),
        (Partner::Sphere(1.0), "sphere, equal radii".to_string()),
        (Partner::Sphere(p.unequal_radius), unequal),
    ];
    let mut table = Table::new(
        [
            "partner",
            "e_dry",
            "e simulated",
            "e exact ODE",
            "error",
            "T_contact / T_c - 1",
            "within tolerance",
        ]
        .map(String::from)
        .to_vec(),
    );
    let mut ratio_series = Vec::new();
    for (partner, label) in &partners {
        let mut points = Vec::new();
        for &e in &p.e_dry {
            let r = run(
                &case,
                &Collision {
                    e_dry: e,
                    partner: *partner,
                    scheme: Scheme::Seed,
                },
            )?;
            let judged = p.judged_e_dry.contains(&e);
            let ok = r.restitution_error().abs() < tol.restitution
                && r.duration_error().abs() < tol.contact_time;
            if judged {
                passed &= ok;
            }
            table.push_row(vec![
                label.clone(),
                format!("{e}"),
                format!("{:.5}", r.restitution),
                format!("{:.5}", r.exact.restitution),
                pct(r.restitution_error()),
                pct(r.duration_error()),
                match (judged, ok) {
                    (false, _) => "(not a judged value)".into(),
                    (true, true) => "yes".into(),
                    (true, false) => "NO".into(),
                },
            ]);
            points.push((e, r.restitution / e));
        }
        ratio_series.push(Series::new(label, points, Style::LineMarkers));
    }
    let exact_points: Vec<(f64, f64)> = p
        .e_dry
        .iter()
        .map(|&e| {
            let shape = ActmShape::new(e, 1.0);
            let x = exact_collision(shape.stiffness(1.0, 1.0), shape.damping(1.0), 1.0, 1.0, 1.0);
            (e, x.restitution / e)
        })
        .collect();
    ratio_series.push(Series::new(
        "exact ODE of the ACTM",
        exact_points,
        Style::Dashed,
    ));
    let mut figures = vec![png(
        &dir,
        "restitution.png",
        &Plot {
            title: "ACTM: effective over prescribed restitution (T_c = 10 dt, {8,2,5} sub-steps)"
                .into(),
            x: Axis::linear("e_dry"),
            y: Axis::linear("e / e_dry"),
            series: ratio_series,
        },
    )?];

    // Seed sec. 4.2 / Fig. 4: T_c = 10 dt without sub-steps.
    let mut schemes = Table::new(
        [
            "e_dry",
            "predictor-corrector error",
            "forward Euler / CN error",
            "within tolerance",
        ]
        .map(String::from)
        .to_vec(),
    );
    for (i, &e) in p.scheme_e_dry.iter().enumerate() {
        let on_the_wall = |scheme| Collision {
            e_dry: e,
            partner: Partner::Wall,
            scheme,
        };
        let pc = run(&case, &on_the_wall(Scheme::PredictorCorrector))?;
        let fe = run(&case, &on_the_wall(Scheme::EulerCrankNicolson))?;
        let ok = pc.restitution_error().abs() < tol.restitution
            && fe.restitution_error() > tol.euler_min_overshoot;
        passed &= ok;
        schemes.push_row(vec![
            format!("{e}"),
            pct(pc.restitution_error()),
            pct(fe.restitution_error()),
            (if ok { "yes" } else { "NO" }).into(),
        ]);
        if i + 1 == p.scheme_e_dry.len() {
            figures.push(png(&dir, "force-history.png", &force_plot(e, &pc, &fe))?);
        }
    }
    let judged: Vec<String> = p.judged_e_dry.iter().map(|e| e.to_string()).collect();
    let report = CaseReport {
        name: case.name.into(),
        passed,
        tables: vec![
            (
                format!(
                    "Restitution and contact time (judged: e_dry in {{{}}}; |error| < {}, |duration \
                     error| < {})",
                    judged.join(", "),
                    pct(tol.restitution),
                    pct(tol.contact_time)
                ),
                table,
            ),
            (
                format!(
                    "Time integration at T_c = 10 dt without sub-steps (predictor-corrector within \
                     {}, Euler/CN overshoot > {})",
                    pct(tol.restitution),
                    pct(tol.euler_min_overshoot)
                ),
                schemes,
            ),
        ],
        figures,
        notes: vec!["Source: Biegert et al. (2017) sec. 3.2, 4.2, Fig. 4; Ray et al. (2015). Reference: exact integration of the contact ODE with the same k_n, d_n.".into()],
        runs: case.runs(),
    };
    report.write(&dir)?;
    Ok(report)
}

/// The contact force against time: exact, Euler/CN and the predictor-corrector (seed Fig. 4).
fn force_plot(e_dry: f64, pc: &CollisionResult, fe: &CollisionResult) -> Plot {
    let mass = 2.0 * 4.0 / 3.0 * std::f64::consts::PI;
    let shape = ActmShape::new(e_dry, pc.collision_time);
    let exact = exact_force_history(
        shape.stiffness(mass, 1.0),
        shape.damping(mass),
        mass,
        1.0,
        1.5 * pc.collision_time,
        200,
    );
    let scale = exact.iter().map(|p| p.1).fold(0.0, f64::max);
    let norm = |h: &[(f64, f64)]| {
        h.iter()
            .map(|&(t, f)| (t / pc.collision_time, f / scale))
            .collect::<Vec<_>>()
    };
    Plot {
        title: format!("Contact force at T_c = 10 dt, e_dry = {e_dry} (seed Fig. 4)"),
        x: Axis::linear("t / T_c"),
        y: Axis::linear("|F_c| / max |F_c,exact|"),
        series: vec![
            Series::new("exact solution", norm(&exact), Style::Line),
            Series::new(
                "forward Euler / Crank-Nicolson",
                norm(&fe.force_history),
                Style::LineMarkers,
            ),
            Series::new(
                "predictor-corrector",
                norm(&pc.force_history),
                Style::LineMarkers,
            ),
        ],
    }
}
