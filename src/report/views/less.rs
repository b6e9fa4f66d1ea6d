//! "Did less than asked": the records whose work was cut short (the filesystem ran out of inodes
//! or space, the phase was stopped, a rate was not reached), the first thing the report says.
//! Their figures are rates over less work than the others did, so every table that shows them
//! marks them (`MARK`) and the ratio matrix says the work differs; the warnings say what to
//! change. Claims no records: it reads every record's notes. Pure.

use crate::report::view::{Body, Grid, Place, Section, Shown, Study, WorkloadView};
use crate::store::note::{self, Kind};
use crate::store::{Outcome, Record};

/// The mark beside a figure of a record that did less work than asked.
pub(crate) const MARK: &str = "!";

/// The line under a table whose figures may carry the mark.
pub(crate) const MARK_NOTE: &str =
    "! did less work than asked (see \"Did less than asked\"): not the same work as the others, so not comparable.";

pub(crate) struct Less;

impl WorkloadView for Less {
    fn claims(&self, _workload: &str) -> bool {
        false
    }

    fn place(&self) -> Place {
        Place::First
    }

    fn sections(&self, _mine: &[&Record], study: &Study) -> Vec<Section> {
        let rows: Vec<Vec<String>> = cut(study.records)
            .into_iter()
            .map(|(r, n)| {
                vec![
                    r.target.clone(),
                    crate::report::records::test_name(&r.workload, &r.test),
                    format!("{}", r.repeat + 1),
                    note::text(n).to_string(),
                    fix(n),
                ]
            })
            .collect();
        if rows.is_empty() {
            return Vec::new();
        }
        let header = [
            "target",
            "test",
            "repeat",
            "what happened",
            "to do all of it",
        ];
        vec![Section {
            title: "Did less than asked".into(),
            shown: Shown::BRIEF,
            body: Body::Table(Grid {
                header: header.map(String::from).to_vec(),
                rows,
                note: Some(format!(
                    "Rates of these records cover less work than the others': they are marked {MARK} wherever they appear and are not comparable."
                )),
                right: vec![2],
                spare: Vec::new(),
            }),
        }]
    }
}

/// The ok records that did less than asked, with the note that says so.
pub(crate) fn cut(records: &[Record]) -> Vec<(&Record, &str)> {
    records
        .iter()
        .filter(|r| r.outcome == Outcome::Ok)
        .filter_map(|r| r.less_work().map(|n| (r, n)))
        .collect()
}

/// What to change so the record does all its work.
pub(crate) fn fix(n: &str) -> String {
    match note::kind(n) {
        Kind::Exhausted if n.contains("inodes") => {
            "more inodes: a larger --size, or ext4:inodes=N (xfs and btrfs allocate inodes as they need them)".into()
        }
        Kind::Exhausted => "more space: a larger --size, or fewer or smaller files".into(),
        Kind::Interrupted => "run it again: fsbench compare --resume DIR measures it anew".into(),
        _ => "ask for less (a lower rate), or give the phase longer (--runtime)".into(),
    }
}

/// The records that did less as JSON, or None when every record did all its work.
pub(crate) fn json(records: &[Record]) -> Option<serde_json::Value> {
    let list: Vec<serde_json::Value> = cut(records)
        .into_iter()
        .map(|(r, n)| {
            serde_json::json!({
                "target": r.target, "workload": r.workload, "test": r.test,
                "repeat": r.repeat, "kind": note::kind(n).prefix(),
                "note": note::text(n), "fix": fix(n),
            })
        })
        .collect();
    (!list.is_empty()).then_some(serde_json::Value::Array(list))
}
