//! The periodic Rotne–Prager–Yamakawa mobility of equal beads in an orthorhombic box by Beenakker's
//! Ewald sum (Beenakker 1986, J. Chem. Phys. 85, 1581), evaluated directly: every pair's blocks summed
//! over lattice images in real space and over wave vectors in Fourier space, O(N²) pairs. The slow,
//! exact reference of the spectral (O(N log N)) periodic product; formulas restated and checked in
//! `docs/theory/periodic-rpy.md`.
//!
//! The periodic mobility is the lattice sum of the RPY Fourier kernel with the `k = 0` mode left out
//! (zero mean velocity in the box: the net force is held by a mean pressure gradient). With Hasimoto's
//! splitting `Φ(k; ξ) = (1 + k²/4ξ² + k⁴/8ξ⁴) exp(−k²/4ξ²)`, for `r = Y_i − Y_j`,
//!
//! ```text
//! M(i, j) = Σ_n' M_real(r + n; ξ) + Σ_{k≠0} M_wave(k; ξ) (cos or sin)(k·r) + δ_ij M_self(ξ),
//! ```
//!
//! the prime leaving out `n = 0` for `i = j`; the sum does not depend on `ξ`. Pairs (and images) closer
//! than 2a add the difference between Wajnryb et al.'s overlap form and the far-field form, so that
//! the overlap correction of [`crate::rpy`] holds in the periodic mobility too. Blocks follow
//! [`crate::rpy`]: `V_i = M_tt F_j + M_tr T_j`, `W_i = M_rt F_j + M_rr T_j`, `M_rt(r) = M_tr(r)`.

use crate::rpy::{PairMobility, RpyKernel};
use glam::DMat3;
use rayon::prelude::*;
use silt_core::Vec3;
use std::f64::consts::PI;

/// `x_c = ξ r_c = k_c / (2ξ)`: where the real and wave sums are cut, their terms below round-off
/// (their factors `erfc(x)` and `exp(−x²)` times polynomials of degree up to 7 in `x`).
const CUT: f64 = 7.5;

/// The translation (`tt`), coupling (`tr`, equal to `rt`) and rotation (`rr`) blocks of the
/// mobility of bead `i` due to bead `j`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Blocks {
    pub tt: DMat3,
    pub tr: DMat3,
    pub rr: DMat3,
}

impl Blocks {
    pub(crate) const ZERO: Blocks = Blocks {
        tt: DMat3::ZERO,
        tr: DMat3::ZERO,
        rr: DMat3::ZERO,
    };

    pub(crate) fn add(&mut self, other: Blocks) {
        self.tt += other.tt;
        self.tr += other.tr;
        self.rr += other.rr;
    }
}

/// One wave vector of the Fourier sum with its three kernels (the cos, sin and cos factors left out).
#[derive(Clone, Copy, Debug)]
struct Wave {
    k: Vec3,
    /// `(1/ηV) (1 − a²k²/3) Φ / k² (I − k̂k̂)`.
    tt: DMat3,
    /// `−(1/2ηV) Φ / k² [k]×`.
    tr: DMat3,
    /// `(1/4ηV) Φ (I − k̂k̂)`.
    rr: DMat3,
}

/// The periodic RPY mobility of beads of one radius in a box, by the direct Ewald sum.
#[derive(Clone, Debug)]
pub struct EwaldRpy {
    kernel: RpyKernel,
    lengths: Vec3,
    /// The Lees–Edwards shift along x of the images across y.
    tilt: f64,
    xi: f64,
    /// Real-space cutoff `r_c = CUT / ξ`.
    real_cutoff: f64,
    /// Lattice vectors within reach of the real-space cutoff from any minimum-image separation.
    images: Vec<Vec3>,
    /// Wave vectors `0 < |k| ≤ 2ξ CUT`.
    waves: Vec<Wave>,
}

/// `separation` reduced by the lattice `(L_x, 0, 0)`, `(tilt, L_y, 0)`, `(0, 0, L_z)`: y within half a
/// side first (moving x by the tilt), then x and z.
pub(crate) fn minimum_image(separation: Vec3, lengths: Vec3, tilt: f64) -> Vec3 {
    let mut r = separation;
    let ny = (r.y / lengths.y).round();
    r.y -= ny * lengths.y;
    r.x -= ny * tilt;
    r.x -= (r.x / lengths.x).round() * lengths.x;
    r.z -= (r.z / lengths.z).round() * lengths.z;
    r
}

/// `[v]×`, the matrix of `w ↦ v × w`.
pub(crate) fn cross_matrix(v: Vec3) -> DMat3 {
    DMat3::from_cols(
        Vec3::new(0.0, v.z, -v.y),
        Vec3::new(-v.z, 0.0, v.x),
        Vec3::new(v.y, -v.x, 0.0),
    )
}

/// `v vᵀ`.
pub(crate) fn outer(v: Vec3) -> DMat3 {
    DMat3::from_cols(v * v.x, v * v.y, v * v.z)
}

/// The complementary error function (libm's, accurate to an ulp or two).
fn erfc(x: f64) -> f64 {
    libm::erfc(x)
}

impl EwaldRpy {
    /// Beads of `kernel`'s radius and viscosity (its overlap correction on or off) in a periodic box
    /// of `lengths`, with the splitting parameter `xi` (`None`: `√π / V^{1/3}`, balancing the two sums).
    pub fn new(kernel: RpyKernel, lengths: Vec3, xi: Option<f64>) -> Result<Self, String> {
        Self::sheared(kernel, lengths, 0.0, xi)
    }

    /// As [`EwaldRpy::new`] in a sheared (Lees–Edwards) box: the images across y shifted along x by
    /// `tilt` (the lattice `(L_x, 0, 0)`, `(tilt, L_y, 0)`, `(0, 0, L_z)`; the wave vectors
    /// `2π (m₁/L_x, m₂/L_y − m₁ tilt/(L_x L_y), m₃/L_z)`), `|tilt| ≤ L_x / 2`.
    pub fn sheared(
        kernel: RpyKernel,
        lengths: Vec3,
        tilt: f64,
        xi: Option<f64>,
    ) -> Result<Self, String> {
        if !(lengths.is_finite() && lengths.min_element() > 0.0) {
            return Err(format!("box lengths must be positive, got {lengths}"));
        }
        if !(tilt.is_finite() && tilt.abs() <= 0.5 * lengths.x) {
            return Err(format!(
                "the Lees–Edwards tilt must be within half the box's x side, got {tilt}"
            ));
        }
        let volume = lengths.x * lengths.y * lengths.z;
        let xi = xi.unwrap_or(PI.sqrt() / volume.cbrt());
        if !(xi.is_finite() && xi > 0.0) {
            return Err(format!(
                "the splitting parameter must be positive, got {xi}"
            ));
        }
        let real_cutoff = CUT / xi;
        // A minimum-image separation lies within half a box of the origin along each axis.
        // (one more along x for the tilt).
        let reach =
            |axis: usize| ((real_cutoff + 0.5 * lengths[axis]) / lengths[axis]).ceil() as i64;
        let mut images = Vec::new();
        for i in -reach(0) - 1..=reach(0) + 1 {
            for j in -reach(1)..=reach(1) {
                for k in -reach(2)..=reach(2) {
                    images.push(Vec3::new(
                        i as f64 * lengths.x + j as f64 * tilt,
                        j as f64 * lengths.y,
                        k as f64 * lengths.z,
                    ));
                }
            }
        }
        let (a, eta) = (kernel.radius(), kernel.viscosity());
        let wave_cutoff = 2.0 * xi * CUT;
        let reciprocal = 2.0 * PI / lengths;
        let modes = |axis: usize| (wave_cutoff / reciprocal[axis]).floor() as i64;
        // m₂ reaches further by the tilt's share of k_x.
        let modes_y = ((wave_cutoff * (1.0 + tilt.abs() / lengths.y)) / reciprocal.y).ceil() as i64;
        let mut waves = Vec::new();
        for i in -modes(0)..=modes(0) {
            for j in -modes_y..=modes_y {
                for l in -modes(2)..=modes(2) {
                    let k = Vec3::new(
                        reciprocal.x * i as f64,
                        reciprocal.y * j as f64 - reciprocal.x * i as f64 * tilt / lengths.y,
                        reciprocal.z * l as f64,
                    );
                    let k2 = k.length_squared();
                    if k2 == 0.0 || k2 > wave_cutoff * wave_cutoff {
                        continue;
                    }
                    let q = k2 / (4.0 * xi * xi);
                    let splitting = (1.0 + q + 2.0 * q * q) * (-q).exp();
                    let transverse = DMat3::IDENTITY - outer(k) / k2;
                    waves.push(Wave {
                        k,
                        tt: transverse
                            * ((1.0 - a * a * k2 / 3.0) * splitting / (eta * volume * k2)),
                        tr: cross_matrix(k) * (-splitting / (2.0 * eta * volume * k2)),
                        rr: transverse * (splitting / (4.0 * eta * volume)),
                    });
                }
            }
        }
        Ok(EwaldRpy {
            kernel,
            lengths,
            tilt,
            xi,
            real_cutoff,
            images,
            waves,
        })
    }

    /// The image of `separation` nearest the origin in the reduced sense: y, then x (with the tilt)
    /// and z each within half a side.
    pub fn minimum_image(&self, separation: Vec3) -> Vec3 {
        minimum_image(separation, self.lengths, self.tilt)
    }

    /// The splitting parameter `ξ`.
    pub fn xi(&self) -> f64 {
        self.xi
    }

    /// The blocks of bead `i` due to bead `j` at `separation = Y_i − Y_j`; `same` for `i = j` (the
    /// separation then zero).
    pub fn blocks(&self, separation: Vec3, same: bool) -> Blocks {
        let mut total = Blocks::ZERO;
        // Real space: the images within the cutoff of the minimum-image separation.
        let r = self.minimum_image(separation);
        for &n in &self.images {
            let rho = r + n;
            let length = rho.length();
            if length > self.real_cutoff || (same && length == 0.0) {
                continue;
            }
            total.add(real_blocks(&self.kernel, self.xi, rho));
        }
        // Wave space.
        for w in &self.waves {
            let phase = w.k.dot(separation);
            let (sin, cos) = phase.sin_cos();
            total.tt += w.tt * cos;
            total.tr += w.tr * sin;
            total.rr += w.rr * cos;
        }
        if same {
            total.add(self_blocks(&self.kernel, self.xi));
        }
        total
    }

    /// The velocities `V` and angular velocities `W` of beads at `positions` under `forces` and
    /// `torques`: every pair's blocks summed directly (O(N²) pairs, each over its images and waves),
    /// bead by bead in parallel, each bead's sum in index order (the same result for any threads).
    pub fn product(
        &self,
        positions: &[Vec3],
        forces: &[Vec3],
        torques: &[Vec3],
    ) -> (Vec<Vec3>, Vec<Vec3>) {
        positions
            .par_iter()
            .enumerate()
            .map(|(i, &xi)| {
                let (mut v, mut w) = (Vec3::ZERO, Vec3::ZERO);
                for (j, &xj) in positions.iter().enumerate() {
                    let b = self.blocks(xi - xj, i == j);
                    v += b.tt * forces[j] + b.tr * torques[j];
                    w += b.tr * forces[j] + b.rr * torques[j];
                }
                (v, w)
            })
            .unzip()
    }
}

/// Beenakker's real-space kernel of one image at distance `r > 0` with splitting parameter `xi`, in
/// the scalar form of [`crate::rpy::PairMobility`] (its direction left zero for the caller): the
/// translation `μ0 [F I + G r̂r̂]`, the coupling `M_tr = −c [r̂]×` and the rotation, without the
/// overlap difference (docs/theory/periodic-rpy.md, "Ewald sum").
pub(crate) fn real_scalars(kernel: &RpyKernel, xi: f64, r: f64) -> PairMobility {
    let (a, eta) = (kernel.radius(), kernel.viscosity());
    let x = xi * r;
    let (c, g) = (erfc(x), (-x * x).exp() / PI.sqrt());
    let (x2, x3) = (x * x, x * x * x);
    let (x5, x7) = (x3 * x2, x3 * x2 * x2);
    let mu0 = kernel.self_translation();
    let (r2, a3) = (r * r, a * a * a);
    let (xi2, xi3) = (xi * xi, xi * xi * xi);
    let (xi5, xi7) = (xi3 * xi2, xi3 * xi2 * xi2);
    let f = c * (0.75 * a / r + 0.5 * a3 / (r2 * r))
        + g * (4.0 * xi7 * a3 * r2 * r2 + 3.0 * xi3 * a * r2 - 20.0 * xi5 * a3 * r2 - 4.5 * xi * a
            + 14.0 * xi3 * a3
            + xi * a3 / r2);
    let gg = c * (0.75 * a / r - 1.5 * a3 / (r2 * r))
        + g * (-4.0 * xi7 * a3 * r2 * r2 - 3.0 * xi3 * a * r2
            + 16.0 * xi5 * a3 * r2
            + 1.5 * xi * a
            - 2.0 * xi3 * a3
            - 3.0 * xi * a3 / r2);
    let rotlet = 1.0 / (8.0 * PI * eta * r2 * r);
    PairMobility {
        tt_isotropic: mu0 * f,
        tt_along: mu0 * gg,
        // −rotlet h(x) [ρ]× T = rotlet h(x) r (T × r̂): the free coupling 1/(8πηr²) times h(x).
        coupling: rotlet * r * (c + 2.0 * g * x * (1.0 - 6.0 * x2 + 2.0 * x2 * x2)),
        rr_isotropic: rotlet * (-0.5 * c - g * (x + 14.0 * x3 - 20.0 * x5 + 4.0 * x7)),
        rr_along: rotlet * (1.5 * c + g * (3.0 * x + 2.0 * x3 - 16.0 * x5 + 4.0 * x7)),
        direction: Vec3::ZERO,
    }
}

/// The overlap difference of a pair or image at `rho` closer than 2a: Wajnryb et al.'s overlap form
/// less the far-field form (zero from 2a on, or without the overlap correction).
pub(crate) fn overlap_difference(kernel: &RpyKernel, rho: Vec3) -> Option<PairMobility> {
    if !kernel.overlap_correction() || rho.length() >= 2.0 * kernel.radius() {
        return None;
    }
    let near = kernel.pair(rho);
    let far = kernel.without_overlap_correction().pair(rho);
    Some(PairMobility {
        tt_isotropic: near.tt_isotropic - far.tt_isotropic,
        tt_along: near.tt_along - far.tt_along,
        coupling: near.coupling - far.coupling,
        rr_isotropic: near.rr_isotropic - far.rr_isotropic,
        rr_along: near.rr_along - far.rr_along,
        direction: near.direction,
    })
}

/// Beenakker's real-space blocks of one image at `rho` (`|rho| > 0`) with splitting parameter `xi`,
/// with the overlap difference below 2a (when `kernel` corrects overlaps).
pub(crate) fn real_blocks(kernel: &RpyKernel, xi: f64, rho: Vec3) -> Blocks {
    let r = rho.length();
    let mut blocks = pair_blocks(PairMobility {
        direction: rho / r,
        ..real_scalars(kernel, xi, r)
    });
    if let Some(difference) = overlap_difference(kernel, rho) {
        // Wajnryb et al.'s overlap form in place of the far-field form of the same image.
        blocks.add(pair_blocks(difference));
    }
    blocks
}

/// The self blocks `δ_ij M_self(ξ)` of the Ewald sum.
pub(crate) fn self_blocks(kernel: &RpyKernel, xi: f64) -> Blocks {
    let (a, root_pi) = (kernel.radius(), PI.sqrt());
    Blocks {
        tt: DMat3::IDENTITY
            * (kernel.self_translation()
                * (1.0 - 6.0 * xi * a / root_pi + 40.0 * (xi * a).powi(3) / (3.0 * root_pi))),
        tr: DMat3::ZERO,
        rr: DMat3::IDENTITY
            * (kernel.self_rotation() * (1.0 - 40.0 * (xi * a).powi(3) / (3.0 * root_pi))),
    }
}

/// The blocks of a free-space pair mobility of [`crate::rpy`].
fn pair_blocks(p: PairMobility) -> Blocks {
    let dd = outer(p.direction);
    // c T × r̂ = −c [r̂]× T.
    Blocks {
        tt: DMat3::IDENTITY * p.tt_isotropic + dd * p.tt_along,
        tr: cross_matrix(p.direction) * (-p.coupling),
        rr: DMat3::IDENTITY * p.rr_isotropic + dd * p.rr_along,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit_kernel() -> RpyKernel {
        RpyKernel::new(1.0, 1.0).unwrap()
    }

    fn close(a: DMat3, b: DMat3, tolerance: f64) -> bool {
        (a - b).to_cols_array().iter().all(|d| d.abs() <= tolerance)
    }

    /// The sum does not depend on the splitting parameter: self, near, overlapping and far pairs in a
    /// cubic and an orthorhombic box, at ξ from √π/L to 1/a, to round-off (relative to the block's
    /// scale; it grows with ξa).
    #[test]
    fn the_sum_does_not_depend_on_the_splitting() {
        let (mu0, mur) = (1.0 / (6.0 * PI), 1.0 / (8.0 * PI));
        for lengths in [Vec3::splat(10.0), Vec3::new(10.0, 12.0, 15.0)] {
            let reference = EwaldRpy::new(unit_kernel(), lengths, Some(0.5)).unwrap();
            for xi in [None, Some(0.2), Some(0.35), Some(1.0)] {
                // At ξ = 1/a the wave sum holds ~10⁵ terms and the self terms cancel to 1/7.5.
                let tolerance = if xi == Some(1.0) { 2e-12 } else { 1e-13 };
                let other = EwaldRpy::new(unit_kernel(), lengths, xi).unwrap();
                for (r, same) in [
                    (Vec3::ZERO, true),
                    (Vec3::new(3.0, 0.0, 0.0), false),
                    (Vec3::new(1.5, 0.3, -0.2), false),
                    (Vec3::new(4.1, -3.7, 6.9), false),
                ] {
                    let (p, q) = (reference.blocks(r, same), other.blocks(r, same));
                    let what = format!("{lengths} {xi:?} {r}: {p:?} {q:?}");
                    assert!(close(p.tt, q.tt, tolerance * mu0), "{what}");
                    assert!(close(p.tr, q.tr, tolerance * mur), "{what}");
                    assert!(close(p.rr, q.rr, tolerance * mur), "{what}");
                }
            }
        }
    }

    /// The sheared (Lees–Edwards) lattice: the sum independent of ξ (a wrong reciprocal lattice
    /// would not be), the tilts ±L_x/2 (the same lattice) equal, and a small tilt a small change.
    #[test]
    fn the_sheared_sum_does_not_depend_on_the_splitting() {
        let (mu0, mur) = (1.0 / (6.0 * PI), 1.0 / (8.0 * PI));
        let lengths = Vec3::new(10.0, 12.0, 9.0);
        for tilt in [3.7, -5.0] {
            let reference = EwaldRpy::sheared(unit_kernel(), lengths, tilt, Some(0.5)).unwrap();
            for xi in [None, Some(0.25), Some(0.8)] {
                let other = EwaldRpy::sheared(unit_kernel(), lengths, tilt, xi).unwrap();
                for (r, same) in [
                    (Vec3::ZERO, true),
                    (Vec3::new(3.0, 0.0, 0.0), false),
                    (Vec3::new(1.5, 0.3, -0.2), false),
                    (Vec3::new(4.1, -5.7, 3.9), false),
                ] {
                    let (p, q) = (reference.blocks(r, same), other.blocks(r, same));
                    let what = format!("tilt {tilt} {xi:?} {r}: {p:?} {q:?}");
                    assert!(close(p.tt, q.tt, 1e-13 * mu0), "{what}");
                    assert!(close(p.tr, q.tr, 1e-13 * mur), "{what}");
                    assert!(close(p.rr, q.rr, 1e-13 * mur), "{what}");
                }
            }
        }
        let r = Vec3::new(2.0, 4.5, -1.0);
        let plus = EwaldRpy::sheared(unit_kernel(), lengths, 5.0, None).unwrap();
        let minus = EwaldRpy::sheared(unit_kernel(), lengths, -5.0, None).unwrap();
        assert!(close(
            plus.blocks(r, false).tt,
            minus.blocks(r, false).tt,
            1e-13 * mu0
        ));
        let plain = EwaldRpy::new(unit_kernel(), lengths, None).unwrap();
        let slight = EwaldRpy::sheared(unit_kernel(), lengths, 1e-4, None).unwrap();
        let change = (plain.blocks(r, false).tt - slight.blocks(r, false).tt)
            .to_cols_array()
            .iter()
            .fold(0.0f64, |m, d| m.max(d.abs()));
        assert!(change > 0.0 && change < 1e-5 * mu0, "{change}");
        assert!(EwaldRpy::sheared(unit_kernel(), lengths, 5.1, None).is_err());
    }

    /// Values of an independent evaluation (a Python Ewald sum checked against a sinc² Fourier sum
    /// and pystokes 2.3.2; docs/theory/periodic-rpy.md): a = 1, η = 1, L = 10.
    #[test]
    fn the_blocks_match_an_independent_evaluation() {
        let ewald = EwaldRpy::new(unit_kernel(), Vec3::splat(10.0), None).unwrap();
        let mu0 = 1.0 / (6.0 * PI);
        let mur = 1.0 / (8.0 * PI);
        let own = ewald.blocks(Vec3::ZERO, true);
        assert!((own.tt.x_axis.x / mu0 - 0.720459042256725).abs() < 1e-13);
        assert!((own.rr.x_axis.x / mur - 0.995811209795209).abs() < 1e-13);
        let pair = ewald.blocks(Vec3::new(3.0, 0.0, 0.0), false);
        assert!((pair.tt.x_axis.x / mu0 - 0.224408527936581).abs() < 1e-13);
        assert!((pair.tt.y_axis.y / mu0 - 0.000631033161752).abs() < 1e-13);
        assert!((pair.rr.x_axis.x / mur - 0.0346670567718).abs() < 1e-12);
        assert!((pair.rr.y_axis.y / mur - -0.0236167136931).abs() < 1e-12);
        // Row y, column z of M_tr, in units of 1/(8πηa²).
        assert!((pair.tr.z_axis.y / mur - 0.0950446060896).abs() < 1e-12);
        assert!((pair.tr.y_axis.z / mur + 0.0950446060896).abs() < 1e-12);
        let overlapping = ewald.blocks(Vec3::new(1.5, 0.0, 0.0), false);
        assert!((overlapping.tt.x_axis.x / mu0 - 0.449460502782901).abs() < 1e-13);
        assert!((overlapping.tt.y_axis.y / mu0 - 0.300764032242707).abs() < 1e-13);
    }

    /// A bead's periodic self-mobility is Hasimoto's 1 − 2.8372975 a/L + (4π/3)(a/L)³ exactly for the
    /// RPY model, and its rotational one 1 − (4π/3)(a/L)³ (the k = 0 mode left out).
    #[test]
    fn a_single_beads_mobility_has_hasimotos_periodic_correction() {
        for length in [4.5, 10.0, 40.0] {
            let ewald = EwaldRpy::new(unit_kernel(), Vec3::splat(length), None).unwrap();
            let own = ewald.blocks(Vec3::ZERO, true);
            let s = 1.0 / length;
            let translation = 1.0 - 2.837_297_479_480_6 * s + 4.0 * PI / 3.0 * s.powi(3);
            let rotation = 1.0 - 4.0 * PI / 3.0 * s.powi(3);
            let mu0 = 1.0 / (6.0 * PI);
            let mur = 1.0 / (8.0 * PI);
            assert!(close(
                own.tt,
                DMat3::IDENTITY * (mu0 * translation),
                1e-14 * mu0
            ));
            assert!(close(
                own.rr,
                DMat3::IDENTITY * (mur * rotation),
                1e-14 * mur
            ));
            assert!(close(own.tr, DMat3::ZERO, 1e-15));
        }
    }

    /// In a box much larger than the pair, the periodic pair mobility is the free-space RPY one
    /// shifted by the images' uniform backflow, -2.8373 / (6πηL) I, up to O(r² / L³).
    #[test]
    fn a_close_pair_in_a_large_box_is_the_free_pair_plus_the_backflow() {
        let length = 400.0;
        let ewald = EwaldRpy::new(unit_kernel(), Vec3::splat(length), None).unwrap();
        for r in [Vec3::new(3.0, 0.0, 0.0), Vec3::new(1.2, -0.7, 0.4)] {
            let periodic = ewald.blocks(r, false);
            let free = pair_blocks(unit_kernel().pair(r));
            let backflow = -2.837_297_479_480_6 / (6.0 * PI * length);
            let bound = 10.0 * r.length_squared() / length.powi(3);
            assert!(close(
                periodic.tt - free.tt,
                DMat3::IDENTITY * backflow,
                bound
            ));
            assert!(close(periodic.tr, free.tr, bound), "{r}");
            assert!(close(periodic.rr, free.rr, bound), "{r}");
        }
    }

    /// The 6N × 6N mobility is symmetric (M(i,j) = M(j,i)ᵀ), unchanged by a shift of all beads, and
    /// the product equals the blocks applied one by one.
    #[test]
    fn the_product_is_symmetric_and_translation_invariant() {
        let ewald = EwaldRpy::new(unit_kernel(), Vec3::new(8.0, 9.0, 10.0), None).unwrap();
        let positions = [
            Vec3::new(0.5, 1.0, 2.0),
            Vec3::new(2.1, 1.4, 2.2),
            Vec3::new(7.5, 8.6, 0.3),
            Vec3::new(3.0, 4.0, 9.5),
        ];
        for i in 0..4 {
            for j in 0..4 {
                let r = positions[i] - positions[j];
                let (p, q) = (ewald.blocks(r, i == j), ewald.blocks(-r, i == j));
                assert!(close(p.tt, q.tt.transpose(), 1e-15));
                assert!(close(p.rr, q.rr.transpose(), 1e-15));
                assert!(close(p.tr, q.tr.transpose(), 1e-15));
            }
        }
        let forces = [
            Vec3::new(1.0, 0.0, 0.5),
            Vec3::new(-0.3, 2.0, 0.0),
            Vec3::new(0.0, 0.0, -1.0),
            Vec3::new(0.7, 0.7, 0.7),
        ];
        let torques = [
            Vec3::new(0.0, 1.0, 0.0),
            Vec3::ZERO,
            Vec3::new(0.2, -0.4, 1.0),
            Vec3::new(1.0, 0.0, 0.0),
        ];
        let (v, w) = ewald.product(&positions, &forces, &torques);
        let shifted: Vec<Vec3> = positions
            .iter()
            .map(|&x| x + Vec3::new(3.3, -20.0, 0.1))
            .collect();
        let (vs, ws) = ewald.product(&shifted, &forces, &torques);
        for i in 0..4 {
            assert!((v[i] - vs[i]).length() < 1e-14 && (w[i] - ws[i]).length() < 1e-14);
        }
    }
}
