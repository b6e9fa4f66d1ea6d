//! Agreements in the middle of a phase (`WorkerCtx::barrier`, `WorkerCtx::agree_max`): each
//! worker's k-th call is round k of the phase; a round ends when every worker of every rank has
//! made it (a worker that ended is not waited for), and each gets the largest value given to it.
//! A round is a barrier (IOR's and mdtest's barriers around their timers) or a barrier with a
//! maximum (the count of transfers every rank goes on to after IOR's stonewall, mdtest's -W).
//!
//! The workers of this process wait on a condition variable for the last of them. Across ranks
//! (`Across`), that last worker meets the other ranks itself when the cluster lets any thread
//! call its collectives (`Cluster::meet`: MPI's barrier, as IOR and mdtest call it, microseconds);
//! else the pool's coordinator thread (the only one that talks to the other ranks) hands the
//! round to the cluster and its answer back (`pump`; a round trip through rank 0's coordinator
//! thread, milliseconds on a busy machine).

use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

use super::cluster::{Ask, Meet};
use super::Cluster;
use crate::stop::StopReason;

/// How long a worker waiting in a round stays ready (yielding) before it sleeps.
const SPIN: Duration = Duration::from_millis(20);

/// Who settles a round that every worker of this process has made.
#[derive(Clone, Copy)]
pub enum Across<'a> {
    /// One process: the round is settled at once.
    Alone,
    /// Several ranks: the coordinator's thread asks the cluster (`pump`).
    Coordinator,
    /// Several ranks: the last worker to arrive meets the others through the cluster's
    /// collectives.
    Workers(&'a dyn Meet),
}

impl<'a> Across<'a> {
    /// Who settles the rounds of `cluster`'s phases.
    pub fn of(cluster: &'a dyn Cluster) -> Across<'a> {
        match (cluster.rank().many(), cluster.meet()) {
            (false, _) => Across::Alone,
            (true, None) => Across::Coordinator,
            (true, Some(m)) => Across::Workers(m),
        }
    }
}

#[derive(Debug, Default, Clone, Copy)]
struct Round {
    /// The largest value given so far, and whether any worker asked for it.
    max: u64,
    ask: Option<Ask>,
    /// Handed to the cluster (several ranks).
    sent: bool,
    /// The answer: every participant's largest value.
    result: Option<u64>,
}

#[derive(Debug)]
struct State {
    /// Per worker: the rounds it made, and whether it has ended.
    calls: Vec<u32>,
    ended: Vec<bool>,
    rounds: Vec<Round>,
    /// Workers asleep on the condition variable: only they need waking (a wake is a system
    /// call on the way out of every barrier, inside IOR's and mdtest's timers).
    sleeping: usize,
}

/// The rounds of one phase.
pub struct Rounds<'a> {
    state: Mutex<State>,
    cv: Condvar,
    across: Across<'a>,
}

impl<'a> Rounds<'a> {
    pub fn new(workers: usize, across: Across<'a>) -> Rounds<'a> {
        Rounds {
            state: Mutex::new(State {
                calls: vec![0; workers],
                ended: vec![false; workers],
                rounds: Vec::new(),
                sleeping: 0,
            }),
            cv: Condvar::new(),
            across,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Worker `index` gives `value` to its next round and waits for the round's maximum (a
    /// barrier's: `value` back when it asks for none).
    pub fn agree(&self, index: usize, ask: Ask, value: u64) -> Result<u64, StopReason> {
        let mut s = self.lock();
        let k = s.calls[index] as usize;
        s.calls[index] += 1;
        if s.rounds.len() <= k {
            s.rounds.resize(k + 1, Round::default());
        }
        let r = &mut s.rounds[k];
        r.max = r.max.max(value);
        r.ask = r.ask.max(Some(ask));
        s = self.settle(s)?;
        if matches!(self.across, Across::Coordinator) {
            // The coordinator's thread, idle between looks, hands the round on at once.
            self.cv.notify_all();
        }
        // The ranks should leave together, as they leave MPI's barrier: the worker yields its
        // CPU but stays ready for a while (a thread put to sleep wakes late on a busy machine),
        // then sleeps.
        let since = std::time::Instant::now();
        loop {
            if let Some(v) = s.rounds[k].result {
                return Ok(v);
            }
            if let Some(why) = crate::stop::requested() {
                return Err(why);
            }
            if since.elapsed() < SPIN {
                drop(s);
                std::thread::yield_now();
                s = self.lock();
                continue;
            }
            s.sleeping += 1;
            s = self
                .cv
                .wait_timeout(s, Duration::from_millis(50))
                .unwrap_or_else(|e| e.into_inner())
                .0;
            s.sleeping -= 1;
        }
    }

    /// Worker `index` has ended: no round waits for it.
    pub fn ended(&self, index: usize) {
        let mut s = self.lock();
        s.ended[index] = true;
        // A stop ends the others' waits as well.
        drop(self.settle(s));
    }

    /// Whether every worker of this process made round `k` (or ended).
    fn here(s: &State, k: usize) -> bool {
        s.calls
            .iter()
            .zip(&s.ended)
            .all(|(c, e)| *c as usize > k || *e)
    }

    /// Settles, in order, each round every worker here has made: at once in one process; by
    /// meeting the other ranks on this thread when the workers do (the lock is let go while
    /// it waits); the coordinator's thread does it otherwise.
    fn settle<'s>(
        &'s self,
        mut s: MutexGuard<'s, State>,
    ) -> Result<MutexGuard<'s, State>, StopReason> {
        for k in 0..s.rounds.len() {
            let r = s.rounds[k];
            if r.result.is_some() {
                continue;
            }
            if r.sent || !Self::here(&s, k) {
                break;
            }
            match self.across {
                Across::Alone => s.rounds[k].result = Some(r.max),
                Across::Coordinator => break,
                Across::Workers(meet) => {
                    s.rounds[k].sent = true;
                    drop(s);
                    let got = meet.meet(r.ask.unwrap_or(Ask::Barrier), r.max);
                    s = self.lock();
                    s.rounds[k].result = Some(got?);
                }
            }
            if s.sleeping > 0 {
                self.cv.notify_all();
            }
        }
        Ok(s)
    }

    /// Whether a round is open here that the coordinator's thread settles: a worker waits for
    /// its answer (the coordinator's thread then polls the cluster closely, so that the ranks
    /// leave a barrier together).
    pub fn open(&self) -> bool {
        // Only the coordinator's rounds: the others' state is not locked (a worker holds it
        // around each round).
        matches!(self.across, Across::Coordinator) && self.open_in(&self.lock())
    }

    /// The coordinator's thread between looks: up to `d`, or until a worker opens a round it
    /// settles.
    pub fn idle(&self, d: Duration) {
        match self.across {
            // It has nothing to hand on: it sleeps apart, so that no round wakes it.
            Across::Workers(_) | Across::Alone => {
                std::thread::sleep(d);
            }
            Across::Coordinator => {
                let s = self.lock();
                if !self.open_in(&s) {
                    drop(self.cv.wait_timeout(s, d));
                }
            }
        }
    }

    fn open_in(&self, s: &State) -> bool {
        matches!(self.across, Across::Coordinator) && s.rounds.iter().any(|r| r.result.is_none())
    }

    /// Several ranks, on the coordinator's thread: hands the cluster every round this process's
    /// workers have all made, and passes its answers on.
    pub fn pump(&self, cluster: &dyn Cluster) {
        if !matches!(self.across, Across::Coordinator) {
            return;
        }
        let mut s = self.lock();
        for k in 0..s.rounds.len() {
            if s.rounds[k].result.is_some() {
                continue;
            }
            let mine = match (s.rounds[k].sent, Self::here(&s, k)) {
                (false, true) => Some(s.rounds[k].max),
                (false, false) => return,
                (true, _) => None,
            };
            s.rounds[k].sent = true;
            match cluster.max_across(k as u32, mine) {
                Some(v) => {
                    s.rounds[k].result = Some(v);
                    self.cv.notify_all();
                }
                None => return,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_process_answers_a_round_when_every_worker_made_it_or_ended() {
        let r = Rounds::new(3, Across::Alone);
        std::thread::scope(|s| {
            let a = s.spawn(|| r.agree(0, Ask::Max, 5));
            let b = s.spawn(|| r.agree(1, Ask::Max, 9));
            std::thread::sleep(Duration::from_millis(30));
            assert!(!a.is_finished(), "worker 2 has not made round 0");
            r.ended(2);
            assert_eq!(a.join().unwrap(), Ok(9));
            assert_eq!(b.join().unwrap(), Ok(9));
        });
        // The next round: worker 2 is gone, the other two agree.
        std::thread::scope(|s| {
            let a = s.spawn(|| r.agree(0, Ask::Max, 1));
            assert_eq!(r.agree(1, Ask::Max, 2), Ok(2));
            assert_eq!(a.join().unwrap(), Ok(2));
        });
    }

    struct Max(Mutex<Vec<Option<u64>>>);

    impl Cluster for Max {
        fn barrier(&self, _what: &str) -> Result<(), crate::frame::RunError> {
            Ok(())
        }
        fn reduce(
            &self,
            m: crate::frame::Merged,
        ) -> Result<crate::frame::Merged, crate::frame::RunError> {
            Ok(m)
        }
        /// Another rank gave 7 to every round.
        fn max_across(&self, round: u32, mine: Option<u64>) -> Option<u64> {
            let mut v = self.0.lock().unwrap();
            if let Some(m) = mine {
                v.resize(round as usize + 1, None);
                v[round as usize] = Some(m.max(7));
            }
            v.get(round as usize).copied().flatten()
        }
    }

    #[test]
    fn several_ranks_are_asked_once_every_worker_here_made_the_round() {
        let r = Rounds::new(2, Across::Coordinator);
        let c = Max(Mutex::new(Vec::new()));
        std::thread::scope(|s| {
            let a = s.spawn(|| r.agree(0, Ask::Max, 3));
            std::thread::sleep(Duration::from_millis(20));
            r.pump(&c);
            assert!(c.0.lock().unwrap().is_empty(), "worker 1 has not come");
            let b = s.spawn(|| r.agree(1, Ask::Max, 11));
            while !(a.is_finished() && b.is_finished()) {
                r.pump(&c);
                std::thread::sleep(Duration::from_millis(2));
            }
            assert_eq!(a.join().unwrap(), Ok(11));
            assert_eq!(b.join().unwrap(), Ok(11));
        });
        std::thread::scope(|s| {
            let a = s.spawn(|| r.agree(0, Ask::Max, 1));
            let b = s.spawn(|| r.agree(1, Ask::Max, 2));
            while !(a.is_finished() && b.is_finished()) {
                r.pump(&c);
                std::thread::sleep(Duration::from_millis(2));
            }
            assert_eq!(a.join().unwrap(), Ok(7), "the other rank's was larger");
            let _ = b.join();
        });
    }

    /// The other ranks, met from a worker's thread: each call is one collective.
    struct Collective(Mutex<Vec<(Ask, u64)>>);

    impl Meet for Collective {
        fn meet(&self, ask: Ask, value: u64) -> Result<u64, StopReason> {
            self.0.lock().unwrap().push((ask, value));
            Ok(match ask {
                Ask::Barrier => value,
                Ask::Max => value.max(7),
            })
        }
    }

    #[test]
    fn the_last_worker_here_meets_the_other_ranks_once_per_round() {
        let c = Collective(Mutex::new(Vec::new()));
        let r = Rounds::new(2, Across::Workers(&c));
        std::thread::scope(|s| {
            let a = s.spawn(|| r.agree(0, Ask::Max, 3));
            std::thread::sleep(Duration::from_millis(20));
            assert!(c.0.lock().unwrap().is_empty(), "worker 1 has not come");
            assert_eq!(r.agree(1, Ask::Max, 2), Ok(7), "another rank gave 7");
            assert_eq!(a.join().unwrap(), Ok(7));
        });
        std::thread::scope(|s| {
            let a = s.spawn(|| r.agree(0, Ask::Barrier, 0));
            assert_eq!(r.agree(1, Ask::Barrier, 0), Ok(0));
            assert_eq!(a.join().unwrap(), Ok(0));
        });
        // A worker that ended is not waited for: the other meets the ranks alone.
        r.ended(1);
        assert_eq!(r.agree(0, Ask::Barrier, 0), Ok(0));
        assert_eq!(
            *c.0.lock().unwrap(),
            vec![(Ask::Max, 3), (Ask::Barrier, 0), (Ask::Barrier, 0)],
            "one collective per round, with this process's largest value"
        );
        assert!(!r.open(), "no round waits for the coordinator's thread");
    }
}
