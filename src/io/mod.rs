//! Below the workloads: the timed I/O loop (`drive`), the random map (`perm`) and the data
//! generators (`data`). The loop keeps `iodepth` I/Os in flight through an engine, picks offsets
//! and sizes, fills write buffers with fresh data, and times every I/O from queue to completion
//! (the engine never reads the clock). One call drives one worker (one of a job's `numjobs`).

pub mod blockmap;
pub mod calls;
pub mod content;
pub mod data;
pub mod dist;
pub mod drive;
pub mod failure;
pub mod files;
pub mod fiolog;
pub mod flow;
pub mod iolog;
pub mod offsets;
pub mod pace;
pub mod perm;
pub mod verify;

pub use data::{DataGen, WriteData};
pub use drive::drive;
pub use failure::Failure;
pub use perm::Permutation;

use std::time::Duration;

use crate::metrics::hist::{self, Hist};
use crate::metrics::progress::Progress;
use crate::metrics::timeline::Timeline;
use crate::plan::job::{BlockSize, Distribution, FileService, FioLogs, Rw, Verify};

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
    /// Passes the limit is made of (fio loops; fio opens its files again, and drops their cache,
    /// for each).
    pub loops: u32,
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
    /// Buffers the worker cycles through, oldest first (at least `depth`): more than `depth`
    /// puts that many bytes of distinct data between two writes from one buffer (see
    /// `data::ring_buffers`).
    pub buffers: usize,
    /// Bytes between the fresh stamps a reused buffer gets (`WriteData::scramble`): 512, fio's
    /// scramble; 4096 in the ring, where 4 KiB blocks are what must be unique.
    pub stamp_every: usize,
    /// Block size of writes when it differs from `bs` (fio bs=R,W).
    pub wbs: Option<BlockSize>,
    /// Where the region starts in the file (fio offset + offset_increment x clone).
    pub base: u64,
    pub shape: Shape,
    pub pace: Pace,
    /// Share of writes that repeat an earlier buffer (fio dedupe_percentage).
    pub dedupe_pct: u32,
    /// fio's dedupe_mode=working_set: the pages deduped writes copy.
    pub working_set: Option<WorkingSet>,
    pub verify: Option<Verify>,
    /// fio's log files, written by the loop as text (write_bw_log and its companions).
    pub logs: Option<FioLogs>,
    /// A trace replayed instead of rw's offsets and sizes (fio's read_iolog).
    pub replay: Option<std::sync::Arc<iolog::Replay>>,
    /// Record the I/O as a version 3 iolog naming this file (fio's write_iolog).
    pub record: Option<Vec<String>>,
    /// Failed reads, writes counted and gone past (fio continue_on_error): those with these
    /// errnos (fio's ignore_error; by default its non-fatal EIO and EILSEQ).
    pub continue_on: [bool; 2],
    pub ignore_errors: [Vec<i32>; 2],
    /// A write meeting a full filesystem ends the job, not as an error (fio fill_device).
    pub fill_device: bool,
    /// The bytes every write buffer repeats (fio buffer_pattern).
    pub buffer_pattern: Vec<u8>,
    /// fio's flow control: the flow shared with other jobs, this worker's place in it, and how
    /// long to wait when ahead (flow, flow_id, flow_sleep).
    pub flow: Option<(std::sync::Arc<flow::Flow>, usize, Duration)>,
    /// The worker's files (fio's nrfiles, filename=a:b), each `region` long from `base`, and
    /// how it moves between them; `limit_bytes` is over them all.
    pub files: u32,
    pub file_service: FileService,
    /// fio's strided zones (zonemode=strided), the range filled in.
    pub zones: Option<crate::plan::jobmore::Strided>,
    /// Keep the writes' offsets even without a verify pass (verify_state_save).
    pub save_written: bool,
    /// Time each I/O's submission (the engine's queue call) and completion apart: fio's slat
    /// and clat, on the asynchronous engines when the job asks (one more clock read per I/O).
    pub split_lat: bool,
    /// Check only reads inside these [start, end) ranges, sorted (verify_state_load: what the
    /// writer completed); the others are counted as skipped.
    pub verify_ranges: Option<std::sync::Arc<Vec<(u64, u64)>>>,
    /// How each I/O is issued: priorities, atomic writes, latency_target, serialize_overlap.
    pub issue: crate::plan::issue::IoOpts,
    /// The block size of trims when it is not the writes' (fio's third bs= value).
    pub trim_bs: Option<BlockSize>,
}

/// Where offsets fall beyond rw: fio's rw=...:N, rw_sequencer, percentage_random,
/// random_distribution, blockalign.
#[derive(Debug, Clone)]
pub struct Shape {
    pub rw_mod: Option<u64>,
    /// rw_mod is a negative hole (rw=read:-8k).
    pub backwards: bool,
    pub rw_identical: bool,
    pub random_pct: u32,
    pub dist: Distribution,
    pub dist_center: Option<f64>,
    pub align: Option<u64>,
}

impl Default for Shape {
    fn default() -> Shape {
        Shape {
            rw_mod: None,
            backwards: false,
            rw_identical: false,
            random_pct: 100,
            dist: Distribution::Random,
            dist_center: None,
            align: None,
        }
    }
}

/// How fast and how long: number_ios, startdelay, rate, rate_iops, rate_process, thinktime.
#[derive(Debug, Clone, Default)]
pub struct Pace {
    pub limit_ios: Option<u64>,
    pub startdelay: Duration,
    pub rate: [Option<u64>; 2],
    pub rate_iops: [Option<u64>; 2],
    pub poisson: bool,
    pub thinktime: Option<Duration>,
    pub thinktime_spin: Duration,
    pub thinktime_blocks: u32,
}

impl Pattern {
    /// A pattern with fsbench's defaults around these essentials (for the loop's tests).
    #[cfg(test)]
    pub fn basic(rw: Rw, bs: BlockSize, depth: usize, region: u64) -> Pattern {
        Pattern {
            rw,
            rwmixread: 50,
            bs,
            depth,
            region,
            limit_bytes: Some(region),
            loops: 1,
            runtime: None,
            ramp: Duration::ZERO,
            fsync_every: 0,
            fdatasync_every: 0,
            end_fsync: false,
            seed: 1,
            compress_pct: 0,
            randommap: true,
            refill: true,
            buffers: depth,
            stamp_every: 512,
            wbs: None,
            base: 0,
            shape: Shape::default(),
            pace: Pace::default(),
            dedupe_pct: 0,
            working_set: None,
            verify: None,
            logs: None,
            replay: None,
            record: None,
            files: 1,
            file_service: FileService::default(),
            save_written: false,
            zones: None,
            split_lat: false,
            verify_ranges: None,
            continue_on: [false; 2],
            ignore_errors: Default::default(),
            fill_device: false,
            buffer_pattern: Vec::new(),
            flow: None,
            issue: Default::default(),
            trim_bs: None,
        }
    }

    pub fn max_bs(&self) -> u64 {
        let trim = self.trim_bs.as_ref().filter(|_| self.rw.trims());
        max_bs(&self.bs)
            .max(self.wbs.as_ref().map_or(0, max_bs))
            .max(trim.map_or(0, max_bs))
    }

    pub fn min_bs(&self) -> u64 {
        let trim = self.trim_bs.as_ref().filter(|_| self.rw.trims());
        min_bs(&self.bs)
            .min(self.wbs.as_ref().map_or(u64::MAX, min_bs))
            .min(trim.map_or(u64::MAX, min_bs))
    }

    /// Offsets are multiples of this.
    /// The loop's offsets put file f of a worker's files at f x this (the end of a file's
    /// region), so that offsets stay unique across files.
    pub fn file_stride(&self) -> u64 {
        (self.base + self.region).max(1)
    }

    pub fn align(&self) -> u64 {
        self.shape.align.unwrap_or_else(|| self.min_bs()).max(1)
    }
}

fn min_bs(bs: &BlockSize) -> u64 {
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

/// What one worker measured (after the ramp).
#[derive(Debug, Clone)]
pub struct Stats {
    pub lat: Hist,
    pub read_lat: Hist,
    pub write_lat: Hist,
    /// With `Pattern::split_lat`: submission and completion latency, [read, write].
    pub slat: Option<[Hist; 2]>,
    pub clat: Option<[Hist; 2]>,
    pub reads: u64,
    pub writes: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    /// Trims, and the depth latency_target found.
    pub issued: Issued,
    /// Completed I/Os and bytes per whole second of the measured window.
    pub per_sec: Vec<(u64, u64)>,
    pub measured: Duration,
    pub error: Option<String>,
    /// The first failed call, when the error was one (an errno, an offset).
    pub failure: Option<Failure>,
    /// Stopped early by a stop request (a signal).
    pub stopped: Option<crate::stop::StopReason>,
    /// (offset in the file, length) of every write, when the job verifies what it wrote.
    pub written: Vec<(u64, u32)>,
    /// Intervals checked on reads (verify on a reading job) and how many were bad.
    pub verified: u64,
    pub verify_errors: u64,
    /// Reads not checked: outside what the writer's verify state says it wrote.
    pub verify_skipped: u64,
    /// The first bad block a reading job's verify found (the session words it with the path).
    pub mismatch: Option<verify::Mismatch>,
    /// Latency over time: every I/O's latency, one histogram per interval.
    pub timeline: Option<Timeline>,
    /// fio's log files of the worker, as text (when the job asked for any).
    pub logs: Option<fiolog::LogBook>,
    /// The I/O as fio's iolog (write_iolog).
    pub iolog: Option<iolog::Recorder>,
    /// Failed I/Os gone past (continue_on_error), and the first one.
    pub io_errors: u64,
    pub first_ignored: Option<String>,
    /// The filesystem filled up (fill_device ended the job).
    pub filled: bool,
    /// Passes that ended by dropping the file's cached pages (fio's invalidate at a wrap).
    pub invalidated: u64,
}

impl Stats {
    /// Keeps the first failure (and its words as the error); later ones are consequences.
    pub fn fail(&mut self, f: Failure) {
        if self.error.is_none() {
            self.error = Some(f.to_string());
            self.failure = Some(f);
        }
    }

    pub fn new() -> Stats {
        Stats {
            lat: hist::new(),
            read_lat: hist::new(),
            write_lat: hist::new(),
            slat: None,
            clat: None,
            reads: 0,
            writes: 0,
            read_bytes: 0,
            write_bytes: 0,
            issued: Issued::default(),
            per_sec: Vec::new(),
            measured: Duration::ZERO,
            error: None,
            failure: None,
            stopped: None,
            written: Vec::new(),
            verified: 0,
            verify_errors: 0,
            verify_skipped: 0,
            mismatch: None,
            timeline: None,
            logs: None,
            iolog: None,
            io_errors: 0,
            first_ignored: None,
            filled: false,
            invalidated: 0,
        }
    }
}

/// What the issuing options add to a worker's statistics.
#[derive(Debug, Clone)]
pub struct Issued {
    /// Trims (fio's trim direction: rw=trim and its kin): count, bytes, latencies.
    pub trims: u64,
    pub trim_bytes: u64,
    pub trim_lat: Hist,
    /// The queue depth latency_target's search settled on (or was at when the job ended).
    pub latency_qd: Option<u32>,
}

impl Default for Issued {
    fn default() -> Issued {
        Issued {
            trims: 0,
            trim_bytes: 0,
            trim_lat: hist::new(),
            latency_qd: None,
        }
    }
}

impl Default for Stats {
    fn default() -> Self {
        Stats::new()
    }
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
    pub fn page(&self, t: u64, k: u64) -> DataGen {
        DataGen::new(self.key ^ (t << 40) ^ k.wrapping_mul(0x9E37_79B9_7F4A_7C15))
    }
}

/// What a worker's loop reports to and listens to while it runs.
#[derive(Clone, Copy)]
pub struct Live<'a> {
    /// Finished I/Os and bytes (the live progress line, first-done figures).
    pub progress: &'a Progress,
    /// The interval of the latency-over-time histograms.
    pub interval: Duration,
    /// Turns true when the job is to end now (its steady state was reached).
    pub halt: Option<&'a std::sync::atomic::AtomicBool>,
    /// Turns true when another job of the phase ended and one of them has exitall.
    pub exit_all: Option<&'a std::sync::atomic::AtomicBool>,
    /// The worker's files, when a pass over one ends by dropping its cached pages (fio's
    /// invalidate of a buffered time-based job: `wraps`).
    pub invalidate: Option<&'a [std::fs::File]>,
}

impl<'a> Live<'a> {
    /// Progress only, 1 s intervals, no halt (the tests').
    #[cfg(test)]
    pub fn of(progress: &'a Progress) -> Live<'a> {
        Live {
            progress,
            interval: crate::metrics::timeline::DEFAULT,
            halt: None,
            exit_all: None,
            invalidate: None,
        }
    }
}
