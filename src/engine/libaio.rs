//! `libaio`: Linux native AIO (io_submit, io_getevents), iodepth I/Os in flight, each submitted
//! as it is queued (fio's libaio with its default iodepth_batch_submit=1). On a buffered file the
//! kernel does each I/O inside io_submit, as it does for fio. The context lives in `sys::aio`.

use std::fs::File;
use std::io;

use super::{EngineDef, Io, IoEngine};
use crate::plan::job::EngineKind;
use crate::sys::aio::Aio;

pub const DEF: EngineDef = EngineDef {
    kind: EngineKind::Libaio,
    name: "libaio",
    summary: "Linux native AIO (io_submit/io_getevents); iodepth I/Os in flight, buffered I/O done inside io_submit (fio libaio)",
    open,
    available: || Ok(crate::sys::aio::available()?),
};

struct Libaio {
    aio: Aio,
}

fn open(files: Vec<File>, slots: super::Slots) -> io::Result<Box<dyn IoEngine>> {
    Ok(Box::new(Libaio {
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
        self.aio
            .submit(io.slot, (io.write, io.file), io.offset, io.len, io.flags)
    }

    fn complete(&mut self, min: usize, done: &mut dyn FnMut(usize, i64)) -> io::Result<()> {
        self.aio.complete(min, done)
    }

    fn set_reap_max(&mut self, n: usize) {
        self.aio.set_reap_max(n);
    }

    fn sync(&mut self, data_only: bool) -> io::Result<()> {
        super::sync_all(self.aio.files(), data_only)
    }

    fn trim(&mut self, file: usize, offset: u64, len: u64) -> io::Result<()> {
        crate::sys::issue::trim(&self.aio.files()[file], offset, len)
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
                e.queue(Io {
                    slot,
                    file: 0,
                    write: true,
                    offset,
                    len: 4096,
                    ..Io::default()
                })
                .unwrap();
            }
            let mut done = Vec::new();
            while done.len() < 4 {
                e.complete(1, &mut |slot, res| done.push((slot, res)))
                    .unwrap();
            }
            done.sort();
            assert_eq!(
                done,
                (0..4).map(|s| (s, 4096)).collect::<Vec<_>>(),
                "{}",
                def.name
            );
            let disk = std::fs::read(&path).unwrap();
            for (i, block) in disk.chunks(4096).enumerate() {
                assert!(
                    block.iter().all(|&b| b == b'a' + 3 - i as u8),
                    "{}",
                    def.name
                );
            }
            for slot in 0..4 {
                e.buffer(slot).fill(0);
                e.queue(Io {
                    slot,
                    file: 0,
                    write: false,
                    offset: slot as u64 * 4096,
                    len: 100,
                    ..Io::default()
                })
                .unwrap();
            }
            let mut n = 0;
            e.complete(4, &mut |_, res| {
                assert_eq!(res, 100);
                n += 1;
            })
            .unwrap();
            assert_eq!(n, 4);
            for slot in 0..4 {
                let b = e.buffer(slot);
                assert!(
                    b[..100].iter().all(|&x| x == b'a' + 3 - slot as u8),
                    "{}",
                    def.name
                );
                assert_eq!(b[100], 0);
            }
            let past_end = Io {
                file: 0,
                slot: 0,
                write: false,
                offset: 1 << 20,
                len: 4096,
                ..Io::default()
            };
            e.queue(past_end).unwrap();
            e.complete(1, &mut |_, res| assert_eq!(res, 0)).unwrap();
        }
    }
}
