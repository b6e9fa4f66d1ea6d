//! The HTML report: one self-contained file (no network, no external script, style or font), with
//! charts drawn as inline SVG: grouped bars with 95% confidence intervals, the ratio heat-map,
//! latency CDFs (from the stored HdrHistograms), per-second throughput lines and the files
//! workload's degradation trend. Pure: records in, text out.

use std::fmt::Write as _;

use super::summary::{fmt_value, Row};
use super::svg;
use super::views::{self, View};
use super::warnings::Warning;
use crate::store::{Outcome, Record};

pub(super) fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
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

/// How a test's chart shows it, as CrystalDiskMark and seed 002 do: sequential block tests in
/// MB/s, random ones in IOPS, the files workload in files/s. (metric, axis unit).
fn shown_as(
    rows: &[Row],
    records: &[Record],
    w: &str,
    t: &str,
) -> Option<(&'static str, &'static str)> {
    let has = |m: &str| {
        rows.iter()
            .any(|r| r.workload == w && r.test == t && r.metric == m)
    };
    if has("files_per_sec") {
        return Some(("files_per_sec", "files/s"));
    }
    if has("iops") {
        let rw = records
            .iter()
            .find(|r| r.workload == w && r.test == t)
            .and_then(|r| r.config.as_ref())
            .and_then(|c| c.get("rw"))
            .and_then(|v| v.as_str())
            .map(str::to_string);
        let random = match rw {
            Some(rw) => rw.starts_with("rand"),
            None => !t.to_ascii_uppercase().starts_with("SEQ"),
        };
        return Some(if random || !has("bytes_per_sec") {
            ("iops", "IOPS")
        } else {
            ("bytes_per_sec", "MB/s")
        });
    }
    has("bytes_per_sec").then_some(("bytes_per_sec", "MB/s"))
}

/// 1. One small chart per test, each target a bar with its 95% interval, in the test's unit.
fn bar_charts(rows: &[Row], records: &[Record], targets: &[String], body: &mut String) {
    let mut tests: Vec<(&str, &str)> = Vec::new();
    for r in rows {
        if !tests.contains(&(r.workload.as_str(), r.test.as_str())) {
            tests.push((&r.workload, &r.test));
        }
    }
    let mut charts = String::new();
    for (w, t) in tests {
        let Some((metric, unit)) = shown_as(rows, records, w, t) else {
            continue;
        };
        let scale = if metric == "bytes_per_sec" { 1e-6 } else { 1.0 };
        let bars: Vec<svg::Bar> = rows
            .iter()
            .filter(|r| r.workload == w && r.test == t && r.metric == metric)
            .map(|r| svg::Bar {
                label: r.target.clone(),
                color: targets.iter().position(|x| x == &r.target).unwrap_or(0),
                mean: r.summary.mean * scale,
                lo: r.summary.ci_lo * scale,
                hi: r.summary.ci_hi * scale,
                text: fmt_value(metric, r.summary.mean),
            })
            .collect();
        charts.push_str(&svg::hbars(&test_name(w, t), unit, &bars));
    }
    if !charts.is_empty() {
        let _ = write!(
            body,
            "<h2>Per test (centre and 95% interval over repeats)</h2><div class=\"charts\">{charts}</div>"
        );
    }
}

/// 2. The ratio matrix as a heat-map, each cell's interval and p-value on hover.
fn heatmap(rows: &[Row], v: &View) -> String {
    let cols: Vec<String> = v.header.iter().skip(1).cloned().collect();
    // The rows with a ratio, under the matrix's names for them (named once, not per cell).
    let named: Vec<(String, &Row)> = rows
        .iter()
        .filter(|r| r.ratio.is_some())
        .map(|r| (views::row_name(r), r))
        .collect();
    let mut out = Vec::new();
    for line in &v.rows {
        let name = line[0].clone();
        let cells = cols
            .iter()
            .enumerate()
            .map(|(j, target)| {
                let text = line.get(j + 1).cloned().unwrap_or_default();
                let row = named
                    .iter()
                    .find(|(n, r)| &r.target == target && *n == name)
                    .map(|x| x.1);
                let hover = match row {
                    Some(r) => format!(
                        "{target}, {name}: ratio {:.3}{}{}",
                        r.ratio.unwrap_or(1.0),
                        r.ratio_ci
                            .map(|(lo, hi)| format!(", 95% CI {lo:.3} .. {hi:.3}"))
                            .unwrap_or_default(),
                        r.p_value
                            .map(|p| format!(", p = {p:.3}"))
                            .unwrap_or_default()
                    ),
                    None => format!("{target}, {name}: {text}"),
                };
                svg::HeatCell {
                    ratio: text.trim_end_matches('*').parse().ok(),
                    text,
                    hover,
                }
            })
            .collect();
        out.push((name, cells));
    }
    svg::heatmap(&v.title, &cols, &out)
}

/// Latency CDFs from the histograms (first repeat of each target): latency on a log axis, the
/// share of I/Os on the nines scale with p50, p99 and p99.9 marked.
fn cdf_charts(records: &[Record], body: &mut String) {
    let mut cdfs: Vec<(String, Vec<svg::Series>)> = Vec::new();
    for r in records.iter().filter(|r| r.outcome == Outcome::Ok) {
        let Some(enc) = r.histograms.get("lat_ns") else {
            continue;
        };
        let Ok(h) = crate::metrics::hist::decode(enc) else {
            continue;
        };
        let name = test_name(&r.workload, &r.test);
        // Quantiles evenly spaced on the nines scale, up to 99.99%.
        let pts: Vec<(f64, f64)> = (0..=80)
            .map(|i| {
                let q = 1.0 - 10f64.powf(-(i as f64) / 20.0);
                (h.value_at_quantile(q) as f64, q)
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
            "{}",
            svg::lines(
                &format!("{name}: completion latency"),
                svg::Axis::LogNs("latency (log scale)"),
                svg::Axis::Nines,
                series
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
    let mut per_sec: Vec<(String, String, Vec<svg::Series>)> = Vec::new();
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
    for (name, key, series) in &mut per_sec {
        let files = key == "files_per_sec";
        if !files {
            for (_, p) in series.iter_mut() {
                p.iter_mut().for_each(|xy| xy.1 /= 1e6);
            }
        }
        let _ = write!(
            body,
            "{}",
            svg::lines(
                &if files {
                    format!("{name}: files/s as the tree grows (seed 003's degradation curve)")
                } else {
                    format!("{name}: throughput per second")
                },
                svg::Axis::Linear(if files { "files done" } else { "second" }),
                svg::Axis::Linear(if files { "files/s" } else { "MB/s" }),
                series
            )
        );
    }
}

/// The warnings: each line, with the figures it concerns in a collapsed details element.
fn warnings_html(warnings: &[Warning]) -> String {
    if warnings.is_empty() {
        return String::new();
    }
    let mut w = String::from("<details class=\"warn\"><summary>");
    let _ = write!(
        w,
        "{} warning(s): what to know before trusting the figures</summary><ul>",
        warnings.len()
    );
    for x in warnings {
        let _ = write!(w, "<li>{}", esc(&x.text));
        if !x.details.is_empty() {
            let _ = write!(
                w,
                "<details><summary>the {} figures</summary><ul>",
                x.details.len()
            );
            for d in &x.details {
                let _ = write!(w, "<li>{}</li>", esc(d));
            }
            w.push_str("</ul></details>");
        }
        w.push_str("</li>");
    }
    w.push_str("</ul></details>");
    w
}

/// The page's own check, run by the browser test: texts of a chart that overlap each other,
/// charts that overlap, and charts without an axis label.
const CHECK_SCRIPT: &str = r#"
(function () {
  const charts = Array.from(document.querySelectorAll('svg.chart'));
  const hit = (a, b) => Math.min(a.right, b.right) - Math.max(a.left, b.left) > 0.5 &&
    Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 0.5;
  const found = [];
  for (const c of charts) {
    const texts = Array.from(c.querySelectorAll('text')).filter(t => t.textContent.trim() !== '');
    const boxes = texts.map(t => t.getBoundingClientRect());
    for (let i = 0; i < boxes.length; i++)
      for (let j = i + 1; j < boxes.length; j++)
        if (hit(boxes[i], boxes[j])) found.push(texts[i].textContent + ' / ' + texts[j].textContent);
  }
  const cb = charts.map(c => c.getBoundingClientRect());
  for (let i = 0; i < cb.length; i++)
    for (let j = i + 1; j < cb.length; j++)
      if (hit(cb[i], cb[j])) found.push('chart ' + i + ' / chart ' + j);
  const unlabelled = charts.filter(c => !c.querySelector('.axis-label')).length;
  document.body.dataset.charts = String(charts.length);
  document.body.dataset.overlaps = String(found.length);
  document.body.dataset.overlapList = found.slice(0, 5).join(' | ');
  document.body.dataset.unlabelled = String(unlabelled);
  document.body.dataset.external = String(performance.getEntriesByType('resource').length);
  document.body.dataset.ready = '1';
})();
"#;

pub fn render(
    title: &str,
    records: &[Record],
    rows: &[Row],
    views: &[View],
    baseline: &str,
    warnings: &[Warning],
    iozone: &str,
) -> String {
    let mut targets: Vec<String> = Vec::new();
    for r in rows {
        if !targets.contains(&r.target) {
            targets.push(r.target.clone());
        }
    }
    let mut body = String::new();
    // The answer first: the ratio heat-map, then a chart per test, then the tables.
    for v in views.iter().filter(|v| v.title.starts_with("Ratio to")) {
        body.push_str(&heatmap(rows, v));
    }
    bar_charts(rows, records, &targets, &mut body);
    for v in views {
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
    let mut curves = String::new();
    cdf_charts(&generic, &mut curves);
    series_charts(&generic, &mut curves);
    if !curves.is_empty() {
        let _ = write!(body, "<h2>Latency and throughput over time</h2>{curves}");
    }
    format!(
        r#"<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{t}</title>
<style>
body{{font-family:sans-serif;margin:2em;max-width:1200px;color:#222}}
h1{{font-size:1.5em}} h2{{font-size:1.1em;margin-top:2em}}
table{{border-collapse:collapse;font-size:.85em}} td,th{{border:1px solid #ccc;padding:3px 6px;text-align:right}}
td:first-child,th:first-child{{text-align:left}} .note{{color:#555;font-size:.85em}}
svg.chart{{display:block;margin:.5em 0}} .charts{{display:flex;flex-wrap:wrap;gap:1em}}
svg .title{{font-size:13px;font-weight:bold}} svg .axis{{font-size:11px;fill:#333}}
svg line.grid{{stroke:#e5e5e5}} svg .err{{stroke:#000;stroke-width:1.2;fill:none}}
svg .guide{{stroke:#999;stroke-dasharray:4 3}} svg .guide-label{{fill:#666}}
details.warn{{color:#8a4b00;margin:1em 0}} details.warn summary{{cursor:pointer}}
</style></head>
<body><h1>{t}</h1>
<p class="note">Baseline: {b}. Figures are geometric means over repeats with 95% confidence intervals computed on the log scale (Student t), so no interval of a positive figure reaches below zero; ratios and Welch's test use the same logs. Hover a bar or a heat-map cell for its interval. Generated by fsbench {v}; this file needs no network.</p>
{warn}{body}
<script>{CHECK_SCRIPT}</script>
</body></html>
"#,
        t = esc(title),
        b = esc(baseline),
        v = env!("CARGO_PKG_VERSION"),
        warn = warnings_html(warnings),
    )
}
