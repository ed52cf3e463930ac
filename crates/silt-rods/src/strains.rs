//! Discrete strains on the staggered grid (notes, "Discretisation"):
//!
//! ```text
//! Γ_(j-½) = p̄ ((φ_j - φ_(j-1)) / h) p - e3          shear and extension, on segments
//! K_j     = (2 / h̄_j) Im(p̄_(j-½) p_(j+½))            curvature and torsion, on interior nodes
//! ```
//!
//! For a relative rotation by θ about n, `K = (2/h̄) sin(θ/2) n`: the curvature to second order, and
//! polynomial in the quaternions.

use silt_core::Vec3;

use crate::quaternion::{conj, mul, to_body, vector};
use crate::rod::Rod;

/// `Γ` of segment `segment` (between nodes `segment` and `segment + 1`).
pub fn shear_strain(rod: &Rod, segment: usize) -> Vec3 {
    let chord = rod.nodes[segment + 1] - rod.nodes[segment];
    to_body(rod.orientations[segment], chord) * (1.0 / rod.lengths[segment]) - Vec3::Z
}

/// `K` of interior node `node` (1..N-1), between segments `node - 1` and `node`.
pub fn curvature(rod: &Rod, node: usize) -> Vec3 {
    let relative = mul(conj(rod.orientations[node - 1]), rod.orientations[node]);
    2.0 / rod.node_length(node) * vector(relative)
}

/// `K` at a clamped end (body frame of the end segment's boundary node), with its length h/2.
pub fn clamp_curvature(rod: &Rod, clamp: &crate::rod::Clamp) -> (Vec3, f64) {
    use crate::rod::End;
    let n = rod.segments();
    let (relative, h) = match clamp.end {
        End::First => (mul(conj(clamp.frame), rod.orientations[0]), rod.lengths[0]),
        End::Last => (
            mul(conj(rod.orientations[n - 1]), clamp.frame),
            rod.lengths[n - 1],
        ),
    };
    let length = 0.5 * h;
    (2.0 / length * vector(relative), length)
}

/// Strain rates `(Γ̇ per segment, K̇ per interior node)` for node velocities `φ̇` and quaternion rates
/// `ṗ`: `Γ̇ = ṗ̄ d p + p̄ ḋ p + p̄ d ṗ` (`d = Δφ / h`), `K̇ = (2/h̄) Im(ṗ̄_- p_+ + p̄_- ṗ_+)`; the time
/// derivatives of the strains above, as Antman's dissipation needs them.
pub fn strain_rates(
    rod: &Rod,
    velocities: &[Vec3],
    rates: &[crate::quaternion::Quat],
) -> (Vec<Vec3>, Vec<Vec3>) {
    let n = rod.segments();
    let mut gamma_rate = vec![Vec3::ZERO; n];
    let mut curvature_rate = vec![Vec3::ZERO; n.saturating_sub(1)];
    strain_rates_into(rod, velocities, rates, &mut gamma_rate, &mut curvature_rate);
    (gamma_rate, curvature_rate)
}

/// [`strain_rates`] into given buffers (n and n - 1 long).
pub fn strain_rates_into(
    rod: &Rod,
    velocities: &[Vec3],
    rates: &[crate::quaternion::Quat],
    gamma_rate: &mut [Vec3],
    curvature_rate: &mut [Vec3],
) {
    use crate::quaternion::pure_mul;
    for (j, out) in gamma_rate.iter_mut().enumerate() {
        let h = rod.lengths[j];
        let (p, dp) = (rod.orientations[j], rates[j]);
        let d = (rod.nodes[j + 1] - rod.nodes[j]) / h;
        let dd = (velocities[j + 1] - velocities[j]) / h;
        // Γ̇ = ṗ̄ d p + p̄ ḋ p + p̄ d ṗ.
        *out = vector(mul(conj(dp), pure_mul(d, p)))
            + crate::quaternion::to_body(p, dd)
            + vector(mul(conj(p), pure_mul(d, dp)));
    }
    for (k, out) in curvature_rate.iter_mut().enumerate() {
        let j = k + 1;
        let (before, after) = (rod.orientations[j - 1], rod.orientations[j]);
        let rate = vector(mul(conj(rates[j - 1]), after)) + vector(mul(conj(before), rates[j]));
        *out = 2.0 / rod.node_length(j) * rate;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rod::{frame_quaternion, Stiffness};

    /// A straight rod has no strain; stretched by s it has Γ3 = s; bent into a circle of radius R
    /// (frames turning with the tangent about d1 = e_z) it has K = ((2/h) sin(Δφ/2), 0, 0), which is
    /// exactly 1/R for the chord length h = 2R sin(Δφ/2).
    #[test]
    fn straight_stretched_and_circular_rods() {
        let stiffness = Stiffness::circular(0.1, 1.0, 1.0, 1.0);
        let mut rod = Rod::straight(
            10,
            2.0,
            Vec3::ZERO,
            Vec3::new(1.0, 1.0, 0.0),
            Vec3::Z,
            stiffness,
        )
        .unwrap();
        for j in 0..10 {
            assert!(shear_strain(&rod, j).length() < 1e-14);
        }
        for j in 1..10 {
            assert!(curvature(&rod, j).length() < 1e-14);
        }
        for node in rod.nodes.iter_mut() {
            *node *= 1.01;
        }
        assert!((shear_strain(&rod, 4) - Vec3::new(0.0, 0.0, 0.01)).length() < 1e-14);

        // A circle of radius R in the xy plane: segment j's tangent at the mid-angle.
        let (n, radius) = (40, 3.0);
        let dphi = 2.0 * std::f64::consts::PI / n as f64;
        let h = 2.0 * radius * (0.5 * dphi).sin();
        let nodes: Vec<Vec3> = (0..=n)
            .map(|j| radius * Vec3::new((j as f64 * dphi).cos(), (j as f64 * dphi).sin(), 0.0))
            .collect();
        let orientations = (0..n)
            .map(|j| {
                let t = (nodes[j + 1] - nodes[j]).normalize();
                frame_quaternion(Vec3::Z, t.cross(Vec3::Z), t)
            })
            .collect();
        let circle = Rod {
            nodes,
            orientations,
            lengths: vec![h; n],
            rest_curvature: vec![Vec3::ZERO; n - 1],
            stiffness,
            clamps: Vec::new(),
        };
        assert!(shear_strain(&circle, 7).length() < 1e-14);
        let k = curvature(&circle, 5);
        assert!((k.x - 1.0 / radius).abs() < 1e-12, "{k}");
        assert!(k.y.abs() < 1e-14 && k.z.abs() < 1e-14);
    }
}
