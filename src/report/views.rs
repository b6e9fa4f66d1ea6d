//! The seeds' views over a study, as plain tables (terminal or Markdown): the ratio-to-baseline
//! matrix (seed 004), the many-files table with seed 003's columns, and latency percentiles per
//! block test. Means over repeats. Pure.

use comfy_table::{presets::UTF8_FULL_CONDENSED, Cell, CellAlignment, Table};

use super::summary::{fmt_value, Row};
use crate::plan::units::{format_bytes, format_count, format_ns};
use crate::store::{Outcome, Record};

/// A table that renders to the terminal or to Markdown.
pub struct View {
    pub title: String,
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
    pub note: String,
    /// Shown in the short terminal report (the rest go to report.md and `report --full`).
    pub brief: bool,
}

impl View {
    pub fn term(&self) -> String {
        let mut t = Table::new();
        t.load_preset(UTF8_FULL_CONDENSED);
        t.set_header(self.header.clone());
        for r in &self.rows {
            t.add_row(
                r.iter()
                    .enumerate()
                    .map(|(i, x)| {
                        let c = Cell::new(x);
                        if i > 0 {
                            c.set_alignment(CellAlignment::Right)
                        } else {
                            c
                        }
                    })
                    .collect::<Vec<_>>(),
            );
        }
        format!("{}\n{t}\n{}\n", self.title, self.note)
    }

    pub fn markdown(&self) -> String {
        let mut out = format!("## {}\n\n| {} |\n|", self.title, self.header.join(" | "));
        out.push_str(&" --- |".repeat(self.header.len()));
        out.push('\n');
        for r in &self.rows {
            out.push_str(&format!("| {} |\n", r.join(" | ")));
        }
        if !self.note.is_empty() {
            out.push_str(&format!("\n{}\n", self.note));
        }
        out.push('\n');
        out
    }
}

/// The metric that stands for a test in the ratio matrix: IOPS for block jobs, files/s for the
/// files workload, else bytes/s.
fn headline(rows: &[Row], workload: &str, test: &str) -> Option<&'static str> {
    crate::metrics::catalog::HEADLINES
        .iter()
        .copied()
        .find(|m| {
            rows.iter()
                .any(|r| r.workload == workload && r.test == test && r.metric == *m)
        })
}

/// A ratio matrix row's name: "cdm SEQ1M_Q8T1-read (iops)".
fn name_of(w: &str, t: &str, metric: &str) -> String {
    if w == t {
        format!("{t} ({metric})")
    } else {
        format!("{w} {t} ({metric})")
    }
}

/// The ratio matrix's name for a statistics row.
pub fn row_name(r: &Row) -> String {
    name_of(&r.workload, &r.test, &r.metric)
}

/// Seed 004's view: tests x targets, each cell the ratio of the target's mean to the baseline's
/// (values above 1 beat the baseline), `*` where Welch's test says the difference is real.
pub fn ratio_matrix(rows: &[Row], baseline: &str) -> Option<View> {
    let mut targets: Vec<String> = Vec::new();
    let mut tests: Vec<(String, String)> = Vec::new();
    for r in rows {
        if !targets.contains(&r.target) {
            targets.push(r.target.clone());
        }
        let t = (r.workload.clone(), r.test.clone());
        if !tests.contains(&t) {
            tests.push(t);
        }
    }
    if targets.len() < 2 {
        return None;
    }
    let mut out = Vec::new();
    for (w, t) in &tests {
        let Some(m) = headline(rows, w, t) else {
            continue;
        };
        let mut line = vec![name_of(w, t, m)];
        for target in &targets {
            let cell = rows
                .iter()
                .find(|r| &r.workload == w && &r.test == t && r.metric == m && &r.target == target)
                .map(|r| match r.ratio {
                    Some(x) => format!("{x:.2}{}", if r.significant { "*" } else { "" }),
                    None => "1.00".into(),
                })
                .unwrap_or_else(|| "-".into());
            line.push(cell);
        }
        out.push(line);
    }
    let mut header = vec!["test".to_string()];
    header.extend(targets);
    Some(View {
        title: format!("Ratio to {baseline} (values above 1 beat {baseline})"),
        header,
        rows: out,
        note: "* the difference is significant (Welch's t-test on the logs, p < 0.05).".into(),
        brief: true,
    })
}

pub(super) fn mean_of(records: &[&Record], key: &str) -> Option<f64> {
    let v: Vec<f64> = records
        .iter()
        .filter_map(|r| r.metrics.get(key).copied())
        .collect();
    if v.is_empty() {
        None
    } else {
        Some(v.iter().sum::<f64>() / v.len() as f64)
    }
}

fn min_avg_max(records: &[&Record], op: &str) -> String {
    match (
        mean_of(records, &format!("{op}_min_ns")),
        mean_of(records, &format!("{op}_mean_ns")),
        mean_of(records, &format!("{op}_max_ns")),
    ) {
        (Some(a), Some(b), Some(c)) => {
            format!("{} / {} / {}", format_ns(a), format_ns(b), format_ns(c))
        }
        _ => "-".into(),
    }
}

/// A mean formatted by `f`, or "-" when there is none.
fn opt(v: Option<f64>, f: &dyn Fn(f64) -> String) -> String {
    v.map(f).unwrap_or_else(|| "-".into())
}

/// Inodes the write phase used; "n/a (dynamic)" where the filesystem has no fixed inode count
/// (btrfs: statvfs reports 0 inodes), never 0.
fn inodes(w: &[&Record]) -> String {
    match mean_of(w, "inodes_used") {
        Some(n) => format_count(n),
        None if mean_of(w, "inodes_dynamic").is_some() => "n/a (dynamic)".into(),
        None => "-".into(),
    }
}

/// The write and read records of the files workload, per target in order of appearance.
fn files_by_target(records: &[Record]) -> Vec<(&str, Vec<&Record>, Vec<&Record>)> {
    let mut out: Vec<(&str, Vec<&Record>, Vec<&Record>)> = Vec::new();
    for r in records
        .iter()
        .filter(|r| r.workload_name() == "files" && r.outcome == Outcome::Ok)
    {
        let i = match out.iter().position(|x| x.0 == r.target) {
            Some(i) => i,
            None => {
                out.push((&r.target, Vec::new(), Vec::new()));
                out.len() - 1
            }
        };
        match r.test.as_str() {
            "write" => out[i].1.push(r),
            "read" => out[i].2.push(r),
            _ => {}
        }
    }
    out
}

/// The files table for the terminal: rates, mean create and read times, space and inodes.
pub fn files_brief(records: &[Record]) -> Option<View> {
    let per = files_by_target(records);
    if per.is_empty() {
        return None;
    }
    let rows = per
        .iter()
        .map(|(t, w, rd)| {
            vec![
                t.to_string(),
                opt(mean_of(w, "files_per_sec"), &format_count),
                opt(mean_of(rd, "files_per_sec"), &format_count),
                opt(mean_of(w, "create_mean_ns"), &format_ns),
                opt(mean_of(rd, "read_mean_ns"), &format_ns),
                opt(mean_of(w, "space_used_bytes"), &|b| format_bytes(b as u64)),
                opt(mean_of(w, "space_overhead_pct"), &|p| format!("{p:.1}%")),
                inodes(w),
            ]
        })
        .collect();
    Some(View {
        title: "Many small files".into(),
        header: [
            "target",
            "write files/s",
            "read files/s",
            "create avg",
            "read avg",
            "space used",
            "overhead",
            "inodes",
        ]
        .map(String::from)
        .to_vec(),
        rows,
        note: "Means over repeats; every column (seed 003's) in report.md.".into(),
        brief: true,
    })
}

/// Seed 003's table: per target, the write and read phases with per-file operation times
/// (min / mean / max), files/s, bytes, blocks, space used, overhead and inodes.
pub fn files_table(records: &[Record]) -> Option<View> {
    let per = files_by_target(records);
    if per.is_empty() {
        return None;
    }
    let mut rows = Vec::new();
    for (t, w, rd) in per {
        rows.push(vec![
            t.to_string(),
            min_avg_max(&w, "create"),
            min_avg_max(&w, "write"),
            min_avg_max(&rd, "open"),
            min_avg_max(&rd, "read"),
            opt(mean_of(&w, "files_per_sec"), &format_count),
            opt(mean_of(&rd, "files_per_sec"), &format_count),
            opt(mean_of(&w, "bytes"), &|b| format_bytes(b as u64)),
            opt(mean_of(&w, "blocks_used"), &format_count),
            opt(mean_of(&w, "space_used_bytes"), &|b| format_bytes(b as u64)),
            opt(mean_of(&w, "space_overhead_pct"), &|p| format!("{p:.1}%")),
            inodes(&w),
        ]);
    }
    Some(View {
        title: "Many small files (seed 003's columns)".into(),
        header: [
            "target",
            "create min/avg/max",
            "write min/avg/max",
            "open min/avg/max",
            "read min/avg/max",
            "write files/s",
            "read files/s",
            "bytes",
            "blocks",
            "space used",
            "overhead",
            "inodes",
        ]
        .map(String::from)
        .to_vec(),
        rows,
        note: "Means over repeats; overhead = (space used - bytes written) / space used.".into(),
        brief: false,
    })
}

/// Completion latency percentiles per block test and target (means over repeats).
pub fn latency_table(rows: &[Row]) -> Option<View> {
    let pcts = [
        "lat_p50_ns",
        "lat_p90_ns",
        "lat_p99_ns",
        "lat_p999_ns",
        "lat_max_ns",
    ];
    let mut out = Vec::new();
    let mut seen: Vec<(String, String, String)> = Vec::new();
    for r in rows.iter().filter(|r| r.metric == "lat_p50_ns") {
        let k = (r.workload.clone(), r.test.clone(), r.target.clone());
        if seen.contains(&k) {
            continue;
        }
        seen.push(k);
        let mut line = vec![
            if r.workload == r.test {
                r.test.clone()
            } else {
                format!("{} {}", r.workload, r.test)
            },
            r.target.clone(),
        ];
        for p in pcts {
            line.push(
                rows.iter()
                    .find(|x| {
                        x.workload == r.workload
                            && x.test == r.test
                            && x.target == r.target
                            && x.metric == p
                    })
                    .map(|x| fmt_value(p, x.summary.mean))
                    .unwrap_or_else(|| "-".into()),
            );
        }
        out.push(line);
    }
    if out.is_empty() {
        return None;
    }
    Some(View {
        title: "Completion latency".into(),
        header: ["test", "target", "p50", "p90", "p99", "p99.9", "max"]
            .map(String::from)
            .to_vec(),
        rows: out,
        note: String::new(),
        brief: false,
    })
}

/// Every view that has data, in order.
pub fn all(records: &[Record], rows: &[Row], baseline: &str) -> Vec<View> {
    [
        ratio_matrix(rows, baseline),
        files_table(records),
        latency_table(rows),
    ]
    .into_iter()
    .flatten()
    .collect()
}
