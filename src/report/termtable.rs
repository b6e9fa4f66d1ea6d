//! A table (`view::Grid`) for a terminal of a given width (comfy-table): figures aligned right,
//! cells wrapped at spaces so that it fits, no word cut while the columns' longest words fit
//! side by side (a header breaks after a `-`, `:` or `_` first: `btrfs-` over
//! `nodatacow`); a short report also leaves out a table's spare columns while it is too wide.

use comfy_table::{
    presets::UTF8_FULL_CONDENSED, Cell, CellAlignment, ColumnConstraint, ContentArrangement, Table,
    Width,
};

use super::view::Grid;

/// The width of the longest line of `s`.
fn width(s: &str) -> usize {
    s.lines().map(|l| l.chars().count()).max().unwrap_or(0)
}

/// The width a table takes unwrapped: its borders and each column's widest line, padded.
fn natural_width(g: &Grid) -> usize {
    let cells = |i: usize| {
        std::iter::once(&g.header)
            .chain(&g.rows)
            .filter_map(move |r| r.get(i))
    };
    (0..g.header.len())
        .map(|i| cells(i).map(|c| width(c)).max().unwrap_or(0) + 3)
        .sum::<usize>()
        + 1
}

/// `g` without column `i`.
fn without(g: &Grid, i: usize) -> Grid {
    let cut = |r: &Vec<String>| {
        let mut r = r.clone();
        if i < r.len() {
            r.remove(i);
        }
        r
    };
    let shift = |c: &usize| (*c != i).then_some(if *c > i { c - 1 } else { *c });
    Grid {
        header: cut(&g.header),
        rows: g.rows.iter().map(cut).collect(),
        note: g.note.clone(),
        right: g.right.iter().filter_map(shift).collect(),
        spare: g.spare.iter().filter_map(shift).collect(),
    }
}

/// The table for a terminal `columns` wide, as a short report shows it: its spare columns left
/// out, the last named first, while it is wider than that, and a line naming what went.
pub(crate) fn short(g: &Grid, columns: usize) -> String {
    let mut g = g.clone();
    let mut left = Vec::new();
    while natural_width(&g) > columns {
        let Some(&i) = g.spare.last() else { break };
        left.push(g.header[i].clone());
        g = without(&g, i);
    }
    let table = full(&g, columns);
    if left.is_empty() {
        return table;
    }
    left.reverse();
    let line = format!(
        "Left out at this width (a wider terminal or fsbench report --full shows them): {}.",
        left.join(", ")
    );
    format!("{table}\n{}", super::wrap::wrap(&line, columns, ""))
}

/// Where a header's word may break besides its spaces: after these (a target's label, a test's
/// name; not a unit's `/`).
const BREAKS: [char; 3] = ['-', ':', '_'];

/// The pieces a header's word breaks into (`btrfs-`, `nodatacow`).
fn pieces(word: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    for c in word.chars() {
        out.last_mut().expect("one piece").push(c);
        if BREAKS.contains(&c) {
            out.push(String::new());
        }
    }
    out.retain(|p| !p.is_empty());
    out
}

/// A header with each word longer than `w` broken into lines of its pieces.
fn broken(header: &str, w: usize) -> String {
    let words: Vec<String> = header
        .split(' ')
        .map(|word| {
            if word.chars().count() <= w {
                return word.to_string();
            }
            let mut lines: Vec<String> = vec![String::new()];
            for p in pieces(word) {
                let last = lines.last_mut().expect("one line");
                if !last.is_empty() && last.chars().count() + p.chars().count() > w {
                    lines.push(p);
                } else {
                    last.push_str(&p);
                }
            }
            lines.join("\n")
        })
        .collect();
    words.join(" ")
}

/// A cell this short is not wrapped while the table can help it (a test's name, a figure with
/// its unit); a longer one may wrap at its spaces.
const SHORT: usize = 24;

/// The width a cell asks for: all of it when short, else its longest word.
fn want(cell: &str, split: bool) -> usize {
    if width(cell) <= SHORT {
        return width(cell);
    }
    let words = cell.split_whitespace();
    let longest = |w: &str| w.chars().count();
    if split {
        words
            .flat_map(pieces)
            .map(|p| longest(&p))
            .max()
            .unwrap_or(0)
    } else {
        words.map(longest).max().unwrap_or(0)
    }
}

/// Each column's width (with its padding, a space each side) and the header it takes there:
/// every cell as it asks (`want`) where they fit side by side; else a header's long words
/// broken after their `-`, `:` or `_`; and where even that does not fit, the widest
/// columns give way: first down to their longest word (a cell wraps at its spaces), then
/// further (a word is cut).
fn bounds(g: &Grid, columns: usize) -> (Vec<usize>, Vec<String>) {
    let n = g.header.len();
    let data = |i: usize| {
        g.rows
            .iter()
            .filter_map(|r| r.get(i))
            .map(|c| want(c, false))
            .max()
            .unwrap_or(0)
    };
    let total = |b: &[usize]| b.iter().sum::<usize>() + b.len() + 1;
    let whole: Vec<usize> = (0..n)
        .map(|i| data(i).max(want(&g.header[i], false)) + 2)
        .collect();
    if total(&whole) <= columns {
        return (whole, g.header.clone());
    }
    let head = |i: usize| {
        g.header[i]
            .split_whitespace()
            .flat_map(pieces)
            .map(|p| p.chars().count())
            .max()
            .unwrap_or(0)
    };
    let mut b: Vec<usize> = (0..n).map(|i| data(i).max(head(i)) + 2).collect();
    let header = (0..n).map(|i| broken(&g.header[i], b[i] - 2)).collect();
    // A column's longest word: a short cell wraps at its spaces before any word is cut.
    let words = |i: usize| {
        let cells = g.rows.iter().filter_map(|r| r.get(i));
        let word = cells
            .flat_map(|c| c.split_whitespace())
            .map(|w| w.chars().count())
            .max()
            .unwrap_or(0);
        word.max(head(i)) + 2
    };
    let floor: Vec<usize> = (0..n).map(words).collect();
    while total(&b) > columns {
        let slack = (0..n).filter(|i| b[*i] > floor[*i]).max_by_key(|i| b[*i]);
        match slack.or_else(|| (0..n).filter(|i| b[*i] > 5).max_by_key(|i| b[*i])) {
            Some(i) => b[i] -= 1,
            None => break,
        }
    }
    (b, header)
}

/// The table for a terminal `columns` wide, every column kept.
pub(crate) fn full(g: &Grid, columns: usize) -> String {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED);
    t.set_content_arrangement(ContentArrangement::Dynamic);
    t.set_width(u16::try_from(columns).unwrap_or(u16::MAX));
    let (bounds, header) = bounds(g, columns);
    t.set_header(header);
    t.set_constraints(bounds.into_iter().map(|b| {
        ColumnConstraint::LowerBoundary(Width::Fixed(u16::try_from(b).unwrap_or(u16::MAX)))
    }));
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

#[cfg(test)]
mod tests {
    use super::*;

    fn grid(header: &[&str], rows: &[&[&str]]) -> Grid {
        let s = |r: &[&str]| r.iter().map(|c| c.to_string()).collect::<Vec<_>>();
        Grid::new(s(header), rows.iter().map(|r| s(r)).collect(), "")
    }

    fn widest(t: &str) -> usize {
        t.lines().map(|l| l.chars().count()).max().unwrap_or(0)
    }

    #[test]
    fn a_table_fits_its_width_and_breaks_headers_before_words() {
        let g = grid(
            &[
                "test",
                "raw",
                "btrfs:noatime",
                "btrfs-nodatacow",
                "zfs-128k",
                "zfs-4k",
            ],
            &[&[
                "cdm RND4K_Q32T1-write (iops)",
                "1.00",
                "0.40",
                "1.03",
                "0.13",
                "0.88",
            ]],
        );
        let wide = full(&g, 140);
        assert_eq!(
            wide.lines().count(),
            5,
            "one line a row when it fits:\n{wide}"
        );
        let t = full(&g, 66);
        assert!(widest(&t) <= 66, "{t}");
        assert!(t.contains("btrfs-") && t.contains("nodatacow"), "{t}");
        assert!(t.contains("RND4K_Q32T1-write"), "no word cut:\n{t}");
        // A short report leaves its spare columns out, last named first, and says so.
        let mut g = grid(
            &["target", "read MB/s", "read p99", "write p99"],
            &[&["a-long-target-label", "1,234.5", "12.34 ms", "56.78 ms"]],
        );
        g.spare = vec![2, 3];
        let t = short(&g, 40);
        assert!(widest(&t) <= 40, "{t}");
        assert!(
            !t.contains("p99 │") && t.contains("read p99, write p99."),
            "{t}"
        );
        assert!(!short(&g, 80).contains("Left out"));
    }
}
