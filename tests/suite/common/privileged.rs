//! Helpers of the privileged tiers: provision and tear down through the binary, look for
//! leftovers, wait for mounts and records.

use super::*;
use std::path::Path;
use std::time::{Duration, Instant};

/// `fsbench provision SPEC` in `wd`; returns the mount point (last line of standard output).
pub fn provision(wd: &Path, spec: &str, extra: &[&str]) -> String {
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

pub fn teardown(mp: &str) {
    let o = run(&["teardown", mp]);
    assert!(o.status.success(), "teardown {mp}: {}", stderr(&o));
    assert!(
        mountinfo_line(mp).is_none(),
        "{mp} still mounted after teardown"
    );
}

pub fn no_leftovers(wd: &Path) {
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
pub fn daemon_as_before(daemon_before: bool) {
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        zfs_fuse_running(),
        daemon_before,
        "zfs-fuse running state changed"
    );
}

pub fn needs_zfs() -> bool {
    skip(!is_root(), "needs root")
        || skip(
            !have("zpool"),
            "zpool not installed (apt-get install zfs-fuse)",
        )
}

pub fn needs(fs: &str, tool: &str) -> bool {
    skip(!is_root(), "needs root")
        || skip(!kernel_has(fs), &format!("kernel has no {fs}"))
        || skip(!have(tool), &format!("{tool} not installed"))
}

/// Waits until a results file holds `n` records (fails the test after `secs`).
pub fn wait_for_records(results: &Path, n: usize, secs: u64) {
    let end = Instant::now() + Duration::from_secs(secs);
    while std::fs::read_to_string(results)
        .map(|t| t.lines().count() < n)
        .unwrap_or(true)
    {
        assert!(
            Instant::now() < end,
            "fewer than {n} records in {results:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Waits until a mount appears under `dir`.
pub fn wait_for_mount_under(dir: &Path, secs: u64) -> bool {
    let end = Instant::now() + Duration::from_secs(secs);
    while Instant::now() < end {
        if mounts_text().contains(&*dir.to_string_lossy()) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    false
}

pub fn spawn_compare(wd: &Path, target: &str) -> std::process::Child {
    Compare::new(&[target])
        .workload("idle:seconds=120")
        .size("512M")
        .args(&["-q"])
        .out(wd.join("study").to_str().unwrap())
        .workdir(wd.to_str().unwrap())
        .spawn()
}

/// Every field a block record must carry (issue 3), checked on each record of a study.
pub fn check_block_records(out: &Path, target: &str, tests: &[&str]) -> Vec<serde_json::Value> {
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

/// (used bytes, used inodes) of a mounted filesystem, from df.
pub fn df_used(mp: &str) -> (f64, f64) {
    let (_, out) = sh(&format!("sync; df --output=used,iused -B1 {mp} | tail -n1"));
    let v: Vec<f64> = out.split_whitespace().map(|x| x.parse().unwrap()).collect();
    (v[0], v[1])
}

pub fn records_of(out: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(out.join("results.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Starts fsbench with these arguments, its output discarded (a run to be killed).
/// Waits (at most a minute) until `path` holds at least `n` lines.
pub fn wait_for_lines(path: &Path, n: usize) {
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

/// `compare TARGETS --workload W... --size SIZE`, its study in `wd/name` and its work under `wd`.
pub fn run_study(
    wd: &Path,
    name: &str,
    targets: &[&str],
    workloads: &[&str],
    size: &str,
) -> (std::process::Output, std::path::PathBuf) {
    run_study_with(wd, name, targets, workloads, size, &[])
}

/// `run_study` with more arguments for compare (e.g. `--room warn`).
pub fn run_study_with(
    wd: &Path,
    name: &str,
    targets: &[&str],
    workloads: &[&str],
    size: &str,
    extra: &[&str],
) -> (std::process::Output, std::path::PathBuf) {
    let out = wd.join(name);
    let c = workloads
        .iter()
        .fold(super::Compare::new(targets), |c, w| c.workload(w))
        .size(size)
        .out(out.to_str().unwrap())
        .workdir(wd.to_str().unwrap())
        .args(extra);
    (c.run(), out)
}
