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

use crate::metrics::name as metric;
use Better::{Lower, Neither};
use Unit::*;

/// The headline metric of a test, in this order: IOPS for block jobs, files/s for files, else
/// bytes/s.
pub const HEADLINES: &[&str] = &[
    "iops",
    metric::FILES_PER_SEC,
    metric::SEEKS_PER_SEC,
    metric::BYTES_PER_SEC,
];

/// What the phase frame adds to every record (CPU, device, first done / last done).
pub static FRAME: &[MetricDef] = &[
    m(metric::CPU_USER_PCT, Percent, Lower),
    m(metric::CPU_SYS_PCT, Percent, Lower),
    m(metric::SYSTEM_CPU_USER_PCT, Percent, Lower),
    m(metric::SYSTEM_CPU_SYS_PCT, Percent, Lower),
    m(metric::SYSTEM_CPU_IOWAIT_PCT, Percent, Neither),
    m(metric::DEVICE_WRITE_BYTES, Bytes, Lower),
    m(metric::DEVICE_READ_BYTES, Bytes, Neither),
    m(metric::WRITE_AMPLIFICATION, Ratio, Lower),
    m(metric::FIRST_DONE_S, Seconds, Neither),
    m(metric::FIRST_DONE_OPS, Count, Neither),
    m(metric::FIRST_DONE_OPS_PER_SEC, OpsPerSec, Better::Higher),
    m(
        metric::FIRST_DONE_BYTES_PER_SEC,
        BytesPerSec,
        Better::Higher,
    ),
    m(metric::LAST_DONE_S, Seconds, Neither),
    m("ranks", Count, Neither),
    m(metric::RANK_OPS_PER_SEC_MIN, OpsPerSec, Better::Higher),
    m(metric::RANK_OPS_PER_SEC_MAX, OpsPerSec, Neither),
    m(metric::RANK_OPS_PER_SEC_MEAN, OpsPerSec, Better::Higher),
    m(metric::RANK_BYTES_PER_SEC_MIN, BytesPerSec, Better::Higher),
    m(metric::RANK_BYTES_PER_SEC_MAX, BytesPerSec, Neither),
    m(metric::RANK_BYTES_PER_SEC_MEAN, BytesPerSec, Better::Higher),
    m(metric::RANK_SPREAD_PCT, Percent, Lower),
];

/// What `*` stands for in a latency family.
pub const PERCENTILES: &[&str] = &["min", "mean", "p50", "p90", "p99", "p999", "max"];

/// The names a metric may be written by where a person names one (`tune --metric`, `--slo`):
/// itself, or without its unit's suffix (`lat_p99` for `lat_p99_ns`, `space_overhead` for
/// `space_overhead_pct`), in the order they are tried.
pub fn spellings(name: &str) -> [String; 4] {
    [
        name.to_string(),
        format!("{name}_ns"),
        format!("{name}_pct"),
        format!("{name}_bytes"),
    ]
}

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
