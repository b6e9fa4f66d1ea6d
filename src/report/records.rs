//! What the views read off records, the same way everywhere: the targets in order, a test's
//! name, a metric's mean over repeats.

use crate::store::Record;

/// The targets of some items in the order they first appear: the one order every table, chart
/// and column follows.
pub(crate) fn targets<'a>(labels: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    for l in labels {
        if !out.contains(&l) {
            out.push(l);
        }
    }
    out
}

/// The mean of a metric over records (repeats), None when none has it.
pub(crate) fn mean_of(records: &[&Record], key: &str) -> Option<f64> {
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

/// A test as the tables name it: "SEQ1M_Q8T1-read" alone when the workload is the test, else
/// "cdm SEQ1M_Q8T1-read".
pub(crate) fn test_name(workload: &str, test: &str) -> String {
    if workload == test {
        test.to_string()
    } else {
        format!("{workload} {test}")
    }
}
