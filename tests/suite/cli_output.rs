//! What the commands print, when where they print to goes away: a closed standard error (and
//! output) does not stop a compare, a study or a tune (they measure, record, tear down and end
//! as they would have); standard output that cannot be written (a full disk) is exit 1, never a
//! truncated file taken for whole.

use crate::common::*;

use std::path::Path;
use std::process::Stdio;

/// A block job on the null engine: the machinery, no I/O.
const NULL_JOB: &str = "block:rw=randread,bs=4k,size=8m,runtime=300ms,ioengine=null";

/// Runs fsbench with standard output and standard error pipes whose reading ends are closed at
/// once (as `fsbench ... 2>&1 | head -1` after head's line): every write to them fails.
fn with_outputs_closed(args: &[&str]) -> std::process::ExitStatus {
    let mut child = bin()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    drop(child.stderr.take());
    child.wait().unwrap()
}

fn manifest_status(dir: &Path) -> String {
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    m["status"].as_str().unwrap_or("").to_string()
}

#[test]
fn a_closed_standard_error_does_not_stop_compare_study_or_tune() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().display();
    let a = t.path().join("a");
    let status = with_outputs_closed(&[
        "compare",
        &format!("dir:{d}"),
        "--workload",
        NULL_JOB,
        "--repeat",
        "2",
        "--out",
        a.to_str().unwrap(),
    ]);
    assert_eq!(status.code(), Some(0), "compare: {status:?}");
    assert_eq!(manifest_status(&a), "complete");
    assert_eq!(records_of(&a).len(), 2);
    assert!(a.join("report.md").exists() && a.join("report.html").exists());

    let file = write(
        t.path(),
        "s.toml",
        &format!("targets = [\"dir:{d}\"]\nworkloads = [\"{NULL_JOB}\"]\nrepeat = 2\n"),
    );
    let b = t.path().join("b");
    let status = with_outputs_closed(&["study", &file, "--out", b.to_str().unwrap()]);
    assert_eq!(status.code(), Some(0), "study: {status:?}");
    assert_eq!(manifest_status(&b), "complete");
    assert_eq!(records_of(&b).len(), 2);

    let c = t.path().join("c");
    let status = with_outputs_closed(&[
        "tune",
        &format!("dir:{d},label={{x,y}}"),
        "--workload",
        NULL_JOB,
        "--max-repeat",
        "2",
        "--out",
        c.to_str().unwrap(),
    ]);
    assert_eq!(status.code(), Some(0), "tune: {status:?}");
    assert_eq!(manifest_status(&c), "complete");
    assert!(records_of(&c).len() >= 2);
}

#[test]
fn a_full_standard_output_is_exit_1_with_a_message() {
    if skip(!Path::new("/dev/full").exists(), "no /dev/full") {
        return;
    }
    let full = || std::fs::OpenOptions::new().write(true).open("/dev/full");
    for args in [
        &["completions", "bash"][..],
        &["list"][..],
        &["study", "--list"][..],
    ] {
        let o = bin().args(args).stdout(full().unwrap()).output().unwrap();
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", stderr(&o));
        let e = stderr(&o);
        assert!(
            e.contains("cannot write to standard output") && e.contains("incomplete"),
            "{args:?}: {e}"
        );
        assert!(!e.contains("panicked"), "{e}");
    }
    // A closed pipe is no failure: the reader had enough.
    let mut child = bin()
        .args(["completions", "bash"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).is_empty(), "{}", stderr(&o));
}
