//! fio's I/O logs (iolog), re-implemented from fio's documentation ("Trace file format"): the
//! version 2 text (`fio version 2 iolog`, then `FILE add|open|close` and
//! `FILE read|write|sync|datasync|trim|wait OFFSET LENGTH` lines, `wait` in microseconds) and
//! version 3 (`fio version 3 iolog`, every line led by its time in microseconds from the start,
//! no `wait`). `parse` reads one into the operations a worker replays (`Replay`); `Recorder`
//! writes a worker's I/O as version 3 (fio's `write_iolog`). A blktrace binary trace is told
//! apart by its magic and read by `blktrace.rs`; other binary files are refused (bad magic).

use std::fmt::Write;
use std::time::Duration;

/// What one replayed line does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpKind {
    Read,
    Write,
    Sync,
    Datasync,
    Trim,
}

impl OpKind {
    /// The line of an I/O in this direction.
    pub fn of(d: crate::plan::dir::Dir) -> OpKind {
        match d {
            crate::plan::dir::Dir::Read => OpKind::Read,
            crate::plan::dir::Dir::Write => OpKind::Write,
            crate::plan::dir::Dir::Trim => OpKind::Trim,
        }
    }

    /// The line of a sync.
    pub fn sync(kind: crate::engine::SyncKind) -> OpKind {
        match kind {
            crate::engine::SyncKind::Fsync => OpKind::Sync,
            crate::engine::SyncKind::Fdatasync => OpKind::Datasync,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Op {
    /// When it is due, from the start of the replay (scaled by replay_time_scale).
    pub at: Duration,
    pub kind: OpKind,
    pub offset: u64,
    pub len: u64,
}

/// A trace as a worker replays it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Replay {
    pub ops: Vec<Op>,
    /// Issue as fast as possible, in order (replay_no_stall).
    pub no_stall: bool,
    /// The files the trace names, in order of first use.
    pub files: Vec<String>,
    /// Trims in the trace, not replayed (fsbench issues no trims).
    pub trims: u64,
}

impl Replay {
    /// Whether the trace writes.
    pub fn writes(&self) -> bool {
        self.ops.iter().any(|o| o.kind == OpKind::Write)
    }

    /// The byte after the last one the trace reads or writes.
    pub fn extent(&self) -> u64 {
        self.ops
            .iter()
            .filter(|o| matches!(o.kind, OpKind::Read | OpKind::Write))
            .map(|o| o.offset.saturating_add(o.len))
            .max()
            .unwrap_or(0)
    }
}

/// How offsets and times are changed on replay (fio's replay_* options).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Adjust {
    /// Percent of the trace's rate (replay_time_scale; 200 replays twice as fast).
    pub time_scale: u32,
    /// Offsets are divided by this (replay_scale; 1: unchanged).
    pub scale: u64,
    /// Offsets are rounded down to a multiple of this power of two (replay_align; 0: none).
    pub align: u64,
}

impl Default for Adjust {
    fn default() -> Adjust {
        Adjust {
            time_scale: 100,
            scale: 1,
            align: 0,
        }
    }
}

/// blktrace's magic (the first 32-bit word, less its version byte).
const BLKTRACE_MAGIC: u32 = 0x6561_7400;

/// Reads an iolog's bytes; errors name the line (`LINE: what; fix`), the caller names the file.
pub fn parse(bytes: &[u8], adj: Adjust) -> Result<Replay, String> {
    if is_blktrace(bytes) {
        return blktrace::parse(bytes, adj);
    }
    let text = match std::str::from_utf8(bytes) {
        Ok(t) if !t.starts_with("fio version") && (t.contains('\0') || is_blktrace(bytes)) => {
            return Err(binary(bytes))
        }
        Ok(t) => t,
        Err(_) => return Err(binary(bytes)),
    };
    let mut lines = text.lines().enumerate();
    let version = match lines.next().map(|(_, l)| l.trim()) {
        Some("fio version 2 iolog") => 2,
        Some("fio version 3 iolog") => 3,
        Some(l) if l.contains(',') => {
            return Err("1: a version 1 iolog (rw, offset, length), which fio itself no longer reads: record it again with a current fio (version 3)".into())
        }
        _ => {
            return Err(
                "1: the first line must be 'fio version 2 iolog' or 'fio version 3 iolog' (an iolog fio wrote)"
                    .into(),
            )
        }
    };
    let mut p = Lines {
        version,
        adj,
        r: Replay::default(),
        waited: Duration::ZERO,
    };
    for (i, line) in lines {
        p.line(i + 1, line.trim())?;
    }
    Ok(p.r)
}

/// The lines of a text iolog read so far.
struct Lines {
    version: u8,
    adj: Adjust,
    r: Replay,
    /// Version 2: the waits so far (when the next operation is due).
    waited: Duration,
}

impl Lines {
    /// A time in the trace, scaled by replay_time_scale.
    fn scaled(&self, us: u64) -> Duration {
        Duration::from_micros(us.saturating_mul(100) / self.adj.time_scale.max(1) as u64)
    }

    /// Line `n`: a file's add, open or close, an operation, or (version 2) a wait.
    fn line(&mut self, n: usize, line: &str) -> Result<(), String> {
        if line.is_empty() {
            return Ok(());
        }
        let mut f: Vec<&str> = line.split_whitespace().collect();
        let at = if self.version == 3 {
            let t = f.first().and_then(|t| t.parse::<u64>().ok()).ok_or_else(|| {
                format!("{n}: '{line}' does not start with its time in microseconds (version 3: TIME FILE ACTION [OFFSET LENGTH])")
            })?;
            f.remove(0);
            self.scaled(t)
        } else {
            self.waited
        };
        let (file, action) = match f.as_slice() {
            [file, action] | [file, action, _, _] => (*file, *action),
            _ => {
                return Err(format!(
                    "{n}: '{line}' is not 'FILE ACTION' nor 'FILE ACTION OFFSET LENGTH'"
                ))
            }
        };
        if !self.r.files.iter().any(|x| x == file) {
            self.r.files.push(file.to_string());
        }
        if matches!(action, "add" | "open" | "close") {
            if f.len() != 2 {
                return Err(format!("{n}: '{action}' takes no offset or length"));
            }
            return Ok(());
        }
        let num = |s: &str, what: &str| {
            s.parse::<u64>()
                .map_err(|_| format!("{n}: {what} '{s}' is not a whole number of bytes"))
        };
        let (Some(o), Some(l)) = (f.get(2), f.get(3)) else {
            return Err(format!("{n}: '{action}' needs an offset and a length"));
        };
        let (offset, len) = (num(o, "offset")?, num(l, "length")?);
        if let Some(kind) = self.action(n, action, offset)? {
            self.op(n, (action, kind), at, (offset, len))?;
        }
        Ok(())
    }

    /// What an action does; None for a wait (version 2: its microseconds in `us`).
    fn action(&mut self, n: usize, action: &str, us: u64) -> Result<Option<OpKind>, String> {
        Ok(Some(match action {
            "read" => OpKind::Read,
            "write" => OpKind::Write,
            "sync" => OpKind::Sync,
            "datasync" => OpKind::Datasync,
            "trim" => OpKind::Trim,
            "wait" if self.version == 2 => {
                // fio discards waits under 100 us.
                if us >= 100 {
                    self.waited += self.scaled(us);
                }
                return Ok(None);
            }
            "wait" => {
                return Err(format!(
                    "{n}: 'wait' is not allowed in a version 3 iolog (its times say when)"
                ))
            }
            o => {
                return Err(format!(
                "{n}: unknown action '{o}' (add, open, close, read, write, sync, datasync, trim{})",
                if self.version == 2 { ", wait" } else { "" }
            ))
            }
        }))
    }

    /// An operation due `at`, its offset scaled and aligned (trims counted, not kept).
    fn op(
        &mut self,
        n: usize,
        (action, kind): (&str, OpKind),
        at: Duration,
        (offset, len): (u64, u64),
    ) -> Result<(), String> {
        if matches!(kind, OpKind::Read | OpKind::Write) && len == 0 {
            return Err(format!("{n}: a {action} of 0 bytes"));
        }
        if kind == OpKind::Trim {
            self.r.trims += 1;
            return Ok(());
        }
        let mut offset = offset / self.adj.scale.max(1);
        if self.adj.align > 1 {
            offset &= !(self.adj.align - 1);
        }
        self.r.ops.push(Op {
            at,
            kind,
            offset,
            len,
        });
        Ok(())
    }
}

/// Whether the first word is blktrace's magic (either byte order).
fn is_blktrace(bytes: &[u8]) -> bool {
    bytes.get(..4).is_some_and(|b| {
        let b = [b[0], b[1], b[2], b[3]];
        [u32::from_le_bytes(b), u32::from_be_bytes(b)]
            .iter()
            .any(|m| m & 0xffff_ff00 == BLKTRACE_MAGIC)
    })
}

/// Why a binary file is not an iolog (nor a blktrace: bad magic).
fn binary(_bytes: &[u8]) -> String {
    "not text and not a blktrace (bad magic): give an iolog fio wrote (its first line 'fio version 3 iolog') or a blktrace (blkparse -d)".into()
}

/// A worker's I/O written as fio's version 3 iolog (write_iolog).
#[derive(Debug, Clone, Default)]
pub struct Recorder {
    files: Vec<String>,
    pub text: String,
}

impl Recorder {
    /// Starts the log of I/O on `files` (their names as the log gives them; an I/O names its
    /// file by index).
    pub fn new(files: &[String]) -> Recorder {
        let mut text = String::from("fio version 3 iolog\n");
        for f in files {
            let _ = writeln!(text, "0 {f} add");
        }
        for f in files {
            let _ = writeln!(text, "0 {f} open");
        }
        Recorder {
            files: files.to_vec(),
            text,
        }
    }

    /// An I/O of `len` bytes at `offset` of file `file` issued `at` after the start; a sync is
    /// of every file.
    pub fn op(&mut self, at: Duration, kind: OpKind, file: usize, offset: u64, len: u64) {
        let action = match kind {
            OpKind::Read => "read",
            OpKind::Write => "write",
            OpKind::Sync => "sync",
            OpKind::Datasync => "datasync",
            OpKind::Trim => "trim",
        };
        let at = at.as_micros();
        if matches!(kind, OpKind::Sync | OpKind::Datasync) {
            for f in &self.files {
                let _ = writeln!(self.text, "{at} {f} {action} {offset} {len}");
            }
            return;
        }
        let f = &self.files[file.min(self.files.len() - 1)];
        let _ = writeln!(self.text, "{at} {f} {action} {offset} {len}");
    }

    pub fn close(&mut self, at: Duration) {
        for f in &self.files {
            let _ = writeln!(self.text, "{} {f} close", at.as_micros());
        }
    }
}

mod blktrace;

#[cfg(test)]
mod tests;
