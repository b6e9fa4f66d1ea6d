//! The report's text, byte for byte: a fixture study that every view has something to show for
//! (block presets with the CrystalDiskMark table, ratio matrix and latency; files; bonnie;
//! iozone's matrices and throughput mode; aging; the audit's data, directory, checker and fsync
//! cases; smoke records, failed and skipped ones for the table of records no view shows) rendered
//! by the real binary as `term`, `term --full`, `md` and `html`, each compared with its expected
//! file in tests/fixtures/golden/.
//!
//! The fixture is real runs merged: `compare` on two dir: targets relabelled alpha and beta
//! (cdm, files, bonnie, smoke, aging, a block job failed by rate_min, iozone's matrix and
//! throughput mode), a tmpfs target (smoke, a block job refused for room) and `audit ext4 f2fs`
//! (f2fs skipped on this kernel). `UPDATE_GOLDEN=1 cargo test --test report_golden` rewrites
//! the expected files: only when the output is meant to change.

use std::path::{Path, PathBuf};
use std::process::Command;

fn golden() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/golden")
}

/// `fsbench report study ARGS` on a copy of the fixture, run where the copy is (so the title,
/// which names the directory as given, is the same everywhere), without a terminal or colour.
fn report(args: &[&str]) -> String {
    let tmp = tempfile::tempdir().unwrap();
    let study = tmp.path().join("study");
    std::fs::create_dir(&study).unwrap();
    for f in ["results.jsonl", "manifest.json"] {
        std::fs::copy(golden().join("study").join(f), study.join(f)).unwrap();
    }
    let o = Command::new(crate::common::exe())
        .arg("report")
        .arg("study")
        .args(args)
        .current_dir(tmp.path())
        .env("NO_COLOR", "1")
        .env_remove("COLUMNS")
        .env_remove("LINES")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "fsbench report {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

/// Where two texts first differ: the line number and both lines.
fn first_difference(want: &str, got: &str) -> String {
    let (w, g): (Vec<&str>, Vec<&str>) = (want.lines().collect(), got.lines().collect());
    for i in 0..w.len().max(g.len()) {
        if w.get(i) != g.get(i) {
            return format!(
                "first difference at line {}:\n  expected: {:?}\n  got:      {:?}\n({} lines expected, {} got)",
                i + 1,
                w.get(i).copied().unwrap_or("<end of file>"),
                g.get(i).copied().unwrap_or("<end of file>"),
                w.len(),
                g.len()
            );
        }
    }
    format!(
        "the lines agree but the bytes differ (line endings or a final newline): {} bytes expected, {} got",
        want.len(),
        got.len()
    )
}

fn check(expected: &str, args: &[&str]) {
    let got = report(args);
    let path = golden().join(expected);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, &got).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (UPDATE_GOLDEN=1 makes it)", path.display()));
    if want != got {
        let seen = std::env::temp_dir().join(format!("fsbench-golden-{expected}"));
        let _ = std::fs::write(&seen, &got);
        panic!(
            "`fsbench report study {}` differs from {}\n{}\nthe whole output is in {}; `diff {} {}` shows every change",
            args.join(" "),
            path.display(),
            first_difference(&want, &got),
            seen.display(),
            path.display(),
            seen.display()
        );
    }
}

#[test]
fn term_report_is_unchanged() {
    check("term.txt", &["--format", "term"]);
}

#[test]
fn full_term_report_is_unchanged() {
    check("term-full.txt", &["--format", "term", "--full"]);
}

#[test]
fn markdown_report_is_unchanged() {
    check("report.md", &["--format", "md"]);
}

#[test]
fn html_report_is_unchanged() {
    check("report.html", &["--format", "html"]);
}

#[test]
fn the_fixture_has_something_for_every_view() {
    let text = std::fs::read_to_string(golden().join("study/results.jsonl")).unwrap();
    let mut workloads = std::collections::BTreeSet::new();
    let mut outcomes = std::collections::BTreeSet::new();
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let w = v["workload"].as_str().unwrap();
        workloads.insert(w.split(':').next().unwrap().to_string());
        outcomes.insert(v["outcome"].as_str().unwrap().to_string());
    }
    for w in [
        "cdm", "block", "files", "bonnie", "iozone", "aging", "audit", "smoke",
    ] {
        assert!(workloads.contains(w), "no {w} records in the fixture");
    }
    for o in ["ok", "failed", "skipped"] {
        assert!(outcomes.contains(o), "no {o} record in the fixture");
    }
    let full = std::fs::read_to_string(golden().join("term-full.txt")).unwrap();
    for title in [
        "alpha (dir (ext4))",
        "bonnie++ (",
        "Integrity audit",
        "fsync failure",
        "In-place writes",
        "Ratio to alpha",
        "Many small files (the billion-files study's columns)",
        "Verdict:",
        "Completion latency",
        "iozone write on beta",
        "iozone throughput mode",
        "FAILED",
        "skipped",
    ] {
        assert!(full.contains(title), "the full report has no {title:?}");
    }
    assert!(std::fs::read_to_string(golden().join("term.txt"))
        .unwrap()
        .contains("Many small files\n"));
}
