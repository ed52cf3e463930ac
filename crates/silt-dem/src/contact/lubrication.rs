//! Lubrication force between nearly touching surfaces (Cox & Brenner 1967; Biegert et al. 2017, eq. 9).

use serde::{Deserialize, Serialize};

/// Parameters of the lubrication correction; active for 0 < zeta_n <= range.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Lubrication {
    /// Fluid density rho_f.
    pub fluid_density: f64,
    /// Fluid kinematic viscosity nu_f.
    pub kinematic_viscosity: f64,
    /// Largest gap at which the force acts (2h on the fluid grid).
    pub range: f64,
    /// Roughness zeta_min as a fraction of the smaller radius (3e-3 in the seed).
    pub roughness_ratio: f64,
}

impl Lubrication {
    /// Force on p along -n: 6 pi rho_f nu_f R_eff^2 g_cp.n / max(zeta_n, zeta_min) (eq. 9), limited to
    /// what the sub-step can integrate: with c the damping coefficient (the force over g_cp.n) and
    /// x = c tau / m_eff (sub-step tau, effective mass m_eff), the force is c g_cp.n / sqrt(1 + x^2).
    ///
    /// Why: the force is integrated explicitly, and where x exceeds about 1 (a viscous fluid: the seed's
    /// sheared bed at Ga = 0.4 has x ~ 10 at zeta_min with 10 sub-steps per stage) it would reverse the
    /// approach within a sub-step and grow without bound. Limited, it stops the approach in about one
    /// sub-step, as the exact damping does in less. Where the sub-step resolves the lubrication time
    /// m_eff / c (x << 1) it is eq. 9 to second order: x = 0.024 (a factor 1 - 3e-4) for a 1 mm glass
    /// sphere at zeta_min from a wall in water with 10 us sub-steps.
    #[inline]
    pub fn force_magnitude(
        &self,
        gap: f64,
        normal_speed: f64,
        effective_radius: f64,
        smaller_radius: f64,
        effective_mass: f64,
        substep: f64,
    ) -> f64 {
        let zeta_min = self.roughness_ratio * smaller_radius;
        let damping = 6.0
            * std::f64::consts::PI
            * self.fluid_density
            * self.kinematic_viscosity
            * effective_radius
            * effective_radius
            / gap.max(zeta_min);
        let x = damping * substep / effective_mass;
        damping * normal_speed / (1.0 + x * x).sqrt()
    }

    /// True when the gap lies in the lubrication band 0 < zeta_n <= range (eq. 5).
    #[inline]
    pub fn acts_at(&self, gap: f64) -> bool {
        gap > 0.0 && gap <= self.range
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::f64::consts::PI;

    fn lub() -> Lubrication {
        Lubrication {
            fluid_density: 1000.0,
            kinematic_viscosity: 1e-6,
            range: 0.2,
            roughness_ratio: 3e-3,
        }
    }

    #[test]
    fn reynolds_limit_and_saturation() {
        let l = lub();
        // Sphere (R = 1) approaching a wall (R_eff = R) at speed 0.01 with gap 0.1.
        // A heavy sphere and a short sub-step: eq. 9 as it stands.
        let f = l.force_magnitude(0.1, 0.01, 1.0, 1.0, 1e6, 1e-6);
        assert!((f - 6.0 * PI * 1e-3 * 0.01 / 0.1).abs() < 1e-15);
        // Below zeta_min the force is held constant.
        assert_eq!(
            l.force_magnitude(1e-4, 0.01, 1.0, 1.0, 1.0, 1e-3),
            l.force_magnitude(3e-3, 0.01, 1.0, 1.0, 1.0, 1e-3)
        );
        // Separating surfaces are pulled back (force sign follows the velocity).
        assert!(l.force_magnitude(0.1, -0.01, 1.0, 1.0, 1.0, 1e-3) < 0.0);
        assert!(l.acts_at(0.2) && !l.acts_at(0.2000001) && !l.acts_at(0.0));
    }

    /// Where the sub-step does not resolve the lubrication time m_eff / c, the force is limited to
    /// about what stops the approach in one sub-step, m_eff v / tau, and the explicit update of the
    /// relative speed contracts instead of growing: the seed's sheared bed (Ga = 0.4) at zeta_min.
    #[test]
    fn a_stiff_lubrication_stops_the_approach_instead_of_reversing_it() {
        // Scaled units of the seed's Table 3: R = 0.0444, rho_f = 1000, nu = 0.219, rho_p = 2100.
        let l = Lubrication {
            fluid_density: 1000.0,
            kinematic_viscosity: 0.219,
            range: 0.0222,
            roughness_ratio: 3e-3,
        };
        let radius: f64 = 0.0444;
        let mass = 2100.0 * 4.0 / 3.0 * PI * radius.powi(3);
        let (m_eff, r_eff) = (0.5 * mass, 0.5 * radius);
        let zeta_min = 3e-3 * radius;
        let damping = 6.0 * PI * 1000.0 * 0.219 * r_eff * r_eff / zeta_min;
        for substep in [1e-6, 1e-5, 1e-4, 1e-3] {
            let x = damping * substep / m_eff;
            let force = l.force_magnitude(zeta_min, 1.0, r_eff, radius, m_eff, substep);
            // Forward Euler on the relative speed: v' = v - tau F / m_eff.
            let next = 1.0 - substep * force / m_eff;
            assert!(
                next.abs() < 1.0,
                "x = {x}: the relative speed grows to {next}"
            );
            if x < 1e-2 {
                assert!(
                    (force / damping - 1.0).abs() < x * x,
                    "x = {x}: eq. 9 changed"
                );
            }
        }
        // The unlimited force reverses the approach with a tenfold speed at x ~ 10.
        let x = damping * 1e-3 / m_eff;
        assert!(x > 10.0, "x = {x}");
    }
}
