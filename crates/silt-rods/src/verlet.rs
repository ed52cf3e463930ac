//! Explicit position Verlet, the scheme of PyElastica (Gazzola et al. 2018), to compare step for step:
//!
//! ```text
//! φ ← φ + ½ dt v,          p ← p exp(½ dt Ω)      (half drift; body-frame rotation)
//! v ← v + dt v'(φ, p, v̄, Ω̄),  Ω ← Ω + dt Ω'(...)  (kick with the forces at the midpoint; the
//!                                                  gyroscopic couple and drag at the mean velocity)
//! φ ← φ + ½ dt v,          p ← p exp(½ dt Ω)      (half drift)
//! ```
//!
//! `exp(θ) = (cos |θ|/2, sin(|θ|/2) θ/|θ|)`, and p is normalised after each drift (drift control).
//! Stable below the fastest wave's crossing time of a segment, about `h / sqrt(E/ρ)`.

use silt_core::Vec3;

use crate::dynamics::{loads_into, RodModel, RodMotion, Workspace};
use crate::quaternion::{mul, normalized, Quat};
use crate::rod::Rod;

/// The unit quaternion of the rotation vector θ: `(cos |θ|/2, sin(|θ|/2) θ/|θ|)`. Below
/// |θ|/2 = 0.1 the Taylor series to x⁸ (remainder under 3e-17) replaces the sine and cosine.
pub fn rotation_exp(theta: Vec3) -> Quat {
    let half_squared = 0.25 * theta.length_squared();
    if half_squared < 0.01 {
        let x2 = half_squared;
        // Horner with the coefficients 1/(2k)! and 1/(2k+1)! (multiplications only).
        const COS: [f64; 4] = [1.0 / 2.0, 1.0 / 24.0, 1.0 / 720.0, 1.0 / 40320.0];
        const SINC: [f64; 4] = [1.0 / 6.0, 1.0 / 120.0, 1.0 / 5040.0, 1.0 / 362880.0];
        let cos = 1.0 - x2 * (COS[0] - x2 * (COS[1] - x2 * (COS[2] - x2 * COS[3])));
        let sinc = 1.0 - x2 * (SINC[0] - x2 * (SINC[1] - x2 * (SINC[2] - x2 * SINC[3])));
        // sin(x)/x times ½: the half angle's sine over |θ|.
        let s = 0.5 * sinc;
        return [cos, s * theta.x, s * theta.y, s * theta.z];
    }
    let angle = theta.length();
    let (s, c) = (0.5 * angle).sin_cos();
    let axis = theta / angle;
    [c, s * axis.x, s * axis.y, s * axis.z]
}

/// `p / |p|` for `|p|` within round-off of 1: one Newton step of the inverse square root from 1,
/// `p (3 - |p|²) / 2`, exact to O(ε²) for `|p|² = 1 + ε` (and free of the square root and division
/// that dominated the drift); the exact formula otherwise.
fn renormalized(p: Quat) -> Quat {
    let norm_squared = crate::quaternion::norm_squared(p);
    if (norm_squared - 1.0).abs() < 1e-6 {
        let scale = 0.5 * (3.0 - norm_squared);
        p.map(|c| c * scale)
    } else {
        normalized(p)
    }
}

/// `φ += dt v`, `p ← p exp(dt Ω)`, renormalising p (drift control) when `normalize`.
fn drift(rod: &mut Rod, motion: &RodMotion, dt: f64, normalize: bool) {
    for (x, v) in rod.nodes.iter_mut().zip(&motion.velocities) {
        *x += dt * *v;
    }
    for (p, w) in rod.orientations.iter_mut().zip(&motion.angular_velocities) {
        let turned = mul(*p, rotation_exp(dt * *w));
        *p = if normalize {
            renormalized(turned)
        } else {
            turned
        };
    }
}

/// The kick of a step: velocities by `dt` under the loads at the midpoint configuration. The
/// velocity-dependent terms are taken at the mean of the old and new velocities (the implicit
/// midpoint rule): the drag exactly, the gyroscopic couple `Ω × J Ω` by a fixed-point iteration
/// per segment. PyElastica takes them at the old velocities, which makes the scheme first order in
/// them, not reversible, and lets the energy and angular momentum of a free spinning rod drift
/// (measured in `silt validate rod-conservation`); the midpoint kick keeps the scheme symmetric and
/// second order at the cost of a few products per segment. Inner (Kelvin–Voigt) damping stays at
/// the old velocities.
fn kick(rod: &Rod, motion: &mut RodMotion, model: &RodModel, work: &mut Workspace, dt: f64) {
    loads_into(rod, motion, model, work);
    let half_drag = 0.5 * model.drag * dt;
    let translation = 1.0 / (1.0 + half_drag);
    for ((v, f), inverse_mass) in motion
        .velocities
        .iter_mut()
        .zip(work.forces())
        .zip(work.inverse_masses())
    {
        *v = (*v * (1.0 - half_drag) + dt * *f * *inverse_mass) * translation;
    }
    for (s, w) in motion.angular_velocities.iter_mut().enumerate() {
        let j = model.inertia.segment_inertias[s];
        let inverse = work.inverse_inertias()[s];
        let torque = work.torques()[s];
        *w = if (j.x - j.y).abs() <= 1e-12 * j.x {
            axisymmetric_midpoint(*w, torque, j, inverse, model.drag, dt)
        } else {
            iterated_midpoint(*w, torque, j, inverse, model.drag, dt)
        };
    }
    // Held nodes get their positions and velocities back from the supports after the drift.
}

/// The midpoint kick of Euler's equations `J Ω' = τ - Ω × J Ω - ν J Ω` for an axisymmetric
/// section (J_1 = J_2 = I): Ω_3 is untouched by the gyroscopic couple, and (Ω_1, Ω_2) turn at the
/// rate `(J_3 - I) Ω_3 / I`, so the implicit midpoint rule is a 2 x 2 linear solve.
fn axisymmetric_midpoint(
    old: Vec3,
    torque: Vec3,
    j: Vec3,
    inverse: Vec3,
    drag: f64,
    dt: f64,
) -> Vec3 {
    let a = 0.5 * drag * dt;
    let z = (old.z * (1.0 - a) + dt * torque.z * inverse.z) / (1.0 + a);
    let c = 0.5 * dt * (j.z - j.x) * inverse.x * (0.5 * (old.z + z));
    let rx = old.x * (1.0 - a) + dt * torque.x * inverse.x - c * old.y;
    let ry = old.y * (1.0 - a) + dt * torque.y * inverse.y + c * old.x;
    // [[1 + a, c], [-c, 1 + a]] (x, y) = (rx, ry).
    let det = (1.0 + a) * (1.0 + a) + c * c;
    Vec3::new(
        ((1.0 + a) * rx - c * ry) / det,
        (c * rx + (1.0 + a) * ry) / det,
        z,
    )
}

/// The midpoint kick for a general section, by fixed-point iteration: each iteration gains a
/// factor of about `dt |Ω| |J_i - J_k| / J`, tiny at a stable step.
fn iterated_midpoint(old: Vec3, torque: Vec3, j: Vec3, inverse: Vec3, drag: f64, dt: f64) -> Vec3 {
    let mut new = old;
    for _ in 0..8 {
        let mean = 0.5 * (old + new);
        let next = old + dt * ((torque - mean.cross(j * mean)) * inverse - drag * mean);
        let converged = (next - new).length_squared() <= 1e-30 * next.length_squared();
        new = next;
        if converged {
            break;
        }
    }
    new
}

/// Position Verlet with its scratch space (allocation-free steps).
#[derive(Clone, Debug, Default)]
pub struct Verlet {
    work: Workspace,
}

impl Verlet {
    /// One position-Verlet step of `dt` from time `t`; held nodes and clamp frames follow their
    /// supports.
    pub fn step(
        &mut self,
        rod: &mut Rod,
        motion: &mut RodMotion,
        model: &RodModel,
        t: f64,
        dt: f64,
    ) {
        self.advance(rod, motion, model, t, dt, 1);
    }

    /// `steps` position-Verlet steps of `dt` from time `t`. The closing half drift of one step and
    /// the opening half drift of the next are applied as one drift of dt (the same map:
    /// `exp(½dt Ω) exp(½dt Ω) = exp(dt Ω)` with Ω unchanged in between), so the steps in between
    /// cost one drift each.
    pub fn advance(
        &mut self,
        rod: &mut Rod,
        motion: &mut RodMotion,
        model: &RodModel,
        t: f64,
        dt: f64,
        steps: usize,
    ) {
        if steps == 0 {
            return;
        }
        self.work.prepare(rod, model);
        drift(rod, motion, 0.5 * dt, false);
        for step in 0..steps {
            let midpoint = t + (step as f64 + 0.5) * dt;
            model.apply_boundaries(rod, motion, midpoint);
            kick(rod, motion, model, &mut self.work, dt);
            let last = step + 1 == steps;
            drift(rod, motion, if last { 0.5 * dt } else { dt }, true);
        }
        model.apply_boundaries(rod, motion, t + steps as f64 * dt);
    }
}

/// Largest position-Verlet step over the estimated stability limit ([`explicit_step_limit`]) to
/// allow when axial waves set it: the estimate is about 20 % low for them (stable at 1.2, diverging
/// at 1.4 in tests).
pub const MAX_STEP_OVER_LIMIT: f64 = 1.3;
/// The same when the rotation, shear or torsion of a segment sets the limit: the estimate is sharp
/// there (a steel rod diverged at 1.0 and 1.3 of it).
pub const MAX_STEP_OVER_SHARP_LIMIT: f64 = 0.95;
/// Default position-Verlet step over the estimated limit.
pub const DEFAULT_STEP_OVER_LIMIT: f64 = 0.5;

impl StepLimit {
    /// The largest step to allow: [`MAX_STEP_OVER_LIMIT`] of the estimate for axial waves,
    /// [`MAX_STEP_OVER_SHARP_LIMIT`] of it for the other modes.
    pub fn largest_step(&self) -> f64 {
        let factor = if self.mode == "axial" {
            MAX_STEP_OVER_LIMIT
        } else {
            MAX_STEP_OVER_SHARP_LIMIT
        };
        factor * self.step
    }
}

/// The fastest mode that limits an explicit step, and the step `2/ω` it allows.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepLimit {
    pub step: f64,
    /// "axial", "shear", "rotation" (shear and bending acting on a segment's turn) or "torsion".
    pub mode: &'static str,
}

/// An estimate of position Verlet's stability limit `2/ω_max` from the stiffest local modes
/// (Gershgorin's bound on each row: the alternating mode of a uniform chain exactly): a node between
/// two segments (axial and transverse springs `C_G / h`, `ω² = 2 k (1/m_a + 1/m_b)` per spring), a
/// segment turning against its shear (`h C_G,1 / J_1`) plus its two bending nodes
/// (`Σ (C_K / h̄)(1/J_a + 1/J_b)`), and torsion.
pub fn explicit_step_limit(rod: &Rod, model: &RodModel) -> StepLimit {
    let c_g = rod.stiffness.shear_extension;
    let c_k = rod.stiffness.bending_torsion;
    let masses = &model.inertia.node_masses;
    let inertias = &model.inertia.segment_inertias;
    let n = rod.segments();
    let mut fastest = (0.0f64, "axial");
    let mut consider = |omega_squared: f64, mode: &'static str| {
        if omega_squared > fastest.0 {
            fastest = (omega_squared, mode);
        }
    };
    for j in 0..n {
        let h = rod.lengths[j];
        let mass_term = 1.0 / masses[j] + 1.0 / masses[j + 1];
        consider(2.0 * c_g.z / h * mass_term, "axial");
        consider(2.0 * c_g.x.max(c_g.y) / h * mass_term, "shear");
        let j_s = inertias[j];
        let mut bending = 0.0;
        let mut torsion = 0.0;
        for other in [j.checked_sub(1), (j + 1 < n).then_some(j + 1)]
            .into_iter()
            .flatten()
        {
            let node_length = 0.5 * (h + rod.lengths[other]);
            let j_o = inertias[other];
            bending +=
                c_k.x.max(c_k.y) / node_length * (1.0 / j_s.x.min(j_s.y) + 1.0 / j_o.x.min(j_o.y));
            torsion += c_k.z / node_length * (1.0 / j_s.z + 1.0 / j_o.z);
        }
        consider(
            h * c_g.x.max(c_g.y) / j_s.x.min(j_s.y) + bending,
            "rotation",
        );
        consider(torsion, "torsion");
    }
    StepLimit {
        step: 2.0 / fastest.0.sqrt(),
        mode: fastest.1,
    }
}

/// One position-Verlet step of `dt` from time `t` (allocating; see [`Verlet`] for repeated steps).
pub fn position_verlet_step(
    rod: &mut Rod,
    motion: &mut RodMotion,
    model: &RodModel,
    t: f64,
    dt: f64,
) {
    Verlet::default().step(rod, motion, model, t, dt);
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
        assert!((l - l0).length() < 1e-9 * l0.length(), "{l} vs {l0}");
    }

    #[test]
    fn rotation_exp_is_the_axis_angle_quaternion() {
        // Both branches agree with sine and cosine to round-off, at and around the switch.
        for angle in [1e-9, 1e-3, 0.05, 0.199, 0.2, 0.201, 1.0, 3.0] {
            let axis = Vec3::new(0.3, -0.4, 0.8).normalize();
            let q = rotation_exp(angle * axis);
            let (s, c) = (0.5f64 * angle).sin_cos();
            let expected = [c, s * axis.x, s * axis.y, s * axis.z];
            for k in 0..4 {
                assert!(
                    (q[k] - expected[k]).abs() < 2e-16,
                    "{angle}: {q:?} vs {expected:?}"
                );
            }
        }
        let q = rotation_exp(Vec3::new(0.0, 0.0, 1.0));
        assert!((q[0] - 0.5f64.cos()).abs() < 1e-15 && (q[3] - 0.5f64.sin()).abs() < 1e-15);
        assert_eq!(rotation_exp(Vec3::ZERO), [1.0, 0.0, 0.0, 0.0]);
    }
}
