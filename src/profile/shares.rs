//! Where the time went, from a profile's folded stacks: the shares of fsbench's own code, the
//! libraries, the kernel and the filesystem's daemons, and the kernel functions that took most.
//! Pure; kept on the record so the report's table needs no profile file.

use serde::{Deserialize, Serialize};

use super::folded::{Folded, Kind, FSBENCH, KERNEL, UNKNOWN};
use crate::metrics::limiter::KernelSplit;

/// A kernel function and its share of the profile (0 to 1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionShare {
    pub function: String,
    pub share: f64,
}

/// Shares of a profile's samples (on the CPU) or blocked time (off it), 0 to 1 each; the first
/// five add up to 1.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Shares {
    /// fsbench's threads in fsbench's own binary (its code, Rust's std, what it inlined).
    pub fsbench: f64,
    /// fsbench's threads in shared libraries (`[libc.so.6]`).
    pub libraries: f64,
    /// fsbench's threads in the kernel (system calls, the filesystem, page faults).
    pub kernel: f64,
    /// The filesystem's daemons (zfs-fuse), user space and kernel alike.
    pub daemon: f64,
    /// Frames nothing could name.
    pub unknown: f64,
    /// The kernel functions that took most, by share: on the CPU the function a sample was in
    /// (its self time); off the CPU the deepest function that is not the scheduler's (where the
    /// thread waited).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub top_kernel: Vec<FunctionShare>,
    /// On the CPU: where fsbench's threads' kernel time went (the filesystem's code, the block
    /// layer, drivers, copies, the rest), as shares of their kernel samples.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub split: Option<KernelSplit>,
}

/// How many kernel functions a record keeps.
pub const TOP: usize = 12;

/// Whether a kernel frame is the scheduler's own (`schedule`, `__schedule`, `io_schedule`,
/// `schedule_timeout`...), which every off-CPU stack ends in.
fn scheduler(name: &str) -> bool {
    name.contains("schedule") || name == "__switch_to" || name == "finish_task_switch"
}

/// The kernel function a stack is charged to, if it is in the kernel.
fn kernel_function(frames: &[&str], kind: Kind) -> Option<String> {
    let names = frames
        .iter()
        .rev()
        .take_while(|f| f.ends_with(KERNEL))
        .map(|f| f.trim_end_matches(KERNEL));
    let mut names = names.peekable();
    let leaf = *names.peek()?;
    Some(match kind {
        Kind::OnCpu => leaf.to_string(),
        Kind::OffCpu => names
            .clone()
            .find(|n| !scheduler(n))
            .unwrap_or(leaf)
            .to_string(),
    })
}

/// The parts of the kernel a sample's time is charged to.
#[derive(Clone, Copy)]
enum Part {
    Filesystem,
    Block,
    Driver,
    Copies,
}

/// How the kernel's functions of each part are named (besides the filesystem's own, which its
/// `FsThreads::code` gives).
const BLOCK: &[&str] = &[
    "blk_",
    "__blk",
    "bio_",
    "__bio",
    "submit_bio",
    "blkdev_",
    "__blkdev",
    "bdev_",
    "dd_",
    "bfq_",
    "kyber_",
    "elv_",
    "__elv",
];
const DRIVER: &[&str] = &[
    "loop_",
    "lo_",
    "virtblk",
    "virtqueue",
    "vring_",
    "virtio",
    "nvme_",
    "scsi_",
    "ata_",
    "ahci_",
];
const COPIES: &[&str] = &[
    "copy_user",
    "copy_to_user",
    "copy_from_user",
    "_copy_to_iter",
    "_copy_from_iter",
    "copy_page",
    "memcpy",
    "memmove",
    "rep_movs",
    "copy_mc",
    "clear_page",
];

/// The part of the kernel a sample's frames belong to: the innermost frame that names one.
fn part_of(kernel: &[&str], code: &[&str]) -> Option<Part> {
    kernel.iter().rev().find_map(|f| {
        let starts = |words: &[&str]| words.iter().any(|w| f.starts_with(w));
        if COPIES.iter().any(|w| f.contains(w)) {
            Some(Part::Copies)
        } else if starts(code) {
            Some(Part::Filesystem)
        } else if starts(BLOCK) {
            Some(Part::Block)
        } else if starts(DRIVER) {
            Some(Part::Driver)
        } else {
            None
        }
    })
}

/// Where fsbench's threads' kernel samples went, by part (None without any).
fn split(f: &Folded, code: &[&str]) -> Option<KernelSplit> {
    let mut s = KernelSplit::default();
    let mut total = 0.0;
    for (stack, n) in f.iter() {
        let frames: Vec<&str> = stack.split(';').collect();
        if frames.first() != Some(&FSBENCH) || !frames.last().is_some_and(|l| l.ends_with(KERNEL)) {
            continue;
        }
        let kernel: Vec<&str> = frames
            .iter()
            .filter(|x| x.ends_with(KERNEL))
            .map(|x| x.trim_end_matches(KERNEL))
            .collect();
        let n = n as f64;
        total += n;
        *match part_of(&kernel, code) {
            Some(Part::Filesystem) => &mut s.filesystem,
            Some(Part::Block) => &mut s.block,
            Some(Part::Driver) => &mut s.driver,
            Some(Part::Copies) => &mut s.copies,
            None => &mut s.other,
        } += n;
    }
    if total == 0.0 {
        return None;
    }
    for x in [
        &mut s.filesystem,
        &mut s.block,
        &mut s.driver,
        &mut s.copies,
        &mut s.other,
    ] {
        *x /= total;
    }
    Some(s)
}

/// The shares of a profile; `code`: how the filesystem's kernel functions are named.
pub fn shares(f: &Folded, kind: Kind, code: &[&str]) -> Shares {
    let total = f.total() as f64;
    let mut s = Shares::default();
    if total == 0.0 {
        return s;
    }
    let mut by_function: std::collections::HashMap<String, u64> = Default::default();
    for (stack, n) in f.iter() {
        let frames: Vec<&str> = stack.split(';').collect();
        let share = n as f64 / total;
        let leaf = frames.last().copied().unwrap_or(UNKNOWN);
        if frames.first() != Some(&FSBENCH) {
            s.daemon += share;
        } else if leaf.ends_with(KERNEL) {
            s.kernel += share;
        } else if leaf == UNKNOWN {
            s.unknown += share;
        } else if leaf.starts_with('[') {
            s.libraries += share;
        } else {
            s.fsbench += share;
        }
        if let Some(func) = kernel_function(&frames, kind) {
            *by_function.entry(func).or_insert(0) += n;
        }
    }
    let mut top: Vec<FunctionShare> = by_function
        .into_iter()
        .map(|(function, n)| FunctionShare {
            function,
            share: n as f64 / total,
        })
        .collect();
    top.sort_by(|a, b| {
        b.share
            .total_cmp(&a.share)
            .then_with(|| a.function.cmp(&b.function))
    });
    top.truncate(TOP);
    s.top_kernel = top;
    if kind == Kind::OnCpu {
        s.split = split(f, code);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folded(lines: &str) -> Folded {
        Folded::parse(lines).0
    }

    #[test]
    fn samples_are_charged_to_fsbench_its_libraries_the_kernel_or_the_daemon() {
        let f = folded(
            "fsbench;fsbench::io::drive::run 2\n\
             fsbench;fsbench::io::drive::run;[libc.so.6] 1\n\
             fsbench;[libc.so.6];entry_SYSCALL_64_[k];btrfs_file_write_iter_[k];memcpy_[k] 4\n\
             fsbench;[libc.so.6];entry_SYSCALL_64_[k];shmem_write_begin_[k] 1\n\
             zfs-fuse;[libc.so.6];zio_execute 1\n\
             fsbench;[unknown] 1\n",
        );
        let s = shares(&f, Kind::OnCpu, &["btrfs_"]);
        let got = [s.fsbench, s.libraries, s.kernel, s.daemon, s.unknown];
        for (g, want) in got.iter().zip([0.2, 0.1, 0.5, 0.1, 0.1]) {
            assert!((g - want).abs() < 1e-9, "{got:?}");
        }
        assert_eq!(s.top_kernel[0].function, "memcpy");
        assert!((s.top_kernel[0].share - 0.4).abs() < 1e-9);
        assert_eq!(s.top_kernel[1].function, "shmem_write_begin");
        assert_eq!(s.top_kernel.len(), 2);
        // Of the 5 kernel samples: 4 in memcpy under btrfs (copies, the innermost that names
        // a part), 1 in shmem (not the filesystem named here: the rest).
        let k = s.split.unwrap();
        assert!(
            (k.copies - 0.8).abs() < 1e-9 && (k.other - 0.2).abs() < 1e-9,
            "{k:?}"
        );
        assert_eq!(k.filesystem, 0.0);
    }

    #[test]
    fn kernel_time_is_split_by_the_innermost_frame_that_names_a_part() {
        let f = folded(
            "fsbench;x;ext4_file_read_iter_[k];iomap_dio_rw_[k];submit_bio_[k];blk_mq_submit_bio_[k];_raw_spin_lock_[k] 2\n\
             fsbench;x;ext4_file_read_iter_[k];iomap_dio_rw_[k];submit_bio_[k];loop_queue_rq_[k] 1\n\
             fsbench;x;ext4_map_blocks_[k] 1\n\
             fsbench;x;entry_SYSCALL_64_[k] 1\n",
        );
        let k = shares(&f, Kind::OnCpu, &["ext4_"]).split.unwrap();
        let got = [k.filesystem, k.block, k.driver, k.copies, k.other];
        for (g, want) in got.iter().zip([0.2, 0.4, 0.2, 0.0, 0.2]) {
            assert!((g - want).abs() < 1e-9, "{got:?}");
        }
        assert!(shares(&f, Kind::OffCpu, &["ext4_"]).split.is_none());
    }

    #[test]
    fn off_cpu_time_is_charged_to_where_the_thread_waited_not_the_scheduler() {
        let f = folded(
            "fsbench;x;ext4_sync_file_[k];jbd2_log_wait_commit_[k];schedule_[k];__schedule_[k] 900\n\
             fsbench;x;folio_wait_bit_common_[k];io_schedule_[k];schedule_[k];__schedule_[k] 100\n",
        );
        let s = shares(&f, Kind::OffCpu, &[]);
        assert_eq!(s.top_kernel[0].function, "jbd2_log_wait_commit");
        assert!((s.top_kernel[0].share - 0.9).abs() < 1e-9);
        assert_eq!(s.top_kernel[1].function, "folio_wait_bit_common");
        assert_eq!(
            shares(&Folded::default(), Kind::OnCpu, &[]),
            Shares::default()
        );
    }
}
