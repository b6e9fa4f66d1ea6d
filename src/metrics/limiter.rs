//! What limited a phase, decided from its evidence by one table of rules (RULES), each with the
//! evidence that decides it; the same table is in docs/results-schema.md. And whether other
//! processes took enough of the machine to disturb it (interference).

use serde::{Deserialize, Serialize};

use super::evidence::Evidence;

/// What a figure measured the limit of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Limit {
    /// The bottom device was busy while the workers waited for it.
    Device,
    /// The workers were busy in the kernel, or the filesystem's own processes were.
    FilesystemCpu,
    /// A worker was busy in fsbench's own code: the figure measures fsbench.
    BenchmarkCpu,
    /// The workers were off the CPU while the device was not busy (journal, fsync, locks).
    Waiting,
    /// The job's own pacing (rate, rate_iops, thinktime, flow) held the workers back.
    Paced,
    /// Reads were served from memory: little of what was read reached the device.
    Cache,
    /// The evidence does not decide between the two closest.
    Mixed,
}

impl Limit {
    /// Every kind, in the order above.
    pub const ALL: [Limit; 7] = [
        Limit::Device,
        Limit::FilesystemCpu,
        Limit::BenchmarkCpu,
        Limit::Waiting,
        Limit::Paced,
        Limit::Cache,
        Limit::Mixed,
    ];

    pub const fn word(self) -> &'static str {
        match self {
            Limit::Device => "device",
            Limit::FilesystemCpu => "filesystem-cpu",
            Limit::BenchmarkCpu => "benchmark-cpu",
            Limit::Waiting => "waiting",
            Limit::Paced => "paced",
            Limit::Cache => "cache",
            Limit::Mixed => "mixed",
        }
    }
}

impl std::fmt::Display for Limit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.word())
    }
}

/// A record's limiter: the kind, the rule that fired in one line, and for `mixed` the two
/// closest kinds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Limiter {
    pub kind: Limit,
    pub rule: String,
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub between: Vec<Limit>,
}

/// What the rules read: the evidence and what the phase itself declares.
#[derive(Debug, Clone, Copy)]
pub struct Facts<'a> {
    pub evidence: &'a Evidence,
    /// The job's pacing, when it has any (`rate_iops=200`).
    pub pacing: Option<&'a str>,
    /// Where the phase's reads go: whether a cache may have served them.
    pub reads: Reads,
}

/// Where a phase's reads go, as the phase and its target declare it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reads {
    /// To a filesystem on a device: the page cache may serve them instead.
    Device,
    /// To a filesystem in memory (tmpfs): no device, no cache to tell apart.
    Memory,
    /// Nowhere: the phase reads nothing from the target (it only writes, or its engine moves
    /// no data: ioengine=null).
    Nowhere,
}

impl Reads {
    /// A phase's reads: `reads` whether it reads the target at all, `memory_backed` its target.
    pub fn of(reads: bool, memory_backed: bool) -> Reads {
        match (reads, memory_backed) {
            (false, _) => Reads::Nowhere,
            (true, true) => Reads::Memory,
            (true, false) => Reads::Device,
        }
    }
}

/// A rule: the kind it names, the evidence that decides it (for the docs and `fsbench list`),
/// and its score (0 to 1) with the line a record carries.
pub struct Rule {
    pub limit: Limit,
    pub evidence: &'static str,
    /// An explanation of what was measured (pacing, a cache) wins outright at DECIDES; the
    /// others compete on their scores.
    pub outright: bool,
    pub score: fn(&Facts) -> Option<(f64, String)>,
}

/// A score at or above this decides (an outright rule wins at it).
pub const DECIDES: f64 = 0.5;
/// The winner must lead the next rule by this much, else the limiter is `mixed`.
pub const MARGIN: f64 = 0.15;

pub static RULES: &[Rule] = &[
    Rule {
        limit: Limit::Paced,
        evidence: "the job paces itself (its bandwidth or IOPS rate, think time, flow) and its workers were off the CPU most of the phase",
        outright: true,
        score: paced,
    },
    Rule {
        limit: Limit::Cache,
        evidence: "a device-backed target whose reads mostly did not reach its device: score = 1 - device bytes read / bytes read",
        outright: true,
        score: cache,
    },
    Rule {
        limit: Limit::Device,
        evidence: "the workers were off the CPU while a device of the stack was busy: score = workers' blocked share x the share of that time the busiest device had a request in flight",
        outright: false,
        score: device,
    },
    Rule {
        limit: Limit::FilesystemCpu,
        evidence: "the busiest worker was on the CPU in the kernel (system time), or the filesystem's processes and kernel threads took a core",
        outright: false,
        score: filesystem_cpu,
    },
    Rule {
        limit: Limit::BenchmarkCpu,
        evidence: "the busiest worker was on the CPU in fsbench's own code (user time)",
        outright: false,
        score: benchmark_cpu,
    },
    Rule {
        limit: Limit::Waiting,
        evidence: "the workers were off the CPU while no device was busy: score = workers' blocked share x (1 - the share of that time the busiest device had a request in flight)",
        outright: false,
        score: waiting,
    },
];

fn pct(x: f64) -> String {
    format!("{:.0}%", x * 100.0)
}

/// A share of a worker's time as if it had never waited for a CPU: of the time it was on a
/// CPU or blocked. Waiting for a CPU is not what the workload asked of the system (other
/// processes, or more workers than CPUs, caused it); `interference` says when others did.
fn of_runnable(w: &crate::metrics::evidence::WorkerFigures, share: f64) -> f64 {
    let ran = 1.0 - w.runq;
    if ran <= 1e-6 {
        0.0
    } else {
        (share / ran).clamp(0.0, 1.0)
    }
}

/// The workers' mean blocked share.
fn blocked(e: &Evidence) -> f64 {
    if e.workers.is_empty() {
        return 0.0;
    }
    e.workers
        .iter()
        .map(|w| of_runnable(w, w.blocked))
        .sum::<f64>()
        / e.workers.len() as f64
}

/// The share of the workers' blocked time during which the busiest device had a request in
/// flight (at most: the device's busy time over the workers' mean time off the CPU).
fn device_cover(e: &Evidence) -> f64 {
    let raw = if e.workers.is_empty() {
        0.0
    } else {
        e.workers.iter().map(|w| w.blocked).sum::<f64>() / e.workers.len() as f64
    };
    match e.busiest_device() {
        Some(d) if raw > 1e-6 => (d.util / raw).min(1.0),
        _ => 0.0,
    }
}

/// The busiest worker's user and system shares.
fn busiest_split(e: &Evidence) -> Option<(f64, f64)> {
    let w = e.busiest_worker()?;
    Some((of_runnable(w, w.user), of_runnable(w, w.system)))
}

fn paced(f: &Facts) -> Option<(f64, String)> {
    let how = f.pacing?;
    let b = blocked(f.evidence);
    let util = f.evidence.busiest_device().map_or(0.0, |d| d.util);
    Some((
        if util < 0.8 { b } else { b * 0.5 },
        format!(
            "paced: {how} held the workers ({} of their time off the CPU)",
            pct(b)
        ),
    ))
}

fn cache(f: &Facts) -> Option<(f64, String)> {
    if f.reads != Reads::Device {
        return None;
    }
    let e = f.evidence;
    let share = e.reached.as_ref()?.read_device?;
    let dev = e.devices.first()?;
    Some((
        (1.0 - share).clamp(0.0, 1.0),
        format!(
            "cache: {} of the reads came from memory ({} of them reached {})",
            pct((1.0 - share).clamp(0.0, 1.0)),
            pct(share.min(1.0)),
            dev.name
        ),
    ))
}

fn device(f: &Facts) -> Option<(f64, String)> {
    let e = f.evidence;
    let d = e.busiest_device()?;
    let b = blocked(e);
    Some((
        b * device_cover(e),
        format!(
            "device: {} {} busy, {:.1} in flight, {:.2} ms per request",
            d.name,
            pct(d.util),
            d.in_flight,
            d.wait_ms
        ),
    ))
}

fn filesystem_cpu(f: &Facts) -> Option<(f64, String)> {
    let e = f.evidence;
    let (_, sys) = busiest_split(e).unwrap_or((0.0, 0.0));
    let own: f64 = e.filesystem.iter().map(|b| b.cores).sum();
    if own.min(1.0) > sys.max(e.helpers.system) {
        let t = e.filesystem.first()?;
        return Some((
            own.min(1.0),
            format!(
                "filesystem-cpu: {} took {:.2} cores{}",
                t.name,
                t.cores,
                if e.filesystem.len() > 1 {
                    format!(" ({own:.2} with the filesystem's other threads)")
                } else {
                    String::new()
                }
            ),
        ));
    }
    if e.helpers.system.min(1.0) > sys {
        return Some((
            e.helpers.system.min(1.0),
            format!(
                "filesystem-cpu: fsbench's kernel helpers (io_uring's io-wq) took {:.2} cores in the kernel",
                e.helpers.system
            ),
        ));
    }
    let w = e.busiest_worker()?;
    Some((
        sys,
        format!(
            "filesystem-cpu: worker {} {} busy, {} of it in the kernel",
            w.index,
            pct(of_runnable(w, w.on_cpu())),
            pct(if w.on_cpu() > 0.0 {
                w.system / w.on_cpu()
            } else {
                0.0
            })
        ),
    ))
}

fn benchmark_cpu(f: &Facts) -> Option<(f64, String)> {
    let e = f.evidence;
    let (user, _) = busiest_split(e)?;
    let w = e.busiest_worker()?;
    Some((
        user,
        format!(
            "benchmark-cpu: worker {} {} busy, {} of it in fsbench's own code",
            w.index,
            pct(of_runnable(w, w.on_cpu())),
            pct(if w.on_cpu() > 0.0 {
                w.user / w.on_cpu()
            } else {
                0.0
            })
        ),
    ))
}

fn waiting(f: &Facts) -> Option<(f64, String)> {
    if f.pacing.is_some() {
        return None;
    }
    let e = f.evidence;
    let b = blocked(e);
    let cover = device_cover(e);
    let helpers = if e.helpers.system >= 0.1 {
        format!(
            "; fsbench's kernel helpers (io_uring's io-wq) took {:.2} cores meanwhile",
            e.helpers.system
        )
    } else {
        String::new()
    };
    Some((
        b * (1.0 - cover),
        format!(
            "waiting: the workers were off the CPU {} of their time, {}{helpers}",
            pct(b),
            match e.busiest_device() {
                Some(d) => format!("{} only {} busy", d.name, pct(d.util)),
                None => "with no device under the target".into(),
            }
        ),
    ))
}

/// The limiter the rules give, or None when the evidence has no workers to judge by.
pub fn classify(f: &Facts) -> Option<Limiter> {
    if f.evidence.workers.is_empty() {
        return None;
    }
    let mut scored: Vec<(&Rule, f64, String)> = RULES
        .iter()
        .filter_map(|r| (r.score)(f).map(|(s, why)| (r, s, why)))
        .collect();
    if let Some((r, _, why)) = scored.iter().find(|(r, s, _)| r.outright && *s >= DECIDES) {
        return Some(Limiter {
            kind: r.limit,
            rule: why.clone(),
            between: Vec::new(),
        });
    }
    scored.retain(|(r, _, _)| !r.outright);
    scored.sort_by(|a, b| b.1.total_cmp(&a.1));
    let (first, s1, why1) = scored.first()?;
    let (second, s2, why2) = match scored.get(1) {
        Some((r, s, w)) => (Some(*r), *s, w.as_str()),
        None => (None, 0.0, ""),
    };
    if *s1 >= DECIDES && s1 - s2 >= MARGIN {
        return Some(Limiter {
            kind: first.limit,
            rule: why1.clone(),
            between: Vec::new(),
        });
    }
    let second = second?;
    Some(Limiter {
        kind: Limit::Mixed,
        rule: format!("mixed: {why1} ({s1:.2}); {why2} ({s2:.2})"),
        between: vec![first.limit, second.limit],
    })
}

/// Others' CPU (cores) at or above this share of the machine disturbs a phase.
pub const OTHERS_SHARE: f64 = 0.10;
/// Steal (the hypervisor's) at or above this share of the machine.
pub const STEAL_SHARE: f64 = 0.05;

/// The interference note's text, when other processes or the hypervisor took a documented
/// share of the machine during the phase.
pub fn interference(e: &Evidence) -> Option<String> {
    let m = e.machine.as_ref()?;
    let cpus = e.cpus.max(1) as f64;
    // Other user processes: kernel threads serve the phase's own I/O.
    let others = m.processes / cpus;
    if others < OTHERS_SHARE && m.steal < STEAL_SHARE {
        return None;
    }
    let mut parts = Vec::new();
    if others >= OTHERS_SHARE {
        let top: Vec<String> = m
            .other_top
            .iter()
            .map(|b| format!("{} {:.2}", b.name, b.cores))
            .collect();
        parts.push(format!(
            "other processes took {:.2} of {} CPUs{}",
            m.processes,
            e.cpus,
            if top.is_empty() {
                String::new()
            } else {
                format!(" ({})", top.join(", "))
            }
        ));
    }
    if m.steal >= STEAL_SHARE {
        parts.push(format!("the hypervisor stole {}", pct(m.steal)));
    }
    let runq = e.workers.iter().map(|w| w.runq).fold(0.0, f64::max);
    if runq > 0.0 {
        parts.push(format!(
            "a worker waited {} of its time for a CPU",
            pct(runq)
        ));
    }
    if let Some(p) = &e.pressure {
        parts.push(format!("cpu pressure {}", pct(p.cpu_some)));
    }
    Some(parts.join("; "))
}

#[cfg(test)]
mod tests;
