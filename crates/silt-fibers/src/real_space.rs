//! The periodic product's real-space sum (issue 25, [`crate::spectral`]) four pairs at a time: each
//! bead's images within the cutoff are listed once per configuration (a bead and an image shift, five
//! bytes a pair), and at every product their kernels are evaluated in vector lanes from the tabulated
//! cubics ([`RealTable`]) and applied to the loads. Pairs closer than the table's start, or than 2a
//! (where the overlap difference joins the kernel), are listed with their kernels and applied one by
//! one. Each bead's row sums in its list's order, so the numbers do not depend on the threads.

use crate::rpy::{PairLanes, PairMobility};
use silt_core::lanes::{with_lanes, LaneWork, Lanes, Vec3Lanes, LANES};
use silt_core::Vec3;

/// Image shifts of up to two box lengths each way: `(d_x + 2) + 5 (d_y + 2) + 25 (d_z + 2)`.
pub(crate) const IMAGES: usize = 125;

/// The index of the image shifted by `d` box lengths (`|d_a| ≤ 2`).
#[inline]
pub(crate) fn image_index(d: [i64; 3]) -> u8 {
    ((d[0] + 2) + 5 * (d[1] + 2) + 25 * (d[2] + 2)) as u8
}

/// The shift of each image index in a box of `lengths` (fourth component zero).
pub(crate) fn image_shifts(lengths: Vec3) -> Vec<[f64; 4]> {
    (0..IMAGES)
        .map(|index| {
            let d = [index % 5, (index / 5) % 5, index / 25].map(|c| c as f64 - 2.0);
            [lengths.x * d[0], lengths.y * d[1], lengths.z * d[2], 0.0]
        })
        .collect()
}

/// Beenakker's real-space kernel (without the overlap difference) times `r³`, as a cubic in
/// `f = r / step − n` on each interval `[n step, (n + 1) step)`: the cubic through the values at the
/// four nodes `n − 1 .. n + 2` (relative error ~1e-11 at 300 nodes per `min(a, 1/ξ)`), in powers of
/// `f` so that four lanes evaluate it from one transpose per kernel.
pub(crate) struct RealTable {
    step: f64,
    /// From here on the table is used.
    pub(crate) from: f64,
    /// Per interval, the coefficients of `f⁰ .. f³` of `r³ (tt_isotropic, tt_along, coupling,
    /// rr_isotropic, rr_along)`.
    intervals: Vec<[[f64; 4]; 5]>,
}

impl RealTable {
    /// The table up to `cutoff` with nodes `step` apart, of the kernel `scalars(r)` (the
    /// real-space scalars at `r > 0`), used from `from` (at least four nodes) on.
    pub(crate) fn new(
        step: f64,
        cutoff: f64,
        from: f64,
        scalars: impl Fn(f64) -> PairMobility,
    ) -> Self {
        let count = (cutoff / step).ceil() as usize + 3;
        let nodes: Vec<[f64; 5]> = (0..count)
            .map(|n| {
                let r = n.max(1) as f64 * step;
                let p = scalars(r);
                let r3 = r * r * r;
                [
                    r3 * p.tt_isotropic,
                    r3 * p.tt_along,
                    r3 * p.coupling,
                    r3 * p.rr_isotropic,
                    r3 * p.rr_along,
                ]
            })
            .collect();
        // The Lagrange cubic through y0..y3 at f = −1, 0, 1, 2 in powers of f.
        let intervals = (0..count - 2)
            .map(|n| {
                std::array::from_fn(|c| {
                    if n == 0 {
                        return [0.0; 4];
                    }
                    let y = [0, 1, 2, 3].map(|q| nodes[n + q - 1][c]);
                    [
                        y[1],
                        -y[0] / 3.0 - y[1] / 2.0 + y[2] - y[3] / 6.0,
                        y[0] / 2.0 - y[1] + y[2] / 2.0,
                        -y[0] / 6.0 + y[1] / 2.0 - y[2] / 2.0 + y[3] / 6.0,
                    ]
                })
            })
            .collect();
        RealTable {
            step,
            from: from.max(4.0 * step),
            intervals,
        }
    }

    /// The kernel at distance `r` (`from ≤ r ≤` the cutoff), scalars only, as the lanes evaluate it
    /// (for the tests).
    #[cfg(test)]
    pub(crate) fn at(&self, r: f64) -> [f64; 5] {
        let u = r / self.step;
        let n = u as usize;
        let f = u - n as f64;
        let inverse_r3 = 1.0 / (r * r * r);
        self.intervals[n].map(|c| (((c[3] * f + c[2]) * f + c[1]) * f + c[0]) * inverse_r3)
    }
}

/// The real-space images of a run of beads (sorted places `first ..`): for each, its images within
/// the cutoff as (source bead, image index), and its close pairs with their kernels.
#[derive(Default)]
pub(crate) struct Neighbours {
    pub(crate) first: usize,
    /// Per bead of the run, where its images start in `sources` and `images` (and the end).
    pub(crate) starts: Vec<usize>,
    pub(crate) sources: Vec<u32>,
    pub(crate) images: Vec<u8>,
    /// Per bead of the run, where its close pairs start in `close` (and the end).
    pub(crate) close_starts: Vec<usize>,
    pub(crate) close: Vec<(u32, PairMobility)>,
}

impl Neighbours {
    /// An empty list for the run of beads from `first`.
    pub(crate) fn starting_at(first: usize) -> Self {
        Neighbours {
            first,
            starts: vec![0],
            close_starts: vec![0],
            ..Default::default()
        }
    }

    /// Ends the current bead's lists.
    pub(crate) fn end_bead(&mut self) {
        self.starts.push(self.sources.len());
        self.close_starts.push(self.close.len());
    }

    /// The lists of runs one after another, as one run.
    pub(crate) fn concat(runs: Vec<Neighbours>) -> Self {
        let first = runs.first().map_or(0, |r| r.first);
        let mut all = Neighbours::starting_at(first);
        for run in runs {
            let (base, close_base) = (all.sources.len(), all.close.len());
            all.starts.extend(run.starts[1..].iter().map(|s| s + base));
            all.close_starts
                .extend(run.close_starts[1..].iter().map(|s| s + close_base));
            all.sources.extend(run.sources);
            all.images.extend(run.images);
            all.close.extend(run.close);
        }
        all
    }
}

/// What the lanes read: the sorted positions (fourth component zero), this product's sorted loads
/// (as [`sorted_loads`]), the image shifts, the shear `t` and the table.
pub(crate) struct RealSources<'a> {
    pub(crate) positions: &'a [[f64; 4]],
    pub(crate) loads: &'a [[f64; 8]],
    pub(crate) shifts: &'a [[f64; 4]],
    pub(crate) shear: f64,
    pub(crate) table: &'a RealTable,
    /// A distance inside the table, for lanes left empty at the end of a list.
    pub(crate) idle_distance: f64,
}

/// One chunk of four images as the lanes read it: the direction from the image to the bead and the
/// five kernels of [`RealTable`] (divided by `r³`), each rounded to single precision (32 bytes an
/// image: a repeated product streams them instead of evaluating the table).
pub(crate) type KernelChunk = [[f32; LANES]; 8];

/// The [`KernelChunk`]s of a run of beads' images, in the order of their lists.
#[derive(Default)]
pub(crate) struct StoredKernels {
    /// Per bead of the run, where its chunks start (and the end).
    pub(crate) starts: Vec<usize>,
    pub(crate) chunks: Vec<KernelChunk>,
}

impl StoredKernels {
    /// Where the chunks of beads `from .. from + count` of `list` start, from 0 (and the end).
    pub(crate) fn starts(list: &Neighbours, from: usize, count: usize) -> Vec<usize> {
        let mut starts = Vec::with_capacity(count + 1);
        starts.push(0);
        for place in from..from + count {
            let images = list.starts[place + 1] - list.starts[place];
            starts.push(starts[starts.len() - 1] + images.div_ceil(LANES));
        }
        starts
    }

    /// The chunks of beads `from .. from + count` of `list`, into `out` (as many as
    /// [`StoredKernels::starts`] counts).
    pub(crate) fn fill(
        sources: &RealSources,
        list: &Neighbours,
        from: usize,
        count: usize,
        out: &mut [KernelChunk],
    ) {
        with_lanes(KernelRows {
            sources,
            neighbours: list,
            from,
            count,
            out,
        })
    }
}

/// Bead `place` of a run: its origin in lanes and the position of its idle lanes' image.
#[inline(always)]
fn origin_of<L: Lanes>(
    maker: L::Maker,
    sources: &RealSources,
    list: &Neighbours,
    place: usize,
) -> (Vec3Lanes<L>, [f64; 4]) {
    let origin = sources.positions[list.first + place];
    let idle = [origin[0] - sources.idle_distance, origin[1], origin[2], 0.0];
    (
        Vec3Lanes {
            x: L::splat(maker, origin[0]),
            y: L::splat(maker, origin[1]),
            z: L::splat(maker, origin[2]),
        },
        idle,
    )
}

/// The chunk of four images from `chunk` (of a list ending at `end`): each image's direction to the
/// bead at `origin`, `1/r³`, and its interval of the table and place in it (idle lanes: an image at
/// the idle distance).
#[inline(always)]
fn chunk_geometry<L: Lanes>(
    maker: L::Maker,
    sources: &RealSources,
    list: &Neighbours,
    (origin, idle): (Vec3Lanes<L>, [f64; 4]),
    chunk: usize,
    end: usize,
) -> (Vec3Lanes<L>, L, L, [u32; LANES]) {
    let mut at = [idle; LANES];
    let mut shift = [[0.0; 4]; LANES];
    for k in 0..LANES.min(end - chunk) {
        at[k] = sources.positions[list.sources[chunk + k] as usize];
        shift[k] = sources.shifts[list.images[chunk + k] as usize];
    }
    let [x, y, z, _] = L::transpose(maker, at);
    let [sx, sy, sz, _] = L::transpose(maker, shift);
    // ρ = (Y_i − shift) − Y_j in sheared coordinates, then ρ_x += t ρ_y.
    let sheared = Vec3Lanes {
        x: (origin.x - sx) - x,
        y: (origin.y - sy) - y,
        z: (origin.z - sz) - z,
    };
    let rho = Vec3Lanes {
        x: sheared.x + L::splat(maker, sources.shear) * sheared.y,
        ..sheared
    };
    let r = rho.length_squared().sqrt();
    let inverse_r = L::splat(maker, 1.0) / r;
    let direction = Vec3Lanes {
        x: rho.x * inverse_r,
        y: rho.y * inverse_r,
        z: rho.z * inverse_r,
    };
    // The table's interval and place in it, lane by lane.
    let u = r * L::splat(maker, 1.0 / sources.table.step);
    let whole = u.floor();
    (
        direction,
        inverse_r * inverse_r * inverse_r,
        u - whole,
        whole.to_indices(),
    )
}

/// The five kernels of a chunk, `(tt_isotropic, tt_along, coupling, rr_isotropic, rr_along)`.
#[inline(always)]
fn chunk_kernels<L: Lanes>(
    maker: L::Maker,
    table: &RealTable,
    (inverse_r3, f, nodes): (L, L, [u32; LANES]),
) -> [L; 5] {
    [
        tabulated::<L>(maker, table, nodes, 0, f) * inverse_r3,
        tabulated::<L>(maker, table, nodes, 1, f) * inverse_r3,
        tabulated::<L>(maker, table, nodes, 2, f) * inverse_r3,
        tabulated::<L>(maker, table, nodes, 3, f) * inverse_r3,
        tabulated::<L>(maker, table, nodes, 4, f) * inverse_r3,
    ]
}

/// The loads of a chunk's sources (idle lanes: none).
#[inline(always)]
fn chunk_loads<L: Lanes>(
    maker: L::Maker,
    loads: &[[f64; 8]],
    list: &Neighbours,
    chunk: usize,
    end: usize,
) -> (Vec3Lanes<L>, Vec3Lanes<L>) {
    let mut force = [[0.0; 4]; LANES];
    let mut torque = [[0.0; 4]; LANES];
    for k in 0..LANES.min(end - chunk) {
        let load = &loads[list.sources[chunk + k] as usize];
        force[k] = [load[0], load[1], load[2], load[3]];
        torque[k] = [load[4], load[5], load[6], load[7]];
    }
    let [fx, fy, fz, _] = L::transpose(maker, force);
    let [tx, ty, tz, _] = L::transpose(maker, torque);
    (
        Vec3Lanes {
            x: fx,
            y: fy,
            z: fz,
        },
        Vec3Lanes {
            x: tx,
            y: ty,
            z: tz,
        },
    )
}

/// The velocities of a bead's close pairs, added to its lanes' sum.
fn with_close_pairs(
    loads: &[[f64; 8]],
    list: &Neighbours,
    place: usize,
    (mut v, mut w): (Vec3, Vec3),
) -> (Vec3, Vec3) {
    for (j, pair) in &list.close[list.close_starts[place]..list.close_starts[place + 1]] {
        let load = &loads[*j as usize];
        let (dv, dw) = pair.velocities(
            Vec3::new(load[0], load[1], load[2]),
            Vec3::new(load[4], load[5], load[6]),
        );
        v += dv;
        w += dw;
    }
    (v, w)
}

/// The real-space velocities `(V, W)` of the beads of one [`Neighbours`] run, into `out`, the
/// kernels evaluated from the table.
pub(crate) struct RealRows<'a> {
    pub(crate) sources: &'a RealSources<'a>,
    pub(crate) neighbours: &'a Neighbours,
    /// The run's beads from this one (a place in the run).
    pub(crate) from: usize,
    /// Round the directions and kernels to single precision as they are evaluated (the numbers of
    /// [`StoredKernels`], for configurations whose kernels are not stored).
    pub(crate) single_precision: bool,
    pub(crate) out: &'a mut [(Vec3, Vec3)],
}

/// `value` rounded to single precision and widened back, when `round` says so.
#[inline(always)]
fn rounded<L: Lanes>(maker: L::Maker, value: L, round: bool) -> L {
    if round {
        L::from_f32(maker, value.to_f32())
    } else {
        value
    }
}

impl LaneWork for RealRows<'_> {
    type Output = ();

    #[inline(always)]
    fn run<L: Lanes>(self, maker: L::Maker) {
        let (sources, list) = (self.sources, self.neighbours);
        let zero = L::splat(maker, 0.0);
        // Per chunk of four images, what the second pass needs: the first pass carries nothing from
        // one chunk to the next, so their square roots and divisions overlap.
        let mut geometry = Vec::new();
        for (offset, out) in self.out.iter_mut().enumerate() {
            let place = self.from + offset;
            let origin = origin_of::<L>(maker, sources, list, place);
            let (start, end) = (list.starts[place], list.starts[place + 1]);
            geometry.clear();
            for chunk in (start..end).step_by(LANES) {
                geometry.push(chunk_geometry(maker, sources, list, origin, chunk, end));
            }
            let mut v = Vec3Lanes {
                x: zero,
                y: zero,
                z: zero,
            };
            let mut w = v;
            let round = self.single_precision;
            for (chunk, &(direction, inverse_r3, f, nodes)) in
                (start..end).step_by(LANES).zip(&geometry)
            {
                let [tt_isotropic, tt_along, coupling, rr_isotropic, rr_along] =
                    chunk_kernels(maker, sources.table, (inverse_r3, f, nodes));
                let (force, torque) = chunk_loads(maker, sources.loads, list, chunk, end);
                (v, w) = PairLanes {
                    tt_isotropic: rounded(maker, tt_isotropic, round),
                    tt_along: rounded(maker, tt_along, round),
                    coupling: rounded(maker, coupling, round),
                    rr_isotropic: rounded(maker, rr_isotropic, round),
                    rr_along: rounded(maker, rr_along, round),
                    direction: Vec3Lanes {
                        x: rounded(maker, direction.x, round),
                        y: rounded(maker, direction.y, round),
                        z: rounded(maker, direction.z, round),
                    },
                }
                .add_velocities((v, w), force, torque);
            }
            *out = with_close_pairs(sources.loads, list, place, (lane_sum(v), lane_sum(w)));
        }
    }
}

/// The [`KernelChunk`]s of beads `from .. from + count` of one [`Neighbours`] run, into `out`.
struct KernelRows<'a> {
    sources: &'a RealSources<'a>,
    neighbours: &'a Neighbours,
    from: usize,
    count: usize,
    out: &'a mut [KernelChunk],
}

impl LaneWork for KernelRows<'_> {
    type Output = ();

    #[inline(always)]
    fn run<L: Lanes>(self, maker: L::Maker) {
        let (sources, list) = (self.sources, self.neighbours);
        let mut out = self.out.iter_mut();
        let mut geometry = Vec::new();
        for place in self.from..self.from + self.count {
            let origin = origin_of::<L>(maker, sources, list, place);
            let (start, end) = (list.starts[place], list.starts[place + 1]);
            geometry.clear();
            for chunk in (start..end).step_by(LANES) {
                geometry.push(chunk_geometry(maker, sources, list, origin, chunk, end));
            }
            for &(direction, inverse_r3, f, nodes) in &geometry {
                let k = chunk_kernels(maker, sources.table, (inverse_r3, f, nodes));
                *out.next()
                    .expect("a chunk counted by StoredKernels::starts") = [
                    direction.x.to_f32(),
                    direction.y.to_f32(),
                    direction.z.to_f32(),
                    k[0].to_f32(),
                    k[1].to_f32(),
                    k[2].to_f32(),
                    k[3].to_f32(),
                    k[4].to_f32(),
                ];
            }
        }
    }
}

/// The real-space velocities of the beads of one [`Neighbours`] run (places `from ..`) from the
/// run's stored kernels, into `out`.
pub(crate) struct StoredRows<'a> {
    pub(crate) sources: &'a RealSources<'a>,
    pub(crate) neighbours: &'a Neighbours,
    pub(crate) kernels: &'a StoredKernels,
    pub(crate) from: usize,
    pub(crate) out: &'a mut [(Vec3, Vec3)],
}

impl LaneWork for StoredRows<'_> {
    type Output = ();

    #[inline(always)]
    fn run<L: Lanes>(self, maker: L::Maker) {
        let (sources, list, kernels) = (self.sources, self.neighbours, self.kernels);
        let zero = L::splat(maker, 0.0);
        for (offset, out) in self.out.iter_mut().enumerate() {
            let place = self.from + offset;
            let (start, end) = (list.starts[place], list.starts[place + 1]);
            let stored = &kernels.chunks[kernels.starts[place]..kernels.starts[place + 1]];
            let mut v = Vec3Lanes {
                x: zero,
                y: zero,
                z: zero,
            };
            let mut w = v;
            for (chunk, stored) in (start..end).step_by(LANES).zip(stored) {
                let (force, torque) = chunk_loads(maker, sources.loads, list, chunk, end);
                (v, w) = PairLanes {
                    tt_isotropic: L::from_f32(maker, stored[3]),
                    tt_along: L::from_f32(maker, stored[4]),
                    coupling: L::from_f32(maker, stored[5]),
                    rr_isotropic: L::from_f32(maker, stored[6]),
                    rr_along: L::from_f32(maker, stored[7]),
                    direction: Vec3Lanes {
                        x: L::from_f32(maker, stored[0]),
                        y: L::from_f32(maker, stored[1]),
                        z: L::from_f32(maker, stored[2]),
                    },
                }
                .add_velocities((v, w), force, torque);
            }
            *out = with_close_pairs(sources.loads, list, place, (lane_sum(v), lane_sum(w)));
        }
    }
}

/// Kernel `c` of the table in four lanes at intervals `nodes` and places `f` in them (times `r³`).
#[inline(always)]
fn tabulated<L: Lanes>(
    maker: L::Maker,
    table: &RealTable,
    nodes: [u32; LANES],
    c: usize,
    f: L,
) -> L {
    let [c0, c1, c2, c3] = L::transpose(maker, nodes.map(|n| table.intervals[n as usize][c]));
    ((c3 * f + c2) * f + c1) * f + c0
}

/// The four lanes' vectors summed, `(l0 + l1) + (l2 + l3)`.
#[inline(always)]
fn lane_sum<L: Lanes>(lanes: Vec3Lanes<L>) -> Vec3 {
    let [l0, l1, l2, l3] = lanes.to_vectors();
    (l0 + l1) + (l2 + l3)
}

/// The loads `(F_x, F_y, F_z, 0, T_x, T_y, T_z, 0)` of the beads in the cell list's `order`.
pub(crate) fn sorted_loads(order: &[usize], forces: &[Vec3], torques: &[Vec3]) -> Vec<[f64; 8]> {
    order
        .iter()
        .map(|&j| {
            let (f, t) = (forces[j], torques[j]);
            [f.x, f.y, f.z, 0.0, t.x, t.y, t.z, 0.0]
        })
        .collect()
}
