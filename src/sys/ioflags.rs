//! What an I/O carries to the kernel beyond its offset and size: its priority (ioprio_set(2) for
//! the whole thread, or per I/O in an io_uring SQE or an AIO control block) and its RWF_* flags,
//! with the atomic write limits statx(2) reports for a file.

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// Per-I/O settings an engine passes to the kernel with the I/O.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IoFlags {
    /// The I/O's ioprio value (class << 13 | hint << 3 | level); 0: the thread's.
    pub prio: u16,
    /// RWF_* flags of a read or write (RWF_ATOMIC for fio's atomic=1).
    pub rw_flags: i32,
}

/// IOCB_FLAG_IOPRIO of <linux/aio_abi.h>: aio_reqprio holds the I/O's priority.
pub const IOCB_FLAG_IOPRIO: u32 = 1 << 1;

/// RWF_ATOMIC of <linux/fs.h>: the write is torn-write protected (Linux 6.11).
pub const RWF_ATOMIC: i32 = 0x40;

/// The atomic write unit limits statx(2) reports for a file or block device
/// (STATX_WRITE_ATOMIC: stx_atomic_write_unit_min and _max, in bytes); None when it reports
/// none (the filesystem or device cannot write atomically, or the kernel predates 6.11).
pub fn atomic_write_units(path: &Path) -> io::Result<Option<(u32, u32)>> {
    const STATX_WRITE_ATOMIC: u32 = 0x0001_0000;
    let c = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path holds a NUL byte"))?;
    // struct statx is 256 bytes: mask at 0, atomic_write_unit_min and _max at 168 and 172.
    let mut buf = [0u32; 64];
    // SAFETY: `c` is a NUL-terminated path and `buf` is 256 writable bytes, struct statx's size
    // (statx(2)).
    let r = unsafe {
        libc::syscall(
            libc::SYS_statx,
            libc::AT_FDCWD,
            c.as_ptr(),
            0 as libc::c_int,
            STATX_WRITE_ATOMIC,
            buf.as_mut_ptr(),
        )
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    let (mask, min, max) = (buf[0], buf[168 / 4], buf[172 / 4]);
    Ok((mask & STATX_WRITE_ATOMIC != 0 && max > 0).then_some((min, max)))
}

/// ioprio_set(2) of the calling thread (IOPRIO_WHO_PROCESS with who 0: the caller).
pub fn ioprio_set(value: u16) -> io::Result<()> {
    const IOPRIO_WHO_PROCESS: libc::c_long = 1;
    // SAFETY: ioprio_set takes three integers and touches no memory of ours (ioprio_set(2)).
    let r = unsafe {
        libc::syscall(
            libc::SYS_ioprio_set,
            IOPRIO_WHO_PROCESS,
            0 as libc::c_long,
            value as libc::c_long,
        )
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// ioprio_get(2) of the calling thread.
pub fn ioprio_get() -> io::Result<u16> {
    // SAFETY: as ioprio_set: integers only (ioprio_get(2)).
    let r = unsafe { libc::syscall(libc::SYS_ioprio_get, 1 as libc::c_long, 0 as libc::c_long) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(r as u16)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A thread's priority is its own: set on one, read back there, the others' untouched.
    #[test]
    fn ioprio_set_takes_effect_on_the_calling_thread() {
        let idle_7 = (3 << 13) | 7;
        let got = std::thread::spawn(move || {
            ioprio_set(idle_7).unwrap();
            ioprio_get().unwrap()
        })
        .join()
        .unwrap();
        assert_eq!(got, idle_7);
        assert_ne!(ioprio_get().unwrap(), idle_7);
    }

    #[test]
    fn statx_answers_for_a_file_and_fails_for_a_missing_one() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("f");
        std::fs::write(&f, b"x").unwrap();
        if let Some((min, max)) = atomic_write_units(&f).unwrap() {
            assert!(min > 0 && min <= max && max.is_power_of_two());
        }
        assert!(atomic_write_units(&dir.path().join("none")).is_err());
    }
}
