//! The frame's part in explaining a phase (a row of `probe::PROBES`): the device stack it watches,
//! the evidence gathered around the workers (the frame's readings before and after them, a
//! sampler per interval beside them, the workers' own figures), and the evidence, the limiter
//! and any interference put on every record.

use std::path::PathBuf;
use std::sync::Arc;

use super::pool::{self, PoolRun};
use super::probe::{Probe, Readings, Running, Start};
use super::{Frame, Merged, Phase, PhaseSpec, TargetCtx, WorkerOut};
use crate::metrics::evidence::{
    sampler::Sampler, watch, Board, Evidence, IntervalFigures, Role, Volume, Watch,
};
use crate::metrics::limiter::{self, Facts};
use crate::metrics::name as metric;
use crate::store::note;

/// The devices under a target: every device of a multi-device target or pool (its members),
/// else its device (or the devices under its directory), then the disks under their images.
pub(super) fn watch_of(t: &TargetCtx) -> Watch {
    let mut tops: Vec<(PathBuf, Role)> = Vec::new();
    if let Some(h) = &t.target {
        let members = h.backing().devices;
        if members.len() > 1 {
            tops.extend(members.into_iter().map(|d| (d, Role::Member)));
        }
    }
    if tops.is_empty() {
        let devs = match (&t.device, t.caps.memory_backed, t.stat_dir.as_deref()) {
            (Some(d), _, _) => vec![d.clone()],
            (None, false, Some(dir)) => watch::devices_of_dir(dir),
            _ => Vec::new(),
        };
        let role = if devs.len() > 1 {
            Role::Member
        } else {
            Role::Target
        };
        tops.extend(devs.into_iter().map(|d| (d, role)));
    }
    Watch {
        devices: watch::stack(&tops),
        threads: t.caps.threads,
    }
}

/// The evidence, the limiter and any interference on every record.
pub(super) struct Explained;

impl Probe for Explained {
    fn start(&self, s: &Start) -> Option<Box<dyn Running>> {
        // A phase whose one worker runs on this thread with no other thread alive gets no
        // sampler: its ends are read all the same.
        let sampler = (!pool::inline(s.spec))
            .then(|| Sampler::start(s.watch, s.before, s.board.clone(), s.spec.interval).ok())
            .flatten();
        Some(Box::new(Gathering {
            board: s.board.clone(),
            sampler,
            intervals: Vec::new(),
        }))
    }

    fn write(&self, p: &mut Phase, _k: usize, m: &Merged, spec: &PhaseSpec, t: &TargetCtx) {
        let Some(e) = m.frame.evidence.as_ref() else {
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
}

/// The evidence being gathered for one phase.
struct Gathering {
    board: Arc<Board>,
    sampler: Option<Sampler>,
    intervals: Vec<IntervalFigures>,
}

impl Running for Gathering {
    fn workers_done(&mut self, _run: &PoolRun) {
        self.intervals = self.sampler.take().map(Sampler::stop).unwrap_or_default();
    }

    fn end(self: Box<Self>, r: &Readings, parts: &[WorkerOut], f: &mut Frame) {
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
        f.evidence = Some(Evidence::between(
            &r.watch,
            &r.before,
            &r.done,
            &self.board.take(),
            self.intervals,
            volume,
        ));
    }
}
