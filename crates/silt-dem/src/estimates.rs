//! What a granular system's collisions will be like, estimated before it runs (for `silt check` and
//! the scene checks): the impact speed to expect, the contact duration, the largest overlap, a
//! sphere's settling speed in a fluid.

use crate::contact::{EnduringContact, NormalLaw};
use crate::system::DemSystem;

/// Largest impact speed to expect and what sets it: the fastest initial particle (plus the fastest
/// wall), or a fall across the domain. In a fluid (wet runs, enduring contact by Stokes number) the
/// fall is that of the sphere with the largest terminal velocity under its buoyant weight, capped at
/// that terminal velocity.
pub fn impact_speed(system: &DemSystem) -> (f64, &'static str) {
    let g = system.gravity;
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
pub fn smallest_free(system: &DemSystem) -> (f64, f64) {
    let p = &system.particles;
    let mut m = f64::INFINITY;
    let mut r = f64::INFINITY;
    for i in (0..p.len()).filter(|&i| !p.fixed[i]) {
        m = m.min(p.mass[i]);
        r = r.min(p.radius[i]);
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
pub fn hertz_collision(mass: f64, k: f64, speed: f64) -> (f64, f64) {
    let overlap = (1.25 * mass * speed * speed / k).powf(0.4);
    (overlap, 2.94 * overlap / speed)
}

/// Contact duration: T_c for the adaptive and linear laws, for the Hertz law the duration of a collision
/// of two of the lightest spheres at the impact speed ([`impact_speed`]).
pub fn contact_time(system: &DemSystem) -> f64 {
    match system.model.normal {
        NormalLaw::Actm | NormalLaw::Linear => system.model.collision_time,
        NormalLaw::Hertz(c) => {
            let (m, r) = smallest_free(system);
            let (v, _) = impact_speed(system);
            // Two of the lightest spheres: m_eff = m/2, R_eff = r/2; F = k_n sqrt(R_eff) delta^(3/2).
            hertz_collision(0.5 * m, c.k_n * (0.5 * r).sqrt(), v).1
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
