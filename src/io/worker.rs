//! What one worker does, as the loop's typed parts: a job lowered once, before anything runs (the
//! block workload's `lower`), into where its I/Os come from, what it issues, what holds them back,
//! what its writes carry, what records them, which errors it goes past and when it ends. Nothing
//! here is a job option: the loop reads these, never the job.

use std::sync::Arc;
use std::time::Duration;

use super::files::Walk;
use super::flow::Flow;
use super::iolog::Replay;
use super::pace::{Rate, Think};
use crate::engine::SyncKind;
use crate::plan::dir::{Dir, PerDir};
use crate::plan::job::per_io::{CmdPrio, LatencyTarget};
use crate::plan::job::{BlockSize, FioLogs, Verify};
use crate::plan::units::Span;

#[derive(Debug, Clone)]
pub struct WorkerPlan {
    /// Seeds every random stream of the worker.
    pub seed: u64,
    pub queue: Queue,
    pub source: Source,
    pub ops: Ops,
    pub gates: GatePlan,
    pub fill: FillPlan,
    pub sinks: SinkPlan,
    pub on_error: OnError,
    pub ends: Ends,
}

/// I/Os in flight at most, and the slots (buffers) the worker cycles through: at least as many;
/// more puts that many buffers of distinct data between two writes from one (`data`'s ring).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Queue {
    pub depth: usize,
    pub slots: usize,
}

/// Where each I/O comes from.
#[derive(Debug, Clone)]
pub enum Source {
    /// A walk over the worker's files.
    Walk(Box<Walk>),
    /// A trace replayed in order, on the worker's (one) file.
    Replay(Arc<Replay>),
}

/// What the worker issues: reads, writes and trims in its mix, of which sizes, with which flags,
/// and the syncs between them.
#[derive(Debug, Clone)]
pub struct Ops {
    pub mix: Mix,
    pub bs: PerDir<BlockSize>,
    pub syncs: Syncs,
    pub marks: Marks,
}

/// The directions of the I/Os.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mix {
    Only(Dir),
    /// Reads `read_pct` percent of the time, writes otherwise.
    Mixed {
        read_pct: u32,
    },
    /// Each block trimmed, then written.
    TrimThenWrite,
}

/// A sync after every so many writes (0: never), and one when the worker ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Syncs {
    pub fsync_every: u32,
    pub fdatasync_every: u32,
    pub at_end: Option<SyncKind>,
}

/// What each I/O carries to the kernel beyond its offset and size.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Marks {
    /// The worker thread's I/O priority (ioprio_set before its first I/O), and every I/O's
    /// unless `per_io` gives it one.
    pub thread: Option<u16>,
    /// A priority drawn per I/O (fio's cmdprio).
    pub per_io: Option<CmdPrio>,
    pub atomic: Atomic,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Atomic {
    #[default]
    No,
    /// Writes carry RWF_ATOMIC (torn-write protection).
    Writes,
}

/// What may hold the next I/O back.
#[derive(Debug, Clone, Default)]
pub struct GatePlan {
    /// Before the first I/O.
    pub start_delay: Duration,
    pub rate: Option<Rate>,
    pub think: Option<Think>,
    pub flow: Option<FlowSeat>,
    /// The queue depth is searched for the deepest that meets this latency.
    pub latency: Option<LatencyTarget>,
    pub overlap: Overlap,
}

/// A worker's seat in a flow shared with other jobs (fio's flow control): it waits `sleep` when
/// ahead of its share.
#[derive(Debug, Clone)]
pub struct FlowSeat {
    pub flow: Arc<Flow>,
    pub seat: usize,
    pub sleep: Duration,
}

/// Whether an I/O may overlap one in flight.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Overlap {
    #[default]
    Allowed,
    /// It waits until the one in flight completes.
    Serialized,
}

/// What a write's buffer holds.
#[derive(Debug, Clone, PartialEq)]
pub struct FillPlan {
    pub data: Data,
    /// Share of each 4 KiB of written data that compresses (zeros); 0 = incompressible.
    pub compress_pct: u32,
    /// Every interval of a written block carries a header that reads check.
    pub stamp: Option<Verify>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Data {
    /// These bytes over and over.
    Pattern(Vec<u8>),
    Fresh(Fresh),
    /// `pct` percent of writes repeat earlier data: a page of the working set, or else one
    /// repeated buffer; the others fresh.
    Dedupe {
        pct: u32,
        set: Option<WorkingSet>,
        fresh: Fresh,
    },
}

/// How fresh data is made unique.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fresh {
    /// The whole buffer regenerated for every write.
    Refill,
    /// A buffer filled once, then a fresh stamp every `every` bytes each time it is written again
    /// (`WriteData::scramble`).
    Scramble { every: usize },
}

/// fio's dedupe working set: the first `per` unique writes of each of `of` workers (one, or
/// every worker of the jobs with dedupe_global) are its pages; a deduped write copies one of
/// them, drawn at random. Page `k` of worker `t` is the stream of `key` and (t, k).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WorkingSet {
    pub key: u64,
    pub per: u64,
    pub me: u64,
    pub of: u64,
}

impl WorkingSet {
    /// The generator of page `k` of worker `t`.
    pub fn page(&self, t: u64, k: u64) -> super::DataGen {
        super::DataGen::new(self.key ^ (t << 40) ^ k.wrapping_mul(0x9E37_79B9_7F4A_7C15))
    }
}

/// What records the worker's I/O beyond its statistics.
#[derive(Debug, Clone, Default)]
pub struct SinkPlan {
    /// fio's log files, written by the loop as text.
    pub logs: Option<FioLogs>,
    /// The I/O recorded as an iolog naming these files.
    pub record: Option<Vec<String>>,
    pub timing: Timing,
    pub written: Written,
    /// Reads checked against the headers writes stamp.
    pub checks: Option<ReadChecks>,
}

/// How each I/O is timed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Timing {
    /// From its queueing to its completion.
    #[default]
    Whole,
    /// Also its submission (the engine's queue call) and completion apart: one more clock read.
    Split,
}

/// Whether the offsets of completed writes are kept (to read them back, or in a verify state).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Written {
    #[default]
    Forget,
    Keep,
}

/// Reads checked against their headers: every one, or those inside `ranges` (sorted [start,
/// end) in the loop's offsets: what the writer completed), the others counted as skipped.
#[derive(Debug, Clone)]
pub struct ReadChecks {
    pub verify: Verify,
    pub ranges: Option<Arc<Vec<Span>>>,
}

/// Which errors the worker goes past, and what ends it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct OnError {
    /// The errnos of failed I/Os it counts and goes past, per direction (none: it fails).
    pub go_past: PerDir<Vec<i32>>,
    pub when_full: WhenFull,
    pub bad_block: BadBlock,
}

/// What a write meeting a full filesystem (ENOSPC, EDQUOT) does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WhenFull {
    #[default]
    Fails,
    /// Ends the worker, not as an error (writing until the filesystem is full).
    Ends,
}

/// What a block that fails its check does to the worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BadBlock {
    /// It goes on, every block checked and counted.
    #[default]
    GoesOn,
    Stops,
}

/// When the worker ends: after so many bytes or I/Os, or a runtime; its figures start after
/// the ramp.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Ends {
    pub bytes: Option<u64>,
    pub ios: Option<u64>,
    pub runtime: Option<Duration>,
    pub ramp: Duration,
}

impl WorkerPlan {
    /// The directions the worker does.
    pub fn does(&self) -> PerDir<bool> {
        match (&self.source, self.ops.mix) {
            // A trace is replayed as a reading job that writes when the trace does.
            (Source::Replay(r), _) => PerDir::rw(true, r.writes()).map(|d, v| *v && d != Dir::Trim),
            (_, Mix::Only(d)) => PerDir::new(|x| x == d),
            (_, Mix::Mixed { .. }) => PerDir::rw(true, true).map(|d, v| *v && d != Dir::Trim),
            (_, Mix::TrimThenWrite) => PerDir::new(|d| d != Dir::Read),
        }
    }

    /// Whether it changes its files (writes or trims).
    pub fn changes(&self) -> bool {
        let does = self.does();
        does[Dir::Write] || does[Dir::Trim]
    }

    /// The largest block of any direction (its slots' buffer size).
    pub fn max_bs(&self) -> u64 {
        self.ops
            .bs
            .iter()
            .map(|(_, b)| max_bs(b))
            .max()
            .unwrap_or(4096)
    }

    /// The smallest block of any direction.
    pub fn min_bs(&self) -> u64 {
        self.ops
            .bs
            .iter()
            .map(|(_, b)| min_bs(b))
            .min()
            .unwrap_or(4096)
    }

    /// Where file f's region sits in the loop's offsets: f x this.
    pub fn file_stride(&self) -> u64 {
        match &self.source {
            Source::Walk(w) => w.region.stride(),
            Source::Replay(_) => u64::MAX,
        }
    }
}

pub fn min_bs(bs: &BlockSize) -> u64 {
    match bs {
        BlockSize::Fixed(b) => *b,
        BlockSize::Range(lo, _) => *lo,
        BlockSize::Split(v) => v.iter().map(|x| x.0).min().unwrap_or(4096),
    }
}

pub fn max_bs(bs: &BlockSize) -> u64 {
    match bs {
        BlockSize::Fixed(b) => *b,
        BlockSize::Range(_, hi) => *hi,
        BlockSize::Split(v) => v.iter().map(|x| x.0).max().unwrap_or(4096),
    }
}
