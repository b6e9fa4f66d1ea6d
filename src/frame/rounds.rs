//! Agreements in the middle of a phase (`WorkerCtx::agree_max`): each worker's k-th call is
//! round k of the phase; a round ends when every worker of every rank has made it (a worker that
//! ended is not waited for), and each gets the largest value given to it. One round is a barrier
//! with a maximum: IOR's barriers between its open, transfers and close (-g) and the count of
//! transfers every rank goes on to after its stonewall (wear-out), mdtest's stonewall (-W).
//!
//! The workers wait on a condition variable; across ranks, the pool's coordinator thread (the
//! only one that talks to the other ranks) hands each round to the cluster once this process's
//! workers have all made it, and its answer back (`pump`).

use std::sync::{Condvar, Mutex};
use std::time::Duration;

use super::Cluster;
use crate::stop::StopReason;

/// How long a worker waiting in a round stays ready (yielding) before it sleeps.
const SPIN: Duration = Duration::from_millis(20);

#[derive(Debug, Default, Clone, Copy)]
struct Round {
    /// The largest value given so far.
    max: u64,
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
}

/// The rounds of one phase.
pub struct Rounds {
    state: Mutex<State>,
    cv: Condvar,
    /// Several ranks: the coordinator's thread asks the cluster; else the last worker to arrive
    /// answers.
    many: bool,
}

impl Rounds {
    pub fn new(workers: usize, many: bool) -> Rounds {
        Rounds {
            state: Mutex::new(State {
                calls: vec![0; workers],
                ended: vec![false; workers],
                rounds: Vec::new(),
            }),
            cv: Condvar::new(),
            many,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Worker `index` gives `value` to its next round and waits for the round's maximum.
    pub fn agree(&self, index: usize, value: u64) -> Result<u64, StopReason> {
        let mut s = self.lock();
        let k = s.calls[index] as usize;
        s.calls[index] += 1;
        if s.rounds.len() <= k {
            s.rounds.resize(k + 1, Round::default());
        }
        s.rounds[k].max = s.rounds[k].max.max(value);
        self.settle(&mut s);
        // The coordinator's thread, idle between looks, hands the round on at once.
        self.cv.notify_all();
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
            s = self
                .cv
                .wait_timeout(s, Duration::from_millis(50))
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// Worker `index` has ended: no round waits for it.
    pub fn ended(&self, index: usize) {
        let mut s = self.lock();
        s.ended[index] = true;
        self.settle(&mut s);
    }

    /// Whether every worker of this process made round `k` (or ended).
    fn here(s: &State, k: usize) -> bool {
        s.calls
            .iter()
            .zip(&s.ended)
            .all(|(c, e)| *c as usize > k || *e)
    }

    /// One process: a round every worker made is answered at once.
    fn settle(&self, s: &mut State) {
        if self.many {
            return;
        }
        for k in 0..s.rounds.len() {
            if s.rounds[k].result.is_none() && Self::here(s, k) {
                s.rounds[k].result = Some(s.rounds[k].max);
                self.cv.notify_all();
            }
        }
    }

    /// Whether a round is open here: a worker waits for its answer (the coordinator's thread
    /// then polls the cluster closely, so that the ranks leave a barrier together).
    pub fn open(&self) -> bool {
        let s = self.lock();
        s.rounds.iter().any(|r| r.result.is_none())
    }

    /// The coordinator's thread between looks: up to `d`, or until a worker opens a round.
    pub fn idle(&self, d: Duration) {
        let s = self.lock();
        if !s.rounds.iter().any(|r| r.result.is_none()) {
            let _ = self.cv.wait_timeout(s, d);
        }
    }

    /// Several ranks, on the coordinator's thread: hands the cluster every round this process's
    /// workers have all made, and passes its answers on.
    pub fn pump(&self, cluster: &dyn Cluster) {
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
        let r = Rounds::new(3, false);
        std::thread::scope(|s| {
            let a = s.spawn(|| r.agree(0, 5));
            let b = s.spawn(|| r.agree(1, 9));
            std::thread::sleep(Duration::from_millis(30));
            assert!(!a.is_finished(), "worker 2 has not made round 0");
            r.ended(2);
            assert_eq!(a.join().unwrap(), Ok(9));
            assert_eq!(b.join().unwrap(), Ok(9));
        });
        // The next round: worker 2 is gone, the other two agree.
        std::thread::scope(|s| {
            let a = s.spawn(|| r.agree(0, 1));
            assert_eq!(r.agree(1, 2), Ok(2));
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
        let r = Rounds::new(2, true);
        let c = Max(Mutex::new(Vec::new()));
        std::thread::scope(|s| {
            let a = s.spawn(|| r.agree(0, 3));
            std::thread::sleep(Duration::from_millis(20));
            r.pump(&c);
            assert!(c.0.lock().unwrap().is_empty(), "worker 1 has not come");
            let b = s.spawn(|| r.agree(1, 11));
            while !(a.is_finished() && b.is_finished()) {
                r.pump(&c);
                std::thread::sleep(Duration::from_millis(2));
            }
            assert_eq!(a.join().unwrap(), Ok(11));
            assert_eq!(b.join().unwrap(), Ok(11));
        });
        std::thread::scope(|s| {
            let a = s.spawn(|| r.agree(0, 1));
            let b = s.spawn(|| r.agree(1, 2));
            while !(a.is_finished() && b.is_finished()) {
                r.pump(&c);
                std::thread::sleep(Duration::from_millis(2));
            }
            assert_eq!(a.join().unwrap(), Ok(7), "the other rank's was larger");
            let _ = b.join();
        });
    }
}
