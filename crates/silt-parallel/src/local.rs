//! Ranks as threads of one process: the decomposed algorithms run in the default build (tests,
//! comparisons with the serial run) with the same collectives as under MPI.

use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use crate::{check_counts, Comm, Communicator};

/// A group of ranks run as threads of this process.
#[derive(Debug)]
pub struct LocalGroup;

impl LocalGroup {
    /// Runs `work` on `size` ranks, one thread each, and returns their results in rank order. A rank
    /// that panics makes the others panic at their next collective (instead of waiting forever), and
    /// the first panic is passed on.
    pub fn run<T: Send>(size: usize, work: impl Fn(Comm) -> T + Sync) -> Vec<T> {
        assert!(
            size >= 1,
            "LocalGroup::run: a group needs at least one rank"
        );
        let shared = Arc::new(Shared::new(size));
        std::thread::scope(|scope| {
            let handles: Vec<_> = (0..size)
                .map(|rank| {
                    let comm = LocalComm {
                        rank,
                        shared: shared.clone(),
                    };
                    let work = &work;
                    scope.spawn(move || {
                        let _guard = FailOthersOnPanic(comm.shared.clone());
                        work(Arc::new(comm))
                    })
                })
                .collect();
            let results: Vec<std::thread::Result<T>> =
                handles.into_iter().map(|h| h.join()).collect();
            // Pass on the failing rank's own panic, not the "another rank failed" ones it caused.
            let is_secondary = |e: &Box<dyn std::any::Any + Send>| {
                e.downcast_ref::<String>()
                    .is_some_and(|m| m.starts_with(ANOTHER_RANK_FAILED))
            };
            let mut values = Vec::with_capacity(size);
            let mut panics = Vec::new();
            for result in results {
                match result {
                    Ok(v) => values.push(v),
                    Err(e) => panics.push(e),
                }
            }
            if !panics.is_empty() {
                let first = panics.iter().position(|e| !is_secondary(e)).unwrap_or(0);
                std::panic::resume_unwind(panics.swap_remove(first));
            }
            values
        })
    }
}

const ANOTHER_RANK_FAILED: &str = "another rank of the local group failed";

/// One rank of a [`LocalGroup`].
#[derive(Debug)]
pub struct LocalComm {
    rank: usize,
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    size: usize,
    state: Mutex<State>,
    turn: Condvar,
}

#[derive(Debug)]
struct State {
    arrived: usize,
    generation: u64,
    failed: bool,
    /// `[from * size + to]`: the chunk of an all-to-all on its way.
    mailbox: Vec<Option<Vec<f64>>>,
    /// Point-to-point messages on their way, by (from, to, tag).
    messages: std::collections::HashMap<(usize, usize, u16), Vec<f64>>,
}

impl Shared {
    fn new(size: usize) -> Self {
        Shared {
            size,
            state: Mutex::new(State {
                arrived: 0,
                generation: 0,
                failed: false,
                mailbox: vec![None; size * size],
                messages: std::collections::HashMap::new(),
            }),
            turn: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A rank that panicked while holding the lock has already marked the group failed.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits until every rank has arrived.
    fn barrier(&self) {
        let mut state = self.lock();
        if state.failed {
            panic!("{ANOTHER_RANK_FAILED}");
        }
        state.arrived += 1;
        if state.arrived == self.size {
            state.arrived = 0;
            state.generation += 1;
            self.turn.notify_all();
            return;
        }
        let generation = state.generation;
        while state.generation == generation && !state.failed {
            state = self.turn.wait(state).unwrap_or_else(|e| e.into_inner());
        }
        if state.failed {
            panic!("{ANOTHER_RANK_FAILED}");
        }
    }
}

struct FailOthersOnPanic(Arc<Shared>);

impl Drop for FailOthersOnPanic {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.lock().failed = true;
            self.0.turn.notify_all();
        }
    }
}

impl Communicator for LocalComm {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.shared.size
    }

    fn all_to_all_v(
        &self,
        send: &[f64],
        send_counts: &[usize],
        recv: &mut [f64],
        recv_counts: &[usize],
    ) {
        let size = self.shared.size;
        check_counts(send.len(), send_counts, size, "send");
        check_counts(recv.len(), recv_counts, size, "receive");
        {
            let mut state = self.shared.lock();
            let mut offset = 0;
            for (to, &count) in send_counts.iter().enumerate() {
                state.mailbox[self.rank * size + to] = Some(send[offset..offset + count].to_vec());
                offset += count;
            }
        }
        self.shared.barrier();
        {
            let mut state = self.shared.lock();
            let mut offset = 0;
            for (from, &count) in recv_counts.iter().enumerate() {
                let chunk = state.mailbox[from * size + self.rank]
                    .take()
                    .expect("all_to_all_v: every rank deposits before the barrier");
                assert_eq!(
                    chunk.len(),
                    count,
                    "all_to_all_v: rank {from} sent {} values to rank {}, which expected {count}",
                    chunk.len(),
                    self.rank
                );
                recv[offset..offset + count].copy_from_slice(&chunk);
                offset += count;
            }
        }
        // Nobody deposits the next exchange before everyone has taken this one.
        self.shared.barrier();
    }

    fn exchange(&self, sends: &[(usize, u16, &[f64])], receives: &mut [(usize, u16, &mut [f64])]) {
        // Through the whole group (a barrier each way): simple, and only for tests and comparisons.
        {
            let mut state = self.shared.lock();
            for (to, tag, values) in sends {
                let previous = state
                    .messages
                    .insert((self.rank, *to, *tag), values.to_vec());
                assert!(
                    previous.is_none(),
                    "exchange: two messages from rank {} to rank {to} with tag {tag}",
                    self.rank
                );
            }
        }
        self.shared.barrier();
        {
            let mut state = self.shared.lock();
            for (from, tag, buffer) in receives.iter_mut() {
                let message = state
                    .messages
                    .remove(&(*from, self.rank, *tag))
                    .unwrap_or_else(|| {
                        panic!(
                            "exchange: rank {} expects a message from rank {from} with tag {tag}, \
                             none was sent",
                            self.rank
                        )
                    });
                assert_eq!(
                    message.len(),
                    buffer.len(),
                    "exchange: rank {from} sent {} values with tag {tag} to rank {}, which expected {}",
                    message.len(),
                    self.rank,
                    buffer.len()
                );
                buffer.copy_from_slice(&message);
            }
        }
        self.shared.barrier();
    }

    fn all_gather_v(&self, local: &[f64]) -> (Vec<f64>, Vec<usize>) {
        let size = self.shared.size;
        {
            let mut state = self.shared.lock();
            state.mailbox[self.rank * size + self.rank] = Some(local.to_vec());
        }
        self.shared.barrier();
        let (mut all, mut counts) = (Vec::new(), Vec::with_capacity(size));
        {
            let state = self.shared.lock();
            for from in 0..size {
                let chunk = state.mailbox[from * size + from]
                    .as_ref()
                    .expect("all_gather_v: every rank deposits before the barrier");
                all.extend_from_slice(chunk);
                counts.push(chunk.len());
            }
        }
        self.shared.barrier();
        // Each rank clears its own slot after everyone has read it.
        self.shared.lock().mailbox[self.rank * size + self.rank] = None;
        (all, counts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_to_all_delivers_every_chunk_to_its_rank_in_rank_order() {
        for size in 1..=5 {
            let received = LocalGroup::run(size, |comm| {
                let me = comm.rank();
                // Rank r sends r + 1 copies of 100 r + to to rank `to`; a few exchanges in a row.
                let mut last = Vec::new();
                for round in 0..3 {
                    let send_counts = vec![me + 1; size];
                    let send: Vec<f64> = (0..size)
                        .flat_map(|to| std::iter::repeat_n((100 * me + to + round) as f64, me + 1))
                        .collect();
                    let recv_counts: Vec<usize> = (0..size).map(|from| from + 1).collect();
                    let mut recv = vec![0.0; recv_counts.iter().sum()];
                    comm.all_to_all_v(&send, &send_counts, &mut recv, &recv_counts);
                    last = recv;
                }
                last
            });
            for (me, recv) in received.iter().enumerate() {
                let expected: Vec<f64> = (0..size)
                    .flat_map(|from| std::iter::repeat_n((100 * from + me + 2) as f64, from + 1))
                    .collect();
                assert_eq!(recv, &expected, "rank {me} of {size}");
            }
        }
    }

    #[test]
    fn halos_go_to_the_neighbours_by_tag() {
        // A periodic ring: each rank sends its rank to both neighbours (on 2 ranks, the same one).
        for size in 1..=4 {
            let got = LocalGroup::run(size, |comm| {
                let me = comm.rank();
                let (down, up) = ((me + size - 1) % size, (me + 1) % size);
                let mine = [me as f64];
                let (mut from_down, mut from_up) = ([0.0], [0.0]);
                comm.exchange(
                    &[(down, 0, &mine[..]), (up, 1, &mine[..])],
                    &mut [(up, 0, &mut from_up[..]), (down, 1, &mut from_down[..])],
                );
                (from_down[0], from_up[0])
            });
            for (me, (down, up)) in got.into_iter().enumerate() {
                assert_eq!(down, ((me + size - 1) % size) as f64);
                assert_eq!(up, ((me + 1) % size) as f64);
            }
        }
    }

    #[test]
    fn gathers_and_reductions_are_in_rank_order() {
        let results = LocalGroup::run(4, |comm| {
            let me = comm.rank();
            let local: Vec<f64> = (0..me).map(|i| (10 * me + i) as f64).collect();
            let (all, counts) = comm.all_gather_v(&local);
            // Rank order, not arrival order: 0.1 + 0.2 + 0.3 + 1e16 - 1e16 differs if reordered.
            let terms = [1e16, 0.1, -1e16, 0.3];
            (
                all,
                counts,
                comm.sum_in_rank_order(terms[me]),
                comm.max(me as f64),
            )
        });
        for (all, counts, sum, max) in results {
            assert_eq!(counts, [0, 1, 2, 3]);
            assert_eq!(all, [10.0, 20.0, 21.0, 30.0, 31.0, 32.0]);
            assert_eq!(sum, ((1e16 + 0.1) + -1e16) + 0.3);
            assert_eq!(max, 3.0);
        }
    }

    #[test]
    fn a_failing_rank_stops_the_others_instead_of_hanging() {
        let outcome = std::panic::catch_unwind(|| {
            LocalGroup::run(3, |comm| {
                if comm.rank() == 1 {
                    panic!("rank 1 gives up");
                }
                comm.sum_in_rank_order(1.0)
            })
        });
        let message = outcome.expect_err("the group must fail");
        let text = message
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| message.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        assert_eq!(text, "rank 1 gives up");
    }

    #[test]
    #[should_panic(expected = "which expected")]
    fn mismatched_counts_are_named() {
        LocalGroup::run(2, |comm| {
            let me = comm.rank();
            // Rank 0 sends 2 values to rank 1, which expects 1.
            let send_counts = if me == 0 { vec![1, 2] } else { vec![1, 1] };
            let send = vec![0.0; send_counts.iter().sum()];
            let mut recv = vec![0.0; 2];
            comm.all_to_all_v(&send, &send_counts, &mut recv, &[1, 1]);
        });
    }
}
