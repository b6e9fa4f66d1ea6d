//! fio's engine options through the binary (issue 29 part 5): trims punch holes and are counted
//! as fio's trim direction, cmdprio puts each I/O's priority in the logs and the record's notes,
//! latency_target records the depth it found, and atomic writes are refused with the reason
//! where the file cannot take them.

mod common;
use common::*;

fn record(d: &std::path::Path) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(d.join("s/results.jsonl")).unwrap();
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn trims_priorities_and_the_latency_search_take_effect() {
    let dir = workdir();
    let d = dir.path();
    std::fs::write(
        d.join("e.fio"),
        "[global]\nsize=1m\nbs=64k\n[trim]\nrw=randtrim\n\
         [prio]\nstonewall\nrw=randread\nbs=4k\nioengine=libaio\niodepth=8\nprioclass=3\ncmdprio_percentage=20\ncmdprio_class=1\nwrite_lat_log=p\nlog_prio=1\n\
         [lat]\nstonewall\nrw=randread\nbs=4k\nioengine=libaio\niodepth=16\nlatency_target=1s\nlatency_window=20ms\ntime_based\nruntime=20\n",
    )
    .unwrap();
    let o = bin()
        .current_dir(d)
        .args(["run", "e.fio", "--out", "s"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let recs = record(d);
    let by = |t: &str| recs.iter().find(|r| r["test"] == t).unwrap().clone();
    // 16 holes of 64 KiB: the file keeps its size and holds nothing.
    let trim = by("trim");
    assert_eq!(trim["metrics"]["trim_ios"], 16.0);
    assert_eq!(trim["metrics"]["trim_bytes"], (1 << 20) as f64);
    let f = std::fs::metadata(d.join("trim.0.0")).unwrap();
    use std::os::unix::fs::MetadataExt;
    assert_eq!((f.len(), f.blocks()), (1 << 20, 0));
    // The log's last column is each I/O's priority: realtime for about a fifth, idle else.
    let log = std::fs::read_to_string(d.join("p_lat.2.log")).unwrap();
    let rt = log.lines().filter(|l| l.ends_with("0x2000")).count();
    let idle = log.lines().filter(|l| l.ends_with("0x6000")).count();
    assert_eq!(rt + idle, 256, "{log}");
    assert!((25..80).contains(&rt), "{rt}");
    let notes = by("prio")["notes"].to_string();
    assert!(notes.contains("idle level 0") && notes.contains("20% of reads at realtime"));
    // A 1 s target every depth meets: the search doubles up to iodepth, then the job ends
    // (well before its 20 s).
    let lat = by("lat");
    assert_eq!(lat["metrics"]["latency_qd"], 16.0);
    assert!(lat["duration_s"].as_f64().unwrap() < 10.0);
    let bad = |opts: &str| refused_opts(d, opts);
    assert!(bad("rw=write\natomic=1\nioengine=psync").contains("does not support atomic"));
    assert!(bad("rw=write\natomic=1\nioengine=libaio").contains("direct=1"));
    assert!(bad("rw=read\ncmdprio_percentage=10").contains("io_uring and libaio"));
    assert!(bad("cmdprio_bssplit=4k/50:4k/60").contains("more than 100"));
}
