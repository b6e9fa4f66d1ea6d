//! `mdtest:`: mdtest's own command line (`--workload 'mdtest:-n 2000 -u -w 4096 -e 4096'`), run
//! with mdtest's semantics on each target, one process or every rank under mpirun: its tree
//! (`-z` deep, `-b` wide, `-I` items a directory or `-n` items a rank, `-L` at the leaves only),
//! a tree per rank (`-u`) or one shared, its phases in its order (tree made; directories
//! created, stat'ed, renamed, removed; files created (and written, `-w`), stat'ed, read (`-e`),
//! removed; tree removed; `-C -T -E -r -U` choose), no cache dropped unless asked
//! (`--drop-caches`, said in the record), and its rates: every rank's items over the slowest
//! rank's time, each rank's from its start after MPI's barrier before the phase to its end after
//! the barrier after it (a tree's directories over rank 0's time). The command line is read once (`plan::hpc::mdtest`); `tree.rs` holds mdtest's names, `items.rs`
//! one rank's items, `session.rs` the phases and their records.

mod items;
mod session;
mod tree;

use crate::metrics::name as metric;

use super::{Opened, SpecError, Workload, WorkloadDef};
use crate::frame::{RunError, TargetCtx};
use crate::metrics::catalog::{key, m, Better::*, MetricDef, Unit::*};
use crate::plan::hpc::mdtest::MdPlan;
use crate::plan::{Overrides, WorkloadSpec};

pub const DEF: WorkloadDef = WorkloadDef {
    name: "mdtest",
    summary: "mdtest's own command line, mdtest's semantics and rates: mdtest:-n 2000 -u -w 4096 -e 4096 (report --format mdtest prints mdtest's SUMMARY)",
    params: &[("args", "mdtest's command line, after mdtest:")],
    takes: super::Takes::CommandLine,
    metrics: METRICS,
    build,
    ranks: true,
};

/// What mdtest records carry besides the frame's figures.
pub static METRICS: &[MetricDef] = &[
    key(metric::OPS_PER_SEC, OpsPerSec, Higher),
    m("items", Count, Neither),
    m("bytes", Bytes, Neither),
    m(metric::RUNTIME_S, Seconds, Lower),
    m(metric::STONEWALL_ITEMS, Count, Neither),
    m(metric::STONEWALL_S, Seconds, Neither),
    m("iteration", Count, Neither),
    m("lat_*_ns", Nanoseconds, Lower),
];

pub struct Mdtest {
    plan: MdPlan,
    seed: Option<u64>,
}

fn build(spec: &WorkloadSpec, o: &Overrides) -> Result<Box<dyn Workload>, SpecError> {
    let plan = MdPlan::parse(spec.param("args").unwrap_or_default()).map_err(|e| spec.bad(e))?;
    Ok(Box::new(Mdtest { plan, seed: o.seed }))
}

impl Workload for Mdtest {
    fn open(&self, t: &TargetCtx) -> Result<Opened, RunError> {
        Ok(
            match super::hpc_place(t, "mdtest", "tree-create", self.plan.seed, self.seed) {
                Ok((dir, seed)) => {
                    Opened::Run(Box::new(session::MdSession::new(&self.plan, dir, t, seed)))
                }
                Err(skip) => skip,
            },
        )
    }

    fn describe(&self) -> Vec<String> {
        let p = &self.plan;
        vec![format!(
            "mdtest {}: {} iteration(s) of {}; {} item(s) per rank in {} per directory, a tree of {} directories ({})",
            p.args.join(" "),
            p.iterations,
            self.tests().unwrap_or_default().join(", "),
            p.per_rank,
            p.per_dir,
            p.tree_dirs,
            if p.unique_dir { "one per rank" } else { "shared" },
        )]
    }

    fn tests(&self) -> Option<Vec<String>> {
        Some(
            session::steps(&self.plan)
                .iter()
                .map(|s| s.name(&self.plan))
                .collect(),
        )
    }

    fn footprint(&self) -> Option<super::Footprint> {
        let (inodes, bytes) = self.plan.peak();
        Some(super::Footprint::kept(bytes, inodes))
    }
}
