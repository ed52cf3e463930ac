//! The elastic potential and its gradient (notes, "Model" and "Discretisation"):
//!
//! ```text
//! V = Σ_segments (h/2) Γᵀ C_G Γ + Σ_interior nodes (h̄/2) (K - K0)ᵀ C_K (K - K0)
//! ```
//!
//! The gradient is analytic and polynomial. With `m = C_G Γ`, `d = (φ_j - φ_(j-1)) / h` (pure
//! quaternions where multiplied):
//! - `∂V/∂φ_j = p m p̄ = -∂V/∂φ_(j-1)`, the internal force (world frame) of the segment;
//! - `∂V/∂p = -2 h d p m`, since `∂(mᵀ Im(p̄ d p))/∂p = -2 d p m` for pure d and m.
//!
//! With `w = C_K (K - K0)` at node j between `p_-` and `p_+`:
//! - `∂V/∂p_+ = 2 p_- w`, `∂V/∂p_- = -2 p_+ w`.
//!
//! These are gradients in the four quaternion components; with unit quaternions only their part
//! orthogonal to p acts (the couple on the segment is `-½ Im(p̄ ∂V/∂p)` in the body frame).

use silt_core::Vec3;

use crate::quaternion::{conj, mul, mul_pure, pure_mul, to_body, to_world, Quat};
use crate::rod::End;
use crate::rod::Rod;
use crate::strains::{clamp_curvature, curvature, shear_strain};

/// `∂V/∂φ` per node and `∂V/∂p` per segment.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Gradient {
    pub nodes: Vec<Vec3>,
    pub orientations: Vec<Quat>,
}

/// The elastic energy V.
pub fn energy(rod: &Rod) -> f64 {
    let c_g = rod.stiffness.shear_extension;
    let c_k = rod.stiffness.bending_torsion;
    let shear: f64 = (0..rod.segments())
        .map(|j| {
            let gamma = shear_strain(rod, j);
            0.5 * rod.lengths[j] * gamma.dot(c_g * gamma)
        })
        .sum();
    let bending: f64 = (1..rod.segments())
        .map(|j| {
            let k = curvature(rod, j) - rod.rest_curvature[j - 1];
            0.5 * rod.node_length(j) * k.dot(c_k * k)
        })
        .sum();
    let clamps: f64 = rod
        .clamps
        .iter()
        .map(|clamp| {
            let (k, length) = clamp_curvature(rod, clamp);
            0.5 * length * k.dot(c_k * k)
        })
        .sum();
    shear + bending + clamps
}

fn add(a: &mut Quat, b: Quat, scale: f64) {
    for (x, y) in a.iter_mut().zip(b) {
        *x += scale * y;
    }
}

/// The gradient of V (the negative generalised elastic forces): [`generalized_forces`] of the
/// stresses `m = C_G Γ` and moments `w = C_K (K - K0)`, plus the clamps (a node between the fixed
/// frame and the end segment; the frame does not move).
pub fn gradient(rod: &Rod) -> Gradient {
    gradient_with_stresses(rod, &segment_stresses(rod))
}

/// [`gradient`] with the segment stresses given instead of `m = C_G Γ` (the mixed form of the
/// static solver); the moments and clamps as in [`gradient`].
pub fn gradient_with_stresses(rod: &Rod, stresses: &[Vec3]) -> Gradient {
    let c_k = rod.stiffness.bending_torsion;
    let moments: Vec<Vec3> = (0..rod.segments().saturating_sub(1))
        .map(|j| c_k * (curvature(rod, j + 1) - rod.rest_curvature[j]))
        .collect();
    let mut g = generalized_forces(rod, stresses, &moments);
    add_clamp_gradient(rod, &mut g);
    g
}

/// The elastic stresses `m = C_G Γ` of every segment.
pub fn segment_stresses(rod: &Rod) -> Vec<Vec3> {
    (0..rod.segments())
        .map(|j| rod.stiffness.shear_extension * shear_strain(rod, j))
        .collect()
}

/// `Bᵀ (h m, h̄ w)`: the generalised forces (on φ and on the quaternion components) whose power
/// against any rates is `Σ h m · Γ̇ + Σ h̄ w · K̇`, for body-frame segment stresses `m` and node
/// moments `w` (`B` the strain-rate map of [`crate::strains::strain_rates`]). The elastic gradient
/// and Antman's dissipation both go through it.
pub fn generalized_forces(rod: &Rod, stresses: &[Vec3], moments: &[Vec3]) -> Gradient {
    let n = rod.segments();
    let mut out = Gradient {
        nodes: vec![Vec3::ZERO; n + 1],
        orientations: vec![[0.0; 4]; n],
    };
    add_generalized_forces(rod, stresses, moments, &mut out);
    out
}

/// Adds [`generalized_forces`] into `out` (no allocation; the explicit integrator's hot path).
/// Each node and segment entry is written once, from running neighbour terms.
pub fn add_generalized_forces(rod: &Rod, stresses: &[Vec3], moments: &[Vec3], out: &mut Gradient) {
    let n = rod.segments();
    // Nodes: the force of the segment before minus that of the segment after.
    let mut before = Vec3::ZERO;
    for j in 0..=n {
        let after = if j < n {
            to_world(rod.orientations[j], stresses[j])
        } else {
            Vec3::ZERO
        };
        out.nodes[j] += before - after;
        before = after;
    }
    // Segments: ∂/∂p of h mᵀΓ, -2 h d p m = -2 (φ_b - φ_a) p m; the node before (moment w, p_+ = p)
    // gives 2 p_- w, the node after (p_- = p) gives -2 p_+ w.
    for j in 0..n {
        let p = rod.orientations[j];
        let chord = rod.nodes[j + 1] - rod.nodes[j];
        let mut q = mul_pure(pure_mul(chord, p), stresses[j]).map(|c| -2.0 * c);
        if j >= 1 {
            add(
                &mut q,
                mul_pure(rod.orientations[j - 1], moments[j - 1]),
                2.0,
            );
        }
        if j + 1 < n {
            add(&mut q, mul_pure(rod.orientations[j + 1], moments[j]), -2.0);
        }
        add(&mut out.orientations[j], q, 1.0);
    }
}

/// The inner loads of body-frame stresses `m` (segments) and moments `w` (interior nodes): node
/// forces `-∂/∂φ` and segment couples `-½ Im(p̄ ∂/∂p)` of `Bᵀ (h m, h̄ w)`, added into `forces`
/// (world) and `torques` (body). Worked out, for any (not only unit) quaternions:
///
/// ```text
/// node j:        f_j - f_(j-1),  f_j = p_j m_j p̄_j             (segment j's force)
/// segment j:     t_j × m_j,      t_j = p̄_j (φ_(j+1) - φ_j) p_j   (= h (Γ + e3))
/// node between:  q = p̄_- p_+ = (c, s):  p_- gets c w + s × w,  p_+ gets -c w + s × w
/// ```
pub fn add_inner_loads(
    rod: &Rod,
    stresses: &[Vec3],
    moments: &[Vec3],
    forces: &mut [Vec3],
    torques: &mut [Vec3],
) {
    let n = rod.segments();
    let mut before = Vec3::ZERO;
    for j in 0..n {
        let p = rod.orientations[j];
        let m = stresses[j];
        let f = to_world(p, m);
        forces[j] += f - before;
        before = f;
        torques[j] += to_body(p, rod.nodes[j + 1] - rod.nodes[j]).cross(m);
    }
    forces[n] -= before;
    for j in 1..n {
        let q = mul(conj(rod.orientations[j - 1]), rod.orientations[j]);
        add_node_couples(q, moments[j - 1], torques, Some(j - 1), Some(j));
    }
}

/// The couples of a bending node with relative rotation `q = p̄_- p_+` and moment w on the
/// segments before and after it.
fn add_node_couples(
    q: Quat,
    w: Vec3,
    torques: &mut [Vec3],
    before: Option<usize>,
    after: Option<usize>,
) {
    let (c, s) = (q[0], Vec3::new(q[1], q[2], q[3]));
    let turn = s.cross(w);
    if let Some(b) = before {
        torques[b] += c * w + turn;
    }
    if let Some(a) = after {
        torques[a] += -c * w + turn;
    }
}

/// `1/h` per segment and `2/h̄` per interior node: the constant factors of the strains, computed
/// once (divisions are a large part of a force evaluation otherwise).
pub fn strain_scales(rod: &Rod) -> (Vec<f64>, Vec<f64>) {
    let inverse_lengths = rod.lengths.iter().map(|h| 1.0 / h).collect();
    let curvature_scales = (1..rod.segments())
        .map(|j| 2.0 / rod.node_length(j))
        .collect();
    (inverse_lengths, curvature_scales)
}

/// The elastic inner loads (`m = C_G Γ`, `w = C_K (K - K0)`, and the clamps), fused with the
/// strains: [`add_inner_loads`] of [`elastic_stresses`] in one pass, the explicit integrator's hot
/// path. `scales` are [`strain_scales`].
pub fn add_elastic_loads(
    rod: &Rod,
    scales: (&[f64], &[f64]),
    forces: &mut [Vec3],
    torques: &mut [Vec3],
) {
    let (inverse_lengths, curvature_scales) = scales;
    let n = rod.segments();
    let c_g = rod.stiffness.shear_extension;
    let c_k = rod.stiffness.bending_torsion;
    let mut before = Vec3::ZERO;
    for j in 0..n {
        let p = rod.orientations[j];
        let t = to_body(p, rod.nodes[j + 1] - rod.nodes[j]);
        let m = c_g * (t * inverse_lengths[j] - Vec3::Z);
        let f = to_world(p, m);
        forces[j] += f - before;
        before = f;
        torques[j] += t.cross(m);
    }
    forces[n] -= before;
    for j in 1..n {
        let q = mul(conj(rod.orientations[j - 1]), rod.orientations[j]);
        let k = curvature_scales[j - 1] * Vec3::new(q[1], q[2], q[3]);
        let w = c_k * (k - rod.rest_curvature[j - 1]);
        add_node_couples(q, w, torques, Some(j - 1), Some(j));
    }
    for clamp in &rod.clamps {
        let (k, _) = clamp_curvature(rod, clamp);
        let w = c_k * k;
        match clamp.end {
            End::First => {
                let q = mul(conj(clamp.frame), rod.orientations[0]);
                add_node_couples(q, w, torques, None, Some(0));
            }
            End::Last => {
                let q = mul(conj(rod.orientations[n - 1]), clamp.frame);
                add_node_couples(q, w, torques, Some(n - 1), None);
            }
        }
    }
}

/// The elastic stresses `m = C_G Γ` per segment and moments `w = C_K (K - K0)` per interior node,
/// into `stresses` and `moments`.
pub fn elastic_stresses(rod: &Rod, stresses: &mut [Vec3], moments: &mut [Vec3]) {
    let c_g = rod.stiffness.shear_extension;
    let c_k = rod.stiffness.bending_torsion;
    for (j, m) in stresses.iter_mut().enumerate() {
        *m = c_g * shear_strain(rod, j);
    }
    for (j, w) in moments.iter_mut().enumerate() {
        *w = c_k * (curvature(rod, j + 1) - rod.rest_curvature[j]);
    }
}

/// Adds the clamps' bending terms to the gradient `out`.
pub fn add_clamp_gradient(rod: &Rod, out: &mut Gradient) {
    let c_k = rod.stiffness.bending_torsion;
    let n = rod.segments();
    for clamp in &rod.clamps {
        let (k, _) = clamp_curvature(rod, clamp);
        let w = c_k * k;
        match clamp.end {
            End::First => add(&mut out.orientations[0], mul_pure(clamp.frame, w), 2.0),
            End::Last => add(&mut out.orientations[n - 1], mul_pure(clamp.frame, w), -2.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::quaternion::{mul, normalized, to_world};
    use crate::rod::{rotation, Stiffness};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// A deformed rod: random node displacements and random (not unit) quaternions.
    fn deformed(seed: u64, unit: bool) -> Rod {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let stiffness = Stiffness {
            shear_extension: Vec3::new(3.0, 4.0, 20.0),
            bending_torsion: Vec3::new(1.5, 2.5, 0.7),
        };
        let mut rod = Rod::straight(6, 3.0, Vec3::ZERO, Vec3::X, Vec3::Y, stiffness).unwrap();
        rod.lengths[2] *= 1.2;
        rod.clamp(crate::rod::End::First);
        rod.clamp(crate::rod::End::Last);
        for k in rod.rest_curvature.iter_mut() {
            *k = Vec3::new(
                rng.gen_range(-0.3..0.3),
                rng.gen_range(-0.3..0.3),
                rng.gen_range(-0.3..0.3),
            );
        }
        let mut r = |s: f64| rng.gen_range(-s..s);
        for node in rod.nodes.iter_mut() {
            *node += Vec3::new(r(0.1), r(0.1), r(0.1));
        }
        for p in rod.orientations.iter_mut() {
            let q = [p[0] + r(0.2), p[1] + r(0.2), p[2] + r(0.2), p[3] + r(0.2)];
            *p = if unit { normalized(q) } else { q };
        }
        rod
    }

    /// The fused inner loads equal the gradient mapped to node forces and body couples
    /// (`-∂V/∂φ`, `-½ Im(p̄ ∂V/∂p)`), with clamps and rest curvature, for non-unit quaternions; and
    /// the general form equals the generalised forces of arbitrary stresses.
    #[test]
    fn inner_loads_are_the_mapped_gradient() {
        use crate::quaternion::vector;
        for (seed, unit) in [(5, true), (6, false)] {
            let rod = deformed(seed, unit);
            let n = rod.segments();
            let g = gradient(&rod);
            let (mut forces, mut torques) = (vec![Vec3::ZERO; n + 1], vec![Vec3::ZERO; n]);
            let (a, b) = strain_scales(&rod);
            add_elastic_loads(&rod, (&a, &b), &mut forces, &mut torques);
            for (f, gn) in forces.iter().zip(&g.nodes) {
                assert!((*f + *gn).length() < 1e-12, "{f} vs {gn}");
            }
            for ((t, gp), p) in torques.iter().zip(&g.orientations).zip(&rod.orientations) {
                let expected = -0.5 * vector(mul(conj(*p), *gp));
                assert!((*t - expected).length() < 1e-12, "{t} vs {expected}");
            }
            let stresses: Vec<Vec3> = (0..n)
                .map(|j| Vec3::new(0.3, -1.0 + j as f64, 0.7))
                .collect();
            let moments: Vec<Vec3> = (1..n).map(|j| Vec3::new(j as f64, 0.2, -0.4)).collect();
            let general = generalized_forces(&rod, &stresses, &moments);
            let (mut forces, mut torques) = (vec![Vec3::ZERO; n + 1], vec![Vec3::ZERO; n]);
            add_inner_loads(&rod, &stresses, &moments, &mut forces, &mut torques);
            for (f, gn) in forces.iter().zip(&general.nodes) {
                assert!((*f + *gn).length() < 1e-12);
            }
            for ((t, gp), p) in torques
                .iter()
                .zip(&general.orientations)
                .zip(&rod.orientations)
            {
                assert!((*t + 0.5 * vector(mul(conj(*p), *gp))).length() < 1e-12);
            }
        }
    }

    /// The analytic gradient equals central differences of the energy in every component, for unit
    /// and non-unit quaternions.
    #[test]
    fn gradient_matches_finite_differences() {
        for (seed, unit) in [(1, true), (2, false), (3, false)] {
            let rod = deformed(seed, unit);
            let g = gradient(&rod);
            let eps = 1e-6;
            let scale = energy(&rod).max(1.0);
            for j in 0..rod.nodes.len() {
                for axis in 0..3 {
                    let mut plus = rod.clone();
                    let mut minus = rod.clone();
                    plus.nodes[j][axis] += eps;
                    minus.nodes[j][axis] -= eps;
                    let fd = (energy(&plus) - energy(&minus)) / (2.0 * eps);
                    assert!(
                        (fd - g.nodes[j][axis]).abs() < 1e-7 * scale,
                        "node {j} axis {axis}: {fd} vs {}",
                        g.nodes[j][axis]
                    );
                }
            }
            for j in 0..rod.segments() {
                for c in 0..4 {
                    let mut plus = rod.clone();
                    let mut minus = rod.clone();
                    plus.orientations[j][c] += eps;
                    minus.orientations[j][c] -= eps;
                    let fd = (energy(&plus) - energy(&minus)) / (2.0 * eps);
                    assert!(
                        (fd - g.orientations[j][c]).abs() < 1e-7 * scale,
                        "segment {j} component {c}: {fd} vs {}",
                        g.orientations[j][c]
                    );
                }
            }
        }
    }

    /// Objectivity: a rigid rotation and translation of the whole rod (with its clamp frames) leave the
    /// energy unchanged, and the internal forces sum to zero (no net force from the elasticity).
    #[test]
    fn energy_is_frame_indifferent() {
        let rod = deformed(4, true);
        let q = rotation(Vec3::new(0.2, -1.0, 0.6), 2.1);
        let mut moved = rod.clone();
        for node in moved.nodes.iter_mut() {
            *node = to_world(q, *node) + Vec3::new(5.0, -1.0, 2.0);
        }
        for p in moved.orientations.iter_mut() {
            *p = mul(q, *p);
        }
        // Clamp frames are fixed in space: rotated with the rod here, else the energy changes.
        for clamp in moved.clamps.iter_mut() {
            clamp.frame = mul(q, clamp.frame);
        }
        assert!((energy(&moved) - energy(&rod)).abs() < 1e-12 * energy(&rod));
        let mut unclamped_frames = moved.clone();
        unclamped_frames.clamps = rod.clamps.clone();
        assert!((energy(&unclamped_frames) - energy(&rod)).abs() > 1e-6 * energy(&rod));
        let net: Vec3 = gradient(&rod).nodes.iter().sum();
        assert!(net.length() < 1e-12);
        // A straight unstressed rod has no energy whatever its orientation.
        let straight = Rod::straight(
            5,
            1.0,
            Vec3::ONE,
            Vec3::new(1.0, 2.0, 3.0),
            Vec3::X,
            rod.stiffness,
        )
        .unwrap();
        assert!(energy(&straight) < 1e-28);
    }

    /// The strain-rate map and the force map are transposes: for random rates, the power of the
    /// generalised forces of random stresses equals `Σ h m · Γ̇ + Σ h̄ w · K̇`; and Γ̇, K̇ are the time
    /// derivatives of the strains (central differences along the rates).
    #[test]
    fn strain_rates_and_forces_are_transposes() {
        use crate::strains::strain_rates;
        let rod = deformed(5, false);
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        let mut r = || rng.gen_range(-1.0..1.0);
        let velocities: Vec<Vec3> = (0..rod.nodes.len())
            .map(|_| Vec3::new(r(), r(), r()))
            .collect();
        let rates: Vec<Quat> = (0..rod.segments()).map(|_| [r(), r(), r(), r()]).collect();
        let stresses: Vec<Vec3> = (0..rod.segments())
            .map(|_| Vec3::new(r(), r(), r()))
            .collect();
        let moments: Vec<Vec3> = (1..rod.segments())
            .map(|_| Vec3::new(r(), r(), r()))
            .collect();
        let (gamma_rate, curvature_rate) = strain_rates(&rod, &velocities, &rates);
        let f = generalized_forces(&rod, &stresses, &moments);
        let power: f64 = f
            .nodes
            .iter()
            .zip(&velocities)
            .map(|(a, b)| a.dot(*b))
            .sum::<f64>()
            + f.orientations
                .iter()
                .zip(&rates)
                .map(|(a, b)| crate::quaternion::dot(*a, *b))
                .sum::<f64>();
        let strain_power: f64 = (0..rod.segments())
            .map(|j| rod.lengths[j] * stresses[j].dot(gamma_rate[j]))
            .sum::<f64>()
            + (1..rod.segments())
                .map(|j| rod.node_length(j) * moments[j - 1].dot(curvature_rate[j - 1]))
                .sum::<f64>();
        assert!(
            (power - strain_power).abs() < 1e-12 * power.abs().max(1.0),
            "{power} vs {strain_power}"
        );
        // Γ̇ and K̇ are the derivatives of Γ and K along the rates.
        let eps = 1e-6;
        let shifted = |sign: f64| {
            let mut moved = rod.clone();
            for (x, v) in moved.nodes.iter_mut().zip(&velocities) {
                *x += sign * eps * *v;
            }
            for (p, dp) in moved.orientations.iter_mut().zip(&rates) {
                for c in 0..4 {
                    p[c] += sign * eps * dp[c];
                }
            }
            moved
        };
        let (plus, minus) = (shifted(1.0), shifted(-1.0));
        for j in 0..rod.segments() {
            let fd = (shear_strain(&plus, j) - shear_strain(&minus, j)) / (2.0 * eps);
            assert!((fd - gamma_rate[j]).length() < 1e-7, "segment {j}");
        }
        for j in 1..rod.segments() {
            let fd = (curvature(&plus, j) - curvature(&minus, j)) / (2.0 * eps);
            assert!((fd - curvature_rate[j - 1]).length() < 1e-7, "node {j}");
        }
    }

    /// Axial stretch: a straight rod stretched uniformly by Γ3 = F / (E A) is in equilibrium under end
    /// forces ±F: the internal force at the last node is F along the axis, interior nodes balance.
    #[test]
    fn uniform_stretch_carries_the_end_force() {
        let stiffness = Stiffness::circular(0.025, 1e4, 1e4 / 3.0, 1.0);
        let force = 1.0;
        let strain = force / stiffness.shear_extension.z;
        let mut rod = Rod::straight(19, 1.0, Vec3::ZERO, Vec3::X, Vec3::Y, stiffness).unwrap();
        for node in rod.nodes.iter_mut() {
            node.x *= 1.0 + strain;
        }
        let g = gradient(&rod);
        assert!((g.nodes[19] - Vec3::new(force, 0.0, 0.0)).length() < 1e-12);
        assert!((g.nodes[0] + Vec3::new(force, 0.0, 0.0)).length() < 1e-12);
        for j in 1..19 {
            assert!(g.nodes[j].length() < 1e-12);
        }
        // dx = F L / (E A) at the tip.
        assert!((rod.nodes[19].x - 1.0 - force / stiffness.shear_extension.z).abs() < 1e-15);
    }
}
