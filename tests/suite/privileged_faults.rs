//! Privileged tier, failing disks and full filesystems (issue 15, parts 2 and 5): fsbench's own
//! fault device (FUSE, served by fsbench) under a real loop device under a real filesystem.

use crate::common::*;

fn faults_unsupported() -> bool {
    needs("ext4", "mkfs.ext4")
        || skip(
            !std::path::Path::new("/dev/fuse").exists(),
            "needs /dev/fuse",
        )
}

/// Nothing of the run left: loop devices, mounts, images, and no fault device mounted.
fn no_fault_leftovers(wd: &std::path::Path) {
    no_leftovers(wd);
    assert!(
        !mounts_text().contains("fsbench-faultdev"),
        "{}",
        mounts_text()
    );
}

/// The study's one failed record.
fn failed_record(recs: &[serde_json::Value]) -> &serde_json::Value {
    recs.iter()
        .find(|r| r["outcome"] == "failed")
        .unwrap_or_else(|| panic!("no failed record: {recs:?}"))
}

#[test]
fn the_fsync_experiment_records_what_ext4_and_xfs_do() {
    if faults_unsupported() || needs("xfs", "mkfs.xfs") {
        return;
    }
    let _g = serial();
    let wd = workdir();
    let out = wd.path().join("fsync");
    let o = run(&[
        "audit",
        "ext4",
        "xfs",
        "--case",
        "fsync",
        "--size",
        "512M",
        "-q",
        "--out",
        out.to_str().unwrap(),
        "--workdir",
        wd.path().to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let recs = records_of(&out);
    assert_eq!(recs.len(), 2, "{recs:?}");
    for r in &recs {
        assert_eq!(r["test"], "fsync");
        assert_eq!(r["outcome"], "ok", "{r}");
        let m = &r["metrics"];
        // The first fsync on a failing disk must fail: the device refused the writes.
        assert_eq!(m["first_fsync_errno"], 5.0, "{r}");
        assert!(m["device_failed_writes"].as_f64().unwrap() >= 1.0, "{r}");
        // Exactly one class for each read.
        for prefix in ["cached", "device"] {
            let n: f64 = ["new", "old", "mixed", "other", "failed"]
                .iter()
                .map(|c| m[format!("{prefix}_{c}")].as_f64().unwrap())
                .sum();
            assert_eq!(n, 1.0, "{prefix}: {r}");
        }
        // The write never reached the disk: after a remount it cannot read back as new.
        assert_eq!(m["device_new"], 0.0, "{r}");
        assert_eq!(m["mounts_again"], 1.0, "{r}");
    }
    let term = stdout(&o);
    assert!(
        term.contains("fsync failure") && term.contains("read after remount"),
        "{term}"
    );
    no_fault_leftovers(wd.path());
}

#[test]
fn a_disk_that_fails_mid_job_fails_the_phase_with_the_offset() {
    if faults_unsupported() {
        return;
    }
    let _g = serial();
    let wd = workdir();
    // The first workload lays out and writes within the budget; the second runs out of it.
    let (o, out) = run_study(
        wd.path(),
        "failing",
        &["ext4:fail_writes_after=200M"],
        &[
            "smoke:size=16M",
            "block:rw=write,bs=1M,size=128M,direct=1",
            "block:rw=read,bs=1M,size=16M",
        ],
        "512M",
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let recs = records_of(&out);
    let smoke: Vec<_> = recs
        .iter()
        .filter(|r| r["workload"].as_str().unwrap().starts_with("smoke"))
        .collect();
    assert!(
        !smoke.is_empty() && smoke.iter().all(|r| r["outcome"] == "ok"),
        "{recs:?}"
    );
    let failed = failed_record(&recs);
    let f = &failed["failure"];
    assert_eq!(f["errno"], "EIO", "{failed}");
    assert!(f["op"] == "write" || f["op"] == "fsync", "{failed}");
    assert!(
        f["path"].as_str().unwrap().ends_with("fsbench-block.dat"),
        "{failed}"
    );
    let offset = f["offset"]
        .as_u64()
        .unwrap_or_else(|| panic!("no offset: {failed}"));
    assert!(offset > 0 && offset < 128 << 20, "{failed}");
    assert!(f["space"]["bytes_total"].as_u64().unwrap() > 0, "{failed}");
    assert!(
        failed["error"]
            .as_str()
            .unwrap()
            .contains(&format!("offset {offset}")),
        "{failed}"
    );
    // The records written before the failure are all there, and the file is whole JSON lines.
    let text = std::fs::read_to_string(out.join("results.jsonl")).unwrap();
    assert!(text.ends_with('\n'));
    no_fault_leftovers(wd.path());
}

#[test]
fn snapshots_that_fill_the_filesystem_end_the_phase_with_enospc_and_statvfs() {
    if needs("btrfs", "mkfs.btrfs") {
        return;
    }
    let _g = serial();
    let wd = workdir();
    let job = "block:rw=randwrite,bs=1M,size=150M,runtime=40s,snapshots=10/s,direct=0";
    // Judged before the run: the snapshots' copies do not fit.
    let (o, out) = run_study(wd.path(), "full", &["btrfs"], &[job], "400M");
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("give --size"), "{}", stderr(&o));
    assert!(!out.exists());
    // Told to run anyway, the phase that fills it ends with ENOSPC and what statvfs said.
    let (o, out) = run_study_with(
        wd.path(),
        "full",
        &["btrfs"],
        &[job],
        "400M",
        &["--room", "warn"],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("running anyway"), "{}", stderr(&o));
    let recs = records_of(&out);
    let r = failed_record(&recs);
    let f = &r["failure"];
    assert_eq!(f["errno"], "ENOSPC", "{r}");
    for k in ["bytes_total", "bytes_free", "bytes_avail"] {
        assert!(f["space"][k].is_u64(), "{k}: {r}");
    }
    assert!(
        f["space"]["bytes_avail"].as_u64().unwrap() < 64 << 20,
        "{r}"
    );
    no_leftovers(wd.path());
}

#[test]
fn a_faulty_target_is_refused_where_no_fault_device_can_serve_it() {
    for (args, word) in [
        (vec!["compare", "tmpfs:faulty"], "no disk to fail"),
        (vec!["compare", "btrfs:raid1,faulty"], "single-device"),
        (
            vec!["compare", "ext4:fail_writes_after=lots"],
            "fail_writes_after",
        ),
    ] {
        let wd = workdir();
        let out = wd.path().join("study");
        let mut a = args.clone();
        a.extend_from_slice(&[
            "--out",
            out.to_str().unwrap(),
            "--workdir",
            wd.path().to_str().unwrap(),
        ]);
        let o = run(&a);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(!out.exists(), "{args:?}: a study directory was made");
        assert!(
            stderr(&o).contains(word) || stdout(&o).contains(word),
            "{args:?}: {}{}",
            stderr(&o),
            stdout(&o)
        );
    }
}

#[test]
fn a_killed_run_leaves_a_fault_device_that_the_next_start_cleans() {
    if faults_unsupported() {
        return;
    }
    let _g = serial();
    let wd = workdir();
    let out = wd.path().join("killed");
    let mut child = Compare::new(&["ext4:faulty"])
        .workload("block:rw=randwrite,bs=4k,size=64M,runtime=60s")
        .size("512M")
        .out(out.to_str().unwrap())
        .workdir(wd.path().to_str().unwrap())
        .spawn();
    assert!(wait_for_mount_under(wd.path(), 60), "never mounted");
    std::thread::sleep(std::time::Duration::from_secs(2));
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        mounts_text().contains("fsbench-faultdev"),
        "nothing left to clean?"
    );
    let o = run(&["cleanup", "--workdir", wd.path().to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    no_leftovers(wd.path());
    assert!(
        !mounts_text().contains(&*wd.path().to_string_lossy()),
        "{}",
        mounts_text()
    );
}
