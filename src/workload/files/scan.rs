//! The read, stat and delete phases: one function per phase kind, each over one subfolder.

use crate::metrics::name as metric;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs::File;
use std::io::Read;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::unit::{State, Unit};
use super::{fs_detected, Op, PhaseKind};
use crate::frame::{Merged, WorkerOut};
use crate::io::content::{verify, Verdict};

impl Unit<'_> {
    /// Points `path` at file `i` of the unit and counts it; false when the phase stops.
    fn file(&mut self, i: u64, base: usize) -> bool {
        if self.st.stop.load(Ordering::Relaxed) || crate::stop::stop_requested() {
            return false;
        }
        self.path.truncate(base);
        let _ = write!(self.path, "{i}");
        self.c.files += 1;
        true
    }

    fn start(&mut self, u: u64) -> usize {
        let dir = self.s.tree.path_of(&self.s.root, u);
        self.path.clear();
        self.path.push_str(&dir.to_string_lossy());
        self.path.push_str("/f");
        self.path.len()
    }

    /// Reads one file whole; Err(None) when it was counted as damaged, Err(Some) on failure.
    fn read_file(&mut self, want: usize) -> Result<usize, Option<String>> {
        let t0 = Instant::now();
        self.ops.tick(t0);
        let f = File::open(&*self.path);
        let t1 = Instant::now();
        let mut f = match f {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                self.c.missing += 1;
                return Err(None);
            }
            Err(e) if fs_detected(&e) => {
                self.c.fs_detected += 1;
                return Err(None);
            }
            Err(e) => return Err(Some(format!("open {}: {e}", self.path))),
        };
        self.ops.rec(Op::Open, t1 - t0);
        let mut got = 0;
        let buf = &mut self.buf[..];
        let r = loop {
            match f.read(&mut buf[got..]) {
                Ok(0) => break Ok(()),
                Ok(k) => {
                    got += k;
                    // A short read of a regular file is its end: one read per file when the
                    // length is the expected one (longer files fill more).
                    if got == buf.len() || (got == want && got < buf.len()) {
                        break Ok(());
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => break Err(e),
            }
        };
        let t2 = Instant::now();
        self.ops.rec(Op::Read, t2 - t1);
        drop(f);
        self.ops.rec(Op::Close, t2.elapsed());
        match r {
            Err(e) if fs_detected(&e) => {
                self.c.fs_detected += 1;
                Err(None)
            }
            Err(e) => Err(Some(format!("read {}: {e}", self.path))),
            Ok(()) => Ok(got),
        }
    }

    /// Reads every file of unit `u` back and verifies its trailer.
    pub fn read(&mut self, u: u64, n_files: u64) {
        let base = self.start(u);
        let mut bytes = 0u64;
        for i in 0..n_files {
            if !self.file(i, base) {
                return;
            }
            let n = u * self.s.tree.per_sub + i;
            let got = match self.read_file(self.s.tree.size_of(n) as usize) {
                Ok(got) => got,
                Err(None) => continue,
                Err(Some(e)) => return self.st.fail(e),
            };
            bytes += got as u64;
            self.c.bytes += got as u64;
            match verify(&self.s.tree, n, &self.buf[..got]) {
                Verdict::Ok => self.c.ok += 1,
                Verdict::CrcMismatch => self.c.crc += 1,
                Verdict::WrongIdentity => self.c.identity += 1,
                Verdict::WrongSize => self.c.size += 1,
            }
        }
        self.st.unit_done(n_files, bytes, self.s.tree.count);
    }

    /// Stats every file of unit `u` and checks its size.
    pub fn stat(&mut self, u: u64, n_files: u64) {
        let base = self.start(u);
        for i in 0..n_files {
            if !self.file(i, base) {
                return;
            }
            let n = u * self.s.tree.per_sub + i;
            let t0 = Instant::now();
            self.ops.tick(t0);
            let m = std::fs::metadata(&*self.path);
            self.ops.rec(Op::Stat, t0.elapsed());
            match m {
                Ok(m) if m.len() == self.s.tree.size_of(n) => self.c.ok += 1,
                Ok(_) => self.c.size += 1,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => self.c.missing += 1,
                Err(e) if fs_detected(&e) => self.c.fs_detected += 1,
                Err(e) => return self.st.fail(format!("stat {}: {e}", self.path)),
            }
        }
        self.st.unit_done(n_files, 0, self.s.tree.count);
    }

    /// Unlinks every file of unit `u`, then its folder (and the top folder after its last).
    pub fn delete(&mut self, u: u64, n_files: u64) {
        let base = self.start(u);
        for i in 0..n_files {
            if !self.file(i, base) {
                return;
            }
            let t0 = Instant::now();
            self.ops.tick(t0);
            let r = std::fs::remove_file(&*self.path);
            self.ops.rec(Op::Unlink, t0.elapsed());
            match r {
                Ok(()) => self.c.ok += 1,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => self.c.missing += 1,
                Err(e) => return self.st.fail(format!("unlink {}: {e}", self.path)),
            }
        }
        let tree = &self.s.tree;
        let dir = tree.path_of(&self.s.root, u);
        let t = Instant::now();
        let _ = std::fs::remove_dir(&dir);
        if u % tree.subs == tree.subs - 1 {
            let _ = std::fs::remove_dir(dir.parent().expect("top"));
        }
        self.ops.rec(Op::Rmdir, t.elapsed());
        self.st.unit_done(n_files, 0, tree.count);
    }
}

type Figures = (BTreeMap<String, f64>, Vec<String>, Option<String>);

/// The figures of a read, stat or delete phase, and the integrity verdict.
pub fn figures(kind: PhaseKind, st: &State, p: &WorkerOut, m: &Merged, wall: Duration) -> Figures {
    let mut out = BTreeMap::new();
    let secs = wall.as_secs_f64().max(1e-9);
    let files = p.counter("files");
    out.insert("files".into(), files);
    out.insert(metric::FILES_PER_SEC.into(), files / secs);
    if kind == PhaseKind::Read {
        out.insert("bytes".into(), p.counter("bytes"));
        out.insert(metric::BYTES_PER_SEC.into(), p.counter("bytes") / secs);
    }
    let c = |k: &str| p.counter(k) as u64;
    if kind != PhaseKind::Delete {
        for (name, k) in [
            (metric::INTEGRITY_OK, "ok"),
            (metric::CRC_MISMATCH, "crc"),
            (metric::WRONG_IDENTITY, "identity"),
            (metric::WRONG_SIZE, "size"),
            ("missing", "missing"),
            (metric::FS_DETECTED, metric::FS_DETECTED),
        ] {
            out.insert(name.into(), p.counter(k));
        }
    } else if let (Some(b), Some(a)) = (&m.frame.statvfs_before, &m.frame.statvfs_after) {
        out.insert(
            metric::SPACE_FREED_BYTES.into(),
            (b.blocks - b.blocks_free).saturating_sub(a.blocks - a.blocks_free) as f64
                * a.block_size as f64,
        );
    }
    let bad = c("crc") + c("identity") + c("size") + c("missing") + c(metric::FS_DETECTED);
    let mut error = st.error.lock().expect("lock").clone();
    if bad > 0 && error.is_none() {
        error = Some(format!(
            "integrity: {bad} of {} files failed ({} checksum mismatch, {} wrong identity, {} wrong size, {} missing, {} I/O errors from the filesystem)",
            c("files"), c("crc"), c("identity"), c("size"), c("missing"), c(metric::FS_DETECTED)
        ));
    }
    (out, Vec::new(), error)
}
