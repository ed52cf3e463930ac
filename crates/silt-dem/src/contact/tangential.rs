//! Tangential contact forces with memory: the seed's Coulomb-limited spring with static/kinetic switching
//! (Thornton et al. 2013; Biegert et al. 2017, eq. 12-17 and Appendix C), and the LAMMPS
//! `hertz/history` shear spring for comparison runs.

use super::ContactState;
use crate::geometry::ContactGeometry;
use crate::Vec3;

/// Coefficients of the seed's tangential spring for one pair.
#[derive(Clone, Copy, Debug)]
pub struct SpringCoefficients {
    /// k_t = kappa m_eff pi^2 / T_c^2 (eq. 15).
    pub stiffness: f64,
    /// d_t = 2 sqrt(m_eff k_t) (-ln e) / sqrt(pi^2 + ln^2 e) (eq. 16).
    pub damping: f64,
    pub mu_static: f64,
    pub mu_kinetic: f64,
}

/// Rotates the stored spring onto the current tangent plane and keeps its length (Appendix C, steps 1-2).
#[inline]
fn rotate_onto_tangent_plane(spring: Vec3, normal: Vec3) -> Vec3 {
    let projected = spring - spring.dot(normal) * normal;
    let length = projected.length();
    if length > 0.0 {
        projected * (spring.length() / length)
    } else {
        projected
    }
}

/// Tangential force on p, F_t = min(|F_t,LS|, mu |F_n|) t with F_t,LS = -k_t zeta_t - d_t g_t,cp
/// (eq. 12-14); advances the spring by `increment` g_t,cp and stores it when `increment` is given (Appendix C).
/// Returns the force and whether the contact slides.
#[inline(always)]
pub fn spring_history_force(
    c: &SpringCoefficients,
    g: &ContactGeometry,
    normal_force: f64,
    state: &mut ContactState,
    increment: Option<f64>,
) -> (Vec3, bool) {
    let mut spring = rotate_onto_tangent_plane(state.spring, g.normal);
    if let Some(h) = increment {
        spring += h * g.tangential_velocity;
    }
    let trial = -c.stiffness * spring - c.damping * g.tangential_velocity;
    let trial_magnitude = trial.length();
    let limit_static = c.mu_static * normal_force.abs();
    let limit_kinetic = c.mu_kinetic * normal_force.abs();
    // Static/kinetic switch (eq. 17): stick until mu_s is exceeded, then slide on mu_k until F_t,LS drops below it.
    let sliding = if state.sliding {
        trial_magnitude >= limit_kinetic
    } else {
        trial_magnitude > limit_static
    };
    let force = if sliding && trial_magnitude > 0.0 {
        let direction = trial / trial_magnitude;
        let force = limit_kinetic * direction;
        // While sliding the spring is reset to the length that carries the Coulomb force (Appendix C, step 4).
        spring = -(force + c.damping * g.tangential_velocity) / c.stiffness;
        force
    } else {
        trial
    };
    if increment.is_some() {
        state.spring = spring;
        state.sliding = sliding;
    }
    (force, sliding)
}

/// `force.length() > limit` for a limit >= 0, without the square root when the force is clearly below the
/// limit (sticking contacts, the usual case): |F|^2 < limit^2 (1 - 1e-12) implies |F| <= limit whatever the
/// round-off, and otherwise the comparison is made exactly as written.
#[inline(always)]
fn exceeds(force: Vec3, limit: f64) -> bool {
    let magnitude_squared = force.length_squared();
    magnitude_squared >= limit * limit * (1.0 - 1e-12) && magnitude_squared.sqrt() > limit
}

/// Coefficients of the LAMMPS `gran/hooke|hertz/history` shear spring.
#[derive(Clone, Copy, Debug)]
pub struct ShearHistoryCoefficients {
    pub k_t: f64,
    pub gamma_t: f64,
    pub mu: f64,
    pub effective_mass: f64,
    /// sqrt(delta R_eff) for the Hertzian variant, 1 for the Hookean one.
    pub area_factor: f64,
}

/// LAMMPS-style shear force: F_t = -f (k_t s + m_eff gamma_t v_t), capped at mu |F_n| with the stored
/// shear displacement s rescaled to the cap; s is projected onto the tangent plane (length not kept).
#[inline(always)]
pub fn shear_history_force(
    c: &ShearHistoryCoefficients,
    g: &ContactGeometry,
    normal_force: f64,
    state: &mut ContactState,
    increment: Option<f64>,
) -> (Vec3, bool) {
    let mut shear = state.spring;
    if let Some(h) = increment {
        shear += h * g.tangential_velocity;
    }
    shear -= shear.dot(g.normal) * g.normal;
    let damping = c.effective_mass * c.gamma_t * g.tangential_velocity;
    let mut force = -c.area_factor * (c.k_t * shear + damping);
    let limit = c.mu * normal_force.abs();
    let sliding = exceeds(force, limit);
    if sliding {
        let magnitude = force.length();
        let ratio = if magnitude > 0.0 {
            limit / magnitude
        } else {
            0.0
        };
        shear = ratio * (shear + damping / c.k_t) - damping / c.k_t;
        force *= ratio;
    }
    if increment.is_some() {
        state.spring = shear;
        state.sliding = sliding;
    }
    (force, sliding)
}
