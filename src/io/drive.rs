//! The timed I/O loop of one worker.

use std::time::{Duration, Instant};

use super::{DataGen, Pattern, Permutation, Stats, WriteData};
use crate::engine::{Io, IoEngine};
use crate::metrics::progress::Progress;
use crate::plan::job::{BlockSize, Rw};

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

/// The state of one worker's loop: what is in flight, where the next I/O goes, what was measured.
struct Driver<'a> {
    p: &'a Pattern,
    data: &'a WriteData,
    progress: &'a Progress,
    st: Stats,
    rng: DataGen,
    align: u64,
    free: Vec<usize>,
    stamp: Vec<Instant>,
    /// (write, length, offset) of the I/O in each slot.
    kind: Vec<(bool, usize, u64)>,
    /// Slots whose buffer holds a full fill of its own (then scrambling keeps it unique).
    filled: Vec<bool>,
    measure_from: Instant,
    deadline: Option<Instant>,
    next_seq: u64,
    issued: u64,
    issuing: bool,
    writes_since_fsync: u32,
    writes_since_fdatasync: u32,
    /// Some(data_only) when an fsync (false) or fdatasync (true) is due once the queue drains.
    sync_due: Option<bool>,
    last_done: Instant,
    random: bool,
    map: Permutation,
    failed: Option<super::Failure>,
}

impl<'a> Driver<'a> {
    fn new(p: &'a Pattern, data: &'a WriteData, progress: &'a Progress) -> Driver<'a> {
        let mut rng = DataGen::new(p.seed);
        let depth = p.depth.max(1);
        let align = p.min_bs();
        let start = Instant::now();
        let measure_from = start + p.ramp;
        let map_slots = (p.region - p.max_bs().min(p.region)) / align + 1;
        let map = Permutation::new(map_slots, &mut rng);
        Driver {
            p,
            data,
            progress,
            st: Stats::new(),
            rng,
            align,
            free: (0..depth).rev().collect(),
            stamp: vec![start; depth],
            kind: vec![(false, 0usize, 0u64); depth],
            filled: vec![false; depth],
            measure_from,
            deadline: p.runtime.map(|r| measure_from + r),
            next_seq: 0,
            issued: 0,
            issuing: true,
            writes_since_fsync: 0,
            writes_since_fdatasync: 0,
            sync_due: None,
            last_done: start,
            random: matches!(p.rw, Rw::RandRead | Rw::RandWrite | Rw::RandRw),
            map,
            failed: None,
        }
    }

    /// The offset of the next I/O of `len` bytes; None when a sized sequential job is done.
    #[inline]
    fn next_offset(&mut self, len: u64) -> Option<u64> {
        let p = self.p;
        if self.random && p.randommap {
            return Some(self.map.next(&mut self.rng) * self.align);
        }
        if self.random {
            let slots = (p.region - len) / self.align + 1;
            return Some((self.rng.next_u64() % slots) * self.align);
        }
        if self.next_seq + len > p.region {
            if p.limit_bytes.is_some() && self.deadline.is_none() {
                return None;
            }
            self.next_seq = 0;
        }
        let o = self.next_seq;
        self.next_seq += len;
        Some(o)
    }

    /// Queues I/Os until the queue is full, a sync is due, or the job has issued everything.
    #[inline]
    fn fill_queue(&mut self, engine: &mut dyn IoEngine) {
        while self.issuing && self.sync_due.is_none() {
            let Some(slot) = self.free.pop() else { break };
            let p = self.p;
            let len = pick_bs(&p.bs, &mut self.rng).min(p.region);
            let write = match p.rw {
                Rw::Read | Rw::RandRead => false,
                Rw::Write | Rw::RandWrite => true,
                Rw::Rw | Rw::RandRw => (self.rng.next_u64() % 100) as u32 >= p.rwmixread,
            };
            let Some(offset) = self.next_offset(len) else {
                self.free.push(slot);
                self.issuing = false;
                break;
            };
            if write {
                let buf = &mut engine.buffer(slot)[..len as usize];
                if p.refill || !self.filled[slot] {
                    self.data.fill(buf, &mut self.rng);
                    self.filled[slot] = true;
                } else {
                    self.data.scramble(buf, &mut self.rng);
                }
            } else {
                // A read replaces the buffer's contents: the next write fills it afresh.
                self.filled[slot] = false;
            }
            self.kind[slot] = (write, len as usize, offset);
            self.stamp[slot] = Instant::now();
            let io = Io {
                slot,
                write,
                offset,
                len: len as usize,
            };
            if let Err(e) = engine.queue(io) {
                let what = if write {
                    "queueing a write"
                } else {
                    "queueing a read"
                };
                self.st.fail(super::Failure::io(what, &e).at(offset));
                self.free.push(slot);
                self.issuing = false;
                break;
            }
            self.issued += len;
            if p.limit_bytes.is_some_and(|limit| self.issued >= limit) {
                self.issuing = false;
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
        self.free.push(slot);
        let (write, len, offset) = self.kind[slot];
        if res < 0 {
            let what = if write { "write" } else { "read" };
            self.failed
                .get_or_insert_with(|| super::Failure::errno(what, (-res) as i32).at(offset));
            return;
        }
        if res == 0 && len > 0 {
            self.failed.get_or_insert_with(|| super::Failure {
                op: "read".into(),
                message: "read returned 0 bytes: the file is shorter than the job's size".into(),
                offset: Some(offset),
                ..Default::default()
            });
            return;
        }
        if write {
            self.count_write();
        }
        if now < self.measure_from {
            return;
        }
        let ns = (now.duration_since(self.stamp[slot]).as_nanos() as u64).max(1);
        let st = &mut self.st;
        st.lat.saturating_record(ns);
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
        self.progress.add(1, bytes);
        self.last_done = now;
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
        if let Some(why) = crate::stop::requested() {
            self.st.stopped = Some(why);
            self.issuing = false;
        }
    }

    /// Runs the loop to its end (its limit, its runtime, an error, or a stop request).
    fn run(&mut self, engine: &mut dyn IoEngine) {
        let depth = self.p.depth.max(1);
        loop {
            self.fill_queue(engine);
            let in_flight = depth - self.free.len();
            if in_flight == 0 {
                if let Some(data_only) = self.sync_due.take() {
                    if let Err(e) = engine.sync(data_only) {
                        let what = if data_only { "fdatasync" } else { "fsync" };
                        self.st.fail(super::Failure::io(what, &e));
                        return;
                    }
                    continue;
                }
                if !self.issuing {
                    return;
                }
            }
            let min = if self.sync_due.is_some() || !self.issuing {
                in_flight
            } else {
                1
            };
            if let Err(e) = engine.complete(min, &mut |slot, res| self.done(slot, res)) {
                self.st
                    .fail(super::Failure::io("waiting for I/O completions", &e));
                return;
            }
            if let Some(f) = self.failed.take() {
                self.st.fail(f);
                self.issuing = false;
            }
            self.check_end();
        }
    }

    fn finish(mut self, engine: &mut dyn IoEngine) -> Stats {
        if self.p.end_fsync && self.st.error.is_none() {
            if let Err(e) = engine.sync(false) {
                self.st.fail(super::Failure::io("end_fsync", &e));
            }
            self.last_done = Instant::now();
        }
        let st = &mut self.st;
        st.measured = self.last_done.saturating_duration_since(self.measure_from);
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
/// its totals to `progress` as it goes. `data` may be shared by the workers of a job.
pub fn drive(
    engine: &mut dyn IoEngine,
    p: &Pattern,
    data: &WriteData,
    progress: &Progress,
) -> Stats {
    let mut d = Driver::new(p, data, progress);
    d.run(engine);
    d.finish(engine)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine;
    use crate::plan::job::EngineKind;
    use std::time::Duration;

    fn pattern(rw: Rw, bs: BlockSize, limit: u64) -> Pattern {
        Pattern {
            rw,
            rwmixread: 70,
            bs,
            depth: 8,
            region: 1 << 20,
            limit_bytes: Some(limit),
            runtime: None,
            ramp: Duration::ZERO,
            fsync_every: 0,
            fdatasync_every: 0,
            end_fsync: false,
            seed: 42,
            compress_pct: 0,
            refill: false,
            randommap: true,
        }
    }

    fn null_engine(p: &Pattern) -> Box<dyn IoEngine> {
        (engine::def(EngineKind::Null).open)(None, p.depth, p.max_bs() as usize).unwrap()
    }

    #[test]
    fn null_engine_drives_the_runner_deterministically() {
        let p = pattern(Rw::RandRw, BlockSize::Fixed(4096), 40 << 20);
        let data = WriteData::new(1, 4096, 0);
        let a = drive(null_engine(&p).as_mut(), &p, &data, &Progress::new());
        let b = drive(null_engine(&p).as_mut(), &p, &data, &Progress::new());
        assert!(a.error.is_none());
        assert_eq!(a.reads + a.writes, 10240, "40 MiB in 4 KiB I/Os");
        assert_eq!(
            (a.reads, a.writes),
            (b.reads, b.writes),
            "same seed, same mix"
        );
        let share = a.reads as f64 / (a.reads + a.writes) as f64;
        assert!((0.67..0.73).contains(&share), "rwmixread=70 gave {share}");
        assert_eq!(a.read_bytes + a.write_bytes, 40 << 20);
        assert_eq!(a.lat.len(), 10240);
    }

    #[test]
    fn sequential_jobs_stop_at_their_size_and_ranges_stay_in_bounds() {
        let p = pattern(Rw::Read, BlockSize::Fixed(65536), 1 << 20);
        let s = drive(
            null_engine(&p).as_mut(),
            &p,
            &WriteData::new(1, 65536, 0),
            &Progress::new(),
        );
        assert_eq!((s.reads, s.read_bytes), (16, 1 << 20));
        let mut rng = DataGen::new(3);
        for _ in 0..1000 {
            let b = pick_bs(&BlockSize::Range(8192, 65536), &mut rng);
            assert!(b % 8192 == 0 && (8192..=65536).contains(&b));
        }
        let split = BlockSize::Split(vec![(4096, 75), (65536, 25)]);
        let small = (0..4000)
            .filter(|_| pick_bs(&split, &mut rng) == 4096)
            .count();
        assert!((2800..3200).contains(&small), "{small}");
    }

    #[test]
    fn time_based_jobs_run_for_their_runtime() {
        let mut p = pattern(Rw::RandRead, BlockSize::Fixed(4096), 1 << 20);
        p.limit_bytes = None;
        p.runtime = Some(Duration::from_millis(300));
        let t = Instant::now();
        let s = drive(
            null_engine(&p).as_mut(),
            &p,
            &WriteData::new(1, 4096, 0),
            &Progress::new(),
        );
        let took = t.elapsed();
        assert!(took >= Duration::from_millis(300) && took < Duration::from_secs(3));
        assert!(s.reads > 1000);
    }

    #[test]
    fn the_random_map_visits_every_block_once_per_pass() {
        let mut rng = DataGen::new(5);
        for n in [1u64, 2, 3, 1000, 4097] {
            let mut p = Permutation::new(n, &mut rng);
            for _pass in 0..2 {
                let mut seen = vec![false; n as usize];
                for _ in 0..n {
                    let v = p.next(&mut rng) as usize;
                    assert!(!seen[v], "n={n}: {v} twice in one pass");
                    seen[v] = true;
                }
            }
        }
        // Not the identity: the order is shuffled.
        let mut p = Permutation::new(1000, &mut rng);
        let first: Vec<u64> = (0..10).map(|_| p.next(&mut rng)).collect();
        assert_ne!(first, (0..10).collect::<Vec<u64>>());
    }

    #[test]
    fn every_write_gets_fresh_data() {
        let data = WriteData::new(9, 4096, 0);
        let mut rng = DataGen::new(1);
        let (mut a, mut b) = (vec![0u8; 4096], vec![0u8; 4096]);
        data.fill(&mut a, &mut rng);
        data.fill(&mut b, &mut rng);
        assert_ne!(a, b);
        let before = b.clone();
        data.scramble(&mut b, &mut rng);
        let changed = b
            .chunks(512)
            .zip(before.chunks(512))
            .filter(|(x, y)| x != y)
            .count();
        assert_eq!(changed, 8, "every sector gets a fresh stamp");
        let half = WriteData::new(9, 4096, 50);
        half.fill(&mut a, &mut rng);
        assert!(a[..2048].iter().all(|&x| x == 0));
        assert!(a[2048..].iter().filter(|&&x| x == 0).count() < 64);
    }
}
