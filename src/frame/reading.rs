//! What a probe of the frame is (a row of `probe::PROBES`) and what it is given: the frame's
//! readings of a phase (one reading of each /proc file at each point, for every probe) and what
//! it starts with.

use std::sync::Arc;

use super::pool::PoolRun;
use super::{Frame, Merged, Phase, PhaseSpec, TargetCtx};
use crate::metrics::evidence::{Board, Snapshot, Watch};

/// The frame's readings of one phase.
pub struct Readings {
    /// What was read: the target's device stack (the snapshots' devices, in its order).
    pub watch: Watch,
    /// Before the pool starts (the caches dropped, the target settled).
    pub before: Snapshot,
    /// When the last worker had ended.
    pub done: Snapshot,
    /// After the flush of a writing phase (its write-back); None for a phase that wrote nothing.
    pub flushed: Option<Snapshot>,
    /// statvfs of the target before and after.
    pub statvfs: [Option<crate::sys::FsStat>; 2],
}

impl Readings {
    /// The last reading: after the flush, or when the workers ended.
    pub fn last(&self) -> &Snapshot {
        self.flushed.as_ref().unwrap_or(&self.done)
    }
}

/// What a probe is started with.
pub struct Start<'a> {
    pub spec: &'a PhaseSpec,
    pub t: &'a TargetCtx,
    pub watch: &'a Watch,
    pub before: &'a Snapshot,
    /// Where the workers leave their threads' figures (and tell the profiler of themselves).
    pub board: &'a Arc<Board>,
}

/// One row of PROBES.
pub trait Probe: Sync {
    /// Starts measuring a phase, before its workers; None: it needs nothing while they run.
    fn start(&self, _s: &Start) -> Option<Box<dyn Running>> {
        None
    }
    /// Every reading is in: the figures it takes from them into the frame.
    fn end(&self, _r: &Readings, _f: &mut Frame) {}
    /// Its part of record `k`, from the frame's figures (rank 0's, after the reduction).
    fn write(&self, _p: &mut Phase, _k: usize, _m: &Merged, _spec: &PhaseSpec, _t: &TargetCtx) {}
}

/// A probe while its phase runs.
pub trait Running {
    /// The last worker ended (the frame has read `done`).
    fn workers_done(&mut self, _run: &PoolRun) {}
    /// Every reading is in: its figures into the frame.
    fn end(self: Box<Self>, _r: &Readings, _parts: &[super::WorkerOut], _f: &mut Frame) {}
}
