//! How an I/O is issued beyond its offset and size: its priority (ioprio_set(2) for the whole
//! thread, or per I/O in an io_uring SQE or an AIO control block) and its RWF_* flags.

use std::io;

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
}
