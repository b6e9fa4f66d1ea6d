//! Privileged tier: real mkfs, real mounts, real loop devices, real zfs-fuse. Needs root; a test
//! whose tool is missing prints why it skips. These tests run one at a time (common::serial).

mod common;
use common::*;

use std::path::Path;
use std::time::{Duration, Instant};

/// `fsbench provision SPEC` in `wd`; returns the mount point (last line of standard output).
fn provision(wd: &Path, spec: &str, extra: &[&str]) -> String {
    let mut args = vec!["provision", spec, "--workdir", wd.to_str().unwrap()];
    args.extend_from_slice(extra);
    let o = run(&args);
    assert!(
        o.status.success(),
        "provision {spec} failed:\n{}",
        stderr(&o)
    );
    let mp = stdout(&o).lines().last().unwrap_or_default().to_string();
    assert!(mountinfo_line(&mp).is_some(), "{mp} is not mounted");
    mp
}

fn teardown(mp: &str) {
    let o = run(&["teardown", mp]);
    assert!(o.status.success(), "teardown {mp}: {}", stderr(&o));
    assert!(
        mountinfo_line(mp).is_none(),
        "{mp} still mounted after teardown"
    );
}

fn no_leftovers(wd: &Path) {
    assert!(
        loops_backed_by_dir(wd).is_empty(),
        "loop devices left: {:?}",
        loops_backed_by_dir(wd)
    );
    assert!(
        !mounts_text().contains(&*wd.to_string_lossy()),
        "mounts left under {}",
        wd.display()
    );
    let imgs = sh(&format!("find {} -name '*.img'", wd.display())).1;
    assert!(imgs.trim().is_empty(), "images left: {imgs}");
}

/// fsbench stops zfs-fuse only if it started it: running now exactly when it ran before.
fn daemon_as_before(daemon_before: bool) {
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        zfs_fuse_running(),
        daemon_before,
        "zfs-fuse running state changed"
    );
}

fn needs_zfs() -> bool {
    skip(!is_root(), "needs root")
        || skip(
            !have("zpool"),
            "zpool not installed (apt-get install zfs-fuse)",
        )
}

fn needs(fs: &str, tool: &str) -> bool {
    skip(!is_root(), "needs root")
        || skip(!kernel_has(fs), &format!("kernel has no {fs}"))
        || skip(!have(tool), &format!("{tool} not installed"))
}

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
    let o = run(&[
        "compare",
        &format!("dir:{}", user.path().display()),
        "--workload",
        "smoke:size=1M",
        "--out",
        wd.path().join("study").to_str().unwrap(),
        "--workdir",
        wd.path().to_str().unwrap(),
    ]);
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
    let o = run(&[
        "compare",
        "ext4",
        "f2fs",
        "xfs:maxpct=5",
        "--workload",
        "smoke:size=8M",
        "--size",
        "512M",
        "--out",
        out.to_str().unwrap(),
        "--workdir",
        wd.path().to_str().unwrap(),
    ]);
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
    assert!(sh(&format!("mkfs.ext4 -q {}", lo.device)).0);
    let mnt = lo.dir.path().join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    assert!(sh(&format!("mount {} {}", lo.device, mnt.display())).0);
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

/// Waits until a mount appears under `dir`.
fn wait_for_mount_under(dir: &Path, secs: u64) -> bool {
    let end = Instant::now() + Duration::from_secs(secs);
    while Instant::now() < end {
        if mounts_text().contains(&*dir.to_string_lossy()) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    false
}

fn spawn_compare(wd: &Path, target: &str) -> std::process::Child {
    bin()
        .args([
            "compare",
            target,
            "--workload",
            "idle:seconds=120",
            "--size",
            "512M",
            "-q",
        ])
        .arg("--out")
        .arg(wd.join("study"))
        .arg("--workdir")
        .arg(wd)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

#[test]
fn cleanup_after_sigkill_removes_only_fsbenchs_own() {
    if needs("ext4", "mkfs.ext4") {
        return;
    }
    let _g = serial();
    // A decoy that fsbench does not own: a loop device and a mount of the test's.
    let decoy = TestLoop::new(64);
    assert!(sh(&format!("mkfs.ext4 -q {}", decoy.device)).0);
    let decoy_mnt = decoy.dir.path().join("decoy-mnt");
    std::fs::create_dir(&decoy_mnt).unwrap();
    assert!(sh(&format!("mount {} {}", decoy.device, decoy_mnt.display())).0);

    let wd = workdir();
    let mut child = spawn_compare(wd.path(), "ext4");
    assert!(
        wait_for_mount_under(wd.path(), 60),
        "fsbench never mounted its target"
    );
    child.kill().unwrap(); // SIGKILL: no teardown
    child.wait().unwrap();
    assert!(
        !loops_backed_by_dir(wd.path()).is_empty(),
        "expected a leftover loop device"
    );

    // --dry-run lists and changes nothing.
    let o = run(&["cleanup", "--dry-run"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("leftover target 'ext4'"),
        "{}",
        stdout(&o)
    );
    assert!(
        mounts_text().contains(&*wd.path().to_string_lossy()),
        "dry run unmounted"
    );

    let o = run(&["cleanup"]);
    assert!(o.status.success(), "{}", stderr(&o));
    no_leftovers(wd.path());
    // The decoy is untouched.
    assert!(
        mountinfo_line(decoy_mnt.to_str().unwrap()).is_some(),
        "decoy mount removed"
    );
    assert!(
        sh(&format!(
            "test -e /sys/block/{}/loop/backing_file",
            decoy.device.trim_start_matches("/dev/")
        ))
        .0,
        "decoy loop detached"
    );
}

#[test]
fn the_next_run_cleans_a_killed_zfs_run_and_stops_the_daemon_it_started() {
    if needs_zfs() {
        return;
    }
    let _g = serial();
    let daemon_before = zfs_fuse_running();
    let wd = workdir();
    let mut child = spawn_compare(wd.path(), "zfs");
    assert!(
        wait_for_mount_under(wd.path(), 60),
        "fsbench never mounted its pool"
    );
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        sh("zpool list -H -o name").1.contains("fsbench-"),
        "expected a leftover pool"
    );

    let wd2 = workdir();
    let o = run(&[
        "compare",
        "tmpfs",
        "--workload",
        "smoke:size=1M",
        "--out",
        wd2.path().join("s").to_str().unwrap(),
        "--workdir",
        wd2.path().to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("cleaned up what an earlier run left behind"),
        "{}",
        stderr(&o)
    );
    assert!(
        !sh("zpool list -H -o name").1.contains("fsbench-"),
        "pool left"
    );
    no_leftovers(wd.path());
    daemon_as_before(daemon_before);
}

#[test]
fn sigterm_tears_down_and_keeps_the_results() {
    if needs("ext4", "mkfs.ext4") {
        return;
    }
    let _g = serial();
    let wd = workdir();
    let out = wd.path().join("study");
    let mut child = bin()
        .args([
            "compare",
            "ext4",
            "--workload",
            "smoke:size=4M",
            "--workload",
            "idle:seconds=120",
            "--size",
            "512M",
            "-q",
        ])
        .arg("--out")
        .arg(&out)
        .arg("--workdir")
        .arg(wd.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let results = out.join("results.jsonl");
    let end = Instant::now() + Duration::from_secs(60);
    while std::fs::read_to_string(&results)
        .map(|t| t.lines().count() < 2)
        .unwrap_or(true)
    {
        assert!(Instant::now() < end, "no smoke results");
        std::thread::sleep(Duration::from_millis(100));
    }
    sh(&format!("kill -TERM {}", child.id()));
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(143));
    no_leftovers(wd.path());
    let text = std::fs::read_to_string(&results).unwrap();
    assert!(
        text.contains("\"test\":\"write\"") && text.contains("\"test\":\"read\""),
        "{text}"
    );
    let m = std::fs::read_to_string(out.join("manifest.json")).unwrap();
    assert!(m.contains("\"status\": \"interrupted\""), "{m}");
}

/// Every field a block record must carry (issue 3), checked on each record of a study.
fn check_block_records(out: &Path, target: &str, tests: &[&str]) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(out.join("results.jsonl")).unwrap();
    let recs: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|r: &serde_json::Value| r["target"] == target)
        .collect();
    let names: Vec<&str> = recs.iter().map(|r| r["test"].as_str().unwrap()).collect();
    assert_eq!(names, tests, "{target}");
    for r in &recs {
        let name = r["test"].as_str().unwrap();
        assert_eq!(r["outcome"], "ok", "{target} {name}: {r}");
        let m = &r["metrics"];
        let device = ["device_write_bytes", "device_read_bytes"];
        for k in fsbench::workload::block::RECORD_METRICS
            .iter()
            .chain(&device)
        {
            assert!(m[k].as_f64().is_some(), "{target} {name} lacks {k}");
        }
        assert!(m["iops"].as_f64().unwrap() > 0.0, "{target} {name}");
        let p = |k: &str| m[k].as_f64().unwrap();
        assert!(p("lat_p50_ns") <= p("lat_p99_ns") && p("lat_p99_ns") <= p("lat_max_ns"));
        let h =
            fsbench::metrics::hist::decode(r["histograms"]["lat_ns"].as_str().unwrap()).unwrap();
        assert_eq!(
            h.len() as f64,
            p("ios"),
            "{target} {name}: histogram holds every I/O"
        );
        assert!(!r["series"]["iops"].as_array().unwrap().is_empty());
        assert_eq!(r["config"]["direct"], true);
        assert_eq!(r["config"]["engine"], "io_uring");
        if name.ends_with("-write") {
            assert!(p("write_bytes") > 0.0 && p("read_bytes") == 0.0);
            assert!(m["write_amplification"].as_f64().is_some(), "{name}");
        } else {
            assert!(p("read_bytes") > 0.0 && p("write_bytes") == 0.0);
        }
    }
    recs
}

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
    let o = run(&[
        "compare",
        "ext4",
        "--workload",
        "cdm",
        "--runtime",
        "500ms",
        "--file-size",
        "64M",
        "--size",
        "512M",
        "--out",
        out.to_str().unwrap(),
        "--workdir",
        wd.path().to_str().unwrap(),
    ]);
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
    let o = run(&[
        "compare",
        "raw",
        "--workload",
        "cdm",
        "--runtime",
        "500ms",
        "--file-size",
        "64M",
        "--device",
        &dev.device,
        "--out",
        out.to_str().unwrap(),
        "--workdir",
        dev.dir.path().to_str().unwrap(),
    ]);
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
    let o = run(&[
        "compare",
        "raw",
        "--workload",
        "cdm",
        "--device",
        &dev.device,
        "--out",
        dev.dir.path().join("refused").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--wipe"), "{}", stderr(&o));
    assert!(sh(&format!("blkid -p {}", dev.device)).1.contains("ext4"));
}

/// (used bytes, used inodes) of a mounted filesystem, from df.
fn df_used(mp: &str) -> (f64, f64) {
    let (_, out) = sh(&format!("sync; df --output=used,iused -B1 {mp} | tail -n1"));
    let v: Vec<f64> = out.split_whitespace().map(|x| x.parse().unwrap()).collect();
    (v[0], v[1])
}

fn records_of(out: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(out.join("results.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
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
        let o = run(&[
            "compare",
            &format!("dir:{mp}"),
            "--workload",
            &spec,
            "--out",
            out.to_str().unwrap(),
            "--workdir",
            wd.path().to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{fs}: {}", stderr(&o));
        let (used1, iused1) = df_used(&mp);
        let recs = records_of(&out);
        let w = &recs[0]["metrics"];
        assert_eq!(recs[0]["test"], "write");
        assert_eq!(w["files"].as_f64(), Some(20_000.0), "{fs}");
        // Inodes: the 20,000 files, 301 folders and 2 bookkeeping files, as df counts them
        // (btrfs reports no inode counts to df).
        let inodes = w["inodes_used"].as_f64().unwrap();
        if iused1 > 0.0 {
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
    let out = wd.path().join("study");
    let o = run(&[
        "compare",
        "ext4:inodes=3000",
        "--workload",
        "files:tops=10,subs=10,files=100,threads=2",
        "--size",
        "256M",
        "--out",
        out.to_str().unwrap(),
        "--workdir",
        wd.path().to_str().unwrap(),
    ]);
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

/// Starts fsbench with these arguments, its output discarded (a run to be killed).
fn spawn_quiet(args: &[&str]) -> std::process::Child {
    bin()
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

/// Waits (at most a minute) until `path` holds at least `n` lines.
fn wait_for_lines(path: &Path, n: usize) {
    let t0 = Instant::now();
    while std::fs::read_to_string(path)
        .map(|t| t.lines().count())
        .unwrap_or(0)
        < n
    {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "{} never reached {n} lines",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_killed_files_run_resumes_without_writing_a_file_twice() {
    if skip(!is_root(), "needs root") {
        return;
    }
    let _g = serial();
    let wd = workdir();
    let tree = wd.path().join("tree");
    let spec = format!(
        "files:tops=20,subs=10,files=200,seed=42,threads=2,fsync=dir,path={}",
        tree.display()
    );
    let mut child = spawn_quiet(&[
        "compare",
        &format!("dir:{}", wd.path().display()),
        "--workload",
        &format!("{spec},phases=write"),
        "--out",
        wd.path().join("first").to_str().unwrap(),
        "--workdir",
        wd.path().to_str().unwrap(),
    ]);
    // Kill it once some subfolders are checkpointed, long before the 40,000 files are written.
    let progress = tree.join(".fsbench-files.progress");
    wait_for_lines(&progress, 20);
    child.kill().unwrap();
    child.wait().unwrap();
    let done_before = std::fs::read_to_string(&progress).unwrap().lines().count();
    assert!(done_before < 200, "the run finished before it was killed");
    // Remember the identity of every file of the checkpointed subfolders.
    use std::os::unix::fs::MetadataExt;
    let ino = |p: &Path| std::fs::metadata(p).map(|m| m.ino()).ok();
    let first = tree.join("t000/s000/f0");
    let before = ino(&first).expect("the first file exists");
    let out = wd.path().join("second");
    let o = run(&[
        "compare",
        &format!("dir:{}", wd.path().display()),
        "--workload",
        &format!("{spec},resume=1,phases=write+read"),
        "--out",
        out.to_str().unwrap(),
        "--workdir",
        wd.path().to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let recs = records_of(&out);
    let w = &recs[0]["metrics"];
    assert_eq!(w["files_total"].as_f64(), Some(40_000.0));
    assert!(
        w["files"].as_f64().unwrap() < 40_000.0,
        "only what was missing is written"
    );
    assert!(recs[0]["notes"][0]
        .as_str()
        .unwrap()
        .starts_with("resumed:"));
    assert_eq!(
        ino(&first),
        Some(before),
        "a finished file was not written again"
    );
    let r = &recs[1]["metrics"];
    assert_eq!(
        r["files"].as_f64(),
        Some(40_000.0),
        "every file counted once"
    );
    assert_eq!(r["integrity_ok"].as_f64(), Some(40_000.0));
    // Each subfolder is checkpointed once, except one the kill cut short (logged again whole).
    let lines = std::fs::read_to_string(&progress).unwrap();
    let units: std::collections::BTreeSet<&str> = lines
        .lines()
        .map(|l| l.split(' ').next().unwrap())
        .collect();
    assert_eq!(units.len(), 200);
}

#[test]
fn many_files_on_zfs_fuse_tear_down_cleanly() {
    if needs_zfs() {
        return;
    }
    let _g = serial();
    let daemon_before = zfs_fuse_running();
    let wd = workdir();
    let out = wd.path().join("study");
    let o = run(&[
        "compare",
        "zfs",
        "--workload",
        "files:count=5000,threads=2",
        "--size",
        "1G",
        "--out",
        out.to_str().unwrap(),
        "--workdir",
        wd.path().to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let recs = records_of(&out);
    assert_eq!(recs[1]["metrics"]["integrity_ok"].as_f64(), Some(5000.0));
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
fn a_killed_study_resumes_and_every_target_test_repeat_appears_once() {
    if needs("ext4", "mkfs.ext4") || needs("xfs", "mkfs.xfs") {
        return;
    }
    let _g = serial();
    let wd = workdir();
    let out = wd.path().join("study");
    let mut child = spawn_quiet(&[
        "compare",
        "ext4",
        "xfs",
        "--workload",
        "smoke:size=4M",
        "--workload",
        "idle:seconds=30",
        "--repeat",
        "2",
        "--size",
        "512M",
        "--out",
        out.to_str().unwrap(),
        "--workdir",
        wd.path().to_str().unwrap(),
    ]);
    // ext4's smoke records of repeat 0 are in; it now idles. Kill it there.
    wait_for_lines(&out.join("results.jsonl"), 2);
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(
        records_of(&out).len(),
        2,
        "killed with ext4's repeat 0 half done"
    );
    // --resume runs the manifest's plan; shorten its idle there so that the test stays quick.
    let mpath = out.join("manifest.json");
    let m = std::fs::read_to_string(&mpath)
        .unwrap()
        .replace("idle:seconds=30", "idle:seconds=0")
        .replace("\"30\"", "\"0\"");
    std::fs::write(&mpath, m).unwrap();
    let o = run(&[
        "compare",
        "--resume",
        out.to_str().unwrap(),
        "--workdir",
        wd.path().to_str().unwrap(),
    ]);
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
    assert_eq!(
        n,
        keys.len(),
        "a (target, test, repeat) appears twice: {keys:?}"
    );
    assert_eq!(n, 8, "2 targets x 2 tests x 2 repeats: {keys:?}");
    // What the killed run measured is kept aside, not lost.
    let partial = std::fs::read_to_string(out.join("results.partial.jsonl")).unwrap();
    assert_eq!(partial.lines().count(), 2);
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&mpath).unwrap()).unwrap();
    assert_eq!(m["status"], "complete");
    assert_eq!(m["completed"].as_array().unwrap().len(), 4);
    assert!(out.join("report.md").exists());
    no_leftovers(wd.path());
}
