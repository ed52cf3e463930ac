//! Radau IIA of order 5 (three-stage collocation, stiffly accurate, L-stable) with step-size control,
//! after Hairer & Wanner, *Solving ODEs II* (1996), §IV.8, the method of their code RADAU5:
//!
//! - the stage increments `Z = Y - y` solve `Z = h (A ⊗ I) F(y + Z)` by simplified Newton
//!   iterations; in the coordinates `W = (T⁻¹ ⊗ I) Z` that diagonalise `A⁻¹` the iteration matrix
//!   splits into one real system `(γ/h - J)` and one complex system `((α + iβ)/h - J)`, both banded
//!   here since J is;
//! - the iteration stops when the predicted error `θ/(1-θ) |ΔW|` is below a fraction of the
//!   tolerance, and gives up (halving h) when it contracts too slowly;
//! - the local error is the embedded estimate `(γ/h - J)⁻¹ (f(y) + Σ e_i Z_i / h)` (filtered, so it
//!   stays bounded for stiff components), refined once after a rejection;
//! - the new step is `h (0.9 / err)^{1/4}` (with the predictive controller of Gustafsson), limited
//!   to `[h/5, 8h]`; the Jacobian and its factorisations are reused while Newton contracts fast.
//!
//! The tolerances follow RADAU5's convention: the user's `rtol` is mapped to `0.1 rtol^(2/3)`
//! internally (the estimate is of order 3), with `atol` scaled alike.

use num_complex::Complex64;

use crate::band::{BandLu, BandMatrix, Singular};

/// The matrices `c I - J` that Radau IIA solves with, for its real shift `c = γ/h` and its complex
/// shift `(α + iβ)/h`: factorised once per step size, used for every Newton iteration.
pub trait IterationMatrix {
    fn factor(&mut self, real_shift: f64, complex_shift: Complex64) -> Result<(), Singular>;
    /// Solves `(c I - J) x = b` in place with the real shift.
    fn solve_real(&self, b: &mut [f64]);
    /// Solves `(c I - J) x = b` in place with the complex shift.
    fn solve_complex(&self, b: &mut [Complex64]);
}

/// A stiff first-order system `y' = f(t, y)`.
pub trait StiffSystem {
    /// The Jacobian, in whatever form its iteration matrices are best factorised.
    type Jacobian: IterationMatrix;
    fn dimension(&self) -> usize;
    fn rhs(&mut self, t: f64, y: &[f64], dy: &mut [f64]);
    /// `∂f/∂y` at (t, y).
    fn jacobian(&mut self, t: f64, y: &[f64]) -> Self::Jacobian;
    /// Called on every accepted step: projects y back onto invariants (drift control). Returns
    /// whether y changed.
    fn project(&mut self, _y: &mut [f64]) -> bool {
        false
    }
}

/// A banded Jacobian and the band LU factorisations of its iteration matrices: the general case.
pub struct BandJacobian {
    pub matrix: BandMatrix<f64>,
    real: Option<BandLu<f64>>,
    complex: Option<BandLu<Complex64>>,
}

impl BandJacobian {
    pub fn new(matrix: BandMatrix<f64>) -> Self {
        BandJacobian {
            matrix,
            real: None,
            complex: None,
        }
    }
}

impl IterationMatrix for BandJacobian {
    fn factor(&mut self, real_shift: f64, complex_shift: Complex64) -> Result<(), Singular> {
        let (lower, upper) = self.matrix.bandwidths();
        let n = self.matrix.size();
        let mut e1 = BandMatrix::<f64>::zeros(n, lower, upper);
        self.matrix.shifted_negative(real_shift, &mut e1);
        let mut e2 = BandMatrix::<Complex64>::zeros(n, lower, upper);
        self.matrix.shifted_negative(complex_shift, &mut e2);
        self.real = Some(BandLu::factor(e1)?);
        self.complex = Some(BandLu::factor(e2)?);
        Ok(())
    }

    fn solve_real(&self, b: &mut [f64]) {
        self.real.as_ref().expect("factored").solve(b);
    }

    fn solve_complex(&self, b: &mut [Complex64]) {
        self.complex.as_ref().expect("factored").solve(b);
    }
}

/// Tolerances and step limits.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RadauOptions {
    pub relative_tolerance: f64,
    pub absolute_tolerance: f64,
    /// First step (0: `1e-6` of the interval, at most).
    pub initial_step: f64,
    pub max_step: f64,
    /// Accepted and rejected steps allowed per call of [`Radau5::integrate`].
    pub max_steps: usize,
    /// Keep the Jacobian for the next step while Newton contracts at least this fast (RADAU5's
    /// `THET`, 0.001; larger values suit Jacobians that are expensive against a step).
    pub jacobian_reuse: f64,
}

impl Default for RadauOptions {
    fn default() -> Self {
        RadauOptions {
            relative_tolerance: 1e-6,
            absolute_tolerance: 1e-6,
            initial_step: 0.0,
            max_step: f64::INFINITY,
            max_steps: 1_000_000,
            jacobian_reuse: JACOBIAN_REUSE_THETA,
        }
    }
}

/// Counters, as RADAU5 reports them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RadauStats {
    pub accepted_steps: usize,
    pub rejected_steps: usize,
    pub rhs_evaluations: usize,
    pub jacobian_evaluations: usize,
    pub factorizations: usize,
    pub newton_iterations: usize,
    /// Steps whose Newton iteration failed (diverged or contracted too slowly).
    pub newton_failures: usize,
}

/// Why an integration stopped short.
#[derive(Clone, Debug, PartialEq)]
pub enum RadauError {
    StepTooSmall { time: f64, step: f64 },
    TooManySteps { time: f64 },
    SingularMatrix { time: f64, column: usize },
    NotFinite { time: f64 },
}

impl std::fmt::Display for RadauError {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            RadauError::StepTooSmall { time, step } => write!(
                f,
                "Radau IIA: the step fell to {step:e} at t = {} (the problem is too stiff for the tolerance or the solution blows up)",
                silt_core::format_time(*time)
            ),
            RadauError::TooManySteps { time } => {
                write!(f, "Radau IIA: step limit reached at t = {}", silt_core::format_time(*time))
            }
            RadauError::SingularMatrix { time, column } => write!(
                f,
                "Radau IIA: singular iteration matrix at t = {} (column {column})", silt_core::format_time(*time)
            ),
            RadauError::NotFinite { time } => {
                write!(f, "Radau IIA: the solution is no longer finite at t = {}", silt_core::format_time(*time))
            }
        }
    }
}

impl std::error::Error for RadauError {}

// The method's constants (Hairer & Wanner, RADAU5): nodes c1, c2 (c3 = 1), the eigenvalues of A⁻¹
// (γ real, α ± iβ), the transformation T that block-diagonalises A⁻¹ and its inverse, and the
// coefficients of the embedded error estimate. A test checks T⁻¹ A⁻¹ T against them.
const SQRT6: f64 = 2.449_489_742_783_178;
const C1: f64 = (4.0 - SQRT6) / 10.0;
const C2: f64 = (4.0 + SQRT6) / 10.0;
const C1M1: f64 = C1 - 1.0;
const C2M1: f64 = C2 - 1.0;
const C1MC2: f64 = C1 - C2;
const DD1: f64 = -(13.0 + 7.0 * SQRT6) / 3.0;
const DD2: f64 = (-13.0 + 7.0 * SQRT6) / 3.0;
const DD3: f64 = -1.0 / 3.0;
const T: [[f64; 3]; 3] = [
    [
        9.123_239_487_089_294e-2,
        -0.141_255_295_020_954_2,
        -3.002_919_410_514_742_4e-2,
    ],
    [
        0.241_717_932_707_107,
        0.204_129_352_293_799_93,
        0.382_942_112_757_262,
    ],
    [0.966_048_182_615_093, 1.0, 0.0],
];
const TI: [[f64; 3]; 3] = [
    [
        4.325_579_890_063_155,
        0.339_199_251_815_809_9,
        0.541_770_539_935_874_9,
    ],
    [
        -4.178_718_591_551_905,
        -0.327_682_820_761_062_4,
        0.476_623_554_500_550_45,
    ],
    [
        -0.502_872_634_945_786_9,
        2.571_926_949_855_605,
        -0.596_039_204_828_224_9,
    ],
];

/// `(γ, α, β)`: the real eigenvalue of A⁻¹ and the complex pair α ± iβ.
fn eigenvalues() -> (f64, f64, f64) {
    let (c81, c9) = (81f64.cbrt(), 9f64.cbrt());
    let gamma = 30.0 / (6.0 + c81 - c9);
    let alpha = (12.0 - c81 + c9) / 60.0;
    let beta = (c81 + c9) * 3f64.sqrt() / 60.0;
    let norm = alpha * alpha + beta * beta;
    (gamma, alpha / norm, beta / norm)
}

const SAFETY: f64 = 0.9;
const MAX_NEWTON: usize = 7;
/// Reuse the Jacobian when Newton contracts at least this fast.
const JACOBIAN_REUSE_THETA: f64 = 1e-3;
/// Keep h (and the factorisations) when the proposed change is within [1, 1.2].
const KEEP_STEP: (f64, f64) = (1.0, 1.2);
const UROUND: f64 = 1e-16;

/// Everything the integrator carries from one call to the next: what a checkpoint must hold for a
/// resumed run to take exactly the steps of a continuing one. The Jacobian and its factorisations are
/// not stored but recomputed (bit for bit) from the point and the step they were taken at.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RadauMemory {
    pub step: f64,
    pub first: bool,
    pub last_rejected: bool,
    pub previous_step: f64,
    pub previous_error: f64,
    pub accepted_with_controller: usize,
    pub theta: f64,
    pub faccon: f64,
    pub newton_limit: f64,
    pub stats: RadauStats,
    /// f(t, y) at the current point, once evaluated.
    pub derivative: Option<Vec<f64>>,
    /// The collocation polynomial of the last accepted step and its step.
    pub continuation: Option<([Vec<f64>; 3], f64)>,
    /// Where the Jacobian in use was evaluated, whether it is fresh, and the step its iteration
    /// matrices are factorised for.
    pub jacobian_point: Option<(f64, Vec<f64>)>,
    pub jacobian_fresh: bool,
    pub factored_step: Option<f64>,
}

/// The integrator's state between calls: step size, controller memory, Jacobian and factorisations,
/// the collocation polynomial of the last step (to start Newton), and statistics.
pub struct Radau5<M: IterationMatrix> {
    pub options: RadauOptions,
    pub stats: RadauStats,
    /// The step the controller proposes next.
    pub step: f64,
    rtol: f64,
    atol: f64,
    newton_tolerance: f64,
    first: bool,
    last_rejected: bool,
    previous_step: f64,
    previous_error: f64,
    accepted_with_controller: usize,
    theta: f64,
    faccon: f64,
    jacobian: Option<M>,
    /// (t, y) of the Jacobian in use (for checkpoints).
    jacobian_point: Option<(f64, Vec<f64>)>,
    jacobian_fresh: bool,
    /// The step the iteration matrices are factorised for.
    factored_step: Option<f64>,
    /// A cap on the step after Newton failures, relaxed by 20 % per accepted step.
    newton_limit: f64,
    /// f(t, y) at the current point (None: to evaluate).
    derivative: Option<Vec<f64>>,
    /// Coefficients of the collocation polynomial of the last accepted step.
    continuation: Option<([Vec<f64>; 3], f64)>,
}

impl<M: IterationMatrix> Radau5<M> {
    pub fn new(options: RadauOptions) -> Self {
        let expm = 2.0 / 3.0;
        let ratio = options.absolute_tolerance / options.relative_tolerance;
        let rtol = 0.1 * options.relative_tolerance.powf(expm);
        let atol = rtol * ratio;
        let newton_tolerance = (10.0 * UROUND / rtol).max(0.03f64.min(rtol.sqrt()));
        Radau5 {
            options,
            stats: RadauStats::default(),
            step: options.initial_step,
            rtol,
            atol,
            newton_tolerance,
            first: true,
            last_rejected: false,
            previous_step: 0.0,
            previous_error: 1e-2,
            accepted_with_controller: 0,
            theta: JACOBIAN_REUSE_THETA,
            faccon: 1.0,
            jacobian: None,
            jacobian_point: None,
            jacobian_fresh: false,
            factored_step: None,
            newton_limit: f64::INFINITY,
            derivative: None,
            continuation: None,
        }
    }

    /// The controller's memory (see [`RadauMemory`]).
    pub fn memory(&self) -> RadauMemory {
        RadauMemory {
            step: self.step,
            first: self.first,
            last_rejected: self.last_rejected,
            previous_step: self.previous_step,
            previous_error: self.previous_error,
            accepted_with_controller: self.accepted_with_controller,
            theta: self.theta,
            faccon: self.faccon,
            newton_limit: self.newton_limit,
            stats: self.stats,
            derivative: self.derivative.clone(),
            continuation: self.continuation.clone(),
            jacobian_point: self.jacobian.as_ref().and(self.jacobian_point.clone()),
            jacobian_fresh: self.jacobian_fresh,
            factored_step: self.factored_step,
        }
    }

    /// Restores the memory of [`Radau5::memory`] for `system`: the Jacobian is evaluated again at its
    /// point and factorised for its step, so that the next steps are those the run would have taken.
    pub fn restore<S: StiffSystem<Jacobian = M>>(
        &mut self,
        memory: RadauMemory,
        system: &mut S,
    ) -> Result<(), String> {
        self.step = memory.step;
        self.first = memory.first;
        self.last_rejected = memory.last_rejected;
        self.previous_step = memory.previous_step;
        self.previous_error = memory.previous_error;
        self.accepted_with_controller = memory.accepted_with_controller;
        self.theta = memory.theta;
        self.faccon = memory.faccon;
        self.newton_limit = memory.newton_limit;
        self.stats = memory.stats;
        let n = system.dimension();
        let sizes_fit = memory.derivative.as_ref().is_none_or(|d| d.len() == n)
            && memory
                .continuation
                .as_ref()
                .is_none_or(|(c, _)| c.iter().all(|v| v.len() == n))
            && memory
                .jacobian_point
                .as_ref()
                .is_none_or(|(_, y)| y.len() == n);
        if !sizes_fit {
            return Err(format!(
                "the integrator's memory does not fit a system of {n} unknowns"
            ));
        }
        self.derivative = memory.derivative;
        self.continuation = memory.continuation;
        self.jacobian_fresh = memory.jacobian_fresh;
        self.factored_step = None;
        self.jacobian = None;
        self.jacobian_point = None;
        if let Some((t, y)) = memory.jacobian_point {
            let mut jacobian = system.jacobian(t, &y);
            if let Some(h) = memory.factored_step {
                let (gamma, alpha, beta) = eigenvalues();
                jacobian
                    .factor(gamma / h, Complex64::new(alpha / h, beta / h))
                    .map_err(|Singular { column }| {
                        format!("the restored iteration matrix is singular at column {column}")
                    })?;
                self.factored_step = Some(h);
            }
            self.jacobian = Some(jacobian);
            self.jacobian_point = Some((t, y));
        }
        Ok(())
    }

    /// Forget f(t, y) and the last step's polynomial: call after changing y or the system between
    /// calls (the Jacobian is recomputed too).
    pub fn reset(&mut self) {
        self.derivative = None;
        self.continuation = None;
        self.jacobian = None;
        self.jacobian_point = None;
        self.factored_step = None;
    }

    /// Advances `(t, y)` to `t_end` exactly.
    pub fn integrate<S: StiffSystem<Jacobian = M>>(
        &mut self,
        system: &mut S,
        t: &mut f64,
        y: &mut [f64],
        t_end: f64,
    ) -> Result<(), RadauError> {
        let n = system.dimension();
        assert_eq!(y.len(), n);
        let (gamma, alpha, beta) = eigenvalues();
        if self.step <= 0.0 {
            self.step = (1e-6 * (t_end - *t)).max(1e-12);
        }
        let mut derivative = match self.derivative.take() {
            Some(d) => d,
            None => {
                let mut d = vec![0.0; n];
                system.rhs(*t, y, &mut d);
                self.stats.rhs_evaluations += 1;
                d
            }
        };
        let mut z = [vec![0.0; n], vec![0.0; n], vec![0.0; n]];
        let mut w = [vec![0.0; n], vec![0.0; n], vec![0.0; n]];
        let mut stage_f = [vec![0.0; n], vec![0.0; n], vec![0.0; n]];
        let mut stage_y = vec![0.0; n];
        let mut scale = vec![0.0; n];
        let mut real_rhs = vec![0.0; n];
        let mut complex_rhs = vec![Complex64::new(0.0, 0.0); n];
        let mut steps = 0;
        while *t < t_end {
            // Within round-off of the end: there.
            if t_end - *t <= 1e-14 * t_end.abs().max(1.0) {
                *t = t_end;
                break;
            }
            steps += 1;
            if steps > self.options.max_steps {
                self.derivative = Some(derivative);
                return Err(RadauError::TooManySteps { time: *t });
            }
            let proposed = self.step.min(self.options.max_step);
            // Stretch to the end when within 1 % of it, and clip at it; the controller keeps its
            // own proposal for the next call.
            let reaches_end = *t + 1.01 * proposed >= t_end;
            let h = if reaches_end { t_end - *t } else { proposed };
            if h <= 1e-14 * t.abs().max(1.0) {
                self.derivative = Some(derivative);
                return Err(RadauError::StepTooSmall { time: *t, step: h });
            }
            if self.jacobian.is_none() {
                self.jacobian = Some(system.jacobian(*t, y));
                self.jacobian_point = Some((*t, y.to_vec()));
                self.stats.jacobian_evaluations += 1;
                self.jacobian_fresh = true;
                self.factored_step = None;
            }
            let (fac1, alphn, betan) = (gamma / h, alpha / h, beta / h);
            let matrix = self.jacobian.as_mut().expect("just set");
            if self.factored_step != Some(h) {
                if let Err(Singular { column }) = matrix.factor(fac1, Complex64::new(alphn, betan))
                {
                    self.derivative = Some(derivative);
                    return Err(RadauError::SingularMatrix { time: *t, column });
                }
                self.factored_step = Some(h);
                self.stats.factorizations += 1;
            }
            let matrix = self.jacobian.as_ref().expect("just set");

            // Starting values: zero, or the last step's collocation polynomial extrapolated.
            match (&self.continuation, self.first || self.last_rejected) {
                (Some((coefficients, h_old)), false) => {
                    let c3q = h / h_old;
                    let (c1q, c2q) = (C1 * c3q, C2 * c3q);
                    for i in 0..n {
                        let (a1, a2, a3) =
                            (coefficients[0][i], coefficients[1][i], coefficients[2][i]);
                        let at = |s: f64| s * (a1 + (s - C2M1) * (a2 + (s - C1M1) * a3));
                        z[0][i] = at(c1q);
                        z[1][i] = at(c2q);
                        z[2][i] = at(c3q);
                    }
                }
                _ => z.iter_mut().for_each(|v| v.fill(0.0)),
            }
            for i in 0..n {
                for k in 0..3 {
                    w[k][i] = TI[k][0] * z[0][i] + TI[k][1] * z[1][i] + TI[k][2] * z[2][i];
                }
                scale[i] = self.atol + self.rtol * y[i].abs();
            }

            // Simplified Newton iterations.
            self.faccon = self.faccon.max(UROUND).powf(0.8);
            let mut previous_norm = 0.0;
            let mut converged = false;
            let mut too_slow = None;
            let mut iterations = 0;
            while iterations < MAX_NEWTON {
                iterations += 1;
                let stage_times = [*t + C1 * h, *t + C2 * h, *t + h];
                for k in 0..3 {
                    for i in 0..n {
                        stage_y[i] = y[i] + z[k][i];
                    }
                    system.rhs(stage_times[k], &stage_y, &mut stage_f[k]);
                }
                self.stats.rhs_evaluations += 3;
                if stage_f.iter().flatten().any(|v| !v.is_finite()) {
                    too_slow = Some(0.5);
                    break;
                }
                for i in 0..n {
                    let f = [stage_f[0][i], stage_f[1][i], stage_f[2][i]];
                    let r: [f64; 3] = std::array::from_fn(|k| {
                        TI[k][0] * f[0] + TI[k][1] * f[1] + TI[k][2] * f[2]
                    });
                    real_rhs[i] = r[0] - fac1 * w[0][i];
                    complex_rhs[i] = Complex64::new(
                        r[1] - alphn * w[1][i] + betan * w[2][i],
                        r[2] - betan * w[1][i] - alphn * w[2][i],
                    );
                }
                matrix.solve_real(&mut real_rhs);
                matrix.solve_complex(&mut complex_rhs);
                let norm = (real_rhs
                    .iter()
                    .zip(&complex_rhs)
                    .zip(&scale)
                    .map(|((a, b), s)| (a * a + b.re * b.re + b.im * b.im) / (s * s))
                    .sum::<f64>()
                    / (3 * n) as f64)
                    .sqrt();
                self.stats.newton_iterations += 1;
                if iterations > 1 {
                    let theta = norm / previous_norm;
                    self.theta = if iterations == 2 {
                        theta
                    } else {
                        (theta * self.theta).sqrt()
                    };
                    if theta >= 0.99 || !norm.is_finite() {
                        too_slow = Some(0.5);
                        break;
                    }
                    self.faccon = self.theta / (1.0 - self.theta);
                    let remaining = (MAX_NEWTON - iterations) as i32;
                    let predicted =
                        self.faccon * norm * self.theta.powi(remaining) / self.newton_tolerance;
                    if predicted >= 1.0 {
                        let q = predicted.clamp(1e-4, 20.0);
                        too_slow = Some(0.8 * q.powf(-1.0 / (4.0 + remaining as f64)));
                        break;
                    }
                }
                previous_norm = norm.max(UROUND);
                for i in 0..n {
                    w[0][i] += real_rhs[i];
                    w[1][i] += complex_rhs[i].re;
                    w[2][i] += complex_rhs[i].im;
                    for k in 0..3 {
                        z[k][i] = T[k][0] * w[0][i] + T[k][1] * w[1][i] + T[k][2] * w[2][i];
                    }
                }
                if self.faccon * norm <= self.newton_tolerance {
                    converged = true;
                    break;
                }
            }
            if !converged {
                // Unexpected rejection: shrink h; refresh the Jacobian unless it is already fresh.
                self.stats.newton_failures += 1;
                self.stats.rejected_steps += 1;
                self.step = h * too_slow.unwrap_or(0.5);
                // Remember where Newton stopped converging (see `newton_limit`).
                self.newton_limit = self.step;
                self.last_rejected = true;
                if !self.jacobian_fresh {
                    self.jacobian = None;
                }
                continue;
            }

            // Error estimate.
            let (hee1, hee2, hee3) = (DD1 / h, DD2 / h, DD3 / h);
            let combination: Vec<f64> = (0..n)
                .map(|i| hee1 * z[0][i] + hee2 * z[1][i] + hee3 * z[2][i])
                .collect();
            let mut estimate: Vec<f64> = (0..n).map(|i| combination[i] + derivative[i]).collect();
            matrix.solve_real(&mut estimate);
            let error_norm = |e: &[f64]| {
                (e.iter()
                    .zip(&scale)
                    .map(|(v, s)| (v / s) * (v / s))
                    .sum::<f64>()
                    / n as f64)
                    .sqrt()
                    .max(1e-10)
            };
            let mut error = error_norm(&estimate);
            if error >= 1.0 && (self.first || self.last_rejected) {
                for i in 0..n {
                    stage_y[i] = y[i] + estimate[i];
                }
                system.rhs(*t, &stage_y, &mut stage_f[0]);
                self.stats.rhs_evaluations += 1;
                for i in 0..n {
                    estimate[i] = stage_f[0][i] + combination[i];
                }
                matrix.solve_real(&mut estimate);
                error = error_norm(&estimate);
            }
            if !error.is_finite() {
                error = 1e10;
            }

            // New step size.
            let cfac = SAFETY * (1 + 2 * MAX_NEWTON) as f64;
            let fac = SAFETY.min(cfac / (iterations + 2 * MAX_NEWTON) as f64);
            let (min_quot, max_quot) = (1.0 / 8.0, 5.0);
            let mut quot = (error.powf(0.25) / fac).clamp(min_quot, max_quot);
            if error < 1.0 {
                // Accepted.
                self.first = false;
                self.stats.accepted_steps += 1;
                self.accepted_with_controller += 1;
                if self.accepted_with_controller > 1 {
                    let gustafsson = (self.previous_step / h)
                        * (error * error / self.previous_error).powf(0.25)
                        / SAFETY;
                    quot = quot.max(gustafsson.clamp(min_quot, max_quot));
                }
                self.previous_step = h;
                self.previous_error = error.max(1e-2);
                // The last step lands on t_end exactly (t + (t_end - t) may miss it by an ulp).
                *t = if reaches_end { t_end } else { *t + h };
                for i in 0..n {
                    y[i] += z[2][i];
                }
                if y.iter().any(|v| !v.is_finite()) {
                    return Err(RadauError::NotFinite { time: *t });
                }
                let mut coefficients = [vec![0.0; n], vec![0.0; n], vec![0.0; n]];
                for i in 0..n {
                    let (z1, z2, z3) = (z[0][i], z[1][i], z[2][i]);
                    coefficients[0][i] = (z2 - z3) / C2M1;
                    let ak = (z1 - z2) / C1MC2;
                    let acont3 = (ak - z1 / C1) / C2;
                    coefficients[1][i] = (ak - coefficients[0][i]) / C1M1;
                    coefficients[2][i] = coefficients[1][i] - acont3;
                }
                self.continuation = Some((coefficients, h));
                system.project(y);
                system.rhs(*t, y, &mut derivative);
                self.stats.rhs_evaluations += 1;
                let mut h_new = (h / quot).min(self.options.max_step);
                if self.last_rejected {
                    h_new = h_new.min(h);
                }
                // Grow back towards a step at which Newton failed by at most 20 % per accepted
                // step, instead of failing again at once (a stiff rotating rod limits the step by
                // Newton's convergence more than by accuracy).
                self.newton_limit *= 1.2;
                h_new = h_new.min(self.newton_limit);
                self.last_rejected = false;
                // A step clipped at t_end does not shrink the controller's proposal.
                let clipped = h < proposed;
                let ratio = h_new / h;
                let reuse = self.options.jacobian_reuse;
                if self.theta <= reuse && ratio >= KEEP_STEP.0 && ratio <= KEEP_STEP.1 {
                    self.step = if clipped { proposed } else { h };
                } else {
                    self.step = if clipped { h_new.max(proposed) } else { h_new };
                }
                if self.theta > reuse {
                    self.jacobian = None;
                }
                self.jacobian_fresh = false;
            } else {
                self.stats.rejected_steps += 1;
                self.step = if self.first { 0.1 * h } else { h / quot };
                self.last_rejected = true;
                if !self.jacobian_fresh {
                    self.jacobian = None;
                }
            }
        }
        self.derivative = Some(derivative);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// T⁻¹ A⁻¹ T is block diagonal with γ and [[α, -β], [β, α]], for the exact Radau IIA matrix A;
    /// T TI = I; the error coefficients and nodes are those of the method.
    #[test]
    fn constants_block_diagonalise_the_radau_matrix() {
        let s = 6f64.sqrt();
        let a = [
            [
                (88.0 - 7.0 * s) / 360.0,
                (296.0 - 169.0 * s) / 1800.0,
                (-2.0 + 3.0 * s) / 225.0,
            ],
            [
                (296.0 + 169.0 * s) / 1800.0,
                (88.0 + 7.0 * s) / 360.0,
                (-2.0 - 3.0 * s) / 225.0,
            ],
            [(16.0 - s) / 36.0, (16.0 + s) / 36.0, 1.0 / 9.0],
        ];
        let mul = |x: &[[f64; 3]; 3], y: &[[f64; 3]; 3]| {
            let mut o = [[0.0; 3]; 3];
            for i in 0..3 {
                for j in 0..3 {
                    for k in 0..3 {
                        o[i][j] += x[i][k] * y[k][j];
                    }
                }
            }
            o
        };
        let identity = mul(&T, &TI);
        for i in 0..3 {
            for j in 0..3 {
                let e = if i == j { 1.0 } else { 0.0 };
                assert!((identity[i][j] - e).abs() < 1e-14, "T TI {i}{j}");
            }
        }
        // TI A T = diag(1/γ, [[α, -β], [β, α]]⁻¹) ⇔ T⁻¹ A⁻¹ T = diag(γ, [[α, -β], [β, α]]).
        let (gamma, alpha, beta) = eigenvalues();
        let lambda = mul(&TI, &mul(&a, &T));
        let det = alpha * alpha + beta * beta;
        let expected = [
            [1.0 / gamma, 0.0, 0.0],
            [0.0, alpha / det, beta / det],
            [0.0, -beta / det, alpha / det],
        ];
        for i in 0..3 {
            for j in 0..3 {
                assert!(
                    (lambda[i][j] - expected[i][j]).abs() < 1e-13,
                    "{i}{j}: {} vs {}",
                    lambda[i][j],
                    expected[i][j]
                );
            }
        }
        // Row sums of A are the nodes; the last row is the weights (stiffly accurate).
        for (row, c) in a.iter().zip([C1, C2, 1.0]) {
            assert!((row.iter().sum::<f64>() - c).abs() < 1e-15);
        }
        // The embedded estimate γ0 h f(y0) + γ0 Σ dd_i Z_i (γ0 = 1/γ) vanishes whenever the stage
        // increments are exact for a cubic: Σ dd_i c_i = -1, Σ dd_i c_i² = Σ dd_i c_i³ = 0.
        let dd = [DD1, DD2, DD3];
        let c = [C1, C2, 1.0];
        let moment = |k: i32| dd.iter().zip(&c).map(|(d, c)| d * c.powi(k)).sum::<f64>();
        assert!((moment(1) + 1.0).abs() < 1e-13, "{}", moment(1));
        assert!(moment(3).abs() < 1e-12, "{}", moment(3));
        assert!(moment(2).abs() < 1e-13, "{}", moment(2));
    }

    /// A linear system with a stiff and a slow mode; the exact solution is known.
    struct Linear {
        rates: [f64; 2],
    }

    impl StiffSystem for Linear {
        type Jacobian = BandJacobian;
        fn dimension(&self) -> usize {
            2
        }
        fn rhs(&mut self, t: f64, y: &[f64], dy: &mut [f64]) {
            // y0' = -k0 (y0 - cos t) - sin t (exact: cos t + c e^{-k0 t}), y1' = -k1 y1 + y0.
            dy[0] = -self.rates[0] * (y[0] - t.cos()) - t.sin();
            dy[1] = -self.rates[1] * y[1] + y[0];
        }
        fn jacobian(&mut self, _t: f64, _y: &[f64]) -> BandJacobian {
            let mut j = BandMatrix::zeros(2, 1, 1);
            j.add(0, 0, -self.rates[0]);
            j.add(1, 1, -self.rates[1]);
            j.add(1, 0, 1.0);
            BandJacobian::new(j)
        }
    }

    /// Van der Pol with μ = 1e-3 (ε form, Hairer & Wanner's stiff test problem).
    struct VanDerPol {
        epsilon: f64,
    }

    impl StiffSystem for VanDerPol {
        type Jacobian = BandJacobian;
        fn dimension(&self) -> usize {
            2
        }
        fn rhs(&mut self, _t: f64, y: &[f64], dy: &mut [f64]) {
            dy[0] = y[1];
            dy[1] = ((1.0 - y[0] * y[0]) * y[1] - y[0]) / self.epsilon;
        }
        fn jacobian(&mut self, _t: f64, y: &[f64]) -> BandJacobian {
            let mut j = BandMatrix::zeros(2, 1, 1);
            j.add(0, 1, 1.0);
            j.add(1, 0, (-2.0 * y[0] * y[1] - 1.0) / self.epsilon);
            j.add(1, 1, (1.0 - y[0] * y[0]) / self.epsilon);
            BandJacobian::new(j)
        }
    }

    /// On a stiff linear problem (stiffness ratio 1e6) the error falls with the tolerance and the
    /// number of steps stays small.
    #[test]
    fn stiff_linear_problem_meets_its_tolerance() {
        let mut errors = Vec::new();
        for tol in [1e-4, 1e-7, 1e-10] {
            let mut system = Linear { rates: [1e6, 1.0] };
            let mut radau = Radau5::new(RadauOptions {
                relative_tolerance: tol,
                absolute_tolerance: tol,
                ..RadauOptions::default()
            });
            let (mut t, mut y) = (0.0, vec![2.0, 0.0]);
            radau.integrate(&mut system, &mut t, &mut y, 10.0).unwrap();
            assert_eq!(t, 10.0);
            // y1 for y0 = cos t: y1 = (cos t + sin t - e^{-t}) / 2 (the fast transient adds O(1e-6)).
            let exact = (10f64.cos() + 10f64.sin() - (-10f64).exp()) / 2.0;
            let error = (y[1] - exact).abs().max((y[0] - 10f64.cos()).abs());
            eprintln!("tol {tol:e}: error {error:e}, {:?}", radau.stats);
            assert!(radau.stats.accepted_steps < 400, "{:?}", radau.stats);
            errors.push(error);
        }
        assert!(
            errors[0] < 1e-4 && errors[1] < 1e-6 && errors[2] < 1e-8,
            "{errors:?}"
        );
    }

    /// Van der Pol, ε = 1e-6, y(0) = (2, 0), to t = 2: the reference solution of the IVP test set
    /// (Mazzia & Magherini, problem VDPOL: y(2) = (1.706167732170483, -0.8928097010247975)) is met
    /// within the tolerance; calls in pieces agree with one call.
    #[test]
    fn van_der_pol_matches_the_reference() {
        let mut system = VanDerPol { epsilon: 1e-6 };
        let mut radau = Radau5::new(RadauOptions {
            relative_tolerance: 1e-8,
            absolute_tolerance: 1e-8,
            initial_step: 1e-6,
            ..RadauOptions::default()
        });
        let (mut t, mut y) = (0.0, vec![2.0, 0.0]);
        radau.integrate(&mut system, &mut t, &mut y, 2.0).unwrap();
        eprintln!("y(2) = {y:?}, {:?}", radau.stats);
        assert!((y[0] - 1.706_167_732_170_483).abs() < 1e-6, "{}", y[0]);
        assert!((y[1] + 0.892_809_701_024_797_5).abs() < 1e-5, "{}", y[1]);
        assert!(radau.stats.accepted_steps < 2000, "{:?}", radau.stats);

        let mut pieces = Radau5::new(radau.options);
        let (mut t2, mut y2) = (0.0, vec![2.0, 0.0]);
        for k in 1..=20 {
            pieces
                .integrate(&mut system, &mut t2, &mut y2, 0.1 * k as f64)
                .unwrap();
        }
        assert!((y2[0] - y[0]).abs() < 1e-6, "{} vs {}", y2[0], y[0]);
    }
}
