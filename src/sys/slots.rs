//! An engine's slots: the buffers its I/Os go through (one per I/O in flight, or a ring of write
//! buffers), the I/O the kernel does through one, and which slots the kernel holds. io_uring and
//! libaio share `SlotBufs`, so that a slot's buffer is handed out only while the kernel does not
//! hold it, and a busy slot is refused the same way by both (an error, never a panic).

use std::io;

use super::ioflags::IoFlags;
use super::AlignedBuf;
use crate::plan::dir::Dir;

/// An engine's buffers: `depth` slots of `size` bytes each, one after another, the first
/// `lead` bytes past a page boundary (0: page-aligned, as O_DIRECT needs; fio places a
/// buffered job's buffers where malloc put them, and mem_align past a page).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slots {
    pub depth: usize,
    pub size: usize,
    pub lead: usize,
}

impl Slots {
    /// `depth` page-aligned buffers of `size` bytes.
    pub fn new(depth: usize, size: usize) -> Slots {
        Slots {
            depth,
            size,
            lead: 0,
        }
    }

    /// The memory of all the slots.
    pub fn alloc(&self) -> AlignedBuf {
        AlignedBuf::placed(self.depth * self.size, self.lead)
    }
}

/// One read or write for an engine: `len` bytes at `offset` of file `file` (an index into the
/// files the engine was opened with) through the buffer of `slot`, with its priority and RWF_*
/// flags (engines that cannot pass them ignore them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Io {
    pub slot: usize,
    pub dir: Dir,
    pub file: usize,
    pub offset: u64,
    pub len: usize,
    pub flags: IoFlags,
}

impl Default for Io {
    fn default() -> Io {
        Io {
            slot: 0,
            dir: Dir::Read,
            file: 0,
            offset: 0,
            len: 0,
            flags: IoFlags::default(),
        }
    }
}

/// One completed I/O: its slot and its result (bytes done, or a negative errno).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reaped {
    pub slot: usize,
    pub res: i64,
}

/// The slots' buffers of an asynchronous engine and which of them the kernel holds.
pub struct SlotBufs {
    bufs: AlignedBuf,
    size: usize,
    in_flight: Vec<bool>,
    count: usize,
}

impl SlotBufs {
    pub fn new(slots: Slots) -> SlotBufs {
        SlotBufs {
            bufs: slots.alloc(),
            size: slots.size,
            in_flight: vec![false; slots.depth],
            count: 0,
        }
    }

    /// The buffer of `slot`; None while the kernel holds it.
    pub fn buffer(&mut self, slot: usize) -> Option<&mut [u8]> {
        if self.in_flight.get(slot) != Some(&false) {
            return None;
        }
        let s = self.size;
        Some(&mut self.bufs[slot * s..(slot + 1) * s])
    }

    /// Hands `io`'s buffer to the kernel: its address, the slot now in flight. A slot in flight,
    /// out of range, or a length past its buffer is refused.
    pub fn claim(&mut self, io: &Io) -> io::Result<*mut u8> {
        if self.in_flight.get(io.slot) != Some(&false) || io.len > self.size {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "slot {} is in flight or out of range, or {} bytes are more than its buffer",
                    io.slot, io.len
                ),
            ));
        }
        self.in_flight[io.slot] = true;
        self.count += 1;
        Ok(self.bufs.as_mut_ptr().wrapping_add(io.slot * self.size))
    }

    /// The kernel gave `slot` back (its completion was reaped).
    pub fn release(&mut self, slot: usize) {
        if let Some(f) = self.in_flight.get_mut(slot).filter(|f| **f) {
            *f = false;
            self.count -= 1;
        }
    }

    /// The address of every slot's buffer and its length (what io_uring registers).
    pub fn iovecs(&mut self) -> Vec<libc::iovec> {
        let base = self.bufs.as_mut_ptr();
        (0..self.in_flight.len())
            .map(|i| libc::iovec {
                iov_base: base.wrapping_add(i * self.size).cast(),
                iov_len: self.size,
            })
            .collect()
    }

    /// Slots the kernel holds.
    pub fn in_flight(&self) -> usize {
        self.count
    }

    /// Leaves the buffers allocated for good: the kernel may still write into them.
    pub fn leak(&mut self) {
        std::mem::forget(std::mem::replace(&mut self.bufs, AlignedBuf::new(0)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_busy_slot_is_refused_and_its_buffer_withheld_until_released() {
        let mut b = SlotBufs::new(Slots::new(2, 4096));
        let io = Io {
            slot: 1,
            len: 4096,
            ..Io::default()
        };
        let p = b.claim(&io).unwrap();
        assert_eq!(p as usize - b.bufs.as_ptr() as usize, 4096);
        assert!(b.buffer(1).is_none());
        assert!(b.claim(&io).is_err(), "in flight");
        assert!(b.claim(&Io { slot: 2, ..io }).is_err(), "no such slot");
        assert!(
            b.claim(&Io {
                slot: 0,
                len: 4097,
                ..io
            })
            .is_err(),
            "too long"
        );
        assert_eq!(b.in_flight(), 1);
        b.release(1);
        b.release(1);
        assert_eq!(
            (b.in_flight(), b.buffer(1).map(|x| x.len())),
            (0, Some(4096))
        );
    }
}
