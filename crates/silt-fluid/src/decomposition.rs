//! The fluid's grid split among the ranks of a distributed run: each rank holds a slab of whole z
//! planes of cells (a balanced block), with one ghost plane on each side that comes from the
//! neighbouring rank (halo exchange) where the slab does not end at a boundary of the domain.
//!
//! A rank's fields are fields of its own grid (its cells along z, the origin moved up to its first
//! cell), so the stencils of the serial solver run on them unchanged. The velocity faces normal to z
//! between two slabs belong to the lower one (the high face of its last cell). Sums over the domain
//! are sums of per-plane sums gathered in z order, the order of the serial solver, so they are the
//! same numbers on any number of ranks (and threads).

use std::ops::Range;

use silt_parallel::{block, Comm, SingleRank};

use crate::boundary::{Boundaries, Boundary};
use crate::grid::{Field, Grid};

/// This rank's slab of the grid, its boundaries and its neighbours.
#[derive(Clone, Debug)]
pub struct Decomposition {
    comm: Comm,
    global: Grid,
    /// Global cell indices along z (0-based) of every rank's slab.
    slabs: Vec<Range<usize>>,
    local: Grid,
    /// This rank's faces: the domain's, with `Neighbour` between slabs.
    boundaries: Boundaries,
    /// The ranks beyond the low and the high z face of this slab (None: the domain's own face).
    neighbours: [Option<usize>; 2],
}

impl Decomposition {
    /// The whole grid on one rank.
    pub fn serial(grid: Grid, boundaries: Boundaries) -> Self {
        Decomposition {
            comm: SingleRank::comm(),
            global: grid,
            slabs: std::iter::once(0..grid.cells[2]).collect(),
            local: grid,
            boundaries,
            neighbours: [None, None],
        }
    }

    /// Balanced slabs of z planes on the ranks of `comm`.
    pub fn slabs(grid: Grid, boundaries: Boundaries, comm: Comm) -> Result<Self, String> {
        let ranks = comm.size();
        if ranks == 1 {
            return Ok(Decomposition {
                comm,
                ..Self::serial(grid, boundaries)
            });
        }
        let [n0, _, n2] = grid.cells;
        if n2 < 2 * ranks {
            return Err(format!(
                "the fluid's {n2} cells along z cannot be split among {ranks} ranks (a slab needs \
                 at least 2 planes of cells): use at most {} ranks",
                n2 / 2
            ));
        }
        if n0 < ranks {
            return Err(format!(
                "the fluid's {n0} cells along x cannot be split among {ranks} ranks for the \
                 pressure solver's z lines: use at most {n0} ranks"
            ));
        }
        let faces = boundaries.faces.iter().flatten();
        if faces
            .clone()
            .any(|f| matches!(f, Boundary::Inflow { .. } | Boundary::Outflow))
        {
            return Err(
                "inflow and outflow faces are not available in distributed runs yet: run on one \
                 rank"
                    .into(),
            );
        }
        let me = comm.rank();
        let slabs: Vec<Range<usize>> = (0..ranks).map(|r| block(n2, ranks, r)).collect();
        let mine = slabs[me].clone();
        let mut local = grid;
        local.cells[2] = mine.len();
        local.offset[2] = mine.start;
        let periodic = boundaries.is_periodic(2);
        let neighbours = [
            (me > 0 || periodic).then(|| (me + ranks - 1) % ranks),
            (me + 1 < ranks || periodic).then(|| (me + 1) % ranks),
        ];
        let mut own = boundaries;
        for side in 0..2 {
            if neighbours[side].is_some() {
                own.faces[2][side] = Boundary::Neighbour;
            }
        }
        Ok(Decomposition {
            comm,
            global: grid,
            slabs,
            local,
            boundaries: own,
            neighbours,
        })
    }

    pub fn comm(&self) -> &Comm {
        &self.comm
    }

    /// Whether the grid is split among more than one rank.
    pub fn is_distributed(&self) -> bool {
        self.comm.size() > 1
    }

    /// The whole domain's grid.
    pub fn global_grid(&self) -> &Grid {
        &self.global
    }

    /// Every rank's slab of cells along z, in rank order.
    pub fn all_slabs(&self) -> &[Range<usize>] {
        &self.slabs
    }

    /// This rank's grid: its cells along z, offset by the cells of the slabs below.
    pub fn local_grid(&self) -> &Grid {
        &self.local
    }

    /// This rank's faces (`Neighbour` between slabs).
    pub fn boundaries(&self) -> &Boundaries {
        &self.boundaries
    }

    /// Global cell indices along z (0-based) of this rank's slab.
    pub fn slab(&self) -> Range<usize> {
        self.slabs[self.comm.rank()].clone()
    }

    /// The ghost planes along z of `fields` from the neighbouring ranks: each slab's first and last
    /// planes become its neighbours' ghost planes (whole planes, their x and y ghosts included, so
    /// edges and corners agree with the serial fill). Nothing to do on one rank.
    pub fn exchange_halos(&self, fields: &mut [&mut Field]) {
        if !self.is_distributed() {
            return;
        }
        let [low, high] = self.neighbours;
        let mut sends = Vec::new();
        for (f, field) in fields.iter().enumerate() {
            let plane = field.plane_len();
            let n = field.dims[2] - 2;
            let tag = 2 * f as u16;
            // Our first plane is the low neighbour's high ghost, our last the high neighbour's low.
            if let Some(rank) = low {
                sends.push((rank, tag, field.data[plane..2 * plane].to_vec()));
            }
            if let Some(rank) = high {
                sends.push((
                    rank,
                    tag + 1,
                    field.data[n * plane..(n + 1) * plane].to_vec(),
                ));
            }
        }
        let sends: Vec<(usize, u16, &[f64])> = sends
            .iter()
            .map(|(rank, tag, values)| (*rank, *tag, &values[..]))
            .collect();
        let mut receives: Vec<(usize, u16, &mut [f64])> = Vec::new();
        for (f, field) in fields.iter_mut().enumerate() {
            let plane = field.plane_len();
            let n = field.dims[2] - 2;
            let tag = 2 * f as u16;
            let (below, rest) = field.data.split_at_mut(plane);
            let above = &mut rest[n * plane..(n + 1) * plane];
            if let Some(rank) = low {
                receives.push((rank, tag + 1, below));
            }
            if let Some(rank) = high {
                receives.push((rank, tag, above));
            }
        }
        self.comm.exchange(&sends, &mut receives);
    }

    /// The planes `window(rank)` (a range of z planes in the unwrapped numbering: `k` stands for
    /// `k mod m` along a periodic z, else `0 <= k < m`) of a compact array of `m` planes of
    /// `plane_len` values split among the ranks by `partition` (this rank holds `local`), gathered
    /// for every rank in one exchange: this rank's window, plane by plane in order. Every rank
    /// calls it with the same `partition` and `window`.
    pub fn gather_planes(
        &self,
        partition: &[Range<usize>],
        plane_len: usize,
        local: &[f64],
        window: &dyn Fn(usize) -> (isize, isize),
    ) -> Vec<f64> {
        let mut out = Vec::new();
        self.gather_planes_into(partition, plane_len, local, window, &mut out);
        out
    }

    /// [`Decomposition::gather_planes`] into `out` (its allocation reused: no new pages per call).
    pub fn gather_planes_into(
        &self,
        partition: &[Range<usize>],
        plane_len: usize,
        local: &[f64],
        window: &dyn Fn(usize) -> (isize, isize),
        out: &mut Vec<f64>,
    ) {
        let m = partition.last().map_or(0, |p| p.end) as isize;
        let me = self.comm.rank();
        let ranks = self.comm.size();
        let owner = |k: isize| -> usize {
            let plane = k.rem_euclid(m) as usize;
            partition
                .iter()
                .position(|p| p.contains(&plane))
                .expect("the partition covers every plane")
        };
        let mine = &partition[me];
        let (mut send, mut send_counts) = (Vec::new(), vec![0; ranks]);
        for (rank, count) in send_counts.iter_mut().enumerate() {
            let (first, end) = window(rank);
            for k in first..end {
                if owner(k) == me {
                    let at = k.rem_euclid(m) as usize - mine.start;
                    send.extend_from_slice(&local[at * plane_len..(at + 1) * plane_len]);
                    *count += plane_len;
                }
            }
        }
        let (first, end) = window(me);
        let mut recv_counts = vec![0; ranks];
        for k in first..end {
            recv_counts[owner(k)] += plane_len;
        }
        let mut received = vec![0.0; recv_counts.iter().sum()];
        self.comm
            .all_to_all_v(&send, &send_counts, &mut received, &recv_counts);
        // Rank r's planes arrive in window order: place them.
        let mut next: Vec<usize> = recv_counts
            .iter()
            .scan(0, |offset, &c| {
                let start = *offset;
                *offset += c;
                Some(start)
            })
            .collect();
        out.clear();
        out.reserve(received.len());
        for k in first..end {
            let r = owner(k);
            out.extend_from_slice(&received[next[r]..next[r] + plane_len]);
            next[r] += plane_len;
        }
    }

    /// The low ghost plane along z of `field` only, from the low neighbour (its last plane): what the
    /// divergence reads of w between the Crank–Nicolson solve and the projection.
    pub fn exchange_low_halo(&self, field: &mut Field) {
        let [low, high] = self.neighbours;
        if !self.is_distributed() {
            return;
        }
        let plane = field.plane_len();
        let n = field.dims[2] - 2;
        let last = field.data[n * plane..(n + 1) * plane].to_vec();
        let sends: Vec<(usize, u16, &[f64])> =
            high.map(|rank| (rank, 0, &last[..])).into_iter().collect();
        let mut receives: Vec<(usize, u16, &mut [f64])> = low
            .map(|rank| (rank, 0, &mut field.data[..plane]))
            .into_iter()
            .collect();
        self.comm.exchange(&sends, &mut receives);
    }

    /// The sum over the domain of per-plane sums: this rank's `plane_sums` (its planes in z order)
    /// gathered with the others' and added in z order, as the serial solver adds them.
    pub fn sum_of_planes(&self, plane_sums: &[f64]) -> f64 {
        if !self.is_distributed() {
            return plane_sums.iter().sum();
        }
        self.comm.all_gather_v(plane_sums).0.iter().sum()
    }

    /// The largest of every rank's `value` (NaN if any is NaN).
    pub fn max(&self, value: f64) -> f64 {
        if !self.is_distributed() {
            return value;
        }
        self.comm.max(value)
    }
}
