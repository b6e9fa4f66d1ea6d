//! `aging`: the Btrfs vs ZFS article's in-place write test. A file is written sequentially (1 MiB blocks, QD8),
//! read back sequentially with the caches dropped, overwritten in place by 4 KiB random writes
//! (QD32, for a share of its blocks or for a time, optionally with snapshots taken under load),
//! and read sequentially again. Copy-on-write filesystems scatter the overwritten blocks; the
//! second read shows what that costs (`post_pre_ratio`, the headline figure). After every phase
//! the file's layout is measured with FIEMAP, not guessed: its extents, its physically separate
//! runs and the layout score (FAST'17); where FIEMAP is not supported (ZFS) the record says so.

use crate::metrics::name as metric;
use crate::store::note;
use std::path::Path;

use super::block::{snap, Block};
use super::{Opened, SpecError, Workload, WorkloadDef};
use crate::frame::{Merged, Phase, PhaseSpec, RunError, Session, TargetCtx, WorkerCtx, WorkerOut};
use crate::metrics::catalog::{key, m, Better::*, MetricDef, Unit::*};
use crate::plan::job::{EngineKind, Job, Rw, SizeSpec};
use crate::plan::{Overrides, WorkloadSpec};

pub const DEF: WorkloadDef = WorkloadDef {
    name: "aging",
    summary: "the Btrfs vs ZFS article's in-place writes: write a file (SEQ1M Q8), read it, overwrite it with 4K random writes (Q32), read it again; FIEMAP layout after each",
    params: &[
        ("file_size", "the file, default 1G (or --file-size)"),
        ("overwrite", "share of the file's 4K blocks overwritten, default 100%"),
        ("overwrite_time", "overwrite for this long instead (e.g. 60s; or --runtime)"),
        ("snapshots", "snapshots per second during the overwrite (btrfs, zfs), e.g. 3/s"),
        ("keep", "with snapshots: keep at most N, deleting the oldest (timed)"),
        ("direct", "O_DIRECT, default 1 (buffered where the filesystem refuses it)"),
    ],
    takes: super::Takes::Listed,
    metrics: METRICS,
    build,
    ranks: false,
};

const FILE: &str = "fsbench-aging.dat";

static METRICS: &[MetricDef] = &[
    key(metric::POST_PRE_RATIO, Ratio, Higher),
    m(metric::LAYOUT_SCORE, Ratio, Higher),
    m("extents", Count, Lower),
    m("fragments", Count, Lower),
    m(metric::EXTENTS_ENCODED, Count, Neither),
    m(metric::OVERWRITE_SHARE, Ratio, Neither),
];

struct Aging {
    block: Block,
    /// The file's size, for the share the overwrite covered.
    size: u64,
}

fn job(name: &str, rw: Rw, bs: u64, depth: u32, size: u64, direct: bool) -> Job {
    Job {
        name: name.into(),
        rw,
        bs: crate::plan::job::BlockSize::Fixed(bs),
        iodepth: depth,
        direct,
        size: Some(SizeSpec::Bytes(size)),
        engine: EngineKind::IoUring,
        filename: Some(FILE.into()),
        stonewall: true,
        ..Job::default()
    }
}

fn percent(spec: &WorkloadSpec, v: &str) -> Result<f64, SpecError> {
    v.trim()
        .trim_end_matches('%')
        .parse::<f64>()
        .ok()
        .filter(|p| p.is_finite() && *p > 0.0 && *p <= 1000.0)
        .ok_or_else(|| spec.bad(format!("overwrite={v}: give a share of the file such as overwrite=100% (above 0, at most 1000%)")))
}

fn build(spec: &WorkloadSpec, o: &Overrides) -> Result<Box<dyn Workload>, SpecError> {
    let size = match (o.file_size, spec.size("file_size")?) {
        (_, Some(s)) | (Some(s), None) => s,
        (None, None) => 1 << 30,
    };
    if size < 16 << 20 {
        return Err(spec.bad(format!(
            "file_size={}: the file must be at least 16M (1 MiB blocks at QD8, and a layout worth measuring)",
            crate::plan::units::format_bytes(size)
        )));
    }
    let direct = spec.flag("direct", true)?;
    let time = match spec.param("overwrite_time") {
        Some(v) => Some(
            crate::plan::fio::values::parse_duration(v)
                .map_err(|e| spec.bad(format!("overwrite_time: {e}")))?,
        ),
        None => o.runtime,
    };
    if let (Some(_), Some(_)) = (spec.param("overwrite"), spec.param("overwrite_time")) {
        return Err(spec.bad("give overwrite=PCT% or overwrite_time=, not both"));
    }
    let mut params = spec.params.clone();
    let snaps = snap::take_options(&mut params).map_err(|e| spec.bad(e))?;
    let mut over = job("overwrite", Rw::RandWrite, 4096, 32, size, direct);
    match (time, spec.param("overwrite")) {
        (Some(t), None) => {
            over.runtime = Some(t);
            over.time_based = true;
        }
        (_, p) => {
            let share = percent(spec, p.unwrap_or("100%"))? / 100.0;
            over.io_size = Some(((size as f64 * share) as u64 / 4096).max(1) * 4096);
        }
    }
    let jobs = vec![
        job("write", Rw::Write, 1 << 20, 8, size, direct),
        job("read-pre", Rw::Read, 1 << 20, 8, size, direct),
        over,
        job("read-post", Rw::Read, 1 << 20, 8, size, direct),
    ];
    Ok(Box::new(Aging {
        block: Block::fresh_file(jobs, snaps, vec!["overwrite".into()]),
        size,
    }))
}

impl Workload for Aging {
    /// Its one file, overwritten in place (with snapshots, the old blocks stay pinned).
    fn footprint(&self) -> Option<super::Footprint> {
        self.block.footprint()
    }

    fn open(&self, t: &TargetCtx) -> Result<Opened, RunError> {
        let inner = self.block.session(t)?;
        Ok(Opened::Run(Box::new(AgingSession {
            inner,
            fs: t.fs.clone(),
            size: self.size as f64,
            pre: None,
        })))
    }

    fn check_target(
        &self,
        t: &crate::plan::TargetSpec,
        size: Option<u64>,
    ) -> Result<(), SpecError> {
        self.block.check_target(t, size)
    }
}

struct AgingSession {
    inner: super::block::BlockSession,
    fs: String,
    size: f64,
    /// read-pre's throughput, for read-post's ratio.
    pre: Option<f64>,
}

/// The file's layout as metrics, or the note saying why it cannot be measured.
fn layout(path: &Path, fs: &str, p: &mut Phase) {
    let mapped = std::fs::File::open(path).and_then(|f| crate::sys::fiemap::extents(&f));
    match mapped {
        Ok(ext) => {
            let l = crate::metrics::layout::of(&ext);
            p.metrics.insert("extents".into(), l.extents as f64);
            p.metrics.insert("fragments".into(), l.fragments as f64);
            p.metrics.insert(metric::LAYOUT_SCORE.into(), l.score);
            if l.encoded > 0 {
                p.metrics
                    .insert(metric::EXTENTS_ENCODED.into(), l.encoded as f64);
                p.notes.push(note::make(note::Kind::Fragmentation, format!(
                    "{} of {} extents are compressed; {fs} caps a compressed extent at 128 KiB, so the extent count overstates fragmentation (the layout score does not)",
                    l.encoded, l.extents
                )));
            }
        }
        Err(e) => p.notes.push(note::make(
            note::Kind::Fragmentation,
            format!(
                "unsupported on {fs} (FIEMAP: {})",
                match e.raw_os_error() {
                    Some(libc::EOPNOTSUPP) => "operation not supported".to_string(),
                    _ => e.to_string(),
                }
            ),
        )),
    }
}

impl Session for AgingSession {
    fn phases(&self) -> &[PhaseSpec] {
        self.inner.phases()
    }

    fn prepare(&mut self, phase: usize) -> Result<(), RunError> {
        self.inner.prepare(phase)
    }

    fn work(&self, phase: usize, ctx: &WorkerCtx) -> WorkerOut {
        self.inner.work(phase, ctx)
    }

    fn beside(
        &self,
        phase: usize,
        done: &std::sync::atomic::AtomicBool,
        workers: &[crate::metrics::progress::Progress],
    ) {
        self.inner.beside(phase, done, workers)
    }

    fn finish(&mut self, phase: usize, m: &Merged) -> Result<Vec<Phase>, RunError> {
        let mut out = self.inner.finish(phase, m)?;
        let path = self.inner.first_path().map(Path::to_path_buf);
        for p in &mut out {
            if let Some(path) = &path {
                layout(path, &self.fs, p);
            }
            let bps = p.metrics.get(metric::BYTES_PER_SEC).copied();
            match p.test.as_str() {
                "read-pre" => self.pre = bps,
                "read-post" => {
                    if let (Some(pre), Some(post)) = (self.pre, bps) {
                        if pre > 0.0 {
                            p.metrics.insert(metric::POST_PRE_RATIO.into(), post / pre);
                        }
                    }
                }
                "overwrite" => {
                    let wrote = p.metrics.get(metric::WRITE_BYTES).copied().unwrap_or(0.0);
                    p.metrics
                        .insert(metric::OVERWRITE_SHARE.into(), wrote / self.size);
                }
                _ => {}
            }
        }
        Ok(out)
    }

    fn close(&mut self) -> Result<(), RunError> {
        self.inner.close()
    }
}
