//! I/O engines: a handful of operations (buffer, queue, complete, sync) behind one trait, listed in
//! one ENGINES table. Engines never read the clock: the I/O loop (`io::drive`) times every I/O the
//! same way whatever the engine, as fio's `td_io_queue` does.

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

/// One I/O for an engine to do through the buffer of `slot`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Io {
    pub slot: usize,
    /// Which of the worker's files (fio's nrfiles, filename=a:b): an index into those the
    /// engine was opened with.
    pub file: usize,
    pub write: bool,
    pub offset: u64,
    pub len: usize,
    /// Its priority and RWF_* flags (engines that cannot pass them ignore them).
    pub flags: crate::sys::issue::IoFlags,
}

pub trait IoEngine: Send {
    /// The buffer of a slot that is not in flight (aligned for O_DIRECT).
    fn buffer(&mut self, slot: usize) -> &mut [u8];
    /// Queues an I/O; it may be done at once (sync) or only on the next `complete`.
    fn queue(&mut self, io: Io) -> io::Result<()>;
    /// Submits what is queued and waits until at least `min` I/Os have completed; calls `done`
    /// with each completed slot and its result (bytes done, or a negative errno).
    fn complete(&mut self, min: usize, done: &mut dyn FnMut(usize, i64)) -> io::Result<()>;
    /// fsync (or fdatasync when `data_only`) of every file; nothing is in flight when called.
    fn sync(&mut self, data_only: bool) -> io::Result<()>;
    /// How the engine runs, for the record (e.g. "registered buffers and file").
    fn describe(&self) -> String;
    /// Takes at most `n` completions per reap where reaping is a system call of its own (fio's
    /// iodepth_batch_complete_max; libaio's io_getevents). Other engines ignore it.
    fn set_reap_max(&mut self, _n: usize) {}
    /// Trims `len` bytes at `offset` of file `file` (fio's trim), done when it returns: as fio's engines do
    /// trims, synchronously (`sys::issue::trim`).
    fn trim(&mut self, _file: usize, _offset: u64, _len: u64) -> io::Result<()> {
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "this engine does not trim",
        ))
    }
}

/// Builds an engine over a worker's files (none only for `null`) with its slots' buffers.
pub type OpenFn = fn(Vec<File>, Slots) -> io::Result<Box<dyn IoEngine>>;

pub use crate::sys::Slots;

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
fn sync_all(files: &[File], data_only: bool) -> io::Result<()> {
    for f in files {
        if data_only {
            f.sync_data()?
        } else {
            f.sync_all()?
        }
    }
    Ok(())
}

fn always() -> Result<(), Unavailable> {
    Ok(())
}
