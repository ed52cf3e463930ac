//! Shared foundations of Silt: the vector type, the Runge–Kutta coefficients every model steps with,
//! and small numeric helpers.
//!
//! Units: Silt computes in whatever consistent unit system a scene uses (SI recommended).

pub mod lanes;
pub mod model;
pub mod rk3;
pub mod signal;
pub mod simd;

/// Three-component double-precision vector used for positions, velocities, forces and torques.
pub type Vec3 = glam::DVec3;

/// A simulated time for messages: at most 12 significant digits, so that accumulated round-off
/// (4.999999999999916) shows as the time it stands for (5).
pub fn format_time(t: f64) -> String {
    if t == 0.0 || !t.is_finite() {
        return format!("{t}");
    }
    let rounded: f64 = format!("{t:.11e}").parse().unwrap_or(t);
    format!("{rounded}")
}

/// True when every component is finite (no NaN, no infinity).
pub fn is_finite3(v: Vec3) -> bool {
    v.x.is_finite() && v.y.is_finite() && v.z.is_finite()
}

/// `|a − b| / |b|` over all the vectors of two lists (2-norms of the lists as one vector each).
pub fn relative_difference(a: &[Vec3], b: &[Vec3]) -> f64 {
    let difference: f64 = a
        .iter()
        .zip(b)
        .map(|(p, q)| (*p - *q).length_squared())
        .sum();
    let size: f64 = b.iter().map(|q| q.length_squared()).sum();
    (difference / size).sqrt()
}
