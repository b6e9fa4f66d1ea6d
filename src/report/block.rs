//! The CrystalDiskMark-like table: per target, one row per test (read and write side by side),
//! MB/s, IOPS and p99 completion latency; means over repeats.

use comfy_table::{presets::UTF8_FULL_CONDENSED, Cell, CellAlignment, Table};

use crate::plan::units::{format_count, format_ns};
use crate::store::{Outcome, Record};

/// (bytes/s, IOPS, p99 latency in ns) of one direction.
type Side = (f64, f64, Option<f64>);

#[derive(Default)]
struct Row {
    test: String,
    read: Option<Side>,
    write: Option<Side>,
    /// Repeats summed into read and write (the table shows means).
    reads: u32,
    writes: u32,
    note: String,
}

fn add(acc: &mut Option<Side>, x: Side) {
    *acc = Some(match acc.take() {
        None => x,
        Some(a) => (a.0 + x.0, a.1 + x.1, a.2.zip(x.2).map(|(p, q)| p + q)),
    });
}

fn mean(x: Option<Side>, n: u32) -> Option<Side> {
    let n = n.max(1) as f64;
    x.map(|s| (s.0 / n, s.1 / n, s.2.map(|p| p / n)))
}

pub fn is_block(r: &Record) -> bool {
    r.metrics.contains_key("iops")
}

/// One table per target that ran block jobs; empty when none did.
pub fn tables(records: &[Record]) -> String {
    // The aging workload's block phases have their own table (seed 002's, report/aging.rs).
    let is_block = |r: &Record| is_block(r) && !super::aging::is_aging(r);
    let mut targets: Vec<&str> = Vec::new();
    for r in records.iter().filter(|r| is_block(r)) {
        if !targets.contains(&r.target.as_str()) {
            targets.push(&r.target);
        }
    }
    let mut out = String::new();
    for target in targets {
        let mine: Vec<&Record> = records
            .iter()
            .filter(|r| r.target == target && is_block(r))
            .collect();
        let fs = mine.first().map(|r| r.fs.as_str()).unwrap_or("");
        let mut rows: Vec<Row> = Vec::new();
        for r in &mine {
            let base = r
                .test
                .strip_suffix("-read")
                .or_else(|| r.test.strip_suffix("-write"))
                .unwrap_or(&r.test)
                .to_string();
            let i = match rows.iter().position(|x| x.test == base) {
                Some(i) => i,
                None => {
                    rows.push(Row {
                        test: base.clone(),
                        ..Default::default()
                    });
                    rows.len() - 1
                }
            };
            let row = &mut rows[i];
            if r.outcome != Outcome::Ok {
                row.note = r
                    .error
                    .clone()
                    .or_else(|| r.reason.clone())
                    .unwrap_or_default();
                continue;
            }
            let m = |k: &str| r.metrics.get(k).copied().unwrap_or(0.0);
            let mixed = m("read_ios") > 0.0 && m("write_ios") > 0.0;
            if m("read_ios") > 0.0 {
                let p99 = r
                    .metrics
                    .get(if mixed {
                        "read_lat_p99_ns"
                    } else {
                        "lat_p99_ns"
                    })
                    .copied();
                add(
                    &mut row.read,
                    (m("read_bytes_per_sec"), m("read_iops"), p99),
                );
                row.reads += 1;
            }
            if m("write_ios") > 0.0 {
                let p99 = r
                    .metrics
                    .get(if mixed {
                        "write_lat_p99_ns"
                    } else {
                        "lat_p99_ns"
                    })
                    .copied();
                add(
                    &mut row.write,
                    (m("write_bytes_per_sec"), m("write_iops"), p99),
                );
                row.writes += 1;
            }
            if r.notes.iter().any(|n| n.starts_with("page_cache")) {
                row.note = "page cache".into();
            }
        }
        let mut t = Table::new();
        t.load_preset(UTF8_FULL_CONDENSED);
        t.set_header(vec![
            "test",
            "read MB/s",
            "write MB/s",
            "read IOPS",
            "write IOPS",
            "read p99",
            "write p99",
            "note",
        ]);
        let num = |s: String| Cell::new(s).set_alignment(CellAlignment::Right);
        for mut row in rows {
            row.read = mean(row.read, row.reads);
            row.write = mean(row.write, row.writes);
            let pick = |x: &Option<Side>, f: &dyn Fn(&Side) -> String| {
                x.as_ref().map(f).unwrap_or_else(|| "-".into())
            };
            t.add_row(vec![
                Cell::new(&row.test),
                num(pick(&row.read, &|x| format!("{:.1}", x.0 / 1e6))),
                num(pick(&row.write, &|x| format!("{:.1}", x.0 / 1e6))),
                num(pick(&row.read, &|x| format_count(x.1))),
                num(pick(&row.write, &|x| format_count(x.1))),
                num(pick(&row.read, &|x| x.2.map(format_ns).unwrap_or_default())),
                num(pick(&row.write, &|x| {
                    x.2.map(format_ns).unwrap_or_default()
                })),
                Cell::new(row.note),
            ]);
        }
        out.push_str(&format!("{target} ({fs})\n{t}\n"));
    }
    out
}
