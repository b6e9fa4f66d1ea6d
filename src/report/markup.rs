//! What the renderers share: HTML escaping and a table (`view::Grid`) built for Markdown and
//! HTML (the terminal's: `termtable.rs`).

use std::fmt::Write as _;

use super::view::Grid;

/// Text made safe for HTML (element content and attribute values).
pub(crate) fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
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
