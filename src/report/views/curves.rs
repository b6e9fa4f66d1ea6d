//! The HTML page's curves: latency CDFs from the stored HdrHistograms (latency on a log axis,
//! the share of I/Os on the nines scale), per-second throughput lines, each followed by its
//! latency over time per target (p50, p99 and p99.9 per interval, and a heat-map of every
//! percentile per interval, from `latency.hlog`), and the files workload's degradation trend
//! (files/s as the tree grows); the first repeat of each target. Claims no records: it draws
//! every measured record that has a histogram, a series or a latency log. Pure.

use crate::metrics::name as metric;
use crate::report::overtime;
use crate::report::records::test_name;
use crate::report::svg;
use crate::report::view::{Body, Charts, Section, Shown, Study, WorkloadView};
use crate::store::{Outcome, Record};

pub(crate) struct Curves;

impl WorkloadView for Curves {
    fn claims(&self, _workload: &str) -> bool {
        false
    }

    fn sections(&self, _mine: &[&Record], study: &Study) -> Vec<Section> {
        let mut svgs = Vec::new();
        cdf_charts(study.measured, &mut svgs);
        series_charts(study.measured, &mut svgs);
        if svgs.is_empty() {
            return Vec::new();
        }
        vec![Section {
            title: "Latency and throughput over time".into(),
            shown: Shown::HTML,
            body: Body::Charts(Charts {
                svgs,
                row: false,
                lead: false,
            }),
        }]
    }
}

/// Latency CDFs from the histograms (first repeat of each target): latency on a log axis, the
/// share of I/Os on the nines scale with p50, p99 and p99.9 marked.
fn cdf_charts(records: &[Record], body: &mut Vec<String>) {
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
        body.push(svg::lines(
            &format!("{name}: completion latency"),
            svg::Axis::LogNs("latency (log scale)"),
            svg::Axis::Nines,
            series,
        ));
    }
}

/// The (x, y) points of a record's per-second series, or its files trend; with the metric.
fn series_points(r: &Record) -> Option<(&'static str, Vec<(f64, f64)>)> {
    let (key, xk) = if r.series.contains_key("files_done") {
        (metric::FILES_PER_SEC, Some("files_done"))
    } else if r.series.contains_key(metric::BYTES_PER_SEC) {
        (metric::BYTES_PER_SEC, None)
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

/// A test's latency over time on each target (first repeat): p50, p99 and p99.9 per interval as
/// lines on a log axis, and every percentile per interval as a heat-map.
fn over_time_charts(records: &[Record], name: &str, body: &mut Vec<String>) {
    let mut seen: Vec<&str> = Vec::new();
    for r in records.iter().filter(|r| r.outcome == Outcome::Ok) {
        if test_name(&r.workload, &r.test) != name || seen.contains(&r.target.as_str()) {
            continue;
        }
        let Some((_, pts)) = overtime::points(r) else {
            continue;
        };
        seen.push(&r.target);
        let at: Vec<f64> = pts.iter().map(|p| p.at_s).collect();
        let line = |k: usize| -> svg::Series {
            let xy = pts
                .iter()
                .filter_map(|p| p.ns[k].map(|v| (p.at_s, v)))
                .collect();
            (overtime::QUANTILES[k].1.to_string(), xy)
        };
        body.push(svg::lines(
            &format!("{name} on {}: latency over time", r.target),
            svg::Axis::Linear("second"),
            svg::Axis::LogNs("latency per interval (log scale)"),
            &[line(0), line(2), line(3)],
        ));
        let rows: Vec<(String, Vec<Option<f64>>)> = overtime::QUANTILES
            .iter()
            .enumerate()
            .rev()
            .map(|(k, (_, q))| (q.to_string(), pts.iter().map(|p| p.ns[k]).collect()))
            .collect();
        body.push(svg::time_heatmap(
            &format!("{name} on {}: latency percentiles per interval", r.target),
            &at,
            &rows,
        ));
    }
}

/// Per-second throughput, each followed by its latency over time, and the files trend (first
/// repeat of each target); then the latency over time of tests without a series.
fn series_charts(records: &[Record], body: &mut Vec<String>) {
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
        let files = key == metric::FILES_PER_SEC;
        if !files {
            for (_, p) in series.iter_mut() {
                p.iter_mut().for_each(|xy| xy.1 /= 1e6);
            }
        }
        body.push(svg::lines(
            &if files {
                format!("{name}: files/s as the tree grows (the billion-files study's degradation curve)")
            } else {
                format!("{name}: throughput per second")
            },
            svg::Axis::Linear(if files { "files done" } else { "second" }),
            svg::Axis::Linear(if files { "files/s" } else { "MB/s" }),
            series,
        ));
        over_time_charts(records, name, body);
    }
    let mut rest: Vec<String> = Vec::new();
    for r in records.iter().filter(|r| r.latency_log.is_some()) {
        let name = test_name(&r.workload, &r.test);
        if !per_sec.iter().any(|c| c.0 == name) && !rest.contains(&name) {
            rest.push(name);
        }
    }
    for name in &rest {
        over_time_charts(records, name, body);
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
