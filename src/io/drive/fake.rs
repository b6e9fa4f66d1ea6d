//! Engines without a device for the I/O loop's unit tests: the slot buffers they share, and one
//! that does every I/O at once and keeps what it was asked, in order.

use crate::engine::{Io, IoEngine};

/// The buffer of `slot` in `buf`, which grows to hold `size` bytes a slot.
pub fn slot(buf: &mut Vec<u8>, slot: usize, size: usize) -> &mut [u8] {
    if buf.len() < (slot + 1) * size {
        buf.resize((slot + 1) * size, 0);
    }
    &mut buf[slot * size..(slot + 1) * size]
}

/// Does every I/O at once, keeping each (`'r'`, `'w'`, or `'t'` for a trim, with its `Io`) in
/// the order the loop asked for them.
#[derive(Default)]
pub struct Seen {
    buf: Vec<u8>,
    pub ops: Vec<(char, Io)>,
    done: Vec<(usize, i64)>,
}

impl IoEngine for Seen {
    fn buffer(&mut self, s: usize) -> &mut [u8] {
        slot(&mut self.buf, s, 1 << 20)
    }
    fn queue(&mut self, io: Io) -> std::io::Result<()> {
        self.ops.push((
            if io.dir == crate::plan::dir::Dir::Write {
                'w'
            } else {
                'r'
            },
            io,
        ));
        self.done.push((io.slot, io.len as i64));
        Ok(())
    }
    fn complete(
        &mut self,
        _: usize,
        mut hand: impl FnMut(&[crate::engine::Reaped]),
    ) -> std::io::Result<()> {
        let mut out = Vec::new();
        let mut done = |slot: usize, res: i64| out.push(crate::engine::Reaped { slot, res });
        self.done.drain(..).for_each(|(s, r)| done(s, r));
        hand(&out);
        Ok(())
    }
    fn sync(&mut self, _: crate::engine::SyncKind) -> std::io::Result<()> {
        Ok(())
    }
    fn describe(&self) -> String {
        "seen".into()
    }
    fn trim(&mut self, file: usize, offset: u64, len: u64) -> std::io::Result<()> {
        let io = Io {
            file,
            offset,
            len: len as usize,
            ..Io::default()
        };
        self.ops.push(('t', io));
        Ok(())
    }
}
