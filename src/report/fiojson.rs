//! fio's JSON output, both ways: block records written in the shape `fio --output-format=json`
//! prints (jobs[] with read/write/trim, io_bytes, bw, iops, clat_ns/lat_ns with percentiles,
//! usr_cpu/sys_cpu, disk_util), so tools that read fio's JSON read fsbench's; and a fio JSON
//! result read back as records, so an old fio run sits in the same tables as fsbench runs.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use crate::metrics::hist::{self, Hist};
use crate::store::{CloneFigures, CloneLat, Outcome, Record};

/// Does fio's JSON have a job for this record: one with I/O figures (IOPS), a block job's or
/// the aging workload's block phases'.
fn has_io(r: &Record) -> bool {
    r.metrics.contains_key("iops")
}

fn stats(h: Option<&Hist>, with_pct: bool) -> Value {
    let Some(h) = h.filter(|h| !h.is_empty()) else {
        return json!({"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0});
    };
    let mut v = json!({
        "min": h.min(), "max": h.max(), "mean": h.mean(), "stddev": h.stdev(), "N": h.len(),
    });
    if with_pct {
        v["percentile"] = json!(hist::fio_percentiles(h));
    }
    v
}

/// One direction of a record: (ios, bytes, histogram).
fn direction(r: &Record, dir: &str, h: Option<&Hist>) -> Value {
    // Submission and completion latency when the loop timed them apart (the asynchronous
    // engines, asked by slat_percentiles, clat_percentiles or write_lat_log).
    let (slat, clat) = (
        decode(r, &format!("{dir}_slat_ns")),
        decode(r, &format!("{dir}_clat_ns")),
    );
    let m = |k: &str| r.metrics.get(k).copied().unwrap_or(0.0);
    let (ios, bytes) = (m(&format!("{dir}_ios")), m(&format!("{dir}_bytes")));
    let secs = m("runtime_s");
    let bw = if secs > 0.0 { bytes / secs } else { 0.0 };
    let iops = if secs > 0.0 { ios / secs } else { 0.0 };
    let mut v = json!({
        "io_bytes": bytes as u64,
        "io_kbytes": (bytes / 1024.0) as u64,
        "bw_bytes": bw as u64,
        "bw": (bw / 1024.0) as u64,
        "iops": iops,
        "runtime": if ios > 0.0 { (secs * 1000.0).round() as u64 } else { 0 },
        "total_ios": ios as u64,
        "short_ios": 0,
        "drop_ios": 0,
        "slat_ns": stats(slat.as_ref(), false),
        "clat_ns": stats(clat.as_ref().or(h), true),
        "lat_ns": stats(h, false),
    });
    // Per-second samples, when the record's series is all this direction's.
    let series = r.series.get("bytes_per_sec").filter(|s| !s.is_empty());
    if let (Some(s), true) = (series, ios > 0.0 && ios == m("ios")) {
        let kib: Vec<f64> = s.iter().map(|b| b / 1024.0).collect();
        let mean = kib.iter().sum::<f64>() / kib.len() as f64;
        v["bw_min"] = json!(kib.iter().cloned().fold(f64::INFINITY, f64::min) as u64);
        v["bw_max"] = json!(kib.iter().cloned().fold(0.0, f64::max) as u64);
        v["bw_mean"] = json!(mean);
        v["bw_samples"] = json!(kib.len());
        v["bw_agg"] = json!(100.0);
    }
    v
}

/// fio's `steadystate` object of a job that judged steady state: the criterion as fio prints it,
/// the window in seconds, whether it was attained, the last value compared with the limit, the
/// window's largest deviation and slope, and its samples (IOPS, and bandwidth in bytes/s).
fn steadystate(r: &Record) -> Option<Value> {
    let m = |k: &str| r.metrics.get(k).copied();
    let reached = m("steady_reached")?;
    let spec: crate::plan::job::Steady = r
        .config
        .as_ref()
        .and_then(|c| c.get("steadystate"))
        .and_then(|s| serde_json::from_value(s.clone()).ok())?;
    let pct = if spec.pct { "%" } else { "" };
    let ints = |k: &str| -> Vec<u64> {
        r.series
            .get(k)
            .map(|v| v.iter().map(|x| x.round() as u64).collect())
            .unwrap_or_default()
    };
    Some(json!({
        "ss": format!("{}:{:.6}{pct}", spec.kind.name(), spec.limit),
        "duration": spec.window(),
        "attained": u8::from(reached > 0.0),
        "criterion": format!("{:.6}{pct}", m("steady_criterion").unwrap_or(0.0)),
        "max_deviation": m("steady_max_deviation").unwrap_or(0.0),
        "slope": m("steady_slope").unwrap_or(0.0),
        "data": {
            "bw_mean": m("steady_bytes_per_sec").unwrap_or(0.0).round() as u64,
            "iops_mean": m("steady_iops").unwrap_or(0.0).round() as u64,
            "iops": ints("steady_iops"),
            "bw": ints("steady_bytes_per_sec"),
        },
    }))
}

fn decode(r: &Record, name: &str) -> Option<Hist> {
    r.histograms.get(name).and_then(|t| hist::decode(t).ok())
}

/// One record as one of fio's jobs.
fn job(r: &Record, groupid: usize) -> Value {
    let lat = decode(r, "lat_ns");
    let (rh, wh) = (decode(r, "read_lat_ns"), decode(r, "write_lat_ns"));
    let has = |d: &str| r.metrics.get(&format!("{d}_ios")).copied().unwrap_or(0.0) > 0.0;
    let (reads, writes) = (has("read"), has("write"));
    let read_h = if reads && writes {
        rh.as_ref()
    } else {
        lat.as_ref().filter(|_| reads)
    };
    let write_h = if reads && writes {
        wh.as_ref()
    } else {
        lat.as_ref().filter(|_| writes)
    };
    let empty = json!({"io_bytes": 0, "io_kbytes": 0, "bw_bytes": 0, "bw": 0, "iops": 0.0, "runtime": 0, "total_ios": 0, "short_ios": 0, "drop_ios": 0});
    // Trims: their own histogram when the job also read or wrote, else the job's.
    let th = decode(r, "trim_lat_ns");
    let trim_h = th.as_ref().or(lat.as_ref().filter(|_| !reads && !writes));
    let m = |k: &str| r.metrics.get(k).copied().unwrap_or(0.0);
    let options: Map<String, Value> = r
        .config
        .as_ref()
        .and_then(|c| c.as_object())
        .map(|o| {
            o.iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| {
                    let s = match v {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                    (k.clone(), Value::String(s))
                })
                .collect()
        })
        .unwrap_or_default();
    let mut v = json!({
        "jobname": r.test,
        "groupid": groupid,
        "error": if r.outcome == Outcome::Failed { 5 } else { 0 },
        "eta": 0,
        "elapsed": r.duration_s.round() as u64,
        "job options": options,
        "read": direction(r, "read", read_h),
        "write": direction(r, "write", write_h),
        "trim": if has("trim") { direction(r, "trim", trim_h) } else { empty },
        "sync": {"total_ios": 0, "lat_ns": stats(None, false)},
        "job_runtime": job_runtime(r),
        "usr_cpu": m("cpu_user_pct"),
        "sys_cpu": m("cpu_sys_pct"),
        "ctx": 0,
        "majf": 0,
        "minf": 0,
        "fsbench": {"target": r.target, "fs": r.fs, "workload": r.workload, "repeat": r.repeat,
                     "notes": r.notes, "error": r.error,
                     "latency": "fsbench times each I/O from queue to completion (lat_ns); on the asynchronous engines with slat_percentiles, clat_percentiles or write_lat_log it also times the submission apart (slat_ns, and clat_ns from its end), else clat_ns is lat_ns and slat_ns is not measured"},
    });
    if let Some(ss) = steadystate(r) {
        v["steadystate"] = ss;
    }
    v
}

/// fio's job_runtime: the job's runtime in ms; of a job of clones, their runtimes added (as
/// fio's group_reporting adds them).
fn job_runtime(r: &Record) -> u64 {
    if r.clones.is_empty() {
        return (r.metrics.get("runtime_s").copied().unwrap_or(0.0) * 1000.0).round() as u64;
    }
    r.clones
        .iter()
        .map(|c| (c.runtime_s * 1000.0).round() as u64)
        .sum()
}

/// Did the job ask for its clones reported together (fio's group_reporting)?
fn group_reporting(r: &Record) -> bool {
    r.config
        .as_ref()
        .and_then(|c| c.get("group_reporting"))
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

/// One direction of one clone.
fn clone_direction(c: &CloneFigures, ios: u64, bytes: u64, l: &CloneLat) -> Value {
    let secs = c.runtime_s;
    let rate = |x: u64| if secs > 0.0 { x as f64 / secs } else { 0.0 };
    let bw = rate(bytes);
    let lat = |pct: bool| {
        if ios == 0 {
            return stats(None, false);
        }
        let mut v =
            json!({"min": l.min, "max": l.max, "mean": l.mean, "stddev": l.stddev, "N": ios});
        if pct {
            v["percentile"] = json!(l.percentile);
        }
        v
    };
    let mut v = json!({
        "io_bytes": bytes,
        "io_kbytes": bytes / 1024,
        "bw_bytes": bw as u64,
        "bw": (bw / 1024.0) as u64,
        "iops": rate(ios),
        "runtime": if ios > 0 { (secs * 1000.0).round() as u64 } else { 0 },
        "total_ios": ios,
        "short_ios": 0,
        "drop_ios": 0,
        "slat_ns": stats(None, false),
        "clat_ns": lat(true),
        "lat_ns": lat(false),
    });
    // Per-second samples (KiB/s, as fio), when the clone did only this direction.
    if let Some(s) = c
        .bw_per_sec
        .as_ref()
        .filter(|_| ios > 0 && ios == c.read_ios + c.write_ios)
    {
        v["bw_min"] = json!((s.min / 1024.0) as u64);
        v["bw_max"] = json!((s.max / 1024.0) as u64);
        v["bw_mean"] = json!(s.mean / 1024.0);
        v["bw_samples"] = json!(s.samples);
    }
    v
}

/// fio's jobs of a record: one per clone for a job of several workers without group_reporting
/// (each with its own figures, as fio prints them), else one.
fn jobs_of(r: &Record, groupid: usize) -> Vec<Value> {
    let whole = job(r, groupid);
    if r.clones.is_empty() || group_reporting(r) {
        return vec![whole];
    }
    r.clones
        .iter()
        .map(|c| {
            let mut v = whole.clone();
            let (rl, wl) = (c.read_lat_ns.as_ref(), c.write_lat_ns.as_ref());
            v["read"] = clone_direction(c, c.read_ios, c.read_bytes, rl.unwrap_or(&c.lat_ns));
            v["write"] = clone_direction(c, c.write_ios, c.write_bytes, wl.unwrap_or(&c.lat_ns));
            v["job_runtime"] = json!((c.runtime_s * 1000.0).round() as u64);
            v["error"] = json!(if c.error.is_some() { 5 } else { 0 });
            v.as_object_mut().map(|o| o.remove("steadystate"));
            v["fsbench"]["clone"] = json!(c.clone);
            v["fsbench"]["cpu"] = json!("usr_cpu and sys_cpu are the whole job's (all its clones)");
            v
        })
        .collect()
}

/// The block records of a study in fio's JSON shape (one job per record, or per clone of a job
/// of numjobs above 1 without group_reporting, as fio; a group per target and repeat).
pub(crate) fn render(records: &[Record]) -> Value {
    let mut groups: Vec<(String, u32)> = Vec::new();
    let mut jobs = Vec::new();
    let mut disks: BTreeMap<String, (f64, f64)> = BTreeMap::new();
    for r in records
        .iter()
        .filter(|r| has_io(r) && r.outcome != Outcome::Skipped)
    {
        let g = match groups
            .iter()
            .position(|g| g.0 == r.target && g.1 == r.repeat)
        {
            Some(i) => i,
            None => {
                groups.push((r.target.clone(), r.repeat));
                groups.len() - 1
            }
        };
        jobs.extend(jobs_of(r, g));
        if let (Some(rd), Some(wr)) = (
            r.metrics.get("device_read_bytes"),
            r.metrics.get("device_write_bytes"),
        ) {
            let d = disks.entry(r.target.clone()).or_default();
            d.0 += rd;
            d.1 += wr;
        }
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let disk_util: Vec<Value> = disks
        .iter()
        .map(
            |(t, (rd, wr))| json!({"name": t, "read_bytes": *rd as u64, "write_bytes": *wr as u64}),
        )
        .collect();
    json!({
        "fio version": format!("fsbench-{}", env!("CARGO_PKG_VERSION")),
        "timestamp": now,
        "timestamp_ms": now * 1000,
        "time": "",
        "jobs": jobs,
        "disk_util": disk_util,
    })
}

/// A fio JSON result as records of target `label` (one per job), for a study's tables.
pub(crate) fn import(text: &str, label: &str) -> Result<Vec<Record>, String> {
    let v: Value = serde_json::from_str(text).map_err(|e| format!("not JSON fio wrote: {e}"))?;
    let version = v
        .get("fio version")
        .and_then(Value::as_str)
        .ok_or("no \"fio version\": is this `fio --output-format=json` output?")?;
    let jobs = v
        .get("jobs")
        .and_then(Value::as_array)
        .ok_or("no \"jobs\" array: is this `fio --output-format=json` output?")?;
    let started = v
        .get("time")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    jobs.iter()
        .enumerate()
        .map(|(i, j)| import_job(j, i, label, version, &started))
        .collect()
}

fn import_job(
    j: &Value,
    i: usize,
    label: &str,
    version: &str,
    started: &str,
) -> Result<Record, String> {
    let name = j
        .get("jobname")
        .and_then(Value::as_str)
        .ok_or(format!("job {i} has no jobname"))?;
    let num = |d: &Value, k: &str| d.get(k).and_then(Value::as_f64).unwrap_or(0.0);
    let mut metrics = BTreeMap::new();
    let (mut ios, mut bytes, mut runtime_ms) = (0.0, 0.0, 0.0f64);
    let mut lat_mean = Vec::new();
    for dir in ["read", "write"] {
        let Some(d) = j.get(dir) else { continue };
        let (n, b) = (num(d, "total_ios"), num(d, "io_bytes"));
        metrics.insert(format!("{dir}_ios"), n);
        metrics.insert(format!("{dir}_bytes"), b);
        metrics.insert(format!("{dir}_iops"), num(d, "iops"));
        metrics.insert(format!("{dir}_bytes_per_sec"), num(d, "bw_bytes"));
        ios += n;
        bytes += b;
        runtime_ms = runtime_ms.max(num(d, "runtime"));
        if n > 0.0 {
            let clat = d.get("lat_ns").or_else(|| d.get("clat_ns"));
            if let Some(c) = clat {
                lat_mean.push((n, num(c, "mean"), num(c, "min"), num(c, "max")));
            }
            if let Some(p) = d.get("clat_ns").and_then(|c| c.get("percentile")) {
                for (q, k) in [
                    ("50.000000", "p50"),
                    ("90.000000", "p90"),
                    ("99.000000", "p99"),
                    ("99.900000", "p999"),
                ] {
                    if let Some(x) = p.get(q).and_then(Value::as_f64) {
                        let key = format!("{dir}_lat_{k}_ns");
                        metrics.insert(key, x);
                    }
                }
            }
        }
    }
    let secs = runtime_ms / 1000.0;
    metrics.insert("ios".into(), ios);
    metrics.insert("bytes".into(), bytes);
    metrics.insert("runtime_s".into(), secs);
    if secs > 0.0 {
        metrics.insert("iops".into(), ios / secs);
        metrics.insert("bytes_per_sec".into(), bytes / secs);
    }
    if ios > 0.0 && !lat_mean.is_empty() {
        let mean = lat_mean.iter().map(|(n, m, _, _)| n * m).sum::<f64>() / ios;
        metrics.insert("lat_mean_ns".into(), mean);
        let min = lat_mean.iter().map(|x| x.2).fold(f64::INFINITY, f64::min);
        metrics.insert("lat_min_ns".into(), min);
        metrics.insert(
            "lat_max_ns".into(),
            lat_mean.iter().map(|x| x.3).fold(0.0, f64::max),
        );
    }
    // One direction: its percentiles are the job's.
    let dirs: Vec<&str> = ["read", "write"]
        .into_iter()
        .filter(|d| metrics.get(&format!("{d}_ios")).copied().unwrap_or(0.0) > 0.0)
        .collect();
    if let [d] = dirs.as_slice() {
        for k in ["p50", "p90", "p99", "p999"] {
            if let Some(x) = metrics.get(&format!("{d}_lat_{k}_ns")).copied() {
                metrics.insert(format!("lat_{k}_ns"), x);
            }
        }
    }
    metrics.insert("cpu_user_pct".into(), num(j, "usr_cpu"));
    metrics.insert("cpu_sys_pct".into(), num(j, "sys_cpu"));
    if let Some(ss) = j.get("steadystate") {
        let data = ss.get("data").cloned().unwrap_or(json!({}));
        metrics.insert("steady_reached".into(), num(ss, "attained"));
        metrics.insert("steady_window_s".into(), num(ss, "duration"));
        metrics.insert("steady_iops".into(), num(&data, "iops_mean"));
        metrics.insert("steady_bytes_per_sec".into(), num(&data, "bw_mean"));
    }
    let error = num(j, "error");
    let options = j.get("job options").cloned().unwrap_or(json!({}));
    let config = json!({"imported_from": version, "job options": options});
    Ok(Record {
        schema: crate::store::SCHEMA_VERSION,
        target: label.to_string(),
        fs: "fio-import".into(),
        workload: "fio".into(),
        test: name.to_string(),
        repeat: 0,
        started_at: started.to_string(),
        duration_s: num(j, "elapsed"),
        outcome: if error != 0.0 { Outcome::Failed } else { Outcome::Ok },
        reason: None,
        error: (error != 0.0).then(|| format!("fio reported error {error}")),
        metrics,
        notes: vec![format!("imported from {version} JSON: latency percentiles are fio's clat (fio's bins), not fsbench's histogram")],
        histograms: BTreeMap::new(),
        series: BTreeMap::new(),
        latency_log: None,
        config: Some(config),
        failure: None,
        ranks: Vec::new(),
        nodes: Vec::new(),
        clones: Vec::new(),
        limiter: None,
        evidence: None,
        profile: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIO: &str = include_str!("../../tests/fixtures/fio-3.33-null.json");

    #[test]
    fn a_fio_result_imports_and_renders_back_in_fios_shape() {
        let recs = import(FIO, "old-fio").unwrap();
        assert_eq!(recs.len(), 1);
        let r = &recs[0];
        assert_eq!((r.target.as_str(), r.test.as_str()), ("old-fio", "randrw"));
        let v: Value = serde_json::from_str(FIO).unwrap();
        let read = &v["jobs"][0]["read"];
        assert_eq!(r.metrics["read_bytes"], read["io_bytes"].as_f64().unwrap());
        assert_eq!(
            r.metrics["read_ios"] + r.metrics["write_ios"],
            r.metrics["ios"]
        );
        assert!(r.metrics["iops"] > 0.0 && r.metrics.contains_key("read_lat_p99_ns"));
        // Out again: fio's keys, the same figures.
        let out = render(&recs);
        let j = &out["jobs"][0];
        assert_eq!(j["jobname"], "randrw");
        assert_eq!(j["read"]["io_bytes"], read["io_bytes"]);
        assert_eq!(j["read"]["total_ios"], read["total_ios"]);
        assert!(out["fio version"].as_str().unwrap().starts_with("fsbench-"));
        assert!(import("{}", "x").unwrap_err().contains("fio version"));
        assert!(import("nope", "x").unwrap_err().contains("not JSON"));
    }

    #[test]
    fn a_job_of_clones_is_a_fio_job_per_clone_unless_grouped() {
        let mut r = import(FIO, "x").unwrap().remove(0);
        let clone = |i: u32, ios: u64| CloneFigures {
            clone: i,
            read_ios: ios,
            read_bytes: ios * 4096,
            runtime_s: 0.5,
            ..Default::default()
        };
        r.clones = vec![clone(0, 100), clone(1, 300)];
        r.clones[1].write_ios = 10;
        r.clones[0].bw_per_sec = Some(crate::store::CloneBw {
            min: 1024.0,
            max: 4096.0,
            mean: 2048.0,
            samples: 2,
        });
        r.clones[1].read_lat_ns = Some(CloneLat {
            min: 7,
            ..Default::default()
        });
        r.clones[1].write_lat_ns = Some(CloneLat::default());
        let jobs = |r: &Record| render(std::slice::from_ref(r))["jobs"].clone();
        let split = jobs(&r);
        assert_eq!(split.as_array().unwrap().len(), 2);
        assert_eq!(split[1]["read"]["io_bytes"], 300 * 4096);
        assert_eq!(split[1]["read"]["iops"], 600.0);
        assert_eq!(split[0]["job_runtime"], 500);
        assert_eq!(
            split[1]["read"]["clat_ns"]["min"], 7,
            "a mixed clone's reads apart"
        );
        assert_eq!(split[1]["write"]["clat_ns"]["N"], 10);
        assert_eq!(
            (
                split[0]["read"]["bw_max"].clone(),
                split[0]["read"]["bw_samples"].clone()
            ),
            (json!(4), json!(2))
        );
        assert!(
            split[1]["read"].get("bw_samples").is_none(),
            "a mixed clone's seconds are both directions'"
        );
        r.config = Some(json!({"group_reporting": true}));
        let merged = jobs(&r);
        assert_eq!(merged.as_array().unwrap().len(), 1);
        assert_eq!(
            merged[0]["job_runtime"], 1000,
            "the clones' runtimes added, as fio"
        );
    }
}
