//! iozone at a glance, what the short terminal report keeps of hundreds of cells: per headline
//! test and target, the throughput over the test's cells, the ratio to the baseline over them
//! (the geometric mean of the cells' ratios with its 95% interval, as a study's claims compute
//! it, so both say the same figure) and the cells where it is lowest and highest; and the
//! throughput mode's table. Readable units throughout (MiB/s, GiB/s), never iozone's KiB/s. Pure.

use super::matrix::{cell_name, centre, Cells, FileRecord, Iozone};
use crate::metrics::name as metric;
use crate::plan::units::format_rate;
use crate::report::claims::{fmt, paired};
use crate::report::view::Grid;
use crate::store::Record;

/// A cell's figure in bytes per second.
fn bytes(v: &[f64]) -> f64 {
    centre(v) * 1024.0
}

/// The cells with the lowest and the highest value of `f`, as "figure at file/record".
fn extremes(
    cells: &Cells,
    f: &dyn Fn(FileRecord) -> Option<f64>,
    show: &dyn Fn(f64) -> String,
) -> [String; 2] {
    let mut found: Vec<(FileRecord, f64)> = cells
        .keys()
        .filter_map(|c| f(*c).map(|v| (*c, v)))
        .filter(|(_, v)| v.is_finite())
        .collect();
    found.sort_by(|a, b| a.1.total_cmp(&b.1));
    let at = |x: Option<&(FileRecord, f64)>| {
        x.map_or_else(
            || "-".into(),
            |(c, v)| format!("{} at {}", show(*v), cell_name(*c)),
        )
    };
    [at(found.first()), at(found.last())]
}

/// The summary table: one row per headline test and target. None without matrices.
pub(crate) fn summary(z: &Iozone, baseline: &str) -> Option<Grid> {
    let tests = z.headlines();
    let base_of = |test: &str| z.cells(baseline, test).filter(|_| z.targets.len() > 1);
    let vs_base = tests.iter().any(|t| base_of(t).is_some());
    let mut rows = Vec::new();
    for test in &tests {
        let mut first = true;
        for target in &z.targets {
            let Some(cells) = z.cells(target, test) else {
                continue;
            };
            let all: Vec<f64> = cells.values().map(|v| bytes(v)).collect();
            let mut row = vec![
                if first {
                    test.to_string()
                } else {
                    String::new()
                },
                target.clone(),
                format_rate(centre(&all)),
            ];
            first = false;
            let base = base_of(test).filter(|_| target != baseline);
            let [lo, hi] = match base {
                Some(base) => {
                    row.push(match paired(cells, base) {
                        Some((r, Some((a, b)))) => format!("{} ({}-{})", fmt(r), fmt(a), fmt(b)),
                        Some((r, None)) => fmt(r),
                        None => "-".into(),
                    });
                    let ratio = |c: FileRecord| {
                        let (a, b) = (cells.get(&c)?, base.get(&c)?);
                        Some(centre(a) / centre(b))
                    };
                    extremes(cells, &ratio, &|x| format!("{x:.2}"))
                }
                None => {
                    if vs_base {
                        row.push(if target == baseline { "baseline" } else { "-" }.into());
                    }
                    extremes(cells, &|c| cells.get(&c).map(|v| bytes(v)), &format_rate)
                }
            };
            row.extend([lo, hi]);
            rows.push(row);
        }
    }
    if rows.is_empty() {
        return None;
    }
    let mut header: Vec<String> = ["test", "target", "over the cells"]
        .map(String::from)
        .to_vec();
    if vs_base {
        header.push(format!("ratio to {baseline} (95% CI)"));
    }
    header.extend(["lowest cell", "highest cell"].map(String::from));
    let note = if vs_base {
        format!(
            "Over the cells: the geometric mean of each cell's throughput (file size x record size). Ratio: each cell's throughput over {baseline}'s in the same cell, their geometric mean and its 95% interval; lowest and highest: the cells (file/record) where that ratio is lowest and highest ({baseline}'s own row: its slowest and fastest cells). Every cell, per target, with its ratio: report.md, report.html (heat maps), fsbench report --full."
        )
    } else {
        "Over the cells: the geometric mean of each cell's throughput (file size x record size); lowest and highest: the slowest and fastest cells (file/record). Every cell: report.md, report.html (heat maps), fsbench report --full.".to_string()
    };
    let mut g = Grid::new(header, rows, note);
    g.right.retain(|c| *c >= 2);
    g.spare = vec![g.header.len() - 2, g.header.len() - 1];
    Some(g)
}

/// The throughput mode's table: per test and target, the children's and the parent's figures
/// and the min, max and mean per worker, in readable units. None without throughput records.
pub(crate) fn throughput(z: &Iozone) -> Option<Grid> {
    if z.throughput.is_empty() {
        return None;
    }
    let mut groups: Vec<(&str, &str, Vec<&Record>)> = Vec::new();
    for r in &z.throughput {
        match groups.iter_mut().find(|g| g.0 == r.test && g.1 == r.target) {
            Some(g) => g.2.push(r),
            None => groups.push((&r.test, &r.target, vec![r])),
        }
    }
    let rows = groups
        .into_iter()
        .map(|(test, target, rs)| {
            let m = |k: &str| {
                let v: Vec<f64> = rs
                    .iter()
                    .filter_map(|r| r.metrics.get(k).copied())
                    .collect();
                if v.is_empty() {
                    "-".to_string()
                } else {
                    format_rate(v.iter().sum::<f64>() / v.len() as f64 * 1024.0)
                }
            };
            vec![
                test.to_string(),
                target.to_string(),
                m(metric::CHILDREN_KIB_PER_SEC),
                m(metric::PARENT_KIB_PER_SEC),
                m(metric::MIN_KIB_PER_SEC),
                m(metric::MAX_KIB_PER_SEC),
                m(metric::AVG_KIB_PER_SEC),
            ]
        })
        .collect();
    let mut g = Grid::new(
        ["test", "target", "children see", "parent sees", "min", "max", "avg"]
            .map(String::from)
            .to_vec(),
        rows,
        "Children see: the sum of the workers' rates; parent sees: all bytes over the wall time; min, max, avg: per worker. Means over repeats.",
    );
    g.right.retain(|c| *c >= 2);
    Some(g)
}
