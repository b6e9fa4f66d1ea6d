//! The one table of metrics: the phase frame's and every workload's (each lists its own in its
//! `WorkloadDef`), with the workloads that emit each. The report, the HTML charts, `fsbench list`
//! and docs/results-schema.md read it; tests check that records carry only metrics listed here
//! and that the document names them all.

use std::sync::OnceLock;

use super::WORKLOADS;
use crate::metrics::catalog::{matches, MetricDef, FRAME};

/// A metric and who emits it (`frame` for the phase frame's own).
#[derive(Debug, Clone, serde::Serialize)]
pub struct Entry {
    #[serde(flatten)]
    pub def: MetricDef,
    pub by: Vec<&'static str>,
}

/// Every metric once, in order: the frame's, then each workload's in table order. Built once:
/// the report looks metrics up for every figure it prints.
pub fn all() -> &'static [Entry] {
    static ALL: OnceLock<Vec<Entry>> = OnceLock::new();
    ALL.get_or_init(build)
}

fn build() -> Vec<Entry> {
    let mut out: Vec<Entry> = FRAME
        .iter()
        .map(|d| Entry {
            def: *d,
            by: vec!["frame"],
        })
        .collect();
    for w in WORKLOADS {
        for d in w.metrics {
            match out.iter_mut().find(|e| e.def.name == d.name) {
                Some(e) => {
                    e.by.push(w.name);
                    e.def.key |= d.key;
                }
                None => out.push(Entry {
                    def: *d,
                    by: vec![w.name],
                }),
            }
        }
    }
    // Key metrics first, in the order the workloads list them.
    out.sort_by_key(|e| !e.def.key);
    out
}

/// The catalog entry of a metric name (exact names first, then families such as `lat_*_ns`).
pub fn find(name: &str) -> Option<MetricDef> {
    let all = all();
    all.iter()
        .find(|e| e.def.name == name)
        .or_else(|| all.iter().find(|e| matches(e.def.name, name)))
        .map(|e| e.def)
}

/// The metric a person named (`tune --metric lat_p99`, `--slo`), by `spellings`: its catalogue
/// name and entry.
pub fn named(name: &str) -> Option<(String, MetricDef)> {
    crate::metrics::catalog::spellings(name)
        .into_iter()
        .find_map(|c| find(&c).map(|d| (c, d)))
}

/// Whether the records of a workload (or block preset) of this name can carry `metric`: the
/// phase frame's own, or one its table entry lists.
pub fn emits(workload: &str, metric: &str) -> bool {
    FRAME.iter().any(|d| matches(d.name, metric))
        || super::def_of(workload)
            .is_some_and(|w| w.metrics.iter().any(|d| matches(d.name, metric)))
}

/// What a workload (or block preset) of this name measures, its key metrics first (a message's
/// list).
pub fn measured_by(workload: &str) -> Vec<&'static str> {
    let Some(w) = super::def_of(workload) else {
        return Vec::new();
    };
    let key = w.metrics.iter().filter(|d| d.key);
    key.chain(w.metrics.iter().filter(|d| !d.key))
        .map(|d| d.name)
        .collect()
}

/// The key metrics, in the table's order.
pub fn key_metrics() -> impl Iterator<Item = &'static str> {
    all().iter().filter(|e| e.def.key).map(|e| e.def.name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::catalog::Unit;

    #[test]
    fn every_compound_name_has_its_constant_and_every_constant_is_in_the_catalogue() {
        let compound: Vec<&str> = all()
            .iter()
            .map(|e| e.def.name)
            .filter(|n| n.contains('_') && !n.contains('*'))
            .collect();
        for n in &compound {
            assert!(
                crate::metrics::name::ALL.contains(n),
                "{n}: add `pub const {}: &str = \"{n}\";` to src/metrics/name.rs",
                n.to_uppercase()
            );
        }
        for n in crate::metrics::name::ALL {
            assert!(
                compound.contains(n),
                "{n} is in metrics/name.rs but no catalogue lists it"
            );
        }
    }

    #[test]
    fn names_and_families_are_found() {
        assert_eq!(find("iops").unwrap().unit, Unit::OpsPerSec);
        assert_eq!(find("lat_p99_ns").unwrap().name, "lat_p99_ns");
        assert_eq!(find("lat_p999_ns").unwrap().name, "lat_*_ns");
        assert_eq!(find("read_lat_max_ns").unwrap().name, "read_lat_*_ns");
        assert_eq!(find("create_p50_ns").unwrap().name, "create_*_ns");
        assert_eq!(find("cpu_user_pct").unwrap().name, "cpu_user_pct");
        assert!(find("lat_p42_ns").is_none());
        assert!(find("nonsense").is_none());
        let mut keys: Vec<&str> = key_metrics().collect();
        keys.sort_unstable();
        assert_eq!(
            keys,
            [
                "bytes_per_sec",
                "files_per_sec",
                "io500_score",
                "io500_value",
                "iops",
                "lat_p99_ns",
                "ops_per_sec",
                "post_pre_ratio",
                "seeks_per_sec",
                "space_overhead_pct"
            ]
        );
        let all = all();
        let bps = all.iter().find(|e| e.def.name == "bytes_per_sec").unwrap();
        assert_eq!(
            bps.by,
            ["smoke", "block", "fio", "files", "bonnie", "iozone", "ior"]
        );
    }

    #[test]
    fn every_metric_is_documented_in_the_results_schema() {
        let doc = include_str!("../../docs/results-schema.md");
        for e in all() {
            assert!(
                doc.contains(&format!("`{}`", e.def.name)),
                "docs/results-schema.md does not list `{}`",
                e.def.name
            );
        }
    }
}
