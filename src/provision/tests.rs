//! The spec parser and the command lines it produces: every spelling the issue names, and every
//! error message.

use super::*;

fn parse(s: &str) -> TargetSpec {
    parse_target(s).unwrap_or_else(|e| panic!("{s}: {e}"))
}

fn err(s: &str) -> String {
    parse_target(s).expect_err(s).0
}

fn mkfs(s: &str) -> String {
    mkfs_argv(&parse(s), "/dev/loop9").join(" ")
}

#[test]
fn ext4_inodes_is_mkfs_n_with_explicit_4k_blocks() {
    assert_eq!(
        mkfs("ext4:inodes=2000000"),
        "mkfs.ext4 -F -q -L fsbench -b 4096 -I 256 -E lazy_itable_init=0,lazy_journal_init=0 -N 2000000 /dev/loop9"
    );
    // Without inodes, fsbench fixes the inode ratio so that image size does not change it.
    assert!(mkfs("ext4").contains("-b 4096 -i 16384 -I 256"));
}

#[test]
fn xfs_maxpct_is_mkfs_i_maxpct() {
    assert_eq!(
        mkfs("xfs:maxpct=10"),
        "mkfs.xfs -f -q -L fsbench -i maxpct=10 /dev/loop9"
    );
}

#[test]
fn btrfs_mount_options() {
    for (spec, opt) in [
        ("btrfs:nodatacow", "nodatacow"),
        ("btrfs:compress=zstd", "compress=zstd"),
        ("btrfs:nodatasum", "nodatasum"),
    ] {
        let t = parse(spec);
        assert_eq!(mount_options(&t), vec![opt.to_string()]);
        assert_eq!(
            mkfs_argv(&t, "/dev/loop9").join(" "),
            "mkfs.btrfs -f -q -L fsbench /dev/loop9"
        );
        assert_eq!(
            mount_argv(&t, "/dev/loop9", "/m", 0).join(" "),
            format!("mount -t btrfs -o {opt} /dev/loop9 /m")
        );
    }
}

#[test]
fn zfs_properties_become_zpool_create_o() {
    let cache = zfs::cache_path("fsbench-x-0").display().to_string();
    let z = |s: &str| {
        zfs::create_argv(&parse(s), "fsbench-x-0", "/dev/loop9", "/m")
            .join(" ")
            .replace(&cache, "CACHE")
    };
    assert_eq!(
        z("zfs:recordsize=4k"),
        "zpool create -m /m -o cachefile=CACHE -O fsbench:run=x-0 -O recordsize=4K fsbench-x-0 /dev/loop9"
    );
    assert_eq!(
        z("zfs:recordsize=128k,primarycache=metadata"),
        "zpool create -m /m -o cachefile=CACHE -O fsbench:run=x-0 -O recordsize=128K -O primarycache=metadata fsbench-x-0 /dev/loop9"
    );
    assert_eq!(
        z("zfs:compression=lz4"),
        "zpool create -m /m -o cachefile=CACHE -O fsbench:run=x-0 -O compression=lz4 fsbench-x-0 /dev/loop9"
    );
    assert_eq!(
        z("zfs:ashift=12"),
        "zpool create -m /m -o cachefile=CACHE -O fsbench:run=x-0 -o ashift=12 fsbench-x-0 /dev/loop9"
    );
}

#[test]
fn zfs_fuse_refuses_lz4_with_a_reason_kernel_zfs_does_not() {
    let t = parse("zfs:compression=lz4");
    let why = zfs::unsupported(&t, zfs::Backend::Fuse).unwrap();
    assert!(
        why.contains("compression=lz4 is not supported by zfs-fuse"),
        "{why}"
    );
    assert!(zfs::unsupported(&t, zfs::Backend::Kernel).is_none());
    assert!(zfs::unsupported(&parse("zfs:compression=gzip"), zfs::Backend::Fuse).is_none());
}

#[test]
fn extra_mkfs_arguments_and_mount_options() {
    let t = parse("ext4:mkfs='-O ^metadata_csum -m 0',mount='noatime,commit=60',label=e");
    assert_eq!(t.extra_mkfs, vec!["-O", "^metadata_csum", "-m", "0"]);
    assert_eq!(t.extra_mount, vec!["noatime", "commit=60"]);
    assert_eq!(t.label, "e");
    assert!(mkfs_argv(&t, "/dev/x")
        .join(" ")
        .ends_with("-O ^metadata_csum -m 0 /dev/x"));
    assert_eq!(
        mount_argv(&t, "/dev/x", "/m", 0).join(" "),
        "mount -t ext4 -o noatime,commit=60 /dev/x /m"
    );
    // Double quotes too, and repeated mount= accumulates.
    let t = parse("xfs:mount=\"noatime\",mount=\"logbufs=8\"");
    assert_eq!(t.extra_mount, vec!["noatime", "logbufs=8"]);
}

#[test]
fn label_defaults_to_the_spec() {
    assert_eq!(parse("zfs:recordsize=4k").label, "zfs:recordsize=4k");
    assert_eq!(parse("btrfs:nodatacow,label=nocow").label, "nocow");
}

#[test]
fn tmpfs_size_is_a_mount_option_and_dir_takes_a_path() {
    let t = parse("tmpfs:nr_inodes=1000");
    assert_eq!(
        mount_argv(&t, "fsbench-x", "/m", 1 << 30).join(" "),
        "mount -t tmpfs -o size=1073741824,nr_inodes=1000 fsbench-x /m"
    );
    let d = parse("dir:/mnt/nfs,label=nfs");
    assert_eq!(d.path.as_deref(), Some("/mnt/nfs"));
    assert_eq!(d.label, "nfs");
    let s = parse("ext4:size=2G");
    assert_eq!(s.size, Some(2 << 30));
}

#[test]
fn small_images_are_refused_for_xfs_and_btrfs() {
    let e = check_size(&parse("xfs"), 200 << 20).unwrap_err().0;
    assert!(e.contains("xfs needs a backing of at least 300 MiB"), "{e}");
    assert!(e.contains("--size"), "{e}");
    let e = check_size(&parse("btrfs"), 100 << 20).unwrap_err().0;
    assert!(
        e.contains("btrfs needs a backing of at least 110 MiB"),
        "{e}"
    );
    assert!(check_size(&parse("xfs"), 300 << 20).is_ok());
    assert!(check_size(&parse("tmpfs"), 1 << 20).is_ok());
}

#[test]
fn every_error_names_the_input_and_the_fix() {
    let cases: &[(&str, &str)] = &[
        ("", "empty target: name a filesystem (ext4, xfs, btrfs, zfs, f2fs, tmpfs, dir, raw)"),
        ("ntfs", "unknown filesystem 'ntfs' in target 'ntfs': valid filesystems are ext4, xfs, btrfs, zfs, f2fs, tmpfs, dir"),
        ("xfs:bogus=1", "unknown option 'bogus' for xfs in target 'xfs:bogus=1': valid options are maxpct=N, isize="),
        ("ext4:inodes", "option 'inodes' in target 'ext4:inodes' needs a value, e.g. inodes=N"),
        ("ext4:inodes=lots", "invalid value 'lots' for 'inodes' in target 'ext4:inodes=lots': expected a whole number from 16 to"),
        ("xfs:maxpct=101", "invalid value '101' for 'maxpct' in target 'xfs:maxpct=101': expected a whole number from 0 to 100"),
        ("btrfs:nodatacow=1", "option 'nodatacow' in target 'btrfs:nodatacow=1' takes no value (got 'nodatacow=1'): write just 'nodatacow'"),
        ("btrfs:compress=brotli", "invalid value 'brotli' for 'compress' in target 'btrfs:compress=brotli': expected one of zstd, lzo, zlib, no"),
        ("zfs:recordsize=3k", "invalid value '3k' for 'recordsize' in target 'zfs:recordsize=3k': expected one of"),
        ("ext4:noatime,,", "target 'ext4:noatime,,' has an empty option"),
        ("ext4:noatime,noatime", "target 'ext4:noatime,noatime' gives 'noatime' twice: keep one"),
        ("ext4:mkfs='-O x", "target 'ext4:mkfs='-O x': unbalanced ' quote"),
        ("ext4:size=lots", "target 'ext4:size=lots': size: 'lots' is not a size"),
        ("ext4:label=", "option 'label' in target 'ext4:label=' needs a value, e.g. label=my-ext4"),
        ("dir", "target 'dir' needs a directory: write dir:/path/to/mounted/dir"),
        ("dir:relative/path", "target 'dir:relative/path': the directory 'relative/path' must be an absolute path"),
        ("tmpfs:mkfs='-x'", "unknown option 'mkfs' for tmpfs"),
        ("zfs:mount='noatime'", "unknown option 'mount' for zfs"),
    ];
    for (spec, want) in cases {
        let e = err(spec);
        assert!(
            e.contains(want),
            "spec {spec:?}\n  got:  {e}\n  want: {want}"
        );
    }
}

#[test]
fn unknown_key_lists_every_valid_key() {
    let e = err("btrfs:datacow");
    for k in [
        "nodatacow",
        "nodatasum",
        "compress=zstd|lzo|zlib|no",
        "label=NAME",
        "size=SIZE",
        "mkfs='ARGS'",
        "mount='OPTS'",
    ] {
        assert!(e.contains(k), "missing {k} in {e}");
    }
}

#[test]
fn every_filesystem_has_one_table_line_and_documented_keys() {
    let names: Vec<&str> = FILESYSTEMS.iter().map(|d| d.schema.name).collect();
    assert_eq!(
        names,
        ["ext4", "xfs", "btrfs", "zfs", "f2fs", "tmpfs", "dir", "raw"]
    );
    for d in FILESYSTEMS {
        for k in d.schema.all_keys() {
            assert!(
                !k.help.is_empty(),
                "{}:{} has no help",
                d.schema.name,
                k.name
            );
        }
    }
}

#[test]
fn requested_options_are_matched_against_mountinfo_spelling() {
    use lifecycle::option_in_effect;
    let have: Vec<String> = ["rw", "compress=zstd:3", "nodatasum", "nobarrier"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert!(option_in_effect("compress=zstd", &have));
    assert!(option_in_effect("nodatasum", &have));
    assert!(option_in_effect("barrier=0", &have));
    assert!(!option_in_effect("nodatacow", &have));
}

#[test]
fn vfs_mount_flags_are_shared_by_every_mounted_filesystem() {
    for fs in ["ext4", "xfs", "btrfs", "f2fs", "tmpfs"] {
        let t = parse(&format!("{fs}:noatime,lazytime"));
        assert_eq!(mount_options(&t), vec!["noatime", "lazytime"], "{fs}");
    }
    // ZFS sets atime as a property; dir mounts nothing.
    assert!(err("zfs:noatime").contains("atime=on|off"));
    assert!(err("dir:/mnt/x,noatime").contains("unknown option 'noatime' for dir"));
}

#[test]
fn faulty_targets_parse_and_are_refused_where_no_fault_device_serves_them() {
    let t = parse("ext4:fail_writes_after=64M,label=bad-disk");
    assert_eq!(
        t.fault.as_ref().and_then(|f| f.fail_writes_after),
        Some(64 << 20)
    );
    assert!(
        super::faultdev::refuse(&t, false, false).is_none()
            || !std::path::Path::new("/dev/fuse").exists()
    );
    assert!(super::faultdev::refuse(&t, true, false)
        .unwrap()
        .contains("--device"));
    assert!(super::faultdev::refuse(&t, false, true)
        .unwrap()
        .contains("not provision"));
    let plain = parse("ext4:faulty");
    assert_eq!(plain.fault, Some(crate::plan::FaultPlan::default()));
    assert!(parse("ext4").fault.is_none());
    assert!(super::parse_target("ext4:faulty=1").is_err());
    assert!(super::parse_target("dir:/tmp,faulty").is_err());
    let mirror = parse("zfs:mirror,faulty");
    assert!(super::faultdev::refuse(&mirror, false, false)
        .unwrap()
        .contains("single-device"));
}
