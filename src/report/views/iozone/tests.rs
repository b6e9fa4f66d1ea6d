//! The iozone view's matrices, ratios, summary, heat maps and `-R` text on a made-up study.

use super::matrices::{markdown, term};
use super::matrix::{label, FileRecord};
use super::rtext::parse_r;
use super::*;

fn rec(target: &str, test: &str, file: u64, record: u64, kib: f64) -> Record {
    let p = crate::frame::Phase {
        test: format!("{test}/{}/{}", label(file), label(record)),
        metrics: [("kib_per_sec".to_string(), kib)].into_iter().collect(),
        config: Some(serde_json::json!({"file_size": file, "record_size": record, "threads": 0})),
        ..Default::default()
    };
    let key = crate::store::RecordKey {
        target,
        fs: "x",
        workload: NAME,
        repeat: 0,
    };
    Record::from_phase(&key, p)
}

fn study() -> Vec<Record> {
    let mut v = Vec::new();
    for (t, scale) in [("xfs", 1.0), ("btrfs", 2.0)] {
        for f in [64u64 << 10, 128 << 10] {
            let mut r = 4096;
            while r <= f.min(64 << 10) {
                for test in ["write", "read"] {
                    v.push(rec(t, test, f, r, scale * (f / r) as f64 * 100.0));
                }
                r *= 2;
            }
        }
    }
    v
}

#[test]
fn r_text_parses_back_with_the_skipped_cells_as_zero() {
    let mut v = study();
    // A big file whose small records were skipped (as -a does from 32 MiB).
    v.push(rec("xfs", "write", 32 << 20, 64 << 10, 5000.0));
    let z = Iozone::collect(&v);
    let text = r_text(&z);
    let blocks = parse_r(&text);
    assert_eq!(blocks.len(), 4, "write and read for two targets:\n{text}");
    let (title, head, rows) = &blocks[0];
    assert_eq!(title, "Writer report");
    assert_eq!(head, &vec![4, 8, 16, 32, 64]);
    assert_eq!(rows[0], (64, vec![1600, 800, 400, 200, 100]));
    assert_eq!(
        rows[2],
        (32768, vec![0, 0, 0, 0, 5000]),
        "skipped cells print 0"
    );
    assert_eq!(blocks[1].0, "Reader report");
    assert!(text.contains("target btrfs"));
}

#[test]
fn the_ratio_matrix_divides_by_the_baseline_cell() {
    let z = Iozone::collect(&study());
    let r = z
        .ratio(
            "btrfs",
            "xfs",
            "write",
            FileRecord {
                file: 64 << 10,
                record: 4096,
            },
        )
        .unwrap();
    assert!((r - 2.0).abs() < 1e-9, "{r}");
    let t = term(&z, "xfs", 300, false);
    assert!(
        t.contains("iozone write on btrfs") && t.contains("ratio to xfs"),
        "{t}"
    );
    assert!(t.contains("2.00"), "{t}");
    let stacked = term(&z, "xfs", 60, false);
    assert!(
        stacked.lines().count() > t.lines().count(),
        "too narrow: one under the other"
    );
    assert!(
        term(&z, "xfs", 300, true).contains("\x1b[32m2.00"),
        "green above 1"
    );
    let h = heatmaps::html(&z, "xfs", None, None);
    assert!(
        h.contains("write on btrfs / xfs") && h.contains(">2.00<"),
        "{h}"
    );
    let md = markdown(&z, "xfs");
    assert!(md.contains("### read on btrfs, ratio to xfs"));
}

/// Two repeats of every cell, the second 10% above the first, btrfs `scale` times xfs with a
/// wobble per cell so the interval over cells has a width.
fn repeated(targets: &[(&str, f64)]) -> Vec<Record> {
    let mut v = Vec::new();
    for (t, scale) in targets {
        for (k, f) in [16u64 << 20, 64 << 20].into_iter().enumerate() {
            for (j, r) in [4096u64, 65536, 1 << 20].into_iter().enumerate() {
                for test in ["write", "read"] {
                    let wobble = if *scale == 1.0 {
                        1.0
                    } else {
                        1.0 + 0.1 * (k + j) as f64
                    };
                    for rep in [1.0, 1.1] {
                        let kib = 3_000_000.0 * scale * wobble * rep * (1 + j) as f64;
                        v.push(rec(t, test, f, r, kib));
                    }
                }
            }
        }
    }
    v
}

#[test]
fn the_summary_says_the_claims_figure_over_the_cells_and_where_it_differs_most() {
    let v = repeated(&[("xfs", 1.0), ("btrfs", 0.5)]);
    let z = Iozone::collect(&v);
    let g = summary::summary(&z, "xfs").unwrap();
    assert_eq!(g.header[3], "ratio to xfs (95% CI)");
    let btrfs = g.rows.iter().find(|r| r[1] == "btrfs").unwrap();
    let claim: crate::plan::study::Claim = toml::from_str(
        "says = \"x\"\nquote = \"q\"\ntarget = \"btrfs\"\nvs = \"xfs\"\nworkload = \"iozone\"\ntest = \"write\"\nmetric = \"kib_per_sec\"\nexpect = \"< 1\"",
    )
    .unwrap();
    let f = crate::report::claims::check(&claim, &v);
    assert_eq!(
        btrfs[3],
        crate::report::claims::measured(&f),
        "the summary's ratio is the claim's"
    );
    assert_eq!(btrfs[4], "0.50 at 16M/4K", "the lowest cell: {btrfs:?}");
    assert_eq!(btrfs[5], "0.65 at 64M/1M", "the highest cell: {btrfs:?}");
    let xfs = &g.rows[0];
    assert_eq!(
        (xfs[0].as_str(), xfs[1].as_str(), xfs[3].as_str()),
        ("write", "xfs", "baseline")
    );
    assert!(
        xfs[4].ends_with("MiB/s at 16M/4K") && xfs[5].ends_with("MiB/s at 64M/1M"),
        "{xfs:?}"
    );
    let text: String = g
        .rows
        .iter()
        .flatten()
        .cloned()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        !text
            .chars()
            .collect::<Vec<_>>()
            .windows(7)
            .any(|w| w.iter().all(char::is_ascii_digit)),
        "no raw KiB/s: {text}"
    );
    assert!(
        g.note.unwrap().contains("report.html"),
        "says where the cells are"
    );
}

#[test]
fn one_targets_heat_maps_colour_each_cell_by_throughput_in_readable_units() {
    let v = repeated(&[("alpha", 1.0)]);
    let z = Iozone::collect(&v);
    let g = summary::summary(&z, "alpha").unwrap();
    assert_eq!(
        g.header.len(),
        5,
        "no ratio column for one target: {:?}",
        g.header
    );
    let h = heatmaps::html(&z, "alpha", Some(&g), None);
    // Two tests, a map each: six cells, each filled with its own colour.
    assert_eq!(h.matches("<svg class=\"chart\"").count(), 2, "{h}");
    assert_eq!(h.matches("<g class=\"cell\">").count(), 12);
    let fills: std::collections::BTreeSet<&str> = h
        .split("<g class=\"cell\">")
        .skip(1)
        .filter_map(|c| c.split("fill=\"").nth(1)?.split('"').next())
        .collect();
    // (A cell's figure grows with its record size: three figures, three colours, light to dark.)
    assert_eq!(fills.len(), 3, "cells coloured by their figure: {fills:?}");
    assert!(h.contains("MiB/s, log scale"), "a legend with the unit");
    // 3,000,000 and 3,300,000 KiB/s: 2,930 and 3,223 MiB/s, their geometric mean 3,073.
    assert!(h.contains(">3,073<"), "{h}");
    assert!(
        h.contains("alpha, 16M file, 4K records: 3,072.7 MiB/s (2 repeats: 2,929.7, 3,222.7)"),
        "each repeat on hover: {h}"
    );
    assert!(
        !h.chars()
            .collect::<Vec<_>>()
            .windows(7)
            .any(|w| w.iter().all(char::is_ascii_digit)),
        "no seven-digit raw figure"
    );
    assert!(
        h.contains("Throughput: MiB/s per cell"),
        "the note says what the cells are"
    );
}
