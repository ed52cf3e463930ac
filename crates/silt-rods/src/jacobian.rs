//! The Jacobian `∂f/∂y` of the rod's first-order system (`dynamics`) without inner dissipation, for
//! the stiff implicit integrators: analytic and sparse, built from the Hessian of the potential.
//!
//! Unknowns: `y = (x, u)`, with `x` the configuration in the Hessian's interleaved order
//! (`φ_0, p_0, φ_1, ..., φ_N`, size 7N + 3) and `u` the velocities in the same pattern
//! (`v_0, Ω_0, v_1, Ω_1, ..., v_N`, size 6N + 3). With `g = -∂V/∂p`, `τ = ½ Im(p̄ g)`:
//!
//! ```text
//! ∂φ'/∂v = I;   ∂p'/∂p = ½ R(Ω);   ∂p'/∂Ω = ½ L(p) (pure part)
//! ∂v'/∂x = -M⁻¹ H_(φ,x)
//! ∂Ω'/∂x = J⁻¹ ∂τ/∂x,  ∂τ/∂x = -½ Im(p̄ H_(p,x)) (+ ½ Im(δp̄ g) for x = p)
//! ∂Ω'/∂Ω = -J⁻¹ ([Ω]x J - [J Ω]x)
//! ```

use silt_core::Vec3;

use crate::dynamics::{Inertia, RodMotion};
use crate::hessian::{hessian, node_index, segment_index, unknowns, Triplets};
use crate::potential::gradient;
use crate::quaternion::{conj, mul, pure, Quat};
use crate::rod::Rod;

/// Index of node j's velocity in u.
pub fn velocity_index(j: usize) -> usize {
    6 * j
}

/// Index of segment j's angular velocity in u.
pub fn angular_index(j: usize) -> usize {
    6 * j + 3
}

/// Size of u, `6N + 3`.
pub fn velocity_unknowns(rod: &Rod) -> usize {
    6 * rod.segments() + 3
}

/// `∂f/∂y` as triplets on `y = (x, u)` (u after x).
pub fn jacobian(rod: &Rod, motion: &RodMotion, inertia: &Inertia) -> Triplets {
    let n = rod.segments();
    let nx = unknowns(rod);
    let size = nx + velocity_unknowns(rod);
    let mut out = Triplets {
        size,
        entries: Vec::new(),
    };
    // φ' = v.
    for j in 0..=n {
        for a in 0..3 {
            out.entries
                .push((node_index(j) + a, nx + velocity_index(j) + a, 1.0));
        }
    }
    // p' = ½ p Ω.
    for s in 0..n {
        let p = rod.orientations[s];
        let omega = pure(motion.angular_velocities[s]);
        for c in 0..4 {
            let mut unit: Quat = [0.0; 4];
            unit[c] = 1.0;
            let column = mul(unit, omega);
            for r in 0..4 {
                out.entries
                    .push((segment_index(s) + r, segment_index(s) + c, 0.5 * column[r]));
            }
        }
        for k in 0..3 {
            let column = mul(p, pure(Vec3::AXES[k]));
            for r in 0..4 {
                out.entries.push((
                    segment_index(s) + r,
                    nx + angular_index(s) + k,
                    0.5 * column[r],
                ));
            }
        }
    }
    // H's entries sorted by row, to read the blocks H_(φ_j, ·) and H_(p_s, ·) as slices.
    let mut h = hessian(rod).entries;
    h.sort_unstable_by_key(|&(i, j, _)| (i, j));
    let mut row_start = vec![h.len(); nx + 1];
    for (k, &(i, _, _)) in h.iter().enumerate().rev() {
        row_start[i] = k;
    }
    for i in (0..nx).rev() {
        row_start[i] = row_start[i].min(row_start[i + 1]);
    }
    let row = |i: usize| &h[row_start[i]..row_start[i + 1]];
    // v' = -M⁻¹ H_(φ, x).
    for j in 0..=n {
        let m = inertia.node_masses[j];
        for a in 0..3 {
            for &(_, col, v) in row(node_index(j) + a) {
                out.entries.push((nx + velocity_index(j) + a, col, -v / m));
            }
        }
    }
    // Ω' = J⁻¹ (τ - Ω × J Ω).
    let g = gradient(rod);
    for s in 0..n {
        let p = rod.orientations[s];
        let inertia_s = inertia.segment_inertias[s];
        let angular_row = nx + angular_index(s);
        // -½ Im(p̄ H_(p, col)) for every column touching segment s's quaternion rows (the four
        // rows' entries merged by column).
        let mut columns: Vec<(usize, Quat)> = Vec::with_capacity(32);
        for c in 0..4 {
            for &(_, col, v) in row(segment_index(s) + c) {
                match columns.iter_mut().find(|(k, _)| *k == col) {
                    Some((_, q)) => q[c] += v,
                    None => {
                        let mut q = [0.0; 4];
                        q[c] = v;
                        columns.push((col, q));
                    }
                }
            }
        }
        for (col, h_col) in columns {
            let t = mul(conj(p), h_col);
            for k in 0..3 {
                out.entries
                    .push((angular_row + k, col, -0.5 * t[k + 1] / inertia_s[k]));
            }
        }
        // ½ Im(δp̄ g) with g = -∂V/∂p.
        let force: Quat = g.orientations[s].map(|c| -c);
        for c in 0..4 {
            let mut unit: Quat = [0.0; 4];
            unit[c] = 1.0;
            let t = mul(conj(unit), force);
            for k in 0..3 {
                out.entries.push((
                    angular_row + k,
                    segment_index(s) + c,
                    0.5 * t[k + 1] / inertia_s[k],
                ));
            }
        }
        // -J⁻¹ ([Ω]x J - [JΩ]x).
        let w = motion.angular_velocities[s];
        let jw = inertia_s * w;
        for k in 0..3 {
            let e = Vec3::AXES[k];
            let column = w.cross(inertia_s * e) - jw.cross(e);
            for r in 0..3 {
                out.entries.push((
                    angular_row + r,
                    nx + angular_index(s) + k,
                    -column[r] / inertia_s[r],
                ));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dynamics::{accelerations, RodModel};
    use crate::quaternion::normalized;
    use crate::rod::{End, Stiffness};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// f(y) in the Jacobian's order.
    fn rhs(rod: &Rod, motion: &RodMotion, inertia: &Inertia) -> Vec<f64> {
        let nx = unknowns(rod);
        let mut out = vec![0.0; nx + velocity_unknowns(rod)];
        for (j, v) in motion.velocities.iter().enumerate() {
            out[node_index(j)..node_index(j) + 3].copy_from_slice(&v.to_array());
        }
        for (s, q) in motion.quaternion_rates(rod).iter().enumerate() {
            out[segment_index(s)..segment_index(s) + 4].copy_from_slice(q);
        }
        let (a, alpha) = accelerations(rod, motion, &RodModel::new(inertia.clone()));
        for (j, v) in a.iter().enumerate() {
            out[nx + velocity_index(j)..nx + velocity_index(j) + 3].copy_from_slice(&v.to_array());
        }
        for (s, w) in alpha.iter().enumerate() {
            out[nx + angular_index(s)..nx + angular_index(s) + 3].copy_from_slice(&w.to_array());
        }
        out
    }

    fn perturbed(rod: &Rod, motion: &RodMotion, index: usize, eps: f64) -> (Rod, RodMotion) {
        let (mut r, mut m) = (rod.clone(), motion.clone());
        let nx = unknowns(rod);
        if index < nx {
            let (block, offset) = (index / 7, index % 7);
            if offset < 3 {
                r.nodes[block][offset] += eps;
            } else {
                r.orientations[block][offset - 3] += eps;
            }
        } else {
            let i = index - nx;
            let (block, offset) = (i / 6, i % 6);
            if offset < 3 {
                m.velocities[block][offset] += eps;
            } else {
                m.angular_velocities[block][offset - 3] += eps;
            }
        }
        (r, m)
    }

    /// The analytic Jacobian equals central differences of f, column by column, for a deformed,
    /// moving rod with a clamp (non-unit quaternions included).
    #[test]
    fn jacobian_matches_finite_differences() {
        let mut rng = ChaCha8Rng::seed_from_u64(21);
        let stiffness = Stiffness {
            shear_extension: Vec3::new(3.0, 4.0, 20.0),
            bending_torsion: Vec3::new(1.5, 2.5, 0.7),
        };
        let mut rod = Rod::straight(4, 2.0, Vec3::ZERO, Vec3::X, Vec3::Y, stiffness).unwrap();
        rod.clamp(End::First);
        let mut r = |s: f64| rng.gen_range(-s..s);
        for node in rod.nodes.iter_mut() {
            *node += Vec3::new(r(0.1), r(0.1), r(0.1));
        }
        for (k, p) in rod.orientations.iter_mut().enumerate() {
            let q = [p[0] + r(0.2), p[1] + r(0.2), p[2] + r(0.2), p[3] + r(0.2)];
            *p = if k % 2 == 0 { normalized(q) } else { q };
        }
        let inertia = Inertia {
            node_masses: (0..5).map(|k| 1.0 + 0.1 * k as f64).collect(),
            segment_inertias: (0..4)
                .map(|k| Vec3::new(0.2, 0.3 + 0.01 * k as f64, 0.4))
                .collect(),
        };
        let motion = RodMotion {
            velocities: (0..5).map(|_| Vec3::new(r(1.0), r(1.0), r(1.0))).collect(),
            angular_velocities: (0..4).map(|_| Vec3::new(r(1.0), r(1.0), r(1.0))).collect(),
        };
        let dense = jacobian(&rod, &motion, &inertia).to_dense();
        let size = dense.len();
        let eps = 1e-6;
        let scale = dense.iter().flatten().fold(0.0f64, |m, v| m.max(v.abs()));
        for col in 0..size {
            let (rp, mp) = perturbed(&rod, &motion, col, eps);
            let (rm, mm) = perturbed(&rod, &motion, col, -eps);
            let (plus, minus) = (rhs(&rp, &mp, &inertia), rhs(&rm, &mm, &inertia));
            for row in 0..size {
                let fd = (plus[row] - minus[row]) / (2.0 * eps);
                assert!(
                    (fd - dense[row][col]).abs() < 1e-6 * scale,
                    "({row}, {col}): {fd} vs {}",
                    dense[row][col]
                );
            }
        }
    }
}
