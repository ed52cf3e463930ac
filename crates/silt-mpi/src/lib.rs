//! `MPI_COMM_WORLD` through rsmpi as a [`silt_parallel::Communicator`] (cargo feature `mpi`; without
//! it this crate is empty, so that the workspace builds without MPI).
#![cfg(feature = "mpi")]

use std::sync::Arc;

use mpi::datatype::{Partition, PartitionMut};
use mpi::topology::{Communicator as _, SimpleCommunicator};
use mpi::traits::*;
use mpi::Count;

use silt_parallel::{check_counts, Comm, Communicator};

/// The ranks of `mpirun -np N`: `MPI_COMM_WORLD`. Only the thread that initialised MPI calls it
/// (rayon's workers never do), so MPI runs with `MPI_THREAD_FUNNELED`.
#[derive(Clone, Copy, Debug)]
pub struct MpiWorld {
    rank: usize,
    size: usize,
}

/// MPI stays initialised while this lives; dropping it finalises MPI.
pub type MpiUniverse = mpi::environment::Universe;

impl MpiWorld {
    /// Initialises MPI and returns the guard that finalises it when dropped, with the world
    /// communicator; None if MPI was initialised already.
    pub fn initialize() -> Option<(MpiUniverse, Comm)> {
        let (universe, _threading) = mpi::initialize_with_threading(mpi::Threading::Funneled)?;
        let world = universe.world();
        let comm = MpiWorld {
            rank: world.rank() as usize,
            size: world.size() as usize,
        };
        Some((universe, Arc::new(comm)))
    }

    fn world(&self) -> SimpleCommunicator {
        SimpleCommunicator::world()
    }
}

/// MPI counts and displacements are C ints.
fn mpi_counts(counts: &[usize]) -> (Vec<Count>, Vec<Count>) {
    let to_count = |v: usize| {
        Count::try_from(v).unwrap_or_else(|_| {
            panic!("MPI exchange of {v} values: more than an MPI count can hold (use more ranks)")
        })
    };
    let mut displacements = Vec::with_capacity(counts.len());
    let mut offset = 0usize;
    for &c in counts {
        displacements.push(to_count(offset));
        offset += c;
    }
    (counts.iter().map(|&c| to_count(c)).collect(), displacements)
}

impl Communicator for MpiWorld {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.size
    }

    fn all_to_all_v(
        &self,
        send: &[f64],
        send_counts: &[usize],
        recv: &mut [f64],
        recv_counts: &[usize],
    ) {
        check_counts(send.len(), send_counts, self.size, "send");
        check_counts(recv.len(), recv_counts, self.size, "receive");
        let (sc, sd) = mpi_counts(send_counts);
        let (rc, rd) = mpi_counts(recv_counts);
        let send = Partition::new(send, sc, sd);
        let mut recv = PartitionMut::new(recv, rc, rd);
        self.world().all_to_all_varcount_into(&send, &mut recv);
    }

    fn exchange(&self, sends: &[(usize, u16, &[f64])], receives: &mut [(usize, u16, &mut [f64])]) {
        let world = self.world();
        mpi::request::scope(|scope| {
            let mut requests = Vec::with_capacity(sends.len() + receives.len());
            for (from, tag, buffer) in receives.iter_mut() {
                requests.push(
                    world
                        .process_at_rank(*from as i32)
                        .immediate_receive_into_with_tag(scope, &mut **buffer, i32::from(*tag)),
                );
            }
            for (to, tag, values) in sends {
                requests.push(world.process_at_rank(*to as i32).immediate_send_with_tag(
                    scope,
                    *values,
                    i32::from(*tag),
                ));
            }
            for request in requests {
                request.wait();
            }
        });
    }

    fn all_gather_v(&self, local: &[f64]) -> (Vec<f64>, Vec<usize>) {
        let world = self.world();
        let mine = Count::try_from(local.len()).expect("all_gather_v: too many values");
        let mut counts: Vec<Count> = vec![0; self.size];
        world.all_gather_into(&mine, &mut counts[..]);
        let counts: Vec<usize> = counts.iter().map(|&c| c as usize).collect();
        let (rc, rd) = mpi_counts(&counts);
        let mut all = vec![0.0; counts.iter().sum()];
        {
            let mut recv = PartitionMut::new(&mut all[..], rc, rd);
            world.all_gather_varcount_into(local, &mut recv);
        }
        (all, counts)
    }
}
