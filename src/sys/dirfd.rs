//! Files by name inside an open directory (openat(2), unlinkat(2), fstatat(2)), as a program that
//! has changed into the directory works: one path component per call, not the whole path.

use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::io::{AsRawFd, FromRawFd};
use std::path::Path;

/// An open directory.
pub struct Dir {
    dir: File,
}

fn cname(name: &str) -> io::Result<CString> {
    CString::new(name).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "name contains NUL"))
}

fn check(rc: libc::c_int) -> io::Result<libc::c_int> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc)
    }
}

impl Dir {
    pub fn open(path: &Path) -> io::Result<Dir> {
        Dir::open_with(path, 0)
    }

    /// The directory itself must not be a symbolic link (O_NOFOLLOW: ELOOP when it is).
    pub fn open_nofollow(path: &Path) -> io::Result<Dir> {
        Dir::open_with(path, libc::O_NOFOLLOW)
    }

    /// The same directory on a second descriptor (dup(2)).
    pub fn try_clone(&self) -> io::Result<Dir> {
        Ok(Dir {
            dir: self.dir.try_clone()?,
        })
    }

    fn open_with(path: &Path, flags: libc::c_int) -> io::Result<Dir> {
        let c = CString::new(path.as_os_str().as_bytes())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path contains NUL"))?;
        // SAFETY: `c` is NUL-terminated; the returned descriptor is owned by the File (open(2)).
        let fd = check(unsafe {
            libc::open(
                c.as_ptr(),
                libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC | flags,
            )
        })?;
        // SAFETY: `fd` was just opened and is owned by nothing else.
        Ok(Dir {
            dir: unsafe { File::from_raw_fd(fd) },
        })
    }

    fn openat(&self, name: &str, flags: libc::c_int) -> io::Result<File> {
        let c = cname(name)?;
        // SAFETY: the directory descriptor is open and `c` NUL-terminated; the new descriptor is
        // owned by the returned File (openat(2)).
        let fd = check(unsafe {
            libc::openat(
                self.dir.as_raw_fd(),
                c.as_ptr(),
                flags | libc::O_CLOEXEC,
                0o644,
            )
        })?;
        // SAFETY: `fd` was just opened and is owned by nothing else.
        Ok(unsafe { File::from_raw_fd(fd) })
    }

    /// openat(O_CREAT|O_EXCL|O_WRONLY).
    pub fn create_new(&self, name: &str) -> io::Result<File> {
        self.openat(name, libc::O_CREAT | libc::O_EXCL | libc::O_WRONLY)
    }

    pub fn open_read(&self, name: &str) -> io::Result<File> {
        self.openat(name, libc::O_RDONLY)
    }

    /// openat(O_WRONLY|O_APPEND|O_CREAT|O_NOFOLLOW): never through a symbolic link (ELOOP).
    pub fn open_append(&self, name: &str) -> io::Result<File> {
        self.openat(
            name,
            libc::O_WRONLY | libc::O_APPEND | libc::O_CREAT | libc::O_NOFOLLOW,
        )
    }

    /// openat(O_RDONLY|O_NOFOLLOW).
    pub fn open_read_nofollow(&self, name: &str) -> io::Result<File> {
        self.openat(name, libc::O_RDONLY | libc::O_NOFOLLOW)
    }

    /// The directory `name` in this one, made (0755) when missing and opened without following
    /// a link (ELOOP or ENOTDIR when `name` is a symbolic link or not a directory).
    pub fn subdir(&self, name: &str) -> io::Result<Dir> {
        let c = cname(name)?;
        // SAFETY: the directory descriptor is open and `c` NUL-terminated (mkdirat(2)).
        match check(unsafe { libc::mkdirat(self.dir.as_raw_fd(), c.as_ptr(), 0o755) }) {
            Err(e) if e.kind() != io::ErrorKind::AlreadyExists => return Err(e),
            _ => {}
        }
        let dir = self.openat(name, libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW)?;
        Ok(Dir { dir })
    }

    /// The directory's own descriptor (for flock(2) and fsync(2)).
    pub fn file(&self) -> &File {
        &self.dir
    }

    /// renameat(2) within the directory: replaces `to` (a symbolic link there is replaced, never
    /// followed).
    pub fn rename(&self, from: &str, to: &str) -> io::Result<()> {
        let (a, b) = (cname(from)?, cname(to)?);
        let fd = self.dir.as_raw_fd();
        // SAFETY: the directory descriptor is open and both names NUL-terminated (renameat(2)).
        check(unsafe { libc::renameat(fd, a.as_ptr(), fd, b.as_ptr()) }).map(|_| ())
    }

    /// Writes `name` whole and durably, or not at all: a fresh `name.tmp` (O_EXCL, so never
    /// through a link), fsync, renameat over `name`, fsync of the directory. A failed write (a
    /// full disk) removes its temporary file and leaves `name` as it was.
    pub fn write_atomic(&self, name: &str, bytes: &[u8]) -> io::Result<()> {
        use std::io::Write;
        let tmp = format!("{name}.tmp");
        match self.unlink(&tmp) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
        let written = self.create_new(&tmp).and_then(|mut f| {
            f.write_all(bytes)?;
            f.sync_all()
        });
        let done = written.and_then(|_| self.rename(&tmp, name));
        if let Err(e) = done {
            let _ = self.unlink(&tmp);
            return Err(e);
        }
        self.dir.sync_all()
    }

    /// What is at `name`, not following a symbolic link (fstatat with AT_SYMLINK_NOFOLLOW):
    /// None when nothing is.
    pub fn kind_of(&self, name: &str) -> io::Result<Option<(libc::mode_t, u64)>> {
        let c = cname(name)?;
        let mut st = std::mem::MaybeUninit::<libc::stat>::zeroed();
        // SAFETY: `c` is NUL-terminated and `st` is writable memory of the right type (fstatat(2)).
        let rc = unsafe {
            libc::fstatat(
                self.dir.as_raw_fd(),
                c.as_ptr(),
                st.as_mut_ptr(),
                libc::AT_SYMLINK_NOFOLLOW,
            )
        };
        if rc < 0 {
            let e = io::Error::last_os_error();
            return match e.kind() {
                io::ErrorKind::NotFound => Ok(None),
                _ => Err(e),
            };
        }
        // SAFETY: fstatat returned 0, so it filled the struct.
        let st = unsafe { st.assume_init() };
        Ok(Some((st.st_mode & libc::S_IFMT, st.st_size as u64)))
    }

    /// fstatat(2): the file's size.
    pub fn size_of(&self, name: &str) -> io::Result<u64> {
        let c = cname(name)?;
        let mut st = std::mem::MaybeUninit::<libc::stat>::zeroed();
        // SAFETY: `c` is NUL-terminated and `st` is writable memory of the right type (fstatat(2)).
        check(unsafe { libc::fstatat(self.dir.as_raw_fd(), c.as_ptr(), st.as_mut_ptr(), 0) })?;
        // SAFETY: fstatat returned 0, so it filled the struct.
        Ok(unsafe { st.assume_init() }.st_size as u64)
    }

    /// unlinkat(2).
    pub fn unlink(&self, name: &str) -> io::Result<()> {
        let c = cname(name)?;
        // SAFETY: the directory descriptor is open and `c` NUL-terminated (unlinkat(2)).
        check(unsafe { libc::unlinkat(self.dir.as_raw_fd(), c.as_ptr(), 0) }).map(|_| ())
    }
}
