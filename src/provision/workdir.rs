//! The work directory, where root creates loop images and mount points under predictable names.
//! Whoever can write to it (or to any directory above it) could plant a symlink or a directory at
//! one of those names and make root write an image over a device, or mount somewhere else. So a
//! work directory, and every directory above it, must belong to root (or to the user running
//! fsbench) and be writable by nobody else; above it, a root-owned sticky directory such as
//! `/var/tmp` or `/tmp` is accepted, since no one can replace another user's entry in it. Missing
//! directories are created one at a time, each checked after it is made; the work directory is
//! then used by its resolved path, so a symlink on the way cannot be swapped later.

use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// The marker file that makes a work directory recognisably fsbench's.
pub const WORKDIR_MARKER: &str = ".fsbench-workdir";

/// Directories of the system itself: never a work directory, where fsbench makes and removes
/// images and mount points by name.
const SYSTEM_DIRS: &[&str] = &[
    "/",
    "/bin",
    "/boot",
    "/dev",
    "/etc",
    "/home",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/media",
    "/mnt",
    "/opt",
    "/proc",
    "/root",
    "/run",
    "/sbin",
    "/srv",
    "/sys",
    "/tmp",
    "/usr",
    "/usr/bin",
    "/usr/lib",
    "/usr/local",
    "/usr/sbin",
    "/usr/share",
    "/var",
    "/var/cache",
    "/var/lib",
    "/var/log",
    "/var/mail",
    "/var/spool",
    "/var/tmp",
];

/// Why a resolved directory may not be a work directory, if it may not: a system directory, a
/// directory under /proc, /sys, /dev or /run, or the mount point of a filesystem of the system's
/// own tree (in /etc/fstab).
fn system_dir(path: &Path) -> Option<String> {
    let shown = path.display();
    let fix = "give fsbench a directory of its own, e.g. --workdir /var/tmp/fsbench";
    if SYSTEM_DIRS.iter().any(|d| Path::new(d) == path) {
        return Some(format!(
            "{shown} is a system directory: fsbench makes and removes loop images and mount points in its work directory ({fix})"
        ));
    }
    if ["/proc", "/sys", "/dev", "/run"]
        .iter()
        .any(|d| path.starts_with(d))
    {
        return Some(format!(
            "{shown} is inside a kernel or runtime filesystem ({fix})"
        ));
    }
    let fstab = std::fs::read_to_string("/etc/fstab").unwrap_or_default();
    let in_fstab = fstab.lines().any(|l| {
        let l = l.trim();
        !l.starts_with('#') && l.split_whitespace().nth(1).map(Path::new) == Some(path)
    });
    in_fstab.then(|| {
        format!("{shown} is the mount point of a filesystem of the system (in /etc/fstab) ({fix})")
    })
}

/// A work directory fsbench will not use, and why; nothing was created.
#[derive(Debug, Clone, thiserror::Error)]
#[error("work directory {dir}: {why}")]
pub struct WorkdirError {
    pub dir: PathBuf,
    pub why: String,
}

fn err(dir: &Path, why: String) -> WorkdirError {
    WorkdirError {
        dir: dir.to_path_buf(),
        why,
    }
}

/// Why `meta` (of `path`) is not a directory fsbench may trust, if it is not. `is_workdir`: the
/// work directory itself, which must not be writable by others even when sticky (others could
/// still create the names fsbench is about to use).
fn distrust(path: &Path, meta: &std::fs::Metadata, is_workdir: bool) -> Option<String> {
    let me = crate::sys::euid();
    if meta.file_type().is_symlink() || !meta.is_dir() {
        return Some(format!("{} is not a directory", path.display()));
    }
    if meta.uid() != 0 && meta.uid() != me {
        return Some(format!(
            "{} belongs to uid {}, not to root: its owner could plant symlinks where fsbench creates loop images and mount points (chown root: {}, or choose another --workdir)",
            path.display(),
            meta.uid(),
            path.display()
        ));
    }
    let writable_by_others = meta.mode() & 0o022 != 0;
    let sticky_root = meta.mode() & 0o1000 != 0 && meta.uid() == 0;
    if writable_by_others && (is_workdir || !sticky_root) {
        return Some(format!(
            "{} is writable by {} (mode {:o}): they could plant symlinks where fsbench creates loop images and mount points (chmod go-w {}, or choose another --workdir{})",
            path.display(),
            if meta.mode() & 0o002 != 0 { "everyone" } else { "its group" },
            meta.mode() & 0o7777,
            path.display(),
            if is_workdir { ", e.g. a new directory inside it" } else { "" }
        ));
    }
    None
}

/// Refuses a work directory that is a system directory (resolved as far as it exists), without
/// creating anything: what `--dry-run` checks.
pub fn refuse_system(dir: &Path) -> Result<(), WorkdirError> {
    let abs = std::path::absolute(dir).map_err(|e| err(dir, e.to_string()))?;
    let mut existing = abs.as_path();
    let mut missing = Vec::new();
    while std::fs::symlink_metadata(existing).is_err() {
        let Some(name) = existing.file_name() else {
            break;
        };
        missing.push(name);
        existing = existing.parent().unwrap_or(Path::new("/"));
    }
    let real = existing
        .canonicalize()
        .unwrap_or_else(|_| existing.to_path_buf());
    match system_dir(&real.join(missing.iter().rev().collect::<PathBuf>())) {
        Some(why) => Err(err(dir, why)),
        None => Ok(()),
    }
}

/// Checks `dir` and every directory above it, creating what is missing (mode 0755); writes the
/// marker that makes it recognisably fsbench's. Returns the resolved path to use from now on.
pub fn secure(dir: &Path) -> Result<PathBuf, WorkdirError> {
    let abs = std::path::absolute(dir).map_err(|e| err(dir, e.to_string()))?;
    // The longest part that exists, resolved; the rest is created below it.
    let mut existing = abs.as_path();
    let mut missing = Vec::new();
    while std::fs::symlink_metadata(existing).is_err() {
        missing.push(
            existing
                .file_name()
                .ok_or_else(|| err(dir, "no such directory".into()))?,
        );
        existing = existing
            .parent()
            .ok_or_else(|| err(dir, "no such directory".into()))?;
    }
    let mut path = existing
        .canonicalize()
        .map_err(|e| err(dir, format!("{}: {e}", existing.display())))?;
    if let Some(why) = system_dir(&path.join(missing.iter().rev().collect::<PathBuf>())) {
        return Err(err(dir, why));
    }
    for a in path.ancestors() {
        let meta = std::fs::symlink_metadata(a).map_err(|e| err(dir, e.to_string()))?;
        let is_workdir = a == path && missing.is_empty();
        if let Some(why) = distrust(a, &meta, is_workdir) {
            return Err(err(dir, why));
        }
    }
    for (i, name) in missing.iter().rev().enumerate() {
        path.push(name);
        match std::fs::DirBuilder::new().mode(0o755).create(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(err(dir, format!("cannot create {}: {e}", path.display()))),
        }
        // Checked after it exists: someone may have made it first.
        let meta = std::fs::symlink_metadata(&path).map_err(|e| err(dir, e.to_string()))?;
        if let Some(why) = distrust(&path, &meta, i + 1 == missing.len()) {
            return Err(err(dir, why));
        }
    }
    // The marker, written once (never through a symlink); a later run finds it as it is.
    let marker = path.join(WORKDIR_MARKER);
    let made = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW)
        .mode(0o644)
        .open(&marker);
    use std::io::Write;
    match made {
        Ok(mut f) => f
            .write_all(b"This directory holds fsbench's loop images and mount points.\n")
            .map_err(|e| err(dir, format!("cannot write {}: {e}", marker.display())))?,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            if !std::fs::symlink_metadata(&marker).is_ok_and(|m| m.is_file()) {
                return Err(err(dir, format!("{} is not a file", marker.display())));
            }
        }
        Err(e) => return Err(err(dir, format!("cannot write {}: {e}", marker.display()))),
    }
    Ok(path)
}

/// Whether `dir` (holding a work directory marker) and everything above it are trusted: cleanup
/// acts by name only inside such a directory, never on a marker anyone could have written.
pub fn trusted(dir: &Path) -> bool {
    let Ok(real) = dir.canonicalize() else {
        return false;
    };
    let marker_ok = std::fs::symlink_metadata(real.join(WORKDIR_MARKER))
        .is_ok_and(|m| m.is_file() && (m.uid() == 0 || m.uid() == crate::sys::euid()));
    marker_ok
        && real.ancestors().all(|a| {
            std::fs::symlink_metadata(a).is_ok_and(|m| distrust(a, &m, a == real).is_none())
        })
}

/// A directory fsbench makes afresh (a run directory, a mount point): a plain mkdir that fails if
/// anything is already at that name, never following a symlink planted there.
pub fn mkdir_fresh(path: &Path) -> std::io::Result<()> {
    std::fs::DirBuilder::new().mode(0o755).create(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn chmod(p: &Path, mode: u32) {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    #[test]
    fn a_new_directory_under_a_private_one_is_created_and_marked() {
        let t = tempfile::tempdir().unwrap();
        let wd = t.path().join("a/b");
        let got = secure(&wd).unwrap();
        assert_eq!(got, t.path().canonicalize().unwrap().join("a/b"));
        assert!(got.join(WORKDIR_MARKER).is_file());
        assert!(trusted(&got));
        // Again: the same directory is accepted as it is.
        assert_eq!(secure(&wd).unwrap(), got);
    }

    #[test]
    fn a_directory_others_can_write_is_refused_and_names_the_fix() {
        let t = tempfile::tempdir().unwrap();
        let wd = t.path().join("open");
        std::fs::create_dir(&wd).unwrap();
        chmod(&wd, 0o777);
        let e = secure(&wd).unwrap_err().to_string();
        assert!(
            e.contains("writable by everyone") && e.contains("chmod go-w"),
            "{e}"
        );
        assert!(!wd.join(WORKDIR_MARKER).exists());
        // Sticky does not save the work directory itself...
        chmod(&wd, 0o1777);
        assert!(secure(&wd).is_err());
        // ...but a root-owned sticky parent (like /var/tmp) is fine, when fsbench runs as root.
        if crate::sys::is_root() {
            assert!(secure(&wd.join("inner")).is_ok());
        }
        // A group-writable parent is refused for what is below it.
        chmod(&wd, 0o775);
        let e = secure(&wd.join("below")).unwrap_err().to_string();
        assert!(e.contains("its group"), "{e}");
        assert!(
            !wd.join("below").exists(),
            "nothing is created under a refused parent"
        );
    }

    #[test]
    fn a_symlink_on_the_way_is_resolved_and_its_target_checked() {
        let t = tempfile::tempdir().unwrap();
        let real = t.path().join("real");
        std::fs::create_dir(&real).unwrap();
        let link = t.path().join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        assert_eq!(secure(&link).unwrap(), real.canonicalize().unwrap());
    }

    #[test]
    fn mkdir_fresh_never_reuses_a_name() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join("run");
        mkdir_fresh(&d).unwrap();
        assert!(mkdir_fresh(&d).is_err());
        let l = t.path().join("planted");
        std::os::unix::fs::symlink("/", &l).unwrap();
        assert!(mkdir_fresh(&l).is_err());
    }

    #[test]
    fn system_directories_are_never_a_workdir() {
        for d in [
            "/",
            "/usr",
            "/etc",
            "/var",
            "/home",
            "/var/tmp",
            "/tmp",
            "/proc/self",
        ] {
            let e = secure(Path::new(d)).unwrap_err().to_string();
            assert!(e.contains("--workdir"), "{d}: {e}");
        }
        assert!(system_dir(Path::new("/var/tmp/fsbench")).is_none());
    }
}
