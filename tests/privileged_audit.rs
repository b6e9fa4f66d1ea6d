//! Privileged tier, the integrity audit (issue 15): real images damaged under real filesystems.
//! The hand-measured check of truth: ext4 and XFS return damaged data silently; btrfs and ZFS
//! return EIO; btrfs nodatasum is silent; directory damage gives ext4 EBADMSG and XFS EUCLEAN.

mod common;
use common::*;

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
