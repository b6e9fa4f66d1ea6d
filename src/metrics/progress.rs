//! A worker's running totals, published as it goes: the phase frame reads them for the live
//! progress line and, when the fastest worker finishes, for the "first done" (stonewall) figures.
//! One per worker, on its own cache line, written only by its worker.

use std::sync::atomic::{AtomicU64, Ordering};

#[derive(Debug, Default)]
#[repr(align(64))]
pub struct Progress {
    ops: AtomicU64,
    bytes: AtomicU64,
    /// The operations' latencies summed, ns (block I/O: for steady state on latency).
    lat_ns: AtomicU64,
}

impl Progress {
    pub fn new() -> Progress {
        Progress::default()
    }

    /// Adds finished operations (I/Os, files) and their bytes.
    #[inline]
    pub fn add(&self, ops: u64, bytes: u64) {
        // Only the owning worker writes: a load and a store, no read-modify-write.
        self.ops
            .store(self.ops.load(Ordering::Relaxed) + ops, Ordering::Relaxed);
        self.bytes.store(
            self.bytes.load(Ordering::Relaxed) + bytes,
            Ordering::Relaxed,
        );
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

    /// (operations, bytes) so far.
    pub fn get(&self) -> (u64, u64) {
        (
            self.ops.load(Ordering::Relaxed),
            self.bytes.load(Ordering::Relaxed),
        )
    }
}
