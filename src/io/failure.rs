//! What failed, where: the first error of a phase as a record keeps it (`failure` in
//! results.jsonl): the call, the errno's name, the path and the offset, and the target's
//! statvfs figures when the phase ended (what ENOSPC or EDQUOT left).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The first error of a phase.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Failure {
    /// The call that failed: write, read, fsync, fdatasync, syncfs, create, lay out, ...
    pub op: String,
    /// The errno's name (EIO, ENOSPC, EDQUOT, EROFS, ...), when the failure was an errno.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub errno: Option<String>,
    /// The error as the system words it.
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub path: Option<String>,
    /// Byte offset in the file of the I/O that failed.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub offset: Option<u64>,
    /// statvfs of the target when the phase ended: bytes_total, bytes_free, bytes_avail,
    /// inodes_total, inodes_free.
    #[serde(skip_serializing_if = "BTreeMap::is_empty", default)]
    pub space: BTreeMap<String, u64>,
    /// Which of the worker's files (an I/O file index), until the session names its path.
    #[serde(skip)]
    pub file: usize,
}

/// The errno inside an error that wraps one with more words (`create F: No space left on device
/// (os error 28)`): an io::Error inside it, or the "(os error N)" its text ends with.
fn wrapped_errno(e: &std::io::Error) -> Option<i32> {
    if let Some(n) = e
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<std::io::Error>())
        .and_then(std::io::Error::raw_os_error)
    {
        return Some(n);
    }
    let text = e.to_string();
    let n = text.rsplit_once("(os error ")?.1.strip_suffix(')')?;
    n.parse().ok()
}

impl Failure {
    /// A failed call with an errno (a positive number).
    pub fn errno(op: &str, errno: i32) -> Failure {
        Failure {
            op: op.to_string(),
            errno: Some(errno_name(errno)),
            message: std::io::Error::from_raw_os_error(errno)
                .to_string()
                .split(" (os error")
                .next()
                .unwrap_or_default()
                .to_string(),
            ..Default::default()
        }
    }

    /// A failed call, from its io::Error.
    pub fn io(op: &str, e: &std::io::Error) -> Failure {
        if let Some(n) = e.raw_os_error() {
            return Failure::errno(op, n);
        }
        match wrapped_errno(e) {
            // The words of an error that wraps the errno (a path, what was done) are kept.
            Some(n) => Failure {
                message: e.to_string(),
                ..Failure::errno(op, n)
            },
            None => Failure {
                op: op.to_string(),
                message: e.to_string(),
                ..Default::default()
            },
        }
    }

    pub fn at(mut self, offset: u64) -> Failure {
        self.offset = Some(offset);
        self
    }

    pub fn in_file(mut self, file: usize) -> Failure {
        self.file = file;
        self
    }

    pub fn path(mut self, path: &std::path::Path) -> Failure {
        self.path = Some(path.display().to_string());
        self
    }

    /// Out of space or quota: the phase ended on a full filesystem, not a broken one.
    pub fn no_space(&self) -> bool {
        matches!(self.errno.as_deref(), Some("ENOSPC" | "EDQUOT"))
    }

    /// Adds the target's space when the phase ended.
    pub fn add_space(&mut self, st: &crate::sys::FsStat) {
        let b = st.block_size;
        for (k, v) in [
            ("bytes_total", st.blocks * b),
            ("bytes_free", st.blocks_free * b),
            ("bytes_avail", st.blocks_avail * b),
            ("inodes_total", st.inodes),
            ("inodes_free", st.inodes_free),
        ] {
            self.space.insert(k.to_string(), v);
        }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // A verify failure's message is fio's whole sentence (what, file, offset, values).
        if self.op == "verify" {
            return f.write_str(&self.message);
        }
        write!(f, "{} failed", self.op)?;
        if let Some(o) = self.offset {
            write!(f, " at offset {o}")?;
        }
        if let Some(p) = &self.path {
            write!(f, " of {p}")?;
        }
        write!(f, ": {}", self.message)?;
        if let Some(n) = &self.errno {
            write!(f, " ({n})")?;
        }
        Ok(())
    }
}

/// An io::Error's errno by name (`EIO`), or its words when it carries no errno.
pub fn io_errno_name(e: &std::io::Error) -> String {
    match e.raw_os_error() {
        Some(n) => errno_name(n),
        None => e.to_string(),
    }
}

/// The symbolic name of an errno: `EIO`, `ENOSPC`; `errno N` for the rare rest.
pub fn errno_name(n: i32) -> String {
    let name = match n {
        libc::EIO => "EIO",
        libc::ENOSPC => "ENOSPC",
        libc::EDQUOT => "EDQUOT",
        libc::EROFS => "EROFS",
        libc::EBADMSG => "EBADMSG",
        libc::EUCLEAN => "EUCLEAN",
        libc::ENOENT => "ENOENT",
        libc::EACCES => "EACCES",
        libc::EPERM => "EPERM",
        libc::EINVAL => "EINVAL",
        libc::EFBIG => "EFBIG",
        libc::ENOTCONN => "ENOTCONN",
        libc::ENODEV => "ENODEV",
        libc::ENXIO => "ENXIO",
        libc::EMFILE => "EMFILE",
        libc::ENFILE => "ENFILE",
        libc::ENAMETOOLONG => "ENAMETOOLONG",
        libc::EMLINK => "EMLINK",
        libc::EEXIST => "EEXIST",
        libc::ENOTDIR => "ENOTDIR",
        libc::EISDIR => "EISDIR",
        libc::EAGAIN => "EAGAIN",
        libc::EINTR => "EINTR",
        libc::ENOMEM => "ENOMEM",
        libc::EFAULT => "EFAULT",
        libc::ENOTSUP => "ENOTSUP",
        _ => return format!("errno {n}"),
    };
    name.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_names_the_call_the_place_and_the_errno() {
        let f = Failure::errno("write", libc::ENOSPC)
            .at(1 << 20)
            .path(std::path::Path::new("/mnt/x"));
        assert_eq!(
            f.to_string(),
            "write failed at offset 1048576 of /mnt/x: No space left on device (ENOSPC)"
        );
        assert!(f.no_space());
        assert!(!Failure::errno("fsync", libc::EIO).no_space());
        assert_eq!(errno_name(libc::EDQUOT), "EDQUOT");
        let j = serde_json::to_value(&f).unwrap();
        assert_eq!(j["errno"], "ENOSPC");
        assert_eq!(j["offset"], 1048576);
    }
}
