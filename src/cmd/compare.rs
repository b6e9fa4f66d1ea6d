//! `fsbench compare TARGET...`: provision each target, run the workloads, record every phase,
//! tear down, then report.

use super::Exit;
use crate::cli::CompareArgs;
use crate::plan::{OnInterference, Plan};

/// The plan: a resumed study's, or one built from the arguments.
fn plan_of(a: &CompareArgs) -> anyhow::Result<Plan> {
    match &a.resume {
        Some(dir) => super::studyrun::resumed_plan(dir, "compare"),
        None => crate::cli::build_plan(
            &a.targets,
            &a.workloads,
            &a.backing,
            a.repeat,
            &a.block,
            a.baseline.as_deref(),
        )
        .map_err(anyhow::Error::msg),
    }
}

pub fn run(a: CompareArgs) -> anyhow::Result<Exit> {
    let team = super::join_ranks(&a.ranks)?;
    let mut plan = plan_of(&a)?;
    if a.resume.is_none() {
        plan.ranks = a.ranks.plan();
    }
    plan.on_interference = OnInterference::from_flag(a.retry_interfered, plan.on_interference);
    let r = super::studyrun::Run {
        command: "compare",
        plan,
        out: a.resume.clone().or(a.out.clone()),
        default_out: "fsbench-study",
        resume: a.resume.is_some(),
        keep: a.keep,
        common: &a.common,
        metrics: a.metrics.metrics,
    };
    super::studyrun::run(r, team.as_ref())
}
