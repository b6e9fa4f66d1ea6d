//! What a view of the report is: the records it claims (by workload name) and the sections it
//! makes from them, as plain data that the terminal, Markdown and HTML renderers lay out
//! (`report/term.rs`, `report/markdown.rs`, `report/html.rs`). The views themselves are files in
//! `report/views/`, listed once in `views::VIEWS`.

use super::summary::Row;
use crate::store::Record;

/// One view of the report: a workload's tables (the block presets' CrystalDiskMark table,
/// bonnie++'s, iozone's matrices, ...) or a view over the statistics of the whole study (the
/// ratio matrix, the latency percentiles, the charts), which claims no records of its own.
pub(crate) trait WorkloadView: Sync {
    /// Does this view show the records of the workload named `workload` (`Record::workload_name`:
    /// "cdm", "files", "iozone")? Decided by the name alone, never by the record's metrics.
    fn claims(&self, workload: &str) -> bool;

    /// Where its records' statistics go (the statistics rows, the ratio matrix, the warnings
    /// computed from them, CSV and JSON).
    fn statistics(&self) -> Statistics {
        Statistics::Shown
    }

    /// Its sections, in order, from the records it claims (`mine`, in the study's order) and the
    /// study; none when it has nothing to show.
    fn sections(&self, mine: &[&Record], study: &Study) -> Vec<Section>;

    /// Warnings of its own about its records, one line each.
    fn warnings(&self, _mine: &[&Record]) -> Vec<String> {
        Vec::new()
    }

    /// Where its sections go in the report.
    fn place(&self) -> Place {
        Place::Body
    }

    /// Whether its sections go first from a short terminal report that would not fit a screen.
    fn keep(&self) -> Keep {
        Keep::Usual
    }

    /// It ranks its workload's targets itself (io500 by its score), so neither the verdict nor
    /// the ratio matrix ranks them again by another measure.
    fn ranks(&self) -> bool {
        false
    }
}

/// How long a view's sections stay in a short terminal report that would not fit a screen
/// (`term::SCREEN` rows): the spare ones go first, last first, then the usual ones of the body,
/// last first, and the report names them and says where they are. A view is spare when another
/// says the same briefly (the block tests' per-target table beside the ratio matrix).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Keep {
    Usual,
    Spare,
}

/// Where a view's sections go: what must be said before any figure (a target that did less
/// work than asked), the body (tables, charts), or the answer (the verdict, a tune's ranking,
/// a study's published findings), which ends the terminal report and heads report.md and the
/// HTML page.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Place {
    First,
    Body,
    Answer,
}

/// Where a view's records' statistics go.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Statistics {
    /// In the statistics rows and everything made from them (the usual case).
    Shown,
    /// In CSV and JSON only: the view's own tables show them (iozone's hundreds of cells per
    /// target would drown the statistics and the ratio matrix).
    Exported,
    /// Nowhere: the records are verdicts, not measurements (the audit).
    None,
}

/// What every view sees of the study.
pub(crate) struct Study<'a> {
    /// Every record, in the study's order.
    pub(crate) records: &'a [Record],
    /// The records whose statistics are shown (`Statistics::Shown`, and those no view claims).
    pub(crate) measured: &'a [Record],
    /// The records that are measurements (not the audit's verdicts) of workloads whose view
    /// does not rank its targets itself: what the verdict and the ratio matrix rank.
    pub(crate) ranked: &'a [Record],
    /// The statistics rows of `measured`.
    pub(crate) rows: &'a [Row],
    pub(crate) baseline: &'a str,
    /// The terminal's width (for text laid out side by side) and whether it takes colour.
    pub(crate) width: usize,
    pub(crate) color: bool,
    /// What the study's plan says beyond its records: a study file's published claims, a
    /// tune's race (none for a plain compare, or several studies merged).
    pub(crate) plan: &'a Given,
}

/// What the plan of the study adds to its records for the report.
#[derive(Debug, Clone, Default)]
pub(crate) struct Given {
    /// The study file's name, title and source, and its claims.
    pub(crate) study: Option<crate::plan::study::StudyMeta>,
    /// What a tune raced for.
    pub(crate) tune: Option<crate::plan::tune::TuneMeta>,
    /// Each target's label and its spec as written (a tune's winner, ready to paste).
    pub(crate) specs: Vec<(String, String)>,
    /// The workloads' specs as written.
    pub(crate) workloads: Vec<String>,
}

impl Given {
    /// What a study's plan (its manifest's) adds to its report.
    pub(crate) fn of(plan: Option<&crate::plan::Plan>) -> Given {
        Given {
            study: plan.and_then(|p| p.study.clone()),
            tune: plan.and_then(|p| p.tune.clone()),
            specs: plan.map_or_else(Vec::new, |p| {
                p.targets
                    .iter()
                    .map(|t| (t.label.clone(), t.spec.clone()))
                    .collect()
            }),
            workloads: plan.map_or_else(Vec::new, |p| {
                p.workloads.iter().map(|w| w.spec.clone()).collect()
            }),
        }
    }
}

/// One part of the report, as data.
pub(crate) struct Section {
    /// Its heading: a line above it in the terminal, `## title` in Markdown, `<h2>` in HTML;
    /// empty for none.
    pub(crate) title: String,
    /// Where it appears.
    pub(crate) shown: Shown,
    pub(crate) body: Body,
}

/// Where a section appears: the short terminal report (`fsbench report`, the end of
/// `compare`), the full one (`--full`), report.md, report.html.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Shown {
    pub(crate) short: bool,
    pub(crate) full: bool,
    pub(crate) md: bool,
    pub(crate) html: bool,
}

impl Shown {
    /// Everywhere: what a person decides from.
    pub(crate) const BRIEF: Shown = Shown {
        short: true,
        full: true,
        md: true,
        html: true,
    };
    /// Everywhere but the short terminal report.
    pub(crate) const DETAIL: Shown = Shown {
        short: false,
        ..Shown::BRIEF
    };
    /// The terminal only (both reports).
    pub(crate) const TERMINAL: Shown = Shown {
        short: true,
        full: true,
        md: false,
        html: false,
    };
    /// The short terminal report only (where a fuller section stands in the others).
    pub(crate) const SHORT: Shown = Shown {
        full: false,
        ..Shown::TERMINAL
    };
    /// The HTML page only (charts).
    pub(crate) const HTML: Shown = Shown {
        short: false,
        full: false,
        md: false,
        html: true,
    };
}

/// What a section holds.
pub(crate) enum Body {
    /// A table: each format lays it out.
    Table(Grid),
    /// Text in a layout of its own (bonnie++'s two blocks): as it is in the terminal, fenced in
    /// Markdown, `<pre>` in HTML. The terminal, which has no room for a note, writes `legend`
    /// after the title in brackets.
    Text { text: String, legend: String },
    /// SVG charts (HTML only).
    Charts(Charts),
    /// A few sentences (a verdict): lines in the terminal, a list in Markdown and HTML.
    Lines(Vec<String>),
    /// A view whose layout differs by format (iozone's matrices side by side in the terminal
    /// within its width, Markdown tables, HTML heat-maps): what each format shows, verbatim.
    Own {
        term: String,
        md: String,
        html: String,
    },
}

/// A table: a header, rows of cells and a note under it.
#[derive(Clone)]
pub(crate) struct Grid {
    pub(crate) header: Vec<String>,
    pub(crate) rows: Vec<Vec<String>>,
    /// A line under the table; None: no line at all in the terminal.
    pub(crate) note: Option<String>,
    /// The columns aligned right in the terminal (figures).
    pub(crate) right: Vec<usize>,
    /// The columns a short terminal report leaves out, the last named first, while the table
    /// is wider than the screen (a line under it names them).
    pub(crate) spare: Vec<usize>,
}

impl Grid {
    /// A table whose first column names the row and whose other columns are figures.
    pub(crate) fn new(
        header: Vec<String>,
        rows: Vec<Vec<String>>,
        note: impl Into<String>,
    ) -> Grid {
        Grid {
            right: (1..header.len()).collect(),
            header,
            rows,
            note: Some(note.into()),
            spare: Vec::new(),
        }
    }
}

/// Charts of the HTML page.
pub(crate) struct Charts {
    pub(crate) svgs: Vec<String>,
    /// Small charts side by side (in one flexible row) rather than one under another.
    pub(crate) row: bool,
    /// Before the tables (the answer first) rather than after everything else.
    pub(crate) lead: bool,
}
