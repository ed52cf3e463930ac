//! Bending elasticity of a bead chain (seed sec. 2.2.4): the 3D discrete curvature of Fauci & Peskin
//! (1988) at each interior bead,
//!
//! ```text
//! κ(s_n) = e_(n-1,n) × e_(n,n+1) / (2a)                       (seed eq. 2.34)
//! m(s_n) = K_b (κ(s_n) - κ_eq(s_n, t) b)                       (seed eq. 2.35, with eq. 2.31's rest curvature)
//! τ_n    = ½ (m(s_(n+1)) - m(s_(n-1)))                          (seed eq. 2.32, halved: see below)
//! ```
//!
//! **The factor ½.** Under the gears constraint two touching beads n, n + 1 share the rotation Ω of
//! their link only through their sum, `(W_n + W_(n+1))⊥ = 2 Ω`. The power of the seed's torques
//! `m(s_n)` on bead n - 1 and `-m(s_n)` on bead n + 1 is then `2 m · (Ω_(n-1) - Ω_n)`, twice the rate
//! at which the bending energy `Σ K_b (2a) |κ - κ_eq|² / 2` is released: taken literally, eq. 2.32
//! bends the chain as if its rigidity were `2 K_b`. Halving it makes the torques the work-conjugate
//! of the discrete energy (tested in [`tests`]), and the clamped-beam validation lands on
//! `w = q L⁴ / (8 K_b)`. See `docs/theory/bead-model.md`.
//!
//! The rest curvature is a scalar `κ_eq(s, t)` about a fixed unit binormal `b` per fiber (planar
//! shapes and beats, as the seed's swimmers); a travelling wave of it drives active filaments.

use std::sync::Arc;

use silt_core::Vec3;

use crate::chain::Fibers;

/// Rest curvature `κ_eq(s, t)` (1/length) at arc length `s` from the fiber's first bead and time `t`.
pub type CurvatureLaw = Arc<dyn Fn(f64, f64) -> f64 + Send + Sync>;

/// Rest (intrinsic) curvature of one fiber: `κ_eq(s, t) b`.
#[derive(Clone)]
pub struct RestCurvature {
    /// Unit binormal `b` of the rest shape (the normal of its plane).
    pub binormal: Vec3,
    /// `κ_eq(s, t)`.
    pub curvature: CurvatureLaw,
}

impl std::fmt::Debug for RestCurvature {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RestCurvature")
            .field("binormal", &self.binormal)
            .finish_non_exhaustive()
    }
}

impl RestCurvature {
    /// A constant rest curvature `kappa` about `binormal` (normalised here).
    pub fn constant(kappa: f64, binormal: Vec3) -> Result<Self, String> {
        Self::new(binormal, Arc::new(move |_, _| kappa))
    }

    /// A travelling wave `κ_eq(s, t) = A sin(k s - ω t)` about `binormal`: for `ω / k > 0` the wave runs
    /// from the first bead towards the last, and the filament swims the other way (seed sec. 2.4).
    pub fn travelling_wave(
        amplitude: f64,
        wavenumber: f64,
        angular_frequency: f64,
        binormal: Vec3,
    ) -> Result<Self, String> {
        Self::new(
            binormal,
            Arc::new(move |s, t| amplitude * (wavenumber * s - angular_frequency * t).sin()),
        )
    }

    /// A rest curvature `curvature(s, t)` about `binormal` (normalised here).
    pub fn new(binormal: Vec3, curvature: CurvatureLaw) -> Result<Self, String> {
        let length = binormal.length();
        if !(length.is_finite() && length > 0.0) {
            return Err(format!(
                "the binormal of a rest curvature must be a non-zero finite vector, got {binormal}"
            ));
        }
        Ok(RestCurvature {
            binormal: binormal / length,
            curvature,
        })
    }
}

/// Bending rigidity and rest shapes of all fibers.
#[derive(Clone, Debug)]
pub struct Bending {
    /// `K_b` (force × length²), the same for every fiber.
    pub rigidity: f64,
    /// Rest curvature per fiber (`None`: straight at rest).
    pub rest: Vec<Option<RestCurvature>>,
}

impl Bending {
    /// Straight at rest, rigidity `rigidity` (non-negative and finite), for `fibers` fibers.
    pub fn straight(rigidity: f64, fibers: usize) -> Result<Self, String> {
        if !(rigidity.is_finite() && rigidity >= 0.0) {
            return Err(format!(
                "bending rigidity must be non-negative and finite, got {rigidity}"
            ));
        }
        Ok(Bending {
            rigidity,
            rest: vec![None; fibers],
        })
    }

    /// Bending moment `m(s_n)` (seed eq. 2.34-2.35) at interior bead `n`, the `index`-th bead of a
    /// fiber, from its links' unit vectors.
    fn moment(
        &self,
        rest: Option<&RestCurvature>,
        spacing: f64,
        index: usize,
        before: Vec3,
        after: Vec3,
        time: f64,
    ) -> Vec3 {
        let curvature = before.cross(after) / spacing;
        let rest_curvature = rest.map_or(Vec3::ZERO, |r| {
            let arc_length = spacing * index as f64;
            (r.curvature)(arc_length, time) * r.binormal
        });
        self.rigidity * (curvature - rest_curvature)
    }

    /// Adds the bending torques `τ_n = ½ (m(s_(n+1)) - m(s_(n-1)))` of every fiber to `torques`.
    pub fn add_torques(&self, fibers: &Fibers, time: f64, torques: &mut [Vec3]) {
        let spacing = fibers.spacing();
        let y = &fibers.positions;
        for (fiber, beads) in fibers.fibers().iter().enumerate() {
            let rest = self.rest.get(fiber).and_then(Option::as_ref);
            for n in beads.start + 1..beads.end - 1 {
                let before = (y[n] - y[n - 1]).normalize();
                let after = (y[n + 1] - y[n]).normalize();
                let m = self.moment(rest, spacing, n - beads.start, before, after, time);
                torques[n - 1] += 0.5 * m;
                torques[n + 1] -= 0.5 * m;
            }
        }
    }

    /// Discrete bending energy `Σ_n K_b (2a) |κ(s_n) - κ_eq(s_n) b|² / 2`.
    pub fn energy(&self, fibers: &Fibers, time: f64) -> f64 {
        if self.rigidity == 0.0 {
            return 0.0;
        }
        let spacing = fibers.spacing();
        let y = &fibers.positions;
        let mut energy = 0.0;
        for (fiber, beads) in fibers.fibers().iter().enumerate() {
            let rest = self.rest.get(fiber).and_then(Option::as_ref);
            for n in beads.start + 1..beads.end - 1 {
                let before = (y[n] - y[n - 1]).normalize();
                let after = (y[n + 1] - y[n]).normalize();
                let m = self.moment(rest, spacing, n - beads.start, before, after, time);
                energy += 0.5 * spacing * m.length_squared() / self.rigidity;
            }
        }
        energy
    }

    /// Bending torques of the joint model (seed sec. 2.2.1): the joint between beads n and n + 1
    /// bends by the angle between bead n's arm `p_n` and the reverse of bead n + 1's, `-p_(n+1)`; its
    /// moment `m = K_b (p_n × (-p_(n+1)) / l - κ_eq b)`, `l = 2 (a + ε_g)` (eq. 2.34-2.35 on the beads'
    /// own tangents), acts as `+m` on bead n and `-m` on bead n + 1: the work-conjugate of the joint
    /// energy `Σ l |κ - κ_eq b|² K_b / 2`, since each bead turns its own arm.
    pub fn add_joint_torques(
        &self,
        fibers: &Fibers,
        joints: &[crate::constraints::JointLink],
        orientations: &[glam::DQuat],
        time: f64,
        torques: &mut [Vec3],
    ) {
        for (joint, m) in self.joint_moments(fibers, joints, orientations, time) {
            torques[joint.arms.bead] += m;
            torques[joint.arms.bead + 1] -= m;
        }
    }

    /// Energy of the joint model's bending.
    pub fn joint_energy(
        &self,
        fibers: &Fibers,
        joints: &[crate::constraints::JointLink],
        orientations: &[glam::DQuat],
        time: f64,
    ) -> f64 {
        if self.rigidity == 0.0 {
            return 0.0;
        }
        self.joint_moments(fibers, joints, orientations, time)
            .map(|(_, m)| 0.5 * fibers.spacing() * m.length_squared() / self.rigidity)
            .sum()
    }

    fn joint_moments<'a>(
        &'a self,
        fibers: &'a Fibers,
        joints: &'a [crate::constraints::JointLink],
        orientations: &'a [glam::DQuat],
        time: f64,
    ) -> impl Iterator<Item = (&'a crate::constraints::JointLink, Vec3)> + 'a {
        let spacing = fibers.spacing();
        let owner = fibers.fiber_of_bead();
        joints.iter().map(move |joint| {
            let (forward, backward) = joint.arms.world(orientations);
            let fiber = owner[joint.arms.bead];
            let start = fibers.fibers()[fiber].start;
            let rest = self
                .rest
                .get(fiber)
                .and_then(Option::as_ref)
                .map_or(Vec3::ZERO, |r| {
                    let arc_length = spacing * ((joint.arms.bead - start) as f64 + 0.5);
                    (r.curvature)(arc_length, time) * r.binormal
                });
            let curvature = forward.cross(-backward) / spacing;
            (joint, self.rigidity * (curvature - rest))
        })
    }

    /// Smallest bending time `η (2a)⁴ / K_b` (seed sec. 2.2.6): the explicit step must stay below it.
    pub fn bending_time(&self, radius: f64, viscosity: f64) -> f64 {
        viscosity * (2.0 * radius).powi(4) / self.rigidity
    }
}

/// Twist elasticity of gears chains (optional; the seed leaves twist out, sec. 2.2.4). Each bead
/// carries a spin angle `ψ_n` about its tangent `t_n` (the mean of its links' directions), integrated
/// from `dψ_n/dt = W_n · t_n`; the twist of link k is `τ_k = (ψ_(k+1) - ψ_k) / l - τ_rest`, the
/// energy `Σ_k K_t l τ_k² / 2`, and the moment `M_k = K_t τ_k` turns bead k by `+M_k t_k` and bead
/// k + 1 by `-M_k t_(k+1)`: exactly the work-conjugate of the energy under `dψ/dt = W · t`. The spins
/// about the links are the free rotations of the gears model, so twist does not fight the
/// constraints; for a bent chain the integrated spin is the twist only to leading order in the
/// bending (the holonomy of the tangents is left out).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Twist {
    /// `K_t` (force × length²).
    pub rigidity: f64,
    /// Rest twist rate `τ_rest` (radians per length).
    pub rest: f64,
}

impl Twist {
    /// Unit tangent of every bead: the mean of its links' directions (the single link at an end).
    pub fn tangents(fibers: &Fibers) -> Vec<Vec3> {
        let y = &fibers.positions;
        let mut tangents = vec![Vec3::X; y.len()];
        for beads in fibers.fibers() {
            for n in beads.clone() {
                let before = (n > beads.start).then(|| (y[n] - y[n - 1]).normalize());
                let after = (n + 1 < beads.end).then(|| (y[n + 1] - y[n]).normalize());
                let sum = before.unwrap_or(Vec3::ZERO) + after.unwrap_or(Vec3::ZERO);
                tangents[n] = sum.normalize_or(after.or(before).unwrap_or(Vec3::X));
            }
        }
        tangents
    }

    /// Twist moments `M_k` of every link, with the link's first bead.
    fn moments<'a>(
        &'a self,
        fibers: &'a Fibers,
        spins: &'a [f64],
    ) -> impl Iterator<Item = (usize, f64)> + 'a {
        let l = fibers.spacing();
        fibers.links().map(move |k| {
            (
                k,
                self.rigidity * ((spins[k + 1] - spins[k]) / l - self.rest),
            )
        })
    }

    /// Adds the twist torques to `torques`.
    pub fn add_torques(&self, fibers: &Fibers, spins: &[f64], torques: &mut [Vec3]) {
        if self.rigidity == 0.0 {
            return;
        }
        let tangents = Self::tangents(fibers);
        for (k, moment) in self.moments(fibers, spins) {
            torques[k] += moment * tangents[k];
            torques[k + 1] -= moment * tangents[k + 1];
        }
    }

    /// Twist time `8π η a³ l / K_t` (a bead's rotational drag over a link's torsional stiffness): the
    /// Adams–Bashforth steps were stable in tests up to 0.13 of it and diverged at 0.16.
    pub fn twist_time(&self, fibers: &Fibers, viscosity: f64) -> f64 {
        8.0 * std::f64::consts::PI * viscosity * fibers.radius().powi(3) * fibers.spacing()
            / self.rigidity
    }

    /// Twist energy `Σ_k K_t l τ_k² / 2`.
    pub fn energy(&self, fibers: &Fibers, spins: &[f64]) -> f64 {
        if self.rigidity == 0.0 {
            return 0.0;
        }
        let l = fibers.spacing();
        self.moments(fibers, spins)
            .map(|(_, m)| 0.5 * l * m * m / self.rigidity)
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn wavy(beads: usize) -> Fibers {
        let mut fibers = Fibers::new(0.5).unwrap();
        fibers
            .add(beads, |s| {
                Vec3::new(s, 0.4 * (0.8 * s).sin(), 0.3 * (0.5 * s).cos())
            })
            .unwrap();
        fibers
    }

    /// A straight chain carries no moment; the torques of a bent one add up to zero.
    #[test]
    fn straight_chains_are_free_and_torques_balance() {
        let bending = Bending::straight(2.0, 1).unwrap();
        let mut fibers = Fibers::new(0.5).unwrap();
        fibers
            .add_straight(6, Vec3::ZERO, Vec3::new(1.0, 2.0, 3.0))
            .unwrap();
        let mut torques = vec![Vec3::ZERO; 6];
        bending.add_torques(&fibers, 0.0, &mut torques);
        assert!(torques.iter().all(|t| t.length() < 1e-14));
        assert!(bending.energy(&fibers, 0.0) < 1e-28);

        let fibers = wavy(9);
        let mut torques = vec![Vec3::ZERO; 9];
        bending.add_torques(&fibers, 0.0, &mut torques);
        let net: Vec3 = torques.iter().sum();
        assert!(net.length() < 1e-14 * torques[0].length().max(1.0));
        assert!(torques.iter().any(|t| t.length() > 0.1));
        assert!(Bending::straight(-1.0, 1).is_err());
        assert!(RestCurvature::constant(1.0, Vec3::ZERO).is_err());
    }

    /// Work conjugacy under the gears constraint: turn every link by a small random rotation `Ω_k dt`
    /// (which fixes `W_n + W_(n+1) = 2 Ω_k` for the beads of link k, with the first bead's spin free)
    /// and compare the power `Σ τ_n · W_n` with the energy released, `-(E(t + dt) - E(t - dt)) / 2dt`.
    /// The curvature rotations are small (nearly straight chain) so the seed's small-angle form holds
    /// to well under a per cent; the literal eq. 2.32 (without ½) is off by a factor of 2.
    #[test]
    fn bending_torques_are_work_conjugate_to_the_energy_under_gears() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let radius = 0.5;
        let mut fibers = Fibers::new(radius).unwrap();
        fibers
            .add(10, |s| {
                Vec3::new(s, 0.02 * (0.9 * s).sin(), 0.015 * (0.6 * s).cos())
            })
            .unwrap();
        let mut bending = Bending::straight(1.7, 1).unwrap();
        bending.rest[0] = Some(RestCurvature::constant(0.01, Vec3::Z).unwrap());
        let links = fibers.bead_count() - 1;
        let omega: Vec<Vec3> = (0..links)
            .map(|_| {
                Vec3::new(
                    rng.gen_range(-1.0..1.0),
                    rng.gen_range(-1.0..1.0),
                    rng.gen_range(-1.0..1.0),
                )
            })
            .collect();
        // Rigid rotation of each link about its first bead, the chain kept connected.
        let moved = |dt: f64| {
            let mut f = fibers.clone();
            let y0 = fibers.positions.clone();
            for k in 0..links {
                let link = y0[k + 1] - y0[k];
                let turned = glam::DQuat::from_scaled_axis(omega[k] * dt) * link;
                f.positions[k + 1] = f.positions[k] + turned;
            }
            f
        };
        let dt = 1e-6;
        let released =
            -(bending.energy(&moved(dt), 0.0) - bending.energy(&moved(-dt), 0.0)) / (2.0 * dt);
        // Bead angular velocities allowed by the gears constraint: W_0 free, W_(k+1) = 2 Ω_k⊥ - W_k⊥.
        let mut w = vec![Vec3::new(0.3, -0.2, 0.5)];
        for k in 0..links {
            let e = (fibers.positions[k + 1] - fibers.positions[k]).normalize();
            let perpendicular = |v: Vec3| v - e * e.dot(v);
            w.push(2.0 * perpendicular(omega[k]) - perpendicular(w[k]));
        }
        let mut torques = vec![Vec3::ZERO; fibers.bead_count()];
        bending.add_torques(&fibers, 0.0, &mut torques);
        let power: f64 = torques.iter().zip(&w).map(|(t, w)| t.dot(*w)).sum();
        assert!(
            (power - released).abs() < 0.01 * released.abs(),
            "power {power} vs energy release {released}"
        );
    }
}
