//! Privileged tier, the room a filesystem leaves: the tables `--check` judges space by agree with
//! a fresh image made now (so a table that drifts from what mkfs makes fails here), and a
//! provisioned target's own room is kept in the work directory for the next plan.

use crate::common::*;

/// statvfs's available bytes at a mount point.
fn avail(mp: &str) -> u64 {
    let (ok, out) = sh(&format!("stat -f -c '%a %S' {mp}"));
    assert!(ok, "stat -f {mp}: {out}");
    let v: Vec<u64> = out.split_whitespace().map(|x| x.parse().unwrap()).collect();
    v[0] * v[1]
}

#[test]
fn each_filesystems_room_table_agrees_with_a_fresh_image() {
    if skip(!is_root(), "needs root") {
        return;
    }
    let _g = serial();
    let wd = workdir();
    for (fs, tool) in [
        ("ext4", "mkfs.ext4"),
        ("xfs", "mkfs.xfs"),
        ("btrfs", "mkfs.btrfs"),
    ] {
        if needs(fs, tool) {
            continue;
        }
        let mp = provision(wd.path(), fs, &["--size", "2G"]);
        let got = avail(&mp) as f64;
        teardown(&mp);
        let o = run(&[
            "compare",
            fs,
            "-w",
            "smoke:size=1G",
            "--size",
            "2G",
            "--check",
            "--workdir",
            "/var/tmp/fsbench-tests/no-such-workdir",
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let text = stdout(&o);
        let line = text
            .lines()
            .find(|l| l.contains(": fits "))
            .expect("a space line");
        // "fits 1 GiB of 1.78 GiB on a 2 GiB image (measured at its defaults)"
        let table: f64 = line
            .split(" of ")
            .nth(1)
            .unwrap()
            .split(' ')
            .next()
            .unwrap()
            .parse::<f64>()
            .unwrap()
            * (1u64 << 30) as f64;
        assert!(
            (table - got).abs() / got < 0.02,
            "{fs}: the table says {table:.0}, a fresh 2G image has {got:.0} (scripts/measure-room)"
        );
    }
    no_leftovers(wd.path());
}

#[test]
fn a_provisioned_targets_room_is_kept_for_the_next_plan() {
    if needs("ext4", "mkfs.ext4") {
        return;
    }
    let _g = serial();
    let wd = workdir();
    let out = wd.path().join("study");
    let o = Compare::new(&["ext4:inodes=300000"])
        .workload("smoke:size=16M")
        .size("1G")
        .out(out.to_str().unwrap())
        .workdir(wd.path().to_str().unwrap())
        .run();
    assert!(o.status.success(), "{}", stderr(&o));
    let kept = std::fs::read_to_string(wd.path().join(".fsbench-room.json")).unwrap();
    assert!(kept.contains("ext4:inodes=300000@1073741824"), "{kept}");
    let o = run(&[
        "compare",
        "ext4:inodes=300000",
        "-w",
        "smoke:size=16M",
        "--size",
        "1G",
        "--check",
        "--workdir",
        wd.path().to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("(measured)"), "{}", stdout(&o));
    no_leftovers(wd.path());
}
