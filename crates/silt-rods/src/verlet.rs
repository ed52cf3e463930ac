//! Explicit position Verlet, the scheme of PyElastica (Gazzola et al. 2018), to compare step for step:
//!
//! ```text
//! φ ← φ + ½ dt v,          p ← p exp(½ dt Ω)      (half drift; body-frame rotation)
//! v ← v + dt v'(φ, p, v, Ω),  Ω ← Ω + dt Ω'(...)   (kick with the forces at the midpoint)
//! φ ← φ + ½ dt v,          p ← p exp(½ dt Ω)      (half drift)
//! ```
//!
//! `exp(θ) = (cos |θ|/2, sin(|θ|/2) θ/|θ|)`, and p is normalised after each drift (drift control).
//! Stable below the fastest wave's crossing time of a segment, about `h / sqrt(E/ρ)`.

use silt_core::Vec3;

use crate::dynamics::{accelerations, RodModel, RodMotion};
use crate::quaternion::{mul, normalized, Quat};
use crate::rod::Rod;

/// The unit quaternion of the rotation vector θ.
pub fn rotation_exp(theta: Vec3) -> Quat {
    let angle = theta.length();
    if angle < 1e-300 {
        return [1.0, 0.0, 0.0, 0.0];
    }
    let (s, c) = (0.5 * angle).sin_cos();
    let axis = theta / angle;
    [c, s * axis.x, s * axis.y, s * axis.z]
}

fn drift(rod: &mut Rod, motion: &RodMotion, dt: f64) {
    for (x, v) in rod.nodes.iter_mut().zip(&motion.velocities) {
        *x += dt * *v;
    }
    for (p, w) in rod.orientations.iter_mut().zip(&motion.angular_velocities) {
        *p = normalized(mul(*p, rotation_exp(dt * *w)));
    }
}

/// One position-Verlet step of `dt` from time `t`; held nodes and clamp frames follow their
/// supports.
pub fn position_verlet_step(
    rod: &mut Rod,
    motion: &mut RodMotion,
    model: &RodModel,
    t: f64,
    dt: f64,
) {
    drift(rod, motion, 0.5 * dt);
    model.apply_boundaries(rod, motion, t + 0.5 * dt);
    let (a, alpha) = accelerations(rod, motion, model);
    for (v, a) in motion.velocities.iter_mut().zip(&a) {
        *v += dt * *a;
    }
    for (w, a) in motion.angular_velocities.iter_mut().zip(&alpha) {
        *w += dt * *a;
    }
    drift(rod, motion, 0.5 * dt);
    model.apply_boundaries(rod, motion, t + dt);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dynamics::{angular_momentum, kinetic_energy, Inertia};
    use crate::potential::energy;
    use crate::rod::Stiffness;

    /// A soft rod (shear and extension stiff, bending soft), 20 segments.
    fn setup() -> (Rod, Inertia) {
        let (radius, density) = (0.05, 1000.0);
        let stiffness = Stiffness::circular(radius, 1e5, 4e4, 1.0);
        let rod = Rod::straight(20, 1.0, Vec3::ZERO, Vec3::X, Vec3::Y, stiffness).unwrap();
        let inertia = Inertia::circular(&rod, radius, density);
        (rod, inertia)
    }

    /// Without damping or loads the total energy of a vibrating rod oscillates within a small band and
    /// does not drift; a free, bent and spinning rod keeps its angular momentum.
    #[test]
    fn undamped_rods_conserve_energy_and_angular_momentum() {
        let (mut rod, inertia) = setup();
        let mut motion = RodMotion::rest(&rod);
        // A transverse velocity profile (the first mode's shape, roughly) and a spin about the axis.
        for (j, v) in motion.velocities.iter_mut().enumerate() {
            let s = j as f64 / 20.0;
            *v = Vec3::new(0.0, 0.5 * (std::f64::consts::PI * s).sin(), 0.1 * s);
        }
        for w in motion.angular_velocities.iter_mut() {
            *w = Vec3::new(0.0, 0.0, 2.0);
        }
        let total = |rod: &Rod, motion: &RodMotion| energy(rod) + kinetic_energy(motion, &inertia);
        let e0 = total(&rod, &motion);
        let l0 = angular_momentum(&rod, &motion, &inertia);
        // Axial wave speed sqrt(E/ρ) = 10, h = 0.05: dt = 1e-4 is a tenth of the crossing time.
        let dt = 1e-4;
        let mut band: f64 = 0.0;
        let mut first_half: f64 = 0.0;
        let steps = 20_000;
        let model = RodModel::new(inertia.clone());
        for step in 0..steps {
            position_verlet_step(&mut rod, &mut motion, &model, step as f64 * dt, dt);
            let error = (total(&rod, &motion) / e0 - 1.0).abs();
            band = band.max(error);
            if step < steps / 2 {
                first_half = first_half.max(error);
            }
        }
        let l = angular_momentum(&rod, &motion, &inertia);
        eprintln!(
            "energy band {band:e} (first half {first_half:e}); angular momentum {:e}",
            (l - l0).length() / l0.length()
        );
        assert!(band < 1e-3, "energy band {band}");
        assert!(
            band < 1.5 * first_half.max(1e-12),
            "no drift: {band} vs {first_half}"
        );
        assert!((l - l0).length() < 1e-6 * l0.length(), "{l} vs {l0}");
    }

    #[test]
    fn rotation_exp_is_the_axis_angle_quaternion() {
        let q = rotation_exp(Vec3::new(0.0, 0.0, 1.0));
        assert!((q[0] - 0.5f64.cos()).abs() < 1e-15 && (q[3] - 0.5f64.sin()).abs() < 1e-15);
        assert_eq!(rotation_exp(Vec3::ZERO), [1.0, 0.0, 0.0, 0.0]);
    }
}
