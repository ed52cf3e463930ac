//! Real line transforms as dense matrix products, for line lengths that fast transforms handle badly.
//!
//! A length whose FFT has a large prime factor (107 cells, the ten Cate box at D/h = 16) makes
//! `rustfft` fall back on Bluestein's algorithm: three FFTs of about twice the length per line. For
//! lengths up to a few hundred, multiplying a block of lines by the transform matrix is faster,
//! because the product runs near the vector units' peak while Bluestein's FFTs do not.
//!
//! The matrices of the transforms in [`crate::poisson`] have a reflection symmetry: with `r(p) = n-1-p`
//! (cell-centred and node unknowns) or `r(p) = (n-p) mod n` (periodic), every row is even or odd,
//! `F[k][r(p)] = σ_k F[k][p]`. The even rows then only see `x_p + x_{r(p)}` and the odd rows only
//! `x_p - x_{r(p)}`, so the product splits into two products of half the size (half the work). The
//! inverse transforms have the same symmetry in their columns and are split the same way. Transforms
//! without it (DCT-IV, DST-IV) use the whole matrix.
//!
//! The transform coefficients are stored in their own order: the even rows (by increasing `k`), then
//! the odd rows. [`DenseTransform::slot_order`] tells which transform index each stored slot holds, so
//! that the solver can pair slots with their eigenvalues. Slot 0 is always `k = 0`.
//!
//! The matrices are read off the fast transform itself (applied to unit vectors), so the dense
//! transform has exactly its conventions and normalisation. Each output is a sum in a fixed order of
//! products formed one by one (no fused multiply-add), so results are the same for any grouping of
//! lines, any thread count and any instruction set.

/// Lines multiplied together (the block that a plane transform hands over).
pub(crate) const LINES: usize = 8;

/// Outputs computed together by the product kernel (two 4-wide vectors).
const COLUMNS: usize = 8;

/// Lines computed together by the product kernel.
const KERNEL_LINES: usize = 4;

/// Longest line for which the dense product is used: beyond it Bluestein's `O(n log n)` wins.
pub(crate) const MAX_DENSE_LENGTH: usize = 256;

/// Largest prime factor that `rustfft` handles with its own butterflies; a length with a larger
/// prime factor goes through Bluestein's or Rader's algorithm.
pub(crate) const MAX_FAST_PRIME: usize = 31;

/// Whether a transform over `cells` cells is faster as a dense product than as a fast transform.
pub(crate) fn prefers_dense(cells: usize) -> bool {
    cells <= MAX_DENSE_LENGTH && largest_prime_factor(cells) > MAX_FAST_PRIME
}

/// Largest prime factor of `n` (1 for `n <= 1`).
pub(crate) fn largest_prime_factor(mut n: usize) -> usize {
    let mut largest = 1;
    let mut p = 2;
    while p * p <= n {
        while n.is_multiple_of(p) {
            largest = p;
            n /= p;
        }
        p += 1;
    }
    largest.max(if n > 1 { n } else { 1 })
}

/// How the inputs of a line fold onto the half-size products.
#[derive(Clone, Debug)]
struct Folding {
    /// `(p, r(p))` with `p < r(p)`.
    pairs: Vec<(usize, usize)>,
    /// `p = r(p)`.
    fixed: Vec<usize>,
}

impl Folding {
    /// Folded length of the even part: one sum per pair and each fixed point.
    fn even_len(&self) -> usize {
        self.pairs.len() + self.fixed.len()
    }

    /// Folded length of the odd part: one difference per pair.
    fn odd_len(&self) -> usize {
        self.pairs.len()
    }

    /// Representative position of folded even index `q`.
    fn even_position(&self, q: usize) -> usize {
        if q < self.pairs.len() {
            self.pairs[q].0
        } else {
            self.fixed[q - self.pairs.len()]
        }
    }
}

/// A product `out[l][j] = Σ_i in[l][i] · matrix[i][j]`, the matrix stored by rows `i`, each padded to
/// a multiple of [`COLUMNS`] with zeros.
#[derive(Clone, Debug)]
struct Product {
    rows: usize,
    padded_columns: usize,
    matrix: Vec<f64>,
}

impl Product {
    fn new(rows: usize, columns: usize, entry: impl Fn(usize, usize) -> f64) -> Self {
        let padded_columns = columns.div_ceil(COLUMNS) * COLUMNS;
        let mut matrix = vec![0.0; rows * padded_columns];
        for i in 0..rows {
            for j in 0..columns {
                matrix[i * padded_columns + j] = entry(i, j);
            }
        }
        Product {
            rows,
            padded_columns,
            matrix,
        }
    }

    /// `out[l * padded_columns + j] = Σ_i input[l * input_stride + i] · matrix[i][j]` for `lines`
    /// lines. Each output is summed over `i` in increasing order, whatever the grouping of lines.
    #[inline(always)]
    fn apply(&self, input: &[f64], input_stride: usize, lines: usize, out: &mut [f64]) {
        let (rows, width) = (self.rows, self.padded_columns);
        if rows == 0 {
            out[..lines * width].fill(0.0);
            return;
        }
        let line_in = |l: usize| &input[l * input_stride..l * input_stride + rows];
        let mut l = 0;
        while l + KERNEL_LINES <= lines {
            let inputs = [line_in(l), line_in(l + 1), line_in(l + 2), line_in(l + 3)];
            for jb in (0..width).step_by(COLUMNS) {
                let mut acc = [[0.0f64; COLUMNS]; KERNEL_LINES];
                for (i, matrix_row) in self.matrix.chunks_exact(width).enumerate() {
                    let m: &[f64; COLUMNS] = matrix_row[jb..jb + COLUMNS].try_into().unwrap();
                    let b = [inputs[0][i], inputs[1][i], inputs[2][i], inputs[3][i]];
                    for (acc_line, &b_line) in acc.iter_mut().zip(&b) {
                        for (a, &mj) in acc_line.iter_mut().zip(m) {
                            *a += b_line * mj;
                        }
                    }
                }
                for (k, acc_line) in acc.iter().enumerate() {
                    let start = (l + k) * width + jb;
                    out[start..start + COLUMNS].copy_from_slice(acc_line);
                }
            }
            l += KERNEL_LINES;
        }
        for l in l..lines {
            let input = line_in(l);
            for jb in (0..width).step_by(COLUMNS) {
                let mut acc = [0.0f64; COLUMNS];
                for (&b, matrix_row) in input.iter().zip(self.matrix.chunks_exact(width)) {
                    let m: &[f64; COLUMNS] = matrix_row[jb..jb + COLUMNS].try_into().unwrap();
                    for (a, &mj) in acc.iter_mut().zip(m) {
                        *a += b * mj;
                    }
                }
                out[l * width + jb..l * width + jb + COLUMNS].copy_from_slice(&acc);
            }
        }
    }
}

/// A real transform of lines of length `n` and its inverse as (folded) dense products.
#[derive(Clone, Debug)]
pub(crate) struct DenseTransform {
    n: usize,
    folding: Folding,
    /// Transform index held by each stored slot: the even rows, then the odd rows.
    slot_order: Vec<usize>,
    /// Number of even rows (stored first).
    even_rows: usize,
    /// Folded even inputs → even rows.
    forward_even: Product,
    /// Folded odd inputs → odd rows.
    forward_odd: Product,
    /// Even coefficients → even part `E_q` of the output.
    inverse_even: Product,
    /// Odd coefficients → odd part `O_q` of the output.
    inverse_odd: Product,
    /// Run the products as the baseline x86-64 build has them (to test that the vector build gives
    /// the same numbers).
    baseline_only: bool,
}

impl DenseTransform {
    /// Reads the matrices of `forward` and `inverse` (in-place transforms of one line of length `n`)
    /// off their action on unit vectors and folds them where they are symmetric.
    pub(crate) fn probe(
        n: usize,
        mut forward: impl FnMut(&mut [f64]),
        mut inverse: impl FnMut(&mut [f64]),
    ) -> Self {
        // forward_matrix[k][p] = F e_p at k; inverse_matrix[p][k] = B e_k at p.
        let mut forward_matrix = vec![0.0; n * n];
        let mut inverse_matrix = vec![0.0; n * n];
        let mut line = vec![0.0; n];
        for p in 0..n {
            line.fill(0.0);
            line[p] = 1.0;
            forward(&mut line);
            for k in 0..n {
                forward_matrix[k * n + p] = line[k];
            }
            line.fill(0.0);
            line[p] = 1.0;
            inverse(&mut line);
            for q in 0..n {
                inverse_matrix[q * n + p] = line[q];
            }
        }
        let f = |k: usize, p: usize| forward_matrix[k * n + p];
        let b = |p: usize, k: usize| inverse_matrix[p * n + k];

        let reflections: [&dyn Fn(usize) -> usize; 2] = [&|p| n - 1 - p, &|p| (n - p) % n];
        let symmetric = reflections
            .iter()
            .find_map(|reflect| row_parities(n, reflect, &f, &b).map(|s| (s, reflect)));
        let (folding, parity) = match symmetric {
            Some((parity, reflect)) => {
                let mut folding = Folding {
                    pairs: Vec::new(),
                    fixed: Vec::new(),
                };
                for p in 0..n {
                    let r = reflect(p);
                    if p < r {
                        folding.pairs.push((p, r));
                    } else if p == r {
                        folding.fixed.push(p);
                    }
                }
                (folding, parity)
            }
            None => (
                Folding {
                    pairs: Vec::new(),
                    fixed: (0..n).collect(),
                },
                vec![true; n],
            ),
        };
        let even: Vec<usize> = (0..n).filter(|&k| parity[k]).collect();
        let odd: Vec<usize> = (0..n).filter(|&k| !parity[k]).collect();
        // An invertible symmetric transform has as many even rows as folded sums, and its first row
        // (the mean, or the lowest mode) is even; anything else is applied whole.
        let consistent = even.first() == Some(&0)
            && even.len() == folding.even_len()
            && odd.len() == folding.odd_len();
        let (folding, even, odd) = if consistent {
            (folding, even, odd)
        } else {
            let whole = Folding {
                pairs: Vec::new(),
                fixed: (0..n).collect(),
            };
            (whole, (0..n).collect(), Vec::new())
        };
        let (ne, no) = (folding.even_len(), folding.odd_len());

        let forward_even =
            Product::new(ne, even.len(), |q, e| f(even[e], folding.even_position(q)));
        let forward_odd = Product::new(no, odd.len(), |q, o| f(odd[o], folding.pairs[q].0));
        let inverse_even =
            Product::new(even.len(), ne, |e, q| b(folding.even_position(q), even[e]));
        let inverse_odd = Product::new(odd.len(), no, |o, q| b(folding.pairs[q].0, odd[o]));
        let even_rows = even.len();
        let slot_order = even.into_iter().chain(odd).collect();
        DenseTransform {
            n,
            folding,
            slot_order,
            even_rows,
            forward_even,
            forward_odd,
            inverse_even,
            inverse_odd,
            baseline_only: false,
        }
    }

    /// Runs `work` compiled for the widest vector instructions of this processor (or the baseline).
    #[inline(always)]
    fn dispatch<R>(&self, work: impl FnOnce() -> R) -> R {
        if self.baseline_only {
            silt_core::simd::baseline(work)
        } else {
            silt_core::simd::vectorized(work)
        }
    }

    /// Transform index held by each stored slot.
    pub(crate) fn slot_order(&self) -> &[usize] {
        &self.slot_order
    }

    /// Scratch values needed by [`Self::forward_lines`] and [`Self::inverse_lines`].
    pub(crate) fn scratch_len(&self) -> usize {
        let folded = self.folding.even_len() + self.folding.odd_len();
        let products = [
            &self.forward_even,
            &self.forward_odd,
            &self.inverse_even,
            &self.inverse_odd,
        ];
        let padded: usize = products.iter().map(|p| p.padded_columns).max().unwrap_or(0);
        LINES * (folded + 2 * padded)
    }

    /// Forward transform of `count` lines: line `l` is read from `src[l * src_stride..][..n]` and its
    /// coefficients (in [`Self::slot_order`]) written to `dst[l * dst_stride..][..n]`.
    pub(crate) fn forward_lines(
        &self,
        src: &[f64],
        src_stride: usize,
        dst: &mut [f64],
        dst_stride: usize,
        count: usize,
        scratch: &mut [f64],
    ) {
        self.dispatch(
            #[inline(always)]
            || {
                let n = self.n;
                let (ne, no) = (self.folding.even_len(), self.folding.odd_len());
                let (sums, rest) = scratch.split_at_mut(LINES * ne);
                let (differences, rest) = rest.split_at_mut(LINES * no);
                let (even_out, rest) = rest.split_at_mut(LINES * self.forward_even.padded_columns);
                let odd_out = &mut rest[..LINES * self.forward_odd.padded_columns];
                for first in (0..count).step_by(LINES) {
                    let lines = LINES.min(count - first);
                    for l in 0..lines {
                        let x = &src[(first + l) * src_stride..][..n];
                        let (sum, difference) =
                            (&mut sums[l * ne..][..ne], &mut differences[l * no..][..no]);
                        for ((s, d), &(p, r)) in sum
                            .iter_mut()
                            .zip(difference.iter_mut())
                            .zip(&self.folding.pairs)
                        {
                            *s = x[p] + x[r];
                            *d = x[p] - x[r];
                        }
                        for (s, &p) in sum[no..].iter_mut().zip(&self.folding.fixed) {
                            *s = x[p];
                        }
                    }
                    self.forward_even.apply(sums, ne, lines, even_out);
                    self.forward_odd.apply(differences, no, lines, odd_out);
                    let (we, wo) = (
                        self.forward_even.padded_columns,
                        self.forward_odd.padded_columns,
                    );
                    for l in 0..lines {
                        let y = &mut dst[(first + l) * dst_stride..][..n];
                        let (y_even, y_odd) = y.split_at_mut(self.even_rows);
                        y_even.copy_from_slice(&even_out[l * we..][..self.even_rows]);
                        y_odd.copy_from_slice(&odd_out[l * wo..][..n - self.even_rows]);
                    }
                }
            },
        )
    }

    /// Inverse of [`Self::forward_lines`] (up to the normalisation of the fast transform it was read
    /// from): coefficients in [`Self::slot_order`] from `src`, values to `dst`.
    pub(crate) fn inverse_lines(
        &self,
        src: &[f64],
        src_stride: usize,
        dst: &mut [f64],
        dst_stride: usize,
        count: usize,
        scratch: &mut [f64],
    ) {
        self.dispatch(
            #[inline(always)]
            || {
                let n = self.n;
                let (ne, no) = (self.folding.even_len(), self.folding.odd_len());
                let (we, wo) = (
                    self.inverse_even.padded_columns,
                    self.inverse_odd.padded_columns,
                );
                let (even_part, rest) = scratch.split_at_mut(LINES * we);
                let odd_part = &mut rest[..LINES * wo];
                for first in (0..count).step_by(LINES) {
                    let lines = LINES.min(count - first);
                    let block = &src[first * src_stride..];
                    self.inverse_even.apply(block, src_stride, lines, even_part);
                    self.inverse_odd
                        .apply(&block[self.even_rows..], src_stride, lines, odd_part);
                    for l in 0..lines {
                        let x = &mut dst[(first + l) * dst_stride..][..n];
                        let (e, o) = (&even_part[l * we..][..ne], &odd_part[l * wo..][..no]);
                        for ((&ev, &od), &(p, r)) in e.iter().zip(o).zip(&self.folding.pairs) {
                            x[p] = ev + od;
                            x[r] = ev - od;
                        }
                        for (&ev, &p) in e[no..].iter().zip(&self.folding.fixed) {
                            x[p] = ev;
                        }
                    }
                }
            },
        )
    }
}

/// Parity (`true` = even) of every row of `f` under `reflect`, if every row is even or odd and every
/// column of the inverse `b` has the same parity; `None` otherwise.
fn row_parities(
    n: usize,
    reflect: &dyn Fn(usize) -> usize,
    f: &dyn Fn(usize, usize) -> f64,
    b: &dyn Fn(usize, usize) -> f64,
) -> Option<Vec<bool>> {
    let scale_f = (0..n * n)
        .map(|i| f(i / n, i % n).abs())
        .fold(0.0, f64::max);
    let scale_b = (0..n * n)
        .map(|i| b(i / n, i % n).abs())
        .fold(0.0, f64::max);
    let (tol_f, tol_b) = (1e-10 * scale_f, 1e-10 * scale_b);
    (0..n)
        .map(|k| {
            let even = (0..n).all(|p| (f(k, reflect(p)) - f(k, p)).abs() <= tol_f)
                && (0..n).all(|p| (b(reflect(p), k) - b(p, k)).abs() <= tol_b);
            let odd = (0..n).all(|p| (f(k, reflect(p)) + f(k, p)).abs() <= tol_f)
                && (0..n).all(|p| (b(reflect(p), k) + b(p, k)).abs() <= tol_b);
            match (even, odd) {
                (true, false) => Some(true),
                (false, true) => Some(false),
                _ => None,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::Lcg;

    #[test]
    fn largest_prime_factors() {
        let cases = [
            (1, 1),
            (2, 2),
            (12, 3),
            (31, 31),
            (107, 107),
            (171, 19),
            (214, 107),
            (256, 2),
        ];
        for (n, p) in cases {
            assert_eq!(largest_prime_factor(n), p, "n = {n}");
        }
        assert!(prefers_dense(107) && prefers_dense(37) && prefers_dense(214));
        assert!(!prefers_dense(100) && !prefers_dense(171) && !prefers_dense(128));
        assert!(!prefers_dense(257), "beyond the dense length limit");
    }

    /// A transform without reflection symmetry: a random matrix and its (exact) inverse pattern are
    /// reproduced by the unfolded product, in natural slot order.
    #[test]
    fn unsymmetric_matrix_is_applied_whole() {
        let n = 11;
        let a = Lcg(4).vec(n * n);
        let apply = |line: &mut [f64]| {
            let x = line.to_vec();
            for (k, y) in line.iter_mut().enumerate() {
                *y = (0..n).map(|p| a[k * n + p] * x[p]).sum();
            }
        };
        let t = DenseTransform::probe(n, apply, apply);
        assert_eq!(t.slot_order(), (0..n).collect::<Vec<_>>());
        assert!(
            t.folding.pairs.is_empty(),
            "a random matrix has no reflection symmetry"
        );
        let count = 13;
        let x = Lcg(5).vec(count * n);
        let mut y = vec![f64::NAN; count * n];
        let mut scratch = vec![f64::NAN; t.scratch_len()];
        t.forward_lines(&x, n, &mut y, n, count, &mut scratch);
        for l in 0..count {
            let mut expect = x[l * n..(l + 1) * n].to_vec();
            apply(&mut expect);
            for k in 0..n {
                assert!(
                    (y[l * n + k] - expect[k]).abs() < 1e-13,
                    "line {l} slot {k}"
                );
            }
        }
    }

    /// A DCT-II by its definition folds into even and odd rows; the vector build and the baseline
    /// build give the same bits, forward and inverse, for every line count.
    #[test]
    fn folded_transform_is_the_same_on_every_instruction_set() {
        use std::f64::consts::PI;
        for n in [37, 38] {
            let nf = n as f64;
            let dct2 = |line: &mut [f64]| {
                let x = line.to_vec();
                for (k, y) in line.iter_mut().enumerate() {
                    *y = (0..n)
                        .map(|p| x[p] * (PI * k as f64 * (p as f64 + 0.5) / nf).cos())
                        .sum();
                }
            };
            let dct3 = |line: &mut [f64]| {
                let c = line.to_vec();
                for (p, y) in line.iter_mut().enumerate() {
                    *y = 0.5 * c[0]
                        + (1..n)
                            .map(|k| c[k] * (PI * k as f64 * (p as f64 + 0.5) / nf).cos())
                            .sum::<f64>();
                }
            };
            let vector = DenseTransform::probe(n, dct2, dct3);
            assert_eq!(vector.folding.pairs.len(), n / 2, "n = {n}: DCT-II folds");
            let order = vector.slot_order();
            assert!(
                order[..n.div_ceil(2)].iter().all(|k| k % 2 == 0),
                "even rows first"
            );
            let mut baseline = vector.clone();
            baseline.baseline_only = true;
            for count in [1, 3, 4, 8, 13] {
                let x = Lcg(count as u64).vec(count * n);
                let run = |t: &DenseTransform| {
                    let mut y = vec![f64::NAN; count * n];
                    let mut back = vec![f64::NAN; count * n];
                    let mut scratch = vec![f64::NAN; t.scratch_len()];
                    t.forward_lines(&x, n, &mut y, n, count, &mut scratch);
                    t.inverse_lines(&y, n, &mut back, n, count, &mut scratch);
                    (y, back)
                };
                let (y, back) = run(&vector);
                let (y_base, back_base) = run(&baseline);
                let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&y), bits(&y_base), "n = {n}, {count} lines: forward");
                assert_eq!(
                    bits(&back),
                    bits(&back_base),
                    "n = {n}, {count} lines: inverse"
                );
                for l in 0..count {
                    let mut expect = x[l * n..(l + 1) * n].to_vec();
                    dct2(&mut expect);
                    for (s, &k) in order.iter().enumerate() {
                        assert!((y[l * n + s] - expect[k]).abs() < 1e-12, "slot {s}");
                    }
                    for p in 0..n {
                        let round_trip = back[l * n + p] / (0.5 * nf);
                        assert!((round_trip - x[l * n + p]).abs() < 1e-13, "round trip");
                    }
                }
            }
        }
    }
}
