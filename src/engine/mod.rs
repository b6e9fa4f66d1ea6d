//! I/O engines: a handful of operations (buffer, queue, complete, sync) behind one trait, listed in
//! one ENGINES table. Engines never read the clock: the I/O loop (`io::drive`) times every I/O the
//! same way whatever the engine, as fio's `td_io_queue` does. An opened engine is an `Engine`,
//! one variant per kind: the loop is compiled for each (`Engine::visit`), so its calls into the
//! engine are direct, not through a table of function pointers per I/O.

pub mod libaio;
pub mod null;
pub mod sync;
pub mod uring;

#[cfg(test)]
mod flags_tests;

/// A new empty file, open for reading and writing, in a directory of its own (kept while the
/// TempDir lives), for an engine's tests.
#[cfg(test)]
pub(crate) fn scratch_file() -> (tempfile::TempDir, std::path::PathBuf, File) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(true)
        .read(true)
        .write(true)
        .open(&path)
        .unwrap();
    (dir, path, file)
}

use std::fs::File;
use std::io;

use crate::plan::job::EngineKind;
pub use crate::sys::slots::{Io, Reaped, Slots};

/// Which sync call makes the written data durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyncKind {
    /// fsync(2): data and metadata.
    Fsync,
    /// fdatasync(2): data, and the metadata needed to read it back.
    Fdatasync,
}

impl SyncKind {
    /// The call's name (a failure's `op`).
    pub fn name(self) -> &'static str {
        match self {
            SyncKind::Fsync => "fsync",
            SyncKind::Fdatasync => "fdatasync",
        }
    }
}

pub trait IoEngine: Send {
    /// The buffer of a slot that is not in flight (aligned for O_DIRECT).
    fn buffer(&mut self, slot: usize) -> &mut [u8];
    /// Queues an I/O; it may be done at once (sync) or only on the next `complete`.
    fn queue(&mut self, io: Io) -> io::Result<()>;
    /// Submits what is queued and waits until at least `min` I/Os have completed; hands the
    /// completions to `done`, those reaped together in one call (each a slot and its result:
    /// bytes done, or a negative errno).
    fn complete(&mut self, min: usize, done: impl FnMut(&[Reaped])) -> io::Result<()>;
    /// Syncs every file; nothing is in flight when called.
    fn sync(&mut self, kind: SyncKind) -> io::Result<()>;
    /// How the engine runs, for the record (e.g. "registered buffers and file").
    fn describe(&self) -> String;
    /// Takes at most `n` completions per reap where reaping is a system call of its own (fio's
    /// iodepth_batch_complete_max; libaio's io_getevents). Other engines ignore it.
    fn set_reap_max(&mut self, _n: usize) {}
    /// Trims `len` bytes at `offset` of file `file` (fio's trim), done when it returns: as fio's
    /// engines do trims, synchronously (`sys::trim`).
    fn trim(&mut self, _file: usize, _offset: u64, _len: u64) -> io::Result<()> {
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "this engine does not trim",
        ))
    }
}

/// An opened engine of any kind.
pub enum Engine {
    Sync(sync::Sync),
    IoUring(uring::Uring),
    Libaio(libaio::Libaio),
    Null(null::Null),
}

/// Work done with an engine of whatever kind, compiled for each (`Engine::visit`).
pub trait Visit {
    type Out;
    fn visit<E: IoEngine>(self, engine: &mut E) -> Self::Out;
}

/// The same call on whichever engine it is.
macro_rules! each {
    ($self:expr, $e:ident => $call:expr) => {
        match $self {
            Engine::Sync($e) => $call,
            Engine::IoUring($e) => $call,
            Engine::Libaio($e) => $call,
            Engine::Null($e) => $call,
        }
    };
}

impl Engine {
    /// Runs `v` on the engine as its own type.
    pub fn visit<V: Visit>(&mut self, v: V) -> V::Out {
        each!(self, e => v.visit(e))
    }
}

/// An engine of any kind used as one (a match per call: for setting up and for tests; the loop
/// runs through `visit`).
impl IoEngine for Engine {
    fn buffer(&mut self, slot: usize) -> &mut [u8] {
        each!(self, e => e.buffer(slot))
    }
    fn queue(&mut self, io: Io) -> io::Result<()> {
        each!(self, e => e.queue(io))
    }
    fn complete(&mut self, min: usize, done: impl FnMut(&[Reaped])) -> io::Result<()> {
        each!(self, e => e.complete(min, done))
    }
    fn sync(&mut self, kind: SyncKind) -> io::Result<()> {
        each!(self, e => e.sync(kind))
    }
    fn describe(&self) -> String {
        each!(self, e => e.describe())
    }
    fn set_reap_max(&mut self, n: usize) {
        each!(self, e => e.set_reap_max(n))
    }
    fn trim(&mut self, file: usize, offset: u64, len: u64) -> io::Result<()> {
        each!(self, e => e.trim(file, offset, len))
    }
}

/// Builds an engine over a worker's files (none only for `null`) with its slots' buffers.
pub type OpenFn = fn(Vec<File>, Slots) -> io::Result<Engine>;

/// Why this host cannot run an engine.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Unavailable(#[from] pub io::Error);

pub struct EngineDef {
    pub kind: EngineKind,
    pub name: &'static str,
    pub summary: &'static str,
    pub open: OpenFn,
    /// Why this host cannot run the engine, if it cannot.
    pub available: fn() -> Result<(), Unavailable>,
}

pub static ENGINES: &[EngineDef] = &[
    sync::DEF,
    sync::PVSYNC,
    sync::PVSYNC2,
    uring::DEF,
    libaio::DEF,
    null::DEF,
];

pub fn def(kind: EngineKind) -> &'static EngineDef {
    ENGINES
        .iter()
        .find(|e| e.kind == kind)
        .expect("every engine kind is in ENGINES")
}

/// The files an engine works on; engines that need one fail clearly without it.
fn need_files(files: Vec<File>) -> io::Result<Vec<File>> {
    if files.is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "this engine needs a file",
        ));
    }
    Ok(files)
}

/// fsync (or fdatasync) of each file.
fn sync_all(files: &[File], kind: SyncKind) -> io::Result<()> {
    for f in files {
        match kind {
            SyncKind::Fsync => f.sync_all()?,
            SyncKind::Fdatasync => f.sync_data()?,
        }
    }
    Ok(())
}

fn always() -> Result<(), Unavailable> {
    Ok(())
}

/// The buffer of `slot` in memory of `size`-byte slots (the engines that hold no slot of theirs
/// in the kernel).
fn slot_of(bufs: &mut [u8], size: usize, slot: usize) -> &mut [u8] {
    &mut bufs[slot * size..(slot + 1) * size]
}
