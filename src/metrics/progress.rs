//! A worker's running totals, published as it goes: the phase frame reads them for the live
//! progress line and, when the fastest worker finishes, for the "first done" (stonewall) figures;
//! the live metrics endpoint (`--metrics`) reads them by direction, with the latencies of the
//! last interval the worker's slicer closed. One per worker, on its own cache lines, written only
//! by its worker.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use super::timeline::Slice;

/// Which way an operation a worker publishes went: block I/O says it per I/O, iozone per test;
/// the workloads that count other operations (files, bonnie++'s calls) publish them as `Other`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Direction {
    Read,
    Write,
    Trim,
    Other,
}

impl Direction {
    pub const ALL: [Direction; 4] = [
        Direction::Read,
        Direction::Write,
        Direction::Trim,
        Direction::Other,
    ];

    /// A block I/O's direction.
    #[inline]
    pub fn of(d: crate::plan::dir::Dir) -> Direction {
        match d {
            crate::plan::dir::Dir::Read => Direction::Read,
            crate::plan::dir::Dir::Write => Direction::Write,
            crate::plan::dir::Dir::Trim => Direction::Trim,
        }
    }

    /// An iozone test's direction: it writes or it reads.
    pub fn of_test(writes: bool) -> Direction {
        if writes {
            Direction::Write
        } else {
            Direction::Read
        }
    }

    pub const fn word(self) -> &'static str {
        match self {
            Direction::Read => "read",
            Direction::Write => "write",
            Direction::Trim => "trim",
            Direction::Other => "other",
        }
    }

    #[inline]
    const fn slot(self) -> usize {
        self as usize
    }
}

/// (operations, bytes) per direction, in the order of `Direction::ALL`.
pub type ByDirection = [(u64, u64); 4];

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
        self.bump(Direction::Other, ops, bytes);
    }

    /// Adds one finished I/O of `bytes` in direction `d`.
    #[inline]
    pub fn add_io(&self, d: Direction, bytes: u64) {
        self.bump(d, 1, bytes);
    }

    /// Adds finished operations and their bytes, all in direction `d`.
    pub fn add_in(&self, d: Direction, ops: u64, bytes: u64) {
        self.bump(d, ops, bytes);
    }

    #[inline]
    fn bump(&self, d: Direction, ops: u64, bytes: u64) {
        // Only the owning worker writes: a load and a store, no read-modify-write.
        let (o, b) = (&self.ops[d.slot()], &self.bytes[d.slot()]);
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

    /// (operations, bytes) so far, every direction.
    pub fn get(&self) -> (u64, u64) {
        self.by_direction()
            .iter()
            .fold((0, 0), |(o, b), x| (o + x.0, b + x.1))
    }

    /// (operations, bytes) so far in each direction.
    pub fn by_direction(&self) -> ByDirection {
        Direction::ALL.map(|d| {
            (
                self.ops[d.slot()].load(Ordering::Relaxed),
                self.bytes[d.slot()].load(Ordering::Relaxed),
            )
        })
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
        p.add_io(Direction::Read, 4096);
        p.add_io(Direction::Read, 4096);
        p.add_io(Direction::Write, 512);
        p.add_io(Direction::Trim, 1 << 20);
        p.add(3, 10);
        p.add_in(Direction::Write, 2, 100);
        assert_eq!(
            p.by_direction(),
            [(2, 8192), (3, 612), (1, 1 << 20), (3, 10)]
        );
        assert_eq!(p.get(), (9, 8192 + 612 + (1 << 20) + 10));
        assert_eq!(
            Direction::of(crate::plan::dir::Dir::Write),
            Direction::Write
        );
        let words: Vec<&str> = Direction::ALL.iter().map(|d| d.word()).collect();
        assert_eq!(words, ["read", "write", "trim", "other"]);
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
