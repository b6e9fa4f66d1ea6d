//! `mdtest:`: mdtest's own command line (`--workload 'mdtest:-n 2000 -u -w 4096 -e 4096'`), run
//! with mdtest's semantics on each target, one process or every rank under mpirun: its tree
//! (`-z` deep, `-b` wide, `-I` items a directory or `-n` items a rank, `-L` at the leaves only),
//! a tree per rank (`-u`) or one shared, its phases in its order (tree made; directories
//! created, stat'ed, renamed, removed; files created (and written, `-w`), stat'ed, read (`-e`),
//! removed; tree removed; `-C -T -E -r -U` choose), no cache dropped unless asked
//! (`--drop-caches`, said in the record), and its rates: every rank's items over the slowest
//! rank's time, each rank's from its start after MPI's barrier before the phase to its end after
//! the barrier after it (a tree's directories over rank 0's time). The command line is read
//! once (`plan::hpc::mdtest`); the workload is `hpc::Hpc` over the plan, whose `Tool` is here;
//! `tree.rs` holds mdtest's names, `items.rs` one rank's items, `session.rs` the phases and
//! their records.

mod items;
mod session;
mod tree;

use crate::metrics::name as metric;

use std::path::Path;

use super::hpc::Tool;
use super::{Footprint, WorkloadDef};
use crate::frame::{Session, TargetCtx};
use crate::metrics::catalog::{key, m, Better::*, MetricDef, Unit::*};
use crate::plan::hpc::mdtest::MdPlan;
use crate::plan::PlanError;

pub const DEF: WorkloadDef = WorkloadDef {
    name: "mdtest",
    summary: "mdtest's own command line, mdtest's semantics and rates: mdtest:-n 2000 -u -w 4096 -e 4096 (report --format mdtest prints mdtest's SUMMARY)",
    params: &[("args", "mdtest's command line, after mdtest:")],
    takes: super::Takes::CommandLine,
    metrics: METRICS,
    build: super::hpc::build::<MdPlan>,
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

impl Tool for MdPlan {
    const NAME: &'static str = "mdtest";
    const FIRST: &'static str = "tree-create";

    fn parse(args: &str) -> Result<MdPlan, PlanError> {
        MdPlan::parse(args)
    }

    fn seed(&self) -> Option<i64> {
        self.seed
    }

    fn session(&self, dir: &Path, t: &TargetCtx, seed: u64) -> Box<dyn Session> {
        Box::new(session::MdSession::new(self, dir, t, seed))
    }

    fn tests(&self) -> Vec<String> {
        session::Step::names(&session::steps(self), self.iterations)
    }

    fn describe(&self) -> String {
        format!(
            "mdtest {}: {} iteration(s) of {}; {} item(s) per rank in {} per directory, a tree of {} directories ({})",
            self.args.join(" "),
            self.iterations,
            self.tests().join(", "),
            self.per_rank,
            self.per_dir,
            self.tree_dirs,
            if self.unique_dir { "one per rank" } else { "shared" },
        )
    }

    fn footprint(&self) -> Option<Footprint> {
        let (inodes, bytes) = self.peak();
        Some(Footprint::kept(bytes, inodes))
    }
}
