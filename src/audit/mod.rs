//! `fsbench audit`: what each filesystem does when the disk returns damaged data. On each target
//! (loop images fsbench provisions, never a user's device or directory) it writes files of known
//! content (the files workload's trailer), takes the filesystem offline, flips bytes in the image
//! where one copy of half the files' data lies (and in a block of a directory's entries), brings it
//! back
//! and reads everything: each damaged file is `detected_by_fs` (EIO, EBADMSG, EUCLEAN), `silent`
//! (read back wrong; the trailer caught it), `repaired` (read back right and the filesystem logged
//! a repair), `unnoticed` (read back right, no repair logged: the read took an intact copy) or
//! `lost` (gone). Then the filesystem's own checker runs. One record per case.

pub mod check;
pub mod fsync;
pub mod locate;

use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::io::content::{self, Checksum, Dist, Tree, Verdict};
use crate::io::failure::io_errno_name;
use crate::plan::TargetSpec;
use crate::provision::exec::Sys;
use crate::provision::{Mounted, ProvisionError, Request};
use crate::store::Phase;
use locate::{Copies, Place};

/// What an audit does on each target.
#[derive(Debug, Clone)]
pub struct Options {
    /// Data files written (half of them damaged).
    pub files: u64,
    pub file_size: u64,
    /// Files in the directory whose entries are damaged.
    pub dir_files: u64,
    pub seed: u64,
    /// The cases run on each target, each on a freshly provisioned filesystem.
    pub cases: Vec<Case>,
}

/// One experiment of the audit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Case {
    /// Damaged data and a damaged directory block in the image, read back; the checker.
    Corruption,
    /// A flush that fails, retried once the disk heals (the target behind the fault device).
    Fsync,
}

impl Case {
    pub fn name(self) -> &'static str {
        match self {
            Case::Corruption => "corruption",
            Case::Fsync => "fsync",
        }
    }
}

impl Default for Options {
    fn default() -> Options {
        Options {
            files: 64,
            file_size: 64 << 10,
            dir_files: 400,
            seed: 0x000a_0d17,
            cases: vec![Case::Corruption, Case::Fsync],
        }
    }
}

/// Bytes flipped at each damaged place (XOR 0xff).
const FLIP: u64 = 16;

/// Why a target cannot be audited (checked from the spec, before anything runs).
pub fn refuse(spec: &TargetSpec) -> Option<String> {
    let why = match spec.fs.as_str() {
        "ext4" | "xfs" | "btrfs" | "zfs" | "f2fs" => {
            if crate::provision::layout::zvol(spec) {
                "a zvol has no files to audit"
            } else if spec.option("raidz").is_some() {
                "raidz spreads a block over its members with parity; the audit locates data on single devices and mirrors"
            } else {
                return None;
            }
        }
        "dir" => "the audit damages the disk image under a filesystem, so it runs only on loop images fsbench provisions itself, never on a directory of yours",
        "tmpfs" => "tmpfs has no disk to damage",
        _ => "the audit runs on filesystems fsbench provisions on loop images (ext4, xfs, btrfs, zfs, f2fs)",
    };
    Some(format!("target '{}': {why}", spec.label))
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
            Class::Detected => "detected_by_fs",
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
        metrics.insert("controls_ok".into(), self.controls_ok as f64);
        metrics.insert("controls_damaged".into(), self.controls_bad as f64);
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

/// Audits one provisioned target: the data case, the directory case and the checker, as phases.
pub fn audit(sys: &Sys, spec: &TargetSpec, m: &Mounted, o: &Options) -> Result<Vec<Phase>, String> {
    let t0 = Instant::now();
    let root = m.mountpoint.join("fsbench-audit");
    let data_t = tree(o.seed, o.files, o.file_size);
    let dir_t = tree(o.seed ^ 0xd1, o.dir_files, 1024);
    let (data_dir, meta_dir) = (root.join("data"), root.join("dir"));
    write_files(&data_dir, &data_t, "f").map_err(|e| format!("writing the files: {e}"))?;
    write_files(&meta_dir, &dir_t, "m").map_err(|e| format!("writing the directory: {e}"))?;
    crate::sys::sync();
    let pool = m.pool();
    if let Some(p) = &pool {
        crate::provision::zfs::settle(p, &m.mountpoint).map_err(|e| e.to_string())?;
    }
    let fs = spec.fs.as_str();
    let backing = m.backing();
    // Every other file is damaged; the rest are controls.
    let zfs_files = match &pool {
        Some(p) => Some(locate::zfs_files(sys, p)?),
        None => None,
    };
    let mut located: Vec<(u64, Result<Copies, String>)> = Vec::new();
    for n in (0..o.files).step_by(2) {
        let path = data_dir.join(format!("f{n:05}"));
        let in_dataset = format!(
            "/{}",
            path.strip_prefix(&m.mountpoint).unwrap_or(&path).display()
        );
        let copies = locate::data(sys, fs, &path, &backing, zfs_files.as_ref(), &in_dataset);
        located.push((n, copies));
    }
    let dev = m.device().unwrap_or_default();
    let rel = meta_dir
        .strip_prefix(&m.mountpoint)
        .unwrap_or(&meta_dir)
        .to_path_buf();
    let meta_ino = std::fs::metadata(&meta_dir).map(|x| x.ino()).unwrap_or(0);
    let damage = m
        .offline(spec, |b| Damage {
            data: located
                .iter()
                .map(|(n, c)| {
                    let first = c.as_ref().ok().and_then(|c| c.first());
                    (*n, first.map_or(0, |p| flip(&b.images, p).unwrap_or(0)))
                })
                .collect(),
            dir: locate::dir_block(sys, fs, &dev, &rel, meta_ino)
                .and_then(|p| flip(&b.images, &p).map_err(|e| e.to_string())),
        })
        .map_err(|e: ProvisionError| {
            format!("bringing {} back after the damage: {e}", spec.label)
        })?;
    let back = read_data(sys, fs, m, &dev, &data_dir, &data_t, &located, &damage);
    let unlocated: Vec<String> = located
        .iter()
        .filter_map(|(_, c)| c.as_ref().err().cloned())
        .collect();
    let damaged = back.damaged;
    let mut metrics = BTreeMap::new();
    metrics.insert("fs_error_count".into(), back.fs_error_count as f64);
    metrics.insert("files".into(), o.files as f64);
    metrics.insert("damaged".into(), damaged as f64);
    metrics.insert(
        "bytes_flipped".into(),
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
            "no file's data could be located on {fs}: {}",
            unlocated
                .first()
                .map(String::as_str)
                .unwrap_or("no extents")
        ));
    }
    data_phase.notes.extend(back.kernel);
    let mut phases = vec![data_phase];
    phases.push(dir_case(&meta_dir, &dir_t, damage.dir, t0));
    phases.push(check::checker(sys, spec, m));
    Ok(phases)
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
#[allow(clippy::too_many_arguments)]
fn read_data(
    sys: &Sys,
    fs: &str,
    m: &Mounted,
    dev: &str,
    data_dir: &Path,
    data_t: &Tree,
    located: &[(u64, Result<Copies, String>)],
    damage: &Damage,
) -> ReadBack {
    let pool = m.pool();
    let kmsg_mark = check::kernel_log_mark(sys);
    let counted_before = check::error_counter(sys, fs, &m.mountpoint, pool.as_deref());
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
    let kernel = check::kernel_log_since(sys, &kmsg_mark, dev);
    let named = check::btrfs_repaired_inodes(&kernel);
    let counted = check::error_counter(sys, fs, &m.mountpoint, pool.as_deref())
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
fn dir_case(dir: &Path, t: &Tree, damage: Result<u64, String>, t0: Instant) -> Phase {
    let bytes = match damage {
        Ok(b) => b,
        Err(why) => {
            return Phase {
                test: "directory".into(),
                skipped: Some(why),
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
    metrics.insert("bytes_flipped".into(), bytes as f64);
    metrics.insert("intact".into(), intact as f64);
    let mut p = tally.into_phase("directory", t0, metrics);
    if let Some(e) = listing {
        p.notes.push(format!("listing the directory: {e}"));
    }
    p
}

/// Provisions one target on a loop image for each case (the fsync case behind the fault
/// device), runs the case and tears it down; a case that cannot finish is one failed phase, a
/// target the host cannot provide a skipped one. A stop request ends it with what it has.
pub fn provision_and_audit(sys: &Sys, spec: &TargetSpec, req: &Request, o: &Options) -> Vec<Phase> {
    let mut phases = Vec::new();
    for &case in &o.cases {
        if crate::stop::stop_requested() {
            break;
        }
        let mut spec = spec.clone();
        if case == Case::Fsync {
            spec.fault.get_or_insert_with(Default::default);
            if let Some(why) = crate::provision::faultdev::refuse(&spec, false, false) {
                phases.push(Phase {
                    test: "fsync".into(),
                    skipped: Some(why),
                    ..Default::default()
                });
                continue;
            }
        }
        let test = match case {
            Case::Corruption => "data",
            Case::Fsync => "fsync",
        };
        let m = match crate::provision::provision(sys, &spec, req) {
            Ok(m) => m,
            Err(ProvisionError::Stopped(_)) => break,
            Err(ProvisionError::Unsupported(why)) => {
                phases.push(Phase {
                    test: test.into(),
                    skipped: Some(why),
                    ..Default::default()
                });
                continue;
            }
            Err(e) => {
                phases.push(Phase {
                    test: test.into(),
                    error: Some(e.to_string()),
                    ..Default::default()
                });
                continue;
            }
        };
        let result = match case {
            Case::Corruption => audit(sys, &spec, &m, o),
            Case::Fsync => fsync::fsync_case(&spec, &m).map(|p| vec![p]),
        };
        phases.extend(result.unwrap_or_else(|e| {
            vec![Phase {
                test: test.into(),
                error: Some(e),
                ..Default::default()
            }]
        }));
        if let Err(e) = m.teardown() {
            eprintln!("fsbench: teardown of {}: {e}", spec.label);
        }
    }
    phases
}
