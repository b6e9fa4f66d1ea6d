//! The fsync-failure experiment (the "fsyncgate" table): on a target behind fsbench's fault
//! device, write a file and make it durable (old data), overwrite it in the page cache (new data),
//! make the disk fail, fsync (the kernel should say EIO), heal the disk, fsync again (many kernels
//! now say 0: the failed pages were marked clean), read the file back through the cache, then
//! unmount, mount again and read it from the disk: new, old, mixed, or unreadable. One record per
//! target, `test` = `fsync`.

use crate::metrics::name as metric;
use std::collections::BTreeMap;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::time::Instant;

use std::sync::{Arc, Mutex};

use super::AuditError;
use crate::frame::{Merged, PhaseSpec, RunError, Session, WorkerCtx, WorkerOut};
use crate::io::{DataGen, WriteData};
use crate::provision::faultdev::Faults;
use crate::provision::Handle;
use crate::store::Phase;

/// Bytes of the file the experiment overwrites.
const SIZE: usize = 1 << 20;

/// What a read of the file gave, against the old and the new contents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seen {
    New,
    Old,
    Mixed,
    Other,
    Failed,
}

impl Seen {
    pub const ALL: [Seen; 5] = [Seen::New, Seen::Old, Seen::Mixed, Seen::Other, Seen::Failed];

    pub fn name(self) -> &'static str {
        match self {
            Seen::New => "new",
            Seen::Old => "old",
            Seen::Mixed => "mixed",
            Seen::Other => "other",
            Seen::Failed => "failed",
        }
    }
}

fn content(seed: u64) -> Vec<u8> {
    let mut buf = vec![0u8; SIZE];
    WriteData::new(seed, SIZE as u64, 0).fill(&mut buf, &mut DataGen::new(seed));
    buf
}

/// Compares what was read with the old and the new contents, 4 KiB block by block.
fn classify(got: &std::io::Result<Vec<u8>>, old: &[u8], new: &[u8]) -> Seen {
    let Ok(got) = got else { return Seen::Failed };
    if got.len() != new.len() {
        return Seen::Other;
    }
    let (mut n, mut o, mut x) = (0, 0, 0);
    for ((g, a), b) in got.chunks(4096).zip(old.chunks(4096)).zip(new.chunks(4096)) {
        if g == b {
            n += 1;
        } else if g == a {
            o += 1;
        } else {
            x += 1;
        }
    }
    match (n, o, x) {
        (_, 0, 0) => Seen::New,
        (0, _, 0) => Seen::Old,
        (_, _, 0) => Seen::Mixed,
        _ => Seen::Other,
    }
}

fn read_all(path: &Path) -> std::io::Result<Vec<u8>> {
    let f = std::fs::File::open(path)?;
    let mut buf = vec![0u8; SIZE];
    f.read_exact_at(&mut buf, 0)?;
    Ok(buf)
}

/// errno of a result, 0 for success: the record's `*_errno` metrics.
fn errno(r: &std::io::Result<()>) -> f64 {
    match r {
        Ok(()) => 0.0,
        Err(e) => e.raw_os_error().unwrap_or(-1) as f64,
    }
}

fn said(r: &std::io::Result<()>) -> String {
    match r {
        Ok(()) => "0 (success)".into(),
        Err(e) => crate::io::failure::io_errno_name(e),
    }
}

/// How long the first fsync may wait on the failing disk before the disk is healed under it.
const BLOCKED: std::time::Duration = std::time::Duration::from_secs(10);

/// The fsync while the disk fails. A filesystem may wait for the disk instead of failing (ZFS's
/// `failmode=wait` suspends the pool): after `BLOCKED` the disk is healed (and a ZFS pool
/// cleared) and the call is given a minute more. Returns its result and whether it blocked.
fn first_fsync(
    f: &std::fs::File,
    faults: &Faults,
    pool: Option<&str>,
) -> Result<(std::io::Result<()>, bool), AuditError> {
    let g = f.try_clone().map_err(AuditError::io("the file"))?;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(g.sync_all());
    });
    if let Ok(r) = rx.recv_timeout(BLOCKED) {
        return Ok((r, false));
    }
    faults.set_fail_writes(false);
    if let Some(p) = pool {
        let _ = crate::provision::exec::run_status(&crate::provision::exec::argv(&[
            "zpool", "clear", p,
        ]));
    }
    match rx.recv_timeout(std::time::Duration::from_secs(60)) {
        Ok(r) => Ok((r, true)),
        Err(_) => Err(AuditError::Case("fsync blocked on the failing disk and still had not returned 60 s after it healed (the filesystem hangs; teardown may too)".into())),
    }
}

/// Runs the experiment on a target provisioned behind the fault device.
pub fn fsync_case(h: &Handle) -> Result<Phase, AuditError> {
    let t0 = Instant::now();
    let faults = h.faults.as_ref().ok_or_else(|| {
        AuditError::Case("the target is not behind fsbench's fault device".into())
    })?;
    let path = h.mountpoint.join("fsbench-fsync.dat");
    let (old, new) = (content(0x01d), content(0x0e3));
    let f = std::fs::File::create(&path).map_err(AuditError::io(path.display()))?;
    f.write_all_at(&old, 0)
        .and_then(|_| f.sync_all())
        .map_err(AuditError::io("writing the old data"))?;
    crate::sys::sync();
    if let Some(Err(e)) = h.settle() {
        return Err(AuditError::Case(e));
    }
    f.write_all_at(&new, 0)
        .map_err(AuditError::io("overwriting in the page cache"))?;
    faults.set_fail_writes(true);
    let (first, blocked) = first_fsync(&f, faults, h.pool().as_deref())?;
    faults.set_fail_writes(false);
    let retry = f.sync_all();
    let cached = classify(&read_all(&path), &old, &new);
    let ro = crate::sys::mounts::mount_at(&h.mountpoint)
        .is_some_and(|x| x.all_options().iter().any(|o| o == "ro"));
    drop(f);
    let remount = h.offline(|_| ());
    let device = match &remount {
        Ok(()) => classify(&read_all(&path), &old, &new),
        Err(_) => Seen::Failed,
    };
    let mut metrics = BTreeMap::new();
    metrics.insert(metric::FIRST_FSYNC_ERRNO.into(), errno(&first));
    metrics.insert(metric::RETRY_FSYNC_ERRNO.into(), errno(&retry));
    for s in Seen::ALL {
        metrics.insert(format!("cached_{}", s.name()), (cached == s) as u8 as f64);
        metrics.insert(format!("device_{}", s.name()), (device == s) as u8 as f64);
    }
    metrics.insert(metric::READ_ONLY_AFTER.into(), ro as u8 as f64);
    metrics.insert(metric::FIRST_FSYNC_BLOCKED.into(), blocked as u8 as f64);
    metrics.insert(metric::MOUNTS_AGAIN.into(), remount.is_ok() as u8 as f64);
    for (k, v) in faults.counts() {
        metrics.insert(k.into(), v as f64);
    }
    let mut notes = vec![
        format!("first fsync (disk failing): {}", said(&first)),
        format!("second fsync (disk healed): {}", said(&retry)),
        format!("read through the cache: {} data", cached.name()),
        format!("read after unmount and mount: {} data", device.name()),
    ];
    if blocked {
        notes.push(format!(
            "the first fsync did not return while the disk failed ({} s); it returned once the disk healed{}",
            BLOCKED.as_secs(),
            if h.pool().is_some() { " and `zpool clear` resumed the pool" } else { "" }
        ));
    }
    if ro {
        notes.push("the filesystem went read-only after the failure".into());
    }
    if let Err(e) = &remount {
        notes.push(format!("mounting again failed: {e}"));
    }
    Ok(Phase {
        test: "fsync".into(),
        duration_s: t0.elapsed().as_secs_f64(),
        metrics,
        notes,
        ..Default::default()
    })
}

/// The fsync case on one target behind the fault device: one phase, one record.
pub struct FsyncSession {
    h: Arc<Handle>,
    specs: Vec<PhaseSpec>,
    done: Mutex<Vec<Phase>>,
}

impl FsyncSession {
    pub fn new(h: Arc<Handle>) -> FsyncSession {
        FsyncSession {
            h,
            specs: vec![PhaseSpec {
                name: "fsync".into(),
                does: "fsync a file, overwrite it, fail the disk, fsync, heal it, fsync again, read it through the cache and after a remount".into(),
                workers: 1,
                single_thread: true,
                unit: "steps",
                ..Default::default()
            }],
            done: Mutex::new(Vec::new()),
        }
    }
}

impl Session for FsyncSession {
    fn phases(&self) -> &[PhaseSpec] {
        &self.specs
    }

    fn work(&self, _phase: usize, _ctx: &WorkerCtx) -> WorkerOut {
        let p = fsync_case(&self.h).unwrap_or_else(|e| Phase {
            test: "fsync".into(),
            error: Some(e.to_string()),
            ..Default::default()
        });
        *self.done.lock().unwrap_or_else(|e| e.into_inner()) = vec![p];
        WorkerOut::default()
    }

    fn finish(&mut self, _phase: usize, _m: &Merged) -> Result<Vec<Phase>, RunError> {
        Ok(std::mem::take(
            &mut *self.done.lock().unwrap_or_else(|e| e.into_inner()),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_are_told_apart_block_by_block() {
        let (old, new) = (content(1), content(2));
        assert_ne!(old, new);
        assert_eq!(classify(&Ok(new.clone()), &old, &new), Seen::New);
        assert_eq!(classify(&Ok(old.clone()), &old, &new), Seen::Old);
        let mut mixed = new.clone();
        mixed[..4096].copy_from_slice(&old[..4096]);
        assert_eq!(classify(&Ok(mixed.clone()), &old, &new), Seen::Mixed);
        mixed[8192] ^= 1;
        assert_eq!(classify(&Ok(mixed), &old, &new), Seen::Other);
        assert_eq!(
            classify(&Err(std::io::Error::other("x")), &old, &new),
            Seen::Failed
        );
    }
}
