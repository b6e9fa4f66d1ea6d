//! iozone's `-R` text (`--format iozone`), which iozone's graphing scripts read: per target one
//! block per test (KiB/s as whole numbers, the arithmetic mean over repeats as iozone users
//! average runs, 0 in the cells the matrix skipped) and the throughput mode's lines. Pure.

use std::fmt::Write as _;

use super::matrix::{cfg, FileRecord, Iozone};
use crate::metrics::name as metric;
use crate::workload::iozone::TESTS;

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

/// iozone's `-R` text: per target, one block per test (a record-size header row, one row per
/// file size, 0 in the cells the matrix skipped), KiB/s as whole numbers; and the throughput
/// mode's children/parent lines.
pub(crate) fn r_text(z: &Iozone) -> String {
    let mut out = String::new();
    for target in &z.targets {
        let tests: Vec<&'static str> = z
            .tests()
            .into_iter()
            .filter(|t| z.cells(target, t).is_some())
            .collect();
        if !tests.is_empty() {
            let _ = writeln!(
                out,
                "fsbench iozone: target {target}, means over repeats\nExcel output is below:\n"
            );
        }
        for test in tests {
            let Some(cells) = z.cells(target, test) else {
                continue;
            };
            let (files, records) = z.axes(test);
            let title = TESTS
                .iter()
                .find(|t| t.name == test)
                .map_or("", |t| t.report);
            let _ = writeln!(out, "\"{title}\"");
            out.push_str("        ");
            for r in &records {
                let _ = write!(out, "\"{}\"  ", r / 1024);
            }
            out.push('\n');
            for f in &files {
                let _ = write!(out, "\"{}\"   ", f / 1024);
                for r in records.iter().filter(|r| *r <= f) {
                    let cell = FileRecord {
                        file: *f,
                        record: *r,
                    };
                    let v = cells.get(&cell).map_or(0.0, |v| mean(v));
                    let _ = write!(out, "{v:.0}  ");
                }
                out.push('\n');
            }
            out.push('\n');
        }
        for r in z.throughput.iter().filter(|r| &r.target == target) {
            let name = r.test.as_str();
            let actors = TESTS
                .iter()
                .find(|t| t.name == name)
                .map_or(name, |t| t.actors);
            let n = cfg(r, "threads");
            let m = |k: &str| r.metrics.get(k).copied().unwrap_or(0.0);
            let _ = write!(
                out,
                "\tChildren see throughput for {n:>2} {actors}\t= {:>12.2} kB/sec\n\tParent sees throughput for {n:>2} {actors}\t= {:>12.2} kB/sec\n\tMin throughput per process\t\t\t= {:>12.2} kB/sec\n\tMax throughput per process\t\t\t= {:>12.2} kB/sec\n\tAvg throughput per process\t\t\t= {:>12.2} kB/sec\n\n",
                m(metric::CHILDREN_KIB_PER_SEC),
                m(metric::PARENT_KIB_PER_SEC),
                m(metric::MIN_KIB_PER_SEC),
                m(metric::MAX_KIB_PER_SEC),
                m(metric::AVG_KIB_PER_SEC)
            );
        }
    }
    out
}

/// One block of `-R` text read back: title, record sizes (KiB), rows of (file KiB, values).
#[cfg(test)]
pub(crate) type RBlock = (String, Vec<u64>, Vec<(u64, Vec<u64>)>);

/// Reads `-R` text (iozone's or fsbench's) back into its blocks.
#[cfg(test)]
pub(crate) fn parse_r(text: &str) -> Vec<RBlock> {
    let mut out: Vec<RBlock> = Vec::new();
    let unquote = |s: &str| s.trim_matches('"').parse::<u64>().ok();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let t = line.trim();
        if !(t.starts_with('"') && t.ends_with("report\"")) {
            continue;
        }
        let title = t.trim_matches('"').to_string();
        let head: Vec<u64> = lines
            .next()
            .unwrap_or("")
            .split_whitespace()
            .filter_map(unquote)
            .collect();
        let mut rows = Vec::new();
        while let Some(l) = lines.peek() {
            let mut parts = l.split_whitespace();
            let Some(file) = parts.next().and_then(unquote) else {
                break;
            };
            rows.push((file, parts.filter_map(|v| v.parse().ok()).collect()));
            lines.next();
        }
        out.push((title, head, rows));
    }
    out
}
