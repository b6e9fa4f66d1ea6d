//! Privileged tier, the integrity audit (issue 15): real images damaged under real filesystems.
//! The hand-measured check of truth: ext4 and XFS return damaged data silently; btrfs and ZFS
//! return EIO; btrfs nodatasum is silent; directory damage gives ext4 EBADMSG and XFS EUCLEAN.

use crate::common::*;

/// `fsbench audit TARGETS` on small images in `wd`; returns the output and the records.
fn audit(wd: &std::path::Path, targets: &[&str]) -> (std::process::Output, Vec<serde_json::Value>) {
    let out = wd.join("audit");
    let mut args = vec!["audit"];
    args.extend_from_slice(targets);
    args.extend_from_slice(&[
        "--files",
        "16",
        "--size",
        "512M",
        "-q",
        "--case",
        "corruption",
    ]);
    args.extend_from_slice(&[
        "--out",
        out.to_str().unwrap(),
        "--workdir",
        wd.to_str().unwrap(),
    ]);
    let o = run(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let recs = records_of(&out);
    (o, recs)
}

fn metric(recs: &[serde_json::Value], target: &str, test: &str, k: &str) -> f64 {
    let r = recs
        .iter()
        .find(|r| r["target"] == target && r["test"] == test)
        .unwrap_or_else(|| panic!("no {target} {test} record"));
    r["metrics"][k]
        .as_f64()
        .unwrap_or_else(|| panic!("{target} {test} has no {k}: {r}"))
}

#[test]
fn the_audit_tells_detected_silent_and_directory_damage_apart() {
    if needs("ext4", "mkfs.ext4") || needs("btrfs", "mkfs.btrfs") || needs("xfs", "mkfs.xfs") {
        return;
    }
    let _g = serial();
    let wd = workdir();
    let targets = ["ext4", "xfs", "btrfs", "btrfs:nodatasum", "btrfs:data=dup"];
    let (o, recs) = audit(wd.path(), &targets);
    for t in ["ext4", "xfs", "btrfs", "btrfs:nodatasum", "btrfs:data=dup"] {
        assert_eq!(metric(&recs, t, "data", "damaged"), 8.0, "{t}");
        assert_eq!(metric(&recs, t, "data", "controls_damaged"), 0.0, "{t}");
    }
    for t in ["ext4", "xfs", "btrfs:nodatasum"] {
        assert_eq!(metric(&recs, t, "data", "silent"), 8.0, "{t}");
    }
    assert_eq!(metric(&recs, "btrfs", "data", "detected_by_fs"), 8.0);
    assert_eq!(metric(&recs, "btrfs:data=dup", "data", "silent"), 0.0);
    assert_eq!(
        metric(&recs, "btrfs:data=dup", "data", "repaired")
            + metric(&recs, "btrfs:data=dup", "data", "unnoticed"),
        8.0
    );
    // Directory damage: found by ext4 (EBADMSG) and XFS (EUCLEAN), and by their checkers.
    let text = std::fs::read_to_string(wd.path().join("audit/results.jsonl")).unwrap();
    for (t, errno) in [("ext4", "EBADMSG"), ("xfs", "EUCLEAN")] {
        assert!(metric(&recs, t, "directory", "detected_by_fs") > 0.0, "{t}");
        assert!(metric(&recs, t, "checker", "problems") > 0.0, "{t}");
        assert!(text.contains(errno), "{t}: no {errno} in {text}");
    }
    assert!(metric(&recs, "btrfs", "checker", "problems") >= 8.0);
    assert_eq!(metric(&recs, "btrfs:nodatasum", "checker", "problems"), 0.0);
    let term = stdout(&o);
    assert!(
        term.contains("Integrity audit") && term.contains("btrfs:nodatasum"),
        "{term}"
    );
    no_leftovers(wd.path());
}

#[test]
fn the_audit_on_zfs_detects_what_checksum_off_misses() {
    if needs_zfs() {
        return;
    }
    let _g = serial();
    let daemon_before = zfs_fuse_running();
    let wd = workdir();
    let (_, recs) = audit(wd.path(), &["zfs", "zfs:checksum=off", "zfs:copies=2"]);
    assert_eq!(metric(&recs, "zfs", "data", "detected_by_fs"), 8.0);
    assert_eq!(metric(&recs, "zfs:checksum=off", "data", "silent"), 8.0);
    assert_eq!(metric(&recs, "zfs:copies=2", "data", "silent"), 0.0);
    assert_eq!(metric(&recs, "zfs:copies=2", "data", "detected_by_fs"), 0.0);
    assert!(metric(&recs, "zfs", "checker", "problems") > 0.0);
    no_leftovers(wd.path());
    daemon_as_before(daemon_before);
}

#[test]
fn the_audit_refuses_what_it_did_not_make() {
    for (spec, word) in [
        ("dir:/tmp", "never on a directory"),
        ("tmpfs", "no disk"),
        ("zfs:raidz,devices=3", "raidz"),
    ] {
        let wd = workdir();
        let out = wd.path().join("audit");
        let o = run(&["audit", spec, "--out", out.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{spec}: {}", stderr(&o));
        assert!(stderr(&o).contains(word), "{spec}: {}", stderr(&o));
        assert!(!out.exists(), "{spec}: a study directory was made");
    }
    let o = run(&["audit", "ext4", "--device", "/dev/null"]);
    assert_eq!(o.status.code(), Some(2), "--device is not an audit option");
}

#[test]
fn a_killed_audit_resumes_and_repeats_like_a_compare() {
    if needs("ext4", "mkfs.ext4") || needs("xfs", "mkfs.xfs") {
        return;
    }
    let _g = serial();
    let wd = workdir();
    let out = wd.path().join("audit");
    let mut child = bin()
        .args([
            "audit",
            "ext4",
            "xfs",
            "--case",
            "corruption",
            "--repeat",
            "2",
        ])
        .args(["--files", "16", "--size", "512M", "-q", "--out"])
        .arg(&out)
        .arg("--workdir")
        .arg(wd.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // The first target's data record is in: kill it in the middle of the audit.
    wait_for_lines(&out.join("results.jsonl"), 1);
    child.kill().unwrap();
    child.wait().unwrap();
    let o = run(&["audit", "--resume", out.to_str().unwrap(), "-q"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let recs = records_of(&out);
    let mut keys: Vec<(String, String, u64)> = recs
        .iter()
        .map(|r| {
            (
                r["target"].as_str().unwrap().to_string(),
                r["test"].as_str().unwrap().to_string(),
                r["repeat"].as_u64().unwrap(),
            )
        })
        .collect();
    keys.sort();
    let n = keys.len();
    keys.dedup();
    assert_eq!(n, keys.len(), "a record appears twice: {keys:?}");
    // 2 targets x (data, directory, checker) x 2 repeats.
    assert_eq!(n, 12, "{keys:?}");
    for t in ["ext4", "xfs"] {
        for rep in [0, 1] {
            let r = recs
                .iter()
                .find(|r| r["target"] == t && r["test"] == "data" && r["repeat"] == rep)
                .unwrap();
            assert_eq!(r["workload"], "audit", "{r}");
            assert_eq!(r["metrics"]["silent"], 8.0, "{t} repeat {rep}: {r}");
        }
    }
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(m["status"], "complete");
    no_leftovers(wd.path());
}
