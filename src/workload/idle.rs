//! `idle`: hold the target mounted for a while, measuring nothing. For looking at a provisioned
//! target in the middle of a study, and for testing interruption and cleanup.

use std::time::{Duration, Instant};

use super::{Opened, SpecError, Workload, WorkloadDef};
use crate::frame::{
    CachePolicy, Merged, Phase, PhaseSpec, RunError, Session, TargetCtx, WorkerCtx, WorkerOut,
};
use crate::plan::WorkloadSpec;

pub const DEF: WorkloadDef = WorkloadDef {
    name: "idle",
    summary: "keep the target mounted for a while, measuring nothing (default 10 s)",
    params: &[("seconds", "how long, default 10")],
    takes: super::Takes::Listed,
    metrics: &[],
    build,
    ranks: true,
};

struct Idle {
    seconds: f64,
}

fn build(spec: &WorkloadSpec, _o: &crate::plan::Overrides) -> Result<Box<dyn Workload>, SpecError> {
    let seconds = match spec.param("seconds") {
        Some(s) => s
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && *v >= 0.0)
            .ok_or_else(|| {
                SpecError(format!(
                    "workload '{}': seconds '{s}' is not a number of seconds",
                    spec.spec
                ))
            })?,
        None => 10.0,
    };
    Ok(Box::new(Idle { seconds }))
}

struct IdleSession {
    seconds: f64,
    specs: Vec<PhaseSpec>,
}

impl Workload for Idle {
    fn open(&self, _t: &TargetCtx) -> Result<Opened, RunError> {
        Ok(Opened::Run(Box::new(IdleSession {
            seconds: self.seconds,
            specs: vec![PhaseSpec {
                name: "idle".into(),
                does: "wait, measuring nothing".into(),
                cache: CachePolicy::Keep,
                writes: false,
                reads: false,
                workers: 1,
                unit: "s",
                ..Default::default()
            }],
        })))
    }
}

impl Session for IdleSession {
    fn phases(&self) -> &[PhaseSpec] {
        &self.specs
    }

    fn work(&self, _phase: usize, _ctx: &WorkerCtx) -> WorkerOut {
        let end = Instant::now() + Duration::from_secs_f64(self.seconds);
        let mut out = WorkerOut::default();
        while Instant::now() < end {
            if let Some(why) = crate::stop::requested() {
                out.stopped = Some(why);
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        out
    }

    /// Idle measures nothing: no record.
    fn finish(&mut self, _phase: usize, _m: &Merged) -> Result<Vec<Phase>, RunError> {
        Ok(Vec::new())
    }
}
