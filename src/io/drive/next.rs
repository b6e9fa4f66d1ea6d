//! What the loop issues next (fio's get_next_offset, get_next_buflen and the syncs between):
//! an I/O held back (its overlap, its rate), the next of a replayed trace, or a drawn one (its
//! direction by the mix, its size, then where it goes in the worker's files); the flags it
//! carries; and the syncs the writes make due.

use super::Issue;
use crate::engine::SyncKind;
use crate::io::clock::{Clock, Ns};
use crate::io::files::{FileSet, Region};
use crate::io::iolog::{OpKind, Replay};
use crate::io::worker::{Atomic, Marks, Mix, Ops, Source, Syncs};
use crate::io::DataGen;
use crate::plan::dir::{Dir, PerDir};
use crate::plan::job::BlockSize;
use crate::sys::ioflags::{IoFlags, RWF_ATOMIC};
use std::fs::File;
use std::sync::Arc;

/// What comes next.
pub enum Pick {
    /// An I/O ready to go (held back before, or replayed).
    Ready(Issue),
    /// A direction and size drawn: the rate may hold it, then `place` puts it.
    Drawn(Dir, u64),
    /// Nothing until then (a replayed operation not due yet).
    Wait(Ns),
    /// A sync is due (once the queue drains).
    Sync,
    /// Nothing more.
    End,
}

enum From {
    Files { set: FileSet, region: Region },
    Trace { replay: Arc<Replay>, at: usize },
}

/// The files whose cached pages are dropped when a pass over one ends, and how many were.
struct PassEnds<'a> {
    files: &'a [File],
    dropped: u64,
}

pub struct Next<'a> {
    from: From,
    mix: Mix,
    bs: PerDir<BlockSize>,
    marks: Marks,
    syncs: Due,
    /// An I/O drawn but held back: its direction and size (the rate), or all of it (an overlap).
    pending: Option<(Dir, u64)>,
    held: Option<Issue>,
    pass_ends: Option<PassEnds<'a>>,
}

/// Syncs made due by the writes (or a replayed trace).
struct Due {
    every: Syncs,
    since: (u32, u32),
    due: Option<SyncKind>,
}

impl<'a> Next<'a> {
    pub fn new(
        (source, ops): (&Source, &Ops),
        pass_ends: Option<&'a [File]>,
        rng: &mut DataGen,
        max_bs: u64,
    ) -> Next<'a> {
        let from = match source {
            Source::Walk(w) => From::Files {
                set: FileSet::new(w, max_bs, rng),
                region: w.region,
            },
            Source::Replay(r) => From::Trace {
                replay: r.clone(),
                at: 0,
            },
        };
        Next {
            from,
            mix: ops.mix,
            bs: ops.bs.clone(),
            marks: ops.marks.clone(),
            syncs: Due {
                every: ops.syncs,
                since: (0, 0),
                due: None,
            },
            pending: None,
            held: None,
            pass_ends: pass_ends.map(|files| PassEnds { files, dropped: 0 }),
        }
    }

    /// What comes next, the trace's times on the loop's `clock`.
    #[inline]
    pub fn pick(&mut self, rng: &mut DataGen, clock: &Clock) -> Pick {
        if let Some(i) = self.held.take() {
            return Pick::Ready(i);
        }
        if let Some((d, len)) = self.pending.take() {
            return Pick::Drawn(d, len);
        }
        match &mut self.from {
            From::Files { region, .. } => {
                let d = match self.mix {
                    Mix::Only(d) => d,
                    Mix::TrimThenWrite => Dir::Trim,
                    Mix::Mixed { read_pct } => match (rng.next_u64() % 100) as u32 >= read_pct {
                        true => Dir::Write,
                        false => Dir::Read,
                    },
                };
                Pick::Drawn(d, pick_bs(&self.bs[d], rng).min(region.len))
            }
            From::Trace { replay, at } => replayed(replay, at, clock, &mut self.syncs.due),
        }
    }

    /// Where a drawn I/O goes: its file and offset (and its length, which the random map may
    /// cut); None when every file is done. A pass over a file that ends here drops its cached
    /// pages when the worker does so.
    #[inline]
    pub fn place(&mut self, dir: Dir, len: u64, rng: &mut DataGen) -> Option<Issue> {
        let From::Files { set, region } = &mut self.from else {
            return None;
        };
        let placed = set.next(dir, len, rng)?;
        if let Some(p) = self.pass_ends.as_mut() {
            if set.take_wrapped(placed.file) {
                p.drop_pages(placed.file, region);
            }
        }
        Some(Issue {
            dir,
            file: placed.file,
            offset: region.base + placed.at.offset,
            len: placed.at.len,
        })
    }

    /// Whether each trimmed block is then written.
    pub fn writes_after_trim(&self) -> bool {
        self.mix == Mix::TrimThenWrite
    }

    /// Keeps a drawn direction and size for the next pick (the rate holds it).
    pub fn keep(&mut self, dir: Dir, len: u64) {
        self.pending = Some((dir, len));
    }

    /// Issues `i` first next time (it overlaps an I/O in flight).
    pub fn hold_back(&mut self, i: Issue) {
        self.held = Some(i);
    }

    /// The loop's offset of an I/O's first byte (unique across the worker's files).
    #[inline]
    pub fn at(&self, i: &Issue) -> u64 {
        match &self.from {
            From::Files { set, .. } => set.virt(i.file, i.offset),
            From::Trace { .. } => i.offset,
        }
    }

    /// (file, byte in it) of a loop offset.
    pub fn split(&self, at: u64) -> (usize, u64) {
        match &self.from {
            From::Files { set, .. } => set.split(at),
            From::Trace { .. } => (0, at),
        }
    }

    /// The priority and RWF_* flags of an I/O: a cmdprio priority for the share of I/Os its
    /// options give (drawn as fio draws it), else the worker's own (0: none given).
    #[inline]
    pub fn flags(&self, dir: Dir, len: u64, rng: &mut DataGen) -> IoFlags {
        let m = &self.marks;
        let mut prio = 0;
        if let Some(c) = m.per_io.as_ref().filter(|c| c.share(dir, len) > 0) {
            prio = c.pick(dir, len, (rng.next_u64() % 100) as u32).unwrap_or(0);
        }
        // Else the worker's (fio's io_uring puts td->ioprio in every SQE: a submitting context
        // need not be the worker's; for libaio it is the priority ioprio_set gave the thread).
        if prio == 0 {
            prio = m.thread.unwrap_or(0);
        }
        let atomic = dir == Dir::Write && m.atomic == Atomic::Writes;
        IoFlags {
            prio,
            rw_flags: if atomic { RWF_ATOMIC } else { 0 },
        }
    }

    /// The worker thread's priority, when its job gives one.
    pub fn thread_prio(&self) -> Option<u16> {
        self.marks.thread
    }

    /// A write completed: counts it towards the syncs every so many writes.
    #[inline]
    pub fn wrote(&mut self) {
        let s = &mut self.syncs;
        s.since = (s.since.0 + 1, s.since.1 + 1);
        if s.every.fsync_every > 0 && s.since.0 >= s.every.fsync_every {
            s.since.0 = 0;
            s.due = Some(SyncKind::Fsync);
        }
        if s.every.fdatasync_every > 0 && s.since.1 >= s.every.fdatasync_every {
            s.since.1 = 0;
            s.due.get_or_insert(SyncKind::Fdatasync);
        }
    }

    /// The sync due once the queue drains, if any.
    #[inline]
    pub fn sync_due(&self) -> bool {
        self.syncs.due.is_some()
    }

    pub fn take_sync(&mut self) -> Option<SyncKind> {
        self.syncs.due.take()
    }

    /// The sync the worker ends with, if any.
    pub fn end_sync(&self) -> Option<SyncKind> {
        self.syncs.every.at_end
    }

    /// Passes whose end dropped a file's cached pages.
    pub fn pages_dropped(&self) -> u64 {
        self.pass_ends.as_ref().map_or(0, |p| p.dropped)
    }
}

impl PassEnds<'_> {
    /// A pass over `file` ended: the cached pages of the worker's range of it are dropped
    /// (posix_fadvise DONTNEED, which also starts the write-back of its dirty ones), as fio's
    /// file_invalidate_cache does over the job's offset and size (other jobs of a shared file
    /// keep theirs). Advice that fails changes no figure, so it is not an error.
    #[cold]
    fn drop_pages(&mut self, file: usize, r: &Region) {
        if let Some(f) = self.files.get(file) {
            let _ = crate::sys::fadvise_range(f, r.base, r.len, libc::POSIX_FADV_DONTNEED);
            self.dropped += 1;
        }
    }
}

/// The next operation of a replayed trace: an I/O, a wait until it is due (or for the queue to
/// drain before a sync), or the end.
fn replayed(r: &Replay, at: &mut usize, clock: &Clock, due: &mut Option<SyncKind>) -> Pick {
    loop {
        let Some(op) = r.ops.get(*at) else {
            return Pick::End;
        };
        if !r.no_stall {
            let when = Ns(op.at.as_nanos() as u64);
            if clock.now() < when {
                return Pick::Wait(when);
            }
        }
        *at += 1;
        let dir = match op.kind {
            OpKind::Read => Dir::Read,
            OpKind::Write => Dir::Write,
            OpKind::Sync | OpKind::Datasync => {
                *due = Some(match op.kind {
                    OpKind::Datasync => SyncKind::Fdatasync,
                    _ => SyncKind::Fsync,
                });
                return Pick::Sync;
            }
            // Not replayed (the parser leaves them out).
            OpKind::Trim => continue,
        };
        return Pick::Ready(Issue {
            dir,
            file: 0,
            offset: op.offset,
            len: op.len,
        });
    }
}

/// A size from `bs`: one, a multiple of the smallest in a range, or by the split's shares.
#[inline]
pub fn pick_bs(bs: &BlockSize, rng: &mut DataGen) -> u64 {
    match bs {
        BlockSize::Fixed(b) => *b,
        BlockSize::Range(lo, hi) => {
            let steps = hi / lo;
            (lo * (1 + rng.next_u64() % steps)).min(*hi)
        }
        BlockSize::Split(v) => {
            let r = (rng.next_u64() % 100) as u32;
            let mut acc = 0;
            for (size, pct) in v {
                acc += pct;
                if r < acc {
                    return *size;
                }
            }
            v.last().map(|x| x.0).unwrap_or(4096)
        }
    }
}
