//! Derived quantities of a scene, printed by `silt check`: contact time, overlaps, Stokes numbers, cost.

use crate::scene::Scene;
use silt_dem::contact::{EnduringContact, NormalLaw};
use silt_dem::system::DemSystem;
use std::fmt::Write;

/// Estimated contact duration and how it was obtained.
#[derive(Clone, Debug)]
pub struct ContactTimeEstimate {
    pub contact_time: f64,
    pub how: String,
}

/// Largest impact speed to expect: the fastest initial particle (plus the fastest wall), or a fall across
/// the domain. In a fluid (wet runs, enduring contact by Stokes number) the fall is that of the sphere
/// with the largest terminal velocity under its buoyant weight, capped at that terminal velocity.
pub fn characteristic_speed(scene: &Scene, system: &DemSystem) -> f64 {
    characteristic_speed_and_source(scene, system).0
}

/// The speed of [`characteristic_speed`] and what sets it.
pub fn characteristic_speed_and_source(scene: &Scene, system: &DemSystem) -> (f64, &'static str) {
    let g = scene.gravity();
    let height = if g.length() > 0.0 {
        system.domain.length().dot(g.normalize()).abs()
    } else {
        0.0
    };
    let (fall, fall_source) = match system.model.enduring {
        EnduringContact::Stokes {
            fluid_density,
            kinematic_viscosity,
            ..
        } => {
            let p = &system.particles;
            let fastest_settling = (0..p.len())
                .filter(|&i| !p.fixed[i])
                .map(|i| {
                    let density = system.materials[p.material[i]].density;
                    settling_speed(
                        2.0 * p.radius[i],
                        density,
                        fluid_density,
                        kinematic_viscosity,
                        g.length(),
                        height,
                    )
                })
                .fold(0.0, f64::max);
            (
                fastest_settling,
                "settling across the domain, at most the Schiller-Naumann terminal velocity",
            )
        }
        EnduringContact::MinimumSpeed(_) => (
            (2.0 * g.length() * height).sqrt(),
            "free fall across the domain",
        ),
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
    if fall >= fastest + wall_speed {
        (fall.max(f64::MIN_POSITIVE), fall_source)
    } else {
        (fastest + wall_speed, "fastest initial particle and wall")
    }
}

/// The speed a sphere of diameter `d` and density `density` reaches falling `height` from rest in a fluid
/// of density `fluid_density` and kinematic viscosity `nu` under gravity `g`: the free fall under its
/// buoyant weight, sqrt(2 g' height) with g' = g (1 - rho_f / rho_p), capped at the terminal velocity u_t
/// where the Schiller–Naumann drag 3 pi mu d u (1 + 0.15 Re^0.687) balances the buoyant weight (0 for a
/// sphere that does not sink).
pub fn settling_speed(
    d: f64,
    density: f64,
    fluid_density: f64,
    nu: f64,
    g: f64,
    height: f64,
) -> f64 {
    let reduced_gravity = g * (1.0 - fluid_density / density);
    if reduced_gravity <= 0.0 || nu <= 0.0 || d <= 0.0 {
        return 0.0;
    }
    let free_fall = (2.0 * reduced_gravity * height).sqrt();
    let volume = std::f64::consts::PI * d * d * d / 6.0;
    let buoyant_weight = (density - fluid_density) * volume * g;
    let drag = |u: f64| {
        let re = u * d / nu;
        3.0 * std::f64::consts::PI * fluid_density * nu * d * u * (1.0 + 0.15 * re.powf(0.687))
    };
    if drag(free_fall) <= buoyant_weight {
        return free_fall;
    }
    // The drag grows with u: bisect between rest and the free fall.
    let (mut low, mut high) = (0.0, free_fall);
    for _ in 0..100 {
        let middle = 0.5 * (low + high);
        if drag(middle) < buoyant_weight {
            low = middle;
        } else {
            high = middle;
        }
    }
    high
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
    let (v, source) = characteristic_speed_and_source(scene, system);
    let _ = writeln!(out, "impact speed     up to {v:.3e} ({source})");
    let _ = writeln!(
        out,
        "overlap          about {:.3e} R at that speed for the lightest sphere on a wall",
        expected_overlap(system, v)
    );
    let actm = matches!(system.model.normal, NormalLaw::Actm);
    match system.model.enduring {
        EnduringContact::MinimumSpeed(u) => {
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
        EnduringContact::Stokes {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The settling speed: Stokes's terminal velocity at small Re, ten Cate's u_inf (E3, E4; from a
    /// different correlation) within 5 %, the free fall when the fall is short, 0 for a floating sphere.
    #[test]
    fn settling_speed_limits() {
        let (g, tall) = (9.81, 10.0);
        // Stokes: a 20 um glass sphere in water (Re = 0.007, Schiller-Naumann 0.5 % above Stokes's drag).
        let (d, rho_p, rho_f, nu) = (20e-6, 2500.0, 1000.0, 1e-6);
        let stokes = (rho_p - rho_f) * g * d * d / (18.0 * rho_f * nu);
        let u = settling_speed(d, rho_p, rho_f, nu, g, tall);
        assert!((u / stokes - 1.0).abs() < 0.01, "{u} vs Stokes {stokes}");
        // ten Cate et al. (2002): E3 0.091 m/s, E4 0.128 m/s.
        for (rho_f, mu, u_inf) in [(962.0, 0.113, 0.091), (960.0, 0.058, 0.128)] {
            let u = settling_speed(0.015, 1120.0, rho_f, mu / rho_f, g, tall);
            assert!((u / u_inf - 1.0).abs() < 0.05, "{u} vs {u_inf}");
        }
        // A fall of 1 mm ends before the terminal velocity.
        let short = settling_speed(0.015, 1120.0, 962.0, 0.113 / 962.0, g, 1e-3);
        let free_fall = (2.0 * g * (1.0 - 962.0 / 1120.0) * 1e-3).sqrt();
        assert!((short - free_fall).abs() < 1e-12);
        assert_eq!(settling_speed(0.015, 900.0, 962.0, 1e-4, g, tall), 0.0);
    }
}
