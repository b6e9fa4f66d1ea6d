//! The command line without root: help, list, doctor, and bad input (exit 2, a message that names
//! the input and the fix, nothing changed).

use crate::common::*;

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
        "run",
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
        "raw",
        "cdm-nvme",
        "hpc-battery",
        "web-server",
        "io_uring",
        "libaio",
        "pvsync2",
        "null",
    ] {
        assert!(s.contains(w), "list lacks {w}");
    }
    let o = run(&["list", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["filesystems"].as_array().unwrap().len(), 8);
    assert_eq!(v["engines"].as_array().unwrap().len(), 6);
    assert!(v["presets"].as_array().unwrap().len() >= 10);
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
    assert_eq!(
        fs,
        ["ext4", "xfs", "btrfs", "zfs", "f2fs", "tmpfs", "dir", "raw"]
    );
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
    if skip(
        !is_root(),
        "needs root (teardown refuses anyone else before it looks)",
    ) {
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

/// The job file printed in the HPC study (Computers 2024), as printed.
const SEED_000: &str = include_str!("../fixtures/hpc-study.fio");

#[test]
fn the_seed_000_job_file_fails_with_line_numbers_and_nothing_runs() {
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("seed000.fio");
    std::fs::write(&job, SEED_000).unwrap();
    let out = dir.path().join("study");
    let o = run(&["run", job.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    // cpus_allowed_policy (line 9) is taken, as fio takes it; the en dash of line 21 is not.
    assert!(!e.contains("seed000.fio:9:"), "{e}");
    assert!(
        e.contains(
            "seed000.fio:21: bs=8 k\u{2013}64 k: a block size range is written bsrange=8k-64k"
        ),
        "{e}"
    );
    assert!(
        !out.exists(),
        "a study was created for a job file that does not parse"
    );
    // The same in compare, before anything is provisioned.
    let spec = format!("fio:{}", job.display());
    let o = run(&["compare", "ext4", "--workload", &spec]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("seed000.fio:21:"));
}

#[test]
fn run_records_a_job_file_without_root() {
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("quick.fio");
    std::fs::write(
        &job,
        format!(
            "[global]\ndirectory={}\nsize=4m\nioengine=sync\n[w]\nrw=write\nbs=64k\nstonewall\n[r]\nrw=randread\nbs=4k\nstonewall\n[n]\nioengine=null\nrw=randrw\nruntime=200ms\ntime_based\nstonewall\n",
            dir.path().display()
        ),
    )
    .unwrap();
    let out = dir.path().join("study");
    let o = run(&[
        "run",
        job.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "-q",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let table = stdout(&o);
    assert!(
        table.contains("read IOPS") && table.contains("write MB/s"),
        "{table}"
    );
    let text = std::fs::read_to_string(out.join("results.jsonl")).unwrap();
    let recs: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let tests: Vec<&str> = recs.iter().map(|r| r["test"].as_str().unwrap()).collect();
    assert_eq!(tests, ["w", "r", "n"]);
    assert_eq!(
        recs[0]["metrics"]["write_bytes"].as_f64(),
        Some(4.0 * 1048576.0)
    );
    assert_eq!(
        recs[1]["metrics"]["read_bytes"].as_f64(),
        Some(4.0 * 1048576.0)
    );
    // The null job ran and counted its calls (how many in 200 ms is the host's: the suite's
    // tiers share two CPUs, and a starved worker once made fewer than 2,000).
    assert!(
        recs[2]["metrics"]["iops"].as_f64().unwrap() > 0.0,
        "null engine"
    );
    assert!(recs
        .iter()
        .all(|r| r["outcome"] == "ok" && r["histograms"]["lat_ns"].is_string()));
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(m["status"], "complete");
}

#[test]
fn preset_job_files_are_printed_and_bad_overrides_refused() {
    let o = run(&["list", "--preset", "cdm"]);
    assert!(o.status.success());
    let s = stdout(&o);
    assert!(
        s.contains("[RND4K_Q32T1-read]")
            && s.contains("iodepth=32")
            && s.contains("ioengine=io_uring")
    );
    let o = run(&["list", "--preset", "nope"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("presets are cdm"));
    let o = run(&["compare", "ext4", "--workload", "cdm", "--runtime", "soon"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--runtime"), "{}", stderr(&o));
    let o = run(&["compare", "ext4", "--workload", "block:rw=sideways"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("rw=sideways: expected read, write"),
        "{}",
        stderr(&o)
    );
}

/// `fsbench report` without root, on a copy of a study (3 repeats of ext4 and xfs, block and
/// files; histograms stripped, times redacted).
#[test]
fn report_renders_a_copied_study_without_root() {
    let dir = tempfile::tempdir().unwrap();
    let study = copy_fixture_study(dir.path());
    let s = study.to_str().unwrap();
    let o = run(&["report", s, "--format", "md"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let want = std::fs::read_to_string("tests/fixtures/study/report.md.expected").unwrap();
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::write("tests/fixtures/study/report.md.expected", stdout(&o)).unwrap();
    } else {
        assert_eq!(
            stdout(&o),
            want,
            "Markdown report changed (UPDATE_SNAPSHOTS=1 to accept)"
        );
    }
    let o = run(&["report", s, "--format", "csv", "--baseline", "xfs"]);
    assert!(o.status.success());
    let csv = stdout(&o);
    assert!(csv.starts_with("workload,test,metric,target,fs,n,mean,sd,ci_lo,ci_hi"));
    assert!(csv
        .lines()
        .any(|l| l.starts_with("files,write,files_per_sec,ext4,ext4,3,")));
    let o = run(&["report", s, "--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["baseline"], "ext4");
    assert!(v["rows"].as_array().unwrap().len() > 50);
    // The terminal report is short: the tables a person decides from and grouped warnings;
    // the statistics come with --full.
    let o = run(&["report", s]);
    let term = stdout(&o);
    assert!(o.status.success() && !term.contains("95% CI"), "{term}");
    assert!(term.contains("Ratio to ext4") && term.contains("Many small files"));
    assert!(
        term.lines().count() <= 40,
        "{} lines:\n{term}",
        term.lines().count()
    );
    let o = run(&["report", s, "--full"]);
    assert!(o.status.success() && stdout(&o).contains("95% CI"));
    assert!(stdout(&o).lines().count() > term.lines().count());
    let o = run(&["report", s, "--baseline", "zfs"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("targets are ext4, xfs"),
        "{}",
        stderr(&o)
    );
    // As root (CI), check that it also works as an unprivileged user.
    if is_root() && have("setpriv") {
        let open = |p: &std::path::Path, mode: u32| {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
        };
        open(dir.path(), 0o755);
        open(&study, 0o755);
        open(&study.join("results.jsonl"), 0o644);
        let o = std::process::Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(crate::common::exe())
            .args(["report", s, "--format", "md"])
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "report as nobody: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(String::from_utf8_lossy(&o.stdout), want);
    }
}

#[test]
fn a_whole_compare_on_a_dir_target_runs_without_root() {
    let Some(mut cmd) = unprivileged() else {
        return;
    };
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let state = dir.path().join("state");
    let study = dir.path().join("study");
    let target = format!("dir:{}", dir.path().display());
    let o = cmd
        .env("XDG_RUNTIME_DIR", &state)
        .current_dir(dir.path())
        .args([
            "compare",
            &target,
            "--workload",
            "block:ioengine=null,size=8m,runtime=300ms",
            "--workload",
            "files:count=300,threads=2",
            "--repeat",
            "2",
            "--out",
        ])
        .arg(&study)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(study.join("results.jsonl")).unwrap();
    let records: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // 2 repeats x (1 block job + files write + files read), all ok.
    assert_eq!(records.len(), 6, "{text}");
    for r in &records {
        assert_eq!(r["outcome"], "ok", "{r}");
        assert!(r["metrics"]["cpu_user_pct"].is_number(), "{r}");
    }
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(study.join("manifest.json")).unwrap())
            .unwrap();
    assert_eq!(manifest["status"], "complete");
    assert!(study.join("report.html").exists());
    // Nothing left in the directory but the study and the state.
    let left: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != "study" && n != "state")
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn bonnie_runs_every_test_and_its_csv_reads_in_bonnies_own_tools() {
    let Some(mut cmd) = unprivileged() else {
        return;
    };
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let study = dir.path().join("study");
    let target = format!("dir:{}", dir.path().display());
    let o = cmd
        .env("XDG_RUNTIME_DIR", dir.path().join("state"))
        .args([
            "compare",
            &target,
            "--workload",
            "bonnie:size=8M,ram=0,files=1:2k:1k:4,seeks=400",
            "-q",
            "--out",
        ])
        .arg(&study)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("-Per Chr- --Block-- -Rewrite-"),
        "the terminal shows bonnie++'s table:\n{}",
        stdout(&o)
    );
    let text = std::fs::read_to_string(study.join("results.jsonl")).unwrap();
    let tests: Vec<String> = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .inspect(|r| assert_eq!(r["outcome"], "ok", "{r}"))
        // Its single-threaded tests ran with no other thread in the process (a signal thread
        // made every one-byte call take the file position lock: putc and getc 10-20% slower).
        .inspect(|r| {
            assert!(
                !r["notes"].to_string().contains("threads were alive"),
                "{r}"
            )
        })
        .map(|r| r["test"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        tests,
        [
            "putc",
            "put_block",
            "rewrite",
            "getc",
            "get_block",
            "seeks",
            "seq_create",
            "seq_stat",
            "seq_del",
            "ran_create",
            "ran_stat",
            "ran_del"
        ]
    );
    let o = run(&["report", study.to_str().unwrap(), "--format", "bonnie-csv"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let csv = stdout(&o);
    assert_eq!(csv.trim_end().split(',').count(), 50, "{csv}");
    if skip(
        !have("bon_csv2txt"),
        "bon_csv2txt not installed (apt-get install bonnie++)",
    ) {
        return;
    }
    for (tool, want) in [("bon_csv2txt", "files:max:min"), ("bon_csv2html", "<table")] {
        let mut p = std::process::Command::new(tool)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        p.stdin.take().unwrap().write_all(csv.as_bytes()).unwrap();
        let out = p.wait_with_output().unwrap();
        let s = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && s.contains(want),
            "{tool}: {s}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            out.stderr.is_empty(),
            "{tool} complained: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn iozone_matrices_that_cannot_run_are_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("study");
    let out_s = out.to_str().unwrap();
    for (target, workload, says) in [
        (
            "ext4",
            "iozone:size=64k,record=128k",
            "bigger than the file",
        ),
        ("tmpfs", "iozone:max_file=1m,direct=1", "direct=1 on tmpfs"),
        ("ext4", "iozone:max_file=512m", "needs 512 MiB at once"),
        ("ext4", "iozone:tests=mmap", "unknown test 'mmap'"),
    ] {
        let o = run(&[
            "compare",
            target,
            "--size",
            "256M",
            "--workload",
            workload,
            "--out",
            out_s,
        ]);
        assert_eq!(o.status.code(), Some(2), "{workload}: {}", stderr(&o));
        assert!(stderr(&o).contains(says), "{workload}: {}", stderr(&o));
        assert!(!out.exists(), "{workload}: a study was created");
    }
}

/// Two studies as one report: labels both have get their study's name, the baseline is chosen
/// across them, and a warning of each study says which it is.
#[test]
fn report_merges_studies_and_prefixes_clashing_labels() {
    let dir = tempfile::tempdir().unwrap();
    let a = copy_fixture_study(dir.path());
    let b = dir.path().join("after");
    std::fs::create_dir(&b).unwrap();
    // The second study: the same records with xfs relabelled btrfs-like "xfs-new".
    let text = std::fs::read_to_string(a.join("results.jsonl")).unwrap();
    std::fs::write(
        b.join("results.jsonl"),
        text.replace("\"target\":\"xfs\"", "\"target\":\"xfs-new\""),
    )
    .unwrap();
    let (sa, sb) = (a.to_str().unwrap(), b.to_str().unwrap());
    let o = run(&["report", sa, sb, "--format", "json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["baseline"], "study/ext4");
    let targets: std::collections::BTreeSet<String> = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["target"].as_str().unwrap().to_string())
        .collect();
    let want: std::collections::BTreeSet<String> = ["study/ext4", "after/ext4", "xfs", "xfs-new"]
        .iter()
        .map(|x| x.to_string())
        .collect();
    assert_eq!(targets, want);
    let o = run(&["report", sa, sb, "--baseline", "after/ext4"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("Ratio to after/ext4"), "{}", stdout(&o));
    let o = run(&["report", sa, dir.path().join("nothing").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("nothing"), "{}", stderr(&o));
}

/// A reader that goes away (`| head`) ends the report quietly: no panic, no message, status 0.
#[test]
fn a_closed_pipe_ends_report_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let study = copy_fixture_study(dir.path());
    let mut child = std::process::Command::new(crate::common::exe())
        .args(["report", study.to_str().unwrap(), "--format", "json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Read one line, then close the pipe, as `head -1` does.
    {
        use std::io::BufRead;
        let out = child.stdout.take().unwrap();
        let mut line = String::new();
        std::io::BufReader::new(out).read_line(&mut line).unwrap();
        assert_eq!(line.trim(), "{");
    }
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        !err.contains("panicked") && !err.contains("Broken pipe"),
        "{err}"
    );
}
