//! The collectives a worker calls from its own thread in the middle of a phase (the `mpi`
//! feature, MPI_THREAD_MULTIPLE): MPI's barrier and all-reduce, and the mark a wait in the
//! barrier leaves for the coordinator's watch (`Mpi::strand`).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::frame::cluster::{Ask, Meet};
use crate::stop::StopReason;

/// MPI's collectives over every rank, called by a worker's thread (needs MPI_THREAD_MULTIPLE:
/// the coordinator's thread sends and polls meanwhile). Each call is the world's next
/// collective; the ranks' workers make them in the same order (the rounds of a phase). The
/// barrier is MPI_Barrier, as IOR and mdtest call it: a polled one let a rank leave late, which
/// decides a phase of one call (mdtest's tree phases; docs/performance.md). Nothing ends a wait
/// in it but every rank's call, so the worker marks it: a rank still waiting there `STRANDED`
/// (mpi.rs) after a stop waits for a rank that hangs or died, and its coordinator ends it
/// (`Mpi::strand`).
pub struct Collectives {
    /// When this rank's worker entered MPI's barrier (nanoseconds after `epoch`, plus one), or 0.
    entered: AtomicU64,
    epoch: Instant,
}

impl Collectives {
    pub(super) fn new() -> Collectives {
        Collectives {
            entered: AtomicU64::new(0),
            epoch: Instant::now(),
        }
    }

    /// When a worker of this rank entered the barrier it still waits in.
    pub(super) fn waiting_since(&self) -> Option<Instant> {
        match self.entered.load(Ordering::Acquire) {
            0 => None,
            n => Some(self.epoch + Duration::from_nanos(n - 1)),
        }
    }
}

impl Meet for Collectives {
    fn meet(&self, ask: Ask, value: u64) -> Result<u64, StopReason> {
        let at = self.epoch.elapsed().as_nanos() as u64 + 1;
        self.entered.store(at, Ordering::Release);
        crate::sys::mpi::barrier();
        self.entered.store(0, Ordering::Release);
        Ok(match ask {
            Ask::Barrier => value,
            // Every rank passed the barrier and makes this call next: it cannot hang.
            Ask::Max => crate::sys::mpi::max_across(value),
        })
    }
}
