//! Latency over time, from the records' interval histograms (`latency.hlog`): percentiles per
//! interval for the HTML's charts, the spikes the warnings name, and the `hlog` export (one
//! interval log of every record, tagged target/workload/test/repeat, that HdrHistogram's own
//! log tools read). Pure.

use crate::store::hlog;
use crate::store::{Outcome, Record};

/// The percentiles drawn and checked, with their names.
pub(crate) const QUANTILES: [(f64, &str); 5] = [
    (0.5, "p50"),
    (0.9, "p90"),
    (0.99, "p99"),
    (0.999, "p99.9"),
    (1.0, "max"),
];

/// An interval's p99 above this many times the median interval's p99 is a spike.
const SPIKE: f64 = 10.0;
/// Fewer operations than this in an interval say too little of its tail to call it a spike.
const SPIKE_MIN_OPS: u64 = 10;

/// One interval's figures.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Point {
    /// Its start, in seconds from the record's first interval, and its length.
    pub(crate) at_s: f64,
    pub(crate) length_s: f64,
    pub(crate) ops: u64,
    /// Latency in ns at each of `QUANTILES` (None in an interval with no operation).
    pub(crate) ns: [Option<f64>; 5],
}

/// A record's latency over time: one point per interval.
pub(crate) fn points(r: &Record) -> Option<(f64, Vec<Point>)> {
    let log = r.latency_log.as_ref().filter(|l| !l.lines.is_empty())?;
    let t0 = log.lines[0].start_s;
    let pts = log
        .lines
        .iter()
        .map(|l| {
            let h = l.decode().ok().filter(|h| !h.is_empty());
            Point {
                at_s: l.start_s - t0,
                length_s: l.length_s,
                ops: h.as_ref().map_or(0, |h| h.len()),
                ns: QUANTILES.map(|(q, _)| {
                    h.as_ref().map(|h| {
                        if q >= 1.0 {
                            h.max() as f64
                        } else {
                            h.value_at_quantile(q) as f64
                        }
                    })
                }),
            }
        })
        .collect();
    Some((log.interval_s, pts))
}

/// The starts of the intervals whose p99 is more than 10 times the median interval's p99
/// (intervals with few operations, or a short last one, are not judged).
pub(crate) fn spikes(width_s: f64, pts: &[Point]) -> Vec<f64> {
    let judged: Vec<&Point> = pts
        .iter()
        .filter(|p| p.ops >= SPIKE_MIN_OPS && p.length_s >= width_s / 2.0)
        .collect();
    let mut p99: Vec<f64> = judged.iter().filter_map(|p| p.ns[2]).collect();
    if p99.len() < 3 {
        return Vec::new();
    }
    p99.sort_by(f64::total_cmp);
    let median = p99[p99.len() / 2];
    judged
        .iter()
        .filter(|p| p.ns[2].is_some_and(|v| v > SPIKE * median))
        .map(|p| p.at_s)
        .collect()
}

/// "12 s, 27 s": interval starts as the warning says them.
fn times(at: &[f64]) -> String {
    let shown: Vec<String> = at.iter().take(6).map(|t| format!("{t:.0} s")).collect();
    let more = at.len().saturating_sub(6);
    if more > 0 {
        format!("{} and {more} more", shown.join(", "))
    } else {
        shown.join(", ")
    }
}

/// One grouped warning for every phase whose latency spiked: its text and the phases.
pub(crate) fn warning(records: &[Record]) -> Option<(String, Vec<String>)> {
    let mut details = Vec::new();
    for r in records.iter().filter(|r| r.outcome == Outcome::Ok) {
        let Some((width, pts)) = points(r) else {
            continue;
        };
        let at = spikes(width, &pts);
        if !at.is_empty() {
            details.push(format!(
                "{} {} (repeat {}): latency spikes at {}",
                r.target,
                r.test,
                r.repeat + 1,
                times(&at)
            ));
        }
    }
    (!details.is_empty()).then(|| (format!(
            "{} phase(s) had an interval whose p99 latency was more than {SPIKE:.0}x the median interval's (write-back storms, garbage collection, a pool's commits): see the latency over time in the HTML report, or `fsbench report DIR --format hlog`; the list is in report.md",
            details.len()
        ), details))
}

/// Every record's intervals as one interval log, each record's lines tagged
/// `target/workload/test/rREPEAT` (made unique when a merge repeats one).
pub(crate) fn hlog_text(records: &[Record]) -> String {
    let logs: Vec<(&Record, &crate::store::LatencyLog)> = records
        .iter()
        .filter_map(|r| Some(r).zip(r.latency_log.as_ref()))
        .filter(|(_, l)| !l.lines.is_empty())
        .collect();
    let start = logs
        .iter()
        .map(|(_, l)| l.lines[0].start_s)
        .fold(f64::MAX, f64::min);
    let mut out = hlog::header(
        if logs.is_empty() { 0.0 } else { start },
        "fsbench latency over time: one tag per record (target/workload/test/repeat)",
    );
    if logs.is_empty() {
        out.push_str("#[no record of this study has latency over time]\n");
    }
    let mut seen = std::collections::BTreeSet::new();
    for (r, l) in logs {
        let base = hlog::clean_tag(&format!(
            "{}/{}/{}/r{}",
            r.target,
            r.workload,
            r.test,
            r.repeat + 1
        ));
        let mut tag = base.clone();
        let mut k = 2;
        while !seen.insert(tag.clone()) {
            tag = format!("{base}.{k}");
            k += 1;
        }
        out.push_str(&l.text(&tag));
    }
    out
}

#[cfg(test)]
mod tests;
