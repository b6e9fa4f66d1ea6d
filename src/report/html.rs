//! The HTML report: one self-contained file (no network, no external script, style or font), with
//! charts drawn as inline SVG: grouped bars with 95% confidence intervals, the ratio heat-map,
//! latency CDFs (from the stored HdrHistograms), per-second throughput lines and the files
//! workload's degradation trend. Pure: records in, text out.

use std::fmt::Write as _;

use super::summary::{fmt_value, Row};
use super::views::View;
use crate::store::{Outcome, Record};

const PALETTE: &[&str] = &[
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
];

/// One bar: target, mean, CI low, CI high.
type Bar = (String, f64, f64, f64);
/// A test's bars.
type Group = (String, Vec<Bar>);
/// A named line of (x, y) points.
type Line = (String, Vec<(f64, f64)>);

pub(super) fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn color(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// Grouped bars: one group per test, one bar per target, with 95% CI whiskers.
fn bars(title: &str, metric: &str, groups: &[Group], targets: &[String]) -> String {
    let w = 900.0;
    let h = 320.0;
    let (left, bottom, top) = (70.0, 60.0, 30.0);
    let max = groups
        .iter()
        .flat_map(|g| g.1.iter().map(|b| b.3.max(b.1)))
        .fold(0.0f64, f64::max)
        .max(1e-9)
        * 1.1;
    let plot_w = w - left - 20.0;
    let plot_h = h - top - bottom;
    let gw = plot_w / groups.len().max(1) as f64;
    let bw = (gw * 0.8) / targets.len().max(1) as f64;
    let y = |v: f64| top + plot_h - v / max * plot_h;
    let mut s = format!(
        r#"<svg class="chart" viewBox="0 0 {w} {h}" width="{w}" height="{h}" role="img" aria-label="{t}"><text x="{left}" y="18" class="title">{t}</text>"#,
        t = esc(title)
    );
    y_grid(&mut s, left, w - 20.0, max, &y, &|v| fmt_value(metric, v));
    for (gi, (test, bars)) in groups.iter().enumerate() {
        let gx = left + gi as f64 * gw + gw * 0.1;
        for (label, mean, lo, hi) in bars {
            let ti = targets.iter().position(|t| t == label).unwrap_or(0);
            let x = gx + ti as f64 * bw;
            let _ = write!(
                s,
                r#"<rect x="{x:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="{}"><title>{} {}: {}</title></rect>"#,
                y(*mean),
                bw * 0.9,
                (top + plot_h - y(*mean)).max(0.0),
                color(ti),
                esc(label),
                esc(test),
                esc(&fmt_value(metric, *mean))
            );
            if hi > lo {
                let cx = x + bw * 0.45;
                let _ = write!(
                    s,
                    r#"<line x1="{cx:.1}" x2="{cx:.1}" y1="{:.1}" y2="{:.1}" class="err"/><line x1="{:.1}" x2="{:.1}" y1="{:.1}" y2="{:.1}" class="err"/><line x1="{:.1}" x2="{:.1}" y1="{:.1}" y2="{:.1}" class="err"/>"#,
                    y(*lo),
                    y(*hi),
                    cx - 4.0,
                    cx + 4.0,
                    y(*lo),
                    y(*lo),
                    cx - 4.0,
                    cx + 4.0,
                    y(*hi),
                    y(*hi)
                );
            }
        }
        let _ = write!(
            s,
            r#"<text x="{:.1}" y="{:.1}" class="axis" text-anchor="middle">{}</text>"#,
            gx + gw * 0.4,
            top + plot_h + 16.0,
            esc(test)
        );
    }
    legend(&mut s, targets, left, h - 18.0);
    s.push_str("</svg>");
    s
}

/// Five horizontal grid lines from 0 to `max` with their labels; `y` maps a value to a pixel.
fn y_grid(
    s: &mut String,
    left: f64,
    right: f64,
    max: f64,
    y: &dyn Fn(f64) -> f64,
    label: &dyn Fn(f64) -> String,
) {
    for k in 0..=4 {
        let v = max * k as f64 / 4.0;
        let _ = write!(
            s,
            r#"<line x1="{left}" x2="{right}" y1="{y0:.1}" y2="{y0:.1}" class="grid"/><text x="{}" y="{:.1}" class="axis" text-anchor="end">{}</text>"#,
            left - 4.0,
            y(v) + 4.0,
            esc(&label(v)),
            y0 = y(v)
        );
    }
}

/// The entry named `name` of a list of named groups, added empty when missing.
fn group_of<'a, T>(list: &'a mut Vec<(String, Vec<T>)>, name: &str) -> &'a mut Vec<T> {
    let i = match list.iter().position(|g| g.0 == name) {
        Some(i) => i,
        None => {
            list.push((name.to_string(), Vec::new()));
            list.len() - 1
        }
    };
    &mut list[i].1
}

fn legend(s: &mut String, labels: &[String], x0: f64, y0: f64) {
    let mut x = x0;
    for (i, l) in labels.iter().enumerate() {
        let _ = write!(
            s,
            r#"<rect x="{x:.1}" y="{:.1}" width="12" height="12" fill="{}"/><text x="{:.1}" y="{y0:.1}" class="axis">{}</text>"#,
            y0 - 10.0,
            color(i),
            x + 16.0,
            esc(l)
        );
        x += 24.0 + 7.0 * l.len() as f64;
    }
}

/// Lines over a shared x axis: (label, points); log10 x when `log_x`.
fn lines(
    title: &str,
    x_label: &str,
    y_fmt: &dyn Fn(f64) -> String,
    x_fmt: &dyn Fn(f64) -> String,
    series: &[(String, Vec<(f64, f64)>)],
    log_x: bool,
) -> String {
    let w = 900.0;
    let h = 300.0;
    let (left, bottom, top) = (80.0, 50.0, 30.0);
    let tx = |x: f64| if log_x { x.max(1.0).log10() } else { x };
    let pts = series.iter().flat_map(|s| s.1.iter());
    let (mut x0, mut x1, mut y1) = (f64::MAX, f64::MIN, 0.0f64);
    for (x, y) in pts {
        x0 = x0.min(tx(*x));
        x1 = x1.max(tx(*x));
        y1 = y1.max(*y);
    }
    if x0 >= x1 {
        x1 = x0 + 1.0;
    }
    let y1 = y1.max(1e-9) * 1.05;
    let pw = w - left - 20.0;
    let ph = h - top - bottom;
    let px = |x: f64| left + (tx(x) - x0) / (x1 - x0) * pw;
    let py = |y: f64| top + ph - y / y1 * ph;
    let mut s = format!(
        r#"<svg class="chart" viewBox="0 0 {w} {h}" width="{w}" height="{h}" role="img" aria-label="{t}"><text x="{left}" y="18" class="title">{t}</text>"#,
        t = esc(title)
    );
    y_grid(&mut s, left, w - 20.0, y1, &py, y_fmt);
    for k in 0..=4 {
        let xv = x0 + (x1 - x0) * k as f64 / 4.0;
        let xr = if log_x { 10f64.powf(xv) } else { xv };
        let _ = write!(
            s,
            r#"<text x="{:.1}" y="{:.1}" class="axis" text-anchor="middle">{}</text>"#,
            left + pw * k as f64 / 4.0,
            top + ph + 16.0,
            esc(&x_fmt(xr))
        );
    }
    let _ = write!(
        s,
        r#"<text x="{:.1}" y="{:.1}" class="axis" text-anchor="middle">{}</text>"#,
        left + pw / 2.0,
        top + ph + 32.0,
        esc(x_label)
    );
    for (i, (_, p)) in series.iter().enumerate() {
        let d: Vec<String> = p
            .iter()
            .map(|(x, y)| format!("{:.1},{:.1}", px(*x), py(*y)))
            .collect();
        let _ = write!(
            s,
            r#"<polyline points="{}" fill="none" stroke="{}" stroke-width="2"/>"#,
            d.join(" "),
            color(i)
        );
    }
    let labels: Vec<String> = series.iter().map(|s| s.0.clone()).collect();
    legend(&mut s, &labels, left, h - 4.0);
    s.push_str("</svg>");
    s
}

/// The ratio matrix as a heat-map: green above 1, red below.
fn heatmap(v: &View) -> String {
    let cw = 110.0;
    let ch = 26.0;
    let lw = 280.0;
    let w = lw + cw * (v.header.len() - 1) as f64 + 10.0;
    let h = 40.0 + ch * (v.rows.len() + 1) as f64;
    let mut s = format!(
        r#"<svg class="chart" viewBox="0 0 {w} {h}" width="{w}" height="{h}" role="img" aria-label="ratio heat-map"><text x="4" y="18" class="title">{}</text>"#,
        esc(&v.title)
    );
    for (j, t) in v.header.iter().enumerate().skip(1) {
        let _ = write!(
            s,
            r#"<text x="{:.1}" y="44" class="axis" text-anchor="middle">{}</text>"#,
            lw + cw * (j - 1) as f64 + cw / 2.0,
            esc(t)
        );
    }
    for (i, row) in v.rows.iter().enumerate() {
        let y = 52.0 + ch * i as f64;
        let _ = write!(
            s,
            r#"<text x="4" y="{:.1}" class="axis">{}</text>"#,
            y + 17.0,
            esc(&row[0])
        );
        for (j, cell) in row.iter().enumerate().skip(1) {
            let r: f64 = cell.trim_end_matches('*').parse().unwrap_or(1.0);
            let k = (r.max(1e-3).log2().clamp(-1.0, 1.0) * 200.0) as i32;
            let fill = if k >= 0 {
                format!("rgb({},{},{})", 255 - k, 255, 255 - k)
            } else {
                format!("rgb(255,{},{})", 255 + k, 255 + k)
            };
            let x = lw + cw * (j - 1) as f64;
            let _ = write!(
                s,
                r#"<rect x="{x:.1}" y="{y:.1}" width="{:.1}" height="{:.1}" fill="{fill}" stroke="white"/><text x="{:.1}" y="{:.1}" class="axis" text-anchor="middle">{}</text>"#,
                cw - 2.0,
                ch - 2.0,
                x + cw / 2.0,
                y + 17.0,
                esc(cell)
            );
        }
    }
    s.push_str("</svg>");
    s
}

fn table(v: &View) -> String {
    let mut s = format!("<h2>{}</h2><table><tr>", esc(&v.title));
    for h in &v.header {
        let _ = write!(s, "<th>{}</th>", esc(h));
    }
    s.push_str("</tr>");
    for r in &v.rows {
        s.push_str("<tr>");
        for c in r {
            let _ = write!(s, "<td>{}</td>", esc(c));
        }
        s.push_str("</tr>");
    }
    let _ = write!(s, "</table><p class=\"note\">{}</p>", esc(&v.note));
    s
}

fn test_name(w: &str, t: &str) -> String {
    if w == t {
        t.to_string()
    } else {
        format!("{w} {t}")
    }
}

/// 1. Grouped bars of each headline metric, with CIs.
fn bar_charts(rows: &[Row], targets: &[String], body: &mut String) {
    for &metric in crate::metrics::catalog::HEADLINES {
        let mut groups: Vec<Group> = Vec::new();
        for r in rows.iter().filter(|r| r.metric == metric) {
            // bytes_per_sec only where neither iops nor files/s stands for the test.
            if metric == "bytes_per_sec"
                && rows.iter().any(|x| {
                    x.workload == r.workload
                        && x.test == r.test
                        && x.metric != "bytes_per_sec"
                        && crate::metrics::catalog::HEADLINES.contains(&x.metric.as_str())
                })
            {
                continue;
            }
            let name = test_name(&r.workload, &r.test);
            group_of(&mut groups, &name).push((
                r.target.clone(),
                r.summary.mean,
                r.summary.ci_lo,
                r.summary.ci_hi,
            ));
        }
        if !groups.is_empty() {
            let _ = write!(
                body,
                "<h2>{metric} (mean, 95% CI)</h2>{}",
                bars(&format!("{metric} per test"), metric, &groups, targets)
            );
        }
    }
}

/// 3. Latency CDFs from the histograms (first repeat of each target).
fn cdf_charts(records: &[Record], body: &mut String) {
    let mut cdfs: Vec<(String, Vec<Line>)> = Vec::new();
    for r in records.iter().filter(|r| r.outcome == Outcome::Ok) {
        let Some(enc) = r.histograms.get("lat_ns") else {
            continue;
        };
        let Ok(h) = crate::metrics::hist::decode(enc) else {
            continue;
        };
        let name = test_name(&r.workload, &r.test);
        let pts: Vec<(f64, f64)> = (0..=100)
            .map(|i| {
                let q = i as f64 / 100.0;
                (h.value_at_quantile(q) as f64, q * 100.0)
            })
            .collect();
        let lines = group_of(&mut cdfs, &name);
        if !lines.iter().any(|s| s.0 == r.target) {
            lines.push((r.target.clone(), pts));
        }
    }
    for (name, series) in &cdfs {
        let _ = write!(
            body,
            "<h2>Latency CDF: {}</h2>{}",
            esc(name),
            lines(
                &format!("{name}: completion latency (share of I/Os at or below)"),
                "latency (log scale)",
                &|v| format!("{v:.0}%"),
                &|x| crate::plan::units::format_ns(x),
                series,
                true
            )
        );
    }
}

/// The (x, y) points of a record's per-second series, or its files trend; with the metric.
fn series_points(r: &Record) -> Option<(&'static str, Vec<(f64, f64)>)> {
    let (key, xk) = if r.series.contains_key("files_done") {
        ("files_per_sec", Some("files_done"))
    } else if r.series.contains_key("bytes_per_sec") {
        ("bytes_per_sec", None)
    } else {
        return None;
    };
    let ys = &r.series[key];
    if ys.is_empty() {
        return None;
    }
    let pts: Vec<(f64, f64)> = match xk {
        Some(x) => r.series[x]
            .iter()
            .copied()
            .zip(ys.iter().copied())
            .collect(),
        None => ys
            .iter()
            .enumerate()
            .map(|(i, y)| (i as f64 + 1.0, *y))
            .collect(),
    };
    Some((key, pts))
}

/// 4. Per-second throughput and 5. the files trend (first repeat of each target).
fn series_charts(records: &[Record], body: &mut String) {
    let mut per_sec: Vec<(String, String, Vec<Line>)> = Vec::new();
    for r in records.iter().filter(|r| r.outcome == Outcome::Ok) {
        let Some((key, pts)) = series_points(r) else {
            continue;
        };
        let name = test_name(&r.workload, &r.test);
        let entry = match per_sec.iter_mut().find(|c| c.0 == name) {
            Some(e) => e,
            None => {
                per_sec.push((name, key.to_string(), Vec::new()));
                per_sec.last_mut().expect("just pushed")
            }
        };
        if !entry.2.iter().any(|s| s.0 == r.target) {
            entry.2.push((r.target.clone(), pts));
        }
    }
    for (name, key, series) in &per_sec {
        let files = key == "files_per_sec";
        let _ = write!(
            body,
            "<h2>{}: {}</h2>{}",
            esc(name),
            if files {
                "throughput as the tree grows (seed 003's degradation curve)"
            } else {
                "throughput per second"
            },
            lines(
                name,
                if files { "files done" } else { "second" },
                &|v| fmt_value(key, v),
                &|x| format!("{x:.0}"),
                series,
                false
            )
        );
    }
}

pub fn render(
    title: &str,
    records: &[Record],
    rows: &[Row],
    views: &[View],
    baseline: &str,
    warnings: &[String],
    iozone: &str,
) -> String {
    let mut targets: Vec<String> = Vec::new();
    for r in rows {
        if !targets.contains(&r.target) {
            targets.push(r.target.clone());
        }
    }
    let mut body = String::new();
    bar_charts(rows, &targets, &mut body);
    // 2. The ratio heat-map and the tables.
    for v in views {
        if v.title.starts_with("Ratio to") {
            let _ = write!(body, "<h2>Ratio to {}</h2>{}", esc(baseline), heatmap(v));
        }
        body.push_str(&table(v));
    }
    let bon = super::bonnie::text(records);
    if !bon.is_empty() {
        let _ = write!(body, "<h2>bonnie++</h2><pre>{}</pre>", esc(&bon));
    }
    body.push_str(iozone);
    let generic: Vec<Record> = records
        .iter()
        .filter(|r| !super::iozone::is_iozone(r))
        .cloned()
        .collect();
    cdf_charts(&generic, &mut body);
    series_charts(&generic, &mut body);
    let mut warn = String::new();
    if !warnings.is_empty() {
        warn.push_str("<h2>Warnings</h2><ul class=\"warn\">");
        for w in warnings {
            let _ = write!(warn, "<li>{}</li>", esc(w));
        }
        warn.push_str("</ul>");
    }
    format!(
        r#"<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{t}</title>
<style>
body{{font-family:sans-serif;margin:2em;max-width:1100px;color:#222}}
h1{{font-size:1.5em}} h2{{font-size:1.1em;margin-top:2em}}
table{{border-collapse:collapse;font-size:.85em}} td,th{{border:1px solid #ccc;padding:3px 6px;text-align:right}}
td:first-child,th:first-child{{text-align:left}} .note{{color:#555;font-size:.85em}}
svg .title{{font-size:14px;font-weight:bold}} svg .axis{{font-size:11px;fill:#333}}
svg .grid{{stroke:#e5e5e5}} svg .err{{stroke:#000;stroke-width:1.2}}
.warn li{{color:#8a4b00}}
</style></head>
<body><h1>{t}</h1>
<p class="note">Baseline: {b}. Means over repeats with 95% confidence intervals (Student t). Generated by fsbench {v}; this file needs no network.</p>
{warn}{body}
<script>
document.body.dataset.charts = String(document.querySelectorAll('svg.chart').length);
document.body.dataset.external = String(performance.getEntriesByType('resource').length);
document.body.dataset.ready = '1';
</script>
</body></html>
"#,
        t = esc(title),
        b = esc(baseline),
        v = env!("CARGO_PKG_VERSION"),
    )
}
