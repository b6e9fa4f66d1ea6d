//! The timed I/O loop of one worker (fio's do_io). It keeps the queue full of the I/Os its gates
//! let go, times each from its queueing to its completion, and hands every completion to its
//! sinks; its parts are in drive/ (one each: what is in flight, what comes next, the gates, the
//! write data, the sinks, the error policy, the end), and this file is the only one that sees
//! them all. Calls into the engine are direct: the loop is compiled for each engine type.

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use super::clock::{Clock, Ns};

use super::files::PassEnds;
use super::probe::Verdict as Probed;
use super::stats::{Ended, Stats, Tally, Verified};
use super::worker::{Source, Timing, WorkerPlan};
use super::{pace, DataGen, Failure, WriteData};
use crate::engine::{Engine, Io, IoEngine, Reaped, Visit};
use crate::metrics::progress::Progress;
use crate::plan::dir::Dir;
use end::End;
use fill::Fill;
use flight::{Flight, InFlight};
use gates::Gates;
use next::{Next, Pick};
use outcome::{Outcome, Verdict};
use sinks::Sinks;

/// One I/O as the loop issues it (fio's io_u): its direction, its file (an index into the
/// worker's), the offset of its first byte in the file, its length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Issue {
    pub dir: Dir,
    pub file: usize,
    pub offset: u64,
    pub len: u64,
}

/// What a worker's loop reports to and listens to while it runs.
#[derive(Clone, Copy)]
pub struct Live<'a> {
    /// Finished I/Os and bytes (the live progress line, first-done figures).
    pub progress: &'a Progress,
    /// The interval of the latency-over-time histograms.
    pub interval: Duration,
    /// Turns true when the job is to end now (its steady state was reached).
    pub halt: Option<&'a AtomicBool>,
    /// Turns true when another job of the phase ended and one of them has exitall.
    pub exit_all: Option<&'a AtomicBool>,
    /// The worker's files, when the end of a pass over one drops its cached pages.
    pub files: Option<&'a [std::fs::File]>,
}

impl<'a> Live<'a> {
    /// Progress only, 1 s intervals, no flags (the tests').
    #[cfg(test)]
    pub fn of(progress: &'a Progress) -> Live<'a> {
        Live {
            progress,
            interval: crate::metrics::timeline::DEFAULT,
            halt: None,
            exit_all: None,
            files: None,
        }
    }
}

/// One worker's loop.
struct Driver<'a> {
    /// Its clock: nanoseconds since the loop began (a replay's times and a recording's too).
    clock: Clock,
    rng: DataGen,
    flight: Flight,
    next: Next<'a>,
    gates: Gates,
    fill: Fill<'a>,
    sinks: Sinks<'a>,
    outcome: Outcome,
    end: End<'a>,
}

impl<'a> Driver<'a> {
    fn new(plan: &'a WorkerPlan, data: &'a WriteData, live: Live<'a>) -> Driver<'a> {
        let mut rng = DataGen::new(plan.seed);
        let clock = Clock::start();
        let from = Ns(0).after(plan.ends.ramp);
        let slots = plan.queue.slots.max(plan.queue.depth).max(1);
        let drops = match &plan.source {
            Source::Walk(w) => w.pass_ends == PassEnds::DropPages,
            Source::Replay(_) => false,
        };
        let ops = (&plan.source, &plan.ops);
        let next = Next::new(ops, live.files.filter(|_| drops), &mut rng, plan.max_bs());
        Driver {
            clock,
            flight: Flight::new(slots),
            next,
            gates: Gates::new(&plan.gates, plan.queue.depth, Ns(0)),
            fill: Fill::new(&plan.fill, data, plan.seed, slots),
            sinks: Sinks::new(
                &plan.sinks,
                sinks::Measuring {
                    from,
                    clock,
                    progress: live.progress,
                    interval: live.interval,
                    does: plan.does(),
                    seed: plan.seed,
                },
            ),
            outcome: Outcome::new(&plan.on_error),
            end: End::new(&plan.ends, from, [live.halt, live.exit_all]),
            rng,
        }
    }

    /// Queues I/Os until the queue is full, a gate holds the next one, a sync is due, or the
    /// worker has issued everything.
    #[inline]
    fn fill_queue<E: IoEngine>(&mut self, e: &mut E) {
        while self.end.issuing() && !self.next.sync_due() {
            if !self.gates.open(self.flight.busy(), &self.clock) {
                break;
            }
            let Some(issue) = self.pick() else {
                break;
            };
            let at = self.next.at(&issue);
            if self.gates.overlaps(&self.flight, at, issue.len) {
                self.next.hold_back(issue);
                break;
            }
            let issue = match issue.dir {
                Dir::Trim => match self.trim(e, issue) {
                    Some(write) => write,
                    None => continue,
                },
                _ => issue,
            };
            if !self.queue(e, issue, at) {
                break;
            }
        }
    }

    /// The next I/O: held back before, replayed, or drawn, let go by the rate and placed in
    /// the files. None when the loop is to wait (a hold, a sync due) or the worker is done.
    #[inline]
    fn pick(&mut self) -> Option<Issue> {
        match self.next.pick(&mut self.rng, &self.clock) {
            Pick::Ready(i) => Some(i),
            Pick::Drawn(d, len) => {
                if self
                    .gates
                    .admit(d, len, &mut self.rng, &self.clock)
                    .is_some()
                {
                    self.next.keep(d, len);
                    return None;
                }
                let placed = self.next.place(d, len, &mut self.rng);
                if placed.is_none() {
                    self.end.stop();
                }
                placed
            }
            Pick::Wait(t) => {
                self.gates.hold_until(t);
                None
            }
            Pick::Sync => None,
            Pick::End => {
                self.end.stop();
                None
            }
        }
    }

    /// Queues `i` (its loop offset `at`): its buffer filled when it writes, its flags drawn,
    /// the clock read. False when the engine refused it (the worker fails).
    #[inline]
    fn queue<E: IoEngine>(&mut self, e: &mut E, i: Issue, at: u64) -> bool {
        let slot = self.flight.claim();
        let len = i.len as usize;
        match i.dir {
            Dir::Write => self
                .fill
                .write(&mut e.buffer(slot)[..len], slot, at, &mut self.rng),
            _ => self.fill.read(slot),
        }
        let flags = self.next.flags(i.dir, i.len, &mut self.rng);
        let queued = self.clock.now();
        let io = InFlight {
            issue: i,
            at,
            queued,
            submitted: queued,
            prio: flags.prio,
        };
        self.flight.start(slot, io);
        let (dir, file, offset) = (i.dir, i.file, i.offset);
        if let Err(err) = e.queue(Io {
            slot,
            dir,
            file,
            offset,
            len,
            flags,
        }) {
            let what = format!("queueing a {}", dir.name());
            self.outcome
                .fail(Failure::io(&what, &err).at(offset).in_file(file));
            self.flight.give_back(slot);
            self.end.stop();
            return false;
        }
        if self.sinks.timing() == Timing::Split {
            self.flight.submitted(slot, self.clock.now());
        }
        self.sinks.on_queue(&io);
        self.gates.issued();
        self.end.count(i.len);
        true
    }

    /// Trims `i`'s block through the engine, done when it returns (as fio's engines trim);
    /// the write of the same block that follows it, if the worker trims then writes.
    fn trim<E: IoEngine>(&mut self, e: &mut E, i: Issue) -> Option<Issue> {
        let start = self.clock.now();
        if let Err(err) = e.trim(i.file, i.offset, i.len) {
            let f = Failure::io("trim", &err).at(i.offset).in_file(i.file);
            self.outcome.fail(f);
            self.end.stop();
            return None;
        }
        self.sinks.on_trim(&i, (start, self.clock.now()));
        if self.next.writes_after_trim() {
            return Some(Issue {
                dir: Dir::Write,
                ..i
            });
        }
        self.end.count(i.len);
        None
    }

    /// One completion, reaped at `now`: its slot free, its result judged, counted by
    /// verification, and past the ramp timed and recorded.
    #[inline]
    fn done(&mut self, r: Reaped, now: Ns) {
        let io = self.flight.finish(r.slot);
        let i = io.issue;
        let bytes = match self
            .outcome
            .judge(i.dir, (r.res, i.len), (i.file, i.offset))
        {
            Verdict::Done(b) => b,
            Verdict::Dropped => return,
            Verdict::Full => return self.end.stop(),
        };
        if i.dir == Dir::Write {
            self.next.wrote();
        }
        self.sinks.reaped(r.slot, &io, bytes);
        if !self.sinks.measuring(now) {
            return;
        }
        let lat = sinks::latency_of(&io, now, self.sinks.timing());
        match self.gates.on_done(lat.ns, now) {
            Probed::Go => {}
            v => self.probed(v, now),
        }
        self.sinks.on_done(&io, bytes, lat, now);
    }

    /// The latency search moved: the figures start afresh at the depth found, the worker ends
    /// after the last window at it, or fails (over the target at depth 1).
    #[cold]
    fn probed(&mut self, v: Probed, now: Ns) {
        match v {
            Probed::Go => {}
            Probed::Restart => self.sinks.restart(now),
            Probed::End => self.end.stop(),
            Probed::Fail { took, target } => {
                self.outcome.fail(Failure {
                    op: "latency target".into(),
                    errno: Some("ETIMEDOUT".into()),
                    message: format!(
                        "an I/O took {} us at queue depth 1, over the latency target of {} us: the target cannot be met",
                        took / 1000,
                        target / 1000
                    ),
                    ..Default::default()
                });
                self.end.stop();
            }
        }
    }

    /// Runs the loop to its end (its limit, its runtime, an error, or a stop request).
    fn run<E: IoEngine>(&mut self, e: &mut E) {
        // Ended before it began (exit_what=all of an earlier group): no I/O.
        self.end.check(Ns(0));
        loop {
            self.fill_queue(e);
            let busy = self.flight.busy();
            if busy == 0 {
                if self.idle(e) {
                    continue;
                }
                return;
            }
            let drain = self.next.sync_due() || !self.end.issuing() || self.gates.draining();
            let mut last = None;
            // One clock reading for the completions reaped together.
            let reaped = e.complete(if drain { busy } else { 1 }, |batch| {
                let now = self.clock.now();
                for r in batch {
                    self.done(*r, now);
                }
                last = Some(now);
            });
            if let Err(err) = reaped {
                let f = Failure::io("waiting for I/O completions", &err);
                return self.outcome.fail(f);
            }
            self.after_reap(e);
            self.end.check(last.unwrap_or_else(|| self.clock.now()));
        }
    }

    /// Nothing in flight: a sync that is due, or else a wait for what holds the next I/O.
    /// Whether the loop goes on.
    fn idle<E: IoEngine>(&mut self, e: &mut E) -> bool {
        if let Some(kind) = self.next.take_sync() {
            self.sinks.on_sync(kind, self.clock.now());
            if let Err(err) = e.sync(kind) {
                self.outcome.fail(Failure::io(kind.name(), &err));
                return false;
            }
            return true;
        }
        if !self.end.issuing() {
            return false;
        }
        self.gates.wait(&self.clock, &self.end.flags());
        self.end.check(self.clock.now());
        true
    }

    /// After a reap: the reads reaped are checked before their slots are reused, and a failure
    /// among the completions becomes the worker's (it stops, unless a block failed its check
    /// and the job goes on past bad blocks).
    fn after_reap<E: IoEngine>(&mut self, e: &mut E) {
        if self.sinks.to_check() {
            if let Some(at) = self.sinks.check_reads(e) {
                self.outcome.bad_block(self.next.split(at));
            }
        }
        if self.outcome.settle() {
            self.end.stop();
        }
    }

    /// Sets the worker thread's I/O priority when its job gives one; false (and the worker's
    /// failure) when the kernel refuses it.
    fn prioritized(&mut self) -> bool {
        let Some(v) = self.next.thread_prio() else {
            return true;
        };
        match crate::sys::ioflags::ioprio_set(v) {
            Ok(()) => true,
            Err(e) => {
                self.outcome.fail(Failure::io("ioprio_set", &e));
                false
            }
        }
    }

    /// The sync the worker ends with (unless it failed), then its figures.
    fn finish<E: IoEngine>(mut self, e: &mut E) -> Stats {
        if let Some(kind) = self.next.end_sync() {
            if !self.outcome.failed_already() {
                if let Err(err) = e.sync(kind) {
                    let what = format!("{} at the end", kind.name());
                    self.outcome.fail(Failure::io(&what, &err));
                }
                self.sinks.touch(self.clock.now());
            }
        }
        let mut stats = Stats {
            tally: Tally::new(false),
            per_sec: Vec::new(),
            timeline: None,
            measured: Duration::ZERO,
            ended: Ended::default(),
            verified: Verified::default(),
            logs: None,
            iolog: None,
            pages_dropped: self.next.pages_dropped(),
            latency_qd: self.gates.depth_found(),
        };
        self.sinks.finish(&mut stats);
        stats.ended = Ended {
            stopped: self.end.stopped(),
            ..self.outcome.finish()
        };
        stats
    }
}

/// Drives one worker until its limit, its runtime, an error, or a stop request, publishing its
/// totals to `live.progress` as it goes. `data` may be shared by the workers of a job. A start
/// delay is waited out first.
pub fn drive(engine: &mut Engine, plan: &WorkerPlan, data: &WriteData, live: Live) -> Stats {
    engine.visit(Drive { plan, data, live })
}

/// `drive` on an engine of its own type.
struct Drive<'a> {
    plan: &'a WorkerPlan,
    data: &'a WriteData,
    live: Live<'a>,
}

impl Visit for Drive<'_> {
    type Out = Stats;
    fn visit<E: IoEngine>(self, engine: &mut E) -> Stats {
        drive_on(engine, self.plan, self.data, self.live)
    }
}

/// `drive` with an engine of any type (the tests' fakes too).
pub fn drive_on<E: IoEngine>(
    engine: &mut E,
    plan: &WorkerPlan,
    data: &WriteData,
    live: Live,
) -> Stats {
    if !plan.gates.start_delay.is_zero() {
        pace::wait_until(std::time::Instant::now() + plan.gates.start_delay);
    }
    let mut d = Driver::new(plan, data, live);
    d.gates.seated(true);
    if d.prioritized() {
        d.run(engine);
    }
    d.gates.seated(false);
    d.finish(engine)
}

mod end;
mod fill;
mod flight;
mod gates;
mod next;
mod outcome;
mod sinks;

#[cfg(test)]
mod tests;
