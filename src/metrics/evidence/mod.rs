//! The evidence of a phase: what fsbench's workers, the filesystem's own processes and kernel
//! threads, the rest of the machine and each device of the target's stack did while it ran.
//! Read at the phase's start and end and once per interval (never per I/O); stored on every
//! record as `evidence` (docs/results-schema.md), and the limiter (`limiter.rs`) is decided
//! from it.

mod accounts;
pub mod sampler;
pub mod sofar;
pub mod watch;

use serde::{Deserialize, Serialize};

use super::procfs::{self, DiskLine};
pub use watch::{
    Board, FsThreads, Medium, Owner, Role, Scan, Siblings, Snapshot, StackDevice, ThreadWatch,
    Walk, Watch, WorkerThread,
};

/// One worker: shares of its own window (start line to end), 0 to 1 each.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WorkerFigures {
    pub index: usize,
    /// The record (block: the job of its group) the worker's figures belong to.
    #[serde(skip_serializing_if = "is_zero_usize", default)]
    pub part: usize,
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
    /// What processes that came and went within the phase took, as cores: the machine's busy
    /// time that no process alive at its end, no kernel thread and no interrupt accounts for.
    #[serde(skip_serializing_if = "is_zero", default)]
    pub gone: f64,
    /// Other processes' storage I/O over the phase, when any.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub io: Option<OthersIo>,
    /// The window of the per-process figures (`processes`, `other_top`, `gone`, `io` and the
    /// filesystem's), seconds: between the walks over every process that began and ended them,
    /// which phases back to back share (`Snapshot::first`). None: the phase ended within 0.1 s
    /// of the walk it began from, and no walk ended it (whole ticks of 10 ms over so short a
    /// window say nothing); those figures are zero then.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub walk_s: Option<f64>,
}

/// Other processes' storage I/O (/proc/PID/io: bytes they read from and wrote to storage).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OthersIo {
    pub bytes: u64,
    /// Of it, what the target's device stack moved beyond the run's own I/O (the target's
    /// devices beyond what fsbench, its ranks and the filesystem's daemons asked; the disk under
    /// the images beyond what the loop devices moved): the part that landed on the stack.
    pub on_stack: u64,
    /// The processes that moved most, by name, with their bytes.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub top: Vec<(String, u64)>,
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
    /// A disk, or a memory-backed loop device.
    #[serde(skip_serializing_if = "Medium::is_disk", default)]
    pub medium: Medium,
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
    /// Flush requests (a cache flush the filesystem asked, fsync's), and their time (ms).
    #[serde(skip_serializing_if = "is_zero_u64", default)]
    pub flushes: u64,
    #[serde(skip_serializing_if = "is_zero_u64", default)]
    pub flush_ms: u64,
}

impl DeviceFigures {
    /// The target's own device or a member (not the disk under the images).
    pub fn top(&self) -> bool {
        self.role != Role::Backing
    }
}

/// The write-back after a writing phase (its syncfs), measured on its own: how long it took,
/// the busiest device meanwhile, and the flush requests and bytes the target's devices got.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FlushFigures {
    pub seconds: f64,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub device: Option<String>,
    pub util: f64,
    #[serde(skip_serializing_if = "is_zero_u64", default)]
    pub flushes: u64,
    pub write_bytes: u64,
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

fn is_zero_usize(x: &usize) -> bool {
    *x == 0
}

fn is_zero_u64(x: &u64) -> bool {
    *x == 0
}

/// What the workload moved in the phase, when it says (bytes read and written).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Volume {
    pub read: Option<f64>,
    pub written: Option<f64>,
    /// The reads it made (operations).
    pub read_ops: Option<f64>,
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
    /// After a writing phase, its flush (the devices above are the workers' time alone).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub flush: Option<FlushFigures>,
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

    /// The target's own devices (its device, or every member of a multi-device target).
    pub fn top_devices(&self) -> impl Iterator<Item = &DeviceFigures> {
        self.devices.iter().filter(|d| d.top())
    }

    /// The evidence of part `k` of a phase whose parts ran together: its own workers (the
    /// machine and the devices are the phase's).
    pub fn part(&self, k: usize) -> std::borrow::Cow<'_, Evidence> {
        if self.workers.iter().all(|w| w.part == k) {
            return std::borrow::Cow::Borrowed(self);
        }
        let mut e = self.clone();
        e.workers.retain(|w| w.part == k);
        e.busiest = busiest(&e.workers);
        std::borrow::Cow::Owned(e)
    }
}

/// The index of the busiest worker (most time on or waiting for a CPU).
fn busiest(workers: &[WorkerFigures]) -> Option<usize> {
    workers
        .iter()
        .enumerate()
        .max_by(|x, y| (x.1.on_cpu() + x.1.runq).total_cmp(&(y.1.on_cpu() + y.1.runq)))
        .map(|(i, _)| i)
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
        part: 0,
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
        medium: d.medium,
        reads: b.reads.saturating_sub(a.reads),
        writes: b.writes.saturating_sub(a.writes),
        read_bytes: b.read_sectors.saturating_sub(a.read_sectors) * 512,
        write_bytes: b.write_sectors.saturating_sub(a.write_sectors) * 512,
        util: (b.busy_ms.saturating_sub(a.busy_ms) as f64 / wall_ms).clamp(0.0, 1.0),
        in_flight: b.queue_ms.saturating_sub(a.queue_ms) as f64 / wall_ms,
        wait_ms: if ios > 0 { ms as f64 / ios as f64 } else { 0.0 },
        flushes: b.flushes.saturating_sub(a.flushes),
        flush_ms: b.flush_ms.saturating_sub(a.flush_ms),
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

/// What the frame read around a phase: its start (`a`), when the workers ended (`b`), and after
/// a writing phase's flush.
pub struct Readings<'a> {
    pub watch: &'a Watch,
    pub a: &'a Snapshot,
    pub b: &'a Snapshot,
    pub flushed: Option<&'a Snapshot>,
}

impl Evidence {
    /// The evidence between two readings (`a` at the phase's start, `b` when its workers ended),
    /// with the workers' own figures (`part_of`: each one's part), the intervals the sampler
    /// took, what the workload moved and the flush after it.
    pub fn between(
        r: &Readings,
        workers: &[WorkerThread],
        part_of: &[usize],
        intervals: Vec<IntervalFigures>,
        volume: Volume,
    ) -> Evidence {
        let (a, b) = (r.a, r.b);
        let wall_s = b.at.saturating_duration_since(a.at).as_secs_f64().max(1e-6);
        let workers: Vec<WorkerFigures> = workers
            .iter()
            .enumerate()
            .filter_map(|(i, w)| {
                let mut f = worker_figures(i, w)?;
                f.part = part_of.get(i).copied().unwrap_or(0);
                Some(f)
            })
            .collect();
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
        let wall_ms = wall_s * 1000.0;
        let devices: Vec<DeviceFigures> = r
            .watch
            .devices
            .iter()
            .zip(a.devices.iter().zip(&b.devices))
            .filter_map(|(d, (x, y))| Some(device_figures(d, x.as_ref()?, y.as_ref()?, wall_ms)))
            .collect();
        let acc = accounts::Accounts::of(r.watch, a, b);
        let walk_s = a.walk_s(b);
        let mut e = Evidence {
            wall_s,
            // (The last reading's /proc/stat: no other read of it.)
            cpus: b.machine.map_or_else(procfs::cpus, |m| m.cpus.max(1)),
            busiest: busiest(&workers),
            workers,
            fsbench,
            helpers,
            filesystem: walk_s.map_or_else(Vec::new, |w| acc.filesystem(w)),
            pressure: match (&a.pressure, &b.pressure) {
                (Some(x), Some(y)) => Some(pressure_figures(x, y, wall_s)),
                _ => None,
            },
            devices,
            intervals,
            flush: r.flushed.and_then(|f| flush_figures(r.watch, b, f)),
            ..Default::default()
        };
        e.machine = acc.machine(a, b, &e, walk_s);
        e.reached = reached(&e, volume);
        e
    }
}

/// The flush after a writing phase: from the workers' end to the reading after it.
fn flush_figures(watch: &Watch, b: &Snapshot, c: &Snapshot) -> Option<FlushFigures> {
    let wall_s = c.at.saturating_duration_since(b.at).as_secs_f64().max(1e-6);
    let devs: Vec<DeviceFigures> = watch
        .devices
        .iter()
        .zip(b.devices.iter().zip(&c.devices))
        .filter_map(|(d, (x, y))| {
            Some(device_figures(d, x.as_ref()?, y.as_ref()?, wall_s * 1000.0))
        })
        .collect();
    let busiest = devs.iter().max_by(|x, y| x.util.total_cmp(&y.util));
    Some(FlushFigures {
        seconds: wall_s,
        device: busiest.map(|d| d.name.clone()),
        util: busiest.map_or(0.0, |d| d.util),
        flushes: devs.iter().filter(|d| d.top()).map(|d| d.flushes).sum(),
        write_bytes: devs.iter().filter(|d| d.top()).map(|d| d.write_bytes).sum(),
    })
}

/// Shares of the workload's bytes that the target's devices (all its members) and the bottom
/// device moved.
fn reached(e: &Evidence, v: Volume) -> Option<Reached> {
    let bottom = e.bottom()?;
    let (read, written) = e
        .top_devices()
        .fold((0, 0), |(r, w), d| (r + d.read_bytes, w + d.write_bytes));
    let share = |dev: u64, asked: Option<f64>| asked.filter(|a| *a >= 1.0).map(|a| dev as f64 / a);
    let r = Reached {
        read_device: share(read, v.read),
        read_bottom: share(bottom.read_bytes, v.read),
        write_device: share(written, v.written),
        write_bottom: share(bottom.write_bytes, v.written),
    };
    (r != Reached::default()).then_some(r)
}

#[cfg(test)]
mod tests;
