//! `io_uring`: asynchronous I/O through an io_uring ring with registered buffers and a
//! registered file where the kernel allows them (fio's `io_uring` with fixedbufs and
//! registerfiles). The ring itself lives in `sys::uring`, the only place with `unsafe`.

use std::fs::File;
use std::io;

use super::{Engine, EngineDef, Io, IoEngine, Reaped, SyncKind};
use crate::plan::job::EngineKind;
use crate::sys::uring::Ring;

pub const DEF: EngineDef = EngineDef {
    kind: EngineKind::IoUring,
    name: "io_uring",
    summary:
        "io_uring with registered buffers and file; iodepth I/Os in flight (fio io_uring, libaio)",
    open,
    available: || Ok(crate::sys::io_uring_available()?),
};

pub struct Uring {
    ring: Box<Ring>,
}

fn open(files: Vec<File>, slots: super::Slots) -> io::Result<Engine> {
    Ok(Engine::IoUring(Uring {
        ring: Box::new(Ring::new(super::need_files(files)?, slots)?),
    }))
}

impl IoEngine for Uring {
    fn buffer(&mut self, slot: usize) -> &mut [u8] {
        self.ring
            .buffer(slot)
            .expect("the runner only fills buffers of slots that are not in flight")
    }

    fn queue(&mut self, io: Io) -> io::Result<()> {
        self.ring.push(&io)
    }

    fn complete(&mut self, min: usize, done: impl FnMut(&[Reaped])) -> io::Result<()> {
        self.ring.complete(min, done)
    }

    fn sync(&mut self, kind: SyncKind) -> io::Result<()> {
        super::sync_all(self.ring.files(), kind)
    }

    fn trim(&mut self, file: usize, offset: u64, len: u64) -> io::Result<()> {
        crate::sys::trim(&self.ring.files()[file], offset, len)
    }

    fn describe(&self) -> String {
        format!(
            "io_uring ({} buffers, {} file{})",
            if self.ring.fixed_buffers {
                "registered"
            } else {
                "plain"
            },
            if self.ring.fixed_file {
                "registered"
            } else {
                "plain"
            },
            if self.ring.files().len() > 1 { "s" } else { "" }
        )
    }
}
