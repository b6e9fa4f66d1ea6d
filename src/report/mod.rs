//! Renderers over stored results. Pure: no system calls, so a laptop can render a cluster's study.
//!
//! A report is a list of sections (`view.rs`: plain data, a table, text or charts, and where
//! each appears) that the views make (`views/`, one registry: each workload's view claims its
//! records by workload name; the views over the whole study read the statistics rows,
//! `summary.rs`); `term.rs`, `markdown.rs` and `html.rs` lay the sections out, and `formats.rs`
//! lists the formats `--format` takes.

pub(crate) mod claims;
pub(crate) mod fiojson;
pub(crate) mod formats;
pub(crate) mod gate;
mod heatgrid;
mod html;
mod markdown;
mod markup;
pub(crate) mod merge;
pub(crate) mod overtime;
mod records;
mod stats;
mod summary;
mod svg;
mod term;
pub(crate) mod trend;
pub(crate) mod tune;
mod view;
pub(crate) mod views;
mod warnings;

use crate::metrics::name as metric;
use comfy_table::Table;

pub(crate) use summary::ReportError;

use crate::plan::units::{format_count, format_mb_per_sec};
use crate::store::{Outcome, Record};
use records::test_name;
pub(crate) use view::Given;
use view::{Body, Grid, Place, Section, Shown, Statistics, Study};

/// One row per record: target, filesystem, workload/test, outcome, throughput, notes.
fn record_row(r: &Record) -> Vec<String> {
    let outcome = match r.outcome {
        Outcome::Ok => "ok".to_string(),
        Outcome::Skipped => "skipped".to_string(),
        Outcome::Failed => "FAILED".to_string(),
    };
    let mut throughput = r
        .metrics
        .get(metric::BYTES_PER_SEC)
        .map(|b| format_mb_per_sec(*b))
        .unwrap_or_default();
    if let Some(f) = r.metrics.get(metric::FILES_PER_SEC) {
        let files = format!("{} files/s", format_count(*f));
        throughput = if throughput.is_empty() {
            files
        } else {
            format!("{files}, {throughput}")
        };
    }
    let mut notes: Vec<String> = Vec::new();
    if let Some(x) = &r.reason {
        notes.push(x.clone());
    }
    if let Some(x) = &r.error {
        notes.push(error_line(x));
    }
    notes.extend(
        r.notes
            .iter()
            .map(|n| n.split(':').next().unwrap_or(n).to_string()),
    );
    vec![
        r.target.clone(),
        r.fs.clone(),
        test_name(&r.workload, &r.test),
        outcome,
        throughput,
        format!("{:.2} s", r.duration_s),
        notes.join("; "),
    ]
}

/// An error in one line: a failed command's own last word after what failed ("command failed
/// (exit 1): cannot create 'p': 'recordsize' must be power of 2 from 512 to 128k"), not its
/// command line.
fn error_line(e: &str) -> String {
    let first = e.lines().next().unwrap_or("");
    let last = e.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("");
    match first.split_once(": ") {
        Some((what, _)) if last != first => format!("{what}: {}", last.trim()),
        _ => first.to_string(),
    }
}

/// The records no view shows, first in the terminal report: failed and skipped ones, and those
/// of workloads no view claims (smoke, idle). None when there are none.
fn unshown(records: &[Record]) -> Option<Section> {
    let rows: Vec<Vec<String>> = records
        .iter()
        .filter(|r| r.outcome != Outcome::Ok || views::claiming(r.workload_name()).is_none())
        .map(record_row)
        .collect();
    if rows.is_empty() {
        return None;
    }
    let header = [
        "target",
        "fs",
        "test",
        "outcome",
        "throughput",
        "duration",
        "notes",
    ];
    Some(Section {
        title: String::new(),
        shown: Shown::TERMINAL,
        body: Body::Table(Grid {
            header: header.map(String::from).to_vec(),
            rows,
            note: None,
            right: vec![4, 5],
            wrap: true,
        }),
    })
}

/// Where the statistics of a record go: its view's say, the statistics rows for a workload no
/// view claims.
fn statistics_of(r: &Record) -> Statistics {
    views::claiming(r.workload_name()).map_or(Statistics::Shown, |v| v.statistics())
}

/// Everything a study's report is made of, computed once: the baseline, the statistics rows and
/// the warnings; the views' sections are made when it is rendered (the terminal's colour is
/// known then). `fsbench report` and the end of `compare` both render it.
pub(crate) struct StudyReport {
    pub(crate) records: Vec<Record>,
    /// The records whose statistics are shown (not iozone's, whose own matrices show them, nor
    /// the audit's verdicts).
    measured: Vec<Record>,
    /// The records that are measurements (all but the audit's verdicts).
    ranked: Vec<Record>,
    baseline: String,
    rows: Vec<summary::Row>,
    warnings: Vec<warnings::Warning>,
    /// Colour in the terminal tables (a terminal that did not ask for NO_COLOR).
    pub(crate) color: bool,
    /// The terminal report with every table and the statistics (`fsbench report --full`).
    pub(crate) full: bool,
    /// What the study's plan adds (published claims, a tune's race).
    given: Given,
}

/// A report's sections by place: said first, the body, the answer.
struct Parts {
    first: Vec<Section>,
    body: Vec<Section>,
    answer: Vec<Section>,
}

impl StudyReport {
    pub(crate) fn build(
        records: Vec<Record>,
        baseline: Option<&str>,
        manifest_warnings: &[String],
    ) -> Result<StudyReport, ReportError> {
        let baseline = summary::baseline_of(&records, baseline)?;
        let measured: Vec<Record> = records
            .iter()
            .filter(|r| statistics_of(r) == Statistics::Shown)
            .cloned()
            .collect();
        let ranked: Vec<Record> = records
            .iter()
            .filter(|r| statistics_of(r) != Statistics::None)
            .cloned()
            .collect();
        let rows = summary::rows(&measured, &baseline);
        let mut warnings = warnings::build(&measured, &rows, manifest_warnings);
        for v in views::VIEWS {
            let mine = Self::claimed(&records, *v);
            warnings.extend(v.warnings(&mine).into_iter().map(warnings::Warning::line));
        }
        Ok(StudyReport {
            records,
            measured,
            ranked,
            baseline,
            rows,
            warnings,
            color: false,
            full: false,
            given: Given::default(),
        })
    }

    /// The report of a study whose plan says more than its records: a study file's claims, a
    /// tune's race.
    pub(crate) fn with(mut self, given: Given) -> StudyReport {
        self.given = given;
        self
    }

    /// The records a view claims, in the study's order.
    fn claimed<'a>(records: &'a [Record], v: &dyn view::WorkloadView) -> Vec<&'a Record> {
        records
            .iter()
            .filter(|r| v.claims(r.workload_name()))
            .collect()
    }

    /// Every section by place: what must be said first, then the records no view shows and each
    /// view's body, then the answer.
    fn sections(&self) -> Parts {
        let study = Study {
            records: &self.records,
            measured: &self.measured,
            ranked: &self.ranked,
            rows: &self.rows,
            baseline: &self.baseline,
            width: Table::new()
                .width()
                .filter(|w| *w >= 40)
                .map_or(100, usize::from),
            color: self.color,
            plan: &self.given,
        };
        let mut parts = Parts {
            first: Vec::new(),
            body: unshown(&self.records).into_iter().collect(),
            answer: Vec::new(),
        };
        for v in views::VIEWS {
            let made = v.sections(&Self::claimed(&self.records, *v), &study);
            match v.place() {
                Place::First => parts.first.extend(made),
                Place::Body => parts.body.extend(made),
                Place::Answer => parts.answer.extend(made),
            }
        }
        parts
    }

    /// The tables for a terminal, what a person decides from: the records no table shows
    /// (failures, skips, workloads without a view), then each view's brief sections (per target
    /// the CrystalDiskMark-like table, bonnie++'s, the audit's, the ratio-to-baseline matrix,
    /// the files table, iozone's matrices). With `full`, every section (the latency
    /// percentiles, the files table's every column, the statistics of every key metric).
    /// Warnings are separate (`warnings_text`).
    pub(crate) fn term(&self, full: bool) -> String {
        let p = self.sections();
        term::render(
            &[p.first, p.body, p.answer]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>(),
            full,
        )
    }

    pub(crate) fn warnings_text(&self, markdown: bool) -> String {
        warnings::text(&self.warnings, markdown)
    }

    /// report.md: what must be said first and the answer, then the body and the warnings.
    pub(crate) fn markdown(&self) -> String {
        let p = self.sections();
        markdown::render(
            &[p.first, p.answer, p.body]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>(),
        ) + &self.warnings_text(true)
    }

    /// The HTML page: what must be said first and the answer head it.
    pub(crate) fn html(&self, title: &str) -> String {
        let p = self.sections();
        html::render(
            title,
            &[p.first, p.answer]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>(),
            &p.body,
            &self.baseline,
            &self.warnings,
        )
    }

    /// The statistics rows with those whose statistics go to CSV and JSON only (iozone's).
    fn all_rows(&self) -> Vec<summary::Row> {
        let exported: Vec<Record> = self
            .records
            .iter()
            .filter(|r| statistics_of(r) == Statistics::Exported)
            .cloned()
            .collect();
        let mut rows = self.rows.clone();
        rows.extend(summary::rows(&exported, &self.baseline));
        rows
    }

    pub(crate) fn csv(&self) -> String {
        summary::csv(&self.all_rows())
    }

    /// The statistics rows, and beside them the answers: the verdict, a study's claims
    /// checked, a tune's race, the records that did less work than asked.
    pub(crate) fn json(&self) -> String {
        let mut v = serde_json::json!({"baseline": self.baseline, "rows": self.all_rows()});
        let answers = [
            ("verdict", views::verdict::json(&self.ranked, &self.given)),
            ("claims", views::claims::json(&self.records, &self.given)),
            ("tune", views::tune::json(&self.records, &self.given)),
            ("less_work", views::less::json(&self.records)),
        ];
        for (key, value) in answers {
            if let Some(value) = value {
                v[key] = value;
            }
        }
        serde_json::to_string_pretty(&v).unwrap_or_default()
    }
}
