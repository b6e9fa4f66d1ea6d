//! The feed as text: OpenMetrics 1.0 (`application/openmetrics-text`, what Prometheus asks for
//! first) or Prometheus's text format 0.0.4 (`text/plain`, what `curl` and `promtool check
//! metrics` read). The same families in both, named by the OpenMetrics conventions: units as
//! suffixes (`_seconds`, `_bytes`, `_ratio`), counters' samples ending in `_total`. They differ
//! where the formats do: OpenMetrics names a counter's family without `_total`, has `# UNIT`
//! lines and the `info` type, and ends with `# EOF`.

use std::fmt::Write as _;

use super::{Key, PhaseView, View, PERCENTILES};
use crate::metrics::limiter::Limit;
use crate::metrics::progress::{word, Count, WAYS};

/// Which text format a scrape gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    OpenMetrics,
    Prometheus,
}

impl Format {
    pub const fn content_type(self) -> &'static str {
        match self {
            Format::OpenMetrics => "application/openmetrics-text; version=1.0.0; charset=utf-8",
            Format::Prometheus => "text/plain; version=0.0.4; charset=utf-8",
        }
    }
}

/// A family's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Counter,
    Gauge,
    Info,
}

/// One metric family: its name as samples carry it, its type, its unit (a suffix of the name)
/// and its help.
pub(super) struct Family {
    pub(super) name: &'static str,
    kind: Kind,
    unit: Option<&'static str>,
    help: &'static str,
}

const INFO: Family = Family {
    name: "fsbench_info",
    kind: Kind::Info,
    unit: None,
    help: "The run: fsbench's build, the command, the study directory, the host and this process's rank.",
};
const OPERATIONS: Family = Family {
    name: "fsbench_operations_total",
    kind: Kind::Counter,
    unit: None,
    help: "Operations done over the run (I/Os and calls; files and bonnie++'s calls as direction other), by target, workload, test and direction.",
};
const BYTES: Family = Family {
    name: "fsbench_bytes_total",
    kind: Kind::Counter,
    unit: Some("bytes"),
    help: "Bytes moved over the run, by target, workload, test and direction.",
};
const IOPS: Family = Family {
    name: "fsbench_interval_operations_per_second",
    kind: Kind::Gauge,
    unit: None,
    help: "Operations per second over the running phase's last whole interval (--interval), by direction.",
};
const BANDWIDTH: Family = Family {
    name: "fsbench_interval_bytes_per_second",
    kind: Kind::Gauge,
    unit: None,
    help: "Bytes per second over the running phase's last whole interval, by direction.",
};
const LATENCY: Family = Family {
    name: "fsbench_interval_latency_seconds",
    kind: Kind::Gauge,
    unit: Some("seconds"),
    help:
        "Latency percentiles (50, 99, 99.9) of the running phase's workers' last closed interval.",
};
const PROGRESS: Family = Family {
    name: "fsbench_phase_progress_ratio",
    kind: Kind::Gauge,
    unit: Some("ratio"),
    help:
        "Share of the running phase done (0 to 1), when its end is known (operations or runtime).",
};
const ETA: Family = Family {
    name: "fsbench_phase_eta_seconds",
    kind: Kind::Gauge,
    unit: Some("seconds"),
    help: "Seconds the running phase has left at its pace so far, when its end is known.",
};
const ELAPSED: Family = Family {
    name: "fsbench_phase_elapsed_seconds",
    kind: Kind::Gauge,
    unit: Some("seconds"),
    help: "Seconds since the running phase's workers started.",
};
const WORKERS: Family = Family {
    name: "fsbench_phase_workers",
    kind: Kind::Gauge,
    unit: None,
    help: "Worker threads of the running phase.",
};
const REPEAT: Family = Family {
    name: "fsbench_phase_repeat",
    kind: Kind::Gauge,
    unit: None,
    help: "The repeat (1-based) the running phase belongs to.",
};
const LIMITER: Family = Family {
    name: "fsbench_phase_limiter",
    kind: Kind::Gauge,
    unit: None,
    help: "What limits the running phase so far by the limiter's rules: 1 for the kind the evidence gives, 0 for the others.",
};

/// Every family, in the order they are written.
#[cfg(test)]
pub(super) const FAMILIES: [&Family; 12] = [
    &INFO,
    &OPERATIONS,
    &BYTES,
    &IOPS,
    &BANDWIDTH,
    &LATENCY,
    &PROGRESS,
    &ETA,
    &ELAPSED,
    &WORKERS,
    &REPEAT,
    &LIMITER,
];

impl Family {
    /// The family's name in the metadata lines: OpenMetrics names a counter without `_total`
    /// and an info without `_info`.
    fn meta_name(&self, f: Format) -> &'static str {
        match (f, self.kind) {
            (Format::OpenMetrics, Kind::Counter) => self.name.trim_end_matches("_total"),
            (Format::OpenMetrics, Kind::Info) => self.name.trim_end_matches("_info"),
            _ => self.name,
        }
    }

    fn type_word(&self, f: Format) -> &'static str {
        match (self.kind, f) {
            (Kind::Counter, _) => "counter",
            (Kind::Gauge, _) | (Kind::Info, Format::Prometheus) => "gauge",
            (Kind::Info, Format::OpenMetrics) => "info",
        }
    }

    fn head(&self, out: &mut String, f: Format) {
        let name = self.meta_name(f);
        let _ = writeln!(out, "# HELP {name} {}", self.help);
        let _ = writeln!(out, "# TYPE {name} {}", self.type_word(f));
        if let (Format::OpenMetrics, Some(u)) = (f, self.unit) {
            let _ = writeln!(out, "# UNIT {name} {u}");
        }
    }
}

/// A label value as both formats quote it.
fn escape(v: &str) -> String {
    let mut s = String::with_capacity(v.len());
    for c in v.chars() {
        match c {
            '\\' => s.push_str("\\\\"),
            '"' => s.push_str("\\\""),
            '\n' => s.push_str("\\n"),
            c => s.push(c),
        }
    }
    s
}

fn labels(pairs: &[(&str, &str)]) -> String {
    let inner: Vec<String> = pairs
        .iter()
        .map(|(k, v)| format!("{k}=\"{}\"", escape(v)))
        .collect();
    format!("{{{}}}", inner.join(","))
}

fn key_labels<'a>(k: &'a Key, more: &[(&'a str, &'a str)]) -> String {
    let mut pairs = vec![
        ("target", k.target.as_str()),
        ("workload", k.workload.as_str()),
        ("test", k.test.as_str()),
    ];
    pairs.extend_from_slice(more);
    labels(&pairs)
}

/// A gauge's value: finite figures only, in Rust's shortest round-trip form.
fn number(x: f64) -> String {
    if x.is_finite() {
        format!("{x}")
    } else {
        "0".into()
    }
}

/// The scrape's text in format `f`.
pub fn text(v: &View, f: Format) -> String {
    let mut out = String::new();
    INFO.head(&mut out, f);
    let rank = v.info.rank.to_string();
    let _ = writeln!(
        out,
        "fsbench_info{} 1",
        labels(&[
            ("build", &v.info.build),
            ("command", &v.info.command),
            ("study", &v.info.study),
            ("host", &v.info.host),
            ("rank", &rank),
        ])
    );
    counters(&mut out, v, f);
    if let Some(p) = &v.phase {
        phase(&mut out, p, f);
    }
    if f == Format::OpenMetrics {
        out.push_str("# EOF\n");
    }
    out
}

fn counters(out: &mut String, v: &View, f: Format) {
    let ops: fn(&Count) -> u64 = |x| x.ops;
    let bytes: fn(&Count) -> u64 = |x| x.bytes;
    for (fam, pick) in [(&OPERATIONS, ops), (&BYTES, bytes)] {
        fam.head(out, f);
        for (k, by) in &v.counters {
            for (way, x) in by.iter() {
                let n = pick(&x);
                let _ = writeln!(
                    out,
                    "{}{} {n}",
                    fam.name,
                    key_labels(k, &[("direction", word(way))])
                );
            }
        }
    }
}

fn phase(out: &mut String, p: &PhaseView, f: Format) {
    let k = &p.key;
    let one = |out: &mut String, fam: &Family, x: Option<f64>| {
        if let Some(x) = x {
            fam.head(out, f);
            let _ = writeln!(out, "{}{} {}", fam.name, key_labels(k, &[]), number(x));
        }
    };
    if let Some(rates) = p.rates {
        let ops: fn(&(f64, f64)) -> f64 = |r| r.0;
        let bytes: fn(&(f64, f64)) -> f64 = |r| r.1;
        for (fam, pick) in [(&IOPS, ops), (&BANDWIDTH, bytes)] {
            fam.head(out, f);
            for (way, r) in WAYS.iter().zip(&rates) {
                let x = pick(r);
                let l = key_labels(k, &[("direction", word(*way))]);
                let _ = writeln!(out, "{}{l} {}", fam.name, number(x));
            }
        }
    }
    if let Some(lat) = p.latency {
        LATENCY.head(out, f);
        for ((pct, _), x) in PERCENTILES.iter().zip(lat) {
            let l = key_labels(k, &[("percentile", pct)]);
            let _ = writeln!(out, "{}{l} {}", LATENCY.name, number(x));
        }
    }
    one(out, &PROGRESS, p.progress);
    one(out, &ETA, p.eta_s);
    one(out, &ELAPSED, Some(p.elapsed_s));
    one(out, &WORKERS, Some(p.workers as f64));
    one(out, &REPEAT, Some(p.repeat as f64));
    LIMITER.head(out, f);
    for kind in Limit::ALL {
        let on = u8::from(p.limiter == Some(kind));
        let l = key_labels(k, &[("limiter", kind.word())]);
        let _ = writeln!(out, "{}{l} {on}", LIMITER.name);
    }
}
