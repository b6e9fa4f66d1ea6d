//! The btrfs-vs-ZFS article's in-place write table: rows are the four tests (and what the file's layout became),
//! columns are the targets; a target that also ran the workload with snapshots gets a second
//! column beside it. Means over repeats. Pure.

use crate::metrics::name as metric;
use crate::plan::units::format_count;
use crate::report::records::mean_of;
use crate::report::view::{Body, Grid, Section, Shown, Study, WorkloadView};
use crate::store::note;
use crate::store::{Outcome, Record};
use crate::workload::aging::DEF;

pub(crate) struct Aging;

impl WorkloadView for Aging {
    fn claims(&self, workload: &str) -> bool {
        workload == DEF.name
    }

    fn sections(&self, mine: &[&Record], _study: &Study) -> Vec<Section> {
        view(mine).into_iter().collect()
    }
}

/// One column: a target and the workload variant it ran.
struct Column<'a> {
    title: String,
    records: Vec<&'a Record>,
}

fn columns<'a>(records: &[&'a Record]) -> Vec<Column<'a>> {
    let mut out: Vec<(&str, &str, Vec<&Record>)> = Vec::new();
    for r in records
        .iter()
        .copied()
        .filter(|r| r.outcome != Outcome::Skipped)
    {
        match out
            .iter_mut()
            .find(|c| c.0 == r.target && c.1 == r.workload)
        {
            Some(c) => c.2.push(r),
            None => out.push((&r.target, &r.workload, vec![r])),
        }
    }
    out.into_iter()
        .map(|(t, w, records)| Column {
            title: match w.strip_prefix("aging:") {
                Some(params) => {
                    // The snapshot settings tell a target's two columns apart.
                    let snap: Vec<&str> = params
                        .split(',')
                        .filter(|p| p.starts_with("snapshots=") || p.starts_with("keep="))
                        .collect();
                    match snap.is_empty() {
                        true => format!("{t} ({params})"),
                        false => format!("{t} ({})", snap.join(",")),
                    }
                }
                None => t.to_string(),
            },
            records,
        })
        .collect()
}

fn mean(c: &Column, test: &str, key: &str) -> Option<f64> {
    let ok: Vec<&Record> = c
        .records
        .iter()
        .copied()
        .filter(|r| r.test == test && r.outcome == Outcome::Ok)
        .collect();
    mean_of(&ok, key)
}

fn mbps(v: f64) -> String {
    format!("{:.1}", v / 1e6)
}

/// What a cell shows when the metric is missing: the failure, "unsupported" for a layout FIEMAP
/// cannot map, or "-".
fn missing(c: &Column, test: &str, layout: bool) -> String {
    let rs: Vec<&&Record> = c.records.iter().filter(|r| r.test == test).collect();
    if rs.iter().any(|r| r.outcome == Outcome::Failed) {
        return "failed".into();
    }
    if layout
        && rs.iter().any(|r| {
            note::find(&r.notes, note::Kind::Fragmentation)
                .is_some_and(|t| t.starts_with("unsupported"))
        })
    {
        return "n/a (no FIEMAP)".into();
    }
    "-".into()
}

type Fmt = fn(f64) -> String;

/// The btrfs-vs-ZFS article's table, when the study ran the aging workload.
fn view(records: &[&Record]) -> Option<Section> {
    let cols = columns(records);
    if cols.is_empty() {
        return None;
    }
    let lines: [(&str, &str, &str, Fmt, bool); 11] = [
        (
            "SEQ1M Q8T1 write, MB/s",
            "write",
            metric::BYTES_PER_SEC,
            mbps,
            false,
        ),
        (
            "SEQ1M Q8T1 read before, MB/s",
            "read-pre",
            metric::BYTES_PER_SEC,
            mbps,
            false,
        ),
        (
            "RND4K Q32T1 overwrite, IOPS",
            "overwrite",
            "iops",
            format_count,
            false,
        ),
        (
            "SEQ1M Q8T1 read after, MB/s",
            "read-post",
            metric::BYTES_PER_SEC,
            mbps,
            false,
        ),
        (
            "read after / before",
            "read-post",
            metric::POST_PRE_RATIO,
            |v| format!("{v:.2}"),
            false,
        ),
        (
            "layout score after write",
            "write",
            metric::LAYOUT_SCORE,
            |v| format!("{v:.3}"),
            true,
        ),
        (
            "layout score after overwrite",
            "overwrite",
            metric::LAYOUT_SCORE,
            |v| format!("{v:.3}"),
            true,
        ),
        (
            "extents after overwrite",
            "overwrite",
            "extents",
            format_count,
            true,
        ),
        (
            "overwrite write amplification",
            "overwrite",
            metric::WRITE_AMPLIFICATION,
            |v| format!("{v:.2}"),
            false,
        ),
        (
            "snapshots taken",
            "overwrite",
            metric::SNAPSHOTS_TAKEN,
            format_count,
            false,
        ),
        (
            "snapshot p99 latency",
            "overwrite",
            "snapshot_lat_p99_ns",
            crate::plan::units::format_ns,
            false,
        ),
    ];
    let mut rows = Vec::new();
    for (label, test, key, f, layout) in lines {
        if key.starts_with("snapshot") && cols.iter().all(|c| mean(c, test, key).is_none()) {
            continue;
        }
        let mut row = vec![label.to_string()];
        for c in &cols {
            row.push(match mean(c, test, key) {
                Some(v) => f(v),
                None => missing(c, test, layout),
            });
        }
        rows.push(row);
    }
    let mut header = vec!["test".to_string()];
    header.extend(cols.iter().map(|c| c.title.clone()));
    Some(Section {
        title: "In-place writes (the btrfs-vs-ZFS article's aging test)".into(),
        shown: Shown::BRIEF,
        body: Body::Table(Grid::new(header, rows, "A file written sequentially, read (caches dropped), overwritten by 4K random writes, read again. \
Layout score: share of blocks physically next to their predecessor (1 = contiguous; FAST'17). Means over repeats.")),
    })
}
