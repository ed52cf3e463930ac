//! Antman's inner dissipation (Kelvin–Voigt type, notes "Model"):
//!
//! ```text
//! D = Σ_segments (h/2) Γ̇ᵀ C_Gᵛ Γ̇ + Σ_interior nodes (h̄/2) K̇ᵀ C_Kᵛ K̇
//! C_Gᵛ = diag(η_S A, η_S A, η_E A),   C_Kᵛ = diag(η_E I_1, η_E I_2, η_S J)
//! ```
//!
//! The viscous generalised forces are `-∂D/∂(rates) = -Bᵀ (h C_Gᵛ Γ̇, h̄ C_Kᵛ K̇)`, through the same
//! force map as the elastic ones ([`crate::potential::generalized_forces`]). They vanish for rigid
//! motions (objective strain rates) and their power is `-2D <= 0`.

use silt_core::Vec3;

use crate::potential::{generalized_forces, Gradient};
use crate::quaternion::Quat;
use crate::rod::Rod;
use crate::strains::{strain_rates, strain_rates_into};

/// Diagonal viscosity matrices in the body frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Damping {
    /// `C_Gᵛ`.
    pub shear_extension: Vec3,
    /// `C_Kᵛ`.
    pub bending_torsion: Vec3,
}

impl Damping {
    /// A circular cross-section of radius r with extensional viscosity η_E and shear viscosity η_S.
    pub fn circular(radius: f64, extensional: f64, shear: f64) -> Self {
        let area = std::f64::consts::PI * radius * radius;
        let inertia = 0.25 * std::f64::consts::PI * radius.powi(4);
        Damping {
            shear_extension: Vec3::new(shear * area, shear * area, extensional * area),
            bending_torsion: Vec3::new(
                extensional * inertia,
                extensional * inertia,
                shear * 2.0 * inertia,
            ),
        }
    }

    /// The dissipation function D at the given rates.
    pub fn dissipation(&self, rod: &Rod, velocities: &[Vec3], rates: &[Quat]) -> f64 {
        let (gamma_rate, curvature_rate) = strain_rates(rod, velocities, rates);
        let segments: f64 = gamma_rate
            .iter()
            .zip(&rod.lengths)
            .map(|(g, h)| 0.5 * h * g.dot(self.shear_extension * *g))
            .sum();
        let nodes: f64 = curvature_rate
            .iter()
            .enumerate()
            .map(|(k, r)| 0.5 * rod.node_length(k + 1) * r.dot(self.bending_torsion * *r))
            .sum();
        segments + nodes
    }

    /// The viscous stresses `C_Gᵛ Γ̇` and moments `C_Kᵛ K̇` (their inner loads, through
    /// [`crate::potential::add_inner_loads`], are the viscous forces).
    pub fn viscous_stresses(
        &self,
        rod: &Rod,
        velocities: &[Vec3],
        rates: &[Quat],
        stresses: &mut [Vec3],
        moments: &mut [Vec3],
    ) {
        strain_rates_into(rod, velocities, rates, stresses, moments);
        for g in stresses.iter_mut() {
            *g *= self.shear_extension;
        }
        for k in moments.iter_mut() {
            *k *= self.bending_torsion;
        }
    }

    /// The viscous generalised forces `-∂D/∂(φ̇, ṗ)`.
    pub fn forces(&self, rod: &Rod, velocities: &[Vec3], rates: &[Quat]) -> Gradient {
        let (gamma_rate, curvature_rate) = strain_rates(rod, velocities, rates);
        let stresses: Vec<Vec3> = gamma_rate
            .iter()
            .map(|g| -(self.shear_extension * *g))
            .collect();
        let moments: Vec<Vec3> = curvature_rate
            .iter()
            .map(|r| -(self.bending_torsion * *r))
            .collect();
        generalized_forces(rod, &stresses, &moments)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::quaternion::{dot, mul, pure};
    use crate::rod::{rotation, Stiffness};

    fn bent_rod() -> Rod {
        let stiffness = Stiffness::circular(0.1, 1.0, 0.4, 1.0);
        let mut rod = Rod::straight(5, 2.0, Vec3::ZERO, Vec3::X, Vec3::Y, stiffness).unwrap();
        for (j, p) in rod.orientations.iter_mut().enumerate() {
            *p = mul(rotation(Vec3::new(0.2, 1.0, 0.3), 0.15 * j as f64), *p);
        }
        for (j, x) in rod.nodes.iter_mut().enumerate() {
            *x += Vec3::new(0.0, 0.05 * (j * j) as f64, -0.02 * j as f64);
        }
        rod
    }

    /// Rigid motions (`V = U + ω × φ`, `ṗ = ½ ω p`) dissipate nothing; other rates dissipate, and the
    /// viscous forces' power is `-2D`.
    #[test]
    fn rigid_motions_are_free_and_the_power_is_minus_twice_d() {
        let rod = bent_rod();
        let damping = Damping::circular(0.1, 3.0, 2.0);
        let (u, omega) = (Vec3::new(0.3, -1.0, 0.5), Vec3::new(0.7, 0.2, -1.1));
        let velocities: Vec<Vec3> = rod.nodes.iter().map(|x| u + omega.cross(*x)).collect();
        let rates: Vec<Quat> = rod
            .orientations
            .iter()
            .map(|p| mul(pure(omega), *p).map(|c| 0.5 * c))
            .collect();
        assert!(damping.dissipation(&rod, &velocities, &rates) < 1e-28);
        let f = damping.forces(&rod, &velocities, &rates);
        assert!(f.nodes.iter().all(|v| v.length() < 1e-14));

        let velocities: Vec<Vec3> = (0..rod.nodes.len())
            .map(|j| Vec3::new(0.1 * j as f64, (j as f64).sin(), -0.2))
            .collect();
        let rates: Vec<Quat> = (0..rod.segments())
            .map(|j| [0.01 * j as f64, 0.3, -0.1 * j as f64, 0.05])
            .collect();
        let d = damping.dissipation(&rod, &velocities, &rates);
        assert!(d > 0.0);
        let f = damping.forces(&rod, &velocities, &rates);
        let power: f64 = f
            .nodes
            .iter()
            .zip(&velocities)
            .map(|(a, b)| a.dot(*b))
            .sum::<f64>()
            + f.orientations
                .iter()
                .zip(&rates)
                .map(|(a, b)| dot(*a, *b))
                .sum::<f64>();
        assert!(
            (power + 2.0 * d).abs() < 1e-12 * d,
            "{power} vs {}",
            -2.0 * d
        );
    }
}
