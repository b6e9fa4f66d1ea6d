//! A whole cell's phase: the cell's tests back to back, as iozone runs them, each measured on
//! its own (clock, histogram, this thread's CPU), one record each.

use std::time::{Duration, Instant, SystemTime};

use super::battery::Test;
use super::{size_label, IozoneSession, Measured, Step};
use crate::frame::{Phase, WorkerCtx, WorkerOut};
use crate::io::calls::Lat;
use crate::metrics::hist;
use crate::metrics::name as metric;

/// One test of a cell that ran inside a whole-cell phase: what the frame measures of a phase,
/// measured per test by the session.
pub(super) struct TestOut {
    started_at: String,
    ops: u64,
    bytes: u64,
    span: Option<super::Span>,
    hist: hist::Hist,
    latency: Option<crate::metrics::timeline::Timeline>,
    /// This thread's CPU time (user, system) over the test, open to close, and that span.
    cpu: (u64, u64),
    cpu_wall: Duration,
    error: Option<(String, crate::io::Failure)>,
}

/// What one test of a whole cell left, kept as it was until the cell's last test has run.
struct Raw {
    test: Test,
    started_at: SystemTime,
    span: Option<super::Span>,
    cpu: (u64, u64),
    cpu_wall: Duration,
    r: std::io::Result<(u64, u64)>,
}

/// What a whole-cell phase leaves for `finish`: each test that ran, and why the rest did not.
#[derive(Default)]
pub(super) struct CellOut {
    tests: Vec<TestOut>,
    /// The cell's file could not be written: the tests after it are skipped, with this reason.
    broken: Option<String>,
}

impl IozoneSession {
    /// A whole cell's phase: each test as its own phase would run it (the read's untimed priming
    /// pass first), back to back, each with its own clock, histogram and this thread's CPU time.
    ///
    /// The cell runs on a thread of its own with a file descriptor table of its own: iozone is
    /// one single-threaded process, and a file opened in a table that other threads share costs
    /// the kernel a reference and the position lock on every call (about 170 ns per lseek and
    /// read on this VM, a quarter of a 4 KiB call from the page cache).
    pub(super) fn work_cell(&self, step: Step, ctx: &WorkerCtx) -> WorkerOut {
        ctx.on_own_thread(|ctx| self.run_cell(step, ctx))
    }

    /// The cell's tests back to back. Nothing is allocated, formatted or summed between two
    /// tests (iozone closes the file and prints two figures there): each test's latency counters
    /// are made and touched before the first, and turned into histograms after the last, so no
    /// test starts on caches that a 270 KiB histogram's zeroing has just evicted.
    fn run_cell(&self, step: Step, ctx: &WorkerCtx) -> WorkerOut {
        let cell = self.cells[step.cell];
        let mut out = WorkerOut::default();
        let mut got = CellOut::default();
        let mut lats: Vec<Lat> = self
            .tests
            .iter()
            .map(|_| Lat::over(ctx.interval).touched())
            .collect();
        let mut raw = Vec::with_capacity(self.tests.len());
        // The cell's evidence (and profile) count from here, on the thread that does its work,
        // before its untimed warm-up: each test's own start line then reads nothing just
        // before its clock (that reading cost the first calls of every test 3%, the write 10%).
        ctx.start_line();
        if self.warms_previous(step.cell) {
            self.warm_previous(ctx);
        }
        for (&test, lat) in self.tests.iter().zip(lats.iter_mut()) {
            if let Some(why) = crate::stop::requested() {
                out.stopped = Some(why);
                break;
            }
            let one = Step {
                test,
                whole: false,
                ..step
            };
            if test == Test::Read {
                if let Err(e) = self.prime(cell) {
                    got.broken = Some(e.to_string());
                    break;
                }
            }
            let started_at = SystemTime::now();
            let (c0, w0) = (crate::sys::thread_cpu_ns(), Instant::now());
            let r = self.one(one, ctx, lat);
            let (c1, cpu_wall) = (crate::sys::thread_cpu_ns(), w0.elapsed());
            let span = self
                .spans
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .first_mut()
                .and_then(Option::take);
            let failed = r.is_err();
            raw.push(Raw {
                test,
                started_at,
                span,
                cpu: (c1.0.saturating_sub(c0.0), c1.1.saturating_sub(c0.1)),
                cpu_wall,
                r,
            });
            if failed && test.writes() {
                break;
            }
        }
        let (mut ops, mut bytes, mut written) = (0u64, 0u64, 0u64);
        for (x, lat) in raw.into_iter().zip(lats) {
            if let Ok((o, b)) = x.r {
                ops += o;
                bytes += b;
                if x.test.writes() {
                    written += b;
                }
            }
            let t = self.test_out(x, lat, ctx, &mut got);
            got.tests.push(t);
        }
        out.counters.insert("ops", ops as f64);
        out.counters.insert("bytes", bytes as f64);
        out.counters.insert(metric::WRITE_BYTES, written as f64);
        *self.cell_out.lock().unwrap_or_else(|e| e.into_inner()) = got;
        out
    }

    /// Before a cell's write test (when `warms_previous`), untimed: the previous cell's file
    /// (which that test removes) read once, 64 KiB at a time. Its pages are the ones the write
    /// then takes again; in iozone's loop they come straight from the last test that wrote them,
    /// warm in the CPU's caches, while here the records of the cell before (written and flushed
    /// between the two) have left them cold: without this pass the write test ran at 0.78-0.82
    /// of iozone's rate at files of 64 KiB to 4 MiB, with it 0.86-0.96 (docs/performance.md).
    fn warm_previous(&self, ctx: &WorkerCtx) {
        let Ok(mut f) = std::fs::File::open(self.file(ctx.index)) else {
            return;
        };
        let mut whole = self.bufs[ctx.index]
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let piece = &mut whole[..64 << 10];
        while !crate::stop::stop_requested()
            && matches!(std::io::Read::read(&mut f, piece), Ok(k) if k > 0)
        {}
    }

    /// A test's figures, made after the cell's last test.
    fn test_out(&self, x: Raw, mut lat: Lat, ctx: &WorkerCtx, got: &mut CellOut) -> TestOut {
        let mut h = hist::new();
        let end = x.span.map_or_else(Instant::now, |s| s.end);
        let latency = lat.timeline(end);
        lat.into_hist(&mut h);
        let mut t = TestOut {
            started_at: crate::metrics::clock::rfc3339(x.started_at),
            ops: 0,
            bytes: 0,
            span: x.span,
            hist: h,
            latency,
            cpu: x.cpu,
            cpu_wall: x.cpu_wall,
            error: None,
        };
        match x.r {
            Ok((o, b)) => (t.ops, t.bytes) = (o, b),
            Err(e) => {
                let name = x.test.def().name;
                let op = if x.test.writes() { "write" } else { "read" };
                let failure = crate::io::Failure::io(op, &e).path(&self.file(ctx.index));
                t.error = Some((format!("{name}: {e}"), failure));
                if x.test.writes() {
                    got.broken = Some(format!("{name}: {e}"));
                }
            }
        }
        t
    }

    /// One record per test of a whole cell's phase: those that ran with their own figures, the
    /// rest skipped when the cell's file could not be written (none when a stop ended the cell).
    pub(super) fn finish_cell(&self, step: Step) -> Vec<Phase> {
        let cell = self.cells[step.cell];
        let got = std::mem::take(&mut *self.cell_out.lock().unwrap_or_else(|e| e.into_inner()));
        let name = |t: Test| {
            format!(
                "{}/{}/{}",
                t.def().name,
                size_label(cell.file),
                size_label(cell.record)
            )
        };
        let mut phases = Vec::new();
        let mut outs = got.tests.into_iter();
        for &test in &self.tests {
            let mut ph = Phase {
                test: name(test),
                ..Default::default()
            };
            match outs.next() {
                Some(t) => {
                    ph.started_at = t.started_at;
                    ph.latency = t.latency;
                    if let Some((e, f)) = t.error {
                        ph.error = Some(e);
                        ph.failure = Some(f);
                    } else {
                        let one = Step {
                            test,
                            whole: false,
                            ..step
                        };
                        let measured = Measured {
                            ops: t.ops as f64,
                            bytes: t.bytes as f64,
                            hist: Some(&t.hist),
                            spans: t.span.into_iter().collect(),
                            window: t.cpu_wall,
                        };
                        self.figures(one, measured, &mut ph);
                        let wall = t.cpu_wall.as_nanos().max(1) as f64;
                        ph.metrics
                            .insert(metric::CPU_USER_PCT.into(), t.cpu.0 as f64 / wall * 100.0);
                        ph.metrics
                            .insert(metric::CPU_SYS_PCT.into(), t.cpu.1 as f64 / wall * 100.0);
                        ph.notes.push(format!(
                            "the cell's {} tests ran back to back as in iozone: cpu_*_pct is this test's, system_cpu and device figures are the cell's",
                            self.tests.len()
                        ));
                    }
                }
                None => match &got.broken {
                    Some(why) => {
                        ph.skipped = Some(format!("the file could not be written: {why}"));
                    }
                    None => break,
                },
            }
            phases.push(ph);
        }
        phases
    }
}
