//! `sync`: pread(2)/pwrite(2), one I/O at a time (fio's `sync` and `psync`). Each I/O is done
//! when queued; `complete` hands it back, so the runner's timing covers the system call.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

use super::{EngineDef, Io, IoEngine};
use crate::plan::job::EngineKind;
use crate::sys::AlignedBuf;

pub const DEF: EngineDef = EngineDef {
    kind: EngineKind::Sync,
    name: "sync",
    summary: "pread/pwrite, one I/O at a time (fio sync/psync); iodepth above 1 has no effect",
    open,
    available: super::always,
};

struct Sync {
    file: File,
    bufs: AlignedBuf,
    buf_size: usize,
    done: Vec<(usize, i64)>,
}

fn open(file: Option<File>, depth: usize, buf_size: usize) -> io::Result<Box<dyn IoEngine>> {
    Ok(Box::new(Sync {
        file: super::need_file(file)?,
        bufs: AlignedBuf::new(depth * buf_size),
        buf_size,
        done: Vec::with_capacity(depth),
    }))
}

impl IoEngine for Sync {
    fn buffer(&mut self, slot: usize) -> &mut [u8] {
        let s = self.buf_size;
        &mut self.bufs[slot * s..(slot + 1) * s]
    }

    fn queue(&mut self, io: Io) -> io::Result<()> {
        let s = self.buf_size;
        let buf = &mut self.bufs[io.slot * s..io.slot * s + io.len];
        let r = loop {
            let r = if io.write {
                self.file.write_at(buf, io.offset)
            } else {
                self.file.read_at(buf, io.offset)
            };
            match r {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                r => break r,
            }
        };
        let res = match r {
            Ok(n) => n as i64,
            Err(e) => -(e.raw_os_error().unwrap_or(libc::EIO) as i64),
        };
        self.done.push((io.slot, res));
        Ok(())
    }

    fn complete(&mut self, _min: usize, done: &mut dyn FnMut(usize, i64)) -> io::Result<()> {
        for (slot, res) in self.done.drain(..) {
            done(slot, res);
        }
        Ok(())
    }

    fn sync(&mut self, data_only: bool) -> io::Result<()> {
        if data_only {
            self.file.sync_data()
        } else {
            self.file.sync_all()
        }
    }

    fn describe(&self) -> String {
        "pread/pwrite".into()
    }
}
