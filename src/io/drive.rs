//! The timed I/O loop of one worker.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use super::files::FileSet;
use super::iolog::OpKind;
use super::pace::{self, Pacer};
use super::verify::Verifier;
use super::{DataGen, Live, Pattern, Stats, WriteData};
use crate::engine::{Engine, Io, IoEngine, SyncKind, Visit};
use crate::metrics::hist;
use crate::metrics::progress::Progress;
use crate::metrics::timeline::Slicer;
use crate::plan::dir::Dir;
use crate::plan::job::{BlockSize, Rw};
use replay::Step;

fn pick_bs(bs: &BlockSize, rng: &mut DataGen) -> u64 {
    match bs {
        BlockSize::Fixed(b) => *b,
        BlockSize::Range(lo, hi) => {
            let steps = hi / lo;
            (lo * (1 + rng.next_u64() % steps)).min(*hi)
        }
        BlockSize::Split(v) => {
            let r = (rng.next_u64() % 100) as u32;
            let mut acc = 0;
            for (size, pct) in v {
                acc += pct;
                if r < acc {
                    return *size;
                }
            }
            v.last().map(|x| x.0).unwrap_or(4096)
        }
    }
}

/// What holds the next I/O back.
#[derive(Clone, Copy)]
enum Hold {
    /// The rate allows the pending I/O at this instant.
    Until(Instant),
    /// thinktime once the queue has drained: (total, spun).
    Think(Duration, Duration),
}

/// The state of one worker's loop: what is in flight, where the next I/O goes, what was measured.
struct Driver<'a> {
    p: &'a Pattern,
    data: &'a WriteData,
    progress: &'a Progress,
    halt: Option<&'a std::sync::atomic::AtomicBool>,
    exit_all: Option<&'a std::sync::atomic::AtomicBool>,
    /// The files whose cached pages are dropped when a pass over one ends (`invalidates_at_wraps`).
    invalidate: Option<&'a [std::fs::File]>,
    /// Cuts the latencies into intervals (from the measured start).
    slicer: Slicer,
    st: Stats,
    rng: DataGen,
    /// Slots not in flight, the longest idle first: with a ring of buffers (more slots than
    /// `depth`) a buffer is written again only after all the others.
    free: VecDeque<usize>,
    /// Slots (buffers) in all: `depth`, or the ring's size.
    slots: usize,
    stamp: Vec<Instant>,
    /// (write, length, offset) of the I/O in each slot.
    kind: Vec<(bool, usize, u64)>,
    /// When each slot's queue call returned (with `split_lat`: its submission's end).
    submitted: Vec<Instant>,
    /// Slots whose buffer holds a full fill of its own (then scrambling keeps it unique).
    filled: Vec<bool>,
    measure_from: Instant,
    deadline: Option<Instant>,
    issued: u64,
    issued_ios: u64,
    issuing: bool,
    writes_since_fsync: u32,
    writes_since_fdatasync: u32,
    /// Some(data_only) when an fsync (false) or fdatasync (true) is due once the queue drains.
    sync_due: Option<bool>,
    last_done: Instant,
    files: FileSet,
    pacer: Pacer,
    hold: Option<Hold>,
    /// The next I/O (write, length), drawn but held back by the rate.
    pending: Option<(bool, u64)>,
    verifier: Option<Verifier>,
    /// Check every read (a verifying job that does not write: it reads what an earlier job
    /// wrote; a writing job's reads would meet data it has not written yet).
    check_reads: bool,
    /// Reads to check once their completion is reaped: (slot, bytes, offset).
    to_check: Vec<(usize, usize, u64)>,
    /// Keep the offsets of writes (to read them back).
    keep_written: bool,
    failed: Option<super::Failure>,
    /// When the loop began (a replay's times and a recording's are from it).
    began: Instant,
    /// The next operation of a replayed trace.
    rpos: usize,
    /// What the issuing options keep between I/Os (`issue`).
    issue: issue::State,
    /// Unique writes made so far (the first are the dedupe working set's pages).
    unique: u64,
}

impl<'a> Driver<'a> {
    fn new(p: &'a Pattern, data: &'a WriteData, live: Live<'a>) -> Driver<'a> {
        let mut rng = DataGen::new(p.seed);
        let slots = p.buffers.max(p.depth).max(1);
        let start = Instant::now();
        let measure_from = start + p.ramp;
        let files = FileSet::new(p, &mut rng);
        let verifier = p.verify.as_ref().map(|v| Verifier::new(v, p.seed));
        let checks = verifier.as_ref().is_some_and(Verifier::checks);
        let keep_written = p.rw.writes()
            && (p.save_written || checks && p.verify.as_ref().is_some_and(|v| v.after_write));
        let check_reads = checks && !p.rw.writes();
        let mut st = Stats::new();
        st.logs = p.logs.as_ref().map(|l| {
            let epoch = if l.unix_epoch {
                let since = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap_or_default();
                (since + p.ramp).as_millis() as u64
            } else {
                0
            };
            super::fiolog::LogBook::new(l, p.rw.reads(), p.rw.writes(), epoch)
        });
        st.iolog = p.record.as_deref().map(super::iolog::Recorder::new);
        if p.split_lat {
            st.slat = Some([hist::new(), hist::new()]);
            st.clat = Some([hist::new(), hist::new()]);
        }
        Driver {
            p,
            data,
            progress: live.progress,
            halt: live.halt,
            exit_all: live.exit_all,
            invalidate: live
                .invalidate
                .filter(|_| super::offsets::invalidates_at_wraps(p)),
            slicer: Slicer::new(live.interval, measure_from),
            st,
            rng,
            free: (0..slots).collect(),
            slots,
            stamp: vec![start; slots],
            kind: vec![(false, 0usize, 0u64); slots],
            submitted: if p.split_lat {
                vec![start; slots]
            } else {
                Vec::new()
            },
            filled: vec![false; slots],
            measure_from,
            deadline: p.runtime.map(|r| measure_from + r),
            issued: 0,
            issued_ios: 0,
            issuing: true,
            writes_since_fsync: 0,
            writes_since_fdatasync: 0,
            sync_due: None,
            last_done: start,
            files,
            pacer: Pacer::new(p, start),
            hold: None,
            pending: None,
            verifier,
            check_reads,
            to_check: Vec::new(),
            keep_written,
            failed: None,
            began: start,
            rpos: 0,
            issue: issue::State::new(p, start),
            unique: 0,
        }
    }

    /// A pass over `file` ended: the cached pages of the job's range of it are dropped
    /// (posix_fadvise DONTNEED, which also starts the write-back of its dirty ones), as fio's
    /// file_invalidate_cache does over the job's offset and size (other jobs of a shared file
    /// keep theirs). Advice that fails changes no figure, so it is not an error.
    #[cold]
    fn wrapped(&mut self, file: usize) {
        if let Some(f) = self.invalidate.and_then(|fs| fs.get(file)) {
            let dontneed = libc::POSIX_FADV_DONTNEED;
            let _ = crate::sys::fadvise_range(f, self.p.base, self.p.region, dontneed);
            self.st.invalidated += 1;
        }
    }

    /// The direction and size of the next I/O.
    #[inline]
    fn draw(&mut self) -> (bool, u64) {
        if let Some(x) = self.pending.take() {
            return x;
        }
        let p = self.p;
        let write = match p.rw {
            Rw::Read | Rw::RandRead => false,
            // A trim is drawn as a write of the write block size (`trim_first` trims it).
            Rw::Write | Rw::RandWrite | Rw::Trim | Rw::RandTrim => true,
            Rw::TrimWrite | Rw::RandTrimWrite => true,
            Rw::Rw | Rw::RandRw => (self.rng.next_u64() % 100) as u32 >= p.rwmixread,
        };
        let bs = match (&p.wbs, write) {
            (Some(w), true) => w,
            _ => &p.bs,
        };
        let bs = p.trim_bs.as_ref().filter(|_| p.rw.trims()).unwrap_or(bs);
        (write, pick_bs(bs, &mut self.rng).min(p.region))
    }

    /// Fills a write's buffer: fresh data (or a repeated buffer for dedupe), then the verify
    /// header.
    #[inline]
    fn fill<E: IoEngine>(&mut self, engine: &mut E, slot: usize, len: usize, at: u64) {
        let p = self.p;
        let buf = &mut engine.buffer(slot)[..len];
        if !p.buffer_pattern.is_empty() {
            for (b, x) in buf.iter_mut().zip(p.buffer_pattern.iter().cycle()) {
                *b = *x;
            }
            self.filled[slot] = false;
        } else if p.dedupe_pct > 0 && (self.rng.next_u64() % 100) < p.dedupe_pct as u64 {
            match &p.working_set {
                // A page of the working set, drawn at random (fio's working_set).
                Some(ws) => {
                    let (t, k) = (self.rng.next_u64() % ws.of, self.rng.next_u64() % ws.per);
                    self.data.fill_page(buf, &mut ws.page(t, k));
                }
                None => self.data.fill(buf, &mut DataGen::new(p.seed ^ 0xd0d0)),
            }
            self.filled[slot] = false;
        } else if let Some(ws) = p.working_set.filter(|ws| self.unique < ws.per) {
            // The job's first unique writes are its pages of the working set.
            self.data.fill_page(buf, &mut ws.page(ws.me, self.unique));
            self.unique += 1;
            self.filled[slot] = false;
        } else if p.refill || !self.filled[slot] {
            self.data.fill(buf, &mut self.rng);
            self.filled[slot] = true;
        } else {
            self.data.scramble(buf, p.stamp_every, &mut self.rng);
        }
        if let Some(v) = &self.verifier {
            v.stamp(buf, at);
            self.filled[slot] = false;
        }
    }

    /// Queues I/Os until the queue is full, a sync or a pause is due, or the job has issued
    /// everything.
    #[inline]
    fn fill_queue<E: IoEngine>(&mut self, engine: &mut E) {
        while self.issuing && self.sync_due.is_none() {
            match self.hold {
                Some(Hold::Think(..)) => break,
                Some(Hold::Until(t)) if Instant::now() < t => break,
                _ => self.hold = None,
            }
            if let Some((f, i, sleep)) = &self.p.flow {
                if f.ahead(*i) {
                    let wait = (*sleep).max(Duration::from_micros(50));
                    self.hold = Some(Hold::Until(Instant::now() + wait));
                    break;
                }
            }
            if self.slots - self.free.len() >= self.depth() {
                break;
            }
            let Some(slot) = self.free.pop_front() else {
                break;
            };
            let (write, len, file, offset) = if let Some(held) = self.issue.held.take() {
                held
            } else if let Some(r) = self.p.replay.as_deref() {
                match self.replay_next(r) {
                    Step::Io(w, l, o) => (w, l, 0, o),
                    Step::Wait => {
                        self.free.push_front(slot);
                        break;
                    }
                    Step::End => {
                        self.free.push_front(slot);
                        self.issuing = false;
                        break;
                    }
                }
            } else {
                let (write, mut len) = self.draw();
                if let Some(t) = self.pacer.admit(write, len, &mut self.rng) {
                    self.pending = Some((write, len));
                    self.hold = Some(Hold::Until(t));
                    self.free.push_front(slot);
                    break;
                }
                // May come back shorter (several block sizes: cut at a block done this pass).
                let Some((file, offset)) = self.files.next(&mut len, write, &mut self.rng) else {
                    self.free.push_front(slot);
                    self.issuing = false;
                    break;
                };
                if self.invalidate.is_some() && self.files.take_wrapped(file) {
                    self.wrapped(file);
                }
                (write, len, file, offset)
            };
            if self.hold_overlap(slot, (write, len, file, offset)) {
                break;
            }
            if self.p.rw.trims() && !self.trim_first(engine, slot, len, (file, offset)) {
                continue;
            }
            // The byte in its file, and the loop's offset of it (unique across files).
            let at = self.p.base + offset;
            let offset = self.files.virt(file, at);
            if write {
                self.fill(engine, slot, len as usize, offset);
            } else {
                // A read replaces the buffer's contents: the next write fills it afresh.
                self.filled[slot] = false;
            }
            self.kind[slot] = (write, len as usize, offset);
            self.stamp[slot] = Instant::now();
            let io = Io {
                slot,
                file,
                dir: if write { Dir::Write } else { Dir::Read },
                offset: at,
                len: len as usize,
                flags: self.flags_of(slot, write, len),
            };
            if let Err(e) = engine.queue(io) {
                let what = if write {
                    "queueing a write"
                } else {
                    "queueing a read"
                };
                self.st
                    .fail(super::Failure::io(what, &e).at(at).in_file(file));
                self.free.push_front(slot);
                self.issuing = false;
                break;
            }
            if self.p.split_lat {
                self.submitted[slot] = Instant::now();
            }
            if let Some(rec) = self.st.iolog.as_mut() {
                let kind = if write { OpKind::Write } else { OpKind::Read };
                rec.op(self.stamp[slot] - self.began, kind, (file, at), len);
            }
            if let Some((f, i, _)) = &self.p.flow {
                f.count(*i);
            }
            self.issued += len;
            self.issued_ios += 1;
            if self.p.limit_bytes.is_some_and(|limit| self.issued >= limit)
                || self.p.pace.limit_ios.is_some_and(|n| self.issued_ios >= n)
            {
                self.issuing = false;
            }
            if let Some((total, spin)) = self.pacer.issued() {
                self.hold = Some(Hold::Think(total, spin));
            }
        }
    }

    /// Counts a write towards fsync= and fdatasync=, marking a sync as due.
    #[inline]
    fn count_write(&mut self) {
        self.writes_since_fsync += 1;
        self.writes_since_fdatasync += 1;
        if self.p.fsync_every > 0 && self.writes_since_fsync >= self.p.fsync_every {
            self.writes_since_fsync = 0;
            self.sync_due = Some(false);
        }
        if self.p.fdatasync_every > 0 && self.writes_since_fdatasync >= self.p.fdatasync_every {
            self.writes_since_fdatasync = 0;
            self.sync_due.get_or_insert(true);
        }
    }

    /// One completion: frees the slot, checks the result, and records it (after the ramp).
    #[inline]
    fn done(&mut self, slot: usize, res: i64) {
        let now = Instant::now();
        self.free.push_back(slot);
        let (write, len, offset) = self.kind[slot];
        if res < 0 {
            let what = if write { "write" } else { "read" };
            let errno = (-res) as i32;
            if write && self.p.fill_device && [libc::ENOSPC, libc::EDQUOT].contains(&errno) {
                self.st.filled = true;
                self.issuing = false;
                return;
            }
            let (file, at) = self.files.split(offset);
            let d = write as usize;
            if self.p.continue_on[d] && self.p.ignore_errors[d].contains(&errno) {
                self.st.io_errors += 1;
                let f = super::Failure::errno(what, errno).at(at).in_file(file);
                self.st.first_ignored.get_or_insert_with(|| f.to_string());
                return;
            }
            self.failed
                .get_or_insert_with(|| super::Failure::errno(what, errno).at(at).in_file(file));
            return;
        }
        if res == 0 && len > 0 {
            let (file, at) = self.files.split(offset);
            self.failed.get_or_insert_with(|| super::Failure {
                op: "read".into(),
                message: "read returned 0 bytes: the file is shorter than the job's size".into(),
                offset: Some(at),
                file,
                ..Default::default()
            });
            return;
        }
        if write {
            self.count_write();
            if self.keep_written {
                self.st.written.push((offset, res as u32));
            }
        } else if self.check_reads {
            self.to_check.push((slot, res as usize, offset));
        }
        if now < self.measure_from {
            return;
        }
        let ns = (now.duration_since(self.stamp[slot]).as_nanos() as u64).max(1);
        self.probe(ns, now);
        if self.slicer.due(now) {
            self.slicer.cut_hist(now, &self.st.lat);
        }
        let parts = self.p.split_lat.then(|| {
            let sub = self.submitted[slot];
            let slat = sub.duration_since(self.stamp[slot]).as_nanos() as u64;
            (ns.saturating_sub(slat).max(1), slat.max(1))
        });
        let st = &mut self.st;
        st.lat.saturating_record(ns);
        if let (Some((c, s)), Some(sl), Some(cl)) = (parts, st.slat.as_mut(), st.clat.as_mut()) {
            sl[write as usize].saturating_record(s);
            cl[write as usize].saturating_record(c);
        }
        let bytes = res as u64;
        if write {
            st.write_lat.saturating_record(ns);
            st.writes += 1;
            st.write_bytes += bytes;
        } else {
            st.read_lat.saturating_record(ns);
            st.reads += 1;
            st.read_bytes += bytes;
        }
        let sec = now.duration_since(self.measure_from).as_secs() as usize;
        if st.per_sec.len() <= sec {
            st.per_sec.resize(sec + 1, (0, 0));
        }
        st.per_sec[sec].0 += 1;
        st.per_sec[sec].1 += bytes;
        if let Some(l) = st.logs.as_mut() {
            let since = now.duration_since(self.measure_from);
            let issued = (since.as_nanos() as u64).saturating_sub(ns);
            let ms = since.as_millis() as u64;
            l.prio = self.issue.slot_prio[slot];
            l.io(
                (ms, issued, write),
                bytes,
                self.files.split(offset).1,
                ns,
                parts,
            );
        }
        self.progress.add(1, bytes);
        self.progress.add_lat(ns);
        self.last_done = now;
    }

    /// Checks the reads just reaped (a reading job with verify=), before their slots are reused.
    fn check_reads<E: IoEngine>(&mut self, engine: &mut E) {
        let Some(v) = &self.verifier else { return };
        let fatal = self.p.verify.as_ref().is_some_and(|v| v.fatal);
        for (slot, len, offset) in self.to_check.drain(..) {
            if let Some(r) = &self.p.verify_ranges {
                if !super::verify::covered(r, offset, len as u64) {
                    self.st.verify_skipped += 1;
                    continue;
                }
            }
            let bad = v.check(&engine.buffer(slot)[..len], offset, !fatal);
            self.st.verified += 1;
            if let Some(first) = bad.first() {
                self.st.verify_errors += bad.len() as u64;
                if self.st.mismatch.is_none() {
                    self.st.mismatch = Some(first.clone());
                }
                // The session words it (fio's sentence names the file) from `mismatch`.
                if self.failed.is_none() && self.st.error.is_none() {
                    let (file, at) = self.files.split(first.offset);
                    self.failed = Some(super::Failure {
                        op: "verify".into(),
                        offset: Some(at),
                        file,
                        ..Default::default()
                    });
                }
            }
        }
    }

    /// Stops issuing at the deadline or on a stop request.
    #[inline]
    fn check_end(&mut self) {
        if !self.issuing {
            return;
        }
        if self.deadline.is_some_and(|d| Instant::now() >= d) {
            self.issuing = false;
        }
        if [self.halt, self.exit_all]
            .iter()
            .flatten()
            .any(|h| h.load(std::sync::atomic::Ordering::Relaxed))
        {
            self.issuing = false;
        }
        if let Some(why) = crate::stop::requested() {
            self.st.stopped = Some(why);
            self.issuing = false;
        }
    }

    /// Runs the loop to its end (its limit, its runtime, an error, or a stop request).
    fn run<E: IoEngine>(&mut self, engine: &mut E) {
        let fatal_verify = self.p.verify.as_ref().is_none_or(|v| v.fatal);
        // Ended before it began (exit_what=all of an earlier group): no I/O.
        self.check_end();
        loop {
            self.fill_queue(engine);
            let in_flight = self.slots - self.free.len();
            if in_flight == 0 {
                if let Some(data_only) = self.sync_due.take() {
                    if let Some(rec) = self.st.iolog.as_mut() {
                        let kind = if data_only {
                            OpKind::Datasync
                        } else {
                            OpKind::Sync
                        };
                        rec.op(self.began.elapsed(), kind, (0, 0), 0);
                    }
                    let kind = if data_only {
                        SyncKind::Fdatasync
                    } else {
                        SyncKind::Fsync
                    };
                    if let Err(e) = engine.sync(kind) {
                        self.st.fail(super::Failure::io(kind.name(), &e));
                        return;
                    }
                    continue;
                }
                if !self.issuing {
                    return;
                }
                match self.hold.take() {
                    Some(Hold::Until(t)) => pace::wait_until_or(t, &[self.halt, self.exit_all]),
                    Some(Hold::Think(total, spin)) => {
                        pace::think(total, spin, &[self.halt, self.exit_all])
                    }
                    None => {}
                }
                self.check_end();
                continue;
            }
            let drain = self.sync_due.is_some()
                || !self.issuing
                || matches!(self.hold, Some(Hold::Think(..)));
            let min = if drain { in_flight } else { 1 };
            let reaped = engine.complete(min, |batch| {
                for r in batch {
                    self.done(r.slot, r.res)
                }
            });
            if let Err(e) = reaped {
                self.st
                    .fail(super::Failure::io("waiting for I/O completions", &e));
                return;
            }
            if !self.to_check.is_empty() {
                self.check_reads(engine);
            }
            if let Some(f) = self.failed.take() {
                let stop = f.op != "verify" || fatal_verify;
                self.st.fail(f);
                if stop {
                    self.issuing = false;
                }
            }
            self.check_end();
        }
    }

    fn finish<E: IoEngine>(mut self, engine: &mut E) -> Stats {
        if self.p.end_fsync && self.st.error.is_none() {
            if let Err(e) = engine.sync(SyncKind::Fsync) {
                self.st.fail(super::Failure::io("end_fsync", &e));
            }
            self.last_done = Instant::now();
        }
        let st = &mut self.st;
        st.measured = self.last_done.saturating_duration_since(self.measure_from);
        let slicer = std::mem::replace(
            &mut self.slicer,
            Slicer::new(Duration::ZERO, self.last_done),
        );
        st.timeline = Some(slicer.finish_hist(self.last_done.max(self.measure_from), &st.lat));
        if let Some(l) = st.logs.as_mut() {
            l.finish(st.measured.as_millis() as u64);
        }
        if let Some(rec) = st.iolog.as_mut() {
            rec.close(self.last_done.saturating_duration_since(self.began));
        }
        // A last partial second would read as a dip in the series: drop it when it is short.
        if let Some(frac) = st
            .measured
            .checked_sub(Duration::from_secs(st.measured.as_secs()))
        {
            if st.per_sec.len() > 1 && frac < Duration::from_millis(500) {
                st.per_sec.truncate(st.measured.as_secs() as usize);
            }
        }
        self.st
    }
}

/// Drives one worker until its byte limit, its runtime, an error, or a stop request, publishing
/// its totals to `progress` as it goes. `data` may be shared by the workers of a job. A start
/// delay (fio startdelay) is waited out first.
pub fn drive(engine: &mut Engine, p: &Pattern, data: &WriteData, live: Live) -> Stats {
    engine.visit(Drive { p, data, live })
}

/// `drive` on an engine of a known type.
struct Drive<'a> {
    p: &'a Pattern,
    data: &'a WriteData,
    live: Live<'a>,
}

impl Visit for Drive<'_> {
    type Out = Stats;
    fn visit<E: IoEngine>(self, engine: &mut E) -> Stats {
        drive_on(engine, self.p, self.data, self.live)
    }
}

/// `drive` with an engine of any type (the tests' fakes too).
pub fn drive_on<E: IoEngine>(engine: &mut E, p: &Pattern, data: &WriteData, live: Live) -> Stats {
    if !p.pace.startdelay.is_zero() {
        pace::wait_until(Instant::now() + p.pace.startdelay);
    }
    let mut d = Driver::new(p, data, live);
    if let Some((f, i, _)) = &p.flow {
        f.join(*i);
    }
    if d.set_priority() {
        d.run(engine);
    }
    if let Some((f, i, _)) = &p.flow {
        f.leave(*i);
    }
    d.finish(engine)
}

#[cfg(test)]
mod tests;

mod replay;

mod issue;

mod trim;

mod latency;

#[cfg(test)]
mod effects;

#[cfg(test)]
mod fake;
