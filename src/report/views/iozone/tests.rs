//! The iozone view's matrices, ratios and `-R` text on a made-up study.

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
    assert_eq!(
        z.ratio("btrfs", "xfs", "write", (64 << 10, 4096)),
        Some(2.0)
    );
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
    let h = html(&z, "xfs");
    assert!(h.contains("ratio to xfs") && h.contains("2.00"));
    let md = markdown(&z, "xfs");
    assert!(md.contains("### read on btrfs, ratio to xfs"));
}
