//! Files fsbench writes at a path a user named (fio's logs and iologs, a verify state, trend pages,
//! man pages, the history database): never through a final symbolic link, never a device, FIFO or
//! socket, and never in a kernel filesystem (/proc, /sys, /dev, or procfs, sysfs, cgroupfs,
//! debugfs, tracefs... mounted anywhere). fsbench runs as root: a log aimed at
//! /proc/sys/kernel/hostname would otherwise rewrite the host's name.

use std::fs::File;
use std::io;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// How a named file is opened for writing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Create {
    /// A file that must not exist yet (O_CREAT|O_EXCL).
    New,
    /// Created or emptied (O_CREAT|O_TRUNC), a regular file only.
    Replace,
    /// Created or appended to (O_CREAT|O_APPEND), a regular file only.
    Append,
}

/// The path prefixes of the kernel's own filesystems.
const KERNEL_DIRS: &[&str] = &["/proc", "/sys", "/dev"];

/// The kernel's directory `dir` (resolved) is under, if any. A filesystem mounted under /dev
/// (/dev/shm's tmpfs) is judged by its type instead (`KERNEL_FS`): it is data, devpts is not.
fn kernel_prefix(dir: &Path) -> Option<&'static str> {
    use std::os::unix::fs::MetadataExt;
    let k = KERNEL_DIRS.iter().find(|k| dir.starts_with(k))?;
    if *k == "/dev" {
        let dev_of = |p: &Path| std::fs::metadata(p).map(|m| m.dev()).ok();
        if let (Some(a), Some(b)) = (dev_of(dir), dev_of(Path::new("/dev"))) {
            if a != b {
                return None;
            }
        }
    }
    Some(k)
}

/// statfs(2) magic numbers of filesystems whose files are the kernel's, not data.
const KERNEL_FS: &[(i64, &str)] = &[
    (0x9fa0, "procfs"),
    (0x6265_6572, "sysfs"),
    (0x1cd1, "devpts"),
    (0x1980_0202, "mqueue"),
    (0x9584_58f6, "hugetlbfs"),
    (0x0027_e0eb, "cgroupfs"),
    (0x6367_7270, "cgroup2"),
    (0x6462_6720, "debugfs"),
    (0x7472_6163, "tracefs"),
    (0x7363_6673, "securityfs"),
    (0x6265_6570, "configfs"),
    (0xcafe_4a11, "bpffs"),
    (0xf97c_ff8c, "selinuxfs"),
    (0x4249_4e4d, "binfmt_misc"),
    (0x6e73_6673, "nsfs"),
    (0x5a3c_69f0, "apparmorfs"),
    (0x6165_676c, "pstorefs"),
    (0xde5e_81e4, "efivarfs"),
];

fn refused(path: &Path, why: impl std::fmt::Display) -> io::Error {
    io::Error::new(
        io::ErrorKind::PermissionDenied,
        format!("{}: {why}", path.display()),
    )
}

/// The directory a named file goes in, resolved (symbolic links on the way followed): the
/// file's own name must not be one.
fn parent_of(path: &Path) -> io::Result<PathBuf> {
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::canonicalize(&parent).map_err(|e| {
        io::Error::new(
            e.kind(),
            format!(
                "{}: its directory {}: {e}",
                path.display(),
                parent.display()
            ),
        )
    })
}

fn kernel_fs_of(dir: &Path) -> Option<&'static str> {
    let st = super::statfs_type(dir).ok()?;
    KERNEL_FS
        .iter()
        .find(|(magic, _)| *magic == st)
        .map(|(_, name)| *name)
}

/// Why a directory is the kernel's (under /proc, /sys or /dev, or on a kernel filesystem
/// mounted anywhere), if it is: fsbench makes no files there (a `dir:` target's scratch
/// directory). Symbolic links on the way are followed; a directory that does not resolve is not
/// said to be the kernel's (the caller refuses it for that).
pub fn kernel_dir(dir: &Path) -> Option<String> {
    let real = std::fs::canonicalize(dir).ok()?;
    if let Some(k) = kernel_prefix(&real) {
        return Some(format!("{} is under {k}", real.display()));
    }
    kernel_fs_of(&real).map(|fs| format!("{} is on a {fs} mount", real.display()))
}

/// Why fsbench will not write `path`, if it will not: checked before a run (`--check`, and every
/// command before it starts), nothing is opened or created. A missing directory is an error too.
pub fn check(path: &Path) -> io::Result<()> {
    if path.file_name().is_none() {
        return Err(refused(path, "names no file"));
    }
    let dir = parent_of(path)?;
    if let Some(k) = kernel_prefix(&dir) {
        return Err(refused(
            path,
            format_args!(
                "is under {k}: fsbench writes no file there (choose a path on a data filesystem)"
            ),
        ));
    }
    if let Some(fs) = kernel_fs_of(&dir) {
        return Err(refused(
            path,
            format_args!("is on a {fs} mount: fsbench writes no file there (choose a path on a data filesystem)"),
        ));
    }
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => Err(refused(
            path,
            "is a symbolic link: fsbench does not write through one (name the file itself)",
        )),
        Ok(m) if !m.file_type().is_file() => Err(refused(
            path,
            format_args!("is a {}, not a regular file", kind(&m.file_type())),
        )),
        _ => Ok(()),
    }
}

fn kind(t: &std::fs::FileType) -> &'static str {
    if t.is_dir() {
        "directory"
    } else if t.is_block_device() {
        "block device"
    } else if t.is_char_device() {
        "character device"
    } else if t.is_fifo() {
        "FIFO"
    } else if t.is_socket() {
        "socket"
    } else {
        "special file"
    }
}

/// Opens `path` for writing as `how` says, after `check`: O_NOFOLLOW (a symbolic link planted
/// after the check fails with ELOOP), O_NONBLOCK until the file is known regular (a FIFO planted
/// after the check does not hang the run), then fstat: anything but a regular file is refused.
pub fn create(path: &Path, how: Create) -> io::Result<File> {
    check(path)?;
    let mut o = std::fs::OpenOptions::new();
    o.write(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    match how {
        Create::New => o.create_new(true),
        Create::Replace => o.create(true),
        Create::Append => o.create(true).append(true),
    };
    let f = o.mode(0o644).open(path).map_err(|e| {
        if e.raw_os_error() == Some(libc::ELOOP) {
            refused(
                path,
                "is a symbolic link: fsbench does not write through one",
            )
        } else {
            io::Error::new(e.kind(), format!("{}: {e}", path.display()))
        }
    })?;
    let t = f.metadata()?.file_type();
    if !t.is_file() {
        return Err(refused(
            path,
            format_args!("is a {}, not a regular file", kind(&t)),
        ));
    }
    super::clear_nonblock(&f)?;
    if how == Create::Replace {
        f.set_len(0)?;
    }
    Ok(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_directories_links_and_special_files_are_refused_and_nothing_is_made() {
        for p in [
            "/proc/sys/kernel/hostname",
            "/sys/kernel/x",
            "/dev/null",
            "/dev/pts/x",
        ] {
            let e = check(Path::new(p)).unwrap_err().to_string();
            assert!(e.contains("fsbench writes no file there"), "{p}: {e}");
        }
        // /dev/shm, a tmpfs of its own, is data (where it is mounted).
        let shm = Path::new("/dev/shm");
        let own_mount = |p: &Path| {
            use std::os::unix::fs::MetadataExt;
            std::fs::metadata(p).map(|m| m.dev()).ok()
        };
        if shm.is_dir() && own_mount(shm) != own_mount(Path::new("/dev")) {
            check(&shm.join("fsbench-outfile-test")).unwrap();
            assert_eq!(kernel_dir(shm), None);
        }
        let d = tempfile::tempdir().unwrap();
        let target = d.path().join("target");
        std::fs::write(&target, "keep").unwrap();
        let link = d.path().join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        for how in [Create::New, Create::Replace, Create::Append] {
            let e = create(&link, how).unwrap_err().to_string();
            assert!(e.contains("symbolic link"), "{e}");
        }
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");
        let e = create(d.path(), Create::Replace).unwrap_err().to_string();
        assert!(e.contains("directory"), "{e}");
        let fresh = d.path().join("fresh");
        let mut f = create(&fresh, Create::New).unwrap();
        std::io::Write::write_all(&mut f, b"x").unwrap();
        assert!(create(&fresh, Create::New).is_err(), "O_EXCL");
        create(&fresh, Create::Replace).unwrap();
        assert_eq!(std::fs::read(&fresh).unwrap(), b"");
        let e = check(&d.path().join("no/such/dir/f"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("its directory"), "{e}");
    }
}
