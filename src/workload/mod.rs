//! Workloads: one table, each entry builds a runnable workload from its spec.

pub mod block;
pub mod data;
pub mod files;
pub mod idle;
pub mod presets;
pub mod smoke;

use std::collections::BTreeMap;
use std::path::Path;

use crate::plan::{Overrides, WorkloadSpec};

/// One measured phase, as a workload reports it; the runner adds target, repeat and times.
#[derive(Debug, Clone, Default)]
pub struct Phase {
    pub test: String,
    pub started_at: String,
    pub duration_s: f64,
    /// Some(error) when the phase failed (e.g. a verification mismatch).
    pub error: Option<String>,
    pub metrics: BTreeMap<String, f64>,
    /// Flags about how far to trust the numbers, e.g. "page_cache".
    pub notes: Vec<String>,
    /// Whole latency histograms, encoded (metrics::hist::encode), by name.
    pub histograms: BTreeMap<String, String>,
    /// Per-second series, by name (e.g. iops, bytes_per_sec).
    pub series: BTreeMap<String, Vec<f64>>,
    /// The job as run, with every option that changes results.
    pub config: Option<serde_json::Value>,
    /// Some(reason) when the phase could not run on this target.
    pub skipped: Option<String>,
}

/// What a workload may use while it runs.
pub struct Context<'a> {
    /// Where to work: the target's mount point (or scratch directory).
    pub dir: &'a Path,
    /// The target's filesystem type (tmpfs reads are always cache reads).
    pub fs: &'a str,
    /// The block device under the target (loop device, --device), for device statistics.
    pub device: Option<&'a Path>,
    /// Set for `raw` targets: the device itself is the target; `dir` is unused.
    pub raw_device: Option<&'a Path>,
    pub quiet: bool,
    /// Hands a finished phase to the runner, which persists it at once.
    pub emit: &'a mut dyn FnMut(Phase) -> std::io::Result<()>,
}

pub trait Workload {
    fn run(&self, ctx: &mut Context) -> Result<(), String>;
}

/// Checks a workload spec (with the command line's overrides) and builds the workload.
pub type BuildFn = fn(&WorkloadSpec, &Overrides) -> Result<Box<dyn Workload>, String>;

pub struct WorkloadDef {
    pub name: &'static str,
    pub summary: &'static str,
    pub params: &'static [(&'static str, &'static str)],
    /// Parameters are any fio option (block jobs), not a fixed list.
    pub fio_params: bool,
    pub build: BuildFn,
}

pub static WORKLOADS: &[WorkloadDef] = &[
    smoke::DEF,
    WorkloadDef {
        name: "block",
        summary: "one fio-class job from fio options: block:rw=randread,bs=4k,iodepth=32 (defaults: io_uring, direct, 1 GiB file, 5 s)",
        params: &[],
        fio_params: true,
        build: block::build_adhoc,
    },
    WorkloadDef {
        name: "fio",
        summary: "a fio job file, run on each target's mount point: fio:PATH",
        params: &[],
        fio_params: true,
        build: block::build_jobfile,
    },
    files::DEF,
    idle::DEF,
];

/// Checks a workload spec (a workload of the table or a block preset) and builds it.
pub fn build(spec: &WorkloadSpec, o: &Overrides) -> Result<Box<dyn Workload>, String> {
    if let Some(p) = presets::find(&spec.name) {
        return block::build_preset(p, spec, o);
    }
    let Some(def) = WORKLOADS.iter().find(|w| w.name == spec.name) else {
        let mut names: Vec<&str> = WORKLOADS.iter().map(|w| w.name).collect();
        names.extend(presets::PRESETS.iter().map(|p| p.name));
        return Err(format!(
            "unknown workload '{}': valid workloads are {}",
            spec.name,
            names.join(", ")
        ));
    };
    if def.fio_params {
        return (def.build)(spec, o);
    }
    for (k, _) in &spec.params {
        if !def.params.iter().any(|(p, _)| p == k) {
            let valid: Vec<String> = def
                .params
                .iter()
                .map(|(p, h)| format!("{p} ({h})"))
                .collect();
            return Err(format!(
                "unknown parameter '{k}' for workload '{}': valid parameters are {}",
                def.name,
                valid.join(", ")
            ));
        }
    }
    (def.build)(spec, o)
}
