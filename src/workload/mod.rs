//! Workloads: one table, each entry builds a runnable workload from its spec.

pub mod data;
pub mod idle;
pub mod smoke;

use std::collections::BTreeMap;
use std::path::Path;

use crate::plan::WorkloadSpec;

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
}

/// What a workload may use while it runs.
pub struct Context<'a> {
    /// Where to work: the target's mount point (or scratch directory).
    pub dir: &'a Path,
    /// The target's filesystem type (tmpfs reads are always cache reads).
    pub fs: &'a str,
    /// Hands a finished phase to the runner, which persists it at once.
    pub emit: &'a mut dyn FnMut(Phase) -> std::io::Result<()>,
}

pub trait Workload {
    fn run(&self, ctx: &mut Context) -> Result<(), String>;
}

pub struct WorkloadDef {
    pub name: &'static str,
    pub summary: &'static str,
    pub params: &'static [(&'static str, &'static str)],
    pub build: fn(&WorkloadSpec) -> Result<Box<dyn Workload>, String>,
}

pub static WORKLOADS: &[WorkloadDef] = &[smoke::DEF, idle::DEF];

/// Checks a workload spec and builds it.
pub fn build(spec: &WorkloadSpec) -> Result<Box<dyn Workload>, String> {
    let Some(def) = WORKLOADS.iter().find(|w| w.name == spec.name) else {
        let names: Vec<&str> = WORKLOADS.iter().map(|w| w.name).collect();
        return Err(format!(
            "unknown workload '{}': valid workloads are {}",
            spec.name,
            names.join(", ")
        ));
    };
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
    (def.build)(spec)
}
