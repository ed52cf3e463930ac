//! The separable solver of [`crate::poisson`] on a pencil decomposition: the ranks form a
//! `p_y × p_z` grid and each holds whole x lines for a block of y and a block of z unknowns (an
//! x pencil), as CaNS splits its grid with 2DECOMP&FFT.
//!
//! # Method (Costa 2018, sec. 2.3: transforms along whole lines, global transposes between them)
//!
//! 1. The x transforms of the rank's x lines (whole lines: no communication).
//! 2. A transpose within the rank's *row* (the `p_y` ranks of its z block): it receives, for its
//!    block of x slots, the y rows of the row's other ranks, so that it holds whole y lines (a y
//!    pencil).
//! 3. The y transforms of those lines.
//! 4. A transpose within the rank's *column* (the `p_z` ranks of its y block): it receives, for its
//!    block of y slots, the other ranks' z planes, so that it holds whole z lines (a z pencil).
//! 5. The tridiagonal z solves of its (x slot, y slot) modes; the singular mode of `a = 0` on the
//!    rank holding x slot 0 and y slot 0.
//! 6. Steps 4 to 1 reversed, with the inverse transforms.
//!
//! With `p_y = 1` each rank holds slabs of z planes (step 2 is local; step 4 is the one transpose of
//! [`crate::slab_solver`], with y slots split instead of x slots); with `p_z = 1` slabs of y rows.
//! Every value goes through the arithmetic of [`SeparableSolver::solve`] (the same line transforms
//! of the same lines, the same z recurrence per mode), so the result is the serial one bit for bit
//! on any process grid and any number of threads.
//!
//! # Limits
//!
//! Every rank needs at least one y and one z unknown of the x pencils, one x slot of the y pencils
//! (`p_y ≤ m0`) and one y slot of the z pencils (`p_z ≤ m1`): up to `min(m0, m1) · min(m1, m2)`
//! ranks (1,048,576 for a 1024³ grid), against `min(m0, m2)` for slabs.

use std::ops::Range;

use rayon::prelude::*;
use silt_parallel::{blocks, Comm};

use crate::poisson::{AxisKind, SeparableSolver};

/// `a·φ + b·L_h φ = f` on a pencil of x lines; see the module documentation.
#[derive(Debug)]
pub struct PencilSolver {
    solver: SeparableSolver,
    comm: Comm,
    /// The process grid `[p_y, p_z]`; rank `r` sits at `[r mod p_y, r / p_y]`.
    dims: [usize; 2],
    /// This rank's place in the process grid.
    coords: [usize; 2],
    /// The y unknowns of the x pencils of each process-grid column `a`.
    y_blocks: Vec<Range<usize>>,
    /// The z unknowns of the x and y pencils of each process-grid row `b`.
    z_blocks: Vec<Range<usize>>,
    /// The x slots of the y and z pencils of each column `a`.
    x_slots: Vec<Range<usize>>,
    /// The y slots of the z pencils of each row `b`.
    y_slots: Vec<Range<usize>>,
    /// This rank's y pencil: `j + m1·(i - X.start + |X|·(k - Z.start))`.
    y_pencil: Vec<f64>,
    /// This rank's z pencil: `(j - Y.start) + |Y|·(i - X.start + |X|·k)` (`Y` its y slots).
    z_pencil: Vec<f64>,
    /// Staging of the transposes within the row: what goes to the row's other ranks in the forward
    /// direction (and comes back from them in the inverse one), and what comes from them.
    row_out: Vec<f64>,
    row_in: Vec<f64>,
    /// Staging of the transposes within the column (both directions).
    column: Vec<f64>,
}

impl PencilSolver {
    /// Plans the solver of [`SeparableSolver::new`] for the whole grid on the process grid
    /// `dims = [p_y, p_z]` of the ranks of `comm` (`p_y · p_z` of them), with balanced blocks of y
    /// and z unknowns.
    pub fn new(
        cells: [usize; 3],
        kinds: [AxisKind; 3],
        spacing: [f64; 3],
        comm: Comm,
        dims: [usize; 2],
    ) -> Result<Self, String> {
        let shape = SeparableSolver::new(cells, kinds, spacing)?.shape();
        if dims[0] == 0 || dims[1] == 0 || dims[0] * dims[1] != comm.size() {
            return Err(format!(
                "a process grid of {} x {} does not hold the {} ranks",
                dims[0],
                dims[1],
                comm.size()
            ));
        }
        let rank = comm.rank();
        let local = [
            silt_parallel::block(shape[1], dims[0], rank % dims[0]).len(),
            silt_parallel::block(shape[2], dims[1], rank / dims[0]).len(),
        ];
        Self::with_blocks(cells, kinds, spacing, comm, dims, local)
    }

    /// As [`PencilSolver::new`], with this rank holding `local = [y unknowns, z unknowns]` of its x
    /// pencil, after those of the lower columns and rows of the process grid (a decomposition
    /// decided elsewhere, e.g. the fluid's cells). The ranks of a column must agree on the y
    /// unknowns, those of a row on the z unknowns, and every rank must hold at least one of each.
    pub fn with_blocks(
        cells: [usize; 3],
        kinds: [AxisKind; 3],
        spacing: [f64; 3],
        comm: Comm,
        dims: [usize; 2],
        local: [usize; 2],
    ) -> Result<Self, String> {
        let mut solver = SeparableSolver::new(cells, kinds, spacing)?;
        let [m0, m1, m2] = solver.shape();
        let ranks = comm.size();
        let [py, pz] = dims;
        if py == 0 || pz == 0 || py * pz != ranks {
            return Err(format!(
                "a process grid of {py} x {pz} does not hold the {ranks} ranks"
            ));
        }
        let describe =
            format!("a pencil decomposition of {m0} x {m1} x {m2} unknowns on {py} x {pz} ranks");
        if py > m0 || pz > m1 {
            return Err(format!(
                "{describe} needs one x slot per rank of a row and one y slot per rank of a \
                 column: at most {m0} x {m1} ranks"
            ));
        }
        let (counts, _) = comm.all_gather_v(&[local[0] as f64, local[1] as f64]);
        let count = |r: usize, axis: usize| counts[2 * r + axis] as usize;
        let mut y_counts = vec![0; py];
        let mut z_counts = vec![0; pz];
        for r in 0..ranks {
            let (a, b) = (r % py, r / py);
            let (ny, nz) = (count(r, 0), count(r, 1));
            if ny == 0 || nz == 0 {
                return Err(format!(
                    "{describe} needs at least one y and one z unknown per rank (rank {r} holds \
                     {ny} x {nz})"
                ));
            }
            if (b > 0 && y_counts[a] != ny) || (a > 0 && z_counts[b] != nz) {
                return Err(format!(
                    "{describe}: rank {r} holds {ny} x {nz} unknowns, unlike the other ranks of \
                     its column ({} along y) or row ({} along z)",
                    y_counts[a], z_counts[b]
                ));
            }
            y_counts[a] = ny;
            z_counts[b] = nz;
        }
        if y_counts.iter().sum::<usize>() != m1 || z_counts.iter().sum::<usize>() != m2 {
            return Err(format!(
                "{describe}: the blocks ({y_counts:?} along y, {z_counts:?} along z) do not add \
                 up to the grid's unknowns"
            ));
        }
        let y_blocks = consecutive(&y_counts);
        let z_blocks = consecutive(&z_counts);
        let x_slots = blocks(m0, py);
        let y_slots = blocks(m1, pz);
        let coords = [comm.rank() % py, comm.rank() / py];
        let [a, b] = coords;
        let (nx, ny, nz, nys) = (
            x_slots[a].len(),
            y_blocks[a].len(),
            z_blocks[b].len(),
            y_slots[b].len(),
        );
        if ranks > 1 {
            solver.restrict_to_slots(x_slots[a].clone());
        }
        let others = |n: usize, me: usize| (0..n).filter(move |&q| q != me);
        let (y_pencil, z_pencil, row_out, row_in, column) = if ranks == 1 {
            Default::default()
        } else {
            (
                vec![0.0; nx * m1 * nz],
                vec![0.0; nx * nys * m2],
                vec![0.0; others(py, a).map(|q| ny * nz * x_slots[q].len()).sum()],
                vec![0.0; others(py, a).map(|q| y_blocks[q].len() * nz * nx).sum()],
                vec![0.0; others(pz, b).map(|q| nz * nx * y_slots[q].len()).sum()],
            )
        };
        Ok(PencilSolver {
            solver,
            comm,
            dims,
            coords,
            y_blocks,
            z_blocks,
            x_slots,
            y_slots,
            y_pencil,
            z_pencil,
            row_out,
            row_in,
            column,
        })
    }

    /// The process grid `[p_y, p_z]`.
    pub fn dims(&self) -> [usize; 2] {
        self.dims
    }

    /// The y and z unknowns of this rank's x pencil (its field is `m0·|y|·|z|` values, x fastest,
    /// then y).
    pub fn local_blocks(&self) -> [Range<usize>; 2] {
        let [a, b] = self.coords;
        [self.y_blocks[a].clone(), self.z_blocks[b].clone()]
    }

    /// Every rank's y and z unknowns of its x pencil, in rank order.
    pub fn all_blocks(&self) -> Vec<[Range<usize>; 2]> {
        let py = self.dims[0];
        (0..self.comm.size())
            .map(|r| [self.y_blocks[r % py].clone(), self.z_blocks[r / py].clone()])
            .collect()
    }

    /// The unknowns per axis of the whole grid.
    pub fn shape(&self) -> [usize; 3] {
        self.solver.shape()
    }

    /// Boundary kinds per axis, as planned.
    pub fn kinds(&self) -> [AxisKind; 3] {
        self.solver.kinds()
    }

    /// Bytes held between solves: the plan and the factorisations of this rank's x slots (see
    /// [`SeparableSolver::allocated_bytes`]), the pencils and the transposes' staging.
    pub fn allocated_bytes(&self) -> usize {
        let staging = [
            &self.y_pencil,
            &self.z_pencil,
            &self.row_out,
            &self.row_in,
            &self.column,
        ];
        self.solver.allocated_bytes()
            + staging.iter().map(|v| v.capacity()).sum::<usize>() * std::mem::size_of::<f64>()
    }

    /// Solves `a·φ + b·L_h φ = f` in place on this rank's x pencil (`field`: `f` on entry, `φ` on
    /// exit), as [`SeparableSolver::solve`] does on the whole grid. Every rank calls it with the
    /// same `a` and `b`.
    ///
    /// # Panics
    /// If `field` does not hold this rank's pencil, or `a == b == 0`.
    pub fn solve(&mut self, a: f64, b: f64, field: &mut [f64]) {
        let [m0, m1, m2] = self.solver.shape();
        let [ya, zb] = self.local_blocks();
        assert_eq!(
            field.len(),
            m0 * ya.len() * zb.len(),
            "PencilSolver::solve: rank {} holds y {ya:?} and z {zb:?} of {m0}-long x lines",
            self.comm.rank()
        );
        assert!(
            a != 0.0 || b != 0.0,
            "PencilSolver::solve: a and b are both zero"
        );
        if self.comm.size() == 1 {
            self.solver.solve(a, b, field);
            return;
        }
        let singular = self.solver.is_singular(a);
        self.solver.ensure_factors(a, b, singular);
        let [py, pz] = self.dims;
        let [ca, cb] = self.coords;
        let PencilSolver {
            solver,
            comm,
            y_blocks,
            z_blocks,
            x_slots,
            y_slots,
            y_pencil,
            z_pencil,
            row_out,
            row_in,
            column,
            ..
        } = self;
        let solver = &*solver;
        let xs = x_slots[ca].clone();
        let ys = y_slots[cb].clone();
        let (nx, ny, nz, nys) = (xs.len(), ya.len(), zb.len(), ys.len());
        let row_peers: Vec<usize> = (0..py).filter(|&q| q != ca).collect();
        let column_peers: Vec<usize> = (0..pz).filter(|&q| q != cb).collect();
        let row_rank = |q: usize| q + py * cb;
        let column_rank = |q: usize| ca + py * q;
        // Per plane of this rank's z block: what each row peer gets in the forward direction
        // (its x slots of our y rows) and what it sends (our x slots of its y rows).
        let to_row: Vec<usize> = row_peers.iter().map(|&q| ny * x_slots[q].len()).collect();
        let from_row: Vec<usize> = row_peers.iter().map(|&q| y_blocks[q].len() * nx).collect();
        let to_column: Vec<usize> = column_peers
            .iter()
            .map(|&q| nx * y_slots[q].len())
            .collect();
        let own_z = zb.start * nx * nys..zb.end * nx * nys;

        // 1. x transforms of our lines; our x slots into the y pencil, the others' to send.
        field
            .par_chunks_mut(m0 * ny)
            .zip(y_pencil.par_chunks_mut(m1 * nx))
            .zip(per_plane(row_out, &to_row, nz))
            .for_each_init(
                || (solver.line_work(), vec![0.0; m0 * ny]),
                |(work, lines), ((plane, y_plane), outgoing)| {
                    solver.forward_lines(0, plane, lines, ny, work);
                    for (jl, line) in lines.chunks_exact(m0).enumerate() {
                        for (il, &v) in line[xs.clone()].iter().enumerate() {
                            y_plane[ya.start + jl + m1 * il] = v;
                        }
                    }
                    for (chunk, &q) in outgoing.into_iter().zip(&row_peers) {
                        let width = x_slots[q].len();
                        for (line, piece) in
                            lines.chunks_exact(m0).zip(chunk.chunks_exact_mut(width))
                        {
                            piece.copy_from_slice(&line[x_slots[q].clone()]);
                        }
                    }
                },
            );

        // 2. Within the row: our x slots of the other ranks' y rows.
        let row_ranks: Vec<usize> = row_peers.iter().map(|&q| row_rank(q)).collect();
        let column_ranks: Vec<usize> = column_peers.iter().map(|&q| column_rank(q)).collect();
        trade(
            comm,
            ROW_FORTH,
            labelled(whole_blocks(row_out, &to_row, nz), &row_ranks),
            labelled(whole_blocks(row_in, &from_row, nz), &row_ranks),
        );

        // 3. y transforms of whole y lines; our y slots into the z pencil, the others' to send.
        y_pencil
            .par_chunks_mut(m1 * nx)
            .zip(per_plane(row_in, &from_row, nz))
            .zip(z_pencil[own_z.clone()].par_chunks_mut(nx * nys))
            .zip(per_plane(column, &to_column, nz))
            .for_each_init(
                || (solver.line_work(), vec![0.0; m1 * nx]),
                |(work, lines), (((y_plane, incoming), z_plane), outgoing)| {
                    for (chunk, &q) in incoming.into_iter().zip(&row_peers) {
                        let rows = y_blocks[q].clone();
                        for (jl, piece) in chunk.chunks_exact(nx).enumerate() {
                            for (il, &v) in piece.iter().enumerate() {
                                y_plane[rows.start + jl + m1 * il] = v;
                            }
                        }
                    }
                    solver.forward_lines(1, y_plane, lines, nx, work);
                    for (line, piece) in lines.chunks_exact(m1).zip(z_plane.chunks_exact_mut(nys)) {
                        piece.copy_from_slice(&line[ys.clone()]);
                    }
                    for (chunk, &q) in outgoing.into_iter().zip(&column_peers) {
                        let width = y_slots[q].len();
                        for (line, piece) in
                            lines.chunks_exact(m1).zip(chunk.chunks_exact_mut(width))
                        {
                            piece.copy_from_slice(&line[y_slots[q].clone()]);
                        }
                    }
                },
            );

        // 4. Within the column: the other ranks' z planes of our y slots (whole z lines).
        trade(
            comm,
            COLUMN_FORTH,
            labelled(whole_blocks(column, &to_column, nz), &column_ranks),
            labelled(
                plane_blocks(z_pencil, z_blocks, cb, nx * nys),
                &column_ranks,
            ),
        );

        // 5. z solves; the singular (λ = 0) column is solved on its own after the sweep.
        let holds_zero_mode = singular && xs.start == 0 && ys.start == 0;
        let zero_column: Option<Vec<f64>> =
            holds_zero_mode.then(|| (0..m2).map(|k| z_pencil[k * nx * nys]).collect());
        solver.z_sweep_block(solver.current_factors(), z_pencil, xs.clone(), ys.clone());
        if let Some(column) = zero_column {
            let phi = solver.solve_zero_mode(b, column);
            for (k, v) in phi.into_iter().enumerate() {
                z_pencil[k * nx * nys] = v;
            }
        }

        // 6. Back within the column: the other ranks' planes of our z lines go to them.
        trade(
            comm,
            COLUMN_BACK,
            labelled(
                plane_blocks(z_pencil, z_blocks, cb, nx * nys),
                &column_ranks,
            ),
            labelled(whole_blocks(column, &to_column, nz), &column_ranks),
        );

        // 7. Whole spectral y lines again, inverse y transforms; our x lines' values of our x
        //    slots into the field, the others' to send.
        field
            .par_chunks_mut(m0 * ny)
            .zip(y_pencil.par_chunks_mut(m1 * nx))
            .zip(z_pencil[own_z].par_chunks(nx * nys))
            .zip(per_plane(column, &to_column, nz))
            .zip(per_plane(row_in, &from_row, nz))
            .for_each_init(
                || (solver.line_work(), vec![0.0; m1 * nx]),
                |(work, lines), ((((plane, y_plane), z_plane), incoming), outgoing)| {
                    for (line, piece) in y_plane.chunks_exact_mut(m1).zip(z_plane.chunks_exact(nys))
                    {
                        line[ys.clone()].copy_from_slice(piece);
                    }
                    for (chunk, &q) in incoming.into_iter().zip(&column_peers) {
                        let width = y_slots[q].len();
                        for (line, piece) in
                            y_plane.chunks_exact_mut(m1).zip(chunk.chunks_exact(width))
                        {
                            line[y_slots[q].clone()].copy_from_slice(piece);
                        }
                    }
                    solver.inverse_lines(1, y_plane, lines, nx, work);
                    for (il, line) in lines.chunks_exact(m1).enumerate() {
                        for (jl, &v) in line[ya.clone()].iter().enumerate() {
                            plane[jl * m0 + xs.start + il] = v;
                        }
                    }
                    for (chunk, &q) in outgoing.into_iter().zip(&row_peers) {
                        let rows = y_blocks[q].clone();
                        for (jl, piece) in chunk.chunks_exact_mut(nx).enumerate() {
                            for (il, v) in piece.iter_mut().enumerate() {
                                *v = lines[il * m1 + rows.start + jl];
                            }
                        }
                    }
                },
            );

        // 8. Back within the row: the other ranks' x slots of our y rows.
        trade(
            comm,
            ROW_BACK,
            labelled(whole_blocks(row_in, &from_row, nz), &row_ranks),
            labelled(whole_blocks(row_out, &to_row, nz), &row_ranks),
        );

        // 9. Whole spectral x lines, inverse x transforms.
        field
            .par_chunks_mut(m0 * ny)
            .zip(per_plane(row_out, &to_row, nz))
            .for_each_init(
                || (solver.line_work(), vec![0.0; m0 * ny]),
                |(work, lines), (plane, incoming)| {
                    for (chunk, &q) in incoming.into_iter().zip(&row_peers) {
                        let width = x_slots[q].len();
                        for (line, piece) in
                            plane.chunks_exact_mut(m0).zip(chunk.chunks_exact(width))
                        {
                            line[x_slots[q].clone()].copy_from_slice(piece);
                        }
                    }
                    solver.inverse_lines(0, plane, lines, ny, work);
                    plane.copy_from_slice(lines);
                },
            );
    }
}

/// Sends each `(rank, block)` of `outgoing` and fills each `(rank, block)` of `incoming` with that
/// rank's message, all under `tag`.
fn trade(
    comm: &Comm,
    tag: u16,
    outgoing: Vec<(usize, &mut [f64])>,
    incoming: Vec<(usize, &mut [f64])>,
) {
    let sends: Vec<(usize, u16, &[f64])> = outgoing.iter().map(|(r, b)| (*r, tag, &**b)).collect();
    let mut receives: Vec<(usize, u16, &mut [f64])> =
        incoming.into_iter().map(|(r, b)| (r, tag, b)).collect();
    comm.exchange(&sends, &mut receives);
}

/// Ranges of the given lengths, one after the other from 0.
fn consecutive(counts: &[usize]) -> Vec<Range<usize>> {
    let mut start = 0;
    counts
        .iter()
        .map(|&n| {
            start += n;
            start - n..start
        })
        .collect()
}

/// `buffer` holds one block per peer, one after the other, each `planes` chunks of that peer's
/// length in `lens`: the chunks of each plane, peer by peer (for work plane by plane).
fn per_plane<'a>(buffer: &'a mut [f64], lens: &[usize], planes: usize) -> Vec<Vec<&'a mut [f64]>> {
    let mut chunks: Vec<Vec<&mut [f64]>> = (0..planes)
        .map(|_| Vec::with_capacity(lens.len()))
        .collect();
    for (mut block, &len) in whole_blocks(buffer, lens, planes).into_iter().zip(lens) {
        for plane in chunks.iter_mut() {
            let (chunk, rest) = block.split_at_mut(len);
            plane.push(chunk);
            block = rest;
        }
    }
    chunks
}

/// The peers' blocks of `buffer` (see [`per_plane`]).
fn whole_blocks<'a>(
    mut buffer: &'a mut [f64],
    lens: &[usize],
    planes: usize,
) -> Vec<&'a mut [f64]> {
    let mut out = Vec::with_capacity(lens.len());
    for &len in lens {
        let (block, rest) = buffer.split_at_mut(len * planes);
        out.push(block);
        buffer = rest;
    }
    out
}

/// The blocks of z planes of the other rows of the process grid in a z pencil (`plane_len` values
/// per plane), in row order.
fn plane_blocks<'a>(
    mut pencil: &'a mut [f64],
    z_blocks: &[Range<usize>],
    me: usize,
    plane_len: usize,
) -> Vec<&'a mut [f64]> {
    let mut out = Vec::with_capacity(z_blocks.len());
    for (q, planes) in z_blocks.iter().enumerate() {
        let (block, rest) = pencil.split_at_mut(planes.len() * plane_len);
        pencil = rest;
        if q != me {
            out.push(block);
        }
    }
    out
}

/// Each block with the rank it goes to or comes from.
fn labelled<'a>(blocks: Vec<&'a mut [f64]>, ranks: &[usize]) -> Vec<(usize, &'a mut [f64])> {
    ranks.iter().copied().zip(blocks).collect()
}

/// Message tags of the transposes.
const ROW_FORTH: u16 = 0x7a11;
const COLUMN_FORTH: u16 = 0x7a12;
const COLUMN_BACK: u16 = 0x7a13;
const ROW_BACK: u16 = 0x7a14;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::structured_rhs as rhs;
    use silt_parallel::{LocalGroup, SingleRank};

    /// Solves on the process grid `dims` and reassembles the whole field from the pencils.
    fn solve_on(
        dims: [usize; 2],
        cells: [usize; 3],
        kinds: [AxisKind; 3],
        a: f64,
        b: f64,
        f: &[f64],
    ) -> Vec<f64> {
        let spacing = [0.1, 0.13, 0.07];
        let parts = LocalGroup::run(dims[0] * dims[1], |comm| {
            let mut solver = PencilSolver::new(cells, kinds, spacing, comm, dims).unwrap();
            let [m0, m1, _] = solver.shape();
            let [ys, zs] = solver.local_blocks();
            let cut = || -> Vec<f64> {
                let mut local = Vec::with_capacity(m0 * ys.len() * zs.len());
                for k in zs.clone() {
                    for j in ys.clone() {
                        let start = m0 * (j + m1 * k);
                        local.extend_from_slice(&f[start..start + m0]);
                    }
                }
                local
            };
            let mut local = cut();
            solver.solve(a, b, &mut local);
            // A second solve: the factor cache and the buffers are reused.
            let mut again = cut();
            solver.solve(a, b, &mut again);
            assert_eq!(local, again, "a second solve on {dims:?} differs");
            (ys, zs, local)
        });
        let [m0, m1, m2] = SeparableSolver::new(cells, kinds, spacing).unwrap().shape();
        let mut whole = vec![f64::NAN; m0 * m1 * m2];
        for (ys, zs, local) in parts {
            let mut lines = local.chunks_exact(m0);
            for k in zs {
                for j in ys.clone() {
                    let start = m0 * (j + m1 * k);
                    whole[start..start + m0].copy_from_slice(lines.next().unwrap());
                }
            }
        }
        whole
    }

    #[test]
    fn pencils_give_the_serial_solution_bit_for_bit() {
        use AxisKind::*;
        // Odd and even sizes, every z treatment (periodic z: Sherman–Morrison), a dense (prime
        // length) x transform, singular and regular systems.
        let cases = [
            ([12, 10, 9], [Periodic, Periodic, NeumannNeumann], 0.0, 1.0),
            (
                [12, 10, 9],
                [Periodic, Periodic, DirichletDirichlet],
                1.0,
                -0.02,
            ),
            ([9, 7, 11], [NeumannNeumann, Periodic, Periodic], 0.0, 1.0),
            (
                [10, 6, 8],
                [Periodic, NeumannNeumann, DirichletNodes],
                1.0,
                -0.01,
            ),
            (
                [7, 8, 13],
                [DirichletDirichlet, Periodic, NeumannDirichlet],
                1.0,
                -0.05,
            ),
            ([37, 5, 6], [Periodic, Periodic, NeumannNeumann], 0.0, 1.0),
        ];
        let grids = [
            [1, 1],
            [2, 1],
            [1, 2],
            [3, 1],
            [1, 3],
            [2, 2],
            [3, 2],
            [2, 3],
            [4, 1],
        ];
        for (cells, kinds, a, b) in cases {
            let mut serial_solver = SeparableSolver::new(cells, kinds, [0.1, 0.13, 0.07]).unwrap();
            let f = rhs(serial_solver.shape());
            let mut serial = f.clone();
            serial_solver.solve(a, b, &mut serial);
            for dims in grids {
                let distributed = solve_on(dims, cells, kinds, a, b, &f);
                assert!(
                    distributed == serial,
                    "{cells:?} {kinds:?} on {dims:?} ranks differs from the serial solve by {:e}",
                    distributed
                        .iter()
                        .zip(&serial)
                        .map(|(d, s)| (d - s).abs())
                        .fold(0.0, f64::max)
                );
            }
        }
    }

    #[test]
    fn each_rank_keeps_the_factors_of_its_own_x_slots() {
        let kinds = [
            AxisKind::Periodic,
            AxisKind::Periodic,
            AxisKind::NeumannNeumann,
        ];
        let cells = [32, 16, 24];
        let factors = |dims: [usize; 2]| -> Vec<usize> {
            LocalGroup::run(dims[0] * dims[1], |comm| {
                let mut solver = PencilSolver::new(cells, kinds, [1.0; 3], comm, dims).unwrap();
                let before = solver.allocated_bytes();
                let [ys, zs] = solver.local_blocks();
                let mut f = vec![1.0; 32 * ys.len() * zs.len()];
                for b in [-0.1, -0.2, -0.3] {
                    solver.solve(1.0, b, &mut f);
                }
                solver.allocated_bytes() - before
            })
        };
        let serial = factors([1, 1])[0] as f64;
        for dims in [[4, 1], [4, 2]] {
            // A row rank's share of the x slots (a periodic x pairs two slots of a wavenumber, which
            // may fall to two ranks: at most twice the share).
            for (rank, bytes) in factors(dims).into_iter().enumerate() {
                assert!(
                    (bytes as f64) <= 2.0 * serial / dims[0] as f64 + 1024.0,
                    "rank {rank} of {dims:?} holds {bytes} bytes of factors, the serial solver \
                     {serial}"
                );
            }
        }
    }

    #[test]
    fn grids_beyond_the_limits_are_refused_with_them() {
        let kinds = [
            AxisKind::Periodic,
            AxisKind::Periodic,
            AxisKind::NeumannNeumann,
        ];
        // 3 y slots cannot be split among 4 ranks of a column.
        let errors = LocalGroup::run(4, |comm| {
            PencilSolver::new([8, 3, 8], kinds, [1.0; 3], comm, [1, 4]).unwrap_err()
        });
        assert!(errors[0].contains("at most 8 x 3 ranks"), "{}", errors[0]);
        // A process grid must hold the ranks.
        let errors = LocalGroup::run(4, |comm| {
            PencilSolver::new([8, 8, 8], kinds, [1.0; 3], comm, [3, 1]).unwrap_err()
        });
        assert!(
            errors[2].contains("3 x 1 does not hold the 4"),
            "{}",
            errors[2]
        );
        // Blocks must agree along a column and cover the unknowns.
        let errors = LocalGroup::run(2, |comm| {
            PencilSolver::with_blocks([8, 8, 4], kinds, [1.0; 3], comm, [1, 2], [8, 1]).unwrap_err()
        });
        assert!(errors[1].contains("do not add up"), "{}", errors[1]);
        let errors = LocalGroup::run(2, |comm| {
            let mine = [3 + comm.rank(), 4];
            PencilSolver::with_blocks([8, 8, 8], kinds, [1.0; 3], comm, [1, 2], mine).unwrap_err()
        });
        assert!(
            errors[0].contains("unlike the other ranks"),
            "{}",
            errors[0]
        );
        // Fewer z planes than rows: a rank with none.
        let errors = LocalGroup::run(3, |comm| {
            PencilSolver::new([8, 8, 2], kinds, [1.0; 3], comm, [1, 3]).unwrap_err()
        });
        assert!(
            errors[0].contains("at least one y and one z"),
            "{}",
            errors[0]
        );
        assert!(PencilSolver::new([8, 8, 4], kinds, [1.0; 3], SingleRank::comm(), [1, 1]).is_ok());
    }
}

/// The direct solver of a distributed fluid: slabs ([`crate::slab_solver::SlabSolver`], one
/// transpose each way) where every rank holds whole z planes, pencils otherwise.
#[derive(Debug)]
pub enum DecomposedSolver {
    Slabs(crate::slab_solver::SlabSolver),
    Pencils(PencilSolver),
}

impl DecomposedSolver {
    /// The solver for unknowns of which this rank holds `local = [y, z]` per x line (slabs: all y),
    /// on the process grid `dims`.
    pub fn new(
        cells: [usize; 3],
        kinds: [AxisKind; 3],
        spacing: [f64; 3],
        comm: Comm,
        dims: [usize; 2],
        local: [usize; 2],
    ) -> Result<Self, String> {
        if dims[0] == 1 {
            crate::slab_solver::SlabSolver::with_planes(cells, kinds, spacing, comm, local[1])
                .map(DecomposedSolver::Slabs)
        } else {
            PencilSolver::with_blocks(cells, kinds, spacing, comm, dims, local)
                .map(DecomposedSolver::Pencils)
        }
    }

    /// Solves `a·φ + b·L_h φ = f` in place on this rank's unknowns.
    pub fn solve(&mut self, a: f64, b: f64, field: &mut [f64]) {
        match self {
            DecomposedSolver::Slabs(s) => s.solve(a, b, field),
            DecomposedSolver::Pencils(p) => p.solve(a, b, field),
        }
    }

    /// The unknowns per axis of the whole grid.
    pub fn shape(&self) -> [usize; 3] {
        match self {
            DecomposedSolver::Slabs(s) => s.shape(),
            DecomposedSolver::Pencils(p) => p.shape(),
        }
    }

    /// Bytes held between solves.
    pub fn allocated_bytes(&self) -> usize {
        match self {
            DecomposedSolver::Slabs(s) => s.allocated_bytes(),
            DecomposedSolver::Pencils(p) => p.allocated_bytes(),
        }
    }

    /// Every rank's y and z unknowns, in rank order.
    pub fn all_blocks(&self) -> Vec<[Range<usize>; 2]> {
        match self {
            DecomposedSolver::Slabs(s) => {
                let m1 = s.shape()[1];
                s.partition().iter().map(|p| [0..m1, p.clone()]).collect()
            }
            DecomposedSolver::Pencils(p) => p.all_blocks(),
        }
    }
}
