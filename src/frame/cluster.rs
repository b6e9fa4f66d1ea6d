//! The barrier and the reduction around every phase, behind one small interface. One process is
//! `Local`; a multi-rank mode implements the same two calls over MPI (MPI_Barrier, and adding
//! histograms and counters across ranks).

use super::Merged;

pub trait Cluster: Sync {
    /// Returns when every participant is ready to start the phase.
    fn barrier(&self);
    /// Combines this participant's merged figures with every other participant's.
    fn reduce(&self, local: Merged) -> Merged;
}

/// One process: the barrier is immediate and the reduction is the identity.
pub struct Local;

impl Cluster for Local {
    fn barrier(&self) {}

    fn reduce(&self, local: Merged) -> Merged {
        local
    }
}
