//! Quaternion arithmetic on plain `[w, x, y, z]` arrays: the rod's unknowns need not be unit
//! quaternions between projections, and the formulas of the seed are polynomials in their four
//! components, so they are written here without normalising (unlike `glam::DQuat`'s rotations).

use silt_core::Vec3;

/// A quaternion `w + x i + y j + z k` as `[w, x, y, z]`.
pub type Quat = [f64; 4];

/// `a b`.
pub fn mul(a: Quat, b: Quat) -> Quat {
    [
        a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
        a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
        a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
        a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0],
    ]
}

/// `ā`.
pub fn conj(a: Quat) -> Quat {
    [a[0], -a[1], -a[2], -a[3]]
}

/// The pure quaternion of a vector.
pub fn pure(v: Vec3) -> Quat {
    [0.0, v.x, v.y, v.z]
}

/// The vector part `Im(a)`.
pub fn vector(a: Quat) -> Vec3 {
    Vec3::new(a[1], a[2], a[3])
}

/// `|a|²`.
pub fn norm_squared(a: Quat) -> f64 {
    a.iter().map(|c| c * c).sum()
}

/// `a / |a|`.
pub fn normalized(a: Quat) -> Quat {
    let inverse = 1.0 / norm_squared(a).sqrt();
    a.map(|c| c * inverse)
}

/// 4D inner product `⟨a, b⟩ = Re(ā b)`.
pub fn dot(a: Quat, b: Quat) -> f64 {
    a.iter().zip(&b).map(|(x, y)| x * y).sum()
}

/// `p̄ v p` for a vector v: the body-frame components of v when p is a unit quaternion (times |p|²
/// otherwise). Expanded: `(w² - u·u) v + 2 (u·v) u - 2 w (u × v)` for `p = (w, u)`.
pub fn to_body(p: Quat, v: Vec3) -> Vec3 {
    let (w, u) = (p[0], vector(p));
    (w * w - u.dot(u)) * v + 2.0 * u.dot(v) * u - 2.0 * w * u.cross(v)
}

/// `p v p̄`: the world-frame vector of body components v for a unit p; expanded as [`to_body`]
/// with `u → -u`.
pub fn to_world(p: Quat, v: Vec3) -> Vec3 {
    let (w, u) = (p[0], vector(p));
    (w * w - u.dot(u)) * v + 2.0 * u.dot(v) * u + 2.0 * w * u.cross(v)
}

/// `p v` for a vector v (a pure quaternion): `(-u·v, w v + u × v)`.
pub fn mul_pure(p: Quat, v: Vec3) -> Quat {
    let (w, u) = (p[0], vector(p));
    let r = w * v + u.cross(v);
    [-u.dot(v), r.x, r.y, r.z]
}

/// `v p` for a vector v: `(-v·u, w v + v × u)`.
pub fn pure_mul(v: Vec3, p: Quat) -> Quat {
    let (w, u) = (p[0], vector(p));
    let r = w * v + v.cross(u);
    [-v.dot(u), r.x, r.y, r.z]
}

/// The unit quaternion of a rotation by `angle` about the unit `axis` (set-up only).
pub fn from_axis_angle(axis: Vec3, angle: f64) -> Quat {
    let (s, c) = (0.5 * angle).sin_cos();
    [c, s * axis.x, s * axis.y, s * axis.z]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sandwich_products_rotate_like_glam() {
        let axis = Vec3::new(0.3, -0.5, 0.8).normalize();
        let p = from_axis_angle(axis, 1.1);
        let q = glam::DQuat::from_axis_angle(axis, 1.1);
        let v = Vec3::new(0.7, 0.1, -2.0);
        assert!((to_world(p, v) - q * v).length() < 1e-14);
        assert!((to_body(p, v) - q.inverse() * v).length() < 1e-14);
        let r = from_axis_angle(Vec3::Z, 0.4);
        let composed =
            glam::DQuat::from_axis_angle(axis, 1.1) * glam::DQuat::from_axis_angle(Vec3::Z, 0.4);
        let pr = mul(p, r);
        assert!((to_world(pr, v) - composed * v).length() < 1e-14);
        assert!((norm_squared(pr) - 1.0).abs() < 1e-15);
        // The expanded products equal the general ones, for non-unit quaternions too.
        let q = [0.3, -1.2, 0.5, 0.9];
        let general_body = vector(mul(mul(conj(q), pure(v)), q));
        let general_world = vector(mul(mul(q, pure(v)), conj(q)));
        assert!((to_body(q, v) - general_body).length() < 1e-13);
        assert!((to_world(q, v) - general_world).length() < 1e-13);
        let (a, b) = (mul_pure(q, v), mul(q, pure(v)));
        let (c, d) = (pure_mul(v, q), mul(pure(v), q));
        for k in 0..4 {
            assert!((a[k] - b[k]).abs() < 1e-14 && (c[k] - d[k]).abs() < 1e-14);
        }
    }
}
