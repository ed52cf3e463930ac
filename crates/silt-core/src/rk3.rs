//! Low-storage three-stage Runge–Kutta coefficients of Rai & Moin (1991), shared by the fluid solver and
//! the particle predictor–corrector (Biegert et al. 2017, eq. 19).

/// Explicit weights gamma_k of the current right-hand side (Rai & Moin 1991).
pub const GAMMA: [f64; 3] = [8.0 / 15.0, 5.0 / 12.0, 3.0 / 4.0];
/// Explicit weights zeta_k of the previous stage's right-hand side (Rai & Moin 1991).
pub const ZETA: [f64; 3] = [0.0, -17.0 / 60.0, -5.0 / 12.0];
/// Implicit (Crank–Nicolson) weights alpha_k = (gamma_k + zeta_k) / 2; stage k lasts 2 alpha_k dt.
pub const ALPHA: [f64; 3] = [4.0 / 15.0, 1.0 / 15.0, 1.0 / 6.0];

/// Fraction of the time step taken by stage `k` (2 alpha_k; the three add up to one).
pub fn stage_fraction(k: usize) -> f64 {
    2.0 * ALPHA[k]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stages_are_consistent() {
        for k in 0..3 {
            assert!((GAMMA[k] + ZETA[k] - 2.0 * ALPHA[k]).abs() < 1e-15);
        }
        let total: f64 = (0..3).map(stage_fraction).sum();
        assert!((total - 1.0).abs() < 1e-15);
    }

    #[test]
    fn seed_substeps_have_equal_length() {
        // N_sub = {8, 2, 5}: each sub-step lasts dt/15 (Biegert et al. 2017, sec. 4.3).
        let n = [8.0, 2.0, 5.0];
        for k in 0..3 {
            assert!((stage_fraction(k) / n[k] - 1.0 / 15.0).abs() < 1e-15);
        }
    }
}
