//! The running phase's limiter so far (what the live metrics endpoint shows): the evidence from
//! the phase's first snapshot to now, judged by the same rules as at its end
//! (`limiter::classify`). The workers still running are read from /proc (their CPU in ticks,
//! their scheduler figures), since a worker reads its own figures only at its start line and its
//! end.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use super::watch::ThreadSample;
use super::{Board, Evidence, Medium, Scan, Snapshot, Volume, Watch};
use crate::metrics::limiter::{self, Facts, Limit, Paced};
use crate::metrics::procfs;
use crate::plan::job::{Achieved, Pacing};

/// What the frame hands an observer (`frame::observe`) as a phase starts.
pub struct SoFar {
    pub watch: Watch,
    pub first: Snapshot,
    pub board: Arc<Board>,
    /// The job's pacing, when it paces itself; where the target keeps its data; whether the
    /// phase reads it.
    pub pacing: Option<Pacing>,
    pub medium: Medium,
    pub reads: limiter::Moves,
    pub writes: limiter::Moves,
}

/// A running thread of this process, read from outside it: CPU (ticks, as nanoseconds) and its
/// scheduler figures.
fn thread_now(tid: u32) -> Option<ThreadSample> {
    let dir = format!("/proc/self/task/{tid}");
    let (_, cpu) = procfs::parse_task_stat(&std::fs::read_to_string(format!("{dir}/stat")).ok()?)?;
    let ns = |ticks: u64| (ticks as f64 * 1e9 / procfs::TICKS_PER_SEC) as u64;
    Some(ThreadSample {
        at: Some(Instant::now()),
        user_ns: ns(cpu.user),
        sys_ns: ns(cpu.system),
        sched: procfs::task_sched(Path::new(&dir))?,
    })
}

impl SoFar {
    /// The limiter the evidence so far gives (`volume`: what the workers moved so far).
    pub fn limiter(&self, volume: Volume, achieved: &Achieved) -> Option<Limit> {
        let now = Snapshot::take(&self.watch, Scan::Last);
        let threads: Vec<_> = self
            .board
            .peek()
            .into_iter()
            .map(|mut w| {
                if w.end.is_none() && w.tid != 0 && w.start.is_some() {
                    w.end = thread_now(w.tid);
                }
                w
            })
            .collect();
        let r = super::Readings {
            watch: &self.watch,
            a: &self.first,
            b: &now,
            flushed: None,
        };
        let e = Evidence::between(&r, &threads, &[], Vec::new(), volume);
        limiter::classify(&Facts {
            evidence: &e,
            volume,
            pacing: self.pacing.as_ref().map(|how| Paced {
                how,
                reached: how.reached(achieved),
            }),
            medium: self.medium,
            reads: self.reads,
            writes: self.writes,
            split: None,
        })
        .map(|l| l.kind)
    }
}
