//! fio's latency_target: the loop looks for the deepest queue at which the share
//! latency_percentile of I/Os completes within latency_target, judging each depth over
//! latency_window (fio's lat_target_* functions of io_u.c, same steps): it starts at depth 1,
//! doubles while a window meets the target, bisects between the last depth that met it and the
//! first that did not, and once the depth stops changing runs one more window at it with its
//! figures started afresh (the job's result is at that depth), then ends (unless latency_run,
//! which keeps adjusting until the job's runtime or size ends it). With latency_percentile=100
//! a single I/O over the target steps down at once; at depth 1 that fails the job, as in fio
//! (below 100, a window short of the share at depth 1 keeps the search at 1).

use super::clock::Ns;
use crate::plan::job::per_io::LatencyTarget;

pub struct Probe {
    /// The target in ns, and the rest of the plan (window, share, whether to keep adjusting).
    target_ns: u64,
    plan: LatencyTarget,
    depths: Depths,
    /// The window open now: when it began, its I/Os and those over the target.
    window: (Ns, u64, u64),
    phase: Phase,
    /// Wait for every I/O in flight to complete before issuing more (fio's io_u_quiesce).
    quiesce: bool,
    /// The depth the search settled on or was at when it last moved (none before).
    reported: Option<u32>,
}

/// The search's depths: the one now, the highest that has not failed, the lowest that failed,
/// the largest allowed, and the windows in a row just under `high`.
struct Depths {
    qd: usize,
    low: usize,
    high: usize,
    max: usize,
    stable: u32,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    Searching,
    /// Running the last window at the depth found.
    LastWindow,
}

/// What a completion tells the loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Go,
    /// The depth is found: the job's figures start afresh (fio's reset_all_stats).
    Restart,
    /// The last window at the depth found is done: the job ends.
    End,
    /// Over the target at depth 1 with latency_percentile=100 (fio's lat_fatal): the job
    /// fails, the I/O's and the target's latencies in ns.
    Fail {
        took: u64,
        target: u64,
    },
}

impl Probe {
    pub fn new(t: &LatencyTarget, iodepth: usize, now: Ns) -> Probe {
        Probe {
            target_ns: t.target.as_nanos() as u64,
            plan: t.clone(),
            depths: Depths {
                qd: 1,
                low: 1,
                high: iodepth.max(1),
                max: iodepth.max(1),
                stable: 0,
            },
            window: (now, 0, 0),
            phase: Phase::Searching,
            quiesce: false,
            reported: None,
        }
    }

    /// The depth latency_target's search settled on (or was at when the job ended).
    pub fn found(&self) -> Option<u32> {
        self.reported
    }

    /// The most I/Os in flight now, `busy` being in flight: the depth the search is at (none
    /// while it waits for the queue to drain).
    #[inline]
    pub fn depth(&mut self, busy: usize) -> usize {
        if self.quiesce {
            if busy > 0 {
                return 0;
            }
            self.quiesce = false;
        }
        self.depths.qd
    }

    /// One completed I/O's latency: steps the depth as fio does.
    #[inline]
    pub fn on_done(&mut self, ns: u64, now: Ns) -> Verdict {
        self.window.1 += 1;
        if ns > self.target_ns {
            if self.plan.percentile >= 100.0 {
                let stepped = self.step_down(now);
                self.reported = Some(self.depths.qd as u32);
                if !stepped {
                    return Verdict::Fail {
                        took: ns,
                        target: self.target_ns,
                    };
                }
                return Verdict::Go;
            }
            self.window.2 += 1;
        }
        let (start, ios, failed) = self.window;
        if now.since(start) < self.plan.window.as_nanos() as u64 {
            return Verdict::Go;
        }
        let ok = 100.0 * (ios - failed) as f64 / ios as f64;
        let v = if ok < self.plan.percentile {
            // At depth 1 a window short of the share changes nothing (as fio's
            // lat_target_check): the search stays at 1 until the job ends.
            self.step_down(now);
            Verdict::Go
        } else {
            match self.step_up(now) {
                Some(true) => Verdict::Restart,
                Some(false) => Verdict::End,
                None => Verdict::Go,
            }
        };
        self.reported = Some(self.depths.qd as u32);
        v
    }

    /// An I/O over the target: step down (false at depth 1: the target cannot be met).
    fn step_down(&mut self, now: Ns) -> bool {
        let d = &mut self.depths;
        if d.qd == 1 {
            return false;
        }
        d.high = d.qd;
        if d.qd == d.low {
            d.low -= 1;
        }
        d.qd = (d.qd + d.low) / 2;
        d.stable = 0;
        self.quiesce = true;
        self.window = (now, 0, 0);
        true
    }

    /// A window that met the target: step up; Some(true) when the depth is found and its last
    /// window is to start afresh, Some(false) when that window is done (the job ends).
    fn step_up(&mut self, now: Ns) -> Option<bool> {
        let d = &mut self.depths;
        let qd = d.qd;
        d.low = qd;
        if qd + 1 == d.high {
            d.stable += 1;
            if d.stable >= 3 {
                d.high += 1;
                d.stable = 0;
            }
        }
        d.qd = if d.high != d.max {
            (qd + d.high) / 2
        } else {
            qd * 2
        }
        .min(d.max);
        let mut found = None;
        if !self.plan.run && d.qd == qd {
            found = Some(self.phase == Phase::Searching);
            if self.phase == Phase::Searching {
                self.quiesce = true;
                self.phase = Phase::LastWindow;
            }
        }
        self.window = (now, 0, 0);
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn probe(target_us: u64, pct: f64, iodepth: usize) -> (Probe, Ns) {
        let t = LatencyTarget {
            target: Duration::from_micros(target_us),
            window: Duration::from_millis(10),
            percentile: pct,
            run: false,
        };
        let now = Ns(1_000_000);
        (Probe::new(&t, iodepth, now), now)
    }

    /// A device whose I/Os take 100 us per I/O in flight, against a 650 us target: depths up to
    /// 6 meet it. The search doubles from 1, bisects after 8 misses, settles on 6, runs one last
    /// window at it with the figures started afresh, and ends.
    #[test]
    fn the_search_doubles_bisects_and_settles_on_the_deepest_depth_that_meets_the_target() {
        let (mut p, mut now) = probe(650, 100.0, 32);
        let mut seen = Vec::new();
        let mut verdicts = Vec::new();
        for _ in 0..10_000 {
            let qd = p.depth(0);
            seen.push(qd);
            now = now.after(Duration::from_millis(11));
            let v = p.on_done(100_000 * qd as u64, now);
            if v != Verdict::Go {
                verdicts.push(v);
            }
            if v == Verdict::End {
                break;
            }
        }
        assert_eq!(verdicts, [Verdict::Restart, Verdict::End]);
        assert_eq!(p.found(), Some(6));
        assert!(seen.contains(&8), "it probed past the target: {seen:?}");
    }

    #[test]
    fn over_the_target_at_depth_1_fails_as_in_fio() {
        let (mut p, now) = probe(400, 100.0, 32);
        assert_eq!(p.depth(0), 1);
        let v = p.on_done(500_000, now);
        assert_eq!(
            v,
            Verdict::Fail {
                took: 500_000,
                target: 400_000
            }
        );
        assert_eq!(p.found(), Some(1));
    }

    /// A step down waits for the queue to drain before the lower depth is used.
    #[test]
    fn a_step_down_drains_the_queue_first() {
        let (mut p, now) = probe(650, 100.0, 32);
        let later = now.after(Duration::from_millis(11));
        p.on_done(1000, later);
        assert_eq!(p.depth(1), 2);
        p.on_done(1_000_000, later);
        assert_eq!(p.depth(3), 0, "in flight: wait");
        assert_eq!(p.depth(0), 1);
    }
}
