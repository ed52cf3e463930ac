//! The separable solver of [`crate::poisson`] on a slab decomposition: every rank holds whole x–y
//! planes for a block of z planes, as the fluid's unknowns are split among the ranks of a distributed
//! run.
//!
//! # Method (after CaNS, Costa 2018, with one transpose instead of its pencils' two)
//!
//! 1. The x and y transforms of each local plane (whole lines: they need no communication).
//! 2. A global transpose (all-to-all): rank `r` receives, from every rank, the spectral rows of its
//!    block of x slots for that rank's planes, so that it holds whole z lines for its x slots.
//! 3. The tridiagonal z solves of its x slots (and the singular mode on the rank holding slot 0).
//! 4. The transpose back, and the inverse transforms of each local plane.
//!
//! Every unknown goes through the same arithmetic as in the serial [`SeparableSolver::solve`] (the
//! same line transforms and the same z recurrence per mode), so the result is bit-for-bit the
//! serial one for any number of ranks and threads.
//!
//! # Limits and the upgrade path
//!
//! A slab decomposition needs at least one z plane and one x slot per rank: up to `min(m0, m2)` ranks
//! (1,024 for a 1024³ channel). A pencil decomposition (x lines, then y lines, then z lines, two
//! transposes each way, as CaNS and 2DECOMP&FFT) lifts that to `m0·m2`; it replaces steps 1-2 and 4
//! with two-stage transposes over a 2D process grid and keeps the z sweep of step 3 as it is.

use std::ops::Range;

use rayon::prelude::*;
use silt_parallel::{blocks, Comm};

use crate::poisson::{AxisKind, SeparableSolver};

/// `a·φ + b·L_h φ = f` on a slab of z planes; see the module documentation.
#[derive(Debug)]
pub struct SlabSolver {
    solver: SeparableSolver,
    comm: Comm,
    /// The z planes of every rank.
    planes: Vec<Range<usize>>,
    /// The x slots of every rank in the spectral (transposed) phase.
    slots: Vec<Range<usize>>,
    /// This rank's whole z lines of its x slots: `j + m1·(i - slots.start + slots.len()·k)`.
    lines: Vec<f64>,
    /// Staging for the transposes.
    buffer: Vec<f64>,
}

impl SlabSolver {
    /// Plans the solver of [`SeparableSolver::new`] for the whole grid and splits it among the ranks
    /// of `comm`: balanced blocks of z planes (and of x slots for the z solves).
    pub fn new(
        cells: [usize; 3],
        kinds: [AxisKind; 3],
        spacing: [f64; 3],
        comm: Comm,
    ) -> Result<Self, String> {
        let m2 = kinds[2].unknowns(cells[2]);
        let mine = silt_parallel::block(m2, comm.size(), comm.rank()).len();
        Self::with_planes(cells, kinds, spacing, comm, mine)
    }

    /// As [`SlabSolver::new`], with this rank holding the next `local_planes` z planes after those of
    /// the lower ranks (a decomposition decided elsewhere, e.g. the fluid's cells). Every rank must
    /// hold at least one plane, and the planes must add up to the grid's.
    pub fn with_planes(
        cells: [usize; 3],
        kinds: [AxisKind; 3],
        spacing: [f64; 3],
        comm: Comm,
        local_planes: usize,
    ) -> Result<Self, String> {
        let mut solver = SeparableSolver::new(cells, kinds, spacing)?;
        let [m0, m1, m2] = solver.shape();
        let ranks = comm.size();
        if ranks > m0 {
            return Err(format!(
                "a slab decomposition of {m0} x {m1} x {m2} unknowns on {ranks} ranks needs at least \
                 one of the {m0} x lines per rank: use at most {} ranks",
                m0.min(m2)
            ));
        }
        let (counts, _) = comm.all_gather_v(&[local_planes as f64]);
        let counts: Vec<usize> = counts.iter().map(|&c| c as usize).collect();
        if counts.contains(&0) || counts.iter().sum::<usize>() != m2 {
            return Err(format!(
                "a slab decomposition of {m0} x {m1} x {m2} unknowns on {ranks} ranks needs at least \
                 one of the {m2} z planes per rank (planes per rank: {counts:?}): use at most {} ranks",
                m0.min(m2)
            ));
        }
        let mut planes = Vec::with_capacity(ranks);
        let mut start = 0;
        for count in counts {
            planes.push(start..start + count);
            start += count;
        }
        let slots = blocks(m0, ranks);
        let me = comm.rank();
        if ranks > 1 {
            solver.restrict_to_slots(slots[me].clone());
        }
        // One rank needs no transposes (`solve` is the serial solve).
        let (lines, buffer) = if ranks == 1 {
            (Vec::new(), Vec::new())
        } else {
            (
                vec![0.0; slots[me].len() * m1 * m2],
                vec![0.0; m0 * m1 * planes[me].len()],
            )
        };
        Ok(SlabSolver {
            solver,
            comm,
            planes,
            slots,
            lines,
            buffer,
        })
    }

    /// The z planes of every rank, in rank order.
    pub fn partition(&self) -> &[Range<usize>] {
        &self.planes
    }

    /// The z planes this rank holds (its field is `m0·m1·planes.len()` values, x fastest).
    pub fn local_planes(&self) -> Range<usize> {
        self.planes[self.comm.rank()].clone()
    }

    /// Boundary kinds per axis, as planned.
    pub fn kinds(&self) -> [AxisKind; 3] {
        self.solver.kinds()
    }

    /// Bytes held between solves: the plan and the factorisations of this rank's x slots (see
    /// [`SeparableSolver::allocated_bytes`]) and the transpose buffers.
    pub fn allocated_bytes(&self) -> usize {
        self.solver.allocated_bytes()
            + (self.lines.capacity() + self.buffer.capacity()) * std::mem::size_of::<f64>()
    }

    /// The unknowns per axis of the whole grid.
    pub fn shape(&self) -> [usize; 3] {
        self.solver.shape()
    }

    /// Solves `a·φ + b·L_h φ = f` in place on this rank's planes (`field`: `f` on entry, `φ` on
    /// exit), as [`SeparableSolver::solve`] does on the whole grid. Every rank calls it with the same
    /// `a` and `b`.
    ///
    /// # Panics
    /// If `field` does not hold this rank's planes.
    pub fn solve(&mut self, a: f64, b: f64, field: &mut [f64]) {
        let [m0, m1, m2] = self.solver.shape();
        let me = self.comm.rank();
        let plane_len = m0 * m1;
        let planes = self.planes[me].clone();
        let slots = self.slots[me].clone();
        assert_eq!(
            field.len(),
            plane_len * planes.len(),
            "SlabSolver::solve: rank {me} holds planes {planes:?} of {m0} x {m1} values"
        );
        assert!(
            a != 0.0 || b != 0.0,
            "SlabSolver::solve: a and b are both zero"
        );
        if self.comm.size() == 1 {
            self.solver.solve(a, b, field);
            return;
        }
        let ranks = self.comm.size();
        let singular = self.solver.is_singular(a);
        self.solver.ensure_factors(a, b, singular);
        let solver = &self.solver;

        // 1. Forward transforms of the local planes (spectral rows: y slot fastest, then x slot),
        //    each plane's rows of every rank's x slots copied out while the plane is in cache: ours
        //    straight into our z lines, the others' into their blocks of the send buffer.
        let len_of = |r: usize| self.slots[r].len() * m1;
        let rows = |r: usize| self.slots[r].start * m1..self.slots[r].end * m1;
        let line_plane = len_of(me);
        {
            let mut outgoing =
                chunks_per_plane(&mut self.buffer, &self.slots, me, m1, planes.len());
            let own_lines = self.lines[planes.start * line_plane..planes.end * line_plane]
                .chunks_exact_mut(line_plane);
            field
                .par_chunks_mut(plane_len)
                .zip(own_lines.zip(outgoing.iter_mut()).collect::<Vec<_>>())
                .for_each_init(
                    || solver.plane_work(),
                    |work, (plane, (own, others))| {
                        solver.forward_plane(plane, work);
                        own.copy_from_slice(&plane[rows(me)]);
                        for (r, chunk) in others.iter_mut() {
                            chunk.copy_from_slice(&plane[rows(*r)]);
                        }
                    },
                );
        }

        // 2. To whole z lines: every other rank's block of our x slots of its planes lands in our
        //    lines at its planes (they are in k order: the layout of `lines` directly).
        {
            let sends = send_blocks(&self.buffer, &self.slots, me, m1, planes.len());
            let mut receives = line_blocks(&mut self.lines, &self.planes, me, line_plane);
            self.comm.exchange(&sends, &mut receives);
        }

        // 3. z solves; the singular (λ = 0) column is solved on its own after the sweep.
        let zero_column: Option<Vec<f64>> = (singular && slots.start == 0)
            .then(|| (0..m2).map(|k| self.lines[k * line_plane]).collect());
        solver.z_sweep(solver.current_factors(), &mut self.lines, slots.clone());
        if let Some(column) = zero_column {
            let phi = solver.solve_zero_mode(b, column);
            for (k, v) in phi.into_iter().enumerate() {
                self.lines[k * line_plane] = v;
            }
        }

        // 4. Back to planes: every other rank's planes of our lines go to it in one block; its
        //    block of our planes arrives in the buffer.
        {
            let sends: Vec<(usize, u16, &[f64])> = (0..ranks)
                .filter(|&r| r != me)
                .map(|r| {
                    let block = &self.lines
                        [self.planes[r].start * line_plane..self.planes[r].end * line_plane];
                    (r, TRANSPOSE_BACK, block)
                })
                .collect();
            let mut receives: Vec<(usize, u16, &mut [f64])> = Vec::with_capacity(ranks - 1);
            let mut rest = &mut self.buffer[..];
            for r in (0..ranks).filter(|&r| r != me) {
                let (block, tail) = rest.split_at_mut(len_of(r) * planes.len());
                receives.push((r, TRANSPOSE_BACK, block));
                rest = tail;
            }
            self.comm.exchange(&sends, &mut receives);
        }

        // 5. Each plane's rows put back (ours from our lines, the others' from the buffer), then its
        //    inverse transforms while it is in cache.
        let mut incoming = chunks_per_plane(&mut self.buffer, &self.slots, me, m1, planes.len());
        let own_lines =
            self.lines[planes.start * line_plane..planes.end * line_plane].chunks_exact(line_plane);
        field
            .par_chunks_mut(plane_len)
            .zip(own_lines.zip(incoming.iter_mut()).collect::<Vec<_>>())
            .for_each_init(
                || solver.plane_work(),
                |work, (plane, (own, others))| {
                    plane[rows(me)].copy_from_slice(own);
                    for (r, chunk) in others.iter() {
                        plane[rows(*r)].copy_from_slice(chunk);
                    }
                    solver.inverse_plane(plane, work);
                },
            );
    }
}

/// The send buffer cut for the transposes: per local plane, per other rank `r` (in rank order), the
/// chunk of `r`'s block (`r`'s x slots of each local plane, plane after plane) that holds this
/// plane's rows.
fn chunks_per_plane<'a>(
    buffer: &'a mut [f64],
    slots: &[Range<usize>],
    me: usize,
    m1: usize,
    local_planes: usize,
) -> Vec<Vec<(usize, &'a mut [f64])>> {
    let mut per_plane: Vec<Vec<(usize, &mut [f64])>> = (0..local_planes)
        .map(|_| Vec::with_capacity(slots.len()))
        .collect();
    let mut rest = buffer;
    for (r, slot_block) in slots.iter().enumerate() {
        if r == me {
            continue;
        }
        let len = slot_block.len() * m1;
        let (block, tail) = rest.split_at_mut(len * local_planes);
        rest = tail;
        for (plane, chunk) in per_plane.iter_mut().zip(block.chunks_exact_mut(len)) {
            plane.push((r, chunk));
        }
    }
    per_plane
}

/// The forward transpose's messages: each other rank's block of the send buffer.
fn send_blocks<'a>(
    buffer: &'a [f64],
    slots: &[Range<usize>],
    me: usize,
    m1: usize,
    local_planes: usize,
) -> Vec<(usize, u16, &'a [f64])> {
    let mut sends = Vec::with_capacity(slots.len());
    let mut rest = buffer;
    for (r, slot_block) in slots.iter().enumerate() {
        if r == me {
            continue;
        }
        let (block, tail) = rest.split_at(slot_block.len() * m1 * local_planes);
        sends.push((r, TRANSPOSE_FORTH, block));
        rest = tail;
    }
    sends
}

/// The forward transpose's receptions: each other rank's planes of this rank's z lines.
fn line_blocks<'a>(
    lines: &'a mut [f64],
    planes: &[Range<usize>],
    me: usize,
    line_plane: usize,
) -> Vec<(usize, u16, &'a mut [f64])> {
    let mut receives = Vec::with_capacity(planes.len());
    let mut rest = lines;
    for (r, block_planes) in planes.iter().enumerate() {
        let (block, tail) = rest.split_at_mut(block_planes.len() * line_plane);
        rest = tail;
        if r != me {
            receives.push((r, TRANSPOSE_FORTH, block));
        }
    }
    receives
}

/// Message tags of the two transposes.
const TRANSPOSE_FORTH: u16 = 0x7a01;
const TRANSPOSE_BACK: u16 = 0x7a02;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::structured_rhs as rhs;
    use silt_parallel::{LocalGroup, SingleRank};

    /// Solves on `ranks` ranks and reassembles the planes in z order.
    fn solve_on(
        ranks: usize,
        cells: [usize; 3],
        kinds: [AxisKind; 3],
        a: f64,
        b: f64,
        f: &[f64],
    ) -> Vec<f64> {
        let spacing = [0.1, 0.13, 0.07];
        let parts = LocalGroup::run(ranks, |comm| {
            let mut solver = SlabSolver::new(cells, kinds, spacing, comm).unwrap();
            let [m0, m1, _] = solver.shape();
            let planes = solver.local_planes();
            let mut local = f[planes.start * m0 * m1..planes.end * m0 * m1].to_vec();
            // Twice, with two (a, b): the factor cache and the buffers are reused.
            solver.solve(a, b, &mut local);
            let mut again = f[planes.start * m0 * m1..planes.end * m0 * m1].to_vec();
            solver.solve(a, b, &mut again);
            assert_eq!(
                local,
                again,
                "a second solve on rank {} differs",
                solver.comm.rank()
            );
            local
        });
        parts.concat()
    }

    #[test]
    fn slabs_give_the_serial_solution_bit_for_bit() {
        use AxisKind::*;
        // Odd and even sizes, x periodic or bounded, every z treatment (periodic z: Sherman–Morrison).
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
        ];
        for (cells, kinds, a, b) in cases {
            let mut serial_solver = SeparableSolver::new(cells, kinds, [0.1, 0.13, 0.07]).unwrap();
            let f = rhs(serial_solver.shape());
            let mut serial = f.clone();
            serial_solver.solve(a, b, &mut serial);
            for ranks in 1..=4 {
                let distributed = solve_on(ranks, cells, kinds, a, b, &f);
                assert!(
                    distributed == serial,
                    "{cells:?} {kinds:?} on {ranks} ranks differs from the serial solve by {:e}",
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
    fn each_rank_keeps_the_factors_of_its_own_modes() {
        let kinds = [
            AxisKind::Periodic,
            AxisKind::Periodic,
            AxisKind::NeumannNeumann,
        ];
        let cells = [32, 16, 24];
        let factors = |ranks: usize| -> Vec<usize> {
            LocalGroup::run(ranks, |comm| {
                let mut solver = SlabSolver::new(cells, kinds, [1.0; 3], comm).unwrap();
                let before = solver.allocated_bytes();
                let planes = solver.local_planes();
                let mut f = vec![1.0; 32 * 16 * planes.len()];
                for b in [-0.1, -0.2, -0.3] {
                    solver.solve(1.0, b, &mut f);
                }
                solver.allocated_bytes() - before
            })
        };
        let serial = factors(1)[0] as f64;
        for ranks in [4, 8] {
            // A rank's share of the x slots; a periodic x pairs the cosine and sine slots of a
            // wavenumber, which may fall to two ranks: at most twice the share.
            for (rank, bytes) in factors(ranks).into_iter().enumerate() {
                assert!(
                    (bytes as f64) <= 2.0 * serial / ranks as f64 + 1024.0,
                    "rank {rank} of {ranks} holds {bytes} bytes of factors, the serial solver \
                     {serial}"
                );
            }
        }
    }

    #[test]
    fn more_ranks_than_planes_is_refused_with_the_limit() {
        let kinds = [
            AxisKind::Periodic,
            AxisKind::Periodic,
            AxisKind::NeumannNeumann,
        ];
        let errors = LocalGroup::run(5, |comm| {
            SlabSolver::new([8, 8, 4], kinds, [1.0; 3], comm).unwrap_err()
        });
        assert!(errors[0].contains("use at most 4 ranks"), "{}", errors[0]);
        // A given split must cover the planes.
        let errors = LocalGroup::run(2, |comm| {
            SlabSolver::with_planes([8, 8, 4], kinds, [1.0; 3], comm, 1).unwrap_err()
        });
        assert!(
            errors[1].contains("planes per rank: [1, 1]"),
            "{}",
            errors[1]
        );
        assert!(SlabSolver::new([8, 8, 4], kinds, [1.0; 3], SingleRank::comm()).is_ok());
    }
}
