//! What fio's issuing options add to a block job's figures: fio's trim direction (the trims a
//! worker did, rw=trim and its kin, as counters, metrics: trim_ios, trim_bytes, trim_iops,
//! trim_bytes_per_sec, counted in ios, bytes, iops and bytes_per_sec as fio counts every
//! direction; and the trims' latency histogram when the job also reads or writes), and the
//! queue depth latency_target's search found (latency_qd, the mean over the job's workers).

use std::collections::BTreeMap;

use crate::frame::WorkerOut;
use crate::io::Stats;
use crate::metrics::hist;
use crate::metrics::name as metric;
use crate::plan::dir::Dir;

/// Puts a worker's trims (count, bytes, latencies) and its latency_target depth on its output.
pub fn count(o: &mut WorkerOut, st: &mut Stats) {
    let t = &mut st.tally.dirs[Dir::Trim];
    let (trims, bytes, lat) = (t.ios, t.bytes, std::mem::replace(&mut t.lat, hist::new()));
    if let Some(qd) = st.latency_qd {
        o.counters.insert(metric::LATENCY_QD, qd as f64);
        o.counters.insert("latency_workers", 1.0);
    }
    if trims == 0 {
        return;
    }
    o.counters.insert("trims", trims as f64);
    o.counters.insert(metric::TRIM_BYTES, bytes as f64);
    o.hists.insert("trim_lat", lat);
}

/// Adds the trims and the latency_target depth to a job's metrics (when it has them).
pub fn metrics(p: &WorkerOut, metrics: &mut BTreeMap<String, f64>) {
    let workers = p.counter("latency_workers");
    if workers > 0.0 {
        let qd = p.counter(metric::LATENCY_QD) / workers;
        metrics.insert(metric::LATENCY_QD.into(), qd);
    }
    let (trims, bytes) = (p.counter("trims"), p.counter(metric::TRIM_BYTES));
    if trims == 0.0 {
        return;
    }
    let secs = p.window.as_secs_f64().max(1e-9);
    let mut add = |k: &str, v: f64| *metrics.entry(k.to_string()).or_insert(0.0) += v;
    add("ios", trims);
    add("bytes", bytes);
    add("iops", trims / secs);
    add(metric::BYTES_PER_SEC, bytes / secs);
    add(metric::TRIM_IOS, trims);
    add(metric::TRIM_BYTES, bytes);
    add(metric::TRIM_IOPS, trims / secs);
    add(metric::TRIM_BYTES_PER_SEC, bytes / secs);
    let others = p.counter("reads") + p.counter("writes");
    if let (true, Some(h)) = (others > 0.0, p.hists.get("trim_lat")) {
        hist::summarize(h, "trim_lat", metrics);
    }
}

/// The trims' latency histogram, when the job also reads or writes (otherwise it is `lat_ns`).
pub fn histograms(p: &WorkerOut, out: &mut BTreeMap<String, String>) {
    let others = p.counter("reads") + p.counter("writes");
    if let (true, Some(h)) = (others > 0.0, p.hists.get("trim_lat")) {
        out.insert("trim_lat_ns".into(), hist::encode(h));
    }
}
