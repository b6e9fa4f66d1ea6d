//! Issue 26 without root: bad input is a clear exit 2 that creates nothing; a study is never
//! written through a link, never by two processes at once; a torn last record is kept and its run
//! measured again.

use crate::common::*;

use std::path::Path;
use std::time::{Duration, Instant};

/// A quick null-engine compare on a `dir:` target in `dir` (nothing is provisioned).
fn quick(dir: &Path, out: &Path, more: &[&str]) -> std::process::Output {
    let target = format!("dir:{}", dir.display());
    Compare::new(&[&target])
        .workload("block:ioengine=null,size=4m,runtime=100ms")
        .out(out.to_str().unwrap())
        .args(&["-q"])
        .args(more)
        .run()
}

fn usage_error(o: &std::process::Output) -> String {
    let e = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(
        !e.contains("panicked") && !e.contains("RUST_BACKTRACE"),
        "{e}"
    );
    e
}

#[test]
fn huge_and_negative_durations_are_usage_errors_not_panics() {
    let t = tempfile::tempdir().unwrap();
    let study = t.path().join("s");
    for args in [
        vec!["--runtime", "-1"],
        vec!["--runtime", "99999999999999999999999s"],
        vec!["--file-size", "0"],
        vec!["--size", "0"],
    ] {
        let e = usage_error(&quick(t.path(), &study, &args));
        assert!(e.contains(args[1]), "{args:?}: {e}");
        assert!(!study.exists(), "{args:?} created the study");
    }
    let target = format!("dir:{}", t.path().display());
    let o = Compare::new(&[&target])
        .workload("block:ioengine=null,size=4m,runtime=99999999999999999999999s")
        .out(study.to_str().unwrap())
        .run();
    assert!(usage_error(&o).contains("at most 366d"));
    let job = t.path().join("t.fio");
    std::fs::write(
        &job,
        "[j]\nioengine=null\nsize=1m\nrw=read\ntimeout=18446744073709551616\n",
    )
    .unwrap();
    let o = run(&["run", "--check", job.to_str().unwrap()]);
    assert!(usage_error(&o).contains("t.fio:5"));
}

#[test]
fn an_included_file_that_is_not_a_job_file_is_refused_without_echoing_it() {
    let t = tempfile::tempdir().unwrap();
    let secret = t.path().join("shadow");
    std::fs::write(
        &secret,
        "root:$6$s3cr3tH4sh:20228:0:99999:7:::\ndaemon:*:20228:0:99999:7:::\n",
    )
    .unwrap();
    let job = t.path().join("j.fio");
    std::fs::write(
        &job,
        format!("[j]\ninclude {}\nrw=read\n", secret.display()),
    )
    .unwrap();
    for args in [
        vec!["run", "--check", job.to_str().unwrap()],
        vec!["run", job.to_str().unwrap()],
    ] {
        let e = usage_error(&run(&args));
        assert!(e.contains("is not a fio job file"), "{e}");
        assert!(!e.contains("s3cr3t") && !e.contains("root:"), "{e}");
    }
}

#[test]
fn an_unset_variable_is_named_and_check_applies_runs_rules() {
    let t = tempfile::tempdir().unwrap();
    let job = t.path().join("v.fio");
    std::fs::write(&job, "[j]\nrw=read\nsize=${FSBENCH_SURELY_UNSET}\n").unwrap();
    let e = usage_error(&run(&["run", "--check", job.to_str().unwrap()]));
    assert!(e.contains("${FSBENCH_SURELY_UNSET} is not set"), "{e}");
    // bs larger than size: `run` refuses it, so `run --check` does too.
    std::fs::write(
        &job,
        format!(
            "[j]\nrw=read\nsize=4k\nbs=1m\ndirectory={}\n",
            t.path().display()
        ),
    )
    .unwrap();
    let check = usage_error(&run(&["run", "--check", job.to_str().unwrap()]));
    assert!(check.contains("smaller than its largest block"), "{check}");
    let out = t.path().join("study");
    let o = run(&["run", job.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(usage_error(&o).contains("smaller than its largest block"));
}

#[test]
fn refused_targets_and_bad_out_paths_create_nothing_and_name_the_fix() {
    let t = tempfile::tempdir().unwrap();
    let study = t.path().join("s");
    let o = Compare::new(&["dir:/nonexistent-fsbench-test"])
        .workload("smoke")
        .out(study.to_str().unwrap())
        .run();
    assert!(usage_error(&o).contains("not an existing directory"));
    assert!(!study.exists(), "a refused dir: target left a study");
    // An --out below a file: the error says it once, with the fix.
    let file = t.path().join("afile");
    std::fs::write(&file, "x").unwrap();
    let e = usage_error(&quick(t.path(), &file.join("study"), &[]));
    assert_eq!(e.matches("Not a directory").count(), 1, "{e}");
    assert!(!e.contains("os error"), "{e}");
    assert!(e.contains("give --out"), "{e}");
}

#[test]
fn the_kernels_directories_are_refused_as_dir_targets() {
    let t = tempfile::tempdir().unwrap();
    let study = t.path().join("s");
    let link = t.path().join("to-proc");
    std::os::unix::fs::symlink("/proc", &link).unwrap();
    let through = format!("dir:{}", link.display());
    for target in [
        "dir:/proc",
        "dir:/sys",
        "dir:/dev",
        "dir:/dev/pts",
        "dir:/./proc/self",
        "dir:/tmp/../sys",
        through.as_str(),
    ] {
        for dry in [true, false] {
            let mut c = Compare::new(&[target])
                .workload("smoke")
                .out(study.to_str().unwrap());
            if dry {
                c = c.args(&["--dry-run"]);
            }
            let e = usage_error(&c.run());
            assert!(e.contains("the kernel's"), "{target}: {e}");
            assert!(!study.exists(), "{target}: a study was made");
        }
        let e = usage_error(&run(&["provision", target, "--dry-run"]));
        assert!(e.contains("the kernel's"), "{target}: {e}");
    }
    let file = write(
        t.path(),
        "k.toml",
        "targets = [\"dir:/proc\"]\nworkloads = [\"smoke\"]\n",
    );
    let e = usage_error(&run(&["study", &file, "--check"]));
    assert!(e.contains("the kernel's"), "{e}");
}

#[test]
fn a_null_engine_job_without_a_filename_creates_no_file() {
    let t = tempfile::tempdir().unwrap();
    let job = t.path().join("n.fio");
    std::fs::write(
        &job,
        "[nul]\nioengine=null\nrw=write\nsize=64m\nnumjobs=2\n",
    )
    .unwrap();
    let out = t.path().join("study");
    let o = bin()
        .current_dir(t.path())
        .args(["run", "n.fio", "-q", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let names: Vec<String> = std::fs::read_dir(t.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        names.iter().all(|n| n == "n.fio" || n == "study"),
        "files made: {names:?}"
    );
}

#[test]
fn a_study_is_never_written_through_a_symbolic_link() {
    let t = tempfile::tempdir().unwrap();
    let victim = t.path().join("victim");
    std::fs::create_dir(&victim).unwrap();
    let planted = t.path().join("planted");
    std::os::unix::fs::symlink(&victim, &planted).unwrap();
    let e = usage_error(&quick(t.path(), &planted, &[]));
    assert!(e.contains("symbolic link"), "{e}");
    assert_eq!(std::fs::read_dir(&victim).unwrap().count(), 0);
    // A results.jsonl link inside an existing study directory.
    let study = t.path().join("study");
    std::fs::create_dir(&study).unwrap();
    let elsewhere = t.path().join("elsewhere.jsonl");
    std::os::unix::fs::symlink(&elsewhere, study.join("results.jsonl")).unwrap();
    let e = usage_error(&quick(t.path(), &study, &[]));
    assert!(e.contains("symbolic link"), "{e}");
    assert!(!elsewhere.exists());
}

/// Waits for `path` to exist (a minute at most).
fn wait_for(path: &Path) {
    let t0 = Instant::now();
    while !path.exists() {
        assert!(t0.elapsed() < Duration::from_secs(60), "{path:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_second_writer_of_a_running_study_is_refused_and_the_first_keeps_everything() {
    let t = tempfile::tempdir().unwrap();
    let study = t.path().join("study");
    let target = format!("dir:{}", t.path().display());
    let mut first = Compare::new(&[&target])
        .workload("block:ioengine=null,size=4m,runtime=200ms")
        .workload("idle:seconds=4")
        .workload("block:ioengine=null,size=4m,runtime=200ms,rw=write")
        .out(study.to_str().unwrap())
        .args(&["-q"])
        .spawn();
    wait_for_records(&study.join("results.jsonl"), 1, 60);
    let o = run(&["compare", "--resume", study.to_str().unwrap(), "-q"]);
    let e = usage_error(&o);
    assert!(
        e.contains(&format!("pid {}", first.id())) && e.contains("being written"),
        "{e}"
    );
    let o = run(&["report", study.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("in progress"), "{}", stderr(&o));
    let o = run(&[
        "report",
        study.to_str().unwrap(),
        "--import",
        "tests/fixtures/fio-3.33-null.json",
        "--label",
        "x",
    ]);
    assert!(usage_error(&o).contains("being written"));
    assert!(first.wait().unwrap().success());
    // Two block records (idle measures nothing).
    let recs = records_of(&study);
    assert_eq!(recs.len(), 2, "{recs:?}");
    assert!(recs.iter().all(|r| r["outcome"] == "ok"));
    assert!(!study.join("results.partial.jsonl").exists());
    wait_for(&study.join("report.html"));
}

#[test]
fn a_torn_last_record_is_kept_aside_reported_and_its_run_measured_again() {
    let t = tempfile::tempdir().unwrap();
    let study = t.path().join("study");
    let o = quick(t.path(), &study, &["--repeat", "2"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let path = study.join("results.jsonl");
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.lines().count(), 2);
    // Cut the last record in the middle, as a crash while it was written would.
    let last = text.lines().last().unwrap();
    let cut = text.len() - last.len() / 2;
    std::fs::write(&path, &text[..cut]).unwrap();
    let o = run(&["report", study.to_str().unwrap(), "--format", "md"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("torn record"), "{}", stdout(&o));
    let o = run(&["compare", "--resume", study.to_str().unwrap(), "-q"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let partial = std::fs::read_to_string(study.join("results.partial.jsonl")).unwrap();
    assert!(partial.contains(&text[cut - 40..cut]), "{partial}");
    let recs = records_of(&study);
    assert_eq!(recs.len(), 2, "the torn run was measured again: {recs:?}");
    let repeats: Vec<i64> = recs.iter().map(|r| r["repeat"].as_i64().unwrap()).collect();
    assert!(repeats.contains(&0) && repeats.contains(&1), "{repeats:?}");
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(study.join("manifest.json")).unwrap())
            .unwrap();
    assert!(m["warnings"].to_string().contains("torn record"), "{m}");
}
