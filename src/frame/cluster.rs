//! The barrier and the reduction around every phase, behind one small interface. One process is
//! `Local`; the multi-rank mode (`crate::ranks`, over MPI) implements the same calls: a barrier
//! with a timeout, the cross-rank "first done" signal while the workers run, and the reduction
//! of every rank's figures on rank 0 (`frame::share`).

use super::{Merged, RunError};

/// Which participant this process is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rank {
    pub index: usize,
    pub size: usize,
}

impl Rank {
    pub const ONE: Rank = Rank { index: 0, size: 1 };

    /// More than one participant.
    pub fn many(&self) -> bool {
        self.size > 1
    }

    /// Rank 0 owns the study directory and the manifest.
    pub fn leads(&self) -> bool {
        self.index == 0
    }
}

impl Default for Rank {
    fn default() -> Rank {
        Rank::ONE
    }
}

/// How the ranks on this node share its CPUs, as the scheduler sees this process (the
/// launcher's binding). More ranks than CPUs, unbound, are placed anew in every run: three can
/// share one CPU while the fourth, done early, spins alone in a barrier on the other, and a
/// phase of milliseconds moves with the placement (docs/performance.md, "Ranks bound to cores").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Placement {
    /// One process, or no more ranks here than CPUs.
    #[default]
    Fits,
    /// More ranks than CPUs, each held to some of them.
    Bound,
    /// More ranks than CPUs, each free to run on any of them.
    Unbound { ranks: usize, cpus: usize },
}

impl Placement {
    /// From the ranks on this node, the CPUs this process may run on and the CPUs online.
    pub fn of(ranks_here: usize, allowed: usize, online: usize) -> Placement {
        match (ranks_here <= online, allowed < online) {
            (true, _) => Placement::Fits,
            (false, true) => Placement::Bound,
            (false, false) => Placement::Unbound {
                ranks: ranks_here,
                cpus: online,
            },
        }
    }

    /// What a multi-rank record says of it: only an unbound crowd is worth a word.
    pub fn note(self) -> Option<String> {
        let Placement::Unbound { ranks, cpus } = self else {
            return None;
        };
        Some(crate::store::note::make(
            crate::store::note::Kind::Placement,
            format!("{ranks} ranks share this node's {cpus} CPUs unbound: the scheduler places them anew in every run, and a phase of milliseconds moves with where it put them (bind them: mpirun --bind-to core:overload-allowed --map-by core)"),
        ))
    }
}

pub trait Cluster {
    fn rank(&self) -> Rank {
        Rank::ONE
    }
    /// Returns when every participant is ready to start `what` (a phase); an error when one is
    /// gone or a stop was requested while waiting.
    fn barrier(&self, what: &str) -> Result<(), RunError>;
    /// Called every few milliseconds on the coordinator's thread while the workers run, with
    /// `first` true once one of this process's workers has finished: returns true when every
    /// participant should take its "first done" snapshot (the fastest worker of all has
    /// finished). One process never needs it: the pool snapshots when its first worker ends.
    fn stonewall(&self, _first: bool) -> bool {
        false
    }
    /// A round of an agreement in the middle of a phase (`frame::rounds`): `mine` is this
    /// participant's largest value of round `round`, given once when all its workers made it;
    /// the largest of every participant's once all gave theirs (polled: None until then). One
    /// process answers its own rounds and never asks.
    fn max_across(&self, _round: u32, mine: Option<u64>) -> Option<u64> {
        mine
    }
    /// The collectives a worker may call from its own thread, when the transport lets any
    /// thread call them (rounds then meet the other ranks without the coordinator's thread).
    fn meet(&self) -> Option<&dyn Meet> {
        None
    }
    /// Combines this participant's merged figures with every other participant's. Rank 0 gets
    /// the aggregate (with each rank's figures in `Merged::ranks`); the others get their own.
    fn reduce(&self, local: Merged) -> Result<Merged, RunError>;
}

/// What a round of an agreement asks the participants (`frame::rounds`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Ask {
    /// That all have come (a barrier).
    Barrier,
    /// That all have come, and the largest value any gave.
    Max,
}

/// The participants' collectives as a worker's thread calls them (MPI's barrier and reduction:
/// one call per round, every participant's calls in the same order).
pub trait Meet: Sync {
    /// Returns once every participant has made its call of the same round: with `Ask::Max` the
    /// largest `value` of all, else `value`. A stop does not end the wait (MPI's barrier cannot
    /// be ended): the ranks make the same calls after a stop as before, and a wait for a rank
    /// that hangs or died is the coordinator's to end (`Cluster::stonewall` watches it).
    fn meet(&self, ask: Ask, value: u64) -> Result<u64, crate::stop::StopReason>;
}

/// One process: the barrier is immediate and the reduction is the identity.
pub struct Local;

impl Cluster for Local {
    fn barrier(&self, _what: &str) -> Result<(), RunError> {
        Ok(())
    }

    fn reduce(&self, local: Merged) -> Result<Merged, RunError> {
        Ok(local)
    }
}

#[cfg(test)]
mod tests {
    use super::Placement;

    #[test]
    fn only_more_ranks_than_cpus_left_unbound_is_a_crowd_worth_a_note() {
        // (ranks on the node, CPUs this process may use, CPUs online)
        assert_eq!(Placement::of(2, 2, 2), Placement::Fits);
        assert_eq!(Placement::of(4, 8, 8), Placement::Fits);
        assert_eq!(Placement::of(4, 1, 2), Placement::Bound);
        let crowd = Placement::of(4, 2, 2);
        assert_eq!(crowd, Placement::Unbound { ranks: 4, cpus: 2 });
        let note = crowd.note().unwrap();
        assert!(note.starts_with("placement: 4 ranks share this node's 2 CPUs unbound"));
        assert!(note.contains("--bind-to core"), "{note}");
        assert_eq!(Placement::Fits.note(), None);
        assert_eq!(Placement::Bound.note(), None);
    }
}
