//! report.md: the sections Markdown shows, in order, each under its `##` heading: a table with
//! its note, text in a fence.

use super::markup::md_table;
use super::view::{Body, Section};

pub(crate) fn render(sections: &[Section]) -> String {
    let mut out = String::new();
    for s in sections.iter().filter(|s| s.shown.md) {
        match &s.body {
            Body::Table(g) => {
                out.push_str(&format!("## {}\n\n{}", s.title, md_table(g)));
                if let Some(note) = g.note.as_deref().filter(|n| !n.is_empty()) {
                    out.push_str(&format!("\n{note}\n"));
                }
                out.push('\n');
            }
            Body::Text { text, .. } => {
                out.push_str(&format!("## {}\n\n```text\n{text}```\n\n", s.title));
            }
            Body::Own { md, .. } => out.push_str(md),
            Body::Lines(lines) => {
                out.push_str(&format!("## {}\n\n", s.title));
                for l in lines {
                    out.push_str(&format!("- {l}\n"));
                }
                out.push('\n');
            }
            Body::Charts(_) => {}
        }
    }
    out
}
