//! Interpolation from the staggered grid to the markers and spreading from the markers to the grid with
//! the regularised delta (seed sec. 2; Uhlmann 2005): U(X) = sum_x u(x) delta_h(x - X) h^3 and
//! f(x) = sum_l F_l delta_h(x - X_l) Delta V_l, each velocity component on its own face points.

use crate::delta::{nearest_integer, support};
use crate::Vec3;
use rayon::prelude::*;
use silt_core::simd::vectorized;
use silt_fluid::boundary::Boundaries;
use silt_fluid::grid::{Field, Grid, Unknowns};
use std::ops::Range;

/// Where the unknowns of each velocity component lie, and which axes wrap around.
#[derive(Clone, Debug)]
pub struct GridLayout {
    pub grid: Grid,
    pub periodic: [bool; 3],
    pub unknowns: [Unknowns; 3],
    /// Dimensions of a field with its ghost layers.
    pub dims: [usize; 3],
}

/// The support of one marker for one velocity component in the compact array of the component's
/// unknowns: along x the three points' indices, along y their indices times the row length (offsets in
/// a plane), along z their planes; and their weights phi along each axis. The point (mx, my, mz) lies
/// at `offset[0][mx] + offset[1][my]` in plane `offset[2][mz]`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Stencil {
    pub offset: [[u32; 3]; 3],
    pub weight: [[f64; 3]; 3],
}

impl GridLayout {
    pub fn new(grid: Grid, boundaries: &Boundaries) -> Self {
        GridLayout {
            grid,
            periodic: std::array::from_fn(|a| boundaries.is_periodic(a)),
            unknowns: std::array::from_fn(|c| boundaries.velocity_unknowns(&grid, c)),
            dims: grid.field_dims(),
        }
    }

    /// Largest number of unknowns of a component the 32-bit offsets of a [`Stencil`] address (4 x 10^9
    /// points, far beyond one machine's memory; supports on larger grids are refused).
    pub const MAX_UNKNOWNS: usize = u32::MAX as usize;

    /// Support of a marker at `x` for component `c`, or `None` where it reaches beyond the unknowns of
    /// the component (across or onto a wall): such a marker is disabled (seed Fig. 2).
    #[inline(always)]
    pub fn stencil(&self, c: usize, x: Vec3) -> Option<Stencil> {
        let mut stencil = Stencil::default();
        for a in 0..3 {
            // Field index i of a point of component c sits at origin + (i - 1/2) h off its own axis and
            // at origin + i h along it (silt_fluid::grid).
            let [on_faces, between] = self.grid_coordinates(x, a)?;
            let support = support(if a == c { on_faces } else { between });
            self.set_axis(&mut stencil, c, a, support)?;
        }
        Some(stencil)
    }

    /// The supports of all three components at `x` ([`GridLayout::stencil`] of each, the same values):
    /// along each axis the weights of the points on the faces and of the points between them are
    /// computed once and shared by the components that sit there.
    #[inline(always)]
    pub fn stencils(&self, x: Vec3) -> Option<[Stencil; 3]> {
        let mut stencils = [Stencil::default(); 3];
        for a in 0..3 {
            let [on_faces, between] = self.grid_coordinates(x, a)?;
            let supports = [support(on_faces), support(between)];
            for (c, stencil) in stencils.iter_mut().enumerate() {
                self.set_axis(stencil, c, a, supports[usize::from(a != c)])?;
            }
        }
        Some(stencils)
    }

    /// Axis `a` of component c's `stencil` from the 1D support (grid index of its first point, weights);
    /// `None` where the points are not all unknowns.
    #[inline(always)]
    fn set_axis(
        &self,
        stencil: &mut Stencil,
        c: usize,
        a: usize,
        (first, weight): (isize, [f64; 3]),
    ) -> Option<()> {
        let shape = self.unknowns[c].shape;
        // Offsets within a plane along y, plane indices along z.
        let stride = if a == 1 { shape[0] } else { 1 };
        let first = self.first_unknown(c, a, first)?;
        for m in 0..3 {
            let index = self.wrap_once(c, a, first + m as isize);
            stencil.offset[a][m] = (index * stride) as u32;
        }
        stencil.weight[a] = weight;
        Some(())
    }

    /// Where [`GridLayout::stencils`] gives the supports: the indices, among the x-component's unknowns,
    /// of its support's middle point; `None` where it gives none. Cheaper (no weights, nothing stored).
    #[inline(always)]
    pub fn support_centres(&self, x: Vec3) -> Option<[usize; 3]> {
        let mut centre = [0; 3];
        for a in 0..3 {
            let [on_faces, between] = self.grid_coordinates(x, a)?;
            let nearest = [nearest_integer(on_faces), nearest_integer(between)];
            for c in 0..3 {
                // The support's points are n - 1, n, n + 1 for the nearest grid index n.
                let first = self.first_unknown(c, a, nearest[usize::from(a != c)] - 1)?;
                if c == 0 {
                    centre[a] = self.wrap_once(c, a, first + 1);
                }
            }
        }
        Some(centre)
    }

    /// Along axis `a`, how far the supports of all three components reach below and above the middle
    /// point of the x-component's support ([`GridLayout::support_centres`]), in unknown indices: the
    /// margins of a [`MarkerBlock`]. Off its own axis the x-component centres on the nearest point n'
    /// of the points between the faces; component a centres on the nearest face, n' - 1 or n'; the
    /// third as the x-component; each reaches one point further, shifted by its unknowns' start.
    pub fn support_reach(&self, a: usize) -> (isize, isize) {
        let start = |c: usize| self.unknowns[c].start[a] as isize;
        let (mut below, mut above) = (0, 0);
        for c in 0..3 {
            let shift = start(c) - start(0);
            let lowest = if c == a && a != 0 { -1 } else { 0 } - shift;
            let highest = -shift;
            below = below.max(1 - lowest);
            above = above.max(1 + highest);
        }
        (below, above)
    }

    /// The position of `x` along axis `a` in grid units, counted from the faces and from the points
    /// between them (half a cell further); `None` if not finite or on a grid too large for 32-bit offsets.
    #[inline(always)]
    fn grid_coordinates(&self, x: Vec3, a: usize) -> Option<[f64; 2]> {
        if self.unknowns.iter().any(|u| u.len() > Self::MAX_UNKNOWNS) {
            return None;
        }
        let on_faces = (x[a] - self.grid.origin[a]) * (1.0 / self.grid.spacing);
        let between = on_faces + 0.5;
        between.is_finite().then_some([on_faces, between])
    }

    /// Of three points starting at grid index `first` along axis `a`, the first one's index among the
    /// unknowns of component c: wrapped into the period on a periodic axis, `None` on a bounded axis
    /// unless all three are unknowns.
    #[inline(always)]
    fn first_unknown(&self, c: usize, a: usize, first: isize) -> Option<isize> {
        let Unknowns { start, shape } = self.unknowns[c];
        let (first, count) = (first - start[a] as isize, shape[a] as isize);
        if self.periodic[a] {
            // Markers lie within a period of the domain: one addition or subtraction wraps them (no
            // integer division, which costs as much as the rest of a support).
            Some(if first < 0 {
                if first + count >= 0 {
                    first + count
                } else {
                    first.rem_euclid(count)
                }
            } else if first >= count {
                if first - count < count {
                    first - count
                } else {
                    first.rem_euclid(count)
                }
            } else {
                first
            })
        } else {
            (first >= 0 && first + 2 < count).then_some(first)
        }
    }

    /// An index among component c's unknowns along axis `a` at most one period past the end, wrapped.
    #[inline(always)]
    fn wrap_once(&self, c: usize, a: usize, i: isize) -> usize {
        let count = self.unknowns[c].shape[a] as isize;
        (if i >= count { i - count } else { i }) as usize
    }

    /// b - a, along periodic axes the shortest of its images (a and b within one period of each other
    /// or of the domain, as the particles' positions are).
    pub fn separation(&self, a: Vec3, b: Vec3) -> Vec3 {
        let mut d = b - a;
        for axis in 0..3 {
            if self.periodic[axis] {
                let length = self.grid.cells[axis] as f64 * self.grid.spacing;
                if d[axis] > 0.5 * length {
                    d[axis] -= length;
                } else if d[axis] < -0.5 * length {
                    d[axis] += length;
                }
                if d[axis].abs() > 0.5 * length {
                    d[axis] -= length * (d[axis] / length).round();
                }
            }
        }
        d
    }

    /// The field index along `axis` of the unknown of component `c` at index `i` (any integer): wrapped
    /// into the domain along a periodic axis, `None` outside the unknowns along a bounded one.
    #[inline]
    pub fn unknown_index(&self, c: usize, axis: usize, i: isize) -> Option<usize> {
        let Unknowns { start, shape } = self.unknowns[c];
        let (start, count) = (start[axis] as isize, shape[axis] as isize);
        if self.periodic[axis] {
            // Supports lie within one period of the domain; wrap by one period, else in general.
            let j = i - start;
            let wrapped = if (0..count).contains(&j) {
                j
            } else if (0..count).contains(&(j + count)) {
                j + count
            } else if (0..count).contains(&(j - count)) {
                j - count
            } else {
                j.rem_euclid(count)
            };
            Some((wrapped + start) as usize)
        } else {
            (start..start + count).contains(&i).then_some(i as usize)
        }
    }

    /// Linear index in a field of the point (i, j, k).
    #[inline]
    pub fn field_index(&self, [i, j, k]: [usize; 3]) -> usize {
        i + self.dims[0] * (j + self.dims[1] * k)
    }

    /// Index in the compact array of component c's unknowns of the point (i, j, k).
    #[inline]
    pub fn compact_index(&self, c: usize, [i, j, k]: [usize; 3]) -> usize {
        let Unknowns { start, shape } = self.unknowns[c];
        (i - start[0]) + shape[0] * ((j - start[1]) + shape[1] * (k - start[2]))
    }

    /// values += u at the unknowns of component c in the z-planes kc with `planes[kc]` (u a field with
    /// ghosts, `values` the compact array of the unknowns): the increment delta of a stage becomes the
    /// predicted velocity u + delta that the forcing works on, in place.
    pub fn add_in_place(&self, c: usize, u: &Field, planes: &[bool], values: &mut [f64]) {
        self.for_each_row(c, u, planes, values, |value, u| *value += u);
    }

    /// values -= u in the same planes: the forced velocity becomes the increment that carries u to it.
    pub fn subtract_in_place(&self, c: usize, u: &Field, planes: &[bool], values: &mut [f64]) {
        self.for_each_row(c, u, planes, values, |value, u| *value -= u);
    }

    /// op(value, u) at each unknown of component c in the z-planes kc with `planes[kc]` (u in the
    /// field layout, `values` compact), row by row, parallel over z-planes.
    fn for_each_row(
        &self,
        c: usize,
        u: &Field,
        planes: &[bool],
        values: &mut [f64],
        op: impl Fn(&mut f64, f64) + Sync,
    ) {
        let Unknowns { start, shape } = self.unknowns[c];
        let plane_len = shape[0] * shape[1];
        values
            .par_chunks_mut(plane_len)
            .enumerate()
            .filter(|(kc, _)| planes[*kc])
            .for_each(|(kc, plane)| {
                for (jc, row) in plane.chunks_exact_mut(shape[0]).enumerate() {
                    let first = self.field_index([start[0], start[1] + jc, start[2] + kc]);
                    for (value, &v) in row.iter_mut().zip(&u.data[first..first + shape[0]]) {
                        op(value, v);
                    }
                }
            });
    }
}

/// Consecutive planes along z (or rows along y) of a component's unknowns held in an array of their own
/// (a rank's and some of its neighbours': [`crate::rank_block::BlockForcing`]): plane g of the domain's
/// `planes` is the window's plane `g - first`, wrapped along a periodic axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlaneWindow {
    /// The first plane (an unwrapped index: it may lie below 0 along a periodic z).
    pub first: isize,
    pub count: usize,
    /// The domain's planes of the component, and whether z is periodic.
    pub planes: usize,
    pub periodic: bool,
}

impl PlaneWindow {
    /// The window's index of the domain's plane `global` (0-based), if it holds it.
    #[inline]
    pub fn local(&self, global: usize) -> Option<usize> {
        let mut k = global as isize - self.first;
        if self.periodic {
            k = k.rem_euclid(self.planes as isize);
        }
        (0..self.count as isize).contains(&k).then_some(k as usize)
    }
}

/// Cells per side of the blocks of grid by which the forcing orders its markers (see [`MarkerBlock`]).
pub const TILE: usize = 8;

/// A run of markers, consecutive in the forcing's order, whose supports lie within rows `rows` and planes
/// `planes` of a component's unknowns (unwrapped indices: a periodic axis wraps them, a bounded one
/// clips them; the margins of [`GridLayout::support_reach`] cover every component's support).
#[derive(Clone, Debug, PartialEq)]
pub struct MarkerBlock {
    pub markers: Range<usize>,
    pub rows: Range<isize>,
    pub planes: Range<isize>,
}

/// Reads one value per cache line of the rows and planes of `block` (plane k given by `plane(k)`, rows of
/// `row_len` values) and returns their sum, to be passed to `black_box`.
///
/// Why: the passes visit short, scattered rows of three points; each first visit of a cache line then
/// stalls on memory, and a marker's work is too long for the processor to run far enough ahead to
/// overlap those stalls (measured: the interpolation ran 35 % faster with this). A read of whole rows
/// is a stream the hardware prefetcher follows at full bandwidth and leaves the block's rows in the L2
/// cache (three components of a 12 x 12-row block of 128-point rows: about 450 KB).
#[inline(always)]
fn warm<'a>(
    block: &MarkerBlock,
    row_len: usize,
    [rows, planes]: [(usize, bool); 2],
    plane: impl Fn(usize) -> Option<&'a [f64]>,
) -> f64 {
    let wrap = |i: isize, n: usize, periodic: bool| {
        if periodic {
            Some(i.rem_euclid(n as isize) as usize)
        } else {
            (0..n as isize).contains(&i).then_some(i as usize)
        }
    };
    // Four running sums, so that the reads do not wait on one chain of additions.
    let mut sums = [0.0; 4];
    for k in block.planes.clone() {
        let Some(values) = wrap(k, planes.0, planes.1).and_then(&plane) else {
            continue;
        };
        for j in block.rows.clone() {
            let Some(j) = wrap(j, rows.0, rows.1) else {
                continue;
            };
            let row = &values[j * row_len..(j + 1) * row_len];
            for (n, line) in row.chunks(8).enumerate() {
                sums[n % 4] += line[0];
            }
        }
    }
    (sums[0] + sums[1]) + (sums[2] + sums[3])
}

/// [`warm`] on a component's whole compact array.
#[inline(always)]
pub fn warm_block(layout: &GridLayout, c: usize, values: &[f64], block: &MarkerBlock) -> f64 {
    let shape = layout.unknowns[c].shape;
    let plane_len = shape[0] * shape[1];
    warm(
        block,
        shape[0],
        [
            (shape[1], layout.periodic[1]),
            (shape[2], layout.periodic[2]),
        ],
        |k| Some(&values[k * plane_len..(k + 1) * plane_len]),
    )
}

/// sum over the support of w v: the compact array `values` of a component's unknowns (planes of
/// `plane_len` points) interpolated to a marker: each of the nine rows of three points weighted by
/// w_y w_z and summed point by point, then the three sums weighted by w_x.
#[inline(always)]
pub fn interpolate(stencil: &Stencil, values: &[f64], plane_len: usize) -> f64 {
    let [x0, x1, x2] = stencil.offset[0].map(|x| x as usize);
    let mut sums = [0.0; 3];
    let last_row = stencil.offset[2].iter().max().copied().unwrap_or(0) as usize * plane_len
        + stencil.offset[1].iter().max().copied().unwrap_or(0) as usize
        + x0;
    if x1 == x0 + 1 && x2 == x0 + 2 && last_row + 4 <= values.len() {
        // The usual case, each row read as four points (one vector; the fourth is not used): the
        // same sums of the three, lane by lane.
        let lanes: [f64; 4] = contiguous_row_sums(stencil, values, plane_len, x0);
        sums = [lanes[0], lanes[1], lanes[2]];
    } else if x1 == x0 + 1 && x2 == x0 + 2 {
        // The three points of a row are neighbours in memory (one bounds check per row).
        sums = contiguous_row_sums(stencil, values, plane_len, x0);
    } else {
        // A row wrapped across a periodic x boundary.
        for mz in 0..3 {
            let plane_start = stencil.offset[2][mz] as usize * plane_len;
            for my in 0..3 {
                let row = plane_start + stencil.offset[1][my] as usize;
                let weight = stencil.weight[1][my] * stencil.weight[2][mz];
                for (sum, x) in sums.iter_mut().zip([x0, x1, x2]) {
                    *sum += weight * values[row + x];
                }
            }
        }
    }
    (stencil.weight[0][0] * sums[0] + stencil.weight[0][1] * sums[1])
        + stencil.weight[0][2] * sums[2]
}

/// sum over the support's nine rows of w_y w_z times the N points of the row starting at x0 (N = 3, or 4
/// to read each row as one vector), point by point.
#[inline(always)]
fn contiguous_row_sums<const N: usize>(
    stencil: &Stencil,
    values: &[f64],
    plane_len: usize,
    x0: usize,
) -> [f64; N] {
    let mut sums = [0.0; N];
    for mz in 0..3 {
        let plane_start = stencil.offset[2][mz] as usize * plane_len + x0;
        for my in 0..3 {
            let row = plane_start + stencil.offset[1][my] as usize;
            let weight = stencil.weight[1][my] * stencil.weight[2][mz];
            let points: &[f64; N] = values[row..row + N].try_into().unwrap();
            for (sum, &point) in sums.iter_mut().zip(points) {
                *sum += weight * point;
            }
        }
    }
    sums
}

/// For spreading: the markers in groups (consecutive ranges of the list, e.g. the markers of a z-slab
/// of the grid) and the planes each group's supports touch; the groups in rounds whose groups touch
/// disjoint planes. A round's groups are spread in parallel, each marker writing its whole support at
/// once, the rounds one after the other: each point then sums its markers in the same order for any
/// thread count.
#[derive(Clone, Debug, Default)]
pub struct SpreadGroups {
    /// Per group: its markers and the planes (increasing) its supports touch.
    groups: Vec<(Range<usize>, Vec<u32>)>,
    /// Per round, its groups.
    rounds: Vec<Vec<usize>>,
}

impl SpreadGroups {
    /// Groups `ranges` of the markers of component c with their `stencils` of that component, in
    /// greedy rounds by the planes their supports touch: each group joins the first round none of
    /// whose planes it touches.
    pub fn new(
        layout: &GridLayout,
        c: usize,
        stencils: &[Stencil],
        ranges: &[Range<usize>],
    ) -> Self {
        let planes = layout.unknowns[c].shape[2];
        let touched = touched_planes(planes, stencils, ranges);
        let mut round_of = vec![0; ranges.len()];
        let mut used: Vec<Vec<bool>> = Vec::new();
        for (g, list) in touched.iter().enumerate() {
            let free = |used: &Vec<bool>| list.iter().all(|&k| !used[k as usize]);
            let round = used.iter().position(free).unwrap_or_else(|| {
                used.push(vec![false; planes]);
                used.len() - 1
            });
            round_of[g] = round;
            for &k in list {
                used[round][k as usize] = true;
            }
        }
        Self::assemble(ranges, touched, &round_of)
    }

    /// Groups `ranges` as [`SpreadGroups::new`] in the rounds `round_of` the caller chose (one per
    /// range; the groups of a round must touch disjoint planes): the forcing's rounds follow from the
    /// grid's tiles alone, so that every rank of a distributed run adds a point's markers in the
    /// serial order whichever groups it holds ([`geometric_rounds`]).
    pub fn with_rounds(
        layout: &GridLayout,
        c: usize,
        stencils: &[Stencil],
        ranges: &[Range<usize>],
        round_of: &[usize],
    ) -> Self {
        assert_eq!(ranges.len(), round_of.len(), "one round per group");
        let planes = layout.unknowns[c].shape[2];
        let touched = touched_planes(planes, stencils, ranges);
        Self::assemble(ranges, touched, round_of)
    }

    fn assemble(ranges: &[Range<usize>], touched: Vec<Vec<u32>>, round_of: &[usize]) -> Self {
        let mut groups = Vec::new();
        let mut rounds: Vec<Vec<usize>> = Vec::new();
        for ((range, list), &round) in ranges.iter().zip(touched).zip(round_of) {
            if range.is_empty() {
                continue;
            }
            if rounds.len() <= round {
                rounds.resize(round + 1, Vec::new());
            }
            rounds[round].push(groups.len());
            groups.push((range.clone(), list));
        }
        debug_assert!(rounds.iter().all(|round| {
            let mut seen = std::collections::HashSet::new();
            round
                .iter()
                .all(|&g| groups[g].1.iter().all(|&k| seen.insert(k)))
        }));
        SpreadGroups { groups, rounds }
    }

    /// All markers in one group (spread by one task).
    pub fn single(layout: &GridLayout, c: usize, stencils: &[Stencil]) -> Self {
        let all = 0..stencils.len();
        Self::new(layout, c, stencils, std::slice::from_ref(&all))
    }
}

/// Per range of markers, the planes (increasing) of `planes` that their `stencils` touch; the ranges
/// in parallel (they are many and long).
fn touched_planes(planes: usize, stencils: &[Stencil], ranges: &[Range<usize>]) -> Vec<Vec<u32>> {
    ranges
        .par_iter()
        .map(|range| {
            let mut touched = vec![false; planes];
            for s in &stencils[range.clone()] {
                for &plane in &s.offset[2] {
                    touched[plane as usize] = true;
                }
            }
            (0..planes as u32)
                .filter(|&k| touched[k as usize])
                .collect()
        })
        .collect()
}

/// Rounds for groups that may touch the planes `reach[g]` (inclusive ranges of unwrapped indices
/// among `planes` planes; wrapped along a `periodic` axis): greedy in group order, each group in the
/// first round whose groups' ranges it does not overlap. The rounds depend on the ranges only, not
/// on which groups hold markers.
pub fn geometric_rounds(
    reach: &[std::ops::RangeInclusive<isize>],
    planes: usize,
    periodic: bool,
) -> Vec<usize> {
    let n = planes as isize;
    let overlap = |a: &std::ops::RangeInclusive<isize>, b: &std::ops::RangeInclusive<isize>| {
        let shifts: &[isize] = if periodic { &[-n, 0, n] } else { &[0] };
        shifts
            .iter()
            .any(|s| a.start() <= &(b.end() + s) && &(b.start() + s) <= a.end())
    };
    let mut round_of: Vec<usize> = Vec::with_capacity(reach.len());
    for (g, range) in reach.iter().enumerate() {
        let round = (0..)
            .find(|&r| (0..g).all(|h| round_of[h] != r || !overlap(range, &reach[h])))
            .expect("some round is free");
        round_of.push(round);
    }
    round_of
}

/// target += sum_l value_l w_l(x) at the unknowns of component c (compact array): the spread of the
/// per-marker `values` (already multiplied by whatever factor the caller needs) with the weights of the
/// markers' `stencils`, group by group as [`SpreadGroups`] orders them. Where the markers come in
/// `blocks` (the forcing's order; empty for none), each block's rows are read first (see [`warm`]).
pub fn spread(
    layout: &GridLayout,
    c: usize,
    stencils: &[Stencil],
    groups: &SpreadGroups,
    values: &[f64],
    target: &mut [f64],
    blocks: &[MarkerBlock],
) {
    let Unknowns { shape, .. } = layout.unknowns[c];
    let plane_len = shape[0] * shape[1];
    // For each plane, its place among the planes of the group that writes it in the current round.
    let mut slot = vec![0u32; shape[2]];
    for round in &groups.rounds {
        let mut planes: Vec<Option<&mut [f64]>> = target.chunks_mut(plane_len).map(Some).collect();
        let mut tasks = Vec::with_capacity(round.len());
        for &g in round {
            let (range, list) = &groups.groups[g];
            let mut own = Vec::with_capacity(list.len());
            for (place, &k) in list.iter().enumerate() {
                // The round's groups touch disjoint planes, so each plane is still there.
                if let Some(plane) = planes[k as usize].take() {
                    slot[k as usize] = place as u32;
                    own.push(plane);
                }
            }
            debug_assert_eq!(own.len(), list.len());
            tasks.push((range.clone(), own, list));
        }
        let slot = &slot;
        let axes = [
            (shape[1], layout.periodic[1]),
            (shape[2], layout.periodic[2]),
        ];
        tasks.into_par_iter().for_each(|(range, mut own, list)| {
            // The blocks within this group's markers (the whole group as one block where none are given).
            let first = blocks.partition_point(|b| b.markers.end <= range.start);
            let within = blocks[first..]
                .iter()
                .take_while(|b| b.markers.start < range.end);
            let mut warmed = 0.0;
            for block in within {
                let markers =
                    block.markers.start.max(range.start)..block.markers.end.min(range.end);
                warmed += warm(block, shape[0], axes, |k| {
                    let place = list.binary_search(&(k as u32)).ok()?;
                    Some(&own[place][..])
                });
                vectorized(
                    #[inline(always)]
                    || spread_group(markers.clone(), &mut own, slot, stencils, values),
                );
            }
            if blocks.is_empty() {
                vectorized(
                    #[inline(always)]
                    || spread_group(range, &mut own, slot, stencils, values),
                );
            }
            std::hint::black_box(warmed);
        });
    }
}

/// Adds the weighted values of the markers `range` to their supports in the planes `own` (the planes
/// of their group; `slot` gives each plane's place among them).
#[inline(always)]
fn spread_group(
    range: Range<usize>,
    own: &mut [&mut [f64]],
    slot: &[u32],
    stencils: &[Stencil],
    values: &[f64],
) {
    for l in range {
        let s = &stencils[l];
        // The marker's value times w_x per point of a row; each row adds them times w_y w_z.
        let row_values = s.weight[0].map(|w| values[l] * w);
        let [x0, x1, x2] = s.offset[0].map(|x| x as usize);
        let contiguous = x1 == x0 + 1 && x2 == x0 + 2;
        for mz in 0..3 {
            let Some(plane) = own.get_mut(slot[s.offset[2][mz] as usize] as usize) else {
                continue;
            };
            for my in 0..3 {
                let row = s.offset[1][my] as usize;
                let weight = s.weight[1][my] * s.weight[2][mz];
                if contiguous {
                    let points: &mut [f64; 3] =
                        (&mut plane[row + x0..row + x0 + 3]).try_into().unwrap();
                    for mx in 0..3 {
                        points[mx] += weight * row_values[mx];
                    }
                } else {
                    for (mx, x) in [x0, x1, x2].into_iter().enumerate() {
                        plane[row + x] += weight * row_values[mx];
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use silt_fluid::boundary::Boundaries;

    fn layout(cells: [usize; 3], boundaries: &Boundaries) -> GridLayout {
        GridLayout::new(
            Grid {
                cells,
                spacing: 0.5,
                origin: [-1.0, 0.0, 2.0],
                offset: [0; 3],
            },
            boundaries,
        )
    }

    /// A linear field is interpolated exactly (the kernel's first moment vanishes), on every component,
    /// across the periodic seam as well.
    #[test]
    fn interpolates_linear_fields_exactly() {
        let layout = layout([8, 7, 9], &Boundaries::periodic());
        let grid = layout.grid;
        for c in 0..3 {
            let mut u = Field::zeros(&grid);
            let delta = vec![0.01; layout.unknowns[c].len()];
            let every_plane = vec![true; layout.unknowns[c].shape[2]];
            let f = |x: [f64; 3]| 0.3 + 0.7 * x[0] - 0.2 * x[1] + 0.45 * x[2];
            for k in 0..u.dims[2] {
                for j in 0..u.dims[1] {
                    for i in 0..u.dims[0] {
                        let idx = u.index(i, j, k);
                        u.data[idx] = f(grid.point(silt_fluid::grid::Location::Face(c), [i, j, k]));
                    }
                }
            }
            // Away from the seam: exact for a linear field.
            let x = Vec3::new(0.37, 1.61, 4.02);
            let s = layout.stencil(c, x).unwrap();
            let mut predicted = delta.clone();
            layout.add_in_place(c, &u, &every_plane, &mut predicted);
            let plane_len = layout.unknowns[c].shape[0] * layout.unknowns[c].shape[1];
            let value = interpolate(&s, &predicted, plane_len);
            assert!(
                (value - 0.01 - f(x.to_array())).abs() < 1e-13,
                "component {c}: {value}"
            );
            // Constant field: 1 everywhere, also across the seam.
            u.data.iter_mut().for_each(|v| *v = 1.0);
            let mut predicted = delta.clone();
            layout.add_in_place(c, &u, &every_plane, &mut predicted);
            let s = layout.stencil(c, Vec3::new(-0.98, 0.02, 2.1)).unwrap();
            assert!((interpolate(&s, &predicted, plane_len) - 1.01).abs() < 1e-14);
        }
    }

    /// Spreading conserves the total (sum of w = 1 per marker) and is the adjoint of interpolation:
    /// sum_x g(x) (S F)(x) = sum_l F_l (I g)_l for any g.
    #[test]
    fn spreading_conserves_and_is_adjoint_to_interpolation() {
        let boundaries = Boundaries::channel(1);
        let layout = layout([8, 9, 7], &boundaries);
        let markers: Vec<Vec3> = crate::markers::fibonacci_sphere(60)
            .into_iter()
            .map(|d| Vec3::new(1.0, 2.2, 3.7) + 1.1 * d)
            .collect();
        for c in 0..3 {
            let stencils: Vec<Stencil> = markers
                .iter()
                .map(|&x| layout.stencil(c, x).unwrap())
                .collect();
            let groups = SpreadGroups::single(&layout, c, &stencils);
            let values: Vec<f64> = (0..markers.len())
                .map(|l| (l as f64 * 0.37).sin())
                .collect();
            let mut spread_field = vec![0.0; layout.unknowns[c].len()];
            spread(
                &layout,
                c,
                &stencils,
                &groups,
                &values,
                &mut spread_field,
                &[],
            );
            let total: f64 = spread_field.iter().sum();
            let expected: f64 = values.iter().sum();
            assert!((total - expected).abs() < 1e-12, "component {c}");
            // Adjointness with a test function g at the unknowns.
            let g: Vec<f64> = (0..spread_field.len())
                .map(|x| (x as f64 * 0.11).cos())
                .collect();
            let lhs: f64 = g.iter().zip(&spread_field).map(|(a, b)| a * b).sum();
            let plane_len = layout.unknowns[c].shape[0] * layout.unknowns[c].shape[1];
            let rhs: f64 = stencils
                .iter()
                .zip(&values)
                .map(|(s, v)| v * interpolate(s, &g, plane_len))
                .sum();
            assert!((lhs - rhs).abs() < 1e-12, "component {c}: {lhs} vs {rhs}");
        }
    }

    /// A support that reaches a wall is refused. At 1.2 h from the wall y = 0 the cell-centred points of
    /// u are all unknowns (0.5 h, 1.5 h, 2.5 h), but v's support holds the wall face y = 0: the marker's
    /// support crosses the wall and `forcing` disables it. Periodic axes wrap instead.
    #[test]
    fn supports_reaching_a_wall_are_refused() {
        let walls = layout([8, 8, 8], &Boundaries::channel(1));
        let periodic = layout([8, 8, 8], &Boundaries::periodic());
        let near = Vec3::new(0.5, 0.6, 4.0);
        assert!(walls.stencil(0, near).is_some());
        assert!(walls.stencil(1, near).is_none());
        for c in 0..3 {
            assert!(periodic.stencil(c, near).is_some(), "component {c}");
        }
        // 1.5 h away the support only touches the wall.
        let clear = Vec3::new(0.5, 0.75, 4.0);
        for c in 0..3 {
            assert!(walls.stencil(c, clear).is_some(), "component {c}");
        }
    }

    /// `stencils` gives the three components' supports (as `stencil` gives each) where all exist, and
    /// `support_centres` the middle point of the x-component's exactly there; near walls, across the
    /// periodic seam and at random places.
    #[test]
    fn support_centres_match_stencils() {
        let walls = layout([9, 8, 7], &Boundaries::channel(1));
        let periodic = layout([9, 8, 7], &Boundaries::periodic());
        // Points spread over the box and 10 % beyond it by additive recurrences (irrational steps).
        let mut k = 0.0;
        let mut random = || {
            k += 1.0;
            [0.754_877_666, 0.569_840_291, 0.362_892_055].map(|step: f64| (k * step).fract())
        };
        for layout in [&walls, &periodic] {
            let lengths = layout.grid.lengths();
            let mut reached = [[0isize; 2]; 3];
            for _ in 0..2000 {
                let r = random();
                let x = Vec3::from_array(std::array::from_fn(|a| {
                    layout.grid.origin[a] + (1.2 * r[a] - 0.1) * lengths[a]
                }));
                let each = [0, 1, 2].map(|c| layout.stencil(c, x));
                let all = each
                    .iter()
                    .all(Option::is_some)
                    .then(|| each.map(Option::unwrap));
                assert_eq!(layout.stencils(x), all, "{x:?}");
                let shape = layout.unknowns[0].shape;
                let centre = all.map(|[s, _, _]| {
                    [
                        s.offset[0][1] as usize,
                        s.offset[1][1] as usize / shape[0],
                        s.offset[2][1] as usize,
                    ]
                });
                assert_eq!(layout.support_centres(x), centre, "{x:?}");
                // Every component's support lies within the block margins around that centre.
                if let (Some(stencils), Some(centre)) = (all, centre) {
                    for (c, stencil) in stencils.iter().enumerate() {
                        let shape = layout.unknowns[c].shape;
                        for a in 1..3 {
                            let (below, above) = layout.support_reach(a);
                            for m in 0..3 {
                                let index = match a {
                                    1 => stencil.offset[1][m] as usize / shape[0],
                                    _ => stencil.offset[2][m] as usize,
                                };
                                let n = shape[a] as isize;
                                let mut d = index as isize - centre[a] as isize;
                                if d > n / 2 {
                                    d -= n;
                                } else if d < -n / 2 {
                                    d += n;
                                }
                                assert!((-below..=above).contains(&d), "{x:?}, {c}, {a}: {d}");
                                reached[a] = [reached[a][0].min(d), reached[a][1].max(d)];
                            }
                        }
                    }
                }
            }
            // The margins are the reach, not more.
            for a in 1..3 {
                let (below, above) = layout.support_reach(a);
                assert_eq!(reached[a], [-below, above], "axis {a}");
            }
        }
    }

    /// Rounds from the groups' ranges alone: neighbours alternate, a periodic axis with an odd number
    /// of groups needs a third round for the last (it touches the first), a bounded one does not.
    #[test]
    fn geometric_rounds_separate_overlapping_groups() {
        let reach = |groups: isize, planes: isize| -> Vec<std::ops::RangeInclusive<isize>> {
            (0..groups)
                .map(|g| g * 16 - 2..=((g + 1) * 16).min(planes) - 1 + 1)
                .collect()
        };
        assert_eq!(geometric_rounds(&reach(4, 64), 64, true), vec![0, 1, 0, 1]);
        assert_eq!(geometric_rounds(&reach(3, 48), 48, true), vec![0, 1, 2]);
        assert_eq!(geometric_rounds(&reach(3, 48), 48, false), vec![0, 1, 0]);
        // A last group of 2 planes (34 = 2 x 16 + 2) reaches back into the one before its neighbour's
        // neighbour only through the wrap.
        assert_eq!(geometric_rounds(&reach(3, 34), 34, false), vec![0, 1, 0]);
        assert_eq!(geometric_rounds(&reach(3, 34), 34, true), vec![0, 1, 2]);
    }

    /// The spread gives the same bits for any thread count.
    #[test]
    fn spreading_is_independent_of_the_thread_count() {
        let layout = layout([12, 10, 16], &Boundaries::periodic());
        let markers: Vec<Vec3> = crate::markers::fibonacci_sphere(400)
            .into_iter()
            .map(|d| Vec3::new(1.0, 2.0, 5.0) + 1.9 * d)
            .collect();
        let stencils: Vec<Stencil> = markers
            .iter()
            .map(|&x| layout.stencil(2, x).unwrap())
            .collect();
        // Groups of 50 markers: several rounds, several groups per round.
        let ranges: Vec<Range<usize>> = (0..markers.len())
            .step_by(50)
            .map(|l| l..(l + 50).min(markers.len()))
            .collect();
        let groups = SpreadGroups::new(&layout, 2, &stencils, &ranges);
        assert!(groups.rounds.len() > 1 && groups.rounds.iter().any(|r| r.len() > 1));
        let values: Vec<f64> = (0..markers.len()).map(|l| 1.0 / (1.0 + l as f64)).collect();
        let run = |threads| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let mut out = vec![0.0; layout.unknowns[2].len()];
            pool.install(|| spread(&layout, 2, &stencils, &groups, &values, &mut out, &[]));
            out
        };
        let grouped = run(1);
        assert_eq!(grouped, run(2));
        // Blocks (reading rows ahead) change nothing, whatever rows and planes they name.
        let blocks: Vec<MarkerBlock> = (0..markers.len())
            .step_by(30)
            .enumerate()
            .map(|(b, l)| MarkerBlock {
                markers: l..(l + 30).min(markers.len()),
                rows: b as isize - 3..b as isize + 9,
                planes: -2..20,
            })
            .collect();
        let mut with_blocks = vec![0.0; layout.unknowns[2].len()];
        spread(
            &layout,
            2,
            &stencils,
            &groups,
            &values,
            &mut with_blocks,
            &blocks,
        );
        assert_eq!(grouped, with_blocks);
        // The same sums as one group spreading all markers, up to the order of the additions.
        let mut single = vec![0.0; layout.unknowns[2].len()];
        let one = SpreadGroups::single(&layout, 2, &stencils);
        spread(&layout, 2, &stencils, &one, &values, &mut single, &[]);
        for (a, b) in grouped.iter().zip(&single) {
            assert!((a - b).abs() < 1e-14, "{a} vs {b}");
        }
    }
}
