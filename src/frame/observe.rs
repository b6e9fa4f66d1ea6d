//! Who else is told of the run's phases as they go: the live metrics endpoint (`--metrics`,
//! `crate::endpoint`) installs itself here for the run. With none installed every hook is one
//! look at an empty slot; nothing is told per I/O (workers publish their progress, and the
//! intervals their slicers close, on their own `Progress`).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::metrics::evidence::sofar::SoFar;
use crate::metrics::progress::Progress;
use crate::metrics::timeline::{self, Slice};

/// What the frame declares of a phase as it starts.
#[derive(Debug, Clone, Copy)]
pub struct PhaseInfo<'a> {
    pub test: &'a str,
    /// The rates' interval (the plan's `--interval`).
    pub interval: Duration,
    /// The operations the phase expects, or how long it runs, when known (progress and ETA).
    pub total_ops: Option<u64>,
    pub total_secs: Option<f64>,
}

/// What an observer is told.
pub trait Observer: Send + Sync {
    /// The coordinator runs `workload` on `target` in `repeat` (0-based), until `left`.
    fn entered(&self, target: &str, repeat: u32, workload: &str);
    fn left(&self);
    /// A phase starts with these workers, until `ended`.
    fn started(&self, p: PhaseInfo, workers: Arc<[Progress]>);
    fn ended(&self);
    /// What decides the running phase's limiter so far.
    fn evidence(&self, s: SoFar);
    /// A phase that must run with no other thread alive in the process begins: the observer's
    /// own threads stop until `resume`.
    fn pause(&self);
    fn resume(&self);
}

static OBSERVER: Mutex<Option<Arc<dyn Observer>>> = Mutex::new(None);

fn current() -> Option<Arc<dyn Observer>> {
    OBSERVER.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// `o` is told of every phase from now on (until `uninstall`).
pub fn install(o: Arc<dyn Observer>) {
    *OBSERVER.lock().unwrap_or_else(|e| e.into_inner()) = Some(o);
}

pub fn uninstall() {
    *OBSERVER.lock().unwrap_or_else(|e| e.into_inner()) = None;
}

/// What a `Scope` ends when it goes.
enum Ends {
    Workload,
    Phase,
    Pause,
}

/// Ends what `workload`, `phase` or `hush` began.
pub struct Scope {
    o: Arc<dyn Observer>,
    ends: Ends,
}

impl Drop for Scope {
    fn drop(&mut self) {
        match self.ends {
            Ends::Workload => self.o.left(),
            Ends::Phase => self.o.ended(),
            Ends::Pause => self.o.resume(),
        }
    }
}

/// The coordinator runs a workload on a target (until the guard goes).
pub fn workload(target: &str, repeat: u32, workload: &str) -> Option<Scope> {
    let o = current()?;
    o.entered(target, repeat, workload);
    Some(Scope {
        o,
        ends: Ends::Workload,
    })
}

/// The frame runs a phase with these workers (until the guard goes).
pub fn phase(p: PhaseInfo, workers: &Arc<[Progress]>) -> Option<Scope> {
    let o = current()?;
    o.started(p, workers.clone());
    Some(Scope {
        o,
        ends: Ends::Phase,
    })
}

/// The frame gathers the running phase's evidence; `make` is called only when one observes.
pub fn evidence(make: impl FnOnce() -> SoFar) {
    if let Some(o) = current() {
        o.evidence(make());
    }
}

/// A phase that must run with no other thread alive: the observer's threads stop until the
/// guard goes.
pub fn hush() -> Option<Scope> {
    let o = current()?;
    o.pause();
    Some(Scope {
        o,
        ends: Ends::Pause,
    })
}

/// Worker `index` of `workers` runs on this thread (until the guard goes): the slicers it
/// makes publish each interval they close to its `Progress`. Nothing when none observes.
pub fn tap(workers: &Arc<[Progress]>, index: usize) -> Option<Tapped> {
    current()?;
    let workers = workers.clone();
    timeline::publish_here(Some(Arc::new(move |slice: &Slice| {
        if let Some(p) = workers.get(index) {
            p.close_interval(slice.clone());
        }
    })));
    Some(Tapped)
}

pub struct Tapped;

impl Drop for Tapped {
    fn drop(&mut self) {
        timeline::publish_here(None);
    }
}
