//! The command line without root: help, list, doctor, and bad input (exit 2, a message that names
//! the input and the fix, nothing changed).

mod common;
use common::*;

#[test]
fn help_shows_examples_for_every_subcommand() {
    let o = run(&["--help"]);
    assert!(o.status.success());
    assert!(stdout(&o).contains("Examples:"));
    for sub in [
        "doctor",
        "list",
        "provision",
        "teardown",
        "cleanup",
        "compare",
    ] {
        let o = run(&[sub, "--help"]);
        assert!(o.status.success(), "{sub}");
        assert!(
            stdout(&o).contains("Examples:"),
            "{sub} --help has no examples"
        );
    }
}

#[test]
fn bad_target_is_a_usage_error_naming_the_fix() {
    let o = run(&["compare", "xfs:maxpctt=10", "--dry-run"]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains("unknown option 'maxpctt' for xfs") && e.contains("maxpct=N"),
        "{e}"
    );
    assert!(!e.contains("panicked"));
}

#[test]
fn too_small_xfs_is_refused_before_anything_runs() {
    let o = run(&["compare", "xfs", "--size", "200M", "--dry-run"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("xfs needs a backing of at least 300 MiB"),
        "{}",
        stderr(&o)
    );
    assert!(stdout(&o).is_empty(), "something ran: {}", stdout(&o));
}

#[test]
fn bad_workload_and_bad_size_are_usage_errors() {
    let o = run(&["compare", "ext4", "--workload", "bogus", "--dry-run"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("unknown workload 'bogus': valid workloads are smoke"),
        "{}",
        stderr(&o)
    );
    let o = run(&[
        "compare",
        "ext4",
        "--workload",
        "smoke:sise=1M",
        "--dry-run",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("unknown parameter 'sise' for workload 'smoke'"),
        "{}",
        stderr(&o)
    );
    let o = run(&["compare", "ext4", "--size", "lots"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("'lots' is not a size"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn duplicate_labels_are_refused() {
    let o = run(&["compare", "ext4", "ext4", "--dry-run"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("two targets are labelled 'ext4'"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn list_shows_filesystems_keys_and_workloads() {
    let o = run(&["list"]);
    assert!(o.status.success());
    let s = stdout(&o);
    for w in [
        "ext4",
        "inodes=N",
        "maxpct=N",
        "compress=zstd|lzo|zlib|no",
        "recordsize=",
        "smoke",
        "dir",
    ] {
        assert!(s.contains(w), "list lacks {w}");
    }
    let o = run(&["list", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["filesystems"].as_array().unwrap().len(), 7);
}

#[test]
fn doctor_reports_every_filesystem_and_exits_zero() {
    let o = run(&["doctor", "--json"]);
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let fs: Vec<&str> = v["filesystems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["fs"].as_str().unwrap())
        .collect();
    assert_eq!(fs, ["ext4", "xfs", "btrfs", "zfs", "f2fs", "tmpfs", "dir"]);
    for f in v["filesystems"].as_array().unwrap() {
        if f["available"] == false {
            assert!(
                f["reason"].as_str().is_some_and(|r| !r.is_empty()),
                "{f} unavailable without a reason"
            );
        }
    }
    let names: Vec<&str> = v["host"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    for n in ["root", "loop devices", "io_uring", "MPI"] {
        assert!(names.contains(&n), "doctor lacks {n}");
    }
    let o = run(&["doctor"]);
    assert!(stdout(&o).contains("filesystem"));
}

#[test]
fn teardown_of_an_unknown_mountpoint_is_a_clear_error() {
    if !is_root() {
        return;
    }
    let o = run(&["teardown", "/nonexistent/fsbench-mnt"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("is not a target fsbench provisioned"),
        "{}",
        stderr(&o)
    );
}
