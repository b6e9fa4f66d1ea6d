//! The only module allowed `unsafe`. Each wrapper names the C call, its contract and its man page.

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::io::AsRawFd;
use std::path::Path;

/// geteuid(2): never fails.
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail (geteuid(2)).
    unsafe { libc::geteuid() == 0 }
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

/// kill(2) with signal 0 or a real signal. Returns false when the process does not exist.
pub fn send_signal(pid: u32, signal: i32) -> bool {
    // SAFETY: kill takes plain integers; no memory is shared (kill(2)).
    unsafe { libc::kill(pid as libc::pid_t, signal) == 0 }
}

/// posix_fadvise(2) POSIX_FADV_DONTNEED over the whole file: asks the kernel to drop its cached
/// pages, so that the next read comes from the device.
pub fn fadvise_dontneed(file: &std::fs::File) -> io::Result<()> {
    // SAFETY: the descriptor is valid for the lifetime of `file`; offset 0 and length 0 mean
    // "the whole file" (posix_fadvise(2)).
    let rc = unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
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

/// Probes io_uring with io_uring_setup(2) for a one-entry ring, then closes it.
pub fn io_uring_available() -> Result<(), String> {
    // struct io_uring_params is 120 bytes; zeroed means "no flags".
    let mut params = [0u8; 120];
    // SAFETY: io_uring_setup reads and writes `params`, which is large enough for the kernel's
    // struct io_uring_params (io_uring_setup(2)); the returned descriptor is closed at once.
    let fd = unsafe { libc::syscall(libc::SYS_io_uring_setup, 1u32, params.as_mut_ptr()) };
    if fd < 0 {
        return Err(io::Error::last_os_error().to_string());
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
