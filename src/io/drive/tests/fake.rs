//! Engines without a device for the loop's tests: one that does every I/O at once and keeps what
//! it was asked, one with a "disk" that reads and writes land on, one that keeps every I/O in
//! flight until asked, and one whose I/Os take longer the more are in flight.

use std::collections::VecDeque;
use std::time::Duration;

use crate::engine::{Io, IoEngine, Reaped, SyncKind};
use crate::plan::dir::Dir;

/// The buffer of `slot` in `buf`, which grows to hold `size` bytes a slot.
pub fn slot(buf: &mut Vec<u8>, slot: usize, size: usize) -> &mut [u8] {
    if buf.len() < (slot + 1) * size {
        buf.resize((slot + 1) * size, 0);
    }
    &mut buf[slot * size..(slot + 1) * size]
}

/// Hands `done` the completions kept, all at once.
fn hand(done: &mut Vec<Reaped>, mut to: impl FnMut(&[Reaped])) -> std::io::Result<()> {
    if !done.is_empty() {
        to(done);
        done.clear();
    }
    Ok(())
}

/// Does every I/O at once, keeping each (its direction, with its `Io`) in the order the loop
/// asked for them; trims too.
#[derive(Default)]
pub struct Seen {
    buf: Vec<u8>,
    pub ops: Vec<Io>,
    done: Vec<Reaped>,
    pub syncs: Vec<SyncKind>,
}

impl IoEngine for Seen {
    fn buffer(&mut self, s: usize) -> &mut [u8] {
        slot(&mut self.buf, s, 1 << 20)
    }
    fn queue(&mut self, io: Io) -> std::io::Result<()> {
        self.ops.push(io);
        self.done.push(Reaped {
            slot: io.slot,
            res: io.len as i64,
        });
        Ok(())
    }
    fn complete(&mut self, _: usize, done: impl FnMut(&[Reaped])) -> std::io::Result<()> {
        hand(&mut self.done, done)
    }
    fn sync(&mut self, kind: SyncKind) -> std::io::Result<()> {
        self.syncs.push(kind);
        Ok(())
    }
    fn describe(&self) -> String {
        "seen".into()
    }
    fn trim(&mut self, file: usize, offset: u64, len: u64) -> std::io::Result<()> {
        self.ops.push(Io {
            dir: Dir::Trim,
            file,
            offset,
            len: len as usize,
            ..Io::default()
        });
        Ok(())
    }
}

/// A "disk" that writes land on and reads come from; every write may fail with an errno.
#[derive(Default)]
pub struct Disk {
    pub ios: Vec<Io>,
    pub buf: Vec<u8>,
    pub bs: usize,
    done: Vec<Reaped>,
    pub disk: Vec<u8>,
    pub write_errno: Option<i32>,
}

impl Disk {
    pub fn new(bs: u64, disk: Vec<u8>) -> Disk {
        Disk {
            bs: bs as usize,
            disk,
            ..Disk::default()
        }
    }
}

impl IoEngine for Disk {
    fn buffer(&mut self, s: usize) -> &mut [u8] {
        slot(&mut self.buf, s, self.bs)
    }
    fn queue(&mut self, io: Io) -> std::io::Result<()> {
        self.ios.push(io);
        if let Some(e) = self.write_errno.filter(|_| io.dir == Dir::Write) {
            self.done.push(Reaped {
                slot: io.slot,
                res: -(e as i64),
            });
            return Ok(());
        }
        let (at, end) = (io.offset as usize, io.offset as usize + io.len);
        if self.disk.len() < end {
            self.disk.resize(end, 0);
        }
        let b = slot(&mut self.buf, io.slot, self.bs);
        match io.dir {
            Dir::Write => self.disk[at..end].copy_from_slice(&b[..io.len]),
            _ => b[..io.len].copy_from_slice(&self.disk[at..end]),
        }
        self.done.push(Reaped {
            slot: io.slot,
            res: io.len as i64,
        });
        Ok(())
    }
    fn complete(&mut self, _: usize, done: impl FnMut(&[Reaped])) -> std::io::Result<()> {
        hand(&mut self.done, done)
    }
    fn sync(&mut self, _: SyncKind) -> std::io::Result<()> {
        Ok(())
    }
    fn describe(&self) -> String {
        "disk".into()
    }
}

/// Keeps every I/O in flight until asked for completions, then completes the oldest; counts
/// the I/Os queued while an overlapping one was in flight.
#[derive(Default)]
pub struct Slow {
    buf: Vec<u8>,
    flight: VecDeque<(usize, u64, usize)>,
    pub queued: usize,
    pub overlapped: usize,
}

impl IoEngine for Slow {
    fn buffer(&mut self, s: usize) -> &mut [u8] {
        slot(&mut self.buf, s, 8192)
    }
    fn queue(&mut self, io: Io) -> std::io::Result<()> {
        let end = io.offset + io.len as u64;
        let hit = |f: &(usize, u64, usize)| f.1 < end && io.offset < f.1 + f.2 as u64;
        self.overlapped += self.flight.iter().any(hit) as usize;
        self.queued += 1;
        self.flight.push_back((io.slot, io.offset, io.len));
        Ok(())
    }
    fn complete(&mut self, _: usize, mut done: impl FnMut(&[Reaped])) -> std::io::Result<()> {
        if let Some((slot, _, len)) = self.flight.pop_front() {
            done(&[Reaped {
                slot,
                res: len as i64,
            }]);
        }
        Ok(())
    }
    fn sync(&mut self, _: SyncKind) -> std::io::Result<()> {
        Ok(())
    }
    fn describe(&self) -> String {
        "slow".into()
    }
}

/// A device whose every I/O takes 2 ms per I/O in flight: it sleeps that long, then completes
/// them all.
#[derive(Default)]
pub struct Queue {
    buf: Vec<u8>,
    flight: Vec<usize>,
    pub deepest: usize,
}

impl IoEngine for Queue {
    fn buffer(&mut self, s: usize) -> &mut [u8] {
        slot(&mut self.buf, s, 4096)
    }
    fn queue(&mut self, io: Io) -> std::io::Result<()> {
        self.flight.push(io.slot);
        self.deepest = self.deepest.max(self.flight.len());
        Ok(())
    }
    fn complete(&mut self, _: usize, mut done: impl FnMut(&[Reaped])) -> std::io::Result<()> {
        std::thread::sleep(Duration::from_millis(2 * self.flight.len() as u64));
        let all: Vec<Reaped> = self
            .flight
            .drain(..)
            .map(|slot| Reaped { slot, res: 4096 })
            .collect();
        done(&all);
        Ok(())
    }
    fn sync(&mut self, _: SyncKind) -> std::io::Result<()> {
        Ok(())
    }
    fn describe(&self) -> String {
        "queue".into()
    }
}
