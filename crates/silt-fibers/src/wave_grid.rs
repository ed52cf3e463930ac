//! The wave space's transforms (issue 25, [`crate::spectral`]) for a grid of three complex values per
//! point, slab by slab so that the grid's memory is swept as few times as possible:
//! 1. each y slab, as it is spread, is taken to Fourier space along x and z in cache
//!    ([`GridTransforms::slab_to_modes`]);
//! 2. the y lines of each pair of mirror x wave numbers `±k_x` are gathered, transformed, the kernel
//!    applied to every mode pair `(k, −k)` among them, and transformed back ([`GridTransforms::y_kernel`]);
//! 3. each y slab is taken back along z and x in cache, and interpolated from
//!    ([`GridTransforms::modes_to_slab`]).
//!
//! Only the z lines whose `(k_x, k_z)` lie within the wave cutoff (`needed`) are transformed and
//! carried between the stages; the others are zero. A y slab of the grid in memory holds its modes
//! value by value, x wave number by x wave number, z fastest: value `c` of mode `(i, j, l)` at
//! `j S + c n_x n_z + i n_z + l` with `S = 3 n_x n_z`. Between the stages a slab in cache is a plane of
//! points in `(x, z)` order (x fastest) with the three values of a point together: value `c` of point
//! `(x, z)` at `3 (x + n_x z) + c`. Every line is transformed by itself and every mode pair by itself,
//! so the numbers do not depend on the threads.

use rayon::prelude::*;
use rustfft::num_complex::Complex64;
use rustfft::{Fft, FftPlanner};
use std::sync::Arc;

/// The three packed values at a mode.
pub(crate) type Packed = [Complex64; 3];

/// The 3-D transforms of grids of one size.
pub(crate) struct GridTransforms {
    /// Points along x, y, z.
    grid: [usize; 3],
    forward: [Arc<dyn Fft<f64>>; 3],
    inverse: [Arc<dyn Fft<f64>>; 3],
    /// The longest scratch any plan asks for.
    scratch: usize,
}

/// A thread's working memory for slabs: one value's plane in `(x, z)` order, one z line, and the
/// FFTs' scratch.
pub(crate) struct SlabScratch {
    lines: Vec<Complex64>,
    column: Vec<Complex64>,
    fft: Vec<Complex64>,
}

/// Slabs gathered into the y lines (and scattered back) together: four complex values fill a
/// 64-byte cache line of a line.
const TRANSPOSE_BLOCK: usize = 4;

/// Visits `(slab j, value c, z index l)` for the `n1` slabs and the z indices that are `needed`,
/// [`TRANSPOSE_BLOCK`] slabs at a time (so that each y line's cache line is visited whole).
#[inline(always)]
fn blocked_transpose(
    n1: usize,
    n2: usize,
    needed: impl Fn(usize) -> bool,
    mut visit: impl FnMut(usize, usize, usize),
) {
    for first_j in (0..n1).step_by(TRANSPOSE_BLOCK) {
        let last_j = n1.min(first_j + TRANSPOSE_BLOCK);
        for c in 0..3 {
            for l in (0..n2).filter(|&l| needed(l)) {
                for j in first_j..last_j {
                    visit(j, c, l);
                }
            }
        }
    }
}

impl GridTransforms {
    pub(crate) fn new(grid: [usize; 3]) -> Self {
        let mut planner = FftPlanner::new();
        let forward = grid.map(|n| planner.plan_fft_forward(n));
        let inverse = grid.map(|n| planner.plan_fft_inverse(n));
        let scratch = forward
            .iter()
            .chain(&inverse)
            .map(|plan| plan.get_inplace_scratch_len())
            .max()
            .unwrap_or(0);
        GridTransforms {
            grid,
            forward,
            inverse,
            scratch,
        }
    }

    /// Complex values a y slab takes (in memory and as a plane in cache).
    pub(crate) fn slab_len(&self) -> usize {
        3 * self.grid[0] * self.grid[2]
    }

    /// A thread's working memory.
    pub(crate) fn slab_scratch(&self) -> SlabScratch {
        let [n0, _, n2] = self.grid;
        SlabScratch {
            lines: vec![Complex64::default(); n0 * n2],
            column: vec![Complex64::default(); n2],
            fft: vec![Complex64::default(); self.scratch],
        }
    }

    /// Stage 1: a y slab's `plane` of points (three values each, `(x, z)` order) to its x-z modes in
    /// the slab's memory `slab`: for each value the x lines, then the z lines of the x wave numbers
    /// with `needed_x` (the others are left as they were: never read).
    pub(crate) fn slab_to_modes(
        &self,
        plane: &[Complex64],
        slab: &mut [Complex64],
        needed_x: &[bool],
        work: &mut SlabScratch,
    ) {
        let [n0, _, n2] = self.grid;
        let SlabScratch { lines, fft, .. } = work;
        for (c, modes) in slab.chunks_exact_mut(n0 * n2).enumerate() {
            for (line, point) in lines.iter_mut().zip(plane.chunks_exact(3)) {
                *line = point[c];
            }
            self.forward[0].process_with_scratch(lines, fft);
            for (i, column) in modes.chunks_exact_mut(n2).enumerate() {
                if needed_x[i] {
                    for (l, mode) in column.iter_mut().enumerate() {
                        *mode = lines[i + n0 * l];
                    }
                    self.forward[2].process_with_scratch(column, fft);
                }
            }
        }
    }

    /// Stage 3: a y slab's x-z modes back to its `plane` of points (unnormalised), the modes outside
    /// `needed(i, l)` taken as zero.
    pub(crate) fn modes_to_slab<N>(
        &self,
        slab: &[Complex64],
        plane: &mut [Complex64],
        needed: &N,
        work: &mut SlabScratch,
    ) where
        N: Fn(usize, usize) -> bool,
    {
        let [n0, _, n2] = self.grid;
        let SlabScratch { lines, column, fft } = work;
        for (c, modes) in slab.chunks_exact(n0 * n2).enumerate() {
            for (i, values) in modes.chunks_exact(n2).enumerate() {
                let mut any = false;
                for (l, (mode, value)) in column.iter_mut().zip(values).enumerate() {
                    *mode = if needed(i, l) {
                        any = true;
                        *value
                    } else {
                        Complex64::default()
                    };
                }
                if any {
                    self.inverse[2].process_with_scratch(column, fft);
                }
                for (l, mode) in column.iter().enumerate() {
                    lines[i + n0 * l] = *mode;
                }
            }
            self.inverse[0].process_with_scratch(lines, fft);
            for (line, point) in lines.iter().zip(plane.chunks_exact_mut(3)) {
                point[c] = *line;
            }
        }
    }

    /// Stage 2: for each pair of x wave numbers `i` and `−i` (one that is its own mirror alone), the
    /// y lines of its needed z wave numbers gathered from every slab, transformed, the kernel applied
    /// to every mode pair, transformed back and put back. `kernel(mode, here, there)` gets the grid
    /// indices `[i, j, l]` of a mode `k`, the three values at `k` and at its mirror `−k`, and returns
    /// the new values at `k` and at `−k`; it is called once per pair (a mode that is its own mirror
    /// gets itself as `there`, and its value at `k` is kept).
    pub(crate) fn y_kernel<K, N>(&self, grid: &mut [Complex64], kernel: &K, needed: &N)
    where
        K: Fn([usize; 3], &Packed, &Packed) -> (Packed, Packed) + Sync,
        N: Fn(usize, usize) -> bool + Sync,
    {
        let [n0, n1, n2] = self.grid;
        assert_eq!(
            grid.len(),
            3 * n0 * n1 * n2,
            "GridTransforms::y_kernel: three values at each point"
        );
        // Per x wave number, its z lines (value c) in every slab.
        let mut rows: Vec<Vec<&mut [Complex64]>> =
            (0..n0).map(|_| Vec::with_capacity(3 * n1)).collect();
        for slab in grid.chunks_mut(3 * n0 * n2) {
            for (k, row) in slab.chunks_mut(n2).enumerate() {
                rows[k % n0].push(row);
            }
        }
        // rows[i][3 j + c] is value c of slab j at x wave number i.
        let mut rows: Vec<Option<Vec<&mut [Complex64]>>> = rows.into_iter().map(Some).collect();
        let mut tasks = Vec::new();
        for i in 0..n0 {
            let mirror = (n0 - i) % n0;
            if mirror < i {
                continue;
            }
            let first = rows[i].take().expect("each x wave number once");
            let second = if mirror == i {
                None
            } else {
                rows[mirror].take()
            };
            tasks.push((i, first, second));
        }
        tasks.into_par_iter().for_each_init(
            || {
                (
                    vec![Complex64::default(); 6 * n1 * n2],
                    vec![Complex64::default(); self.scratch],
                )
            },
            |(lines, fft), (i, mut first, mut second)| {
                let mirror_i = (n0 - i) % n0;
                let count = if second.is_some() { 2 } else { 1 };
                // Line (p, c, l) at lines[((p 3 + c) n2 + l) n1 ..]: p 0 for i, 1 for −i.
                let line = |p: usize, c: usize, l: usize| ((p * 3 + c) * n2 + l) * n1;
                let needed_l: Vec<bool> = (0..n2)
                    .map(|l| needed(i, l) || needed(mirror_i, (n2 - l) % n2))
                    .collect();
                if !needed_l.iter().any(|&n| n) {
                    return;
                }
                // The z lines of set p (0: i, 1: −i) that hold needed modes.
                let mirror_l = |p: usize, l: usize| if p == 0 { l } else { (n2 - l) % n2 };
                for p in 0..count {
                    let rows = if p == 0 {
                        &first
                    } else {
                        second.as_ref().expect("two")
                    };
                    blocked_transpose(
                        n1,
                        n2,
                        |l| needed_l[mirror_l(p, l)],
                        |j, c, l| {
                            lines[line(p, c, l) + j] = rows[3 * j + c][l];
                        },
                    );
                }
                for p in 0..count {
                    for c in 0..3 {
                        for l in (0..n2).filter(|&l| needed_l[mirror_l(p, l)]) {
                            let start = line(p, c, l);
                            self.forward[1]
                                .process_with_scratch(&mut lines[start..start + n1], fft);
                        }
                    }
                }
                // The kernel: mode (i, j, l) pairs with (−i, −j, −l), in the second set of lines
                // (or the first, for an x wave number that is its own mirror).
                let other = count - 1;
                for l in (0..n2).filter(|&l| needed_l[l]) {
                    let minus_l = (n2 - l) % n2;
                    for j in 0..n1 {
                        let minus_j = (n1 - j) % n1;
                        if count == 1 && (minus_l, minus_j) < (l, j) {
                            continue; // done with its mirror
                        }
                        let here: Packed = std::array::from_fn(|c| lines[line(0, c, l) + j]);
                        let there: Packed =
                            std::array::from_fn(|c| lines[line(other, c, minus_l) + minus_j]);
                        let (at_k, at_minus_k) = kernel([i, j, l], &here, &there);
                        for c in 0..3 {
                            lines[line(other, c, minus_l) + minus_j] = at_minus_k[c];
                            lines[line(0, c, l) + j] = at_k[c];
                        }
                    }
                }
                for p in 0..count {
                    for c in 0..3 {
                        for l in (0..n2).filter(|&l| needed_l[mirror_l(p, l)]) {
                            let start = line(p, c, l);
                            self.inverse[1]
                                .process_with_scratch(&mut lines[start..start + n1], fft);
                        }
                    }
                }
                for p in 0..count {
                    let rows = if p == 0 {
                        &mut first
                    } else {
                        second.as_mut().expect("two")
                    };
                    blocked_transpose(
                        n1,
                        n2,
                        |l| needed_l[mirror_l(p, l)],
                        |j, c, l| {
                            rows[3 * j + c][l] = lines[line(p, c, l) + j];
                        },
                    );
                }
            },
        );
    }

    /// The three stages on a grid of points (three values each, y slabs in `(x, z)` order one after
    /// another), in place: the inverse transform (unnormalised) of `kernel` applied to the forward
    /// transform (unnormalised). For tests; the product runs the stages itself, with the spreading
    /// and the interpolation inside stages 1 and 3.
    #[cfg(test)]
    pub(crate) fn convolve<K, N>(&self, points: &mut [Complex64], kernel: &K, needed: &N)
    where
        K: Fn([usize; 3], &Packed, &Packed) -> (Packed, Packed) + Sync,
        N: Fn(usize, usize) -> bool + Sync,
    {
        let [n0, n1, _] = self.grid;
        let slab = self.slab_len();
        let needed_x: Vec<bool> = (0..n0)
            .map(|i| (0..self.grid[2]).any(|l| needed(i, l)))
            .collect();
        let mut grid = vec![Complex64::default(); slab * n1];
        let mut work = self.slab_scratch();
        for (plane, modes) in points.chunks_exact(slab).zip(grid.chunks_exact_mut(slab)) {
            self.slab_to_modes(plane, modes, &needed_x, &mut work);
        }
        self.y_kernel(&mut grid, kernel, needed);
        for (plane, modes) in points.chunks_exact_mut(slab).zip(grid.chunks_exact(slab)) {
            self.modes_to_slab(modes, plane, needed, &mut work);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The transforms with a kernel that mixes the three values and weights each mode by a factor
    /// even in `k` give the circular convolution computed directly (a 3-D DFT by sums), for odd and
    /// even sizes, with every z line kept and with some left out (their modes then zero).
    #[test]
    fn convolution_matches_the_direct_transform() {
        for grid in [[4usize, 6, 5], [5, 4, 6], [3, 3, 2], [6, 5, 4]] {
            let [n0, n1, n2] = grid;
            let points = n0 * n1 * n2;
            let signed = |i: usize, n: usize| {
                if 2 * i <= n {
                    i as f64
                } else {
                    i as f64 - n as f64
                }
            };
            for prune in [false, true] {
                // Left out: the z lines with |k_x| + |k_z| > 2.
                let needed =
                    |i: usize, l: usize| !prune || signed(i, n0).abs() + signed(l, n2).abs() <= 2.0;
                let value = |c: usize, p: usize| {
                    Complex64::new(
                        ((p * 7 + c * 3) % 11) as f64 - 5.0,
                        ((p * 5 + c) % 7) as f64,
                    )
                };
                let mut packed: Vec<Complex64> =
                    (0..3 * points).map(|m| value(m % 3, m / 3)).collect();
                let original: [Vec<Complex64>; 3] =
                    std::array::from_fn(|c| (0..points).map(|p| value(c, p)).collect());
                let factor = |[i, j, l]: [usize; 3]| {
                    if !needed(i, l) {
                        return 0.0;
                    }
                    let k2 = signed(i, n0).powi(2) + signed(j, n1).powi(2) + signed(l, n2).powi(2);
                    1.0 / (1.0 + k2)
                };
                // Value c at k takes the mode of value (c + 1) % 3.
                let kernel = |m: [usize; 3], here: &Packed, there: &Packed| {
                    let mirror = [(n0 - m[0]) % n0, (n1 - m[1]) % n1, (n2 - m[2]) % n2];
                    (
                        std::array::from_fn(|c| here[(c + 1) % 3] * factor(m)),
                        std::array::from_fn(|c| there[(c + 1) % 3] * factor(mirror)),
                    )
                };
                GridTransforms::new(grid).convolve(&mut packed, &kernel, &needed);
                // Direct: DFT, kernel, inverse DFT (unnormalised both ways), point (x, y, z) at
                // x + n0 (z + n2 y).
                let index = |x: usize, y: usize, z: usize| x + n0 * (z + n2 * y);
                let phase = |x: usize, y: usize, z: usize, i: usize, j: usize, l: usize| {
                    let t = (x * i) as f64 / n0 as f64
                        + (y * j) as f64 / n1 as f64
                        + (z * l) as f64 / n2 as f64;
                    Complex64::from_polar(1.0, -2.0 * std::f64::consts::PI * t)
                };
                let all = |a: usize, b: usize, d: usize| {
                    (0..a)
                        .flat_map(move |x| (0..b).flat_map(move |y| (0..d).map(move |z| (x, y, z))))
                };
                for c in 0..3 {
                    let source = (c + 1) % 3;
                    for (x, y, z) in all(n0, n1, n2) {
                        let mut expected = Complex64::default();
                        for (i, j, l) in all(n0, n1, n2) {
                            let mut mode = Complex64::default();
                            for (a, b, d) in all(n0, n1, n2) {
                                mode += original[source][index(a, b, d)] * phase(a, b, d, i, j, l);
                            }
                            expected += mode * factor([i, j, l]) * phase(x, y, z, i, j, l).conj();
                        }
                        let got = packed[3 * index(x, y, z) + c];
                        assert!(
                            (got - expected).norm() < 1e-9 * (1.0 + expected.norm()),
                            "grid {grid:?}, pruned {prune}, value {c} at ({x}, {y}, {z}): {got} \
                             against {expected}"
                        );
                    }
                }
            }
        }
    }
}
