//! Linux native AIO (io_setup, io_submit, io_getevents, io_destroy: io_submit(2)) for the
//! `libaio` engine, by raw system calls as libaio itself makes them. Like `uring::Ring`, an
//! `Aio` owns its context, the file and the per-slot buffers, so that no buffer is freed or
//! reused while the kernel may still touch it. On a file opened without O_DIRECT the kernel does
//! the I/O inside io_submit, which then returns only once it is done: buffered submissions
//! block, as they do for fio's libaio.

use std::fs::File;
use std::io;
use std::os::unix::io::AsRawFd;

use super::AlignedBuf;

const IOCB_CMD_PREAD: u16 = 0;
const IOCB_CMD_PWRITE: u16 = 1;

/// struct iocb of <linux/aio_abi.h> (little-endian field order of aio_key and aio_rw_flags).
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct Iocb {
    aio_data: u64,
    aio_key: u32,
    aio_rw_flags: i32,
    aio_lio_opcode: u16,
    aio_reqprio: i16,
    aio_fildes: u32,
    aio_buf: u64,
    aio_nbytes: u64,
    aio_offset: i64,
    aio_reserved2: u64,
    aio_flags: u32,
    aio_resfd: u32,
}

/// struct io_event of <linux/aio_abi.h>.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct IoEvent {
    data: u64,
    obj: u64,
    res: i64,
    res2: i64,
}

pub struct Aio {
    ctx: libc::c_ulong,
    // One control block per slot, never moved while the context lives (the kernel keeps the
    // address of each submitted one until its event is reaped).
    iocbs: Box<[Iocb]>,
    events: Vec<IoEvent>,
    in_flight: Vec<bool>,
    count: usize,
    /// At most this many events per io_getevents (fio's iodepth_batch_complete_max).
    reap_max: usize,
    bufs: AlignedBuf,
    buf_size: usize,
    files: Vec<File>,
}

fn check(r: libc::c_long) -> io::Result<libc::c_long> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

impl Aio {
    /// A context for `depth` I/Os in flight with `depth` buffers of `buf_size` bytes each.
    /// An I/O names one of `files` by index.
    pub fn new(files: Vec<File>, slots: super::Slots) -> io::Result<Aio> {
        let (depth, buf_size) = (slots.depth, slots.size);
        let mut ctx: libc::c_ulong = 0;
        // SAFETY: io_setup(2) writes the new context to `ctx`, which must be zero on entry.
        check(unsafe { libc::syscall(libc::SYS_io_setup, depth as libc::c_long, &mut ctx) })?;
        Ok(Aio {
            ctx,
            iocbs: vec![Iocb::default(); depth].into_boxed_slice(),
            events: vec![IoEvent::default(); depth],
            in_flight: vec![false; depth],
            count: 0,
            reap_max: depth,
            bufs: slots.alloc(),
            buf_size,
            files,
        })
    }

    /// Takes at most `n` events per io_getevents(2) call, more only when more are waited for
    /// (fio's iodepth_batch_complete_max, whose default 1 makes one call per completion).
    pub fn set_reap_max(&mut self, n: usize) {
        self.reap_max = n.clamp(1, self.events.len());
    }

    pub fn reap_max(&self) -> usize {
        self.reap_max
    }

    pub fn files(&self) -> &[File] {
        &self.files
    }

    /// The buffer of `slot`; None while the slot is in flight.
    pub fn buffer(&mut self, slot: usize) -> Option<&mut [u8]> {
        if self.in_flight[slot] {
            return None;
        }
        let s = self.buf_size;
        Some(&mut self.bufs[slot * s..(slot + 1) * s])
    }

    /// Submits one I/O through the buffer of `slot` (io_submit(2) of one control block, as
    /// fio's libaio does with its default iodepth_batch_submit=1).
    /// A priority in `flags` goes in aio_reqprio (IOCB_FLAG_IOPRIO), RWF_* flags in aio_rw_flags.
    pub fn submit(
        &mut self,
        slot: usize,
        (write, file): (bool, usize),
        offset: u64,
        len: usize,
        flags: super::issue::IoFlags,
    ) -> io::Result<()> {
        assert!(!self.in_flight[slot], "slot {slot} is in flight");
        assert!(len <= self.buf_size);
        let buf = self.bufs.as_mut_ptr();
        let cb = &mut self.iocbs[slot];
        *cb = Iocb {
            aio_data: slot as u64,
            aio_lio_opcode: if write {
                IOCB_CMD_PWRITE
            } else {
                IOCB_CMD_PREAD
            },
            aio_fildes: self.files[file].as_raw_fd() as u32,
            // SAFETY: slot * buf_size + len is within the allocation of depth * buf_size bytes.
            aio_buf: unsafe { buf.add(slot * self.buf_size) } as u64,
            aio_nbytes: len as u64,
            aio_offset: offset as i64,
            aio_rw_flags: flags.rw_flags,
            aio_reqprio: flags.prio as i16,
            aio_flags: if flags.prio != 0 {
                super::issue::IOCB_FLAG_IOPRIO
            } else {
                0
            },
            ..Iocb::default()
        };
        let mut list = [cb as *mut Iocb];
        loop {
            // SAFETY: `list` holds one pointer to a control block that stays in place (and its
            // buffer, owned by self) until its event is reaped or the context is destroyed.
            let r = unsafe {
                libc::syscall(
                    libc::SYS_io_submit,
                    self.ctx,
                    1 as libc::c_long,
                    list.as_mut_ptr(),
                )
            };
            match check(r) {
                Ok(1) => break,
                Ok(_) => return Err(io::Error::other("io_submit took no I/O")),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
        self.in_flight[slot] = true;
        self.count += 1;
        Ok(())
    }

    /// Waits until at least `min` I/Os have completed (io_getevents(2) for at least the ones
    /// still waited for, and at most `reap_max` or that many) and hands each completed slot and
    /// its result (bytes, or a negative errno) to `done`.
    pub fn complete(&mut self, min: usize, done: &mut dyn FnMut(usize, i64)) -> io::Result<()> {
        let mut left = min.min(self.count);
        loop {
            let nr = left.max(self.reap_max).min(self.events.len());
            // SAFETY: `events` has room for `nr` events; no timeout (NULL) waits for `left` of
            // them.
            let r = unsafe {
                libc::syscall(
                    libc::SYS_io_getevents,
                    self.ctx,
                    left as libc::c_long,
                    nr as libc::c_long,
                    self.events.as_mut_ptr(),
                    std::ptr::null_mut::<libc::timespec>(),
                )
            };
            let n = match check(r) {
                Ok(n) => n as usize,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            for ev in &self.events[..n] {
                let slot = ev.data as usize;
                self.in_flight[slot] = false;
                self.count -= 1;
                done(slot, ev.res);
            }
            left = left.saturating_sub(n);
            if left == 0 {
                return Ok(());
            }
        }
    }
}

impl Drop for Aio {
    fn drop(&mut self) {
        // Wait for what is still in flight before the buffers go, then free the context.
        let _ = self.complete(self.count, &mut |_, _| {});
        // SAFETY: `ctx` is the context io_setup made and nothing is in flight (io_destroy(2)).
        unsafe { libc::syscall(libc::SYS_io_destroy, self.ctx) };
    }
}

/// Probes Linux AIO with io_setup(2) for a one-I/O context, then destroys it.
pub fn available() -> io::Result<()> {
    let mut ctx: libc::c_ulong = 0;
    // SAFETY: as in `Aio::new`; the context is destroyed at once.
    check(unsafe { libc::syscall(libc::SYS_io_setup, 1 as libc::c_long, &mut ctx) })?;
    // SAFETY: `ctx` is the context just made, with nothing in flight.
    unsafe { libc::syscall(libc::SYS_io_destroy, ctx) };
    Ok(())
}

/// preadv(2) (or preadv2(2) with no flags when `v2`) of one buffer at `offset`.
pub fn preadv(file: &File, buf: &mut [u8], offset: u64, v2: bool) -> io::Result<usize> {
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
    check(r as libc::c_long).map(|n| n as usize)
}

/// pwritev(2) (or pwritev2(2) with the RWF_* `flags` when `v2`) of one buffer at `offset`.
pub fn pwritev(file: &File, buf: &[u8], offset: u64, v2: bool, flags: i32) -> io::Result<usize> {
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
    check(r as libc::c_long).map(|n| n as usize)
}
