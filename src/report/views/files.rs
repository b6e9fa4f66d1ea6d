//! The files workload's view: the billion-files study's many-files table (per target, the write and read phases
//! with per-file operation times, files/s, bytes, blocks, space used, overhead and inodes), and a
//! shorter one for the short terminal report. Means over repeats. Pure.

use crate::metrics::name as metric;
use crate::plan::units::{format_bytes, format_count, format_ns};
use crate::report::records::mean_of;
use crate::report::view::{Body, Grid, Section, Shown, Study, WorkloadView};
use crate::store::{Outcome, Record};

pub(crate) struct Files;

impl WorkloadView for Files {
    fn claims(&self, workload: &str) -> bool {
        workload == crate::workload::files::DEF.name
    }

    /// The billion-files study's table, where the short terminal report has the brief one.
    fn sections(&self, mine: &[&Record], _study: &Study) -> Vec<Section> {
        [table(mine), brief(mine)].into_iter().flatten().collect()
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
    match mean_of(w, metric::INODES_USED) {
        Some(n) => format_count(n),
        None if mean_of(w, metric::INODES_DYNAMIC).is_some() => "n/a (dynamic)".into(),
        None => "-".into(),
    }
}

/// The write and read records of the files workload, per target in order of appearance.
fn files_by_target<'a>(records: &[&'a Record]) -> Vec<(&'a str, Vec<&'a Record>, Vec<&'a Record>)> {
    let mut out: Vec<(&str, Vec<&Record>, Vec<&Record>)> = Vec::new();
    for r in records.iter().copied().filter(|r| r.outcome == Outcome::Ok) {
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

/// A target's name as the table shows it: marked when a record of it did less work than asked.
fn name(t: &str, w: &[&Record], rd: &[&Record]) -> String {
    if w.iter().chain(rd).any(|r| r.less_work().is_some()) {
        format!("{t} {}", super::less::MARK)
    } else {
        t.to_string()
    }
}

/// The line under the table, with the mark's meaning when a row carries it.
fn note_for(per: &[(&str, Vec<&Record>, Vec<&Record>)], note: &str) -> String {
    let marked = per
        .iter()
        .any(|(_, w, rd)| w.iter().chain(rd).any(|r| r.less_work().is_some()));
    if marked {
        format!("{note} {}", super::less::MARK_NOTE)
    } else {
        note.to_string()
    }
}

/// The files table for the terminal: rates, mean create and read times, space and inodes.
fn brief(records: &[&Record]) -> Option<Section> {
    let per = files_by_target(records);
    if per.is_empty() {
        return None;
    }
    let rows = per
        .iter()
        .map(|(t, w, rd)| {
            vec![
                name(t, w, rd),
                opt(mean_of(w, metric::FILES_PER_SEC), &format_count),
                opt(mean_of(rd, metric::FILES_PER_SEC), &format_count),
                opt(mean_of(w, "create_mean_ns"), &format_ns),
                opt(mean_of(rd, "read_mean_ns"), &format_ns),
                opt(mean_of(w, metric::SPACE_USED_BYTES), &|b| {
                    format_bytes(b as u64)
                }),
                opt(mean_of(w, metric::SPACE_OVERHEAD_PCT), &|p| {
                    format!("{p:.1}%")
                }),
                inodes(w),
            ]
        })
        .collect();
    Some(Section {
        title: "Many small files".into(),
        shown: Shown::SHORT,
        body: Body::Table(Grid::new(
            [
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
            note_for(
                &per,
                "Means over repeats; every column (the billion-files study's) in report.md.",
            ),
        )),
    })
}

/// The billion-files study's table: per target, the write and read phases with per-file operation times
/// (min / mean / max), files/s, bytes, blocks, space used, overhead and inodes.
fn table(records: &[&Record]) -> Option<Section> {
    let per = files_by_target(records);
    if per.is_empty() {
        return None;
    }
    let mut rows = Vec::new();
    for (t, w, rd) in &per {
        let (t, w, rd) = (*t, w.as_slice(), rd.as_slice());
        rows.push(vec![
            name(t, w, rd),
            min_avg_max(w, "create"),
            min_avg_max(w, "write"),
            min_avg_max(rd, "open"),
            min_avg_max(rd, "read"),
            opt(mean_of(w, metric::FILES_PER_SEC), &format_count),
            opt(mean_of(rd, metric::FILES_PER_SEC), &format_count),
            opt(mean_of(w, "bytes"), &|b| format_bytes(b as u64)),
            opt(mean_of(w, metric::BLOCKS_USED), &format_count),
            opt(mean_of(w, metric::SPACE_USED_BYTES), &|b| {
                format_bytes(b as u64)
            }),
            opt(mean_of(w, metric::SPACE_OVERHEAD_PCT), &|p| {
                format!("{p:.1}%")
            }),
            inodes(w),
        ]);
    }
    Some(Section {
        title: "Many small files (the billion-files study's columns)".into(),
        shown: Shown::DETAIL,
        body: Body::Table(Grid::new(
            [
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
            note_for(
                &per,
                "Means over repeats; overhead = (space used - bytes written) / space used.",
            ),
        )),
    })
}
