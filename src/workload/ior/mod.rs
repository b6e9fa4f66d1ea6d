//! `ior:`: IOR's own command line (`--workload 'ior:-w -r -F -t 4m -b 256m -e -C'`), run with
//! IOR's semantics on each target, one process or every rank under mpirun: each iteration's
//! write and read are phases of their own; a write creates its files in the phase (removed
//! before, unless -E) and is timed from the first rank's open to the last rank's close (the
//! transfers, -Y's and -e's fsyncs inside); a read reads the data of the rank -C/-Q says; the
//! files go after each iteration unless -k. The figures are IOR's: bandwidth = every rank's
//! bytes over the earliest open to the latest close, IOPS = transfers over the earliest first
//! transfer to the latest last. The command line is read once (`plan::hpc::ior`); `xfer.rs` is
//! one rank's transfers, `session.rs` the phases and their records.

mod session;
mod xfer;

use crate::metrics::name as metric;

use super::{Footprint, Opened, SpecError, Workload, WorkloadDef};
use crate::frame::{RunError, TargetCtx};
use crate::metrics::catalog::{key, m, Better::*, MetricDef, Unit::*};
use crate::plan::hpc::ior::IorPlan;
use crate::plan::{Overrides, WorkloadSpec};

pub const DEF: WorkloadDef = WorkloadDef {
    name: "ior",
    summary: "IOR's own command line, IOR's semantics and figures: ior:-w -r -F -t 4m -b 256m -e -C (report --format ior prints IOR's summary)",
    params: &[("args", "IOR's command line, after ior:")],
    takes: super::Takes::CommandLine,
    metrics: METRICS,
    build,
    ranks: true,
};

/// What ior records carry besides the frame's figures.
pub static METRICS: &[MetricDef] = &[
    key(metric::BYTES_PER_SEC, BytesPerSec, Higher),
    key("iops", OpsPerSec, Higher),
    m("ios", Count, Neither),
    m("bytes", Bytes, Neither),
    m(metric::RUNTIME_S, Seconds, Lower),
    m(metric::IOR_OPEN_S, Seconds, Lower),
    m(metric::IOR_XFER_S, Seconds, Lower),
    m(metric::IOR_CLOSE_S, Seconds, Lower),
    m(metric::IOR_LATENCY_S, Seconds, Lower),
    m(metric::IOR_STONEWALL_S, Seconds, Neither),
    m(metric::IOR_STONEWALL_BYTES, Bytes, Neither),
    m(metric::WRONG_TRANSFERS, Count, Lower),
    m("iteration", Count, Neither),
    m("lat_*_ns", Nanoseconds, Lower),
];

pub struct Ior {
    plan: IorPlan,
    seed: Option<u64>,
}

fn build(spec: &WorkloadSpec, o: &Overrides) -> Result<Box<dyn Workload>, SpecError> {
    let plan = IorPlan::parse(spec.param("args").unwrap_or_default()).map_err(|e| spec.bad(e))?;
    Ok(Box::new(Ior { plan, seed: o.seed }))
}

impl Workload for Ior {
    fn open(&self, t: &TargetCtx) -> Result<Opened, RunError> {
        Ok(
            match super::hpc_place(t, "ior", "write", self.plan.seed, self.seed) {
                Ok((dir, seed)) => {
                    Opened::Run(Box::new(session::IorSession::new(&self.plan, dir, t, seed)))
                }
                Err(skip) => skip,
            },
        )
    }

    fn describe(&self) -> Vec<String> {
        let p = &self.plan;
        vec![format!(
            "ior {}: {} x ({}), {} of {} per rank and segment in {} transfers, {} segment(s)",
            p.args.join(" "),
            p.iterations,
            session::ways(p).join(", "),
            match p.access {
                crate::plan::hpc::ior::Access::FilePerProcess => "a file per rank",
                crate::plan::hpc::ior::Access::SharedFile => "one shared file",
            },
            crate::plan::units::format_bytes(p.block),
            crate::plan::units::format_bytes(p.transfer),
            p.segments
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

    fn footprint(&self) -> Option<Footprint> {
        let p = &self.plan;
        let kept = match p.multi_file && p.keep {
            true => p.iterations as u64,
            false => 1,
        };
        Some(Footprint::kept(p.file_bytes(1).saturating_mul(kept)))
    }
}
