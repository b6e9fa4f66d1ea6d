//! Across ranks: one rank's phase as it travels to rank 0 (`Share`, plain data), and rank 0's
//! reduction of every rank's share into one `Merged`, with IOR's and mdtest's accounting:
//!
//! - counters add and latency histograms add (HdrHistogram add, never averaged percentiles);
//! - a part's window runs from the earliest start of any rank to the latest end of any rank
//!   (bandwidth = all ranks' bytes / (latest end - earliest start));
//! - "first done" is what all ranks had done when the fastest worker of all finished, over the
//!   time from the earliest start to that moment; "last done" is the latest end;
//! - every time is a duration on the rank's own monotonic clock from the end of the barrier
//!   that started the phase, so clock skew between nodes never enters a figure; ranks on one
//!   host (one CLOCK_MONOTONIC) are placed by when each left the barrier, so the barrier's own
//!   skew does not enter either (across hosts the barrier's end is taken as one instant);
//! - each rank's own figures are kept, per part, for the record's `ranks` field, and each
//!   node's (its ranks' work over its earliest start to its latest end) for `nodes`.
//!
//! Nothing here talks to other processes: the transport (`crate::ranks`) hands shares in.

use crate::metrics::name as metric;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{DevIo, FirstDone, Merged, RankTimes, WorkerOut};
use crate::metrics::hist;
use crate::stop::StopReason;
use crate::store::{NodeFigures, RankFigures, WorkFigures};

/// One part (block: one job of the group) of one rank's phase.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct PartShare {
    /// Histograms in HdrHistogram's V2 form (`metrics::hist::encode`).
    pub hists: BTreeMap<String, String>,
    pub counters: BTreeMap<String, f64>,
    pub series: BTreeMap<String, Vec<f64>>,
    /// Latency over time (sparse slices, as the workers' merge keeps them).
    #[serde(default)]
    pub timeline: Option<crate::metrics::timeline::Timeline>,
    pub window_s: f64,
    /// Named intervals, in seconds from this rank's pool start (`super::Span`).
    #[serde(default)]
    pub spans: BTreeMap<String, super::Span>,
    pub how: Vec<String>,
    pub error: Option<String>,
    pub failure: Option<crate::io::Failure>,
    pub stopped: Option<StopReason>,
    /// (ops, bytes) at the end, and when the fastest worker of all ranks finished.
    pub total: (u64, u64),
    pub across: (u64, u64),
}

/// One rank's phase, as rank 0 receives it.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Share {
    pub rank: usize,
    pub host: String,
    /// The node it is on (`ranks::Nodes`: ranks with one processor name).
    #[serde(default)]
    pub node: usize,
    pub parts: Vec<PartShare>,
    pub start_s: f64,
    pub first_s: f64,
    pub end_s: f64,
    /// When this rank left the barrier, on its host's CLOCK_MONOTONIC (0: not known).
    #[serde(default)]
    pub barrier_mono: f64,
    pub wall_s: f64,
    pub workers: usize,
    pub dropped: bool,
    pub cpu: BTreeMap<String, f64>,
    pub cpu_user_ns: u64,
    /// What the device under this rank's target read and wrote.
    pub device: Option<(u64, u64)>,
}

impl Share {
    /// This rank's merged figures, ready to send.
    pub fn of(m: &Merged, rank: usize, host: &str, node: usize) -> Share {
        let f = &m.frame;
        let parts = m
            .parts
            .iter()
            .enumerate()
            .map(|(k, p)| PartShare {
                hists: p
                    .hists
                    .iter()
                    .map(|(n, h)| (n.to_string(), hist::encode(h)))
                    .collect(),
                counters: p
                    .counters
                    .iter()
                    .map(|(n, v)| (n.to_string(), *v))
                    .collect(),
                series: p
                    .series
                    .iter()
                    .map(|(n, v)| (n.to_string(), v.clone()))
                    .collect(),
                timeline: p.timeline.clone(),
                window_s: p.window.as_secs_f64(),
                spans: p.spans.iter().map(|(n, v)| (n.to_string(), *v)).collect(),
                how: p.how.clone(),
                error: p.error.clone(),
                failure: p.failure.clone(),
                stopped: p.stopped,
                total: f.rank.totals.get(k).copied().unwrap_or_default(),
                across: f.rank.across.get(k).copied().unwrap_or_default(),
            })
            .collect();
        Share {
            rank,
            host: host.to_string(),
            node,
            parts,
            start_s: f.rank.start_s,
            first_s: f.rank.first_s,
            end_s: f.rank.end_s,
            barrier_mono: f.rank.barrier_mono,
            wall_s: f.wall.as_secs_f64(),
            workers: f.workers,
            dropped: f.dropped,
            cpu: f.cpu.clone(),
            cpu_user_ns: f.cpu_user_ns,
            device: f.device.map(|d| (d.read_bytes, d.write_bytes)),
        }
    }
}

/// Names travel as text and come back as the `&'static str` keys the frame uses; each distinct
/// name is kept once for the life of the process (a workload has a few dozen).
fn intern(name: &str) -> &'static str {
    static NAMES: Mutex<BTreeSet<&'static str>> = Mutex::new(BTreeSet::new());
    let mut names = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(n) = names.get(name) {
        return n;
    }
    let n: &'static str = Box::leak(name.to_string().into_boxed_str());
    names.insert(n);
    n
}

/// A part of one rank back in the frame's form (a histogram that does not decode is an error),
/// its spans moved `shift` seconds later (from its pool's start to the earliest of all ranks').
fn worker_out(k: usize, p: &PartShare, shift: f64) -> Result<WorkerOut, String> {
    let mut out = WorkerOut {
        part: k,
        window: Duration::from_secs_f64(p.window_s.max(0.0)),
        timeline: p.timeline.clone(),
        how: p.how.clone(),
        error: p.error.clone(),
        failure: p.failure.clone(),
        stopped: p.stopped,
        ..Default::default()
    };
    for (n, text) in &p.hists {
        let h = hist::decode(text).map_err(|e| format!("histogram {n}: {e}"))?;
        out.hists.insert(intern(n), h);
    }
    for (n, v) in &p.counters {
        out.counters.insert(intern(n), *v);
    }
    for (n, v) in &p.series {
        out.series.insert(intern(n), v.clone());
    }
    for (n, v) in &p.spans {
        out.spans.insert(intern(n), v.shift(shift));
    }
    Ok(out)
}

fn rate(n: u64, secs: f64) -> f64 {
    if secs > 0.0 {
        n as f64 / secs
    } else {
        0.0
    }
}

/// Rank 0's reduction: `mine` is its own merged phase (the frame's statvfs readings, start time
/// and sync failure are kept from it), `shares` every rank's share (rank 0's included).
pub fn combine(mine: Merged, mut shares: Vec<Share>) -> Result<Merged, String> {
    shares.sort_by_key(|s| s.rank);
    on_one_clock(&mut shares);
    let n_parts = shares.iter().map(|s| s.parts.len()).max().unwrap_or(0);
    let start = shares.iter().map(|s| s.start_s).fold(f64::MAX, f64::min);
    let start = if start == f64::MAX { 0.0 } else { start };
    let last_end = shares.iter().map(|s| s.end_s).fold(0.0, f64::max);
    let first_end = shares.iter().map(|s| s.first_s).fold(f64::MAX, f64::min);
    let mut frame = mine.frame;
    let mut parts: Vec<WorkerOut> = Vec::new();
    let mut ranks: Vec<Vec<RankFigures>> = Vec::new();
    let mut nodes: Vec<Vec<NodeFigures>> = Vec::new();
    frame.first_done.clear();
    for k in 0..n_parts {
        let (part, fd, figures, per_node) = combine_part(k, &shares, start, first_end)?;
        parts.push(part);
        frame.first_done.push(fd);
        ranks.push(figures);
        nodes.push(per_node);
    }
    frame.last_done_s = (last_end - start).max(0.0);
    frame.wall = Duration::from_secs_f64(shares.iter().map(|s| s.wall_s).fold(0.0, f64::max));
    frame.workers = shares.iter().map(|s| s.workers).sum();
    frame.dropped = shares.iter().all(|s| s.dropped);
    frame.cpu_user_ns = shares.iter().map(|s| s.cpu_user_ns).sum();
    frame.cpu = mean_cpu(&shares);
    frame.device = device_per_host(&shares);
    frame.rank = RankTimes {
        start_s: start,
        first_s: first_end,
        end_s: last_end,
        ..Default::default()
    };
    Ok(Merged {
        parts,
        frame,
        ranks,
        nodes,
    })
}

/// Part `k` of every rank: the merged workers' figures over all ranks' window (the earliest
/// start to the latest end), what each had done when the first rank finished, each rank's
/// figures, and each node's when there are several.
fn combine_part(
    k: usize,
    shares: &[Share],
    start: f64,
    first_end: f64,
) -> Result<(WorkerOut, FirstDone, Vec<RankFigures>, Vec<NodeFigures>), String> {
    let mut part = WorkerOut {
        part: k,
        ..Default::default()
    };
    let mut fd = FirstDone {
        secs: (first_end - start).max(0.0),
        ..Default::default()
    };
    let mut figures = Vec::new();
    let mut per_node: BTreeMap<usize, NodeFigures> = BTreeMap::new();
    let mut end = start;
    for s in shares {
        let Some(p) = s.parts.get(k) else { continue };
        let out =
            worker_out(k, p, s.start_s - start).map_err(|e| format!("rank {}: {e}", s.rank))?;
        part.merge(&out);
        end = end.max(s.start_s + p.window_s);
        fd.ops += p.across.0;
        fd.bytes += p.across.1;
        add_to_node(&mut per_node, s, p);
        figures.push(RankFigures {
            rank: s.rank,
            node: s.node,
            host: s.host.clone(),
            work: WorkFigures {
                start_s: s.start_s,
                end_s: s.end_s,
                ops: p.total.0,
                bytes: p.total.1,
                ops_per_sec: rate(p.total.0, p.window_s),
                bytes_per_sec: rate(p.total.1, p.window_s),
                first_done_ops: p.across.0,
                error: p.error.clone(),
            },
        });
    }
    part.window = Duration::from_secs_f64((end - start).max(0.0));
    // One node's figures are the sum's: kept only when there are several.
    let nodes = match per_node.len() {
        0 | 1 => Vec::new(),
        _ => per_node.into_values().map(node_rates).collect(),
    };
    Ok((part, fd, figures, nodes))
}

/// Ranks of one host read one CLOCK_MONOTONIC: each rank's times move by how much later than
/// its host's first it left the barrier (a barrier's exit is not one instant on a busy host).
fn on_one_clock(shares: &mut [Share]) {
    let mut first: BTreeMap<String, f64> = BTreeMap::new();
    for s in shares.iter().filter(|s| s.barrier_mono > 0.0) {
        let e = first.entry(s.host.clone()).or_insert(s.barrier_mono);
        *e = e.min(s.barrier_mono);
    }
    for s in shares.iter_mut() {
        if let Some(f) = first.get(&s.host).filter(|_| s.barrier_mono > 0.0) {
            let late = s.barrier_mono - f;
            s.start_s += late;
            s.first_s += late;
            s.end_s += late;
        }
    }
}

/// A rank's part added to its node's: work adds up; the node's window runs from its earliest
/// start to its latest end (IOR's accounting, within the node).
fn add_to_node(per_node: &mut BTreeMap<usize, NodeFigures>, s: &Share, p: &PartShare) {
    let n = per_node.entry(s.node).or_insert_with(|| NodeFigures {
        node: s.node,
        host: s.host.clone(),
        ranks: 0,
        work: WorkFigures {
            start_s: f64::MAX,
            ..Default::default()
        },
    });
    n.ranks += 1;
    let w = &mut n.work;
    w.start_s = w.start_s.min(s.start_s);
    w.end_s = w.end_s.max(s.start_s + p.window_s);
    w.ops += p.total.0;
    w.bytes += p.total.1;
    w.first_done_ops += p.across.0;
    if w.error.is_none() {
        w.error.clone_from(&p.error);
    }
}

fn node_rates(mut n: NodeFigures) -> NodeFigures {
    let w = &mut n.work;
    let secs = w.end_s - w.start_s;
    w.ops_per_sec = rate(w.ops, secs);
    w.bytes_per_sec = rate(w.bytes, secs);
    n
}

/// CPU figures are per process (or per host): their mean over the ranks.
fn mean_cpu(shares: &[Share]) -> BTreeMap<String, f64> {
    let mut sum: BTreeMap<String, (f64, usize)> = BTreeMap::new();
    for s in shares {
        for (k, v) in &s.cpu {
            let e = sum.entry(k.clone()).or_insert((0.0, 0));
            e.0 += v;
            e.1 += 1;
        }
    }
    sum.into_iter()
        .map(|(k, (v, n))| (k, v / n as f64))
        .collect()
}

/// Device bytes add over hosts; ranks on one host read the same device's counters, so only the
/// first rank of each host counts.
fn device_per_host(shares: &[Share]) -> Option<DevIo> {
    let mut seen = BTreeSet::new();
    let mut total: Option<DevIo> = None;
    for s in shares {
        let Some((r, w)) = s.device else { continue };
        if !seen.insert(s.host.as_str()) {
            continue;
        }
        let t = total.get_or_insert_with(DevIo::default);
        t.read_bytes += r;
        t.write_bytes += w;
    }
    total
}

/// The figures the record carries about the spread over ranks: min, max and mean of the
/// per-rank rates, and the spread ((max - min) / mean, in percent) of the main one.
pub fn rank_metrics(ranks: &[RankFigures], out: &mut BTreeMap<String, f64>) {
    if ranks.is_empty() {
        return;
    }
    out.insert("ranks".into(), ranks.len() as f64);
    let mut spread = spread_of(
        metric::OPS_PER_SEC,
        ranks.iter().map(|r| r.work.ops_per_sec),
        out,
    );
    if ranks.iter().any(|r| r.work.bytes > 0) {
        spread = spread_of(
            metric::BYTES_PER_SEC,
            ranks.iter().map(|r| r.work.bytes_per_sec),
            out,
        );
    }
    if let Some(s) = spread {
        out.insert(metric::RANK_SPREAD_PCT.into(), s);
    }
}

/// `rank_NAME_{min,max,mean}` of the per-rank values; their spread in percent of the mean.
fn spread_of(
    name: &str,
    v: impl Iterator<Item = f64>,
    out: &mut BTreeMap<String, f64>,
) -> Option<f64> {
    let v: Vec<f64> = v.collect();
    let min = v.iter().copied().fold(f64::MAX, f64::min);
    let max = v.iter().copied().fold(0.0, f64::max);
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    out.insert(format!("rank_{name}_min"), min);
    out.insert(format!("rank_{name}_max"), max);
    out.insert(format!("rank_{name}_mean"), mean);
    (mean > 0.0).then(|| (max - min) / mean * 100.0)
}

#[cfg(test)]
mod tests;
