//! The verdict every comparison ends with: per workload, the best target, by how much it beats
//! the next one (with the ratio's 95% interval) and which targets it cannot be told from. A
//! target's score in a workload is, per repeat, the geometric mean of its headline figures (IOPS
//! for block jobs, files/s, seeks/s, else MB/s; all higher-is-better) over the tests every
//! ranked target ran; the repeats are its samples, summarised and compared (Welch on the logs)
//! as the statistics rows are. Targets that did less work than asked are left out and named.
//! A tune has its own answer (`views/tune.rs`), so a tune's report has no verdict. Pure.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::report::claims::fmt;
use crate::report::records::targets;
use crate::report::stats::{ratio, summarize, welch};
use crate::report::view::{Body, Given, Place, Section, Shown, Study, WorkloadView};
use crate::store::{Outcome, Record};

pub(crate) struct Verdict;

impl WorkloadView for Verdict {
    fn claims(&self, _workload: &str) -> bool {
        false
    }

    fn place(&self) -> Place {
        Place::Answer
    }

    fn sections(&self, _mine: &[&Record], study: &Study) -> Vec<Section> {
        if study.plan.tune.is_some() {
            return Vec::new();
        }
        let lines: Vec<String> = groups(study.ranked)
            .iter()
            .map(|g| line(g, study.ranked))
            .collect();
        if lines.is_empty() {
            return Vec::new();
        }
        vec![Section {
            title: "Verdict".into(),
            shown: Shown::BRIEF,
            body: Body::Lines(lines),
        }]
    }
}

/// One target's score in a workload.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Score {
    pub(crate) target: String,
    /// Geometric mean over repeats of the per-repeat score.
    pub(crate) score: f64,
    pub(crate) n: usize,
    #[serde(skip)]
    samples: Vec<f64>,
}

/// A workload's verdict.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Group {
    pub(crate) workload: String,
    /// The headline metrics its score is made of.
    pub(crate) metrics: Vec<String>,
    pub(crate) tests: usize,
    pub(crate) best: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) next: Option<String>,
    /// best / next, with its 95% interval and Welch's p.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) ratio: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) ci_lo: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) ci_hi: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) p: Option<f64>,
    /// Targets whose difference from the best is not significant (p >= 0.05), with their p.
    pub(crate) not_significant: Vec<(String, f64)>,
    /// Targets with one repeat on a side: no test could be made.
    pub(crate) untested: Vec<String>,
    /// Targets left out: they did less work than asked.
    pub(crate) left_out: Vec<String>,
    /// Every ranked target, best first.
    pub(crate) scores: Vec<Score>,
}

/// The headline metric of a test: the first of the catalogue's headlines its records carry.
fn headline(recs: &[&Record]) -> Option<&'static str> {
    crate::metrics::catalog::HEADLINES
        .iter()
        .copied()
        .find(|m| recs.iter().any(|r| r.metrics.contains_key(*m)))
}

/// The workloads of the records (measurements, not the audit's verdicts), in order of
/// appearance.
fn workloads(records: &[Record]) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for r in records {
        let w = r.workload_name();
        if !out.contains(&w) && w != "smoke" && w != "idle" {
            out.push(w);
        }
    }
    out
}

/// The verdict of every workload with two targets or more to rank.
pub(crate) fn groups(records: &[Record]) -> Vec<Group> {
    workloads(records)
        .into_iter()
        .filter_map(|w| group(records, w))
        .collect()
}

/// The per-repeat values of each target in a workload: (target, repeat) -> test -> values.
type Cells<'a> = BTreeMap<(&'a str, u32), BTreeMap<&'a str, Vec<f64>>>;

/// The tests every target ran, each with its headline metric.
fn common_tests<'a>(ok: &[&'a Record], names: &[&str]) -> Vec<(&'a str, &'static str)> {
    let mut tests: Vec<(&str, &'static str)> = Vec::new();
    for r in ok {
        if tests.iter().any(|t| t.0 == r.test) {
            continue;
        }
        let of_test: Vec<&Record> = ok.iter().copied().filter(|x| x.test == r.test).collect();
        let Some(m) = headline(&of_test) else {
            continue;
        };
        let everyone = names.iter().all(|t| {
            of_test
                .iter()
                .any(|x| x.target == *t && x.metrics.get(m).is_some_and(|v| *v > 0.0))
        });
        if everyone {
            tests.push((r.test.as_str(), m));
        }
    }
    tests
}

fn group(records: &[Record], w: &str) -> Option<Group> {
    let ok: Vec<&Record> = records
        .iter()
        .filter(|r| r.workload_name() == w && r.outcome == Outcome::Ok)
        .collect();
    let left_out: Vec<String> = targets(
        ok.iter()
            .filter(|r| r.less_work().is_some())
            .map(|r| r.target.as_str()),
    )
    .into_iter()
    .map(String::from)
    .collect();
    let ok: Vec<&Record> = ok
        .into_iter()
        .filter(|r| !left_out.contains(&r.target))
        .collect();
    let names = targets(ok.iter().map(|r| r.target.as_str()));
    if names.len() == 1 && !left_out.is_empty() {
        return Some(alone(w, names[0], left_out));
    }
    if names.len() < 2 {
        return None;
    }
    let tests = common_tests(&ok, &names);
    if tests.is_empty() {
        return None;
    }
    let mut cells: Cells = BTreeMap::new();
    for r in &ok {
        let Some((_, m)) = tests.iter().find(|t| t.0 == r.test) else {
            continue;
        };
        if let Some(v) = r.metrics.get(*m).filter(|v| **v > 0.0 && v.is_finite()) {
            cells
                .entry((r.target.as_str(), r.repeat))
                .or_default()
                .entry(r.test.as_str())
                .or_default()
                .push(*v);
        }
    }
    let mut scores: Vec<Score> = names
        .iter()
        .map(|t| {
            let samples: Vec<f64> = cells
                .iter()
                .filter(|((target, _), by_test)| target == t && by_test.len() == tests.len())
                .map(|(_, by_test)| {
                    let logs: Vec<f64> = by_test
                        .values()
                        .map(|vs| vs.iter().map(|v| v.ln()).sum::<f64>() / vs.len() as f64)
                        .collect();
                    (logs.iter().sum::<f64>() / logs.len() as f64).exp()
                })
                .collect();
            let s = summarize(&samples);
            Score {
                target: t.to_string(),
                score: s.mean,
                n: samples.len(),
                samples,
            }
        })
        .filter(|s| s.n > 0)
        .collect();
    if scores.len() < 2 {
        return None;
    }
    scores.sort_by(|a, b| b.score.total_cmp(&a.score));
    let best = summarize(&scores[0].samples);
    let mut g = alone(w, &scores[0].target, left_out);
    g.metrics = tests.iter().map(|t| t.1.to_string()).collect();
    g.metrics.sort();
    g.metrics.dedup();
    g.tests = tests.len();
    g.next = Some(scores[1].target.clone());
    let (r, ci) = ratio(&best, &summarize(&scores[1].samples));
    g.ratio = Some(r);
    if let Some((lo, hi)) = ci {
        (g.ci_lo, g.ci_hi) = (Some(lo), Some(hi));
    }
    for (i, s) in scores.iter().enumerate().skip(1) {
        match welch(&best, &summarize(&s.samples)) {
            Some((_, _, p)) => {
                if i == 1 {
                    g.p = Some(p);
                }
                if p >= 0.05 {
                    g.not_significant.push((s.target.clone(), p));
                }
            }
            None => g.untested.push(s.target.clone()),
        }
    }
    g.scores = scores;
    Some(g)
}

/// One target did all its work and the others did not: nothing to rank.
fn alone(w: &str, target: &str, left_out: Vec<String>) -> Group {
    Group {
        workload: w.to_string(),
        metrics: Vec::new(),
        tests: 0,
        best: target.to_string(),
        next: None,
        ratio: None,
        ci_lo: None,
        ci_hi: None,
        p: None,
        not_significant: Vec::new(),
        untested: Vec::new(),
        left_out,
        scores: Vec::new(),
    }
}

/// The group in one sentence.
/// `ext4 (device: loop1 96% busy)`, the target with its limiter in this workload (the
/// kind alone with `brief`), or the name alone for records that carry none.
fn limited(records: &[Record], target: &str, workload: &str, brief: bool) -> String {
    match crate::report::limits::of_target(records, target, workload) {
        Some(h) if brief => format!("{target} ({})", h.kind),
        Some(h) => format!("{target} ({})", h.short()),
        None => target.to_string(),
    }
}

fn line(g: &Group, records: &[Record]) -> String {
    if g.next.is_none() {
        return format!(
            "{}: only {} did all the work asked, nothing to rank it against; left out, having done less work than asked: {}",
            g.workload,
            g.best,
            g.left_out.join(", ")
        );
    }
    let what = format!(
        "{} ({} over {} test{})",
        g.workload,
        g.metrics.join(", "),
        g.tests,
        if g.tests == 1 { "" } else { "s" }
    );
    let next = g.next.as_deref().map_or_else(
        || "-".to_string(),
        |n| limited(records, n, &g.workload, true),
    );
    let by = match (g.ratio, g.ci_lo, g.ci_hi) {
        (Some(r), Some(lo), Some(hi)) => {
            format!(
                "{}x the next, {next} (95% interval {}-{})",
                fmt(r),
                fmt(lo),
                fmt(hi)
            )
        }
        (Some(r), ..) => format!("{}x the next, {next}", fmt(r)),
        _ => String::new(),
    };
    let mut s = format!(
        "{what}: best {}, {by}",
        limited(records, &g.best, &g.workload, false)
    );
    if !g.not_significant.is_empty() {
        let list: Vec<String> = g
            .not_significant
            .iter()
            .map(|(t, p)| format!("{t} (p={p:.2})"))
            .collect();
        s.push_str(&format!(
            "; not significantly different from {}",
            list.join(", ")
        ));
    } else if g.p.is_some() {
        s.push_str("; every difference is significant (p < 0.05)");
    }
    if !g.untested.is_empty() {
        s.push_str(&format!(
            "; one repeat for {}: no interval or test (--repeat 3)",
            g.untested.join(", ")
        ));
    }
    if !g.left_out.is_empty() {
        s.push_str(&format!(
            "; left out, having done less work than asked: {}",
            g.left_out.join(", ")
        ));
    }
    s
}

/// The verdict as JSON: one object per workload (empty with fewer than two targets), or None
/// for a tune (its `tune` object is the answer).
pub(crate) fn json(records: &[Record], given: &Given) -> Option<serde_json::Value> {
    if given.tune.is_some() {
        return None;
    }
    serde_json::to_value(groups(records)).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(target: &str, test: &str, repeat: u32, iops: f64) -> Record {
        serde_json::from_value(serde_json::json!({
            "schema": 1, "target": target, "fs": "x", "workload": "cdm", "test": test,
            "repeat": repeat, "started_at": "", "duration_s": 1.0, "outcome": "ok",
            "metrics": { "iops": iops }
        }))
        .unwrap()
    }

    fn study(a: &[f64], b: &[f64], c: &[f64]) -> Vec<Record> {
        let mut out = Vec::new();
        for (t, xs) in [("a", a), ("b", b), ("c", c)] {
            for (i, x) in xs.iter().enumerate() {
                out.push(rec(t, "r", i as u32, *x));
                out.push(rec(t, "w", i as u32, *x * 2.0));
            }
        }
        out
    }

    #[test]
    fn the_best_the_margin_and_what_cannot_be_told_apart() {
        let rs = study(
            &[100.0, 101.0, 99.0],
            &[200.0, 204.0, 198.0],
            &[199.0, 203.0, 197.0],
        );
        let g = &groups(&rs)[0];
        assert_eq!(g.best, "b");
        assert_eq!(g.next.as_deref(), Some("c"));
        assert_eq!(g.tests, 2);
        assert!(g.not_significant.iter().any(|(t, _)| t == "c"), "{g:?}");
        assert!(!g.not_significant.iter().any(|(t, _)| t == "a"));
        let l = line(g, &[]);
        assert!(l.starts_with("cdm (iops over 2 tests): best b, 1.0"), "{l}");
        assert!(l.contains("x the next, c (95% interval "), "{l}");
        assert!(l.contains("not significantly different from c"), "{l}");
    }

    #[test]
    fn one_repeat_has_no_test_and_less_work_is_left_out() {
        let rs = study(&[100.0], &[200.0], &[150.0]);
        let g = &groups(&rs)[0];
        assert_eq!(g.best, "b");
        assert!((g.ratio.unwrap() - 200.0 / 150.0).abs() < 1e-9);
        assert_eq!(g.untested, vec!["c".to_string(), "a".to_string()]);
        let mut rs = study(&[100.0, 101.0], &[200.0, 201.0], &[150.0, 151.0]);
        rs[4]
            .notes
            .push("exhausted: ext4 ran out of inodes after 9 files".into());
        let g = &groups(&rs)[0];
        assert_eq!(g.left_out, vec!["b".to_string()]);
        assert_eq!(g.best, "c");
        assert!(line(g, &[]).contains("left out, having done less work than asked: b"));
        assert!(groups(&study(&[1.0], &[], &[])).is_empty());
    }
}
