//! The loop's slots: which are free, the longest idle first (with a ring of buffers, more slots
//! than the queue's depth, a buffer is written again only after all the others), and the I/O in
//! flight in each.

use super::Issue;
use crate::io::clock::Ns;
use std::collections::VecDeque;

/// An I/O in flight.
#[derive(Debug, Clone, Copy)]
pub struct InFlight {
    pub issue: Issue,
    /// Its offset in the loop's offset space (unique across the worker's files).
    pub at: u64,
    pub queued: Ns,
    /// When its queue call returned (timed only with `Timing::Split`).
    pub submitted: Ns,
    /// The priority it was issued at (for the logs).
    pub prio: u16,
}

pub struct Flight {
    free: VecDeque<usize>,
    slots: Vec<Option<InFlight>>,
}

impl Flight {
    pub fn new(slots: usize) -> Flight {
        Flight {
            free: (0..slots).collect(),
            slots: vec![None; slots],
        }
    }

    /// I/Os in flight.
    #[inline]
    pub fn busy(&self) -> usize {
        self.slots.len() - self.free.len()
    }

    /// The slot the next I/O takes (the longest idle); there is one while fewer than the
    /// queue's depth are in flight.
    #[inline]
    pub fn claim(&mut self) -> usize {
        self.free
            .pop_front()
            .expect("a slot is free below the depth")
    }

    /// `slot`'s I/O is in flight.
    #[inline]
    pub fn start(&mut self, slot: usize, io: InFlight) {
        self.slots[slot] = Some(io);
    }

    /// Its queue call returned.
    #[inline]
    pub fn submitted(&mut self, slot: usize, at: Ns) {
        if let Some(io) = self.slots[slot].as_mut() {
            io.submitted = at;
        }
    }

    /// `slot` is free again without having been in flight (its queue call failed).
    pub fn give_back(&mut self, slot: usize) {
        self.slots[slot] = None;
        self.free.push_front(slot);
    }

    /// `slot`'s I/O completed: the slot is free (last in the line), its I/O handed back.
    #[inline]
    pub fn finish(&mut self, slot: usize) -> InFlight {
        self.free.push_back(slot);
        self.slots[slot]
            .take()
            .expect("a completion is of a slot in flight")
    }

    /// Whether the loop offsets [at, at + len) overlap an I/O in flight.
    pub fn overlaps(&self, at: u64, len: u64) -> bool {
        let end = at + len;
        self.slots
            .iter()
            .flatten()
            .any(|f| f.at < end && at < f.at + f.issue.len)
    }
}
