//! `files`: many small files, as the billion-files study (seed 003) wrote them: a tree of top
//! folders and subfolders, sizes from a distribution, every file's content unique and
//! incompressible and bound to the file by a trailer (run seed, file number, checksum), then read
//! back and verified. Multi-threaded (one subfolder at a time per worker), checkpointed after each
//! subfolder so that `resume=1` continues a killed run, with memory that does not grow with the
//! file count.
//!
//! Tree: ROOT/t<top>/s<sub>/f<i>. The folder: `options` (parameters), `tree` (shape, sizes,
//! trailer), `checkpoint` (the tree's manifest and progress log), `session` (the frame's phases),
//! `write` and `scan` (one function per phase kind).

mod checkpoint;
mod options;
mod scan;
mod session;
pub mod tree;
mod write;

use std::path::PathBuf;
use std::time::Duration;

use super::{Opened, Workload, WorkloadDef};
use crate::frame::{RunError, TargetCtx};
use crate::metrics::catalog::{key, m, Better::*, MetricDef, Unit::*};
use crate::metrics::hist::{self, Hist};

pub use tree::{content, verify, Checksum, Dist, Fsync, Tree, Verdict, TRAILER};

pub const DEF: WorkloadDef = WorkloadDef {
    name: "files",
    summary: "many small files (seed 003): write, read back and verify, stat, delete; files:count=200000,threads=2",
    params: &[
        ("count", "number of files (default 100000), spread over 10 tops x 10 subfolders"),
        ("schedule", "the seed's schedules: 10M, 100M or 1B (100 tops, subfolders of 100,000 files)"),
        ("tops", "top folders"),
        ("subs", "subfolders per top folder"),
        ("files", "files per subfolder"),
        ("dist", "size distribution: normal (default), fixed, uniform, lognormal, exponential"),
        ("mean", "mean size (default 5500)"),
        ("sd", "standard deviation (default 1000; normal and lognormal)"),
        ("min", "smallest size (default 1K)"),
        ("max", "largest size (default 10K)"),
        ("size", "the size, for dist=fixed (e.g. 0 for empty files)"),
        ("threads", "worker threads (default: the CPU count)"),
        ("fsync", "none (default), file, dir or end"),
        ("phases", "any of write,read,stat,delete joined by + (default write+read)"),
        ("checksum", "crc32c (default) or crc32 (as the seed)"),
        ("seed", "content seed (default: from the clock, recorded)"),
        ("path", "absolute directory for the tree (default: the target's mount point)"),
        ("resume", "1: continue a tree whose write phase was interrupted"),
    ],
    fio_params: false,
    metrics: METRICS,
    build: options::build,
};

/// What files records carry besides the frame's figures.
pub static METRICS: &[MetricDef] = &[
    key("files_per_sec", OpsPerSec, Higher),
    key("space_overhead_pct", Percent, Lower),
    m("bytes", Bytes, Neither),
    m("bytes_per_sec", BytesPerSec, Higher),
    m("files", Count, Neither),
    m("files_total", Count, Neither),
    m("threads", Count, Neither),
    m("end_fsync_ns", Nanoseconds, Lower),
    m("space_used_bytes", Bytes, Lower),
    m("blocks_used", Count, Lower),
    m("block_size", Bytes, Neither),
    m("blocks_per_sec", OpsPerSec, Higher),
    m("inodes_used", Count, Lower),
    m("inodes_dynamic", Ratio, Neither),
    m("exhausted_inodes", Ratio, Neither),
    m("exhausted_space", Ratio, Neither),
    m("fs_bytes_avail_after", Bytes, Neither),
    m("fs_inodes_free_after", Count, Neither),
    m("peak_rss_bytes", Bytes, Lower),
    m("outside_syscalls_pct", Percent, Lower),
    m("integrity_ok", Count, Neither),
    m("crc_mismatch", Count, Lower),
    m("wrong_identity", Count, Lower),
    m("wrong_size", Count, Lower),
    m("missing", Count, Lower),
    m("fs_detected", Count, Lower),
    m("space_freed_bytes", Bytes, Neither),
    m("mkdir_*_ns", Nanoseconds, Lower),
    m("create_*_ns", Nanoseconds, Lower),
    m("write_*_ns", Nanoseconds, Lower),
    m("close_*_ns", Nanoseconds, Lower),
    m("fsync_*_ns", Nanoseconds, Lower),
    m("open_*_ns", Nanoseconds, Lower),
    m("read_*_ns", Nanoseconds, Lower),
    m("stat_*_ns", Nanoseconds, Lower),
    m("unlink_*_ns", Nanoseconds, Lower),
    m("rmdir_*_ns", Nanoseconds, Lower),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PhaseKind {
    Write,
    Read,
    Stat,
    Delete,
}

impl PhaseKind {
    fn name(self) -> &'static str {
        match self {
            PhaseKind::Write => "write",
            PhaseKind::Read => "read",
            PhaseKind::Stat => "stat",
            PhaseKind::Delete => "delete",
        }
    }

    /// The operations each phase times, one histogram each.
    fn ops(self) -> &'static [Op] {
        match self {
            PhaseKind::Write => &[Op::Mkdir, Op::Create, Op::Write, Op::Close, Op::Fsync],
            PhaseKind::Read => &[Op::Open, Op::Read, Op::Close],
            PhaseKind::Stat => &[Op::Stat],
            PhaseKind::Delete => &[Op::Unlink, Op::Rmdir],
        }
    }
}

/// A timed operation: each has its own latency histogram (`create_ns`, `read_p99_ns`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Mkdir,
    Create,
    Write,
    Close,
    Fsync,
    Open,
    Read,
    Stat,
    Unlink,
    Rmdir,
}

impl Op {
    const ALL: usize = 10;

    pub fn name(self) -> &'static str {
        match self {
            Op::Mkdir => "mkdir",
            Op::Create => "create",
            Op::Write => "write",
            Op::Close => "close",
            Op::Fsync => "fsync",
            Op::Open => "open",
            Op::Read => "read",
            Op::Stat => "stat",
            Op::Unlink => "unlink",
            Op::Rmdir => "rmdir",
        }
    }
}

/// A worker's per-operation latency histograms.
pub struct Ops {
    hists: Vec<Hist>,
}

impl Ops {
    fn new() -> Ops {
        Ops {
            hists: (0..Op::ALL).map(|_| hist::new()).collect(),
        }
    }

    #[inline]
    fn rec(&mut self, op: Op, d: Duration) {
        self.hists[op as usize].saturating_record((d.as_nanos() as u64).max(1));
    }
}

/// A worker's file counts: done, and what verification found.
#[derive(Default, Clone, Copy)]
pub struct Counts {
    files: u64,
    bytes: u64,
    ok: u64,
    crc: u64,
    identity: u64,
    size: u64,
    missing: u64,
    fs_detected: u64,
}

pub struct Files {
    tree: Tree,
    threads: usize,
    fsync: Fsync,
    phases: Vec<PhaseKind>,
    path: Option<PathBuf>,
    resume: bool,
    /// The user gave the tree's shape or content (not only phases): a later read must match.
    explicit: bool,
}

impl Workload for Files {
    fn open(&self, t: &TargetCtx) -> Result<Opened, RunError> {
        let Some(dir) = t.dir() else {
            return Ok(Opened::Skip {
                test: "write".into(),
                reason: "files needs a filesystem; raw targets run block workloads".into(),
            });
        };
        let root = self
            .path
            .clone()
            .unwrap_or_else(|| dir.join("fsbench-files"));
        let (tree, have) = checkpoint::open_tree(self, &root)?;
        Ok(Opened::Run(Box::new(session::FilesSession::new(
            self, root, tree, have,
        ))))
    }
}

fn is_exhaustion(e: &std::io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::ENOSPC) | Some(libc::EDQUOT))
}

fn fs_detected(e: &std::io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EIO) | Some(libc::EBADMSG) | Some(libc::EUCLEAN)
    )
}

#[cfg(test)]
mod tests;
