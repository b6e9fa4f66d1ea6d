//! The terminal report: the sections the short (or the full) report shows, in order. A table is
//! its title, the table and its note; text is its title (with its legend) and the text; a blank
//! line ends it. Everything is laid out for a `Screen`: tables fit its width, notes, verdict
//! lines and warnings wrap at it (a text in a layout of its own, bonnie++'s or iozone's, stays
//! as it is), and what the report takes is counted in its rows.

use super::termtable;
use super::view::{Body, Section};
use super::wrap::wrap;

/// The rows a short terminal report fits in, with its warnings and the line after it that says
/// where the results are: a screen.
pub(crate) const SCREEN: usize = 80;

/// The terminal a report is laid out for: its width, and the rows the report and its warnings
/// may take (a screen, `SCREEN` rows, less what the command prints after it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Screen {
    pub columns: usize,
    pub rows: usize,
}

impl Screen {
    /// Where no terminal says its width: a terminal's usual 80 columns.
    pub const COLUMNS: usize = 80;

    /// A screen of `columns` (None: 80; fewer than 40 is no width a table fits, so 80 too)
    /// with `after` rows of it kept for what follows the report.
    pub fn new(columns: Option<usize>, after: usize) -> Screen {
        Screen {
            columns: columns.filter(|c| *c >= 40).unwrap_or(Screen::COLUMNS),
            rows: SCREEN.saturating_sub(after),
        }
    }
}

impl Default for Screen {
    /// 80 columns, and a row after the report (the prompt, or the line saying where the
    /// results are).
    fn default() -> Screen {
        Screen::new(None, 1)
    }
}

/// Whether the short (or the full) report shows a section.
pub(crate) fn shown(s: &Section, full: bool) -> bool {
    if full {
        s.shown.full
    } else {
        s.shown.short
    }
}

pub(crate) fn render(sections: &[&Section], full: bool, columns: usize) -> String {
    let mut out = String::new();
    let line = |out: &mut String, text: &str, indent: &str| {
        out.push_str(&wrap(text, columns, indent));
        out.push('\n');
    };
    for s in sections.iter().copied() {
        if !shown(s, full) {
            continue;
        }
        match &s.body {
            Body::Table(g) => {
                if !s.title.is_empty() {
                    line(&mut out, &s.title, "");
                }
                out.push_str(&if full {
                    termtable::full(g, columns)
                } else {
                    termtable::short(g, columns)
                });
                out.push('\n');
                if let Some(note) = &g.note {
                    line(&mut out, note, "");
                }
            }
            Body::Text { text, legend } => {
                if legend.is_empty() {
                    line(&mut out, &s.title, "");
                } else {
                    line(&mut out, &format!("{} ({legend})", s.title), "");
                }
                out.push_str(&format!("{text}\n"));
            }
            Body::Own { term, .. } => out.push_str(term),
            Body::Lines(lines) => {
                if !s.title.is_empty() {
                    line(&mut out, &format!("{}:", s.title), "");
                }
                for l in lines {
                    line(&mut out, &format!("  {l}"), "    ");
                }
                out.push('\n');
            }
            Body::Charts(_) => {}
        }
    }
    // A blank line before what follows (the warnings).
    if !out.is_empty() && !out.ends_with("\n\n") {
        out.push('\n');
    }
    out
}
