//! The direct forcing on one rank's block of a distributed fluid (`silt_fluid::Decomposition`: blocks
//! of y rows and z planes of whole x lines; slabs of whole planes when the process grid is `1 x N`).
//! A rank knows the spheres near its block (all of them when the sphere system is not split;
//! `CoupledParticles::distribute` splits it with the blocks). A rank forces with
//!
//! * the markers whose supports touch its own rows and planes: spreading them completes its block,
//!   each point adding its markers in the serial order (the groups' rounds follow from the grid's
//!   tiles alone: [`crate::transfer::geometric_rounds`]);
//! * all markers of the spheres it owns (those whose centre lies in its block, or that the split
//!   sphere system gives it): their reactions and the fluid momentum inside them are summed here in
//!   the serial order (and gathered by every rank when every rank holds every sphere).
//!
//! It holds the predicted velocity on a *window*: its own rows and planes and `margin` rows and
//! planes of its neighbours' on each side (whole x lines), refreshed from their owners after every
//! pass. A marker then interpolates the values the serial pass would read, and the forced velocity,
//! the loads and the inner integrals are the serial ones bit for bit.

use crate::forcing::RigidSphere;
use crate::transfer::{GridLayout, PlaneWindow};
use silt_fluid::decomposition::Decomposition;
use silt_fluid::grid::Unknowns;
use std::ops::Range;

/// The forcing's part of a rank of a distributed run.
#[derive(Clone, Debug)]
pub struct BlockForcing {
    decomposition: Decomposition,
    /// Per component: every rank's rows and planes of unknowns (indices among the domain's).
    partition: [Vec<[Range<usize>; 2]>; 3],
    /// Per component: every rank's window of rows and of planes.
    windows: [Vec<[PlaneWindow; 2]>; 3],
    /// Per component: the part of every rank's window that the forcing reads now (rows and planes,
    /// unwrapped as the window numbers them): what a refresh brings ([`BlockForcing::set_needed`]).
    needed: [Vec<[(isize, isize); 2]>; 3],
    /// The shape of this rank's window arrays (the domain's unknowns along x, the window's rows and
    /// planes along y and z, not wrapped).
    pub window_layout: GridLayout,
    /// This rank's own fields and compact arrays (the fluid solver's).
    pub own_layout: GridLayout,
    /// The predicted, then forced velocity on this rank's windows, per component.
    pub values: [Vec<f64>; 3],
    /// Per sphere: whether its centre lies in this rank's block (or, with `owners_given`, whether
    /// this rank owns it in a split sphere system).
    pub owned: Vec<bool>,
    /// The owners come from a split sphere system (each rank knows only the spheres near its block):
    /// the spheres' loads stay with their owners instead of being gathered.
    pub owners_given: bool,
    /// Per sphere: whether this rank may force with any of its markers (it owns the sphere, or the
    /// sphere lies near its block): the markers of the others are not placed here at all.
    pub near: Vec<bool>,
}

/// The window `own` widened by `margin` on each side among `count` points (rows or planes), wrapped
/// along a `periodic` axis (the whole axis once it would hold every point), clipped along a bounded
/// one.
fn widened(own: &Range<usize>, margin: usize, count: usize, periodic: bool) -> PlaneWindow {
    let (mut first, mut end) = (
        own.start as isize - margin as isize,
        (own.end + margin) as isize,
    );
    if periodic && end - first >= count as isize {
        (first, end) = (0, count as isize);
    } else if !periodic {
        (first, end) = (first.max(0), end.min(count as isize));
    }
    PlaneWindow {
        first,
        count: (end - first) as usize,
        planes: count,
        periodic,
    }
}

impl BlockForcing {
    /// The forcing's part of this rank of `decomposition` (`global`: the domain's layout), with windows
    /// `margin` rows and planes beyond its own on each side. Collective: every rank calls it.
    pub fn new(decomposition: &Decomposition, global: &GridLayout, margin: usize) -> Self {
        let own_layout = GridLayout::new(*decomposition.local_grid(), decomposition.boundaries());
        let comm = decomposition.comm();
        let [py, _] = decomposition.dims();
        // Every rank's numbers of rows and planes of each component's unknowns.
        let own_counts: Vec<f64> = own_layout
            .unknowns
            .iter()
            .flat_map(|u| [u.shape[1] as f64, u.shape[2] as f64])
            .collect();
        let (all, _) = comm.all_gather_v(&own_counts);
        let count = |rank: usize, c: usize, axis: usize| all[6 * rank + 2 * c + axis - 1] as usize;
        let ranks = comm.size();
        // A block's rows start after those of the blocks before it in its process-grid row, its
        // planes after those of the blocks below it in its column.
        let partition: [Vec<[Range<usize>; 2]>; 3] = std::array::from_fn(|c| {
            (0..ranks)
                .map(|r| {
                    let (a, b) = (r % py, r / py);
                    let rows_before: usize = (0..a).map(|q| count(q + py * b, c, 1)).sum();
                    let planes_before: usize = (0..b).map(|q| count(a + py * q, c, 2)).sum();
                    [
                        rows_before..rows_before + count(r, c, 1),
                        planes_before..planes_before + count(r, c, 2),
                    ]
                })
                .collect()
        });
        let windows: [Vec<[PlaneWindow; 2]>; 3] = std::array::from_fn(|c| {
            let shape = global.unknowns[c].shape;
            partition[c]
                .iter()
                .map(|[rows, planes]| {
                    debug_assert!(rows.end <= shape[1] && planes.end <= shape[2]);
                    [
                        widened(rows, margin, shape[1], global.periodic[1]),
                        widened(planes, margin, shape[2], global.periodic[2]),
                    ]
                })
                .collect()
        });
        let me = comm.rank();
        let window_layout = GridLayout {
            periodic: [global.periodic[0], false, false],
            unknowns: std::array::from_fn(|c| {
                let Unknowns { start, shape } = global.unknowns[c];
                let [rows, planes] = windows[c][me];
                Unknowns {
                    start,
                    shape: [shape[0], rows.count, planes.count],
                }
            }),
            ..global.clone()
        };
        let needed = std::array::from_fn(|c| {
            windows[c]
                .iter()
                .map(|w| w.map(|w| (w.first, w.first + w.count as isize)))
                .collect()
        });
        BlockForcing {
            decomposition: decomposition.clone(),
            partition,
            windows,
            needed,
            window_layout,
            own_layout,
            values: Default::default(),
            owned: Vec::new(),
            owners_given: false,
            near: Vec::new(),
        }
    }

    fn rank(&self) -> usize {
        self.decomposition.comm().rank()
    }

    /// This rank's window of component c: its rows and its planes.
    pub fn window(&self, c: usize) -> [PlaneWindow; 2] {
        self.windows[c][self.rank()]
    }

    /// This rank's planes of component c (indices among the domain's).
    pub fn own_planes(&self, c: usize) -> Range<usize> {
        self.partition[c][self.rank()][1].clone()
    }

    /// This rank's rows and planes of component c (indices among the domain's).
    fn own_block(&self, c: usize) -> [Range<usize>; 2] {
        self.partition[c][self.rank()].clone()
    }

    /// The domain's cell (along y and z) that holds `centre`, wrapped along a periodic axis.
    fn cell_of(centre: crate::Vec3, global: &GridLayout) -> [isize; 2] {
        let grid = &global.grid;
        [1, 2].map(|a| {
            let cells = grid.cells[a] as isize;
            let cell = ((centre[a] - grid.origin[a]) / grid.spacing).floor() as isize;
            if global.periodic[a] {
                cell.rem_euclid(cells)
            } else {
                cell.clamp(0, cells - 1)
            }
        })
    }

    /// Marks the spheres whose centre lies in this rank's block of cells.
    pub fn set_owners(&mut self, spheres: &[RigidSphere], global: &GridLayout) {
        let blocks = [self.decomposition.rows(), self.decomposition.slab()];
        self.owned.clear();
        self.owned.extend(spheres.iter().map(|s| {
            let cell = Self::cell_of(s.centre, global);
            (0..2).all(|a| blocks[a].contains(&(cell[a] as usize)))
        }));
    }

    /// Marks the spheres whose markers this rank may force with: those it owns and those whose
    /// `reach[p]` (the marker sphere's radius) comes within 6 cells of its block of cells along y
    /// and z, generously more than a support (1.5 cells) and the staggering (half a cell) add to a
    /// marker's rows and planes ([`BlockForcing::keeps`] then decides marker by marker).
    pub fn set_near(&mut self, spheres: &[RigidSphere], reach: &[f64], global: &GridLayout) {
        let grid = &global.grid;
        let blocks = [self.decomposition.rows(), self.decomposition.slab()];
        let cell = |x: f64, a: usize| ((x - grid.origin[a]) / grid.spacing).floor() as isize;
        let near_along = |centre: crate::Vec3, extra: f64, a: usize| {
            let cells = grid.cells[a] as isize;
            let shifts: &[isize] = if global.periodic[a] {
                &[-cells, 0, cells]
            } else {
                &[0]
            };
            let (first, end) = (blocks[a - 1].start as isize, blocks[a - 1].end as isize);
            let (low, high) = (cell(centre[a] - extra, a), cell(centre[a] + extra, a));
            shifts.iter().any(|k| low + k < end && first <= high + k)
        };
        self.near.clear();
        self.near.extend(
            spheres
                .iter()
                .zip(reach)
                .zip(&self.owned)
                .map(|((s, &r), &owned)| {
                    let extra = r + 6.0 * grid.spacing;
                    owned || (near_along(s.centre, extra, 1) && near_along(s.centre, extra, 2))
                }),
        );
    }

    /// Sets, on every rank, the part of each rank's window that its forcing reads: the rows and
    /// planes within R + 3 h of the centres of the spheres it places markers for (`near`: its own
    /// and those near its block), which hold every point their supports and the inner integrals
    /// reach (as the serial forcing's planes near the spheres). The refreshes then bring only
    /// those rows (a bed low in a tall box: its planes, not the clear fluid above). Collective.
    pub fn set_needed(&mut self, spheres: &[RigidSphere], global: &GridLayout) {
        let grid = &global.grid;
        let h = grid.spacing;
        let mut mine = Vec::with_capacity(12);
        for c in 0..3 {
            let windows = self.window(c);
            let start = global.unknowns[c].start;
            // Per axis (y, z): the lowest and highest window index within reach of a sphere.
            let mut bounds = [(usize::MAX, 0); 2];
            for (sphere, _) in spheres.iter().zip(&self.near).filter(|(_, &near)| near) {
                let reach = sphere.radius + 3.0 * h;
                for (a, bound) in [1, 2].into_iter().zip(&mut bounds) {
                    let half = if a == c { 0.0 } else { 0.5 };
                    let s = |x: f64| (x - grid.origin[a]) / h + half;
                    let low = s(sphere.centre[a] - reach).floor() as isize;
                    let high = s(sphere.centre[a] + reach).ceil() as isize;
                    for i in low..=high {
                        let local = global
                            .unknown_index(c, a, i)
                            .and_then(|field| windows[a - 1].local(field - start[a]));
                        if let Some(l) = local {
                            bound.0 = bound.0.min(l);
                            bound.1 = bound.1.max(l + 1);
                        }
                    }
                }
            }
            for (w, (low, end)) in windows.iter().zip(bounds) {
                let (low, end) = if low < end { (low, end) } else { (0, 0) };
                mine.extend([
                    (w.first + low as isize) as f64,
                    (w.first + end as isize) as f64,
                ]);
            }
        }
        let (all, _) = self.decomposition.comm().all_gather_v(&mine);
        for (rank, boxes) in all.chunks_exact(12).enumerate() {
            for c in 0..3 {
                let b = &boxes[4 * c..4 * c + 4];
                self.needed[c][rank] = [
                    (b[0] as isize, b[1] as isize),
                    (b[2] as isize, b[3] as isize),
                ];
            }
        }
    }

    /// The sum over the ranks of one count per rank, added in rank order (exact for counts).
    pub fn sum_over_ranks(&self, count: usize) -> usize {
        self.decomposition.comm().sum_in_rank_order(count as f64) as usize
    }

    /// Whether this rank forces with a marker of a sphere it `owns` (or not) whose supports lie within
    /// rows and planes `centre - below ..= centre + above` of the domain (`centre`: the support's
    /// middle point among the x-component's unknowns, unwrapped around it; `reach`: along y and z): all
    /// markers of its own spheres, and those touching its block.
    pub fn keeps(&self, owns: bool, centre: [usize; 3], reach: [(isize, isize); 2]) -> bool {
        if owns {
            return true;
        }
        (0..3).any(|c| {
            let own = self.own_block(c);
            let windows = self.window(c);
            (0..2).all(|a| {
                let (below, above) = reach[a];
                let (low, high) = (
                    centre[a + 1] as isize - below,
                    centre[a + 1] as isize + above,
                );
                let n = windows[a].planes as isize;
                let shifts: &[isize] = if windows[a].periodic {
                    &[-n, 0, n]
                } else {
                    &[0]
                };
                shifts
                    .iter()
                    .any(|s| low + s < own[a].end as isize && own[a].start as isize <= high + s)
            })
        })
    }

    /// The window arrays from the compact arrays of this rank's own block (`own[c]`, the fluid
    /// solver's layout): its rows copied, the others from the ranks that hold them.
    pub fn load(&mut self, own: &[Vec<f64>; 3]) {
        for (c, own) in own.iter().enumerate() {
            let [rows, planes] = self.window(c);
            let row_len = self.window_layout.unknowns[c].shape[0];
            self.values[c].resize(row_len * rows.count * planes.count, 0.0);
            for (at, own_row) in self.own_rows_in_window(c).zip(own.chunks_exact(row_len)) {
                self.values[c][at..at + row_len].copy_from_slice(own_row);
            }
            self.refresh_component(c);
        }
    }

    /// Where the rows of this rank's block of component c start in its window array, in the order
    /// of its compact array (x lines, y then z).
    fn own_rows_in_window(&self, c: usize) -> impl Iterator<Item = usize> {
        let [own_rows, own_planes] = self.own_block(c);
        let [rows, planes] = self.window(c);
        let row_len = self.window_layout.unknowns[c].shape[0];
        own_planes.flat_map(move |k| {
            let k = planes.local(k).expect("a window holds its block");
            own_rows.clone().map(move |j| {
                let j = rows.local(j).expect("a window holds its block");
                (j + rows.count * k) * row_len
            })
        })
    }

    /// The window's rows beyond this rank's own, from their owners (after a pass has spread into
    /// every rank's own block).
    pub fn refresh(&mut self) {
        for c in 0..3 {
            self.refresh_component(c);
        }
    }

    /// The rows of component c's window that other ranks hold and the forcing reads, from them: one
    /// exchange of those rows only (the own rows stay where they are).
    fn refresh_component(&mut self, c: usize) {
        let row_len = self.window_layout.unknowns[c].shape[0];
        let needed = &self.needed[c];
        let held = self
            .window(c)
            .map(|w| (w.first, w.first + w.count as isize));
        self.decomposition.fill_window_part(
            &self.partition[c],
            row_len,
            &|rank| needed[rank],
            held,
            &mut self.values[c],
        );
    }

    /// Copies this rank's own rows of the window arrays into `own` (compact, the solver's layout).
    pub fn store(&self, own: &mut [Vec<f64>; 3]) {
        for (c, own) in own.iter_mut().enumerate() {
            let row_len = self.window_layout.unknowns[c].shape[0];
            for (at, own_row) in self
                .own_rows_in_window(c)
                .zip(own.chunks_exact_mut(row_len))
            {
                own_row.copy_from_slice(&self.values[c][at..at + row_len]);
            }
        }
    }

    /// Every sphere's `values` from the rank that owns it (this rank's rows of its own spheres are
    /// sent; the others are overwritten): one all-gather.
    pub fn gather_owned<const K: usize>(&self, values: &mut [[f64; K]]) {
        let mut rows = Vec::new();
        for (p, row) in values.iter().enumerate() {
            if self.owned[p] {
                rows.push(p as f64);
                rows.extend_from_slice(row);
            }
        }
        let (all, _) = self.decomposition.comm().all_gather_v(&rows);
        for row in all.chunks_exact(K + 1) {
            values[row[0] as usize].copy_from_slice(&row[1..]);
        }
    }
}
