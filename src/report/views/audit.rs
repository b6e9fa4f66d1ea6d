//! The integrity audit's table: rows are the targets (with their options), columns what happened
//! to the damaged files (data case), to the files of the damaged directory, and what the
//! filesystem's checker said. Pure.

use crate::metrics::name as metric;
use crate::report::records::targets;
use crate::report::view::{Body, Grid, Section, Shown, Statistics, Study, WorkloadView};
use crate::store::{Outcome, Record};

/// The workload name of the audit's records (`fsbench audit`).
pub(crate) const NAME: &str = "audit";

/// The corruption table, then the fsync table.
pub(crate) struct Audit;

impl WorkloadView for Audit {
    fn claims(&self, workload: &str) -> bool {
        workload == NAME
    }

    /// Verdicts, not measurements.
    fn statistics(&self) -> Statistics {
        Statistics::None
    }

    fn sections(&self, mine: &[&Record], _study: &Study) -> Vec<Section> {
        [view(mine), fsync_view(mine)]
            .into_iter()
            .flatten()
            .collect()
    }
}

/// A table shown everywhere.
fn brief(title: &str, header: &[&str], rows: Vec<Vec<String>>, note: &str) -> Section {
    Section {
        title: title.into(),
        shown: Shown::BRIEF,
        body: Body::Table(Grid::new(
            header.iter().map(|s| s.to_string()).collect(),
            rows,
            note,
        )),
    }
}

fn n(r: Option<&&Record>, k: &str) -> String {
    match r {
        Some(r) if r.outcome == Outcome::Ok => r
            .metrics
            .get(k)
            .map(|v| format!("{v:.0}"))
            .unwrap_or_else(|| "-".into()),
        Some(r) if r.outcome == Outcome::Skipped => "n/a".into(),
        Some(_) => "failed".into(),
        None => "-".into(),
    }
}

/// The audit's table, if the study has audit records.
fn view(records: &[&Record]) -> Option<Section> {
    let audit: Vec<&Record> = records
        .iter()
        .copied()
        .filter(|r| r.test != "fsync")
        .collect();
    if audit.is_empty() {
        return None;
    }
    let rows = targets(audit.iter().map(|r| r.target.as_str()))
        .iter()
        .map(|t| {
            let of = |test: &str| audit.iter().rfind(|r| r.target == *t && r.test == test);
            let (d, m, c) = (of("data"), of("directory"), of("checker"));
            let checker = match c {
                Some(r) if r.outcome == Outcome::Ok => {
                    let found = r.metrics.get("problems").copied().unwrap_or(0.0);
                    let tool = r
                        .notes
                        .first()
                        .and_then(|s| s.split(':').next())
                        .unwrap_or("checker");
                    if found > 0.0 {
                        format!("{tool}: found ({found:.0})")
                    } else {
                        format!("{tool}: clean")
                    }
                }
                Some(r) => format!("failed: {}", r.error.as_deref().unwrap_or("")),
                None => "-".into(),
            };
            vec![
                t.to_string(),
                n(d, "damaged"),
                n(d, metric::DETECTED_BY_FS),
                n(d, "silent"),
                n(d, "repaired"),
                n(d, "unnoticed"),
                n(d, "lost"),
                n(m, metric::DETECTED_BY_FS),
                n(m, "silent"),
                n(m, "lost"),
                n(m, "intact"),
                checker,
            ]
        })
        .collect();
    let header = [
        "target",
        "damaged files",
        "detected",
        "silent",
        "repaired",
        "unnoticed",
        "lost",
        "dir: detected",
        "dir: silent",
        "dir: lost",
        "dir: intact",
        "checker afterwards",
    ];
    Some(brief(
        "Integrity audit: what reading damaged data back gave",
        &header,
        rows,
        "Data: one copy of every other file's data had 16 bytes flipped in the image; each \
               damaged file read back is detected (the filesystem returned EIO, EBADMSG or EUCLEAN), \
               silent (wrong data returned; fsbench's trailer caught it), repaired (right data and \
               a repair logged), unnoticed (right data, no repair logged: an intact copy was read) \
               or lost. Directory: a block of a directory's entries was damaged (400 small files); \
               its files are counted the same way, intact when they still read back right. \
               n/a: not located on this filesystem.",
    ))
}

/// What an fsync record's errno metric says: the errno's name, "0" for success.
fn said(r: &Record, k: &str) -> String {
    match r.metrics.get(k) {
        Some(v) if *v == 0.0 => "0".into(),
        Some(v) => crate::io::failure::errno_name(*v as i32),
        None => "-".into(),
    }
}

/// Which of the read classes (`cached_*`, `device_*`) a record has.
fn seen(r: &Record, prefix: &str) -> String {
    // The classes of audit::fsync::Seen, by name (the report does not import the audit).
    ["new", "old", "mixed", "other", "failed"]
        .iter()
        .find(|s| r.metrics.get(&format!("{prefix}_{s}")) == Some(&1.0))
        .map(|s| s.to_string())
        .unwrap_or_else(|| "-".into())
}

/// The fsync-failure table ("fsyncgate"), if the study has fsync records.
fn fsync_view(records: &[&Record]) -> Option<Section> {
    let rows: Vec<Vec<String>> = records
        .iter()
        .filter(|r| r.test == "fsync")
        .map(|r| match r.outcome {
            Outcome::Ok => {
                let blocked = r.metrics.get(metric::FIRST_FSYNC_BLOCKED) == Some(&1.0);
                vec![
                    r.target.clone(),
                    if blocked {
                        format!(
                            "blocked until healed, then {}",
                            said(r, metric::FIRST_FSYNC_ERRNO)
                        )
                    } else {
                        said(r, metric::FIRST_FSYNC_ERRNO)
                    },
                    said(r, metric::RETRY_FSYNC_ERRNO),
                    seen(r, "cached"),
                    seen(r, "device"),
                    match (
                        r.metrics.get(metric::READ_ONLY_AFTER) == Some(&1.0),
                        r.metrics.get(metric::MOUNTS_AGAIN) == Some(&1.0),
                    ) {
                        (_, false) => "does not mount".into(),
                        (true, true) => "went read-only; mounts".into(),
                        (false, true) => "stayed writable; mounts".into(),
                    },
                ]
            }
            Outcome::Skipped => {
                let mut row = vec![r.target.clone()];
                row.extend(std::iter::repeat_n("n/a".to_string(), 5));
                row
            }
            Outcome::Failed => {
                let mut row = vec![r.target.clone()];
                row.push(format!("failed: {}", r.error.as_deref().unwrap_or("")));
                row.extend(std::iter::repeat_n("-".to_string(), 4));
                row
            }
        })
        .collect();
    if rows.is_empty() {
        return None;
    }
    let header = [
        "target",
        "fsync, disk failing",
        "fsync again, disk healed",
        "read (page cache)",
        "read after remount",
        "filesystem afterwards",
    ];
    Some(brief(
        "fsync failure: a flush that fails, then retried (\"fsyncgate\")",
        &header,
        rows,
        "A 1 MiB file was written and fsynced (old data), overwritten in the page cache \
               (new data); then fsbench's fault device failed every write and flush, fsync was \
               called, the device healed, fsync was called again, the file was read through the \
               cache and again after unmount and mount. A second fsync of 0 after an EIO means \
               the kernel dropped the error: an application that retries believes its data is \
               durable. \"old\" after remount with \"new\" in the cache is data lost silently \
               to anyone who did not keep the first error.",
    ))
}
