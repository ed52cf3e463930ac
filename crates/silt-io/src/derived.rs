//! Derived quantities of a scene, printed by `silt check`: contact time, overlaps, Stokes numbers, cost.

use crate::scene::Scene;
use silt_dem::contact::NormalLaw;
use silt_dem::system::DemSystem;
use std::fmt::Write;

/// Estimated contact duration and how it was obtained.
#[derive(Clone, Debug)]
pub struct ContactTimeEstimate {
    pub contact_time: f64,
    pub how: String,
}

/// Largest impact speed to expect: the fastest initial particle, or a free fall across the domain.
pub fn characteristic_speed(scene: &Scene, system: &DemSystem) -> f64 {
    let g = scene.gravity();
    let fall = if g.length() > 0.0 {
        let height = system.domain.length().dot(g.normalize()).abs();
        (2.0 * g.length() * height).sqrt()
    } else {
        0.0
    };
    let fastest = system
        .particles
        .velocity
        .iter()
        .map(|v| v.length())
        .fold(0.0, f64::max);
    let wall_speed = system
        .walls
        .iter()
        .map(|w| w.velocity.length())
        .fold(0.0, f64::max);
    fall.max(fastest + wall_speed).max(f64::MIN_POSITIVE)
}

/// Lightest mass and smallest radius among the free particles.
fn smallest_free(system: &DemSystem) -> (f64, f64) {
    let p = &system.particles;
    let mut m = f64::INFINITY;
    let mut r = f64::INFINITY;
    for i in 0..p.len() {
        if !p.fixed[i] {
            m = m.min(p.mass[i]);
            r = r.min(p.radius[i]);
        }
    }
    if m.is_finite() {
        (m, r)
    } else {
        (
            p.mass.iter().copied().fold(f64::INFINITY, f64::min),
            p.max_radius(),
        )
    }
}

/// Undamped Hertz collision m x'' = -K x^(3/2) at speed v: largest overlap (5 m v^2 / (4 K))^(2/5) and
/// duration 2.94 overlap / v.
fn hertz_collision(mass: f64, k: f64, speed: f64) -> (f64, f64) {
    let overlap = (1.25 * mass * speed * speed / k).powf(0.4);
    (overlap, 2.94 * overlap / speed)
}

/// Contact duration: T_c for the adaptive and linear laws, a Hertz estimate for the lightest pair otherwise.
pub fn contact_time_estimate(scene: &Scene, system: &DemSystem) -> ContactTimeEstimate {
    match system.model.normal {
        NormalLaw::Actm | NormalLaw::Linear => ContactTimeEstimate {
            contact_time: system.model.collision_time,
            how: format!(
                "T_c = contact.collision_steps x dt = {} x {:e}",
                scene.contact.collision_steps, scene.simulation.dt
            ),
        },
        NormalLaw::Hertz(c) => {
            let (m, r) = smallest_free(system);
            let v = characteristic_speed(scene, system);
            // Two of the lightest spheres: m_eff = m/2, R_eff = r/2; F = k_n sqrt(R_eff) delta^(3/2).
            let (_, t) = hertz_collision(0.5 * m, c.k_n * (0.5 * r).sqrt(), v);
            ContactTimeEstimate {
                contact_time: t,
                how: format!("Hertz estimate for the lightest pair at {v:.3e}"),
            }
        }
    }
}

/// Largest overlap over radius of the lightest sphere hitting a wall at speed v.
pub fn expected_overlap(system: &DemSystem, speed: f64) -> f64 {
    let (m, r) = smallest_free(system);
    let overlap = match system.model.normal {
        NormalLaw::Actm => {
            // k = m / sqrt(v t*^5) gives (5/4)^(2/5) v t* (undamped estimate).
            let t_star = system.model.coefficients(0, 0).actm.t_star;
            1.25f64.powf(0.4) * speed * t_star
        }
        NormalLaw::Linear => speed * system.model.collision_time / std::f64::consts::PI,
        NormalLaw::Hertz(c) => hertz_collision(m, c.k_n * r.sqrt(), speed).0,
    };
    overlap / r
}

/// The report of `silt check`.
pub fn check_report(scene: &Scene, system: &DemSystem) -> String {
    let p = &system.particles;
    let n = p.len();
    let fixed = p.fixed.iter().filter(|&&f| f).count();
    let dt = scene.simulation.dt;
    let steps = (scene.simulation.end_time / dt).round() as u64;
    let diameters: Vec<f64> = p.radius.iter().map(|r| 2.0 * r).collect();
    let d_min = diameters.iter().copied().fold(f64::INFINITY, f64::min);
    let d_max = diameters.iter().copied().fold(0.0, f64::max);
    let d_mean = diameters.iter().sum::<f64>() / n as f64;
    let mut out = String::new();
    let _ = writeln!(out, "scene            {}", scene.source.display());
    let _ = writeln!(
        out,
        "particles        {n} ({} free, {fixed} fixed), {} materials, {} walls",
        n - fixed,
        system.materials.len(),
        system.walls.len()
    );
    let _ = writeln!(
        out,
        "diameters        min {d_min:.4e}, mean {d_mean:.4e}, max {d_max:.4e}"
    );
    let _ = writeln!(
        out,
        "domain           {} .. {} periodic {:?}",
        system.domain.min, system.domain.max, system.domain.periodic
    );
    let solid: f64 = p
        .radius
        .iter()
        .map(|r| 4.0 / 3.0 * std::f64::consts::PI * r.powi(3))
        .sum();
    let l = system.domain.length();
    let _ = writeln!(
        out,
        "solid fraction   {:.4} of the domain volume",
        solid / (l.x * l.y * l.z)
    );
    let _ = writeln!(
        out,
        "time             dt {dt:e}, end {:e}, {steps} steps, integrator {:?} ({} force evaluation(s) per step)",
        scene.simulation.end_time,
        system.integrator,
        system.integrator.evaluations_per_step()
    );
    let estimate = contact_time_estimate(scene, system);
    let substep = dt * system.integrator.smallest_substep_fraction();
    let resolution = estimate.contact_time / substep;
    let _ = writeln!(
        out,
        "contact          {:?} + {:?}; contact time {:.3e} ({}), resolved by {resolution:.1} (sub)steps{}",
        system.model.normal,
        system.model.tangential,
        estimate.contact_time,
        estimate.how,
        if resolution < 20.0 { "  [warning: fewer than 20]" } else { "" }
    );
    let v = characteristic_speed(scene, system);
    let _ = writeln!(
        out,
        "impact speed     up to {v:.3e} (free fall across the domain or fastest initial particle)"
    );
    let _ = writeln!(
        out,
        "overlap          about {:.3e} R at that speed for the lightest sphere on a wall",
        expected_overlap(system, v)
    );
    let actm = matches!(system.model.normal, NormalLaw::Actm);
    match system.model.enduring {
        silt_dem::contact::EnduringContact::MinimumSpeed(u) => {
            let _ = write!(out, "Stokes number    dry run (no fluid): St is infinite");
            if actm {
                let _ = write!(
                    out,
                    "; enduring-contact floor u_in,crit = {u:e}, resting overlap bound eps = {:e} R per particle weight",
                    system.model.overlap_bound
                );
            }
            let _ = writeln!(out);
        }
        silt_dem::contact::EnduringContact::Stokes {
            st_crit,
            fluid_density,
            kinematic_viscosity,
        } => {
            let density = system.materials[p.material[0]].density;
            let st = |d: f64| density * v * d / (9.0 * fluid_density * kinematic_viscosity);
            let _ = writeln!(
                out,
                "Stokes number    St = rho_p u D / (9 rho_f nu_f) at the impact speed: {:.3e} (smallest) .. {:.3e} (largest); St_crit = {st_crit}",
                st(d_min),
                st(d_max)
            );
        }
    }
    // Memory: per-particle arrays and about eight list pairs per particle with a 10% skin.
    let per_particle = 9 * 24 + 5 * 8 + 3 * 2 * 24;
    let per_pair = std::mem::size_of::<silt_dem::contact::ContactState>() + 96 + 12;
    let bytes = n * per_particle
        + 8 * n * per_pair
        + system.wall_states.len() * std::mem::size_of::<silt_dem::contact::ContactState>();
    let _ = writeln!(
        out,
        "memory           about {:.1} MiB",
        bytes as f64 / (1024.0 * 1024.0)
    );
    if let Some(interval) = scene.output.interval {
        let frames = (scene.simulation.end_time / interval).floor() as u64 + 1;
        let frame_bytes = n as f64 * 12.0 * 8.0 * 4.0 / 3.0;
        let _ = writeln!(
            out,
            "output           {frames} frames every {interval:e}, about {:.1} MiB of VTK",
            frames as f64 * frame_bytes / (1024.0 * 1024.0)
        );
    }
    out
}
