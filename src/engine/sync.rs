//! `sync`: pread(2)/pwrite(2), one I/O at a time (fio's `sync` and `psync`); `pvsync` and
//! `pvsync2`: the same through preadv(2)/pwritev(2) and preadv2(2)/pwritev2(2) with one buffer.
//! Each I/O is done when queued; `complete` hands it back, so the runner's timing covers the
//! system call.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

use super::{Engine, EngineDef, Io, IoEngine, Reaped, SyncKind};
use crate::plan::dir::Dir;
use crate::plan::job::EngineKind;
use crate::sys::AlignedBuf;

pub const DEF: EngineDef = EngineDef {
    kind: EngineKind::Sync,
    name: "sync",
    summary: "pread/pwrite, one I/O at a time (fio sync/psync); iodepth above 1 has no effect",
    open,
    available: super::always,
};

pub const PVSYNC: EngineDef = EngineDef {
    kind: EngineKind::Pvsync,
    name: "pvsync",
    summary: "preadv/pwritev of one buffer, one I/O at a time (fio pvsync)",
    open: open_pvsync,
    available: super::always,
};

pub const PVSYNC2: EngineDef = EngineDef {
    kind: EngineKind::Pvsync2,
    name: "pvsync2",
    summary:
        "preadv2/pwritev2 of one buffer (RWF_ATOMIC with atomic=1), one I/O at a time (fio pvsync2)",
    open: open_pvsync2,
    available: super::always,
};

/// Which system calls an engine of this file makes.
#[derive(Clone, Copy, PartialEq)]
enum Calls {
    Plain,
    Vectored,
    Vectored2,
}

pub struct Sync {
    files: Vec<File>,
    bufs: AlignedBuf,
    buf_size: usize,
    done: Vec<Reaped>,
    calls: Calls,
}

fn open(files: Vec<File>, slots: super::Slots) -> io::Result<Engine> {
    open_with(files, slots, Calls::Plain)
}

fn open_pvsync(files: Vec<File>, slots: super::Slots) -> io::Result<Engine> {
    open_with(files, slots, Calls::Vectored)
}

fn open_pvsync2(files: Vec<File>, slots: super::Slots) -> io::Result<Engine> {
    open_with(files, slots, Calls::Vectored2)
}

fn open_with(files: Vec<File>, slots: super::Slots, calls: Calls) -> io::Result<Engine> {
    Ok(Engine::Sync(Sync {
        calls,
        files: super::need_files(files)?,
        bufs: slots.alloc(),
        buf_size: slots.size,
        done: Vec::with_capacity(slots.depth),
    }))
}

impl IoEngine for Sync {
    fn buffer(&mut self, slot: usize) -> &mut [u8] {
        super::slot_of(&mut self.bufs, self.buf_size, slot)
    }

    fn queue(&mut self, io: Io) -> io::Result<()> {
        let s = self.buf_size;
        let buf = &mut self.bufs[io.slot * s..io.slot * s + io.len];
        let file = &self.files[io.file];
        let v2 = self.calls == Calls::Vectored2;
        let r = loop {
            let r = match (self.calls, io.dir) {
                (_, Dir::Trim) => Err(io::Error::from(io::ErrorKind::InvalidInput)),
                (Calls::Plain, Dir::Write) => file.write_at(buf, io.offset),
                (Calls::Plain, Dir::Read) => file.read_at(buf, io.offset),
                (_, Dir::Write) => crate::sys::pwritev(file, buf, io.offset, v2, io.flags.rw_flags),
                (_, Dir::Read) => crate::sys::preadv(file, buf, io.offset, v2),
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
        self.done.push(Reaped { slot: io.slot, res });
        Ok(())
    }

    fn complete(&mut self, _min: usize, mut done: impl FnMut(&[Reaped])) -> io::Result<()> {
        if !self.done.is_empty() {
            done(&self.done);
            self.done.clear();
        }
        Ok(())
    }

    fn sync(&mut self, kind: SyncKind) -> io::Result<()> {
        super::sync_all(&self.files, kind)
    }

    fn trim(&mut self, file: usize, offset: u64, len: u64) -> io::Result<()> {
        crate::sys::trim(&self.files[file], offset, len)
    }

    fn describe(&self) -> String {
        match self.calls {
            Calls::Plain => "pread/pwrite",
            Calls::Vectored => "preadv/pwritev",
            Calls::Vectored2 => "preadv2/pwritev2",
        }
        .into()
    }
}
