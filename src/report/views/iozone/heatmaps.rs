//! iozone in the HTML page: the summary table, then per test a heat map of its matrix (rows file
//! size, columns record size) as iozone's users look at its Excel output: with one target (or no
//! baseline among them) each target's throughput, coloured on a log scale; with several, the
//! baseline's throughput, then each other target's ratio to it per cell. One colour scale for
//! the whole section, so maps compare at a glance; a legend under each; readable units; each
//! repeat's figure on hover. A note above the maps says what their cells are. Pure.

use std::fmt::Write as _;

use super::matrix::{centre, label, FileRecord, Iozone, Matrix};
use crate::plan::units::RateUnit;
use crate::report::heatgrid::{self, Cell, HeatGrid, Scale};
use crate::report::markup::{esc, html_table};
use crate::report::view::Grid;

/// What a map shows.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Shows {
    /// The target's throughput per cell.
    Rate,
    /// The target's throughput over the baseline's, per cell.
    Ratio,
}

/// The maps of one test, in order.
fn maps_of<'a>(z: &'a Iozone, test: &'static str, baseline: &str) -> Vec<(Shows, Matrix<'a>)> {
    let vs_base = z.targets.len() > 1 && z.cells(baseline, test).is_some();
    z.each(&[test], baseline)
        .into_iter()
        .map(|m| match m.base {
            Some(_) if vs_base => (Shows::Ratio, m),
            _ => (Shows::Rate, m),
        })
        .collect()
}

/// One colour scale per kind over every map of the section: throughput from the slowest cell to
/// the fastest; a ratio out to the power of two that holds the farthest cell (2x to 8x).
fn scales(all: &[(Shows, Matrix)]) -> (Scale, Scale) {
    let mut rates: Vec<f64> = Vec::new();
    let mut far: f64 = 1.0;
    for (shows, m) in all {
        for f in &m.files {
            for r in &m.records {
                match shows {
                    Shows::Rate => rates.extend(m.bytes(FileRecord {
                        file: *f,
                        record: *r,
                    })),
                    Shows::Ratio => {
                        if let Some(x) = m
                            .ratio(FileRecord {
                                file: *f,
                                record: *r,
                            })
                            .filter(|x| *x > 0.0)
                        {
                            far = far.max(x.log2().abs());
                        }
                    }
                }
            }
        }
    }
    let lo = rates.iter().copied().fold(f64::MAX, f64::min);
    let hi = rates.iter().copied().fold(0.0, f64::max);
    (
        Scale::Rate {
            lo: lo.min(hi),
            hi,
            unit: RateUnit::fitting(hi),
        },
        Scale::Ratio {
            stops: (far.ceil() as i32).clamp(1, 3),
        },
    )
}

/// "370.1, 392.3" MiB/s: each repeat's figure.
fn repeats(v: &[f64], unit: RateUnit) -> String {
    let each: Vec<String> = v.iter().map(|k| unit.precise(k * 1024.0)).collect();
    match v.len() {
        1 => String::new(),
        n => format!(" ({n} repeats: {})", each.join(", ")),
    }
}

/// One map as a heat grid.
fn map(shows: Shows, m: &Matrix, baseline: &str, scale: Scale) -> HeatGrid {
    let unit = match scale {
        Scale::Rate { unit, .. } => unit,
        Scale::Ratio { .. } => RateUnit::MiB,
    };
    let cells = m
        .files
        .iter()
        .map(|f| {
            m.records
                .iter()
                .map(|r| {
                    let c = FileRecord {
                        file: *f,
                        record: *r,
                    };
                    let v = m.cells.get(&c)?;
                    let at = format!("{}, {} file, {} records", m.target, label(*f), label(*r));
                    let bytes = centre(v) * 1024.0;
                    Some(match shows {
                        Shows::Rate => Cell {
                            value: bytes,
                            text: unit.figure(bytes),
                            hover: format!(
                                "{at}: {} {}{}",
                                unit.precise(bytes),
                                unit.name(),
                                repeats(v, unit)
                            ),
                        },
                        Shows::Ratio => {
                            let x = m.ratio(c)?;
                            let b = centre(m.base?.get(&c)?) * 1024.0;
                            let u = RateUnit::fitting(bytes.max(b));
                            Cell {
                                value: x,
                                text: format!("{x:.2}"),
                                hover: format!(
                                    "{at}: {} {} over {baseline}'s {} {}: ratio {x:.3}",
                                    u.precise(bytes),
                                    u.name(),
                                    u.precise(b),
                                    u.name()
                                ),
                            }
                        }
                    })
                })
                .collect()
        })
        .collect();
    let (title, legend) = match shows {
        Shows::Rate => (
            format!("{} on {}, {}", m.test, m.target, unit.name()),
            format!("{}, log scale: darker is faster", unit.name()),
        ),
        Shows::Ratio => (
            format!("{} on {} / {baseline}", m.test, m.target),
            format!(
                "{} / {baseline}, log scale: green faster, red slower",
                m.target
            ),
        ),
    };
    HeatGrid {
        title,
        cols: m.records.iter().map(|r| label(*r)).collect(),
        col_title: "record size".into(),
        rows: m.files.iter().map(|f| label(*f)).collect(),
        row_title: "file size".into(),
        cells,
        scale,
        legend,
    }
}

/// What the cells of the maps are, said above them.
fn note(maps: &[(Shows, Matrix)], baseline: &str, unit: RateUnit) -> String {
    let rate = format!(
        "{} per cell (rows file size, columns record size), the geometric mean over repeats, coloured on a log scale from the slowest cell of the section (light) to the fastest (dark)",
        unit.name()
    );
    if maps.iter().any(|(s, _)| *s == Shows::Ratio) {
        format!(
            "First {baseline}'s throughput: {rate}. Then each other target's throughput over {baseline}'s in the same cell (above 1: faster), white at 1, green above, red below, on a log scale. Hover a cell for the figures."
        )
    } else {
        format!("Throughput: {rate}. Hover a cell for each repeat's figure.")
    }
}

/// The iozone section of the page: its summary, a heat map per test and target, the throughput
/// mode's table.
pub(crate) fn html(
    z: &Iozone,
    baseline: &str,
    summary: Option<&Grid>,
    throughput: Option<&Grid>,
) -> String {
    let mut out = String::new();
    if z.is_empty() {
        return out;
    }
    out.push_str("<h2>iozone</h2>");
    if let Some(g) = summary {
        out.push_str(&html_table(g));
    }
    let tests: Vec<(&'static str, Vec<(Shows, Matrix)>)> = z
        .tests()
        .into_iter()
        .map(|t| (t, maps_of(z, t, baseline)))
        .collect();
    let every: Vec<(Shows, Matrix)> = z
        .tests()
        .into_iter()
        .flat_map(|t| maps_of(z, t, baseline))
        .collect();
    let (rate, ratio) = scales(&every);
    let unit = match rate {
        Scale::Rate { unit, .. } => unit,
        Scale::Ratio { .. } => RateUnit::MiB,
    };
    let draw = |shows: Shows, m: &Matrix| {
        let scale = match shows {
            Shows::Rate => rate,
            Shows::Ratio => ratio,
        };
        heatgrid::svg(&map(shows, m, baseline, scale))
    };
    // One note for the section: the maps share their scales.
    let _ = write!(
        out,
        "<p class=\"note\">{}</p>",
        esc(&note(&every, baseline, unit))
    );
    if every.iter().all(|(s, _)| *s == Shows::Rate) {
        // Throughput alone (one target): every test's map side by side.
        out.push_str("<div class=\"charts\">");
        for (shows, m) in &every {
            out.push_str(&draw(*shows, m));
        }
        out.push_str("</div>");
    } else {
        // A row per test: the baseline's throughput, then each other target's ratio.
        for (test, maps) in &tests {
            let _ = write!(out, "<h3>{}</h3><div class=\"charts\">", esc(test));
            for (shows, m) in maps {
                out.push_str(&draw(*shows, m));
            }
            out.push_str("</div>");
        }
    }
    if let Some(g) = throughput {
        let _ = write!(out, "<h3>throughput mode</h3>{}", html_table(g));
    }
    out
}
