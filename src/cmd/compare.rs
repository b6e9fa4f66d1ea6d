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
    plan.on_misfit = a.room.unwrap_or(plan.on_misfit);
    if a.check {
        return check(plan, &a);
    }
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

/// `--check`: the plan as it would run, and the space judged for each target; nothing is
/// touched. A plan that cannot fit is refused (exit 2) as the run would refuse it.
fn check(plan: Plan, a: &CompareArgs) -> anyhow::Result<Exit> {
    let place = crate::runner::Where::Provision {
        workdir: a.common.workdir.clone(),
        keep: a.keep,
    };
    let resolved = crate::runner::resolve(plan, &place, false)?;
    let plan = &resolved.plan;
    let mut s = format!(
        "repeat: {}   size: {}\n\ntargets:\n",
        plan.repeat,
        crate::plan::units::format_bytes(plan.size_bytes)
    );
    for t in &plan.targets {
        s.push_str(&format!("  {}\n", t.label));
        for line in crate::provision::describe(t, plan.size_bytes) {
            s.push_str(&format!("      {line}\n"));
        }
    }
    s.push_str("\nworkloads:\n");
    for (w, built) in plan.workloads.iter().zip(resolved.workloads()) {
        s.push_str(&format!("  {}\n", w.spec));
        for line in built.describe() {
            s.push_str(&format!("      {line}\n"));
        }
    }
    s.push_str(&resolved.space_text(&place));
    s.push_str("\nnothing was run\n");
    crate::out::print(&s);
    Ok(Exit::Ok)
}
