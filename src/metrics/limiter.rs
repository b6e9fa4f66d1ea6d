//! What limited a phase, decided from its evidence by one table of rules (RULES, the scores in
//! `rules.rs`), each with the evidence that decides it; the same table is in
//! docs/results-schema.md. And whether other processes disturbed it (`interference.rs`).

mod interference;
mod rules;

use serde::{Deserialize, Serialize};

pub use interference::{interference, OTHERS_SHARE, RUNQ_SHARE, STEAL_SHARE};

use super::evidence::{Evidence, Medium, Volume};
use crate::plan::job::Pacing;

/// What a figure measured the limit of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Limit {
    /// A device of the target's stack was busy while the workers waited for it.
    Device,
    /// The filesystem's own processes or kernel threads were busy, or a profile shows the
    /// workers' kernel time was mostly the filesystem's own code.
    FilesystemCpu,
    /// The workers were busy in the kernel, and no profile shows that time was the
    /// filesystem's (it may be the block layer, a driver, memory copies, io_uring).
    KernelCpu,
    /// A worker was busy in fsbench's own code: the figure measures fsbench.
    BenchmarkCpu,
    /// The workers were off the CPU while no device was busy (journal, fsync, locks).
    Waiting,
    /// The job's own pacing (a rate of bytes or operations, think time, flow) held the workers
    /// back.
    Paced,
    /// Memory served the phase: reads that did not reach the device, or writes the page cache
    /// absorbed, while the device was idle.
    Cache,
    /// The evidence does not decide between the two closest.
    Mixed,
}

impl Limit {
    /// Every kind, in the order above.
    pub const ALL: [Limit; 8] = [
        Limit::Device,
        Limit::FilesystemCpu,
        Limit::KernelCpu,
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
            Limit::KernelCpu => "kernel-cpu",
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

/// A record's limiter: the kind, the rule that fired in one line, its parts (what it names in
/// a few words, the device it names) and for `mixed` the two closest kinds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Limiter {
    pub kind: Limit,
    pub rule: String,
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub between: Vec<Limit>,
    /// What it names, after its kind, in a few words (`loop0 97% busy`): a table's cell.
    #[serde(skip_serializing_if = "String::is_empty", default)]
    pub headline: String,
    /// The device it names, when it names one (the busiest of the stack or of the target's).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub device: Option<String>,
}

/// What the rules read: the evidence of the record's own workers and what the phase declares.
#[derive(Debug, Clone, Copy)]
pub struct Facts<'a> {
    pub evidence: &'a Evidence,
    /// What the record's workers moved.
    pub volume: Volume,
    /// The job's pacing, when it has any, and how much of its rate it reached.
    pub pacing: Option<Paced<'a>>,
    /// Where the target keeps its data.
    pub medium: Medium,
    /// Whether the record's workers read data from the target, and write data to it.
    pub reads: Moves,
    pub writes: Moves,
    /// Where the workers' kernel time went, from an on-CPU profile (`--profile`).
    pub split: Option<&'a KernelSplit>,
}

/// A job's pacing and the share of its asked rate it reached (None: it asks no rate).
#[derive(Debug, Clone, Copy)]
pub struct Paced<'a> {
    pub how: &'a Pacing,
    pub reached: Option<f64>,
}

/// Whether a part's workers move data to or from the target, one direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Moves {
    Data,
    /// Nothing: they do not go that way, or their engine moves no data (ioengine=null).
    Nothing,
}

impl Moves {
    pub fn of(moves: bool) -> Moves {
        if moves {
            Moves::Data
        } else {
            Moves::Nothing
        }
    }
}

/// Where the kernel time of fsbench's threads went, from an on-CPU profile: shares of its
/// kernel samples (0 to 1, adding up to 1), by the innermost frame of a sample that names a part.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct KernelSplit {
    /// The filesystem's own code (its `FsThreads::code`).
    pub filesystem: f64,
    /// The block layer (bios, requests, queues, I/O schedulers).
    pub block: f64,
    /// Device drivers: the loop device, virtio, NVMe, SCSI.
    pub driver: f64,
    /// Copies between user and kernel memory, and page copies.
    pub copies: f64,
    /// The rest (system calls, the page cache, io_uring, the scheduler).
    pub other: f64,
}

/// A rule's finding: its score (0 to 1), what it names in a few words (`headline`) and the
/// rest of its line, the device it names, and, when the evidence cannot tell its kind from
/// another, the two.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Finding {
    pub score: f64,
    pub headline: String,
    pub detail: String,
    pub device: Option<String>,
    pub undecided: Option<[Limit; 2]>,
}

/// A rule: the kind it names, the evidence that decides it (for the docs), how it wins, and
/// its finding.
pub struct Rule {
    pub limit: Limit,
    pub evidence: &'static str,
    pub wins: Wins,
    pub find: fn(&Facts) -> Option<Finding>,
}

/// How a rule's finding becomes the limiter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Wins {
    /// An explanation of what was measured (pacing, a cache): it wins outright at this score,
    /// and below it gives way to the others (it does not compete).
    Outright(f64),
    /// It competes on its score with the other competing rules (`decide`).
    Competes,
}

/// A competing score at or above this decides, when it leads the next by LEAD; `paced` wins
/// outright at it.
pub const DECIDES: f64 = 0.5;
/// The winner must lead the next rule by this share of its own score (the next scores at most
/// 60% of it), else the limiter is `mixed`: two limits that each explain a good part of the
/// time are said together, however the noise of one run orders them.
pub const LEAD: f64 = 0.4;
/// `cache` wins outright at this score: the device idle three quarters of the time, holding
/// the workers at most a quarter of theirs, and three quarters of the reads (or written bytes)
/// not reaching it. Below it a device half busy is still a limit, and the others decide.
pub const CACHED: f64 = 0.75;
/// A paced job that reached less than this share of its rate was held by something else.
pub const REACHED: f64 = 0.9;

pub static RULES: &[Rule] = &[
    Rule {
        limit: Limit::Paced,
        evidence: "the job paces itself (a rate of bytes or of operations, a think time, a flow), reached at least 90% of the rate it asks (per direction; a think time or a flow asks none), and its workers were off the CPU most of the phase: score = their blocked share (halved when the device was 80% busy). A job below 90% of its rate gets the limiter of what held it, its line ending `held below its rate` with the pacing and the share of it reached",
        wins: Wins::Outright(DECIDES),
        find: rules::paced,
    },
    Rule {
        limit: Limit::Cache,
        evidence: "a device-backed target whose device was idle while memory served the phase: its reads (few of their requests reached the target's devices) or its buffered writes (the page cache absorbed them: few of their bytes reached the devices before the workers ended). Score = the least of the device's idle share, the share of the workers' time the device did not hold (1 - the `device` score) and the share of read requests (or written bytes) that did not reach it; the larger of the two sides. It wins outright at 0.75; below, a device busy a quarter of the time or more is still a limit and the other rules decide. Never on tmpfs, whose reads and writes are its own work. The line says who copied (the busiest worker in the kernel, io-wq's cores)",
        wins: Wins::Outright(CACHED),
        find: rules::cache,
    },
    Rule {
        limit: Limit::Device,
        evidence: "the workers were off the CPU while the target's devices were busy, over the same window: score = their blocked share x the share of it a device had a request in flight (at most: the devices' busy seconds over the workers' blocked seconds). The line names the busiest device, how many members there are, its flush requests, the disk under it, and a memory-backed loop as such",
        wins: Wins::Competes,
        find: rules::device,
    },
    Rule {
        limit: Limit::FilesystemCpu,
        evidence: "the filesystem's processes or kernel threads took a core (score = their cores, at most 1), or the busiest worker was on the CPU in the kernel (its system share, io-wq's work included) and its on-CPU profile's `split` shows the filesystem's own code as the largest part",
        wins: Wins::Competes,
        find: rules::filesystem_cpu,
    },
    Rule {
        limit: Limit::KernelCpu,
        evidence: "the busiest worker was on the CPU in the kernel (score = its system share, io-wq's work included) and no profile shows that time as the filesystem's: without `--profile` it cannot be split between the filesystem, the block layer, a driver and memory copies, and the line says so; with one, it gives the split",
        wins: Wins::Competes,
        find: rules::kernel_cpu,
    },
    Rule {
        limit: Limit::BenchmarkCpu,
        evidence: "the busiest worker was on the CPU in fsbench's own code: score = its user share. The figure measures fsbench, not the filesystem: use more jobs or a slower device",
        wins: Wins::Competes,
        find: rules::benchmark_cpu,
    },
    Rule {
        limit: Limit::Waiting,
        evidence: "the workers were off the CPU while no device was busy (journal commits, fsync, locks, throttling): score = their blocked share x (1 - the devices' share of it) x (1 - the share the filesystem's own processes and threads were on a CPU: a FUSE daemon serving them is not waiting for nothing). Where no device of a device-backed target can be found (a directory on ZFS or FUSE), the two cannot be told apart: `mixed` (`device` or `waiting`), never `waiting` alone. On a memory-backed target whose workers' I/O io_uring's io-wq did (0.05 cores or more), the time off the CPU is each I/O's hand-off to io-wq and back (its wake-ups), not a wait: score 0",
        wins: Wins::Competes,
        find: rules::waiting,
    },
];

fn limiter(kind: Limit, f: &Finding) -> Limiter {
    Limiter {
        kind,
        rule: format!("{kind}: {}{}", f.headline, f.detail),
        between: Vec::new(),
        headline: f.headline.clone(),
        device: f.device.clone(),
    }
}

/// The limiter the rules give, or None when the evidence has no workers to judge by.
pub fn classify(f: &Facts) -> Option<Limiter> {
    if f.evidence.workers.is_empty() {
        return None;
    }
    let mut scored: Vec<(&Rule, Finding)> = RULES
        .iter()
        .filter_map(|r| (r.find)(f).map(|x| (r, x)))
        .collect();
    let outright = |r: &Rule, x: &Finding| matches!(r.wins, Wins::Outright(at) if x.score >= at);
    let mut l = match scored.iter().find(|(r, x)| outright(r, x)) {
        Some((r, x)) => limiter(r.limit, x),
        None => {
            scored.retain(|(r, _)| r.wins == Wins::Competes);
            scored.sort_by(|a, b| b.1.score.total_cmp(&a.1.score));
            decide(&scored)?
        }
    };
    if let Some(p) = f.pacing {
        if let Some(r) = p.reached.filter(|r| *r < REACHED) {
            l.rule += &format!(
                "; held below its rate ({}: {} of it reached)",
                p.how,
                rules::pct(r)
            );
        }
    }
    if let Some(fl) = f.evidence.flush.as_ref().filter(|x| x.seconds >= 0.1) {
        l.rule += &format!(
            "; then flush {:.1} s{}",
            fl.seconds,
            fl.device.as_ref().map_or(String::new(), |d| format!(
                ", {d} {} busy",
                rules::pct(fl.util)
            ))
        );
    }
    Some(l)
}

/// The best of the competing rules when it decides (scores at least DECIDES and leads the next
/// by LEAD of its score), else `mixed` between the two closest, naming the device either names.
fn decide(scored: &[(&Rule, Finding)]) -> Option<Limiter> {
    let (first, x1) = scored.first()?;
    if let Some([a, b]) = x1.undecided {
        let mut l = limiter(Limit::Mixed, x1);
        l.rule = format!("mixed: {}{}", x1.headline, x1.detail);
        l.between = vec![a, b];
        return Some(l);
    }
    let s2 = scored.get(1).map_or(0.0, |(_, x)| x.score);
    if x1.score >= DECIDES && s2 <= x1.score * (1.0 - LEAD) {
        return Some(limiter(first.limit, x1));
    }
    let (second, x2) = scored.get(1)?;
    let said =
        |r: &Rule, x: &Finding| format!("{}: {}{} ({:.2})", r.limit, x.headline, x.detail, x.score);
    Some(Limiter {
        kind: Limit::Mixed,
        rule: format!("mixed: {}; {}", said(first, x1), said(second, x2)),
        between: vec![first.limit, second.limit],
        headline: String::new(),
        // A device either names: the closest two may be a CPU and the device.
        device: x1.device.clone().or_else(|| x2.device.clone()),
    })
}

#[cfg(test)]
mod tests;
