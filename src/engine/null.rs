//! `null`: no I/O at all. Every queued I/O completes at once with its full length, so a run shows
//! the framework's own ceiling and drives the runner deterministically in tests (fio's `null`).

use std::fs::File;
use std::io;

use super::{EngineDef, Io, IoEngine};
use crate::plan::job::EngineKind;
use crate::sys::AlignedBuf;

pub const DEF: EngineDef = EngineDef {
    kind: EngineKind::Null,
    name: "null",
    summary: "no I/O: completes every request at once; measures fsbench itself",
    open,
    available: super::always,
};

struct Null {
    bufs: AlignedBuf,
    buf_size: usize,
    done: Vec<(usize, i64)>,
}

fn open(_files: Vec<File>, slots: super::Slots) -> io::Result<Box<dyn IoEngine>> {
    Ok(Box::new(Null {
        bufs: slots.alloc(),
        buf_size: slots.size,
        done: Vec::with_capacity(slots.depth),
    }))
}

impl IoEngine for Null {
    fn buffer(&mut self, slot: usize) -> &mut [u8] {
        let s = self.buf_size;
        &mut self.bufs[slot * s..(slot + 1) * s]
    }

    fn queue(&mut self, io: Io) -> io::Result<()> {
        self.done.push((io.slot, io.len as i64));
        Ok(())
    }

    fn complete(&mut self, _min: usize, done: &mut dyn FnMut(usize, i64)) -> io::Result<()> {
        for (slot, res) in self.done.drain(..) {
            done(slot, res);
        }
        Ok(())
    }

    fn sync(&mut self, _data_only: bool) -> io::Result<()> {
        Ok(())
    }

    fn trim(&mut self, _file: usize, _offset: u64, _len: u64) -> io::Result<()> {
        Ok(())
    }

    fn describe(&self) -> String {
        "no I/O".into()
    }
}
