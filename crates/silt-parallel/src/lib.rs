//! Communicators for distributed runs: what the decomposed solvers of Silt need from MPI, and nothing
//! more.
//!
//! A distributed solver holds a [`Comm`] (a shared [`Communicator`]) and calls its collectives from
//! every rank in the same order, as MPI requires. Three implementations:
//!
//! * [`SingleRank`]: one rank, every collective a copy (the serial run);
//! * [`LocalGroup`]: N ranks as N threads of one process, exchanging through shared mailboxes; the
//!   decomposed algorithms run and are tested with it in the default build, without MPI;
//! * `silt_mpi::MpiWorld` (crate silt-mpi, feature `mpi`): `MPI_COMM_WORLD` through rsmpi, for
//!   `mpirun -np N silt run` (in its own crate, so that an MPI build recompiles only it and `silt`).
//!
//! # Determinism
//!
//! The collectives move data; they never combine it. Reductions are done by the caller on gathered
//! partial values in rank order ([`Communicator::sum_in_rank_order`]), so a result depends on the
//! decomposition only where the caller's own order of operations does.

use std::ops::Range;
use std::sync::Arc;

mod local;

pub use local::{LocalComm, LocalGroup};

/// The collectives of a group of ranks. Every rank calls each collective, in the same order.
pub trait Communicator: Send + Sync + std::fmt::Debug {
    /// This rank, `0..size()`.
    fn rank(&self) -> usize;

    /// Number of ranks.
    fn size(&self) -> usize;

    /// All-to-all with counts per rank (MPI_Alltoallv): `send` holds the chunks for ranks `0, 1, ...`
    /// one after the other (`send_counts[r]` values for rank `r`); `recv` receives the chunks from
    /// ranks `0, 1, ...` in the same way (`recv_counts[r]` values from rank `r`).
    ///
    /// # Panics
    /// If the counts do not add up to the buffer lengths, or a rank sends a chunk of another length
    /// than its receiver expects.
    fn all_to_all_v(
        &self,
        send: &[f64],
        send_counts: &[usize],
        recv: &mut [f64],
        recv_counts: &[usize],
    );

    /// Point-to-point exchange (halos): sends each `(rank, tag, values)` of `sends` and fills each
    /// `(rank, tag, buffer)` of `receives` with the message of that rank and tag, whose length must be
    /// the buffer's. Only the ranks named take part; a rank may send to and receive from itself.
    fn exchange(&self, sends: &[(usize, u16, &[f64])], receives: &mut [(usize, u16, &mut [f64])]);

    /// Gathers every rank's `local` on every rank, concatenated in rank order (MPI_Allgatherv), with
    /// the length each rank contributed.
    fn all_gather_v(&self, local: &[f64]) -> (Vec<f64>, Vec<usize>);

    /// The sum of one value per rank, added in rank order (the same on every rank, whatever the
    /// timing).
    fn sum_in_rank_order(&self, value: f64) -> f64 {
        self.all_gather_v(&[value]).0.iter().sum()
    }

    /// The largest of one value per rank (NaN if any rank's is NaN).
    fn max(&self, value: f64) -> f64 {
        self.all_gather_v(&[value])
            .0
            .iter()
            .fold(f64::NEG_INFINITY, |m, &v| {
                if m.is_nan() || v.is_nan() {
                    f64::NAN
                } else {
                    m.max(v)
                }
            })
    }
}

/// A communicator shared by the solvers of one rank.
pub type Comm = Arc<dyn Communicator>;

/// One rank: the serial run.
#[derive(Clone, Copy, Debug, Default)]
pub struct SingleRank;

impl SingleRank {
    /// The serial communicator, shared.
    pub fn comm() -> Comm {
        Arc::new(SingleRank)
    }
}

impl Communicator for SingleRank {
    fn rank(&self) -> usize {
        0
    }

    fn size(&self) -> usize {
        1
    }

    fn all_to_all_v(
        &self,
        send: &[f64],
        send_counts: &[usize],
        recv: &mut [f64],
        recv_counts: &[usize],
    ) {
        check_counts(send.len(), send_counts, 1, "send");
        check_counts(recv.len(), recv_counts, 1, "receive");
        assert_eq!(
            send_counts[0], recv_counts[0],
            "all_to_all_v: rank 0 sends {} values to itself and expects {}",
            send_counts[0], recv_counts[0]
        );
        recv.copy_from_slice(send);
    }

    fn exchange(&self, sends: &[(usize, u16, &[f64])], receives: &mut [(usize, u16, &mut [f64])]) {
        for (from, tag, buffer) in receives.iter_mut() {
            assert_eq!(*from, 0, "exchange: rank 0 of 1 receives from rank {from}");
            let message = sends
                .iter()
                .find(|(to, t, _)| *to == 0 && t == tag)
                .unwrap_or_else(|| panic!("exchange: no message with tag {tag} to receive"));
            assert_eq!(
                message.2.len(),
                buffer.len(),
                "exchange: a message of {} values for a buffer of {}",
                message.2.len(),
                buffer.len()
            );
            buffer.copy_from_slice(message.2);
        }
    }

    fn all_gather_v(&self, local: &[f64]) -> (Vec<f64>, Vec<usize>) {
        (local.to_vec(), vec![local.len()])
    }
}

/// Panics unless `counts` has one entry per rank adding up to `len`.
pub fn check_counts(len: usize, counts: &[usize], size: usize, what: &str) {
    assert_eq!(
        counts.len(),
        size,
        "all_to_all_v: {} {what} counts for {size} ranks",
        counts.len()
    );
    let total: usize = counts.iter().sum();
    assert_eq!(
        total, len,
        "all_to_all_v: the {what} counts add up to {total}, the buffer holds {len}"
    );
}

/// The block of `0..n` that part `part` of `parts` owns: contiguous blocks in part order, the first
/// `n % parts` one longer than the others (a balanced 1D decomposition).
pub fn block(n: usize, parts: usize, part: usize) -> Range<usize> {
    assert!(part < parts, "block: part {part} of {parts}");
    let base = n / parts;
    let extra = n % parts;
    let start = part * base + part.min(extra);
    let len = base + usize::from(part < extra);
    start..start + len
}

/// The blocks of `0..n` of every part (see [`block`]).
pub fn blocks(n: usize, parts: usize) -> Vec<Range<usize>> {
    (0..parts).map(|p| block(n, parts, p)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_cover_the_range_once_in_order_and_balanced() {
        for n in [0, 1, 2, 7, 64, 97] {
            for parts in 1..=9 {
                let b = blocks(n, parts);
                assert_eq!(b[0].start, 0);
                assert_eq!(b[parts - 1].end, n);
                for w in b.windows(2) {
                    assert_eq!(w[0].end, w[1].start);
                }
                let lens: Vec<usize> = b.iter().map(|r| r.len()).collect();
                let (lo, hi) = (lens.iter().min().unwrap(), lens.iter().max().unwrap());
                assert!(hi - lo <= 1, "n {n} parts {parts}: {lens:?}");
            }
        }
    }

    #[test]
    fn a_single_rank_copies() {
        let comm = SingleRank;
        let mut recv = vec![0.0; 3];
        comm.all_to_all_v(&[1.0, 2.0, 3.0], &[3], &mut recv, &[3]);
        assert_eq!(recv, [1.0, 2.0, 3.0]);
        assert_eq!(comm.sum_in_rank_order(2.5), 2.5);
        assert_eq!(comm.max(-1.0), -1.0);
    }
}
