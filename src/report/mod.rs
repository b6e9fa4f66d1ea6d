//! Renderers over stored results. Pure: no system calls, so a laptop can render a cluster's study.

pub mod aging;
pub mod audit;
pub mod block;
pub mod bonnie;
pub mod fiojson;
pub mod formats;
pub mod html;
pub mod iozone;
pub mod merge;
pub mod stats;
pub mod summary;
pub mod svg;
pub mod views;
pub mod warnings;

use comfy_table::{presets::UTF8_FULL_CONDENSED, Cell, CellAlignment, ContentArrangement, Table};

use crate::plan::units::format_mb_per_sec;
use crate::store::{Outcome, Record};

/// One row per record: target, filesystem, workload/test, outcome, throughput, notes.
pub fn terminal_table(records: &[&Record]) -> String {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED);
    t.set_content_arrangement(ContentArrangement::Dynamic);
    // A terminal that reports no sensible width (a launcher's pseudo-terminal says 0): 140.
    if t.width().is_none_or(|w| w < 40) {
        t.set_width(140);
    }
    t.set_header(vec![
        "target",
        "fs",
        "test",
        "outcome",
        "throughput",
        "duration",
        "notes",
    ]);
    for r in records {
        let outcome = match r.outcome {
            Outcome::Ok => "ok".to_string(),
            Outcome::Skipped => "skipped".to_string(),
            Outcome::Failed => "FAILED".to_string(),
        };
        let mut throughput = r
            .metrics
            .get("bytes_per_sec")
            .map(|b| format_mb_per_sec(*b))
            .unwrap_or_default();
        if let Some(f) = r.metrics.get("files_per_sec") {
            let files = format!("{} files/s", crate::plan::units::format_count(*f));
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
            notes.push(x.lines().next().unwrap_or("").to_string());
        }
        notes.extend(
            r.notes
                .iter()
                .map(|n| n.split(':').next().unwrap_or(n).to_string()),
        );
        let test = if r.workload == r.test {
            r.test.clone()
        } else {
            format!("{} {}", r.workload, r.test)
        };
        t.add_row(vec![
            Cell::new(&r.target),
            Cell::new(&r.fs),
            Cell::new(test),
            Cell::new(outcome),
            Cell::new(throughput).set_alignment(CellAlignment::Right),
            Cell::new(format!("{:.2} s", r.duration_s)).set_alignment(CellAlignment::Right),
            Cell::new(notes.join("; ")),
        ]);
    }
    t.to_string()
}

/// The records no table of the terminal report shows: failed and skipped ones, and those of
/// workloads without a view of their own (smoke, idle). Empty when there are none.
fn unshown(records: &[Record]) -> String {
    let shown = |r: &Record| {
        block::is_block(r)
            || iozone::is_iozone(r)
            || ["files", "bonnie", audit::NAME].contains(&r.workload.as_str())
    };
    let rest: Vec<&Record> = records
        .iter()
        .filter(|r| r.outcome != Outcome::Ok || !shown(r))
        .collect();
    if rest.is_empty() {
        String::new()
    } else {
        terminal_table(&rest) + "\n"
    }
}

/// A report that cannot be made from the records (e.g. a baseline that is not a target).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ReportError(pub String);

/// Everything a study's report is made of, computed once: the baseline, the statistics rows,
/// the seeds' views and the warnings. `fsbench report` and the end of `compare` both render it.
///
/// The iozone workload's records (a figure per test and cell, hundreds per target) are shown by
/// its own matrices (`iozone`), not by the statistics rows and views, which would drown in them;
/// CSV and JSON carry their rows too.
pub struct StudyReport {
    pub records: Vec<Record>,
    pub baseline: String,
    pub rows: Vec<summary::Row>,
    pub views: Vec<views::View>,
    pub warnings: Vec<warnings::Warning>,
    pub iozone: iozone::Iozone,
    /// Colour in the terminal tables (a terminal that did not ask for NO_COLOR).
    pub color: bool,
    /// The terminal report with every table and the statistics (`fsbench report --full`).
    pub full: bool,
}

impl StudyReport {
    pub fn build(
        records: Vec<Record>,
        baseline: Option<&str>,
        manifest_warnings: &[String],
    ) -> Result<StudyReport, ReportError> {
        let baseline = summary::baseline_of(&records, baseline)?;
        let generic: Vec<Record> = records
            .iter()
            .filter(|r| !iozone::is_iozone(r) && !audit::is_audit(r))
            .cloned()
            .collect();
        let rows = summary::rows(&generic, &baseline);
        let mut views = views::all(&generic, &rows, &baseline);
        if let Some(v) = aging::view(&generic) {
            views.insert(0, v);
        }
        if let Some(v) = audit::fsync_view(&records) {
            views.insert(0, v);
        }
        if let Some(v) = audit::view(&records) {
            views.insert(0, v);
        }
        let mut warnings = warnings::build(&generic, &rows, manifest_warnings);
        warnings.extend(
            iozone::warnings(&records)
                .into_iter()
                .map(warnings::Warning::line),
        );
        Ok(StudyReport {
            iozone: iozone::Iozone::collect(&records),
            records,
            baseline,
            rows,
            views,
            warnings,
            color: false,
            full: false,
        })
    }

    /// The tables for a terminal, what a person decides from: per target the CrystalDiskMark-like
    /// table, bonnie++'s and iozone's, the ratio-to-baseline matrix, the files table, and the
    /// records no table shows (failures, skips, workloads without a view). With `full`, also
    /// the latency percentiles, the files table's every column and the statistics of every key
    /// metric. Warnings are separate (`warnings_text`).
    pub fn term(&self, full: bool) -> String {
        let mut t = unshown(&self.records);
        t.push_str(&block::tables(&self.records));
        let bon = bonnie::text(&self.records);
        if !bon.is_empty() {
            t.push_str(&format!(
                "bonnie++ (fsbench's bonnie workload; + marks a test under 0.5 s)\n{bon}\n"
            ));
        }
        for v in &self.views {
            if full || v.brief {
                t.push_str(&v.term());
            }
        }
        if !full {
            if let Some(v) = views::files_brief(&self.records) {
                t.push_str(&v.term());
            }
        }
        let width = Table::new()
            .width()
            .filter(|w| *w >= 40)
            .map_or(100, usize::from);
        t.push_str(&iozone::term(
            &self.iozone,
            &self.baseline,
            width,
            self.color,
        ));
        if full {
            t.push_str(&summary::term(&self.rows, &self.baseline));
        }
        t
    }

    pub fn warnings_text(&self, markdown: bool) -> String {
        warnings::text(&self.warnings, markdown)
    }

    pub fn markdown(&self) -> String {
        let mut t = String::new();
        let bon = bonnie::text(&self.records);
        if !bon.is_empty() {
            t.push_str(&format!("## bonnie++\n\n```text\n{bon}```\n\n"));
        }
        for v in &self.views {
            t.push_str(&v.markdown());
        }
        t.push_str(&iozone::markdown(&self.iozone, &self.baseline));
        t.push_str("## Every key metric\n\n");
        t.push_str(&summary::markdown(&self.rows, &self.baseline));
        t.push_str(&self.warnings_text(true));
        t
    }

    pub fn html(&self, title: &str) -> String {
        html::render(
            title,
            &self.records,
            &self.rows,
            &self.views,
            &self.baseline,
            &self.warnings,
            &iozone::html(&self.iozone, &self.baseline),
        )
    }

    /// The statistics rows with the iozone workload's.
    fn all_rows(&self) -> Vec<summary::Row> {
        let io: Vec<Record> = self
            .records
            .iter()
            .filter(|r| iozone::is_iozone(r))
            .cloned()
            .collect();
        let mut rows = self.rows.clone();
        rows.extend(summary::rows(&io, &self.baseline));
        rows
    }

    pub fn csv(&self) -> String {
        summary::csv(&self.all_rows())
    }

    pub fn json(&self) -> String {
        summary::json(&self.all_rows(), &self.baseline)
    }
}
