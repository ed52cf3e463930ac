//! The windows that spread forces onto the spectral Ewald grid and interpolate velocities back
//! (`docs/theory/periodic-rpy.md`, "Windows"):
//! - Kaiser–Bessel windows `I₀(β√(1 − (d/R)²))` on `|d| ≤ R = P h / 2` (Kaiser 1974; as in NUFFT
//!   gridding, Jackson et al. 1991, and spectral Ewald, Shamshirgar, Bagge & Tornberg 2021):
//!   exactly P grid points per axis, no truncation, and a transform known in closed form. About 0.6
//!   times the points per axis of truncated Gaussians for the same error (6 against 10 at 1e-4, 8
//!   against 13 at 1e-6: a fifth of the points of a 3-D window).
//! - truncated Gaussians (Lindbo & Tornberg 2011): isotropic, so that in a sheared box the window
//!   rotated into the grid's sheared coordinates aliases alike along every axis.
//!
//! Each window is normalised to unit integral, so its transform is 1 at `k = 0`; the wave kernels
//! divide by the transform squared (spread once, interpolated once).

use std::f64::consts::PI;

/// A spreading window, the same along each axis up to its width.
#[derive(Clone, Debug, PartialEq)]
pub enum Window {
    /// Gaussians of standard deviation `sigma`, cut at `truncation` standard deviations.
    Gaussian { sigma: f64, truncation: f64 },
    /// Kaiser–Bessel windows of shape `beta`, reaching `half_width[axis]` from the centre.
    KaiserBessel {
        beta: f64,
        half_width: [f64; 3],
        /// The Taylor coefficients `(β²/4)^m / (m!)²` of `I₀(β√(1 − x²))` in `1 − x²`, scaled by the
        /// normalisation `β / (2R sinh β)` of axis 0 (the other axes rescale).
        series: Vec<f64>,
    },
}

impl Window {
    /// Kaiser–Bessel windows of shape `beta` reaching `half_width` along each axis.
    pub fn kaiser_bessel(beta: f64, half_width: [f64; 3]) -> Self {
        let u = beta * beta / 4.0;
        // I₀(β√(1 − x²)) = Σ_m (u (1 − x²))^m / (m!)²: terms until they no longer change the sum
        // at x = 0 (the largest argument).
        let mut series = vec![1.0];
        let (mut term, mut sum) = (1.0, 1.0);
        for m in 1..400 {
            term *= u / (m * m) as f64;
            sum += term;
            series.push(term);
            if term < 1e-18 * sum {
                break;
            }
        }
        let scale = beta / (2.0 * half_width[0] * beta.sinh());
        series.iter_mut().for_each(|c| *c *= scale);
        Window::KaiserBessel {
            beta,
            half_width,
            series,
        }
    }

    /// How far from its centre the window reaches along `axis` (its points are those within).
    pub fn reach(&self, axis: usize) -> f64 {
        match self {
            Window::Gaussian { sigma, truncation } => sigma * truncation,
            Window::KaiserBessel { half_width, .. } => half_width[axis],
        }
    }

    /// The window at distance `d` from its centre along `axis` (unit integral).
    #[inline]
    pub fn weight(&self, d: f64, axis: usize) -> f64 {
        match self {
            Window::Gaussian { sigma, .. } => {
                let two_sigma2 = 2.0 * sigma * sigma;
                (-d * d / two_sigma2).exp() / (PI * two_sigma2).sqrt()
            }
            Window::KaiserBessel {
                half_width, series, ..
            } => {
                let x = d / half_width[axis];
                let s = (1.0 - x * x).max(0.0);
                let value = series.iter().rev().fold(0.0, |acc, c| acc * s + c);
                value * half_width[0] / half_width[axis]
            }
        }
    }

    /// The window's Fourier transform at wave number `k` along `axis` (1 at `k = 0`).
    pub fn transform(&self, k: f64, axis: usize) -> f64 {
        match self {
            Window::Gaussian { sigma, .. } => (-0.5 * sigma * sigma * k * k).exp(),
            Window::KaiserBessel {
                beta, half_width, ..
            } => kaiser_bessel_transform(k * half_width[axis], *beta),
        }
    }
}

/// `∫₋₁¹ I₀(β√(1 − x²)) e^{−iωx} dx` relative to its value at `ω = 0`: `sinh√(β² − ω²) / √(β² − ω²)`,
/// `sin√(ω² − β²) / √(ω² − β²)` past `ω = β`, over `sinh β / β`.
pub fn kaiser_bessel_transform(omega: f64, beta: f64) -> f64 {
    let d = beta * beta - omega * omega;
    let shape = if d > 1e-12 {
        let r = d.sqrt();
        r.sinh() / r
    } else if d < -1e-12 {
        let r = (-d).sqrt();
        r.sin() / r
    } else {
        1.0
    };
    shape * beta / beta.sinh()
}

/// The magnitude past `ω = β` bounded by its envelope `min(1, 1/√(ω² − β²))` (the aliases' bound
/// must not depend on where the sine's zeros fall), relative to the value at `ω = 0`.
fn kaiser_bessel_envelope(omega: f64, beta: f64) -> f64 {
    let d = omega * omega - beta * beta;
    if d <= 0.0 {
        kaiser_bessel_transform(omega, beta).abs()
    } else {
        (1.0 / d.sqrt()).min(1.0) * beta / beta.sinh()
    }
}

/// Points `u = k h / π` (from 0 to the Nyquist wave number) at which the aliasing bounds are taken.
pub const ALIAS_SAMPLES: usize = 128;

/// The shapes tried for a Kaiser–Bessel window of P points: `β = c P`, `c` from 1.2 to 3.0.
pub fn kaiser_bessel_shapes() -> impl Iterator<Item = f64> {
    (0..=36).map(|n| 1.2 + 0.05 * n as f64)
}

/// The aliasing ratio of a P-point Kaiser–Bessel window of shape `beta` at each sample `u = k h/π`
/// ([`ALIAS_SAMPLES`] + 1 of them, 0 to 1): the sum over the aliases `k + 2πn/h` (`0 < |n| ≤ 3`) of
/// the window's transform there relative to its transform at `k` (a grid samples the spread field,
/// so each mode carries its aliases' shares; interpolation alike).
pub fn kaiser_bessel_aliasing(points: usize, beta: f64) -> Vec<f64> {
    let half = points as f64 / 2.0;
    (0..=ALIAS_SAMPLES)
        .map(|s| {
            let u = s as f64 / ALIAS_SAMPLES as f64;
            let own = kaiser_bessel_transform(PI * u * half, beta).abs();
            let aliases: f64 = [-3.0, -2.0, -1.0, 1.0, 2.0, 3.0]
                .iter()
                .map(|n| kaiser_bessel_envelope(PI * (u + 2.0 * n) * half, beta))
                .sum();
            if own > 0.0 {
                aliases / own
            } else {
                f64::INFINITY
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The closed-form transform against a quadrature of the window itself (midpoint rule, fine
    /// enough for 1e-9), and the weights' unit integral, along axes of different widths.
    #[test]
    fn the_kaiser_bessel_transform_matches_a_quadrature() {
        for (beta, points) in [(6.0, 3usize), (14.0, 7), (30.0, 13)] {
            let h = [1.0, 0.7, 1.3];
            let half: [f64; 3] = std::array::from_fn(|a| points as f64 * h[a] / 2.0);
            let window = Window::kaiser_bessel(beta, half);
            for axis in 0..3 {
                let r = half[axis];
                let n = 200_000;
                let dx = 2.0 * r / n as f64;
                for k in [0.0, 0.3, 1.0, 2.5, PI / h[axis], 2.0 * PI / h[axis] + 0.4] {
                    let integral: f64 = (0..n)
                        .map(|i| {
                            let d = -r + (i as f64 + 0.5) * dx;
                            window.weight(d, axis) * (k * d).cos() * dx
                        })
                        .sum();
                    let exact = window.transform(k, axis);
                    assert!(
                        (integral - exact).abs() < 1e-9,
                        "beta {beta} axis {axis} k {k}: {integral} vs {exact}"
                    );
                }
            }
        }
    }

    /// The Gaussian's transform and weights are the normalised Gaussian's.
    #[test]
    fn the_gaussian_window_has_unit_integral() {
        let window = Window::Gaussian {
            sigma: 1.3,
            truncation: 8.0,
        };
        let dx = 1e-3;
        let integral: f64 = (-12_000..12_000)
            .map(|i| window.weight(i as f64 * dx, 0) * dx)
            .sum();
        assert!((integral - 1.0).abs() < 1e-12, "{integral}");
        assert!((window.transform(0.0, 1) - 1.0).abs() < 1e-15);
    }
}
