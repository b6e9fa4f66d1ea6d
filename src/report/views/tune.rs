//! A tune's answer: the ranking of its candidates (objective with its 95% interval, ratio to
//! the winner, trials, the round each was dropped in and why), one verdict line with the winning
//! spec ready to paste, and where objectives pull apart the Pareto front of objective, p99
//! latency and space overhead (drawn in the HTML as objective against p99). The race is
//! replayed from the records (`report/tune.rs`), so the report says what the run decided.
//! Claims no records. Pure.

use crate::metrics::name as metric;
use crate::report::claims::fmt;
use crate::report::stats::{ratio, summarize};
use crate::report::summary::fmt_value;
use crate::report::svg;
use crate::report::tune::{race, Race, Standing, TuneMeta};
use crate::report::view::{Body, Charts, Given, Grid, Place, Section, Shown, Study, WorkloadView};
use crate::store::Record;

pub(crate) struct Tune;

impl WorkloadView for Tune {
    fn claims(&self, _workload: &str) -> bool {
        false
    }

    fn place(&self) -> Place {
        Place::Answer
    }

    fn sections(&self, _mine: &[&Record], study: &Study) -> Vec<Section> {
        let Some(meta) = &study.plan.tune else {
            return Vec::new();
        };
        let r = replay(meta, study.records);
        let mut out = vec![Section {
            title: format!(
                "Tune: {} ({} is better), {} round{}, {} trials",
                meta.metric,
                if meta.higher_is_better {
                    "higher"
                } else {
                    "lower"
                },
                r.rounds,
                if r.rounds == 1 { "" } else { "s" },
                r.trials
            ),
            shown: Shown::BRIEF,
            body: Body::Table(ranking(meta, &r)),
        }];
        if let Some(chart) = scatter(meta, &r) {
            out.push(chart);
        }
        out.push(Section {
            title: "Tune verdict".into(),
            shown: Shown::BRIEF,
            body: Body::Lines(verdict(meta, &r, study.plan)),
        });
        out
    }
}

/// The race over every round the records hold.
fn replay(meta: &TuneMeta, records: &[Record]) -> Race {
    let rounds = records
        .iter()
        .filter(|r| meta.candidates.contains(&r.target))
        .map(|r| r.repeat + 1)
        .max()
        .unwrap_or(0);
    race(meta, records, rounds)
}

/// Why the race ended, in words ("running" when the records end mid-race).
fn ended(r: &Race) -> String {
    if r.ended == "running" {
        format!(
            "undecided after {} round{}: the rounds (--max-repeat) or the budget ran out first",
            r.rounds,
            if r.rounds == 1 { "" } else { "s" }
        )
    } else {
        r.ended.clone()
    }
}

/// Where a candidate ended: the winner, tied with it, dropped (when, why), or still running.
fn outcome(r: &Race, c: &Standing) -> String {
    if r.winner.as_deref() == Some(c.label.as_str()) {
        return "winner".into();
    }
    if let (Some(round), Some(why)) = (c.dropped_round, &c.dropped_why) {
        return format!("dropped in round {round}: {why}");
    }
    if r.tied.contains(&c.label) && r.ended != "running" {
        return "tied with the winner".into();
    }
    "in the race".into()
}

/// The ranking, best first: survivors by their mean, then the dropped by the round they left.
fn ranking(meta: &TuneMeta, r: &Race) -> Grid {
    let mut order: Vec<&Standing> = r.candidates.iter().collect();
    let sign = if meta.higher_is_better { -1.0 } else { 1.0 };
    order.sort_by(|a, b| {
        let key = |s: &Standing| {
            (
                std::cmp::Reverse(s.dropped_round.unwrap_or(u32::MAX)),
                s.mean.map_or(f64::MAX, |m| sign * m),
            )
        };
        let (ka, kb) = (key(a), key(b));
        ka.0.cmp(&kb.0).then(ka.1.total_cmp(&kb.1))
    });
    let m = &meta.metric;
    let pareto = r.candidates.iter().any(|c| c.lat_p99_ns.is_some());
    let rows = order
        .iter()
        .map(|c| {
            let value = match (c.mean, c.ci_lo, c.ci_hi) {
                (Some(v), Some(lo), Some(hi)) => {
                    format!(
                        "{} ({} .. {})",
                        fmt_value(m, v),
                        fmt_value(m, lo),
                        fmt_value(m, hi)
                    )
                }
                (Some(v), ..) => fmt_value(m, v),
                _ => "-".into(),
            };
            let ratio = match (c.ratio, c.ratio_lo, c.ratio_hi) {
                (Some(x), Some(lo), Some(hi)) => format!("{} ({}-{})", fmt(x), fmt(lo), fmt(hi)),
                (Some(x), ..) => fmt(x),
                _ => "-".into(),
            };
            let mut row = vec![
                c.label.clone(),
                value,
                ratio,
                c.trials_spent().to_string(),
                outcome(r, c),
            ];
            if pareto {
                row.push(if c.pareto { "yes" } else { "" }.into());
            }
            row
        })
        .collect();
    let mut header: Vec<String> = [
        "candidate",
        &format!("{m} (95% CI)"),
        "vs winner",
        "trials",
        "outcome",
    ]
    .map(String::from)
    .to_vec();
    if pareto {
        header.push("Pareto".into());
    }
    Grid {
        header,
        rows,
        note: Some(format!(
            "Each round every surviving candidate runs once on a fresh target; after it the significantly worse (a t-test on the logs with the variance pooled over the round's survivors, Holm's correction over the round, alpha {}) and those whose interval misses an SLO are dropped. The race ended: {}.",
            meta.alpha,
            ended(r)
        )),
        right: vec![1, 2, 3],
        spare: Vec::new(),
    }
}

/// The answer in a few lines: the best, by how much over the default, what it is tied with,
/// the spec to paste, and the Pareto front when objectives pull apart.
fn verdict(meta: &TuneMeta, r: &Race, given: &Given) -> Vec<String> {
    let Some(w) = &r.winner else {
        return vec![format!("no winner: {}", ended(r))];
    };
    let undecided = r.ended == "running" && !r.tied.is_empty();
    let mut best = if undecided {
        format!("leading (not decided: the rounds or the budget ran out): {w}")
    } else {
        format!("best: {w}")
    };
    best.push_str(&against(meta, r, w, given));
    if !r.tied.is_empty() {
        let p = r.tied_p.map(|p| format!(" (p={p:.2})")).unwrap_or_default();
        let within = r
            .tied_within
            .map(|t| format!(", within {:.0}% at most", t * 100.0))
            .unwrap_or_default();
        best.push_str(&format!("; tied with {}{p}{within}", r.tied.join(", ")));
    }
    let mut lines = vec![best];
    let spec = given
        .specs
        .iter()
        .find(|(label, _)| label == w)
        .map_or(w.as_str(), |(_, spec)| spec.as_str());
    let workloads: Vec<String> = given
        .workloads
        .iter()
        .map(|x| format!(" --workload '{x}'"))
        .collect();
    lines.push(format!(
        "the winner as a target: '{spec}' (fsbench compare '{spec}'{})",
        workloads.concat()
    ));
    let front: Vec<&str> = r
        .candidates
        .iter()
        .filter(|c| c.pareto)
        .map(|c| c.label.as_str())
        .collect();
    if front.len() > 1 {
        lines.push(format!(
            "objectives pull apart: the Pareto front of objective, p99 latency and space overhead is {} (none of them beats another on all three)",
            front.join(", ")
        ));
    }
    lines
}

/// How much the winner beats the filesystem's defaults (a candidate with no options), else the
/// next best candidate: " - 1.9x (1.6-2.2) the default (zfs)".
fn against(meta: &TuneMeta, r: &Race, w: &str, given: &Given) -> String {
    let spec = |label: &str| {
        given
            .specs
            .iter()
            .find(|(l, _)| l == label)
            .map_or(label.to_string(), |(_, s)| s.clone())
    };
    let plain = |c: &&Standing| !spec(&c.label).contains(':') && !c.trials.is_empty();
    let Some(win) = r.candidates.iter().find(|c| c.label == w) else {
        return String::new();
    };
    if plain(&win) {
        return " (the filesystem's defaults)".into();
    }
    let (other, name) = match r.candidates.iter().find(plain) {
        Some(d) => (d, "the default"),
        None => {
            let next = r
                .candidates
                .iter()
                .filter(|c| c.label != w && !c.trials.is_empty())
                .max_by(|a, b| {
                    let (x, y) = (a.mean.unwrap_or(0.0), b.mean.unwrap_or(0.0));
                    let ord = x.total_cmp(&y);
                    if meta.higher_is_better {
                        ord
                    } else {
                        ord.reverse()
                    }
                });
            match next {
                Some(n) => (n, "the next"),
                None => return String::new(),
            }
        }
    };
    let (x, ci) = ratio(&summarize(&win.trials), &summarize(&other.trials));
    let ci = ci
        .map(|(lo, hi)| format!(" ({}-{})", fmt(lo), fmt(hi)))
        .unwrap_or_default();
    format!(" - {}x{ci} {name} ({})", fmt(x), other.label)
}

/// Objective against p99 latency (HTML), when the candidates' records carry p99.
fn scatter(meta: &TuneMeta, r: &Race) -> Option<Section> {
    let dots: Vec<svg::Dot> = r
        .candidates
        .iter()
        .filter_map(|c| {
            Some(svg::Dot {
                label: c.label.clone(),
                x: c.mean?,
                y: c.lat_p99_ns?,
                front: c.pareto,
            })
        })
        .collect();
    (dots.len() >= 2).then(|| Section {
        title: String::new(),
        shown: Shown::HTML,
        body: Body::Charts(Charts {
            svgs: vec![svg::scatter(
                &format!(
                    "{} against p99 latency (filled: the Pareto front)",
                    meta.metric
                ),
                &meta.metric,
                &dots,
            )],
            row: false,
            lead: true,
        }),
    })
}

/// The `tune` object of the JSON report: the winner, the tied, and every candidate's standing.
pub(crate) fn json(records: &[Record], given: &Given) -> Option<serde_json::Value> {
    let meta = given.tune.as_ref()?;
    let r = replay(meta, records);
    let candidates: Vec<serde_json::Value> = r
        .candidates
        .iter()
        .map(|c| {
            serde_json::json!({
                "label": c.label, "mean": c.mean, "ci_lo": c.ci_lo, "ci_hi": c.ci_hi,
                "ratio": c.ratio, "trials": c.trials_spent(),
                "dropped_round": c.dropped_round, "dropped_why": c.dropped_why,
                metric::LAT_P99_NS: c.lat_p99_ns, metric::SPACE_OVERHEAD_PCT: c.space_overhead_pct,
                "pareto": c.pareto,
            })
        })
        .collect();
    Some(serde_json::json!({
        "metric": meta.metric, "higher_is_better": meta.higher_is_better,
        "winner": r.winner, "tied": r.tied, "tied_within": r.tied_within, "tied_p": r.tied_p,
        "ended": ended(&r), "rounds": r.rounds, "trials": r.trials,
        "vs_default": r.vs_default.map(|(x, lo, hi)| serde_json::json!({"ratio": x, "ci_lo": lo, "ci_hi": hi})),
        "candidates": candidates,
    }))
}
