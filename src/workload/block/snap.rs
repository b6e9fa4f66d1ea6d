//! Snapshots under load (the Btrfs vs ZFS article): `snapshots=RATE` on a block phase takes read-only snapshots
//! of the target at that rate on a thread beside the workers, timing each; `keep=N` deletes the
//! oldest beyond N as it goes, timing each deletion. The phase's records get the count, the
//! creation latency histogram, the space the snapshots held and a per-second series of when
//! they were taken (to line up with the dip in IOPS).

use crate::metrics::name as metric;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::metrics::hist::{self, Hist};
use crate::plan::PlanError;
use crate::provision::snapshot::Snapper;
use crate::store::Phase;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SnapOpts {
    /// Snapshots per second.
    pub rate: f64,
    /// Keep at most this many while the phase runs, deleting the oldest (timed).
    pub keep: Option<usize>,
}

/// `3/s`, `3`, `30/m`, `1/10s`: snapshots per second.
pub fn parse_rate(v: &str) -> Result<f64, PlanError> {
    let bad = || {
        PlanError(format!(
            "snapshots={v}: write a rate such as snapshots=3/s (per second), 30/m or 1/10s"
        ))
    };
    let (n, per) = v.trim().split_once('/').unwrap_or((v.trim(), "s"));
    let n: f64 = n.trim().parse().map_err(|_| bad())?;
    let per = match per.trim() {
        "s" | "sec" => 1.0,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        other => crate::plan::fio::values::parse_duration(other)
            .map_err(|_| bad())?
            .as_secs_f64(),
    };
    let rate = n / per;
    if !(rate.is_finite() && rate > 0.0 && rate <= 100.0) {
        return Err(PlanError(format!(
            "snapshots={v}: the rate must be above 0 and at most 100 per second"
        )));
    }
    Ok(rate)
}

/// Takes `snapshots=` and `keep=` out of a block workload's options (the rest are fio's).
pub fn take_options(
    params: &mut Vec<(String, Option<String>)>,
) -> Result<Option<SnapOpts>, PlanError> {
    let mut rate = None;
    let mut keep = None;
    let mut rest = Vec::new();
    for (k, v) in params.drain(..) {
        let value = || v.clone().unwrap_or_default();
        match k.as_str() {
            "snapshots" => rate = Some(parse_rate(&value())?),
            "keep" => {
                let v = value();
                keep = Some(
                    v.trim()
                        .parse::<usize>()
                        .ok()
                        .filter(|&n| n > 0)
                        .ok_or_else(|| {
                            PlanError(format!(
                                "keep={v}: give how many snapshots to keep, e.g. keep=10"
                            ))
                        })?,
                )
            }
            _ => rest.push((k, v)),
        }
    }
    *params = rest;
    match (rate, keep) {
        (None, Some(_)) => Err(PlanError(
            "keep= only goes with snapshots=RATE (e.g. snapshots=3/s,keep=10)".into(),
        )),
        (None, None) => Ok(None),
        (Some(rate), keep) => Ok(Some(SnapOpts { rate, keep })),
    }
}

/// What one phase's snapshotting measured.
#[derive(Debug)]
pub struct SnapRun {
    pub taken: u64,
    pub deleted: u64,
    pub lat: Hist,
    pub delete_lat: Hist,
    /// Seconds from the start line at which each snapshot was taken.
    pub at: Vec<f64>,
    pub secs: f64,
    pub error: Option<String>,
}

impl Default for SnapRun {
    fn default() -> SnapRun {
        SnapRun {
            taken: 0,
            deleted: 0,
            lat: hist::new(),
            delete_lat: hist::new(),
            at: Vec::new(),
            secs: 0.0,
            error: None,
        }
    }
}

fn ns(d: Duration) -> u64 {
    d.as_nanos().min(u64::MAX as u128) as u64
}

/// Takes snapshots at `opts.rate` until `done` (the workers have ended) or a snapshot fails.
pub fn run(snapper: &Mutex<Snapper>, opts: SnapOpts, tag: &str, done: &AtomicBool) -> SnapRun {
    let mut r = SnapRun::default();
    let period = Duration::from_secs_f64(1.0 / opts.rate);
    let t0 = Instant::now();
    let mut next = t0 + period;
    let mut s = snapper.lock().unwrap_or_else(|e| e.into_inner());
    while !done.load(Ordering::Acquire) && crate::stop::requested().is_none() {
        let now = Instant::now();
        if now < next {
            std::thread::sleep((next - now).min(Duration::from_millis(20)));
            continue;
        }
        // A late snapshot starts at once; the schedule does not catch up with a burst.
        next = (next + period).max(now);
        let name = format!("{tag}-{:05}", r.taken + 1);
        match s.take(&name) {
            Ok(d) => {
                let _ = r.lat.record(ns(d).max(1));
                r.taken += 1;
                r.at.push(now.duration_since(t0).as_secs_f64());
            }
            Err(e) => {
                r.error = Some(format!(
                    "snapshot {} failed after {:.1} s: {e}",
                    r.taken + 1,
                    t0.elapsed().as_secs_f64()
                ));
                break;
            }
        }
        if opts.keep.is_some_and(|k| s.count() > k) {
            match s.delete_oldest() {
                Some(Ok(d)) => {
                    let _ = r.delete_lat.record(ns(d).max(1));
                    r.deleted += 1;
                }
                Some(Err(e)) => {
                    r.error = Some(format!("deleting an old snapshot failed: {e}"));
                    break;
                }
                None => {}
            }
        }
    }
    r.secs = t0.elapsed().as_secs_f64();
    r
}

/// Adds a phase's snapshot figures to its records; `space` is what the snapshots held.
pub fn decorate(p: &mut Phase, r: &SnapRun, opts: SnapOpts, space: Option<u64>, how: &str) {
    let mut put = |k: &str, v: f64| {
        p.metrics.insert(k.to_string(), v);
    };
    put(metric::SNAPSHOTS_TAKEN, r.taken as f64);
    put(metric::SNAPSHOTS_PER_SEC, r.taken as f64 / r.secs.max(1e-9));
    if let Some(b) = space {
        put(metric::SNAPSHOT_SPACE_BYTES, b as f64);
    }
    if r.taken > 0 {
        hist::summarize(&r.lat, "snapshot_lat", &mut p.metrics);
        p.histograms
            .insert("snapshot_lat_ns".into(), hist::encode(&r.lat));
    }
    if r.deleted > 0 {
        p.metrics
            .insert(metric::SNAPSHOTS_DELETED.into(), r.deleted as f64);
        hist::summarize(&r.delete_lat, "snapshot_delete_lat", &mut p.metrics);
    }
    let mut per_sec: BTreeMap<usize, f64> = BTreeMap::new();
    for t in &r.at {
        *per_sec.entry(*t as usize).or_default() += 1.0;
    }
    let len = per_sec
        .keys()
        .last()
        .map_or(0, |k| k + 1)
        .max(r.secs as usize);
    p.series.insert(
        "snapshots".into(),
        (0..len)
            .map(|i| per_sec.get(&i).copied().unwrap_or(0.0))
            .collect(),
    );
    p.notes.push(format!(
        "snapshots: {} taken at {:.2}/s while the phase ran ({how}; latency includes starting the command)",
        r.taken,
        r.taken as f64 / r.secs.max(1e-9)
    ));
    let achieved = r.taken as f64 / r.secs.max(1e-9);
    if r.secs >= 2.0 / opts.rate && achieved < 0.9 * opts.rate {
        p.notes.push(crate::store::note::make(
            crate::store::note::Kind::Short,
            format!(
                "snapshots asked for {:.2}/s, achieved {achieved:.2}/s: a snapshot took longer than the period (p50 {})",
                opts.rate,
                crate::plan::units::format_ns(r.lat.value_at_quantile(0.5) as f64)
            ),
        ));
    }
    if let Some(e) = &r.error {
        if p.error.is_none() {
            p.error = Some(e.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_parse_and_bad_ones_are_named() {
        assert_eq!(parse_rate("3/s").unwrap(), 3.0);
        assert_eq!(parse_rate("3").unwrap(), 3.0);
        assert_eq!(parse_rate("30/m").unwrap(), 0.5);
        assert!((parse_rate("1/10s").unwrap() - 0.1).abs() < 1e-12);
        assert!(parse_rate("fast").unwrap_err().0.contains("snapshots=fast"));
        assert!(parse_rate("0/s").is_err());
        let kv = |k: &str, v: Option<&str>| (k.to_string(), v.map(str::to_string));
        let mut p = vec![
            kv("snapshots", Some("2/s")),
            kv("keep", Some("5")),
            kv("bs", Some("4k")),
            kv("time_based", None),
        ];
        let o = take_options(&mut p).unwrap().unwrap();
        assert_eq!((o.rate, o.keep), (2.0, Some(5)));
        assert_eq!(p, vec![kv("bs", Some("4k")), kv("time_based", None)]);
        let mut k = vec![kv("keep", Some("5"))];
        assert!(take_options(&mut k).is_err());
        let mut bare = vec![kv("snapshots", None)];
        let e = take_options(&mut bare).unwrap_err().0;
        assert!(e.contains("snapshots=3/s"), "{e}");
    }
}
