//! tracefs for the timer tick, against the real kernel: on a host whose tracefs is not mounted
//! (this VM when it starts), a profiled run as root mounts it at /sys/kernel/tracing, records
//! it as its own (a state with the mount's id), samples the tick, and takes it away after; a
//! SIGKILLed run's mount is unmounted by `fsbench cleanup`; a tracefs someone else mounted is
//! left as it was. A test skips, saying why, where the host has tracefs mounted already.

use crate::common::*;

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

const TRACEFS: &str = "/sys/kernel/tracing";

/// The id of the tracefs mounted at /sys/kernel/tracing, if one is.
fn tracefs_mount() -> Option<u64> {
    mounts_text().lines().find_map(|l| {
        let (left, right) = l.split_once(" - ")?;
        let f: Vec<&str> = left.split(' ').collect();
        (f.get(4) == Some(&TRACEFS) && right.starts_with("tracefs "))
            .then(|| f[0].parse().ok())
            .flatten()
    })
}

/// Whether the host cannot show what fsbench does about tracefs here (said: `SKIPPED: why`).
fn cannot() -> bool {
    let why = if !is_root() {
        "needs root (only root mounts tracefs)"
    } else if !kernel_has("tracefs") {
        "the kernel has no tracefs"
    } else if tracefs_mount().is_some() {
        "tracefs is mounted already (by someone else): nothing for fsbench to mount"
    } else {
        return false;
    };
    skip(true, why)
}

/// The state files of fsbench's tracefs for process `pid`.
fn states_of(pid: u32) -> Vec<PathBuf> {
    let dir = Path::new("/run/fsbench/targets");
    std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name().is_some_and(|n| {
                        n.to_string_lossy().starts_with(&format!("tracefs-{pid}-"))
                    })
                })
                .collect()
        })
        .unwrap_or_default()
}

/// A profiled compare of `secs` on a directory target in `dir`, started.
fn profiled(dir: &Path, secs: u32) -> Child {
    bin()
        .args([
            "compare",
            &format!("dir:{}", dir.display()),
            "--workload",
            &format!("block:ioengine=null,rw=randread,bs=4k,size=8m,runtime={secs}s"),
            "--profile",
            "-q",
            "--out",
        ])
        .arg(dir.join("study"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits until fsbench's tracefs is mounted and recorded for `child`: the mount's id.
fn mounted_for(child: &mut Child) -> u64 {
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(60) {
        if let (Some(id), [state]) = (tracefs_mount(), &states_of(child.id())[..]) {
            let text = std::fs::read_to_string(state).unwrap();
            if text.contains(&format!("\"id\": {id}")) {
                assert!(text.contains("\"kind\": \"host_mount\""), "{text}");
                return id;
            }
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "the run ended before tracefs was mounted"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("no tracefs mounted for the run");
}

/// A profiled run of `secs` in `dir`, once its tracefs is mounted: the run, its pid and the
/// mount's id.
fn started(dir: &Path, secs: u32) -> (Child, u32, u64) {
    let mut child = profiled(dir, secs);
    let id = mounted_for(&mut child);
    let pid = child.id();
    (child, pid, id)
}

#[test]
fn a_profiled_run_mounts_tracefs_samples_the_tick_and_takes_it_away() {
    if cannot() {
        return;
    }
    let _g = serial();
    let wd = workdir();
    let (child, pid, _) = started(wd.path(), 3);
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(tracefs_mount(), None, "tracefs is taken away after the run");
    assert!(states_of(pid).is_empty(), "its state is gone");
    let text = std::fs::read_to_string(wd.path().join("study/results.jsonl")).unwrap();
    let r: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(r["profile"]["clock"], "tick", "{r}");
}

#[test]
fn a_killed_runs_tracefs_is_unmounted_by_cleanup_and_anothers_is_left() {
    if cannot() {
        return;
    }
    let _g = serial();
    let wd = workdir();
    let (mut child, pid, id) = started(wd.path(), 60);
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(tracefs_mount(), Some(id), "a SIGKILL leaves it mounted");
    let o = run(&["cleanup"]);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    assert_eq!(tracefs_mount(), None, "{}{}", stdout(&o), stderr(&o));
    assert!(states_of(pid).is_empty());
    // A tracefs someone else mounted: a profiled run uses it and leaves it.
    let (ok, why) = sh(&format!("mount -t tracefs nodev {TRACEFS}"));
    assert!(ok, "{why}");
    let theirs = tracefs_mount().expect("mounted");
    let o = profiled(wd.path(), 1).wait_with_output().unwrap();
    let still = tracefs_mount();
    let _ = sh(&format!("umount {TRACEFS}"));
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(still, Some(theirs), "someone else's tracefs stays");
}
