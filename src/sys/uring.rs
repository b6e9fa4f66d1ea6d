//! A safe io_uring ring for the `io_uring` engine: it owns the ring, the files it works on and the
//! slots' buffers (`SlotBufs`), so that no buffer can be freed or reused while the kernel may
//! still touch it. Buffers and the files are registered (IORING_REGISTER_BUFFERS / _FILES,
//! io_uring_register(2)) when the kernel allows; otherwise plain READ/WRITE opcodes are used.

use std::fs::File;
use std::io;
use std::os::unix::io::AsRawFd;

use io_uring::{opcode, squeue, types, IoUring};

use super::slots::{Io, Reaped, SlotBufs, Slots};
use crate::plan::dir::Dir;

/// io_uring_enter(2)'s IORING_ENTER_GETEVENTS: run the ring's deferred task work (post the
/// completions that are in) and wait for `min_complete` of them.
const ENTER_GETEVENTS: u32 = 1;

pub struct Ring {
    // Field order matters: the ring is dropped (and drained, see Drop) before the buffers.
    ring: IoUring,
    bufs: SlotBufs,
    files: Vec<File>,
    /// The completions of one pass over the completion queue, handed out together.
    reaped: Vec<Reaped>,
    pub fixed_buffers: bool,
    pub fixed_file: bool,
}

/// An SQE of a read or write opcode with the I/O's offset, priority and RWF_* flags.
macro_rules! sqe {
    ($op:expr, $io:expr) => {
        $op.offset($io.offset)
            .ioprio($io.flags.prio)
            .rw_flags($io.flags.rw_flags)
            .build()
    };
}

impl Ring {
    /// A ring of `slots.depth` entries with a buffer of `slots.size` bytes per slot. `files` are
    /// registered together (fio's registerfiles): an I/O names its file by index.
    pub fn new(files: Vec<File>, slots: Slots) -> io::Result<Ring> {
        let entries = slots.depth.next_power_of_two().max(1) as u32;
        // As fio does: no IPIs for completions (COOP_TASKRUN), one submitting thread, task work
        // run only when we reap (DEFER_TASKRUN). Older kernels lack them: fall back to none.
        let ring = IoUring::builder()
            .setup_coop_taskrun()
            .setup_single_issuer()
            .setup_defer_taskrun()
            .build(entries)
            .or_else(|_| IoUring::builder().setup_coop_taskrun().build(entries))
            .or_else(|_| IoUring::builder().build(entries))?;
        let mut bufs = SlotBufs::new(slots);
        let iovecs = bufs.iovecs();
        // SAFETY: every iovec points into `bufs`, which the Ring owns and frees only after the
        // ring itself is closed (io_uring_register(2), IORING_REGISTER_BUFFERS).
        let fixed_buffers = unsafe { ring.submitter().register_buffers(&iovecs) }.is_ok();
        let fds: Vec<i32> = files.iter().map(|f| f.as_raw_fd()).collect();
        let fixed_file = ring.submitter().register_files(&fds).is_ok();
        Ok(Ring {
            ring,
            bufs,
            files,
            reaped: Vec::with_capacity(slots.depth),
            fixed_buffers,
            fixed_file,
        })
    }

    pub fn files(&self) -> &[File] {
        &self.files
    }

    /// The buffer of `slot`; None while the slot is in flight.
    pub fn buffer(&mut self, slot: usize) -> Option<&mut [u8]> {
        self.bufs.buffer(slot)
    }

    /// Queues a read or write through the buffer of its slot, with its priority (sqe ioprio)
    /// and RWF_* flags (sqe rw_flags), and submits it at once (as fio's iodepth_batch_submit=1:
    /// the device starts on it while the next one is prepared).
    pub fn push(&mut self, io: &Io) -> io::Result<()> {
        if io.file >= self.files.len() || io.dir == Dir::Trim {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "no such file, or a trim (trims are not queued)",
            ));
        }
        let ptr = self.bufs.claim(io)?;
        let entry = self.entry(io, ptr);
        let pushed = self.queue(&entry);
        if pushed.is_err() {
            self.bufs.release(io.slot);
        }
        pushed?;
        self.enter(0)
    }

    fn entry(&self, io: &Io, ptr: *mut u8) -> squeue::Entry {
        let len = io.len as u32;
        let fixed = types::Fixed(io.file as u32);
        let fd = types::Fd(self.files[io.file].as_raw_fd());
        let slot = io.slot as u16;
        let write = io.dir == Dir::Write;
        match (write, self.fixed_buffers, self.fixed_file) {
            (true, true, true) => sqe!(opcode::WriteFixed::new(fixed, ptr, len, slot), io),
            (true, true, false) => sqe!(opcode::WriteFixed::new(fd, ptr, len, slot), io),
            (true, false, true) => sqe!(opcode::Write::new(fixed, ptr, len), io),
            (true, false, false) => sqe!(opcode::Write::new(fd, ptr, len), io),
            (false, true, true) => sqe!(opcode::ReadFixed::new(fixed, ptr, len, slot), io),
            (false, true, false) => sqe!(opcode::ReadFixed::new(fd, ptr, len, slot), io),
            (false, false, true) => sqe!(opcode::Read::new(fixed, ptr, len), io),
            (false, false, false) => sqe!(opcode::Read::new(fd, ptr, len), io),
        }
        .user_data(io.slot as u64)
    }

    fn queue(&mut self, entry: &squeue::Entry) -> io::Result<()> {
        if self.ring.submission().is_full() {
            self.ring.submit()?;
        }
        // SAFETY: the buffer stays valid and untouched by us until the completion for this slot
        // is reaped (SlotBufs withholds it; Drop drains the ring first).
        unsafe { self.ring.submission().push(entry) }
            .map_err(|_| io::Error::other("io_uring submission queue full"))
    }

    /// Waits until at least `min` I/Os have completed and hands the completions to `done`, a
    /// pass over the completion queue at a time (results: bytes, or a negative errno).
    pub fn complete(&mut self, min: usize, mut done: impl FnMut(&[Reaped])) -> io::Result<()> {
        let want = min.min(self.bufs.in_flight());
        // Each submission already ran the ring's task work (GETEVENTS): what completed by then
        // is in the queue, and only a shortfall needs a system call.
        let got = self.drain(&mut done);
        if got < want {
            self.enter(want - got)?;
            self.drain(&mut done);
        }
        Ok(())
    }

    /// io_uring_enter(2): submits what is queued, runs the deferred task work (which posts the
    /// completions that are in) and waits for `want` of them.
    fn enter(&mut self, want: usize) -> io::Result<()> {
        loop {
            let queued = self.ring.submission().len() as u32;
            // SAFETY: no argument is passed (a null pointer of size 0), only counts and a flag.
            let r = unsafe {
                self.ring.submitter().enter::<libc::sigset_t>(
                    queued,
                    want as u32,
                    ENTER_GETEVENTS,
                    None,
                )
            };
            match r {
                Ok(_) => return Ok(()),
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                // The completion queue is full: reap first, then submit.
                Err(e) if e.raw_os_error() == Some(libc::EBUSY) && want == 0 => return Ok(()),
                Err(e) => return Err(e),
            }
        }
    }

    fn drain(&mut self, done: &mut impl FnMut(&[Reaped])) -> usize {
        self.reaped.clear();
        for cqe in self.ring.completion() {
            let slot = cqe.user_data() as usize;
            self.bufs.release(slot);
            self.reaped.push(Reaped {
                slot,
                res: cqe.result() as i64,
            });
        }
        if !self.reaped.is_empty() {
            done(&self.reaped);
        }
        self.reaped.len()
    }

    /// I/Os in flight.
    pub fn pending(&self) -> usize {
        self.bufs.in_flight()
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        // Wait for everything in flight before the buffers are freed.
        while self.bufs.in_flight() > 0 {
            if self.complete(self.bufs.in_flight(), |_| {}).is_err() {
                // The kernel may still write into the buffers: leak them rather than free them.
                self.bufs.leak();
                break;
            }
        }
    }
}
