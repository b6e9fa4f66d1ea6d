//! Plain data: target specs, workload specs, the plan, and units. Nothing here calls the system.

pub mod dir;
pub mod expand;
pub mod fio;
pub mod flags;
pub mod hpc;
pub mod job;
pub mod profile;
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
    /// What is done with a repeat that other processes disturbed (`--retry-interfered`).
    #[serde(default)]
    pub on_interference: OnInterference,
    /// What is done when a target cannot hold what the workloads leave on it (`--room`).
    #[serde(default)]
    pub on_misfit: OnMisfit,
}

/// What a plan whose workloads do not fit a target's room does (judged before anything is
/// provisioned, `runner::room`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OnMisfit {
    /// Exit 2 before anything is made, naming the size that fits.
    #[default]
    Refuse,
    /// Say so and run: the phase that fills the filesystem records ENOSPC as its failure.
    Warn,
}

impl std::str::FromStr for OnMisfit {
    type Err = String;

    fn from_str(s: &str) -> Result<OnMisfit, String> {
        match s {
            "refuse" => Ok(OnMisfit::Refuse),
            "warn" => Ok(OnMisfit::Warn),
            _ => Err(format!("{s}: say refuse or warn")),
        }
    }
}

/// What the coordinator does with a target's repeat whose records say other processes or the
/// hypervisor took a share of the machine while it ran (an `interference` note).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OnInterference {
    /// Keep its records; the report counts and names them.
    #[default]
    Keep,
    /// Measure it once more on a fresh target; the disturbed records go to
    /// results.partial.jsonl.
    RetryOnce,
}

impl OnInterference {
    /// From `--retry-interfered[=yes|no]`: the flag's word, else `default`.
    pub fn from_flag(flag: Option<bool>, default: OnInterference) -> OnInterference {
        match flag {
            Some(true) => OnInterference::RetryOnce,
            Some(false) => OnInterference::Keep,
            None => default,
        }
    }
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
