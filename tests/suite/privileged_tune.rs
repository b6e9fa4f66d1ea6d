//! `fsbench tune` on targets it mounts (root; the machine's loop devices and pools): a tune on
//! tmpfs stops at its budget, resumes after a SIGKILL and reports its race (terminal, JSON); and
//! on real filesystems it finds the answers known in advance: btrfs nodatacow beats datacow on
//! 4K random overwrites, ZFS recordsize=4k beats 128k on 4K random writes.

use crate::cli_tune::{tune, tune_json, NULL_JOB};
use crate::common::*;

use std::path::Path;
use std::time::{Duration, Instant};

#[test]
fn a_tune_stops_at_its_budget_and_reports_its_race() {
    if skip(!is_root(), "tmpfs targets need root") {
        return;
    }
    let _g = serial();
    let wd = workdir();
    let out = wd.path().join("t");
    let o = tune(&[
        "tmpfs:label={a,b,c}",
        "--workload",
        NULL_JOB,
        "--budget",
        "1s",
        "--max-repeat",
        "5",
        "--out",
        out.to_str().unwrap(),
        "--workdir",
        wd.path().to_str().unwrap(),
        "-q",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("the budget"), "{}", stderr(&o));
    let term = stdout(&o);
    assert!(
        term.contains("Tune: iops (higher is better), 1 round, 3 trials"),
        "{term}"
    );
    assert!(term.contains("Tune verdict:"), "{term}");
    let t = tune_json(&out);
    assert_eq!(t["trials"], 3, "{t}");
    assert_eq!(t["candidates"].as_array().unwrap().len(), 3);
    for c in t["candidates"].as_array().unwrap() {
        for key in [
            "label",
            "mean",
            "ci_lo",
            "ci_hi",
            "trials",
            "dropped_round",
            "dropped_why",
        ] {
            assert!(c.get(key).is_some(), "{key} missing: {c}");
        }
    }
    assert!(t["winner"].is_string(), "{t}");
    no_leftovers(wd.path());
}

#[test]
fn a_killed_tune_resumes_where_it_stopped() {
    if skip(!is_root(), "tmpfs targets need root") {
        return;
    }
    let _g = serial();
    let wd = workdir();
    let out = wd.path().join("t");
    let job = "block:rw=randread,bs=4k,iodepth=8,size=16m,runtime=600ms,ioengine=null";
    let mut child = bin()
        .args([
            "tune",
            "tmpfs:label={a,b}",
            "--workload",
            job,
            "--max-repeat",
            "3",
            "--tie",
            "0.1%",
            "--out",
            out.to_str().unwrap(),
            "--workdir",
            wd.path().to_str().unwrap(),
            "-q",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Killed once round 1 is written, during round 2.
    wait_for_records(&out.join("results.jsonl"), 2, 60);
    std::thread::sleep(Duration::from_millis(300));
    let _ = child.kill();
    let _ = child.wait();
    let o = tune(&["--resume", out.to_str().unwrap(), "-q"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let recs = records_of(&out);
    let mut seen = std::collections::BTreeSet::new();
    for r in &recs {
        let key = (
            r["target"].as_str().unwrap().to_string(),
            r["repeat"].as_u64().unwrap(),
        );
        assert!(seen.insert(key.clone()), "{key:?} measured twice");
    }
    // Two alike candidates are never tied within 0.1%: the race runs its 3 rounds undecided,
    // unless the noise lets one drop the other first.
    let t = tune_json(&out);
    let ended = t["ended"].as_str().unwrap();
    assert!(
        (t["rounds"] == 3 && ended.starts_with("undecided after 3 rounds"))
            || ended == "one candidate stands",
        "{t}"
    );
    let trials: u64 = t["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["trials"].as_u64().unwrap())
        .sum();
    assert_eq!(trials as usize, recs.len(), "{t}");
    no_leftovers(wd.path());
}

/// A real tune on two candidates; returns the winner and the JSON.
fn race(wd: &Path, spec: &str, job: &str, size: &str) -> (String, serde_json::Value) {
    let out = wd.join("t");
    let t0 = Instant::now();
    let o = tune(&[
        spec,
        "--workload",
        job,
        "--max-repeat",
        "4",
        "--size",
        size,
        "--out",
        out.to_str().unwrap(),
        "--workdir",
        wd.to_str().unwrap(),
        "-q",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    eprintln!(
        "{spec}: {:.0} s\n{}",
        t0.elapsed().as_secs_f64(),
        stdout(&o)
    );
    let t = tune_json(&out);
    (t["winner"].as_str().unwrap_or("").to_string(), t)
}

#[test]
fn nodatacow_wins_4k_random_overwrites_on_btrfs() {
    if needs("btrfs", "mkfs.btrfs") {
        return;
    }
    let _g = serial();
    let wd = workdir();
    // In-place 4K overwrites of a laid-out file, synced: datacow writes each block anew (and its
    // checksums and metadata), nodatacow overwrites in place.
    let job = "block:rw=randwrite,bs=4k,size=256m,runtime=3,direct=1,fsync=8";
    let (winner, t) = race(wd.path(), "btrfs:{-,nodatacow}", job, "1G");
    assert_eq!(winner, "btrfs:nodatacow", "{t}");
    no_leftovers(wd.path());
}

#[test]
fn recordsize_4k_wins_4k_random_writes_on_zfs() {
    if needs_zfs() {
        return;
    }
    let _g = serial();
    let daemon_before = zfs_fuse_running();
    let wd = workdir();
    // A 4K write into a 128K record rewrites the whole record (read, modify, checksum, write).
    let job = "block:rw=randwrite,bs=4k,size=256m,runtime=3,fsync=8";
    let (winner, t) = race(wd.path(), "zfs:recordsize={4k,128k}", job, "1G");
    assert_eq!(winner, "zfs:recordsize=4k", "{t}");
    no_leftovers(wd.path());
    daemon_as_before(daemon_before);
}
