//! The terminal report: the sections the short (or the full) report shows, in order. A table is
//! its title, the table and its note; text is its title (with its legend) and the text; a blank
//! line ends it.

use super::markup::term_table;
use super::view::{Body, Section};

/// Whether the short (or the full) report shows a section.
pub(crate) fn shown(s: &Section, full: bool) -> bool {
    if full {
        s.shown.full
    } else {
        s.shown.short
    }
}

pub(crate) fn render(sections: &[&Section], full: bool) -> String {
    let mut out = String::new();
    for s in sections.iter().copied() {
        if !shown(s, full) {
            continue;
        }
        match &s.body {
            Body::Table(g) => {
                if !s.title.is_empty() {
                    out.push_str(&s.title);
                    out.push('\n');
                }
                out.push_str(&term_table(g));
                out.push('\n');
                if let Some(note) = &g.note {
                    out.push_str(note);
                    out.push('\n');
                }
            }
            Body::Text { text, legend } => {
                out.push_str(&s.title);
                if !legend.is_empty() {
                    out.push_str(&format!(" ({legend})"));
                }
                out.push_str(&format!("\n{text}\n"));
            }
            Body::Own { term, .. } => out.push_str(term),
            Body::Lines(lines) => {
                if !s.title.is_empty() {
                    out.push_str(&format!("{}:\n", s.title));
                }
                for l in lines {
                    out.push_str(&format!("  {l}\n"));
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
