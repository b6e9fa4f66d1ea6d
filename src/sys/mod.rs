//! The system layer, and the only module allowed `unsafe`: syscall wrappers (host.rs and
//! mounts.rs read /proc without any). Each wrapper names the C call, its contract and its man page.

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::io::AsRawFd;
use std::path::Path;

/// geteuid(2): never fails.
pub fn is_root() -> bool {
    euid() == 0
}

/// geteuid(2): the effective user id; never fails.
pub fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail (geteuid(2)).
    unsafe { libc::geteuid() }
}

/// Space and inode figures of a mounted filesystem, from statvfs(3).
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct FsStat {
    pub block_size: u64,
    pub blocks: u64,
    pub blocks_free: u64,
    pub blocks_avail: u64,
    pub inodes: u64,
    pub inodes_free: u64,
}

/// statvfs(3) on `path`.
// The field types differ between architectures (u32 on some 32-bit targets): keep the casts.
#[allow(clippy::unnecessary_cast)]
pub fn statvfs(path: &Path) -> io::Result<FsStat> {
    let c = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path contains NUL"))?;
    let mut st = std::mem::MaybeUninit::<libc::statvfs>::zeroed();
    // SAFETY: `c` is a valid NUL-terminated string and `st` points to writable memory of the
    // right type; statvfs only writes into it (statvfs(3)).
    let rc = unsafe { libc::statvfs(c.as_ptr(), st.as_mut_ptr()) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: statvfs returned 0, so it filled the struct.
    let st = unsafe { st.assume_init() };
    Ok(FsStat {
        block_size: st.f_frsize as u64,
        blocks: st.f_blocks as u64,
        blocks_free: st.f_bfree as u64,
        blocks_avail: st.f_bavail as u64,
        inodes: st.f_files as u64,
        inodes_free: st.f_ffree as u64,
    })
}

/// CLOCK_MONOTONIC in seconds: the clock `Instant` reads, the same for every process of a host
/// (ranks on one host compare their instants through it).
pub fn monotonic_s() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; clock_gettime only writes it.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// stat(2) of `path`, the result dropped: what a metadata benchmark's stat costs (glibc's stat,
/// newfstatat; std's metadata asks statx for more). A path under 512 bytes is made a C string on
/// the stack.
pub fn stat_only(path: &Path) -> io::Result<()> {
    let bytes = path.as_os_str().as_bytes();
    let nul = || io::Error::new(io::ErrorKind::InvalidInput, "path contains NUL");
    let mut stack = [0u8; 512];
    let owned;
    let c: &std::ffi::CStr = if bytes.len() < stack.len() {
        stack[..bytes.len()].copy_from_slice(bytes);
        std::ffi::CStr::from_bytes_with_nul(&stack[..=bytes.len()]).map_err(|_| nul())?
    } else {
        owned = CString::new(bytes).map_err(|_| nul())?;
        &owned
    };
    let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
    // SAFETY: `c` is a valid NUL-terminated string and `st` points to writable memory of the
    // right type, which stat(2) only writes.
    let rc = unsafe { libc::stat(c.as_ptr(), st.as_mut_ptr()) };
    match rc {
        0 => Ok(()),
        _ => Err(io::Error::last_os_error()),
    }
}

/// The filesystem type (statfs(2)'s f_type, a magic number) of the filesystem holding `path`.
// f_type's integer type differs between architectures: keep the cast.
#[allow(clippy::unnecessary_cast)]
pub fn statfs_type(path: &Path) -> io::Result<i64> {
    let c = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path contains NUL"))?;
    let mut st = std::mem::MaybeUninit::<libc::statfs>::zeroed();
    // SAFETY: `c` is NUL-terminated and `st` is writable memory of the right type (statfs(2)).
    if unsafe { libc::statfs(c.as_ptr(), st.as_mut_ptr()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: statfs returned 0, so it filled the struct.
    Ok(unsafe { st.assume_init() }.f_type as i64)
}

/// Clears O_NONBLOCK on an open file (fcntl F_GETFL / F_SETFL).
pub fn clear_nonblock(file: &std::fs::File) -> io::Result<()> {
    let fd = file.as_raw_fd();
    // SAFETY: `fd` is an open descriptor owned by `file` (fcntl(2) reads and sets its flags).
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: as above.
    if unsafe { libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// kill(2) with signal 0 or a real signal. Returns false when the process does not exist.
pub fn send_signal(pid: u32, signal: i32) -> bool {
    // SAFETY: kill takes plain integers; no memory is shared (kill(2)).
    unsafe { libc::kill(pid as libc::pid_t, signal) == 0 }
}

/// posix_fadvise(2) POSIX_FADV_DONTNEED over the whole file: asks the kernel to drop its cached
/// pages, so that the next read comes from the device.
pub fn fadvise_dontneed(file: &std::fs::File) -> io::Result<()> {
    fadvise(file, libc::POSIX_FADV_DONTNEED)
}

/// posix_fadvise(2) of `advice` (a POSIX_FADV_* value) over the whole file.
pub fn fadvise(file: &std::fs::File, advice: libc::c_int) -> io::Result<()> {
    fadvise_range(file, 0, 0, advice)
}

/// posix_fadvise(2) of `advice` over `len` bytes from `offset` (a length of 0: to the end).
pub fn fadvise_range(
    file: &std::fs::File,
    offset: u64,
    len: u64,
    advice: libc::c_int,
) -> io::Result<()> {
    let (Ok(offset), Ok(len)) = (libc::off_t::try_from(offset), libc::off_t::try_from(len)) else {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    };
    // SAFETY: the descriptor is valid for the lifetime of `file`; the range is plain integers.
    let rc = unsafe { libc::posix_fadvise(file.as_raw_fd(), offset, len, advice) };
    if rc != 0 {
        return Err(io::Error::from_raw_os_error(rc));
    }
    Ok(())
}

/// flock(2) LOCK_EX on an open file; the lock lasts as long as the file stays open.
pub fn lock_exclusive(file: &std::fs::File) -> io::Result<()> {
    loop {
        // SAFETY: the descriptor is valid for the lifetime of `file` (flock(2)).
        let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) };
        if rc == 0 {
            return Ok(());
        }
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}

/// flock(2) without waiting: LOCK_EX (`exclusive`) or LOCK_SH. Ok(false) when another open file
/// holds a conflicting lock; the lock lasts as long as the file stays open.
pub fn try_lock(file: &std::fs::File, exclusive: bool) -> io::Result<bool> {
    let how = if exclusive {
        libc::LOCK_EX
    } else {
        libc::LOCK_SH
    } | libc::LOCK_NB;
    loop {
        // SAFETY: the descriptor is valid for the lifetime of `file` (flock(2)).
        let rc = unsafe { libc::flock(file.as_raw_fd(), how) };
        if rc == 0 {
            return Ok(true);
        }
        let err = io::Error::last_os_error();
        match err.kind() {
            io::ErrorKind::Interrupted => continue,
            io::ErrorKind::WouldBlock => return Ok(false),
            _ => return Err(err),
        }
    }
}

/// Probes io_uring with io_uring_setup(2) for a one-entry ring, then closes it.
pub fn io_uring_available() -> io::Result<()> {
    // struct io_uring_params is 120 bytes; zeroed means "no flags".
    let mut params = [0u8; 120];
    // SAFETY: io_uring_setup reads and writes `params`, which is large enough for the kernel's
    // struct io_uring_params (io_uring_setup(2)); the returned descriptor is closed at once.
    let fd = unsafe { libc::syscall(libc::SYS_io_uring_setup, 1u32, params.as_mut_ptr()) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` is a descriptor we own and close once (close(2)).
    unsafe { libc::close(fd as i32) };
    Ok(())
}

/// waitpid(2) with WNOHANG on a child of this process, so that a stopped child does not linger
/// as a zombie. Does nothing for a process that is not our child.
pub fn reap(pid: u32) {
    let mut status = 0;
    // SAFETY: `status` is a valid out-pointer; WNOHANG never blocks (waitpid(2)).
    unsafe { libc::waitpid(pid as libc::pid_t, &mut status, libc::WNOHANG) };
}

pub mod aio;
pub mod dirfd;
pub mod fiemap;
mod hangup;
pub use hangup::{hangup_ignored, install_hangup, note_terminals, quiet_terminals};
pub mod host;
pub mod ioflags;
pub mod lend;
pub mod loopctl;
pub mod mounts;
#[cfg(feature = "mpi")]
pub mod mpi;
pub mod outfile;
pub mod slots;
pub mod uring;

/// (major, minor) of a device number, as glibc's gnu_dev_major / gnu_dev_minor compute them.
pub fn split_dev(rdev: u64) -> (u32, u32) {
    let major = ((rdev >> 32) & 0xffff_f000) | ((rdev >> 8) & 0x0000_0fff);
    let minor = ((rdev >> 12) & 0xffff_ff00) | (rdev & 0x0000_00ff);
    (major as u32, minor as u32)
}

/// Heap memory aligned for O_DIRECT (4096 bytes), zero-filled, freed on drop; or, `placed`,
/// starting `lead` bytes past a page boundary (as fio's buffers sit where malloc put them).
pub struct AlignedBuf {
    ptr: std::ptr::NonNull<u8>,
    len: usize,
    lead: usize,
    /// The allocation's alignment: a page, or (`huge`) a transparent huge page.
    align: usize,
}

// SAFETY: AlignedBuf owns its allocation exclusively, like a Vec<u8>.
unsafe impl Send for AlignedBuf {}
// SAFETY: as a Vec<u8>: shared references only read (Deref); writing needs &mut.
unsafe impl Sync for AlignedBuf {}

impl AlignedBuf {
    pub const ALIGN: usize = 4096;

    pub fn new(len: usize) -> AlignedBuf {
        Self::placed(len, 0)
    }

    /// `len` bytes starting `lead` bytes past a page boundary.
    pub fn placed(len: usize, lead: usize) -> AlignedBuf {
        let layout = Self::layout(len, lead, Self::ALIGN);
        // SAFETY: the layout has a non-zero size (std::alloc::alloc_zeroed's only precondition).
        let raw = unsafe { std::alloc::alloc_zeroed(layout) };
        let ptr =
            std::ptr::NonNull::new(raw).unwrap_or_else(|| std::alloc::handle_alloc_error(layout));
        AlignedBuf {
            ptr,
            len,
            lead,
            align: Self::ALIGN,
        }
    }

    /// `len` bytes on a 2 MiB boundary, which the kernel is asked to back with transparent huge
    /// pages (madvise MADV_HUGEPAGE; it does where THP is `always` or `madvise`): copying a
    /// large buffer out of it costs a TLB miss per 2 MiB, not per 4 KiB.
    pub fn huge(len: usize) -> AlignedBuf {
        const HUGE: usize = 2 << 20;
        let layout = Self::layout(len, 0, HUGE);
        // SAFETY: the layout has a non-zero size (std::alloc::alloc's only precondition).
        let raw = unsafe { std::alloc::alloc(layout) };
        let ptr =
            std::ptr::NonNull::new(raw).unwrap_or_else(|| std::alloc::handle_alloc_error(layout));
        // SAFETY: the range is the allocation just made, and advice changes no contents (where
        // THP is off it fails, and the pages are small ones).
        unsafe { libc::madvise(raw.cast(), layout.size(), libc::MADV_HUGEPAGE) };
        // SAFETY: the allocation holds layout.size() bytes; zeroing initialises them all.
        unsafe { std::ptr::write_bytes(raw, 0, layout.size()) };
        AlignedBuf {
            ptr,
            len,
            lead: 0,
            align: HUGE,
        }
    }

    /// A buffer that I/O copies large records into or out of: on huge pages from 256 KiB up
    /// (`huge`), where 4 KiB pages would cost a TLB miss per page of every call.
    pub fn large(len: usize) -> AlignedBuf {
        if len >= 256 << 10 {
            Self::huge(len)
        } else {
            Self::new(len)
        }
    }

    /// The allocation: `len + lead` bytes, rounded up to `align` (a multiple of a page).
    fn layout(len: usize, lead: usize, align: usize) -> std::alloc::Layout {
        let size = len
            .checked_add(lead)
            .and_then(|n| n.max(1).checked_next_multiple_of(align))
            .expect("buffer size fits in usize");
        std::alloc::Layout::from_size_align(size, align).expect("buffer size fits in isize")
    }

    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        std::ops::DerefMut::deref_mut(self).as_mut_ptr()
    }
}

impl std::ops::Deref for AlignedBuf {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: the allocation holds `lead + len` initialised (zeroed) bytes that we own.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr().add(self.lead), self.len) }
    }
}

impl std::ops::DerefMut for AlignedBuf {
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in deref, and &mut self guarantees exclusive access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr().add(self.lead), self.len) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        let layout = Self::layout(self.len, self.lead, self.align);
        // SAFETY: ptr was allocated with this very layout and is freed once.
        unsafe { std::alloc::dealloc(self.ptr.as_ptr(), layout) };
    }
}

pub use slots::Slots;

/// sync(2): commit every filesystem's dirty data (what the `sync` command does).
pub fn sync() {
    // SAFETY: sync takes no arguments and cannot fail.
    unsafe { libc::sync() };
}

/// CPU time used by this process (all threads) so far, from getrusage(2) RUSAGE_SELF:
/// (user, system) in nanoseconds.
pub fn process_cpu_ns() -> (u64, u64) {
    cpu_ns(libc::RUSAGE_SELF)
}

/// Gives the calling thread a file descriptor table of its own (unshare(2) with CLONE_FILES):
/// the descriptors it opens afterwards are in no other thread's table, so the kernel takes
/// neither a reference nor the file position's lock on each read, write or lseek, as for a
/// single-threaded process (iozone's, bonnie++'s). Other threads keep theirs; the table goes with
/// the thread.
pub fn own_fd_table() -> std::io::Result<()> {
    // SAFETY: unshare takes a flag word and touches no memory of ours.
    let rc = unsafe { libc::unshare(libc::CLONE_FILES) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// The calling thread's id (gettid(2)).
pub fn gettid() -> u32 {
    // SAFETY: gettid takes no arguments and cannot fail.
    unsafe { libc::gettid() as u32 }
}

/// CPU time used by the calling thread so far (getrusage(2) RUSAGE_THREAD): (user, system) in
/// nanoseconds.
pub fn thread_cpu_ns() -> (u64, u64) {
    cpu_ns(libc::RUSAGE_THREAD)
}

/// The calling thread's CPU time and context switches (getrusage(2) RUSAGE_THREAD), in one call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ThreadUsage {
    pub user_ns: u64,
    pub sys_ns: u64,
    /// Switches off the CPU it asked for (blocking), and those it did not (preemption).
    pub voluntary: u64,
    pub involuntary: u64,
}

pub fn thread_usage() -> ThreadUsage {
    usage(libc::RUSAGE_THREAD)
}

fn cpu_ns(who: libc::c_int) -> (u64, u64) {
    let u = usage(who);
    (u.user_ns, u.sys_ns)
}

fn usage(who: libc::c_int) -> ThreadUsage {
    let mut ru = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: `ru` is writable memory of the right type; getrusage only writes into it.
    let rc = unsafe { libc::getrusage(who, ru.as_mut_ptr()) };
    if rc != 0 {
        return ThreadUsage::default();
    }
    // SAFETY: getrusage returned 0, so it filled the struct.
    let ru = unsafe { ru.assume_init() };
    let ns = |t: libc::timeval| t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1000;
    ThreadUsage {
        user_ns: ns(ru.ru_utime),
        sys_ns: ns(ru.ru_stime),
        voluntary: ru.ru_nvcsw as u64,
        involuntary: ru.ru_nivcsw as u64,
    }
}

/// write(2) as a raw system call. glibc's wrapper is a cancellation point that costs tens of
/// nanoseconds more per call once a process has a second thread (its single-thread fast path is
/// gone); one-byte calls (bonnie's per-character tests) would measure that, not the filesystem.
pub fn raw_write(file: &std::fs::File, buf: &[u8]) -> io::Result<usize> {
    // SAFETY: the descriptor is open for the life of `file`, and `buf` is valid for `buf.len()`
    // bytes of reading (write(2)).
    let n = unsafe { libc::syscall(libc::SYS_write, file.as_raw_fd(), buf.as_ptr(), buf.len()) };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

/// read(2) as a raw system call (see `raw_write`).
pub fn raw_read(file: &std::fs::File, buf: &mut [u8]) -> io::Result<usize> {
    // SAFETY: the descriptor is open for the life of `file`, and `buf` is valid for `buf.len()`
    // bytes of writing (read(2)).
    let n = unsafe {
        libc::syscall(
            libc::SYS_read,
            file.as_raw_fd(),
            buf.as_mut_ptr(),
            buf.len(),
        )
    };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

/// pipe2(2) with O_CLOEXEC: (read end, write end).
pub fn pipe() -> io::Result<(std::fs::File, std::fs::File)> {
    use std::os::unix::io::FromRawFd;
    let mut fds = [0i32; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2 returns (pipe2(2)).
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just created and are owned by nothing else.
    Ok(unsafe {
        (
            std::fs::File::from_raw_fd(fds[0]),
            std::fs::File::from_raw_fd(fds[1]),
        )
    })
}

/// syncfs(2): writes back the filesystem that holds `file`.
pub fn syncfs(file: &std::fs::File) -> io::Result<()> {
    // SAFETY: the descriptor is valid for the lifetime of `file` (syncfs(2)).
    if unsafe { libc::syncfs(file.as_raw_fd()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The size of a block device in bytes, ioctl(2) BLKGETSIZE64 (see ioctl_list(2)).
pub fn block_device_size(file: &std::fs::File) -> io::Result<u64> {
    const BLKGETSIZE64: libc::c_ulong = 0x8008_1272;
    let mut size: u64 = 0;
    // SAFETY: BLKGETSIZE64 writes one u64 through the pointer, which points to `size`.
    let rc = unsafe { libc::ioctl(file.as_raw_fd(), BLKGETSIZE64 as _, &mut size as *mut u64) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(size)
}

/// Runs the calling thread on these CPUs only (sched_setaffinity; fio's cpus_allowed).
pub fn pin_thread(cpus: &[usize]) -> io::Result<()> {
    // SAFETY: a zeroed cpu_set_t is the empty set; CPU_SET is called only below CPU_SETSIZE;
    // sched_setaffinity reads the set we own for the calling thread (pid 0).
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &c in cpus.iter().filter(|&&c| c < libc::CPU_SETSIZE as usize) {
            libc::CPU_SET(c, &mut set);
        }
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Whether this process may write `path` (a file, or a directory to create files in), by
/// access(2): nothing is opened or created.
pub fn may_write(path: &Path) -> io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a NUL byte in the path"))?;
    // SAFETY: `c` is a NUL-terminated string that outlives the call.
    if unsafe { libc::access(c.as_ptr(), libc::W_OK) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The CPU's time stamp counter (x86-64's rdtsc): cycles at a constant rate where the kernel
/// keeps time by it (`host::clock_is_tsc`), read without a call into the vDSO.
#[cfg(target_arch = "x86_64")]
#[inline]
pub fn tsc() -> u64 {
    // SAFETY: rdtsc reads a counter into two registers; it has no preconditions.
    unsafe { core::arch::x86_64::_rdtsc() }
}

/// preadv(2) (or preadv2(2) with no flags when `v2`) of one buffer at `offset` (fio's pvsync
/// and pvsync2 engines).
pub fn preadv(file: &std::fs::File, buf: &mut [u8], offset: u64, v2: bool) -> io::Result<usize> {
    let iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    // SAFETY: the iovec describes `buf`, valid for writes of its length during the call.
    let r = unsafe {
        if v2 {
            libc::preadv2(file.as_raw_fd(), &iov, 1, offset as libc::off_t, 0)
        } else {
            libc::preadv(file.as_raw_fd(), &iov, 1, offset as libc::off_t)
        }
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(r as usize)
}

/// pwritev(2) (or pwritev2(2) with the RWF_* `flags` when `v2`) of one buffer at `offset`.
pub fn pwritev(
    file: &std::fs::File,
    buf: &[u8],
    offset: u64,
    v2: bool,
    flags: i32,
) -> io::Result<usize> {
    let iov = libc::iovec {
        iov_base: buf.as_ptr() as *mut libc::c_void,
        iov_len: buf.len(),
    };
    // SAFETY: the iovec describes `buf`, valid for reads of its length during the call.
    let r = unsafe {
        if v2 {
            libc::pwritev2(file.as_raw_fd(), &iov, 1, offset as libc::off_t, flags)
        } else {
            libc::pwritev(file.as_raw_fd(), &iov, 1, offset as libc::off_t)
        }
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(r as usize)
}

/// Trims `len` bytes at `offset` (fio's trim): BLKDISCARD on a block device (ioctl(2),
/// <linux/fs.h>), otherwise fallocate(2) FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE (the range
/// reads back as zeros, the file keeps its size).
pub fn trim(file: &std::fs::File, offset: u64, len: u64) -> io::Result<()> {
    use std::os::unix::fs::FileTypeExt;
    const BLKDISCARD: libc::c_ulong = 0x1277;
    let fd = file.as_raw_fd();
    let r = if file.metadata()?.file_type().is_block_device() {
        let range = [offset, len];
        // SAFETY: BLKDISCARD reads two u64 (start, length) through the pointer, which points to
        // `range`.
        unsafe { libc::ioctl(fd, BLKDISCARD as _, range.as_ptr()) }
    } else {
        let mode = libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE;
        // SAFETY: fallocate takes integers only (fallocate(2)).
        unsafe { libc::fallocate(fd, mode, offset as libc::off_t, len as libc::off_t) }
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{trim, AlignedBuf};

    /// Huge buffers start on a 2 MiB boundary, are zeroed and hold what is written; `large`
    /// takes them from 256 KiB up, pages below; every kind frees with its own layout.
    #[test]
    fn buffers_sit_where_asked() {
        let mut h = AlignedBuf::huge(3 << 20);
        assert_eq!((h.as_ptr() as usize % (2 << 20), h.len()), (0, 3 << 20));
        assert!(h.iter().all(|&b| b == 0));
        h[(3 << 20) - 1] = 7;
        assert_eq!(h[(3 << 20) - 1], 7);
        let l = AlignedBuf::large(256 << 10);
        assert_eq!(l.as_ptr() as usize % (2 << 20), 0);
        let s = AlignedBuf::large(64 << 10);
        assert_eq!((s.as_ptr() as usize % 4096, s.len()), (0, 64 << 10));
        let p = AlignedBuf::placed(4096, 16);
        assert_eq!(p.as_ptr() as usize % 4096, 16);
    }
    #[test]
    fn a_trim_punches_a_hole_that_reads_back_as_zeros() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("f");
        std::fs::write(&f, vec![7u8; 1 << 20]).unwrap();
        let file = std::fs::OpenOptions::new().write(true).open(&f).unwrap();
        file.sync_all().unwrap();
        let before = file.metadata().unwrap().blocks();
        trim(&file, 4096, 512 << 10).unwrap();
        let data = std::fs::read(&f).unwrap();
        assert_eq!(data.len(), 1 << 20);
        assert!(data[4096..4096 + (512 << 10)].iter().all(|&b| b == 0));
        assert!(data[..4096].iter().all(|&b| b == 7));
        assert!(file.metadata().unwrap().blocks() < before);
    }
}
