//! fsbench's fault device: a one-file FUSE filesystem, served by threads of this process, whose
//! file `disk` reads and writes an image and fails on command. A loop device sits on `disk`, the
//! filesystem under test on the loop device, so the filesystem sees a disk that fails.
//!
//! What fails is set in [`Faults`]: every write (and flush), a write budget in bytes after which
//! every write fails, reads of a byte range. The same settings can be changed from a shell through
//! the control directory (`fault-I.ctl/` beside the image): the files `fail_writes` (present: writes
//! and flushes fail), `write_budget` (bytes still allowed), `fail_reads` ("START END" in bytes),
//! read every 50 ms when their contents change.
//!
//! Reads and writes reach this process uncached (FOPEN_DIRECT_IO), so what the loop device asks for
//! is what the image gives; a flush the filesystem issues is an fdatasync of the image.

use crate::metrics::name as metric;
use crate::plan::units::Span;
use std::ffi::OsStr;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use fuser::{
    Config, Errno, FileAttr, FileHandle, FileType, Filesystem, FopenFlags, INodeNo, LockOwner,
    MountOption, OpenFlags, ReplyAttr, ReplyData, ReplyDirectory, ReplyEmpty, ReplyEntry,
    ReplyOpen, ReplyWrite, Request, WriteFlags,
};

/// The file the loop device sits on, inside the fault device's mount point.
pub const DISK: &str = "disk";

/// What fails, and what was asked of the device. Shared by the FUSE threads and fsbench.
#[derive(Debug, Default)]
pub struct Faults {
    fail_writes: AtomicBool,
    /// Bytes still allowed before every write fails; negative: no budget.
    budget: AtomicI64,
    fail_reads: Mutex<Option<Span>>,
    pub writes: AtomicU64,
    pub written_bytes: AtomicU64,
    pub failed_writes: AtomicU64,
    pub failed_reads: AtomicU64,
    pub flushes: AtomicU64,
}

impl Faults {
    pub fn new() -> Faults {
        Faults {
            budget: AtomicI64::new(-1),
            ..Default::default()
        }
    }

    /// Every write and flush fails with EIO (true), or none does (false; the budget is cleared).
    pub fn set_fail_writes(&self, on: bool) {
        self.fail_writes.store(on, Ordering::SeqCst);
        if !on {
            self.budget.store(-1, Ordering::SeqCst);
        }
    }

    /// After `bytes` more bytes are written, every write and flush fails with EIO.
    pub fn set_write_budget(&self, bytes: u64) {
        self.budget
            .store(bytes.min(i64::MAX as u64) as i64, Ordering::SeqCst);
    }

    /// Reads that touch [start, end) fail with EIO; None: reads succeed.
    pub fn set_fail_reads(&self, range: Option<Span>) {
        *self.fail_reads.lock().unwrap_or_else(|p| p.into_inner()) = range;
    }

    /// Whether a write of `len` bytes fails (and, when it does not, it is spent from the budget).
    fn write_fails(&self, len: u64) -> bool {
        if self.fail_writes.load(Ordering::SeqCst) {
            return true;
        }
        // One atomic step: two FUSE threads must not both spend the last bytes (and take the
        // budget below zero, which reads as "no budget").
        let mut fails = false;
        let _ = self
            .budget
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |left| {
                if left < 0 {
                    return None;
                }
                fails = (left as u64) < len;
                Some(if fails { 0 } else { left - len as i64 })
            });
        fails
    }

    fn flush_fails(&self) -> bool {
        self.fail_writes.load(Ordering::SeqCst) || self.budget.load(Ordering::SeqCst) == 0
    }

    fn read_fails(&self, offset: u64, len: u64) -> bool {
        match *self.fail_reads.lock().unwrap_or_else(|p| p.into_inner()) {
            Some(span) => span.touches(offset, len),
            None => false,
        }
    }

    /// The counters, for a record: writes, bytes written, failed writes and reads, flushes.
    pub fn counts(&self) -> [(&'static str, u64); 5] {
        let g = |a: &AtomicU64| a.load(Ordering::SeqCst);
        [
            (metric::DEVICE_WRITES, g(&self.writes)),
            (metric::DEVICE_WRITTEN_BYTES, g(&self.written_bytes)),
            (metric::DEVICE_FAILED_WRITES, g(&self.failed_writes)),
            (metric::DEVICE_FAILED_READS, g(&self.failed_reads)),
            (metric::DEVICE_FLUSHES, g(&self.flushes)),
        ]
    }
}

struct Disk {
    image: File,
    size: u64,
    faults: Arc<Faults>,
}

const TTL: Duration = Duration::from_secs(1);

fn attr(ino: u64, size: u64) -> FileAttr {
    let dir = ino == 1;
    FileAttr {
        ino: INodeNo(ino),
        size,
        blocks: size.div_ceil(512),
        atime: SystemTime::UNIX_EPOCH,
        mtime: SystemTime::UNIX_EPOCH,
        ctime: SystemTime::UNIX_EPOCH,
        crtime: SystemTime::UNIX_EPOCH,
        kind: if dir {
            FileType::Directory
        } else {
            FileType::RegularFile
        },
        perm: if dir { 0o755 } else { 0o600 },
        nlink: if dir { 2 } else { 1 },
        uid: 0,
        gid: 0,
        rdev: 0,
        blksize: 4096,
        flags: 0,
    }
}

impl Filesystem for Disk {
    fn lookup(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        if u64::from(parent) == 1 && name == DISK {
            reply.entry(&TTL, &attr(2, self.size), fuser::Generation(0));
        } else {
            reply.error(Errno::ENOENT);
        }
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, _fh: Option<FileHandle>, reply: ReplyAttr) {
        match u64::from(ino) {
            1 => reply.attr(&TTL, &attr(1, 0)),
            2 => reply.attr(&TTL, &attr(2, self.size)),
            _ => reply.error(Errno::ENOENT),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn setattr(
        &self,
        _req: &Request,
        ino: INodeNo,
        _mode: Option<u32>,
        _uid: Option<u32>,
        _gid: Option<u32>,
        _size: Option<u64>,
        _atime: Option<fuser::TimeOrNow>,
        _mtime: Option<fuser::TimeOrNow>,
        _ctime: Option<SystemTime>,
        _fh: Option<FileHandle>,
        _crtime: Option<SystemTime>,
        _chgtime: Option<SystemTime>,
        _bkuptime: Option<SystemTime>,
        _flags: Option<fuser::BsdFileFlags>,
        reply: ReplyAttr,
    ) {
        // The disk's size is fixed; anything else asked is accepted and ignored.
        self.getattr(_req, ino, None, reply)
    }

    fn open(&self, _req: &Request, _ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        reply.opened(FileHandle(0), FopenFlags::FOPEN_DIRECT_IO);
    }

    #[allow(clippy::too_many_arguments)]
    fn read(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        size: u32,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyData,
    ) {
        if self.faults.read_fails(offset, size as u64) {
            self.faults.failed_reads.fetch_add(1, Ordering::SeqCst);
            return reply.error(Errno::EIO);
        }
        let len = (size as u64).min(self.size.saturating_sub(offset)) as usize;
        let mut buf = vec![0u8; len];
        let mut done = 0;
        while done < len {
            match self.image.read_at(&mut buf[done..], offset + done as u64) {
                Ok(0) => break,
                Ok(n) => done += n,
                Err(e) => return reply.error(Errno::from(e)),
            }
        }
        reply.data(&buf[..done]);
    }

    #[allow(clippy::too_many_arguments)]
    fn write(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        data: &[u8],
        _write_flags: WriteFlags,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        let f = &self.faults;
        f.writes.fetch_add(1, Ordering::SeqCst);
        if offset + data.len() as u64 > self.size {
            return reply.error(Errno::ENOSPC);
        }
        if f.write_fails(data.len() as u64) {
            f.failed_writes.fetch_add(1, Ordering::SeqCst);
            return reply.error(Errno::EIO);
        }
        match self.image.write_all_at(data, offset) {
            Ok(()) => {
                f.written_bytes
                    .fetch_add(data.len() as u64, Ordering::SeqCst);
                reply.written(data.len() as u32)
            }
            Err(e) => reply.error(Errno::from(e)),
        }
    }

    fn flush(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _lock_owner: LockOwner,
        reply: ReplyEmpty,
    ) {
        reply.ok();
    }

    fn fsync(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _datasync: bool,
        reply: ReplyEmpty,
    ) {
        self.faults.flushes.fetch_add(1, Ordering::SeqCst);
        if self.faults.flush_fails() {
            return reply.error(Errno::EIO);
        }
        match self.image.sync_data() {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(Errno::from(e)),
        }
    }

    fn readdir(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        mut reply: ReplyDirectory,
    ) {
        if u64::from(ino) != 1 {
            return reply.error(Errno::ENOENT);
        }
        let entries = [
            (1, FileType::Directory, "."),
            (1, FileType::Directory, ".."),
            (2, FileType::RegularFile, DISK),
        ];
        for (i, (ino, kind, name)) in entries.iter().enumerate().skip(offset as usize) {
            if reply.add(INodeNo(*ino), (i + 1) as u64, *kind, name) {
                break;
            }
        }
        reply.ok();
    }
}

/// A running fault device. Dropping it unmounts it (after the loop device on it is detached).
pub struct FaultDevice {
    session: Option<fuser::BackgroundSession>,
    pub faults: Arc<Faults>,
    /// The file to attach the loop device to.
    pub disk: PathBuf,
    pub mountpoint: PathBuf,
    pub control: PathBuf,
    stop_poll: Arc<AtomicBool>,
}

impl FaultDevice {
    /// Serves `image` as `mountpoint/disk`; `control` (made afresh) takes the control files.
    pub fn start(image: &Path, mountpoint: &Path, control: &Path) -> std::io::Result<FaultDevice> {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(image)?;
        let size = file.metadata()?.len();
        let faults = Arc::new(Faults::new());
        let disk = Disk {
            image: file,
            size,
            faults: faults.clone(),
        };
        let mut config = Config::default();
        config.mount_options = vec![
            MountOption::FSName("fsbench-faultdev".into()),
            MountOption::Subtype("fsbench".into()),
        ];
        config.n_threads = Some(2);
        let session = fuser::spawn_mount(disk, mountpoint, &config)?;
        super::workdir::mkdir_fresh(control)?;
        let stop_poll = Arc::new(AtomicBool::new(false));
        poll_controls(control.to_path_buf(), faults.clone(), stop_poll.clone());
        Ok(FaultDevice {
            session: Some(session),
            faults,
            disk: mountpoint.join(DISK),
            mountpoint: mountpoint.to_path_buf(),
            control: control.to_path_buf(),
            stop_poll,
        })
    }
}

impl Drop for FaultDevice {
    fn drop(&mut self) {
        self.stop_poll.store(true, Ordering::SeqCst);
        if let Some(s) = self.session.take() {
            // Already unmounted by teardown (umount of the mount point) is fine.
            let _ = s.umount_and_join();
        }
        let _ = std::fs::remove_dir_all(&self.control);
    }
}

/// Reads the control files every 50 ms and applies what changed.
fn poll_controls(dir: PathBuf, faults: Arc<Faults>, stop: Arc<AtomicBool>) {
    let spawned = std::thread::Builder::new()
        .name("fsbench-faultctl".into())
        .spawn(move || {
            let mut seen: [Option<String>; 3] = [None, None, None];
            while !stop.load(Ordering::SeqCst) {
                let now = ["fail_writes", "write_budget", "fail_reads"]
                    .map(|n| std::fs::read_to_string(dir.join(n)).ok());
                for (k, v) in now.iter().enumerate() {
                    if *v != seen[k] {
                        apply_control(&faults, k, v.as_deref());
                    }
                }
                seen = now;
                std::thread::sleep(Duration::from_millis(50));
            }
        });
    if let Err(e) = spawned {
        crate::out::eline!("fsbench: warning: fault device control files are not read: {e}");
    }
}

fn apply_control(faults: &Faults, which: usize, value: Option<&str>) {
    match (which, value) {
        (0, v) => faults.set_fail_writes(v.is_some()),
        (1, Some(v)) => match crate::plan::units::parse_size(v.trim()) {
            Ok(n) => faults.set_write_budget(n),
            Err(e) => crate::out::eline!("fsbench: fault device: write_budget: {e}"),
        },
        (1, None) => faults.budget.store(-1, Ordering::SeqCst),
        (2, Some(v)) => {
            let n: Vec<u64> = v
                .split_whitespace()
                .filter_map(|x| crate::plan::units::parse_size(x).ok())
                .collect();
            faults.set_fail_reads(match n[..] {
                [s, e] if s < e => Some(Span::new(s, e)),
                _ => Some(Span::new(0, u64::MAX)),
            })
        }
        (_, _) => faults.set_fail_reads(None),
    }
}

/// How the backing line of a faulty target reads.
pub fn describe(plan: &crate::plan::FaultPlan, disk: &Path) -> String {
    let when = match plan.fail_writes_after {
        Some(n) => format!(
            "every write fails with EIO once {} are written after mounting",
            crate::plan::units::format_bytes(n)
        ),
        None => "failing on command".to_string(),
    };
    let ctl = disk
        .parent()
        .map(|m| format!("{}.ctl", m.display()))
        .unwrap_or_default();
    format!(
        ", behind fsbench's fault device {} ({when}; control files in {ctl})",
        disk.display()
    )
}

/// Why a target cannot sit behind the fault device, if it cannot: it needs one loop image of
/// fsbench's and a run that lasts as long as the device (the device is served by this process).
pub fn refuse(spec: &crate::plan::TargetSpec, on_device: bool, persistent: bool) -> Option<String> {
    spec.fault.as_ref()?;
    let why = if matches!(spec.fs.as_str(), "tmpfs" | "dir") {
        format!("{} has no disk to fail", spec.fs)
    } else if on_device {
        "the fault device serves a loop image fsbench makes; drop --device".to_string()
    } else if persistent {
        "the fault device lives as long as the fsbench process that serves it; use it with compare or audit, not provision".to_string()
    } else if super::layout::members(spec) > 1 || super::layout::zvol(spec) {
        "the fault device serves a single-device target (no raid1, mirror, raidz, devices=N or zvol)".to_string()
    } else if !Path::new("/dev/fuse").exists() {
        "the fault device needs FUSE (/dev/fuse), which this host lacks".to_string()
    } else {
        return None;
    };
    Some(format!("target '{}' is faulty: {why}", spec.label))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_budget_is_spent_then_everything_fails() {
        let f = Faults::new();
        assert!(!f.write_fails(1 << 20));
        f.set_write_budget(8192);
        assert!(!f.write_fails(4096));
        assert!(!f.flush_fails());
        assert!(!f.write_fails(4096));
        assert!(f.write_fails(1));
        assert!(f.flush_fails());
        f.set_fail_writes(false);
        assert!(!f.write_fails(1 << 20));
        assert!(!f.flush_fails());
    }

    #[test]
    fn reads_fail_only_where_they_touch_the_range() {
        let f = Faults::new();
        f.set_fail_reads(Some(Span::new(4096, 8192)));
        assert!(!f.read_fails(0, 4096));
        assert!(f.read_fails(0, 4097));
        assert!(f.read_fails(8191, 10));
        assert!(!f.read_fails(8192, 4096));
        apply_control(&f, 2, Some("1M 2M"));
        assert!(f.read_fails(1 << 20, 1));
        apply_control(&f, 2, None);
        assert!(!f.read_fails(1 << 20, 1));
        apply_control(&f, 1, Some("4k"));
        assert!(f.write_fails(8192));
    }
}
