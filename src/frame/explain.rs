//! The frame's part in explaining a phase (a row of `probe::PROBES`): the device stack it watches,
//! the evidence gathered around the workers (the frame's readings before and after them, a
//! sampler per interval beside them, the workers' own figures), and the evidence, the limiter
//! and any interference put on every record.

use std::path::PathBuf;
use std::sync::Arc;

use super::pool::{self, PoolRun};
use super::reading::{Probe, Readings, Running, Start};
use super::{Frame, Merged, Phase, PhaseSpec, TargetCtx, WorkerOut};
use crate::metrics::evidence::Medium;
use crate::metrics::evidence::{
    self, sampler::Sampler, watch, Board, Evidence, IntervalFigures, Role, Siblings, Volume, Watch,
};
use crate::metrics::limiter::{self, Facts, Moves, Paced};
use crate::metrics::name as metric;
use crate::plan::job::Achieved;
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
    let memory = |kernel_fs: &str| crate::provision::caps_of_mounted(kernel_fs).memory_backed;
    Watch {
        devices: watch::stack(&tops, &memory),
        threads: t.caps.threads,
        ranks: t.ranks.rank.many().then(Siblings::of_self).flatten(),
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
            part_of: Vec::new(),
        }))
    }

    fn write(&self, p: &mut Phase, k: usize, m: &Merged, spec: &PhaseSpec, t: &TargetCtx) {
        let Some(e) = m.frame.evidence.as_ref() else {
            return;
        };
        if p.skipped.is_some() {
            return;
        }
        let e = e.part(spec.worked_by(k));
        let part = m.parts.get(k);
        let own = spec.parts.get(k);
        let pacing = own.and_then(|x| x.pacing.as_ref());
        let counted =
            |k: &str| !matches!(part.map(|x| x.counters.get(k)), Some(Some(n)) if *n == 0.0);
        let reads = own.map_or(spec.reads, |x| x.reads) && counted("reads");
        let writes = own.map_or(spec.writes, |x| x.writes) && counted("writes");
        let metric = |name: &str| p.metrics.get(name).copied().unwrap_or(0.0);
        let achieved = Achieved {
            iops: [metric(metric::READ_IOPS), metric(metric::WRITE_IOPS)],
            bytes: [
                metric(metric::READ_BYTES_PER_SEC),
                metric(metric::WRITE_BYTES_PER_SEC),
            ],
        };
        p.limiter = limiter::classify(&Facts {
            evidence: &e,
            volume: part.map_or_else(Volume::default, volume),
            pacing: pacing.map(|how| Paced {
                how,
                reached: how.reached(&achieved),
            }),
            medium: medium(t),
            reads: Moves::of(reads),
            writes: Moves::of(writes),
            split: p
                .profile
                .as_ref()
                .and_then(|x| x.on_cpu.as_ref())
                .and_then(|s| s.shares.split.as_ref()),
        });
        if let Some(why) = limiter::interference(&e) {
            let n = note::make(note::Kind::Interference, why);
            if !p.notes.contains(&n) {
                p.notes.push(n);
            }
        }
        p.evidence = Some(e.into_owned());
    }
}

/// Where a target keeps its data.
pub(super) fn medium(t: &TargetCtx) -> Medium {
    if t.caps.memory_backed {
        Medium::Memory
    } else {
        Medium::Disk
    }
}

/// What one part's workers moved: bytes by direction, and read operations.
fn volume(part: &WorkerOut) -> Volume {
    let has = |k: &str| part.counters.contains_key(k).then(|| part.counter(k));
    Volume {
        read: has(metric::READ_BYTES),
        written: has(metric::WRITE_BYTES),
        read_ops: has("reads"),
    }
}

/// The evidence being gathered for one phase.
struct Gathering {
    board: Arc<Board>,
    sampler: Option<Sampler>,
    intervals: Vec<IntervalFigures>,
    /// Each worker's part.
    part_of: Vec<usize>,
}

impl Running for Gathering {
    fn workers_done(&mut self, run: &PoolRun) {
        self.intervals = self.sampler.take().map(Sampler::stop).unwrap_or_default();
        self.part_of = run.outs.iter().map(|o| o.part).collect();
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
            read_ops: None,
        };
        let readings = evidence::Readings {
            watch: &r.watch,
            a: &r.before,
            b: &r.done,
            flushed: r.flushed.as_ref(),
        };
        f.evidence = Some(Evidence::between(
            &readings,
            &self.board.take(),
            &self.part_of,
            self.intervals,
            volume,
        ));
    }
}
