//! Time integration of the particle equations of motion.
//!
//! * [`Integrator::PredictorCorrector`]: the seed's scheme (Biegert et al. 2017, eq. 19) inside each of the
//!   three RK stages, with N_sub,k sub-steps of equal length per stage (sec. 4.3; {8, 2, 5} by default).
//! * [`Integrator::VelocityVerlet`]: the velocity-Verlet scheme of LAMMPS `fix nve/sphere`, one force
//!   evaluation per step, for like-for-like comparisons with LAMMPS.

use crate::Vec3;
use serde::{Deserialize, Serialize};

/// Particle time integrator, chosen by name in the scene.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum Integrator {
    /// RK3 predictor–corrector (eq. 19) with `substeps[k]` equal sub-steps in stage k.
    PredictorCorrector { substeps: [u32; 3] },
    /// Velocity Verlet (half kick, drift, force, half kick).
    VelocityVerlet,
    /// Forward Euler velocity / Crank–Nicolson position per RK stage (seed eq. 18); kept to show why the
    /// predictor–corrector is needed (it over-predicts rebounds at T_c = 10 dt).
    EulerCrankNicolson { substeps: [u32; 3] },
}

impl Integrator {
    /// The seed's default: predictor–corrector with {8, 2, 5} sub-steps (15 per step).
    pub const SEED: Integrator = Integrator::PredictorCorrector {
        substeps: [8, 2, 5],
    };

    /// The integrator as a user names it, with its sub-steps: `predictor-corrector (seed eq. 19),
    /// sub-steps [8, 2, 5]`.
    pub fn describe(&self) -> String {
        match self {
            Integrator::PredictorCorrector { substeps } => {
                format!("predictor-corrector (seed eq. 19), sub-steps {substeps:?}")
            }
            Integrator::VelocityVerlet => "velocity Verlet".into(),
            Integrator::EulerCrankNicolson { substeps } => {
                format!("Euler / Crank–Nicolson (seed eq. 18), sub-steps {substeps:?}")
            }
        }
    }

    /// Number of force evaluations per time step.
    pub fn evaluations_per_step(&self) -> u32 {
        match self {
            Integrator::PredictorCorrector { substeps } => 2 * substeps.iter().sum::<u32>(),
            Integrator::EulerCrankNicolson { substeps } => substeps.iter().sum::<u32>(),
            Integrator::VelocityVerlet => 1,
        }
    }

    /// Shortest (sub)step, as a fraction of the time step.
    pub fn smallest_substep_fraction(&self) -> f64 {
        match self {
            Integrator::PredictorCorrector { substeps }
            | Integrator::EulerCrankNicolson { substeps } => (0..3)
                .map(|k| silt_core::rk3::stage_fraction(k) / substeps[k] as f64)
                .fold(f64::INFINITY, f64::min),
            Integrator::VelocityVerlet => 1.0,
        }
    }
}

/// Predictor velocity, eq. (19a) on a sub-step of length h in stage k:
/// u~ = u + h/(2 alpha_k) [gamma_k a + zeta_k a_prev], with a = F/m.
#[inline]
pub fn predict_velocity(u: Vec3, accel: Vec3, previous_accel: Vec3, h: f64, stage: usize) -> Vec3 {
    use silt_core::rk3::{ALPHA, GAMMA, ZETA};
    let scale = h / (2.0 * ALPHA[stage]);
    u + scale * (GAMMA[stage] * accel + ZETA[stage] * previous_accel)
}

/// Crank–Nicolson position update, eq. (19b, 19d): x + h/2 (u_new + u).
#[inline]
pub fn trapezoid(x: Vec3, u_new: Vec3, u: Vec3, h: f64) -> Vec3 {
    x + 0.5 * h * (u_new + u)
}

/// Corrector velocity, eq. (19c): u + h/2 (a(x~, u~) + a(x, u)).
#[inline]
pub fn correct_velocity(u: Vec3, predicted_accel: Vec3, accel: Vec3, h: f64) -> Vec3 {
    u + 0.5 * h * (predicted_accel + accel)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_substeps_cost_thirty_evaluations() {
        assert_eq!(Integrator::SEED.evaluations_per_step(), 30);
        assert!((Integrator::SEED.smallest_substep_fraction() - 1.0 / 15.0).abs() < 1e-15);
    }

    #[test]
    fn constant_acceleration_is_integrated_exactly() {
        // Free fall over one full RK3 step without sub-steps: u = g t, x = g t^2 / 2.
        let g = Vec3::new(0.0, 0.0, -9.81);
        let (mut x, mut u) = (Vec3::ZERO, Vec3::ZERO);
        let dt = 0.1;
        for k in 0..3 {
            let h = silt_core::rk3::stage_fraction(k) * dt;
            let u_pred = predict_velocity(u, g, g, h, k);
            let u_new = correct_velocity(u, g, g, h);
            assert!((u_pred - u_new).length() < 1e-15);
            x = trapezoid(x, u_new, u, h);
            u = u_new;
        }
        assert!((u - g * dt).length() < 1e-14);
        assert!((x - 0.5 * g * dt * dt).length() < 1e-14);
    }
}
