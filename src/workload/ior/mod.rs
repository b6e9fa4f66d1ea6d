//! `ior:`: IOR's own command line (`--workload 'ior:-w -r -F -t 4m -b 256m -e -C'`), run with
//! IOR's semantics on each target, one process or every rank under mpirun: each iteration's
//! write and read are phases of their own; a write creates its files in the phase (removed
//! before, unless -E) and is timed from the first rank's open to the last rank's close (the
//! transfers, -Y's and -e's fsyncs inside); a read reads the data of the rank -C/-Q says; the
//! files go after each iteration unless -k. The figures are IOR's: bandwidth = every rank's
//! bytes over the earliest open to the latest close, IOPS = transfers over the earliest first
//! transfer to the latest last. The command line is read once (`plan::hpc::ior`); the workload
//! is `hpc::Hpc` over the plan, whose `Tool` is here; `xfer.rs` is one rank's transfers,
//! `session.rs` the phases and their records.

mod session;
mod xfer;

use crate::metrics::name as metric;

use std::path::Path;

use super::{Footprint, WorkloadDef};
use crate::frame::{Session, TargetCtx};
use crate::metrics::catalog::{key, m, Better::*, MetricDef, Unit::*};
use crate::plan::hpc::ior::{Access, IorPlan};
use crate::plan::units::format_bytes;
use crate::plan::PlanError;

pub const DEF: WorkloadDef = WorkloadDef {
    name: "ior",
    summary: "IOR's own command line, IOR's semantics and figures: ior:-w -r -F -t 4m -b 256m -e -C (report --format ior prints IOR's summary)",
    params: &[("args", "IOR's command line, after ior:")],
    takes: super::Takes::CommandLine,
    metrics: METRICS,
    build: super::hpc::build::<IorPlan>,
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

impl super::hpc::Tool for IorPlan {
    const NAME: &'static str = "ior";
    const FIRST: &'static str = "write";

    fn parse(args: &str) -> Result<IorPlan, PlanError> {
        IorPlan::parse(args)
    }

    fn seed(&self) -> Option<i64> {
        self.seed
    }

    fn session(&self, dir: &Path, t: &TargetCtx, seed: u64) -> Box<dyn Session> {
        Box::new(session::IorSession::new(self, dir, t, seed))
    }

    fn tests(&self) -> Vec<String> {
        session::Step::names(&session::steps(self), self.iterations)
    }

    fn describe(&self) -> String {
        format!(
            "ior {}: {} x ({}), {} of {} per rank and segment in {} transfers, {} segment(s)",
            self.args.join(" "),
            self.iterations,
            session::ways(self).join(", "),
            match self.access {
                Access::FilePerProcess => "a file per rank",
                Access::SharedFile => "one shared file",
            },
            format_bytes(self.block),
            format_bytes(self.transfer),
            self.segments
        )
    }

    fn footprint(&self) -> Option<Footprint> {
        let kept = match self.multi_file && self.keep {
            true => self.iterations as u64,
            false => 1,
        };
        Some(Footprint::kept(
            self.file_bytes(1).saturating_mul(kept),
            kept,
        ))
    }
}
