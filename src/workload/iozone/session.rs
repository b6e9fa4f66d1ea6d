//! iozone on one target: one frame phase per test and cell, in iozone's order; or, in throughput
//! mode, one phase per test with N workers on their own files.

use crate::metrics::name as metric;
use std::fs::{File, OpenOptions};
use std::io::{IsTerminal, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::battery::{self, Access, Pool, Test, TestDef};
use super::options::{Cell, Iozone};
use crate::frame::live::Live;
use crate::frame::{
    CachePolicy, Merged, Phase, PhaseSpec, RunError, Session, WorkerCtx, WorkerOut,
};
use crate::io::calls::Lat;
use crate::metrics::hist;
use crate::plan::units::format_bytes;
use crate::sys::AlignedBuf;
use cell::CellOut;

/// The largest file of the cell before that a cell's write test reads first (`warms_previous`).
const WARM_MAX: u64 = 8 << 20;

mod cell;

/// A size as iozone's tables and fsbench's test names write it: 64K, 512M, 2G.
pub fn size_label(bytes: u64) -> String {
    const UNITS: [(u64, &str); 3] = [(1 << 30, "G"), (1 << 20, "M"), (1 << 10, "K")];
    for (u, s) in UNITS {
        if bytes >= u && bytes % u == 0 {
            return format!("{}{s}", bytes / u);
        }
    }
    format!("{bytes}B")
}

/// One phase: a test of a cell, or (`whole`) all the cell's tests back to back.
#[derive(Debug, Clone, Copy)]
struct Step {
    cell: usize,
    test: Test,
    /// The cell's first test (sync before it) and last (the file is removed after it).
    first: bool,
    last: bool,
    /// The phase runs every test of the cell in iozone's order, one record each.
    whole: bool,
}

/// Checks that the filesystem takes O_DIRECT, with a small file that is removed again.
pub fn probe_direct(dir: &Path, fs: &str) -> Result<(), RunError> {
    let probe = dir.join(".fsbench-iozone-direct-probe");
    let r = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .custom_flags(libc::O_DIRECT)
        .open(&probe);
    let _ = std::fs::remove_file(&probe);
    match r {
        Ok(_) => Ok(()),
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => Err(RunError::Invalid(format!(
            "direct=1: {fs} at {} refuses O_DIRECT; drop direct=1 (and use purge=1 to keep reads off the cache)",
            dir.display()
        ))),
        Err(e) => Err(RunError::io(probe.display())(e)),
    }
}

pub struct IozoneSession {
    z: Iozone,
    dir: PathBuf,
    /// The target lives in memory (tmpfs): no page-cache note.
    memory: bool,
    cells: Vec<Cell>,
    /// The tests of every cell, in iozone's order.
    tests: Vec<Test>,
    steps: Vec<Step>,
    specs: Vec<PhaseSpec>,
    pool: Pool,
    /// Each worker's record buffer, of the largest record: allocated and touched once, not per
    /// test (a fresh 16 MiB buffer costs page faults and zeroing every time).
    bufs: Vec<Mutex<AlignedBuf>>,
    /// Why the rest of the cell cannot run (its file could not be written).
    broken: Option<String>,
    /// Each worker's span of the current test.
    spans: Mutex<Vec<Option<Span>>>,
    /// A whole-cell phase's tests, for `finish`.
    cell_out: Mutex<CellOut>,
    mem_total: u64,
    /// Progress over the matrix: bytes of the whole matrix done so far, and its line.
    done: u64,
    live: Live,
}

impl IozoneSession {
    pub fn new(z: Iozone, dir: PathBuf, memory: bool, quiet: bool) -> IozoneSession {
        let cells = z.cells();
        let tests: Vec<Test> = z.groups.iter().flat_map(|g| g.tests()).copied().collect();
        // One worker without purge runs a cell's tests back to back, as iozone does: a frame
        // phase between two tests (counters, the record written and synced) would leave the
        // next test's calls to cold CPU caches, which iozone's loop never does.
        let whole = !z.throughput_mode() && !z.purge;
        let mut steps = Vec::new();
        for (c, _) in cells.iter().enumerate() {
            for (k, t) in tests.iter().enumerate() {
                if whole && k > 0 {
                    break;
                }
                steps.push(Step {
                    cell: c,
                    test: *t,
                    first: k == 0,
                    last: whole || k + 1 == tests.len(),
                    whole,
                });
            }
        }
        let workers = z.threads.max(1);
        let specs = steps
            .iter()
            .map(|s| {
                let cell = cells[s.cell];
                let d = s.test.def();
                if s.whole {
                    return PhaseSpec {
                        name: format!("cell/{}/{}", size_label(cell.file), size_label(cell.record)),
                        does: "the cell's tests back to back, in iozone's order".to_string(),
                        cache: CachePolicy::Keep,
                        writes: true,
                        // Each test's record says itself whether it read from memory.
                        reads: false,
                        workers: 1,
                        unit: "records",
                        total_ops: Some(cell.file / cell.record * tests.len() as u64),
                        single_thread: true,
                        ..Default::default()
                    };
                }
                PhaseSpec {
                    name: if z.throughput_mode() {
                        d.name.to_string()
                    } else {
                        format!(
                            "{}/{}/{}",
                            d.name,
                            size_label(cell.file),
                            size_label(cell.record)
                        )
                    },
                    does: d.does.to_string(),
                    cache: if z.purge {
                        CachePolicy::Drop
                    } else {
                        CachePolicy::Keep
                    },
                    // The tests of a cell share the dirty data, as in iozone: the frame's syncfs
                    // (which counts the write-back) comes after the cell's last test only.
                    writes: s.last,
                    reads: !s.test.writes(),
                    workers,
                    unit: "records",
                    total_ops: Some(cell.file / cell.record * workers as u64),
                    single_thread: workers == 1,
                    ..Default::default()
                }
            })
            .collect();
        let max_record = cells.iter().map(|c| c.record).max().unwrap_or(4096);
        let per_step = |s: &Step| if s.whole { tests.len() as u64 } else { 1 };
        let total = steps
            .iter()
            .map(|s| cells[s.cell].file * per_step(s))
            .sum::<u64>()
            * workers as u64;
        let bufs = (0..workers)
            .map(|_| {
                // At least 64 KiB: a cell's write test reads the file before it in such pieces.
                let mut b = AlignedBuf::large(max_record.max(64 << 10) as usize);
                b.fill(1);
                Mutex::new(b)
            })
            .collect();
        let show = !quiet && !z.throughput_mode() && std::io::stderr().is_terminal();
        IozoneSession {
            live: Live::session("iozone", total, show),
            pool: Pool::new(max_record, z.seed ^ 0x10_2e),
            bufs,
            spans: Mutex::new(vec![None; workers]),
            cell_out: Mutex::new(CellOut::default()),
            tests,
            z,
            dir,
            memory,
            cells,
            steps,
            specs,
            broken: None,
            mem_total: crate::sys::host::mem_total_bytes(),
            done: 0,
        }
    }

    /// Whether the write test of cell `cell` first reads the file of the cell before, untimed
    /// (`warm_previous`): in a whole-cell matrix (one worker, no purge), buffered, not the first
    /// cell, and that file at most `WARM_MAX` (past it the write's pages outgrow the caches).
    fn warms_previous(&self, cell: usize) -> bool {
        cell > 0
            && !self.z.throughput_mode()
            && !self.z.purge
            && !self.z.direct
            && self.cells[cell - 1].file <= WARM_MAX
    }

    pub(super) fn file(&self, worker: usize) -> PathBuf {
        if self.z.throughput_mode() {
            self.dir.join(format!("fsbench-iozone.{worker}.tmp"))
        } else {
            self.dir.join("fsbench-iozone.tmp")
        }
    }

    fn open(&self, path: &Path, d: &TestDef) -> std::io::Result<File> {
        let mut o = OpenOptions::new();
        match d.access {
            Access::Create => {
                // The file is recreated, as iozone's write tests do.
                let _ = std::fs::remove_file(path);
                o.write(true).create(true).truncate(true);
            }
            Access::Write(_) => {
                o.write(true);
            }
            Access::Read(_) => {
                o.read(true);
            }
        }
        if self.z.direct && !d.stream {
            o.custom_flags(libc::O_DIRECT);
        }
        o.open(path)
    }

    /// One worker's test: open (untimed), the calls, then fsync and close when asked (timed).
    fn one(&self, step: Step, ctx: &WorkerCtx, lat: &mut Lat) -> std::io::Result<(u64, u64)> {
        let cell = self.cells[step.cell];
        let d = step.test.def();
        let n = cell.file / cell.record;
        let mut f = self.open(&self.file(ctx.index), d)?;
        let mut whole = self.bufs[ctx.index]
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let buf = &mut whole[..cell.record as usize];
        if !self.z.throughput_mode() {
            battery::before(&mut f, d, buf)?;
        }
        // Made before the clock: the walk's offsets, the timeline's origin (it reads the clock
        // itself). Then one clock read opens the span and the last call's closes it, as
        // iozone's two reads enclose its loop and nothing else.
        let w = (!d.stream).then(|| battery::Walk::new(d, n, self.z.stride, self.z.seed));
        ctx.start_line();
        lat.begin(Instant::now());
        let t0 = Instant::now();
        let done = match w {
            None => battery::run_stream(&mut f, d, n, buf, &self.pool, lat)?,
            Some(w) => battery::run(&mut f, d, w, buf, &self.pool, lat, t0)?,
        };
        let t0 = done.started.unwrap_or(t0);
        let synced = self.z.fsync && step.test.writes();
        if synced {
            f.sync_all()?;
        }
        // Closed inside the clock when asked (iozone -c), else after it.
        let f = (!self.z.close).then_some(f);
        let end = match done.ended {
            Some(at) if !synced && !self.z.close => at,
            _ => Instant::now(),
        };
        // iozone's children fsync and close the file after their clock stops (every test,
        // readers too) before they report to the parent, whose figure counts it.
        if let Some(f) = f.filter(|_| self.z.throughput_mode() && !self.z.fsync) {
            f.sync_all()?;
        }
        if let Some(s) = self
            .spans
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_mut(ctx.index)
        {
            *s = Some(Span {
                start: t0,
                end,
                bytes: done.bytes,
                closed: Instant::now(),
            });
        }
        let way = if step.test.writes() {
            crate::plan::dir::Dir::Write
        } else {
            crate::plan::dir::Dir::Read
        };
        ctx.progress.add_in(way, done.ops, done.bytes);
        Ok((done.ops, done.bytes))
    }

    /// The untimed pass before read: every worker's file read once.
    fn prime(&self, cell: Cell) -> Result<(), RunError> {
        for w in 0..self.z.threads.max(1) {
            let path = self.file(w);
            let mut f = File::open(&path).map_err(RunError::io(path.display()))?;
            let mut whole = self.bufs[w].lock().unwrap_or_else(|e| e.into_inner());
            let buf = &mut whole[..cell.record as usize];
            while f.read(buf).map_err(RunError::io(path.display()))? > 0 {}
        }
        Ok(())
    }

    fn show_progress(&self, step: Step) {
        let cell = self.cells[step.cell];
        self.live.set(
            self.done,
            Some(format!(
                "iozone cell {} of {} ({} file, {} records)",
                step.cell + 1,
                self.cells.len(),
                size_label(cell.file),
                size_label(cell.record),
            )),
        );
    }

    fn remove_files(&self) {
        for w in 0..self.z.threads.max(1) {
            let _ = std::fs::remove_file(self.file(w));
        }
    }
}

impl Session for IozoneSession {
    fn phases(&self) -> &[PhaseSpec] {
        &self.specs
    }

    fn prepare(&mut self, phase: usize) -> Result<(), RunError> {
        let step = self.steps[phase];
        if step.first {
            self.broken = None;
            self.show_progress(step);
            // A whole-cell matrix syncs once, before its first cell. iozone 3.487 -a calls
            // sync(2) twice before every cell (strace), with nothing of its own to write back;
            // here a sync before every cell also writes back the records of the cell before,
            // and made no difference to the matrix's figures (40 alternating rounds, tmpfs).
            if !step.whole || step.cell == 0 {
                crate::sys::sync();
            }
        }
        if self.broken.is_none() && step.test == Test::Read && !step.whole {
            self.prime(self.cells[step.cell])?;
        }
        for s in self
            .spans
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter_mut()
        {
            *s = None;
        }
        Ok(())
    }

    fn work(&self, phase: usize, ctx: &WorkerCtx) -> WorkerOut {
        let step = self.steps[phase];
        if step.whole {
            return self.work_cell(step, ctx);
        }
        let mut out = WorkerOut::default();
        if self.broken.is_some() {
            return out;
        }
        if self.z.threads > 1 {
            // Each worker is a thread of the phase's pool (one worker runs on the calling thread,
            // whose table stays shared), as iozone's are processes of their own.
            let _ = crate::sys::own_fd_table();
        }
        let mut lat = Lat::over(ctx.interval);
        match self.one(step, ctx, &mut lat) {
            Ok((ops, bytes)) => {
                out.counters.insert("ops", ops as f64);
                out.counters.insert("bytes", bytes as f64);
                if step.test.writes() {
                    out.counters.insert(metric::WRITE_BYTES, bytes as f64);
                }
            }
            Err(e) => {
                out.error = Some(format!("{}: {e}", step.test.def().name));
                let op = if step.test.writes() { "write" } else { "read" };
                out.failure = Some(crate::io::Failure::io(op, &e).path(&self.file(ctx.index)));
            }
        }
        out.timeline = lat.timeline(Instant::now());
        let mut h = hist::new();
        lat.into_hist(&mut h);
        out.hists.insert("lat", h);
        out
    }

    fn finish(&mut self, phase: usize, m: &Merged) -> Result<Vec<Phase>, RunError> {
        let step = self.steps[phase];
        let cell = self.cells[step.cell];
        if step.whole {
            self.done += cell.file * self.tests.len() as u64;
            self.live.set(self.done, None);
            // The file stays until the next cell's write removes it (or `close`): its pages are
            // then freed on the cell's thread just before that write takes new ones, as in
            // iozone's loop, not before the frame's end-of-phase work has churned the memory.
            return Ok(self.finish_cell(step));
        }
        self.done += cell.file * self.z.threads.max(1) as u64;
        self.live.set(self.done, None);
        let p = &m.parts[0];
        let mut ph = Phase {
            test: self.specs[phase].name.clone(),
            error: p.error.clone(),
            ..Default::default()
        };
        if let Some(why) = &self.broken {
            ph.skipped = Some(format!("the file could not be written: {why}"));
        } else if let (Some(e), true) = (&p.error, step.test.writes()) {
            self.broken = Some(e.clone());
        }
        if ph.skipped.is_none() && ph.error.is_none() {
            let spans: Vec<Span> = self
                .spans
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .iter()
                .flatten()
                .copied()
                .collect();
            let measured = Measured {
                ops: p.counter("ops"),
                bytes: p.counter("bytes"),
                hist: p.hists.get("lat"),
                spans,
                window: p.window,
            };
            self.figures(step, measured, &mut ph);
        }
        if step.last {
            self.remove_files();
        }
        Ok(vec![ph])
    }

    fn close(&mut self) -> Result<(), RunError> {
        self.remove_files();
        self.live.finish();
        Ok(())
    }
}

impl IozoneSession {
    fn figures(&self, step: Step, m: Measured, ph: &mut Phase) {
        let cell = self.cells[step.cell];
        let Measured {
            ops,
            bytes,
            hist: lat,
            spans,
            window,
        } = m;
        let (first, last) = (
            spans.iter().map(|s| s.start).min(),
            spans.iter().map(|s| s.end).max(),
        );
        let wall = match (first, last) {
            (Some(a), Some(b)) => b.duration_since(a),
            _ => window,
        };
        let s = wall.as_secs_f64().max(1e-9);
        let mx = &mut ph.metrics;
        let rates: Vec<f64> = spans
            .iter()
            .map(|x| {
                x.bytes as f64 / 1024.0 / x.end.duration_since(x.start).as_secs_f64().max(1e-9)
            })
            .collect();
        if self.z.throughput_mode() {
            let children: f64 = rates.iter().sum();
            mx.insert(metric::CHILDREN_KIB_PER_SEC.into(), children);
            // The parent's span, as iozone's: to the last worker's untimed fsync and close.
            let parent = match (first, spans.iter().map(|s| s.closed).max()) {
                (Some(a), Some(b)) => b.duration_since(a).as_secs_f64().max(1e-9),
                _ => s,
            };
            mx.insert(metric::PARENT_KIB_PER_SEC.into(), bytes / 1024.0 / parent);
            mx.insert(metric::KIB_PER_SEC.into(), children);
            if !rates.is_empty() {
                mx.insert(
                    metric::MIN_KIB_PER_SEC.into(),
                    rates.iter().copied().fold(f64::MAX, f64::min),
                );
                mx.insert(
                    metric::MAX_KIB_PER_SEC.into(),
                    rates.iter().copied().fold(0.0, f64::max),
                );
                mx.insert(
                    metric::AVG_KIB_PER_SEC.into(),
                    children / rates.len() as f64,
                );
            }
        } else {
            mx.insert(metric::KIB_PER_SEC.into(), bytes / 1024.0 / s);
        }
        mx.insert(metric::BYTES_PER_SEC.into(), bytes / s);
        mx.insert(metric::OPS_PER_SEC.into(), ops / s);
        mx.insert("bytes".into(), bytes);
        mx.insert("records".into(), ops);
        if let Some(h) = lat {
            hist::summarize(h, "lat", mx);
            ph.histograms.insert("lat_ns".into(), hist::encode(h));
        }
        ph.duration_s = wall.as_secs_f64();
        self.notes(step, wall, ph);
        ph.config = Some(serde_json::json!({
            "file_size": cell.file, "record_size": cell.record,
            "file_kib": cell.file / 1024, "record_kib": cell.record / 1024,
            "fsync": self.z.fsync, "close": self.z.close, "direct": self.z.direct && !step.test.def().stream,
            "purge": self.z.purge, "stride": self.z.stride, "threads": self.z.threads,
            "all_records": self.z.all_records, "seed": self.z.seed,
            "data": format!("incompressible random bytes, each record from a 4 KiB-aligned place in the first {} of a {} pool", format_bytes(battery::Pool::window(cell.record as usize) as u64), format_bytes(self.pool.len() as u64)),
        }));
    }

    fn notes(&self, step: Step, wall: Duration, ph: &mut Phase) {
        ph.notes.push(self.timed(step));
        let cell = self.cells[step.cell];
        let files = cell.file * self.z.threads.max(1) as u64;
        let direct = self.z.direct && !step.test.def().stream;
        if files < self.mem_total && !direct && !self.z.purge && !self.memory {
            ph.notes.push(crate::store::note::make(crate::store::note::Kind::PageCache, format!(
                "the file ({}) is smaller than RAM ({}) and neither direct=1 nor purge=1 is set: this measures the page cache",
                format_bytes(files),
                format_bytes(self.mem_total)
            )));
        }
        if self.memory && !step.test.writes() {
            // The frame says it of a phase that reads; a whole cell's phase leaves it to each test.
            ph.notes.push(crate::store::note::make(
                crate::store::note::Kind::PageCache,
                "tmpfs lives in the page cache; reads measure memory",
            ));
        }
        if wall < Duration::from_millis(1) {
            ph.notes.push(crate::store::note::make(
                crate::store::note::Kind::TooFast,
                format!(
                    "measured in {:.0} us; the cell is too small for a stable figure",
                    wall.as_secs_f64() * 1e6
                ),
            ));
        }
    }
}

impl IozoneSession {
    /// What a test's clock spanned, and iozone's untimed calls made before it.
    fn timed(&self, step: Step) -> String {
        let d = step.test.def();
        let n = self.cells[step.cell].file / self.cells[step.cell].record;
        let op = if step.test.writes() { "write" } else { "read" };
        let mut s = format!("timed: the {n} {op} calls");
        if self.z.fsync && step.test.writes() {
            s.push_str(", the fsync");
        }
        if self.z.close {
            s.push_str(", the close");
        }
        if self.z.throughput_mode() && !self.z.fsync {
            s.push_str("; after it, an fsync and the close (untimed for the workers, within the parent's span, as iozone's children)");
        }
        if !self.z.throughput_mode() && !d.stream {
            match d.access {
                Access::Create if self.warms_previous(step.cell) => {
                    s.push_str("; before the clock, untimed: the previous cell's file read once and removed (the pages this write takes again, as warm as iozone's loop leaves them; in the cell's system CPU and device figures), and as in iozone -a an fsync");
                }
                Access::Create | Access::Write(battery::Order::Sequential) => {
                    s.push_str("; before the clock, untimed as in iozone -a: an fsync");
                }
                Access::Read(battery::Order::Sequential) => s.push_str(
                    "; before the clock, untimed as in iozone -a: an fsync, the first record read and a seek back to 0",
                ),
                Access::Write(_) | Access::Read(_) => {}
            }
        }
        s
    }
}

/// A test's figures, from a phase's merged output or from a whole cell's own measurement.
struct Measured<'a> {
    ops: f64,
    bytes: f64,
    hist: Option<&'a hist::Hist>,
    spans: Vec<Span>,
    window: Duration,
}

/// A worker's timed span of a test and the bytes it moved; `closed`: when it had also done
/// what follows its clock (throughput mode: iozone's untimed fsync and close, which the
/// parent's figure counts; else the end).
#[derive(Debug, Clone, Copy)]
pub(super) struct Span {
    pub start: Instant,
    pub end: Instant,
    pub bytes: u64,
    pub closed: Instant,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_record_says_what_its_clock_spanned() {
        let spec = crate::plan::workload::parse_workload(
            "iozone:min_file=64k,max_file=128k,record=4k,tests=write+read+random",
        )
        .unwrap();
        let z = super::super::options::parse(&spec).unwrap();
        let s = IozoneSession::new(z, std::env::temp_dir(), true, true);
        let note_of = |cell: usize, test: Test| {
            s.timed(Step {
                cell,
                test,
                first: false,
                last: false,
                whole: true,
            })
        };
        let note = |test: Test| note_of(0, test);
        assert_eq!(note(Test::RandomRead), "timed: the 16 read calls");
        // A cell's write test after the first: the file of the cell before read and removed.
        assert!(!note(Test::Write).contains("previous cell"));
        assert!(note_of(1, Test::Write).contains("the previous cell's file read once and removed"));
        assert!(!note_of(1, Test::Rewrite).contains("previous cell"));
        assert!(note(Test::Rewrite).starts_with("timed: the 16 write calls; before the clock"));
        assert!(note(Test::Reread).ends_with("the first record read and a seek back to 0"));
    }

    #[test]
    fn a_write_test_reads_the_file_before_it_only_in_a_buffered_matrix_of_small_files() {
        let session = |w: &str| {
            let spec = crate::plan::workload::parse_workload(w).unwrap();
            let z = super::super::options::parse(&spec).unwrap();
            IozoneSession::new(z, std::env::temp_dir(), true, true)
        };
        let m = session("iozone:min_file=4m,max_file=32m,record=64k,tests=write");
        let warms: Vec<bool> = (0..4).map(|c| m.warms_previous(c)).collect();
        // 4, 8, 16, 32 MiB: not the first cell, and not after a file over 8 MiB.
        assert_eq!(warms, [false, true, true, false]);
        for w in [
            "iozone:min_file=64k,max_file=128k,record=64k,tests=write,purge=1",
            "iozone:min_file=64k,max_file=128k,record=64k,tests=write,direct=1",
        ] {
            assert!(!session(w).warms_previous(1), "{w}");
        }
        let t = session("iozone:threads=2,size=64k,record=64k,tests=write");
        assert!(!t.warms_previous(0));
    }
}
