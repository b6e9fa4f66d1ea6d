//! Below the workloads: the timed I/O loop (`drive`), the random map (`perm`) and the data
//! generators (`data`). The loop keeps `iodepth` I/Os in flight through an engine, picks offsets
//! and sizes, fills write buffers with fresh data, and times every I/O from queue to completion
//! (the engine never reads the clock). One call drives one worker (one of a job's `numjobs`).

pub mod calls;
pub mod data;
pub mod drive;
pub mod failure;
pub mod perm;

pub use data::{DataGen, WriteData};
pub use drive::drive;
pub use failure::Failure;
pub use perm::Permutation;

use std::time::Duration;

use crate::metrics::hist::{self, Hist};
use crate::plan::job::{BlockSize, Rw};

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
}

impl Pattern {
    pub fn max_bs(&self) -> u64 {
        max_bs(&self.bs)
    }

    pub fn min_bs(&self) -> u64 {
        match &self.bs {
            BlockSize::Fixed(b) => *b,
            BlockSize::Range(lo, _) => *lo,
            BlockSize::Split(v) => v.iter().map(|x| x.0).min().unwrap_or(4096),
        }
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
    pub reads: u64,
    pub writes: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    /// Completed I/Os and bytes per whole second of the measured window.
    pub per_sec: Vec<(u64, u64)>,
    pub measured: Duration,
    pub error: Option<String>,
    /// The first failed call, when the error was one (an errno, an offset).
    pub failure: Option<Failure>,
    /// Stopped early by a stop request (a signal).
    pub stopped: Option<crate::stop::StopReason>,
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
            reads: 0,
            writes: 0,
            read_bytes: 0,
            write_bytes: 0,
            per_sec: Vec::new(),
            measured: Duration::ZERO,
            error: None,
            failure: None,
            stopped: None,
        }
    }

    /// Adds another worker's figures (workers of one job run side by side: the window is the
    /// longest of theirs).
    pub fn merge(&mut self, o: &Stats) {
        let _ = self.lat.add(&o.lat);
        let _ = self.read_lat.add(&o.read_lat);
        let _ = self.write_lat.add(&o.write_lat);
        self.reads += o.reads;
        self.writes += o.writes;
        self.read_bytes += o.read_bytes;
        self.write_bytes += o.write_bytes;
        if self.per_sec.len() < o.per_sec.len() {
            self.per_sec.resize(o.per_sec.len(), (0, 0));
        }
        for (a, b) in self.per_sec.iter_mut().zip(&o.per_sec) {
            a.0 += b.0;
            a.1 += b.1;
        }
        self.measured = self.measured.max(o.measured);
        if self.error.is_none() {
            self.error.clone_from(&o.error);
        }
        self.stopped = self.stopped.or(o.stopped);
    }
}

impl Default for Stats {
    fn default() -> Self {
        Stats::new()
    }
}
