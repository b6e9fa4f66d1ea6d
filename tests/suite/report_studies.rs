//! The shipped studies' reports read like the quick start: each study's terminal report fits a
//! screen (at most 80 lines with its warnings and the line after it that says where the results
//! are) and leads with "Published vs this host" and the verdict; iozone's matrices go to the
//! report files, where a one-target study's HTML heat maps colour their cells and print no raw
//! seven-digit KiB/s.
//!
//! The fixtures in tests/fixtures/studies/ are real studies trimmed (`scripts/trim-study`): the
//! five shipped studies run at `--scale small` on a 2-core VM, and two small
//! iozone compares (`fsbench compare tmpfs dir:X,label=disk -w
//! iozone:min_file=256K,max_file=512K,max_record=64K,tests=read+random --repeat 2`, and `disk`
//! alone), and the quick start (`scripts/quickstart`'s compare, with a debug build). The iozone-vs-xfs fixture keeps 9 of each headline test's 49 cells; its full scale
//! is made here from its plan.

use crate::common::*;

use std::path::{Path, PathBuf};

/// A screen: the terminal report with its warnings, and the "results:" line a study prints
/// after it, in rows of a terminal 80 columns wide (where no terminal says its width).
const SCREEN: usize = 80;
const COLUMNS: usize = 80;

/// The rows `text` takes on a terminal `COLUMNS` wide, after asserting that no line is wider
/// (tables fit the width, notes and warnings wrap).
fn rows(name: &str, text: &str) -> usize {
    for l in text.lines() {
        assert!(
            l.chars().count() <= COLUMNS,
            "{name}: a line of {} columns:\n{l}\n{text}",
            l.chars().count()
        );
    }
    text.lines().count()
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/studies")
        .join(name)
}

/// A copy of a fixture study in `dir` (a report never writes into the repository).
fn copy(name: &str, dir: &Path) -> PathBuf {
    let to = dir.join(name);
    std::fs::create_dir_all(&to).unwrap();
    for f in ["manifest.json", "results.jsonl"] {
        std::fs::copy(fixture(name).join(f), to.join(f)).unwrap();
    }
    to
}

/// `fsbench report DIR ARGS` without a terminal or colour (so at 80 columns).
fn report(dir: &Path, args: &[&str]) -> String {
    let o = bin()
        .arg("report")
        .arg(dir)
        .args(args)
        .env("NO_COLOR", "1")
        .env_remove("COLUMNS")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    stdout(&o)
}

/// `fsbench report DIR ARGS` as for a terminal `columns` wide (COLUMNS).
fn report_at(dir: &Path, args: &[&str], columns: usize) -> String {
    let o = bin()
        .arg("report")
        .arg(dir)
        .args(args)
        .env("NO_COLOR", "1")
        .env("COLUMNS", columns.to_string())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    stdout(&o)
}

/// The study's terminal report fits a screen and leads with the claims, then the verdict, then
/// the tables; it ends with the grouped warnings.
fn reads_like_the_quick_start(name: &str, term: &str) {
    let lines: Vec<&str> = term.lines().collect();
    let rows = rows(name, term);
    assert!(
        rows < SCREEN,
        "{name}: {rows} rows (and the results line) do not fit {SCREEN}:\n{term}",
    );
    assert!(
        lines[0].starts_with("Published vs this host: "),
        "{name}: the claims come first:\n{term}"
    );
    let verdict = lines.iter().position(|l| *l == "Verdict:");
    let tables: Vec<usize> = (0..lines.len())
        .filter(|i| lines[*i].starts_with('┌'))
        .collect();
    assert!(
        verdict.is_some_and(|v| tables.len() >= 2 && v < tables[1] && v > tables[0]),
        "{name}: the verdict comes right after the claims table, before any other:\n{term}"
    );
    let warnings = lines.iter().position(|l| *l == "Warnings:");
    assert!(
        warnings.is_none_or(|w| tables.iter().all(|t| *t < w)),
        "{name}: the warnings come last:\n{term}"
    );
}

#[test]
fn every_shipped_studys_terminal_report_fits_a_screen_and_leads_with_its_answer() {
    let tmp = tempfile::tempdir().unwrap();
    for name in [
        "iozone-vs-xfs",
        "ssd-ext4-xfs-btrfs",
        "hpc-btrfs-zfs",
        "btrfs-vs-zfs",
        "billion-files",
    ] {
        let term = report(&copy(name, tmp.path()), &[]);
        reads_like_the_quick_start(name, &term);
    }
}

#[test]
fn the_terminal_keeps_what_decides_and_says_where_the_rest_is() {
    let tmp = tempfile::tempdir().unwrap();
    // iozone: a summary per headline test and target, no matrix; the claim's figure is the
    // summary's (ext4 / xfs in write, over the same cells).
    let dir = copy("iozone-vs-xfs", tmp.path());
    let term = report(&dir, &[]);
    assert!(
        !term.contains("rows file size, columns record size"),
        "{term}"
    );
    let claim = term
        .lines()
        .find(|l| l.contains("XFS writes large files faster"))
        .unwrap();
    let figure = claim.split('┆').nth(1).unwrap().trim();
    let summary = term.split("iozone over each test's cells").nth(1).unwrap();
    let ext4_write = summary.lines().find(|l| l.contains("┆ ext4 ")).unwrap();
    assert!(
        ext4_write.contains(figure),
        "the summary's ext4 write ratio is the claim's {figure}:\n{term}"
    );
    assert!(
        term.replace('\n', " ").contains("report.html (heat maps)"),
        "{term}"
    );
    let full = report(&dir, &["--full"]);
    assert!(full.contains("iozone write on ext4: rows file size, columns record size"));
    // bonnie++: one line per target (means over repeats) here, every run in --full.
    let dir = copy("ssd-ext4-xfs-btrfs", tmp.path());
    let term = report(&dir, &[]);
    let runs = |t: &str| t.lines().filter(|l| l.contains("256M::8192:5")).count();
    assert_eq!(runs(&term), 3, "{term}");
    assert_eq!(runs(&report(&dir, &["--full"])), 9);
    // Five targets of block tests and of aging, four claims: in 80 columns the per-target
    // table goes first, then the body's last section (the ratio matrix), and the report says
    // so; a wide terminal has room for the matrix. The study's own baseline (raw) stays the
    // baseline.
    let dir = copy("btrfs-vs-zfs", tmp.path());
    let term = report(&dir, &[]);
    assert!(!term.contains("│ cdm RND4K_Q32T1-write (iops)"), "{term}");
    assert!(
        term.replace('\n', " ").contains(
            "Left out to fit a screen (fsbench report --full has them): Ratio to raw (values above 1 beat raw); Block tests"
        ),
        "{term}"
    );
    let wide = report_at(&dir, &[], 200);
    assert!(wide.contains("│ cdm RND4K_Q32T1-write (iops)"), "{wide}");
    assert!(report(&dir, &["--full"]).contains("RND4K_Q32T1"));
    let hpc = report(&copy("hpc-btrfs-zfs", tmp.path()), &[]);
    assert!(hpc.contains("Ratio to xfs"), "the plan's baseline:\n{hpc}");
}

#[test]
fn the_quick_start_still_fits_a_screen_and_leads_with_the_verdict() {
    let tmp = tempfile::tempdir().unwrap();
    let term = report(&copy("quick-start", tmp.path()), &[]);
    let lines: Vec<&str> = term.lines().collect();
    let rows = rows("quick-start", &term);
    assert!(rows < SCREEN, "{rows} rows:\n{term}");
    assert_eq!(lines[0], "Verdict:", "{term}");
    for table in [
        "Block tests, per target",
        "Ratio to ext4",
        "Many small files",
        "zfs (zfs)",
    ] {
        assert!(term.contains(table), "{table}:\n{term}");
    }
}

/// One iozone record of the full scale's shape.
fn cell(target: &str, test: &str, file: u64, record: u64, kib: f64) -> String {
    let label = |b: u64| {
        if b >= 1 << 30 {
            format!("{}G", b >> 30)
        } else if b >= 1 << 20 {
            format!("{}M", b >> 20)
        } else {
            format!("{}K", b >> 10)
        }
    };
    serde_json::json!({
        "schema": 1, "target": target, "fs": target.split(['-', ':']).next().unwrap(),
        "workload": "iozone:min_file=2G,max_file=16G,min_record=64k,max_record=16M",
        "test": format!("{test}/{}/{}", label(file), label(record)),
        "repeat": 0, "started_at": "", "duration_s": 1.0, "outcome": "ok",
        "metrics": {"kib_per_sec": kib, "bytes_per_sec": kib * 1024.0},
        "config": {"file_size": file, "record_size": record, "threads": 0}
    })
    .to_string()
}

#[test]
fn iozone_vs_xfs_at_full_scale_fits_a_screen_too() {
    // The full scale's matrix: five targets, iozone's 13 tests, files of 2 to 16 GiB, records of
    // 64 KiB to 16 MiB, one repeat: 2,340 cells. The terminal's summary does not grow with it.
    let tmp = tempfile::tempdir().unwrap();
    let dir = copy("iozone-vs-xfs", tmp.path());
    let tests = [
        "write",
        "rewrite",
        "read",
        "reread",
        "random_read",
        "random_write",
        "backward_read",
        "record_rewrite",
        "stride_read",
        "fwrite",
        "frewrite",
        "fread",
        "freread",
    ];
    let targets = [
        "xfs",
        "ext4",
        "btrfs",
        "btrfs-compress-nosum",
        "btrfs-nosum",
    ];
    let mut lines = Vec::new();
    for (k, target) in targets.iter().enumerate() {
        for (j, test) in tests.iter().enumerate() {
            for f in 1..=4u64 {
                for r in 0..9u64 {
                    let kib =
                        100_000.0 * (1.0 + k as f64 * 0.3) * (1 + (j as u64 + f + r) % 7) as f64;
                    lines.push(cell(target, test, (1 << 30) << f, (64 << 10) << r, kib));
                }
            }
        }
    }
    std::fs::write(dir.join("results.jsonl"), lines.join("\n") + "\n").unwrap();
    let text = std::fs::read_to_string(dir.join("manifest.json")).unwrap();
    let mut m: serde_json::Value = serde_json::from_str(&text).unwrap();
    m["plan"]["repeat"] = 1.into();
    m["plan"]["study"]["scale"] = "full".into();
    std::fs::write(dir.join("manifest.json"), m.to_string()).unwrap();
    let term = report(&dir, &[]);
    reads_like_the_quick_start("iozone-vs-xfs at full scale", &term);
}

/// Whether a text holds a run of seven digits or more (a raw KiB/s figure).
fn seven_digits(text: &str) -> Option<String> {
    let c: Vec<char> = text.chars().collect();
    let i = c
        .windows(7)
        .position(|w| w.iter().all(char::is_ascii_digit))?;
    Some(
        c[i.saturating_sub(60)..(i + 20).min(c.len())]
            .iter()
            .collect(),
    )
}

#[test]
fn a_one_target_iozone_html_report_colours_its_cells_in_readable_units() {
    let tmp = tempfile::tempdir().unwrap();
    let html = report(&copy("iozone-one", tmp.path()), &["--format", "html"]);
    // Six tests, a heat map each of 2 file sizes x 5 record sizes.
    assert_eq!(
        html.matches("<g class=\"cell\">").count(),
        60,
        "a cell per figure"
    );
    let fills: std::collections::BTreeSet<&str> = html
        .split("<g class=\"cell\">")
        .skip(1)
        .filter_map(|c| c.split(" fill=\"").nth(1)?.split('"').next())
        .collect();
    assert!(fills.len() > 20, "cells coloured by throughput: {fills:?}");
    assert!(
        html.contains("MiB/s, log scale: darker is faster"),
        "a legend"
    );
    assert!(
        html.contains("Throughput: MiB/s per cell (rows file size, columns record size)"),
        "the note says what the cells are"
    );
    assert!(
        !html.contains("over the baseline's"),
        "no ratio note for one target"
    );
    assert!(html.contains(" repeats: "), "each repeat's figure on hover");
    if let Some(at) = seven_digits(&html) {
        panic!("a raw seven-digit figure: ...{at}...");
    }
    // Several targets: the baseline's throughput, then each other target's ratio to it.
    let two = report(&copy("iozone-two", tmp.path()), &["--format", "html"]);
    assert!(two.contains("write on disk / tmpfs") && two.contains("write on tmpfs, MiB/s"));
    assert!(two.contains("green faster, red slower"));
}
