//! Privileged tier, issue 26: fsbench never touches what it does not own. Each test sets decoys
//! (loop devices over the test's own images, a user's pool and mounts), reproduces a way fsbench
//! used to reach them, and checks they are intact. Needs root; tests run one at a time.

use crate::common::*;

use std::path::Path;
use std::time::{Duration, Instant};

#[test]
fn devices_named_in_mkfs_or_mount_options_are_refused_and_the_decoy_keeps_its_filesystem() {
    if needs("xfs", "mkfs.xfs") || needs("btrfs", "mkfs.btrfs") {
        return;
    }
    let _g = serial();
    let decoy = TestLoop::new(320);
    assert!(sh(&format!("mkfs.xfs -q -f {}", decoy.device)).0);
    let link = decoy.dir.path().join("innocent-name");
    std::os::unix::fs::symlink(&decoy.device, &link).unwrap();
    let wd = workdir();
    let bare = decoy.device.trim_start_matches("/dev/").to_string();
    for spec in [
        format!("btrfs:mkfs={}", decoy.device),
        format!("xfs:mkfs='-l logdev={},size=16m'", decoy.device),
        format!("btrfs:mkfs={}", link.display()),
        format!("ext4:mkfs='-J device={}'", decoy.device),
        format!("xfs:mount='logdev={}'", decoy.device),
        format!("btrfs:mkfs={bare}"),
    ] {
        let out = wd.path().join("study");
        let o = Compare::new(&[&spec])
            .workload("smoke:size=1M")
            .size("512M")
            .out(out.to_str().unwrap())
            .workdir(wd.path().to_str().unwrap())
            .run();
        assert_eq!(o.status.code(), Some(2), "{spec}: {}", stderr(&o));
        assert!(stderr(&o).contains("is refused"), "{spec}: {}", stderr(&o));
        assert!(!out.exists(), "{spec}: a study was created");
        let o = run(&["provision", &spec, "--workdir", wd.path().to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "provision {spec}: {}", stderr(&o));
        assert_eq!(fs_type(&decoy.device), "xfs", "{spec} touched the decoy");
    }
    no_leftovers(wd.path());
}

#[test]
fn a_loop_device_stacked_on_the_device_makes_it_in_use() {
    if needs("ext4", "mkfs.ext4") {
        return;
    }
    let _g = serial();
    let disk = TestLoop::new(128);
    // A loop at offset 1 MiB on the "disk", with a mounted filesystem holding a file.
    let (ok, stacked) = sh(&format!("losetup --find --show -o 1048576 {}", disk.device));
    assert!(ok, "{stacked}");
    let stacked = stacked.trim().to_string();
    let mnt = disk.dir.path().join("m");
    std::fs::create_dir(&mnt).unwrap();
    assert!(
        sh(&format!(
            "mkfs.ext4 -q {stacked} && mount {stacked} {}",
            mnt.display()
        ))
        .0
    );
    std::fs::write(mnt.join("keep"), "precious").unwrap();
    let wd = workdir();
    let o = Compare::new(&["ext4"])
        .workload("smoke:size=1M")
        .args(&["--device", &disk.device, "--wipe"])
        .out(wd.path().join("s").to_str().unwrap())
        .workdir(wd.path().to_str().unwrap())
        .run();
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(
        e.contains(&format!("the loop device {stacked} is attached to it")),
        "{e}"
    );
    assert_eq!(
        std::fs::read_to_string(mnt.join("keep")).unwrap(),
        "precious"
    );
    assert!(sh(&format!("umount {} && e2fsck -fn {stacked}", mnt.display())).0);
    assert!(sh(&format!("losetup -d {stacked}")).0);
}

/// A zfs-fuse daemon for the test: the one running, or one started here (stopped by the guard).
struct Daemon(Option<std::process::Child>);

impl Daemon {
    fn up() -> Daemon {
        if zfs_fuse_running() {
            return Daemon(None);
        }
        use std::os::unix::process::CommandExt;
        let child = std::process::Command::new("zfs-fuse")
            .arg("--no-daemon")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .process_group(0)
            .spawn()
            .unwrap();
        let t0 = Instant::now();
        while !sh("zpool list -H").0 {
            assert!(
                t0.elapsed() < Duration::from_secs(20),
                "zfs-fuse did not answer"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        Daemon(Some(child))
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        if let Some(c) = &mut self.0 {
            let _ = sh(&format!("kill {}", c.id()));
            let _ = c.wait();
        }
    }
}

#[test]
fn cleanup_destroys_only_pools_fsbench_made_and_marked() {
    if needs_zfs() {
        return;
    }
    let _g = serial();
    let daemon = Daemon::up();
    let mine = TestLoop::new(128);
    let fake = TestLoop::new(128);
    // Stamped before any process alive now started: pid 1 is not the run's maker.
    let gen = "fsbench-20000101T000000-1-0";
    assert!(
        sh(&format!(
            "zpool create -m none fsbench-mine {}",
            mine.device
        ))
        .0
    );
    // An unrecorded pool with a name fsbench generates and its mark: a leftover whose state was
    // lost. Cleanup destroys it.
    assert!(
        sh(&format!(
            "zpool create -m none -o cachefile=none -O fsbench:run=20000101T000000-1-0 {gen} {}",
            fake.device
        ))
        .0
    );
    let o = run(&["cleanup"]);
    let pools = sh("zpool list -H -o name").1;
    let _ = sh("zpool destroy -f fsbench-mine");
    let _ = sh(&format!("zpool destroy -f {gen}"));
    drop(daemon);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        pools.contains("fsbench-mine"),
        "the user's pool was destroyed"
    );
    assert!(!pools.contains(gen), "the marked leftover stayed: {pools}");
    assert!(
        stdout(&o).contains("left alone: pool fsbench-mine"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn cleanup_unmounts_only_fsbenchs_own_mount_points() {
    if skip(!is_root(), "needs root") {
        return;
    }
    let _g = serial();
    let wd = workdir();
    let w = wd.path().to_str().unwrap();
    // The work directory and a directory once given as --workdir, both marked.
    let sub = wd.path().join("sub");
    for d in [w, sub.to_str().unwrap()] {
        let mp = provision(Path::new(d), "tmpfs", &["--size", "8M"]);
        teardown(&mp);
    }
    let user_mounts = [wd.path().join("mine"), sub.join("data").join("inner")];
    for m in &user_mounts {
        std::fs::create_dir_all(m).unwrap();
        assert!(sh(&format!("mount -t tmpfs -o size=1m user {}", m.display())).0);
        std::fs::write(m.join("keep"), "precious").unwrap();
    }
    // A mount with the names fsbench makes and no state: what a lost state directory leaves.
    let leftover = wd
        .path()
        .join("fsbench-20000101T000000-7")
        .join("mnt-0-tmpfs");
    std::fs::create_dir_all(&leftover).unwrap();
    assert!(
        sh(&format!(
            "mount -t tmpfs -o size=1m x {}",
            leftover.display()
        ))
        .0
    );
    let o = run(&["cleanup"]);
    let survived: Vec<bool> = user_mounts
        .iter()
        .map(|m| mountinfo_line(m.to_str().unwrap()).is_some())
        .collect();
    for m in &user_mounts {
        let _ = sh(&format!("umount {}", m.display()));
    }
    let _ = sh(&format!("umount {}", leftover.display()));
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(survived, [true, true], "a user's mount was unmounted");
    assert!(stdout(&o).contains("unrecorded mount"), "{}", stdout(&o));
    // `--workdir /` (or another system directory) is refused, dry run or not.
    for d in ["/", "/usr", "/var/tmp"] {
        let o = run(&["provision", "tmpfs", "--workdir", d]);
        assert_eq!(o.status.code(), Some(2), "{d}: {}", stderr(&o));
        assert!(stderr(&o).contains("system directory"), "{}", stderr(&o));
        let o = run(&["compare", "ext4", "--workdir", d, "--dry-run"]);
        assert_eq!(o.status.code(), Some(2), "{d}: {}", stderr(&o));
    }
}

#[test]
fn a_cleanup_with_another_state_directory_leaves_a_live_runs_target_alone() {
    if needs("ext4", "mkfs.ext4") {
        return;
    }
    let _g = serial();
    let wd = workdir();
    let out = wd.path().join("s");
    let w = wd.path().to_str().unwrap();
    let state = |name: &str| wd.path().join(name).to_str().unwrap().to_string();
    // A run whose state is in one directory, and a cleanup that reads another: the run's mount
    // and loop device carry names only fsbench makes, and no state file the cleanup sees.
    let mut child = bin()
        .env("FSBENCH_STATE_DIR", state("state-run"))
        .args(
            Compare::new(&["ext4"])
                .workload("block:rw=randread,bs=4k,size=8m,runtime=3s,time_based=1")
                .size("256M")
                .args(&["-q"])
                .out(out.to_str().unwrap())
                .workdir(w)
                .argv(),
        )
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while !mounts_text().contains(&format!("{w}/fsbench-")) {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "the run never mounted"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let o = bin()
        .env("FSBENCH_STATE_DIR", state("state-cleanup"))
        .arg("cleanup")
        .output()
        .unwrap();
    let status = child.wait().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let said = stdout(&o);
    assert!(
        said.contains(&format!("mount {w}/fsbench-"))
            && said.contains("the run that made it is running"),
        "{said}"
    );
    assert!(!said.contains(&format!("unrecorded mount {w}")), "{said}");
    assert!(
        status.success(),
        "the live run failed under the cleanup: {said}"
    );
    let recs = records_of(&out);
    assert!(
        !recs.is_empty() && recs.iter().all(|r| r["outcome"] == "ok"),
        "{recs:?}"
    );
    no_leftovers(wd.path());
}

#[test]
fn a_cleanup_during_a_zfs_compare_leaves_its_pool_and_daemon_alone() {
    if needs_zfs() {
        return;
    }
    let _g = serial();
    let daemon_before = zfs_fuse_running();
    for round in 0..3 {
        let wd = workdir();
        let out = wd.path().join("s");
        let mut child = Compare::new(&["zfs"])
            .workload("smoke:size=1M")
            .size("256M")
            .args(&["-q"])
            .out(out.to_str().unwrap())
            .workdir(wd.path().to_str().unwrap())
            .spawn();
        let status = loop {
            let o = run(&["cleanup", "-q"]);
            assert!(o.status.code() != Some(101), "{}", stderr(&o));
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        assert!(status.success(), "round {round}: the compare failed");
        let recs = records_of(&out);
        assert!(
            !recs.is_empty() && recs.iter().all(|r| r["outcome"] == "ok"),
            "round {round}: {recs:?}"
        );
        no_leftovers(wd.path());
    }
    assert!(!sh("zpool list -H -o name").1.contains("fsbench-2"));
    daemon_as_before(daemon_before);
}

#[test]
fn a_loop_device_attached_again_since_it_was_listed_is_not_detached() {
    if skip(!is_root(), "needs root") {
        return;
    }
    let _g = serial();
    let a = TestLoop::new(16);
    let other = a.dir.path().join("other.img");
    std::fs::File::create(&other)
        .unwrap()
        .set_len(16 << 20)
        .unwrap();
    let dev = Path::new(&a.device);
    let listed = fsbench::sys::loopctl::backing(dev).unwrap();
    // Detached and attached again (another run's image now) between listing and detaching.
    assert!(
        sh(&format!(
            "losetup -d {0} && losetup {0} {1}",
            a.device,
            other.display()
        ))
        .0
    );
    assert!(!fsbench::sys::loopctl::detach_if_backed_by(dev, listed).unwrap());
    let back = std::fs::read_to_string(format!(
        "/sys/block/{}/loop/backing_file",
        a.device.trim_start_matches("/dev/")
    ))
    .unwrap();
    assert_eq!(back.trim(), other.to_str().unwrap());
    // The same file still behind it: detached.
    let now = fsbench::sys::loopctl::backing(dev).unwrap();
    assert!(fsbench::sys::loopctl::detach_if_backed_by(dev, now).unwrap());
}

/// A small tmpfs of the test's at `dir` (unmounted when the guard drops).
struct SmallFs(std::path::PathBuf);

impl SmallFs {
    fn new(dir: &Path, size: &str) -> SmallFs {
        std::fs::create_dir_all(dir).unwrap();
        assert!(
            sh(&format!(
                "mount -t tmpfs -o size={size} t {}",
                dir.display()
            ))
            .0
        );
        SmallFs(dir.to_path_buf())
    }
}

impl Drop for SmallFs {
    fn drop(&mut self) {
        let _ = sh(&format!("umount {}", self.0.display()));
    }
}

/// The failed record of workload `w` in a study, with its structured failure checked.
fn failure_of(out: &Path, w: &str, op: &str, errno: &str) {
    let recs = records_of(out);
    let r = recs
        .iter()
        .find(|r| r["outcome"] == "failed" && r["workload"].as_str().unwrap().starts_with(w))
        .unwrap_or_else(|| panic!("no failed {w} record: {recs:?}"));
    let f = &r["failure"];
    assert_eq!(f["errno"], errno, "{w}: {r}");
    assert_eq!(f["op"], op, "{w}: {r}");
    assert!(f["space"]["bytes_avail"].is_number(), "{w}: {r}");
}

#[test]
fn iozone_and_bonnie_failed_writes_carry_the_structured_failure() {
    if needs("ext4", "mkfs.ext4")
        || skip(!have("fusermount") && !have("fusermount3"), "no FUSE tools")
    {
        return;
    }
    let _g = serial();
    let t = workdir();
    // bonnie's file creation on a filesystem out of inodes: ENOSPC.
    let small = SmallFs::new(&t.path().join("small"), "64m,nr_inodes=300");
    let out = t.path().join("s");
    let o = Compare::new(&[&format!("dir:{}", small.0.display())])
        .workload("bonnie:size=4M,ram=0,files=1")
        .args(&["-q"])
        .out(out.to_str().unwrap())
        .run();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    failure_of(&out, "bonnie", "create", "ENOSPC");
    drop(small);
    // iozone on a disk that fails its writes: EIO at the direct write.
    let out = t.path().join("s2");
    let o = Compare::new(&["ext4:fail_writes_after=2M"])
        .workload("iozone:min_file=8M,max_file=8M,min_record=1M,max_record=1M,tests=write,direct=1")
        .size("64M")
        .args(&["-q"])
        .out(out.to_str().unwrap())
        .workdir(t.path().to_str().unwrap())
        .run();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    failure_of(&out, "iozone", "write", "EIO");
    no_leftovers(t.path());
}

#[test]
fn a_full_disk_under_the_study_is_a_clear_error_and_leaves_no_temporary_file() {
    if skip(!is_root(), "needs root") {
        return;
    }
    let _g = serial();
    let t = workdir();
    let tiny = SmallFs::new(&t.path().join("tiny"), "48k");
    let work = t.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let out = tiny.0.join("study");
    let o = Compare::new(&[&format!("dir:{}", work.display())])
        .workload("block:ioengine=null,size=1m,runtime=20ms")
        .args(&["-q", "--repeat", "60"])
        .out(out.to_str().unwrap())
        .run();
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(e.contains("is full"), "{e}");
    let names: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(!names.iter().any(|n| n.ends_with(".tmp")), "{names:?}");
    // What fitted is there, readable.
    assert!(!records_of(&out).is_empty());
    drop(tiny);
}
