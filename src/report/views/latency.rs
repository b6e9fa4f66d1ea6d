//! Completion latency percentiles per test and target (means over repeats), from the statistics
//! rows of every workload that records them. Claims no records. Pure.

use crate::metrics::name as metric;
use crate::report::records::test_name;
use crate::report::summary::{fmt_value, Row};
use crate::report::view::{Body, Grid, Section, Shown, Study, WorkloadView};
use crate::store::Record;

pub(crate) struct Latency;

impl WorkloadView for Latency {
    fn claims(&self, _workload: &str) -> bool {
        false
    }

    fn sections(&self, _mine: &[&Record], study: &Study) -> Vec<Section> {
        table(study.rows)
            .map(|g| Section {
                title: "Completion latency".into(),
                shown: Shown::DETAIL,
                body: Body::Table(g),
            })
            .into_iter()
            .collect()
    }
}

fn table(rows: &[Row]) -> Option<Grid> {
    let pcts = [
        "lat_p50_ns",
        "lat_p90_ns",
        metric::LAT_P99_NS,
        "lat_p999_ns",
        "lat_max_ns",
    ];
    let mut out = Vec::new();
    let mut seen: Vec<(&str, &str, &str)> = Vec::new();
    for r in rows.iter().filter(|r| r.metric == "lat_p50_ns") {
        let k = (r.workload.as_str(), r.test.as_str(), r.target.as_str());
        if seen.contains(&k) {
            continue;
        }
        seen.push(k);
        let mut line = vec![test_name(&r.workload, &r.test), r.target.clone()];
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
    let header = ["test", "target", "p50", "p90", "p99", "p99.9", "max"]
        .map(String::from)
        .to_vec();
    Some(Grid::new(header, out, ""))
}
