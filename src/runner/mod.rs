//! The coordinator: one loop for `compare` (provision each target in turn), `run` (the paths a
//! job file names, "here") and `audit`. For every repeat and target: get the target (and any
//! target a workload needs of its own), run each workload's phases through the phase frame,
//! persist every record the moment it exists, tear down. The study's bookkeeping (opening or
//! resuming it, the manifest, how it ended) is `study.rs`; what is checked before anything is
//! created is `preflight.rs`.

mod coordinator;
mod preflight;
pub mod room;
mod study;
mod targets;

use std::path::PathBuf;

use crate::plan::Plan;
use crate::stop::StopReason;
use crate::store::{Record, StoreError, Study};
use crate::workload::SpecError;

pub use coordinator::run;
pub use preflight::{resolve, room_of};
pub use study::pending;
pub use targets::here_ctx;

/// Where the targets come from.
pub enum Where {
    /// Provision each target of the plan in turn (`compare`).
    Provision { workdir: PathBuf, keep: bool },
    /// The paths the jobs name (`run`): one target, labelled "local", nothing provisioned.
    Here {
        fs: String,
        device: Option<PathBuf>,
        /// A directory on that filesystem (statvfs, syncfs).
        dir: PathBuf,
        wipe: bool,
    },
}

/// One workload of the plan: the name its records carry, and the workload.
pub(crate) type Named = (String, Box<dyn crate::workload::Workload>);

/// A plan made runnable (`resolve`): its workloads built once, every check passed.
pub struct Resolved {
    pub plan: Plan,
    workloads: Vec<Named>,
}

impl Resolved {
    /// The workloads, built, in the plan's order.
    pub fn workloads(&self) -> impl Iterator<Item = &dyn crate::workload::Workload> {
        self.workloads.iter().map(|(_, w)| w.as_ref())
    }
}

pub struct Options {
    pub resolved: Resolved,
    pub out: PathBuf,
    pub place: Where,
    pub dry_run: bool,
    pub quiet: bool,
    pub command_line: Vec<String>,
    /// Continue the study in `out`: skip what ran to completion, redo the rest.
    pub resume: bool,
    /// Run only this repeat of these targets (a round of `fsbench tune`); None runs the plan.
    pub select: Option<Select>,
    /// Told of every record the study holds (the history indexes them).
    pub observer: Option<std::sync::Arc<dyn crate::store::Observer>>,
}

/// One round of a race: a repeat, and the targets still in it.
#[derive(Debug, Clone)]
pub struct Select {
    pub repeat: u32,
    pub labels: Vec<String>,
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ended {
    /// Every case ran (some may have been skipped or failed; the records say which).
    Complete,
    /// A stop request (a signal) ended it; everything measured so far is saved.
    Interrupted(StopReason),
    /// A guard refused the device: nothing was formatted.
    Refused(String),
    /// A multi-rank run lost a rank (gone, or no answer in time); the manifest names it.
    Ranks(String),
}

pub struct Summary {
    pub records: Vec<Record>,
    pub ended: Ended,
    /// The study, still locked, for the reports written into it (none on a dry run or on ranks
    /// other than 0).
    pub study: Option<Study>,
}

#[derive(Debug, thiserror::Error)]
pub enum RunnerError {
    #[error(transparent)]
    Spec(#[from] SpecError),
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The jobs cannot run where they say (`run`): nothing was created.
    #[error("{0}")]
    Invalid(String),
}

#[cfg(test)]
mod tests;
