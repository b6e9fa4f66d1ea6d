//! bonnie on one target: one frame phase per bonnie++ test, in bonnie++'s order.

use crate::metrics::name as metric;
use crate::store::note;
use std::fs::{File, OpenOptions};
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::files::{self, Names, Sizes};
use super::io as bio;
use super::options::{Bonnie, PERCHAR_BYTES};
use crate::frame::{
    CachePolicy, Merged, Phase, PhaseSpec, RunError, Session, WorkerCtx, WorkerOut,
};
use crate::io::calls::Done;
use crate::io::calls::Lat;
use crate::io::{DataGen, WriteData};
use crate::metrics::hist;
use crate::sys::AlignedBuf;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Test {
    Putc,
    PutBlock,
    Rewrite,
    Getc,
    GetBlock,
    Seeks,
    SeqCreate,
    SeqStat,
    SeqDel,
    RanCreate,
    RanStat,
    RanDel,
}

impl Test {
    const ALL: [Test; 12] = [
        Test::Putc,
        Test::PutBlock,
        Test::Rewrite,
        Test::Getc,
        Test::GetBlock,
        Test::Seeks,
        Test::SeqCreate,
        Test::SeqStat,
        Test::SeqDel,
        Test::RanCreate,
        Test::RanStat,
        Test::RanDel,
    ];

    fn name(self) -> &'static str {
        super::TESTS[self as usize]
    }

    /// The system call a failure of this test is in (the record's `failure.op`).
    fn call(self) -> &'static str {
        match self {
            Test::Putc | Test::PutBlock | Test::Rewrite => "write",
            Test::Getc | Test::GetBlock | Test::Seeks => "read",
            Test::SeqCreate | Test::RanCreate => "create",
            Test::SeqStat | Test::RanStat => "stat",
            Test::SeqDel | Test::RanDel => "unlink",
        }
    }

    fn does(self) -> &'static str {
        match self {
            Test::Putc => "sequential output per character: one-byte write() calls, then fsync",
            Test::PutBlock => "sequential output per block: a fresh file in chunks, then fsync",
            Test::Rewrite => "read each chunk, dirty a byte, seek back, write it; then fsync",
            Test::Getc => "sequential input per character: one-byte read() calls",
            Test::GetBlock => "sequential input per block",
            Test::Seeks => "random seeks: read a random chunk, write about one in ten back",
            Test::SeqCreate => "create the files in name order, then sync",
            Test::SeqStat => "stat (and read) the files in directory order",
            Test::SeqDel => "delete the files in directory order, then sync",
            Test::RanCreate => "create the files in a random order, then sync",
            Test::RanStat => "stat (and read) the files in a random order",
            Test::RanDel => "delete the files in a random order, then sync",
        }
    }

    fn is_io(self) -> bool {
        (self as usize) < 6
    }

    fn writes(self) -> bool {
        !matches!(
            self,
            Test::Getc | Test::GetBlock | Test::SeqStat | Test::RanStat
        )
    }
}

/// The seekers' clock: the first seeker's start, the last one's last seek, and the last one's
/// end (after its fsync and close, where bonnie++'s clock stops; the unlink follows).
#[derive(Default)]
struct Span {
    start: Option<Instant>,
    seeks_end: Option<Instant>,
    end: Option<Instant>,
}

pub struct BonnieSession {
    b: Bonnie,
    fs: String,
    /// The target lives in memory (tmpfs): no page-cache note, its reads are memory reads.
    memory: bool,
    file: PathBuf,
    root: PathBuf,
    tests: Vec<Test>,
    specs: Vec<PhaseSpec>,
    /// The file names of the current round (sequential, then random) and the random order.
    names: Option<Names>,
    order: Vec<files::Entry>,
    /// The open folders of the file tests.
    dirs: Vec<crate::sys::dirfd::Dir>,
    pool: Vec<u8>,
    data: WriteData,
    span: Mutex<Span>,
    /// Why the later IO tests cannot run (the IO file could not be written).
    broken: Option<String>,
    mem_total: u64,
    /// The seekers' shared queue of tickets (a pipe, as bonnie++'s), and its feeder.
    tickets: Option<File>,
    feeder: Option<std::thread::JoinHandle<std::io::Result<()>>>,
    how: Mutex<Vec<String>>,
}

impl BonnieSession {
    pub fn new(b: Bonnie, dir: PathBuf, fs: String, memory: bool) -> BonnieSession {
        let tests: Vec<Test> = Test::ALL
            .into_iter()
            .filter(|t| {
                if t.is_io() {
                    b.size > 0 && (b.perchar || !matches!(t, Test::Putc | Test::Getc))
                } else {
                    b.files > 0
                }
            })
            .collect();
        let specs = tests
            .iter()
            .map(|t| PhaseSpec {
                name: t.name().into(),
                does: t.does().into(),
                cache: CachePolicy::Keep,
                writes: t.writes(),
                reads: !matches!(t, Test::Putc | Test::PutBlock) && t.is_io(),
                workers: if *t == Test::Seeks { b.seekers } else { 1 },
                unit: if t.is_io() { "calls" } else { "files" },
                total_ops: match t {
                    Test::Putc | Test::Getc => Some(PERCHAR_BYTES.min(b.size)),
                    Test::PutBlock | Test::Rewrite | Test::GetBlock => Some(b.size / b.chunk),
                    Test::Seeks => Some(b.seeks),
                    _ => Some(b.files),
                },
                // bonnie++ is one process but for its seekers: so are its other tests here.
                single_thread: *t != Test::Seeks,
                ..Default::default()
            })
            .collect();
        let mut pool = vec![0u8; (b.max as usize).max(1 << 16)];
        DataGen::new(b.seed ^ 0xb0).fill(&mut pool);
        BonnieSession {
            data: WriteData::new(b.seed, b.chunk, 0),
            file: dir.join("fsbench-bonnie.dat"),
            root: dir.join("fsbench-bonnie-files"),
            b,
            fs,
            memory,
            tests,
            specs,
            names: None,
            order: Vec::new(),
            dirs: Vec::new(),
            pool,
            span: Mutex::new(Span::default()),
            broken: None,
            mem_total: crate::sys::host::mem_total_bytes(),
            tickets: None,
            feeder: None,
            how: Mutex::new(Vec::new()),
        }
    }

    /// Opens the IO file; O_DIRECT when asked and the filesystem takes it (else buffered, noted).
    fn open(&self, write: bool, create: bool, direct: bool) -> std::io::Result<File> {
        let open = |direct: bool| {
            let mut o = OpenOptions::new();
            o.read(true).write(write);
            if create {
                o.create(true).truncate(true);
            }
            if direct {
                o.custom_flags(libc::O_DIRECT);
            }
            o.open(&self.file)
        };
        match open(direct && self.b.direct) {
            Err(e) if direct && self.b.direct && e.raw_os_error() == Some(libc::EINVAL) => {
                let mut h = self.how.lock().unwrap_or_else(|e| e.into_inner());
                let note = format!("direct=1 refused by {}: ran buffered", self.fs);
                if !h.contains(&note) {
                    h.push(note);
                }
                open(false)
            }
            r => r,
        }
    }

    fn io_test(&self, t: Test, ctx: &WorkerCtx, lat: &mut Lat) -> std::io::Result<Done> {
        let mut rng = DataGen::new(self.b.seed ^ (t as u64) << 32 ^ ctx.index as u64);
        let mut buf = AlignedBuf::new(self.b.chunk as usize);
        let perchar = PERCHAR_BYTES.min(self.b.size);
        match t {
            Test::Putc => bio::putc(&mut self.open(true, true, false)?, perchar, lat),
            Test::PutBlock => {
                let mut f = self.open(true, true, true)?;
                bio::put_block(&mut f, self.b.size, &mut buf, &self.data, &mut rng, lat)
            }
            Test::Rewrite => bio::rewrite(
                &mut self.open(true, false, true)?,
                self.b.size,
                &mut buf,
                lat,
            ),
            Test::Getc => bio::getc(&mut self.open(false, false, false)?, perchar, lat),
            Test::GetBlock => bio::get_block(
                &mut self.open(false, false, true)?,
                self.b.size,
                &mut buf,
                lat,
            ),
            _ => self.seeker(ctx, &mut buf, &mut rng, lat),
        }
    }

    /// One seeker: bonnie++'s seek loop, then its end (fsync and close inside the clock, unlink).
    fn seeker(
        &self,
        ctx: &WorkerCtx,
        buf: &mut [u8],
        rng: &mut DataGen,
        lat: &mut Lat,
    ) -> std::io::Result<Done> {
        let mut f = self.open(true, false, true)?;
        let Some(queue) = &self.tickets else {
            return Err(std::io::Error::other("no seek tickets"));
        };
        let mut next = || -> std::io::Result<u32> {
            let mut b = [0u8; 4];
            (&*queue).read_exact(&mut b)?;
            Ok(u32::from_le_bytes(b))
        };
        ctx.start_line();
        lat.begin(Instant::now());
        let chunks = self.b.size / self.b.chunk;
        let d = bio::seeks(&mut f, &mut next, chunks, buf, rng, lat)?;
        let seeks_end = Instant::now();
        let mut end = seeks_end;
        bio::seeker_end(
            f,
            || end = Instant::now(),
            || std::fs::remove_file(&self.file),
        )?;
        let mut span = self.span.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(t0) = d.started {
            span.start = Some(span.start.map_or(t0, |s| s.min(t0)));
        }
        span.seeks_end = Some(span.seeks_end.map_or(seeks_end, |e| e.max(seeks_end)));
        span.end = Some(span.end.map_or(end, |e| e.max(end)));
        Ok(d)
    }

    fn file_test(&self, t: Test, lat: &mut Lat) -> std::io::Result<files::Done> {
        let sizes = Sizes {
            min: self.b.min,
            max: self.b.max,
            fsync: self.b.fsync,
        };
        let mut rng = DataGen::new(self.b.seed ^ (t as u64) << 40);
        let mut buf = vec![0u8; 1 << 16];
        let names = self.names.as_ref().expect("prepare made the names");
        match t {
            Test::SeqCreate | Test::RanCreate => files::create(
                names, &self.dirs, &self.root, &sizes, &self.pool, &mut rng, lat,
            ),
            Test::SeqStat => {
                let walk = files::walk(&self.root, self.b.dirs);
                files::stat(walk, &self.dirs, &mut buf, lat)
            }
            Test::SeqDel => {
                let walk = files::walk(&self.root, self.b.dirs);
                files::delete(walk, &self.dirs, &self.root, lat)
            }
            Test::RanStat => {
                let order = self.order.iter().cloned().map(Ok);
                files::stat(order, &self.dirs, &mut buf, lat)
            }
            _ => {
                let order = self.order.iter().cloned().map(Ok);
                files::delete(order, &self.dirs, &self.root, lat)
            }
        }
    }
}

impl Session for BonnieSession {
    fn phases(&self) -> &[PhaseSpec] {
        &self.specs
    }

    fn prepare(&mut self, phase: usize) -> Result<(), RunError> {
        let t = self.tests[phase];
        let mut rng = DataGen::new(self.b.seed ^ 0x5eed ^ phase as u64);
        match t {
            Test::SeqCreate | Test::RanCreate => {
                files::make_dirs(&self.root, self.b.dirs)
                    .map_err(RunError::io(self.root.display()))?;
                self.dirs = files::folders(&self.root, self.b.dirs)
                    .iter()
                    .map(|f| crate::sys::dirfd::Dir::open(f))
                    .collect::<Result<_, _>>()
                    .map_err(RunError::io(self.root.display()))?;
                let random = t == Test::RanCreate;
                self.names = Some(files::names(self.b.files, self.b.dirs, random, &mut rng));
            }
            Test::Seeks => {
                *self.span.get_mut().unwrap_or_else(|e| e.into_inner()) = Span::default();
                let (r, mut w) =
                    crate::sys::pipe().map_err(RunError::io("a pipe for the seekers"))?;
                let (seeks, seekers) = (self.b.seeks, self.b.seekers);
                self.tickets = Some(r);
                // All tickets, then one end per seeker; a thread, as the pipe holds 16K tickets.
                self.feeder = Some(std::thread::spawn(move || {
                    use std::io::Write;
                    let mut batch = Vec::with_capacity(4096);
                    for i in 0..seeks + seekers as u64 {
                        let t = if i < seeks {
                            (rng.next_u64() as u32) % bio::END
                        } else {
                            bio::END
                        };
                        batch.extend_from_slice(&t.to_le_bytes());
                        if batch.len() >= 4096 {
                            w.write_all(&batch)?;
                            batch.clear();
                        }
                    }
                    w.write_all(&batch)
                }));
            }
            Test::RanStat | Test::RanDel => {
                self.order = self
                    .names
                    .as_ref()
                    .map(|n| n.paths.clone())
                    .unwrap_or_default();
                files::shuffle(&mut self.order, &mut rng);
            }
            _ => {}
        }
        Ok(())
    }

    fn work(&self, phase: usize, ctx: &WorkerCtx) -> WorkerOut {
        let t = self.tests[phase];
        let mut out = WorkerOut::default();
        if t.is_io() && t != Test::Putc && t != Test::PutBlock && self.broken.is_some() {
            return out;
        }
        let mut lat = Lat::over(ctx.interval);
        let t0 = Instant::now();
        let r = if t.is_io() {
            self.io_test(t, ctx, &mut lat)
                .map(|d| (d.ops, d.bytes, d.rewrites, d.stopped))
        } else {
            self.file_test(t, &mut lat)
                .map(|d| (d.files, d.bytes, 0, d.stopped))
        };
        out.window = t0.elapsed();
        match r {
            Ok((ops, bytes, rewrites, stopped)) => {
                ctx.progress.add(ops, bytes);
                out.counters.insert("ops", ops as f64);
                out.counters.insert("bytes", bytes as f64);
                out.counters.insert("rewrites", rewrites as f64);
                out.stopped = stopped;
            }
            Err(e) => {
                out.error = Some(format!("{}: {e}", t.name()));
                out.failure = Some(crate::io::Failure::io(t.call(), &e));
            }
        }
        out.timeline = lat.timeline(Instant::now());
        let mut h = hist::new();
        lat.into_hist(&mut h);
        out.hists.insert("lat", h);
        out
    }

    fn finish(&mut self, phase: usize, m: &Merged) -> Result<Vec<Phase>, RunError> {
        let t = self.tests[phase];
        if let Some(feeder) = self.feeder.take() {
            self.tickets = None;
            // The seekers are done: their reads ended, so the feeder ends too (or failed).
            let _ = feeder.join();
        }
        let p = &m.parts[0];
        let mut ph = Phase {
            test: t.name().into(),
            error: p.error.clone(),
            ..Default::default()
        };
        if let (Some(why), true) = (&self.broken, t.is_io() && p.counter("ops") == 0.0) {
            ph.skipped = Some(format!("the IO file could not be written: {why}"));
            return Ok(vec![ph]);
        }
        if let (Some(e), Test::Putc | Test::PutBlock) = (&p.error, t) {
            self.broken = Some(e.clone());
        }
        let span = self.span.lock().unwrap_or_else(|e| e.into_inner());
        let (secs, close) = match (t, span.start, span.seeks_end, span.end) {
            (Test::Seeks, Some(a), Some(s), Some(e)) => {
                (e - a, Some(e.saturating_duration_since(s)))
            }
            _ => (p.window, None),
        };
        drop(span);
        self.figures(t, p, m, secs, &mut ph);
        if let Some(close) = close {
            seek_close(&mut ph, p.counter("ops"), secs, close);
        }
        Ok(vec![ph])
    }

    fn close(&mut self) -> Result<(), RunError> {
        let _ = std::fs::remove_file(&self.file);
        if self.root.exists() {
            std::fs::remove_dir_all(&self.root).map_err(RunError::io(self.root.display()))?;
        }
        Ok(())
    }
}

/// The seekers' end inside the seek clock (bonnie++'s span): the time from the last seek to the
/// last close, which frees the IO file when another seeker unlinked it first, and the rate
/// without it.
fn seek_close(ph: &mut Phase, seeks: f64, secs: Duration, close: Duration) {
    ph.metrics
        .insert(metric::SEEK_CLOSE_S.into(), close.as_secs_f64());
    let without = (secs - close.min(secs)).as_secs_f64().max(1e-9);
    ph.notes.push(format!(
        "seeks/s counts, as bonnie++'s does, the seekers' fsync and close after their last seek (then they unlink the IO file; a close after another seeker's unlink frees the file): {:.0} ms; {:.0} seeks/s without it",
        close.as_secs_f64() * 1000.0,
        seeks / without
    ));
}

impl BonnieSession {
    fn figures(&self, t: Test, p: &WorkerOut, m: &Merged, secs: Duration, ph: &mut Phase) {
        let s = secs.as_secs_f64().max(1e-9);
        let (ops, bytes) = (p.counter("ops"), p.counter("bytes"));
        let mx = &mut ph.metrics;
        if t.is_io() && t != Test::Seeks {
            mx.insert("bytes".into(), bytes);
            mx.insert(metric::BYTES_PER_SEC.into(), bytes / s);
            mx.insert(metric::KIB_PER_SEC.into(), bytes / 1024.0 / s);
        } else if t == Test::Seeks {
            mx.insert("seeks".into(), ops);
            mx.insert(metric::SEEK_REWRITES.into(), p.counter("rewrites"));
            mx.insert(metric::SEEKS_PER_SEC.into(), ops / s);
        } else {
            mx.insert("files".into(), ops);
            mx.insert(metric::FILES_PER_SEC.into(), ops / s);
        }
        let cpu = |k: &str| m.frame.cpu.get(k).copied().unwrap_or(0.0);
        mx.insert(
            metric::CPU_PCT.into(),
            cpu(metric::CPU_USER_PCT) + cpu(metric::CPU_SYS_PCT),
        );
        mx.insert(
            metric::TOO_FAST.into(),
            f64::from(u8::from(secs < Duration::from_millis(500))),
        );
        if let Some(h) = p.hists.get("lat") {
            hist::summarize(h, "lat", mx);
            ph.histograms.insert("lat_ns".into(), hist::encode(h));
        }
        ph.duration_s = secs.as_secs_f64();
        if secs < Duration::from_millis(500) {
            ph.notes.push(note::make(note::Kind::TooFast, format!(
                "measured in {:.0} ms, under 0.5 s (bonnie++ prints +++++); a larger size= or files= gives a figure to trust",
                secs.as_secs_f64() * 1000.0
            )));
        }
        let mem = self.mem_total;
        if t.is_io() && self.b.size < mem && !self.memory && !self.b.direct {
            ph.notes.push(note::make(
                note::Kind::PageCache,
                format!(
                "the IO file ({}) is smaller than RAM ({}): it may be served from the page cache",
                crate::plan::units::format_bytes(self.b.size),
                crate::plan::units::format_bytes(mem)
            ),
            ));
        }
        if t.is_io() {
            ph.notes.push("data: incompressible, fresh in every chunk (bonnie++ writes one buffer with a byte changed per chunk)".into());
        }
        ph.notes.extend(
            self.how
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .iter()
                .chain(&p.how)
                .cloned(),
        );
        ph.config = Some(serde_json::json!({
            "size": self.b.size, "ram": self.b.ram, "chunk": self.b.chunk,
            "perchar": self.b.perchar, "perchar_bytes": PERCHAR_BYTES.min(self.b.size),
            "files": self.b.files, "max": self.b.max, "min": self.b.min, "dirs": self.b.dirs,
            "fsync": self.b.fsync, "direct": self.b.direct, "seeks": self.b.seeks,
            "seekers": self.b.seekers, "seed": self.b.seed,
        }));
    }
}
