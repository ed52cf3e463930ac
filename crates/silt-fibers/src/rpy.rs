//! Rotne–Prager–Yamakawa mobility of equal spheres with the overlap correction of Wajnryb, Mizerski,
//! Zuk & Szymczak (2013), translation and rotation (seed sec. 2.3; `shared/notes/bead-model.md`).
//!
//! For beads `i ≠ j` at `r = Y_i − Y_j`, `r = |r|`, `r̂ = r / r`, the velocities of bead `i` due to the
//! force `F_j` and torque `T_j` on bead `j` are
//!
//! ```text
//! V_i = M_tt F_j + c T_j × r̂,      M_tt = a_tt I + b_tt r̂ r̂,
//! W_i = M_rr T_j + c F_j × r̂,      M_rr = a_rr I + b_rr r̂ r̂,
//! ```
//!
//! with, for `r ≥ 2a` (RPY),
//! `a_tt = (1 + 2a²/(3r²)) / (8πηr)`, `b_tt = (1 − 2a²/r²) / (8πηr)`, `a_rr = −1/(16πηr³)`,
//! `b_rr = 3/(16πηr³)`, `c = 1/(8πηr²)`,
//! and for overlapping beads, `r < 2a` (Wajnryb et al.),
//! `a_tt = (1 − 9r/(32a)) / (6πηa)`, `b_tt = (3r/(32a)) / (6πηa)`,
//! `a_rr = (1 − 27r/(32a) + 5r³/(64a³)) / (8πηa³)`, `b_rr = (9r/(32a) − 3r³/(64a³)) / (8πηa³)`,
//! `c = (r/a − 3r²/(8a²)) / (16πηa²)`.
//! The self terms are `V_i = F_i / (6πηa)` and `W_i = T_i / (8πηa³)`. Both branches agree at `r = 2a`,
//! the overlap branch tends to the self terms as `r → 0`, and the whole `6N × 6N` mobility is symmetric
//! positive definite for any configuration, overlapping or not.

use std::f64::consts::PI;

use silt_core::lanes::{Lanes, Vec3Lanes};
use silt_core::Vec3;

/// Mobility of bead `i` due to bead `j` in scalar form (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PairMobility {
    /// `a_tt`: translation from force, isotropic part.
    pub tt_isotropic: f64,
    /// `b_tt`: translation from force, along `r̂`.
    pub tt_along: f64,
    /// `a_rr`: rotation from torque, isotropic part.
    pub rr_isotropic: f64,
    /// `b_rr`: rotation from torque, along `r̂`.
    pub rr_along: f64,
    /// `c`: translation from torque (`c T_j × r̂`) and rotation from force (`c F_j × r̂`).
    pub coupling: f64,
    /// `r̂ = (Y_i − Y_j) / |Y_i − Y_j|`, zero for coincident beads (every directional term vanishes).
    pub direction: Vec3,
}

impl PairMobility {
    /// `(V_i, W_i)` due to `force` and `torque` on bead `j`.
    #[inline]
    pub fn velocities(&self, force: Vec3, torque: Vec3) -> (Vec3, Vec3) {
        let d = self.direction;
        let velocity = self.tt_isotropic * force
            + self.tt_along * d.dot(force) * d
            + self.coupling * torque.cross(d);
        let angular = self.rr_isotropic * torque
            + self.rr_along * d.dot(torque) * d
            + self.coupling * force.cross(d);
        (velocity, angular)
    }
}

/// [`PairMobility`] of four pairs, one per lane.
pub(crate) struct PairLanes<L> {
    pub tt_isotropic: L,
    pub tt_along: L,
    pub coupling: L,
    pub rr_isotropic: L,
    pub rr_along: L,
    pub direction: Vec3Lanes<L>,
}

impl<L: Lanes> PairLanes<L> {
    /// `(v, w)` plus the velocities due to `force` and `torque` on the sources, lane by lane (as
    /// [`PairMobility::velocities`], each term added in turn).
    #[inline(always)]
    pub(crate) fn add_velocities(
        &self,
        (v, w): (Vec3Lanes<L>, Vec3Lanes<L>),
        force: Vec3Lanes<L>,
        torque: Vec3Lanes<L>,
    ) -> (Vec3Lanes<L>, Vec3Lanes<L>) {
        let d = self.direction;
        (
            v + self.tt_isotropic * force
                + (self.tt_along * d.dot(force)) * d
                + self.coupling * torque.cross(d),
            w + self.rr_isotropic * torque
                + (self.rr_along * d.dot(torque)) * d
                + self.coupling * force.cross(d),
        )
    }
}

/// RPY tensors of beads of one radius in a fluid of one viscosity.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RpyKernel {
    radius: f64,
    viscosity: f64,
    /// Pairs closer than 2a take Wajnryb et al.'s overlap branch (the default); without it the
    /// far-field RPY form holds for every distinct pair (as pystokes computes it).
    overlap_correction: bool,
}

impl RpyKernel {
    /// Beads of `radius` in a fluid of dynamic `viscosity`; both must be positive and finite.
    pub fn new(radius: f64, viscosity: f64) -> Result<Self, String> {
        for (name, value) in [("radius", radius), ("viscosity", viscosity)] {
            if !(value.is_finite() && value > 0.0) {
                return Err(format!("{name} must be positive and finite, got {value}"));
            }
        }
        Ok(RpyKernel {
            radius,
            viscosity,
            overlap_correction: true,
        })
    }

    /// The same kernel with the far-field RPY form for overlapping pairs too (no overlap correction).
    pub fn without_overlap_correction(self) -> Self {
        RpyKernel {
            overlap_correction: false,
            ..self
        }
    }

    /// Whether pairs closer than 2a take the overlap branch.
    pub fn overlap_correction(&self) -> bool {
        self.overlap_correction
    }

    /// The separation from which a pair takes the far-field form: 2a, or (without the overlap
    /// correction) any distance above zero.
    pub fn far_from(&self) -> f64 {
        if self.overlap_correction {
            2.0 * self.radius
        } else {
            f64::MIN_POSITIVE
        }
    }

    /// Bead radius `a`.
    pub fn radius(&self) -> f64 {
        self.radius
    }

    /// Dynamic viscosity `η`.
    pub fn viscosity(&self) -> f64 {
        self.viscosity
    }

    /// Self translational mobility `1 / (6πηa)` (Stokes drag).
    pub fn self_translation(&self) -> f64 {
        1.0 / (6.0 * PI * self.viscosity * self.radius)
    }

    /// Self rotational mobility `1 / (8πηa³)`.
    pub fn self_rotation(&self) -> f64 {
        1.0 / (8.0 * PI * self.viscosity * self.radius.powi(3))
    }

    /// Mobility of bead `i` due to bead `j` for `separation = Y_i − Y_j` (module documentation; RPY for
    /// `r ≥ 2a`, Wajnryb et al.'s overlap branch below).
    #[inline]
    pub fn pair(&self, separation: Vec3) -> PairMobility {
        let (a, eta) = (self.radius, self.viscosity);
        let r = separation.length();
        let direction = if r > 0.0 { separation / r } else { Vec3::ZERO };
        if r >= self.far_from() {
            let (r2, a2) = (r * r, a * a);
            let translation = 1.0 / (8.0 * PI * eta * r);
            let rotation = 1.0 / (16.0 * PI * eta * r2 * r);
            PairMobility {
                tt_isotropic: translation * (1.0 + 2.0 * a2 / (3.0 * r2)),
                tt_along: translation * (1.0 - 2.0 * a2 / r2),
                rr_isotropic: -rotation,
                rr_along: 3.0 * rotation,
                coupling: 1.0 / (8.0 * PI * eta * r2),
                direction,
            }
        } else {
            let s = r / a;
            let translation = self.self_translation();
            let rotation = self.self_rotation();
            PairMobility {
                tt_isotropic: translation * (1.0 - 9.0 * s / 32.0),
                tt_along: translation * (3.0 * s / 32.0),
                rr_isotropic: rotation * (1.0 - 27.0 * s / 32.0 + 5.0 * s.powi(3) / 64.0),
                rr_along: rotation * (9.0 * s / 32.0 - 3.0 * s.powi(3) / 64.0),
                coupling: (s - 3.0 * s * s / 8.0) / (16.0 * PI * eta * a * a),
                direction,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(x: f64, y: f64, tol: f64) -> bool {
        (x - y).abs() <= tol * y.abs().max(1e-300)
    }

    /// With η = a = 1, π times the pair terms at r = 2a are tt_par 5/48, tt_perp 7/96, rr_par 1/64,
    /// rr_perp -1/128, coupling 1/32 (shared/notes/bead-model.md), from both branches.
    #[test]
    fn branches_agree_at_contact() {
        let kernel = RpyKernel::new(1.0, 1.0).unwrap();
        let direction = Vec3::new(1.0, 2.0, -2.0) / 3.0;
        let far = kernel.pair(2.0 * direction);
        let near = kernel.pair((2.0 - 1e-12) * direction);
        for p in [far, near] {
            let expect = [
                (PI * (p.tt_isotropic + p.tt_along), 5.0 / 48.0),
                (PI * p.tt_isotropic, 7.0 / 96.0),
                (PI * (p.rr_isotropic + p.rr_along), 1.0 / 64.0),
                (PI * p.rr_isotropic, -1.0 / 128.0),
                (PI * p.coupling, 1.0 / 32.0),
            ];
            for (k, (got, want)) in expect.into_iter().enumerate() {
                assert!(close(got, want, 1e-10), "term {k}: {got} against {want}");
            }
        }
    }

    /// The overlap branch tends to the self terms as r -> 0 (and is exactly them at r = 0).
    #[test]
    fn overlap_tends_to_the_self_terms() {
        let kernel = RpyKernel::new(0.3, 2.0).unwrap();
        let (t, r) = (kernel.self_translation(), kernel.self_rotation());
        for gap in [1e-3, 1e-6, 0.0] {
            let p = kernel.pair(Vec3::new(gap * 0.3, 0.0, 0.0));
            let tol = 2.0 * gap + 1e-15;
            assert!(close(p.tt_isotropic, t, tol), "gap {gap}: tt");
            assert!(p.tt_along.abs() <= tol * t, "gap {gap}: tt along");
            assert!(close(p.rr_isotropic, r, tol), "gap {gap}: rr");
            assert!(p.rr_along.abs() <= tol * r, "gap {gap}: rr along");
            assert!(p.coupling.abs() <= tol * t / 0.3, "gap {gap}: coupling");
        }
    }

    /// Far apart, the translation block is the Oseen tensor (up to the a²/r² correction) and the coupling
    /// the rotlet.
    #[test]
    fn far_field_is_the_oseen_tensor() {
        let kernel = RpyKernel::new(1.0, 1.0).unwrap();
        let r = 1e4;
        let p = kernel.pair(Vec3::new(0.0, 0.0, r));
        let oseen = 1.0 / (8.0 * PI * r);
        // The finite-size corrections are 2a²/(3r²) and 2a²/r² = 2e-8 of it.
        let finite_size = 2.0 / (r * r);
        assert!(close(p.tt_isotropic, oseen, finite_size) && close(p.tt_along, oseen, finite_size));
        assert!(
            !close(p.tt_along, oseen, 0.5 * finite_size),
            "the correction is there"
        );
        assert!(close(p.coupling, oseen / r, 1e-12));
    }

    #[test]
    fn bad_parameters_are_refused() {
        for (a, eta) in [
            (0.0, 1.0),
            (-1.0, 1.0),
            (1.0, f64::NAN),
            (1.0, f64::INFINITY),
        ] {
            let err = RpyKernel::new(a, eta).unwrap_err();
            assert!(err.contains("must be positive and finite"), "{err}");
        }
    }
}
