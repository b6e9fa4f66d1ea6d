//! `idle`: hold the target mounted for a while, measuring nothing. For looking at a provisioned
//! target in the middle of a study, and for testing interruption and cleanup.

use std::time::{Duration, Instant};

use super::{Context, Workload, WorkloadDef};
use crate::plan::WorkloadSpec;

pub const DEF: WorkloadDef = WorkloadDef {
    name: "idle",
    summary: "keep the target mounted for a while, measuring nothing (default 10 s)",
    params: &[("seconds", "how long, default 10")],
    fio_params: false,
    build,
};

struct Idle {
    seconds: f64,
}

fn build(spec: &WorkloadSpec, _o: &crate::plan::Overrides) -> Result<Box<dyn Workload>, String> {
    let seconds = match spec.param("seconds") {
        Some(s) => s
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && *v >= 0.0)
            .ok_or_else(|| {
                format!(
                    "workload '{}': seconds '{s}' is not a number of seconds",
                    spec.spec
                )
            })?,
        None => 10.0,
    };
    Ok(Box::new(Idle { seconds }))
}

impl Workload for Idle {
    fn run(&self, _ctx: &mut Context) -> Result<(), String> {
        let end = Instant::now() + Duration::from_secs_f64(self.seconds);
        while Instant::now() < end {
            if crate::runner::stop_requested() {
                return Err("interrupted".into());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(())
    }
}
