//! A worker's running totals, published as it goes: the phase frame reads them for the live
//! progress line and, when the fastest worker finishes, for the "first done" (stonewall) figures;
//! the live metrics endpoint (`--metrics`) reads them by direction, with the latencies of the
//! last interval the worker's slicer closed. One per worker, on its own cache lines, written only
//! by its worker.

use std::ops::{AddAssign, Index};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use super::timeline::Slice;
use crate::plan::dir::Dir;

/// Operations and their bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Count {
    pub ops: u64,
    pub bytes: u64,
}

impl Count {
    pub const fn new(ops: u64, bytes: u64) -> Count {
        Count { ops, bytes }
    }
}

impl AddAssign for Count {
    fn add_assign(&mut self, o: Count) {
        self.ops += o.ops;
        self.bytes += o.bytes;
    }
}

/// The ways a worker's operations are counted: the direction (`plan::dir::Dir`) of each block
/// I/O (iozone: of each test), and None for operations of no one direction (files, bonnie++'s
/// calls).
pub const WAYS: [Option<Dir>; 4] = [Some(Dir::Read), Some(Dir::Write), Some(Dir::Trim), None];

/// What a way is labelled with: its direction's name, or `other`.
pub const fn word(way: Option<Dir>) -> &'static str {
    match way {
        Some(Dir::Read) => "read",
        Some(Dir::Write) => "write",
        Some(Dir::Trim) => "trim",
        None => "other",
    }
}

/// A way's slot, in the order of `WAYS`.
#[inline]
const fn slot(way: Option<Dir>) -> usize {
    match way {
        Some(d) => d as usize,
        None => 3,
    }
}

/// Operations and bytes counted each way (`WAYS`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ByDirection([Count; 4]);

impl ByDirection {
    /// Each way with its count, in the order of `WAYS`.
    pub fn iter(&self) -> impl Iterator<Item = (Option<Dir>, Count)> + '_ {
        WAYS.into_iter().zip(self.0.iter().copied())
    }

    /// Every way's together.
    pub fn total(&self) -> Count {
        let mut t = Count::default();
        for c in self.0 {
            t += c;
        }
        t
    }
}

impl Index<Option<Dir>> for ByDirection {
    type Output = Count;

    fn index(&self, way: Option<Dir>) -> &Count {
        &self.0[slot(way)]
    }
}

impl AddAssign for ByDirection {
    fn add_assign(&mut self, o: ByDirection) {
        for (a, b) in self.0.iter_mut().zip(o.0) {
            *a += b;
        }
    }
}

/// The last interval a worker's slicer closed: when, and its latencies.
#[derive(Debug, Clone)]
pub struct Closed {
    pub at: Instant,
    pub slice: Slice,
}

/// Laid out in this order (`repr(C)`) so that a read's or a write's counters and the latency sum
/// share the first cache line: an I/O touches one line.
#[derive(Debug, Default)]
#[repr(C, align(64))]
pub struct Progress {
    ops: [AtomicU64; 4],
    /// The operations' latencies summed, ns (block I/O: for steady state on latency).
    lat_ns: AtomicU64,
    bytes: [AtomicU64; 4],
    /// Published once per interval (by the slicer, when the phase is watched live).
    closed: Mutex<Option<Closed>>,
}

impl Progress {
    pub fn new() -> Progress {
        Progress::default()
    }

    /// Adds finished operations (files, calls) and their bytes, of no one direction.
    #[inline]
    pub fn add(&self, ops: u64, bytes: u64) {
        self.bump(None, ops, bytes);
    }

    /// Adds one finished I/O of `bytes` in direction `d`.
    #[inline]
    pub fn add_io(&self, d: Dir, bytes: u64) {
        self.bump(Some(d), 1, bytes);
    }

    /// Adds finished operations and their bytes, all in direction `d`.
    pub fn add_in(&self, d: Dir, ops: u64, bytes: u64) {
        self.bump(Some(d), ops, bytes);
    }

    #[inline]
    fn bump(&self, way: Option<Dir>, ops: u64, bytes: u64) {
        // Only the owning worker writes: a load and a store, no read-modify-write.
        let (o, b) = (&self.ops[slot(way)], &self.bytes[slot(way)]);
        o.store(o.load(Ordering::Relaxed) + ops, Ordering::Relaxed);
        b.store(b.load(Ordering::Relaxed) + bytes, Ordering::Relaxed);
    }

    /// Adds a finished operation's latency.
    #[inline]
    pub fn add_lat(&self, ns: u64) {
        let v = self.lat_ns.load(Ordering::Relaxed).saturating_add(ns);
        self.lat_ns.store(v, Ordering::Relaxed);
    }

    /// The latencies added so far, ns.
    pub fn lat_ns(&self) -> u64 {
        self.lat_ns.load(Ordering::Relaxed)
    }

    /// Operations and bytes so far, every way.
    pub fn total(&self) -> Count {
        self.by_direction().total()
    }

    /// (operations, bytes) so far, every way, as the frame's totals take them.
    pub fn get(&self) -> (u64, u64) {
        let c = self.total();
        (c.ops, c.bytes)
    }

    /// Operations and bytes so far each way.
    pub fn by_direction(&self) -> ByDirection {
        ByDirection(WAYS.map(|w| Count {
            ops: self.ops[slot(w)].load(Ordering::Relaxed),
            bytes: self.bytes[slot(w)].load(Ordering::Relaxed),
        }))
    }

    /// The worker closed an interval (`metrics::timeline::Slicer`): its latencies.
    pub fn close_interval(&self, slice: Slice) {
        let c = Closed {
            at: Instant::now(),
            slice,
        };
        *self.closed.lock().unwrap_or_else(|e| e.into_inner()) = Some(c);
    }

    /// The last interval the worker closed, if any.
    pub fn last_interval(&self) -> Option<Closed> {
        self.closed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directions_add_up_to_the_totals() {
        let p = Progress::new();
        p.add_io(Dir::Read, 4096);
        p.add_io(Dir::Read, 4096);
        p.add_io(Dir::Write, 512);
        p.add_io(Dir::Trim, 1 << 20);
        p.add(3, 10);
        p.add_in(Dir::Write, 2, 100);
        let by = p.by_direction();
        let counts: Vec<(&str, Count)> = by.iter().map(|(w, c)| (word(w), c)).collect();
        assert_eq!(
            counts,
            [
                ("read", Count::new(2, 8192)),
                ("write", Count::new(3, 612)),
                ("trim", Count::new(1, 1 << 20)),
                ("other", Count::new(3, 10)),
            ]
        );
        assert_eq!(by[None], Count::new(3, 10));
        assert_eq!(p.total(), Count::new(9, 8192 + 612 + (1 << 20) + 10));
        assert_eq!(p.get(), (9, 8192 + 612 + (1 << 20) + 10));
    }

    #[test]
    fn the_last_closed_interval_is_kept() {
        let p = Progress::new();
        assert!(p.last_interval().is_none());
        p.close_interval(Slice(vec![(100, 2)]));
        p.close_interval(Slice(vec![(200, 5)]));
        assert_eq!(p.last_interval().unwrap().slice, Slice(vec![(200, 5)]));
    }
}
