//! Block I/O workloads: presets (`cdm`, `hpc-battery`, ...), ad hoc `block:` jobs and fio job files
//! (`fio:JOBFILE`, `fsbench run`). Jobs run in groups split at `stonewall` (one frame phase per
//! group); jobs of a group run side by side, each with `numjobs` workers. Each job becomes one
//! record with throughput, IOPS, latency (whole histogram), CPU, a per-second series and what the
//! device itself wrote.

mod clones;
mod cpus;
mod dedupe;
mod exits;
mod footprint;
mod logs;
mod lower;
mod patterns;
mod per_io;
mod per_io_figures;
mod resolve;
mod session;
use crate::metrics::name as metric;
pub use session::BlockSession;
pub mod snap;
mod steady;
pub mod vstate;
mod waits;

use std::path::Path;

use super::presets::{self, Preset};
use super::{Opened, SpecError, Workload, WorkloadDef};
use crate::frame::{Place, RunError, TargetCtx};
use crate::metrics::catalog::{key, m, Better::*, MetricDef, Unit::*};
use crate::plan::fio::jobfile::JobFile;
use crate::plan::job::{Job, Rw};
use crate::plan::workload::Overrides;
use crate::plan::WorkloadSpec;

pub const DEF_BLOCK: WorkloadDef = WorkloadDef {
    name: "block",
    summary: "one fio-class job from fio options: block:rw=randread,bs=4k,iodepth=32 (defaults: io_uring, direct, 1 GiB file, 5 s)",
    params: &[],
    takes: super::Takes::FioOptions,
    metrics: METRICS,
    build: build_adhoc,
    ranks: true,
};

pub const DEF_FIO: WorkloadDef = WorkloadDef {
    name: "fio",
    summary: "a fio job file, run on each target's mount point: fio:PATH",
    params: &[],
    takes: super::Takes::FioOptions,
    metrics: METRICS,
    build: build_jobfile,
    ranks: true,
};

/// What block records carry besides the frame's figures (presets, `block:` and `fio:` alike).
pub static METRICS: &[MetricDef] = &[
    key("iops", OpsPerSec, Higher),
    key(metric::BYTES_PER_SEC, BytesPerSec, Higher),
    key(metric::LAT_P99_NS, Nanoseconds, Lower),
    m("lat_*_ns", Nanoseconds, Lower),
    m("read_lat_*_ns", Nanoseconds, Lower),
    m("write_lat_*_ns", Nanoseconds, Lower),
    m("read_slat_*_ns", Nanoseconds, Lower),
    m("write_slat_*_ns", Nanoseconds, Lower),
    m("read_clat_*_ns", Nanoseconds, Lower),
    m("write_clat_*_ns", Nanoseconds, Lower),
    m("ios", Count, Neither),
    m("bytes", Bytes, Neither),
    m(metric::RUNTIME_S, Seconds, Neither),
    m(metric::READ_IOS, Count, Neither),
    m(metric::WRITE_IOS, Count, Neither),
    m(metric::READ_BYTES, Bytes, Neither),
    m(metric::WRITE_BYTES, Bytes, Neither),
    m(metric::READ_IOPS, OpsPerSec, Higher),
    m(metric::WRITE_IOPS, OpsPerSec, Higher),
    m(metric::READ_BYTES_PER_SEC, BytesPerSec, Higher),
    m(metric::WRITE_BYTES_PER_SEC, BytesPerSec, Higher),
    m(metric::TRIM_IOS, Count, Neither),
    m(metric::TRIM_BYTES, Bytes, Neither),
    m(metric::TRIM_IOPS, OpsPerSec, Higher),
    m(metric::TRIM_BYTES_PER_SEC, BytesPerSec, Higher),
    m("trim_lat_*_ns", Nanoseconds, Lower),
    m(metric::LATENCY_QD, Count, Higher),
    m("iodepth", Count, Neither),
    m("numjobs", Count, Neither),
    m(metric::CPU_USER_NS_PER_IO, Nanoseconds, Lower),
    // verify= (blocks read back and checked, bad intervals, time reading back)
    m(metric::VERIFY_BLOCKS, Count, Neither),
    m(metric::VERIFY_BYTES, Bytes, Neither),
    m(metric::VERIFY_ERRORS, Count, Lower),
    m(metric::VERIFY_S, Seconds, Neither),
    m(metric::VERIFY_SKIPPED, Count, Neither),
    // snapshots=RATE (snap.rs)
    m(metric::SNAPSHOTS_TAKEN, Count, Neither),
    m(metric::SNAPSHOTS_PER_SEC, OpsPerSec, Neither),
    m("snapshot_lat_*_ns", Nanoseconds, Lower),
    m(metric::SNAPSHOTS_DELETED, Count, Neither),
    m("snapshot_delete_lat_*_ns", Nanoseconds, Lower),
    m(metric::SNAPSHOT_SPACE_BYTES, Bytes, Lower),
    // steadystate / compare --until-steady (steady.rs, metrics::steady)
    m(metric::STEADY_REACHED, Ratio, Neither),
    m(metric::STEADY_AT_S, Seconds, Lower),
    m(metric::STEADY_WINDOW_S, Seconds, Neither),
    m(metric::STEADY_CRITERION, Ratio, Neither),
    m(metric::STEADY_SLOPE, Ratio, Neither),
    m(metric::STEADY_MAX_DEVIATION, Ratio, Neither),
    m(metric::STEADY_IOPS, OpsPerSec, Higher),
    m(metric::STEADY_LAT_NS, Nanoseconds, Lower),
    m(metric::STEADY_BYTES_PER_SEC, BytesPerSec, Higher),
    m(metric::RUN_IOPS, OpsPerSec, Higher),
    m(metric::RUN_BYTES_PER_SEC, BytesPerSec, Higher),
];

/// Metrics every block record carries (docs/results-schema.md); device figures come on top when
/// the target has a block device.
pub const RECORD_METRICS: &[&str] = &[
    "ios",
    "bytes",
    metric::RUNTIME_S,
    "iops",
    metric::BYTES_PER_SEC,
    "lat_mean_ns",
    "lat_p50_ns",
    "lat_p90_ns",
    metric::LAT_P99_NS,
    "lat_p999_ns",
    "lat_max_ns",
    metric::CPU_USER_PCT,
    metric::CPU_SYS_PCT,
    metric::SYSTEM_CPU_USER_PCT,
    metric::SYSTEM_CPU_SYS_PCT,
];

/// Where a block workload's jobs come from, which decides whose rules its page cache follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// fsbench's presets and `block:` jobs: a phase that reads drops the whole page cache
    /// first (unless every job of it keeps it: invalidate=0).
    Fsbench,
    /// A fio job file: each job with invalidate drops its own files' pages before its phase
    /// and, buffered, at the end of each pass over a file, as fio does; the rest of the cache
    /// is kept.
    JobFile,
}

#[derive(Clone)]
pub struct Block {
    jobs: Vec<Job>,
    /// Notes from reading the jobs (e.g. libaio run on io_uring).
    notes: Vec<String>,
    origin: Origin,
    /// Snapshots under load (`snapshots=RATE`), on the phases of `snap_jobs` (every phase when
    /// empty).
    snap: Option<snap::SnapOpts>,
    snap_jobs: Vec<String>,
    /// The first job writes its file from empty (aging): the file is created empty, not laid
    /// out with data first.
    fresh: bool,
}

/// The fio options of a block spec, with fsbench's own (`snapshots=`, `keep=`) taken out.
fn split_options(spec: &WorkloadSpec) -> Result<(String, Option<snap::SnapOpts>), SpecError> {
    let mut params = spec.params.clone();
    let snap = snap::take_options(&mut params)
        .map_err(|e| SpecError(format!("workload '{}': {e}", spec.spec)))?;
    Ok((crate::plan::workload::options_text(&params), snap))
}

/// The jobs as they run: the command line's overrides, then fio's own fix-up of a time-based
/// job without a runtime (`runtime=0` is no limit): it runs to its size, and says so.
fn finish_jobs(mut jobs: Vec<Job>, o: &Overrides, notes: &mut Vec<String>) -> Vec<Job> {
    for j in &mut jobs {
        presets::apply_overrides(j, o);
        if j.time_based && j.runtime.is_none() {
            j.time_based = false;
            notes.push(format!(
                "job '{}': time_based without a runtime runs to its size, as fio does (\"time_based requires a runtime/timeout setting\")",
                j.name
            ));
        }
    }
    jobs
}

pub fn build_preset(
    p: &Preset,
    spec: &WorkloadSpec,
    o: &Overrides,
) -> Result<Box<dyn Workload>, SpecError> {
    let (extra, snap) = split_options(spec)?;
    let mut jobs = presets::expand(p, &extra)
        .map_err(|e| SpecError(format!("workload '{}': {e}", spec.spec)))?;
    if let Some(u) = o.until_steady {
        for j in &mut jobs {
            j.time_based = true;
            j.runtime = Some(u.max);
            j.steadystate = Some(u.steady);
        }
    }
    let mut notes = Vec::new();
    Ok(Box::new(Block {
        jobs: finish_jobs(jobs, o, &mut notes),
        notes,
        origin: Origin::Fsbench,
        snap,
        snap_jobs: Vec::new(),
        fresh: false,
    }))
}

/// `block:rw=randread,bs=4k,iodepth=32`: one job with the presets' defaults and these options.
pub fn build_adhoc(spec: &WorkloadSpec, o: &Overrides) -> Result<Box<dyn Workload>, SpecError> {
    let mut job = Job::default();
    let wrap = |e: crate::plan::PlanError| SpecError(format!("workload '{}': {e}", spec.spec));
    presets::apply_options(&mut job, presets::DEFAULTS).map_err(wrap)?;
    job.filename = Some(presets::SHARED_FILE.into());
    job.name = "block".into();
    let (extra, snap) = split_options(spec)?;
    let mut notes = presets::apply_options(&mut job, &extra).map_err(wrap)?;
    Ok(Box::new(Block {
        jobs: finish_jobs(vec![job], o, &mut notes),
        notes,
        origin: Origin::Fsbench,
        snap,
        snap_jobs: Vec::new(),
        fresh: false,
    }))
}

/// The host figures fio's keywords ($pagesize, $mb_memory, $ncpus) stand for.
pub fn this_host() -> crate::plan::fio::syntax::Host {
    crate::plan::fio::syntax::Host {
        pagesize: crate::sys::host::page_size(),
        mb_memory: crate::sys::host::mem_total_bytes() >> 20,
        ncpus: crate::sys::host::cpus() as u64,
    }
}

/// Reads and parses a job file with its includes, this environment and this machine's figures.
pub fn read_jobfile(path: &Path) -> Result<JobFile, SpecError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| SpecError(format!("cannot read job file {}: {e}", path.display())))?;
    let dir = path.parent().unwrap_or(Path::new("."));
    crate::plan::fio::jobfile::parse_with(
        &text,
        &path.display().to_string(),
        dir,
        &|p| std::fs::read_to_string(p),
        &this_host(),
        &|v| std::env::var(v).ok(),
    )
    .map_err(|errs| {
        SpecError(format!(
            "job file {} has errors:\n  {}",
            path.display(),
            errs.join("\n  ")
        ))
    })
}

/// Reads and checks a fio job file (errors carry line numbers).
pub fn from_jobfile(path: &Path, o: &Overrides) -> Result<Block, SpecError> {
    let parsed = read_jobfile(path)?;
    let mut b = Block::from_jobs(parsed.jobs, o);
    b.notes.splice(0..0, parsed.notes);
    Ok(b)
}

impl Block {
    /// The jobs of a parsed job file as a block workload (the overrides applied).
    pub fn from_jobs(jobs: Vec<Job>, o: &Overrides) -> Block {
        let mut notes = Vec::new();
        Block {
            jobs: finish_jobs(jobs, o, &mut notes),
            notes,
            origin: Origin::JobFile,
            snap: None,
            snap_jobs: Vec::new(),
            fresh: false,
        }
    }
}

/// `fio:JOBFILE` in compare.
pub fn build_jobfile(spec: &WorkloadSpec, o: &Overrides) -> Result<Box<dyn Workload>, SpecError> {
    let file = spec.param("file").unwrap_or_default();
    Ok(Box::new(from_jobfile(Path::new(file), o)?))
}

fn writes(rw: Rw) -> bool {
    !matches!(rw, Rw::Read | Rw::RandRead)
}

fn fmt(n: u64) -> String {
    crate::plan::units::format_bytes(n)
}

impl Block {
    /// Block jobs built by another workload (aging) whose first job writes its file from
    /// empty: `snap` applies to the jobs named in `snap_jobs`.
    pub fn fresh_file(
        jobs: Vec<Job>,
        snap: Option<snap::SnapOpts>,
        snap_jobs: Vec<String>,
    ) -> Block {
        Block {
            jobs,
            notes: Vec::new(),
            origin: Origin::Fsbench,
            snap,
            snap_jobs,
            fresh: true,
        }
    }

    pub fn jobs(&self) -> &[Job] {
        &self.jobs
    }

    /// Does phase-making job `name` take snapshots?
    fn snaps(&self, name: &str) -> bool {
        self.snap.is_some()
            && (self.snap_jobs.is_empty() || self.snap_jobs.iter().any(|j| j == name))
    }

    /// Binds to a target: with snapshots, the files go in what a snapshot covers (a btrfs
    /// subvolume made for them, the ZFS dataset).
    pub fn session(&self, t: &TargetCtx) -> Result<session::BlockSession, RunError> {
        let (ctx, snapper) = match (&self.snap, &t.place) {
            (None, _) => (t.clone(), None),
            (Some(_), Place::Mount(dir)) => {
                let s = crate::provision::snapshot::Snapper::open(
                    &t.fs,
                    dir,
                    t.target.as_ref().and_then(|h| h.pool()).as_deref(),
                )
                .map_err(RunError::Invalid)?;
                let mut ctx = t.clone();
                ctx.place = Place::Mount(s.work_dir());
                (ctx, Some(s))
            }
            (Some(_), _) => {
                return Err(RunError::Invalid(
                    "snapshots= needs a provisioned btrfs or zfs target (not a raw device or fsbench run's paths)".into(),
                ))
            }
        };
        let loaded = patterns::load(self)?;
        let this = loaded.as_ref().unwrap_or(self);
        let r = resolve::resolve(this, &ctx)?;
        Ok(session::BlockSession::new(this.clone(), r, &ctx, snapper))
    }

    /// Everything that can be checked before running: files, sizes, space, guards, engines.
    pub fn check(&self, t: &TargetCtx) -> Result<(), RunError> {
        let loaded = patterns::load(self)?;
        resolve::resolve(loaded.as_ref().unwrap_or(self), t).map(|_| ())
    }
}

impl Workload for Block {
    fn open(&self, t: &TargetCtx) -> Result<Opened, RunError> {
        Ok(Opened::Run(Box::new(self.session(t)?)))
    }

    fn describe(&self) -> Vec<String> {
        self.jobs
            .iter()
            .map(|j| format!("[{}] {}", j.name, j.line()))
            .collect()
    }

    fn tests(&self) -> Option<Vec<String>> {
        Some(self.jobs.iter().map(|j| j.name.clone()).collect())
    }

    fn footprint(&self) -> Option<super::Footprint> {
        Some(self.footprint_of())
    }

    fn headline(&self) -> Option<&'static str> {
        Some(if self.jobs.iter().any(|j| j.rw.random()) {
            "iops"
        } else {
            metric::BYTES_PER_SEC
        })
    }

    fn check_target(
        &self,
        t: &crate::plan::TargetSpec,
        _size: Option<u64>,
    ) -> Result<(), SpecError> {
        logs::check(&self.jobs).map_err(|e| SpecError(e.to_string()))?;
        match (&self.snap, crate::provision::snapshot::unsupported(&t.fs)) {
            (Some(_), Some(why)) => Err(SpecError(format!("target '{}': {why}", t.label))),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests;
