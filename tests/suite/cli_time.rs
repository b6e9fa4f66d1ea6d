//! Time as a dimension, through the binary on tmpfs: a job with fio's steadystate that ends early
//! (and its fio JSON), a bad criterion refused with its line and nothing created, a run's latency
//! over time in the HTML (p50/p99/p99.9 per interval and the heat-map), and `report --format
//! hlog` read back with HdrHistogram's own reader: every I/O in exactly one interval.

use crate::common::*;

use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
use hdrhistogram::serialization::Deserializer;

/// A directory on tmpfs (/dev/shm), or None with the reason printed.
fn on_tmpfs() -> Option<tempfile::TempDir> {
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap_or_default();
    let tmpfs = mounts.lines().any(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        f.get(1) == Some(&"/dev/shm") && f.get(2) == Some(&"tmpfs")
    });
    if skip(!tmpfs, "no tmpfs at /dev/shm") {
        return None;
    }
    Some(tempfile::tempdir_in("/dev/shm").unwrap())
}

#[test]
fn a_steady_job_ends_when_its_iops_hold_and_says_so() {
    let Some(d) = on_tmpfs() else { return };
    let job = write(
        d.path(),
        "ss.fio",
        &format!(
            "[steady]\ndirectory={}\nioengine=psync\nrw=randread\nbs=4k\nsize=8m\n\
             time_based\nruntime=60\nsteadystate=iops:60%\nss_dur=2\nss_ramp=1\n",
            d.path().display()
        ),
    );
    let out = d.path().join("study");
    let t = std::time::Instant::now();
    let o = run(&["run", &job, "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        t.elapsed().as_secs() < 30,
        "a 60 s job that is steady after about 3 s ended in {:?}",
        t.elapsed()
    );
    let r = &records_of(&out)[0];
    let m = &r["metrics"];
    assert_eq!(m["steady_reached"], 1.0, "{r}");
    let at = m["steady_at_s"].as_f64().unwrap();
    assert!((3.0..20.0).contains(&at), "{at}");
    assert!(m["runtime_s"].as_f64().unwrap() < at + 2.0, "{m}");
    assert_eq!(r["series"]["steady_iops"].as_array().unwrap().len(), 2);
    assert_eq!(r["config"]["steadystate"]["kind"], "iops");
    assert!(r["notes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|n| n.as_str().unwrap().starts_with("steady: reached at")));
    // fio's JSON carries fio's steadystate object.
    let o = run(&["report", out.to_str().unwrap(), "--format", "fio-json"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let ss = &v["jobs"][0]["steadystate"];
    assert_eq!(ss["ss"], "iops:60.000000%");
    assert_eq!(
        (ss["attained"].as_u64(), ss["duration"].as_u64()),
        (Some(1), Some(2))
    );
    assert_eq!(ss["data"]["iops"].as_array().unwrap().len(), 2);
}

#[test]
fn an_unknown_steady_state_criterion_is_refused_with_its_line_and_nothing_made() {
    let d = workdir();
    let job = write(
        d.path(),
        "bad.fio",
        &format!(
            "[a]\ndirectory={}\nsize=1m\nrw=read\nsteadystate=latency:2%\nss_dur=10\n",
            d.path().display()
        ),
    );
    let out = d.path().join("study");
    let o = run(&["run", &job, "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("bad.fio:5"), "{e}");
    assert!(
        e.contains("unknown criterion 'latency'") && e.contains("iops|iops_slope|bw|bw_slope"),
        "{e}"
    );
    assert!(!out.exists(), "nothing is created");
    assert!(!e.contains("panicked"));
}

#[test]
fn a_runs_latency_over_time_is_charted_and_exported_as_an_hlog() {
    let Some(d) = on_tmpfs() else { return };
    let job = write(
        d.path(),
        "lt.fio",
        &format!(
            "[lt]\ndirectory={}\nioengine=psync\nrw=randread\nbs=4k\nsize=8m\n\
             time_based\nruntime=3\nnumjobs=2\n",
            d.path().display()
        ),
    );
    let out = d.path().join("study");
    let o = run(&[
        "run",
        &job,
        "--out",
        out.to_str().unwrap(),
        "--interval",
        "500ms",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let r = &records_of(&out)[0];
    let ios = r["metrics"]["ios"].as_f64().unwrap() as u64;
    let log = &r["latency_log"];
    assert_eq!(
        (log["file"].as_str(), log["interval_s"].as_f64()),
        (Some("latency.hlog"), Some(0.5))
    );
    let n = log["intervals"].as_u64().unwrap();
    assert!((6..=8).contains(&n), "3 s in 0.5 s intervals: {n}");
    // The record's line stays small: the intervals are in latency.hlog.
    let line = std::fs::read_to_string(out.join("results.jsonl")).unwrap();
    assert!(!line.contains("Tag="));
    // The HTML: p50/p99/p99.9 per interval and the heat-map.
    let o = run(&["report", out.to_str().unwrap(), "--format", "html"]);
    let html = stdout(&o);
    assert!(
        html.contains("lt on local: latency over time"),
        "no over-time chart"
    );
    assert!(html.contains("lt on local: latency percentiles per interval"));
    assert!(html.contains(">p99.9<"));
    // The export, read with HdrHistogram's reader: every I/O lands in exactly one interval.
    let o = run(&["report", out.to_str().unwrap(), "--format", "hlog"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    let (mut counted, mut intervals, mut base) = (0u64, 0u64, None);
    for e in IntervalLogIterator::new(text.as_bytes()) {
        match e.expect("the export reads as an interval log") {
            LogEntry::BaseTime(t) => base = Some(t),
            LogEntry::StartTime(_) => {}
            LogEntry::Interval(i) => {
                assert_eq!(i.tag().unwrap().as_str(), "local/fio/lt/r1");
                let bytes = base64_decode(i.encoded_histogram());
                let h: hdrhistogram::Histogram<u64> = Deserializer::new()
                    .deserialize(&mut std::io::Cursor::new(bytes))
                    .unwrap();
                counted += h.len();
                intervals += 1;
            }
        }
    }
    assert_eq!(base, Some(std::time::Duration::ZERO));
    assert_eq!(intervals, n);
    assert_eq!(counted, ios, "the intervals hold every I/O once");
}

fn base64_decode(s: &str) -> Vec<u8> {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.decode(s).unwrap()
}
