//! The regularised delta function of Roma, Peskin & Berger (1999), 3-point support, as the seed uses
//! (sec. 2): delta_h(x) = phi(x/h) phi(y/h) phi(z/h) / h^3.

/// phi(r) of Roma et al. (1999), r in cell sizes: (1 + sqrt(1 - 3 r^2)) / 3 for |r| <= 1/2,
/// (5 - 3|r| - sqrt(1 - 3 (1 - |r|)^2)) / 6 for 1/2 <= |r| <= 3/2, 0 beyond.
#[inline]
pub fn roma(r: f64) -> f64 {
    let r = r.abs();
    if r <= 0.5 {
        (1.0 + (1.0 - 3.0 * r * r).sqrt()) / 3.0
    } else if r <= 1.5 {
        let s = 1.0 - r;
        (5.0 - 3.0 * r - (1.0 - 3.0 * s * s).max(0.0).sqrt()) / 6.0
    } else {
        0.0
    }
}

/// The grid points within the support of a point at grid coordinate `s` (in cell sizes, along one axis,
/// in the numbering of the grid points) and their weights: points n - 1, n, n + 1 with n the nearest
/// integer to s, which hold every point with |s - i| < 3/2. With r = s - n in [-1/2, 1/2] and
/// q = sqrt(1 - 3 r^2), the weights phi(r + 1), phi(r), phi(r - 1) of [`roma`] are (2 - 3 r - q) / 6,
/// (1 + q) / 3 and (2 + 3 r - q) / 6: one square root and no branch.
#[inline]
pub fn support(s: f64) -> (isize, [f64; 3]) {
    let n = nearest_integer(s);
    let r = s - n as f64;
    let q = (1.0 - 3.0 * r * r).max(0.0).sqrt();
    const SIXTH: f64 = 1.0 / 6.0;
    (
        n - 1,
        [
            (2.0 - 3.0 * r - q) * SIXTH,
            (2.0 + 2.0 * q) * SIXTH,
            (2.0 + 3.0 * r - q) * SIXTH,
        ],
    )
}

/// floor(s + 1/2) for the grid coordinates of markers (finite, far inside the isize range), without
/// the library call that `f64::round` is on the baseline x86-64 target.
#[inline]
pub(crate) fn nearest_integer(s: f64) -> isize {
    let t = s + 0.5;
    let n = t as isize;
    if (n as f64) > t {
        n - 1
    } else {
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The discrete moment conditions that define the kernel: sum_i phi(r - i) = 1,
    /// sum_i (r - i) phi(r - i) = 0 and sum_i phi(r - i)^2 = 1/2, for any offset r.
    #[test]
    fn moments_hold_for_every_offset() {
        for step in 0..=200 {
            let s = -3.0 + 0.037 * step as f64;
            let (first, w) = support(s);
            let sum: f64 = w.iter().sum();
            let first_moment: f64 = (0..3)
                .map(|m| (s - (first + m) as f64) * w[m as usize])
                .sum();
            let squares: f64 = w.iter().map(|w| w * w).sum();
            assert!((sum - 1.0).abs() < 1e-14, "sum {sum} at {s}");
            assert!(
                first_moment.abs() < 1e-14,
                "first moment {first_moment} at {s}"
            );
            assert!((squares - 0.5).abs() < 1e-14, "squares {squares} at {s}");
            // No weight outside the three points.
            for i in [first - 1, first + 3] {
                assert_eq!(roma(s - i as f64), 0.0);
            }
        }
    }

    /// The one-root weights of `support` are phi of `roma` at the three points.
    #[test]
    fn support_weights_are_the_kernel() {
        for step in 0..=4000 {
            let s = -7.0 + 0.0035 * step as f64;
            let (first, w) = support(s);
            assert!((s - (first + 1) as f64).abs() <= 0.5, "{s}");
            for m in 0..3 {
                let exact = roma(s - (first + m as isize) as f64);
                assert!((w[m] - exact).abs() < 1e-15, "{s}: {} vs {exact}", w[m]);
            }
        }
    }

    #[test]
    fn continuous_and_compact() {
        assert!((roma(0.5 - 1e-12) - roma(0.5 + 1e-12)).abs() < 1e-10);
        assert!(roma(1.5 - 1e-9).abs() < 1e-4);
        assert_eq!(roma(1.5 + 1e-12), 0.0);
        assert!((roma(0.0) - 2.0 / 3.0).abs() < 1e-15);
    }
}
