//! The Cosserat-rod validation cases (issue 6; seed `001_*.txt`): set-ups and runs shared by
//! `silt validate`, `silt bench rods` and the test suite. Sources, reference numbers and tolerances
//! are in `validation/rod-*/README.md`.

use silt_core::Vec3;
use silt_rods::boundary::{Boundary, EndMotion, Support};
use silt_rods::dynamics::{angular_momentum, kinetic_energy, Inertia, Loads, RodModel, RodMotion};
use silt_rods::implicit::ImplicitRod;
use silt_rods::loads::EndLoad;
use silt_rods::potential::energy;
use silt_rods::radau::{RadauOptions, RadauStats};
use silt_rods::rod::{End, Rod, Stiffness};
use silt_rods::statics::{solve_static, StaticOptions};
use silt_rods::verlet::Verlet;
use std::time::Instant;

/// Analytic tip deflections of PyElastica's Timoshenko cantilever: F L³/(3 E I) and F L/(k G A).
pub const TIMOSHENKO_BENDING: f64 = 0.044003;
pub const TIMOSHENKO_SHEAR: f64 = 0.023767;
pub const TIMOSHENKO_TIP: f64 = TIMOSHENKO_BENDING + TIMOSHENKO_SHEAR;

/// PyElastica's Timoshenko cantilever (validation-data.md): L = 3, r = 0.25, ρ = 5000, E = 1e6,
/// G = 1e4, k = 27/28, tip force 15 across, clamped at the other end; the shear stiffness times
/// `shear_factor` (1000: the unshearable limit).
pub fn timoshenko_rod(segments: usize, shear_factor: f64) -> (Rod, RodModel) {
    let (length, radius, density) = (3.0, 0.25, 5000.0);
    let stiffness = Stiffness::circular(radius, 1e6, 1e4 * shear_factor, 27.0 / 28.0);
    let mut rod = Rod::straight(segments, length, Vec3::ZERO, Vec3::Z, Vec3::X, stiffness)
        .expect("valid rod");
    let clamp = Boundary::new(&mut rod, End::First, Support::Clamped, EndMotion::default());
    let model = RodModel {
        loads: Loads {
            node_forces: vec![(segments, Vec3::new(-15.0, 0.0, 0.0))],
            ..Loads::default()
        },
        boundaries: vec![clamp],
        ..RodModel::new(Inertia::circular(&rod, radius, density))
    };
    (rod, model)
}

/// A static solve: the tip deflection, Newton steps and wall time.
#[derive(Clone, Copy, Debug)]
pub struct StaticResult {
    pub tip: f64,
    pub newton_steps: usize,
    pub seconds: f64,
}

pub fn timoshenko_static(segments: usize, shear_factor: f64) -> Result<StaticResult, String> {
    let (mut rod, model) = timoshenko_rod(segments, shear_factor);
    let start = Instant::now();
    let report = solve_static(&mut rod, &model, StaticOptions::default())?;
    Ok(StaticResult {
        tip: -rod.nodes[segments].x,
        newton_steps: report.newton_steps,
        seconds: start.elapsed().as_secs_f64(),
    })
}

/// A damped dynamic run to rest: the tip over time, when it entered the 1 % band around the static
/// answer for good, and the cost.
#[derive(Clone, Debug)]
pub struct DynamicResult {
    pub tip: f64,
    /// (t, tip deflection) at each check.
    pub history: Vec<(f64, f64)>,
    /// Simulated time after which the tip stays within 1 % of `reference`.
    pub settled_time: Option<f64>,
    /// Wall time to `settled_time`.
    pub settled_seconds: Option<f64>,
    pub seconds: f64,
    pub steps: usize,
    pub stats: Option<RadauStats>,
}

fn settled(history: &[(f64, f64, f64)], reference: f64) -> (Option<f64>, Option<f64>) {
    // The first check after which every later one is within 1 %.
    let mut when = None;
    for &(t, tip, wall) in history.iter().rev() {
        if (tip / reference - 1.0).abs() <= 0.01 {
            when = Some((t, wall));
        } else {
            break;
        }
    }
    (when.map(|w| w.0), when.map(|w| w.1))
}

/// Radau IIA with a drag `nu` (critical for the first bending mode near 1.4/s) to `end_time`, the
/// tip checked every `check` time units.
pub fn timoshenko_radau(
    segments: usize,
    nu: f64,
    end_time: f64,
    check: f64,
    tolerance: f64,
) -> Result<DynamicResult, String> {
    let (rod, mut model) = timoshenko_rod(segments, 1.0);
    model.drag = nu;
    let mut implicit = ImplicitRod::new(
        &rod,
        &RodMotion::rest(&rod),
        model,
        RadauOptions {
            relative_tolerance: tolerance,
            absolute_tolerance: tolerance,
            ..RadauOptions::default()
        },
    );
    let start = Instant::now();
    let mut history = Vec::new();
    let checks = (end_time / check).round() as usize;
    for k in 1..=checks {
        let t = k as f64 * check;
        implicit.advance_to(t).map_err(|e| e.to_string())?;
        let (state, _) = implicit.state();
        history.push((t, -state.nodes[segments].x, start.elapsed().as_secs_f64()));
    }
    let (settled_time, settled_seconds) = settled(&history, TIMOSHENKO_TIP);
    let stats = implicit.stats();
    Ok(DynamicResult {
        tip: history.last().map_or(0.0, |h| h.1),
        history: history.iter().map(|h| (h.0, h.1)).collect(),
        settled_time,
        settled_seconds,
        seconds: start.elapsed().as_secs_f64(),
        steps: stats.accepted_steps,
        stats: Some(stats),
    })
}

/// Position Verlet at `dt` with a drag `nu`, checked every `check` time units.
pub fn timoshenko_verlet(
    segments: usize,
    nu: f64,
    dt: f64,
    end_time: f64,
    check: f64,
) -> DynamicResult {
    let (mut rod, mut model) = timoshenko_rod(segments, 1.0);
    model.drag = nu;
    let mut motion = RodMotion::rest(&rod);
    let mut verlet = Verlet::default();
    let per_check = (check / dt).round() as usize;
    let checks = (end_time / check).round() as usize;
    let start = Instant::now();
    let mut history = Vec::new();
    for k in 0..checks {
        verlet.advance(
            &mut rod,
            &mut motion,
            &model,
            (k * per_check) as f64 * dt,
            dt,
            per_check,
        );
        history.push((
            ((k + 1) * per_check) as f64 * dt,
            -rod.nodes[segments].x,
            start.elapsed().as_secs_f64(),
        ));
    }
    let (settled_time, settled_seconds) = settled(&history, TIMOSHENKO_TIP);
    DynamicResult {
        tip: history.last().map_or(0.0, |h| h.1),
        history: history.iter().map(|h| (h.0, h.1)).collect(),
        settled_time,
        settled_seconds,
        seconds: start.elapsed().as_secs_f64(),
        steps: checks * per_check,
        stats: None,
    }
}

/// Axial stretch: a rod of `segments` clamped at one end, pulled along its axis by F at the other;
/// the static solver's and a damped Radau run's end displacement over F L / (E A).
pub fn axial_stretch(segments: usize) -> Result<(f64, f64), String> {
    let (radius, young, length, force) = (0.025, 1e4, 1.0, 1.0);
    let stiffness = Stiffness::circular(radius, young, young / 3.0, 1.0);
    let mut rod =
        Rod::straight(segments, length, Vec3::ZERO, Vec3::X, Vec3::Y, stiffness).expect("rod");
    let clamp = Boundary::new(&mut rod, End::First, Support::Clamped, EndMotion::default());
    let model = RodModel {
        loads: Loads {
            end_loads: vec![EndLoad {
                end: End::Last,
                force: Vec3::new(force, 0.0, 0.0),
                torque: Vec3::ZERO,
                follower: false,
            }],
            ..Loads::default()
        },
        boundaries: vec![clamp],
        // About critical for the lowest axial mode (ω = π sqrt(E/ρ) / 2L = 5/s).
        drag: 10.0,
        ..RodModel::new(Inertia::circular(&rod, radius, 1000.0))
    };
    let expected = force * length / (young * std::f64::consts::PI * radius * radius);
    let mut statics = rod.clone();
    solve_static(&mut statics, &model, StaticOptions::default())?;
    let static_ratio = (statics.nodes[segments].x - length) / expected;
    let mut implicit = ImplicitRod::new(
        &rod,
        &RodMotion::rest(&rod),
        model,
        RadauOptions {
            relative_tolerance: 1e-8,
            absolute_tolerance: 1e-10,
            ..RadauOptions::default()
        },
    );
    // The axial wave crosses in L / sqrt(E/ρ) = 0.3; the drag settles it within a few seconds.
    implicit.advance_to(20.0).map_err(|e| e.to_string())?;
    let (state, _) = implicit.state();
    let dynamic_ratio = (state.nodes[segments].x - length) / expected;
    Ok((static_ratio, dynamic_ratio))
}

/// Conservation without damping or loads: a free rod (20 segments, E = 1e5, G = 4e4, r = 0.05,
/// ρ = 1000, L = 1), bent and spinning. Energy and angular momentum at `samples` times over
/// `duration`: largest relative deviations, and the drift (the trend over the run).
#[derive(Clone, Debug)]
pub struct ConservationResult {
    pub energy_band: f64,
    /// The least-squares trend of the energy error over the run, times the duration.
    pub energy_drift: f64,
    pub momentum_error: f64,
    /// (t, E/E0 - 1)
    pub energy_history: Vec<(f64, f64)>,
    pub steps: usize,
    pub seconds: f64,
}

fn tumbling_rod() -> (Rod, RodMotion, RodModel) {
    let (radius, density) = (0.05, 1000.0);
    let stiffness = Stiffness::circular(radius, 1e5, 4e4, 1.0);
    let rod = Rod::straight(20, 1.0, Vec3::ZERO, Vec3::X, Vec3::Y, stiffness).expect("rod");
    let inertia = Inertia::circular(&rod, radius, density);
    let mut motion = RodMotion::rest(&rod);
    for (j, v) in motion.velocities.iter_mut().enumerate() {
        let s = j as f64 / 20.0;
        *v = Vec3::new(0.0, 0.5 * (std::f64::consts::PI * s).sin(), 0.1 * s);
    }
    for w in motion.angular_velocities.iter_mut() {
        *w = Vec3::new(0.0, 0.0, 2.0);
    }
    (rod, motion, RodModel::new(inertia))
}

fn conservation_summary(
    history: &[(f64, f64, f64)],
    steps: usize,
    seconds: f64,
) -> ConservationResult {
    let band = history.iter().map(|h| h.1.abs()).fold(0.0, f64::max);
    // The drift: the least-squares trend of E/E0 - 1 over the run, times its duration.
    let n = history.len() as f64;
    let (mean_t, mean_e) = (
        history.iter().map(|h| h.0).sum::<f64>() / n,
        history.iter().map(|h| h.1).sum::<f64>() / n,
    );
    let covariance: f64 = history
        .iter()
        .map(|h| (h.0 - mean_t) * (h.1 - mean_e))
        .sum();
    let variance: f64 = history.iter().map(|h| (h.0 - mean_t).powi(2)).sum();
    let duration = history.last().map_or(0.0, |h| h.0) - history.first().map_or(0.0, |h| h.0);
    ConservationResult {
        energy_band: band,
        energy_drift: (covariance / variance.max(1e-300) * duration).abs(),
        momentum_error: history.iter().map(|h| h.2).fold(0.0, f64::max),
        energy_history: history.iter().map(|h| (h.0, h.1)).collect(),
        steps,
        seconds,
    }
}

/// Radau IIA at tolerance `tolerance`.
pub fn conservation_radau(
    duration: f64,
    samples: usize,
    tolerance: f64,
) -> Result<ConservationResult, String> {
    let (rod, motion, model) = tumbling_rod();
    let inertia = model.inertia.clone();
    let e0 = energy(&rod) + kinetic_energy(&motion, &inertia);
    let l0 = angular_momentum(&rod, &motion, &inertia);
    let mut implicit = ImplicitRod::new(
        &rod,
        &motion,
        model,
        RadauOptions {
            relative_tolerance: tolerance,
            absolute_tolerance: tolerance * 1e-2,
            ..RadauOptions::default()
        },
    );
    let start = Instant::now();
    let mut history = Vec::new();
    for k in 1..=samples {
        let t = duration * k as f64 / samples as f64;
        implicit.advance_to(t).map_err(|e| e.to_string())?;
        let (r, m) = implicit.state();
        let e = energy(&r) + kinetic_energy(&m, &inertia);
        let l = angular_momentum(&r, &m, &inertia);
        history.push((t, e / e0 - 1.0, (l - l0).length() / l0.length()));
    }
    Ok(conservation_summary(
        &history,
        implicit.stats().accepted_steps,
        start.elapsed().as_secs_f64(),
    ))
}

/// Position Verlet at dt (the axial wave crosses a segment in 5e-3).
pub fn conservation_verlet(duration: f64, samples: usize, dt: f64) -> ConservationResult {
    let (mut rod, mut motion, model) = tumbling_rod();
    let inertia = model.inertia.clone();
    let e0 = energy(&rod) + kinetic_energy(&motion, &inertia);
    let l0 = angular_momentum(&rod, &motion, &inertia);
    let per_sample = ((duration / samples as f64) / dt).round() as usize;
    let mut verlet = Verlet::default();
    let start = Instant::now();
    let mut history = Vec::new();
    for k in 0..samples {
        verlet.advance(
            &mut rod,
            &mut motion,
            &model,
            (k * per_sample) as f64 * dt,
            dt,
            per_sample,
        );
        let e = energy(&rod) + kinetic_energy(&motion, &inertia);
        let l = angular_momentum(&rod, &motion, &inertia);
        history.push((
            ((k + 1) * per_sample) as f64 * dt,
            e / e0 - 1.0,
            (l - l0).length() / l0.length(),
        ));
    }
    conservation_summary(
        &history,
        samples * per_sample,
        start.elapsed().as_secs_f64(),
    )
}

/// The issue's stiff rod: steel (E = 200 GPa, ν = 0.3, k = 0.9, ρ = 7850), r = 1 mm, L = 1 m,
/// hinged at one end, released horizontal under gravity.
pub fn steel_pendulum(segments: usize) -> (Rod, RodModel) {
    let (radius, young, poisson, density) = (1e-3, 200e9, 0.3, 7850.0);
    let stiffness = Stiffness::circular(radius, young, young / (2.0 * (1.0 + poisson)), 0.9);
    let mut rod =
        Rod::straight(segments, 1.0, Vec3::ZERO, Vec3::X, Vec3::Z, stiffness).expect("rod");
    let hinge = Boundary::new(&mut rod, End::First, Support::Hinged, EndMotion::default());
    let model = RodModel {
        loads: Loads {
            gravity: Vec3::new(0.0, 0.0, -9.81),
            ..Loads::default()
        },
        boundaries: vec![hinge],
        ..RodModel::new(Inertia::circular(&rod, radius, density))
    };
    (rod, model)
}

/// Tip positions of the swinging steel rod at `samples` times, by Radau IIA and by position Verlet.
#[derive(Clone, Debug)]
pub struct PendulumResult {
    /// (t, implicit tip, explicit tip)
    pub tips: Vec<(f64, Vec3, Vec3)>,
    /// Largest |implicit - explicit| over the tip's distance from the hinge (the length).
    pub largest_difference: f64,
    pub implicit_seconds: f64,
    pub explicit_seconds: f64,
    pub implicit_stats: RadauStats,
    pub explicit_steps: usize,
}

pub fn steel_pendulum_run(
    segments: usize,
    duration: f64,
    samples: usize,
    tolerance: f64,
    explicit_dt: Option<f64>,
) -> Result<PendulumResult, String> {
    let (rod, model) = steel_pendulum(segments);
    let mut implicit = ImplicitRod::new(
        &rod,
        &RodMotion::rest(&rod),
        model.clone(),
        RadauOptions {
            relative_tolerance: tolerance,
            absolute_tolerance: tolerance,
            ..RadauOptions::default()
        },
    );
    let times: Vec<f64> = (1..=samples)
        .map(|k| duration * k as f64 / samples as f64)
        .collect();
    let start = Instant::now();
    let mut implicit_tips = Vec::new();
    for &t in &times {
        implicit.advance_to(t).map_err(|e| e.to_string())?;
        implicit_tips.push(implicit.state().0.nodes[segments]);
    }
    let implicit_seconds = start.elapsed().as_secs_f64();
    let (mut explicit_tips, mut explicit_seconds, mut explicit_steps) = (Vec::new(), 0.0, 0);
    if let Some(dt) = explicit_dt {
        let (mut r, mut m) = (rod.clone(), RodMotion::rest(&rod));
        let mut verlet = Verlet::default();
        let start = Instant::now();
        let mut done = 0usize;
        for &t in &times {
            let target = (t / dt).round() as usize;
            verlet.advance(&mut r, &mut m, &model, done as f64 * dt, dt, target - done);
            done = target;
            if !r.nodes[segments].is_finite() {
                return Err(format!("the explicit reference diverged before t = {t}"));
            }
            explicit_tips.push(r.nodes[segments]);
        }
        explicit_seconds = start.elapsed().as_secs_f64();
        explicit_steps = done;
    }
    let tips: Vec<(f64, Vec3, Vec3)> = times
        .iter()
        .enumerate()
        .map(|(k, &t)| {
            (
                t,
                implicit_tips[k],
                explicit_tips.get(k).copied().unwrap_or(Vec3::NAN),
            )
        })
        .collect();
    let largest_difference = tips
        .iter()
        .map(|(_, a, b)| (*a - *b).length())
        .fold(0.0, f64::max);
    Ok(PendulumResult {
        tips,
        largest_difference,
        implicit_seconds,
        explicit_seconds,
        implicit_stats: implicit.stats(),
        explicit_steps,
    })
}

/// The localized helix of a twisted, end-shortened rod (Love; van der Heijden & Thompson 2000; the
/// dimensionless form of Gazzola et al. 2018): with lengths over L, bending stiffness B, twisting
/// C = γ B, end tension t and twisting moment m (over B/L² and B/L), `a = sqrt(4t - m²)`,
///
/// ```text
/// 1 - cos θ(s) = (a² / 2t) sech²(a s / 2)     (tilt of the tangent from the axis)
/// ρ(s) = B κ / T = (a / t) sech(a s / 2)        (distance from the axis: the envelope)
/// end shortening d = ∫ (1 - cos θ) = 2a / t,  end rotation R = m / γ + 4 atan(a / m)
/// ```
///
/// Solves the last two for (m, t) by Newton's method from the helix-free guess.
pub fn helix_loads(shortening: f64, rotation: f64, gamma: f64) -> Result<(f64, f64), String> {
    // Unknowns x = (m, t); residuals of the two conditions.
    let residual = |m: f64, t: f64| -> [f64; 2] {
        let a = (4.0 * t - m * m).max(0.0).sqrt();
        [
            2.0 * a / t - shortening,
            m / gamma + 4.0 * (a / m).atan() - rotation,
        ]
    };
    // Start: most of the rotation is twist; the shortening fixes t for that m. `d² t² = 16 t - 4 m²`
    // has two roots: the smaller tension is the wide buckle the simulations find (the larger one a
    // buckle five times narrower); it is the solution quoted with the case.
    let mut m = gamma * (rotation - std::f64::consts::PI);
    let mut t = {
        let (qa, qb, qc) = (shortening * shortening, -16.0, 4.0 * m * m);
        (-qb - (qb * qb - 4.0 * qa * qc).max(0.0).sqrt()) / (2.0 * qa)
    };
    for _ in 0..100 {
        let r = residual(m, t);
        if r[0].abs() < 1e-14 * shortening && r[1].abs() < 1e-13 * rotation {
            return Ok((m, t));
        }
        let (em, et) = (1e-7 * m.abs().max(1.0), 1e-7 * t.abs().max(1.0));
        let rm = residual(m + em, t);
        let rt = residual(m, t + et);
        let jac = [
            [(rm[0] - r[0]) / em, (rt[0] - r[0]) / et],
            [(rm[1] - r[1]) / em, (rt[1] - r[1]) / et],
        ];
        let det = jac[0][0] * jac[1][1] - jac[0][1] * jac[1][0];
        if det == 0.0 || !det.is_finite() {
            break;
        }
        let dm = (jac[1][1] * r[0] - jac[0][1] * r[1]) / det;
        let dt = (-jac[1][0] * r[0] + jac[0][0] * r[1]) / det;
        m -= dm;
        t -= dt;
        if 4.0 * t <= m * m {
            t = 0.26 * m * m + 1.0;
        }
    }
    Err("no localized helix for these end conditions".into())
}

/// The analytic envelope ρ(s)/L at dimensionless arc length s from the buckle's centre.
pub fn helix_envelope(m: f64, t: f64, s: f64) -> f64 {
    let a = (4.0 * t - m * m).sqrt();
    a / t / (0.5 * a * s).cosh()
}

/// The helical-buckling run: PyElastica's case (L = 100, r = 0.35, mass 1 per length,
/// B = diag(1.345, 1.345, 0.789), shear and extension stiffness 1e5, drag 0.01), both ends clamped,
/// pushed together by `slack` and turned `turns` times against each other over `loading_time`, then
/// held until `end_time`; a bow of 1e-4 L breaks the symmetry.
#[derive(Clone, Debug)]
pub struct HelixResult {
    /// (s / L from the centre, ρ / L) per node.
    pub envelope: Vec<(f64, f64)>,
    /// Dimensionless end moment and tension of the analytic helix.
    pub moment: f64,
    pub tension: f64,
    /// Largest |ρ - ρ_analytic| over the analytic peak.
    pub largest_difference: f64,
    pub peak_ratio: f64,
    pub elastic_energy: f64,
    pub seconds: f64,
    pub stats: RadauStats,
}

pub fn helical_buckling(
    segments: usize,
    turns: f64,
    slack: f64,
    loading_time: f64,
    end_time: f64,
    tolerance: f64,
) -> Result<HelixResult, String> {
    let (length, radius) = (100.0, 0.35);
    let area = std::f64::consts::PI * radius * radius;
    let stiffness = Stiffness {
        shear_extension: Vec3::splat(1e5),
        bending_torsion: Vec3::new(1.345, 1.345, 0.789),
    };
    let mut rod =
        Rod::straight(segments, length, Vec3::ZERO, Vec3::Z, Vec3::Y, stiffness).expect("rod");
    rod.bow(1e-4 * length, Vec3::Y);
    let spin = turns * std::f64::consts::PI / loading_time;
    let push = 0.5 * slack / loading_time;
    let first = Boundary::new(
        &mut rod,
        End::First,
        Support::Clamped,
        EndMotion {
            velocity: Vec3::new(0.0, 0.0, push),
            angular_velocity: Vec3::new(0.0, 0.0, -spin),
            duration: loading_time,
        },
    );
    let last = Boundary::new(
        &mut rod,
        End::Last,
        Support::Clamped,
        EndMotion {
            velocity: Vec3::new(0.0, 0.0, -push),
            angular_velocity: Vec3::new(0.0, 0.0, spin),
            duration: loading_time,
        },
    );
    let model = RodModel {
        drag: 0.01,
        boundaries: vec![first, last],
        ..RodModel::new(Inertia::circular(&rod, radius, 1.0 / area))
    };
    let mut implicit = ImplicitRod::new(
        &rod,
        &RodMotion::rest(&rod),
        model,
        RadauOptions {
            relative_tolerance: tolerance,
            absolute_tolerance: 0.1 * tolerance,
            ..RadauOptions::default()
        },
    );
    let start = Instant::now();
    implicit
        .advance_to(loading_time)
        .map_err(|e| e.to_string())?;
    implicit.advance_to(end_time).map_err(|e| e.to_string())?;
    let seconds = start.elapsed().as_secs_f64();
    let (state, _) = implicit.state();
    let (moment, tension) = helix_loads(
        slack / length,
        turns * 2.0 * std::f64::consts::PI,
        0.789 / 1.345,
    )?;
    let h = length / segments as f64;
    let rho: Vec<f64> = state
        .nodes
        .iter()
        .map(|x| (x.x * x.x + x.y * x.y).sqrt() / length)
        .collect();
    // The buckle's centre: the centroid of ρ² along s (robust to the discrete peak).
    let weight: f64 = rho.iter().map(|r| r * r).sum();
    let centre = rho
        .iter()
        .enumerate()
        .map(|(j, r)| j as f64 * h * r * r)
        .sum::<f64>()
        / weight.max(1e-300);
    let peak = helix_envelope(moment, tension, 0.0);
    let envelope: Vec<(f64, f64)> = rho
        .iter()
        .enumerate()
        .map(|(j, r)| ((j as f64 * h - centre) / length, *r))
        .collect();
    let largest_difference = envelope
        .iter()
        .map(|(s, r)| (r - helix_envelope(moment, tension, *s)).abs())
        .fold(0.0, f64::max)
        / peak;
    let measured_peak = rho.iter().copied().fold(0.0, f64::max);
    Ok(HelixResult {
        envelope,
        moment,
        tension,
        largest_difference,
        peak_ratio: measured_peak / peak,
        elastic_energy: energy(&state),
        seconds,
        stats: implicit.stats(),
    })
}
