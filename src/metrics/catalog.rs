//! How metrics are described: unit, better direction, key or not. The phase frame's own metrics
//! are listed here (`FRAME`); each workload lists its own in its `WorkloadDef`, and
//! `workload::catalog` joins them into the one table that the report, the HTML charts,
//! `fsbench list` and docs/results-schema.md read.

/// What a metric counts, and how it prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    Bytes,
    BytesPerSec,
    /// KiB (1024 bytes) per second, as bonnie++ and iozone report.
    KibPerSec,
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
            Unit::KibPerSec => "KiB/s",
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
    /// Shown in the terminal and Markdown statistics and the noisy warnings.
    pub key: bool,
}

/// A metric (for the tables of metrics).
pub const fn m(name: &'static str, unit: Unit, better: Better) -> MetricDef {
    MetricDef {
        name,
        unit,
        better,
        key: false,
    }
}

/// A key metric: shown in the terminal and Markdown statistics.
pub const fn key(name: &'static str, unit: Unit, better: Better) -> MetricDef {
    MetricDef {
        name,
        unit,
        better,
        key: true,
    }
}

use Better::{Lower, Neither};
use Unit::*;

/// The headline metric of a test, in this order: IOPS for block jobs, files/s for files, else
/// bytes/s.
pub const HEADLINES: &[&str] = &["iops", "files_per_sec", "seeks_per_sec", "bytes_per_sec"];

/// What the phase frame adds to every record (CPU, device, first done / last done).
pub static FRAME: &[MetricDef] = &[
    m("cpu_user_pct", Percent, Lower),
    m("cpu_sys_pct", Percent, Lower),
    m("system_cpu_user_pct", Percent, Lower),
    m("system_cpu_sys_pct", Percent, Lower),
    m("system_cpu_iowait_pct", Percent, Neither),
    m("device_write_bytes", Bytes, Lower),
    m("device_read_bytes", Bytes, Neither),
    m("write_amplification", Ratio, Lower),
    m("first_done_s", Seconds, Neither),
    m("first_done_ops", Count, Neither),
    m("first_done_ops_per_sec", OpsPerSec, Better::Higher),
    m("first_done_bytes_per_sec", BytesPerSec, Better::Higher),
    m("last_done_s", Seconds, Neither),
    m("ranks", Count, Neither),
    m("rank_ops_per_sec_min", OpsPerSec, Better::Higher),
    m("rank_ops_per_sec_max", OpsPerSec, Neither),
    m("rank_ops_per_sec_mean", OpsPerSec, Better::Higher),
    m("rank_bytes_per_sec_min", BytesPerSec, Better::Higher),
    m("rank_bytes_per_sec_max", BytesPerSec, Neither),
    m("rank_bytes_per_sec_mean", BytesPerSec, Better::Higher),
    m("rank_spread_pct", Percent, Lower),
];

/// What `*` stands for in a latency family.
pub const PERCENTILES: &[&str] = &["min", "mean", "p50", "p90", "p99", "p999", "max"];

/// Whether a catalog name (`lat_*_ns` stands for every percentile) names `name`.
pub fn matches(pattern: &str, name: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == name,
        Some((pre, post)) => name
            .strip_prefix(pre)
            .and_then(|r| r.strip_suffix(post))
            .is_some_and(|mid| PERCENTILES.contains(&mid)),
    }
}
