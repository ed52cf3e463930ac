//! The analytic Hessian of the elastic potential, `∂²V/∂y²` with `y = (φ, p)`: the stiffness part of
//! the Jacobian for the implicit integrator and the Newton steps of the static solver. Every block is
//! a polynomial in the unknowns, built from the left and right multiplication matrices of
//! quaternions (`a b = L(a) b = R(b) a`).
//!
//! Segment term `E = (h/2) Γᵀ C Γ`, `Γ = Im(p̄ d p) - e3`, `d = (φ_b - φ_a)/h`, `m = C Γ`:
//! `∂²E = h J_Γᵀ C J_Γ + h Σ_i m_i ∂²Γ_i`, with `∂Γ/∂d` the map `v ↦ Im(p̄ v p)`, the rows
//! `∂Γ_i/∂p = -2 d p e_i`, and the second derivatives of `mᵀΓ`: `∂²/∂p² = -2 L(d) R(m)`,
//! `∂²/∂p∂d: δd ↦ -2 δd p m`, `∂²/∂d² = 0`.
//!
//! Node term `E = (h̄/2)(K - K0)ᵀ C (K - K0)`, `K = (2/h̄) Im(p̄_- p_+)`, `w = C (K - K0)`: rows
//! `∂K_i/∂p_+ = (2/h̄) p_- e_i`, `∂K_i/∂p_- = -(2/h̄) p_+ e_i`; `∂²(wᵀK)/∂p_-∂p_+ = (2/h̄) ...` (the
//! bilinear form `(δ_-, δ_+) ↦ (2/h̄) Re(δ̄_- δ_+ w̄)`), no pure second derivatives.
//!
//! Unknowns are numbered node by node and segment by segment, interleaved:
//! `φ_0 (3), p_0 (4), φ_1 (3), p_1 (4), ..., p_(N-1) (4), φ_N (3)`, so the matrix is banded.

use silt_core::Vec3;

use crate::quaternion::{mul, pure, Quat};
use crate::rod::{End, Rod};
use crate::strains::{clamp_curvature, curvature, shear_strain};

/// Index of node j's first coordinate.
pub fn node_index(j: usize) -> usize {
    7 * j
}

/// Index of segment j's first quaternion component.
pub fn segment_index(j: usize) -> usize {
    7 * j + 3
}

/// Number of unknowns `3 (N + 1) + 4 N`.
pub fn unknowns(rod: &Rod) -> usize {
    7 * rod.segments() + 3
}

/// A symmetric matrix as (row, column, value) entries; entries at the same place add up.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Triplets {
    pub size: usize,
    pub entries: Vec<(usize, usize, f64)>,
}

impl Triplets {
    fn add_block<const R: usize, const C: usize>(
        &mut self,
        row: usize,
        col: usize,
        block: &[[f64; C]; R],
    ) {
        for (i, line) in block.iter().enumerate() {
            for (j, &v) in line.iter().enumerate() {
                if v != 0.0 {
                    self.entries.push((row + i, col + j, v));
                }
            }
        }
    }

    /// Adds `block` at (row, col) and its transpose at (col, row).
    fn add_symmetric<const R: usize, const C: usize>(
        &mut self,
        row: usize,
        col: usize,
        block: &[[f64; C]; R],
    ) {
        self.add_block(row, col, block);
        let mut transposed = [[0.0; R]; C];
        for i in 0..R {
            for j in 0..C {
                transposed[j][i] = block[i][j];
            }
        }
        self.add_block(col, row, &transposed);
    }

    /// The dense matrix (tests and small systems).
    pub fn to_dense(&self) -> Vec<Vec<f64>> {
        let mut dense = vec![vec![0.0; self.size]; self.size];
        for &(i, j, v) in &self.entries {
            dense[i][j] += v;
        }
        dense
    }
}

/// `L(a)`: the matrix of `b ↦ a b`.
fn left(a: Quat) -> [[f64; 4]; 4] {
    [
        [a[0], -a[1], -a[2], -a[3]],
        [a[1], a[0], -a[3], a[2]],
        [a[2], a[3], a[0], -a[1]],
        [a[3], -a[2], a[1], a[0]],
    ]
}

/// `R(b)`: the matrix of `a ↦ a b`.
fn right(b: Quat) -> [[f64; 4]; 4] {
    [
        [b[0], -b[1], -b[2], -b[3]],
        [b[1], b[0], b[3], -b[2]],
        [b[2], -b[3], b[0], b[1]],
        [b[3], b[2], -b[1], b[0]],
    ]
}

fn matmul<const A: usize, const B: usize, const C: usize>(
    x: &[[f64; B]; A],
    y: &[[f64; C]; B],
) -> [[f64; C]; A] {
    let mut out = [[0.0; C]; A];
    for i in 0..A {
        for k in 0..B {
            for j in 0..C {
                out[i][j] += x[i][k] * y[k][j];
            }
        }
    }
    out
}

fn scale<const A: usize, const B: usize>(x: [[f64; B]; A], s: f64) -> [[f64; B]; A] {
    x.map(|row| row.map(|v| v * s))
}

/// One bending term: the segments before and after the node (`None`: a clamp's fixed frame), their
/// quaternions, the moment `w = C_K (K - K0)` and the node length.
struct NodeTerm {
    before_segment: Option<usize>,
    before: Quat,
    after_segment: Option<usize>,
    after: Quat,
    moment: Vec3,
    length: f64,
}

/// The Hessian of V.
pub fn hessian(rod: &Rod) -> Triplets {
    full_hessian(rod, None)
}

/// The Hessian with the segment stresses `m` of its second-derivative terms given instead of
/// `C_G Γ`: the tangent of the mixed (Hellinger–Reissner) form of the shear and extension energy, in
/// which `m` is an unknown of its own (the static solver's Newton matrix; see [`crate::statics`]).
pub fn hessian_with_stresses(rod: &Rod, stresses: &[Vec3]) -> Triplets {
    full_hessian(rod, Some(stresses))
}

fn full_hessian(rod: &Rod, stresses: Option<&[Vec3]>) -> Triplets {
    let stiffness = rod.stiffness;
    assemble(
        rod,
        stiffness.shear_extension,
        stiffness.bending_torsion,
        true,
        stresses,
    )
}

/// `Bᵀ diag(h C_G, h̄ C_K) B` over the segments and interior nodes (no clamp terms, no second
/// derivatives of the strains): the matrix of Antman's dissipation, `D = ½ ẏᵀ (…) ẏ`, whose viscous
/// forces are `-(…) ẏ` for the moduli `C_G = C_Gᵛ`, `C_K = C_Kᵛ`.
pub fn strain_gram(rod: &Rod, c_g: Vec3, c_k: Vec3) -> Triplets {
    assemble(rod, c_g, c_k, false, None)
}

/// The Hessian (`full`: with the second derivatives of the strains and the clamp terms) or the
/// Gauss–Newton part alone, for the moduli `c_g`, `c_k`; `stresses` replace `C_G Γ` in the
/// second-derivative terms of the segments when given.
fn assemble(rod: &Rod, c_g: Vec3, c_k: Vec3, full: bool, stresses: Option<&[Vec3]>) -> Triplets {
    let n = rod.segments();
    let mut out = Triplets {
        size: unknowns(rod),
        entries: Vec::new(),
    };
    let m_scale = if full { 1.0 } else { 0.0 };
    for j in 0..n {
        let p = rod.orientations[j];
        let h = rod.lengths[j];
        let d = (rod.nodes[j + 1] - rod.nodes[j]) / h;
        let m = m_scale * stresses.map_or_else(|| c_g * shear_strain(rod, j), |m| m[j]);
        // J_Γ with respect to d (3 x 3) and p (3 x 4).
        let mut jd = [[0.0; 3]; 3];
        let mut jp = [[0.0; 4]; 3];
        for i in 0..3 {
            let e = Vec3::AXES[i];
            // Row i of ∂Γ/∂d: Γ_i = e_i · Im(p̄ d p) = d · Im(p e_i p̄).
            let column = crate::quaternion::to_world(p, e);
            jd[i] = column.to_array();
            jp[i] = mul(mul(pure(d), p), pure(e)).map(|c| -2.0 * c);
        }
        // Gauss-Newton part h J^T C J, in (d, p) coordinates.
        let c = [c_g.x, c_g.y, c_g.z];
        let mut dd = [[0.0; 3]; 3];
        let mut dp = [[0.0; 4]; 3];
        let mut pp = [[0.0; 4]; 4];
        for i in 0..3 {
            for a in 0..3 {
                for b in 0..3 {
                    dd[a][b] += h * c[i] * jd[i][a] * jd[i][b];
                }
                for b in 0..4 {
                    dp[a][b] += h * c[i] * jd[i][a] * jp[i][b];
                }
            }
            for a in 0..4 {
                for b in 0..4 {
                    pp[a][b] += h * c[i] * jp[i][a] * jp[i][b];
                }
            }
        }
        // Second derivatives of h mᵀΓ: ∂²/∂p² = -2h L(d) R(m); ∂²/∂p∂d_k = -2h e_k p m.
        let curvature_pp = scale(matmul(&left(pure(d)), &right(pure(m))), -2.0 * h);
        for a in 0..4 {
            for b in 0..4 {
                // Symmetrise (the bilinear form is symmetric; the product matrix is up to round-off).
                pp[a][b] += 0.5 * (curvature_pp[a][b] + curvature_pp[b][a]);
            }
        }
        for k in 0..3 {
            let column = mul(mul(pure(Vec3::AXES[k]), p), pure(m)).map(|v| -2.0 * h * v);
            for b in 0..4 {
                dp[k][b] += column[b];
            }
        }
        // Chain rule d = (φ_b - φ_a) / h: ∂d/∂φ_b = I/h, ∂d/∂φ_a = -I/h.
        let (a_index, b_index, p_index) = (node_index(j), node_index(j + 1), segment_index(j));
        let dd_scaled = scale(dd, 1.0 / (h * h));
        let dp_scaled = scale(dp, 1.0 / h);
        out.add_block(b_index, b_index, &dd_scaled);
        out.add_block(a_index, a_index, &dd_scaled);
        out.add_symmetric(a_index, b_index, &scale(dd_scaled, -1.0));
        out.add_symmetric(b_index, p_index, &dp_scaled);
        out.add_symmetric(a_index, p_index, &scale(dp_scaled, -1.0));
        out.add_block(p_index, p_index, &pp);
    }
    // Node terms between segments, and the clamps (a node against a fixed frame).
    let mut node_terms: Vec<NodeTerm> = (1..n)
        .map(|j| NodeTerm {
            before_segment: Some(j - 1),
            before: rod.orientations[j - 1],
            after_segment: Some(j),
            after: rod.orientations[j],
            moment: m_scale * (c_k * (curvature(rod, j) - rod.rest_curvature[j - 1])),
            length: rod.node_length(j),
        })
        .collect();
    for clamp in rod.clamps.iter().filter(|_| full) {
        let (k, length) = clamp_curvature(rod, clamp);
        let moment = c_k * k;
        node_terms.push(match clamp.end {
            End::First => NodeTerm {
                before_segment: None,
                before: clamp.frame,
                after_segment: Some(0),
                after: rod.orientations[0],
                moment,
                length,
            },
            End::Last => NodeTerm {
                before_segment: Some(n - 1),
                before: rod.orientations[n - 1],
                after_segment: None,
                after: clamp.frame,
                moment,
                length,
            },
        });
    }
    let c = [c_k.x, c_k.y, c_k.z];
    for term in node_terms {
        let NodeTerm {
            before_segment,
            before,
            after_segment,
            after,
            moment: w,
            length,
        } = term;
        // Rows of ∂K: for p_+ (2/h̄) p_- e_i, for p_- -(2/h̄) p_+ e_i.
        let rows_after: [[f64; 4]; 3] =
            std::array::from_fn(|i| mul(before, pure(Vec3::AXES[i])).map(|v| 2.0 / length * v));
        let rows_before: [[f64; 4]; 3] =
            std::array::from_fn(|i| mul(after, pure(Vec3::AXES[i])).map(|v| -2.0 / length * v));
        let gauss = |x: &[[f64; 4]; 3], y: &[[f64; 4]; 3]| {
            let mut out = [[0.0; 4]; 4];
            for i in 0..3 {
                for a in 0..4 {
                    for b in 0..4 {
                        out[a][b] += length * c[i] * x[i][a] * y[i][b];
                    }
                }
            }
            out
        };
        // ∂²(h̄ wᵀK)/∂p_-∂p_+: (δ_-, δ_+) ↦ 2 Re(δ̄_- δ_+ w̄) = 2 ⟨δ_-, δ_+ w̄⟩ = -2 δ_-ᵀ R(w) δ_+.
        let mixed = scale(right(pure(w)), -2.0);
        if let Some(s) = after_segment {
            out.add_block(
                segment_index(s),
                segment_index(s),
                &gauss(&rows_after, &rows_after),
            );
        }
        if let Some(s) = before_segment {
            out.add_block(
                segment_index(s),
                segment_index(s),
                &gauss(&rows_before, &rows_before),
            );
        }
        if let (Some(b), Some(a)) = (before_segment, after_segment) {
            let mut block = gauss(&rows_before, &rows_after);
            for x in 0..4 {
                for y in 0..4 {
                    block[x][y] += mixed[x][y];
                }
            }
            out.add_symmetric(segment_index(b), segment_index(a), &block);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::potential::gradient;
    use crate::quaternion::normalized;
    use crate::rod::Stiffness;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn flatten(rod: &Rod) -> Vec<f64> {
        let g = gradient(rod);
        let mut out = vec![0.0; unknowns(rod)];
        for (j, v) in g.nodes.iter().enumerate() {
            out[node_index(j)..node_index(j) + 3].copy_from_slice(&v.to_array());
        }
        for (j, q) in g.orientations.iter().enumerate() {
            out[segment_index(j)..segment_index(j) + 4].copy_from_slice(q);
        }
        out
    }

    fn perturbed(rod: &Rod, index: usize, eps: f64) -> Rod {
        let mut r = rod.clone();
        let block = index / 7;
        let offset = index % 7;
        if offset < 3 {
            r.nodes[block][offset] += eps;
        } else {
            r.orientations[block][offset - 3] += eps;
        }
        r
    }

    /// The analytic Hessian equals central differences of the analytic gradient, column by column,
    /// for a deformed rod with clamps at both ends (unit and non-unit quaternions), and is symmetric.
    #[test]
    fn hessian_matches_finite_differences_of_the_gradient() {
        for (seed, unit) in [(11, true), (12, false)] {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let stiffness = Stiffness {
                shear_extension: Vec3::new(3.0, 4.0, 20.0),
                bending_torsion: Vec3::new(1.5, 2.5, 0.7),
            };
            let mut rod = Rod::straight(5, 2.5, Vec3::ZERO, Vec3::X, Vec3::Y, stiffness).unwrap();
            rod.clamp(End::First);
            rod.clamp(End::Last);
            rod.lengths[1] *= 0.9;
            let mut r = |s: f64| rng.gen_range(-s..s);
            for k in rod.rest_curvature.iter_mut() {
                *k = Vec3::new(r(0.3), r(0.3), r(0.3));
            }
            for node in rod.nodes.iter_mut() {
                *node += Vec3::new(r(0.1), r(0.1), r(0.1));
            }
            for p in rod.orientations.iter_mut() {
                let q = [p[0] + r(0.2), p[1] + r(0.2), p[2] + r(0.2), p[3] + r(0.2)];
                *p = if unit { normalized(q) } else { q };
            }
            let dense = hessian(&rod).to_dense();
            let size = unknowns(&rod);
            let eps = 1e-6;
            let scale = dense.iter().flatten().fold(0.0f64, |m, v| m.max(v.abs()));
            for col in 0..size {
                let plus = flatten(&perturbed(&rod, col, eps));
                let minus = flatten(&perturbed(&rod, col, -eps));
                for row in 0..size {
                    let fd = (plus[row] - minus[row]) / (2.0 * eps);
                    assert!(
                        (fd - dense[row][col]).abs() < 1e-6 * scale,
                        "({row}, {col}): {fd} vs {}",
                        dense[row][col]
                    );
                    assert!((dense[row][col] - dense[col][row]).abs() < 1e-12 * scale);
                }
            }
        }
    }
}
