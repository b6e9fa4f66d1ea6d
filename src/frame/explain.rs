//! The frame's part in explaining a phase: it gathers the evidence around the workers (a
//! snapshot before, a sampler per interval beside them, the workers' own figures, a snapshot
//! after) and puts the evidence, the limiter and any interference on every record.

use std::path::PathBuf;
use std::sync::Arc;

use super::{PhaseSpec, TargetCtx, WorkerOut};
use crate::metrics::evidence::{
    sampler::Sampler, watch, Board, Evidence, Role, Snapshot, Volume, Watch,
};
use crate::metrics::limiter::{self, Facts};
use crate::metrics::name as metric;
use crate::store::note;

/// The devices under a target: a pool's members, else its device (or the device under its
/// directory), then the disks under their images.
fn watch_of(t: &TargetCtx) -> Watch {
    let mut tops: Vec<(PathBuf, Role)> = Vec::new();
    if t.caps.pool {
        if let Some(h) = &t.target {
            tops.extend(h.backing().devices.into_iter().map(|d| (d, Role::Member)));
        }
    }
    if tops.is_empty() {
        let dev = t.device.clone().or_else(|| {
            (!t.caps.memory_backed)
                .then_some(t.stat_dir.as_deref())
                .flatten()
                .and_then(crate::metrics::diskstats::device_of_dir)
        });
        tops.extend(dev.map(|d| (d, Role::Target)));
    }
    Watch {
        devices: watch::stack(&tops),
        threads: t.caps.threads,
    }
}

/// The evidence being gathered for one phase.
pub struct Gathering {
    watch: Watch,
    board: Arc<Board>,
    first: Snapshot,
    sampler: Option<Sampler>,
}

impl Gathering {
    /// Takes the first snapshot and starts the sampler; a phase whose one worker runs on this
    /// thread with no other thread alive (`inline`) gets none: its ends are read all the same.
    pub fn start(spec: &PhaseSpec, t: &TargetCtx, inline: bool) -> Gathering {
        let watch = watch_of(t);
        let board = Arc::new(Board::new(spec.workers.max(1)));
        let first = Snapshot::take(&watch, true);
        let sampler = (!inline)
            .then(|| Sampler::start(&watch, &first, board.clone(), spec.interval).ok())
            .flatten();
        crate::metrics::feed::evidence(|| crate::metrics::feed::sofar::SoFar {
            watch: watch.clone(),
            first: first.clone(),
            board: board.clone(),
            pacing: spec.pacing.clone(),
            reads: limiter::Reads::of(spec.reads, t.caps.memory_backed),
        });
        Gathering {
            watch,
            board,
            first,
            sampler,
        }
    }

    pub fn board(&self) -> &Board {
        &self.board
    }

    /// Stops the sampler (the workers have ended).
    pub fn workers_done(&mut self) -> Vec<crate::metrics::evidence::IntervalFigures> {
        self.sampler.take().map(Sampler::stop).unwrap_or_default()
    }

    /// The last snapshot, and the evidence of the phase.
    pub fn end(
        self,
        intervals: Vec<crate::metrics::evidence::IntervalFigures>,
        parts: &[WorkerOut],
    ) -> Evidence {
        let last = Snapshot::take(&self.watch, true);
        let sum = |k: &str| {
            parts
                .iter()
                .any(|p| p.counters.contains_key(k))
                .then(|| parts.iter().map(|p| p.counter(k)).sum())
        };
        let volume = Volume {
            read: sum(metric::READ_BYTES),
            written: sum(metric::WRITE_BYTES),
        };
        Evidence::between(
            &self.watch,
            &self.first,
            &last,
            &self.board.take(),
            intervals,
            volume,
        )
    }
}

/// The evidence, the limiter and any interference note on a record.
pub fn explain(p: &mut super::Phase, spec: &PhaseSpec, t: &TargetCtx, e: Option<&Evidence>) {
    let Some(e) = e else {
        return;
    };
    if p.skipped.is_some() {
        return;
    }
    p.limiter = limiter::classify(&Facts {
        evidence: e,
        pacing: spec.pacing.as_deref(),
        reads: limiter::Reads::of(spec.reads, t.caps.memory_backed),
    });
    if let Some(why) = limiter::interference(e) {
        let n = note::make(note::Kind::Interference, why);
        if !p.notes.contains(&n) {
            p.notes.push(n);
        }
    }
    p.evidence = Some(e.clone());
}
