//! The discrete rod: nodes `φ_j` (`j = 0..N`) and segment quaternions `p_(j-½)` on a staggered grid,
//! with the reference lengths and stiffnesses of the quadratic potentials (notes: "Model").

use silt_core::Vec3;

use crate::quaternion::{from_axis_angle, Quat};

/// Diagonal stiffness matrices in the body frame (directors d1, d2, d3 = tangent).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stiffness {
    /// `C_G = diag(k G A, k G A, E A)`: shear in d1, d2 and extension along d3.
    pub shear_extension: Vec3,
    /// `C_K = diag(E I_1, E I_2, G J)`: bending about d1, d2 and torsion about d3.
    pub bending_torsion: Vec3,
}

impl Stiffness {
    /// A circular cross-section of radius r: `A = π r²`, `I_1 = I_2 = π r⁴ / 4`, `J = I_1 + I_2`, with
    /// Young's modulus E, shear modulus G and shear coefficient k.
    pub fn circular(radius: f64, young: f64, shear: f64, shear_coefficient: f64) -> Self {
        let area = std::f64::consts::PI * radius * radius;
        let inertia = 0.25 * std::f64::consts::PI * radius.powi(4);
        Stiffness {
            shear_extension: Vec3::new(
                shear_coefficient * shear * area,
                shear_coefficient * shear * area,
                young * area,
            ),
            bending_torsion: Vec3::new(young * inertia, young * inertia, shear * 2.0 * inertia),
        }
    }
}

/// One rod: its configuration and reference state.
#[derive(Clone, Debug, PartialEq)]
pub struct Rod {
    /// `φ_j`, N + 1 nodes.
    pub nodes: Vec<Vec3>,
    /// `p_(j-½)`, N segment quaternions `[w, x, y, z]` (unit up to drift).
    pub orientations: Vec<Quat>,
    /// Reference length `h_(j-½)` of each segment.
    pub lengths: Vec<f64>,
    /// Rest curvature and twist `K0_j` of each interior node (N - 1), body frame.
    pub rest_curvature: Vec<Vec3>,
    pub stiffness: Stiffness,
    /// Clamped ends: a fixed frame the end segment is bent against (see [`Clamp`]).
    pub clamps: Vec<Clamp>,
}

/// Which end of the rod.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    First,
    Last,
}

/// A clamped end: the end node is held (by the integrator) and the cross-section at it keeps the
/// orientation `frame`. The end segment bends against that frame through a boundary node of length
/// h/2 (half the end segment), `K = (2 / (h/2)) Im(p̄_frame p_0)` at the first end and
/// `(2 / (h/2)) Im(p̄_N p_frame)` at the last: the clamp sits exactly at the end node and the
/// discretisation stays second order (holding the end segment's orientation instead would clamp the
/// rod half a segment inside, an O(h) error: -1.0 % on PyElastica's cantilever at N = 100).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Clamp {
    pub end: End,
    pub frame: crate::quaternion::Quat,
}

impl Rod {
    /// A straight rod of `segments` equal segments from `start` to `start + length t`, its first
    /// director `d1` along `normal` (made perpendicular to t), stress-free.
    pub fn straight(
        segments: usize,
        length: f64,
        start: Vec3,
        tangent: Vec3,
        normal: Vec3,
        stiffness: Stiffness,
    ) -> Result<Rod, String> {
        if segments == 0 {
            return Err("a rod needs at least one segment".into());
        }
        if !(length.is_finite() && length > 0.0) {
            return Err(format!(
                "rod length must be positive and finite, got {length}"
            ));
        }
        let t = tangent
            .try_normalize()
            .ok_or("the tangent must be a non-zero vector")?;
        let d1 = (normal - t * t.dot(normal))
            .try_normalize()
            .ok_or("the normal must not be parallel to the tangent")?;
        let orientation = frame_quaternion(d1, t.cross(d1), t);
        let h = length / segments as f64;
        Ok(Rod {
            nodes: (0..=segments).map(|j| start + t * (h * j as f64)).collect(),
            orientations: vec![orientation; segments],
            lengths: vec![h; segments],
            rest_curvature: vec![Vec3::ZERO; segments - 1],
            stiffness,
            clamps: Vec::new(),
        })
    }

    /// Clamps the `end` in its current orientation (the end node's position is held by the
    /// integrator).
    pub fn clamp(&mut self, end: End) {
        let frame = match end {
            End::First => self.orientations[0],
            End::Last => self.orientations[self.segments() - 1],
        };
        self.clamps.push(Clamp { end, frame });
    }

    /// Bows the rod sideways by `amplitude sin(π s / L)` along `direction` (an imperfection that
    /// lets a symmetric buckling problem choose a branch), turning each segment's frame with its
    /// chord by the smallest rotation.
    pub fn bow(&mut self, amplitude: f64, direction: Vec3) {
        let total: f64 = self.lengths.iter().sum();
        let mut s = 0.0;
        let before = self.nodes.clone();
        for (j, node) in self.nodes.iter_mut().enumerate() {
            if j > 0 {
                s += self.lengths[j - 1];
            }
            *node += amplitude * (std::f64::consts::PI * s / total).sin() * direction;
        }
        for j in 0..self.segments() {
            let old = (before[j + 1] - before[j]).normalize();
            let new = (self.nodes[j + 1] - self.nodes[j]).normalize();
            let turn = glam::DQuat::from_rotation_arc(old, new);
            let p = self.orientations[j];
            let q = [turn.w, turn.x, turn.y, turn.z];
            self.orientations[j] = crate::quaternion::mul(q, p);
        }
    }

    /// Number of segments N.
    pub fn segments(&self) -> usize {
        self.orientations.len()
    }

    /// Length `h̄_j = (h_(j-½) + h_(j+½)) / 2` that interior node j (1..N-1) stands for.
    pub fn node_length(&self, node: usize) -> f64 {
        0.5 * (self.lengths[node - 1] + self.lengths[node])
    }
}

/// The unit quaternion whose rotation maps `e1, e2, e3` to the orthonormal right-handed `d1, d2, d3`
/// (set-up only: Shepperd's method on the rotation matrix).
pub fn frame_quaternion(d1: Vec3, d2: Vec3, d3: Vec3) -> Quat {
    let matrix = glam::DMat3::from_cols(d1, d2, d3);
    let q = glam::DQuat::from_mat3(&matrix).normalize();
    let q = [q.w, q.x, q.y, q.z];
    // Same sign convention everywhere: non-negative scalar part.
    if q[0] < 0.0 {
        q.map(|c| -c)
    } else {
        q
    }
}

/// A rotation of the whole rod (tests and set-up).
pub fn rotation(axis: Vec3, angle: f64) -> Quat {
    from_axis_angle(axis.normalize(), angle)
}
