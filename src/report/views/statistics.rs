//! The statistics of every key metric (`report/summary.rs` computes the rows): in the full
//! terminal report and report.md as a table with its legend, and in HTML as one small chart per
//! test, each target a bar with its 95% interval, in the test's unit (as CrystalDiskMark and seed
//! 002 show them: sequential block tests in MB/s, random ones in IOPS, the files workload in
//! files/s). Claims no records. Pure.

use crate::metrics::name as metric;
use crate::report::records::{targets, test_name};
use crate::report::summary::{self, fmt_value, Row};
use crate::report::svg;
use crate::report::view::{Body, Charts, Section, Shown, Study, WorkloadView};
use crate::store::Record;

pub(crate) struct Statistics;

impl WorkloadView for Statistics {
    fn claims(&self, _workload: &str) -> bool {
        false
    }

    fn sections(&self, _mine: &[&Record], study: &Study) -> Vec<Section> {
        let mut out = Vec::new();
        let charts = bar_charts(study.rows, study.records);
        if !charts.is_empty() {
            out.push(Section {
                title: "Per test (centre and 95% interval over repeats)".into(),
                shown: Shown::HTML,
                body: Body::Charts(Charts {
                    svgs: charts,
                    row: true,
                    lead: true,
                }),
            });
        }
        // A legend rather than a note, and a heading in Markdown only: a layout of its own.
        out.push(Section {
            title: "Every key metric".into(),
            shown: Shown {
                short: false,
                full: true,
                md: true,
                html: false,
            },
            body: Body::Own {
                term: summary::term(study.rows, study.baseline),
                md: format!(
                    "## Every key metric\n\n{}",
                    summary::markdown(study.rows, study.baseline)
                ),
                html: String::new(),
            },
        });
        out
    }
}

/// How a test's chart shows it: (metric, axis unit).
fn shown_as(
    rows: &[Row],
    records: &[Record],
    w: &str,
    t: &str,
) -> Option<(&'static str, &'static str)> {
    let has = |m: &str| {
        rows.iter()
            .any(|r| r.workload == w && r.test == t && r.metric == m)
    };
    if has(metric::FILES_PER_SEC) {
        return Some((metric::FILES_PER_SEC, "files/s"));
    }
    if has("iops") {
        let rw = records
            .iter()
            .find(|r| r.workload == w && r.test == t)
            .and_then(|r| r.config.as_ref())
            .and_then(|c| c.get("rw"))
            .and_then(|v| v.as_str())
            .map(str::to_string);
        let random = match rw {
            Some(rw) => rw.starts_with("rand"),
            None => !t.to_ascii_uppercase().starts_with("SEQ"),
        };
        return Some(if random || !has(metric::BYTES_PER_SEC) {
            ("iops", "IOPS")
        } else {
            (metric::BYTES_PER_SEC, "MB/s")
        });
    }
    has(metric::BYTES_PER_SEC).then_some((metric::BYTES_PER_SEC, "MB/s"))
}

/// One small chart per test, each target a bar (its colour by the target's place).
fn bar_charts(rows: &[Row], records: &[Record]) -> Vec<String> {
    let targets = targets(rows.iter().map(|r| r.target.as_str()));
    let mut tests: Vec<(&str, &str)> = Vec::new();
    for r in rows {
        if !tests.contains(&(r.workload.as_str(), r.test.as_str())) {
            tests.push((&r.workload, &r.test));
        }
    }
    let mut charts = Vec::new();
    for (w, t) in tests {
        let Some((metric, unit)) = shown_as(rows, records, w, t) else {
            continue;
        };
        let scale = if metric == metric::BYTES_PER_SEC {
            1e-6
        } else {
            1.0
        };
        let bars: Vec<svg::Bar> = rows
            .iter()
            .filter(|r| r.workload == w && r.test == t && r.metric == metric)
            .map(|r| svg::Bar {
                label: r.target.clone(),
                color: targets.iter().position(|x| *x == r.target).unwrap_or(0),
                mean: r.summary.mean * scale,
                lo: r.summary.ci_lo * scale,
                hi: r.summary.ci_hi * scale,
                text: fmt_value(metric, r.summary.mean),
            })
            .collect();
        charts.push(svg::hbars(&test_name(w, t), unit, &bars));
    }
    charts
}
