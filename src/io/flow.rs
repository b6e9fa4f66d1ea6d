//! fio's token-based flow control (`flow`, `flow_id`, `flow_sleep`): the jobs sharing a flow id
//! keep their I/O counts in the ratio of their weights. A worker whose share of the flow's I/Os
//! (among the workers running now) is above its weight's share waits `flow_sleep` before trying
//! again; workers that have not started or have ended do not count.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};

/// One flow id's members: each worker's weight, its I/Os, whether it is running.
#[derive(Debug)]
pub struct Flow {
    weights: Vec<u64>,
    ios: Vec<AtomicU64>,
    live: Vec<AtomicBool>,
}

/// I/Os a worker may run ahead of its share (so that members do not take turns one I/O at a
/// time).
const SLACK: u64 = 8;

impl Flow {
    pub fn new(weights: Vec<u64>) -> Flow {
        Flow {
            ios: weights.iter().map(|_| AtomicU64::new(0)).collect(),
            live: weights.iter().map(|_| AtomicBool::new(false)).collect(),
            weights,
        }
    }

    pub fn join(&self, i: usize) {
        self.live[i].store(true, Relaxed);
    }

    pub fn leave(&self, i: usize) {
        self.live[i].store(false, Relaxed);
    }

    pub fn count(&self, i: usize) {
        self.ios[i].fetch_add(1, Relaxed);
    }

    /// Whether member `i` is ahead of its weight's share of the running members' I/Os.
    pub fn ahead(&self, i: usize) -> bool {
        let (mut total, mut weights) = (0u64, 0u64);
        for j in 0..self.weights.len() {
            if self.live[j].load(Relaxed) || j == i {
                total += self.ios[j].load(Relaxed);
                weights += self.weights[j];
            }
        }
        let mine = self.ios[i].load(Relaxed) as u128;
        mine * weights as u128 > (total + SLACK) as u128 * self.weights[i] as u128
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_keep_the_ratio_of_their_weights() {
        let f = Flow::new(vec![1, 8]);
        f.join(0);
        f.join(1);
        let mut done = [0u64; 2];
        // Both try to issue in turn as fast as they can; the flow lets each go by its weight.
        for _ in 0..9000 {
            for (i, d) in done.iter_mut().enumerate() {
                if !f.ahead(i) {
                    f.count(i);
                    *d += 1;
                }
            }
        }
        let ratio = done[1] as f64 / done[0] as f64;
        assert!((7.5..8.5).contains(&ratio), "{done:?}");
        // Alone, a member is never held.
        f.leave(1);
        for _ in 0..100 {
            assert!(!f.ahead(0));
            f.count(0);
        }
    }
}
