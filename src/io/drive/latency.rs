//! fio's latency_target: the loop looks for the deepest queue at which the share
//! latency_percentile of I/Os completes within latency_target, judging each depth over
//! latency_window (fio's lat_target_* functions of io_u.c, same steps): it starts at depth 1,
//! doubles while a window meets the target, bisects between the last depth that met it and the
//! first that did not, and once the depth stops changing runs one more window at it with its
//! figures started afresh (the job's result is at that depth), then ends (unless latency_run,
//! which keeps adjusting until the job's runtime or size ends it). With latency_percentile=100
//! a single I/O over the target steps down at once; at depth 1 that fails the job, as in fio
//! (below 100, a window short of the share at depth 1 keeps the search at 1).

use std::time::{Duration, Instant};

use super::Driver;
use crate::plan::issue::LatencyTarget;

pub(super) struct Probe {
    target_ns: u64,
    window: Duration,
    pct: f64,
    run: bool,
    max: usize,
    /// The depth now, the highest that has not failed, the lowest that failed.
    pub qd: usize,
    low: usize,
    high: usize,
    stable: u32,
    /// Running the last window at the depth found.
    end_run: bool,
    cycle: Instant,
    ios: u64,
    failed: u64,
    /// Wait for every I/O in flight to complete before issuing more (fio's io_u_quiesce).
    pub quiesce: bool,
}

impl Probe {
    pub fn new(t: &LatencyTarget, iodepth: usize, now: Instant) -> Probe {
        Probe {
            target_ns: t.target.as_nanos() as u64,
            window: t.window,
            pct: t.percentile,
            run: t.run,
            max: iodepth.max(1),
            qd: 1,
            low: 1,
            high: iodepth.max(1),
            stable: 0,
            end_run: false,
            cycle: now,
            ios: 0,
            failed: 0,
            quiesce: false,
        }
    }

    fn new_cycle(&mut self, now: Instant) {
        (self.cycle, self.ios, self.failed) = (now, 0, 0);
    }

    /// An I/O over the target: step down (false at depth 1: the target cannot be met).
    fn step_down(&mut self, now: Instant) -> bool {
        if self.qd == 1 {
            return false;
        }
        self.high = self.qd;
        if self.qd == self.low {
            self.low -= 1;
        }
        self.qd = (self.qd + self.low) / 2;
        self.stable = 0;
        self.quiesce = true;
        self.new_cycle(now);
        true
    }

    /// A window that met the target: step up; Some(true) when the depth is found and its last
    /// window is to start afresh, Some(false) when that window is done (the job ends).
    fn step_up(&mut self, now: Instant) -> Option<bool> {
        let qd = self.qd;
        self.low = qd;
        if qd + 1 == self.high {
            self.stable += 1;
            if self.stable >= 3 {
                self.high += 1;
                self.stable = 0;
            }
        }
        self.qd = if self.high != self.max {
            (qd + self.high) / 2
        } else {
            qd * 2
        }
        .min(self.max);
        let mut found = None;
        if !self.run && self.qd == qd {
            found = Some(!self.end_run);
            if !self.end_run {
                self.quiesce = true;
                self.end_run = true;
            }
        }
        self.new_cycle(now);
        found
    }
}

impl Driver<'_> {
    /// One completed I/O's latency, for the probe: steps the depth as fio does.
    #[inline]
    pub(super) fn probe(&mut self, ns: u64, now: Instant) {
        let Some(pr) = self.issue.probe.as_mut() else {
            return;
        };
        pr.ios += 1;
        if ns > pr.target_ns {
            if pr.pct >= 100.0 {
                let (stepped, qd) = (pr.step_down(now), pr.qd as u32);
                self.st.issued.latency_qd = Some(qd);
                if !stepped {
                    self.over_target(ns);
                }
                return;
            }
            pr.failed += 1;
        }
        if now.duration_since(pr.cycle) < pr.window {
            return;
        }
        let ok = 100.0 * (pr.ios - pr.failed) as f64 / pr.ios as f64;
        if ok < pr.pct {
            // At depth 1 a window short of the share changes nothing (as fio's
            // lat_target_check): the search stays at 1 until the job ends.
            pr.step_down(now);
        } else {
            match pr.step_up(now) {
                Some(true) => self.restart_figures(now),
                Some(false) => self.issuing = false,
                None => {}
            }
        }
        self.st.issued.latency_qd = self.issue.probe.as_ref().map(|p| p.qd as u32);
    }

    /// fio's lat_fatal: over the target at depth 1.
    fn over_target(&mut self, ns: u64) {
        let target = self.issue.probe.as_ref().map_or(0, |p| p.target_ns);
        self.st.fail(super::super::Failure {
            op: "latency_target".into(),
            errno: Some("ETIMEDOUT".into()),
            message: format!(
                "an I/O took {} us at queue depth 1, over latency_target's {} us: the target cannot be met",
                ns / 1000,
                target / 1000
            ),
            ..Default::default()
        });
        self.issuing = false;
    }

    /// The depth is found: the job's figures start again, so that they are the found depth's
    /// alone (fio's reset_all_stats).
    fn restart_figures(&mut self, now: Instant) {
        let st = &mut self.st;
        for h in [
            &mut st.lat,
            &mut st.read_lat,
            &mut st.write_lat,
            &mut st.issued.trim_lat,
        ] {
            h.reset();
        }
        (st.reads, st.writes, st.issued.trims) = (0, 0, 0);
        (st.read_bytes, st.write_bytes, st.issued.trim_bytes) = (0, 0, 0);
        st.per_sec.clear();
        // The latency over time too starts at the found depth.
        self.slicer = crate::metrics::timeline::Slicer::new(self.slicer.width(), now);
        self.measure_from = now;
        self.last_done = now;
    }
}

#[cfg(test)]
mod tests {
    use super::super::*;
    use crate::plan::issue::LatencyTarget;

    /// A device whose every I/O takes 2 ms per I/O in flight: it sleeps that long, then
    /// completes them all.
    #[derive(Default)]
    struct Queue {
        buf: Vec<u8>,
        flight: Vec<usize>,
        deepest: usize,
    }

    impl IoEngine for Queue {
        fn buffer(&mut self, slot: usize) -> &mut [u8] {
            super::super::fake::slot(&mut self.buf, slot, 4096)
        }
        fn queue(&mut self, io: Io) -> std::io::Result<()> {
            self.flight.push(io.slot);
            self.deepest = self.deepest.max(self.flight.len());
            Ok(())
        }
        fn complete(
            &mut self,
            _: usize,
            mut hand: impl FnMut(&[crate::engine::Reaped]),
        ) -> std::io::Result<()> {
            let mut out = Vec::new();
            let mut done = |slot: usize, res: i64| out.push(crate::engine::Reaped { slot, res });
            std::thread::sleep(Duration::from_millis(2 * self.flight.len() as u64));
            self.flight.drain(..).for_each(|s| done(s, 4096));
            hand(&out);
            Ok(())
        }
        fn sync(&mut self, _: crate::engine::SyncKind) -> std::io::Result<()> {
            Ok(())
        }
        fn describe(&self) -> String {
            "queue".into()
        }
    }

    fn run(target_us: u64, pct: f64) -> (Stats, usize) {
        let mut p = Pattern::basic(Rw::RandRead, BlockSize::Fixed(4096), 32, 256 << 20);
        p.runtime = Some(Duration::from_secs(20));
        p.issue.latency = Some(LatencyTarget {
            target: Duration::from_micros(target_us),
            window: Duration::from_millis(60),
            percentile: pct,
            run: false,
        });
        let progress = crate::metrics::progress::Progress::new();
        let mut e = Queue::default();
        let st = drive_on(&mut e, &p, &WriteData::new(1, 4096, 0), Live::of(&progress));
        (st, e.deepest)
    }

    #[test]
    fn latency_target_finds_the_deepest_queue_that_meets_it_and_ends() {
        // 70%: a batch slowed by a busy host does not fail a window.
        let (st, deepest) = run(13_000, 70.0);
        assert!(st.error.is_none(), "{:?}", st.error);
        let qd = st.issued.latency_qd.unwrap();
        // 6 nominally; fewer when the host is busy and sleeps overshoot.
        assert!((3..=6).contains(&qd), "{qd}");
        assert!(
            (8..32).contains(&deepest),
            "it probed past the target: {deepest}"
        );
        assert!(st.measured < Duration::from_secs(10), "it ended once found");
        assert!(
            st.reads > 0 && st.lat.max() <= 16_000_000,
            "the found depth's figures"
        );
    }

    #[test]
    fn latency_target_below_what_depth_1_does_fails_the_job_as_in_fio() {
        let (st, _) = run(400, 100.0);
        let e = st.error.unwrap();
        assert!(e.contains("latency_target"), "{e}");
        assert_eq!(st.issued.latency_qd, Some(1));
    }
}
