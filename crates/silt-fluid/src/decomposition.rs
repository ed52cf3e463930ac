//! The fluid's grid split among the ranks of a distributed run. The ranks form a `p_y × p_z`
//! process grid (rank `r` at `[r mod p_y, r / p_y]`) and each holds a block of whole x lines: a
//! balanced block of y rows and of z planes of cells (an x pencil; `p_y = 1` gives slabs of whole z
//! planes), with one ghost layer on each side that comes from the neighbouring rank (halo exchange)
//! where the block does not end at a boundary of the domain.
//!
//! A rank's fields are fields of its own grid (its cells along y and z, offset by the cells of the
//! blocks below), so the stencils of the serial solver run on them unchanged. The velocity faces
//! normal to y or z between two blocks belong to the lower one (the high face of its last cell).
//! Sums over the domain are sums of per-row sums, chained along y within each plane and the planes'
//! sums along z, the order of the serial solver, so they are the same numbers on any number of
//! ranks (and threads).

use std::ops::Range;

use silt_parallel::{block, Comm, SingleRank};

use crate::boundary::{Boundaries, Boundary};
use crate::grid::{Field, Grid};

/// The planes of cells per rank below which a distributed fluid splits y as well as z (pencils
/// instead of slabs; the fluid scenes' rule, [`Decomposition::process_grid`]). A slab of 2 or 3
/// planes sends more halo values per step than it holds (11 layers per stage); the projection of
/// `silt bench mpi` puts the crossing between 2 and 16 planes per rank for a 1024^3 channel.
pub const MIN_SLAB_PLANES: usize = 4;

/// This rank's block of the grid, its boundaries and its neighbours.
#[derive(Clone, Debug)]
pub struct Decomposition {
    comm: Comm,
    global: Grid,
    /// The process grid `[p_y, p_z]`.
    dims: [usize; 2],
    /// Global cell indices along y (0-based) of every rank's block, in rank order.
    rows: Vec<Range<usize>>,
    /// Global cell indices along z (0-based) of every rank's block, in rank order.
    slabs: Vec<Range<usize>>,
    local: Grid,
    /// This rank's faces: the domain's, with `Neighbour` between blocks.
    boundaries: Boundaries,
    /// The ranks beyond the low and the high face of this block along each axis (None: the domain's
    /// own face, or the axis is not split).
    neighbours: [[Option<usize>; 2]; 3],
}

impl Decomposition {
    /// The whole grid on one rank.
    pub fn serial(grid: Grid, boundaries: Boundaries) -> Self {
        Decomposition {
            comm: SingleRank::comm(),
            global: grid,
            dims: [1, 1],
            rows: std::iter::once(0..grid.cells[1]).collect(),
            slabs: std::iter::once(0..grid.cells[2]).collect(),
            local: grid,
            boundaries,
            neighbours: [[None; 2]; 3],
        }
    }

    /// Balanced slabs of z planes on the ranks of `comm` (the process grid `1 × N`).
    pub fn slabs(grid: Grid, boundaries: Boundaries, comm: Comm) -> Result<Self, String> {
        let ranks = comm.size();
        Self::pencils(grid, boundaries, comm, [1, ranks])
    }

    /// Balanced blocks of y rows and z planes on the process grid `dims = [p_y, p_z]` of the ranks
    /// of `comm`.
    pub fn pencils(
        grid: Grid,
        boundaries: Boundaries,
        comm: Comm,
        dims: [usize; 2],
    ) -> Result<Self, String> {
        let ranks = comm.size();
        let [py, pz] = dims;
        if py == 0 || pz == 0 || py * pz != ranks {
            return Err(format!(
                "a process grid of {py} x {pz} does not hold the {ranks} ranks"
            ));
        }
        if ranks == 1 {
            return Ok(Decomposition {
                comm,
                ..Self::serial(grid, boundaries)
            });
        }
        let [n0, n1, n2] = grid.cells;
        if n2 < 2 * pz {
            return Err(format!(
                "the fluid's {n2} cells along z cannot be split among {pz} ranks (a block needs \
                 at least 2 planes of cells): use at most {} ranks along z",
                n2 / 2
            ));
        }
        if n1 < 2 * py {
            return Err(format!(
                "the fluid's {n1} cells along y cannot be split among {py} ranks (a block needs \
                 at least 2 rows of cells): use at most {} ranks along y",
                n1 / 2
            ));
        }
        if n0 < py || n1 < pz {
            return Err(format!(
                "the fluid's {n0} x {n1} cells along x and y cannot be split among {py} x {pz} \
                 ranks for the pressure solver's y and z lines: use at most {n0} ranks along y \
                 and {n1} along z"
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
        let rows: Vec<Range<usize>> = (0..ranks).map(|r| block(n1, py, r % py)).collect();
        let slabs: Vec<Range<usize>> = (0..ranks).map(|r| block(n2, pz, r / py)).collect();
        let mut local = grid;
        local.cells[1] = rows[me].len();
        local.offset[1] = rows[me].start;
        local.cells[2] = slabs[me].len();
        local.offset[2] = slabs[me].start;
        let [a, b] = [me % py, me / py];
        let mut neighbours = [[None; 2]; 3];
        let mut own = boundaries;
        for (axis, parts, at, rank_of) in [
            (
                1,
                py,
                a,
                Box::new(|q: usize| q + py * b) as Box<dyn Fn(usize) -> usize>,
            ),
            (2, pz, b, Box::new(|q: usize| a + py * q)),
        ] {
            if parts == 1 {
                continue;
            }
            let periodic = boundaries.is_periodic(axis);
            neighbours[axis] = [
                (at > 0 || periodic).then(|| rank_of((at + parts - 1) % parts)),
                (at + 1 < parts || periodic).then(|| rank_of((at + 1) % parts)),
            ];
            for side in 0..2 {
                if neighbours[axis][side].is_some() {
                    own.faces[axis][side] = Boundary::Neighbour;
                }
            }
        }
        Ok(Decomposition {
            comm,
            global: grid,
            dims,
            rows,
            slabs,
            local,
            boundaries: own,
            neighbours,
        })
    }

    /// A process grid `[p_y, p_z]` for `ranks` ranks on a grid of `cells`: slabs of z planes while
    /// every rank keeps at least `min_planes` planes, else the most even split of the ranks between
    /// y and z that the cells allow (None if none does).
    pub fn process_grid(ranks: usize, cells: [usize; 3], min_planes: usize) -> Option<[usize; 2]> {
        if cells[2] >= min_planes.max(2) * ranks && cells[0] >= ranks {
            return Some([1, ranks]);
        }
        Self::most_even_process_grid(ranks, cells)
    }

    /// The most even split `[p_y, p_z]` of `ranks` between y and z that the cells allow (fewer ranks
    /// along y on a tie), if any.
    fn most_even_process_grid(ranks: usize, cells: [usize; 3]) -> Option<[usize; 2]> {
        let fits = |[py, pz]: [usize; 2]| {
            cells[2] >= 2 * pz && cells[1] >= 2 * py && cells[0] >= py && cells[1] >= pz
        };
        (1..=ranks)
            .filter(|&py| ranks.is_multiple_of(py))
            .map(|py| [py, ranks / py])
            .filter(|&d| fits(d))
            .min_by_key(|&[py, pz]| (py.max(pz) - py.min(pz), py))
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

    /// Every rank's block of cells along z, in rank order.
    pub fn all_slabs(&self) -> &[Range<usize>] {
        &self.slabs
    }

    /// Every rank's block of cells along y, in rank order.
    pub fn all_rows(&self) -> &[Range<usize>] {
        &self.rows
    }

    /// The process grid `[p_y, p_z]`.
    pub fn dims(&self) -> [usize; 2] {
        self.dims
    }

    /// Whether every rank holds whole z planes (`p_y = 1`).
    pub fn is_slabs(&self) -> bool {
        self.dims[0] == 1
    }

    /// This rank's grid: its cells along y and z, offset by the cells of the blocks below.
    pub fn local_grid(&self) -> &Grid {
        &self.local
    }

    /// This rank's faces (`Neighbour` between blocks).
    pub fn boundaries(&self) -> &Boundaries {
        &self.boundaries
    }

    /// Global cell indices along z (0-based) of this rank's block.
    pub fn slab(&self) -> Range<usize> {
        self.slabs[self.comm.rank()].clone()
    }

    /// Global cell indices along y (0-based) of this rank's block.
    pub fn rows(&self) -> Range<usize> {
        self.rows[self.comm.rank()].clone()
    }

    /// The ghost layers of `fields` from the neighbouring ranks: first the ghost rows along y (each
    /// block's first and last rows of every plane, ghost planes included, x ghosts included), then
    /// the ghost planes along z (whole planes, the y ghosts just received included), so that edges
    /// and corners agree with the serial fill. Nothing to do on one rank.
    pub fn exchange_halos(&self, fields: &mut [&mut Field]) {
        if !self.is_distributed() {
            return;
        }
        self.exchange_rows(fields, [true, true]);
        self.exchange_planes(fields, [true, true]);
    }

    /// The ghost rows along y of `fields` (`sides`: the low and the high ghost row).
    fn exchange_rows(&self, fields: &mut [&mut Field], sides: [bool; 2]) {
        let [low, high] = self.neighbours[1];
        if low.is_none() && high.is_none() {
            return;
        }
        // Rows `j` of every plane, x ghosts included.
        let row_of = |field: &Field, j: usize| -> Vec<f64> {
            let row = field.dims[0];
            (0..field.dims[2])
                .flat_map(|k| field.data[field.index(0, j, k)..][..row].iter().copied())
                .collect()
        };
        let mut sends = Vec::new();
        for (f, field) in fields.iter().enumerate() {
            let n = field.dims[1] - 2;
            let tag = 2 * f as u16;
            // Our first row is the low neighbour's high ghost, our last the high neighbour's low.
            if let (Some(rank), true) = (low, sides[1]) {
                sends.push((rank, tag, row_of(field, 1)));
            }
            if let (Some(rank), true) = (high, sides[0]) {
                sends.push((rank, tag + 1, row_of(field, n)));
            }
        }
        let sends: Vec<(usize, u16, &[f64])> = sends
            .iter()
            .map(|(rank, tag, values)| (*rank, *tag, &values[..]))
            .collect();
        let mut received: Vec<(usize, u16, Vec<f64>)> = Vec::new();
        for (f, field) in fields.iter().enumerate() {
            let len = field.dims[0] * field.dims[2];
            let tag = 2 * f as u16;
            if let (Some(rank), true) = (low, sides[0]) {
                received.push((rank, tag + 1, vec![0.0; len]));
            }
            if let (Some(rank), true) = (high, sides[1]) {
                received.push((rank, tag, vec![0.0; len]));
            }
        }
        {
            let mut receives: Vec<(usize, u16, &mut [f64])> = received
                .iter_mut()
                .map(|(rank, tag, values)| (*rank, *tag, &mut values[..]))
                .collect();
            self.comm.exchange(&sends, &mut receives);
        }
        let mut received = received.into_iter();
        for field in fields.iter_mut() {
            let n = field.dims[1] - 2;
            for (side, ghost) in [(0, 0), (1, n + 1)] {
                if self.neighbours[1][side].is_none() || !sides[side] {
                    continue;
                }
                let (_, _, values) = received.next().expect("one message per ghost row");
                let row = field.dims[0];
                for (k, piece) in values.chunks_exact(row).enumerate() {
                    let at = field.index(0, ghost, k);
                    field.data[at..at + row].copy_from_slice(piece);
                }
            }
        }
    }

    /// The ghost planes along z of `fields` (`sides`: the low and the high ghost plane): each
    /// block's first and last planes, whole.
    fn exchange_planes(&self, fields: &mut [&mut Field], sides: [bool; 2]) {
        let [low, high] = self.neighbours[2];
        if low.is_none() && high.is_none() {
            return;
        }
        let mut sends = Vec::new();
        for (f, field) in fields.iter().enumerate() {
            let plane = field.plane_len();
            let n = field.dims[2] - 2;
            let tag = 2 * f as u16;
            // Our first plane is the low neighbour's high ghost, our last the high neighbour's low.
            if let (Some(rank), true) = (low, sides[1]) {
                sends.push((rank, tag, &field.data[plane..2 * plane]));
            }
            if let (Some(rank), true) = (high, sides[0]) {
                sends.push((rank, tag + 1, &field.data[n * plane..(n + 1) * plane]));
            }
        }
        let sends: Vec<(usize, u16, Vec<f64>)> = sends
            .into_iter()
            .map(|(rank, tag, values)| (rank, tag, values.to_vec()))
            .collect();
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
            if let (Some(rank), true) = (low, sides[0]) {
                receives.push((rank, tag + 1, below));
            }
            if let (Some(rank), true) = (high, sides[1]) {
                receives.push((rank, tag, above));
            }
        }
        self.comm.exchange(&sends, &mut receives);
    }

    /// The rows `window(rank)` (`[(first row, end), (first plane, end)]` in the unwrapped numbering
    /// of y and z: `j` stands for `j mod m1` on a periodic axis) of a compact array of rows of
    /// `row_len` values split among the ranks by `blocks` (each rank's `[y rows, z planes]` on the
    /// process grid; this rank holds `local`, its rows x fastest then y), gathered for every rank in
    /// one exchange: this rank's window, row by row (y, then z). Every rank calls it with the same
    /// `blocks` and `window`.
    pub fn gather_box(
        &self,
        blocks: &[[Range<usize>; 2]],
        row_len: usize,
        local: &[f64],
        window: &dyn Fn(usize) -> [(isize, isize); 2],
    ) -> Vec<f64> {
        let me = self.comm.rank();
        let [(j0, j1), (k0, k1)] = window(me);
        let rows = (j1 - j0) as usize;
        let mut out = vec![0.0; rows * (k1 - k0) as usize * row_len];
        // This rank's rows wherever the window holds them (a window along a periodic axis may hold
        // a row more than once).
        let extent = |axis: usize| blocks.iter().map(|b| b[axis].end).max().unwrap_or(0) as isize;
        let (m1, m2) = (extent(0), extent(1));
        let [own_rows, own_planes] = &blocks[me];
        let mut at = 0;
        for k in k0..k1 {
            let k = k.rem_euclid(m2) as usize;
            for j in j0..j1 {
                let j = j.rem_euclid(m1) as usize;
                if own_rows.contains(&j) && own_planes.contains(&k) {
                    let from =
                        (j - own_rows.start + own_rows.len() * (k - own_planes.start)) * row_len;
                    out[at..at + row_len].copy_from_slice(&local[from..from + row_len]);
                }
                at += row_len;
            }
        }
        self.fill_window(blocks, row_len, window, &mut out);
        out
    }

    /// The rows of this rank's window (`window(me)`, as in [`Decomposition::gather_box`]) that other
    /// ranks hold, from them, into `target` (the window's rows, y then z); this rank's own rows are
    /// read from `target` (where it keeps them, at every place its window holds them) for the others'
    /// windows and left as they are. One exchange; every rank calls it with the same `blocks` and
    /// `window`.
    pub fn fill_window(
        &self,
        blocks: &[[Range<usize>; 2]],
        row_len: usize,
        window: &dyn Fn(usize) -> [(isize, isize); 2],
        target: &mut [f64],
    ) {
        self.fill_window_part(blocks, row_len, window, window(self.comm.rank()), target);
    }

    /// [`Decomposition::fill_window`] of the rows `needed(rank)` only (each rank's a part of its
    /// window, in the same unwrapped numbering): `target` holds this rank's window `held`.
    pub fn fill_window_part(
        &self,
        blocks: &[[Range<usize>; 2]],
        row_len: usize,
        needed: &dyn Fn(usize) -> [(isize, isize); 2],
        held: [(isize, isize); 2],
        target: &mut [f64],
    ) {
        let extent = |axis: usize| blocks.iter().map(|b| b[axis].end).max().unwrap_or(0) as isize;
        let (m1, m2) = (extent(0), extent(1));
        let me = self.comm.rank();
        let ranks = self.comm.size();
        let py = self.dims[0];
        debug_assert_eq!(blocks.len(), ranks);
        // The owner of a row: its block of rows among the process grid's first row of ranks, its
        // block of planes among the first column's.
        let owner = |j: isize, k: isize| -> usize {
            let (j, k) = (j.rem_euclid(m1) as usize, k.rem_euclid(m2) as usize);
            let a = (0..py).position(|a| blocks[a][0].contains(&j));
            let b = (0..ranks / py).position(|b| blocks[py * b][1].contains(&k));
            a.zip(b)
                .map(|(a, b)| a + py * b)
                .expect("the blocks cover every row")
        };
        let [own_rows, own_planes] = &blocks[me];
        let mine = |j: isize, k: isize| {
            own_rows.contains(&(j.rem_euclid(m1) as usize))
                && own_planes.contains(&(k.rem_euclid(m2) as usize))
        };
        let place = window_place(blocks, held);
        let (mut send, mut send_counts) = (Vec::new(), vec![0; ranks]);
        for (rank, count) in send_counts.iter_mut().enumerate() {
            if rank == me {
                continue;
            }
            let [(j0, j1), (k0, k1)] = needed(rank);
            for k in k0..k1 {
                for j in j0..j1 {
                    if mine(j, k) {
                        let at = place(j.rem_euclid(m1) as usize, k.rem_euclid(m2) as usize);
                        send.extend_from_slice(&target[at * row_len..(at + 1) * row_len]);
                        *count += row_len;
                    }
                }
            }
        }
        // This rank's needed rows: their owners and their places in `target`.
        let [(j0, j1), (k0, k1)] = needed(me);
        let [(held_j0, held_j1), (held_k0, _)] = held;
        let held_rows = held_j1 - held_j0;
        let mut from = Vec::with_capacity(((j1 - j0) * (k1 - k0)).max(0) as usize);
        let mut recv_counts = vec![0; ranks];
        for k in k0..k1 {
            for j in j0..j1 {
                let r = owner(j, k);
                if r != me {
                    from.push((r, (j - held_j0 + held_rows * (k - held_k0)) as usize));
                    recv_counts[r] += row_len;
                }
            }
        }
        let mut received = vec![0.0; recv_counts.iter().sum()];
        self.comm
            .all_to_all_v(&send, &send_counts, &mut received, &recv_counts);
        // Rank r's rows arrive in window order: place them.
        let mut next: Vec<usize> = recv_counts
            .iter()
            .scan(0, |offset, &c| {
                let start = *offset;
                *offset += c;
                Some(start)
            })
            .collect();
        for &(r, at) in &from {
            target[at * row_len..(at + 1) * row_len]
                .copy_from_slice(&received[next[r]..next[r] + row_len]);
            next[r] += row_len;
        }
    }

    /// The low ghost layer of `field` along `axis` (1 or 2) only, from the low neighbour (its last
    /// row or plane): what the divergence reads of v and w between the Crank–Nicolson solve and the
    /// projection.
    pub fn exchange_low_halo(&self, axis: usize, field: &mut Field) {
        if !self.is_distributed() {
            return;
        }
        match axis {
            1 => self.exchange_rows(&mut [field], [true, false]),
            2 => self.exchange_planes(&mut [field], [true, false]),
            _ => panic!("exchange_low_halo: x is not split"),
        }
    }

    /// The sum over the domain of per-row sums: this rank's `row_sums` (the rows of each of its
    /// `planes` planes, in y then z order) chained along y within each plane, with the rows of the
    /// other blocks of its planes (from the ranks of its process-grid row), and the planes' sums
    /// added in z order, as the serial solver adds them. The ranks of a process-grid row pass the
    /// same `planes` (a rank holding no rows of them passes no values).
    pub fn sum_of_rows(&self, row_sums: &[f64], planes: usize) -> f64 {
        let plane_sums = self.plane_sums_of_rows(row_sums, planes, 1);
        if !self.is_distributed() {
            return plane_sums.iter().sum();
        }
        // One rank per process-grid row contributes its planes' sums.
        let first_of_row = self.comm.rank().is_multiple_of(self.dims[0]);
        let mine = if first_of_row { &plane_sums[..] } else { &[] };
        self.comm.all_gather_v(mine).0.iter().sum()
    }

    /// Per group and plane, the sum of the rows of the plane (this rank's and those of the other
    /// blocks of its process-grid row, chained in y order): `row_sums` holds `groups` groups of
    /// `planes` planes of this rank's rows (any number per plane, the same in every plane), the
    /// result `groups · planes` sums, `[group][plane]`. The same on every rank of the row.
    pub fn plane_sums_of_rows(&self, row_sums: &[f64], planes: usize, groups: usize) -> Vec<f64> {
        let py = self.dims[0];
        let me = self.comm.rank();
        let blocks: Vec<Vec<f64>> = if py == 1 {
            vec![row_sums.to_vec()]
        } else {
            // Point to point with the other ranks of the process-grid row: first how many rows
            // each holds, then the rows.
            let b = me / py;
            let peers: Vec<usize> = (0..py).map(|q| q + py * b).filter(|&r| r != me).collect();
            let length = [row_sums.len() as f64];
            let mut lengths = vec![[0.0]; peers.len()];
            {
                let sends: Vec<(usize, u16, &[f64])> =
                    peers.iter().map(|&r| (r, ROW_SUMS, &length[..])).collect();
                let mut receives: Vec<(usize, u16, &mut [f64])> = peers
                    .iter()
                    .zip(lengths.iter_mut())
                    .map(|(&r, l)| (r, ROW_SUMS, &mut l[..]))
                    .collect();
                self.comm.exchange(&sends, &mut receives);
            }
            let mut incoming: Vec<Vec<f64>> =
                lengths.iter().map(|l| vec![0.0; l[0] as usize]).collect();
            {
                let sends: Vec<(usize, u16, &[f64])> =
                    peers.iter().map(|&r| (r, ROW_SUMS + 1, row_sums)).collect();
                let mut receives: Vec<(usize, u16, &mut [f64])> = peers
                    .iter()
                    .zip(incoming.iter_mut())
                    .map(|(&r, rows)| (r, ROW_SUMS + 1, &mut rows[..]))
                    .collect();
                self.comm.exchange(&sends, &mut receives);
            }
            let mut incoming = incoming.into_iter();
            (0..py)
                .map(|q| {
                    if q + py * b == me {
                        row_sums.to_vec()
                    } else {
                        incoming.next().expect("one block per peer")
                    }
                })
                .collect()
        };
        let count = groups * planes;
        let mut sums = vec![0.0; count];
        for (slot, sum) in sums.iter_mut().enumerate() {
            for block in &blocks {
                let rows = block.len().checked_div(count).unwrap_or(0);
                for &r in &block[slot * rows..(slot + 1) * rows] {
                    *sum += r;
                }
            }
        }
        sums
    }

    /// Per layer of cells normal to `axis` over the whole domain and per quantity (`quantities` of
    /// them), the sum of this rank's and the other ranks' `line_sums`, `[layer][quantity]`, the same
    /// on every rank. `line_sums` holds, per layer of this rank's block along `axis` and quantity:
    /// along x or z, the sums of the layer's rows (x lines, or single cells along x) of each of its
    /// planes, `[layer][quantity][plane][row]`; along y, the sum of the layer's one row in each
    /// plane, `[layer][quantity][plane]`. They are added in the serial order: rows chained along y
    /// within a plane (across the blocks of the process-grid row), then the planes along z.
    pub fn layer_sums(&self, axis: usize, line_sums: &[f64], quantities: usize) -> Vec<f64> {
        let local = self.local;
        let layers = local.cells[axis];
        let planes = local.cells[2];
        let first_of_row = self.comm.rank().is_multiple_of(self.dims[0]);
        let gather = |values: Vec<f64>| {
            if self.is_distributed() {
                self.comm.all_gather_v(&values)
            } else {
                let n = values.len();
                (values, vec![n])
            }
        };
        if axis == 2 {
            // Each layer is a plane of this rank's process-grid row: its rows' sums chained across
            // the row's blocks, the planes gathered in z order from one rank per row.
            let sums = self.plane_sums_of_rows(line_sums, 1, quantities * layers);
            return gather(if first_of_row { sums } else { Vec::new() }).0;
        }
        // Layers across x or y: per layer and quantity, the sums of this rank's z planes (along x
        // chained across the blocks of the process-grid row; along y a layer's plane is one row),
        // gathered, and added block by block along z, plane by plane.
        let local_sums = if axis == 0 {
            let sums = self.plane_sums_of_rows(line_sums, planes, quantities * layers);
            if first_of_row {
                sums
            } else {
                Vec::new()
            }
        } else {
            line_sums.to_vec()
        };
        let (all, counts) = gather(local_sums);
        let global_layers = self.global.cells[axis];
        let mut sums = vec![0.0; quantities * global_layers];
        let mut offset = 0;
        for (rank, &n) in counts.iter().enumerate() {
            let chunk = &all[offset..offset + n];
            offset += n;
            if n == 0 {
                continue;
            }
            let first_layer = if axis == 1 { self.rows[rank].start } else { 0 };
            let rank_planes = self.slabs[rank].len();
            for (slot, plane_sums) in chunk.chunks_exact(rank_planes).enumerate() {
                let at = quantities * first_layer + slot;
                for &p in plane_sums {
                    sums[at] += p;
                }
            }
        }
        sums
    }

    /// The largest of every rank's `value` (NaN if any is NaN).
    pub fn max(&self, value: f64) -> f64 {
        if !self.is_distributed() {
            return value;
        }
        self.comm.max(value)
    }
}

/// Where row `j` of plane `k` (the domain's indices, wrapped) lies among the rows of a window
/// `[(first row, end), (first plane, end)]` (unwrapped, as [`Decomposition::gather_box`] takes it;
/// `blocks` give the domain's rows and planes): its index, row by row (y, then z); the first place
/// within the domain's length of the window's start where a window holds a row more than once.
fn window_place(
    blocks: &[[Range<usize>; 2]],
    [(j0, j1), (k0, _)]: [(isize, isize); 2],
) -> impl Fn(usize, usize) -> usize {
    let extent = |axis: usize| blocks.iter().map(|b| b[axis].end).max().unwrap_or(0) as isize;
    let (m1, m2) = (extent(0), extent(1));
    let rows = j1 - j0;
    move |j, k| {
        let jl = (j as isize - j0).rem_euclid(m1);
        let kl = (k as isize - k0).rem_euclid(m2);
        (jl + rows * kl) as usize
    }
}

/// Message tags of the rows' sums (lengths, then values).
const ROW_SUMS: u16 = 0x7a21;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_process_grid_is_slabs_while_they_fit_then_the_most_even_pencils() {
        let grid = Decomposition::process_grid;
        // Slabs while every rank keeps 2 planes (and the transposes one x line).
        assert_eq!(grid(1, [16, 16, 15], 2), Some([1, 1]));
        assert_eq!(grid(7, [16, 16, 15], 2), Some([1, 7]));
        // Beyond: the most even split that the rows and planes allow.
        assert_eq!(grid(8, [16, 16, 15], 2), Some([2, 4]));
        assert_eq!(grid(16, [16, 16, 15], 2), Some([4, 4]));
        assert_eq!(grid(4, [16, 13, 5], 2), Some([2, 2]));
        assert_eq!(grid(3, [16, 13, 5], 2), Some([3, 1]));
        // 512 ranks on 1024^3: slabs of 2 planes; 4,096 ranks: 64 x 64 pencils.
        assert_eq!(grid(512, [1024; 3], 2), Some([1, 512]));
        assert_eq!(grid(4096, [1024; 3], 2), Some([64, 64]));
        // The fluid scenes' rule: slabs of at least 4 planes.
        assert_eq!(grid(512, [1024; 3], MIN_SLAB_PLANES), Some([16, 32]));
        assert_eq!(grid(256, [1024; 3], MIN_SLAB_PLANES), Some([1, 256]));
        assert_eq!(grid(4, [16, 16, 15], MIN_SLAB_PLANES), Some([2, 2]));
        // A prime count beyond the slabs, and a grid too thin for any split.
        assert_eq!(grid(11, [16, 16, 15], 2), None);
        assert_eq!(grid(2, [16, 3, 3], 2), None);
    }
}
