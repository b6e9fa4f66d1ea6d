//! Privileged tier, the room a filesystem leaves: every table `--check` judges space by agrees,
//! at each of its sizes, with a fresh image made now (so a table that drifts from what mkfs
//! makes fails here; ext4's free inodes too); F2FS's, where the kernel cannot mount it, with
//! mkfs.f2fs's own figures; kernel ZFS's, by rule, is said not to be measured here; several
//! images leave the room their layout says; and a provisioned target's own room is kept in the
//! work directory for the next plan.

use crate::common::*;

/// statvfs's available bytes and free inodes at a mount point.
fn avail(mp: &str) -> (u64, u64) {
    let (ok, out) = sh(&format!("stat -f -c '%a %S %d' {mp}"));
    assert!(ok, "stat -f {mp}: {out}");
    let v: Vec<u64> = out.split_whitespace().map(|x| x.parse().unwrap()).collect();
    (v[0] * v[1], v[2])
}

/// `bytes` as the tables write sizes (512M, 1G).
fn size_arg(bytes: u64) -> String {
    if bytes % (1 << 30) == 0 {
        format!("{}G", bytes >> 30)
    } else {
        format!("{}M", bytes >> 20)
    }
}

/// Whether `got` agrees with what `table` says within `within` (a share), on its side: a table
/// measured here within it either way, one derived or by rule never above what is made now.
fn agrees(made: Made, table: u64, got: u64, within: f64) -> bool {
    let off = (table as f64 - got as f64) / got as f64;
    match made {
        Made::Measured(_) => off.abs() < within,
        Made::Derived(..) | Made::Rule(_) => off < 0.005 && off > -within,
    }
}

/// Each point of `table` against fresh images of filesystem `fs` made now (free inodes too,
/// where the table has them).
fn remeasure(wd: &std::path::Path, fs: &str, table: &Table) {
    for &(size, claimed) in table.points {
        let mp = provision(wd, fs, &["--size", &size_arg(size)]);
        let (got, inodes) = avail(&mp);
        teardown(&mp);
        assert!(
            agrees(table.made, claimed, got, 0.02),
            "{fs} at {}: the table says {claimed}, a fresh image has {got} ({:?}; scripts/measure-room)",
            size_arg(size),
            table.made
        );
        if let Inodes::Fixed { free, .. } = table.inodes {
            let want = free.iter().find(|p| p.0 == size).map(|p| p.1);
            assert_eq!(
                want,
                Some(inodes),
                "{fs} at {}: free inodes",
                size_arg(size)
            );
        }
    }
}

/// F2FS's room where the kernel cannot mount it: mkfs.f2fs's checkpoint, read by dump.f2fs
/// (user_block_count - valid_block_count blocks of 4 KiB, what f2fs's statfs gives).
fn f2fs_derived(dir: &std::path::Path, size: u64) -> u64 {
    let img = dir.join("f2fs.img");
    let _ = std::fs::remove_file(&img);
    std::fs::File::create(&img).unwrap().set_len(size).unwrap();
    let (ok, out) = sh(&format!("mkfs.f2fs -f -q -l f2fs {}", img.display()));
    assert!(ok, "{out}");
    let (ok, out) = sh(&format!("dump.f2fs -d 1 {}", img.display()));
    assert!(ok, "{out}");
    let field = |name: &str| -> u64 {
        let l = out.lines().find(|l| l.starts_with(name)).unwrap();
        l.trim_end_matches(']')
            .rsplit(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    let _ = std::fs::remove_file(&img);
    (field("user_block_count") - field("valid_block_count")) * 4096
}

use fsbench::provision::room::{self, Inodes, Made, Table};

#[test]
fn every_room_table_agrees_with_fresh_images_made_now() {
    if skip(!is_root(), "needs root") {
        return;
    }
    let _g = serial();
    let wd = workdir();
    for (fs, tool, table) in [
        ("ext4", "mkfs.ext4", &room::EXT4),
        ("xfs", "mkfs.xfs", &room::XFS),
        ("btrfs", "mkfs.btrfs", &room::BTRFS),
    ] {
        if !needs(fs, tool) {
            remeasure(wd.path(), fs, table);
        }
    }
    // ZFS: the table of the ZFS this host has; kernel ZFS's is not measured where zfs-fuse
    // serves the pools.
    if !needs_zfs() {
        let here = (fsbench::provision::find("zfs").unwrap().room)().unwrap();
        remeasure(wd.path(), "zfs", here);
        if *here == room::ZFS_FUSE {
            skip(
                true,
                "kernel ZFS's table (by OpenZFS's rules, not measured on this host: zfs-fuse serves the pools here)",
            );
        }
    }
    // F2FS: mounted where the kernel has it, else from mkfs.f2fs's own figures.
    if kernel_has("f2fs") && have("mkfs.f2fs") {
        remeasure(wd.path(), "f2fs", &room::F2FS);
    } else if !skip(
        !have("mkfs.f2fs") || !have("dump.f2fs"),
        "mkfs.f2fs or dump.f2fs not installed (f2fs-tools)",
    ) {
        for &(size, claimed) in room::F2FS.points {
            let got = f2fs_derived(wd.path(), size);
            assert!(
                agrees(room::F2FS.made, claimed, got, 0.005),
                "f2fs at {}: the table says {claimed}, mkfs.f2fs gives {got}",
                size_arg(size)
            );
        }
    }
    no_leftovers(wd.path());
}

#[test]
fn several_images_leave_the_room_their_layout_says() {
    if skip(!is_root(), "needs root") {
        return;
    }
    let _g = serial();
    let wd = workdir();
    let mut specs = Vec::new();
    if !needs("btrfs", "mkfs.btrfs") {
        specs.extend(["btrfs:raid1", "btrfs:devices=2"]);
    }
    if !needs_zfs() {
        specs.extend(["zfs:mirror", "zfs:raidz", "zfs:devices=2"]);
    }
    for spec in specs {
        let t = fsbench::provision::parse_target(spec).unwrap();
        let table = (fsbench::provision::find(&t.fs).unwrap().room)().unwrap();
        let data = (fsbench::provision::layout::data_share(&t) * (1u64 << 30) as f64) as u64;
        let judged = room::interpolate(table.points, data).unwrap();
        let mp = provision(wd.path(), spec, &["--size", "1G"]);
        let (got, _) = avail(&mp);
        teardown(&mp);
        assert!(
            agrees(table.made, judged, got, 0.02),
            "{spec} on 1G images: judged {judged}, a fresh target has {got}"
        );
    }
    no_leftovers(wd.path());
}

#[test]
fn the_check_judges_by_the_table_and_says_how_it_was_had() {
    if needs("ext4", "mkfs.ext4") {
        return;
    }
    let o = Compare::new(&["ext4"])
        .workload("smoke:size=1G")
        .size("2G")
        .workdir("/var/tmp/fsbench-tests/no-such-workdir")
        .args(&["--check"])
        .run();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o)
            .contains("ext4: fits 1 GiB of 1.78 GiB on a 2 GiB image (measured at its defaults)"),
        "{}",
        stdout(&o)
    );
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
