//! The write phase: create every file of a subfolder with its content and trailer.

use crate::metrics::name as metric;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::unit::{Site, State, Unit};
use super::{checkpoint, is_exhaustion, Op};
use crate::frame::{Merged, WorkerOut};
use crate::io::content::{content, verify, Fsync, Verdict};
use crate::plan::units::format_count;

/// Creates both folders of unit `u`; Some(existed) when the subfolder was there already.
fn make_dirs(w: &mut Unit, dir: &std::path::Path) -> Option<bool> {
    let top = dir.parent().expect("a top folder");
    let mut existed = false;
    for d in [top, dir] {
        let t = Instant::now();
        match std::fs::create_dir(d) {
            Ok(()) => w.ops.rec(Op::Mkdir, t.elapsed()),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => existed = d == dir,
            Err(e) => {
                if is_exhaustion(&e) {
                    exhausted(w.s, w.st);
                } else {
                    w.st.fail(format!("mkdir {}: {e}", d.display()));
                }
                return None;
            }
        }
    }
    Some(existed)
}

/// Writes one file; Err(true) when the filesystem ran out, Err(false) on another failure.
fn write_file(w: &mut Unit, size: usize, fsync: Fsync) -> Result<(), bool> {
    let path: &str = w.path;
    let data = &w.buf[..size];
    let t0 = Instant::now();
    w.ops.tick(t0);
    let f = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(path);
    let t1 = Instant::now();
    let mut f = match f {
        Ok(f) => f,
        Err(e) if is_exhaustion(&e) => return Err(true),
        Err(e) => {
            w.st.fail(format!("create {path}: {e}"));
            return Err(false);
        }
    };
    w.ops.rec(Op::Create, t1 - t0);
    if let Err(e) = f.write_all(data) {
        drop(f);
        if is_exhaustion(&e) {
            let _ = std::fs::remove_file(path);
            return Err(true);
        }
        w.st.fail(format!("write {path}: {e}"));
        return Err(false);
    }
    let t2 = Instant::now();
    w.ops.rec(Op::Write, t2 - t1);
    if fsync == Fsync::File {
        if let Err(e) = f.sync_all() {
            w.st.fail(format!("fsync {path}: {e}"));
            return Err(false);
        }
        w.ops.rec(Op::Fsync, t2.elapsed());
    }
    let t3 = Instant::now();
    drop(f);
    w.ops.rec(Op::Close, t3.elapsed());
    Ok(())
}

/// Writes subfolder `u` (keeping files an earlier run finished, with resume=1).
pub fn unit(w: &mut Unit, u: u64) {
    let (s, st) = (w.s, w.st);
    let tree = &s.tree;
    let n_files = tree.files_in(u);
    let already = st.have.lock().expect("lock").get(&u).copied();
    if already == Some(n_files) {
        return;
    }
    let dir = tree.path_of(&s.root, u);
    let Some(existed) = make_dirs(w, &dir) else {
        return;
    };
    w.path.clear();
    w.path.push_str(&dir.to_string_lossy());
    w.path.push_str("/f");
    let base = w.path.len();
    let resuming = s.resume && existed;
    let (mut written, mut bytes) = (0u64, 0u64);
    for i in 0..n_files {
        if st.stop.load(Ordering::Relaxed) || crate::stop::stop_requested() {
            return;
        }
        let n = u * tree.per_sub + i;
        w.path.truncate(base);
        let _ = write!(w.path, "{i}");
        let size = tree.size_of(n) as usize;
        content(tree, &s.pool, n, &mut w.buf[..size]);
        // Keep a file an earlier run finished: it is counted, not written again.
        if resuming && std::fs::read(&*w.path).is_ok_and(|old| verify(tree, n, &old) == Verdict::Ok)
        {
            written += 1;
            bytes += size as u64;
            continue;
        }
        match write_file(w, size, s.fsync) {
            Ok(()) => {}
            Err(true) => {
                log_unit(st, u, written, bytes);
                exhausted(s, st);
                return;
            }
            Err(false) => return,
        }
        written += 1;
        bytes += size as u64;
        w.c.files += 1;
        w.c.bytes += size as u64;
    }
    if s.fsync == Fsync::Dir {
        let t = Instant::now();
        if let Ok(d) = File::open(&dir) {
            if let Err(e) = d.sync_all() {
                return st.fail(format!("fsync {}: {e}", dir.display()));
            }
        }
        w.ops.rec(Op::Fsync, t.elapsed());
    }
    log_unit(st, u, written, bytes);
    st.unit_done(written, bytes, tree.count);
}

fn log_unit(st: &State, u: u64, files: u64, bytes: u64) {
    st.have.lock().expect("lock").insert(u, files);
    if let Some(log) = &st.log {
        checkpoint::log_unit(log, u, files, bytes);
    }
}

/// The filesystem ran out of space or inodes: a result, not an error.
fn exhausted(s: &Site, st: &State) {
    let stat = crate::sys::statvfs(&s.root).ok();
    let total: u64 = st.have.lock().expect("lock").values().sum::<u64>();
    let fs = crate::sys::mounts::containing(&s.root)
        .map(|m| m.fstype)
        .unwrap_or_else(|| "the filesystem".into());
    let what = match stat {
        Some(x) if x.inodes > 0 && x.inodes_free == 0 => "inodes",
        _ => "space",
    };
    let msg = format!(
        "{fs} ran out of {what} after {} files",
        format_count(total as f64)
    );
    st.exhausted.lock().expect("lock").get_or_insert(msg);
    st.stop.store(true, Ordering::Relaxed);
}

type Figures = (BTreeMap<String, f64>, Vec<String>, Option<String>);

/// The write phase's figures: rates, space and inodes used, overhead, exhaustion.
pub fn figures(st: &State, p: &WorkerOut, m: &Merged, wall: Duration) -> Figures {
    let mut out = BTreeMap::new();
    let secs = wall.as_secs_f64().max(1e-9);
    let (files, bytes) = (p.counter("files"), p.counter("bytes"));
    let have_total: u64 = st.have.lock().expect("lock").values().sum();
    let mut put = |k: &str, v: f64| {
        out.insert(k.to_string(), v);
    };
    put("files", files);
    put("bytes", bytes);
    put(metric::FILES_PER_SEC, files / secs);
    put(metric::BYTES_PER_SEC, bytes / secs);
    put(metric::FILES_TOTAL, have_total as f64);
    if p.counter(metric::END_FSYNC_NS) > 0.0 {
        put(metric::END_FSYNC_NS, p.counter(metric::END_FSYNC_NS));
    }
    if let (Some(b), Some(a)) = (&m.frame.statvfs_before, &m.frame.statvfs_after) {
        let blocks = (a.blocks - a.blocks_free).saturating_sub(b.blocks - b.blocks_free);
        let space = blocks * a.block_size;
        let inodes = (a.inodes - a.inodes_free).saturating_sub(b.inodes - b.inodes_free);
        put(metric::SPACE_USED_BYTES, space as f64);
        put(metric::BLOCKS_USED, blocks as f64);
        put(metric::BLOCK_SIZE, a.block_size as f64);
        put(metric::BLOCKS_PER_SEC, blocks as f64 / secs);
        if a.inodes == 0 {
            // btrfs allocates inodes as it goes: statvfs counts none, so there is no figure.
            put(metric::INODES_DYNAMIC, 1.0);
        } else {
            put(metric::INODES_USED, inodes as f64);
        }
        if space > 0 {
            put(
                metric::SPACE_OVERHEAD_PCT,
                (space as f64 - bytes) / space as f64 * 100.0,
            );
        }
    }
    let mut notes = Vec::new();
    if st.start_files > 0 {
        notes.push(format!(
            "resumed: {} files were already on disk and were not written again",
            format_count(st.start_files as f64)
        ));
    }
    if let Some(x) = st.exhausted.lock().expect("lock").clone() {
        notes.push(crate::store::note::make(
            crate::store::note::Kind::Exhausted,
            &x,
        ));
        let k = if x.contains("inodes") {
            metric::EXHAUSTED_INODES
        } else {
            metric::EXHAUSTED_SPACE
        };
        out.insert(k.into(), 1.0);
        // What statvfs said when the writing stopped: how full "full" was.
        if let Some(a) = &m.frame.statvfs_after {
            out.insert(
                metric::FS_BYTES_AVAIL_AFTER.into(),
                (a.blocks_avail * a.block_size) as f64,
            );
            out.insert(metric::FS_INODES_FREE_AFTER.into(), a.inodes_free as f64);
        }
    }
    if p.stopped.is_some() {
        notes.push(crate::store::note::make(
            crate::store::note::Kind::Interrupted,
            "resume=1 continues the tree",
        ));
    }
    let error = st.error.lock().expect("lock").clone();
    (out, notes, error)
}
