//! Banded matrices and their LU factorisation with partial pivoting (the scheme of LAPACK's
//! `gbtrf`/`gbtrs`), real and complex: the linear solves of the implicit integrator and of the static
//! solver. The rod's Jacobian is banded once the unknowns are interleaved node by node, so a
//! factorisation costs `O(n kl (kl + ku))` instead of `O(n³)`.

use std::ops::{Add, Div, Mul, Sub};

use num_complex::Complex64;

/// The field a banded matrix lives in.
pub trait Scalar:
    Copy
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + PartialEq
    + std::fmt::Debug
{
    const ZERO: Self;
    /// Magnitude for pivot selection.
    fn magnitude(self) -> f64;
    fn from_real(x: f64) -> Self;
}

impl Scalar for f64 {
    const ZERO: f64 = 0.0;
    fn magnitude(self) -> f64 {
        self.abs()
    }
    fn from_real(x: f64) -> f64 {
        x
    }
}

impl Scalar for Complex64 {
    const ZERO: Complex64 = Complex64::new(0.0, 0.0);
    fn magnitude(self) -> f64 {
        // |re| + |im|: as good for pivoting as the modulus and free of square roots.
        self.re.abs() + self.im.abs()
    }
    fn from_real(x: f64) -> Complex64 {
        Complex64::new(x, 0.0)
    }
}

/// An n x n matrix with `lower` sub- and `upper` super-diagonals, stored row by row with room for
/// the `lower` extra super-diagonals that pivoting fills in.
#[derive(Clone, Debug, PartialEq)]
pub struct BandMatrix<T> {
    size: usize,
    lower: usize,
    upper: usize,
    width: usize,
    values: Vec<T>,
}

impl<T: Scalar> BandMatrix<T> {
    /// The zero matrix of this shape.
    pub fn zeros(size: usize, lower: usize, upper: usize) -> Self {
        let width = 2 * lower + upper + 1;
        BandMatrix {
            size,
            lower,
            upper,
            width,
            values: vec![T::ZERO; size * width],
        }
    }

    pub fn size(&self) -> usize {
        self.size
    }

    pub fn bandwidths(&self) -> (usize, usize) {
        (self.lower, self.upper)
    }

    /// Whether (row, col) lies in the stored band (including the fill-in room).
    fn slot(&self, row: usize, col: usize) -> usize {
        debug_assert!(col + self.lower >= row && col <= row + self.lower + self.upper);
        row * self.width + (col + self.lower - row)
    }

    /// Whether (row, col) lies within the matrix's declared band.
    pub fn in_band(&self, row: usize, col: usize) -> bool {
        row < self.size && col < self.size && col + self.lower >= row && col <= row + self.upper
    }

    pub fn get(&self, row: usize, col: usize) -> T {
        self.values[self.slot(row, col)]
    }

    /// Adds `value` at (row, col), which must lie in the band.
    pub fn add(&mut self, row: usize, col: usize, value: T) {
        assert!(
            self.in_band(row, col),
            "({row}, {col}) outside the band ({}, {})",
            self.lower,
            self.upper
        );
        let slot = self.slot(row, col);
        self.values[slot] = self.values[slot] + value;
    }

    pub fn fill_zero(&mut self) {
        self.values.fill(T::ZERO);
    }

    /// `shift I - self`, in the field of `shift` (the iteration matrices of Radau IIA).
    pub fn shifted_negative<U: Scalar>(&self, shift: U, out: &mut BandMatrix<U>)
    where
        T: Into<U>,
    {
        assert!(out.size == self.size && out.lower == self.lower && out.upper == self.upper);
        out.fill_zero();
        for row in 0..self.size {
            let first = row.saturating_sub(self.lower);
            let last = (row + self.upper).min(self.size - 1);
            for col in first..=last {
                let slot = out.slot(row, col);
                let value: U = self.get(row, col).into();
                out.values[slot] = U::ZERO - value;
            }
            let slot = out.slot(row, row);
            out.values[slot] = out.values[slot] + shift;
        }
    }

    /// `y = A x`.
    pub fn multiply(&self, x: &[T], y: &mut [T]) {
        for (row, out) in y.iter_mut().enumerate().take(self.size) {
            let first = row.saturating_sub(self.lower);
            let last = (row + self.upper).min(self.size - 1);
            let mut sum = T::ZERO;
            for (col, value) in x.iter().enumerate().take(last + 1).skip(first) {
                sum = sum + self.get(row, col) * *value;
            }
            *out = sum;
        }
    }
}

/// A singular pivot met during the factorisation.
#[derive(Clone, Debug, PartialEq)]
pub struct Singular {
    pub column: usize,
}

/// `P A = L U` of a band matrix, in place.
#[derive(Clone, Debug, PartialEq)]
pub struct BandLu<T> {
    factors: BandMatrix<T>,
    pivots: Vec<usize>,
}

impl<T: Scalar> BandLu<T> {
    /// Factorises `matrix` (consumed; its storage holds the factors).
    pub fn factor(mut matrix: BandMatrix<T>) -> Result<Self, Singular> {
        let n = matrix.size;
        let (kl, ku) = (matrix.lower, matrix.upper);
        let mut pivots = vec![0; n];
        for k in 0..n {
            let last_row = (k + kl).min(n - 1);
            let last_col = (k + kl + ku).min(n - 1);
            let mut pivot_row = k;
            let mut largest = matrix.get(k, k).magnitude();
            for row in k + 1..=last_row {
                let m = matrix.get(row, k).magnitude();
                if m > largest {
                    largest = m;
                    pivot_row = row;
                }
            }
            if largest == 0.0 || !largest.is_finite() {
                return Err(Singular { column: k });
            }
            pivots[k] = pivot_row;
            if pivot_row != k {
                for col in k..=last_col {
                    let (a, b) = (matrix.slot(k, col), matrix.slot(pivot_row, col));
                    matrix.values.swap(a, b);
                }
            }
            let pivot = matrix.get(k, k);
            for row in k + 1..=last_row {
                let slot = matrix.slot(row, k);
                let factor = matrix.values[slot] / pivot;
                matrix.values[slot] = factor;
                if factor == T::ZERO {
                    continue;
                }
                let (source, target) = (matrix.slot(k, k + 1), matrix.slot(row, k + 1));
                for offset in 0..last_col - k {
                    let value = matrix.values[source + offset];
                    matrix.values[target + offset] =
                        matrix.values[target + offset] - factor * value;
                }
            }
        }
        Ok(BandLu {
            factors: matrix,
            pivots,
        })
    }

    /// Solves `A x = b` in place.
    pub fn solve(&self, b: &mut [T]) {
        let a = &self.factors;
        let n = a.size;
        let (kl, ku) = (a.lower, a.upper);
        for k in 0..n {
            b.swap(k, self.pivots[k]);
            let bk = b[k];
            if bk == T::ZERO {
                continue;
            }
            for row in k + 1..=(k + kl).min(n - 1) {
                b[row] = b[row] - a.get(row, k) * bk;
            }
        }
        for k in (0..n).rev() {
            let mut sum = b[k];
            let start = a.slot(k, k);
            for (offset, x) in b
                .iter()
                .enumerate()
                .take((k + kl + ku).min(n - 1) + 1)
                .skip(k + 1)
            {
                sum = sum - a.values[start + offset - k] * *x;
            }
            b[k] = sum / a.values[start];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// Random band matrices with small diagonals (so pivoting happens): A x = b is solved to
    /// round-off, real and complex.
    #[test]
    fn band_lu_solves_with_pivoting() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        for &(n, kl, ku) in &[(1, 0, 0), (7, 2, 1), (30, 3, 5), (50, 6, 6), (12, 11, 11)] {
            let mut a = BandMatrix::<f64>::zeros(n, kl, ku);
            let mut c = BandMatrix::<Complex64>::zeros(n, kl, ku);
            for row in 0..n {
                for col in 0..n {
                    if a.in_band(row, col) {
                        let v = if row == col {
                            0.01 * rng.gen_range(-1.0..1.0)
                        } else {
                            rng.gen_range(-1.0..1.0)
                        };
                        a.add(row, col, v);
                        c.add(row, col, Complex64::new(v, rng.gen_range(-1.0..1.0)));
                    }
                }
            }
            let x: Vec<f64> = (0..n).map(|i| (i as f64 * 0.7).sin() + 0.3).collect();
            let mut b = vec![0.0; n];
            a.multiply(&x, &mut b);
            BandLu::factor(a).unwrap().solve(&mut b);
            for (u, v) in b.iter().zip(&x) {
                assert!((u - v).abs() < 1e-9, "{n} {kl} {ku}: {u} vs {v}");
            }
            let xc: Vec<Complex64> = x.iter().map(|v| Complex64::new(*v, -2.0 * v)).collect();
            let mut bc = vec![Complex64::ZERO; n];
            c.multiply(&xc, &mut bc);
            BandLu::factor(c).unwrap().solve(&mut bc);
            for (u, v) in bc.iter().zip(&xc) {
                assert!((u - v).norm() < 1e-9, "{n} {kl} {ku}: {u} vs {v}");
            }
        }
    }

    #[test]
    fn singular_matrices_are_reported() {
        let mut a = BandMatrix::<f64>::zeros(3, 1, 1);
        a.add(0, 0, 1.0);
        a.add(2, 2, 1.0);
        assert_eq!(BandLu::factor(a).unwrap_err(), Singular { column: 1 });
    }
}
