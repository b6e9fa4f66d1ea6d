//! The flags an I/O carries reach the kernel: a write with RWF_ATOMIC on a file whose
//! filesystem reports no atomic write unit fails where the same write without it succeeds
//! (pvsync2's pwritev2, libaio's aio_rw_flags, io_uring's rw_flags).

use super::*;
use crate::sys::ioflags::{atomic_write_units, IoFlags, RWF_ATOMIC};

fn write(kind: EngineKind, flags: IoFlags) -> i64 {
    let (_dir, path, file) = scratch_file();
    if atomic_write_units(&path).unwrap().is_some() {
        return -1;
    }
    let mut e = (def(kind).open)(vec![file], super::Slots::new(1, 4096)).unwrap();
    e.buffer(0).fill(7);
    let io = Io {
        len: 4096,
        dir: crate::plan::dir::Dir::Write,
        flags,
        ..Io::default()
    };
    // libaio refuses in io_submit, the others in the I/O's result.
    if let Err(e) = e.queue(io) {
        return -(e.raw_os_error().unwrap_or(libc::EIO) as i64);
    }
    let mut res = 0;
    e.complete(1, |b| res = b[0].res).unwrap();
    res
}

#[test]
fn rwf_atomic_reaches_the_kernel_with_each_engine_that_passes_it() {
    let mut kinds = vec![EngineKind::Pvsync2, EngineKind::Libaio];
    if crate::sys::io_uring_available().is_ok() {
        kinds.push(EngineKind::IoUring);
    }
    for kind in kinds {
        assert_eq!(write(kind, IoFlags::default()), 4096, "{kind:?}");
        let atomic = IoFlags {
            rw_flags: RWF_ATOMIC,
            ..IoFlags::default()
        };
        let res = write(kind, atomic);
        // Refused (EINVAL or EOPNOTSUPP): the file cannot take it, so the flag got there.
        assert!(res < 0, "{kind:?}: {res}");
    }
}

#[test]
fn a_priority_per_io_is_taken_by_io_uring_and_libaio() {
    let mut kinds = vec![EngineKind::Libaio];
    if crate::sys::io_uring_available().is_ok() {
        kinds.push(EngineKind::IoUring);
    }
    for kind in kinds {
        let idle = IoFlags {
            prio: 3 << 13,
            ..IoFlags::default()
        };
        assert_eq!(write(kind, idle), 4096, "{kind:?}");
        // An invalid class (7) is refused by the kernel: the priority got there.
        let bad = IoFlags {
            prio: 7 << 13,
            ..IoFlags::default()
        };
        assert!(write(kind, bad) < 0, "{kind:?}");
    }
}
