//! The wave space's transforms (issue 25, [`crate::spectral`]): a grid of three complex values per
//! point taken to Fourier space, a kernel applied to each pair of modes `(k, −k)`, and taken back, in
//! three passes over the grid's memory rather than one per axis and transpose:
//! 1. the y lines (y is the slowest axis), blocks of columns gathered into cache, transformed and put back;
//! 2. each pair of planes of wave numbers `±k_y` whole in cache: the x lines, a transpose, the z lines,
//!    the kernel on the three grids' modes of both planes, and the way back;
//! 3. the inverse y lines.
//!
//! The grid is in `(x, z, y)` order (x fastest, y slowest), the three values of a point together: value
//! `c` of point `(x, y, z)` at `3 (x + n_x (z + n_z y)) + c` (the spreading and the interpolation then
//! run over contiguous memory). Every line is
//! transformed by itself and every mode pair by itself, so the numbers do not depend on the threads.

use rayon::prelude::*;
use rustfft::num_complex::Complex64;
use rustfft::{Fft, FftPlanner};
use std::sync::Arc;

/// Columns of each y slab gathered together in the y pass (four cache lines).
const COLUMNS_PER_BLOCK: usize = 16;

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

/// One pair of y planes' working memory: each value's modes of the plane and of its mirror in
/// `(z, x)` order (z fastest), and the FFTs' scratch.
struct PlaneScratch {
    modes: [[Vec<Complex64>; 2]; 3],
    /// One value's plane in `(x, z)` order.
    lines: Vec<Complex64>,
    fft: Vec<Complex64>,
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

    /// The grid (in `(x, z, y)` order, three packed values per point) replaced by the inverse
    /// transform (unnormalised) of `kernel` applied to its forward transform (unnormalised).
    /// `kernel(mode, here, there)` gets the grid indices `[i, j, l]` of a mode `k`, the three values at
    /// `k` and at its mirror `−k`, and returns the new values at `k` and at `−k`; it is called once per
    /// pair (a mode that is its own mirror gets itself as `there`, and its value at `k` is kept).
    /// `needed(i, j)` says whether any mode of the z line at x and y indices `i`, `j` can be nonzero
    /// after the kernel (the same for `−i, −j`): the others are not transformed along z, nor the y
    /// planes that have none.
    pub(crate) fn convolve<K, N>(&self, grid: &mut [Complex64], kernel: &K, needed: &N)
    where
        K: Fn([usize; 3], &Packed, &Packed) -> (Packed, Packed) + Sync,
        N: Fn(usize, usize) -> bool + Sync,
    {
        let points = self.grid.iter().product::<usize>();
        assert_eq!(
            grid.len(),
            3 * points,
            "GridTransforms::convolve: three values at each of {points} points expected"
        );
        self.y_lines(grid, &self.forward[1]);
        self.plane_pairs(grid, kernel, needed);
        self.y_lines(grid, &self.inverse[1]);
    }

    /// The y lines of the three packed grids transformed by `plan`: each task gathers a block of
    /// columns (the same few x-z points of every y slab) into a contiguous buffer per value,
    /// transforms its lines and puts them back.
    fn y_lines(&self, grid: &mut [Complex64], plan: &Arc<dyn Fft<f64>>) {
        let [n0, n1, n2] = self.grid;
        let slab = 3 * n0 * n2;
        let block = 3 * COLUMNS_PER_BLOCK;
        let blocks = slab.div_ceil(block);
        let mut tasks: Vec<Vec<&mut [Complex64]>> =
            (0..blocks).map(|_| Vec::with_capacity(n1)).collect();
        for values in grid.chunks_mut(slab) {
            for (k, piece) in values.chunks_mut(block).enumerate() {
                tasks[k].push(piece);
            }
        }
        tasks.into_par_iter().for_each_init(
            || {
                (
                    vec![Complex64::default(); block * n1],
                    vec![Complex64::default(); self.scratch],
                )
            },
            |(buffer, scratch), mut pieces| {
                // Line m (a column and one of its three values) at buffer[m n1 ..].
                let width = pieces[0].len();
                for (y, piece) in pieces.iter().enumerate() {
                    for (m, value) in piece.iter().enumerate() {
                        buffer[m * n1 + y] = *value;
                    }
                }
                plan.process_with_scratch(&mut buffer[..width * n1], scratch);
                for (y, piece) in pieces.iter_mut().enumerate() {
                    for (m, value) in piece.iter_mut().enumerate() {
                        *value = buffer[m * n1 + y];
                    }
                }
            },
        );
    }

    /// Each pair of y planes `j` and `−j` (a plane that is its own mirror alone): to Fourier space
    /// along x and z, the kernel on every mode pair, and back.
    fn plane_pairs<K, N>(&self, grid: &mut [Complex64], kernel: &K, needed: &N)
    where
        K: Fn([usize; 3], &Packed, &Packed) -> (Packed, Packed) + Sync,
        N: Fn(usize, usize) -> bool + Sync,
    {
        let [n0, n1, n2] = self.grid;
        let plane = n0 * n2;
        let mut planes: Vec<Option<&mut [Complex64]>> =
            grid.chunks_mut(3 * plane).map(Some).collect();
        let mut pairs = Vec::new();
        for j in 0..n1 {
            let mirror = (n1 - j) % n1;
            if mirror < j {
                continue;
            }
            let first = planes[j].take().expect("each plane once");
            let second = if mirror == j {
                None
            } else {
                planes[mirror].take()
            };
            pairs.push((j, first, second));
        }
        pairs.into_par_iter().for_each_init(
            || PlaneScratch {
                modes: std::array::from_fn(|_| {
                    std::array::from_fn(|_| vec![Complex64::default(); plane])
                }),
                lines: vec![Complex64::default(); plane],
                fft: vec![Complex64::default(); self.scratch],
            },
            |scratch, (j, first, mut second)| {
                let PlaneScratch { modes, lines, fft } = scratch;
                let count = if second.is_some() { 2 } else { 1 };
                // The z lines of each plane: a column and its mirror both or neither (the second
                // plane's columns the mirrors of the first's).
                let columns: Vec<bool> = (0..n0)
                    .map(|i| needed(i, j) || needed((n0 - i) % n0, (n1 - j) % n1))
                    .collect();
                if !columns.iter().any(|&c| c) {
                    // Every mode of both planes vanishes, and so does the field.
                    first.fill(Complex64::default());
                    if let Some(values) = second.as_deref_mut() {
                        values.fill(Complex64::default());
                    }
                    return;
                }
                let mirrored: Vec<bool> = (0..n0).map(|i| columns[(n0 - i) % n0]).collect();
                let lines_of = |p: usize| if p == 0 { &columns } else { &mirrored };
                for p in 0..count {
                    let values: &[Complex64] = match p {
                        0 => first,
                        _ => second.as_deref().expect("two planes"),
                    };
                    for (c, modes) in modes.iter_mut().enumerate() {
                        self.plane_to_modes(values, c, lines, &mut modes[p], lines_of(p), fft);
                    }
                }
                self.plane_kernel(j, count, modes, &columns, kernel);
                for p in 0..count {
                    let values: &mut [Complex64] = match p {
                        0 => first,
                        _ => second.as_deref_mut().expect("two planes"),
                    };
                    for (c, modes) in modes.iter_mut().enumerate() {
                        self.modes_to_plane(&mut modes[p], lines, values, c, lines_of(p), fft);
                    }
                }
            },
        );
    }

    /// Value `c` of a packed y plane in `(x, z)` order to its x-z modes in `(z, x)` order: the x
    /// lines (in `lines`), a transpose, the z lines of the `needed` columns (the others zero).
    fn plane_to_modes(
        &self,
        values: &[Complex64],
        c: usize,
        lines: &mut [Complex64],
        modes: &mut [Complex64],
        needed: &[bool],
        scratch: &mut [Complex64],
    ) {
        let [n0, _, n2] = self.grid;
        for (line, packed) in lines.iter_mut().zip(values.chunks_exact(3)) {
            *line = packed[c];
        }
        self.forward[0].process_with_scratch(lines, scratch);
        for (i, column) in modes.chunks_exact_mut(n2).enumerate() {
            if needed[i] {
                for (l, mode) in column.iter_mut().enumerate() {
                    *mode = lines[i + n0 * l];
                }
                self.forward[2].process_with_scratch(column, scratch);
            } else {
                column.fill(Complex64::default());
            }
        }
    }

    /// The inverse of [`GridTransforms::plane_to_modes`] (unnormalised) into value `c` of the packed
    /// plane (the columns not `needed` are zero and stay so); `modes` and `lines` are overwritten.
    fn modes_to_plane(
        &self,
        modes: &mut [Complex64],
        lines: &mut [Complex64],
        values: &mut [Complex64],
        c: usize,
        needed: &[bool],
        scratch: &mut [Complex64],
    ) {
        let [n0, _, n2] = self.grid;
        for (column, _) in modes.chunks_exact_mut(n2).zip(needed).filter(|(_, &n)| n) {
            self.inverse[2].process_with_scratch(column, scratch);
        }
        for l in 0..n2 {
            for (i, value) in lines[n0 * l..n0 * (l + 1)].iter_mut().enumerate() {
                *value = modes[l + n2 * i];
            }
        }
        self.inverse[0].process_with_scratch(lines, scratch);
        for (line, packed) in lines.iter().zip(values.chunks_exact_mut(3)) {
            packed[c] = *line;
        }
    }

    /// The kernel on the modes of plane `j` (`modes[c][0]`) and of its mirror (`modes[c][1]`, when
    /// `count` is 2; otherwise the plane is its own mirror and each pair within it is visited once).
    fn plane_kernel<K>(
        &self,
        j: usize,
        count: usize,
        modes: &mut [[Vec<Complex64>; 2]; 3],
        needed: &[bool],
        kernel: &K,
    ) where
        K: Fn([usize; 3], &Packed, &Packed) -> (Packed, Packed) + Sync,
    {
        let [n0, _, n2] = self.grid;
        let mirror_plane = count - 1;
        for i in (0..n0).filter(|&i| needed[i]) {
            let mirror_i = (n0 - i) % n0;
            for l in 0..n2 {
                let at = l + n2 * i;
                let mirror = (n2 - l) % n2 + n2 * mirror_i;
                if count == 1 && mirror < at {
                    continue; // done with its mirror
                }
                let here: Packed = std::array::from_fn(|c| modes[c][0][at]);
                let there: Packed = std::array::from_fn(|c| modes[c][mirror_plane][mirror]);
                let (at_k, at_minus_k) = kernel([i, j, l], &here, &there);
                for c in 0..3 {
                    modes[c][mirror_plane][mirror] = at_minus_k[c];
                    modes[c][0][at] = at_k[c];
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The transforms with a kernel that multiplies each mode by a factor even in `k` give the
    /// circular convolution computed directly (a 3-D DFT by sums), for odd and even sizes.
    #[test]
    fn convolution_matches_the_direct_transform() {
        for grid in [[4usize, 6, 5], [5, 4, 6], [3, 3, 2]] {
            let [n0, n1, n2] = grid;
            let points = n0 * n1 * n2;
            let value = |c: usize, p: usize| {
                Complex64::new(
                    ((p * 7 + c * 3) % 11) as f64 - 5.0,
                    ((p * 5 + c) % 7) as f64,
                )
            };
            let mut packed: Vec<Complex64> = (0..3 * points).map(|m| value(m % 3, m / 3)).collect();
            let original: [Vec<Complex64>; 3] =
                std::array::from_fn(|c| (0..points).map(|p| value(c, p)).collect());
            let signed = |i: usize, n: usize| {
                if 2 * i <= n {
                    i as f64
                } else {
                    i as f64 - n as f64
                }
            };
            let factor = |[i, j, l]: [usize; 3]| {
                let k2 = signed(i, n0).powi(2) + signed(j, n1).powi(2) + signed(l, n2).powi(2);
                1.0 / (1.0 + k2)
            };
            // Component c at k takes the mode of component (c + 1) % 3 (a mixing kernel).
            let kernel = |m: [usize; 3], here: &Packed, there: &Packed| {
                let mirror = [(n0 - m[0]) % n0, (n1 - m[1]) % n1, (n2 - m[2]) % n2];
                (
                    std::array::from_fn(|c| here[(c + 1) % 3] * factor(m)),
                    std::array::from_fn(|c| there[(c + 1) % 3] * factor(mirror)),
                )
            };
            GridTransforms::new(grid).convolve(&mut packed, &kernel, &|_, _| true);
            // Direct: DFT, kernel, inverse DFT (unnormalised both ways).
            let index = |x: usize, y: usize, z: usize| x + n0 * (z + n2 * y);
            let phase = |x: usize, y: usize, z: usize, i: usize, j: usize, l: usize| {
                let t = (x * i) as f64 / n0 as f64
                    + (y * j) as f64 / n1 as f64
                    + (z * l) as f64 / n2 as f64;
                Complex64::from_polar(1.0, -2.0 * std::f64::consts::PI * t)
            };
            for c in 0..3 {
                let source = (c + 1) % 3;
                for (x, y, z) in
                    (0..n0).flat_map(|x| (0..n1).flat_map(move |y| (0..n2).map(move |z| (x, y, z))))
                {
                    let mut expected = Complex64::default();
                    for (i, j, l) in (0..n0)
                        .flat_map(|i| (0..n1).flat_map(move |j| (0..n2).map(move |l| (i, j, l))))
                    {
                        let mut mode = Complex64::default();
                        for (a, b, d) in (0..n0).flat_map(|a| {
                            (0..n1).flat_map(move |b| (0..n2).map(move |d| (a, b, d)))
                        }) {
                            mode += original[source][index(a, b, d)] * phase(a, b, d, i, j, l);
                        }
                        expected += mode * factor([i, j, l]) * phase(x, y, z, i, j, l).conj();
                    }
                    let got = packed[3 * index(x, y, z) + c];
                    assert!(
                        (got - expected).norm() < 1e-9 * (1.0 + expected.norm()),
                        "grid {grid:?}, component {c} at ({x}, {y}, {z}): {got} against {expected}"
                    );
                }
            }
        }
    }
}
