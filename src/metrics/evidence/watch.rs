//! What the frame reads around a phase: the target's device stack, the filesystem's own
//! processes and kernel threads, the machine, and fsbench's workers (each reads its own figures
//! at the start line and at its end: a thread's /proc entry is gone once it has been joined).

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;

use super::super::procfs::{
    self, DiskLine, MachineCpu, Pressure, Task, TaskCpu, TaskIo, TaskSched,
};

/// A device's place in the target's stack.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The device the filesystem is on (a loop device, a partition, a zvol).
    Target,
    /// A member of the target's pool.
    Member,
    /// The disk under a loop device's backing file: the bottom of the stack.
    Backing,
}

/// What a device keeps its data on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Medium {
    /// A disk (or a device the kernel does not tell apart from one).
    #[default]
    Disk,
    /// Memory: a loop device whose image lies on a memory-backed filesystem. Its "busy" time is
    /// its worker thread's CPU copying pages, not a disk's.
    Memory,
}

impl Medium {
    pub fn is_disk(&self) -> bool {
        *self == Medium::Disk
    }
}

/// One device of the stack, by its kernel name (`loop3`, `vda`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StackDevice {
    pub name: String,
    pub role: Role,
    pub medium: Medium,
}

/// The kernel name of the block device `maj:min`, the whole disk for a partition.
fn disk_of(maj: u32, min: u32) -> Option<String> {
    let sys = PathBuf::from(format!("/sys/dev/block/{maj}:{min}"));
    let real = std::fs::canonicalize(&sys).ok()?;
    let real = if real.join("partition").exists() {
        real.parent()?.to_path_buf()
    } else {
        real
    };
    Some(real.file_name()?.to_string_lossy().into_owned())
}

/// The kernel's name for a block device node (`/dev/loop3` -> `loop3`), by device number.
pub fn kernel_name(device: &Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let (maj, min) = crate::sys::split_dev(std::fs::metadata(device).ok()?.rdev());
    let link = std::fs::read_link(format!("/sys/dev/block/{maj}:{min}")).ok()?;
    Some(link.file_name()?.to_string_lossy().into_owned())
}

/// The block devices under a directory's filesystem: its device; for a filesystem whose device
/// number is not a block device's (btrfs), the device its mount names and every other device
/// the kernel lists beside it (`/sys/fs/TYPE/UUID/devices`). None for tmpfs, FUSE or NFS.
pub fn devices_of_dir(dir: &Path) -> Vec<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let Ok(meta) = std::fs::metadata(dir) else {
        return Vec::new();
    };
    let (maj, min) = crate::sys::split_dev(meta.dev());
    if let Ok(link) = std::fs::read_link(format!("/sys/dev/block/{maj}:{min}")) {
        return link
            .file_name()
            .map(|n| vec![PathBuf::from("/dev").join(n)])
            .unwrap_or_default();
    }
    // The mount by its device number, else (a btrfs subvolume's number is not its mount's) the
    // mount that holds the directory.
    let mounts = crate::sys::mounts::mounts();
    let by_number = mounts.iter().rev().find(|m| m.dev == (maj, min)).cloned();
    let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let Some(source) = by_number
        .or_else(|| crate::sys::mounts::containing(&dir))
        .map(|m| PathBuf::from(&m.source))
        .filter(|s| s.starts_with("/dev/"))
    else {
        return Vec::new();
    };
    let Some(name) = kernel_name(&source) else {
        return Vec::new();
    };
    beside(&name).unwrap_or_else(|| vec![source])
}

/// The devices a multi-device filesystem lists with `name` among them (`/sys/fs/*/*/devices`).
fn beside(name: &str) -> Option<Vec<PathBuf>> {
    // (cgroup's tree is large and lists no block devices.)
    let types = std::fs::read_dir("/sys/fs").ok()?.flatten();
    for fs in types.filter(|t| t.file_name() != "cgroup") {
        for one in std::fs::read_dir(fs.path()).into_iter().flatten().flatten() {
            let list = one.path().join("devices");
            let Ok(devs) = std::fs::read_dir(&list) else {
                continue;
            };
            let names: Vec<String> = devs
                .flatten()
                .map(|d| d.file_name().to_string_lossy().into_owned())
                .collect();
            if names.iter().any(|n| n == name) {
                return Some(
                    names
                        .iter()
                        .map(|n| PathBuf::from("/dev").join(n))
                        .collect(),
                );
            }
        }
    }
    None
}

/// A loop device's backing file, when it is one.
fn backing_file(name: &str) -> Option<PathBuf> {
    let text = std::fs::read_to_string(format!("/sys/block/{name}/loop/backing_file")).ok()?;
    Some(PathBuf::from(text.trim_end()))
}

/// The devices under `top` (kernel names, in `role`), then under each loop device the disk that
/// holds its backing file; each device once. A loop device whose image lies on a filesystem
/// `memory` says lives in memory (by its kernel type) is a memory-backed one.
pub fn stack(tops: &[(PathBuf, Role)], memory: &dyn Fn(&str) -> bool) -> Vec<StackDevice> {
    let mut out: Vec<StackDevice> = Vec::new();
    let push = |name: String, role: Role, out: &mut Vec<StackDevice>| {
        if !out.iter().any(|d| d.name == name) {
            out.push(StackDevice {
                name,
                role,
                medium: Medium::Disk,
            });
        }
    };
    for (dev, role) in tops {
        if let Some(name) = kernel_name(dev) {
            push(name, *role, &mut out);
        }
    }
    for i in 0..out.len() {
        let Some(file) = backing_file(&out[i].name) else {
            continue;
        };
        use std::os::unix::fs::MetadataExt;
        let Ok(meta) = std::fs::metadata(&file) else {
            continue;
        };
        let (maj, min) = crate::sys::split_dev(meta.dev());
        match disk_of(maj, min) {
            Some(disk) => push(disk, Role::Backing, &mut out),
            None => {
                let fs = crate::sys::mounts::containing(&file).map(|m| m.fstype);
                if fs.is_some_and(|f| memory(&f)) {
                    out[i].medium = Medium::Memory;
                }
            }
        }
    }
    out
}

/// The processes and kernel threads that do a filesystem's work, by name (from its `Caps`).
#[derive(Debug, Clone, Copy, Default)]
pub struct FsThreads {
    /// Command names of the user-space processes that serve it (zfs-fuse).
    pub daemons: &'static [&'static str],
    /// Words in the names of its kernel threads (`jbd2/`, `btrfs-`, `xfs`): a kernel thread whose
    /// name holds one (a kworker names the workqueue it serves) counts as the filesystem's.
    pub kernel: &'static [&'static str],
    /// How the names of its kernel code begin (`ext4_`, `jbd2_`): a profile's kernel time in
    /// them is the filesystem's own.
    pub code: &'static [&'static str],
}

/// Everything the frame watches for one phase.
#[derive(Debug, Clone, Default)]
pub struct Watch {
    pub devices: Vec<StackDevice>,
    pub threads: FsThreads,
    /// The run's other ranks on this host, when a launcher started several: processes of the
    /// same name as this one with the same parent (the launcher's daemon). They are the run's
    /// own, never other processes.
    pub ranks: Option<Siblings>,
}

/// This process's parent and command name, which its sibling ranks share.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Siblings {
    pub parent: u32,
    pub comm: String,
}

impl Siblings {
    /// This process's, read from /proc/self/stat.
    pub fn of_self() -> Option<Siblings> {
        let (comm, cpu) =
            procfs::parse_task_stat(&std::fs::read_to_string("/proc/self/stat").ok()?)?;
        Some(Siblings {
            parent: cpu.ppid,
            comm,
        })
    }
}

/// Whose a process is, for the phase's CPU accounts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owner {
    Fsbench,
    /// Another rank of the run, on this host.
    Rank,
    Daemon,
    FsKernel,
    /// Another kernel thread: it works for whoever asked it, in a phase mostly its own I/O.
    Kernel,
    Other,
}

impl Watch {
    pub fn owner(&self, pid: u32, comm: &str, cpu: &TaskCpu) -> Owner {
        let kernel = cpu.kernel_thread(pid);
        let rank = |s: &Siblings| cpu.ppid == s.parent && comm == s.comm;
        if pid == std::process::id() {
            Owner::Fsbench
        } else if !kernel && self.ranks.as_ref().is_some_and(rank) {
            Owner::Rank
        } else if !kernel && self.threads.daemons.contains(&comm) {
            Owner::Daemon
        } else if kernel && self.threads.kernel.iter().any(|k| comm.contains(k)) {
            Owner::FsKernel
        } else if kernel {
            Owner::Kernel
        } else {
            Owner::Other
        }
    }
}

/// One reading of the machine, the devices and every process.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub at: Instant,
    pub machine: Option<MachineCpu>,
    pub pressure: Option<Pressure>,
    pub devices: Vec<Option<DiskLine>>,
    /// fsbench's whole process (every thread, ended ones too): (user, system) nanoseconds.
    pub own_ns: (u64, u64),
    /// fsbench's whole process's storage I/O.
    pub own_io: Option<TaskIo>,
    /// Every process (CPU in ticks, storage I/O). Only at the phase's ends.
    pub processes: Vec<Task>,
    /// When `processes` were read (an earlier phase's walk, at a phase's start); None: this
    /// reading walked nothing.
    pub walked: Option<Instant>,
}

/// Whether a reading scans every process (a few milliseconds), and when: at a phase's start
/// before the figures, at its end after them, so the scan's own CPU is not the phase's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scan {
    No,
    First,
    Last,
}

/// A walk over every process (a few hundred /proc files) costs the first calls after it: phases
/// back to back share one. A phase's end walks only when the walk it started from is at least
/// this old (per-process CPU comes in whole ticks of 10 ms: over 0.1 s, one tick is 0.1 of a
/// core), and a phase that starts within this of the last walk starts from it (what a process did
/// in between counts in this phase). So an iozone matrix of cells of a few milliseconds walks
/// once per 0.1 s, after a cell's tests, not before each.
pub const WALK_EVERY: std::time::Duration = std::time::Duration::from_millis(100);

/// The last walk over every process, kept for the phase after it.
#[derive(Debug, Clone)]
pub struct Walk {
    at: Instant,
    tasks: Vec<Task>,
}

impl Snapshot {
    /// Reads everything (/proc/stat, /proc/pressure, /proc/diskstats when a device is watched,
    /// this process's CPU and I/O), and every process when `scan` says.
    pub fn take(watch: &Watch, scan: Scan) -> Snapshot {
        let walk = || (procfs::processes(), Some(Instant::now()));
        let (first, walked) = if scan == Scan::First {
            walk()
        } else {
            (Vec::new(), None)
        };
        let disks = if watch.devices.is_empty() {
            String::new()
        } else {
            procfs::diskstats()
        };
        let mut s = Snapshot {
            at: Instant::now(),
            machine: procfs::machine_cpu(),
            pressure: procfs::pressure(),
            devices: watch
                .devices
                .iter()
                .map(|d| procfs::parse_disk_line(&disks, &d.name))
                .collect(),
            own_ns: crate::sys::process_cpu_ns(),
            own_io: procfs::task_io("self"),
            processes: first,
            walked,
        };
        if scan == Scan::Last {
            (s.processes, s.walked) = walk();
        }
        s
    }

    /// A phase's first reading: the last walk when it is at most `WALK_EVERY` old, else a new one.
    pub fn first(watch: &Watch, last: Option<Walk>) -> Snapshot {
        match last.filter(|w| w.at.elapsed() <= WALK_EVERY) {
            Some(w) => Snapshot {
                processes: w.tasks,
                walked: Some(w.at),
                ..Snapshot::take(watch, Scan::No)
            },
            None => Snapshot::take(watch, Scan::First),
        }
    }

    /// A phase's reading when its workers ended (`first`: its first reading): it walks every
    /// process when the walk it started from is at least `WALK_EVERY` old.
    pub fn last(watch: &Watch, first: &Snapshot) -> Snapshot {
        let due = first.walked.is_none_or(|w| w.elapsed() >= WALK_EVERY);
        Snapshot::take(watch, if due { Scan::Last } else { Scan::No })
    }

    /// Its walk over every process, if it has one.
    pub fn into_walk(self) -> Option<Walk> {
        Some(Walk {
            at: self.walked?,
            tasks: self.processes,
        })
    }

    /// The window between two readings' walks, seconds (None when either walked nothing).
    pub fn walk_s(&self, end: &Snapshot) -> Option<f64> {
        let (a, b) = (self.walked?, end.walked?);
        Some(b.saturating_duration_since(a).as_secs_f64().max(1e-6))
    }
}

/// A worker thread's own figures at one moment: CPU (getrusage RUSAGE_THREAD, nanoseconds) and
/// its scheduler figures.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ThreadSample {
    pub at: Option<Instant>,
    pub user_ns: u64,
    pub sys_ns: u64,
    pub sched: TaskSched,
}

impl ThreadSample {
    /// The calling thread's figures: one getrusage call and one read of its schedstat (the
    /// start line's reading comes right before the first timed call).
    pub fn now() -> ThreadSample {
        let u = crate::sys::thread_usage();
        let text = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap_or_default();
        let (on_cpu_ns, runq_ns) = procfs::parse_schedstat(&text).unwrap_or_default();
        ThreadSample {
            at: Some(Instant::now()),
            user_ns: u.user_ns,
            sys_ns: u.sys_ns,
            sched: TaskSched {
                on_cpu_ns,
                runq_ns,
                voluntary: u.voluntary,
                involuntary: u.involuntary,
            },
        }
    }
}

/// One worker's figures as the phase saw them.
#[derive(Debug, Clone, Copy, Default)]
pub struct WorkerThread {
    pub tid: u32,
    /// At its first start line (or, when it never reached one, when it began).
    pub start: Option<ThreadSample>,
    pub end: Option<ThreadSample>,
    /// Whether it crossed a start line: a worker that crosses several (a whole iozone cell,
    /// one per test) counts from the first, and pays for the reading once, not before each
    /// test's clock.
    pub crossed: bool,
}

/// Told, on each worker's own thread, when it begins, crosses the start line and ends (the
/// profiler attaches to the thread and samples it between the last two).
pub trait ThreadWatch: Send + Sync {
    fn began(&self, index: usize, tid: u32);
    fn started(&self, index: usize);
    fn ended(&self, index: usize);
}

/// Where the workers of a phase leave their thread ids and figures (the pool's; the sampler
/// reads the ids while they run).
#[derive(Default)]
pub struct Board {
    threads: Mutex<Vec<WorkerThread>>,
    watch: std::sync::OnceLock<std::sync::Arc<dyn ThreadWatch>>,
}

impl std::fmt::Debug for Board {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Board")
            .field("threads", &self.threads)
            .finish_non_exhaustive()
    }
}

impl Board {
    pub fn new(workers: usize) -> Board {
        Board {
            threads: Mutex::new(vec![WorkerThread::default(); workers]),
            watch: Default::default(),
        }
    }

    /// Tells `w` of every worker from now on (once per board).
    pub fn watch(&self, w: std::sync::Arc<dyn ThreadWatch>) {
        let _ = self.watch.set(w);
    }

    fn with<R>(&self, f: impl FnOnce(&mut Vec<WorkerThread>) -> R) -> R {
        f(&mut self.threads.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Worker `index` began, on the calling thread: its figures count from here until it
    /// crosses the start line.
    pub fn begin(&self, index: usize) {
        let tid = crate::sys::gettid();
        let s = ThreadSample::now();
        self.with(|t| {
            if let Some(w) = t.get_mut(index) {
                w.tid = tid;
                w.start = Some(s);
            }
        });
        if let Some(w) = self.watch.get() {
            w.began(index, tid);
        }
    }

    /// Worker `index` crossed the start line (called on its thread): its figures count from
    /// here, the first time (a later crossing reads nothing).
    pub fn started(&self, index: usize) {
        let first = self.with(|t| {
            t.get_mut(index)
                .is_some_and(|w| !std::mem::replace(&mut w.crossed, true))
        });
        if !first {
            return;
        }
        let s = ThreadSample::now();
        self.with(|t| {
            if let Some(w) = t.get_mut(index) {
                w.start = Some(s);
            }
        });
        if let Some(w) = self.watch.get() {
            w.started(index);
        }
    }

    /// Worker `index` moved to the calling thread, a thread of its own that does all its work
    /// from here (`WorkerCtx::on_own_thread`): its id and figures are this thread's, from its
    /// start line (nothing is read here: a reading on a new thread costs its first calls).
    pub fn moved(&self, index: usize) {
        let tid = crate::sys::gettid();
        self.with(|t| {
            if let Some(w) = t.get_mut(index) {
                w.tid = tid;
                w.start = None;
            }
        });
    }

    /// Worker `index` ended (called on its thread, before it exits). The first call counts: a
    /// worker that moved to a thread of its own ended there, before the pool's thread says so.
    pub fn ended(&self, index: usize) {
        if self.with(|t| t.get(index).is_some_and(|w| w.end.is_some())) {
            return;
        }
        if let Some(w) = self.watch.get() {
            w.ended(index);
        }
        let s = ThreadSample::now();
        self.with(|t| {
            if let Some(w) = t.get_mut(index) {
                w.end = Some(s);
            }
        });
    }

    pub fn tids(&self) -> Vec<u32> {
        self.with(|t| t.iter().map(|w| w.tid).filter(|&x| x != 0).collect())
    }

    /// The workers' figures so far, left in place (the live endpoint's limiter so far).
    pub fn peek(&self) -> Vec<WorkerThread> {
        self.with(|t| t.clone())
    }

    pub fn take(&self) -> Vec<WorkerThread> {
        self.with(std::mem::take)
    }
}
