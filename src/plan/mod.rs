//! Plain data: target specs, workload specs, the plan, and units. Nothing here calls the system.

pub mod dir;
pub mod expand;
pub mod fio;
pub mod job;
pub mod provisioned;
pub mod spec;
pub mod study;
pub mod tune;
pub mod units;
pub mod workload;

use serde::{Deserialize, Serialize};

/// Input that cannot be planned (a target or workload spec, a size, a fio option): the message
/// names the input and the fix. A usage error: found before anything runs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct PlanError(pub String);

impl From<String> for PlanError {
    fn from(s: String) -> Self {
        PlanError(s)
    }
}

impl From<&str> for PlanError {
    fn from(s: &str) -> Self {
        PlanError(s.to_string())
    }
}

pub use provisioned::TargetInfo;
pub use spec::{FaultPlan, TargetSpec};
pub use workload::{Overrides, WorkloadSpec};

/// Everything `compare` will do, saved verbatim in the study's manifest.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Plan {
    pub targets: Vec<TargetSpec>,
    pub workloads: Vec<WorkloadSpec>,
    /// Loop image size for targets that do not set their own.
    pub size_bytes: u64,
    /// A whole block device to format for each target in turn, instead of loop images.
    pub device: Option<String>,
    pub wipe: bool,
    pub repeat: u32,
    /// The target the report compares every other with (default: the first).
    #[serde(default)]
    pub baseline: Option<String>,
    /// --runtime and --file-size for block jobs.
    #[serde(default)]
    pub overrides: Overrides,
    /// How the ranks of a multi-rank run (mpirun) share the target.
    #[serde(default)]
    pub ranks: RankPlan,
    /// What the plan is, when it comes from a study file (`fsbench study`): its title, source,
    /// and the published findings the report checks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub study: Option<study::StudyMeta>,
    /// What a tune races for (`fsbench tune`): the objective, the SLOs, the candidates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tune: Option<tune::TuneMeta>,
}

/// How the ranks of a multi-rank run share the target (recorded: both change what is measured).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RankPlan {
    /// Block jobs: one file for all ranks, each rank its own segment (IOR's N-1); otherwise a
    /// file per rank (N-N).
    #[serde(default)]
    pub shared_file: bool,
    /// files: one tree for all ranks, subfolders dealt out by rank (mdtest's shared directory);
    /// otherwise a subtree per rank (mdtest's unique directories).
    #[serde(default)]
    pub shared_tree: bool,
}
