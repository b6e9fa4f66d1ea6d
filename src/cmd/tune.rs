//! `fsbench tune SPEC... --workload W`: candidates from specs with alternatives in braces (or
//! `--axes`), raced round by round on freshly provisioned targets: after each round the clearly
//! worse and those missing an SLO are dropped; the race ends when one stands, the rest tie, or
//! the rounds or the budget run out. Every trial is a record of a normal study (resumable, and
//! `fsbench report` replays the race).

mod race;

use std::time::{Duration, Instant};

use super::Exit;
use crate::cli::TuneArgs;
use crate::plan::tune::TuneMeta;
use crate::plan::Plan;
use crate::report::tune::{race, Race};
use crate::runner::{self, Select};

/// `--check`: the candidates and the race as it would run.
fn describe(plan: &Plan, meta: &TuneMeta) -> String {
    let mut s = format!(
        "{} candidates, raced on {} for {} {}; at most {} rounds; tied within {:.0}%\n",
        meta.candidates.len(),
        plan.workloads
            .iter()
            .map(|w| w.spec.as_str())
            .collect::<Vec<_>>()
            .join(" + "),
        if meta.higher_is_better {
            "the highest"
        } else {
            "the lowest"
        },
        meta.metric,
        plan.repeat,
        meta.tie * 100.0
    );
    for slo in &meta.slos {
        s.push_str(&format!(
            "SLO: {} ({} {} {})\n",
            slo.text,
            slo.metric,
            if slo.below { "<" } else { ">" },
            slo.value
        ));
    }
    s.push_str("\ncandidates:\n");
    for t in &plan.targets {
        s.push_str(&format!("  {}\n", t.label));
        for line in crate::provision::describe(t, plan.size_bytes) {
            s.push_str(&format!("      {line}\n"));
        }
    }
    s.push_str("\nnothing was run\n");
    s
}

/// The first round some survivor has not completed (replaying the race over the records so far).
fn next_round(plan: &Plan, meta: &TuneMeta, dir: &std::path::Path) -> u32 {
    let records = crate::store::load_results(dir).unwrap_or_default();
    let done = crate::store::read_manifest(dir)
        .map(|m| m.completed)
        .unwrap_or_default();
    for round in 0..plan.repeat {
        let r = race(meta, &records, round);
        if r.ended != "running" && round > 0 {
            return plan.repeat;
        }
        let alive = r.candidates.iter().filter(|c| c.dropped_round.is_none());
        if alive
            .clone()
            .any(|c| !done.contains(&(c.label.clone(), round)))
        {
            return round;
        }
    }
    plan.repeat
}

/// A new tune measures a disturbed trial once more unless told not to (a disturbed trial could
/// decide the race); a resumed one does as it was set.
fn retry_of(a: &TuneArgs, plan: &Plan) -> crate::plan::OnInterference {
    let default = match a.resume {
        Some(_) => plan.on_interference,
        None => crate::plan::OnInterference::RetryOnce,
    };
    crate::plan::OnInterference::from_flag(a.retry_interfered, default)
}

/// The race's plan: a resumed tune's as recorded, or a new one from the arguments.
fn plan_of(a: &TuneArgs) -> anyhow::Result<Plan> {
    let mut plan = match &a.resume {
        Some(dir) => {
            race::refuse_changes(a)?;
            super::studyrun::resumed_plan(dir, "tune")?
        }
        None => race::new_plan(a)?,
    };
    plan.on_interference = retry_of(a, &plan);
    Ok(plan)
}

pub fn run(a: TuneArgs) -> anyhow::Result<Exit> {
    let plan = plan_of(&a)?;
    let Some(meta) = plan.tune.clone() else {
        anyhow::bail!("--resume: that study is not a tune (its plan has no candidates to race)");
    };
    if a.check {
        let place = runner::Where::Provision {
            workdir: a.common.workdir.clone(),
            keep: a.keep,
        };
        let space = runner::resolve(plan.clone(), &place, false)?.space_text(&place);
        crate::out::print(&(describe(&plan, &meta) + &space));
        return Ok(Exit::Ok);
    }
    let team = crate::frame::Local;
    let r = super::studyrun::Run {
        command: "tune",
        plan,
        out: a.resume.clone().or(a.out.clone()),
        default_out: "fsbench-tune",
        resume: a.resume.is_some(),
        keep: a.keep,
        common: &a.common,
        metrics: a.metrics.metrics,
    };
    let (mut opts, endpoint) = super::studyrun::prepare(r, &team)?;
    let t0 = Instant::now();
    let mut last_round = Duration::ZERO;
    let mut round = if a.resume.is_some() {
        next_round(&opts.resolved.plan, &meta, &opts.out)
    } else {
        0
    };
    let mut summary = None;
    while round < opts.resolved.plan.repeat {
        let records = summary
            .as_ref()
            .map(|s: &runner::Summary| s.records.clone())
            .or_else(|| crate::store::load_results(&opts.out).ok())
            .unwrap_or_default();
        let standing = race(&meta, &records, round);
        if round > 0 && standing.ended != "running" {
            break;
        }
        if let Some(b) = a.budget {
            if round > 0 && t0.elapsed() + last_round > b {
                crate::out::eline!(
                    "fsbench: the budget ({b:?}) would run out in round {}: the race ends here",
                    round + 1
                );
                break;
            }
        }
        let survivors = alive(&standing);
        if survivors.is_empty() {
            break;
        }
        if !a.common.quiet {
            crate::out::eline!(
                "fsbench: tune round {}: {} candidate{} ({})",
                round + 1,
                survivors.len(),
                if survivors.len() == 1 { "" } else { "s" },
                survivors.join(", ")
            );
        }
        opts.select = Some(Select {
            repeat: round,
            labels: survivors,
        });
        // The last round's study (and its lock) is let go: this round opens it again.
        if let Some(prev) = summary.as_mut() {
            prev.study = None;
        }
        let started = Instant::now();
        let s = runner::run(&opts, &team)?;
        opts.resume = true;
        last_round = started.elapsed();
        let stop = s.ended != runner::Ended::Complete;
        summary = Some(s);
        if stop {
            break;
        }
        round += 1;
    }
    let summary = match summary {
        Some(s) => s,
        None => {
            // Nothing left to run (a resumed tune that had finished): report what it has.
            opts.select = Some(Select {
                repeat: u32::MAX,
                labels: Vec::new(),
            });
            opts.resume = true;
            runner::run(&opts, &team)?
        }
    };
    // The endpoint closes when the race ends, before the reports.
    drop(endpoint);
    end_of_race(&opts, summary, &team)
}

/// The tune's exit: a candidate this host cannot provision (a property zfs-fuse refuses) is a
/// recorded skip of the race, not a failure of the tune.
fn end_of_race(
    opts: &runner::Options,
    summary: runner::Summary,
    team: &dyn crate::ranks::Team,
) -> anyhow::Result<Exit> {
    let unprovisioned = summary
        .records
        .iter()
        .filter(|r| {
            r.outcome == crate::store::Outcome::Failed && r.workload == crate::store::PROVISION
        })
        .count();
    let others_failed = summary.records.iter().any(|r| {
        r.outcome == crate::store::Outcome::Failed && r.workload != crate::store::PROVISION
    });
    let exit = super::studyrun::end(opts, summary, "tune", team)?;
    Ok(match exit {
        Exit::CheckFailed if unprovisioned > 0 && !others_failed => {
            crate::out::eline!(
                "fsbench: {unprovisioned} candidate(s) could not be provisioned on this host: out of the race, with the reason in the report"
            );
            Exit::Ok
        }
        e => e,
    })
}

/// The candidates still in the race.
fn alive(r: &Race) -> Vec<String> {
    r.candidates
        .iter()
        .filter(|c| c.dropped_round.is_none())
        .map(|c| c.label.clone())
        .collect()
}
