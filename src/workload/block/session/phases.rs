//! A block session's phases: one per stonewall group of jobs (fio's semantics), each with its
//! workers and the frame's spec of it.

use super::super::{writes, Block, Origin};
use super::judged;
use crate::frame::{CachePolicy, PartSpec, PhaseSpec};
use crate::plan::job::{EngineKind, Job, Rw};
use crate::workload::block::resolve::Resolved;

pub struct Phases {
    /// Job indices of each phase (stonewall group).
    pub groups: Vec<Vec<usize>>,
    /// Worker indices of each phase.
    pub members: Vec<Vec<usize>>,
    pub specs: Vec<PhaseSpec>,
}

impl Phases {
    /// The phases of `block`'s jobs; `snapping`: snapshots are taken beside the phases that ask.
    pub fn new(block: &Block, r: &Resolved, snapping: bool) -> Phases {
        // Groups: a job with stonewall starts a new group (fio's semantics).
        let mut groups: Vec<Vec<usize>> = Vec::new();
        for (i, j) in block.jobs.iter().enumerate() {
            if j.stonewall || groups.is_empty() {
                groups.push(Vec::new());
            }
            groups.last_mut().expect("a group exists").push(i);
        }
        let members: Vec<Vec<usize>> = groups
            .iter()
            .map(|g| {
                (0..r.workers.len())
                    .filter(|&w| g.contains(&r.workers[w].job))
                    .collect()
            })
            .collect();
        let specs = groups
            .iter()
            .zip(&members)
            .map(|(g, m)| {
                let jobs: Vec<&Job> = g.iter().map(|&j| &block.jobs[j]).collect();
                spec(block, &jobs, m.len(), snapping)
            })
            .collect();
        Phases {
            groups,
            members,
            specs,
        }
    }
}

/// Whether a job reads the target: it reads, with an engine that moves data.
fn reads(j: &Job) -> bool {
    !matches!(j.rw, Rw::Write | Rw::RandWrite) && j.engine != EngineKind::Null
}

/// The frame's spec of the phase of `jobs` (their `workers` in all).
fn spec(block: &Block, jobs: &[&Job], workers: usize, snapping: bool) -> PhaseSpec {
    PhaseSpec {
        name: jobs
            .iter()
            .map(|j| j.name.as_str())
            .collect::<Vec<_>>()
            .join("+"),
        does: "fio-class block I/O".into(),
        // invalidate=0 on every job of the group: the page cache is kept. A fio job file's jobs
        // drop only their files' pages, as fio (the session's `prepare`).
        cache: if block.origin == Origin::JobFile || jobs.iter().all(|j| !j.invalidate) {
            CachePolicy::Keep
        } else {
            CachePolicy::Drop
        },
        writes: jobs.iter().any(|j| writes(j.rw)),
        // The null engine moves no data: its reads reach neither the filesystem nor a cache.
        reads: jobs.iter().any(|j| reads(j)),
        workers,
        unit: "I/Os",
        // Time-based jobs end when their runtime (and ramp) is over.
        total_secs: jobs
            .iter()
            .map(|j| match (j.time_based, j.runtime) {
                (true, Some(r)) => Some((r + j.ramp_time.unwrap_or_default()).as_secs_f64()),
                _ => None,
            })
            .try_fold(0.0f64, |a, x| x.map(|x| a.max(x))),
        beside: (snapping && jobs.iter().any(|j| block.snaps(&j.name)))
            || jobs.iter().any(|j| judged(j).is_some()),
        parts: jobs
            .iter()
            .map(|j| PartSpec {
                reads: reads(j),
                writes: writes(j.rw) && j.engine != EngineKind::Null,
                pacing: j.pacing(),
                ..Default::default()
            })
            .collect(),
        // A job whose exitall ends the others may end one before its first I/O, as fio does.
        empty: if jobs.iter().any(|j| j.exitall) {
            crate::frame::Empty::Judged
        } else {
            crate::frame::Empty::Fails
        },
        ..Default::default()
    }
}
