//! Privileged tier, provisioning: every filesystem with its options in effect, the device guards,
//! dry runs. Real mkfs, mounts, loop devices and zfs-fuse; needs root; a test whose tool is missing
//! prints why it skips. Tests run one at a time (common::serial).

use crate::common::*;

#[allow(unused_imports)]
use std::path::Path;
#[allow(unused_imports)]
use std::time::{Duration, Instant};

#[test]
fn ext4_inodes_and_mount_options_take_effect() {
    if needs("ext4", "mkfs.ext4") {
        return;
    }
    let _g = serial();
    let wd = workdir();
    let mp = provision(
        wd.path(),
        "ext4:inodes=200000,noatime",
        &["--size", "1G", "-q"],
    );
    assert!(mountinfo_line(&mp).unwrap().contains("noatime"));
    let inodes: u64 = sh(&format!("df --output=itotal {mp} | tail -n1"))
        .1
        .trim()
        .parse()
        .unwrap();
    // mke2fs rounds -N up to fill whole block groups.
    assert!(
        (200_000..220_000).contains(&inodes),
        "df -i says {inodes} inodes"
    );
    let bs = sh(&format!("stat -f -c %S {mp}")).1;
    assert_eq!(bs.trim(), "4096");
    teardown(&mp);
    no_leftovers(wd.path());
}

#[test]
fn xfs_maxpct_takes_effect() {
    if needs("xfs", "mkfs.xfs") {
        return;
    }
    let _g = serial();
    let wd = workdir();
    let mp = provision(wd.path(), "xfs:maxpct=10", &["--size", "512M", "-q"]);
    let info = sh(&format!("xfs_info {mp}")).1;
    assert!(info.contains("imaxpct=10"), "xfs_info: {info}");
    teardown(&mp);
    no_leftovers(wd.path());
}

#[test]
fn btrfs_mount_options_take_effect() {
    if needs("btrfs", "mkfs.btrfs") {
        return;
    }
    let _g = serial();
    let wd = workdir();
    for (spec, want) in [
        ("btrfs:nodatacow", "nodatacow"),
        ("btrfs:compress=zstd", "compress=zstd"),
        ("btrfs:nodatasum", "nodatasum"),
    ] {
        let mp = provision(wd.path(), spec, &["--size", "512M", "-q"]);
        let line = mountinfo_line(&mp).unwrap();
        assert!(line.contains(want), "{spec}: mountinfo {line}");
        teardown(&mp);
    }
    no_leftovers(wd.path());
}

#[test]
fn zfs_properties_take_effect_and_the_daemon_is_shared() {
    if needs_zfs() {
        return;
    }
    let _g = serial();
    let daemon_before = zfs_fuse_running();
    let wd = workdir();
    let mp = provision(
        wd.path(),
        "zfs:recordsize=128k,primarycache=metadata",
        &["--size", "512M", "-q"],
    );
    let pool = mountinfo_line(&mp)
        .unwrap()
        .split(" - ")
        .nth(1)
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .to_string();
    assert!(pool.starts_with("fsbench-"), "pool {pool}");
    let props = sh(&format!(
        "zfs get -H -o property,value recordsize,primarycache {pool}"
    ))
    .1;
    assert!(props.contains("recordsize\t128K"), "{props}");
    assert!(props.contains("primarycache\tmetadata"), "{props}");
    teardown(&mp);
    assert!(
        !sh("zpool list -H -o name").1.contains(&pool),
        "pool {pool} still there"
    );
    no_leftovers(wd.path());
    daemon_as_before(daemon_before);
}

#[test]
fn tmpfs_and_dir_targets() {
    if skip(!is_root(), "needs root") {
        return;
    }
    let _g = serial();
    let wd = workdir();
    let mp = provision(wd.path(), "tmpfs:nr_inodes=5000", &["--size", "64M", "-q"]);
    let inodes = sh(&format!("df --output=itotal {mp} | tail -n1")).1;
    assert_eq!(inodes.trim(), "5000");
    teardown(&mp);
    // dir: works in a scratch directory of its own and removes it afterwards.
    let user = workdir();
    std::fs::write(user.path().join("keep-me"), "x").unwrap();
    let o = Compare::new(&[&format!("dir:{}", user.path().display())])
        .workload("smoke:size=1M")
        .out(wd.path().join("study").to_str().unwrap())
        .workdir(wd.path().to_str().unwrap())
        .run();
    assert!(o.status.success(), "{}", stderr(&o));
    let left: Vec<_> = std::fs::read_dir(user.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(left, vec![std::ffi::OsString::from("keep-me")]);
    no_leftovers(wd.path());
}

#[test]
fn compare_records_every_phase_and_skips_what_the_host_lacks() {
    if needs("ext4", "mkfs.ext4") {
        return;
    }
    let _g = serial();
    let wd = workdir();
    let out = wd.path().join("study");
    let o = Compare::new(&["ext4", "f2fs", "xfs:maxpct=5"])
        .workload("smoke:size=8M")
        .size("512M")
        .out(out.to_str().unwrap())
        .workdir(wd.path().to_str().unwrap())
        .run();
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(out.join("results.jsonl")).unwrap();
    let recs: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    for r in &recs {
        for f in [
            "schema",
            "target",
            "fs",
            "workload",
            "test",
            "repeat",
            "started_at",
            "duration_s",
            "outcome",
            "metrics",
        ] {
            assert!(r.get(f).is_some(), "record lacks {f}: {r}");
        }
    }
    let ext4: Vec<_> = recs.iter().filter(|r| r["target"] == "ext4").collect();
    assert_eq!(ext4.len(), 2);
    assert!(ext4.iter().all(|r| r["outcome"] == "ok"));
    assert!(ext4[0]["metrics"]["bytes_per_sec"].as_f64().unwrap() > 0.0);
    assert_eq!(
        ext4[1]["metrics"]["verified_bytes"].as_f64().unwrap(),
        8.0 * 1048576.0
    );
    let f2fs: Vec<_> = recs.iter().filter(|r| r["target"] == "f2fs").collect();
    if !kernel_has("f2fs") {
        assert_eq!(f2fs.len(), 1);
        assert_eq!(f2fs[0]["outcome"], "skipped");
        assert!(f2fs[0]["reason"]
            .as_str()
            .unwrap()
            .contains("not supported by this kernel"));
    }
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(m["status"], "complete");
    assert!(m["environment"]["kernel"].as_str().is_some());
    let cmds: Vec<String> = m["targets"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|t| {
            t["commands"].as_array().unwrap().iter().map(|c| {
                c["argv"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|a| a.as_str().unwrap())
                    .collect::<Vec<_>>()
                    .join(" ")
            })
        })
        .collect();
    assert!(
        cmds.iter()
            .any(|c| c.starts_with("mkfs.ext4 ") && c.contains("-b 4096")),
        "{cmds:?}"
    );
    assert!(
        cmds.iter()
            .any(|c| c.starts_with("mkfs.xfs ") && c.contains("maxpct=5")),
        "{cmds:?}"
    );
    assert!(
        cmds.iter().any(|c| c.starts_with("mount -t xfs")),
        "{cmds:?}"
    );
    no_leftovers(wd.path());
}

#[test]
fn a_device_with_a_signature_is_refused_without_wipe_and_kept() {
    if needs("xfs", "mkfs.xfs") {
        return;
    }
    let _g = serial();
    let lo = TestLoop::new(512);
    assert!(sh(&format!("mkfs.xfs -q {}", lo.device)).0);
    let wd = workdir();
    let o = run(&[
        "provision",
        "ext4",
        "--device",
        &lo.device,
        "--workdir",
        wd.path().to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("xfs filesystem signature") && e.contains("--wipe"),
        "{e}"
    );
    assert!(
        sh(&format!("blkid -p -o value -s TYPE {}", lo.device))
            .1
            .contains("xfs"),
        "signature destroyed"
    );
    // With --wipe it is accepted.
    let mp = provision(wd.path(), "ext4", &["--device", &lo.device, "--wipe", "-q"]);
    teardown(&mp);
    // The user's device is left attached; only fsbench's own loop devices are detached.
    assert!(
        sh(&format!(
            "test -e /sys/block/{}/loop/backing_file",
            lo.device.trim_start_matches("/dev/")
        ))
        .0
    );
}

#[test]
fn a_mounted_device_is_refused_even_with_wipe_and_through_a_symlink() {
    if needs("ext4", "mkfs.ext4") {
        return;
    }
    let _g = serial();
    let lo = TestLoop::new(64);
    let mnt = lo.format_and_mount("mkfs.ext4 -q", "mnt");
    let link = lo.dir.path().join("innocent-link");
    std::os::unix::fs::symlink(&lo.device, &link).unwrap();
    let dotted = lo.device.replace("/dev/", "/dev/./");
    let wd = workdir();
    for dev in [lo.device.as_str(), link.to_str().unwrap(), dotted.as_str()] {
        let o = run(&[
            "provision",
            "ext4",
            "--device",
            dev,
            "--wipe",
            "--workdir",
            wd.path().to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(2), "{dev}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("it is mounted"),
            "{dev}: {}",
            stderr(&o)
        );
    }
    assert!(
        mountinfo_line(mnt.to_str().unwrap()).is_some(),
        "the mount was disturbed"
    );
    assert!(sh(&format!("blkid -p -o value -s TYPE {}", lo.device))
        .1
        .contains("ext4"));
}

#[test]
fn a_zeroed_device_is_accepted() {
    if needs("ext4", "mkfs.ext4") {
        return;
    }
    let _g = serial();
    let lo = TestLoop::new(128);
    let wd = workdir();
    let mp = provision(wd.path(), "ext4", &["--device", &lo.device, "-q"]);
    assert!(mountinfo_line(&mp).unwrap().contains(&lo.device));
    teardown(&mp);
}

#[test]
fn dry_run_prints_the_commands_and_changes_nothing() {
    if skip(!is_root(), "needs root") {
        return;
    }
    let _g = serial();
    let wd = workdir();
    let before = sh("losetup -a").1;
    let o = run(&[
        "provision",
        "xfs:maxpct=10",
        "--dry-run",
        "--workdir",
        wd.path().to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("would run: losetup --find --show"), "{out}");
    assert!(
        out.contains("would run: mkfs.xfs -f -q -L fsbench -i maxpct=10 /dev/loopN"),
        "{out}"
    );
    assert!(out.contains("would run: mount -t xfs /dev/loopN"), "{out}");
    assert_eq!(sh("losetup -a").1, before);
    assert_eq!(
        std::fs::read_dir(wd.path()).unwrap().count(),
        0,
        "dry run wrote into the work directory"
    );
}

/// A work directory someone else controls is refused before anything is made in it (issue 15):
/// its owner could plant symlinks where root creates images and mount points.
#[test]
fn a_work_directory_owned_by_another_user_is_refused() {
    if needs("ext4", "mkfs.ext4") {
        return;
    }
    let _g = serial();
    let t = workdir();
    let wd = t.path().join("theirs");
    std::fs::create_dir(&wd).unwrap();
    sh(&format!("chown nobody {0} && chmod 777 {0}", wd.display()));
    let study = t.path().join("study");
    let o = Compare::new(&["ext4"])
        .workload("smoke:size=1M")
        .size("256M")
        .out(study.to_str().unwrap())
        .workdir(wd.to_str().unwrap())
        .run();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("belongs to uid") && e.contains("--workdir"),
        "{e}"
    );
    assert!(!study.exists(), "a study directory was created");
    assert_eq!(
        std::fs::read_dir(&wd).unwrap().count(),
        0,
        "something was made in {wd:?}"
    );
    // Below a directory that others can write, too (a parent of the work directory).
    let o = run(&[
        "provision",
        "ext4",
        "--size",
        "256M",
        "--workdir",
        wd.join("below").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(!wd.join("below").exists());
    no_leftovers(t.path());
}

/// The run directory's name is predictable (time and pid): what is already there, a directory or
/// a symlink to a directory holding a symlink where the image will go, is never used.
#[test]
fn a_planted_run_directory_or_image_symlink_is_never_used() {
    if needs("ext4", "mkfs.ext4") {
        return;
    }
    let _g = serial();
    let t = workdir();
    let wd = t.path().join("wd");
    let decoy = t.path().join("decoy");
    std::fs::create_dir_all(&decoy).unwrap();
    let victim = t.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    std::os::unix::fs::symlink(&victim, decoy.join("fsbench-0.img")).unwrap();
    for planted_symlink in [false, true] {
        std::fs::create_dir_all(&wd).unwrap();
        // fsbench stopped before it starts, so that its pid is known while the names are planted.
        let child = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!(
                "kill -STOP $$; exec {} provision ext4 --size 256M -q --workdir {}",
                crate::common::exe().display(),
                wd.display()
            ))
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let pid = child.id();
        while !std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .unwrap()
            .contains(") T ")
        {
            std::thread::sleep(Duration::from_millis(10));
        }
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs();
        for s in now..now + 4 {
            let stamp = sh(&format!("date -u -d @{s} +%Y%m%dT%H%M%S")).1;
            let run_dir = wd.join(format!("fsbench-{}-{pid}", stamp.trim()));
            if planted_symlink {
                std::os::unix::fs::symlink(&decoy, &run_dir).unwrap();
            } else {
                std::fs::create_dir(&run_dir).unwrap();
            }
        }
        sh(&format!("kill -CONT {pid}"));
        let o = child.wait_with_output().unwrap();
        assert!(
            !o.status.success(),
            "provisioned into a planted run directory"
        );
        let e = String::from_utf8_lossy(&o.stderr);
        assert!(
            e.contains("already exists") && e.contains("never reuses"),
            "{e}"
        );
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        assert_eq!(
            std::fs::read_dir(&decoy).unwrap().count(),
            1,
            "written into the decoy"
        );
        no_leftovers(&wd);
        std::fs::remove_dir_all(&wd).unwrap();
    }
}
