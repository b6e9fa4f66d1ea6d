//! Linux native AIO (io_setup, io_submit, io_getevents, io_destroy: io_submit(2)) for the
//! `libaio` engine, by raw system calls as libaio itself makes them. Like `uring::Ring`, an
//! `Aio` owns its context, the file and the per-slot buffers, so that no buffer is freed or
//! reused while the kernel may still touch it. On a file opened without O_DIRECT the kernel does
//! the I/O inside io_submit, which then returns only once it is done: buffered submissions
//! block, as they do for fio's libaio.

use std::fs::File;
use std::io;
use std::os::unix::io::AsRawFd;

use super::ioflags::IOCB_FLAG_IOPRIO;
use super::slots::{Io, Reaped, SlotBufs, Slots};
use crate::plan::dir::Dir;

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
    /// The completions of one io_getevents, handed out together.
    reaped: Vec<Reaped>,
    /// At most this many events per io_getevents (fio's iodepth_batch_complete_max).
    reap_max: usize,
    bufs: SlotBufs,
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
    /// A context for `slots.depth` I/Os in flight with a buffer of `slots.size` bytes per slot.
    /// An I/O names one of `files` by index.
    pub fn new(files: Vec<File>, slots: Slots) -> io::Result<Aio> {
        let depth = slots.depth;
        let mut ctx: libc::c_ulong = 0;
        // SAFETY: io_setup(2) writes the new context to `ctx`, which must be zero on entry.
        check(unsafe { libc::syscall(libc::SYS_io_setup, depth as libc::c_long, &mut ctx) })?;
        Ok(Aio {
            ctx,
            iocbs: vec![Iocb::default(); depth].into_boxed_slice(),
            events: vec![IoEvent::default(); depth],
            reaped: Vec::with_capacity(depth),
            reap_max: depth,
            bufs: SlotBufs::new(slots),
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
        self.bufs.buffer(slot)
    }

    /// Submits one I/O through the buffer of its slot (io_submit(2) of one control block, as
    /// fio's libaio does with its default iodepth_batch_submit=1). A priority goes in
    /// aio_reqprio (IOCB_FLAG_IOPRIO), RWF_* flags in aio_rw_flags.
    pub fn submit(&mut self, io: &Io) -> io::Result<()> {
        let opcode = match io.dir {
            Dir::Read => IOCB_CMD_PREAD,
            Dir::Write => IOCB_CMD_PWRITE,
            Dir::Trim => return Err(io::Error::from(io::ErrorKind::InvalidInput)),
        };
        let fd = self
            .files
            .get(io.file)
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no such file"))?
            .as_raw_fd();
        let buf = self.bufs.claim(io)?;
        let cb = &mut self.iocbs[io.slot];
        *cb = Iocb {
            aio_data: io.slot as u64,
            aio_lio_opcode: opcode,
            aio_fildes: fd as u32,
            aio_buf: buf as u64,
            aio_nbytes: io.len as u64,
            aio_offset: io.offset as i64,
            aio_rw_flags: io.flags.rw_flags,
            aio_reqprio: io.flags.prio as i16,
            aio_flags: if io.flags.prio != 0 {
                IOCB_FLAG_IOPRIO
            } else {
                0
            },
            ..Iocb::default()
        };
        let mut list = [cb as *mut Iocb];
        let submitted = loop {
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
                Ok(1) => break Ok(()),
                Ok(_) => break Err(io::Error::other("io_submit took no I/O")),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => break Err(e),
            }
        };
        if submitted.is_err() {
            self.bufs.release(io.slot);
        }
        submitted
    }

    /// Waits until at least `min` I/Os have completed (io_getevents(2) for at least the ones
    /// still waited for, and at most `reap_max` or that many) and hands the completions of each
    /// call (slot, result: bytes or a negative errno) to `done`.
    pub fn complete(&mut self, min: usize, mut done: impl FnMut(&[Reaped])) -> io::Result<()> {
        let mut left = min.min(self.bufs.in_flight());
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
            self.reaped.clear();
            for ev in &self.events[..n] {
                let slot = ev.data as usize;
                self.bufs.release(slot);
                self.reaped.push(Reaped { slot, res: ev.res });
            }
            if n > 0 {
                done(&self.reaped);
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
        if self.complete(self.bufs.in_flight(), |_| {}).is_err() {
            self.bufs.leak();
        }
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
