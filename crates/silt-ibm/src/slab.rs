//! The direct forcing on one rank's slab of a distributed fluid (`silt_fluid::Decomposition`: slabs of
//! whole z planes). A rank knows the spheres near its slab (all of them when the sphere system is not
//! split; `CoupledParticles::distribute` splits it with the slabs). A rank forces with
//!
//! * the markers whose supports touch its own planes: spreading them completes its planes, each point
//!   adding its markers in the serial order (the groups' rounds follow from the grid's tiles alone:
//!   [`crate::transfer::geometric_rounds`]);
//! * all markers of the spheres it owns (those whose centre lies in its slab, or that the split sphere
//!   system gives it): their reactions and the fluid momentum inside them are summed here in the serial
//!   order (and gathered by every rank when every rank holds every sphere).
//!
//! It holds the predicted velocity on a *window*: its own planes and `margin` planes of its neighbours'
//! on each side, refreshed from their owners after every pass. A marker then interpolates the values the
//! serial pass would read, and the forced velocity, the loads and the inner integrals are the serial
//! ones bit for bit.

use crate::forcing::RigidSphere;
use crate::transfer::{GridLayout, PlaneWindow};
use silt_fluid::decomposition::Decomposition;
use silt_fluid::grid::Unknowns;
use std::ops::Range;

/// The forcing's part of a rank of a distributed run.
#[derive(Clone, Debug)]
pub struct SlabForcing {
    decomposition: Decomposition,
    /// Per component: every rank's planes of unknowns (indices among the domain's).
    partition: [Vec<Range<usize>>; 3],
    /// Per component: every rank's window.
    windows: [Vec<PlaneWindow>; 3],
    /// The shape of this rank's window arrays (the domain's unknowns along x and y, the window's planes
    /// along z, not wrapped).
    pub window_layout: GridLayout,
    /// This rank's own fields and compact arrays (the fluid solver's).
    pub own_layout: GridLayout,
    /// The predicted, then forced velocity on this rank's windows, per component.
    pub values: [Vec<f64>; 3],
    /// The next refresh's arrays (swapped with `values`: their allocations are reused).
    spare: [Vec<f64>; 3],
    /// Per sphere: whether its centre lies in this rank's slab (or, with `owners_given`, whether
    /// this rank owns it in a split sphere system).
    pub owned: Vec<bool>,
    /// The owners come from a split sphere system (each rank knows only the spheres near its slab):
    /// the spheres' loads stay with their owners instead of being gathered.
    pub owners_given: bool,
    /// Per sphere: whether this rank may force with any of its markers (it owns the sphere, or the
    /// sphere lies near its slab): the markers of the others are not placed here at all.
    pub near: Vec<bool>,
}

impl SlabForcing {
    /// The forcing's part of this rank of `decomposition` (`global`: the domain's layout), with windows
    /// `margin` planes beyond its own on each side. Collective: every rank calls it.
    pub fn new(decomposition: &Decomposition, global: &GridLayout, margin: usize) -> Self {
        let own_layout = GridLayout::new(*decomposition.local_grid(), decomposition.boundaries());
        let comm = decomposition.comm();
        let own_planes = own_layout.unknowns.map(|u| u.shape[2] as f64);
        let (all, _) = comm.all_gather_v(&own_planes);
        let periodic = global.periodic[2];
        let partition: [Vec<Range<usize>>; 3] = std::array::from_fn(|c| {
            let mut start = 0;
            all.chunks_exact(3)
                .map(|planes| {
                    let range = start..start + planes[c] as usize;
                    start = range.end;
                    range
                })
                .collect()
        });
        let windows: [Vec<PlaneWindow>; 3] = std::array::from_fn(|c| {
            let planes = global.unknowns[c].shape[2];
            debug_assert_eq!(partition[c].last().map(|r| r.end), Some(planes));
            partition[c]
                .iter()
                .map(|own| {
                    let (mut first, mut end) = (
                        own.start as isize - margin as isize,
                        (own.end + margin) as isize,
                    );
                    if periodic && end - first >= planes as isize {
                        (first, end) = (0, planes as isize);
                    } else if !periodic {
                        (first, end) = (first.max(0), end.min(planes as isize));
                    }
                    PlaneWindow {
                        first,
                        count: (end - first) as usize,
                        planes,
                        periodic,
                    }
                })
                .collect()
        });
        let me = comm.rank();
        let window_layout = GridLayout {
            periodic: [global.periodic[0], global.periodic[1], false],
            unknowns: std::array::from_fn(|c| {
                let Unknowns { start, shape } = global.unknowns[c];
                Unknowns {
                    start,
                    shape: [shape[0], shape[1], windows[c][me].count],
                }
            }),
            ..global.clone()
        };
        SlabForcing {
            decomposition: decomposition.clone(),
            partition,
            windows,
            window_layout,
            own_layout,
            values: Default::default(),
            spare: Default::default(),
            owned: Vec::new(),
            owners_given: false,
            near: Vec::new(),
        }
    }

    fn rank(&self) -> usize {
        self.decomposition.comm().rank()
    }

    /// This rank's window of component c.
    pub fn window(&self, c: usize) -> PlaneWindow {
        self.windows[c][self.rank()]
    }

    /// This rank's planes of component c (indices among the domain's).
    pub fn own_planes(&self, c: usize) -> Range<usize> {
        self.partition[c][self.rank()].clone()
    }

    /// Where this rank's own planes of component c lie in its window arrays.
    fn own_in_window(&self, c: usize) -> Range<usize> {
        let plane_len = self.plane_len(c);
        let own = self.own_planes(c);
        let first = self
            .window(c)
            .local(own.start)
            .expect("a window holds its own planes");
        first * plane_len..(first + own.len()) * plane_len
    }

    fn plane_len(&self, c: usize) -> usize {
        let shape = self.window_layout.unknowns[c].shape;
        shape[0] * shape[1]
    }

    /// Marks the spheres whose centre lies in this rank's slab of cells.
    pub fn set_owners(&mut self, spheres: &[RigidSphere], global: &GridLayout) {
        let grid = &global.grid;
        let cells = grid.cells[2] as isize;
        let slab = self.decomposition.slab();
        self.owned.clear();
        self.owned.extend(spheres.iter().map(|s| {
            let cell = ((s.centre.z - grid.origin[2]) / grid.spacing).floor() as isize;
            let cell = if global.periodic[2] {
                cell.rem_euclid(cells)
            } else {
                cell.clamp(0, cells - 1)
            };
            slab.contains(&(cell as usize))
        }));
    }

    /// Marks the spheres whose markers this rank may force with: those it owns and those whose
    /// `reach[p]` (the marker sphere's radius) comes within 6 cells of its slab of cells, generously
    /// more than a support (1.5 cells) and the staggering (half a cell) add to a marker's planes
    /// ([`SlabForcing::keeps`] then decides marker by marker).
    pub fn set_near(&mut self, spheres: &[RigidSphere], reach: &[f64], global: &GridLayout) {
        let grid = &global.grid;
        let cells = grid.cells[2] as isize;
        let slab = self.decomposition.slab();
        let (first, end) = (slab.start as isize, slab.end as isize);
        let shifts: &[isize] = if global.periodic[2] {
            &[-cells, 0, cells]
        } else {
            &[0]
        };
        let cell = |z: f64| ((z - grid.origin[2]) / grid.spacing).floor() as isize;
        self.near.clear();
        self.near.extend(
            spheres
                .iter()
                .zip(reach)
                .zip(&self.owned)
                .map(|((s, &r), &owned)| {
                    let extra = r + 6.0 * grid.spacing;
                    let (low, high) = (cell(s.centre.z - extra), cell(s.centre.z + extra));
                    owned || shifts.iter().any(|k| low + k < end && first <= high + k)
                }),
        );
    }

    /// The sum over the ranks of one count per rank, added in rank order (exact for counts).
    pub fn sum_over_ranks(&self, count: usize) -> usize {
        self.decomposition.comm().sum_in_rank_order(count as f64) as usize
    }

    /// Whether this rank forces with a marker of a sphere it `owns` (or not) whose supports lie within
    /// planes `centre - below ..= centre + above` of the domain (unwrapped around `centre`, a plane of
    /// the x-component's unknowns): all markers of its own spheres, and those touching its planes.
    pub fn keeps(&self, owns: bool, centre: usize, (below, above): (isize, isize)) -> bool {
        if owns {
            return true;
        }
        let (low, high) = (centre as isize - below, centre as isize + above);
        (0..3).any(|c| {
            let own = self.own_planes(c);
            let window = self.window(c);
            let n = window.planes as isize;
            let shifts: &[isize] = if window.periodic { &[-n, 0, n] } else { &[0] };
            shifts
                .iter()
                .any(|s| low + s < own.end as isize && own.start as isize <= high + s)
        })
    }

    /// The window arrays from the compact arrays of this rank's own planes (`own[c]`, the fluid
    /// solver's layout): its planes copied, the others from the ranks that hold them.
    pub fn load(&mut self, own: &[Vec<f64>; 3]) {
        for (c, own) in own.iter().enumerate() {
            let len = self.window(c).count * self.plane_len(c);
            let at = self.own_in_window(c);
            self.values[c].resize(len, 0.0);
            self.values[c][at].copy_from_slice(own);
            self.exchange_halos(c);
        }
    }

    /// The window's planes beyond this rank's own, from their owners (after a pass has spread into
    /// every rank's own planes).
    pub fn refresh(&mut self) {
        for c in 0..3 {
            self.exchange_halos(c);
        }
    }

    /// The planes of component c's window below and above this rank's own, from the ranks that hold
    /// them: two exchanges of the halo planes only (the own planes stay where they are).
    fn exchange_halos(&mut self, c: usize) {
        let plane_len = self.plane_len(c);
        let own = self.own_in_window(c);
        let count = self.window(c).count;
        let mut halo = std::mem::take(&mut self.spare[c]);
        for below in [true, false] {
            let (windows, partition) = (&self.windows[c], &self.partition[c]);
            let range = |rank: usize| {
                let (w, mine) = (windows[rank], &partition[rank]);
                if below {
                    (w.first, w.first.max(mine.start as isize))
                } else {
                    (mine.end as isize, w.first + w.count as isize)
                }
            };
            self.decomposition.gather_planes_into(
                partition,
                plane_len,
                &self.values[c][own.clone()],
                &range,
                &mut halo,
            );
            let at = if below {
                0..own.start
            } else {
                own.end..count * plane_len
            };
            self.values[c][at].copy_from_slice(&halo);
        }
        self.spare[c] = halo;
    }

    /// Copies this rank's own planes of the window arrays into `own` (compact, the solver's layout).
    pub fn store(&self, own: &mut [Vec<f64>; 3]) {
        for (c, own) in own.iter_mut().enumerate() {
            own.copy_from_slice(&self.values[c][self.own_in_window(c)]);
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
