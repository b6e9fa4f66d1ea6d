//! The I/O loop: keeps `iodepth` I/Os in flight through an engine, picks offsets and sizes, fills
//! write buffers with fresh data, and times every I/O from queue to completion (the engine never
//! reads the clock). One call drives one worker (one of a job's `numjobs`).

use std::time::{Duration, Instant};

use crate::engine::{Io, IoEngine};
use crate::metrics::hist::{self, Hist};
use crate::plan::job::{BlockSize, Rw};
use crate::workload::data::DataGen;

/// What one worker does, resolved from a job: sizes in bytes, times as durations.
#[derive(Debug, Clone)]
pub struct Pattern {
    pub rw: Rw,
    pub rwmixread: u32,
    pub bs: BlockSize,
    pub depth: usize,
    /// Bytes of the file (or device) the I/Os fall in, from offset 0.
    pub region: u64,
    /// Stop after this many bytes (None: only the runtime stops it).
    pub limit_bytes: Option<u64>,
    pub runtime: Option<Duration>,
    pub ramp: Duration,
    pub fsync_every: u32,
    pub fdatasync_every: u32,
    pub end_fsync: bool,
    pub seed: u64,
    /// Share of each 4 KiB of written data that compresses (zeros); 0 = incompressible.
    pub compress_pct: u32,
    /// Random offsets visit every block once per pass (fio's default random map); false draws
    /// each offset independently (fio norandommap).
    pub randommap: bool,
    /// Regenerate the whole buffer for every write (fio refill_buffers); otherwise each write
    /// stamps a fresh random key into every 512-byte sector of a random buffer (fio's default
    /// scramble_buffers), which keeps every sector of every write unique at 1/64 of the cost.
    pub refill: bool,
}

impl Pattern {
    pub fn max_bs(&self) -> u64 {
        max_bs(&self.bs)
    }

    fn min_bs(&self) -> u64 {
        match &self.bs {
            BlockSize::Fixed(b) => *b,
            BlockSize::Range(lo, _) => *lo,
            BlockSize::Split(v) => v.iter().map(|x| x.0).min().unwrap_or(4096),
        }
    }
}

pub fn max_bs(bs: &BlockSize) -> u64 {
    match bs {
        BlockSize::Fixed(b) => *b,
        BlockSize::Range(_, hi) => *hi,
        BlockSize::Split(v) => v.iter().map(|x| x.0).max().unwrap_or(4096),
    }
}

/// What one worker measured (after the ramp).
#[derive(Debug, Clone)]
pub struct Stats {
    pub lat: Hist,
    pub read_lat: Hist,
    pub write_lat: Hist,
    pub reads: u64,
    pub writes: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    /// Completed I/Os and bytes per whole second of the measured window.
    pub per_sec: Vec<(u64, u64)>,
    pub measured: Duration,
    pub error: Option<String>,
    /// Stopped early by a signal.
    pub interrupted: bool,
}

impl Stats {
    pub fn new() -> Stats {
        Stats {
            lat: hist::new(),
            read_lat: hist::new(),
            write_lat: hist::new(),
            reads: 0,
            writes: 0,
            read_bytes: 0,
            write_bytes: 0,
            per_sec: Vec::new(),
            measured: Duration::ZERO,
            error: None,
            interrupted: false,
        }
    }

    /// Adds another worker's figures (workers of one job run side by side: the window is the
    /// longest of theirs).
    pub fn merge(&mut self, o: &Stats) {
        let _ = self.lat.add(&o.lat);
        let _ = self.read_lat.add(&o.read_lat);
        let _ = self.write_lat.add(&o.write_lat);
        self.reads += o.reads;
        self.writes += o.writes;
        self.read_bytes += o.read_bytes;
        self.write_bytes += o.write_bytes;
        if self.per_sec.len() < o.per_sec.len() {
            self.per_sec.resize(o.per_sec.len(), (0, 0));
        }
        for (a, b) in self.per_sec.iter_mut().zip(&o.per_sec) {
            a.0 += b.0;
            a.1 += b.1;
        }
        self.measured = self.measured.max(o.measured);
        if self.error.is_none() {
            self.error.clone_from(&o.error);
        }
        self.interrupted |= o.interrupted;
    }
}

impl Default for Stats {
    fn default() -> Self {
        Stats::new()
    }
}

/// Fresh, incompressible write data: a random pool XORed with a new random key for every write,
/// from a new random place in the pool, so no two writes carry the same bytes (not one repeated
/// buffer) at the cost of one pass over the buffer.
pub struct WriteData {
    pool: Vec<u64>,
    compress_pct: u32,
}

/// 256 KiB of random words: small enough to stay in the CPU's cache, so that regenerating a
/// buffer costs one pass of writes and not a second stream of reads from memory.
const POOL_WORDS: usize = 1 << 15;
/// Each 64 KiB of a buffer takes its own key and its own place in the pool.
const SEGMENT: usize = 64 << 10;

impl WriteData {
    pub fn new(seed: u64, max_bs: u64, compress_pct: u32) -> WriteData {
        let mut gen = DataGen::new(seed ^ 0x5eed_da7a);
        let words = POOL_WORDS + SEGMENT.min(max_bs as usize) / 8;
        let pool = (0..words).map(|_| gen.next_u64()).collect();
        WriteData { pool, compress_pct }
    }

    /// Makes a buffer that was filled once unique again: a fresh random key (plus the sector's
    /// index) over the first 8 bytes of every 512-byte sector. No two writes share a sector.
    pub fn scramble(&self, dst: &mut [u8], rng: &mut DataGen) {
        let key = rng.next_u64();
        for (i, sector) in dst.chunks_mut(512).enumerate() {
            let n = sector.len().min(8);
            sector[..n].copy_from_slice(&key.wrapping_add(i as u64).to_ne_bytes()[..n]);
        }
        if self.compress_pct > 0 {
            let zeros = 4096 * self.compress_pct as usize / 100;
            for seg in dst.chunks_mut(4096) {
                let n = zeros.min(seg.len());
                seg[..n].fill(0);
            }
        }
    }

    pub fn fill(&self, dst: &mut [u8], rng: &mut DataGen) {
        for seg in dst.chunks_mut(SEGMENT) {
            let key = rng.next_u64();
            let words = seg.len().div_ceil(8);
            let start = (rng.next_u64() % (self.pool.len() - words + 1) as u64) as usize;
            let src = &self.pool[start..start + words];
            let mut chunks = seg.chunks_exact_mut(8);
            for (d, s) in (&mut chunks).zip(src) {
                d.copy_from_slice(&(s ^ key).to_ne_bytes());
            }
            let rest = chunks.into_remainder();
            if !rest.is_empty() {
                let n = rest.len();
                rest.copy_from_slice(&(src[words - 1] ^ key).to_ne_bytes()[..n]);
            }
        }
        if self.compress_pct > 0 {
            let zeros = 4096 * self.compress_pct as usize / 100;
            for seg in dst.chunks_mut(4096) {
                let n = zeros.min(seg.len());
                seg[..n].fill(0);
            }
        }
    }
}

/// A random permutation of 0..n: a 4-round Feistel network over the next even power of two, with
/// cycle walking, re-keyed for every pass. Random I/O then touches every block once per pass, as
/// fio's default random map does, without a bitmap.
pub struct Permutation {
    n: u64,
    half: u32,
    keys: [u64; 4],
    i: u64,
}

fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Permutation {
    pub fn new(n: u64, rng: &mut DataGen) -> Permutation {
        let bits = (64 - n.max(2).saturating_sub(1).leading_zeros()).max(2);
        let half = bits.div_ceil(2);
        let mut p = Permutation {
            n: n.max(1),
            half,
            keys: [0; 4],
            i: 0,
        };
        p.rekey(rng);
        p
    }

    fn rekey(&mut self, rng: &mut DataGen) {
        for k in &mut self.keys {
            *k = rng.next_u64();
        }
        self.i = 0;
    }

    fn apply(&self, x: u64) -> u64 {
        let mask = (1u64 << self.half) - 1;
        let (mut l, mut r) = (x >> self.half, x & mask);
        for k in self.keys {
            let t = l ^ (mix(r ^ k) & mask);
            l = r;
            r = t;
        }
        (l << self.half) | r
    }

    pub fn next(&mut self, rng: &mut DataGen) -> u64 {
        let domain = 1u64 << (2 * self.half);
        loop {
            if self.i >= domain {
                self.rekey(rng);
            }
            let v = self.apply(self.i);
            self.i += 1;
            if v < self.n {
                return v;
            }
        }
    }
}

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

fn errno_text(res: i64) -> String {
    std::io::Error::from_raw_os_error((-res) as i32).to_string()
}

/// Drives one worker until its byte limit, its runtime, an error, or a stop signal.
/// `data` may be shared by the workers of a job.
pub fn drive(engine: &mut dyn IoEngine, p: &Pattern, data: &WriteData) -> Stats {
    let mut st = Stats::new();
    let mut rng = DataGen::new(p.seed);
    let depth = p.depth.max(1);
    let align = p.min_bs();
    let mut free: Vec<usize> = (0..depth).rev().collect();
    let mut stamp = vec![Instant::now(); depth];
    let mut kind = vec![(false, 0usize); depth];
    // Slots whose buffer holds a full fill of its own (then scrambling keeps it unique).
    let mut filled = vec![false; depth];
    let start = Instant::now();
    let measure_from = start + p.ramp;
    let deadline = p.runtime.map(|r| measure_from + r);
    let mut next_seq = 0u64;
    let mut issued = 0u64;
    let mut issuing = true;
    let mut writes_since_fsync = 0u32;
    let mut writes_since_fdatasync = 0u32;
    let mut sync_due: Option<bool> = None;
    let mut last_done = start;
    let random = matches!(p.rw, Rw::RandRead | Rw::RandWrite | Rw::RandRw);
    let map_slots = (p.region - p.max_bs().min(p.region)) / align + 1;
    let mut map = Permutation::new(map_slots, &mut rng);
    loop {
        // Fill the queue.
        while issuing && sync_due.is_none() {
            let Some(slot) = free.pop() else { break };
            let len = pick_bs(&p.bs, &mut rng).min(p.region);
            let write = match p.rw {
                Rw::Read | Rw::RandRead => false,
                Rw::Write | Rw::RandWrite => true,
                Rw::Rw | Rw::RandRw => (rng.next_u64() % 100) as u32 >= p.rwmixread,
            };
            let offset = if random && p.randommap {
                map.next(&mut rng) * align
            } else if random {
                let slots = (p.region - len) / align + 1;
                (rng.next_u64() % slots) * align
            } else {
                if next_seq + len > p.region {
                    if p.limit_bytes.is_some() && deadline.is_none() {
                        free.push(slot);
                        issuing = false;
                        break;
                    }
                    next_seq = 0;
                }
                let o = next_seq;
                next_seq += len;
                o
            };
            if write {
                let buf = &mut engine.buffer(slot)[..len as usize];
                if p.refill || !filled[slot] {
                    data.fill(buf, &mut rng);
                    filled[slot] = true;
                } else {
                    data.scramble(buf, &mut rng);
                }
            } else {
                // A read replaces the buffer's contents: the next write fills it afresh.
                filled[slot] = false;
            }
            kind[slot] = (write, len as usize);
            stamp[slot] = Instant::now();
            if let Err(e) = engine.queue(Io {
                slot,
                write,
                offset,
                len: len as usize,
            }) {
                st.error = Some(format!("cannot queue an I/O: {e}"));
                free.push(slot);
                issuing = false;
                break;
            }
            issued += len;
            if let Some(limit) = p.limit_bytes {
                if issued >= limit {
                    issuing = false;
                }
            }
        }
        let in_flight = depth - free.len();
        if in_flight == 0 {
            if let Some(data_only) = sync_due.take() {
                if let Err(e) = engine.sync(data_only) {
                    st.error = Some(format!("fsync failed: {e}"));
                    break;
                }
                continue;
            }
            if !issuing {
                break;
            }
        }
        let min = if sync_due.is_some() || !issuing {
            in_flight
        } else {
            1
        };
        let mut failed: Option<String> = None;
        let r = {
            let mut on_done = |slot: usize, res: i64| {
                let now = Instant::now();
                free.push(slot);
                let (write, len) = kind[slot];
                if res < 0 {
                    failed.get_or_insert_with(|| {
                        format!(
                            "{} failed: {}",
                            if write { "write" } else { "read" },
                            errno_text(res)
                        )
                    });
                    return;
                }
                if res == 0 && len > 0 {
                    failed.get_or_insert_with(|| {
                        "read returned 0 bytes: the file is shorter than the job's size".into()
                    });
                    return;
                }
                if write {
                    writes_since_fsync += 1;
                    writes_since_fdatasync += 1;
                    if p.fsync_every > 0 && writes_since_fsync >= p.fsync_every {
                        writes_since_fsync = 0;
                        sync_due = Some(false);
                    }
                    if p.fdatasync_every > 0 && writes_since_fdatasync >= p.fdatasync_every {
                        writes_since_fdatasync = 0;
                        sync_due.get_or_insert(true);
                    }
                }
                if now < measure_from {
                    return;
                }
                let ns = now.duration_since(stamp[slot]).as_nanos() as u64;
                st.lat.saturating_record(ns.max(1));
                let bytes = res as u64;
                if write {
                    st.write_lat.saturating_record(ns.max(1));
                    st.writes += 1;
                    st.write_bytes += bytes;
                } else {
                    st.read_lat.saturating_record(ns.max(1));
                    st.reads += 1;
                    st.read_bytes += bytes;
                }
                let sec = now.duration_since(measure_from).as_secs() as usize;
                if st.per_sec.len() <= sec {
                    st.per_sec.resize(sec + 1, (0, 0));
                }
                st.per_sec[sec].0 += 1;
                st.per_sec[sec].1 += bytes;
                last_done = now;
            };
            engine.complete(min, &mut on_done)
        };
        if let Err(e) = r {
            st.error = Some(format!("I/O completion failed: {e}"));
            break;
        }
        if let Some(e) = failed {
            st.error = Some(e);
            issuing = false;
        }
        if issuing {
            if let Some(d) = deadline {
                if Instant::now() >= d {
                    issuing = false;
                }
            }
            if crate::runner::stop_requested() {
                st.interrupted = true;
                issuing = false;
            }
        }
    }
    if p.end_fsync && st.error.is_none() {
        if let Err(e) = engine.sync(false) {
            st.error = Some(format!("end_fsync failed: {e}"));
        }
        last_done = Instant::now();
    }
    st.measured = last_done.saturating_duration_since(measure_from);
    // A last partial second would read as a dip in the series: drop it when it is short.
    if let Some(frac) = st
        .measured
        .checked_sub(Duration::from_secs(st.measured.as_secs()))
    {
        if st.per_sec.len() > 1 && frac < Duration::from_millis(500) {
            st.per_sec.truncate(st.measured.as_secs() as usize);
        }
    }
    st
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine;
    use crate::plan::job::EngineKind;

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
        let a = drive(null_engine(&p).as_mut(), &p, &data);
        let b = drive(null_engine(&p).as_mut(), &p, &data);
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
        let s = drive(null_engine(&p).as_mut(), &p, &WriteData::new(1, 65536, 0));
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
        let s = drive(null_engine(&p).as_mut(), &p, &WriteData::new(1, 4096, 0));
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
