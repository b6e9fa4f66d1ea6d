//! The corruption case as frame phases: write known files, damage their image offline, read
//! them back, run the checker. Records: `data` and `directory` (from the read back), `checker`.

use crate::metrics::name as metric;
use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::locate::{self, Copies, Place};
use super::{check, AuditError, Options};
use crate::frame::{CachePolicy, Merged, PhaseSpec, RunError, Session, WorkerCtx, WorkerOut};
use crate::io::content::{self, Checksum, Dist, Tree, Verdict};
use crate::io::failure::io_errno_name;
use crate::provision::{Handle, Integrity};
use crate::store::Phase;

/// Bytes flipped at each damaged place (XOR 0xff).
const FLIP: u64 = 16;

/// The target's integrity tools (every target the audit runs on has them: `refuse` checked).
fn integrity(h: &Handle) -> Integrity {
    crate::provision::caps(&h.spec().fs)
        .integrity
        .expect("the audit runs only on filesystems it knows how to audit")
}

fn tree(seed: u64, count: u64, size: u64) -> Tree {
    Tree {
        version: 1,
        seed,
        tops: 1,
        subs: 1,
        per_sub: count,
        count,
        dist: Dist::Fixed,
        mean: size as f64,
        sd: 0.0,
        min: size,
        max: size,
        checksum: Checksum::Crc32c,
    }
}

/// Writes `t`'s files into `dir` (created), each fsynced.
fn write_files(dir: &Path, t: &Tree, prefix: &str) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let pool = t.pool(content::POOL.min(4 << 20).max(t.max as usize * 2));
    let mut buf = vec![0u8; t.max as usize];
    for n in 0..t.count {
        content::content(t, &pool, n, &mut buf);
        let f = std::fs::File::create(dir.join(format!("{prefix}{n:05}")))?;
        f.write_all_at(&buf, 0)?;
        f.sync_all()?;
    }
    std::fs::File::open(dir)?.sync_all()
}

/// XORs `FLIP` bytes of `p` in the member's image; returns the bytes changed.
fn flip(images: &[PathBuf], p: &Place) -> std::io::Result<u64> {
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&images[p.member])?;
    // Inside one 4 KiB sector (a checksum covers a sector, a block or a record), 256 bytes in:
    // past a directory block's header, among its entries.
    let n = FLIP.min(p.len);
    let mut at = p.offset + ((p.len / 2) & !4095) + 256;
    if at + n > p.offset + p.len {
        at = p.offset + (p.len - n) / 2;
    }
    let mut b = vec![0u8; n as usize];
    f.read_exact_at(&mut b, at)?;
    b.iter_mut().for_each(|x| *x ^= 0xff);
    f.write_all_at(&b, at)?;
    f.sync_data()?;
    Ok(n)
}

/// What reading one damaged file back found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Detected,
    Silent,
    Repaired,
    Unnoticed,
    Lost,
}

impl Class {
    const ALL: [Class; 5] = [
        Class::Detected,
        Class::Silent,
        Class::Repaired,
        Class::Unnoticed,
        Class::Lost,
    ];

    /// The metric that counts it.
    fn name(self) -> &'static str {
        match self {
            Class::Detected => metric::DETECTED_BY_FS,
            Class::Silent => "silent",
            Class::Repaired => "repaired",
            Class::Unnoticed => "unnoticed",
            Class::Lost => "lost",
        }
    }
}

/// Reads file `n` of `t` back: None when it is intact, else what happened (and the errno).
fn read_back(path: &Path, t: &Tree, n: u64) -> Option<(Class, Option<String>)> {
    match std::fs::read(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Some((Class::Lost, None)),
        Err(e) => Some((Class::Detected, Some(io_errno_name(&e)))),
        Ok(data) => match content::verify(t, n, &data) {
            Verdict::Ok => None,
            _ => Some((Class::Silent, None)),
        },
    }
}

/// One case's tally: damaged files by class, intact controls, errnos seen.
#[derive(Debug, Default)]
struct Tally {
    classes: BTreeMap<&'static str, f64>,
    errnos: BTreeMap<String, u64>,
    controls_ok: u64,
    controls_bad: u64,
}

impl Tally {
    fn add(&mut self, c: Class, errno: Option<String>) {
        *self.classes.entry(c.name()).or_default() += 1.0;
        if let Some(e) = errno {
            *self.errnos.entry(e).or_default() += 1;
        }
    }

    fn into_phase(self, test: &str, t0: Instant, mut metrics: BTreeMap<String, f64>) -> Phase {
        for c in Class::ALL {
            let name = c.name();
            metrics.insert(name.into(), self.classes.get(name).copied().unwrap_or(0.0));
        }
        metrics.insert(metric::CONTROLS_OK.into(), self.controls_ok as f64);
        metrics.insert(metric::CONTROLS_DAMAGED.into(), self.controls_bad as f64);
        let mut notes = Vec::new();
        if !self.errnos.is_empty() {
            let list: Vec<String> = self
                .errnos
                .iter()
                .map(|(e, n)| format!("{e} x{n}"))
                .collect();
            notes.push(format!("errors returned: {}", list.join(", ")));
        }
        Phase {
            test: test.into(),
            duration_s: t0.elapsed().as_secs_f64(),
            metrics,
            notes,
            ..Default::default()
        }
    }
}

/// What the audit damaged on one target while it was offline.
struct Damage {
    /// Per damaged data file: bytes flipped (0 when its data could not be located).
    data: Vec<(u64, u64)>,
    /// The directory block damaged, or why not.
    dir: Result<u64, String>,
}

/// What reading the data files back gave.
struct ReadBack {
    tally: Tally,
    /// Files whose data was damaged.
    damaged: usize,
    /// Errors the filesystem counted during the read-back.
    fs_error_count: u64,
    /// What the kernel said about the damage.
    kernel: Vec<String>,
}

/// Reads every data file back: controls, and each damaged file classified.
fn read_data(h: &Handle, data_dir: &Path, data_t: &Tree, w: &Written, damage: &Damage) -> ReadBack {
    let sys = h.sys();
    let pool = h.pool();
    let errors = integrity(h).errors;
    let kmsg_mark = check::kernel_log_mark(sys);
    let counted_before = check::error_counter(sys, errors, &h.mountpoint, pool.as_deref());
    let located = &w.located;
    let mut tally = Tally::default();
    let damaged: BTreeSet<u64> = damage
        .data
        .iter()
        .filter(|(_, bytes)| *bytes > 0)
        .map(|(n, _)| *n)
        .collect();
    let redundant: BTreeSet<u64> = located
        .iter()
        .filter(|(_, c)| c.as_ref().is_ok_and(|c| c.len() > 1))
        .map(|(n, _)| *n)
        .collect();
    let mut pending = Vec::new();
    for n in 0..data_t.count {
        let path = data_dir.join(format!("f{n:05}"));
        match (damaged.contains(&n), read_back(&path, data_t, n)) {
            (false, None) => tally.controls_ok += 1,
            (false, Some(_)) => tally.controls_bad += 1,
            (true, Some((c, e))) => tally.add(c, e),
            (true, None) => pending.push((
                std::fs::metadata(&path).map(|x| x.ino()).unwrap_or(0),
                redundant.contains(&n),
            )),
        }
    }
    // Read back right: repaired when another copy exists and the filesystem logged a repair of
    // it (btrfs names the inode, though its messages are rate-limited) or counted one (btrfs
    // device stats, ZFS checksum errors: totals, not per file); else unnoticed.
    let dev = h.device().unwrap_or_default();
    let kernel = check::kernel_log_since(sys, &kmsg_mark, &dev);
    let named = check::btrfs_repaired_inodes(&kernel);
    let counted = check::error_counter(sys, errors, &h.mountpoint, pool.as_deref())
        .saturating_sub(counted_before);
    let detected = tally
        .classes
        .get(Class::Detected.name())
        .copied()
        .unwrap_or(0.0) as u64;
    let mut budget = counted.saturating_sub(detected);
    pending.sort_by_key(|(ino, _)| !named.contains(ino));
    for (ino, redundant) in pending {
        let c = if redundant && (named.contains(&ino) || budget > 0) {
            budget = budget.saturating_sub(1);
            Class::Repaired
        } else {
            Class::Unnoticed
        };
        tally.add(c, None);
    }
    ReadBack {
        tally,
        damaged: damaged.len(),
        fs_error_count: counted,
        kernel: check::kernel_summary(&kernel),
    }
}

/// The directory case: every file of the damaged directory opened and verified.
fn dir_case(dir: &Path, t: &Tree, damage: &Result<u64, String>, t0: Instant) -> Phase {
    let bytes = match damage {
        Ok(b) => *b,
        Err(why) => {
            return Phase {
                test: "directory".into(),
                skipped: Some(why.clone()),
                ..Default::default()
            }
        }
    };
    let mut tally = Tally::default();
    let mut intact = 0u64;
    for n in 0..t.count {
        match read_back(&dir.join(format!("m{n:05}")), t, n) {
            None => intact += 1,
            Some((c, e)) => tally.add(c, e),
        }
    }
    let listing = match std::fs::read_dir(dir) {
        Err(e) => Some(io_errno_name(&e)),
        Ok(rd) => rd.filter_map(|e| e.err()).map(|e| io_errno_name(&e)).next(),
    };
    let mut metrics = BTreeMap::new();
    metrics.insert("files".into(), t.count as f64);
    metrics.insert(metric::BYTES_FLIPPED.into(), bytes as f64);
    metrics.insert("intact".into(), intact as f64);
    let mut p = tally.into_phase("directory", t0, metrics);
    if let Some(e) = listing {
        p.notes.push(format!("listing the directory: {e}"));
    }
    p
}

/// What the write phase left for the others: the trees, where they are, and where the data of
/// every other file lies.
struct Written {
    data_t: Tree,
    dir_t: Tree,
    data_dir: PathBuf,
    meta_dir: PathBuf,
    located: Vec<(u64, Result<Copies, String>)>,
}

/// What the phases of one target share.
#[derive(Default)]
struct State {
    t0: Option<Instant>,
    written: Option<Written>,
    damage: Option<Damage>,
    /// A step failed: its record was made, the later phases make none.
    failed: bool,
    /// The records the current phase made, handed to the frame by `finish`.
    done: Vec<Phase>,
}

/// The corruption case on one provisioned target.
pub struct CorruptSession {
    h: Arc<Handle>,
    o: Options,
    specs: Vec<PhaseSpec>,
    st: Mutex<State>,
}

impl CorruptSession {
    pub fn new(h: Arc<Handle>, o: &Options) -> CorruptSession {
        let phase = |name: &str, does: &str| PhaseSpec {
            name: name.into(),
            does: does.into(),
            workers: 1,
            single_thread: true,
            unit: "steps",
            ..Default::default()
        };
        let specs = vec![
            PhaseSpec {
                writes: true,
                ..phase("write", "write files of known content (a checksummed trailer each) and a directory of small files, each fsynced")
            },
            phase("damage", "take the filesystem offline, flip 16 bytes of one copy of every other file's data and of a block of a directory's entries in the image, bring it back"),
            PhaseSpec {
                cache: CachePolicy::Drop,
                reads: true,
                ..phase("read back", "read every file back and tell each damaged one detected, silent, repaired, unnoticed or lost")
            },
            phase("check", "the filesystem's own checker on the damaged filesystem"),
        ];
        CorruptSession {
            h,
            o: o.clone(),
            specs,
            st: Mutex::new(State::default()),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.st.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Writes the trees and locates every other file's data.
    fn write(&self) -> Result<Written, AuditError> {
        let h = &self.h;
        let root = h.mountpoint.join("fsbench-audit");
        let data_t = tree(self.o.seed, self.o.files, self.o.file_size);
        let dir_t = tree(self.o.seed ^ 0xd1, self.o.dir_files, 1024);
        let (data_dir, meta_dir) = (root.join("data"), root.join("dir"));
        write_files(&data_dir, &data_t, "f").map_err(AuditError::io("writing the files"))?;
        write_files(&meta_dir, &dir_t, "m").map_err(AuditError::io("writing the directory"))?;
        crate::sys::sync();
        if let Some(Err(e)) = h.settle() {
            return Err(AuditError::Case(e));
        }
        let backing = h.backing();
        let locate = integrity(h).locate;
        // Every other file is damaged; the rest are controls.
        let zfs_files = match (locate, h.pool()) {
            (crate::provision::Locate::Zdb, Some(p)) => Some(locate::zfs_files(h.sys(), &p)?),
            _ => None,
        };
        let mut located = Vec::new();
        for n in (0..self.o.files).step_by(2) {
            let path = data_dir.join(format!("f{n:05}"));
            let in_dataset = format!(
                "/{}",
                path.strip_prefix(&h.mountpoint).unwrap_or(&path).display()
            );
            let copies = locate::data(
                h.sys(),
                locate,
                &path,
                &backing,
                zfs_files.as_ref(),
                &in_dataset,
            )
            .map_err(|e| e.to_string());
            located.push((n, copies));
        }
        Ok(Written {
            data_t,
            dir_t,
            data_dir,
            meta_dir,
            located,
        })
    }

    /// Takes the target offline and flips bytes in its images.
    fn damage(&self, w: &Written) -> Result<Damage, AuditError> {
        let h = &self.h;
        let dev = h.device().unwrap_or_default();
        let rel = w
            .meta_dir
            .strip_prefix(&h.mountpoint)
            .unwrap_or(&w.meta_dir)
            .to_path_buf();
        let meta_ino = std::fs::metadata(&w.meta_dir).map(|x| x.ino()).unwrap_or(0);
        let dir_blocks = integrity(h).dir_blocks;
        h.offline(|b| Damage {
            data: w
                .located
                .iter()
                .map(|(n, c)| {
                    let first = c.as_ref().ok().and_then(|c| c.first());
                    (*n, first.map_or(0, |p| flip(&b.images, p).unwrap_or(0)))
                })
                .collect(),
            dir: locate::dir_block(h.sys(), dir_blocks, &h.spec().fs, &dev, &rel, meta_ino)
                .map_err(|e| e.to_string())
                .and_then(|p| flip(&b.images, &p).map_err(|e| e.to_string())),
        })
        .map_err(|e| {
            AuditError::Case(format!(
                "bringing {} back after the damage: {e}",
                h.info.label
            ))
        })
    }

    /// The data and directory records from reading everything back.
    fn read(&self, w: &Written, damage: &Damage, t0: Instant) -> Vec<Phase> {
        let h = &self.h;
        let back = read_data(h, &w.data_dir, &w.data_t, w, damage);
        let unlocated: Vec<&String> = w
            .located
            .iter()
            .filter_map(|(_, c)| c.as_ref().err())
            .collect();
        let damaged = back.damaged;
        let mut metrics = BTreeMap::new();
        metrics.insert(metric::FS_ERROR_COUNT.into(), back.fs_error_count as f64);
        metrics.insert("files".into(), self.o.files as f64);
        metrics.insert("damaged".into(), damaged as f64);
        metrics.insert(
            metric::BYTES_FLIPPED.into(),
            damage.data.iter().map(|(_, b)| *b as f64).sum(),
        );
        let mut data_phase = back.tally.into_phase("data", t0, metrics);
        if let Some(e) = unlocated.first() {
            data_phase
                .notes
                .push(format!("{} files not located: {e}", unlocated.len()));
        }
        if damaged == 0 {
            data_phase.error = Some(format!(
                "no file's data could be located on {}: {}",
                h.spec().fs,
                unlocated
                    .first()
                    .map(|s| s.as_str())
                    .unwrap_or("no extents")
            ));
        }
        data_phase.notes.extend(back.kernel);
        vec![data_phase, dir_case(&w.meta_dir, &w.dir_t, &damage.dir, t0)]
    }
}

impl Session for CorruptSession {
    fn phases(&self) -> &[PhaseSpec] {
        &self.specs
    }

    fn work(&self, phase: usize, _ctx: &WorkerCtx) -> WorkerOut {
        let mut st = self.state();
        if st.failed {
            return WorkerOut::default();
        }
        let t0 = *st.t0.get_or_insert_with(Instant::now);
        let fail = |e: AuditError| {
            vec![Phase {
                test: "data".into(),
                duration_s: t0.elapsed().as_secs_f64(),
                error: Some(e.to_string()),
                ..Default::default()
            }]
        };
        let st = &mut *st;
        let done = match phase {
            0 => self.write().map(|w| st.written = Some(w)).err(),
            1 => match st.written.as_ref().map(|w| self.damage(w)) {
                Some(Ok(d)) => {
                    st.damage = Some(d);
                    None
                }
                Some(Err(e)) => Some(e),
                None => None,
            },
            2 => {
                if let (Some(w), Some(d)) = (&st.written, &st.damage) {
                    st.done = self.read(w, d, t0);
                }
                None
            }
            _ => {
                st.done = vec![check::checker(&self.h)];
                None
            }
        };
        // A write or damage that failed is the data record's error; nothing follows it.
        if let Some(e) = done {
            st.failed = true;
            st.done = fail(e);
        }
        WorkerOut::default()
    }

    fn finish(&mut self, _phase: usize, _m: &Merged) -> Result<Vec<Phase>, RunError> {
        Ok(std::mem::take(&mut self.state().done))
    }
}
