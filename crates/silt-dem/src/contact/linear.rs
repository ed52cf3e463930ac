//! Plain linear spring–dashpot normal law, tuned to a restitution coefficient and a contact duration.

/// Stiffness k_n = m_eff (pi^2 + ln^2 e) / T_c^2 of a damped linear oscillator lasting T_c with restitution e.
pub fn stiffness(effective_mass: f64, e_dry: f64, collision_time: f64) -> f64 {
    let ln_e = e_dry.ln();
    effective_mass * (std::f64::consts::PI.powi(2) + ln_e * ln_e)
        / (collision_time * collision_time)
}

/// Damping d_n = -2 m_eff ln(e) / T_c of the same oscillator.
pub fn damping(effective_mass: f64, e_dry: f64, collision_time: f64) -> f64 {
    -2.0 * effective_mass * e_dry.ln() / collision_time
}

/// Normal force on p along -n: k_n |zeta_n| + d_n g_cp.n.
#[inline]
pub fn normal_force_magnitude(stiffness: f64, damping: f64, gap: f64, normal_speed: f64) -> f64 {
    stiffness * (-gap) + damping * normal_speed
}
