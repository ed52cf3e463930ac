//! Hertzian normal law with viscous damping in the form of LAMMPS `gran/hertz/history`:
//! F_n = sqrt(delta R_eff) (k_n delta - m_eff gamma_n v_n), so that Silt can be compared with LAMMPS
//! on the same problem.

use serde::{Deserialize, Serialize};

/// Coefficients of the LAMMPS-style Hertz law (same meaning and units as `pair_style gran/hertz/history`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct HertzCoefficients {
    /// Elastic constant k_n.
    pub k_n: f64,
    /// Elastic constant of the tangential spring k_t (LAMMPS default 2/7 k_n).
    pub k_t: f64,
    /// Normal viscous damping gamma_n (1/time, multiplied by m_eff).
    pub gamma_n: f64,
    /// Tangential viscous damping gamma_t (LAMMPS default gamma_n / 2).
    pub gamma_t: f64,
}

impl HertzCoefficients {
    /// The coefficients with LAMMPS' defaults for those not given: k_t = 2/7 k_n, gamma_t = gamma_n / 2.
    pub fn lammps(k_n: f64, gamma_n: f64, k_t: Option<f64>, gamma_t: Option<f64>) -> Self {
        HertzCoefficients {
            k_n,
            k_t: k_t.unwrap_or(2.0 / 7.0 * k_n),
            gamma_n,
            gamma_t: gamma_t.unwrap_or(0.5 * gamma_n),
        }
    }
}

/// Area factor sqrt(delta R_eff) that turns the Hookean law into a Hertzian one.
#[inline]
pub fn hertz_factor(gap: f64, effective_radius: f64) -> f64 {
    (-gap * effective_radius).sqrt()
}

/// Normal force on p along -n: sqrt(delta R_eff) (k_n delta + m_eff gamma_n g_cp.n).
#[inline]
pub fn normal_force_magnitude(
    c: &HertzCoefficients,
    gap: f64,
    normal_speed: f64,
    effective_mass: f64,
    effective_radius: f64,
) -> f64 {
    hertz_factor(gap, effective_radius)
        * (c.k_n * (-gap) + effective_mass * c.gamma_n * normal_speed)
}
