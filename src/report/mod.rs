//! Renderers over stored results. Pure: no system calls, so a laptop can render a cluster's study.
//!
//! A report is a list of sections (`view.rs`: plain data, a table, text or charts, and where
//! each appears) that the views make (`views/`, one registry: each workload's view claims its
//! records by workload name; the views over the whole study read the statistics rows,
//! `summary.rs`); `term.rs`, `markdown.rs` and `html.rs` lay the sections out, and `formats.rs`
//! lists the formats `--format` takes.

pub(crate) mod claims;
pub(crate) mod fiojson;
mod flame;
pub(crate) mod formats;
pub(crate) mod gate;
mod heatgrid;
mod html;
mod ior;
pub(crate) mod limits;
mod markdown;
mod markup;
mod mdtest;
pub(crate) mod merge;
pub(crate) mod overtime;
pub(crate) mod profiles;
mod records;
mod stats;
mod summary;
mod svg;
mod term;
mod termtable;
pub use term::Screen;
pub use wrap::wrap;
pub(crate) mod trend;
pub(crate) mod tune;
mod view;
pub(crate) mod views;
mod warnings;
mod wrap;

use crate::metrics::name as metric;

pub(crate) use summary::ReportError;

use crate::plan::units::{format_count, format_mb_per_sec};
use crate::store::{Outcome, Record};
use records::test_name;
pub(crate) use view::Given;
use view::{Body, Grid, Keep, Place, Section, Shown, Statistics, Study};

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
/// of workloads no view claims (smoke, idle). None when there are none. A row the same as one
/// before it (a target skipped in each repeat) is said once.
fn unshown(records: &[Record]) -> Option<Section> {
    let mut rows: Vec<Vec<String>> = Vec::new();
    for row in records
        .iter()
        .filter(|r| r.outcome != Outcome::Ok || views::claiming(r.workload_name()).is_none())
        .map(record_row)
    {
        if !rows.contains(&row) {
            rows.push(row);
        }
    }
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
            // (The duration goes first, then the throughput, then the filesystem: what
            // happened and why stay.)
            spare: vec![1, 4, 5],
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
    /// The terminal the report is laid out for (its width, the rows it may take).
    pub(crate) screen: term::Screen,
    /// What the study's plan adds (published claims, a tune's race).
    given: Given,
}

/// Where each medium puts the places of the report, in order: what must be said first (a target
/// that did less work than asked), then the answer (a study's claims checked, the verdict, a
/// tune's ranking), then the body (each view's tables, charts and text, headed by the records no
/// view shows). The warnings follow all of it. A terminal report that fits a screen reads top
/// down like report.md; the HTML page heads its body with the same places.
struct Layout {
    term: &'static [Place],
    md: &'static [Place],
    html_lead: &'static [Place],
    html_body: &'static [Place],
}

/// A section with where it goes and whether it stays when the short report is over a screen.
struct Placed {
    place: Place,
    keep: Keep,
    section: Section,
}

const LAYOUT: Layout = Layout {
    term: &[Place::First, Place::Answer, Place::Body],
    md: &[Place::First, Place::Answer, Place::Body],
    html_lead: &[Place::First, Place::Answer],
    html_body: &[Place::Body],
};

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
        let measurements: Vec<Record> = records
            .iter()
            .filter(|r| statistics_of(r) != Statistics::None)
            .cloned()
            .collect();
        let rows = summary::rows(&measured, &baseline);
        let mut warnings = warnings::build(&measured, &rows, manifest_warnings);
        warnings.extend(limits::warnings(&measurements));
        // A workload whose view ranks its targets itself (io500 by its score) is ranked by
        // neither the verdict nor the ratio matrix by another measure.
        let ranked: Vec<Record> = measurements
            .into_iter()
            .filter(|r| !views::claiming(r.workload_name()).is_some_and(|v| v.ranks()))
            .collect();
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
            screen: term::Screen::default(),
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

    /// Every section with its place, in the views' order; the records no view shows head the
    /// body.
    fn sections(&self) -> Vec<Placed> {
        let study = Study {
            records: &self.records,
            measured: &self.measured,
            ranked: &self.ranked,
            rows: &self.rows,
            baseline: &self.baseline,
            width: self.screen.columns,
            color: self.color,
            plan: &self.given,
        };
        let mut out: Vec<Placed> = unshown(&self.records)
            .into_iter()
            .map(|section| Placed {
                place: Place::Body,
                keep: Keep::Usual,
                section,
            })
            .collect();
        for v in views::VIEWS {
            let made = v.sections(&Self::claimed(&self.records, *v), &study);
            out.extend(made.into_iter().map(|section| Placed {
                place: v.place(),
                keep: v.keep(),
                section,
            }));
        }
        out
    }

    /// The sections of each order's places, place by place (the views' order within one); a
    /// section goes to the first order that names its place.
    fn laid_out(&self, orders: &[&[Place]]) -> Vec<Vec<Placed>> {
        let mut out: Vec<Vec<(usize, Placed)>> = orders.iter().map(|_| Vec::new()).collect();
        for p in self.sections() {
            let found = orders
                .iter()
                .enumerate()
                .find_map(|(k, o)| o.iter().position(|x| *x == p.place).map(|i| (k, i)));
            if let Some((k, i)) = found {
                out[k].push((i, p));
            }
        }
        out.into_iter()
            .map(|mut v| {
                v.sort_by_key(|(i, _)| *i);
                v.into_iter().map(|(_, p)| p).collect()
            })
            .collect()
    }

    /// The sections of one order of places.
    fn sections_in(&self, order: &[Place]) -> Vec<Section> {
        self.laid_out(&[order])
            .into_iter()
            .flatten()
            .map(|p| p.section)
            .collect()
    }

    /// The tables for a terminal, what a person decides from, in `LAYOUT.term`'s order: a
    /// study's claims and the verdict, then the records no table shows (failures, skips,
    /// workloads without a view), then each view's brief sections (the block tests per target,
    /// bonnie++'s means, the audit's, the ratio-to-baseline matrix, the files table, iozone's
    /// summary over its cells). The short report fits a screen with its warnings: when it would
    /// not, the spare views' sections (`Keep::Spare`) are left out, last first, and a line names
    /// them. With `full`, every section (the latency percentiles, the files table's every
    /// column, iozone's matrices, the statistics of every key metric). Warnings are separate
    /// (`warnings_text`).
    pub(crate) fn term(&self, full: bool) -> String {
        let placed: Vec<Placed> = self
            .laid_out(&[LAYOUT.term])
            .into_iter()
            .flatten()
            .collect();
        let all: Vec<&Section> = placed.iter().map(|p| &p.section).collect();
        let columns = self.screen.columns;
        if full {
            return term::render(&all, true, columns);
        }
        let budget = self
            .screen
            .rows
            .saturating_sub(wrap::rows(&self.warnings_term(), columns));
        // What may go, in turn: the spare views' sections, last first, then the body's other
        // named sections, last first (never what must be said first, nor the answer): leave
        // out as few as fit the screen, or none when leaving all of them out would not.
        let may_go = |i: &usize| {
            placed[*i].place == Place::Body
                && !all[*i].title.is_empty()
                && term::shown(all[*i], false)
        };
        let spare: Vec<usize> = (0..placed.len())
            .rev()
            .filter(|i| may_go(i) && placed[*i].keep == Keep::Spare)
            .chain(
                (0..placed.len())
                    .rev()
                    .filter(|i| may_go(i) && placed[*i].keep != Keep::Spare),
            )
            .collect();
        let without = |n: usize| -> String {
            let shown: Vec<&Section> = (0..placed.len())
                .filter(|i| !spare[..n].contains(i))
                .map(|i| all[i])
                .collect();
            let text = term::render(&shown, false, columns);
            if n == 0 {
                return text;
            }
            let mut left: Vec<&str> = spare[..n]
                .iter()
                .map(|i| placed[*i].section.title.as_str())
                .collect();
            left.reverse();
            let line = format!(
                "Left out to fit a screen (fsbench report --full has them): {}.",
                left.join("; ")
            );
            format!("{text}{}\n\n", wrap::wrap(&line, columns, ""))
        };
        (0..=spare.len())
            .map(without)
            .find(|t| wrap::rows(t, columns) <= budget)
            .unwrap_or_else(|| without(0))
    }

    /// The warnings for the terminal: a line each, wrapped at the screen's width.
    pub(crate) fn warnings_term(&self) -> String {
        wrap::wrap(
            &warnings::text(&self.warnings, false),
            self.screen.columns,
            "  ",
        )
    }

    /// report.md: the sections in `LAYOUT.md`'s order, then the warnings.
    pub(crate) fn markdown(&self) -> String {
        markdown::render(&self.sections_in(LAYOUT.md)) + &warnings::text(&self.warnings, true)
    }

    /// The HTML page: `LAYOUT.html_lead`'s places head it, the body laid out by kind.
    pub(crate) fn html(&self, title: &str) -> String {
        let mut parts = self
            .laid_out(&[LAYOUT.html_lead, LAYOUT.html_body])
            .into_iter()
            .map(|v| v.into_iter().map(|p| p.section).collect::<Vec<_>>());
        let (lead, body) = (
            parts.next().unwrap_or_default(),
            parts.next().unwrap_or_default(),
        );
        html::render(title, &lead, &body, &self.baseline, &self.warnings)
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

    /// The flame graphs of the study's profiles, each with its file in the study (`profiles/`).
    pub(crate) fn flame_graphs(&self) -> Vec<profiles::Graph> {
        profiles::all_graphs(&self.records, &self.baseline)
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
            ("limits", limits::json(&self.records)),
        ];
        for (key, value) in answers {
            if let Some(value) = value {
                v[key] = value;
            }
        }
        serde_json::to_string_pretty(&v).unwrap_or_default()
    }
}
