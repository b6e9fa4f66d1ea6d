//! `fsbench report`: every metric of every test, per target, over repeats: n, mean, standard
//! deviation, 95% confidence interval, the ratio to the baseline target with its interval,
//! Welch's t-test against the baseline (`*` when p < 0.05), and flags (noisy: CV above 10%;
//! few: fewer than 3 repeats). Pure: reads records, renders text.

use crate::metrics::name as metric;
use std::collections::BTreeMap;

use comfy_table::{presets::UTF8_FULL_CONDENSED, Cell, CellAlignment, Table};
use serde::Serialize;

use super::records::{targets, test_name};
use super::stats::{self, Summary};
use crate::metrics::catalog::Unit;
use crate::plan::units::{format_count, format_ns_as};
use crate::store::{Outcome, Record};
use crate::workload::catalog;

/// The metrics shown in the terminal and Markdown views (the catalog's key metrics); CSV and JSON
/// carry every metric.
pub(crate) fn is_key(metric: &str) -> bool {
    catalog::key_metrics().any(|k| k == metric)
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct Row {
    pub(crate) workload: String,
    pub(crate) test: String,
    pub(crate) metric: String,
    pub(crate) target: String,
    pub(crate) fs: String,
    #[serde(flatten)]
    pub(crate) summary: Summary,
    pub(crate) ratio: Option<f64>,
    pub(crate) ratio_ci: Option<(f64, f64)>,
    pub(crate) p_value: Option<f64>,
    pub(crate) significant: bool,
    pub(crate) noisy: bool,
    pub(crate) few: bool,
    /// A record behind it did less work than asked (ran out of inodes, stopped early): not
    /// comparable with a target that did all of it.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub(crate) less_work: bool,
}

/// A report that cannot be made from the records (e.g. a baseline that is not a target).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub(crate) struct ReportError(pub(crate) String);

/// The baseline: the one named, else the first target in the records.
pub(crate) fn baseline_of(records: &[Record], named: Option<&str>) -> Result<String, ReportError> {
    let labels = targets(records.iter().map(|r| r.target.as_str()));
    match named {
        Some(b) if labels.contains(&b) => Ok(b.to_string()),
        Some(b) => Err(ReportError(format!(
            "baseline '{b}' is not a target of this study: targets are {}",
            labels.join(", ")
        ))),
        None => labels
            .first()
            .map(|s| s.to_string())
            .ok_or_else(|| ReportError("the study has no results yet".into())),
    }
}

pub(crate) fn rows(records: &[Record], baseline: &str) -> Vec<Row> {
    // (workload, test) in order of appearance; targets in order of appearance.
    let ok: Vec<&Record> = records
        .iter()
        .filter(|r| r.outcome == Outcome::Ok)
        .collect();
    // Each target with the filesystem of its first record.
    let targets: Vec<(&str, &str)> = targets(ok.iter().map(|r| r.target.as_str()))
        .into_iter()
        .map(|t| (t, ok.iter().find(|r| r.target == t).map_or("", |r| &r.fs)))
        .collect();
    let mut tests: Vec<(String, String)> = Vec::new();
    // A workload that did less than asked in one phase did less in the phases after it too
    // (files read back what the write phase managed): every test of it is marked.
    let less: Vec<(&str, &str)> = ok
        .iter()
        .filter(|r| r.less_work().is_some())
        .map(|r| (r.workload.as_str(), r.target.as_str()))
        .collect();
    let mut values: BTreeMap<(String, String, String, String), Vec<f64>> = BTreeMap::new();
    for r in &ok {
        let t = (r.workload.clone(), r.test.clone());
        if !tests.contains(&t) {
            tests.push(t);
        }
        for (m, v) in &r.metrics {
            if v.is_finite() {
                values
                    .entry((
                        r.workload.clone(),
                        r.test.clone(),
                        m.clone(),
                        r.target.clone(),
                    ))
                    .or_default()
                    .push(*v);
            }
        }
    }
    let mut out = Vec::new();
    for (w, t) in &tests {
        let metrics: Vec<String> = {
            let mut ms: Vec<String> = values
                .keys()
                .filter(|k| &k.0 == w && &k.1 == t)
                .map(|k| k.2.clone())
                .collect();
            ms.dedup();
            ms
        };
        for m in metrics {
            let base = values
                .get(&(w.clone(), t.clone(), m.clone(), baseline.to_string()))
                .map(|v| stats::summarize(v));
            for (label, fs) in &targets {
                let Some(v) = values.get(&(w.clone(), t.clone(), m.clone(), label.to_string()))
                else {
                    continue;
                };
                let s = stats::summarize(v);
                let (ratio, ratio_ci, p) = match &base {
                    Some(b) if *label != baseline && b.mean != 0.0 => {
                        let (r, ci) = stats::ratio(&s, b);
                        (Some(r), ci, stats::welch(&s, b).map(|x| x.2))
                    }
                    _ => (None, None, None),
                };
                out.push(Row {
                    workload: w.clone(),
                    test: t.clone(),
                    metric: m.clone(),
                    target: label.to_string(),
                    fs: fs.to_string(),
                    summary: s,
                    ratio,
                    ratio_ci,
                    p_value: p,
                    significant: p.is_some_and(|p| p < 0.05),
                    noisy: s.cv > stats::NOISY_CV,
                    few: s.n < 3,
                    less_work: less.contains(&(w.as_str(), *label)),
                });
            }
        }
    }
    out
}

/// A value in the unit its metric name carries.
pub(crate) fn fmt_value(metric: &str, v: f64) -> String {
    fmt_value_as(metric, v, v)
}

/// A value in the unit its metric carries, scaled as `like` would be (an interval's bounds in
/// the unit of its centre).
pub(crate) fn fmt_value_as(metric: &str, v: f64, like: f64) -> String {
    if let Some(d) = catalog::find(metric) {
        return match d.unit {
            Unit::Nanoseconds => format_ns_as(v, like),
            Unit::BytesPerSec => format!("{:.1} MB/s", v / 1e6),
            Unit::KibPerSec => format!("{v:.0} KiB/s"),
            Unit::OpsPerSec => format_count(v),
            Unit::Percent => format!("{v:.1}%"),
            _ if v.abs() >= 1000.0 => format_count(v),
            _ => format!("{v:.3}"),
        };
    }
    if metric.ends_with("_ns") {
        format_ns_as(v, like)
    } else if metric.ends_with(metric::BYTES_PER_SEC) {
        format!("{:.1} MB/s", v / 1e6)
    } else if metric.ends_with("iops") || metric.ends_with(metric::FILES_PER_SEC) {
        format_count(v)
    } else if metric.ends_with("_pct") {
        format!("{v:.1}%")
    } else if v.abs() >= 1000.0 {
        format_count(v)
    } else {
        format!("{v:.3}")
    }
}

fn flags(r: &Row) -> String {
    let mut f = Vec::new();
    if r.significant {
        f.push("*".to_string());
    }
    if r.noisy {
        f.push("noisy".to_string());
    }
    if r.few {
        f.push(format!("n={}", r.summary.n));
    }
    if r.less_work {
        f.push("! less work".to_string());
    }
    f.join(" ")
}

fn cells(r: &Row) -> Vec<String> {
    let m = &r.metric;
    let ci = if r.summary.n >= 2 {
        format!(
            "{} .. {}",
            fmt_value_as(m, r.summary.ci_lo, r.summary.mean),
            fmt_value_as(m, r.summary.ci_hi, r.summary.mean)
        )
    } else {
        "-".into()
    };
    let ratio = match (r.ratio, r.ratio_ci) {
        (Some(x), Some((lo, hi))) => format!("{x:.3} ({lo:.3}..{hi:.3})"),
        (Some(x), None) => format!("{x:.3}"),
        _ => "baseline".into(),
    };
    vec![
        test_name(&r.workload, &r.test),
        m.clone(),
        r.target.clone(),
        r.summary.n.to_string(),
        fmt_value(m, r.summary.mean),
        ci,
        format!("{:.1}%", r.summary.cv * 100.0),
        ratio,
        r.p_value.map(|p| format!("{p:.3}")).unwrap_or_default(),
        flags(r),
    ]
}

const HEADER: [&str; 10] = [
    "test", "metric", "target", "n", "mean", "95% CI", "CV", "ratio", "p", "flags",
];

fn key(rows: &[Row]) -> Vec<&Row> {
    rows.iter().filter(|r| is_key(&r.metric)).collect()
}

pub(crate) fn term(rows: &[Row], baseline: &str) -> String {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED);
    t.set_header(HEADER.to_vec());
    for r in key(rows) {
        let c = cells(r);
        t.add_row(
            c.into_iter()
                .enumerate()
                .map(|(i, x)| {
                    let cell = Cell::new(x);
                    if (3..9).contains(&i) {
                        cell.set_alignment(CellAlignment::Right)
                    } else {
                        cell
                    }
                })
                .collect::<Vec<_>>(),
        );
    }
    format!("{t}\n{}\n", legend(baseline))
}

fn legend(baseline: &str) -> String {
    format!("mean: the geometric mean of the repeats where all are positive, and its 95% interval computed on the log scale (so never below zero), else the arithmetic mean; ratio: mean / mean of the baseline '{baseline}' with its 95% interval from the same logs (for latencies lower is better); p: Welch's t-test against the baseline on the logs; * p < 0.05; noisy: CV above 10%; n=K: fewer than 3 repeats.")
}

pub(crate) fn markdown(rows: &[Row], baseline: &str) -> String {
    let mut out = format!(
        "| {} |\n|{}\n",
        HEADER.join(" | "),
        " --- |".repeat(HEADER.len())
    );
    for r in key(rows) {
        out.push_str(&format!("| {} |\n", cells(r).join(" | ")));
    }
    out.push('\n');
    out.push_str(&legend(baseline));
    out.push('\n');
    out
}

pub(crate) fn csv(rows: &[Row]) -> String {
    let mut out = String::from(
        "workload,test,metric,target,fs,n,mean,sd,ci_lo,ci_hi,cv,ratio,ratio_lo,ratio_hi,p_value,significant,noisy\n",
    );
    let q = |s: &str| {
        if s.contains([',', '"', '\n']) {
            format!("\"{}\"", s.replace('"', "\"\""))
        } else {
            s.to_string()
        }
    };
    let o = |v: Option<f64>| v.map(|x| format!("{x}")).unwrap_or_default();
    for r in rows {
        let s = &r.summary;
        out.push_str(&format!(
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
            q(&r.workload),
            q(&r.test),
            q(&r.metric),
            q(&r.target),
            q(&r.fs),
            s.n,
            s.mean,
            s.sd,
            s.ci_lo,
            s.ci_hi,
            s.cv,
            o(r.ratio),
            o(r.ratio_ci.map(|x| x.0)),
            o(r.ratio_ci.map(|x| x.1)),
            o(r.p_value),
            r.significant,
            r.noisy
        ));
    }
    out
}
