//! Workloads: one table, each entry builds a runnable workload from its spec. A workload binds to
//! a target as a `frame::Session` that declares its phases; the phase frame runs them.

/// What `fsbench compare` runs when no --workload is given: the CrystalDiskMark tests at 1 s each
/// on a 256 MiB file, and 20,000 small files written and verified (a few minutes for four
/// filesystems).
pub const QUICK_SUITE: [&str; 2] = ["cdm:runtime=1s,size=256m", "files:count=20000"];

pub mod aging;
pub mod audit;
pub mod block;
pub mod bonnie;
pub mod catalog;
pub mod files;
pub mod hpc;
pub mod idle;
pub mod io500;
pub mod ior;
pub mod iozone;
pub mod mdtest;
pub mod presets;
pub mod smoke;

use crate::frame::{RunError, Session, TargetCtx};
use crate::plan::{Overrides, WorkloadSpec};

pub use crate::frame::Phase;

/// A workload spec that cannot run as written: a usage error, found before anything runs.
pub use crate::plan::PlanError as SpecError;

/// What a workload does on a target: run its phases, or skip with a reason (one record).
pub enum Opened {
    Run(Box<dyn Session>),
    Skip { test: String, reason: String },
}

/// Which target a workload runs on.
pub enum Variant {
    /// The plan's target, provisioned once for every workload that takes it as it is.
    Same,
    /// A target of its own, provisioned afresh from this spec for this workload alone (the
    /// audit's fsync case runs behind the fault device); `test` names its records when it cannot
    /// be had.
    Own {
        spec: crate::plan::TargetSpec,
        test: String,
    },
    /// It cannot have a target of the kind it needs here: one skipped record.
    Skip { test: String, reason: String },
}

/// What a workload leaves on its target, counted before the run so that a plan that cannot fit
/// is refused before anything is provisioned (`runner::room`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Footprint {
    /// Bytes of the files it lays out or creates and keeps until the target goes.
    pub kept: u64,
    /// The most bytes one of its phases rewrites in place: a copy-on-write filesystem writes
    /// them anew before it frees the old copy.
    pub rewritten: u64,
    /// The copies of its rewrites its snapshots pin at most: each snapshot pins what was
    /// rewritten since the one before, so as many copies as snapshots it takes (its rate times
    /// the time it takes them, at most the `keep=` it keeps), and no more than the rewrites it
    /// makes over that time hold.
    pub snapshots: u32,
    /// The inodes its files and directories take (judged where mkfs fixes their number).
    pub inodes: u64,
    /// What it could not count before the run (a size given as a share of the free space).
    pub uncounted: Vec<String>,
}

impl Footprint {
    /// Its files (`files` of them, `bytes` in all), nothing rewritten.
    pub fn kept(bytes: u64, files: u64) -> Footprint {
        Footprint {
            kept: bytes,
            inodes: files,
            ..Default::default()
        }
    }

    /// The same made by `n` ranks at once, each its own (their snapshots are the target's).
    pub fn times(self, n: u64) -> Footprint {
        Footprint {
            kept: self.kept.saturating_mul(n),
            rewritten: self.rewritten.saturating_mul(n),
            inodes: self.inodes.saturating_mul(n),
            ..self
        }
    }
}

pub trait Workload: Send + Sync {
    /// Binds the workload to a target, checking what can be checked there before anything runs.
    fn open(&self, t: &TargetCtx) -> Result<Opened, RunError>;

    /// Refuses a target the workload cannot run on, from its spec and backing size alone (known
    /// before anything is provisioned), so that nothing runs when one case of the plan cannot.
    fn check_target(
        &self,
        _t: &crate::plan::TargetSpec,
        _size: Option<u64>,
    ) -> Result<(), SpecError> {
        Ok(())
    }

    /// The target it runs on: the plan's (the default), or one provisioned for it alone.
    fn variant(&self, _t: &crate::plan::TargetSpec) -> Variant {
        Variant::Same
    }

    /// The workload name its records carry, when not the plan's own naming (the audit's two
    /// cases both write `audit` records).
    fn record_name(&self) -> Option<&'static str> {
        None
    }

    /// What it will run, as lines to print (`fsbench study --check`): a block workload's jobs
    /// as they run.
    fn describe(&self) -> Vec<String> {
        Vec::new()
    }

    /// The tests its records name, when known before it runs (a block workload's jobs); None
    /// when not known here (`tune --test` is then taken as given).
    fn tests(&self) -> Option<Vec<String>> {
        None
    }

    /// Its headline figure, when its table's first key metric is not it (a block workload of
    /// random jobs: IOPS; of sequential ones: bytes per second).
    fn headline(&self) -> Option<&'static str> {
        None
    }

    /// What it leaves on a target (None: nothing worth counting).
    fn footprint(&self) -> Option<Footprint> {
        None
    }

    /// What `ranks` ranks that share one target leave on it: each rank's own (the default:
    /// a file or a segment each, a tree each).
    fn footprint_of_ranks(&self, ranks: usize, _plan: &crate::plan::RankPlan) -> Option<Footprint> {
        self.footprint().map(|f| f.times(ranks as u64))
    }

    /// Records derived from its own records on a target once its phases have run (io500's
    /// score from its phases' figures), saved after them; none unless it says so.
    fn derive(&self, _records: &[Phase]) -> Vec<Phase> {
        Vec::new()
    }
}

/// The metric that sums a workload up (what `fsbench tune` optimises by default) and whether
/// higher is better: the workload's own word, else the first key metric of its table that has a
/// direction.
pub fn headline(spec: &WorkloadSpec, built: &dyn Workload) -> Option<(&'static str, bool)> {
    use crate::metrics::catalog::Better;
    if let Some(m) = built.headline() {
        let better = catalog::find(m).map(|d| d.better);
        return Some((m, better != Some(Better::Lower)));
    }
    let def = WORKLOADS.iter().find(|w| w.name == spec.name)?;
    def.metrics
        .iter()
        .find(|m| m.key && m.better != Better::Neither && !m.name.contains('*'))
        .map(|m| (m.name, m.better == Better::Higher))
}

/// The table entry of a workload or block preset name (a preset is a block workload).
pub fn def_of(name: &str) -> Option<&'static WorkloadDef> {
    if presets::find(name).is_some() {
        return Some(&block::DEF_BLOCK);
    }
    WORKLOADS.iter().find(|w| w.name == name)
}

/// How a workload's spec gives its parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Takes {
    /// `key=value` pairs, each one of its `params`.
    Listed,
    /// Any fio option (block jobs), or a job file (`fio:`).
    FioOptions,
    /// The tool's own command line after the name (`ior:`, `mdtest:`), which it reads itself.
    CommandLine,
}

/// Checks a workload spec (with the command line's overrides) and builds the workload.
pub type BuildFn = fn(&WorkloadSpec, &Overrides) -> Result<Box<dyn Workload>, SpecError>;

pub struct WorkloadDef {
    pub name: &'static str,
    pub summary: &'static str,
    pub params: &'static [(&'static str, &'static str)],
    /// How its spec gives parameters: from `params`, any fio option, or the tool's own
    /// command line.
    pub takes: Takes,
    /// The metrics its records carry besides the phase frame's (docs/results-schema.md).
    pub metrics: &'static [crate::metrics::catalog::MetricDef],
    pub build: BuildFn,
    /// Runs on several ranks at once under mpirun (each rank its own files, or its own segment
    /// of a shared file); the others are refused there.
    pub ranks: bool,
}

/// Under mpirun: every workload of the plan must run on several ranks at once.
pub fn check_ranks(specs: &[WorkloadSpec]) -> Result<(), SpecError> {
    for s in specs {
        if presets::find(&s.name).is_some() {
            continue;
        }
        if let Some(def) = WORKLOADS.iter().find(|w| w.name == s.name && !w.ranks) {
            let can: Vec<&str> = WORKLOADS
                .iter()
                .filter(|w| w.ranks)
                .map(|w| w.name)
                .collect();
            return Err(SpecError(format!(
                "workload '{}' runs as one process: under mpirun run {} or a block preset",
                def.name,
                can.join(", ")
            )));
        }
    }
    Ok(())
}

/// Every workload: adding one is a file in this folder and a line here.
pub static WORKLOADS: &[WorkloadDef] = &[
    smoke::DEF,
    block::DEF_BLOCK,
    block::DEF_FIO,
    files::DEF,
    bonnie::DEF,
    iozone::DEF,
    ior::DEF,
    mdtest::DEF,
    io500::DEF,
    aging::DEF,
    idle::DEF,
    audit::DEF,
];

/// Checks a workload spec (a workload of the table or a block preset) and builds it.
pub fn build(spec: &WorkloadSpec, o: &Overrides) -> Result<Box<dyn Workload>, SpecError> {
    if let Some(p) = presets::find(&spec.name) {
        return block::build_preset(p, spec, o);
    }
    let Some(def) = WORKLOADS.iter().find(|w| w.name == spec.name) else {
        let mut names: Vec<&str> = WORKLOADS.iter().map(|w| w.name).collect();
        names.extend(presets::PRESETS.iter().map(|p| p.name));
        return Err(SpecError(format!(
            "unknown workload '{}': valid workloads are {}",
            spec.name,
            names.join(", ")
        )));
    };
    if def.takes != Takes::Listed {
        return (def.build)(spec, o);
    }
    for (k, _) in &spec.params {
        if !def.params.iter().any(|(p, _)| p == k) {
            let valid: Vec<String> = def
                .params
                .iter()
                .map(|(p, h)| format!("{p} ({h})"))
                .collect();
            return Err(SpecError(format!(
                "unknown parameter '{k}' for workload '{}': valid parameters are {}",
                def.name,
                valid.join(", ")
            )));
        }
    }
    // Only fio's switches are written bare (`block:...,time_based`); these take a value.
    if let Some((k, help)) = spec
        .bare()
        .and_then(|k| def.params.iter().find(|(p, _)| *p == k))
    {
        return Err(SpecError(format!(
            "workload '{}': parameter '{k}' needs a value, e.g. {}:{k}=VALUE ({k}: {help})",
            spec.spec, def.name
        )));
    }
    (def.build)(spec, o)
}

/// A worker's output that only carries an error (setup failed before any work).
pub fn failed(part: usize, e: impl std::fmt::Display) -> crate::frame::WorkerOut {
    crate::frame::WorkerOut {
        part,
        error: Some(e.to_string()),
        ..Default::default()
    }
}
