//! Privileged tier, workloads on real filesystems: CrystalDiskMark on ext4 and on a raw loop
//! device, the files workload against df, inode exhaustion, zfs-fuse teardown after many files.
//! Needs root; tests run one at a time.

use crate::common::*;

#[allow(unused_imports)]
use std::path::Path;
#[allow(unused_imports)]
use std::time::{Duration, Instant};

const CDM_TESTS: [&str; 8] = [
    "SEQ1M_Q8T1-read",
    "SEQ1M_Q8T1-write",
    "SEQ1M_Q1T1-read",
    "SEQ1M_Q1T1-write",
    "RND4K_Q32T1-read",
    "RND4K_Q32T1-write",
    "RND4K_Q1T1-read",
    "RND4K_Q1T1-write",
];

#[test]
fn cdm_runs_on_ext4_and_records_every_field() {
    if needs("ext4", "mkfs.ext4") {
        return;
    }
    let _g = serial();
    let wd = workdir();
    let out = wd.path().join("study");
    let o = Compare::new(&["ext4"])
        .workload("cdm")
        .size("512M")
        .out(out.to_str().unwrap())
        .workdir(wd.path().to_str().unwrap())
        .args(&["--runtime", "500ms", "--file-size", "64M"])
        .run();
    assert!(o.status.success(), "{}", stderr(&o));
    let table = stdout(&o);
    assert!(
        table.contains("RND4K_Q32T1") && table.contains("read IOPS"),
        "{table}"
    );
    let recs = check_block_records(&out, "ext4", &CDM_TESTS);
    // One shared 64 MiB test file, laid out once: the sequential read covers it.
    assert_eq!(recs[0]["config"]["region_bytes"], 64 * 1048576);
    no_leftovers(wd.path());
}

#[test]
fn cdm_runs_on_a_raw_loop_device_and_the_device_counts_what_was_written() {
    if skip(!is_root(), "needs root") {
        return;
    }
    let _g = serial();
    let dev = TestLoop::new(128);
    let out = dev.dir.path().join("study");
    let o = Compare::new(&["raw"])
        .workload("cdm")
        .out(out.to_str().unwrap())
        .workdir(dev.dir.path().to_str().unwrap())
        .args(&[
            "--runtime",
            "500ms",
            "--file-size",
            "64M",
            "--device",
            &dev.device,
        ])
        .run();
    assert!(o.status.success(), "{}", stderr(&o));
    let recs = check_block_records(&out, "raw", &CDM_TESTS);
    // On the raw device, what the device wrote is what the job wrote.
    let w = &recs[1]["metrics"];
    let wa = w["write_amplification"].as_f64().unwrap();
    assert!((0.95..1.1).contains(&wa), "raw write amplification {wa}");
    // The device stays attached (it is the user's) and nothing is mounted from it.
    assert!(std::path::Path::new(&format!(
        "/sys/block/{}/loop",
        dev.device.trim_start_matches("/dev/")
    ))
    .exists());
    // A device that carries a filesystem is refused for raw writes, as for mkfs.
    assert!(sh(&format!("mkfs.ext4 -q -F {}", dev.device)).0);
    let o = Compare::new(&["raw"])
        .workload("cdm")
        .out(dev.dir.path().join("refused").to_str().unwrap())
        .args(&["--device", &dev.device])
        .run();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--wipe"), "{}", stderr(&o));
    assert!(sh(&format!("blkid -p {}", dev.device)).1.contains("ext4"));
}

#[test]
fn the_seed_schedule_scaled_down_agrees_with_df_on_ext4_xfs_btrfs() {
    if skip(!is_root(), "needs root") {
        return;
    }
    let _g = serial();
    for (fs, tool) in [
        ("ext4", "mkfs.ext4"),
        ("xfs", "mkfs.xfs"),
        ("btrfs", "mkfs.btrfs"),
    ] {
        if skip(!have(tool), &format!("{tool} not installed")) {
            continue;
        }
        let wd = workdir();
        let mp = provision(wd.path(), fs, &["--size", "1G"]);
        let (used0, iused0) = df_used(&mp);
        let out = wd.path().join("study");
        // Seed 003's 10M schedule (100 tops) scaled down: 100 tops x 2 subfolders x 100 files.
        let spec = format!(
            "files:tops=100,subs=2,files=100,threads=2,phases=write+read+stat,path={mp}/tree"
        );
        let o = Compare::new(&[&format!("dir:{mp}")])
            .workload(&spec)
            .out(out.to_str().unwrap())
            .workdir(wd.path().to_str().unwrap())
            .run();
        assert!(o.status.success(), "{fs}: {}", stderr(&o));
        let (used1, iused1) = df_used(&mp);
        let recs = records_of(&out);
        let w = &recs[0]["metrics"];
        assert_eq!(recs[0]["test"], "write");
        assert_eq!(w["files"].as_f64(), Some(20_000.0), "{fs}");
        // Inodes: the 20,000 files, 301 folders and 2 bookkeeping files, as df counts them.
        // btrfs reports no inode counts to df: no figure then, never a 0.
        if iused1 == 0.0 {
            assert!(w.get("inodes_used").is_none(), "{fs}: {w}");
            assert_eq!(w["inodes_dynamic"].as_f64(), Some(1.0), "{fs}");
            let o = run(&["report", out.to_str().unwrap(), "--format", "md"]);
            assert!(stdout(&o).contains("n/a (dynamic)"), "{}", stdout(&o));
        } else {
            let inodes = w["inodes_used"].as_f64().unwrap();
            assert!(
                (inodes - (iused1 - iused0)).abs() <= 8.0,
                "{fs}: inodes_used {inodes}, df {}",
                iused1 - iused0
            );
            assert!((20_000.0..20_320.0).contains(&inodes), "{fs}: {inodes}");
        }
        let space = w["space_used_bytes"].as_f64().unwrap();
        let df_space = used1 - used0;
        assert!(
            (space - df_space).abs() <= df_space * 0.02 + 2.0 * 1048576.0,
            "{fs}: space_used_bytes {space}, df {df_space}"
        );
        let bytes = w["bytes"].as_f64().unwrap();
        let overhead = w["space_overhead_pct"].as_f64().unwrap();
        assert!(
            (overhead - (space - bytes) / space * 100.0).abs() < 1e-6,
            "{fs}: overhead as seed 003 defines it"
        );
        let r = &recs[1]["metrics"];
        assert_eq!(r["integrity_ok"].as_f64(), Some(20_000.0), "{fs}");
        assert_eq!(recs[2]["metrics"]["integrity_ok"].as_f64(), Some(20_000.0));
        assert!(!recs[0]["series"]["files_per_sec"]
            .as_array()
            .unwrap()
            .is_empty());
        teardown(&mp);
        no_leftovers(wd.path());
    }
}

#[test]
fn running_out_of_inodes_is_a_result_and_what_was_written_verifies() {
    if needs("ext4", "mkfs.ext4") {
        return;
    }
    let _g = serial();
    let wd = workdir();
    // (Judged before the run not to fit 3,000 inodes: run anyway, to measure running out.)
    let (o, out) = run_study_with(
        wd.path(),
        "study",
        &["ext4:inodes=3000"],
        &["files:tops=10,subs=10,files=100,threads=2"],
        "256M",
        &["--room", "warn"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let recs = records_of(&out);
    let w = &recs[0];
    assert_eq!(w["outcome"], "ok");
    assert_eq!(w["metrics"]["exhausted_inodes"].as_f64(), Some(1.0));
    let note = w["notes"].as_array().unwrap()[0].as_str().unwrap();
    assert!(
        note.starts_with("exhausted: ext4 ran out of inodes after "),
        "{note}"
    );
    let total = w["metrics"]["files_total"].as_f64().unwrap();
    assert!((2000.0..3000.0).contains(&total), "{total}");
    let r = &recs[1]["metrics"];
    assert_eq!(r["integrity_ok"].as_f64(), Some(total));
    assert_eq!(r["missing"].as_f64(), Some(0.0));
    no_leftovers(wd.path());
}

#[test]
fn a_target_that_ran_out_of_inodes_is_the_first_thing_every_report_says() {
    if needs("ext4", "mkfs.ext4") {
        return;
    }
    let _g = serial();
    let wd = workdir();
    // 10,000 files asked: "roomy" (256 MiB at ext4's default ratio: 65,536 inodes) writes them
    // all, "small" (3,000 inodes) runs out.
    let (o, out) = run_study_with(
        wd.path(),
        "study",
        &["ext4:label=roomy", "ext4:inodes=3000,label=small"],
        &["files:tops=10,subs=10,files=100,threads=2,phases=write+read"],
        "256M",
        &["--room", "warn"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let term = stdout(&o);
    let first = term.lines().next().unwrap_or("");
    assert_eq!(first, "Did less than asked", "{term}");
    assert!(
        term.contains("small") && term.contains("ran out of inodes"),
        "{term}"
    );
    assert!(term.contains("inodes=N"), "the fix: {term}");
    assert!(term.contains("small !"), "the files table marks it: {term}");
    assert!(
        term.contains("left out, having done less work than asked: small"),
        "the verdict leaves it out: {term}"
    );
    assert!(
        stderr(&o).contains("did less work than asked"),
        "{}",
        stderr(&o)
    );
    let dir = out.to_str().unwrap();
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("## Did less than asked"), "{md}");
    assert!(
        md.find("Did less than asked") < md.find("Many small files"),
        "first in report.md"
    );
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    let at = |s: &str| html.find(s).unwrap_or(usize::MAX);
    assert!(
        at("Did less than asked") < at("<table>"),
        "first in the HTML"
    );
    let o = run(&["report", dir, "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let less = v["less_work"].as_array().unwrap();
    assert!(less.iter().all(|x| x["target"] == "small"), "{v}");
    assert_eq!(less[0]["kind"], "exhausted");
    let marked: Vec<&serde_json::Value> = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["less_work"] == true)
        .collect();
    assert!(!marked.is_empty() && marked.iter().all(|r| r["target"] == "small"));
    let o = run(&["report", dir, "--full"]);
    assert!(stdout(&o).contains("! less work"), "{}", stdout(&o));
    no_leftovers(wd.path());
}

#[test]
fn many_files_on_zfs_fuse_tear_down_cleanly() {
    if needs_zfs() {
        return;
    }
    let _g = serial();
    let daemon_before = zfs_fuse_running();
    let wd = workdir();
    let (o, out) = run_study(
        wd.path(),
        "study",
        &["zfs"],
        &["files:count=5000,threads=2"],
        "1G",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let recs = records_of(&out);
    assert_eq!(recs[1]["metrics"]["integrity_ok"].as_f64(), Some(5000.0));
    // The pool commits before statvfs: the space and inodes counted are those of the 5,000
    // files (without the commit zfs-fuse counted a fraction of them, or nothing).
    let w = &recs[0]["metrics"];
    let (bytes, space) = (
        w["bytes"].as_f64().unwrap(),
        w["space_used_bytes"].as_f64().unwrap(),
    );
    assert!(
        space >= bytes * 0.9,
        "space_used_bytes {space} for {bytes} bytes"
    );
    let inodes = w["inodes_used"].as_f64().unwrap();
    assert!(inodes >= 5000.0, "inodes_used {inodes} for 5,000 files");
    // zfs-fuse reports the pool busy for a while after thousands of files: teardown waits.
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    assert!(
        !m["warnings"].to_string().contains("teardown"),
        "{}",
        m["warnings"]
    );
    no_leftovers(wd.path());
    daemon_as_before(daemon_before);
}

#[test]
fn bonnie_on_ext4_gives_every_record_and_refuses_a_file_too_big_for_the_target() {
    if needs("ext4", "mkfs.ext4") {
        return;
    }
    let _g = serial();
    let wd = workdir();
    let (o, out) = run_study(
        wd.path(),
        "study",
        &["ext4"],
        &["bonnie:size=32M,ram=0,files=1:4k:1k:2,seeks=1000"],
        "256M",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let recs = records_of(&out);
    assert_eq!(recs.len(), 12, "{recs:?}");
    for r in &recs {
        assert_eq!(r["outcome"], "ok", "{r}");
        assert_eq!(r["fs"], "ext4");
        let m = &r["metrics"];
        assert!(
            m["cpu_pct"].is_number() && m["lat_max_ns"].is_number(),
            "{r}"
        );
    }
    let put = recs.iter().find(|r| r["test"] == "put_block").unwrap();
    assert_eq!(put["metrics"]["bytes"], (32u64 << 20) as f64);
    assert!(put["metrics"]["device_write_bytes"].as_f64().unwrap() >= (32u64 << 20) as f64);
    let seeks = recs.iter().find(|r| r["test"] == "seeks").unwrap();
    assert_eq!(seeks["metrics"]["seeks"], 1000.0);
    no_leftovers(wd.path());

    // A 1 GiB IO file on a 256 MiB target is refused before anything is provisioned (the room
    // judged from the plan) and, told to run anyway, by bonnie before any test runs.
    let (o, out2) = run_study(
        wd.path(),
        "study2",
        &["ext4"],
        &["bonnie:size=1G,ram=0,files=0"],
        "256M",
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("give --size"), "{}", stderr(&o));
    assert!(!out2.exists(), "a refused plan made its study");
    let (o, out2) = run_study_with(
        wd.path(),
        "study2",
        &["ext4"],
        &["bonnie:size=1G,ram=0,files=0"],
        "256M",
        &["--room", "warn"],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let recs = records_of(&out2);
    assert_eq!(recs.len(), 1, "{recs:?}");
    assert!(
        recs[0]["error"].as_str().unwrap().contains("bonnie needs"),
        "{}",
        recs[0]
    );
    // A resume keeps the study's own --room: checked again, it warns rather than refuses.
    let o = bin()
        .args(["compare", "--resume", out2.to_str().unwrap(), "--check"])
        .args(["--workdir", wd.path().to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("(--room warn)"), "{}", stderr(&o));
    no_leftovers(wd.path());
}

#[test]
fn bonnie_running_out_of_inodes_is_a_recorded_outcome() {
    if skip(!is_root(), "needs root") {
        return;
    }
    let _g = serial();
    let wd = workdir();
    let (o, out) = run_study(
        wd.path(),
        "study",
        &["tmpfs:nr_inodes=600"],
        &["bonnie:size=8M,ram=0,files=1,seeks=100"],
        "64M",
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let recs = records_of(&out);
    let create = recs.iter().find(|r| r["test"] == "seq_create").unwrap();
    assert_eq!(create["outcome"], "failed", "{create}");
    assert!(
        create["error"].as_str().unwrap().contains("No space left"),
        "{create}"
    );
    // The IO tests before it are whole, and the target is gone.
    let put = recs.iter().find(|r| r["test"] == "put_block").unwrap();
    assert_eq!(put["outcome"], "ok");
    no_leftovers(wd.path());
}
