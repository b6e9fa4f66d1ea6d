//! iozone's matrices as text, for `fsbench report --full` and report.md: per test and target,
//! MiB/s per cell (rows file size, columns record size) and, for a target other than the
//! baseline, the ratio to it per cell. The terminal's come side by side within its width (one
//! under the other when they do not fit), green above 1 and red below with colour; headline
//! tests only. Markdown has every test. Pure.

use std::fmt::Write as _;

use super::matrix::{label, FileRecord, Iozone};
use crate::plan::units::RateUnit;

/// A grid of text: a corner label, column heads, one row per file size.
fn grid(
    corner: &str,
    cols: &[u64],
    rows: &[u64],
    cell: &dyn Fn(FileRecord) -> Option<String>,
) -> Vec<String> {
    let mut out = vec![format!(
        "{corner:>6}{}",
        cols.iter()
            .map(|c| format!("{:>7}", label(*c)))
            .collect::<String>()
    )];
    for f in rows {
        let mut line = format!("{:>6}", label(*f));
        for r in cols {
            let text = cell(FileRecord {
                file: *f,
                record: *r,
            })
            .unwrap_or_default();
            line.push_str(&" ".repeat(7usize.saturating_sub(visible_len(&text))));
            line.push_str(&text);
        }
        out.push(line.trim_end().to_string());
    }
    out
}

/// Characters a terminal shows: colour codes take no room.
pub(crate) fn visible_len(s: &str) -> usize {
    let mut n = 0;
    let mut in_code = false;
    for c in s.chars() {
        match (in_code, c) {
            (false, '\x1b') => in_code = true,
            (true, 'm') => in_code = false,
            (false, _) => n += 1,
            _ => {}
        }
    }
    n
}

fn colored(x: f64, color: bool) -> String {
    let s = format!("{x:.2}");
    match (color, x) {
        (true, x) if x > 1.0 => format!("\x1b[32m{s}\x1b[0m"),
        (true, x) if x < 1.0 => format!("\x1b[31m{s}\x1b[0m"),
        _ => s,
    }
}

/// Two blocks of lines side by side, or one under the other when they do not fit `width`.
fn beside(a: Vec<String>, b: Vec<String>, width: usize) -> String {
    let wa = a.iter().map(|l| visible_len(l)).max().unwrap_or(0);
    let wb = b.iter().map(|l| visible_len(l)).max().unwrap_or(0);
    if b.is_empty() {
        return a.join("\n") + "\n";
    }
    if wa + 4 + wb > width {
        return a.join("\n") + "\n\n" + &b.join("\n") + "\n";
    }
    let n = a.len().max(b.len());
    (0..n)
        .map(|i| {
            let l = a.get(i).map(String::as_str).unwrap_or("");
            let pad = wa + 4 - visible_len(l);
            format!(
                "{l}{}{}\n",
                " ".repeat(pad),
                b.get(i).map(String::as_str).unwrap_or("")
            )
        })
        .collect()
}

/// The terminal's matrices: per headline test and target, MiB/s per cell and, for targets other
/// than the baseline, the ratio to it beside (green above 1, red below, when `color`).
pub(crate) fn term(z: &Iozone, baseline: &str, width: usize, color: bool) -> String {
    let mut out = String::new();
    for m in z.each(&z.headlines(), baseline) {
        let (test, target) = (m.test, m.target);
        let values = grid("MiB/s", &m.records, &m.files, &|c| {
            m.bytes(c).map(|b| RateUnit::MiB.figure(b))
        });
        let ratios = match m.base {
            Some(_) => grid("ratio", &m.records, &m.files, &|c| {
                m.ratio(c).map(|x| colored(x, color))
            }),
            None => Vec::new(),
        };
        let _ = writeln!(
            out,
            "iozone {test} on {target}: rows file size, columns record size{}",
            if ratios.is_empty() {
                String::new()
            } else {
                format!("; beside, the ratio to {baseline} (above 1 is faster)")
            }
        );
        out.push_str(&beside(values, ratios, width));
        out.push('\n');
    }
    out
}

/// Markdown: every test's matrix per target (MiB/s) and its ratio matrix.
pub(crate) fn markdown(z: &Iozone, baseline: &str) -> String {
    let mut out = String::new();
    if z.is_empty() {
        return out;
    }
    out.push_str("## iozone matrices\n\nMiB/s per cell (rows file size, columns record size), the geometric mean over repeats; the ratio tables divide each cell by the baseline's same cell (above 1: faster).\n\n");
    for m in z.each(&z.tests(), baseline) {
        let (test, target) = (m.test, m.target);
        let head: Vec<String> = m.records.iter().map(|r| label(*r)).collect();
        let table = |title: String, cell: &dyn Fn(FileRecord) -> Option<String>| {
            let mut t = format!(
                "{title}\n\n| file | {} |\n|---|{}\n",
                head.join(" | "),
                "---|".repeat(head.len())
            );
            for f in &m.files {
                let row: Vec<String> = m
                    .records
                    .iter()
                    .map(|r| {
                        cell(FileRecord {
                            file: *f,
                            record: *r,
                        })
                        .unwrap_or_default()
                    })
                    .collect();
                let _ = writeln!(t, "| {} | {} |", label(*f), row.join(" | "));
            }
            t + "\n"
        };
        out.push_str(&table(format!("### {test} on {target} (MiB/s)"), &|c| {
            m.bytes(c).map(|b| RateUnit::MiB.figure(b))
        }));
        if m.base.is_some() {
            out.push_str(&table(
                format!("### {test} on {target}, ratio to {baseline}"),
                &|c| m.ratio(c).map(|x| format!("{x:.2}")),
            ));
        }
    }
    out
}
