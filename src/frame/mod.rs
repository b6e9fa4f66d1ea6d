//! The phase frame: one way to run a phase of any workload.
//!
//! A workload declares its phases as data (`PhaseSpec`: name, what it does, the cache policy
//! before it, whether it writes or reads, how many workers) and runs one phase at a time through a
//! `Session`. For every phase the frame does the same steps:
//!
//! ```text
//! prepare (untimed) -> barrier -> sync + drop caches (per policy) -> start CPU, diskstats and
//! statvfs sampling -> run the workers (one pool) -> stop sampling -> merge the workers' histograms
//! and counters -> the session's figures + the frame's figures -> records, persisted at once
//! ```
//!
//! The barrier and the merge sit behind `Cluster` (one process today: `Local`), which is where a
//! multi-rank mode puts its barrier across processes and its reduction.

pub mod cluster;
pub mod explain;
pub mod live;
pub mod observe;
pub mod pool;
pub mod probe;
pub mod profiled;
pub mod reading;
pub mod rounds;
pub mod run;
pub mod share;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::metrics::hist::Hist;
use crate::metrics::progress::Progress;
use crate::metrics::timeline::Timeline;
use crate::stop::StopReason;

pub use cluster::{Cluster, Local, Placement, Rank};
pub use run::{run_phase, run_session, PhaseOutcome};

/// What to do with the page cache before a phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CachePolicy {
    /// Leave it (writes, deletes, and phases that measure warm caches on purpose).
    #[default]
    Keep,
    /// sync(2) and drop the page cache, dentries and inodes, so reads come from the device.
    Drop,
}

/// One phase of a workload, declared as data. The fields a phase rarely sets (the totals for the
/// progress line, `single_thread`, `space`) default to off (`..Default::default()`).
#[derive(Debug, Clone, Default)]
pub struct PhaseSpec {
    /// The record's test name (e.g. `write`, `SEQ1M_Q8T1_read`).
    pub name: String,
    /// One line: what the phase does.
    pub does: String,
    pub cache: CachePolicy,
    pub writes: bool,
    pub reads: bool,
    /// Workers the pool starts for this phase.
    pub workers: usize,
    /// What a worker's progress counts (e.g. "files", "I/Os"), and how many of them the phase
    /// expects in all (for the ETA), when known.
    pub unit: &'static str,
    pub total_ops: Option<u64>,
    /// How long a time-based phase runs (ramp included), for the ETA when `total_ops` is not
    /// known.
    pub total_secs: Option<f64>,
    /// Run the one worker on the coordinator's thread with no other thread alive, as a
    /// single-threaded program runs: the kernel skips per-call locking for single-threaded
    /// processes (read/write take the file position lock only when the file table is shared),
    /// which one-byte calls would otherwise measure. No live progress line then.
    pub single_thread: bool,
    /// The phase reports space or inode figures from statvfs: the target settles before both
    /// readings (`Handle::settle`: a ZFS pool commits), which other phases are spared (it costs
    /// a snapshot and up to 2 s each time).
    pub space: bool,
    /// Run `Session::beside` on its own thread for the length of the phase (snapshots under
    /// load).
    pub beside: bool,
    /// The interval of the latency-over-time histograms: the frame sets it from the target's
    /// context (`TargetCtx::interval`, the plan's `--interval`); workloads leave it.
    pub interval: Duration,
    /// Per part (block: each job of the group), what only it declares (its reads, its pacing);
    /// empty: every part is as the phase.
    pub parts: Vec<PartSpec>,
    /// What a phase whose workers counted no operation is: a phase that moved no data is
    /// never `ok` where its workers count what they do.
    pub empty: Empty,
}

impl PhaseSpec {
    /// The part whose workers ran part `k`: itself, or for a part run at once after the one
    /// before (`Runs::AtOnce`), the part that one's workers ran. Its evidence and profile are
    /// theirs.
    pub fn worked_by(&self, k: usize) -> usize {
        let mut k = k;
        while k > 0 && self.parts.get(k).is_some_and(|p| p.runs == Runs::AtOnce) {
            k -= 1;
        }
        k
    }
}

/// What the frame makes of a phase whose workers published no operation and no byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Empty {
    /// The workload judges its own records (its workers publish no progress, or a phase may
    /// rightly find nothing to do: a resumed tree, idle).
    #[default]
    Judged,
    /// Its workers count every operation: a phase that moved nothing failed, and its record
    /// says so (a limit that ended it before its first I/O, nothing asked of it).
    Fails,
}

/// What one part of a phase (block: a job of the group) declares of itself.
#[derive(Debug, Clone, Default)]
pub struct PartSpec {
    /// It reads data from the target, and writes data to it (its engine moves data).
    pub reads: bool,
    pub writes: bool,
    /// Its own pacing when it paces itself: its limiter may then be `paced`.
    pub pacing: Option<crate::plan::job::Pacing>,
    /// When it runs: beside the phase's other parts, or on their worker the moment the part
    /// before it ends (`WorkerOut::then`).
    pub runs: Runs,
}

/// When a part of a phase runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Runs {
    /// Beside the phase's other parts, each on workers of its own (block: a group's jobs).
    #[default]
    Together,
    /// The moment the part before it ends, on the same workers, as its tool runs its next
    /// phase at once (mdtest's tree removal after the last removals): the frame's reading,
    /// reduction and record between two phases would leave a gap the tool does not. Its
    /// record shares the phase's cpu, device and rank windows.
    AtOnce,
}

/// Where a workload runs.
#[derive(Debug, Clone)]
pub enum Place {
    /// A target's mount point (or scratch directory).
    Mount(PathBuf),
    /// A target's raw block device: the device itself is the target.
    Raw(PathBuf),
    /// Where the jobs say (a fio job file's `filename`/`directory`, relative to the current
    /// directory); block devices it names pass the guards (`wipe` as --wipe).
    Here { wipe: bool },
}

/// The target a session runs on.
#[derive(Debug, Clone)]
pub struct TargetCtx {
    pub place: Place,
    /// Filesystem type (tmpfs reads are memory reads).
    pub fs: String,
    /// The block device under the target, for device statistics.
    pub device: Option<PathBuf>,
    /// A directory on the target's filesystem: statvfs before and after each phase, and the
    /// syncfs after a writing phase.
    pub stat_dir: Option<PathBuf>,
    /// What the filesystem is and can do (memory-backed, a pool, snapshots, ...).
    pub caps: crate::provision::Caps,
    /// The provisioned target, as a workload may handle it (its pool, images, offline), with the
    /// hook that makes its space figures current before a statvfs; None for `run`'s paths and
    /// the other ranks of a multi-rank run.
    pub target: Option<std::sync::Arc<crate::provision::Handle>>,
    pub quiet: bool,
    /// Where this process stands among the ranks of a run (one process: rank 0 of 1).
    pub ranks: RankCtx,
    /// The interval of the latency-over-time histograms (`--interval`, 1 s by default).
    pub interval: Duration,
    /// The profiles each measured phase records (`--profile`); None: none, at no cost.
    pub profile: Option<crate::plan::profile::ProfileMode>,
}

/// This process among the ranks of a run, and how they share the target.
#[derive(Debug, Clone, Copy, Default)]
pub struct RankCtx {
    pub rank: Rank,
    /// A seed every rank has (rank 0's), for content another rank must verify.
    pub seed: u64,
    pub plan: crate::plan::RankPlan,
    /// Ranks on a node, as the launcher says (0: it does not say; one process: 1): IOR's and
    /// mdtest's shift of a reader to another node's data.
    pub per_node: usize,
    /// How this node's ranks share its CPUs (a note on every multi-rank record when unbound).
    pub placement: Placement,
}

impl RankCtx {
    /// How many ranks on a rank is one node on, as IOR counts it: a node's ranks when the
    /// launcher placed several on one (numbered together), else 1. On one node that is every
    /// rank, so IOR's -C reads a rank's own data there.
    pub fn node_shift(&self) -> usize {
        self.per_node.max(1)
    }
}

#[cfg(test)]
impl TargetCtx {
    /// A tmpfs mount at `dir`, one process: the target of unit tests.
    pub fn for_tests(dir: &Path) -> TargetCtx {
        TargetCtx {
            place: Place::Mount(dir.to_path_buf()),
            fs: "tmpfs".into(),
            device: None,
            stat_dir: None,
            caps: crate::provision::caps("tmpfs"),
            target: None,
            quiet: true,
            ranks: Default::default(),
            interval: Duration::from_secs(1),
            profile: None,
        }
    }
}

impl TargetCtx {
    /// The directory a workload works in, when the target has one.
    pub fn dir(&self) -> Option<&Path> {
        match &self.place {
            Place::Mount(d) => Some(d),
            _ => None,
        }
    }
}

pub use crate::store::Phase;

/// What a worker may use while it runs.
pub struct WorkerCtx<'a> {
    /// This worker's number in the phase (0..workers).
    pub index: usize,
    /// Publish finished operations here (live progress, first-done figures).
    pub progress: &'a Progress,
    /// The interval of the latency-over-time histograms (`metrics::timeline::Slicer`).
    pub interval: Duration,
    /// The pool's start: the origin of the worker's `Span`s.
    pub origin: std::time::Instant,
    start: &'a pool::StartLine,
    /// Where the worker's own CPU and scheduler figures go (the phase's evidence).
    board: &'a crate::metrics::evidence::Board,
    rounds: &'a rounds::Rounds<'a>,
}

impl WorkerCtx<'_> {
    /// Waits until every worker of the phase has finished its setup, so that all start together.
    /// A worker that returns without calling it is counted as ready. Its evidence counts from
    /// here.
    pub fn start_line(&self) {
        self.start.wait(self.index);
        self.board.started(self.index);
    }

    /// Runs `work` on a thread of its own with a file descriptor table of its own (as a
    /// single-threaded program's: no file position lock, no reference per call) and waits for
    /// it. The worker's evidence is that thread's: its id, and its figures from its start line
    /// to its end, both read there.
    pub fn on_own_thread<R: Send>(&self, work: impl FnOnce(&Self) -> R + Send) -> R
    where
        Self: Sync,
    {
        std::thread::scope(|s| {
            let t = s.spawn(|| {
                let _ = crate::sys::own_fd_table();
                self.board.moved(self.index);
                let r = work(self);
                self.board.ended(self.index);
                r
            });
            t.join().unwrap_or_else(|p| std::panic::resume_unwind(p))
        })
    }

    /// The interval from `from` to `to` on the phase's clock (from the pool's start).
    pub fn span(&self, from: std::time::Instant, to: std::time::Instant) -> Span {
        let at = |t: std::time::Instant| t.saturating_duration_since(self.origin).as_secs_f64();
        Span {
            start: at(from),
            end: at(to),
        }
    }

    /// A barrier with a maximum in the middle of a phase: waits until every worker of every
    /// rank has made the same call (its k-th), and returns the largest `value` given to it (IOR's
    /// barriers between its open, transfers and close, and its stonewall's wear-out). Every
    /// worker must make the same number of calls; a stop request ends the wait.
    pub fn agree_max(&self, value: u64) -> Result<u64, StopReason> {
        self.rounds.agree(self.index, cluster::Ask::Max, value)
    }

    /// A barrier in the middle of a phase (a round of `agree_max` without a value: IOR's and
    /// mdtest's barriers around their timers, one collective across ranks).
    pub fn barrier(&self) -> Result<(), StopReason> {
        self.rounds
            .agree(self.index, cluster::Ask::Barrier, 0)
            .map(drop)
    }
}

/// An interval of a phase, in seconds from the pool's start (`WorkerCtx::origin`): workers and
/// ranks merge a named span as its earliest start to its latest end (IOR's timers: the open of
/// every rank, the transfers, the close).
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Span {
    pub start: f64,
    pub end: f64,
}

impl Span {
    pub fn secs(&self) -> f64 {
        (self.end - self.start).max(0.0)
    }

    /// The earliest start to the latest end of both.
    pub fn join(self, o: Span) -> Span {
        Span {
            start: self.start.min(o.start),
            end: self.end.max(o.end),
        }
    }

    /// The same interval on a clock whose origin is `by` seconds earlier.
    pub fn shift(self, by: f64) -> Span {
        Span {
            start: self.start + by,
            end: self.end + by,
        }
    }
}

/// What one worker measured. Histograms add, counters add, series add per second, windows take
/// the longest.
#[derive(Debug, Default)]
pub struct WorkerOut {
    /// The record this worker's figures belong to (block: the job within its group).
    pub part: usize,
    pub hists: BTreeMap<&'static str, Hist>,
    pub counters: BTreeMap<&'static str, f64>,
    pub series: BTreeMap<&'static str, Vec<f64>>,
    /// Its latencies over time: every operation the phase times, one histogram per interval
    /// (`metrics::timeline`); the frame puts the part's on its record.
    pub timeline: Option<Timeline>,
    /// The worker's measured window (after any ramp).
    pub window: Duration,
    /// Named intervals of the phase (IOR's open, transfers and close), merged as the earliest
    /// start to the latest end.
    pub spans: BTreeMap<&'static str, Span>,
    /// Lines about how it ran (engine, direct or buffered); kept once each.
    pub how: Vec<String>,
    pub error: Option<String>,
    /// The failed call behind `error`, when it was one (errno, path, offset).
    pub failure: Option<crate::io::Failure>,
    pub stopped: Option<StopReason>,
    /// The part the worker ran the moment its own ended (`Runs::AtOnce`).
    pub then: Option<Box<Then>>,
}

/// What a worker measured of the part it ran at once after its own, and the operations and
/// bytes of it (the worker's progress counts both parts: the frame moves these to this one).
#[derive(Debug, Default)]
pub struct Then {
    pub out: WorkerOut,
    pub ops: u64,
    pub bytes: u64,
}

impl WorkerOut {
    pub fn merge(&mut self, o: &WorkerOut) {
        for (k, h) in &o.hists {
            match self.hists.get_mut(k) {
                Some(mine) => {
                    let _ = mine.add(h);
                }
                None => {
                    self.hists.insert(k, h.clone());
                }
            }
        }
        for (k, v) in &o.counters {
            *self.counters.entry(k).or_insert(0.0) += v;
        }
        for (k, v) in &o.series {
            let mine = self.series.entry(k).or_default();
            if mine.len() < v.len() {
                mine.resize(v.len(), 0.0);
            }
            for (a, b) in mine.iter_mut().zip(v) {
                *a += b;
            }
        }
        if let Some(t) = &o.timeline {
            self.timeline.get_or_insert_with(Timeline::default).merge(t);
        }
        self.window = self.window.max(o.window);
        for (k, v) in &o.spans {
            let s = self.spans.get(k).map_or(*v, |mine| mine.join(*v));
            self.spans.insert(k, s);
        }
        for h in &o.how {
            if !self.how.contains(h) {
                self.how.push(h.clone());
            }
        }
        if self.error.is_none() {
            self.error.clone_from(&o.error);
            self.failure.clone_from(&o.failure);
        }
        self.stopped = self.stopped.or(o.stopped);
    }

    pub fn counter(&self, k: &str) -> f64 {
        self.counters.get(k).copied().unwrap_or(0.0)
    }
}

/// "First done" (stonewall): what every worker had done when the fastest one finished.
#[derive(Debug, Clone, Copy, Default)]
pub struct FirstDone {
    pub secs: f64,
    pub ops: u64,
    pub bytes: u64,
}

/// What the frame measured around a phase, for the session's figures and the records.
#[derive(Debug, Clone, Default)]
pub struct Frame {
    pub started_at: String,
    pub wall: Duration,
    /// Caches were dropped as the phase's policy asked (always true for `Keep`).
    pub dropped: bool,
    /// cpu_user_pct, cpu_sys_pct, system_cpu_*_pct.
    pub cpu: BTreeMap<String, f64>,
    pub cpu_user_ns: u64,
    /// What the target's devices read and wrote during the phase (and its write-back).
    pub device: Option<DevIo>,
    pub statvfs_before: Option<crate::sys::FsStat>,
    pub statvfs_after: Option<crate::sys::FsStat>,
    pub workers: usize,
    /// Per part: first-done figures, and the last worker's end (seconds from the start).
    pub first_done: Vec<FirstDone>,
    pub last_done_s: f64,
    /// The filesystem's sync after a writing phase failed: the phase failed, whatever a later
    /// sync says (write-back errors are reported once).
    pub sync_failure: Option<crate::io::Failure>,
    /// This process's times and totals for the reduction across ranks.
    pub rank: RankTimes,
    /// What the workers, the filesystem, the machine and the devices did (this rank's).
    pub evidence: Option<crate::metrics::evidence::Evidence>,
    /// Each part's profile (`--profile`; this rank's).
    pub profile: Option<crate::profile::Profiled>,
}

/// Bytes the target's devices read and wrote (sectors of /proc/diskstats, 512 bytes each).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DevIo {
    pub read_bytes: u64,
    pub write_bytes: u64,
}

/// One rank's phase on its own monotonic clock, from the end of the barrier (the only instant
/// the ranks share), and its workers' totals per part: what the reduction across ranks needs.
#[derive(Debug, Clone, Default)]
pub struct RankTimes {
    /// The end of the barrier on CLOCK_MONOTONIC (seconds): ranks on one host place their
    /// times on that one clock.
    pub barrier_mono: f64,
    /// The pool started (seconds after the barrier).
    pub start_s: f64,
    /// The first worker ended, and the last.
    pub first_s: f64,
    pub end_s: f64,
    /// Per part: (ops, bytes) at the end, and when the fastest worker of all ranks finished.
    pub totals: Vec<(u64, u64)>,
    pub across: Vec<(u64, u64)>,
}

/// The workers' figures merged per part, with the frame's own.
#[derive(Debug, Default)]
pub struct Merged {
    pub parts: Vec<WorkerOut>,
    pub frame: Frame,
    /// Per part: each rank's figures (rank 0 of a multi-rank run; empty otherwise).
    pub ranks: Vec<Vec<crate::store::RankFigures>>,
    /// Per part: each node's figures (over several nodes; empty otherwise).
    pub nodes: Vec<Vec<crate::store::NodeFigures>>,
}

/// Why a workload could not go on. Stopping is a type, not a string.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The workload cannot run on this target as asked (sizes, files, engines): nothing ran.
    #[error("{0}")]
    Invalid(String),
    /// A system call failed outside the measured work.
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
    /// A stop was requested (a signal).
    #[error(transparent)]
    Stopped(#[from] StopReason),
    /// The record could not be persisted.
    #[error("cannot save the record: {0}")]
    Store(#[from] crate::store::StoreError),
    /// Another rank is gone, or did not answer in time: the study cannot go on.
    #[error("{0}")]
    Ranks(String),
}

impl RunError {
    pub fn io(context: impl std::fmt::Display) -> impl FnOnce(std::io::Error) -> RunError {
        let context = context.to_string();
        move |source| RunError::Io { context, source }
    }
}

/// A workload bound to one target: its phases, run one at a time by the frame.
pub trait Session: Sync {
    fn phases(&self) -> &[PhaseSpec];
    /// Untimed work before the phase (laying out files); runs before the barrier.
    fn prepare(&mut self, _phase: usize) -> Result<(), RunError> {
        Ok(())
    }
    /// One worker's share of a phase; called on `spec.workers` threads at once.
    fn work(&self, phase: usize, ctx: &WorkerCtx) -> WorkerOut;
    /// The phase's records from the merged figures (block: one per job of the group).
    fn finish(&mut self, phase: usize, m: &Merged) -> Result<Vec<Phase>, RunError>;
    /// Work beside the workers for the whole phase when its spec sets `beside` (snapshots taken
    /// under load, a steady-state monitor): it starts when they cross the start line, sees
    /// every worker's progress (by index), and should return soon after `done` turns true (the
    /// last worker has ended). What it measures, the session keeps for `finish`.
    fn beside(&self, _phase: usize, _done: &std::sync::atomic::AtomicBool, _workers: &[Progress]) {}
    /// The directory whose filesystem the frame samples, when not the target's own (a files tree
    /// given by path=).
    fn stat_dir(&self) -> Option<&Path> {
        None
    }
    /// Untimed work after every phase ran (removing what the workload made).
    fn close(&mut self) -> Result<(), RunError> {
        Ok(())
    }
}

#[cfg(test)]
mod tests;
