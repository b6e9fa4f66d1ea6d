//! Privileged tier, seed 002's second half: FIEMAP layout on real files, the aging workload on
//! ext4 and btrfs, snapshots at a rate on btrfs and zfs-fuse, multi-device targets (btrfs raid1,
//! a ZFS mirror) and zvols. Needs root; tests run one at a time.

use crate::common::*;

use std::io::Write;
use std::os::unix::fs::FileExt;

fn layout_of(path: &str) -> fsbench::metrics::layout::Layout {
    let f = std::fs::File::open(path).unwrap();
    fsbench::metrics::layout::of(&fsbench::sys::fiemap::extents(&f).unwrap())
}

#[test]
fn fiemap_scores_a_contiguous_file_one_and_a_file_written_backwards_near_zero() {
    if needs("btrfs", "mkfs.btrfs") {
        return;
    }
    let _g = serial();
    let wd = workdir();
    // btrfs allocates forward as it commits: a file written last block first, each block synced
    // on its own, lies backwards on disk.
    let mp = provision(wd.path(), "btrfs", &["--size", "256M"]);
    let block = vec![0x5au8; 4096];
    let contiguous = format!("{mp}/contiguous");
    let mut f = std::fs::File::create(&contiguous).unwrap();
    for _ in 0..256 {
        f.write_all(&block).unwrap();
    }
    f.sync_all().unwrap();
    drop(f);
    let backwards = format!("{mp}/backwards");
    let f = std::fs::File::create(&backwards).unwrap();
    for i in (0..64u64).rev() {
        f.write_all_at(&block, i * 4096).unwrap();
        f.sync_all().unwrap();
    }
    drop(f);
    let c = layout_of(&contiguous);
    let b = layout_of(&backwards);
    teardown(&mp);
    assert_eq!(c.bytes, 256 * 4096);
    assert!(c.score > 0.99 && c.fragments <= 2, "contiguous: {c:?}");
    assert!(b.score < 0.1, "backwards: {b:?}");
    assert!(b.extents >= 32 && b.fragments >= 32, "backwards: {b:?}");
    no_leftovers(wd.path());
}

fn by_test<'a>(recs: &'a [serde_json::Value], target: &str, test: &str) -> &'a serde_json::Value {
    recs.iter()
        .find(|r| r["target"] == target && r["test"] == test)
        .unwrap_or_else(|| panic!("no {target} {test} record"))
}

#[test]
fn aging_on_ext4_and_btrfs_records_four_phases_and_the_layout_after_each() {
    if needs("ext4", "mkfs.ext4") || needs("btrfs", "mkfs.btrfs") {
        return;
    }
    let _g = serial();
    let wd = workdir();
    let (o, out) = run_study(
        wd.path(),
        "study",
        &["ext4", "btrfs"],
        &["aging:file_size=32m"],
        "512M",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let recs = records_of(&out);
    for t in ["ext4", "btrfs"] {
        for test in ["write", "read-pre", "overwrite", "read-post"] {
            let r = by_test(&recs, t, test);
            assert_eq!(r["outcome"], "ok", "{t} {test}: {r}");
            let m = &r["metrics"];
            assert!(m["bytes_per_sec"].as_f64().unwrap() > 0.0, "{t} {test}");
            assert!(m["layout_score"].as_f64().is_some(), "{t} {test}: {m}");
            assert!(m["extents"].as_f64().unwrap() >= 1.0, "{t} {test}");
        }
        // overwrite=100% by default: one pass over the file's 4 KiB blocks.
        let ow = &by_test(&recs, t, "overwrite")["metrics"];
        assert_eq!(ow["write_bytes"].as_f64(), Some(32.0 * 1048576.0), "{t}");
        assert!((ow["overwrite_share"].as_f64().unwrap() - 1.0).abs() < 1e-9);
        let post = &by_test(&recs, t, "read-post")["metrics"];
        assert!(post["post_pre_ratio"].as_f64().unwrap() > 0.0, "{t}");
    }
    // In place on ext4, the file stays where it was; btrfs copies every overwritten block.
    let score = |t, test| {
        by_test(&recs, t, test)["metrics"]["layout_score"]
            .as_f64()
            .unwrap()
    };
    assert!(
        score("ext4", "overwrite") > 0.99,
        "{}",
        score("ext4", "overwrite")
    );
    assert!(score("btrfs", "write") > 0.99);
    assert!(
        score("btrfs", "overwrite") < 0.5,
        "{}",
        score("btrfs", "overwrite")
    );
    let text = stdout(&o);
    assert!(
        text.contains("In-place writes") && text.contains("layout score after overwrite"),
        "{text}"
    );
    no_leftovers(wd.path());
}

/// Snapshots at `rate` per second during a 4-second overwrite: the count is within 10% of
/// rate x time, each is timed, and their space is reported.
fn snapshots_at_a_rate(target: &str, rate: f64) {
    let wd = workdir();
    let spec = format!("aging:file_size=32m,overwrite_time=4s,snapshots={rate}/s");
    // (Room for the copies the snapshots pin: 12 of them at 3/s on btrfs.)
    let (o, out) = run_study(wd.path(), "study", &[target], &[&spec], "1G");
    assert!(o.status.success(), "{}", stderr(&o));
    let recs = records_of(&out);
    let r = by_test(&recs, target, "overwrite");
    let m = &r["metrics"];
    let taken = m["snapshots_taken"].as_f64().unwrap();
    let secs = m["runtime_s"].as_f64().unwrap();
    let want = rate * secs;
    assert!(
        (taken - want).abs() <= 0.1 * want + 1.0,
        "{target}: {taken} snapshots in {secs:.1} s at {rate}/s: {r}"
    );
    assert!(m["snapshot_lat_p50_ns"].as_f64().unwrap() > 0.0);
    assert!(r["histograms"]["snapshot_lat_ns"].is_string());
    assert!(m["snapshot_space_bytes"].as_f64().is_some(), "{m}");
    assert!(r["series"]["snapshots"].as_array().unwrap().len() >= 3);
    // FIEMAP: a figure where the filesystem maps extents, the reason where it does not.
    let unsupported = r["notes"].as_array().unwrap().iter().any(|n| {
        n.as_str()
            .unwrap()
            .starts_with("fragmentation: unsupported on zfs")
    });
    assert_eq!(m.get("layout_score").is_none(), unsupported, "{r}");
    assert_eq!(target == "zfs", unsupported, "{r}");
    // Only the overwrite takes snapshots.
    assert!(by_test(&recs, target, "write")["metrics"]
        .get("snapshots_taken")
        .is_none());
    no_leftovers(wd.path());
}

#[test]
fn snapshots_at_a_rate_on_btrfs() {
    if needs("btrfs", "mkfs.btrfs") {
        return;
    }
    let _g = serial();
    snapshots_at_a_rate("btrfs", 3.0);
}

/// The ZFS cases run in one test, one after another: zfs-fuse is one daemon per machine, which
/// fsbench starts and stops around each run, so the daemon's state is compared once, at the end.
#[test]
fn zfs_snapshots_mirror_raidz_and_zvol() {
    if needs_zfs() {
        return;
    }
    let _g = serial();
    let before = zfs_fuse_running();
    // zfs-fuse takes about a second per snapshot under 4K random writes: a rate it can keep.
    snapshots_at_a_rate("zfs", 0.5);
    zfs_mirror_and_raidz_pools_are_built_and_torn_down();
    a_zvol_on_zfs_fuse_is_a_skip_with_the_reason();
    daemon_as_before(before);
}

#[test]
fn snapshots_on_ext4_and_layouts_that_cannot_be_built_are_refused_before_anything_runs() {
    let wd = workdir();
    let out = wd.path().join("study");
    for (targets, workload, says) in [
        (vec!["ext4", "btrfs"], "aging:snapshots=3/s", "ext4 cannot"),
        (vec!["btrfs:raid1,devices=1"], "smoke", "at least 2 devices"),
        (vec!["zfs:volblocksize=16k"], "smoke", "option of a zvol"),
        (vec!["ext4"], "cdm:keep=3", "keep= only goes with snapshots"),
    ] {
        let o = Compare::new(&targets)
            .workload(workload)
            .out(out.to_str().unwrap())
            .workdir(wd.path().to_str().unwrap())
            .run();
        assert_eq!(o.status.code(), Some(2), "{targets:?} {workload}");
        assert!(stderr(&o).contains(says), "{}", stderr(&o));
        assert!(!out.exists());
    }
}

#[test]
fn btrfs_raid1_spans_two_loop_images_and_leaves_nothing() {
    if needs("btrfs", "mkfs.btrfs") {
        return;
    }
    let _g = serial();
    let wd = workdir();
    let mp = provision(wd.path(), "btrfs:raid1", &["--size", "256M"]);
    let (ok, df) = sh(&format!("btrfs filesystem df {mp}"));
    let (_, show) = sh(&format!("btrfs filesystem show {mp}"));
    assert_eq!(loops_backed_by_dir(wd.path()).len(), 2);
    teardown(&mp);
    assert!(ok, "{df}");
    assert!(
        df.contains("Data, RAID1") && df.contains("Metadata, RAID1"),
        "{df}"
    );
    assert!(show.contains("Total devices 2"), "{show}");
    no_leftovers(wd.path());
}

fn zfs_mirror_and_raidz_pools_are_built_and_torn_down() {
    for (spec, vdev, n) in [
        ("zfs:mirror", "mirror", 2),
        ("zfs:raidz,devices=3", "raidz", 3),
    ] {
        let wd = workdir();
        let mp = provision(wd.path(), spec, &["--size", "128M"]);
        let pool = sh(&format!("findmnt -n -o SOURCE {mp}"))
            .1
            .trim()
            .to_string();
        let (_, status) = sh(&format!("zpool status {pool}"));
        assert_eq!(loops_backed_by_dir(wd.path()).len(), n, "{spec}");
        teardown(&mp);
        assert!(status.contains(vdev), "{spec}: {status}");
        assert_eq!(status.matches("ONLINE").count(), n + 3, "{spec}: {status}");
        no_leftovers(wd.path());
    }
}

fn a_zvol_on_zfs_fuse_is_a_skip_with_the_reason() {
    let wd = workdir();
    let (o, out) = run_study(
        wd.path(),
        "study",
        &["zfs:zvol,volblocksize=16k"],
        &["cdm:runtime=200ms,size=16m"],
        "256M",
    );
    let backend_is_fuse = !std::path::Path::new("/sys/module/zfs").exists();
    let recs = records_of(&out);
    if backend_is_fuse {
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(recs[0]["outcome"], "skipped", "{:?}", recs[0]);
        assert!(
            recs[0]["reason"].as_str().unwrap().contains("no volumes"),
            "{:?}",
            recs[0]
        );
    } else {
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(recs.iter().all(|r| r["outcome"] == "ok"), "{recs:?}");
    }
    no_leftovers(wd.path());
}
