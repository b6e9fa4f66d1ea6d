//! `null`: no I/O at all. Every queued I/O completes at once with its full length, so a run shows
//! the framework's own ceiling and drives the runner deterministically in tests (fio's `null`).

use std::fs::File;
use std::io;

use super::{Engine, EngineDef, Io, IoEngine, Reaped, SyncKind};
use crate::plan::job::EngineKind;
use crate::sys::AlignedBuf;

pub const DEF: EngineDef = EngineDef {
    kind: EngineKind::Null,
    name: "null",
    summary: "no I/O: completes every request at once; measures fsbench itself",
    open,
    available: super::always,
};

pub struct Null {
    bufs: AlignedBuf,
    buf_size: usize,
    done: Vec<Reaped>,
}

fn open(_files: Vec<File>, slots: super::Slots) -> io::Result<Engine> {
    Ok(Engine::Null(Null::new(slots)))
}

impl Null {
    pub fn new(slots: super::Slots) -> Null {
        Null {
            bufs: slots.alloc(),
            buf_size: slots.size,
            done: Vec::with_capacity(slots.depth),
        }
    }
}

impl IoEngine for Null {
    fn buffer(&mut self, slot: usize) -> &mut [u8] {
        super::slot_of(&mut self.bufs, self.buf_size, slot)
    }

    #[inline]
    fn queue(&mut self, io: Io) -> io::Result<()> {
        self.done.push(Reaped {
            slot: io.slot,
            res: io.len as i64,
        });
        Ok(())
    }

    #[inline]
    fn complete(&mut self, _min: usize, mut done: impl FnMut(&[Reaped])) -> io::Result<()> {
        if !self.done.is_empty() {
            done(&self.done);
            self.done.clear();
        }
        Ok(())
    }

    fn sync(&mut self, _kind: SyncKind) -> io::Result<()> {
        Ok(())
    }

    fn trim(&mut self, _file: usize, _offset: u64, _len: u64) -> io::Result<()> {
        Ok(())
    }

    fn describe(&self) -> String {
        "no I/O".into()
    }
}
