//! `files`: many small files, as the billion-files study (BfFS) wrote them: a tree of top
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
mod unit;
mod write;

use crate::metrics::name as metric;
use std::path::PathBuf;
use std::time::Duration;

use super::{Opened, Workload, WorkloadDef};
use crate::frame::{RunError, TargetCtx};
use crate::metrics::catalog::{key, m, Better::*, MetricDef, Unit::*};
use crate::metrics::hist::{self, Hist};
use crate::metrics::timeline::{Slicer, Timeline};

pub use crate::io::content::{content, verify, Checksum, Dist, Fsync, Tree, Verdict, TRAILER};

pub const DEF: WorkloadDef = WorkloadDef {
    name: "files",
    summary: "many small files (the billion-files study): write, read back and verify, stat, delete; files:count=200000,threads=2",
    params: &[
        ("count", "number of files (default 100000), spread over 10 tops x 10 subfolders"),
        ("schedule", "the billion-files study's schedules: 10M, 100M or 1B (100 tops, subfolders of 100,000 files)"),
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
        ("checksum", "crc32c (default) or crc32 (as the billion-files study)"),
        ("seed", "content seed (default: from the clock, recorded)"),
        ("path", "absolute directory for the tree (default: the target's mount point)"),
        ("resume", "1: continue a tree whose write phase was interrupted"),
    ],
    takes: super::Takes::Listed,
    metrics: METRICS,
    build: options::build,
    ranks: true,
};

/// What files records carry besides the frame's figures.
pub static METRICS: &[MetricDef] = &[
    key(metric::FILES_PER_SEC, OpsPerSec, Higher),
    key(metric::SPACE_OVERHEAD_PCT, Percent, Lower),
    m("bytes", Bytes, Neither),
    m(metric::BYTES_PER_SEC, BytesPerSec, Higher),
    m("files", Count, Neither),
    m(metric::FILES_TOTAL, Count, Neither),
    m("threads", Count, Neither),
    m(metric::END_FSYNC_NS, Nanoseconds, Lower),
    m(metric::SPACE_USED_BYTES, Bytes, Lower),
    m(metric::BLOCKS_USED, Count, Lower),
    m(metric::BLOCK_SIZE, Bytes, Neither),
    m(metric::BLOCKS_PER_SEC, OpsPerSec, Higher),
    m(metric::INODES_USED, Count, Lower),
    m(metric::INODES_DYNAMIC, Ratio, Neither),
    m(metric::EXHAUSTED_INODES, Ratio, Neither),
    m(metric::EXHAUSTED_SPACE, Ratio, Neither),
    m(metric::FS_BYTES_AVAIL_AFTER, Bytes, Neither),
    m(metric::FS_INODES_FREE_AFTER, Count, Neither),
    m(metric::PEAK_RSS_BYTES, Bytes, Lower),
    m(metric::OUTSIDE_SYSCALLS_PCT, Percent, Lower),
    m(metric::INTEGRITY_OK, Count, Neither),
    m(metric::CRC_MISMATCH, Count, Lower),
    m(metric::WRONG_IDENTITY, Count, Lower),
    m(metric::WRONG_SIZE, Count, Lower),
    m("missing", Count, Lower),
    m(metric::FS_DETECTED, Count, Lower),
    m(metric::SPACE_FREED_BYTES, Bytes, Neither),
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

/// A worker's per-operation latency histograms, and every operation's latency over time.
pub struct Ops {
    hists: Vec<Hist>,
    slicer: Option<Slicer>,
}

impl Ops {
    /// With intervals of `interval` from `origin` (the phase's start).
    fn over(interval: Duration, origin: std::time::Instant) -> Ops {
        Ops {
            hists: (0..Op::ALL).map(|_| hist::new()).collect(),
            slicer: Some(Slicer::new(interval, origin)),
        }
    }

    #[inline]
    fn rec(&mut self, op: Op, d: Duration) {
        self.hists[op as usize].saturating_record((d.as_nanos() as u64).max(1));
    }

    /// Every operation's latencies added (the cumulative figure the intervals cut).
    fn all(&self) -> Hist {
        let mut sum = hist::new();
        for h in self.hists.iter().filter(|h| !h.is_empty()) {
            let _ = sum.add(h);
        }
        sum
    }

    /// At a clock reading a file's operations take anyway: closes the interval open when its
    /// end has passed.
    #[inline]
    fn tick(&mut self, now: std::time::Instant) {
        if self.slicer.as_ref().is_some_and(|s| s.due(now)) {
            let all = self.all();
            if let Some(s) = self.slicer.as_mut() {
                s.cut_hist(now, &all);
            }
        }
    }

    /// The latency over time, up to `end`.
    fn timeline(&mut self, end: std::time::Instant) -> Option<Timeline> {
        let all = self.all();
        self.slicer.take().map(|s| s.finish_hist(end, &all))
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
    /// seed= was given (several ranks otherwise share rank 0's).
    seed_given: bool,
}

/// Several ranks on one files workload (mdtest's two modes): a subtree each (`ROOT/rank-R`, its
/// seed the rank's own, so the trailer binds every file to the rank that wrote it), or one tree
/// whose subfolders are dealt out by rank. Reading and stat-ing shift by one rank, as mdtest -N
/// does, so that no rank reads what its own client cache holds: rank R checks rank R-1's files.
#[derive(Debug, Clone)]
pub struct RankWork {
    pub index: usize,
    pub size: usize,
    /// One tree for all (subfolder u belongs to rank u mod size).
    pub shared: bool,
    /// A subtree each: the tree this rank reads and stats (the previous rank's), swapped in for
    /// those phases.
    pub peer: Option<(PathBuf, Tree)>,
}

/// Rank `r`'s content seed in a run whose seed is `seed`.
pub fn rank_seed(seed: u64, r: usize) -> u64 {
    seed ^ (r as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

impl Workload for Files {
    /// Its tree's files, each taking whole 4 KiB blocks (written once, never rewritten), and an
    /// inode each, with one for each folder and the tree's root.
    fn footprint(&self) -> Option<super::Footprint> {
        let t = &self.tree;
        let each = (t.mean.max(0.0) as u64).div_ceil(4096).max(1) * 4096;
        let folders = 1 + t.tops + t.units();
        Some(super::Footprint::kept(
            t.count.saturating_mul(each),
            t.count + folders,
        ))
    }

    /// One tree dealt out by rank holds what one rank's would; a subtree each, as many.
    fn footprint_of_ranks(
        &self,
        ranks: usize,
        plan: &crate::plan::RankPlan,
    ) -> Option<super::Footprint> {
        let one = self.footprint()?;
        Some(match plan.shared_tree {
            true => one,
            false => one.times(ranks as u64),
        })
    }

    fn tests(&self) -> Option<Vec<String>> {
        Some(self.phases.iter().map(|k| k.name().to_string()).collect())
    }

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
        if t.ranks.rank.many() {
            return self.open_ranks(t, root);
        }
        let (tree, have) = checkpoint::open_tree(self, &self.tree, &root)?;
        Ok(Opened::Run(Box::new(session::FilesSession::new(
            self, root, tree, have, None,
        ))))
    }
}

impl Files {
    /// The session of one rank of several (see `RankWork`).
    fn open_ranks(&self, t: &TargetCtx, base: PathBuf) -> Result<Opened, RunError> {
        let (r, n) = (t.ranks.rank.index, t.ranks.rank.size);
        if self.resume {
            return Err(RunError::Invalid(
                "files: resume=1 continues one process's tree; under several ranks start a new tree".into(),
            ));
        }
        let mut tree = self.tree.clone();
        if !self.seed_given {
            tree.seed = t.ranks.seed;
        }
        let shared = t.ranks.plan.shared_tree;
        let prev = (r + n - 1) % n;
        let (root, peer) = if shared {
            (base, None)
        } else {
            let mut peer = tree.clone();
            peer.seed = rank_seed(tree.seed, prev);
            tree.seed = rank_seed(tree.seed, r);
            (
                base.join(format!("rank-{r}")),
                Some((base.join(format!("rank-{prev}")), peer)),
            )
        };
        // One tree for all: rank 0 keeps its records (manifest, progress); the others write
        // only files.
        let (tree, have) = if !shared || r == 0 {
            checkpoint::open_tree(self, &tree, &root)?
        } else {
            (tree, Default::default())
        };
        let work = RankWork {
            index: r,
            size: n,
            shared,
            peer,
        };
        Ok(Opened::Run(Box::new(session::FilesSession::new(
            self,
            root,
            tree,
            have,
            Some(work),
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
