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

/// All-to-all of messages whose lengths the receivers do not know: `outgoing[r]` goes to rank `r`;
/// returns the message from each rank, in rank order (one all-to-all of the lengths, one of the data).
pub fn all_to_all_vecs(comm: &dyn Communicator, outgoing: &[Vec<f64>]) -> Vec<Vec<f64>> {
    let size = comm.size();
    assert_eq!(
        outgoing.len(),
        size,
        "all_to_all_vecs: {} messages for {size} ranks",
        outgoing.len()
    );
    let lengths: Vec<f64> = outgoing.iter().map(|m| m.len() as f64).collect();
    let mut incoming_lengths = vec![0.0; size];
    let ones = vec![1; size];
    comm.all_to_all_v(&lengths, &ones, &mut incoming_lengths, &ones);
    let send_counts: Vec<usize> = outgoing.iter().map(Vec::len).collect();
    let recv_counts: Vec<usize> = incoming_lengths.iter().map(|&l| l as usize).collect();
    let send: Vec<f64> = outgoing.concat();
    let mut recv = vec![0.0; recv_counts.iter().sum()];
    comm.all_to_all_v(&send, &send_counts, &mut recv, &recv_counts);
    let mut messages = Vec::with_capacity(size);
    let mut rest = &recv[..];
    for count in recv_counts {
        let (message, tail) = rest.split_at(count);
        messages.push(message.to_vec());
        rest = tail;
    }
    messages
}

/// The outcome of a step every rank takes, agreed: `Err` on every rank if it failed on any, with the
/// message of the failure that `order` puts first (the lowest; ties to the lower rank), so that
/// every rank stops at the same point with the same message (a collective).
pub fn agree_on_failure(
    comm: &dyn Communicator,
    outcome: Result<(), (f64, String)>,
) -> Result<(), String> {
    if comm.size() == 1 {
        return outcome.map_err(|(_, message)| message);
    }
    let mine = match &outcome {
        Ok(()) => vec![],
        Err((order, message)) => std::iter::once(*order)
            .chain(message.bytes().map(f64::from))
            .collect(),
    };
    let (all, counts) = comm.all_gather_v(&mine);
    let mut first: Option<(f64, &[f64])> = None;
    let mut rest = &all[..];
    for count in counts {
        let (message, tail) = rest.split_at(count);
        rest = tail;
        if let Some((&order, text)) = message.split_first() {
            if first.is_none_or(|(o, _)| order < o) {
                first = Some((order, text));
            }
        }
    }
    match first {
        None => Ok(()),
        Some((_, text)) => Err(String::from_utf8_lossy(
            &text.iter().map(|&b| b as u8).collect::<Vec<u8>>(),
        )
        .into_owned()),
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
    fn messages_of_any_length_reach_their_ranks() {
        for size in 1..=4 {
            let results = LocalGroup::run(size, |comm| {
                let me = comm.rank();
                let outgoing: Vec<Vec<f64>> = (0..size)
                    .map(|to| {
                        (0..(me + 2 * to) % 3)
                            .map(|k| (100 * me + 10 * to + k) as f64)
                            .collect()
                    })
                    .collect();
                all_to_all_vecs(&*comm, &outgoing)
            });
            for (to, incoming) in results.iter().enumerate() {
                for (from, message) in incoming.iter().enumerate() {
                    let expected: Vec<f64> = (0..(from + 2 * to) % 3)
                        .map(|k| (100 * from + 10 * to + k) as f64)
                        .collect();
                    assert_eq!(message, &expected, "{from} -> {to} of {size}");
                }
            }
        }
    }

    #[test]
    fn every_rank_reports_the_first_failure() {
        let results = LocalGroup::run(3, |comm| {
            let outcome = match comm.rank() {
                0 => Ok(()),
                r => Err((10.0 - r as f64, format!("particle {} is lost", 10 - r))),
            };
            agree_on_failure(&*comm, outcome)
        });
        for r in results {
            assert_eq!(r, Err("particle 8 is lost".to_string()));
        }
        let results = LocalGroup::run(2, |comm| agree_on_failure(&*comm, Ok(())));
        assert!(results.iter().all(Result::is_ok));
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
