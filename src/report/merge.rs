//! `fsbench report A B ...`: several studies as one (before and after a kernel upgrade, two
//! machines). A target label that more than one study uses is prefixed with its study's name
//! ("before/ext4"); labels only one study has stay as they are. Pure.

use super::records::targets;
use crate::store::Record;

/// One study to merge: its name (the directory's), records and manifest warnings.
pub(crate) struct Study {
    pub(crate) name: String,
    pub(crate) records: Vec<Record>,
    pub(crate) warnings: Vec<String>,
}

/// The studies' records as one list, labels made unique, and their warnings each marked with
/// its study. Study names that repeat get "#2", "#3".
pub(crate) fn merge(mut studies: Vec<Study>) -> (Vec<Record>, Vec<String>) {
    if studies.len() == 1 {
        let s = studies.remove(0);
        return (s.records, s.warnings);
    }
    let mut names: Vec<String> = Vec::new();
    for s in &studies {
        let mut n = s.name.clone();
        let mut k = 2;
        while names.contains(&n) {
            n = format!("{}#{k}", s.name);
            k += 1;
        }
        names.push(n);
    }
    let all: Vec<Vec<String>> = studies
        .iter()
        .map(|s| {
            targets(s.records.iter().map(|r| r.target.as_str()))
                .into_iter()
                .map(String::from)
                .collect()
        })
        .collect();
    let clashes = |label: &str| all.iter().filter(|l| l.iter().any(|x| x == label)).count() > 1;
    let mut records = Vec::new();
    let mut warnings = Vec::new();
    for (s, name) in studies.into_iter().zip(&names) {
        for mut r in s.records {
            if clashes(&r.target) {
                r.target = format!("{name}/{}", r.target);
            }
            records.push(r);
        }
        warnings.extend(s.warnings.into_iter().map(|w| format!("[{name}] {w}")));
    }
    (records, warnings)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(target: &str) -> Record {
        serde_json::from_value(serde_json::json!({
            "schema": 1, "target": target, "fs": "ext4", "workload": "smoke", "test": "write",
            "repeat": 0, "started_at": "", "duration_s": 1.0, "outcome": "ok",
            "metrics": {"bytes_per_sec": 1.0}
        }))
        .unwrap()
    }

    #[test]
    fn clashing_labels_get_their_study_name_and_others_stay() {
        let (r, w) = merge(vec![
            Study {
                name: "before".into(),
                records: vec![rec("ext4"), rec("xfs")],
                warnings: vec!["w".into()],
            },
            Study {
                name: "after".into(),
                records: vec![rec("ext4"), rec("btrfs")],
                warnings: Vec::new(),
            },
        ]);
        let labels: Vec<&str> = r.iter().map(|x| x.target.as_str()).collect();
        assert_eq!(labels, ["before/ext4", "xfs", "after/ext4", "btrfs"]);
        assert_eq!(w, ["[before] w"]);
    }

    #[test]
    fn studies_with_the_same_name_are_told_apart() {
        let s = |n: &str| Study {
            name: n.into(),
            records: vec![rec("ext4")],
            warnings: Vec::new(),
        };
        let (r, _) = merge(vec![s("study"), s("study")]);
        assert_eq!(r[0].target, "study/ext4");
        assert_eq!(r[1].target, "study#2/ext4");
    }
}
