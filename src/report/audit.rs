//! The integrity audit's table: rows are the targets (with their options), columns what happened
//! to the damaged files (data case), to the files of the damaged directory, and what the
//! filesystem's checker said. Pure.

use super::views::View;
use crate::store::{Outcome, Record};

pub const NAME: &str = "audit";

pub fn is_audit(r: &Record) -> bool {
    r.workload_name() == NAME
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
pub fn view(records: &[Record]) -> Option<View> {
    let audit: Vec<&Record> = records.iter().filter(|r| is_audit(r)).collect();
    if audit.is_empty() {
        return None;
    }
    let mut targets: Vec<&str> = Vec::new();
    for r in &audit {
        if !targets.contains(&r.target.as_str()) {
            targets.push(&r.target);
        }
    }
    let rows = targets
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
                n(d, "detected_by_fs"),
                n(d, "silent"),
                n(d, "repaired"),
                n(d, "unnoticed"),
                n(d, "lost"),
                n(m, "detected_by_fs"),
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
    Some(View {
        title: "Integrity audit: what reading damaged data back gave".into(),
        header: header.iter().map(|s| s.to_string()).collect(),
        rows,
        note: "Data: one copy of every other file's data had 16 bytes flipped in the image; each \
               damaged file read back is detected (the filesystem returned EIO, EBADMSG or EUCLEAN), \
               silent (wrong data returned; fsbench's trailer caught it), repaired (right data and \
               a repair logged), unnoticed (right data, no repair logged: an intact copy was read) \
               or lost. Directory: a block of a directory's entries was damaged (400 small files); \
               its files are counted the same way, intact when they still read back right. \
               n/a: not located on this filesystem."
            .into(),
        brief: true,
    })
}
