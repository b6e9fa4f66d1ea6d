//! `libaio`: Linux native AIO (io_submit, io_getevents), iodepth I/Os in flight, each submitted
//! as it is queued (fio's libaio with its default iodepth_batch_submit=1). On a buffered file the
//! kernel does each I/O inside io_submit, as it does for fio. The context lives in `sys::aio`.

use std::fs::File;
use std::io;

use super::{Engine, EngineDef, Io, IoEngine, Reaped, SyncKind};
use crate::plan::job::EngineKind;
use crate::sys::aio::Aio;

pub const DEF: EngineDef = EngineDef {
    kind: EngineKind::Libaio,
    name: "libaio",
    summary: "Linux native AIO (io_submit/io_getevents); iodepth I/Os in flight, buffered I/O done inside io_submit (fio libaio)",
    open,
    available: || Ok(crate::sys::aio::available()?),
};

pub struct Libaio {
    aio: Aio,
}

fn open(files: Vec<File>, slots: super::Slots) -> io::Result<Engine> {
    Ok(Engine::Libaio(Libaio {
        aio: Aio::new(super::need_files(files)?, slots)?,
    }))
}

impl IoEngine for Libaio {
    fn buffer(&mut self, slot: usize) -> &mut [u8] {
        self.aio
            .buffer(slot)
            .expect("the runner only fills buffers of slots that are not in flight")
    }

    fn queue(&mut self, io: Io) -> io::Result<()> {
        self.aio.submit(&io)
    }

    fn complete(&mut self, min: usize, done: impl FnMut(&[Reaped])) -> io::Result<()> {
        self.aio.complete(min, done)
    }

    fn set_reap_max(&mut self, n: usize) {
        self.aio.set_reap_max(n);
    }

    fn sync(&mut self, kind: SyncKind) -> io::Result<()> {
        super::sync_all(self.aio.files(), kind)
    }

    fn trim(&mut self, file: usize, offset: u64, len: u64) -> io::Result<()> {
        crate::sys::trim(&self.aio.files()[file], offset, len)
    }

    fn describe(&self) -> String {
        format!(
            "libaio (io_submit per I/O, io_getevents of up to {})",
            self.aio.reap_max()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::ENGINES;
    use crate::plan::dir::Dir;

    /// Every completion of the call, as (slot, result).
    fn reap(e: &mut impl IoEngine, min: usize) -> Vec<(usize, i64)> {
        let mut got = Vec::new();
        e.complete(min, |b| got.extend(b.iter().map(|r| (r.slot, r.res))))
            .unwrap();
        got
    }

    fn io(slot: usize, dir: Dir, offset: u64, len: usize) -> Io {
        Io {
            slot,
            dir,
            offset,
            len,
            ..Io::default()
        }
    }

    /// Each engine that does real I/O writes what its buffers hold where it is told, and reads it
    /// back into the buffers, with several I/Os in flight where it can.
    #[test]
    fn libaio_and_the_vectored_engines_write_and_read_the_bytes_asked() {
        for kind in [EngineKind::Libaio, EngineKind::Pvsync, EngineKind::Pvsync2] {
            let def = ENGINES.iter().find(|d| d.kind == kind).unwrap();
            let (_dir, path, file) = crate::engine::scratch_file();
            let mut e = (def.open)(vec![file], crate::engine::Slots::new(4, 4096)).unwrap();
            for slot in 0..4 {
                e.buffer(slot).fill(b'a' + slot as u8);
                let offset = (3 - slot as u64) * 4096;
                e.queue(io(slot, Dir::Write, offset, 4096)).unwrap();
            }
            let mut done = Vec::new();
            while done.len() < 4 {
                done.extend(reap(&mut e, 1));
            }
            done.sort();
            let want: Vec<(usize, i64)> = (0..4).map(|s| (s, 4096)).collect();
            assert_eq!(done, want, "{}", def.name);
            let disk = std::fs::read(&path).unwrap();
            for (i, block) in disk.chunks(4096).enumerate() {
                let byte = b'a' + 3 - i as u8;
                assert!(block.iter().all(|&b| b == byte), "{}", def.name);
            }
            for slot in 0..4 {
                e.buffer(slot).fill(0);
                e.queue(io(slot, Dir::Read, slot as u64 * 4096, 100))
                    .unwrap();
            }
            let done = reap(&mut e, 4);
            assert!(done.len() == 4 && done.iter().all(|d| d.1 == 100));
            for slot in 0..4 {
                let b = e.buffer(slot);
                let byte = b'a' + 3 - slot as u8;
                assert!(b[..100].iter().all(|&x| x == byte), "{}", def.name);
                assert_eq!(b[100], 0);
            }
            e.queue(io(0, Dir::Read, 1 << 20, 4096)).unwrap();
            assert_eq!(reap(&mut e, 1), [(0, 0)], "past the end: 0 bytes");
        }
    }

    /// A slot still in flight is refused by both asynchronous engines with an error (the loop
    /// never asks it; a caller that does gets an error, not a panic), and taken again once its
    /// completion is reaped.
    #[test]
    fn a_slot_in_flight_is_an_error_in_both_asynchronous_engines() {
        let mut kinds = vec![EngineKind::Libaio];
        if crate::sys::io_uring_available().is_ok() {
            kinds.push(EngineKind::IoUring);
        }
        for kind in kinds {
            let (_dir, _path, file) = crate::engine::scratch_file();
            file.set_len(1 << 20).unwrap();
            let def = crate::engine::def(kind);
            let mut e = (def.open)(vec![file], crate::engine::Slots::new(2, 4096)).unwrap();
            e.queue(io(1, Dir::Read, 0, 4096)).unwrap();
            let busy = e.queue(io(1, Dir::Read, 8192, 4096)).unwrap_err();
            assert_eq!(busy.kind(), std::io::ErrorKind::InvalidInput, "{kind:?}");
            assert_eq!(reap(&mut e, 1), [(1, 4096)], "{kind:?}");
            e.queue(io(1, Dir::Read, 8192, 4096)).unwrap();
            assert_eq!(reap(&mut e, 1), [(1, 4096)], "{kind:?}");
        }
    }
}
