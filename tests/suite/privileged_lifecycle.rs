//! Privileged tier, what survives a kill or a signal: cleanup after SIGKILL, SIGTERM and SIGHUP
//! (a closed terminal) teardown,
//! resuming a killed files run and a killed study. Needs root; tests run one at a time.

use crate::common::*;

#[allow(unused_imports)]
use std::path::Path;
#[allow(unused_imports)]
use std::time::{Duration, Instant};

#[test]
fn cleanup_after_sigkill_removes_only_fsbenchs_own() {
    if needs("ext4", "mkfs.ext4") {
        return;
    }
    let _g = serial();
    // A decoy that fsbench does not own: a loop device and a mount of the test's.
    let decoy = TestLoop::new(64);
    let decoy_mnt = decoy.format_and_mount("mkfs.ext4 -q", "decoy-mnt");

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
    // It says what it would do, not what it did.
    let said = format!("{}{}", stdout(&o), stderr(&o));
    assert!(
        said.contains("would unmount") && said.contains("would detach"),
        "{said}"
    );
    assert!(
        !said.contains("  unmounted") && !said.contains("  detached"),
        "{said}"
    );

    let o = run(&["cleanup"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("  unmounted"), "{}", stderr(&o));
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
    let o = Compare::new(&["tmpfs"])
        .workload("smoke:size=1M")
        .out(wd2.path().join("s").to_str().unwrap())
        .workdir(wd2.path().to_str().unwrap())
        .run();
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

/// A compare on ext4 that records a smoke test, then idles: a run to stop mid-phase.
fn smoke_then_idle(wd: &Path, out: &Path) -> Compare {
    Compare::new(&["ext4"])
        .workload("smoke:size=4M")
        .workload("idle:seconds=120")
        .size("512M")
        .out(out.to_str().unwrap())
        .workdir(wd.to_str().unwrap())
}

/// The smoke records are kept and the manifest says the study was interrupted; returns it.
fn assert_interrupted_with_results(out: &Path) -> String {
    let text = std::fs::read_to_string(out.join("results.jsonl")).unwrap();
    assert!(
        text.contains("\"test\":\"write\"") && text.contains("\"test\":\"read\""),
        "{text}"
    );
    let m = std::fs::read_to_string(out.join("manifest.json")).unwrap();
    assert!(m.contains("\"status\": \"interrupted\""), "{m}");
    m
}

#[test]
fn sigterm_tears_down_and_keeps_the_results() {
    if needs("ext4", "mkfs.ext4") {
        return;
    }
    let _g = serial();
    let wd = workdir();
    let out = wd.path().join("study");
    let mut child = smoke_then_idle(wd.path(), &out).args(&["-q"]).spawn();
    wait_for_records(&out.join("results.jsonl"), 2, 60);
    sh(&format!("kill -TERM {}", child.id()));
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(143));
    no_leftovers(wd.path());
    assert_interrupted_with_results(&out);
}

/// A closed terminal (a dropped SSH session): fsbench runs on a pseudo-terminal that `script`
/// holds; killing `script` closes the terminal, and the kernel hangs it up (SIGHUP to the
/// session). The run gets the same orderly end as SIGTERM: results kept, targets torn down, its
/// own exit status (129), though the terminal it wrote its progress to is gone.
#[test]
fn a_closed_terminal_tears_down_and_keeps_the_results() {
    if needs("ext4", "mkfs.ext4") || skip(!have("script"), "script not installed (bsdutils)") {
        return;
    }
    let _g = serial();
    let wd = workdir();
    let out = wd.path().join("study");
    let rc = wd.path().join("rc");
    let argv = smoke_then_idle(wd.path(), &out).argv().join(" ");
    // As after a dropped SSH session: the terminal's session leader (this shell) gets SIGHUP and
    // dies of it, and the kernel then hangs up the foreground process group, fsbench's. The
    // subshell around fsbench catches SIGHUP (a no-op) only to live and write fsbench's exit
    // status; a caught signal is back at its default in fsbench, which installs its own handler.
    // (Ignoring it there would pass it on ignored, as nohup does, and fsbench would keep running.)
    let inner = format!(
        "( trap true HUP; {} {argv}; echo $? > {} ); true",
        crate::common::exe().display(),
        rc.display()
    );
    let mut term = std::process::Command::new("setsid");
    hangup(&mut term, Hangup::Default);
    let mut term = term
        .env("FSBENCH_HISTORY", history_path())
        .args(["script", "-qfec", &inner, "/dev/null"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start script");
    wait_for_records(&out.join("results.jsonl"), 2, 60);
    assert!(wait_for_mount_under(wd.path(), 5), "ext4 is not mounted");
    term.kill().unwrap(); // the terminal's owner dies: the terminal hangs up
    term.wait().unwrap();
    let end = Instant::now() + Duration::from_secs(60);
    while !rc.exists() {
        // Seen once in a clean clone's CI run, not reproduced since: say where fsbench stood.
        assert!(
            Instant::now() < end,
            "fsbench did not end after the hangup; its processes:\n{}\nthe study's manifest:\n{}",
            sh("ps -eo pid,ppid,pgid,sid,stat,wchan:32,args | grep -E 'fsbench|script' | grep -v grep").1,
            std::fs::read_to_string(out.join("manifest.json")).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(std::fs::read_to_string(&rc).unwrap().trim(), "129");
    no_leftovers(wd.path());
    let m = assert_interrupted_with_results(&out);
    assert!(m.contains("SIGHUP"), "{m}");
}

/// Started under nohup (SIGHUP ignored), a hangup leaves the run going: it ends on its own, whole.
#[test]
fn a_run_started_under_nohup_outlives_a_hangup() {
    if skip(!is_root(), "needs root (tmpfs)") {
        return;
    }
    let _g = serial();
    let wd = workdir();
    let out = wd.path().join("study");
    let mut child = Compare::new(&["tmpfs"])
        .workload("idle:seconds=3")
        .size("64M")
        .args(&["-q"])
        .out(out.to_str().unwrap())
        .workdir(wd.path().to_str().unwrap())
        .spawn_with(Hangup::Ignored);
    assert!(wait_for_mount_under(wd.path(), 60), "tmpfs never mounted");
    sh(&format!("kill -HUP {0}", child.id()));
    let status = child.wait().unwrap();
    assert_eq!(
        status.code(),
        Some(0),
        "a hangup ended a run started under nohup"
    );
    let m = std::fs::read_to_string(out.join("manifest.json")).unwrap();
    assert!(
        m.contains("\"status\": \"complete\"") || m.contains("\"status\":\"complete\""),
        "{m}"
    );
    no_leftovers(wd.path());
}

/// A second SIGHUP (the shell passes the hangup on to its jobs) must not cut the teardown short.
#[test]
fn two_hangups_still_tear_down() {
    if needs("ext4", "mkfs.ext4") {
        return;
    }
    let _g = serial();
    let wd = workdir();
    let mut child = spawn_compare(wd.path(), "ext4");
    assert!(wait_for_mount_under(wd.path(), 60), "ext4 never mounted");
    std::thread::sleep(Duration::from_millis(500));
    sh(&format!("kill -HUP {0}; kill -HUP {0}", child.id()));
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(129));
    no_leftovers(wd.path());
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
    let mut child = Compare::new(&[&format!("dir:{}", wd.path().display())])
        .workload(format!("{spec},phases=write"))
        .out(wd.path().join("first").to_str().unwrap())
        .workdir(wd.path().to_str().unwrap())
        .spawn();
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
    let o = Compare::new(&[&format!("dir:{}", wd.path().display())])
        .workload(format!("{spec},resume=1,phases=write+read"))
        .out(out.to_str().unwrap())
        .workdir(wd.path().to_str().unwrap())
        .run();
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
fn a_killed_study_resumes_and_every_target_test_repeat_appears_once() {
    if needs("ext4", "mkfs.ext4") || needs("xfs", "mkfs.xfs") {
        return;
    }
    let _g = serial();
    let wd = workdir();
    let out = wd.path().join("study");
    let mut child = Compare::new(&["ext4", "xfs"])
        .workload("smoke:size=4M")
        .workload("idle:seconds=30")
        .size("512M")
        .out(out.to_str().unwrap())
        .workdir(wd.path().to_str().unwrap())
        .args(&["--repeat", "2"])
        .spawn();
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
    // (study.toml says the same plan, or the resume refuses it as edited.)
    let tpath = out.join("study.toml");
    let t = std::fs::read_to_string(&tpath)
        .unwrap()
        .replace("idle:seconds=30", "idle:seconds=0");
    std::fs::write(&tpath, t).unwrap();
    let o = Compare::new(&[])
        .workdir(wd.path().to_str().unwrap())
        .args(&["--resume", out.to_str().unwrap()])
        .run();
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

/// On a btrfs subvolume, stat(2) gives the subvolume's device number and /proc/locks the
/// filesystem's, and inode numbers repeat from one subvolume to the next: the study's writer is
/// still named by its pid, not a process holding a lock on another subvolume's same inode.
#[test]
fn the_writer_of_a_study_on_a_btrfs_subvolume_is_named() {
    if needs("btrfs", "mkfs.btrfs") || skip(!have("flock"), "flock(1) is not installed") {
        return;
    }
    let _g = serial();
    let lo = TestLoop::new(256);
    let mnt = lo.format_and_mount("mkfs.btrfs -q -f", "mnt");
    let sub = mnt.join("sub");
    assert!(sh(&format!("btrfs -q subvolume create {}", sub.display())).0);
    let study = copy_fixture_study(&sub);
    // flock(1) holds the lock; cat (without the descriptor: -o) keeps it alive until its input
    // closes.
    let hold = |path: &Path| {
        std::process::Command::new("flock")
            .args(["-x", "-n", "-o"])
            .arg(path)
            .arg("cat")
            .stdin(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    // A decoy: the same inode number in a second subvolume, locked first.
    let other = mnt.join("other");
    assert!(sh(&format!("btrfs -q subvolume create {}", other.display())).0);
    let twin = copy_fixture_study(&other);
    use std::os::unix::fs::MetadataExt;
    let ino = |p: &Path| std::fs::metadata(p).unwrap().ino();
    assert_eq!(
        ino(&twin),
        ino(&study),
        "btrfs numbers each subvolume's inodes alike"
    );
    let mut decoy = hold(&twin);
    std::thread::sleep(Duration::from_millis(100));
    let mut holder = hold(&study);
    let t0 = Instant::now();
    let said = loop {
        let o = run(&["report", study.to_str().unwrap()]);
        let e = stderr(&o);
        if e.contains("in progress") || t0.elapsed() > Duration::from_secs(20) {
            break e;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    for h in [&mut holder, &mut decoy] {
        drop(h.stdin.take());
        h.wait().unwrap();
    }
    assert!(said.contains(&format!("(pid {})", holder.id())), "{said}");
}
