//! The host as records describe it (kernel, CPU, memory) and the page cache: /proc readers with
//! no `unsafe`, kept in the system layer so that nothing above it reads /proc on its own.

use serde::{Deserialize, Serialize};

/// The machine a study ran on (the manifest's `environment`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Environment {
    pub hostname: String,
    pub kernel: String,
    pub cpu_model: String,
    pub cpus: usize,
    pub mem_total_bytes: u64,
    pub fsbench_version: String,
    /// Which build: the version, the git commit and the cargo features
    /// (`0.1.0 (commit 1a2b3c4d5e6f, features: mpi)`).
    #[serde(default)]
    pub fsbench_build: String,
    /// The host's disks (block devices with a device behind them: no loop, RAM or zram
    /// devices): what a study's figures also depend on (the history's fingerprint).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub disks: Vec<Disk>,
}

/// A disk of the host, as sysfs describes it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Disk {
    pub name: String,
    /// The model the device reports (empty when it reports none, e.g. virtio).
    pub model: String,
    pub size_bytes: u64,
    pub rotational: bool,
    /// The I/O scheduler in use (the bracketed one of queue/scheduler).
    pub scheduler: String,
}

/// The host's disks: /sys/block entries that have a device behind them, by name.
pub fn disks() -> Vec<Disk> {
    let Ok(dir) = std::fs::read_dir("/sys/block") else {
        return Vec::new();
    };
    let mut out: Vec<Disk> = dir
        .flatten()
        .filter(|e| e.path().join("device").exists())
        .map(|e| {
            let p = e.path();
            let read = |f: &str| {
                std::fs::read_to_string(p.join(f))
                    .map(|s| s.trim().to_string())
                    .unwrap_or_default()
            };
            let sched = read("queue/scheduler");
            Disk {
                name: e.file_name().to_string_lossy().into_owned(),
                model: read("device/model"),
                size_bytes: read("size").parse::<u64>().unwrap_or(0) * 512,
                rotational: read("queue/rotational") == "1",
                scheduler: sched
                    .split_whitespace()
                    .find(|w| w.starts_with('['))
                    .map(|w| w.trim_matches(|c| c == '[' || c == ']').to_string())
                    .unwrap_or(sched),
            }
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

impl Environment {
    pub fn probe() -> Environment {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let cpu_model = cpuinfo
            .lines()
            .find(|l| l.starts_with("model name"))
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim().to_string())
            .unwrap_or_else(|| "unknown".into());
        Environment {
            hostname: hostname(),
            kernel: kernel_release(),
            cpu_model,
            cpus: cpus(),
            mem_total_bytes: mem_total_bytes(),
            fsbench_version: env!("CARGO_PKG_VERSION").to_string(),
            fsbench_build: crate::about::version().to_string(),
            disks: disks(),
        }
    }
}

/// The host's name (empty when it cannot be read).
pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// Whether the kernel keeps time by the CPU's time stamp counter (its current clocksource is
/// `tsc`): it then found the counter constant in rate and in step across CPUs.
pub fn clock_is_tsc() -> bool {
    std::fs::read_to_string("/sys/devices/system/clocksource/clocksource0/current_clocksource")
        .is_ok_and(|s| s.trim() == "tsc")
}

/// CPUs this process may use.
pub fn cpus() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

/// CPUs the scheduler may run this process on (its affinity mask; a launcher's binding narrows
/// it), without the cgroup quota `cpus` also counts.
pub fn affinity_cpus() -> Option<usize> {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; sched_getaffinity writes at most its size.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    // SAFETY: `set` was filled by the kernel above.
    (r == 0).then(|| unsafe { libc::CPU_COUNT(&set) }.max(0) as usize)
}

/// The page size (4096 when unknown).
pub fn page_size() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if n > 0 {
        n as u64
    } else {
        4096
    }
}

/// Whether the kernel knows filesystem `name` (/proc/filesystems; the one reader of it).
pub fn kernel_supports(name: &str) -> bool {
    std::fs::read_to_string("/proc/filesystems")
        .map(|t| t.lines().any(|l| l.split_whitespace().last() == Some(name)))
        .unwrap_or(false)
}

pub fn kernel_release() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}

/// MemTotal from /proc/meminfo, in bytes (0 when unknown).
pub fn mem_total_bytes() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("MemTotal:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse::<u64>().ok())
        .map(|kb| kb * 1024)
        .unwrap_or(0)
}

/// The number a line `key` of a /proc status file holds (`Threads:`, `VmHWM:` in kB), the one
/// parser of those files.
pub fn status_field(status: &str, key: &str) -> Option<u64> {
    status
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
}

/// The number of threads of this process (Threads: in /proc/self/status; 0 when unknown).
pub fn threads() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status_field(&status, "Threads:").unwrap_or(0)
}

/// sync(2), then drop the page cache, dentries and inodes. Returns false if the caches could not
/// be dropped (not root), so that the reads that follow are flagged.
pub fn sync_and_drop_caches() -> bool {
    super::sync();
    std::fs::write("/proc/sys/vm/drop_caches", "3\n").is_ok()
}

/// fsbench's peak resident memory so far (VmHWM).
pub fn peak_rss_bytes() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    Some(status_field(&s, "VmHWM:")? * 1024)
}

/// The logical block size of a block device (the unit O_DIRECT transfers must be a multiple of).
pub fn logical_block_size(device: &std::path::Path) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    let (maj, min) = super::split_dev(std::fs::metadata(device).ok()?.rdev());
    let base = format!("/sys/dev/block/{maj}:{min}");
    // A partition's queue is its disk's.
    [
        format!("{base}/queue/logical_block_size"),
        format!("{base}/../queue/logical_block_size"),
    ]
    .iter()
    .find_map(|p| std::fs::read_to_string(p).ok()?.trim().parse().ok())
}
