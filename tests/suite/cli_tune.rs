//! `fsbench tune` without the machine's targets: bad input is exit 2 with nothing created;
//! --check expands and runs nothing; a resume refuses flags that would change the race. The
//! tunes that mount (tmpfs, btrfs, ZFS) are in privileged_tune.rs.

use crate::common::*;

use std::path::Path;

/// A block job quick on tmpfs (the null engine: no I/O, only the machinery).
pub(crate) const NULL_JOB: &str =
    "block:rw=randread,bs=4k,iodepth=8,size=16m,runtime=300ms,ioengine=null";

pub(crate) fn tune(args: &[&str]) -> std::process::Output {
    let mut all = vec!["tune"];
    all.extend_from_slice(args);
    run(&all)
}

#[test]
fn bad_tune_input_is_exit_2_and_creates_nothing() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("t");
    let o_ = out.to_str().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&["ext4:data={ordered"], "without its '}'"),
        (&["ext4:data={}"], "empty alternative"),
        (&["ext4:data={ordered,{a,b}}"], "nest"),
        (
            &["ext4:data={ordered,bogus}"],
            "candidate 'ext4:data=bogus'",
        ),
        (&["ext4:{nojournal,frob}"], "candidate 'ext4:frob'"),
        (
            &["ext4:data={ordered,writeback}", "--slo", "lat_p42<2ms"],
            "no workload emits a metric 'lat_p42'",
        ),
        (
            &["ext4:data={ordered,writeback}", "--slo", "lat_p99<2kg"],
            "is not a unit of lat_p99_ns",
        ),
        (
            &["ext4:data={ordered,writeback}", "--slo", "lat_p99=2ms"],
            "METRIC<VALUE",
        ),
        (
            &["ext4:commit={1,2,3,4,5,6,7,8,9},data={ordered,writeback,journal},inode_size={256,512,1024}"],
            "81 candidates",
        ),
        (&["ext4"], "one candidate"),
        (
            &[
                "ext4:data={ordered,writeback}",
                "--metric",
                "no_such_metric",
            ],
            "no_such_metric",
        ),
        // What cannot apply to the workload (cdm: block jobs) is refused, naming what it
        // measures or runs.
        (
            &["ext4:data={ordered,writeback}", "--test", "nonexistent"],
            "runs no test of that name: its tests are SEQ1M",
        ),
        (
            &["ext4:data={ordered,writeback}", "--slo", "space_overhead<40%"],
            "does not measure space_overhead_pct: 'cdm' measures iops",
        ),
        (
            &["ext4:data={ordered,writeback}", "--metric", "files_per_sec"],
            "does not measure files_per_sec",
        ),
        (
            &["ext4:data={ordered,writeback}", "--metric", "runtime_s"],
            "neither better higher nor lower",
        ),
        (
            &[
                "ext4:data={ordered,writeback}",
                "--slo",
                "lat_p99<1ms",
                "--slo",
                "lat_p99>2ms",
            ],
            "cannot both hold",
        ),
        (
            &[
                "ext4:data={ordered,writeback}",
                "--slo",
                "lat_p99<1ms",
                "--slo",
                "lat_p99>1ms",
            ],
            "cannot both hold",
        ),
    ];
    // Six braces of a hundred alternatives: 10^12 candidates, counted, never made.
    let hundred = (1..=100)
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join(",");
    let six = ["label", "inodes", "commit", "maxpct", "blocksize", "size"]
        .map(|k| format!("{k}={{{hundred}}}"))
        .join(",");
    let huge = format!("ext4:{six}");
    let huge_cases: &[(&[&str], &str)] = &[
        (&[huge.as_str()], "1000000000000 candidates"),
        (&[huge.as_str(), "--force"], "refused even with --force"),
    ];
    for (args, want) in cases.iter().chain(huge_cases) {
        let mut all: Vec<&str> = args.to_vec();
        // (--check: a case that passed by mistake prints its plan instead of racing.)
        all.extend_from_slice(&["--workload", "cdm", "--out", o_, "--check"]);
        let o = tune(&all);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(want), "{args:?}: {}", stderr(&o));
        assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
        assert!(!out.exists(), "{args:?} created {}", out.display());
    }
}

#[test]
fn check_expands_the_candidates_and_runs_nothing() {
    let t = tempfile::tempdir().unwrap();
    let o = bin()
        .current_dir(t.path())
        .args([
            "tune",
            "ext4",
            "xfs",
            "btrfs",
            "zfs",
            "--axes",
            "--workload",
            "db-server",
            "--check",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.starts_with("28 candidates"), "{text}");
    for c in [
        "ext4:nojournal",
        "xfs:agcount=16,logbsize=256k",
        "btrfs:nodatacow,compress=zstd",
        "zfs:recordsize=4k,logbias=throughput,primarycache=metadata",
    ] {
        assert!(text.contains(c), "{c}: {text}");
    }
    assert!(text.contains("nothing was run"));
    assert_eq!(std::fs::read_dir(t.path()).unwrap().count(), 0);
    // --metric takes a metric as --slo does: lat_p99 is lat_p99_ns.
    let o = tune(&[
        "ext4:data={ordered,writeback}",
        "--workload",
        "cdm",
        "--metric",
        "lat_p99",
        "--slo",
        "lat_p99<2ms",
        "--check",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("for the lowest lat_p99_ns"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn a_resume_refuses_flags_that_would_change_the_recorded_race() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("t");
    let o = tune(&[
        &format!("dir:{},label={{a,b}}", t.path().display()),
        "--workload",
        NULL_JOB,
        "--max-repeat",
        "2",
        "--out",
        out.to_str().unwrap(),
        "-q",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let before = |f: &str| std::fs::read(out.join(f)).unwrap();
    let (manifest, results) = (before("manifest.json"), before("results.jsonl"));
    for extra in [
        &["--slo", "lat_p99<2ms", "--max-repeat", "4"][..],
        &["--metric", "lat_p99"][..],
        &["--workload", "cdm"][..],
        &["--size", "1G"][..],
        &["--tie", "1%", "--check"][..],
    ] {
        let mut args = vec!["--resume", out.to_str().unwrap()];
        args.extend_from_slice(extra);
        let o = tune(&args);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {}", stderr(&o));
        let e = stderr(&o);
        assert!(
            e.contains("continues the race as it was recorded") && e.contains(extra[0]),
            "{extra:?}: {e}"
        );
        assert_eq!(before("manifest.json"), manifest, "{extra:?}");
        assert_eq!(before("results.jsonl"), results, "{extra:?}");
    }
}

/// The tune's JSON report.
pub(crate) fn tune_json(dir: &Path) -> serde_json::Value {
    let o = run(&["report", dir.to_str().unwrap(), "--format", "json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    v["tune"].clone()
}
