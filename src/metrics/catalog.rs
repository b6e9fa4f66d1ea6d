//! Every metric a record can carry, in one table: its unit, which direction is better, and the
//! workloads that emit it. The report (key metrics, formatting, ratios), the HTML charts,
//! `fsbench list` and docs/results-schema.md all read it; a test checks that the records the
//! workloads write carry only metrics listed here and that the document lists them all.

/// What a metric counts, and how it prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    Bytes,
    BytesPerSec,
    /// Operations per second (IOPS, files/s).
    OpsPerSec,
    Count,
    Nanoseconds,
    Seconds,
    Percent,
    /// A plain ratio (write amplification) or flag (1 = yes).
    Ratio,
}

impl Unit {
    pub fn symbol(self) -> &'static str {
        match self {
            Unit::Bytes => "B",
            Unit::BytesPerSec => "MB/s",
            Unit::OpsPerSec => "/s",
            Unit::Count => "",
            Unit::Nanoseconds => "ns",
            Unit::Seconds => "s",
            Unit::Percent => "%",
            Unit::Ratio => "x",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Better {
    Higher,
    Lower,
    /// A setting or a count that is neither good nor bad (iodepth, files written).
    Neither,
}

#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct MetricDef {
    /// The name in records; one `*` stands for a family (`lat_*_ns`: lat_p99_ns, ...).
    pub name: &'static str,
    pub unit: Unit,
    pub better: Better,
    /// Workloads that emit it (`frame`: every workload, from the phase frame).
    pub by: &'static [&'static str],
    /// Shown in the terminal and Markdown statistics and the noisy warnings.
    pub key: bool,
}

const BLOCK: &[&str] = &["block", "fio", "presets"];
const FILES: &[&str] = &["files"];
const SMOKE: &[&str] = &["smoke"];
const FRAME: &[&str] = &["frame"];
const BLOCK_FILES_SMOKE: &[&str] = &["block", "fio", "presets", "files", "smoke"];

const fn m(
    name: &'static str,
    unit: Unit,
    better: Better,
    by: &'static [&'static str],
) -> MetricDef {
    MetricDef {
        name,
        unit,
        better,
        by,
        key: false,
    }
}

const fn key(
    name: &'static str,
    unit: Unit,
    better: Better,
    by: &'static [&'static str],
) -> MetricDef {
    MetricDef {
        name,
        unit,
        better,
        by,
        key: true,
    }
}

use Better::{Higher, Lower, Neither};
use Unit::*;

/// The headline metric of a test, in this order: IOPS for block jobs, files/s for files, else
/// bytes/s.
pub const HEADLINES: &[&str] = &["iops", "files_per_sec", "bytes_per_sec"];

pub static METRICS: &[MetricDef] = &[
    key("iops", OpsPerSec, Higher, BLOCK),
    key("bytes_per_sec", BytesPerSec, Higher, BLOCK_FILES_SMOKE),
    key("lat_p99_ns", Nanoseconds, Lower, BLOCK),
    key("files_per_sec", OpsPerSec, Higher, FILES),
    key("space_overhead_pct", Percent, Lower, FILES),
    m("lat_*_ns", Nanoseconds, Lower, BLOCK),
    m("read_lat_*_ns", Nanoseconds, Lower, BLOCK),
    m("write_lat_*_ns", Nanoseconds, Lower, BLOCK),
    m("ios", Count, Neither, BLOCK),
    m("bytes", Bytes, Neither, BLOCK_FILES_SMOKE),
    m("runtime_s", Seconds, Neither, BLOCK),
    m("read_ios", Count, Neither, BLOCK),
    m("write_ios", Count, Neither, BLOCK),
    m("read_bytes", Bytes, Neither, BLOCK),
    m("write_bytes", Bytes, Neither, BLOCK),
    m("read_iops", OpsPerSec, Higher, BLOCK),
    m("write_iops", OpsPerSec, Higher, BLOCK),
    m("read_bytes_per_sec", BytesPerSec, Higher, BLOCK),
    m("write_bytes_per_sec", BytesPerSec, Higher, BLOCK),
    m("iodepth", Count, Neither, BLOCK),
    m("numjobs", Count, Neither, BLOCK),
    m("cpu_user_ns_per_io", Nanoseconds, Lower, BLOCK),
    m("cpu_user_pct", Percent, Lower, FRAME),
    m("cpu_sys_pct", Percent, Lower, FRAME),
    m("system_cpu_user_pct", Percent, Lower, FRAME),
    m("system_cpu_sys_pct", Percent, Lower, FRAME),
    m("system_cpu_iowait_pct", Percent, Neither, FRAME),
    m("device_write_bytes", Bytes, Lower, FRAME),
    m("device_read_bytes", Bytes, Neither, FRAME),
    m("write_amplification", Ratio, Lower, FRAME),
    m("first_done_s", Seconds, Neither, FRAME),
    m("first_done_ops", Count, Neither, FRAME),
    m("first_done_ops_per_sec", OpsPerSec, Higher, FRAME),
    m("first_done_bytes_per_sec", BytesPerSec, Higher, FRAME),
    m("last_done_s", Seconds, Neither, FRAME),
    m("fsync_ns", Nanoseconds, Lower, SMOKE),
    m("space_used_bytes", Bytes, Lower, &["smoke", "files"]),
    m("verified_bytes", Bytes, Neither, SMOKE),
    m("files", Count, Neither, FILES),
    m("files_total", Count, Neither, FILES),
    m("threads", Count, Neither, FILES),
    m("end_fsync_ns", Nanoseconds, Lower, FILES),
    m("blocks_used", Count, Lower, FILES),
    m("block_size", Bytes, Neither, FILES),
    m("blocks_per_sec", OpsPerSec, Higher, FILES),
    m("inodes_used", Count, Lower, FILES),
    m("exhausted_inodes", Ratio, Neither, FILES),
    m("exhausted_space", Ratio, Neither, FILES),
    m("peak_rss_bytes", Bytes, Lower, FILES),
    m("outside_syscalls_pct", Percent, Lower, FILES),
    m("integrity_ok", Count, Neither, FILES),
    m("crc_mismatch", Count, Lower, FILES),
    m("wrong_identity", Count, Lower, FILES),
    m("wrong_size", Count, Lower, FILES),
    m("missing", Count, Lower, FILES),
    m("fs_detected", Count, Lower, FILES),
    m("space_freed_bytes", Bytes, Neither, FILES),
    m("mkdir_*_ns", Nanoseconds, Lower, FILES),
    m("create_*_ns", Nanoseconds, Lower, FILES),
    m("write_*_ns", Nanoseconds, Lower, FILES),
    m("close_*_ns", Nanoseconds, Lower, FILES),
    m("fsync_*_ns", Nanoseconds, Lower, FILES),
    m("open_*_ns", Nanoseconds, Lower, FILES),
    m("read_*_ns", Nanoseconds, Lower, FILES),
    m("stat_*_ns", Nanoseconds, Lower, FILES),
    m("unlink_*_ns", Nanoseconds, Lower, FILES),
    m("rmdir_*_ns", Nanoseconds, Lower, FILES),
];

/// What `*` stands for in a latency family.
pub const PERCENTILES: &[&str] = &["min", "mean", "p50", "p90", "p99", "p999", "max"];

fn matches(pattern: &str, name: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == name,
        Some((pre, post)) => name
            .strip_prefix(pre)
            .and_then(|r| r.strip_suffix(post))
            .is_some_and(|mid| PERCENTILES.contains(&mid)),
    }
}

/// The catalog entry of a metric name (exact names first, then families).
pub fn find(name: &str) -> Option<&'static MetricDef> {
    METRICS
        .iter()
        .find(|d| d.name == name)
        .or_else(|| METRICS.iter().find(|d| matches(d.name, name)))
}

/// The key metrics, in the table's order.
pub fn key_metrics() -> impl Iterator<Item = &'static str> {
    METRICS.iter().filter(|d| d.key).map(|d| d.name)
}

/// True when smaller values are better (latencies, overheads), so ratios read the other way.
pub fn lower_is_better(name: &str) -> bool {
    find(name).is_some_and(|d| d.better == Better::Lower)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_families_are_found() {
        assert_eq!(find("iops").unwrap().unit, OpsPerSec);
        assert_eq!(find("lat_p99_ns").unwrap().name, "lat_p99_ns");
        assert_eq!(find("lat_p999_ns").unwrap().name, "lat_*_ns");
        assert_eq!(find("read_lat_max_ns").unwrap().name, "read_lat_*_ns");
        assert_eq!(find("create_p50_ns").unwrap().name, "create_*_ns");
        assert!(find("lat_p42_ns").is_none());
        assert!(find("nonsense").is_none());
        assert!(lower_is_better("lat_p50_ns") && !lower_is_better("iops"));
        assert_eq!(
            key_metrics().collect::<Vec<_>>(),
            [
                "iops",
                "bytes_per_sec",
                "lat_p99_ns",
                "files_per_sec",
                "space_overhead_pct"
            ]
        );
    }

    #[test]
    fn every_metric_is_documented_in_the_results_schema() {
        let doc = include_str!("../../docs/results-schema.md");
        for d in METRICS {
            assert!(
                doc.contains(&format!("`{}`", d.name)),
                "docs/results-schema.md does not list `{}`",
                d.name
            );
        }
    }
}
