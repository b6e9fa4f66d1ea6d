//! A study directory being written: made afresh (never through a symbolic link), every file in it
//! opened by name inside the directory without following links, and an exclusive flock(2) on the
//! directory for as long as the writer lives, so that two processes never write one study (a
//! `compare --resume` of a study that is still running is refused with the writer's pid).

use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use super::{hlog, io_at, read_manifest, LatencyLog, Manifest, Record, StoreError};
use crate::sys::dirfd::Dir;

const RESULTS: &str = "results.jsonl";
const PARTIAL: &str = "results.partial.jsonl";
const MANIFEST: &str = "manifest.json";

pub struct Study {
    pub dir: PathBuf,
    /// The directory, open (its descriptor holds the lock).
    fd: Dir,
    results: File,
    /// latency.hlog, opened at the first record with latency over time, and the next tag.
    hlog: Option<(File, u64)>,
}

/// The manifest of a study in use, changed as last saved (`Study::manifest_keeper`).
pub struct ManifestKeeper {
    dir: PathBuf,
    fd: Dir,
}

impl ManifestKeeper {
    /// The manifest as last saved, changed by `f`, saved again (whole, never through a link).
    pub fn update(&self, f: impl FnOnce(&mut Manifest)) -> Result<(), StoreError> {
        let mut m = read_manifest(&self.dir)?;
        f(&mut m);
        write_manifest(&self.fd, &self.dir, &m)
    }
}

/// Writes `m` as the manifest of the study at `dir` (open as `fd`), whole, never through a link.
fn write_manifest(fd: &Dir, dir: &Path, m: &Manifest) -> Result<(), StoreError> {
    let path = dir.join(MANIFEST);
    let bytes = serde_json::to_vec_pretty(m)
        .map_err(std::io::Error::other)
        .map_err(io_at(&path))?;
    fd.write_atomic(MANIFEST, &bytes).map_err(io_at(&path))
}

/// Whether someone is writing a study now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LockState {
    Free,
    /// Held by this process (the pid, when /proc names it).
    Held(Option<u32>),
}

/// Who holds the lock of a study directory, for messages.
fn holder_text(pid: Option<u32>) -> String {
    match pid {
        Some(p) => format!("pid {p}"),
        None => "a process /proc does not name".into(),
    }
}

/// The pid holding a flock(2) on the file with this device number and inode: a process with a
/// descriptor open on that file (stat(2) through /proc/PID/fd/N) whose /proc/PID/fdinfo/N lists
/// a FLOCK lock (fdinfo lists the locks taken through that descriptor's open file only).
///
/// Not /proc/locks: it is read a page at a time, each page under its own hold of the kernel's
/// list, so a line slips between two pages while other locks come and go; and it names the
/// superblock's device, which is not the one stat(2) gives on a btrfs subvolume or overlayfs
/// (where inode numbers also repeat from one subvolume to the next).
fn lock_holder(dev: u64, ino: u64) -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    let procs = std::fs::read_dir("/proc").ok()?;
    procs.flatten().find_map(|p| {
        let pid: u32 = p.file_name().to_str()?.parse().ok()?;
        let fds = std::fs::read_dir(p.path().join("fd")).ok()?;
        let mut mine = fds.flatten().filter(|fd| {
            std::fs::metadata(fd.path()).is_ok_and(|m| m.dev() == dev && m.ino() == ino)
        });
        mine.any(|fd| {
            let info = p.path().join("fdinfo").join(fd.file_name());
            std::fs::read_to_string(info).is_ok_and(|t| {
                t.lines()
                    .any(|l| l.starts_with("lock:") && l.contains(" FLOCK "))
            })
        })
        .then_some(pid)
    })
}

fn holder_of(dir: &Path) -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(dir).ok()?;
    lock_holder(m.dev(), m.ino())
}

/// Whether a study directory is being written (a shared lock cannot be had): `report` says so.
pub fn lock_state(dir: &Path) -> LockState {
    let Ok(fd) = Dir::open(dir) else {
        return LockState::Free;
    };
    match crate::sys::try_lock(fd.file(), false) {
        Ok(false) => LockState::Held(holder_of(dir)),
        _ => LockState::Free,
    }
}

/// Opens a study directory that must be a real directory (not a link), and takes its lock.
fn open_locked(dir: &Path) -> Result<Dir, StoreError> {
    let fd = Dir::open_nofollow(dir).map_err(|e| match e.raw_os_error() {
        Some(libc::ELOOP) | Some(libc::ENOTDIR) if is_link(dir) => StoreError::Link {
            path: dir.display().to_string(),
        },
        _ => io_at(dir)(e),
    })?;
    match crate::sys::try_lock(fd.file(), true) {
        Ok(true) => Ok(fd),
        Ok(false) => Err(StoreError::Busy {
            dir: dir.display().to_string(),
            holder: holder_text(holder_of(dir)),
        }),
        Err(e) => Err(io_at(dir)(e)),
    }
}

/// The directories above a study, made when missing; a part that exists and is not a directory
/// is said as such (create_dir_all would call it "File exists").
fn make_parent(dir: &Path) -> Result<(), StoreError> {
    let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) else {
        return Ok(());
    };
    if let Some(file) = parent.ancestors().find(|a| a.exists() && !a.is_dir()) {
        return Err(io_at(file)(std::io::Error::from_raw_os_error(
            libc::ENOTDIR,
        )));
    }
    std::fs::create_dir_all(parent).map_err(io_at(parent))
}

fn is_link(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink())
}

/// A file of the study, by name in the directory: never through a link.
fn open_in(fd: &Dir, dir: &Path, name: &str) -> Result<File, StoreError> {
    fd.open_append(name).map_err(|e| match e.raw_os_error() {
        Some(libc::ELOOP) => StoreError::Link {
            path: dir.join(name).display().to_string(),
        },
        _ => io_at(&dir.join(name))(e),
    })
}

fn lines(rs: &[Record]) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::new();
    for r in rs {
        out.extend(serde_json::to_vec(r).map_err(std::io::Error::other)?);
        out.push(b'\n');
    }
    Ok(out)
}

impl Study {
    /// Creates a new study directory (a plain mkdir of the last component: an existing directory
    /// is used only if it is a real one and holds no results), and locks it.
    pub fn create(dir: &Path, manifest: &Manifest) -> Result<Study, StoreError> {
        if is_link(dir) {
            return Err(StoreError::Link {
                path: dir.display().to_string(),
            });
        }
        make_parent(dir)?;
        match std::fs::create_dir(dir) {
            Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => {
                return Err(io_at(dir)(e));
            }
            _ => {}
        }
        let fd = open_locked(dir)?;
        match fd.kind_of(RESULTS).map_err(io_at(&dir.join(RESULTS)))? {
            Some((libc::S_IFLNK, _)) => {
                return Err(StoreError::Link {
                    path: dir.join(RESULTS).display().to_string(),
                })
            }
            Some((_, len)) if len > 0 => return Err(StoreError::Exists(dir.display().to_string())),
            _ => {}
        }
        let study = Study {
            dir: dir.to_path_buf(),
            results: open_in(&fd, dir, RESULTS)?,
            fd,
            hlog: None,
        };
        study.save_manifest(manifest)?;
        Ok(study)
    }

    /// Opens an existing study to continue it (`compare --resume`), and locks it: a study another
    /// process is still writing is refused.
    pub fn open(dir: &Path) -> Result<(Study, Manifest), StoreError> {
        let fd = open_locked(dir)?;
        let manifest = read_manifest(dir)?;
        let study = Study {
            dir: dir.to_path_buf(),
            results: open_in(&fd, dir, RESULTS)?,
            fd,
            hlog: None,
        };
        Ok((study, manifest))
    }

    /// A study to add records to (`report --import`): made when missing, locked.
    pub fn open_or_create(dir: &Path) -> Result<Study, StoreError> {
        if is_link(dir) {
            return Err(StoreError::Link {
                path: dir.display().to_string(),
            });
        }
        make_parent(dir)?;
        match std::fs::create_dir(dir) {
            Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => return Err(io_at(dir)(e)),
            _ => {}
        }
        let fd = open_locked(dir)?;
        Ok(Study {
            dir: dir.to_path_buf(),
            results: open_in(&fd, dir, RESULTS)?,
            fd,
            hlog: None,
        })
    }

    /// Replaces results.jsonl with `keep` (atomically); `moved` are appended to
    /// results.partial.jsonl, and so is `torn` (the bytes of a torn last record), so that nothing
    /// measured is lost.
    pub fn set_aside(
        &mut self,
        keep: &[Record],
        moved: &[Record],
        torn: Option<&str>,
    ) -> Result<(), StoreError> {
        let ppath = self.dir.join(PARTIAL);
        let mut partial = open_in(&self.fd, &self.dir, PARTIAL)?;
        let mut bytes = lines(moved).map_err(io_at(&ppath))?;
        if let Some(t) = torn {
            bytes.extend(t.as_bytes());
            bytes.push(b'\n');
        }
        partial
            .write_all(&bytes)
            .and_then(|_| partial.sync_data())
            .map_err(io_at(&ppath))?;
        let rpath = self.dir.join(RESULTS);
        lines(keep)
            .and_then(|b| self.fd.write_atomic(RESULTS, &b))
            .map_err(io_at(&rpath))?;
        self.results = open_in(&self.fd, &self.dir, RESULTS)?;
        Ok(())
    }

    /// Writes a file whole into a folder of the study (made when missing), never through a link.
    pub fn write_in(&self, folder: &str, name: &str, bytes: &[u8]) -> Result<(), StoreError> {
        let path = self.dir.join(folder);
        let sub = self.fd.subdir(folder).map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) | Some(libc::ENOTDIR) if is_link(&path) => StoreError::Link {
                path: path.display().to_string(),
            },
            _ => io_at(&path)(e),
        })?;
        sub.write_atomic(name, bytes)
            .map_err(io_at(&path.join(name)))
    }

    /// A record's profiles' folded stacks, each in the file the record names.
    fn write_profiles(&self, rec: &Record) -> Result<(), StoreError> {
        let Some(p) = &rec.profile else {
            return Ok(());
        };
        for kind in crate::profile::folded::Kind::ALL {
            if let Some(s) = p.get(kind) {
                let (Some(f), Some((folder, name))) = (&s.folded, s.file.split_once('/')) else {
                    continue;
                };
                self.write_in(folder, name, f.text().as_bytes())?;
            }
        }
        Ok(())
    }

    /// Appends one record and makes it durable before returning. Its latency over time goes to
    /// latency.hlog first (flushed and synced), under a tag the record then names, and its
    /// profiles to the files it names.
    pub fn append(&mut self, rec: &Record) -> Result<(), StoreError> {
        self.write_profiles(rec)?;
        let tagged;
        let rec = match &rec.latency_log {
            Some(l) if !l.lines.is_empty() => {
                let mut r = rec.clone();
                let tag = self.append_latency(l, &r.started_at)?;
                if let Some(l) = r.latency_log.as_mut() {
                    l.tag = tag;
                }
                tagged = r;
                &tagged
            }
            _ => rec,
        };
        let path = self.dir.join(RESULTS);
        let mut line = serde_json::to_vec(rec)
            .map_err(std::io::Error::other)
            .map_err(io_at(&path))?;
        line.push(b'\n');
        self.results.write_all(&line).map_err(io_at(&path))?;
        self.results.sync_data().map_err(io_at(&path))
    }

    /// A record's intervals appended to latency.hlog (made with its header when missing; a torn
    /// last line left by a crash is ended first, so it stays a line of its own): the tag given.
    fn append_latency(&mut self, l: &LatencyLog, started_at: &str) -> Result<String, StoreError> {
        let path = self.dir.join(hlog::FILE);
        if self.hlog.is_none() {
            let old = match self.fd.kind_of(hlog::FILE).map_err(io_at(&path))? {
                Some((libc::S_IFLNK, _)) => {
                    return Err(StoreError::Link {
                        path: path.display().to_string(),
                    })
                }
                Some((_, len)) if len > 0 => {
                    let mut text = String::new();
                    self.fd
                        .open_read_nofollow(hlog::FILE)
                        .and_then(|mut f| f.read_to_string(&mut text))
                        .map_err(io_at(&path))?;
                    text
                }
                _ => String::new(),
            };
            let mut f = open_in(&self.fd, &self.dir, hlog::FILE)?;
            let start = l.lines.first().map_or(0.0, |i| i.start_s);
            let lead = if old.is_empty() {
                hlog::header(
                    start,
                    &format!("fsbench latency over time, from {started_at}"),
                )
            } else if !old.ends_with('\n') {
                "\n".to_string()
            } else {
                String::new()
            };
            f.write_all(lead.as_bytes()).map_err(io_at(&path))?;
            self.hlog = Some((f, hlog::next_tag(&old)));
        }
        let (f, next) = self.hlog.as_mut().expect("opened above");
        let tag = format!("r{next}");
        *next += 1;
        f.write_all(l.text(&tag).as_bytes())
            .and_then(|_| f.sync_data())
            .map_err(io_at(&path))?;
        Ok(tag)
    }

    pub fn save_manifest(&self, m: &Manifest) -> Result<(), StoreError> {
        write_manifest(&self.fd, &self.dir, m)
    }

    /// A second handle on the study's manifest, for a rank's last word (`Team::last_word`): it
    /// writes while this study is in use (the lock stays with it).
    pub fn manifest_keeper(&self) -> Result<ManifestKeeper, StoreError> {
        Ok(ManifestKeeper {
            dir: self.dir.clone(),
            fd: self.fd.try_clone().map_err(io_at(&self.dir))?,
        })
    }

    /// Writes a file of the study (a report) whole, by name in the directory, never through a
    /// link; a failed write leaves no temporary file behind.
    pub fn write_file(&self, name: &str, bytes: &[u8]) -> Result<(), StoreError> {
        self.fd
            .write_atomic(name, bytes)
            .map_err(io_at(&self.dir.join(name)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest() -> Manifest {
        Manifest::new(
            crate::plan::Plan::default(),
            vec!["fsbench".into()],
            crate::sys::host::Environment::default(),
        )
    }

    #[test]
    fn a_second_writer_is_refused_with_the_holders_pid_and_report_sees_it() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("s");
        let first = Study::create(&dir, &manifest()).unwrap();
        assert_eq!(lock_state(&dir), LockState::Held(Some(std::process::id())));
        let e = Study::open(&dir).err().expect("a second writer is refused");
        assert!(
            e.to_string()
                .contains(&format!("pid {}", std::process::id())),
            "{e}"
        );
        assert!(Study::open_or_create(&dir).is_err());
        drop(first);
        assert_eq!(lock_state(&dir), LockState::Free);
        assert!(Study::open(&dir).is_ok());
    }

    #[test]
    fn links_at_the_study_path_or_inside_it_are_never_followed() {
        let t = tempfile::tempdir().unwrap();
        let victim = t.path().join("victim");
        std::fs::create_dir(&victim).unwrap();
        let link = t.path().join("link");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        let e = Study::create(&link, &manifest()).err().unwrap();
        assert!(matches!(e, StoreError::Link { .. }), "{e}");
        assert_eq!(std::fs::read_dir(&victim).unwrap().count(), 0);

        let dir = t.path().join("s");
        std::fs::create_dir(&dir).unwrap();
        let target = t.path().join("elsewhere.jsonl");
        std::os::unix::fs::symlink(&target, dir.join(RESULTS)).unwrap();
        let e = Study::create(&dir, &manifest()).err().unwrap();
        assert!(matches!(e, StoreError::Link { .. }), "{e}");
        assert!(!target.exists());
    }

    #[test]
    fn a_manifest_link_is_replaced_not_followed_and_no_temporary_file_stays() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("s");
        std::fs::create_dir(&dir).unwrap();
        let target = t.path().join("passwd");
        std::fs::write(&target, "keep me").unwrap();
        std::os::unix::fs::symlink(&target, dir.join(MANIFEST)).unwrap();
        std::os::unix::fs::symlink(&target, dir.join("manifest.json.tmp")).unwrap();
        let s = Study::create(&dir, &manifest()).unwrap();
        s.write_file("report.md", b"# r\n").unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep me");
        assert!(!is_link(&dir.join(MANIFEST)));
        assert!(!dir.join("manifest.json.tmp").exists());
    }

    #[test]
    fn latency_over_time_goes_to_latency_hlog_and_comes_back_with_the_records() {
        use crate::metrics::timeline::{Slice, Timeline};
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("s");
        let mut s = Study::create(&dir, &manifest()).unwrap();
        let mut h = crate::metrics::hist::new();
        h.record_n(20_000, 500).unwrap();
        let phase = |test: &str| crate::store::Phase {
            test: test.into(),
            latency: Some(Timeline {
                width_s: 1.0,
                start_epoch_s: 1_761_300_000.0,
                end_s: 2.0,
                slices: vec![Slice::of(&h), Slice::of(&h)],
            }),
            ..Default::default()
        };
        let key = crate::store::RecordKey {
            target: "tmpfs",
            fs: "tmpfs",
            workload: "cdm",
            repeat: 0,
        };
        s.append(&Record::from_phase(&key, phase("a"))).unwrap();
        s.append(&Record::from_phase(&key, phase("b"))).unwrap();
        // The record's line names its tag; the intervals are in the log, not in results.jsonl.
        let jsonl = std::fs::read_to_string(dir.join(RESULTS)).unwrap();
        assert!(jsonl.contains(r#""tag":"r2""#), "{jsonl}");
        assert!(!jsonl.contains("HISTF"));
        drop(s);
        // A crash tore the log's last line: the next writer ends it and counts tags on.
        let f = dir.join(hlog::FILE);
        std::fs::OpenOptions::new()
            .append(true)
            .open(&f)
            .unwrap()
            .write_all(b"Tag=r3,1.0")
            .unwrap();
        let (mut s, _) = Study::open(&dir).unwrap();
        s.append(&Record::from_phase(&key, phase("c"))).unwrap();
        let recs = crate::store::load_results(&dir).unwrap();
        let tags: Vec<&str> = recs
            .iter()
            .map(|r| r.latency_log.as_ref().unwrap().tag.as_str())
            .collect();
        assert_eq!(tags, ["r1", "r2", "r4"]);
        for r in &recs {
            let l = r.latency_log.as_ref().unwrap();
            assert_eq!(l.lines.len(), 2);
            assert_eq!(l.lines[1].decode().unwrap().len(), 500);
        }
        assert!(std::fs::read_to_string(&f)
            .unwrap()
            .starts_with("#[fsbench latency over time"));
    }

    #[test]
    fn holders_are_named_by_pid() {
        let t = tempfile::tempdir().unwrap();
        let fd = Dir::open(t.path()).unwrap();
        assert!(crate::sys::try_lock(fd.file(), true).unwrap());
        assert_eq!(holder_of(t.path()), Some(std::process::id()));
    }

    /// Other locks taken and dropped while the holder is looked for (as other tests and other
    /// processes do) never hide the holder.
    #[test]
    fn holders_are_found_while_other_locks_come_and_go() {
        let t = tempfile::tempdir().unwrap();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let churn: Vec<_> = (0..2)
            .map(|_| {
                let (stop, t) = (stop.clone(), t.path().to_path_buf());
                std::thread::spawn(move || {
                    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                        let held: Vec<File> = (0..200)
                            .map(|_| tempfile::tempfile_in(&t).unwrap())
                            .collect();
                        for f in &held {
                            assert!(crate::sys::try_lock(f, true).unwrap());
                        }
                    }
                })
            })
            .collect();
        let d = tempfile::tempdir().unwrap();
        let fd = Dir::open(d.path()).unwrap();
        assert!(crate::sys::try_lock(fd.file(), true).unwrap());
        let until = std::time::Instant::now() + std::time::Duration::from_millis(500);
        let mut missed = 0;
        while std::time::Instant::now() < until {
            missed += usize::from(holder_of(d.path()) != Some(std::process::id()));
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        churn.into_iter().for_each(|c| c.join().unwrap());
        assert_eq!(missed, 0, "the holder went unseen {missed} times");
    }
}
