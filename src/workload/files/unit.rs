//! What the workers of a files phase share: the site (tree, root, content pool, fsync policy),
//! the phase's state, and one worker's hands on one subfolder. The write and scan loops work on
//! these; the session owns them.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

use super::{Counts, Ops};
use crate::io::content::{Fsync, Tree};

/// The tree a session works on, as its workers see it.
pub struct Site {
    pub tree: Tree,
    pub root: PathBuf,
    pub pool: Vec<u8>,
    pub fsync: Fsync,
    pub resume: bool,
}

/// The degradation curve: the last 1% threshold passed, and (seconds, files done, bytes) at each.
pub type Trend = (u64, Vec<(f64, u64, u64)>);

/// What the workers of one phase share.
pub struct State {
    pub next: AtomicU64,
    pub stop: AtomicBool,
    pub exhausted: Mutex<Option<String>>,
    pub error: Mutex<Option<String>>,
    /// The progress log (write phases).
    pub log: Option<Mutex<File>>,
    /// Files per unit present (resume, and what a later phase may expect).
    pub have: Mutex<BTreeMap<u64, u64>>,
    pub trend: Mutex<Trend>,
    pub started: OnceLock<Instant>,
    pub done_files: AtomicU64,
    /// Files already done when the phase started (resume).
    pub start_files: u64,
    pub finished_workers: AtomicUsize,
}

impl State {
    pub fn fail(&self, e: String) {
        self.error
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_or_insert(e);
        self.stop.store(true, Ordering::Relaxed);
    }

    pub fn unit_done(&self, files: u64, bytes: u64, total: u64) {
        let done = self.done_files.fetch_add(files, Ordering::Relaxed) + files;
        let mut t = self.trend.lock().unwrap_or_else(|e| e.into_inner());
        // One trend point per 1% of the phase's files.
        let step = (total / 100).max(1);
        if done >= t.0 + step || done == total {
            t.0 = done - done % step;
            let e = self
                .started
                .get()
                .map(|s| s.elapsed().as_secs_f64())
                .unwrap_or(0.0);
            t.1.push((e, done, bytes));
        }
    }
}

/// One worker's hands on one subfolder: the session, the phase's shared state, its own
/// histograms, counts and buffers.
pub struct Unit<'a> {
    pub s: &'a Site,
    pub st: &'a State,
    pub ops: &'a mut Ops,
    pub c: &'a mut Counts,
    pub buf: &'a mut Vec<u8>,
    pub path: &'a mut String,
}
