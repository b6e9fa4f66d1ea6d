//! A matrix of figures as an SVG heat map (iozone's file size x record size, as its users look
//! at its Excel output): a cell per figure with the figure written in it and the exact figures
//! on hover, row and column labels under their axis titles, and a colour legend with round ticks
//! under the grid. Two colour scales: throughput on a log scale, light (slow) to dark blue (fast);
//! a ratio on a log scale, white at 1, greener above and redder below. Pure.

use std::fmt::Write as _;

use super::markup::esc;
use super::svg::{open, text_w};
use crate::plan::units::RateUnit;

/// How a heat map colours its cells.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Scale {
    /// Throughput in bytes per second, on a log scale from `lo` to `hi`.
    Rate { lo: f64, hi: f64, unit: RateUnit },
    /// A ratio on a log scale: white at 1, full green at 2^`stops`, full red at 2^-`stops`.
    Ratio { stops: i32 },
}

/// One cell: the figure it is coloured by (bytes per second, or a ratio), what it says and what
/// hovering it says.
pub(crate) struct Cell {
    pub(crate) value: f64,
    pub(crate) text: String,
    pub(crate) hover: String,
}

/// A heat map: its title, the column and row labels with their axis titles, the cells by row
/// then column (None: no figure), the scale and the legend's title.
pub(crate) struct HeatGrid {
    pub(crate) title: String,
    pub(crate) cols: Vec<String>,
    pub(crate) col_title: String,
    pub(crate) rows: Vec<String>,
    pub(crate) row_title: String,
    pub(crate) cells: Vec<Vec<Option<Cell>>>,
    pub(crate) scale: Scale,
    pub(crate) legend: String,
}

/// Throughput's colours, light to dark (ColorBrewer's Blues).
const BLUES: [(f64, f64, f64); 5] = [
    (247.0, 251.0, 255.0),
    (198.0, 219.0, 239.0),
    (107.0, 174.0, 214.0),
    (33.0, 113.0, 181.0),
    (8.0, 48.0, 107.0),
];
const GREEN: (f64, f64, f64) = (26.0, 152.0, 80.0);
const RED: (f64, f64, f64) = (215.0, 48.0, 39.0);
const WHITE: (f64, f64, f64) = (255.0, 255.0, 255.0);

fn mix(a: (f64, f64, f64), b: (f64, f64, f64), t: f64) -> (f64, f64, f64) {
    let t = t.clamp(0.0, 1.0);
    (
        a.0 + (b.0 - a.0) * t,
        a.1 + (b.1 - a.1) * t,
        a.2 + (b.2 - a.2) * t,
    )
}

impl Scale {
    /// Where a value falls on the scale, 0 to 1 (a ratio: 0.5 at 1).
    fn at(self, v: f64) -> f64 {
        match self {
            Scale::Rate { lo, hi, .. } => {
                let (a, b) = (lo.max(1e-9).ln(), hi.max(1e-9).ln());
                if b - a < 1e-12 {
                    0.5
                } else {
                    ((v.max(1e-9).ln() - a) / (b - a)).clamp(0.0, 1.0)
                }
            }
            Scale::Ratio { stops } => {
                (0.5 + v.max(1e-9).log2() / (2.0 * stops.max(1) as f64)).clamp(0.0, 1.0)
            }
        }
    }

    /// The colour at a point of the scale (0 to 1).
    fn colour_at(self, t: f64) -> (f64, f64, f64) {
        match self {
            Scale::Rate { .. } => {
                let x = t.clamp(0.0, 1.0) * (BLUES.len() - 1) as f64;
                let i = (x.floor() as usize).min(BLUES.len() - 2);
                mix(BLUES[i], BLUES[i + 1], x - i as f64)
            }
            Scale::Ratio { .. } if t >= 0.5 => mix(WHITE, GREEN, (t - 0.5) * 2.0),
            Scale::Ratio { .. } => mix(WHITE, RED, (0.5 - t) * 2.0),
        }
    }

    /// The legend's ticks: (position 0 to 1, label).
    fn ticks(self) -> Vec<(f64, String)> {
        match self {
            Scale::Rate { lo, hi, unit } => rate_ticks(lo, hi, unit)
                .into_iter()
                .map(|v| (self.at(v), unit.figure(v)))
                .collect(),
            Scale::Ratio { stops } => (-stops..=stops)
                .map(|k| {
                    let v = 2f64.powi(k);
                    let label = format!("{v:.3}");
                    let label = label.trim_end_matches('0').trim_end_matches('.');
                    (self.at(v), label.to_string())
                })
                .collect(),
        }
    }
}

/// Round throughput ticks between `lo` and `hi` (bytes per second): 1, 2 and 5 of each decade
/// of the unit; the ends too when fewer than two fall between them.
fn rate_ticks(lo: f64, hi: f64, unit: RateUnit) -> Vec<f64> {
    let per = unit.bytes();
    let (a, b) = (lo / per, hi / per);
    let mut out = Vec::new();
    if a > 0.0 && b.is_finite() {
        let mut d = 10f64.powf(a.log10().floor());
        while d <= b && out.len() < 40 {
            for m in [1.0, 2.0, 5.0] {
                let v = m * d;
                if v >= a * 0.999 && v <= b * 1.001 {
                    out.push(v * per);
                }
            }
            d *= 10.0;
        }
    }
    if out.len() < 2 {
        out.insert(0, lo);
        out.push(hi);
    }
    out
}

/// Black or white text, whichever reads on the fill.
fn ink(c: (f64, f64, f64)) -> &'static str {
    if 0.299 * c.0 + 0.587 * c.1 + 0.114 * c.2 < 140.0 {
        "#fff"
    } else {
        "#222"
    }
}

fn rgb(c: (f64, f64, f64)) -> String {
    format!("rgb({:.0},{:.0},{:.0})", c.0, c.1, c.2)
}

/// The heat map as one SVG chart.
pub(crate) fn svg(g: &HeatGrid) -> String {
    let widest = |v: &mut dyn Iterator<Item = f64>| v.fold(0.0, f64::max);
    let cw = widest(
        &mut g
            .cells
            .iter()
            .flatten()
            .flatten()
            .map(|c| text_w(&c.text))
            .chain(g.cols.iter().map(|c| text_w(c))),
    )
    .max(24.0)
        + 10.0;
    let ch = 20.0;
    let lw = 24.0 + widest(&mut g.rows.iter().map(|r| text_w(r))) + 10.0;
    let top = 58.0;
    let bottom = top + ch * g.rows.len() as f64;
    let bar_w = (cw * g.cols.len() as f64).max(220.0);
    let w = (lw + cw * g.cols.len() as f64)
        .max(lw + bar_w)
        .max(text_w(&g.title) * 1.2 + 8.0)
        .max(lw + text_w(&g.legend))
        + 12.0;
    let h = bottom + 56.0;
    let mut s = open(w, h, &g.title);
    let grid_w = cw * g.cols.len() as f64;
    let _ = write!(
        s,
        r#"<text x="{:.1}" y="34" class="axis axis-label" text-anchor="middle">{}</text><text transform="translate(14,{:.1}) rotate(-90)" class="axis axis-label" text-anchor="middle">{}</text>"#,
        lw + grid_w / 2.0,
        esc(&g.col_title),
        (top + bottom) / 2.0,
        esc(&g.row_title)
    );
    for (j, c) in g.cols.iter().enumerate() {
        let _ = write!(
            s,
            r#"<text x="{:.1}" y="50" class="axis" text-anchor="middle">{}</text>"#,
            lw + cw * (j as f64 + 0.5),
            esc(c)
        );
    }
    for (i, (name, row)) in g.rows.iter().zip(&g.cells).enumerate() {
        let y = top + ch * i as f64;
        let _ = write!(
            s,
            r#"<text x="{:.1}" y="{:.1}" class="axis" text-anchor="end">{}</text>"#,
            lw - 6.0,
            y + 14.0,
            esc(name)
        );
        for (j, cell) in row.iter().enumerate() {
            let Some(c) = cell else { continue };
            let fill = g.scale.colour_at(g.scale.at(c.value));
            let x = lw + cw * j as f64;
            let _ = write!(
                s,
                r#"<g class="cell"><title>{}</title><rect x="{x:.1}" y="{y:.1}" width="{:.1}" height="{:.1}" fill="{}" stroke="white"/><text x="{:.1}" y="{:.1}" class="axis" text-anchor="middle" style="fill:{}">{}</text></g>"#,
                esc(&c.hover),
                cw,
                ch,
                rgb(fill),
                x + cw / 2.0,
                y + 14.0,
                ink(fill),
                esc(&c.text)
            );
        }
    }
    legend(&mut s, g, lw, bottom + 10.0, bar_w);
    s.push_str("</svg>");
    s
}

/// The colour bar under the grid, its round ticks (labels that would touch the one before are
/// left out) and its title.
fn legend(s: &mut String, g: &HeatGrid, x0: f64, y0: f64, bar_w: f64) {
    let steps = 48;
    let step_w = bar_w / steps as f64;
    for k in 0..steps {
        let t = (k as f64 + 0.5) / steps as f64;
        let _ = write!(
            s,
            r#"<rect x="{:.2}" y="{y0:.1}" width="{:.2}" height="10" fill="{}"/>"#,
            x0 + step_w * k as f64,
            step_w + 0.3,
            rgb(g.scale.colour_at(t))
        );
    }
    let mut last_end = f64::MIN;
    for (t, label) in g.scale.ticks() {
        let x = x0 + t * bar_w;
        let half = text_w(&label) / 2.0;
        let x = x.clamp(x0 + half, x0 + bar_w - half);
        if x - half < last_end + 6.0 {
            continue;
        }
        let _ = write!(
            s,
            r##"<line x1="{:.1}" x2="{:.1}" y1="{y0:.1}" y2="{:.1}" stroke="#333"/><text x="{x:.1}" y="{:.1}" class="axis tick" text-anchor="middle">{}</text>"##,
            x0 + t * bar_w,
            x0 + t * bar_w,
            y0 + 13.0,
            y0 + 24.0,
            esc(&label)
        );
        last_end = x + half;
    }
    let _ = write!(
        s,
        r#"<text x="{x0:.1}" y="{:.1}" class="axis axis-label">{}</text>"#,
        y0 + 40.0,
        esc(&g.legend)
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid(scale: Scale, values: &[f64]) -> HeatGrid {
        HeatGrid {
            title: "write on xfs".into(),
            cols: vec!["4K".into(), "8K".into()],
            col_title: "record size".into(),
            rows: vec!["16M".into()],
            row_title: "file size".into(),
            cells: vec![values
                .iter()
                .map(|v| {
                    Some(Cell {
                        value: *v,
                        text: format!("{v}"),
                        hover: format!("cell {v}"),
                    })
                })
                .collect()],
            scale,
            legend: "legend".into(),
        }
    }

    #[test]
    fn rates_darken_as_they_grow_and_ratios_turn_green_above_one() {
        let mib = 1048576.0;
        let rate = Scale::Rate {
            lo: 100.0 * mib,
            hi: 10000.0 * mib,
            unit: RateUnit::MiB,
        };
        let (slow, fast) = (
            rate.colour_at(rate.at(100.0 * mib)),
            rate.colour_at(rate.at(1e4 * mib)),
        );
        assert!(slow.0 > fast.0 && slow.2 > fast.2, "{slow:?} {fast:?}");
        assert!((rate.at(1000.0 * mib) - 0.5).abs() < 1e-9, "log scale");
        let labels: Vec<String> = rate.ticks().into_iter().map(|t| t.1).collect();
        assert_eq!(labels.first().map(String::as_str), Some("100"));
        assert!(labels.contains(&"1,000".to_string()), "{labels:?}");
        let ratio = Scale::Ratio { stops: 2 };
        let up = ratio.colour_at(ratio.at(4.0));
        let down = ratio.colour_at(ratio.at(0.25));
        assert_eq!(ratio.colour_at(ratio.at(1.0)), WHITE);
        assert!(up.1 > up.0 && down.0 > down.1, "{up:?} {down:?}");
        let labels: Vec<String> = ratio.ticks().into_iter().map(|t| t.1).collect();
        assert_eq!(labels, ["0.25", "0.5", "1", "2", "4"]);
    }

    #[test]
    fn the_svg_is_a_labelled_chart_with_hover_and_a_legend() {
        let s = svg(&grid(Scale::Ratio { stops: 1 }, &[0.5, 2.0]));
        assert!(s.starts_with("<svg class=\"chart\""));
        assert!(s.contains("axis-label") && s.contains("record size") && s.contains("file size"));
        assert!(s.contains("<title>cell 0.5</title>") && s.contains(">legend</text>"));
        assert!(
            s.contains("fill=\"rgb(215,48,39)\""),
            "full red at 0.5: {s}"
        );
    }
}
