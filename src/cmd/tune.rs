//! `fsbench tune SPEC... --workload W`: candidates from specs with alternatives in braces (or
//! `--axes`), raced round by round on freshly provisioned targets: after each round the clearly
//! worse and those missing an SLO are dropped; the race ends when one stands, the rest tie, or
//! the rounds or the budget run out. Every trial is a record of a normal study (resumable, and
//! `fsbench report` replays the race).

use std::time::{Duration, Instant};

use super::Exit;
use crate::cli::TuneArgs;
use crate::plan::tune::{Slo, TuneMeta};
use crate::plan::Plan;
use crate::report::tune::{parse_slo, race, Race};
use crate::runner::{self, Select};

/// The most candidates a tune takes without --force.
const MAX_CANDIDATES: usize = 64;

/// Every candidate spec: each spec's braces expanded (with --axes, each filesystem's catalogue
/// of alternatives added first).
fn candidates(specs: &[String], axes: bool) -> anyhow::Result<Vec<String>> {
    let mut out = Vec::new();
    for s in specs {
        let with = if axes {
            let bare = crate::plan::expand::expand(s)?;
            let mut all = Vec::new();
            for b in bare {
                let parsed = crate::provision::parse_target(&b).map_err(anyhow::Error::msg)?;
                all.push(crate::provision::with_axes(&parsed));
            }
            all
        } else {
            vec![s.clone()]
        };
        for w in with {
            for c in crate::plan::expand::expand(&w)? {
                let c = crate::provision::drop_defaults(&c);
                crate::provision::parse_target(&c)
                    .map_err(|e| anyhow::anyhow!("candidate '{c}' (from '{s}'): {e}"))?;
                if !out.contains(&c) {
                    out.push(c);
                }
            }
        }
    }
    Ok(out)
}

/// The objective: --metric, or the first workload's headline.
fn objective(a: &TuneArgs, plan: &Plan) -> anyhow::Result<(String, bool)> {
    if let Some(m) = &a.metric {
        let def = crate::workload::catalog::find(m).ok_or_else(|| {
            anyhow::anyhow!(
                "--metric {m}: no workload emits it (fsbench list --json names every metric)"
            )
        })?;
        return Ok((
            m.clone(),
            def.better != crate::metrics::catalog::Better::Lower,
        ));
    }
    let w = plan
        .workloads
        .first()
        .ok_or_else(|| anyhow::anyhow!("give --workload W"))?;
    let built = crate::workload::build(w, &plan.overrides)?;
    crate::workload::headline(w, built.as_ref())
        .map(|(m, hi)| (m.to_string(), hi))
        .ok_or_else(|| {
            anyhow::anyhow!(
                "workload '{}' has no headline figure: give --metric",
                w.spec
            )
        })
}

fn slos(texts: &[String]) -> anyhow::Result<Vec<Slo>> {
    let known = |m: &str| crate::workload::catalog::find(m).map(|d| d.unit);
    texts
        .iter()
        .map(|t| parse_slo(t, &known).map_err(anyhow::Error::msg))
        .collect()
}

fn tie(text: &str) -> anyhow::Result<f64> {
    let t = text.trim().trim_end_matches('%');
    t.parse::<f64>()
        .ok()
        .filter(|v| *v > 0.0 && *v < 100.0)
        .map(|v| v / 100.0)
        .ok_or_else(|| anyhow::anyhow!("--tie {text}: a share above 0 and below 100%, e.g. 5%"))
}

/// The plan of a new tune: the candidates as targets, the rounds as repeats.
fn new_plan(a: &TuneArgs) -> anyhow::Result<Plan> {
    let cands = candidates(&a.specs, a.axes)?;
    if cands.len() > MAX_CANDIDATES && !a.force {
        anyhow::bail!(
            "{} candidates: more than {MAX_CANDIDATES} would take long to race; narrow the braces or --axes, or add --force",
            cands.len()
        );
    }
    if cands.len() < 2 {
        anyhow::bail!("one candidate ({}): give alternatives in braces (zfs:recordsize={{4k,128k}}), several specs, or --axes", cands.join(""));
    }
    let mut plan = crate::cli::build_plan(
        &cands,
        &a.workloads,
        &a.backing,
        a.max_repeat,
        &a.block,
        None,
    )
    .map_err(anyhow::Error::msg)?;
    let (metric, higher) = objective(a, &plan)?;
    plan.tune = Some(TuneMeta {
        metric,
        higher_is_better: higher,
        test: a.test.clone(),
        slos: slos(&a.slos)?,
        tie: tie(&a.tie)?,
        alpha: 0.05,
        candidates: plan.targets.iter().map(|t| t.label.clone()).collect(),
    });
    Ok(plan)
}

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

pub fn run(a: TuneArgs) -> anyhow::Result<Exit> {
    let plan = match &a.resume {
        Some(dir) => super::studyrun::resumed_plan(dir, "tune")?,
        None => new_plan(&a)?,
    };
    let Some(meta) = plan.tune.clone() else {
        anyhow::bail!("--resume: that study is not a tune (its plan has no candidates to race)");
    };
    if a.check {
        crate::out::print(&describe(&plan, &meta));
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
    };
    let mut opts = super::studyrun::prepare(r, &team)?;
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
    // A candidate this host cannot provision (a property zfs-fuse refuses) is a recorded skip of
    // the race, not a failure of the tune.
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
    let exit = super::studyrun::end(&opts, summary, "tune", &team)?;
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
