//! What the renderers share: HTML escaping and a table (`view::Grid`) built for the terminal
//! (comfy-table), Markdown and HTML.

use std::fmt::Write as _;

use comfy_table::{presets::UTF8_FULL_CONDENSED, Cell, CellAlignment, ContentArrangement, Table};

use super::view::Grid;

/// Text made safe for HTML (element content and attribute values).
pub(crate) fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The table for a terminal: figures aligned right; a wrapping table fits the terminal's width
/// (140 columns where it reports none, or none sensible: a launcher's pseudo-terminal says 0).
pub(crate) fn term_table(g: &Grid) -> String {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED);
    if g.wrap {
        t.set_content_arrangement(ContentArrangement::Dynamic);
        if t.width().is_none_or(|w| w < 40) {
            t.set_width(140);
        }
    }
    t.set_header(g.header.clone());
    for r in &g.rows {
        t.add_row(
            r.iter()
                .enumerate()
                .map(|(i, x)| {
                    let c = Cell::new(x);
                    if g.right.contains(&i) {
                        c.set_alignment(CellAlignment::Right)
                    } else {
                        c
                    }
                })
                .collect::<Vec<_>>(),
        );
    }
    t.to_string()
}

/// The table in Markdown: the header, its rule and the rows (no heading, no note).
pub(crate) fn md_table(g: &Grid) -> String {
    let mut out = format!("| {} |\n|", g.header.join(" | "));
    out.push_str(&" --- |".repeat(g.header.len()));
    out.push('\n');
    for r in &g.rows {
        let _ = writeln!(out, "| {} |", r.join(" | "));
    }
    out
}

/// The table in HTML with its note under it (no heading).
pub(crate) fn html_table(g: &Grid) -> String {
    let mut s = String::from("<table><tr>");
    for h in &g.header {
        let _ = write!(s, "<th>{}</th>", esc(h));
    }
    s.push_str("</tr>");
    for r in &g.rows {
        s.push_str("<tr>");
        for c in r {
            let _ = write!(s, "<td>{}</td>", esc(c));
        }
        s.push_str("</tr>");
    }
    let _ = write!(
        s,
        "</table><p class=\"note\">{}</p>",
        esc(g.note.as_deref().unwrap_or(""))
    );
    s
}
