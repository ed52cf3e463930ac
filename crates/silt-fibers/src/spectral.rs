//! The periodic RPY mobility product in O(N log N) (issue 25): Beenakker's Ewald splitting
//! ([`crate::ewald`]) with the real-space part summed over the pairs within a cutoff (a cell list, the
//! kernel tabulated) and the wave-space part by the spectral Ewald method (Lindbo & Tornberg 2011, as
//! in the positively split Ewald of Fiore et al. 2017): forces and torques spread onto a uniform grid
//! with truncated Gaussians, a 3-D FFT, the wave kernels applied per mode, the inverse FFT, and the
//! velocities interpolated back with the same Gaussians. One tolerance sets the splitting, the
//! cutoffs, the grid and the Gaussians. Theory and checks: `docs/theory/periodic-rpy.md`.
//!
//! Every stage is parallel and sums in an order that does not depend on the threads: real-space rows
//! bead by bead, the spreading plane by plane (each plane takes its beads in a fixed order), the FFT
//! line by line, the interpolation bead by bead.

use crate::ewald::{overlap_difference, real_scalars, self_blocks};
use crate::real_space::{
    image_index, image_shifts, sorted_loads, Neighbours, RealRows, RealSources, RealTable,
    StoredKernels, StoredRows,
};
use crate::rpy::{PairMobility, RpyKernel};
use crate::wave_grid::{GridTransforms, Packed};
use crate::window::{kaiser_bessel_aliasing, kaiser_bessel_shapes, Window, ALIAS_SAMPLES};
use rayon::prelude::*;
use rustfft::num_complex::Complex64;
use silt_core::lanes::with_lanes;
use silt_core::simd::vectorized;
use silt_core::Vec3;
use std::f64::consts::PI;
use std::sync::Arc;

/// The most memory the wave space's grids may take (seven complex grids).
const MAX_GRID_BYTES: f64 = 8.0 * (1u64 << 30) as f64;

/// Complex grids the wave space holds at once: three packed sources, three packed results, one
/// transpose buffer.
const GRIDS: f64 = 7.0;

/// Beads within the real-space cutoff of each bead the splittings tried leave: more moves work from
/// the grid to the pair sum ([`SpectralParameters::cost`] picks).
const NEIGHBOUR_CHOICES: [f64; 7] = [25.0, 50.0, 100.0, 150.0, 200.0, 300.0, 450.0];

/// The cost model's prices of a repeated product (the multiplier solve's case), in seconds, measured
/// on one core of the reference machine at N = 10⁴ (`examples/spectral_timing.rs`, docs/performance.md):
/// a real-space image (four at a time in vector lanes), a grid point of a Gaussian's support (spread
/// or interpolated, three complex values), a grid point of one 3-D FFT per `log₂` of the grid's points
/// (with the copies between the passes), and a grid point's share of the kernels.
const PAIR_COST: f64 = 16e-9;
/// A real-space image from its stored single-precision kernels ([`SINGLE_PRECISION_KERNELS`]).
const STORED_PAIR_COST: f64 = 5.5e-9;
const SUPPORT_POINT_COST: f64 = 2.7e-9;
const FFT_POINT_COST: f64 = 0.63e-9;
const MODE_COST: f64 = 2e-9;

/// The largest splitting parameter `ξ` in units of `1/a`: above it the wave sum and the self term
/// (`1 − 6ξa/√π + 40ξ³a³/3√π`) cancel more and more, and the relative error of the wave sum grows.
const MAX_XI_RADIUS: f64 = 0.75;

/// The Gaussians' share `η` of the wave kernel's decay stays below this (the kernel with their decay
/// divided out must still fall off).
const MAX_SHARE: f64 = 0.8;

/// The shares of the tolerance left to the grid's aliasing and to the Gaussians' truncation (the
/// product's error then 0.3-0.7 of the tolerance against the direct sum; at the tolerance itself the
/// two together exceed it by up to 60 %).
const ALIASING_SHARE: f64 = 0.1;
const TRUNCATION_SHARE: f64 = 0.1;

/// The most memory one configuration's real-space lists may take to be kept between products.
const NEIGHBOUR_LIST_BYTES: f64 = 2.0 * (1u64 << 30) as f64;

/// From this tolerance up, the real-space kernels are rounded to single precision (a relative error
/// of 6e-8 each, 0.06 of the tolerance at most) and a configuration's are stored: a repeated product
/// reads 32 bytes an image instead of evaluating the table (2.5-3x faster at N = 10⁴).
const SINGLE_PRECISION_KERNELS: f64 = 1e-6;

/// Sorted beads per task of the real-space sum.
const BEADS_PER_TASK: usize = 64;

/// Images closer than this many radii take [`SpectralRpy::near_pair`] (worst error there ~(ξr)², 1e-7 at
/// ξa = 0.75; the direct sum's cancellation grows like 1e-16 (a/r)³).
const COINCIDENT: f64 = 1e-3;

/// The most nodes the real-space table takes (a few beads in a huge box: a cutoff of millions of
/// radii).
const MAX_TABLE_NODES: usize = 100_000;

/// The most cells of the real-space cell list per bead (wider cells are as correct, with more pairs
/// to test): a few beads in a huge box need no more than a few cells.
const MAX_CELLS_PER_BEAD: usize = 8;

/// Real-space table nodes per `min(a, 1/ξ)` are this times `tolerance^(−1/4)`: the cubics' error
/// falls like the fourth power of the spacing, and this keeps it within a thousandth of the tolerance
/// (relative to each scalar's size at contact, from 2a on, at ξa up to 0.75; measured: 4e-11 at 300
/// nodes and ξa = 0.75), 53 nodes at 1e-4 (a table that stays in cache) to 1,700 at 1e-10.
const TABLE_NODES_SCALE: f64 = 5.3;

/// The smallest `x ≥ 1` with `bound(x) ≤ tolerance`, `bound` decreasing past its maximum (bisection).
fn cut_at(tolerance: f64, bound: impl Fn(f64) -> f64) -> f64 {
    let (mut low, mut high) = (1.0, 20.0);
    for _ in 0..100 {
        let middle = 0.5 * (low + high);
        if bound(middle) > tolerance {
            low = middle;
        } else {
            high = middle;
        }
    }
    high
}

/// Hasimoto's splitting `Φ = (1 + q + 2q²) e^{−q}` at `q = k² / 4ξ²`.
fn splitting(q: f64) -> f64 {
    (1.0 + q + 2.0 * q * q) * (-q).exp()
}

/// The wave space's aliasing bound for a grid whose Nyquist wave number is at `q_nyquist` and
/// Gaussians `s` grid spacings wide: a mode at `u = k / k_N` keeps `Φ(u² q_N)` and its alias a
/// `exp(−2π² s² (1 − u))` share of it (the two Gaussians' transforms at `k` and `k − 2π/h`).
///
/// The kernels grow with `k` beside `Φ` (the translation's `1 − a²k²/3`; the rotation relative to
/// its scale alike), so each mode counts `1 + a²k²/3` times, `a²k²/3 = size · u² q_N` with
/// `size = 4ξ²a²/3`.
fn aliasing(q_nyquist: f64, s: f64, size: f64) -> f64 {
    (0..=64)
        .map(|n| {
            let u = n as f64 / 64.0;
            let q = u * u * q_nyquist;
            splitting(q) * (1.0 + size * q) * (-2.0 * PI * PI * s * s * (1.0 - u)).exp()
        })
        .fold(0.0, f64::max)
}

/// The narrowest Gaussians (in grid spacings) whose aliasing on a grid with its Nyquist wave number
/// at `q_nyquist` stays within `bound` (bisection).
fn narrowest_gaussian(q_nyquist: f64, size: f64, bound: f64) -> f64 {
    let (mut low, mut high) = (0.1, 5.0);
    for _ in 0..40 {
        let middle = 0.5 * (low + high);
        if aliasing(q_nyquist, middle, size) > bound {
            low = middle;
        } else {
            high = middle;
        }
    }
    high
}

/// The most points per axis a Kaiser–Bessel window may take.
const MAX_WINDOW_POINTS: usize = 24;

/// The share of the tolerance left to a Kaiser–Bessel window's aliasing (its bound per axis; the
/// window has no truncation).
const KAISER_BESSEL_SHARE: f64 = 1.0;

/// A Kaiser–Bessel shape β and its aliasing ratios ([`kaiser_bessel_aliasing`]).
type ShapeAliasing = (f64, Vec<f64>);

/// The aliasing ratios of every Kaiser–Bessel window tried, by points P and shape β
/// ([`kaiser_bessel_aliasing`]): the same for every box, computed once.
fn kaiser_bessel_tables() -> &'static [Vec<ShapeAliasing>] {
    static TABLES: std::sync::OnceLock<Vec<Vec<ShapeAliasing>>> = std::sync::OnceLock::new();
    TABLES.get_or_init(|| {
        (0..=MAX_WINDOW_POINTS)
            .map(|points| {
                if points < 2 {
                    return Vec::new();
                }
                kaiser_bessel_shapes()
                    .map(|c| {
                        let beta = c * points as f64;
                        (beta, kaiser_bessel_aliasing(points, beta))
                    })
                    .collect()
            })
            .collect()
    })
}

/// The fewest points P of a Kaiser–Bessel window, with the shape β of least aliasing, for which
/// every mode up to `u_cut = k_c h / π` keeps its aliases' shares (weighted by `Φ(k) (1 + a²k²/3)`
/// as in [`aliasing`]) within [`KAISER_BESSEL_SHARE`] of the tolerance; `None` when no window of at
/// most [`MAX_WINDOW_POINTS`] does.
fn kaiser_bessel_choice(
    q_nyquist: f64,
    size: f64,
    u_cut: f64,
    tolerance: f64,
) -> Option<(usize, f64)> {
    let bound = KAISER_BESSEL_SHARE * tolerance;
    let last = ((u_cut.min(1.0) * ALIAS_SAMPLES as f64).ceil() as usize).min(ALIAS_SAMPLES);
    let weights: Vec<f64> = (0..=last)
        .map(|sample| {
            let u = sample as f64 / ALIAS_SAMPLES as f64;
            let q = u * u * q_nyquist;
            splitting(q) * (1.0 + size * q)
        })
        .collect();
    kaiser_bessel_tables()
        .iter()
        .enumerate()
        .find_map(|(points, shapes)| {
            let (worst, beta) = shapes
                .iter()
                .map(|(beta, ratios)| {
                    let worst = weights
                        .iter()
                        .zip(ratios)
                        .map(|(w, r)| w * r)
                        .fold(0.0, f64::max);
                    (worst, *beta)
                })
                .min_by(|a, b| a.0.total_cmp(&b.0))?;
            (worst <= bound).then_some((points, beta))
        })
}

/// The parameters the tolerance sets (see [`SpectralRpy::new`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpectralParameters {
    /// Ewald splitting parameter `ξ`.
    pub xi: f64,
    /// Real-space cutoff `r_c`.
    pub real_cutoff: f64,
    /// Wave cutoff `k_c` where the splitting has fallen below the tolerance.
    pub wave_cutoff: f64,
    /// Grid points along each axis.
    pub grid: [usize; 3],
    /// Grid points of a window's support along each axis.
    pub support: [usize; 3],
    /// The spreading window ([`crate::window`]).
    pub window: WindowShape,
    /// The real-space kernels rounded to single precision and stored per configuration
    /// ([`SINGLE_PRECISION_KERNELS`]).
    pub single_precision_kernels: bool,
}

/// The spreading window the tolerance chose.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum WindowShape {
    /// Kaiser–Bessel windows of shape `beta` over the support (boxes not sheared).
    KaiserBessel { beta: f64 },
    /// Gaussians of standard deviation `sigma` cut at `truncation` standard deviations (sheared
    /// boxes).
    Gaussian { sigma: f64, truncation: f64 },
}

impl std::fmt::Display for WindowShape {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            WindowShape::KaiserBessel { beta } => write!(f, "Kaiser–Bessel, β = {beta:.2}"),
            WindowShape::Gaussian { sigma, truncation } => {
                write!(f, "Gaussian, σ = {sigma:.4}, cut at {truncation:.2} σ")
            }
        }
    }
}

impl SpectralParameters {
    /// The cost model's estimate of one product's time on one core, with `beads` beads and `pairs`
    /// real-space pairs (each way).
    pub fn cost(&self, beads: usize, pairs: f64) -> f64 {
        let points = self.grid.iter().map(|&n| n as f64).product::<f64>();
        let support = self.support.iter().map(|&n| n as f64).product::<f64>();
        // Stored single-precision kernels when they fit in memory; else evaluated from the table at
        // every product.
        let pair_cost = if self.single_precision_kernels && pairs * 37.0 <= NEIGHBOUR_LIST_BYTES {
            STORED_PAIR_COST
        } else {
            PAIR_COST
        };
        pair_cost * pairs
            + SUPPORT_POINT_COST * 2.0 * beads as f64 * support
            + FFT_POINT_COST * 6.0 * points * points.log2()
            + MODE_COST * points
    }

    /// The memory the wave space's grids take, in bytes.
    pub fn grid_bytes(&self) -> f64 {
        GRIDS * 16.0 * self.grid.iter().map(|&n| n as f64).product::<f64>()
    }
}

/// Beenakker's real-space kernel (without the overlap difference) tabulated to `cutoff`, used from
/// 2a on (closer images are evaluated): at most [`MAX_TABLE_NODES`] nodes (where the cutoff is many times 1/ξ and a, r³ times
/// the kernel is a smooth polynomial in r over most of it, the cubics then exact or nearly).
fn real_table(kernel: &RpyKernel, xi: f64, cutoff: f64, tolerance: f64) -> RealTable {
    let per_scale = TABLE_NODES_SCALE * tolerance.powf(-0.25);
    let step = (kernel.radius().min(1.0 / xi) / per_scale).max(cutoff / MAX_TABLE_NODES as f64);
    RealTable::new(step, cutoff, 2.0 * kernel.radius(), |r| {
        real_scalars(kernel, xi, r)
    })
}

/// Where one product's time went, in seconds.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ProductTiming {
    /// The cell list, the Gaussians' weights and the real-space kernels of a new configuration
    /// (next to nothing when the positions are those of the last product).
    pub preparation: f64,
    /// The real-space pair sum.
    pub real_space: f64,
    /// The spreading onto the grid, with the forward transforms along x and z slab by slab.
    pub spreading: f64,
    /// The forward and inverse transforms along y and the wave kernels applied between them.
    pub transforms: f64,
    /// The inverse transforms along z and x slab by slab, with the interpolation back to the beads.
    pub interpolation: f64,
}

impl ProductTiming {
    /// The whole product.
    pub fn total(&self) -> f64 {
        self.preparation + self.real_space + self.spreading + self.transforms + self.interpolation
    }
}

/// Seconds since `start`, and `start` reset.
fn lap(start: &mut std::time::Instant) -> f64 {
    let now = std::time::Instant::now();
    let seconds = (now - *start).as_secs_f64();
    *start = now;
    seconds
}

/// The periodic RPY product of beads of one radius in an orthorhombic box.
pub struct SpectralRpy {
    kernel: RpyKernel,
    lengths: Vec3,
    parameters: SpectralParameters,
    /// Grid spacing along each axis.
    spacing: Vec3,
    /// The spreading window.
    window: Window,
    /// `1 / ŵ(k)²` at each grid wave number along each axis (the window's transform, spread and
    /// interpolated, divided out of the kernels).
    deconvolution: [Vec<f64>; 3],
    table: RealTable,
    /// The image shifts of the real-space lists ([`crate::real_space::image_index`]).
    shifts: Vec<[f64; 4]>,
    transforms: GridTransforms,
    /// The last configuration's preparation.
    cache: std::sync::Mutex<Option<Arc<Prepared>>>,
    /// The wave space's grid, kept between products (fresh memory costs a page fault every 4 KiB).
    grid_memory: std::sync::Mutex<Vec<Complex64>>,
    /// Each y slab's interpolated shares, kept alike.
    share_memory: std::sync::Mutex<Vec<Vec<[f64; 6]>>>,
    /// The largest shear `|tilt| / L_y` the parameters allow.
    max_shear: f64,
    /// The relative error asked for.
    tolerance: f64,
}

/// What a product needs of the positions alone: kept while they do not change.
struct Prepared {
    positions: Vec<Vec3>,
    /// The Lees–Edwards tilt and the shear `t = tilt / L_y`.
    tilt: f64,
    shear: f64,
    cells: CellList,
    footprints: Footprints,
    /// The sorted positions as the real-space lanes read them.
    lane_positions: Vec<[f64; 4]>,
    /// Each bead's real-space images (sorted places), when they take at most
    /// [`NEIGHBOUR_LIST_BYTES`].
    neighbours: Option<Neighbours>,
    /// Their kernels in single precision, when the tolerance allows them
    /// ([`SINGLE_PRECISION_KERNELS`]) and they fit in [`NEIGHBOUR_LIST_BYTES`] too.
    kernels: Option<StoredKernels>,
}

/// The beads sorted into cells at least half the real-space cutoff wide (counting sort, index order
/// within a cell): the real-space sum's neighbour search and the order in which the wave space
/// visits beads (neighbours one after another, for the caches). Positions in sheared coordinates.
struct CellList {
    counts: [usize; 3],
    /// The first sorted bead of each cell, and the end.
    starts: Vec<usize>,
    /// The bead at each sorted place.
    order: Vec<usize>,
    /// The positions wrapped into the box, in sorted order.
    positions: Vec<Vec3>,
}

impl CellList {
    /// Beads at `positions` in a box of `lengths` sheared by `t = tilt / L_y` (at most `max_t`), in
    /// sheared coordinates `s = (x − t y, y, z)`, where the lattice is orthorhombic: cells along x
    /// wide enough for `|Δs_x| ≤ r_c (1 + |t|)`.
    fn new(positions: &[Vec3], lengths: Vec3, cutoff: f64, t: f64, max_t: f64) -> Self {
        let widths = Vec3::new(cutoff * (1.0 + max_t), cutoff, cutoff);
        let mut counts: [usize; 3] =
            std::array::from_fn(|a| ((2.0 * lengths[a] / widths[a]).floor() as usize).max(1));
        while counts.iter().product::<usize>() > MAX_CELLS_PER_BEAD * positions.len().max(8) {
            let widest = (0..3).max_by_key(|&a| counts[a]).expect("three axes");
            counts[widest] = counts[widest].div_ceil(2);
        }
        let wrapped: Vec<Vec3> = positions
            .iter()
            .map(|&x| {
                let s = Vec3::new(x.x - t * x.y, x.y, x.z);
                s - lengths * (s / lengths).floor()
            })
            .collect();
        let cell_of = |x: Vec3| -> usize {
            let c: [usize; 3] = std::array::from_fn(|a| {
                ((x[a] / lengths[a] * counts[a] as f64) as usize).min(counts[a] - 1)
            });
            c[0] + counts[0] * (c[1] + counts[1] * c[2])
        };
        let total = counts[0] * counts[1] * counts[2];
        let mut starts = vec![0usize; total + 1];
        let bead_cells: Vec<usize> = wrapped.iter().map(|&x| cell_of(x)).collect();
        for &c in &bead_cells {
            starts[c + 1] += 1;
        }
        for c in 0..total {
            starts[c + 1] += starts[c];
        }
        let mut fill = starts.clone();
        let mut order = vec![0usize; positions.len()];
        for (i, &c) in bead_cells.iter().enumerate() {
            order[fill[c]] = i;
            fill[c] += 1;
        }
        let positions = order.iter().map(|&i| wrapped[i]).collect();
        CellList {
            counts,
            starts,
            order,
            positions,
        }
    }

    fn index(&self, c: [usize; 3]) -> usize {
        c[0] + self.counts[0] * (c[1] + self.counts[1] * c[2])
    }

    fn coordinates(&self, index: usize) -> [usize; 3] {
        let [n0, n1, _] = self.counts;
        [index % n0, (index / n0) % n1, index / (n0 * n1)]
    }
}

/// One y row of a bead's support on a y slab (see [`SpectralRpy::slab_rows`]).
struct SupportRow<'a> {
    bead: usize,
    weight_y: f64,
    /// The z weights, from z index `fz` on.
    wz: &'a [f64],
    fz: usize,
    /// The x weights, from x index `fx` on: `run` of them before the grid's end, the rest from 0.
    fx: usize,
    wx: &'a [f64],
    run: usize,
}

/// Each bead's window: its support's first grid index along each axis (wrapped into the grid) and
/// its weights, `support[0] + support[1] + support[2]` per bead.
struct Footprints {
    /// The first grid index along y and z of each bead's support.
    first: Vec<[usize; 2]>,
    /// The first grid index along x of each row of the support: one per bead (a box not sheared,
    /// `rows = 1`) or one per y row (sheared: each row's Gaussian centred elsewhere along x).
    first_x: Vec<usize>,
    rows: usize,
    /// Per bead: `rows` runs of x weights, then the y and the z weights.
    weights: Vec<f64>,
    stride: usize,
    support: [usize; 3],
    /// The beads by the first y index of their support, each's in the cell list's order.
    by_start: Vec<Vec<usize>>,
    /// Each bead's place in its `by_start` list.
    rank: Vec<usize>,
}

impl Footprints {
    /// The first x index and the x weights of bead `b`'s support on its y row `qy`.
    #[inline]
    fn x_row(&self, b: usize, qy: usize) -> (usize, &[f64]) {
        let row = if self.rows == 1 { 0 } else { qy };
        let p0 = self.support[0];
        let start = b * self.stride + row * p0;
        (
            self.first_x[b * self.rows + row],
            &self.weights[start..start + p0],
        )
    }

    /// The y and z weights of bead `b`.
    #[inline]
    fn yz(&self, b: usize) -> (&[f64], &[f64]) {
        let [_, p1, p2] = self.support;
        let start = b * self.stride + self.rows * self.support[0];
        (
            &self.weights[start..start + p1],
            &self.weights[start + p1..start + p1 + p2],
        )
    }
}

impl SpectralRpy {
    /// The product for beads of `kernel` in a box of `lengths` to relative `tolerance` (1e-10 to
    /// 1e-2), with about `beads` beads (which balances the real-space and grid work):
    /// - the real-space cutoff `x_c = ξ r_c` where Beenakker's real-space kernel (terms up to
    ///   `x⁷ e^{−x²}`) falls below the tolerance, `r_c` holding some number of beads (each choice
    ///   of [`NEIGHBOUR_CHOICES`] priced by the cost model), with `ξa ≤ 0.75` and `r_c` at most twice
    ///   the shortest side;
    /// - the grid spacing `h` and the Gaussians' width `s` (grid spacings): for each spacing from
    ///   `π / k_c` down, the narrowest Gaussians for which the aliasing bound ([`aliasing`]) meets the
    ///   tolerance with `η = 4ξ²s²h² ≤ 0.8` and a support within the grid; the cheapest by the cost
    ///   model ([`SpectralParameters::cost`]);
    /// - Gaussians cut at `m` standard deviations, `erfc(m/√2) ≤ tolerance / 10`.
    ///
    /// Checked against the direct Ewald sum at 1e-3, 1e-5 and 1e-8.
    pub fn new(
        kernel: RpyKernel,
        lengths: Vec3,
        tolerance: f64,
        beads: usize,
    ) -> Result<Self, String> {
        Self::build(kernel, lengths, tolerance, beads, 0.0)
    }

    /// As [`SpectralRpy::new`], for a sheared (Lees–Edwards) box with any tilt `|tilt| ≤ L_x / 2`
    /// ([`SpectralRpy::sheared_product`]): the grid along y finer by `1 + L_x / 2L_y` (the sheared
    /// wave vectors reach further in the grid's y index) and the cells along x wider alike.
    pub fn new_sheared(
        kernel: RpyKernel,
        lengths: Vec3,
        tolerance: f64,
        beads: usize,
    ) -> Result<Self, String> {
        Self::build(
            kernel,
            lengths,
            tolerance,
            beads,
            0.5 * lengths.x / lengths.y,
        )
    }

    fn build(
        kernel: RpyKernel,
        lengths: Vec3,
        tolerance: f64,
        beads: usize,
        max_shear: f64,
    ) -> Result<Self, String> {
        if !(lengths.is_finite() && lengths.min_element() > 0.0) {
            return Err(format!("box lengths must be positive, got {lengths}"));
        }
        if !(1e-10..=1e-2).contains(&tolerance) {
            return Err(format!(
                "tolerance {tolerance} is not allowed; from 1e-10 to 1e-2"
            ));
        }
        let volume = lengths.x * lengths.y * lengths.z;
        let root_pi = PI.sqrt();
        let x_c = cut_at(tolerance, |x| {
            libm::erfc(x)
                + (4.0 * x.powi(7) + 20.0 * x.powi(5) + 14.0 * x.powi(3) + 5.0 * x) * (-x * x).exp()
                    / root_pi
        });
        let truncation = cut_at(TRUNCATION_SHARE * tolerance, |m| {
            libm::erfc(m / 2f64.sqrt())
        });
        let density = beads.max(1) as f64 / volume;
        // Every splitting (by the real-space neighbours it leaves) and grid (from the cutoff's own
        // spacing π / k_c down) that meets the tolerance, priced by the cost model; the cheapest.
        let mut best: Option<(f64, SpectralParameters)> = None;
        let mut smallest_grid = f64::INFINITY;
        for neighbours in NEIGHBOUR_CHOICES {
            let share = (neighbours / (density * 4.0 / 3.0 * PI)).cbrt();
            // ξa at most MAX_XI_RADIUS (the wave and self parts cancel more above it); images
            // reached by up to two cells of the cell list.
            let reach = Vec3::new(lengths.x / (1.0 + max_shear), lengths.y, lengths.z);
            let real_cutoff = share
                .max(x_c * kernel.radius() / MAX_XI_RADIUS)
                .min(2.0 * reach.min_element());
            let xi = x_c / real_cutoff;
            // The kernels' growth 1 + a²k²/3 = 1 + size y² with y = k / 2ξ.
            let size = 4.0 * (xi * kernel.radius()).powi(2) / 3.0;
            let y_c = cut_at(tolerance, |y| splitting(y * y) * (1.0 + size * y * y));
            let wave_cutoff = 2.0 * xi * y_c;
            let pairs = density * 4.0 / 3.0 * PI * real_cutoff.powi(3) * beads as f64;
            for refinement in 0..40 {
                let h = PI / wave_cutoff * 0.97f64.powi(refinement);
                let q_nyquist = (PI / h).powi(2) / (4.0 * xi * xi);
                let grid: [usize; 3] = std::array::from_fn(|axis| {
                    let finer = if axis == 1 { 1.0 + max_shear } else { 1.0 };
                    fft_friendly(((lengths[axis] * finer / h).ceil() as usize).max(8))
                });
                let spacing = lengths / Vec3::new(grid[0] as f64, grid[1] as f64, grid[2] as f64);
                let window = if max_shear == 0.0 {
                    // The fewest points of a Kaiser–Bessel window (and its shape) that meet the
                    // aliasing bound up to the wave cutoff.
                    let Some((points, beta)) =
                        kaiser_bessel_choice(q_nyquist, size, wave_cutoff * h / PI, tolerance)
                    else {
                        continue;
                    };
                    ([points; 3], WindowShape::KaiserBessel { beta })
                } else {
                    let s = narrowest_gaussian(q_nyquist, size, ALIASING_SHARE * tolerance);
                    if 4.0 * xi * xi * s * s * h * h > MAX_SHARE {
                        continue;
                    }
                    let sigma = s * h;
                    let support: [usize; 3] = std::array::from_fn(|axis| {
                        (2.0 * truncation * sigma / spacing[axis]).floor() as usize + 1
                    });
                    (support, WindowShape::Gaussian { sigma, truncation })
                };
                let (support, window) = window;
                // A window wider than the box would overlap its own images on the grid.
                if (0..3).any(|axis| support[axis] > grid[axis]) {
                    continue;
                }
                let candidate = SpectralParameters {
                    xi,
                    real_cutoff,
                    wave_cutoff,
                    grid,
                    support,
                    window,
                    single_precision_kernels: tolerance >= SINGLE_PRECISION_KERNELS,
                };
                if candidate.grid_bytes() > MAX_GRID_BYTES {
                    smallest_grid = smallest_grid.min(candidate.grid_bytes());
                    continue;
                }
                let cost = candidate.cost(beads, pairs);
                if best.is_none_or(|(c, _)| cost < c) {
                    best = Some((cost, candidate));
                }
            }
        }
        let Some((_, parameters)) = best else {
            return Err(if smallest_grid.is_finite() {
                format!(
                    "the wave-space grid would take at least {:.1} GiB (at most {:.0}); loosen the \
                     tolerance ({tolerance:e}) or use a smaller box",
                    smallest_grid / (1u64 << 30) as f64,
                    MAX_GRID_BYTES / (1u64 << 30) as f64
                )
            } else {
                format!("no grid meets tolerance {tolerance:e} in a box of {lengths}")
            });
        };
        let grid = parameters.grid;
        let spacing = lengths / Vec3::new(grid[0] as f64, grid[1] as f64, grid[2] as f64);
        let window = match parameters.window {
            WindowShape::KaiserBessel { beta } => Window::kaiser_bessel(
                beta,
                std::array::from_fn(|axis| parameters.support[axis] as f64 * spacing[axis] / 2.0),
            ),
            WindowShape::Gaussian { sigma, truncation } => Window::Gaussian { sigma, truncation },
        };
        // 1 / (the window's transform)² at each grid wave number along each axis.
        let deconvolution = std::array::from_fn(|axis| {
            (0..grid[axis])
                .map(|i| {
                    window
                        .transform(wave_number(i, grid[axis], lengths[axis]), axis)
                        .powi(-2)
                })
                .collect()
        });
        Ok(SpectralRpy {
            kernel,
            lengths,
            parameters,
            spacing,
            window,
            deconvolution,
            table: real_table(&kernel, parameters.xi, parameters.real_cutoff, tolerance),
            shifts: image_shifts(lengths),
            transforms: GridTransforms::new(grid),
            cache: std::sync::Mutex::new(None),
            grid_memory: std::sync::Mutex::new(Vec::new()),
            share_memory: std::sync::Mutex::new(Vec::new()),
            max_shear,
            tolerance,
        })
    }

    /// The parameters the tolerance chose.
    pub fn parameters(&self) -> SpectralParameters {
        self.parameters
    }

    /// The relative error asked for.
    pub fn tolerance(&self) -> f64 {
        self.tolerance
    }

    /// The box.
    pub fn lengths(&self) -> Vec3 {
        self.lengths
    }

    /// The velocities `V` and angular velocities `W` of beads at `positions` under `forces` and
    /// `torques`: real space + wave space + self (the same numbers for any thread count).
    pub fn product(
        &self,
        positions: &[Vec3],
        forces: &[Vec3],
        torques: &[Vec3],
    ) -> (Vec<Vec3>, Vec<Vec3>) {
        self.timed_product(positions, forces, torques, 0.0).0
    }

    /// The product in the box sheared by `tilt` (Lees–Edwards: the images across y shifted by
    /// `tilt` along x, `|tilt| ≤ L_x / 2`; a product built by [`SpectralRpy::new_sheared`]).
    pub fn sheared_product(
        &self,
        positions: &[Vec3],
        forces: &[Vec3],
        torques: &[Vec3],
        tilt: f64,
    ) -> (Vec<Vec3>, Vec<Vec3>) {
        self.timed_product(positions, forces, torques, tilt).0
    }

    /// The largest shear `|tilt| / L_y` the parameters allow (0: not sheared).
    pub fn max_shear(&self) -> f64 {
        self.max_shear
    }

    /// [`SpectralRpy::sheared_product`] and where its time went.
    ///
    /// # Panics
    /// If the slices differ in length or the tilt exceeds what the product was built for.
    pub fn timed_product(
        &self,
        positions: &[Vec3],
        forces: &[Vec3],
        torques: &[Vec3],
        tilt: f64,
    ) -> ((Vec<Vec3>, Vec<Vec3>), ProductTiming) {
        assert!(
            tilt.abs() <= self.max_shear * self.lengths.y * (1.0 + 1e-12),
            "SpectralRpy: tilt {tilt} beyond the {} the product was built for",
            self.max_shear * self.lengths.y
        );
        let n = positions.len();
        assert!(
            forces.len() == n && torques.len() == n,
            "SpectralRpy::product: {n} positions, {} forces, {} torques",
            forces.len(),
            torques.len()
        );
        let mut timing = ProductTiming::default();
        let mut clock = std::time::Instant::now();
        let prepared = self.prepared(positions, tilt);
        timing.preparation = lap(&mut clock);
        let real = self.real_space(&prepared, forces, torques);
        timing.real_space = lap(&mut clock);
        let wave = self.wave_space(&prepared, forces, torques, &mut timing);
        let cells = &prepared.cells;
        let own = self_blocks(&self.kernel, self.parameters.xi);
        let (mut v, mut w) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
        for (sorted, &i) in cells.order.iter().enumerate() {
            v[i] = real[sorted].0 + wave[sorted].0 + own.tt * forces[i];
            w[i] = real[sorted].1 + wave[sorted].1 + own.rr * torques[i];
        }
        ((v, w), timing)
    }

    /// The real-space kernel of a close image at `rho` (`0 < |rho|`, closer than the table's start
    /// 2a), evaluated: Beenakker's kernel plus the overlap difference (with the overlap correction).
    fn close_pair(&self, rho: Vec3, r: f64) -> PairMobility {
        if r < COINCIDENT * self.kernel.radius() && self.kernel.overlap_correction() {
            return self.near_pair(rho);
        }
        let mut pair = PairMobility {
            direction: rho / r,
            ..real_scalars(&self.kernel, self.parameters.xi, r)
        };
        if let Some(difference) = overlap_difference(&self.kernel, rho) {
            pair.tt_isotropic += difference.tt_isotropic;
            pair.tt_along += difference.tt_along;
            pair.coupling += difference.coupling;
            pair.rr_isotropic += difference.rr_isotropic;
            pair.rr_along += difference.rr_along;
        }
        pair
    }

    /// The real-space images of the beads of `cell` (sorted places): for each bead, every image
    /// closer than the cutoff over the 125 neighbouring cells (and their images) in a fixed order,
    /// each cell's beads in index order; images closer than the table's start (2a) as close pairs
    /// with their kernels.
    fn cell_neighbours(&self, cells: &CellList, cell: usize, t: f64) -> Neighbours {
        let lengths = self.lengths;
        let counts = cells.counts;
        let rc2 = self.parameters.real_cutoff.powi(2);
        let close_below = self.table.from;
        let own = cells.coordinates(cell);
        // The neighbouring cells, wrapped, with the image that wrapping takes.
        let mut neighbours = Vec::with_capacity(125);
        for dz in -2i64..=2 {
            for dy in -2i64..=2 {
                for dx in -2i64..=2 {
                    let d = [dx, dy, dz];
                    let mut neighbour = [0usize; 3];
                    let mut image = [0i64; 3];
                    for a in 0..3 {
                        let c = own[a] as i64 + d[a];
                        let n = counts[a] as i64;
                        neighbour[a] = c.rem_euclid(n) as usize;
                        image[a] = c.div_euclid(n);
                    }
                    let shift = Vec3::from_array(image.map(|d| d as f64)) * lengths;
                    let index = cells.index(neighbour);
                    neighbours.push((
                        cells.starts[index]..cells.starts[index + 1],
                        shift,
                        image_index(image),
                    ));
                }
            }
        }
        let mut list = Neighbours::starting_at(cells.starts[cell]);
        for i in cells.starts[cell]..cells.starts[cell + 1] {
            let origin = cells.positions[i];
            for (range, shift, image) in &neighbours {
                let x = origin - *shift;
                for (j, &y) in cells.positions[range.clone()].iter().enumerate() {
                    let sheared = x - y;
                    let rho = Vec3::new(sheared.x + t * sheared.y, sheared.y, sheared.z);
                    let r2 = rho.length_squared();
                    let j = range.start + j;
                    if r2 > rc2 || (r2 == 0.0 && j == i) {
                        continue;
                    }
                    let r = r2.sqrt();
                    if r < close_below {
                        list.close.push((j as u32, self.close_pair(rho, r)));
                    } else {
                        list.sources.push(j as u32);
                        list.images.push(*image);
                    }
                }
            }
            list.end_bead();
        }
        list
    }

    /// The real-space kernel of an image closer than [`COINCIDENT`] radii, overlap correction on:
    /// Beenakker's kernel plus the overlap difference is Wajnryb's overlap form less the wave part's
    /// continuum `W(r)`, smooth and even in r, so `W(0) = μ0 I − M_self` (and alike for rotation) up to
    /// O((ξr)²); the coupling's continuum part is odd, (1 − erfc x − 2x(1 − 6x² + 2x⁴)e^{−x²}/√π) /
    /// (8πηr²) = 5ξ³r / (3π^{3/2}η) + O(ξ⁵r³). Evaluated apart, the two terms would cancel like 1/r³
    /// (NaN for coincident beads).
    fn near_pair(&self, rho: Vec3) -> PairMobility {
        let own = self_blocks(&self.kernel, self.parameters.xi);
        let overlap = self.kernel.pair(rho);
        let xi = self.parameters.xi;
        let continuum_coupling =
            5.0 * xi.powi(3) * rho.length() / (3.0 * PI.powf(1.5) * self.kernel.viscosity());
        PairMobility {
            tt_isotropic: overlap.tt_isotropic - self.kernel.self_translation() + own.tt.x_axis.x,
            rr_isotropic: overlap.rr_isotropic - self.kernel.self_rotation() + own.rr.x_axis.x,
            coupling: overlap.coupling - continuum_coupling,
            ..overlap
        }
    }

    /// What the real-space lanes read, with the sorted `loads` of this product (none to evaluate
    /// kernels alone) in a box sheared by `t`.
    fn real_sources<'a>(
        &'a self,
        positions: &'a [[f64; 4]],
        loads: &'a [[f64; 8]],
        t: f64,
    ) -> RealSources<'a> {
        RealSources {
            positions,
            loads,
            shifts: &self.shifts,
            shear: t,
            table: &self.table,
            idle_distance: 0.5 * self.parameters.real_cutoff,
        }
    }

    /// The real-space sum in the cell list's order, four images at a time
    /// ([`crate::real_space::RealRows`]): from the configuration's stored lists, or cell by cell
    /// (the same lists, so the same numbers).
    fn real_space(
        &self,
        prepared: &Prepared,
        forces: &[Vec3],
        torques: &[Vec3],
    ) -> Vec<(Vec3, Vec3)> {
        let cells = &prepared.cells;
        let loads = sorted_loads(&cells.order, forces, torques);
        let sources = self.real_sources(&prepared.lane_positions, &loads, prepared.shear);
        let mut out = vec![(Vec3::ZERO, Vec3::ZERO); cells.positions.len()];
        let single = self.parameters.single_precision_kernels;
        // The beads of `out` (run places `from ..`) of `list`: from the stored kernels, or from the
        // table (rounded as the stored kernels are when the tolerance allows them: the same numbers).
        let rows =
            |list: &Neighbours, from: usize, out: &mut [(Vec3, Vec3)]| match &prepared.kernels {
                Some(kernels) => with_lanes(StoredRows {
                    sources: &sources,
                    neighbours: list,
                    kernels,
                    from,
                    out,
                }),
                None => with_lanes(RealRows {
                    sources: &sources,
                    neighbours: list,
                    from,
                    single_precision: single,
                    out,
                }),
            };
        match &prepared.neighbours {
            Some(list) => out
                .par_chunks_mut(BEADS_PER_TASK)
                .enumerate()
                .for_each(|(task, out)| rows(list, task * BEADS_PER_TASK, out)),
            None => {
                let mut cell_rows: Vec<&mut [(Vec3, Vec3)]> = Vec::new();
                let mut rest = out.as_mut_slice();
                for cell in 0..cells.starts.len() - 1 {
                    let (row, tail) =
                        rest.split_at_mut(cells.starts[cell + 1] - cells.starts[cell]);
                    cell_rows.push(row);
                    rest = tail;
                }
                cell_rows
                    .into_par_iter()
                    .enumerate()
                    .for_each(|(cell, out)| {
                        let list = self.cell_neighbours(cells, cell, prepared.shear);
                        rows(&list, 0, out)
                    });
            }
        }
        out
    }

    /// What a product at `positions` in the box sheared by `tilt` needs of them alone, from the
    /// cache when they are those of the last product (the multiplier solve's many products at one
    /// configuration).
    fn prepared(&self, positions: &[Vec3], tilt: f64) -> Arc<Prepared> {
        let mut cache = self
            .cache
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        if let Some(prepared) = cache.as_ref() {
            if prepared.tilt == tilt && prepared.positions == positions {
                return prepared.clone();
            }
        }
        // Free the last configuration's memory before taking the next's, but for its stored kernels'
        // (reused).
        let recycled = cache
            .take()
            .and_then(|last| Arc::try_unwrap(last).ok())
            .and_then(|last| last.kernels)
            .map(|kernels| kernels.chunks);
        let t = tilt / self.lengths.y;
        let cells = CellList::new(
            positions,
            self.lengths,
            self.parameters.real_cutoff,
            t,
            self.max_shear,
        );
        let footprints = self.footprints(&cells.positions, t);
        let volume = self.lengths.x * self.lengths.y * self.lengths.z;
        let n = positions.len() as f64;
        let pairs_estimate = n * n / volume * 4.0 / 3.0 * PI * self.parameters.real_cutoff.powi(3);
        // Five bytes an image (a bead index and an image index), and 32 more for its kernels.
        let neighbours = (pairs_estimate * 5.0 <= NEIGHBOUR_LIST_BYTES).then(|| {
            let runs: Vec<Neighbours> = (0..cells.starts.len() - 1)
                .into_par_iter()
                .map(|cell| self.cell_neighbours(&cells, cell, t))
                .collect();
            Neighbours::concat(runs)
        });
        let lane_positions: Vec<[f64; 4]> = cells
            .positions
            .iter()
            .map(|p| [p.x, p.y, p.z, 0.0])
            .collect();
        let kernels = neighbours
            .as_ref()
            .filter(|_| {
                self.parameters.single_precision_kernels
                    && pairs_estimate * 37.0 <= NEIGHBOUR_LIST_BYTES
            })
            .map(|list| {
                let sources = self.real_sources(&lane_positions, &[], t);
                let beads = cells.positions.len();
                let starts = StoredKernels::starts(list, 0, beads);
                // The last configuration's memory, when no product holds it still (fresh memory
                // costs a page fault every 4 KiB); its old values are overwritten.
                let mut chunks = recycled.unwrap_or_default();
                chunks.resize(starts[beads], Default::default());
                let mut tasks = Vec::new();
                let mut rest = chunks.as_mut_slice();
                for from in (0..beads).step_by(BEADS_PER_TASK) {
                    let count = BEADS_PER_TASK.min(beads - from);
                    let (piece, tail) = rest.split_at_mut(starts[from + count] - starts[from]);
                    tasks.push((from, count, piece));
                    rest = tail;
                }
                tasks.into_par_iter().for_each(|(from, count, piece)| {
                    StoredKernels::fill(&sources, list, from, count, piece)
                });
                StoredKernels { starts, chunks }
            });
        let prepared = Arc::new(Prepared {
            positions: positions.to_vec(),
            tilt,
            shear: t,
            cells,
            footprints,
            lane_positions,
            neighbours,
            kernels,
        });
        *cache = Some(prepared.clone());
        prepared
    }

    /// Each bead's Gaussian on the grid, for beads at sheared coordinates `positions` (`s = (x − t y,
    /// y, z)`, `t = tilt / L_y`): the physical distance of a grid point is `(Δs_x + t Δs_y, Δs_y, Δs_z)`,
    /// so in a sheared box each y row's x Gaussian is centred at `s_x − t Δs_y`.
    fn footprints(&self, positions: &[Vec3], t: f64) -> Footprints {
        let p = self.parameters.support;
        let n = self.parameters.grid;
        let rows = if t == 0.0 { 1 } else { p[1] };
        let stride = rows * p[0] + p[1] + p[2];
        let h = self.spacing;
        let reach: [f64; 3] = std::array::from_fn(|axis| self.window.reach(axis));
        // The first index of the points within reach of `centre` along `axis`, and their weights.
        let window = |centre: f64, axis: usize, weights: &mut Vec<f64>| -> i64 {
            let start = ((centre - reach[axis]) / h[axis]).ceil() as i64;
            weights.extend((0..p[axis]).map(|q| {
                let d = (start + q as i64) as f64 * h[axis] - centre;
                self.window.weight(d, axis)
            }));
            start
        };
        let per_bead: Vec<([usize; 2], Vec<usize>, Vec<f64>)> = positions
            .par_iter()
            .map(|&x| {
                let mut weights = Vec::with_capacity(stride);
                let mut first_x = Vec::with_capacity(rows);
                let start_y = ((x.y - reach[1]) / h.y).ceil() as i64;
                for row in 0..rows {
                    let dy = (start_y + row as i64) as f64 * h.y - x.y;
                    let start = window(x.x - t * dy, 0, &mut weights);
                    first_x.push(start.rem_euclid(n[0] as i64) as usize);
                }
                let start_y = window(x.y, 1, &mut weights);
                let start_z = window(x.z, 2, &mut weights);
                (
                    [
                        start_y.rem_euclid(n[1] as i64) as usize,
                        start_z.rem_euclid(n[2] as i64) as usize,
                    ],
                    first_x,
                    weights,
                )
            })
            .collect();
        let mut footprints = Footprints {
            first: Vec::with_capacity(positions.len()),
            first_x: Vec::with_capacity(positions.len() * rows),
            rows,
            weights: Vec::with_capacity(positions.len() * stride),
            stride,
            support: p,
            by_start: vec![Vec::new(); n[1]],
            rank: Vec::with_capacity(positions.len()),
        };
        for (b, (first, first_x, weights)) in per_bead.into_iter().enumerate() {
            footprints.rank.push(footprints.by_start[first[0]].len());
            footprints.by_start[first[0]].push(b);
            footprints.first.push(first);
            footprints.first_x.extend(first_x);
            footprints.weights.extend(weights);
        }
        footprints
    }

    /// The wave-space sum by the spectral Ewald method, with forces and torques packed as the real
    /// and imaginary parts of three complex values per grid point (and velocities and angular
    /// velocities likewise), in the three stages of [`crate::wave_grid`]: each y slab spread and
    /// transformed along x and z; the y lines and the kernels; each y slab transformed back and
    /// interpolated from.
    fn wave_space(
        &self,
        prepared: &Prepared,
        forces: &[Vec3],
        torques: &[Vec3],
        timing: &mut ProductTiming,
    ) -> Vec<(Vec3, Vec3)> {
        let mut clock = std::time::Instant::now();
        let (cells, footprints) = (&prepared.cells, &prepared.footprints);
        let packed: Vec<Packed> = cells
            .order
            .iter()
            .map(|&i| {
                let (f, t) = (forces[i], torques[i]);
                [
                    Complex64::new(f.x, t.x),
                    Complex64::new(f.y, t.y),
                    Complex64::new(f.z, t.z),
                ]
            })
            .collect();
        let [n0, n1, n2] = self.parameters.grid;
        let p1 = self.parameters.support[1];
        let shear = prepared.shear;
        // A z line holds modes within the cutoff only if its (k_x, k_z) does (k_x and k_z are those
        // of the mode in a sheared box too).
        let kc2 = self.parameters.wave_cutoff.powi(2);
        let within: Vec<bool> = (0..n0 * n2)
            .map(|m| {
                let kx = wave_number(m / n2, n0, self.lengths.x);
                let kz = wave_number(m % n2, n2, self.lengths.z);
                kx * kx + kz * kz <= kc2
            })
            .collect();
        let needed = |i: usize, l: usize| within[i * n2 + l];
        let needed_x: Vec<bool> = (0..n0).map(|i| (0..n2).any(|l| needed(i, l))).collect();
        // The kept grid (a new one if another product holds it).
        let mut grid = std::mem::take(
            &mut *self
                .grid_memory
                .lock()
                .unwrap_or_else(|poison| poison.into_inner()),
        );
        let slab_len = self.transforms.slab_len();
        grid.resize(slab_len * n1, Complex64::default());
        let workspace = || {
            (
                vec![Complex64::default(); slab_len],
                self.transforms.slab_scratch(),
            )
        };
        // 1. Each y slab: spread F + iT, transform along x and z.
        grid.par_chunks_mut(slab_len).enumerate().for_each_init(
            workspace,
            |(plane, work), (j, slab)| {
                plane.fill(Complex64::default());
                self.spread_slab(j, footprints, &packed, plane);
                self.transforms.slab_to_modes(plane, slab, &needed_x, work);
            },
        );
        timing.spreading = lap(&mut clock);
        // 2. The y lines, the kernels per mode pair, back.
        self.transforms.y_kernel(
            &mut grid,
            &|mode, here: &Packed, there: &Packed| self.mode_kernels(mode, here, there, shear),
            &needed,
        );
        timing.transforms = lap(&mut clock);
        // 3. Each y slab: back along z and x, each bead's share of the slab interpolated with the
        //    same windows (into the shares' memory kept between products).
        let mut shares = std::mem::take(
            &mut *self
                .share_memory
                .lock()
                .unwrap_or_else(|poison| poison.into_inner()),
        );
        shares.resize_with(n1, Vec::new);
        grid.par_chunks(slab_len)
            .zip(shares.par_iter_mut())
            .enumerate()
            .for_each_init(workspace, |(plane, work), (j, (slab, shares))| {
                self.transforms.modes_to_slab(slab, plane, &needed, work);
                self.interpolate_slab(j, footprints, plane, shares)
            });
        *self
            .grid_memory
            .lock()
            .unwrap_or_else(|poison| poison.into_inner()) = grid;
        // Where each slab's shares of the rows `s` start: slab j lists the rows s = P_y − 1 .. 0 of
        // the beads starting at j − s (as `slab_rows`).
        let group_starts: Vec<usize> = (0..n1)
            .flat_map(|j| {
                let mut start = 0;
                let mut starts = vec![0; p1];
                for s in (0..p1).rev() {
                    starts[s] = start;
                    start += footprints.by_start[(j + n1 * p1 - s) % n1].len();
                }
                starts
            })
            .collect();
        let beads = footprints.first.len();
        let cell = self.spacing.x * self.spacing.y * self.spacing.z;
        // Each bead's shares gathered in the order of its rows and summed in that order, times the
        // cell volume (the quadrature weight).
        let interpolated = (0..beads)
            .into_par_iter()
            .map(|b| {
                let first = footprints.first[b][0];
                let mut sum = [0.0; 6];
                for s in 0..p1 {
                    let j = (first + s) % n1;
                    let row = &shares[j][group_starts[j * p1 + s] + footprints.rank[b]];
                    for c in 0..6 {
                        sum[c] += row[c];
                    }
                }
                let sum = sum.map(|c| c * cell);
                // Packed as (V_x + i W_x, V_y + i W_y, V_z + i W_z).
                (
                    Vec3::new(sum[0], sum[2], sum[4]),
                    Vec3::new(sum[1], sum[3], sum[5]),
                )
            })
            .collect();
        *self
            .share_memory
            .lock()
            .unwrap_or_else(|poison| poison.into_inner()) = shares;
        timing.interpolation = lap(&mut clock);
        interpolated
    }

    /// The y rows of the beads' supports that lie on y slab `j`, in a fixed order: the beads whose
    /// support starts at `j − s`, `s = P_y − 1 .. 0` (row `s` of each), each start's beads in the cell
    /// list's order.
    fn slab_rows<'a>(
        &'a self,
        j: usize,
        footprints: &'a Footprints,
    ) -> impl Iterator<Item = SupportRow<'a>> + 'a {
        let [n0, n1, _] = self.parameters.grid;
        let [p0, p1, _] = self.parameters.support;
        (0..p1).rev().flat_map(move |s| {
            footprints.by_start[(j + n1 * p1 - s) % n1]
                .iter()
                .map(move |&bead| {
                    let (wy, wz) = footprints.yz(bead);
                    let (fx, wx) = footprints.x_row(bead, s);
                    SupportRow {
                        bead,
                        weight_y: wy[s],
                        wz,
                        fz: footprints.first[bead][1],
                        fx,
                        wx,
                        run: p0.min(n0 - fx),
                    }
                })
        })
    }

    /// Y slab `j` of the packed sources spread onto `plane` (cleared; `(x, z)` order, three values per
    /// point), row by row of [`SpectralRpy::slab_rows`].
    fn spread_slab(
        &self,
        j: usize,
        footprints: &Footprints,
        packed: &[Packed],
        plane: &mut [Complex64],
    ) {
        let [n0, _, n2] = self.parameters.grid;
        let p0 = self.parameters.support[0];
        vectorized(
            #[inline(always)]
            || {
                for row in self.slab_rows(j, footprints) {
                    let along = packed[row.bead].map(|c| c * row.weight_y);
                    let (fx, run, wx) = (row.fx, row.run, row.wx);
                    for (qz, &weight_z) in row.wz.iter().enumerate() {
                        let start = n0 * wrap(row.fz + qz, n2);
                        let value = along.map(|c| c * weight_z);
                        // The x support as at most two runs (it may wrap round the grid).
                        add_run(
                            &mut plane[3 * (start + fx)..3 * (start + fx + run)],
                            &wx[..run],
                            value,
                        );
                        if run < p0 {
                            add_run(
                                &mut plane[3 * start..3 * (start + p0 - run)],
                                &wx[run..],
                                value,
                            );
                        }
                    }
                }
            },
        )
    }

    /// Each bead's share of y slab `j` of the velocities (`plane`, `(x, z)` order, three packed
    /// values per point) by its window, into `shares` in the order of [`SpectralRpy::slab_rows`].
    fn interpolate_slab(
        &self,
        j: usize,
        footprints: &Footprints,
        plane: &[Complex64],
        shares: &mut Vec<[f64; 6]>,
    ) {
        let [n0, _, n2] = self.parameters.grid;
        let p0 = self.parameters.support[0];
        shares.clear();
        vectorized(
            #[inline(always)]
            || {
                for row in self.slab_rows(j, footprints) {
                    let (fx, run, wx) = (row.fx, row.run, row.wx);
                    let mut sum = [0.0; 6];
                    for (qz, &weight_z) in row.wz.iter().enumerate() {
                        let start = n0 * wrap(row.fz + qz, n2);
                        let mut part =
                            dot_run(&plane[3 * (start + fx)..3 * (start + fx + run)], &wx[..run]);
                        if run < p0 {
                            let wrapped =
                                dot_run(&plane[3 * start..3 * (start + p0 - run)], &wx[run..]);
                            for c in 0..6 {
                                part[c] += wrapped[c];
                            }
                        }
                        for c in 0..6 {
                            sum[c] += part[c] * weight_z;
                        }
                    }
                    shares.push(sum.map(|c| c * row.weight_y));
                }
            },
        )
    }

    /// The wave kernels at the mode of grid indices `[i, j, l]` and at its mirror: `F̂ = (Â(k) + conj
    /// Â(−k)) / 2`, `T̂ = (Â(k) − conj Â(−k)) / 2i`, then `V̂ = tt F̂ − i tr T̂`, `Ŵ = −i tr F̂ + rr T̂`
    /// (the odd sine kernel of `M_tr` as `−i` times it), packed as `V̂ + iŴ` at `k` and `conj V̂ + i conj
    /// Ŵ` at `−k` (the fields are real). The Gaussians' decay is divided out of the splitting; `k = 0`,
    /// the modes on a Nyquist plane (where `k` and `−k` alias) and those beyond the wave cutoff (where
    /// the splitting is below the tolerance) are set to zero. In a sheared box (`t = tilt / L_y`) the
    /// grid's y index counts `k_y + t k_x`.
    fn mode_kernels(
        &self,
        [i, j, l]: [usize; 3],
        here: &Packed,
        there: &Packed,
        t: f64,
    ) -> (Packed, Packed) {
        let zero = [Complex64::default(); 3];
        let grid = self.parameters.grid;
        let index = [i, j, l];
        if (0..3).any(|a| 2 * index[a] == grid[a]) {
            return (zero, zero);
        }
        let k: [f64; 3] = std::array::from_fn(|a| wave_number(index[a], grid[a], self.lengths[a]));
        let k = [k[0], k[1] - t * k[0], k[2]];
        let k2 = k[0] * k[0] + k[1] * k[1] + k[2] * k[2];
        if k2 == 0.0 || k2 > self.parameters.wave_cutoff.powi(2) {
            return (zero, zero);
        }
        let (xi, eta) = (self.parameters.xi, self.kernel.viscosity());
        let a = self.kernel.radius();
        let volume = self.lengths.x * self.lengths.y * self.lengths.z;
        let cell = self.spacing.x * self.spacing.y * self.spacing.z;
        // The window's transform divided out (twice: spread and interpolated), along y at the
        // physical k_y in a sheared box.
        let deconvolution = self.deconvolution[0][i]
            * self.deconvolution[2][l]
            * if t == 0.0 {
                self.deconvolution[1][j]
            } else {
                self.window.transform(k[1], 1).powi(-2)
            };
        let i_unit = Complex64::new(0.0, 1.0);
        let f: Packed = std::array::from_fn(|c| (here[c] + there[c].conj()) * 0.5);
        let torque: Packed =
            std::array::from_fn(|c| (here[c] - there[c].conj()) * Complex64::new(0.0, -0.5));
        let q = k2 / (4.0 * xi * xi);
        let split = cell / (eta * volume) * (1.0 + q + 2.0 * q * q) * (-q).exp() * deconvolution;
        let translation = split * (1.0 - a * a * k2 / 3.0) / k2;
        let coupling = split / (2.0 * k2);
        let rotation = split / 4.0;
        let along = |v: &Packed| (v[0] * k[0] + v[1] * k[1] + v[2] * k[2]) / k2;
        let cross = |v: &Packed| {
            [
                v[2] * k[1] - v[1] * k[2],
                v[0] * k[2] - v[2] * k[0],
                v[1] * k[0] - v[0] * k[1],
            ]
        };
        let (fk, tk) = (along(&f), along(&torque));
        let (kf, kt) = (cross(&f), cross(&torque));
        // −i tr = −i (−coupling [k]×) = i coupling [k]×.
        let v: Packed =
            std::array::from_fn(|c| (f[c] - fk * k[c]) * translation + i_unit * coupling * kt[c]);
        let w: Packed =
            std::array::from_fn(|c| i_unit * coupling * kf[c] + (torque[c] - tk * k[c]) * rotation);
        (
            std::array::from_fn(|c| v[c] + i_unit * w[c]),
            std::array::from_fn(|c| v[c].conj() + i_unit * w[c].conj()),
        )
    }
}

/// The wave number of grid index `index` of `n` along a side of `length` (the upper half negative).
#[inline]
fn wave_number(index: usize, n: usize, length: f64) -> f64 {
    let signed = if 2 * index < n {
        index as f64
    } else {
        index as f64 - n as f64
    };
    2.0 * PI * signed / length
}

/// `index mod n` for `index < 2n` (no division in the inner loops).
#[inline(always)]
fn wrap(index: usize, n: usize) -> usize {
    if index >= n {
        index - n
    } else {
        index
    }
}

/// `run += value × weights`, point by point (three packed values per point), two points (three
/// vector registers) at a time.
#[inline(always)]
fn add_run(run: &mut [Complex64], weights: &[f64], value: Packed) {
    let value: [f64; 6] = bytemuck::cast(value);
    let twice: [f64; 12] = std::array::from_fn(|c| value[c % 6]);
    let run: &mut [f64] = bytemuck::cast_slice_mut(run);
    let mut pairs = run.chunks_exact_mut(12);
    let mut pair_weights = weights.chunks_exact(2);
    for (points, w) in (&mut pairs).zip(&mut pair_weights) {
        let w: [f64; 12] = std::array::from_fn(|c| w[c / 6]);
        for c in 0..12 {
            points[c] += twice[c] * w[c];
        }
    }
    for (points, &w) in pairs
        .into_remainder()
        .chunks_exact_mut(6)
        .zip(pair_weights.remainder())
    {
        for c in 0..6 {
            points[c] += value[c] * w;
        }
    }
}

/// `Σ run × weights` (three packed values per point), two points at a time in two partial sums (even
/// and odd points; a fixed order).
#[inline(always)]
fn dot_run(run: &[Complex64], weights: &[f64]) -> [f64; 6] {
    let run: &[f64] = bytemuck::cast_slice(run);
    let mut sums = [0.0; 12];
    let pairs = run.chunks_exact(12);
    let rest = pairs.remainder();
    let pair_weights = weights.chunks_exact(2);
    let last = pair_weights.remainder();
    for (points, w) in pairs.zip(pair_weights) {
        let w: [f64; 12] = std::array::from_fn(|c| w[c / 6]);
        for c in 0..12 {
            sums[c] += points[c] * w[c];
        }
    }
    if let [w] = last {
        for c in 0..6 {
            sums[c] += rest[c] * w;
        }
    }
    std::array::from_fn(|c| sums[c] + sums[6 + c])
}

/// The smallest `n' ≥ n` of the form `2^a 3^b`, `2^a 3^b 5` or `2^a 3^b 7`: lengths the FFT takes
/// at 1.8-2.2 ns a point (measured; 25, 35 or 125 in a length cost half as much again).
fn fft_friendly(n: usize) -> usize {
    (n..)
        .find(|&m| {
            let mut r = m;
            for p in [2, 3] {
                while r % p == 0 {
                    r /= p;
                }
            }
            matches!(r, 1 | 5 | 7)
        })
        .expect("a smooth number exists")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ewald::EwaldRpy;
    use rand::{Rng, SeedableRng};
    use silt_core::relative_difference;

    /// Random beads (overlaps allowed), forces and torques in a box.
    fn cloud(n: usize, lengths: Vec3, seed: u64) -> (Vec<Vec3>, Vec<Vec3>, Vec<Vec3>) {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let mut vector = |scale: Vec3, shift: f64| {
            Vec3::new(
                scale.x * (rng.gen::<f64>() - shift),
                scale.y * (rng.gen::<f64>() - shift),
                scale.z * (rng.gen::<f64>() - shift),
            )
        };
        let x = (0..n).map(|_| vector(lengths, 0.0)).collect();
        let f = (0..n).map(|_| vector(Vec3::ONE, 0.5)).collect();
        let t = (0..n).map(|_| vector(Vec3::ONE, 0.5)).collect();
        (x, f, t)
    }

    /// Bad parameters and grids beyond the memory limit are refused with a message, not a crash.
    #[test]
    fn impossible_requests_are_refused() {
        let kernel = RpyKernel::new(1.0, 1.0).unwrap();
        // Ten million beads in a box 5,000 radii wide at 1e-8: a grid of billions of points.
        let huge = SpectralRpy::new(kernel, Vec3::splat(5000.0), 1e-8, 10_000_000)
            .err()
            .unwrap();
        assert!(
            huge.contains("GiB") && huge.contains("loosen the tolerance"),
            "{huge}"
        );
        let tolerance = SpectralRpy::new(kernel, Vec3::splat(10.0), 0.5, 10)
            .err()
            .unwrap();
        assert!(tolerance.contains("from 1e-10 to 1e-2"), "{tolerance}");
        let length = SpectralRpy::new(kernel, Vec3::new(10.0, 0.0, 10.0), 1e-4, 10)
            .err()
            .unwrap();
        assert!(length.contains("box lengths"), "{length}");
    }

    /// Against the direct Ewald sum, for random beads with overlaps, in a cubic and an orthorhombic
    /// box, the error within the tolerance asked for.
    #[test]
    fn the_product_meets_its_tolerance_against_the_direct_ewald_sum() {
        let kernel = RpyKernel::new(1.0, 1.0).unwrap();
        for (lengths, n) in [(Vec3::splat(12.0), 40), (Vec3::new(10.0, 13.0, 16.0), 60)] {
            let (x, f, t) = cloud(n, lengths, 7);
            let reference = EwaldRpy::new(kernel, lengths, None).unwrap();
            let (v_ref, w_ref) = reference.product(&x, &f, &t);
            for tolerance in [1e-3, 1e-5, 1e-8] {
                let spectral = SpectralRpy::new(kernel, lengths, tolerance, n).unwrap();
                let (v, w) = spectral.product(&x, &f, &t);
                let (ev, ew) = (
                    relative_difference(&v, &v_ref),
                    relative_difference(&w, &w_ref),
                );
                println!(
                    "{lengths} N = {n} tolerance {tolerance:e}: V {ev:.2e}, W {ew:.2e}, {:?}",
                    spectral.parameters()
                );
                assert!(ev <= tolerance && ew <= tolerance, "{ev:e} {ew:e}");
            }
        }
    }

    /// One bead in a cubic box (a simple-cubic array): its translational mobility is Hasimoto's
    /// `1 − 2.8372975 a/L + (4π/3)(a/L)³` (exact for RPY) and its rotational one
    /// `1 − (4π/3)(a/L)³`, each to the tolerance, from dense (L = 4a) to dilute (L = 100a).
    #[test]
    fn a_single_bead_has_hasimotos_mobility() {
        let kernel = RpyKernel::new(1.0, 1.0).unwrap();
        for length in [4.0, 10.0, 40.0, 100.0] {
            for tolerance in [1e-4, 1e-7] {
                let spectral = SpectralRpy::new(kernel, Vec3::splat(length), tolerance, 1).unwrap();
                let x = [Vec3::new(0.3 * length, 0.6, 0.9 * length)];
                let (v, _) = spectral.product(&x, &[Vec3::X], &[Vec3::ZERO]);
                let (_, w) = spectral.product(&x, &[Vec3::ZERO], &[Vec3::Y]);
                let c = 1.0 / length;
                let translation = 1.0 - 2.8372974794806 * c + 4.0 * PI / 3.0 * c.powi(3);
                let rotation = 1.0 - 4.0 * PI / 3.0 * c.powi(3);
                let v = v[0] / kernel.self_translation();
                let w = w[0] / kernel.self_rotation();
                println!("L = {length} tolerance {tolerance:e}: {v} {w}");
                assert!(
                    (v.x - translation).abs() <= tolerance,
                    "{v} vs {translation}"
                );
                assert!(v.y.abs() <= tolerance && v.z.abs() <= tolerance, "{v}");
                assert!((w.y - rotation).abs() <= tolerance, "{w} vs {rotation}");
            }
        }
    }

    /// The same numbers, to the bit, on one thread and on three.
    #[test]
    fn the_product_does_not_depend_on_the_threads() {
        let kernel = RpyKernel::new(1.0, 1.0).unwrap();
        let lengths = Vec3::new(20.0, 24.0, 18.0);
        let (x, f, t) = cloud(400, lengths, 11);
        let on = |threads: usize| {
            let spectral = SpectralRpy::new(kernel, lengths, 1e-5, x.len()).unwrap();
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| spectral.product(&x, &f, &t))
        };
        assert_eq!(on(1), on(3));
    }

    /// The tabulated real-space kernel within a thousandth of the tolerance of Beenakker's (relative
    /// to each scalar's size at contact), from the table's start (2a) to the cutoff.
    #[test]
    fn the_real_space_table_is_within_a_thousandth_of_the_tolerance() {
        for radius in [1.0, 0.5] {
            let kernel = RpyKernel::new(radius, 1.3).unwrap();
            for tolerance in [1e-2, 1e-4, 1e-6, 1e-8, 1e-10] {
                for xi_a in [0.2, 0.45, 0.75] {
                    let xi = xi_a / radius;
                    let cutoff = 6.0 / xi;
                    let table = real_table(&kernel, xi, cutoff, tolerance);
                    let mut worst: f64 = 0.0;
                    for s in 0..20_000 {
                        let r = table.from + (cutoff - table.from) * (s as f64 + 0.37) / 20_000.0;
                        let p = real_scalars(&kernel, xi, r);
                        let exact = [
                            p.tt_isotropic,
                            p.tt_along,
                            p.coupling,
                            p.rr_isotropic,
                            p.rr_along,
                        ];
                        // Each scalar against its size at contact: μ0, its rotational
                        // counterpart, and the coupling 1/(8πηa²).
                        let mu0 = kernel.self_translation();
                        let mu_r = kernel.self_rotation();
                        let coupling = 1.0 / (8.0 * PI * 1.3 * radius * radius);
                        let scale = [mu0, mu0, coupling, mu_r, mu_r];
                        for ((a, b), s) in table.at(r).iter().zip(exact).zip(scale) {
                            worst = worst.max((a - b).abs() / s);
                        }
                    }
                    eprintln!("a {radius} tolerance {tolerance:e} xi a {xi_a}: {worst:.2e}");
                    assert!(
                        worst < 1e-3 * tolerance,
                        "{worst:e} at tolerance {tolerance:e}"
                    );
                }
            }
        }
    }

    /// A second product at the same positions (from the stored configuration) equals the first; the
    /// real space from the stored lists and kernels equals the sum from the lists with kernels
    /// rounded task by task and the cell-by-cell sum, to the bit (single-precision kernels at 1e-5,
    /// double at 1e-8); new positions are prepared anew.
    #[test]
    fn the_stored_configuration_gives_the_same_numbers() {
        let kernel = RpyKernel::new(1.0, 1.0).unwrap();
        let lengths = Vec3::new(20.0, 24.0, 18.0);
        let (x, f, t) = cloud(300, lengths, 5);
        for (tolerance, single) in [(1e-5, true), (1e-8, false)] {
            let spectral = SpectralRpy::new(kernel, lengths, tolerance, x.len()).unwrap();
            assert_eq!(spectral.parameters().single_precision_kernels, single);
            let first = spectral.product(&x, &f, &t);
            let prepared = spectral.prepared(&x, 0.0);
            let second = spectral.product(&x, &f, &t);
            assert_eq!(first, second);
            assert!(Arc::ptr_eq(&prepared, &spectral.prepared(&x, 0.0)));
            assert!(prepared.neighbours.is_some());
            assert_eq!(prepared.kernels.is_some(), single);
            let unstored = |lists: bool| Prepared {
                positions: prepared.positions.clone(),
                tilt: 0.0,
                shear: 0.0,
                cells: CellList::new(&x, lengths, spectral.parameters.real_cutoff, 0.0, 0.0),
                footprints: spectral.footprints(&prepared.cells.positions, 0.0),
                lane_positions: prepared.lane_positions.clone(),
                neighbours: lists.then(|| {
                    let cells = &prepared.cells;
                    Neighbours::concat(
                        (0..cells.starts.len() - 1)
                            .map(|cell| spectral.cell_neighbours(cells, cell, 0.0))
                            .collect(),
                    )
                }),
                kernels: None,
            };
            let stored = spectral.real_space(&prepared, &f, &t);
            assert_eq!(stored, spectral.real_space(&unstored(true), &f, &t));
            assert_eq!(stored, spectral.real_space(&unstored(false), &f, &t));
            let mut moved = x.clone();
            moved[7].x += 0.5;
            let fresh = SpectralRpy::new(kernel, lengths, tolerance, x.len()).unwrap();
            assert_eq!(
                spectral.product(&moved, &f, &t),
                fresh.product(&moved, &f, &t)
            );
        }
    }

    /// In a sheared (Lees–Edwards) box, against the direct Ewald sum on the sheared lattice, for
    /// tilts across the allowed range (and beyond half a side, brought back by the lattice): the
    /// error within the tolerance; at zero tilt the sheared product is the product of the box.
    #[test]
    fn the_sheared_product_meets_its_tolerance_against_the_direct_ewald_sum() {
        let kernel = RpyKernel::new(1.0, 1.0).unwrap();
        let lengths = Vec3::new(12.0, 10.0, 11.0);
        let (x, f, t) = cloud(50, lengths, 17);
        for tolerance in [1e-3, 1e-5, 1e-8] {
            let spectral = SpectralRpy::new_sheared(kernel, lengths, tolerance, x.len()).unwrap();
            for tilt in [0.0, 1.7, -6.0, 6.0, 4.3] {
                let reference = EwaldRpy::sheared(kernel, lengths, tilt, None).unwrap();
                let (v_ref, w_ref) = reference.product(&x, &f, &t);
                let (v, w) = spectral.sheared_product(&x, &f, &t, tilt);
                let (ev, ew) = (
                    relative_difference(&v, &v_ref),
                    relative_difference(&w, &w_ref),
                );
                println!(
                    "sheared tilt {tilt} tolerance {tolerance:e}: V {ev:.2e}, W {ew:.2e}, {:?}",
                    spectral.parameters()
                );
                assert!(ev <= tolerance && ew <= tolerance, "{ev:e} {ew:e}");
            }
            let plain = SpectralRpy::new(kernel, lengths, tolerance, x.len()).unwrap();
            let (v0, _) = plain.product(&x, &f, &t);
            let (v1, _) = spectral.sheared_product(&x, &f, &t, 0.0);
            assert!(relative_difference(&v1, &v0) <= 2.0 * tolerance);
        }
    }

    /// Coincident and nearly coincident beads (a fiber longer than its box lands beads on images of
    /// others): finite, continuous in the separation, and within the tolerance of the direct sum
    /// where that sum is itself accurate; a few beads in a box of 10⁶ radii build and run.
    #[test]
    fn coincident_beads_and_huge_boxes_are_handled() {
        let kernel = RpyKernel::new(1.0, 1.0).unwrap();
        let lengths = Vec3::splat(10.0);
        let (mut x, mut f, mut t) = cloud(30, lengths, 3);
        x.push(x[0]);
        f.push(Vec3::new(0.3, -0.2, 0.1));
        t.push(Vec3::new(-0.1, 0.2, 0.3));
        let spectral = SpectralRpy::new(kernel, lengths, 1e-6, x.len()).unwrap();
        let at = |d: f64| {
            let mut y = x.clone();
            y[30] = x[0] + Vec3::new(0.6, 0.8, 0.0) * d;
            let (v, w) = spectral.product(&y, &f, &t);
            assert!(v.iter().chain(&w).all(|u| u.is_finite()), "separation {d}");
            (y, v, w)
        };
        let (_, v0, w0) = at(0.0);
        let (_, v1, w1) = at(1e-9);
        assert!(relative_difference(&v1, &v0) < 1e-8 && relative_difference(&w1, &w0) < 1e-8);
        for d in [5e-4, 2e-3] {
            let (y, v, w) = at(d);
            let (v_ref, w_ref) = EwaldRpy::new(kernel, lengths, None)
                .unwrap()
                .product(&y, &f, &t);
            let (ev, ew) = (
                relative_difference(&v, &v_ref),
                relative_difference(&w, &w_ref),
            );
            assert!(ev < 1e-5 && ew < 1e-5, "separation {d}: {ev:e} {ew:e}");
        }
        let huge = SpectralRpy::new(kernel, Vec3::splat(1e6), 1e-6, 3).unwrap();
        let (v, _) = huge.product(
            &[
                Vec3::ZERO,
                Vec3::new(2.0, 0.0, 0.0),
                Vec3::new(0.0, 5.0, 0.0),
            ],
            &[Vec3::X, Vec3::ZERO, Vec3::ZERO],
            &[Vec3::ZERO; 3],
        );
        // The free pair's RPY along the line at r = 2a: 5 / (48πηa) = 0.625 μ0 (images negligible).
        assert!(
            (v[1].x / kernel.self_translation() - 0.625).abs() < 1e-5,
            "{}",
            v[1]
        );
    }
}
