//! What one worker's loop measured and how it ended (after the ramp): per direction its I/Os,
//! bytes and latencies, its per-second series and latency over time, fio's logs and iolog, what
//! its verify checked, and its first failure.

use std::time::Duration;

use super::clock::Latency;
use super::fiolog::LogBook;
use super::iolog::Recorder;
use super::verify::Mismatch;
use super::Failure;
use crate::metrics::hist::{self, Hist};
use crate::metrics::progress::Count;
use crate::metrics::timeline::Timeline;
use crate::plan::dir::{Dir, PerDir};
use crate::stop::StopReason;

#[derive(Debug, Clone)]
pub struct Stats {
    pub tally: Tally,
    /// Completed I/Os and bytes per whole second of the measured window.
    pub per_sec: Vec<Count>,
    /// Latency over time: every I/O's latency, one histogram per interval.
    pub timeline: Option<Timeline>,
    pub measured: Duration,
    pub ended: Ended,
    pub verified: Verified,
    /// fio's log files of the worker, as text (when the job asked for any).
    pub logs: Option<LogBook>,
    /// The I/O as fio's iolog (when the job records one).
    pub iolog: Option<Recorder>,
    /// Passes that ended by dropping the file's cached pages.
    pub pages_dropped: u64,
    /// The queue depth latency_target's search settled on (or was at when the job ended).
    pub latency_qd: Option<u32>,
}

/// Each direction's I/Os, bytes and latencies (trims too, as fio's third direction).
#[derive(Debug, Clone)]
pub struct Tally {
    pub dirs: PerDir<DirTally>,
    /// Submission and completion latency per direction, when timed apart.
    pub split: Option<PerDir<SplitLat>>,
}

#[derive(Debug, Clone)]
pub struct DirTally {
    pub ios: u64,
    pub bytes: u64,
    pub lat: Hist,
}

#[derive(Debug, Clone)]
pub struct SplitLat {
    pub slat: Hist,
    pub clat: Hist,
}

/// How the loop ended.
#[derive(Debug, Clone, Default)]
pub struct Ended {
    pub error: Option<String>,
    /// The first failed call, when the error was one (an errno, an offset).
    pub failure: Option<Failure>,
    /// Stopped early by a stop request (a signal).
    pub stopped: Option<StopReason>,
    /// Failed I/Os gone past, and the first of them.
    pub gone_past: u64,
    pub first_gone_past: Option<String>,
    /// The filesystem filled up, which ended the worker.
    pub filled: bool,
}

/// What verification kept and found.
#[derive(Debug, Clone, Default)]
pub struct Verified {
    /// (loop offset, length) of every completed write, when they are kept.
    pub written: Vec<(u64, u32)>,
    /// Reads checked, the bad intervals, and those not checked (outside the writer's state).
    pub checked: u64,
    pub errors: u64,
    pub skipped: u64,
    /// The first bad block a reading worker found (the session words it with the path).
    pub mismatch: Option<Mismatch>,
}

impl Tally {
    pub fn new(split: bool) -> Tally {
        let dir = |_| DirTally {
            ios: 0,
            bytes: 0,
            lat: hist::new(),
        };
        let parts = |_| SplitLat {
            slat: hist::new(),
            clat: hist::new(),
        };
        Tally {
            dirs: PerDir::new(dir),
            split: split.then(|| PerDir::new(parts)),
        }
    }

    /// One completed I/O of `bytes` in direction `d`, with its latency.
    #[inline]
    pub fn record(&mut self, d: Dir, bytes: u64, lat: Latency) {
        let t = &mut self.dirs[d];
        t.ios += 1;
        t.bytes += bytes;
        t.lat.saturating_record(lat.ns);
        if let (Some(p), Some(split)) = (lat.parts, self.split.as_mut()) {
            split[d].slat.saturating_record(p.slat_ns);
            split[d].clat.saturating_record(p.clat_ns);
        }
    }

    /// Every direction's latencies together.
    pub fn lat(&self) -> Hist {
        let mut all = self.dirs[Dir::Read].lat.clone();
        for d in [Dir::Write, Dir::Trim] {
            let _ = all.add(&self.dirs[d].lat);
        }
        all
    }

    /// Everything counted so far dropped (the figures start afresh).
    pub fn reset(&mut self) {
        for (_, t) in self.dirs.iter_mut() {
            (t.ios, t.bytes) = (0, 0);
            t.lat.reset();
        }
    }
}
