//! What defines a tune's race, from the command line: the candidates (counted before they are
//! made), the objective, the SLOs and the test, each checked against what the tune's workloads
//! measure and run, so that a race that cannot apply is refused (exit 2) before anything runs;
//! and, on `--resume`, the refusal of flags that would change a recorded race.

use crate::cli::TuneArgs;
use crate::metrics::catalog::{Better, MetricDef};
use crate::plan::tune::{Slo, TuneMeta};
use crate::plan::Plan;
use crate::report::tune::parse_slo;
use crate::workload::{catalog, Workload};

/// The most candidates a tune takes without --force.
const MAX_CANDIDATES: usize = 64;

/// The most it takes with --force: more could not be raced in any time, and expanding them would
/// exhaust the memory (six braces of a hundred are 10^12 specs).
const MOST_CANDIDATES: u64 = 4096;

/// Refuses `n` candidates (counted before they are made) beyond what a tune takes.
fn within_limit(n: u64, force: bool) -> anyhow::Result<()> {
    if n > MOST_CANDIDATES {
        anyhow::bail!(
            "{n} candidates: more than {MOST_CANDIDATES} are refused even with --force; narrow the braces or --axes"
        );
    }
    if n > MAX_CANDIDATES as u64 && !force {
        anyhow::bail!(
            "{n} candidates: more than {MAX_CANDIDATES} would take long to race; narrow the braces or --axes, or add --force"
        );
    }
    Ok(())
}

/// The candidates `specs` stand for, counted without making them.
fn count(specs: &[String]) -> anyhow::Result<u64> {
    specs.iter().try_fold(0u64, |n, s| {
        Ok(n.saturating_add(crate::plan::expand::count(s)?))
    })
}

/// Every candidate spec: each spec's braces expanded (with --axes, each filesystem's catalogue
/// of alternatives added first), counted before each expansion so that too many are refused
/// before they exist.
fn candidates(specs: &[String], axes: bool, force: bool) -> anyhow::Result<Vec<String>> {
    within_limit(count(specs)?, force)?;
    // (Each spec to expand, with the spec it came from.)
    let mut with: Vec<(String, &String)> = specs.iter().map(|s| (s.clone(), s)).collect();
    if axes {
        with.clear();
        for s in specs {
            for b in crate::plan::expand::expand(s)? {
                let parsed = crate::provision::parse_target(&b).map_err(anyhow::Error::msg)?;
                with.push((crate::provision::with_axes(&parsed), s));
            }
        }
        let all: Vec<String> = with.iter().map(|(w, _)| w.clone()).collect();
        within_limit(count(&all)?, force)?;
    }
    let mut out = Vec::new();
    for (w, s) in &with {
        for c in crate::plan::expand::expand(w)? {
            let c = crate::provision::drop_defaults(&c);
            crate::provision::parse_target(&c)
                .map_err(|e| anyhow::anyhow!("candidate '{c}' (from '{s}'): {e}"))?;
            if !out.contains(&c) {
                out.push(c);
            }
        }
    }
    Ok(out)
}

/// What the tune's workloads measure, for a message: each one's key metrics first.
fn measures(plan: &Plan) -> String {
    const SHOWN: usize = 8;
    plan.workloads
        .iter()
        .map(|w| {
            let all = catalog::measured_by(&w.name);
            let more = all.len().saturating_sub(SHOWN);
            format!(
                "'{}' measures {}{}",
                w.spec,
                all.iter()
                    .take(SHOWN)
                    .copied()
                    .collect::<Vec<_>>()
                    .join(", "),
                if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                }
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The metric `name` names (`lat_p99` is `lat_p99_ns`), which some workload of the tune must
/// emit; `flag` says where it was given.
fn emitted(plan: &Plan, flag: &str, name: &str) -> anyhow::Result<(String, MetricDef)> {
    let Some((metric, def)) = catalog::named(name) else {
        anyhow::bail!(
            "{flag}: no workload emits a metric '{name}' (fsbench list --json names every metric)"
        );
    };
    if !plan
        .workloads
        .iter()
        .any(|w| catalog::emits(&w.name, &metric))
    {
        anyhow::bail!(
            "{flag}: the tune's workload does not measure {metric}: {} (fsbench list --json names every metric)",
            measures(plan)
        );
    }
    Ok((metric, def))
}

/// The objective: --metric, or the first workload's headline.
fn objective(
    a: &TuneArgs,
    plan: &Plan,
    built: &[Box<dyn Workload>],
) -> anyhow::Result<(String, bool)> {
    if let Some(m) = &a.metric {
        let (metric, def) = emitted(plan, &format!("--metric {m}"), m)?;
        if def.better == Better::Neither {
            anyhow::bail!(
                "--metric {m}: {metric} is neither better higher nor lower, so no candidate can win on it: give a metric with a direction, e.g. {}",
                catalog::measured_by(&plan.workloads[0].name)
                    .first()
                    .copied()
                    .unwrap_or("iops")
            );
        }
        return Ok((metric, def.better == Better::Higher));
    }
    let (w, b) = plan
        .workloads
        .first()
        .zip(built.first())
        .ok_or_else(|| anyhow::anyhow!("give --workload W"))?;
    crate::workload::headline(w, b.as_ref())
        .map(|(m, hi)| (m.to_string(), hi))
        .ok_or_else(|| {
            anyhow::anyhow!(
                "workload '{}' has no headline figure: give --metric",
                w.spec
            )
        })
}

/// The SLOs, each on a metric the tune's workloads measure, none contradicting another.
fn slos(texts: &[String], plan: &Plan) -> anyhow::Result<Vec<Slo>> {
    let known = |m: &str| catalog::find(m).map(|d| d.unit);
    let slos: Vec<Slo> = texts
        .iter()
        .map(|t| parse_slo(t, &known).map_err(anyhow::Error::msg))
        .collect::<Result<_, _>>()?;
    for s in &slos {
        emitted(plan, &format!("--slo '{}'", s.text), &s.metric)?;
    }
    for (i, x) in slos.iter().enumerate() {
        for y in &slos[i + 1..] {
            if x.metric != y.metric || x.below == y.below {
                continue;
            }
            let (above, below) = if x.below { (y, x) } else { (x, y) };
            if above.value >= below.value {
                anyhow::bail!(
                    "--slo '{}' and --slo '{}' cannot both hold (no {} is above the one and below the other): drop or change one",
                    above.text,
                    below.text,
                    x.metric
                );
            }
        }
    }
    Ok(slos)
}

/// `--test`: a test some workload of the tune runs (when the workloads say their tests).
fn check_test(test: &str, built: &[Box<dyn Workload>]) -> anyhow::Result<()> {
    let mut all: Vec<String> = Vec::new();
    for b in built {
        match b.tests() {
            Some(t) => all.extend(t),
            None => return Ok(()),
        }
    }
    if all.iter().any(|t| t == test) {
        return Ok(());
    }
    anyhow::bail!(
        "--test {test}: the tune's workload runs no test of that name: its tests are {} (a record's `test`)",
        all.join(", ")
    )
}

fn tie(text: &str) -> anyhow::Result<f64> {
    let t = text.trim().trim_end_matches('%');
    t.parse::<f64>()
        .ok()
        .filter(|v| *v > 0.0 && *v < 100.0)
        .map(|v| v / 100.0)
        .ok_or_else(|| anyhow::anyhow!("--tie {text}: a share above 0 and below 100%, e.g. 5%"))
}

/// The rounds when --max-repeat is not given.
const ROUNDS: u32 = 5;

/// The plan of a new tune: the candidates as targets, the rounds as repeats, the race checked
/// against the workloads.
pub fn new_plan(a: &TuneArgs) -> anyhow::Result<Plan> {
    let cands = candidates(&a.specs, a.axes, a.force)?;
    within_limit(cands.len() as u64, a.force)?;
    if cands.len() < 2 {
        anyhow::bail!("one candidate ({}): give alternatives in braces (zfs:recordsize={{4k,128k}}), several specs, or --axes", cands.join(""));
    }
    let mut plan = crate::cli::build_plan(
        &cands,
        &a.workloads,
        &a.backing,
        a.max_repeat.unwrap_or(ROUNDS),
        &a.block,
        None,
    )
    .map_err(anyhow::Error::msg)?;
    let built: Vec<Box<dyn Workload>> = plan
        .workloads
        .iter()
        .map(|w| crate::workload::build(w, &plan.overrides))
        .collect::<Result<_, _>>()?;
    let (metric, higher) = objective(a, &plan, &built)?;
    if let Some(t) = &a.test {
        check_test(t, &built)?;
    }
    plan.tune = Some(TuneMeta {
        metric,
        higher_is_better: higher,
        test: a.test.clone(),
        slos: slos(&a.slos, &plan)?,
        tie: tie(a.tie.as_deref().unwrap_or("5%"))?,
        alpha: 0.05,
        candidates: plan.targets.iter().map(|t| t.label.clone()).collect(),
    });
    Ok(plan)
}

/// `--resume` continues the race as recorded: the flags that define a race (its candidates,
/// workload, objective, SLOs, rounds, tie and sizes) would change it after rounds were judged by
/// it, so they are refused rather than ignored or applied.
pub fn refuse_changes(a: &TuneArgs) -> anyhow::Result<()> {
    let given = [
        ("--axes", a.axes),
        ("--workload", !a.workloads.is_empty()),
        ("--metric", a.metric.is_some()),
        ("--test", a.test.is_some()),
        ("--slo", !a.slos.is_empty()),
        ("--max-repeat", a.max_repeat.is_some()),
        ("--tie", a.tie.is_some()),
        ("--force", a.force),
        ("--runtime", a.block.runtime.is_some()),
        ("--file-size", a.block.file_size.is_some()),
        ("--seed", a.block.seed.is_some()),
        ("--interval", a.block.interval.is_some()),
        ("--until-steady", a.block.until_steady.is_some()),
        ("--profile", a.block.profile.is_some()),
        ("--size", a.backing.size.is_some()),
        ("--device", a.backing.device.is_some()),
        ("--wipe", a.backing.wipe),
    ];
    let flags: Vec<&str> = given.iter().filter(|(_, g)| *g).map(|(f, _)| *f).collect();
    if flags.is_empty() {
        return Ok(());
    }
    anyhow::bail!(
        "--resume continues the race as it was recorded (its candidates, workload, objective, SLOs, rounds and sizes judged the rounds so far): {} cannot change it. Drop {}, or start a new tune with them (--out NEW)",
        flags.join(", "),
        if flags.len() == 1 { "it" } else { "them" }
    )
}
