//! Helpers shared by the unit tests.

/// Deterministic pseudo-random values in [-1, 1) (64-bit LCG, Knuth's constants).
pub(crate) struct Lcg(pub(crate) u64);

impl Lcg {
    pub(crate) fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    }

    pub(crate) fn vec(&mut self, n: usize) -> Vec<f64> {
        (0..n).map(|_| self.next()).collect()
    }
}

/// Max |v|, NaN if any entry is NaN.
pub(crate) fn max_abs(v: &[f64]) -> f64 {
    v.iter().fold(0.0, |m, x| {
        if x.is_nan() || m.is_nan() {
            f64::NAN
        } else {
            m.max(x.abs())
        }
    })
}

/// A reproducible right-hand side of `shape` with structure on every scale (the distributed
/// solvers' tests).
pub(crate) fn structured_rhs(shape: [usize; 3]) -> Vec<f64> {
    let n = shape.iter().product::<usize>();
    (0..n)
        .map(|i| {
            let x = i as f64 * 0.618_033_988_749_894_9;
            (x - x.floor()) - 0.5 + 0.1 * ((i * 7919) % 13) as f64
        })
        .collect()
}
