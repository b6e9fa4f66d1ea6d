//! A safe io_uring ring for the `io_uring` engine: it owns the ring, the files it works on and the
//! per-slot buffers, so that no buffer can be freed or reused while the kernel may still touch it.
//! Buffers and the files are registered (IORING_REGISTER_BUFFERS / _FILES, io_uring_register(2))
//! when the kernel allows; otherwise plain READ/WRITE opcodes are used.

use std::fs::File;
use std::io;
use std::os::unix::io::AsRawFd;

use io_uring::{opcode, types, IoUring};

use super::AlignedBuf;

pub struct Ring {
    // Field order matters: the ring is dropped (and drained, see Drop) before the buffers.
    ring: IoUring,
    bufs: AlignedBuf,
    buf_size: usize,
    in_flight: Vec<bool>,
    pending: usize,
    files: Vec<File>,
    pub fixed_buffers: bool,
    pub fixed_file: bool,
}

impl Ring {
    /// A ring of `depth` entries with `depth` buffers of `buf_size` bytes each.
    /// `files` are registered together (fio's registerfiles): an I/O names its file by index.
    pub fn new(files: Vec<File>, slots: super::Slots) -> io::Result<Ring> {
        let (depth, buf_size) = (slots.depth, slots.size);
        let entries = depth.next_power_of_two().max(1) as u32;
        // As fio does: no IPIs for completions (COOP_TASKRUN), one submitting thread, task work
        // run only when we reap (DEFER_TASKRUN). Older kernels lack them: fall back to none.
        let ring = IoUring::builder()
            .setup_coop_taskrun()
            .setup_single_issuer()
            .setup_defer_taskrun()
            .build(entries)
            .or_else(|_| IoUring::builder().setup_coop_taskrun().build(entries))
            .or_else(|_| IoUring::builder().build(entries))?;
        let mut bufs = slots.alloc();
        let base = bufs.as_mut_ptr();
        let iovecs: Vec<libc::iovec> = (0..depth)
            .map(|i| libc::iovec {
                // SAFETY: i * buf_size is within the allocation of depth * buf_size bytes.
                iov_base: unsafe { base.add(i * buf_size) }.cast(),
                iov_len: buf_size,
            })
            .collect();
        // SAFETY: every iovec points into `bufs`, which the Ring owns and frees only after the
        // ring itself is closed (io_uring_register(2), IORING_REGISTER_BUFFERS).
        let fixed_buffers = unsafe { ring.submitter().register_buffers(&iovecs) }.is_ok();
        let fds: Vec<i32> = files.iter().map(|f| f.as_raw_fd()).collect();
        let fixed_file = ring.submitter().register_files(&fds).is_ok();
        Ok(Ring {
            ring,
            bufs,
            buf_size,
            in_flight: vec![false; depth],
            pending: 0,
            files,
            fixed_buffers,
            fixed_file,
        })
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

    /// Queues a read or write of `len` bytes at `offset` of file `file` through the buffer of
    /// `slot`, with the priority (sqe ioprio) and RWF_* flags (sqe rw_flags) of `flags`.
    pub fn push(
        &mut self,
        slot: usize,
        (write, file): (bool, usize),
        offset: u64,
        len: usize,
        flags: super::issue::IoFlags,
    ) -> io::Result<()> {
        if slot >= self.in_flight.len()
            || self.in_flight[slot]
            || len > self.buf_size
            || file >= self.files.len()
        {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "slot busy, out of range, length larger than its buffer, or no such file",
            ));
        }
        // SAFETY: slot < depth, so the pointer stays inside `bufs`.
        let ptr = unsafe { self.bufs.as_mut_ptr().add(slot * self.buf_size) };
        let len32 = len as u32;
        let fd = self.files[file].as_raw_fd();
        let fixed = types::Fixed(file as u32);
        let entry = match (write, self.fixed_buffers, self.fixed_file) {
            (false, true, true) => opcode::ReadFixed::new(fixed, ptr, len32, slot as u16)
                .offset(offset)
                .ioprio(flags.prio)
                .rw_flags(flags.rw_flags)
                .build(),
            (false, true, false) => opcode::ReadFixed::new(types::Fd(fd), ptr, len32, slot as u16)
                .offset(offset)
                .ioprio(flags.prio)
                .rw_flags(flags.rw_flags)
                .build(),
            (false, false, true) => opcode::Read::new(fixed, ptr, len32)
                .offset(offset)
                .ioprio(flags.prio)
                .rw_flags(flags.rw_flags)
                .build(),
            (false, false, false) => opcode::Read::new(types::Fd(fd), ptr, len32)
                .offset(offset)
                .ioprio(flags.prio)
                .rw_flags(flags.rw_flags)
                .build(),
            (true, true, true) => opcode::WriteFixed::new(fixed, ptr, len32, slot as u16)
                .offset(offset)
                .ioprio(flags.prio)
                .rw_flags(flags.rw_flags)
                .build(),
            (true, true, false) => opcode::WriteFixed::new(types::Fd(fd), ptr, len32, slot as u16)
                .offset(offset)
                .ioprio(flags.prio)
                .rw_flags(flags.rw_flags)
                .build(),
            (true, false, true) => opcode::Write::new(fixed, ptr, len32)
                .offset(offset)
                .ioprio(flags.prio)
                .rw_flags(flags.rw_flags)
                .build(),
            (true, false, false) => opcode::Write::new(types::Fd(fd), ptr, len32)
                .offset(offset)
                .ioprio(flags.prio)
                .rw_flags(flags.rw_flags)
                .build(),
        }
        .user_data(slot as u64);
        if self.ring.submission().is_full() {
            self.ring.submit()?;
        }
        // SAFETY: the buffer stays valid and untouched by us until the completion for this slot
        // is reaped (in_flight blocks `buffer` and `push` for it; Drop drains the ring first).
        unsafe { self.ring.submission().push(&entry) }
            .map_err(|_| io::Error::other("io_uring submission queue full"))?;
        self.in_flight[slot] = true;
        self.pending += 1;
        // Submit at once, as fio does (iodepth_batch_submit=1): the device starts on this I/O
        // while the next one is prepared, which keeps a CPU-bound device path busy.
        self.enter(0)?;
        Ok(())
    }

    /// Submits what is queued, waits for at least `min` completions, and hands each completed
    /// (slot, result) to `done` (result: bytes, or a negative errno).
    pub fn complete(&mut self, min: usize, done: &mut dyn FnMut(usize, i32)) -> io::Result<()> {
        let want = min.min(self.pending);
        // Submit without waiting first (the kernel runs deferred completions when it has some):
        // sleeping only when nothing has completed yet avoids a context switch per batch.
        self.enter(0)?;
        let got = self.drain(done);
        if got < want {
            self.enter(want - got)?;
            self.drain(done);
        }
        Ok(())
    }

    fn enter(&mut self, want: usize) -> io::Result<()> {
        loop {
            match self.ring.submit_and_wait(want) {
                Ok(_) => return Ok(()),
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                // The completion queue is full: reap first, then submit.
                Err(e) if e.raw_os_error() == Some(libc::EBUSY) && want == 0 => return Ok(()),
                Err(e) => return Err(e),
            }
        }
    }

    fn drain(&mut self, done: &mut dyn FnMut(usize, i32)) -> usize {
        let mut n = 0;
        for cqe in self.ring.completion() {
            let slot = cqe.user_data() as usize;
            self.in_flight[slot] = false;
            self.pending -= 1;
            n += 1;
            done(slot, cqe.result());
        }
        n
    }

    pub fn pending(&self) -> usize {
        self.pending
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        // Wait for everything in flight before the buffers are freed.
        while self.pending > 0 {
            if self.complete(self.pending, &mut |_, _| {}).is_err() {
                // The kernel may still write into the buffers: leak them rather than free them.
                std::mem::forget(std::mem::replace(&mut self.bufs, AlignedBuf::new(0)));
                break;
            }
        }
    }
}
