//! What records a worker's I/O (fio's add_*_sample): its statistics per direction, the measured
//! window with its per-second series and latency over time, fio's logs and iolog, the live
//! progress, and for verification the writes done and the reads to check. Each sink the job does
//! not ask for is None.

use std::time::Duration;

use super::flight::InFlight;
use super::Issue;
use crate::engine::{IoEngine, SyncKind};
use crate::io::clock::{Clock, Ns};
use crate::io::clock::{LatParts, Latency};
use crate::io::fiolog::{LogBook, Logged};
use crate::io::iolog::{OpKind, Recorder};
use crate::io::stats::{Stats, Tally, Verified};
use crate::io::verify::{self, Verifier};
use crate::io::worker::{ReadChecks, SinkPlan, Timing, Written};
use crate::metrics::progress::{Count, Progress};
use crate::metrics::timeline::Slicer;
use crate::plan::dir::{Dir, PerDir};
use crate::plan::units::Span;

/// A completed I/O's latency from its queueing, and its parts when timed apart.
#[inline]
pub fn latency_of(io: &InFlight, now: Ns, timing: Timing) -> Latency {
    let ns = now.since(io.queued).max(1);
    let parts = (timing == Timing::Split).then(|| {
        let slat = io.submitted.since(io.queued);
        LatParts {
            clat_ns: ns.saturating_sub(slat).max(1),
            slat_ns: slat.max(1),
        }
    });
    Latency { ns, parts }
}

/// The measured window: from the end of the ramp (or the latency search's restart) to the last
/// completion, cut into seconds (the series) and intervals (latency over time).
struct Window {
    clock: Clock,
    from: Ns,
    last: Ns,
    /// The second open now, when it ends, and the seconds closed.
    sec: Count,
    sec_end: Ns,
    per_sec: Vec<Count>,
    /// The intervals of latency over time, and when the one open now ends.
    slicer: Slicer,
    cut_at: Ns,
}

impl Window {
    fn new(clock: Clock, from: Ns, interval: Duration, start: Ns) -> Window {
        let slicer = Slicer::new(interval, clock.instant(from));
        Window {
            clock,
            from,
            last: start,
            sec: Count::default(),
            sec_end: from.after(Duration::from_secs(1)),
            per_sec: Vec::new(),
            cut_at: from.after(slicer.width()),
            slicer,
        }
    }

    /// Counts a completion in the second it ended in; past an interval's end, the latencies
    /// recorded since the last cut are kept as that interval's.
    #[inline]
    fn count(&mut self, now: Ns, bytes: u64, tally: &Tally) {
        if now >= self.sec_end || now >= self.cut_at {
            self.tick(now, tally);
        }
        self.sec += Count::new(1, bytes);
        self.last = now;
    }

    #[cold]
    fn tick(&mut self, now: Ns, tally: &Tally) {
        while now >= self.sec_end {
            self.per_sec.push(std::mem::take(&mut self.sec));
            self.sec_end = self.sec_end.after(Duration::from_secs(1));
        }
        if now >= self.cut_at {
            self.slicer.cut_hist(self.clock.instant(now), &tally.lat());
            let width = self.slicer.width().as_nanos() as u64;
            let k = now.since(self.from) / width + 1;
            self.cut_at = Ns(self.from.0 + k * width);
        }
    }
}

pub struct Sinks<'a> {
    tally: Tally,
    window: Window,
    timing: Timing,
    logs: Option<LogBook>,
    iolog: Option<Recorder>,
    progress: &'a Progress,
    checks: Checks,
}

/// Verification's sinks: the writes done, the reads to check once reaped.
struct Checks {
    written: Option<Vec<(u64, u32)>>,
    reads: Option<ReadCheck>,
    /// Reads reaped, to check before their slots are reused: (slot, bytes, loop offset).
    pending: Vec<(usize, usize, u64)>,
    found: Verified,
}

/// What the sinks measure with besides their plan.
pub struct Measuring<'a> {
    /// From when (the ramp's end), on the loop's clock.
    pub from: Ns,
    pub clock: Clock,
    /// The worker's published progress, and the interval of its latency over time.
    pub progress: &'a Progress,
    pub interval: Duration,
    /// The directions the job does (its logs' windowed lines), and its data's seed (the reads
    /// it checks).
    pub does: PerDir<bool>,
    pub seed: u64,
}

impl<'a> Sinks<'a> {
    /// Sinks measuring as `m` says.
    pub fn new(plan: &SinkPlan, m: Measuring<'a>) -> Sinks<'a> {
        let Measuring {
            from,
            clock,
            progress,
            interval,
            does,
            seed,
        } = m;
        let logs = plan.logs.as_ref().map(|l| {
            let epoch = if l.unix_epoch {
                let since = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap_or_default();
                (since + Duration::from_nanos(from.0)).as_millis() as u64
            } else {
                0
            };
            LogBook::new(l, does, epoch)
        });
        let reads = plan.checks.as_ref().map(|c| check(c, seed));
        Sinks {
            tally: Tally::new(plan.timing == Timing::Split),
            window: Window::new(clock, from, interval, Ns(0)),
            timing: plan.timing,
            logs,
            iolog: plan.record.as_deref().map(Recorder::new),
            progress,
            checks: Checks {
                written: (plan.written == Written::Keep).then(Vec::new),
                reads,
                pending: Vec::new(),
                found: Verified::default(),
            },
        }
    }

    /// How I/Os are timed.
    #[inline]
    pub fn timing(&self) -> Timing {
        self.timing
    }

    /// Whether `now` is in the measured window (past the ramp).
    #[inline]
    pub fn measuring(&self, now: Ns) -> bool {
        now >= self.window.from
    }

    /// An I/O was queued (the iolog's line, at its time since the loop began).
    #[inline]
    pub fn on_queue(&mut self, io: &InFlight) {
        if let Some(rec) = self.iolog.as_mut() {
            let i = &io.issue;
            let at = Duration::from_nanos(io.queued.0);
            rec.op(at, OpKind::of(i.dir), i.file, i.offset, i.len);
        }
    }

    /// A sync of every file, `at` on the loop's clock.
    pub fn on_sync(&mut self, kind: SyncKind, at: Ns) {
        if let Some(rec) = self.iolog.as_mut() {
            rec.op(Duration::from_nanos(at.0), OpKind::sync(kind), 0, 0, 0);
        }
    }

    /// A completion that did `bytes`, before the ramp's end counted by verification only.
    #[inline]
    pub fn reaped(&mut self, slot: usize, io: &InFlight, bytes: u64) {
        let c = &mut self.checks;
        match io.issue.dir {
            Dir::Write => {
                if let Some(w) = c.written.as_mut() {
                    w.push((io.at, bytes as u32));
                }
            }
            Dir::Read if c.reads.is_some() => c.pending.push((slot, bytes as usize, io.at)),
            _ => {}
        }
    }

    /// A completion in the measured window: its latency `lat`, at byte `offset` of its file.
    #[inline]
    pub fn on_done(&mut self, io: &InFlight, bytes: u64, lat: Latency, now: Ns) {
        self.window.count(now, bytes, &self.tally);
        self.tally.record(io.issue.dir, bytes, lat);
        if let Some(l) = self.logs.as_mut() {
            let since = now.since(self.window.from);
            let issued = since.saturating_sub(lat.ns);
            let ms = since / 1_000_000;
            l.prio = io.prio;
            let i = &io.issue;
            let logged = Logged {
                ms,
                issue_ns: issued,
                dir: i.dir,
                len: bytes,
                offset: i.offset,
            };
            l.io(logged, lat);
        }
        self.progress.add_io(io.issue.dir, bytes);
        self.progress.add_lat(lat.ns);
    }

    /// A trim `i` done synchronously from `start` to `now` (counted as fio's trim direction, in
    /// the measured window only).
    pub fn on_trim(&mut self, i: &Issue, (start, now): (Ns, Ns)) {
        self.window.last = now;
        if let Some(rec) = self.iolog.as_mut() {
            let at = Duration::from_nanos(start.0);
            rec.op(at, OpKind::Trim, i.file, i.offset, i.len);
        }
        if !self.measuring(now) {
            return;
        }
        let ns = now.since(start).max(1);
        self.window.count(now, i.len, &self.tally);
        self.tally.record(Dir::Trim, i.len, Latency::whole(ns));
        self.progress.add_io(Dir::Trim, i.len);
    }

    /// Checks the reads just reaped against their headers (in their slots' buffers); the loop
    /// offset of the first bad block, when one is.
    pub fn check_reads(&mut self, e: &mut impl IoEngine) -> Option<u64> {
        let c = &mut self.checks;
        let ReadCheck {
            verifier: v,
            ranges,
            every_bad_interval: all,
        } = c.reads.as_ref()?;
        let mut first = None;
        for (slot, len, at) in c.pending.drain(..) {
            if ranges
                .as_ref()
                .is_some_and(|r| !verify::covered(r, at, len as u64))
            {
                c.found.skipped += 1;
                continue;
            }
            let bad = v.check(&e.buffer(slot)[..len], at, *all);
            c.found.checked += 1;
            if let Some(m) = bad.first() {
                c.found.errors += bad.len() as u64;
                first.get_or_insert(m.offset);
                c.found.mismatch.get_or_insert_with(|| m.clone());
            }
        }
        first
    }

    /// Whether reads wait to be checked.
    #[inline]
    pub fn to_check(&self) -> bool {
        !self.checks.pending.is_empty()
    }

    /// The figures start afresh at `now` (latency_target's depth is found).
    pub fn restart(&mut self, now: Ns) {
        self.tally.reset();
        let w = &mut self.window;
        *w = Window::new(w.clock, now, w.slicer.width(), now);
    }

    /// Something ended at `now` outside a completion (the end's sync).
    pub fn touch(&mut self, now: Ns) {
        self.window.last = now;
    }

    /// The figures, the window closed at its last completion.
    pub fn finish(self, stats: &mut Stats) {
        let Sinks {
            tally,
            window: w,
            mut logs,
            mut iolog,
            checks,
            ..
        } = self;
        let measured = Duration::from_nanos(w.last.since(w.from));
        let end = w.clock.instant(w.last.max(w.from));
        stats.timeline = Some(w.slicer.finish_hist(end, &tally.lat()));
        let mut per_sec = w.per_sec;
        if w.sec.ops > 0 {
            per_sec.push(w.sec);
        }
        // A last partial second would read as a dip in the series: drop it when it is short.
        let frac = measured - Duration::from_secs(measured.as_secs());
        if per_sec.len() > 1 && frac < Duration::from_millis(500) {
            per_sec.truncate(measured.as_secs() as usize);
        }
        if let Some(l) = logs.as_mut() {
            l.finish(measured.as_millis() as u64);
        }
        if let Some(rec) = iolog.as_mut() {
            rec.close(Duration::from_nanos(w.last.0));
        }
        stats.tally = tally;
        (stats.per_sec, stats.measured) = (per_sec, measured);
        (stats.logs, stats.iolog) = (logs, iolog);
        stats.verified = Verified {
            written: checks.written.unwrap_or_default(),
            ..checks.found
        };
    }
}

/// A reading worker's checks: the verifier, the ranges to check, and whether every bad interval
/// of a block is listed (unless the first one stops the worker).
struct ReadCheck {
    verifier: Verifier,
    ranges: Option<std::sync::Arc<Vec<Span>>>,
    every_bad_interval: bool,
}

fn check(c: &ReadChecks, seed: u64) -> ReadCheck {
    ReadCheck {
        verifier: Verifier::new(&c.verify, seed),
        ranges: c.ranges.clone(),
        every_bad_interval: !c.verify.fatal,
    }
}
