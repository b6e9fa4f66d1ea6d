//! The HTML report's charts as inline SVG: round axis ticks (1-2-5 steps), units on every axis,
//! one small horizontal-bar chart per test (labels sized to the longest, so they never overlap),
//! the ratio heat-map with vertical column labels and the interval on hover, and line charts
//! with a log-scale latency axis and percentile guide lines. Pure: numbers in, SVG text out.

use std::fmt::Write as _;

use super::markup::esc;

const PALETTE: &[&str] = &[
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
];

/// Width of a character of the 11 px axis font, generously (labels are laid out with it).
const CHAR_W: f64 = 6.6;

pub(crate) fn color(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

pub(crate) fn text_w(s: &str) -> f64 {
    s.chars().count() as f64 * CHAR_W
}

/// Round ticks from 0 to at least `max`: the finest step of 1, 2 or 5 times a power of ten that
/// needs at most 1.5 x `want` intervals.
pub(crate) fn ticks(max: f64, want: usize) -> Vec<f64> {
    if max <= 0.0 || !max.is_finite() {
        return vec![0.0, 1.0];
    }
    let raw = max / want.max(1) as f64;
    let p = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * p)
        .find(|s| max / s <= want.max(1) as f64 * 1.5)
        .unwrap_or(10.0 * p);
    let n = (max / step - 1e-9).ceil() as usize;
    (0..=n.max(1)).map(|k| k as f64 * step).collect()
}

/// A tick value, short: 500, 2.5k, 40k, 1.2M (the unit is on the axis title).
pub(crate) fn short(v: f64) -> String {
    let a = v.abs();
    let (x, suffix) = if a >= 1e9 {
        (v / 1e9, "G")
    } else if a >= 1e6 {
        (v / 1e6, "M")
    } else if a >= 1e3 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    let t = format!("{x:.1}");
    let t = t.trim_end_matches('0').trim_end_matches('.');
    format!("{t}{suffix}")
}

/// A latency tick: 1 us, 20 us, 5 ms, 1 s.
pub(crate) fn short_ns(ns: f64) -> String {
    let (x, unit) = if ns >= 1e9 {
        (ns / 1e9, "s")
    } else if ns >= 1e6 {
        (ns / 1e6, "ms")
    } else if ns >= 1e3 {
        (ns / 1e3, "us")
    } else {
        (ns, "ns")
    };
    format!("{} {unit}", short(x))
}

pub(crate) fn open(w: f64, h: f64, title: &str) -> String {
    format!(
        r#"<svg class="chart" viewBox="0 0 {w:.0} {h:.0}" width="{w:.0}" height="{h:.0}" role="img" aria-label="{t}"><text x="4" y="16" class="title">{t}</text>"#,
        t = esc(title)
    )
}

/// One bar of a test's chart: the target, its centre and its 95% interval.
pub(crate) struct Bar {
    pub(crate) label: String,
    pub(crate) color: usize,
    pub(crate) mean: f64,
    pub(crate) lo: f64,
    pub(crate) hi: f64,
    /// The value as the tables print it (shown at the bar's end and on hover).
    pub(crate) text: String,
}

/// A small chart for one test: a horizontal bar per target with its interval, labels on the
/// left sized to the longest, x ticks in round steps and the unit as the axis title.
pub(crate) fn hbars(title: &str, unit: &str, bars: &[Bar]) -> String {
    let label_w = bars.iter().map(|b| text_w(&b.label)).fold(40.0, f64::max) + 10.0;
    let value_w = bars.iter().map(|b| text_w(&b.text)).fold(0.0, f64::max) + 12.0;
    let plot_w = 300.0;
    let (top, row) = (26.0, 20.0);
    let w = label_w + plot_w + value_w;
    let h = top + row * bars.len() as f64 + 40.0;
    let max = bars.iter().map(|b| b.hi.max(b.mean)).fold(0.0, f64::max);
    let t = ticks(max, 4);
    let end = *t.last().unwrap_or(&1.0);
    let x = |v: f64| label_w + v / end * plot_w;
    let bottom = top + row * bars.len() as f64;
    let mut s = open(w, h, title);
    for v in &t {
        let _ = write!(
            s,
            r#"<line x1="{x:.1}" x2="{x:.1}" y1="{top}" y2="{bottom}" class="grid"/><text x="{x:.1}" y="{:.1}" class="axis tick" text-anchor="middle">{}</text>"#,
            bottom + 13.0,
            esc(&short(*v)),
            x = x(*v)
        );
    }
    let _ = write!(
        s,
        r#"<text x="{:.1}" y="{:.1}" class="axis axis-label" text-anchor="middle">{}</text>"#,
        label_w + plot_w / 2.0,
        bottom + 30.0,
        esc(unit)
    );
    for (i, b) in bars.iter().enumerate() {
        let y = top + row * i as f64;
        let _ = write!(
            s,
            r#"<text x="{:.1}" y="{:.1}" class="axis" text-anchor="end">{}</text><rect x="{label_w:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="{}"><title>{}: {} (95% CI {} .. {})</title></rect>"#,
            label_w - 6.0,
            y + 14.0,
            esc(&b.label),
            y + 3.0,
            (x(b.mean) - label_w).max(0.5),
            row - 6.0,
            color(b.color),
            esc(&b.label),
            esc(&b.text),
            esc(&short(b.lo)),
            esc(&short(b.hi)),
        );
        if b.hi > b.lo {
            let cy = y + row / 2.0;
            let _ = write!(
                s,
                r#"<path d="M{:.1} {:.1}v6M{:.1} {cy:.1}H{:.1}M{:.1} {:.1}v6" class="err"/>"#,
                x(b.lo),
                cy - 3.0,
                x(b.lo),
                x(b.hi),
                x(b.hi),
                cy - 3.0,
            );
        }
        let _ = write!(
            s,
            r#"<text x="{:.1}" y="{:.1}" class="axis value">{}</text>"#,
            x(b.hi.max(b.mean)) + 5.0,
            y + 14.0,
            esc(&b.text)
        );
    }
    s.push_str("</svg>");
    s
}

/// One cell of the heat-map: the ratio, its mark, and its interval for the hover text.
pub(crate) struct HeatCell {
    pub(crate) ratio: Option<f64>,
    pub(crate) text: String,
    pub(crate) hover: String,
}

/// The ratio matrix as a heat-map (green above 1, red below): tests as rows, targets as columns
/// with their labels written upwards so that long ones never overlap.
pub(crate) fn heatmap(title: &str, cols: &[String], rows: &[(String, Vec<HeatCell>)]) -> String {
    let cw = 64.0;
    let ch = 24.0;
    let lw = rows.iter().map(|r| text_w(&r.0)).fold(60.0, f64::max) + 12.0;
    let head = cols.iter().map(|c| text_w(c)).fold(30.0, f64::max) + 34.0;
    let w = lw + cw * cols.len() as f64 + 10.0;
    let h = head + ch * rows.len() as f64 + 10.0;
    let mut s = open(w, h, title);
    for (j, c) in cols.iter().enumerate() {
        let x = lw + cw * j as f64 + cw / 2.0 + 4.0;
        let _ = write!(
            s,
            r#"<text transform="translate({x:.1},{:.1}) rotate(-90)" class="axis axis-label">{}</text>"#,
            head - 6.0,
            esc(c)
        );
    }
    for (i, (name, cells)) in rows.iter().enumerate() {
        let y = head + ch * i as f64;
        let _ = write!(
            s,
            r#"<text x="4" y="{:.1}" class="axis axis-label">{}</text>"#,
            y + 16.0,
            esc(name)
        );
        for (j, c) in cells.iter().enumerate() {
            let fill = match c.ratio {
                Some(r) => {
                    let k = (r.max(1e-3).log2().clamp(-1.0, 1.0) * 200.0) as i32;
                    if k >= 0 {
                        format!("rgb({},255,{})", 255 - k, 255 - k)
                    } else {
                        format!("rgb(255,{},{})", 255 + k, 255 + k)
                    }
                }
                None => "#f4f4f4".into(),
            };
            let x = lw + cw * j as f64;
            let _ = write!(
                s,
                r#"<g><title>{}</title><rect x="{x:.1}" y="{y:.1}" width="{:.1}" height="{:.1}" fill="{fill}" stroke="white"/><text x="{:.1}" y="{:.1}" class="axis" text-anchor="middle">{}</text></g>"#,
                esc(&c.hover),
                cw - 2.0,
                ch - 2.0,
                x + cw / 2.0,
                y + 16.0,
                esc(&c.text)
            );
        }
    }
    s.push_str("</svg>");
    s
}

/// Latency over time as a heat-map: a column per interval (starting at `at`, in seconds), a row
/// per percentile, the colour the latency on a log scale from light (the fastest) to dark red
/// (the slowest); hovering a cell says its interval and value.
pub(crate) fn time_heatmap(title: &str, at: &[f64], rows: &[(String, Vec<Option<f64>>)]) -> String {
    let (lw, pw, ch, top) = (56.0, 660.0, 18.0, 28.0);
    let n = at.len().max(1);
    let cw = pw / n as f64;
    let vals = rows.iter().flat_map(|r| r.1.iter().flatten().copied());
    let (lo, hi) = vals.fold((f64::MAX, 0.0f64), |(a, b), v| (a.min(v), b.max(v)));
    let (a, b) = (
        lo.max(1.0).log10(),
        hi.max(1.0).log10().max(lo.max(1.0).log10() + 0.1),
    );
    let bottom = top + ch * rows.len() as f64;
    let mut s = open(lw + pw + 20.0, bottom + 62.0, title);
    for (i, (name, cells)) in rows.iter().enumerate() {
        let y = top + ch * i as f64;
        let _ = write!(
            s,
            r#"<text x="{:.1}" y="{:.1}" class="axis" text-anchor="end">{}</text>"#,
            lw - 6.0,
            y + 13.0,
            esc(name)
        );
        for (j, c) in cells.iter().enumerate() {
            let Some(v) = c else { continue };
            let k = ((v.max(1.0).log10() - a) / (b - a)).clamp(0.0, 1.0);
            let rgb = |from: f64, to: f64| from + (to - from) * k;
            let _ = write!(
                s,
                r#"<rect x="{:.2}" y="{y:.1}" width="{:.2}" height="{:.1}" fill="rgb({:.0},{:.0},{:.0})"><title>{}: {} at {:.0} s</title></rect>"#,
                lw + cw * j as f64,
                cw.max(0.5),
                ch - 1.0,
                rgb(255.0, 127.0),
                rgb(245.0, 0.0),
                rgb(235.0, 0.0),
                esc(name),
                esc(&short_ns(*v)),
                at.get(j).copied().unwrap_or(0.0),
            );
        }
    }
    // Seconds along the bottom, in round steps.
    let end = at.last().copied().unwrap_or(0.0) + at.get(1).map_or(1.0, |x| x - at[0]);
    let mut last_end = f64::MIN;
    for t in ticks(end, 6).into_iter().filter(|t| *t <= end) {
        let x = lw + t / end.max(1e-9) * pw;
        let label = short(t);
        if x - text_w(&label) / 2.0 > last_end + 4.0 {
            let _ = write!(
                s,
                r#"<text x="{x:.1}" y="{:.1}" class="axis tick" text-anchor="middle">{}</text>"#,
                bottom + 13.0,
                esc(&label)
            );
            last_end = x + text_w(&label) / 2.0;
        }
    }
    let _ = write!(
        s,
        r#"<text x="{:.1}" y="{:.1}" class="axis axis-label" text-anchor="middle">second</text><text x="{lw:.1}" y="{:.1}" class="axis">light {} .. dark {} (log scale)</text>"#,
        lw + pw / 2.0,
        bottom + 29.0,
        bottom + 48.0,
        esc(&short_ns(lo.min(hi))),
        esc(&short_ns(hi)),
    );
    s.push_str("</svg>");
    s
}

/// A named line of (x, y) points.
pub(crate) type Series = (String, Vec<(f64, f64)>);

/// How a line chart's axis maps and labels its values.
pub(crate) enum Axis<'a> {
    /// From 0, round ticks, labelled with `short` and titled with the unit.
    Linear(&'a str),
    /// Latency on a log scale: ticks at 1, 2 and 5 of each decade (or decades only when the
    /// range is wide), labelled 1 us, 20 us, 5 ms.
    LogNs(&'a str),
    /// A cumulative share on the "nines" scale (0%, 90%, 99%, 99.9%): -log10(1 - q), so the
    /// tail is as readable as the median; guide lines at p50, p99 and p99.9.
    Nines,
}

const NINES_MAX: f64 = 4.0;

fn nines(q: f64) -> f64 {
    (-(1.0 - q).max(1e-4).log10()).min(NINES_MAX)
}

/// Ticks of a log axis over [lo, hi]: 1-2-5 per decade, thinned to decades when too many.
fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let (a, b) = (
        lo.max(1.0).log10().floor() as i32,
        hi.max(1.0).log10().ceil() as i32,
    );
    let mut t = Vec::new();
    let steps: &[f64] = if b - a > 3 { &[1.0] } else { &[1.0, 2.0, 5.0] };
    for e in a..=b {
        for m in steps {
            let v = m * 10f64.powi(e);
            if v >= lo * 0.999 && v <= hi * 1.001 {
                t.push(v);
            }
        }
    }
    if t.len() < 2 {
        t = vec![10f64.powi(a), 10f64.powi(b.max(a + 1))];
    }
    t
}

/// A tick's label on an axis.
fn axis_label(ax: &Axis, v: f64) -> String {
    match ax {
        Axis::Linear(_) => short(v),
        Axis::LogNs(_) => short_ns(v),
        Axis::Nines => {
            let p = format!("{:.2}", v * 100.0);
            format!("{}%", p.trim_end_matches('0').trim_end_matches('.'))
        }
    }
}

/// An axis's title.
fn axis_title(ax: &Axis) -> String {
    match ax {
        Axis::Linear(u) | Axis::LogNs(u) => u.to_string(),
        Axis::Nines => "share of I/Os at or below".into(),
    }
}

/// Lines over shared axes with a legend; `x` and `y` say how each axis maps its values.
pub(crate) fn lines(title: &str, x: Axis, y: Axis, series: &[Series]) -> String {
    let (w, ph) = (760.0, 202.0);
    let (left, right, top) = (64.0, 60.0, 28.0);
    let names: Vec<String> = series.iter().map(|s| s.0.clone()).collect();
    let bottom = 56.0 + 16.0 * legend(&mut String::new(), &names, left, w - 10.0, 0.0) as f64;
    let h = top + ph + bottom;
    let pw = w - left - right;
    let pts = || series.iter().flat_map(|s| s.1.iter());
    let xs = pts().map(|p| p.0).filter(|v| v.is_finite());
    let ys = pts().map(|p| p.1).filter(|v| v.is_finite());
    let (x_lo, x_hi) = xs.fold((f64::MAX, f64::MIN), |(a, b), v| (a.min(v), b.max(v)));
    let (y_lo, y_hi) = ys.fold((f64::MAX, 0.0f64), |(a, b), v| (a.min(v), b.max(v)));
    // Each axis: ticks and a map to [0, 1].
    let frame = |ax: &Axis, lo: f64, hi: f64| -> (Vec<f64>, Box<dyn Fn(f64) -> f64>) {
        match ax {
            Axis::Linear(_) => {
                let t = ticks(hi, 5);
                let end = *t.last().unwrap_or(&1.0);
                (t, Box::new(move |v| v / end))
            }
            Axis::LogNs(_) => {
                let t = log_ticks(lo, hi);
                let a = lo.max(1.0).log10();
                let b = hi.max(1.0).log10().max(a + 0.1);
                (t, Box::new(move |v| (v.max(1.0).log10() - a) / (b - a)))
            }
            Axis::Nines => (
                vec![0.0, 0.9, 0.99, 0.999, 0.9999],
                Box::new(|q| nines(q) / NINES_MAX),
            ),
        }
    };
    let (xt, fx) = frame(&x, x_lo.max(0.0), x_hi);
    // A latency axis starts at the smallest latency; the others at 0.
    let y_lo = if matches!(y, Axis::LogNs(_)) {
        y_lo
    } else {
        0.0
    };
    let (yt, fy) = frame(&y, y_lo, y_hi);
    let px = |v: f64| left + fx(v).clamp(0.0, 1.0) * pw;
    let py = |v: f64| top + ph - fy(v).clamp(0.0, 1.0) * ph;
    let (label, title_of) = (axis_label, axis_title);
    let mut s = open(w, h, title);
    for v in &yt {
        let _ = write!(
            s,
            r#"<line x1="{left}" x2="{:.1}" y1="{y:.1}" y2="{y:.1}" class="grid"/><text x="{:.1}" y="{:.1}" class="axis tick" text-anchor="end">{}</text>"#,
            left + pw,
            left - 4.0,
            py(*v) + 4.0,
            esc(&label(&y, *v)),
            y = py(*v)
        );
    }
    // X tick labels, skipping any that would touch the previous one.
    let mut last_end = f64::MIN;
    for v in &xt {
        let t = label(&x, *v);
        let cx = px(*v);
        let _ = write!(
            s,
            r#"<line x1="{cx:.1}" x2="{cx:.1}" y1="{top}" y2="{:.1}" class="grid"/>"#,
            top + ph
        );
        if cx - text_w(&t) / 2.0 > last_end + 4.0 {
            let _ = write!(
                s,
                r#"<text x="{cx:.1}" y="{:.1}" class="axis tick" text-anchor="middle">{}</text>"#,
                top + ph + 14.0,
                esc(&t)
            );
            last_end = cx + text_w(&t) / 2.0;
        }
    }
    let _ = write!(
        s,
        r#"<text x="{:.1}" y="{:.1}" class="axis axis-label" text-anchor="middle">{}</text><text transform="translate(12,{:.1}) rotate(-90)" class="axis axis-label" text-anchor="middle">{}</text>"#,
        left + pw / 2.0,
        top + ph + 30.0,
        esc(&title_of(&x)),
        top + ph / 2.0,
        esc(&title_of(&y)),
    );
    if matches!(y, Axis::Nines) {
        for (q, name) in [(0.5, "p50"), (0.99, "p99"), (0.999, "p99.9")] {
            let _ = write!(
                s,
                r#"<line x1="{left}" x2="{:.1}" y1="{y:.1}" y2="{y:.1}" class="guide"/><text x="{:.1}" y="{:.1}" class="axis guide-label">{name}</text>"#,
                left + pw,
                left + pw + 4.0,
                py(q) + 4.0,
                y = py(q)
            );
        }
    }
    for (i, (name, p)) in series.iter().enumerate() {
        let d: Vec<String> = p
            .iter()
            .filter(|(a, b)| a.is_finite() && b.is_finite())
            .map(|(a, b)| format!("{:.1},{:.1}", px(*a), py(*b)))
            .collect();
        let _ = write!(
            s,
            r#"<polyline points="{}" fill="none" stroke="{}" stroke-width="2"><title>{}</title></polyline>"#,
            d.join(" "),
            color(i),
            esc(name)
        );
    }
    legend(&mut s, &names, left, w - 10.0, top + ph + 46.0);
    s.push_str("</svg>");
    s
}

/// One candidate of a scatter: its label, its objective (x), its p99 latency (y, ns), and
/// whether it is on the Pareto front.
pub(crate) struct Dot {
    pub(crate) label: String,
    pub(crate) x: f64,
    pub(crate) y: f64,
    pub(crate) front: bool,
}

/// Objective against p99 latency, a point per candidate (filled on the Pareto front, hollow
/// off it, the front joined by a line), named in the legend and on hover, never beside the
/// point (close points would overlap their labels).
pub(crate) fn scatter(title: &str, x_unit: &str, dots: &[Dot]) -> String {
    let (w, ph) = (560.0, 240.0);
    let (left, right, top) = (70.0, 20.0, 28.0);
    let names: Vec<String> = dots
        .iter()
        .map(|d| format!("{}{}", d.label, if d.front { " (front)" } else { "" }))
        .collect();
    let bottom = 56.0 + 16.0 * legend(&mut String::new(), &names, left, w - 10.0, 0.0) as f64;
    let pw = w - left - right;
    let xt = ticks(dots.iter().map(|d| d.x).fold(0.0, f64::max), 5);
    let yt = ticks(dots.iter().map(|d| d.y).fold(0.0, f64::max), 4);
    let (xe, ye) = (*xt.last().unwrap_or(&1.0), *yt.last().unwrap_or(&1.0));
    let px = |v: f64| left + v / xe * pw;
    let py = |v: f64| top + ph - v / ye * ph;
    let mut s = open(w, top + ph + bottom, title);
    for v in &yt {
        let _ = write!(
            s,
            r#"<line x1="{left}" x2="{:.1}" y1="{y:.1}" y2="{y:.1}" class="grid"/><text x="{:.1}" y="{:.1}" class="axis tick" text-anchor="end">{}</text>"#,
            left + pw,
            left - 4.0,
            py(*v) + 4.0,
            esc(&short_ns(*v)),
            y = py(*v)
        );
    }
    for v in &xt {
        let _ = write!(
            s,
            r#"<text x="{:.1}" y="{:.1}" class="axis tick" text-anchor="middle">{}</text>"#,
            px(*v),
            top + ph + 14.0,
            esc(&short(*v))
        );
    }
    let _ = write!(
        s,
        r#"<text x="{:.1}" y="{:.1}" class="axis axis-label" text-anchor="middle">{}</text><text transform="translate(12,{:.1}) rotate(-90)" class="axis axis-label" text-anchor="middle">p99 latency</text>"#,
        left + pw / 2.0,
        top + ph + 30.0,
        esc(x_unit),
        top + ph / 2.0,
    );
    let mut front: Vec<&Dot> = dots.iter().filter(|d| d.front).collect();
    front.sort_by(|a, b| a.x.total_cmp(&b.x));
    if front.len() > 1 {
        let pts: Vec<String> = front
            .iter()
            .map(|d| format!("{:.1},{:.1}", px(d.x), py(d.y)))
            .collect();
        let _ = write!(s, r#"<polyline points="{}" class="guide"/>"#, pts.join(" "));
    }
    for (i, d) in dots.iter().enumerate() {
        let fill = if d.front { color(i) } else { "white" };
        let _ = write!(
            s,
            r#"<circle cx="{:.1}" cy="{:.1}" r="5" fill="{fill}" stroke="{}" stroke-width="2"><title>{}: {} {x_unit}, p99 {}</title></circle>"#,
            px(d.x),
            py(d.y),
            color(i),
            esc(&d.label),
            esc(&short(d.x)),
            esc(&short_ns(d.y)),
        );
    }
    legend(&mut s, &names, left, w - 10.0, top + ph + 46.0);
    s.push_str("</svg>");
    s
}

/// A legend that wraps onto a new line before it would run past `right`; returns its lines.
fn legend(s: &mut String, labels: &[String], left: f64, right: f64, y0: f64) -> usize {
    let mut rows = 1;
    let (mut x, mut y) = (left, y0);
    for (i, l) in labels.iter().enumerate() {
        let need = 18.0 + text_w(l) + 14.0;
        if x > left && x + need > right {
            x = left;
            y += 16.0;
            rows += 1;
        }
        let _ = write!(
            s,
            r#"<rect x="{x:.1}" y="{:.1}" width="12" height="12" fill="{}"/><text x="{:.1}" y="{y:.1}" class="axis">{}</text>"#,
            y - 10.0,
            color(i),
            x + 16.0,
            esc(l)
        );
        x += need;
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_step_by_one_two_or_five() {
        assert_eq!(ticks(87_335.0, 4), vec![0.0, 20e3, 40e3, 60e3, 80e3, 100e3]);
        assert_eq!(ticks(1.0, 4).len(), 6);
        assert_eq!(ticks(2402.5, 4), vec![0.0, 500.0, 1e3, 1.5e3, 2e3, 2.5e3]);
        assert_eq!(ticks(0.0, 4), vec![0.0, 1.0]);
        for max in [3.3, 47.0, 999.0, 12_345.0, 6.1e6] {
            let t = ticks(max, 5);
            let step = t[1];
            let mant = step / 10f64.powf(step.log10().floor());
            assert!(
                [1.0, 2.0, 5.0].iter().any(|m| (m - mant).abs() < 1e-9),
                "{max}: step {step}"
            );
            assert!(*t.last().unwrap() >= max && t.len() <= 9, "{max}: {t:?}");
        }
    }

    #[test]
    fn tick_labels_are_short_and_round() {
        assert_eq!(short(40_000.0), "40k");
        assert_eq!(short(2_500.0), "2.5k");
        assert_eq!(short(1_200_000.0), "1.2M");
        assert_eq!(short(500.0), "500");
        assert_eq!(short(0.5), "0.5");
        assert_eq!(short_ns(20_000.0), "20 us");
        assert_eq!(short_ns(5e6), "5 ms");
    }

    #[test]
    fn log_ticks_are_one_two_five_per_decade_or_decades() {
        assert_eq!(log_ticks(150.0, 900.0), vec![200.0, 500.0]);
        assert_eq!(log_ticks(1e3, 1e5), vec![1e3, 2e3, 5e3, 1e4, 2e4, 5e4, 1e5]);
        assert_eq!(log_ticks(1e3, 1e8), vec![1e3, 1e4, 1e5, 1e6, 1e7, 1e8]);
    }

    #[test]
    fn the_nines_scale_spreads_the_tail() {
        assert!((nines(0.9) - 1.0).abs() < 1e-9 && (nines(0.999) - 3.0).abs() < 1e-9);
        assert_eq!(nines(1.0), NINES_MAX);
    }
}
