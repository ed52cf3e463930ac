//! Crank–Nicolson Helmholtz systems `(a + b·L_h) x = f` (`a > 0`, `b < 0`) by Jacobi sweeps fused
//! across z-planes.
//!
//! The seed solves its implicit viscous systems iteratively (conjugate gradients); at the viscous
//! numbers `d = |b|/h²` of a resolved-particle run (about 1e-4 to 1e-2) the operator is so close to the
//! identity that a few Jacobi sweeps reach round-off: the iteration matrix `G = -D⁻¹·b·O` (`D` the
//! diagonal, `O` the off-diagonal part of `L_h`) has max-norm `ρ ≤ 6d / (1 + 6d)`, and starting from
//! `x⁰ = D⁻¹f` the error after `S` sweeps is `x* - xˢ = G^{S+1} x*`, at most `ρ^{S+1}·‖x*‖∞`. The sweep
//! count is chosen a priori from that bound ([`JacobiSolver::sweeps_for`]).
//!
//! A plain sweep reads and writes the whole field, so `S` sweeps cost `S` trips through memory. Here the
//! sweeps run as a wavefront over z-planes: sweep `s` of plane `k` needs sweep `s-1` of planes `k-1`,
//! `k`, `k+1` only, so each sweep keeps three planes in a ring and the field is read once and written
//! once. For a periodic z the wavefront starts `S` planes before its first plane (wrapped) and computes
//! the planes near its ends redundantly; the z range is split into one piece per thread that way too,
//! and each piece into strips of rows (with halos of `S` rows, likewise) whose rings stay in the L2
//! cache. Every value is the same function of `f` however the work is split, so results are
//! bit-identical for any number of threads. The loops run compiled for the processor's widest vector
//! instructions (`pulp` dispatch), with the same arithmetic as the baseline build.
//!
//! The operator is that of [`SeparableSolver`](crate::poisson::SeparableSolver): unknowns in a compact
//! array, x fastest, the boundary of each axis given by an [`AxisKind`] (ghost values folded into the
//! diagonal).

use rayon::prelude::*;

use crate::poisson::{neighbour_table, AxisKind};

/// One axis of `L_h` split into its diagonal and off-diagonal parts (without the `1/h²`).
#[derive(Clone, Debug)]
struct AxisStencil {
    /// Neighbour below each position and its coefficient (0 where there is none: a ghost value,
    /// folded into `diagonal`, or a zero boundary value).
    low: Vec<(usize, f64)>,
    /// Neighbour above each position and its coefficient.
    high: Vec<(usize, f64)>,
    /// Diagonal of the 3-point second difference at each position (-2 plus the ghost coefficients).
    diagonal: Vec<f64>,
}

impl AxisStencil {
    /// From the neighbour table of the direct solver: a neighbour that is the position itself is a
    /// ghost value, whose coefficient belongs to the diagonal.
    fn new(kind: AxisKind, m: usize) -> Self {
        let mut stencil = AxisStencil {
            low: Vec::with_capacity(m),
            high: Vec::with_capacity(m),
            diagonal: Vec::with_capacity(m),
        };
        for (p, (low, c_low, high, c_high)) in neighbour_table(kind, m).into_iter().enumerate() {
            let mut diagonal = -2.0;
            let mut split = |index: usize, coefficient: f64| {
                if index == p {
                    diagonal += coefficient;
                    (p, 0.0)
                } else {
                    (index, coefficient)
                }
            };
            let (low, high) = (split(low, c_low), split(high, c_high));
            stencil.low.push(low);
            stencil.high.push(high);
            stencil.diagonal.push(diagonal);
        }
        stencil
    }

    /// Positions whose off-diagonal sum and diagonal differ: the two ends and one interior point.
    fn representatives(&self) -> Vec<usize> {
        let m = self.diagonal.len();
        let mut points = vec![0, m - 1];
        if m > 2 {
            points.push(1);
        }
        points
    }

    fn off_diagonal_sum(&self, p: usize) -> f64 {
        self.low[p].1.abs() + self.high[p].1.abs()
    }
}

/// Jacobi solver of `(a + b·L_h) x = f` with the sweeps fused across z-planes (see the module docs).
#[derive(Clone, Debug)]
pub struct JacobiSolver {
    m: [usize; 3],
    axes: [AxisStencil; 3],
    inv_h2: [f64; 3],
    periodic: [bool; 3],
    /// Bytes of rings a strip of rows may fill (see [`JacobiSolver::with_ring_bytes`]).
    ring_bytes: usize,
    /// Runs the baseline build of the loops instead of the processor's widest vectors (for tests).
    baseline_only: bool,
    /// Per piece of the z range: the rings of three planes of every intermediate sweep.
    rings: Vec<Vec<f64>>,
}

impl JacobiSolver {
    /// The solver for unknowns of shape `m` (see [`AxisKind::unknowns`]), boundary `kinds` and grid
    /// `spacing` per axis.
    pub fn new(m: [usize; 3], kinds: [AxisKind; 3], spacing: [f64; 3]) -> Self {
        JacobiSolver {
            m,
            axes: [0, 1, 2].map(|a| AxisStencil::new(kinds[a], m[a])),
            inv_h2: spacing.map(|h| 1.0 / (h * h)),
            periodic: kinds.map(|k| k == AxisKind::Periodic),
            ring_bytes: RING_BYTES,
            baseline_only: false,
            rings: Vec::new(),
        }
    }

    /// The same solver with strips of rows sized so that their rings fill about `bytes` (the default,
    /// [`RING_BYTES`], suits a 2 MiB L2 cache); the results do not depend on it.
    pub fn with_ring_bytes(mut self, bytes: usize) -> Self {
        self.ring_bytes = bytes;
        self
    }

    /// Bound `ρ` on the max-norm of the Jacobi iteration matrix of `a + b·L_h`: the largest ratio of a
    /// row's off-diagonal sum to its diagonal. `None` unless the operator is strictly diagonally
    /// dominant with a positive diagonal (then `ρ < 1`).
    pub fn contraction(&self, a: f64, b: f64) -> Option<f64> {
        let [x, y, z] = &self.axes;
        let mut worst: f64 = 0.0;
        for &i in &x.representatives() {
            for &j in &y.representatives() {
                for &k in &z.representatives() {
                    let diagonal = a + b
                        * (x.diagonal[i] * self.inv_h2[0]
                            + y.diagonal[j] * self.inv_h2[1]
                            + z.diagonal[k] * self.inv_h2[2]);
                    let off = b.abs()
                        * (x.off_diagonal_sum(i) * self.inv_h2[0]
                            + y.off_diagonal_sum(j) * self.inv_h2[1]
                            + z.off_diagonal_sum(k) * self.inv_h2[2]);
                    if !(diagonal > 0.0 && off < diagonal) {
                        return None;
                    }
                    worst = worst.max(off / diagonal);
                }
            }
        }
        Some(worst)
    }

    /// Fewest sweeps `S` after the start `x⁰ = D⁻¹f` with `ρ^{S+1} ≤ tolerance` (the max-norm error
    /// relative to the solution); `None` if the iteration does not contract or needs more than
    /// `max_sweeps`.
    pub fn sweeps_for(&self, a: f64, b: f64, tolerance: f64, max_sweeps: usize) -> Option<usize> {
        let rho = self.contraction(a, b)?;
        let mut bound = rho;
        for sweeps in 0..=max_sweeps {
            if bound <= tolerance {
                return Some(sweeps);
            }
            bound *= rho;
        }
        None
    }

    /// Number of unknowns.
    pub fn len(&self) -> usize {
        self.m.iter().product()
    }

    /// Whether there are no unknowns.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes held between solves (the rings of the last solve).
    pub fn allocated_bytes(&self) -> usize {
        self.rings.iter().map(|r| r.capacity() * 8).sum()
    }

    /// Replaces `field` (holding `f`) by `x⁰ = D⁻¹f` followed by `sweeps` Jacobi sweeps; `out` is
    /// scratch space that ends up holding `f` (the two vectors are swapped).
    ///
    /// # Panics
    /// If `field` does not hold exactly [`JacobiSolver::len`] values.
    pub fn solve(
        &mut self,
        a: f64,
        b: f64,
        sweeps: usize,
        field: &mut Vec<f64>,
        out: &mut Vec<f64>,
    ) {
        out.resize(self.len(), 0.0);
        let [m0, m1, _] = self.m;
        let compact = Target {
            row_len: m0,
            plane_len: m0 * m1,
            start: [0; 3],
            add: false,
        };
        let m2 = self.m[2];
        self.solve_into(a, b, sweeps, field, None, [0..m1, 0..m2], out, compact);
        std::mem::swap(field, out);
    }

    /// Adds the solution (`x⁰ = D⁻¹f` and `sweeps` sweeps) to the unknowns of a padded field whose
    /// data `target` has rows of `row_len` and planes of `plane_len` values, the unknowns starting at
    /// index `start` (as [`crate::grid::Unknowns`] describe them): the same sums as solving into a
    /// compact array and adding that, one trip through memory fewer.
    ///
    /// # Panics
    /// If `f` does not hold exactly [`JacobiSolver::len`] values or `target` is too short.
    #[allow(clippy::too_many_arguments)]
    pub fn solve_adding_to(
        &mut self,
        a: f64,
        b: f64,
        sweeps: usize,
        f: &[f64],
        target: &mut [f64],
        [row_len, plane_len]: [usize; 2],
        start: [usize; 3],
    ) {
        let target_layout = Target {
            row_len,
            plane_len,
            start,
            add: true,
        };
        let [_, m1, m2] = self.m;
        self.solve_into(a, b, sweeps, f, None, [0..m1, 0..m2], target, target_layout);
    }

    /// [`JacobiSolver::solve_adding_to`] on a block of a distributed run: the solution on the y
    /// rows `block[0]` and z planes `block[1]` only (of the whole grid's), added to `target` (this
    /// rank's padded field, its first unknown at `start`), from `f_window`, the right-hand side's
    /// rows `window_first[0] ..` of its planes `window_first[1] ..` (x fastest, then y) in the
    /// unwrapped numbering of each axis (index `k` stands for `k mod m` on a periodic axis): they
    /// must cover the block widened by `sweeps` on each side (clipped to the grid unless the axis
    /// is periodic: [`JacobiSolver::window_needed`]). Every value is computed as on one rank.
    #[allow(clippy::too_many_arguments)]
    pub fn solve_block_adding_to(
        &mut self,
        a: f64,
        b: f64,
        sweeps: usize,
        f_window: &[f64],
        window_first: [isize; 2],
        window_rows: usize,
        block: [std::ops::Range<usize>; 2],
        target: &mut [f64],
        [row_len, plane_len]: [usize; 2],
        start: [usize; 3],
    ) {
        let target_layout = Target {
            row_len,
            plane_len,
            start,
            add: true,
        };
        let window = Window {
            first: window_first[1],
            planes: f_window.len() / (self.m[0] * window_rows.max(1)),
            row_first: window_first[0],
            rows: window_rows,
        };
        let [(y_lo, y_hi), (z_lo, z_hi)] = self.window_needed(&block, sweeps);
        assert!(
            window.first <= z_lo
                && z_hi <= window.first + window.planes as isize
                && window.row_first <= y_lo
                && y_hi <= window.row_first + window.rows as isize,
            "JacobiSolver: the window of rows {}..{} and planes {}..{} does not cover rows \
             {y_lo}..{y_hi} and planes {z_lo}..{z_hi}",
            window.row_first,
            window.row_first + window.rows as isize,
            window.first,
            window.first + window.planes as isize
        );
        self.solve_into(
            a,
            b,
            sweeps,
            f_window,
            Some(window),
            block,
            target,
            target_layout,
        );
    }

    /// The rows and planes of the right-hand side that the solution on the rows `block[0]` and the
    /// planes `block[1]` after `sweeps` sweeps reads, `[(first row, end), (first plane, end)]`, in
    /// the unwrapped numbering of each axis.
    pub fn window_needed(
        &self,
        block: &[std::ops::Range<usize>; 2],
        sweeps: usize,
    ) -> [(isize, isize); 2] {
        [1, 2].map(|axis| {
            let span = Span {
                first: block[axis - 1].start as isize,
                end: block[axis - 1].end as isize,
                m: self.m[axis],
                periodic: self.periodic[axis],
            };
            span.range(sweeps)
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn solve_into(
        &mut self,
        a: f64,
        b: f64,
        sweeps: usize,
        f: &[f64],
        window: Option<Window>,
        [block_rows, planes]: [std::ops::Range<usize>; 2],
        target: &mut [f64],
        layout: Target,
    ) {
        let len = self.len();
        let [m0, m1, m2] = self.m;
        match window {
            None => assert_eq!(f.len(), len, "JacobiSolver: wrong right-hand side length"),
            Some(w) => assert_eq!(
                f.len(),
                w.planes * m0 * w.rows,
                "JacobiSolver: ragged window"
            ),
        }
        assert!(
            planes.start < planes.end && planes.end <= m2,
            "JacobiSolver: planes {planes:?}"
        );
        assert!(
            block_rows.start < block_rows.end && block_rows.end <= m1,
            "JacobiSolver: rows {block_rows:?}"
        );
        let last = layout.index([m0 - 1, block_rows.len() - 1, planes.len() - 1]);
        assert!(target.len() > last, "JacobiSolver: target too short");
        // One piece of the z range per thread; within it, strips of rows whose rings stay in the cache.
        let count = planes.len();
        let pieces = rayon::current_num_threads().clamp(1, count);
        let piece_planes = count.div_ceil(pieces);
        let pieces = count.div_ceil(piece_planes);
        let block_len = block_rows.len();
        let strip_rows = strip_rows(m0, block_len, sweeps, self.ring_bytes);
        let y_periodic = self.periodic[1];
        let ring_rows = if strip_rows < m1 || y_periodic {
            strip_rows + 2 * sweeps
        } else {
            m1
        };
        self.rings.resize(pieces, Vec::new());
        for ring in &mut self.rings {
            ring.resize(3 * sweeps * ring_rows * m0, 0.0);
        }
        // The rings are moved out so that each piece can own one while `self` is shared.
        let mut rings = std::mem::take(&mut self.rings);
        let class_diagonal = |axis: usize, class: usize| {
            let stencil = &self.axes[axis];
            let m = stencil.diagonal.len();
            let p = [0, 1.min(m - 1), m - 1][class];
            stencil.diagonal[p] * self.inv_h2[axis]
        };
        let inverse_diagonal = std::array::from_fn(|cz| {
            std::array::from_fn(|cy| {
                std::array::from_fn(|cx| {
                    1.0 / (a + b
                        * (class_diagonal(0, cx) + class_diagonal(1, cy) + class_diagonal(2, cz)))
                })
            })
        });
        let operator = Operator {
            solver: self,
            b,
            f,
            window,
            block_first_row: block_rows.start,
            sweeps,
            inverse_diagonal,
            target: layout,
        };
        // Each piece gets the target planes of its z range (the last chunk may hold padding planes).
        target[layout.start[2] * layout.plane_len..]
            .par_chunks_mut(piece_planes * layout.plane_len)
            .zip(rings.par_iter_mut())
            .enumerate()
            .for_each(|(piece, (out, ring))| {
                let first = planes.start + piece * piece_planes;
                let planes = Span {
                    first: first as isize,
                    end: (first + piece_planes).min(planes.end) as isize,
                    m: m2,
                    periodic: self.periodic[2],
                };
                for j0 in block_rows.clone().step_by(strip_rows) {
                    let rows = Span {
                        first: j0 as isize,
                        end: (j0 + strip_rows).min(block_rows.end) as isize,
                        m: m1,
                        periodic: y_periodic,
                    };
                    // Compiled for the widest vector instructions this processor has (same
                    // arithmetic per value, so the same numbers on any).
                    if self.baseline_only {
                        silt_core::simd::baseline(
                            #[inline(always)]
                            || operator.wavefront(&planes, &rows, ring, out),
                        );
                    } else {
                        silt_core::simd::vectorized(
                            #[inline(always)]
                            || operator.wavefront(&planes, &rows, ring, out),
                        );
                    }
                }
            });
        self.rings = rings;
    }
}

/// Stores `value` in `out`, or adds it.
#[inline(always)]
fn put<const ADD: bool>(out: &mut f64, value: f64) {
    if ADD {
        *out += value;
    } else {
        *out = value;
    }
}

/// Where the last sweep goes: a padded or compact array, stored or added.
#[derive(Clone, Copy, Debug)]
struct Target {
    row_len: usize,
    plane_len: usize,
    /// Index of the first unknown along each axis.
    start: [usize; 3],
    add: bool,
}

impl Target {
    fn index(&self, [i, j, k]: [usize; 3]) -> usize {
        (i + self.start[0])
            + (j + self.start[1]) * self.row_len
            + (k + self.start[2]) * self.plane_len
    }
}

/// Bytes of rings that a strip of rows should stay within by default (a share of a 2 MiB L2 cache).
pub const RING_BYTES: usize = 768 * 1024;

/// About the most bytes of rings one [`JacobiSolver`] holds in the current thread pool (one ring per
/// thread).
pub fn ring_bytes_estimate() -> usize {
    RING_BYTES * rayon::current_num_threads()
}

/// Rows per strip: as many as keep the rings within `ring_bytes`, at least 4 halos' worth.
fn strip_rows(m0: usize, m1: usize, sweeps: usize, ring_bytes: usize) -> usize {
    let per_row = 3 * sweeps.max(1) * m0 * 8;
    let fit = (ring_bytes / per_row)
        .saturating_sub(2 * sweeps)
        .max(4 * sweeps)
        .max(1);
    // Strips of (nearly) equal height, so that the last one is not a thin one with full halos.
    m1.div_ceil(m1.div_ceil(fit))
}

/// The part of one axis (y rows or z planes) that a wavefront produces, `[first, end)`, in an unwrapped
/// numbering: on a periodic axis index `k` stands for `k mod m`.
struct Span {
    first: isize,
    end: isize,
    m: usize,
    periodic: bool,
}

impl Span {
    /// Indices that a sweep `reach` sweeps below the last one must cover: the target range widened by
    /// `reach` on both sides, clipped to the grid unless the axis is periodic.
    fn range(&self, reach: usize) -> (isize, isize) {
        let (lo, hi) = (self.first - reach as isize, self.end + reach as isize);
        if self.periodic {
            (lo, hi)
        } else {
            (lo.max(0), hi.min(self.m as isize))
        }
    }

    #[inline]
    fn wrap(&self, k: isize) -> usize {
        let m = self.m as isize;
        if (0..m).contains(&k) {
            k as usize
        } else {
            k.rem_euclid(m) as usize
        }
    }

    /// Neighbours of index k below and above, with their coefficients; a missing one is k itself
    /// with coefficient 0 (its ghost value is in the diagonal).
    fn neighbours(&self, stencil: &AxisStencil, k: isize) -> ((isize, f64), (isize, f64)) {
        let kk = self.wrap(k);
        let (low, high) = (stencil.low[kk].1, stencil.high[kk].1);
        let below = if self.periodic || low != 0.0 {
            (k - 1, low)
        } else {
            (k, 0.0)
        };
        let above = if self.periodic || high != 0.0 {
            (k + 1, high)
        } else {
            (k, 0.0)
        };
        (below, above)
    }
}

/// The part of the right-hand side a block's solve holds: planes `first .. first + planes` and in
/// each rows `row_first .. row_first + rows`, unwrapped.
#[derive(Clone, Copy, Debug)]
struct Window {
    first: isize,
    planes: usize,
    row_first: isize,
    rows: usize,
}

/// What one solve shares between the pieces of the z range.
struct Operator<'a> {
    solver: &'a JacobiSolver,
    b: f64,
    /// The right-hand side: every plane, or the planes of `window`.
    f: &'a [f64],
    window: Option<Window>,
    /// The first row (of the whole grid's) that the target holds.
    block_first_row: usize,
    sweeps: usize,
    target: Target,
    /// `1 / D` by position class (first, interior, last) along z, y and x.
    inverse_diagonal: [[[f64; 3]; 3]; 3],
}

impl Operator<'_> {
    /// Rows `rows` of planes `planes` of the last sweep into `out` (the planes of this piece), by a
    /// wavefront over the planes; `ring` holds three planes (of the rows needed) of each earlier sweep.
    #[inline(always)]
    fn wavefront(&self, planes: &Span, rows: &Span, ring: &mut [f64], out: &mut [f64]) {
        let [m0, m1, _] = self.solver.m;
        let sweeps = self.sweeps;
        let (row_start, row_end) = rows.range(sweeps);
        let ring_plane = (row_end - row_start) as usize * m0;
        let slot = |k: isize| k.rem_euclid(3) as usize * ring_plane;
        let ring_row = |j: isize| (j - row_start) as usize * m0;
        let (y, z) = (&self.solver.axes[1], &self.solver.axes[2]);
        let (start, stop) = planes.range(sweeps);
        // At time t sweep s produces plane t - s, after sweep s - 1 produced plane t - s + 1.
        for t in start..stop + sweeps as isize {
            for s in 0..=sweeps {
                let k = t - s as isize;
                let (lo, hi) = planes.range(sweeps - s);
                if k < lo || k >= hi {
                    continue;
                }
                let kk = planes.wrap(k);
                let (at, f_rows) = match self.window {
                    None => (kk, m1),
                    Some(w) => ((k - w.first) as usize, w.rows),
                };
                let f = &self.f[at * m0 * f_rows..(at + 1) * m0 * f_rows];
                let (earlier, this_and_later) = ring.split_at_mut(3 * s * ring_plane);
                let ((below, c_below), (above, c_above)) = planes.neighbours(z, k);
                let previous = s.checked_sub(1).map(|p| {
                    let level = &earlier[3 * p * ring_plane..];
                    let plane = |k: isize| &level[slot(k)..slot(k) + ring_plane];
                    (plane(k), (plane(below), c_below), (plane(above), c_above))
                });
                let (first_row, end_row) = rows.range(sweeps - s);
                for j in first_row..end_row {
                    let jj = rows.wrap(j);
                    let f_row = match self.window {
                        None => jj,
                        Some(w) => (j - w.row_first) as usize,
                    };
                    let f = &f[f_row * m0..(f_row + 1) * m0];
                    // This sweep's row goes to the ring, or to `out` for the last sweep.
                    let target = if s == sweeps {
                        let layout = &self.target;
                        let at = (k - planes.first) as usize * layout.plane_len
                            + (jj - self.block_first_row + layout.start[1]) * layout.row_len
                            + layout.start[0];
                        &mut out[at..at + m0]
                    } else {
                        let at = slot(k) + ring_row(j);
                        &mut this_and_later[at..at + m0]
                    };
                    let add = s == sweeps && self.target.add;
                    let Some((centre, (below, c_below), (above, c_above))) = previous else {
                        match add {
                            true => self.start_row::<true>(jj, kk, f, target),
                            false => self.start_row::<false>(jj, kk, f, target),
                        }
                        continue;
                    };
                    let ((south, c_south), (north, c_north)) = rows.neighbours(y, j);
                    let row = |j: isize| ring_row(j)..ring_row(j) + m0;
                    let centre_row = &centre[row(j)];
                    let y_rows = [
                        (&centre[row(south)], c_south),
                        (&centre[row(north)], c_north),
                    ];
                    let z_rows = [(&below[row(j)], c_below), (&above[row(j)], c_above)];
                    match add {
                        true => {
                            self.sweep_row::<true>([jj, kk], f, centre_row, y_rows, z_rows, target)
                        }
                        false => {
                            self.sweep_row::<false>([jj, kk], f, centre_row, y_rows, z_rows, target)
                        }
                    }
                }
            }
        }
    }

    /// `1 / D` of row j of plane k, by position class along x (first, interior, last).
    #[inline]
    fn inverse_diagonals(&self, j: usize, k: usize) -> [f64; 3] {
        let class = |p: usize, m: usize| usize::from(p != 0) + usize::from(p + 1 == m && p != 0);
        let [_, m1, m2] = self.solver.m;
        self.inverse_diagonal[class(k, m2)][class(j, m1)]
    }

    /// `x⁰ = D⁻¹ f` on row j of plane k.
    #[inline(always)]
    fn start_row<const ADD: bool>(&self, j: usize, k: usize, f: &[f64], out: &mut [f64]) {
        let inverse = self.inverse_diagonals(j, k);
        let m0 = out.len();
        for (i, (out, f)) in out.iter_mut().zip(f).enumerate() {
            let class = usize::from(i != 0) + usize::from(i + 1 == m0 && i != 0);
            put::<ADD>(out, f * inverse[class]);
        }
    }

    /// One Jacobi sweep of row j of plane k (`at = [j, k]`) from the previous sweep's row (`centre`),
    /// its neighbours along y and z, each with the coefficient of its term.
    #[inline(always)]
    fn sweep_row<const ADD: bool>(
        &self,
        at: [usize; 2],
        f: &[f64],
        centre: &[f64],
        [(south, c_south), (north, c_north)]: [(&[f64], f64); 2],
        [(below, c_below), (above, c_above)]: [(&[f64], f64); 2],
        out: &mut [f64],
    ) {
        let s = self.solver;
        let m0 = s.m[0];
        let x = &s.axes[0];
        let b = self.b;
        let bx = b * s.inv_h2[0];
        let (by_low, by_high) = (b * s.inv_h2[1] * c_south, b * s.inv_h2[1] * c_north);
        let (bz_low, bz_high) = (b * s.inv_h2[2] * c_below, b * s.inv_h2[2] * c_above);
        let [inverse_first, inverse, inverse_last] = self.inverse_diagonals(at[0], at[1]);
        // The ends of the row, with their own neighbours and diagonal.
        for (i, inverse) in [(0, inverse_first), (m0 - 1, inverse_last)] {
            let (low, c_low) = x.low[i];
            let (high, c_high) = x.high[i];
            let off = bx * (c_low * centre[low] + c_high * centre[high])
                + by_low * south[i]
                + by_high * north[i]
                + bz_low * below[i]
                + bz_high * above[i];
            put::<ADD>(&mut out[i], (f[i] - off) * inverse);
        }
        if m0 <= 2 {
            return;
        }
        let n = m0 - 2;
        // Equal lengths, so that the loops below run without bounds checks.
        let (west, east, f) = (&centre[..n], &centre[2..], &f[1..=n]);
        let (south, north) = (&south[1..=n], &north[1..=n]);
        let (below, above) = (&below[1..=n], &above[1..=n]);
        let out = &mut out[1..=n];
        if by_low == bx && by_high == bx && bz_low == bx && bz_high == bx {
            // Uniform spacing away from y and z boundaries: one coefficient for all six.
            for i in 0..n {
                let sum = (west[i] + east[i]) + (south[i] + north[i]) + (below[i] + above[i]);
                put::<ADD>(&mut out[i], (f[i] - bx * sum) * inverse);
            }
        } else {
            for i in 0..n {
                let off = bx * (west[i] + east[i])
                    + (by_low * south[i] + by_high * north[i])
                    + (bz_low * below[i] + bz_high * above[i]);
                put::<ADD>(&mut out[i], (f[i] - off) * inverse);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::poisson::SeparableSolver;
    use crate::test_support::{max_abs, Lcg};
    use AxisKind::*;

    /// Jacobi against the direct solver for every kind on every axis, at the sweep count the bound
    /// asks for: the difference stays within the requested tolerance of the solution.
    #[test]
    fn matches_direct_solve_for_every_kind() {
        let tolerance = 1e-12;
        let cells = [9, 13, 6];
        let h = 0.1;
        for (n, &kx) in AxisKind::ALL.iter().enumerate() {
            for (strips, &ky) in AxisKind::ALL.iter().enumerate() {
                for &kz in &AxisKind::ALL {
                    let kinds = [kx, ky, kz];
                    let mut direct = SeparableSolver::new(cells, kinds, [h; 3]).unwrap();
                    // Every other y kind in strips of rows (4 x the sweeps, fewer than 13).
                    let ring_bytes = if strips % 2 == 0 { RING_BYTES } else { 0 };
                    let mut jacobi = JacobiSolver::new(direct.shape(), kinds, [h; 3])
                        .with_ring_bytes(ring_bytes);
                    let f = Lcg(n as u64 + 7).vec(direct.len());
                    for b in [-1e-6, -1e-5, -1e-4] {
                        let sweeps = jacobi.sweeps_for(1.0, b, tolerance, 40).unwrap();
                        let mut exact = f.clone();
                        direct.solve(1.0, b, &mut exact);
                        let mut x = f.clone();
                        let mut scratch = Vec::new();
                        jacobi.solve(1.0, b, sweeps, &mut x, &mut scratch);
                        assert_eq!(scratch, f, "scratch holds f");
                        let error = x
                            .iter()
                            .zip(&exact)
                            .fold(0.0f64, |m, (p, q)| m.max((p - q).abs()));
                        assert!(
                            error <= 2.0 * tolerance * max_abs(&exact),
                            "{kinds:?} b={b} sweeps {sweeps}: error {error:e}"
                        );
                        // One sweep fewer is measurably worse (the sweeps do something).
                        if sweeps > 0 {
                            let mut y = f.clone();
                            jacobi.solve(1.0, b, sweeps - 1, &mut y, &mut scratch);
                            let coarse = y
                                .iter()
                                .zip(&exact)
                                .fold(0.0f64, |m, (p, q)| m.max((p - q).abs()));
                            assert!(coarse > error, "{kinds:?} b={b}");
                        }
                    }
                }
            }
        }
    }

    /// The error bound `ρ^{S+1}‖x*‖` holds sweep by sweep, and the residual falls with it.
    #[test]
    fn error_follows_the_bound() {
        let kinds = [Periodic, NeumannNeumann, DirichletNodes];
        let cells = [16, 12, 10];
        let h = 0.05;
        let b = -2e-3 * h * h * 10.0;
        let mut direct = SeparableSolver::new(cells, kinds, [h; 3]).unwrap();
        let mut jacobi = JacobiSolver::new(direct.shape(), kinds, [h; 3]);
        let rho = jacobi.contraction(1.0, b).unwrap();
        assert!(rho > 0.0 && rho < 0.2, "rho {rho}");
        let f = Lcg(3).vec(direct.len());
        let mut exact = f.clone();
        direct.solve(1.0, b, &mut exact);
        let norm = max_abs(&exact);
        let mut previous = f64::MAX;
        for sweeps in 0..6 {
            let mut x = f.clone();
            jacobi.solve(1.0, b, sweeps, &mut x, &mut Vec::new());
            let error = x
                .iter()
                .zip(&exact)
                .fold(0.0f64, |m, (p, q)| m.max((p - q).abs()));
            let bound = rho.powi(sweeps as i32 + 1) * norm;
            assert!(
                error <= bound * (1.0 + 1e-9) + 1e-15,
                "sweeps {sweeps}: {error:e} > {bound:e}"
            );
            assert!(error < previous || error < 1e-15);
            previous = error;
        }
    }

    /// The same numbers for 1, 2 and 3 threads (pieces of the z range), periodic and bounded z.
    #[test]
    fn bit_identical_across_thread_counts() {
        for kinds in [
            [Periodic, Periodic, Periodic],
            [Periodic, DirichletNodes, NeumannNeumann],
            [DirichletDirichlet, Periodic, DirichletNodes],
        ] {
            let cells = [10, 37, 11];
            let h = 0.1;
            let m = [0, 1, 2].map(|a| kinds[a].unknowns(cells[a]));
            let f = Lcg(11).vec(m.iter().product());
            // Threads split the z range; a small ring budget splits y into strips of 16 rows.
            let results: Vec<Vec<f64>> = [(1, RING_BYTES), (2, RING_BYTES), (3, 0), (1, 0)]
                .into_iter()
                .map(|(threads, ring_bytes)| {
                    let pool = rayon::ThreadPoolBuilder::new()
                        .num_threads(threads)
                        .build()
                        .unwrap();
                    pool.install(|| {
                        let mut jacobi =
                            JacobiSolver::new(m, kinds, [h; 3]).with_ring_bytes(ring_bytes);
                        let mut x = f.clone();
                        jacobi.solve(1.0, -3e-3 * h * h * 100.0, 4, &mut x, &mut Vec::new());
                        x
                    })
                })
                .collect();
            for r in &results[1..] {
                let same = r
                    .iter()
                    .zip(&results[0])
                    .all(|(p, q)| p.to_bits() == q.to_bits());
                assert!(same, "{kinds:?}");
            }
        }
    }

    /// Adding the solution into a padded field gives the same bits as solving into a compact array
    /// and adding that, for 1 and 2 threads and with strips.
    #[test]
    fn adding_into_a_padded_field_matches_solve_then_add() {
        let kinds = [Periodic, DirichletNodes, NeumannNeumann];
        let cells = [10, 30, 9];
        let h = 0.1;
        let m = [0, 1, 2].map(|a| kinds[a].unknowns(cells[a]));
        let f = Lcg(5).vec(m.iter().product());
        // Padding of 1 before and 2 after on every axis.
        let dims = m.map(|n| n + 3);
        let (row_len, plane_len) = (dims[0], dims[0] * dims[1]);
        let padded = Lcg(9).vec(dims.iter().product());
        for (threads, ring_bytes) in [(1, RING_BYTES), (2, 0)] {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| {
                    let mut jacobi =
                        JacobiSolver::new(m, kinds, [h; 3]).with_ring_bytes(ring_bytes);
                    let b = -2e-3 * h * h;
                    let mut x = f.clone();
                    jacobi.solve(1.0, b, 3, &mut x, &mut Vec::new());
                    let mut expected = padded.clone();
                    for k in 0..m[2] {
                        for j in 0..m[1] {
                            for i in 0..m[0] {
                                let at = (i + 1) + (j + 1) * row_len + (k + 1) * plane_len;
                                expected[at] += x[i + m[0] * (j + m[1] * k)];
                            }
                        }
                    }
                    let mut added = padded.clone();
                    jacobi.solve_adding_to(1.0, b, 3, &f, &mut added, [row_len, plane_len], [1; 3]);
                    let same = added
                        .iter()
                        .zip(&expected)
                        .all(|(p, q)| p.to_bits() == q.to_bits());
                    assert!(same, "threads {threads}");
                });
        }
    }

    /// The loops built for the processor's widest vectors give the bits of the baseline build.
    #[test]
    fn vector_dispatch_gives_the_baseline_numbers() {
        let kinds = [Periodic, NeumannNeumann, DirichletNodes];
        let m = [0, 1, 2].map(|a| kinds[a].unknowns([37, 12, 9][a]));
        let f = Lcg(21).vec(m.iter().product());
        let mut results = Vec::new();
        for baseline_only in [false, true] {
            let mut jacobi = JacobiSolver::new(m, kinds, [0.1; 3]);
            jacobi.baseline_only = baseline_only;
            let mut x = f.clone();
            jacobi.solve(1.0, -3e-5, 4, &mut x, &mut Vec::new());
            results.push(x);
        }
        let same = results[0]
            .iter()
            .zip(&results[1])
            .all(|(p, q)| p.to_bits() == q.to_bits());
        assert!(same);
    }

    /// Refuses to promise convergence where the operator is not diagonally dominant.
    #[test]
    fn no_sweep_count_without_contraction() {
        let jacobi = JacobiSolver::new([8, 8, 8], [Periodic; 3], [1.0; 3]);
        assert!(jacobi.contraction(0.0, 1.0).is_none());
        assert!(jacobi.contraction(1.0, 1.0).is_none());
        assert_eq!(jacobi.sweeps_for(1.0, 0.0, 1e-12, 10), Some(0));
        assert!(jacobi.sweeps_for(1.0, -10.0, 1e-12, 10).is_none());
    }

    /// Timing against the direct solve at 128³; run with
    /// `cargo test --release -p silt-fluid jacobi_timing_128 -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn jacobi_timing_128() {
        use std::time::Instant;
        for threads in [1, 2] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| {
                for kinds in [[Periodic; 3], [Periodic, Periodic, NeumannNeumann]] {
                    let h = 1.0 / 128.0;
                    let b = -8.5e-4 * h * h;
                    let mut direct = SeparableSolver::new([128; 3], kinds, [h; 3]).unwrap();
                    let mut jacobi = JacobiSolver::new(direct.shape(), kinds, [h; 3]);
                    let sweeps = jacobi.sweeps_for(1.0, b, 1e-12, 20).unwrap();
                    let f = Lcg(1).vec(direct.len());
                    let mut x = f.clone();
                    direct.solve(1.0, b, &mut x);
                    let mut scratch = Vec::new();
                    let (mut best_direct, mut best_jacobi) = (f64::MAX, f64::MAX);
                    for _ in 0..8 {
                        x.copy_from_slice(&f);
                        let t = Instant::now();
                        direct.solve(1.0, b, &mut x);
                        best_direct = best_direct.min(t.elapsed().as_secs_f64() * 1e3);
                        let mut y = f.clone();
                        let t = Instant::now();
                        jacobi.solve(1.0, b, sweeps, &mut y, &mut scratch);
                        best_jacobi = best_jacobi.min(t.elapsed().as_secs_f64() * 1e3);
                    }
                    println!(
                        "threads {threads} {kinds:?}: direct {best_direct:.1} ms, jacobi ({sweeps} \
                         sweeps) {best_jacobi:.1} ms"
                    );
                }
            });
        }
    }
}
