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
    /// Force on p along -n: 6 pi rho_f nu_f R_eff^2 g_cp.n / max(zeta_n, zeta_min) (eq. 9).
    #[inline]
    pub fn force_magnitude(
        &self,
        gap: f64,
        normal_speed: f64,
        effective_radius: f64,
        smaller_radius: f64,
    ) -> f64 {
        let zeta_min = self.roughness_ratio * smaller_radius;
        6.0 * std::f64::consts::PI
            * self.fluid_density
            * self.kinematic_viscosity
            * effective_radius
            * effective_radius
            * normal_speed
            / gap.max(zeta_min)
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
        let f = l.force_magnitude(0.1, 0.01, 1.0, 1.0);
        assert!((f - 6.0 * PI * 1e-3 * 0.01 / 0.1).abs() < 1e-15);
        // Below zeta_min the force is held constant.
        assert_eq!(
            l.force_magnitude(1e-4, 0.01, 1.0, 1.0),
            l.force_magnitude(3e-3, 0.01, 1.0, 1.0)
        );
        // Separating surfaces are pulled back (force sign follows the velocity).
        assert!(l.force_magnitude(0.1, -0.01, 1.0, 1.0) < 0.0);
        assert!(l.acts_at(0.2) && !l.acts_at(0.2000001) && !l.acts_at(0.0));
    }
}
