//! The evidence of a phase: what fsbench's workers, the filesystem's own processes and kernel
//! threads, the rest of the machine and each device of the target's stack did while it ran.
//! Read at the phase's start and end and once per interval (never per I/O); stored on every
//! record as `evidence` (docs/results-schema.md), and the limiter (`limiter.rs`) is decided
//! from it.

pub mod sampler;
pub mod watch;

use serde::{Deserialize, Serialize};

use super::procfs::{self, DiskLine, TICKS_PER_SEC};
pub use watch::{
    Board, FsThreads, Owner, Role, Scan, Snapshot, StackDevice, ThreadWatch, Watch, WorkerThread,
};

/// One worker: shares of its own window (start line to end), 0 to 1 each.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WorkerFigures {
    pub index: usize,
    /// On a CPU in fsbench's code, and in the kernel on its behalf.
    pub user: f64,
    pub system: f64,
    /// Runnable but waiting for a CPU (schedstat).
    pub runq: f64,
    /// Off the CPU: blocked (I/O, locks, sleeps).
    pub blocked: f64,
    pub voluntary_switches: u64,
    pub involuntary_switches: u64,
    /// Its window (start line to end), seconds.
    pub seconds: f64,
}

impl WorkerFigures {
    pub fn on_cpu(&self) -> f64 {
        self.user + self.system
    }
}

/// CPU time as cores (CPU seconds over the phase's seconds: 1.0 is one core busy).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Cores {
    pub user: f64,
    pub system: f64,
}

/// Whose a process of the filesystem is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FsKind {
    /// A user-space server (zfs-fuse).
    Daemon,
    /// Kernel threads (journal commits, workqueues).
    Kernel,
}

/// A process (or the kernel threads of one name) and the CPU it took, as cores.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Busy {
    pub name: String,
    pub cores: f64,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub kind: Option<FsKind>,
}

/// The machine over the phase: shares of all its CPUs, and the CPU others took.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MachineFigures {
    pub busy: f64,
    pub iowait: f64,
    pub steal: f64,
    /// Busy time less fsbench's and the filesystem's own processes and threads, as cores.
    pub others: f64,
    /// Of that, what other user processes took, as cores: kernel threads (the loop device's
    /// workers, writeback, io_uring's teardown, softirqs) do the run's own I/O and are left out.
    #[serde(default)]
    pub processes: f64,
    /// The user processes that took most of it (other than fsbench and the filesystem's).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub other_top: Vec<Busy>,
}

/// Pressure stall time as shares of the phase (/proc/pressure).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PressureFigures {
    pub cpu_some: f64,
    pub io_some: f64,
    pub io_full: f64,
    pub memory_some: f64,
    pub memory_full: f64,
}

/// One device of the target's stack over the phase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceFigures {
    pub name: String,
    pub role: Role,
    pub reads: u64,
    pub writes: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    /// Time with a request in flight over the phase's time (0 to 1).
    pub util: f64,
    /// Requests in flight on average.
    pub in_flight: f64,
    /// Mean time a request took, queue included (ms).
    pub wait_ms: f64,
}

/// How much of the workload's I/O reached the target's device and the bottom device (the rest
/// a cache absorbed), by direction: shares of the workload's bytes, None where unknown.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Reached {
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub read_device: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub read_bottom: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub write_device: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub write_bottom: Option<f64>,
}

/// One interval of the phase (the `--interval` timeline): seconds from its start, and the
/// figures over that interval.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IntervalFigures {
    pub t: f64,
    /// The workers' CPU, as cores.
    pub workers: f64,
    /// The filesystem's daemons, as cores.
    #[serde(skip_serializing_if = "is_zero", default)]
    pub daemons: f64,
    /// The machine's busy share, and what others took (cores).
    pub busy: f64,
    pub others: f64,
    /// The busiest device's utilisation.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub util: Option<f64>,
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

/// What the workload moved in the phase, when it says (bytes read and written).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Volume {
    pub read: Option<f64>,
    pub written: Option<f64>,
}

/// The evidence of one phase.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    pub wall_s: f64,
    pub cpus: usize,
    pub workers: Vec<WorkerFigures>,
    /// Index (in `workers`) of the busiest worker.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub busiest: Option<usize>,
    /// fsbench's whole process (workers and the rest), as cores.
    pub fsbench: Cores,
    /// fsbench's CPU outside its workers' own threads, as cores: io_uring's kernel workers
    /// (io-wq, where a filesystem cannot take an I/O without blocking), the fault device's
    /// threads, the progress line.
    #[serde(default)]
    pub helpers: Cores,
    /// The filesystem's own processes and kernel threads.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub filesystem: Vec<Busy>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub machine: Option<MachineFigures>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub pressure: Option<PressureFigures>,
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub devices: Vec<DeviceFigures>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub reached: Option<Reached>,
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub intervals: Vec<IntervalFigures>,
}

impl Evidence {
    pub fn busiest_worker(&self) -> Option<&WorkerFigures> {
        self.busiest.and_then(|i| self.workers.get(i))
    }

    /// The filesystem's daemons' CPU, as cores.
    pub fn daemon_cores(&self) -> f64 {
        self.filesystem
            .iter()
            .filter(|b| b.kind == Some(FsKind::Daemon))
            .map(|b| b.cores)
            .sum()
    }

    /// The device at the bottom of the stack (the disk under the images, else the target's).
    pub fn bottom(&self) -> Option<&DeviceFigures> {
        self.devices
            .iter()
            .rev()
            .find(|d| d.role == Role::Backing)
            .or_else(|| self.devices.first())
    }

    /// The busiest device of the stack.
    pub fn busiest_device(&self) -> Option<&DeviceFigures> {
        self.devices.iter().max_by(|a, b| a.util.total_cmp(&b.util))
    }
}

fn worker_figures(index: usize, w: &WorkerThread) -> Option<WorkerFigures> {
    let end = w.end?;
    let start = w.start.unwrap_or_default();
    let window = match (start.at, end.at) {
        (Some(a), Some(b)) => b.saturating_duration_since(a).as_nanos() as f64,
        _ => return None,
    };
    if window <= 0.0 {
        return None;
    }
    let share = |a: u64, b: u64| (b.saturating_sub(a) as f64 / window).clamp(0.0, 1.0);
    let user = share(start.user_ns, end.user_ns);
    let system = share(start.sys_ns, end.sys_ns);
    let runq = share(start.sched.runq_ns, end.sched.runq_ns);
    Some(WorkerFigures {
        index,
        user,
        system,
        runq,
        blocked: (1.0 - user - system - runq).max(0.0),
        voluntary_switches: end.sched.voluntary.saturating_sub(start.sched.voluntary),
        involuntary_switches: end
            .sched
            .involuntary
            .saturating_sub(start.sched.involuntary),
        seconds: window / 1e9,
    })
}

fn device_figures(d: &StackDevice, a: &DiskLine, b: &DiskLine, wall_ms: f64) -> DeviceFigures {
    let ios = b.reads + b.writes - (a.reads + a.writes).min(b.reads + b.writes);
    let ms = (b.read_ms + b.write_ms).saturating_sub(a.read_ms + a.write_ms);
    DeviceFigures {
        name: d.name.clone(),
        role: d.role,
        reads: b.reads.saturating_sub(a.reads),
        writes: b.writes.saturating_sub(a.writes),
        read_bytes: b.read_sectors.saturating_sub(a.read_sectors) * 512,
        write_bytes: b.write_sectors.saturating_sub(a.write_sectors) * 512,
        util: (b.busy_ms.saturating_sub(a.busy_ms) as f64 / wall_ms).clamp(0.0, 1.0),
        in_flight: b.queue_ms.saturating_sub(a.queue_ms) as f64 / wall_ms,
        wait_ms: if ios > 0 { ms as f64 / ios as f64 } else { 0.0 },
    }
}

/// The CPU each process took between two scans, as ticks, by owner; kernel threads of the
/// filesystem and its daemons by name.
struct Accounts {
    fs: Vec<(String, FsKind, u64)>,
    /// Other user processes by name (kernel threads are not among them).
    others: Vec<(String, u64)>,
}

fn accounts(watch: &Watch, a: &Snapshot, b: &Snapshot) -> Accounts {
    let before: std::collections::HashMap<u32, u64> = a
        .processes
        .iter()
        .map(|(pid, _, c)| (*pid, c.user + c.system))
        .collect();
    let mut acc = Accounts {
        fs: Vec::new(),
        others: Vec::new(),
    };
    for (pid, comm, c) in &b.processes {
        // A process that started during the phase counts from zero.
        let ticks = (c.user + c.system).saturating_sub(before.get(pid).copied().unwrap_or(0));
        if ticks == 0 {
            continue;
        }
        let kind = match watch.owner(*pid, comm, c) {
            Owner::Fsbench | Owner::Kernel => continue,
            Owner::Daemon => FsKind::Daemon,
            Owner::FsKernel => FsKind::Kernel,
            Owner::Other => {
                // Processes of one name add up (a build's many compilers).
                match acc.others.iter_mut().find(|(n, _)| n == comm) {
                    Some(e) => e.1 += ticks,
                    None => acc.others.push((comm.clone(), ticks)),
                }
                continue;
            }
        };
        // Kernel threads of one kind add up under their name without the device or number.
        let name = match kind {
            FsKind::Daemon => comm.clone(),
            FsKind::Kernel => kernel_family(comm, watch.threads.kernel),
        };
        match acc.fs.iter_mut().find(|(n, k, _)| *n == name && *k == kind) {
            Some(e) => e.2 += ticks,
            None => acc.fs.push((name, kind, ticks)),
        }
    }
    acc
}

/// `jbd2/loop3-8` -> `jbd2`, `kworker/u4:2-btrfs-endio-write` -> `btrfs (kworker)`.
fn kernel_family(comm: &str, words: &[&str]) -> String {
    let word = words
        .iter()
        .find(|w| comm.contains(*w))
        .copied()
        .unwrap_or(comm);
    let word = word.trim_end_matches(['/', '-', '_']);
    if comm.starts_with("kworker") {
        format!("{word} (kworker)")
    } else {
        word.to_string()
    }
}

/// Shares of the phase a pressure total grew by (microseconds over the wall).
fn pressure_figures(a: &procfs::Pressure, b: &procfs::Pressure, wall_s: f64) -> PressureFigures {
    let us = wall_s * 1e6;
    let s = |x: u64, y: u64| (y.saturating_sub(x) as f64 / us).clamp(0.0, 1.0);
    PressureFigures {
        cpu_some: s(a.cpu_some, b.cpu_some),
        io_some: s(a.io_some, b.io_some),
        io_full: s(a.io_full, b.io_full),
        memory_some: s(a.memory_some, b.memory_some),
        memory_full: s(a.memory_full, b.memory_full),
    }
}

impl Evidence {
    /// The evidence between two snapshots (`a` at the phase's start, `b` at its end), with the
    /// workers' own figures, the intervals the sampler took and what the workload moved.
    pub fn between(
        watch: &Watch,
        a: &Snapshot,
        b: &Snapshot,
        workers: &[WorkerThread],
        intervals: Vec<IntervalFigures>,
        volume: Volume,
    ) -> Evidence {
        let wall_s = b.at.saturating_duration_since(a.at).as_secs_f64().max(1e-6);
        let cpus = procfs::cpus();
        let workers: Vec<WorkerFigures> = workers
            .iter()
            .enumerate()
            .filter_map(|(i, w)| worker_figures(i, w))
            .collect();
        let busiest = workers
            .iter()
            .enumerate()
            .max_by(|x, y| (x.1.on_cpu() + x.1.runq).total_cmp(&(y.1.on_cpu() + y.1.runq)))
            .map(|(i, _)| i);
        let cores = |ns: u64| ns as f64 / 1e9 / wall_s;
        let fsbench = Cores {
            user: cores(b.own_ns.0.saturating_sub(a.own_ns.0)),
            system: cores(b.own_ns.1.saturating_sub(a.own_ns.1)),
        };
        let in_workers = |f: fn(&WorkerFigures) -> f64| {
            workers.iter().map(|w| f(w) * w.seconds).sum::<f64>() / wall_s
        };
        let helpers = Cores {
            user: (fsbench.user - in_workers(|w| w.user)).max(0.0),
            system: (fsbench.system - in_workers(|w| w.system)).max(0.0),
        };
        let acc = accounts(watch, a, b);
        let tick_cores = |t: u64| t as f64 / TICKS_PER_SEC / wall_s;
        let mut filesystem: Vec<Busy> = acc
            .fs
            .iter()
            .map(|(name, kind, t)| Busy {
                name: name.clone(),
                cores: tick_cores(*t),
                kind: Some(*kind),
            })
            .collect();
        filesystem.sort_by(|x, y| y.cores.total_cmp(&x.cores));
        let fs_cores: f64 = filesystem.iter().map(|b| b.cores).sum();
        let machine = match (a.machine, b.machine) {
            (Some(x), Some(y)) => {
                let total = y.total.saturating_sub(x.total).max(1) as f64;
                let idle = y.idle.saturating_sub(x.idle) + y.iowait.saturating_sub(x.iowait);
                let stolen = y.steal.saturating_sub(x.steal);
                let busy_ticks = (y.total.saturating_sub(x.total))
                    .saturating_sub(idle)
                    .saturating_sub(stolen);
                let busy_cores = tick_cores(busy_ticks);
                let processes: f64 = acc.others.iter().map(|(_, t)| tick_cores(*t)).sum();
                let mut top: Vec<Busy> = acc
                    .others
                    .iter()
                    .map(|(n, t)| Busy {
                        name: n.clone(),
                        cores: tick_cores(*t),
                        kind: None,
                    })
                    .filter(|b| b.cores >= 0.01)
                    .collect();
                top.sort_by(|p, q| q.cores.total_cmp(&p.cores));
                top.truncate(3);
                Some(MachineFigures {
                    busy: busy_ticks as f64 / total,
                    iowait: y.iowait.saturating_sub(x.iowait) as f64 / total,
                    steal: stolen as f64 / total,
                    others: (busy_cores - fsbench.user - fsbench.system - fs_cores).max(0.0),
                    processes,
                    other_top: top,
                })
            }
            _ => None,
        };
        let pressure = match (&a.pressure, &b.pressure) {
            (Some(x), Some(y)) => Some(pressure_figures(x, y, wall_s)),
            _ => None,
        };
        let wall_ms = wall_s * 1000.0;
        let devices: Vec<DeviceFigures> = watch
            .devices
            .iter()
            .zip(a.devices.iter().zip(&b.devices))
            .filter_map(|(d, (x, y))| Some(device_figures(d, x.as_ref()?, y.as_ref()?, wall_ms)))
            .collect();
        let mut e = Evidence {
            wall_s,
            cpus,
            workers,
            busiest,
            fsbench,
            helpers,
            filesystem,
            machine,
            pressure,
            devices,
            reached: None,
            intervals,
        };
        e.reached = reached(&e, volume);
        e
    }
}

/// Shares of the workload's bytes that the target's device and the bottom device moved.
fn reached(e: &Evidence, v: Volume) -> Option<Reached> {
    let top = e.devices.first()?;
    let bottom = e.bottom()?;
    let share = |dev: u64, asked: Option<f64>| asked.filter(|a| *a >= 1.0).map(|a| dev as f64 / a);
    let r = Reached {
        read_device: share(top.read_bytes, v.read),
        read_bottom: share(bottom.read_bytes, v.read),
        write_device: share(top.write_bytes, v.written),
        write_bottom: share(bottom.write_bytes, v.written),
    };
    (r != Reached::default()).then_some(r)
}

#[cfg(test)]
mod tests;
