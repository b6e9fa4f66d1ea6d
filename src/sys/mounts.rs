//! /proc/self/mountinfo, parsed (proc(5)).

use std::path::{Path, PathBuf};

#[derive(Debug, Clone)]
pub struct MountEntry {
    /// The mount's id (field 1): another mount at the same place has another.
    pub id: u64,
    /// Device number of the filesystem (major, minor): field 3.
    pub dev: (u32, u32),
    pub mountpoint: PathBuf,
    /// Per-mount options (rw, noatime, ...).
    pub mount_options: String,
    pub fstype: String,
    pub source: String,
    /// Superblock options (the filesystem's own: compress=zstd:3, nodatacow, ...).
    pub super_options: String,
}

impl MountEntry {
    /// Every option, per-mount and superblock, in one list.
    pub fn all_options(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for o in self
            .mount_options
            .split(',')
            .chain(self.super_options.split(','))
        {
            if !o.is_empty() && !out.iter().any(|x| x == o) {
                out.push(o.to_string());
            }
        }
        out
    }
}

/// Undoes mountinfo's octal escapes (`\040` for a space).
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 4 <= b.len() {
            if let Ok(v) =
                u8::from_str_radix(std::str::from_utf8(&b[i + 1..i + 4]).unwrap_or("x"), 8)
            {
                out.push(v);
                i += 4;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

pub fn parse_mountinfo(text: &str) -> Vec<MountEntry> {
    let mut out = Vec::new();
    for line in text.lines() {
        let Some((left, right)) = line.split_once(" - ") else {
            continue;
        };
        let l: Vec<&str> = left.split(' ').collect();
        let r: Vec<&str> = right.split(' ').collect();
        if l.len() < 6 || r.len() < 3 {
            continue;
        }
        let Some((maj, min)) = l[2].split_once(':') else {
            continue;
        };
        let (Ok(maj), Ok(min), Ok(id)) = (maj.parse(), min.parse(), l[0].parse()) else {
            continue;
        };
        out.push(MountEntry {
            id,
            dev: (maj, min),
            mountpoint: PathBuf::from(unescape(l[4])),
            mount_options: l[5].to_string(),
            fstype: r[0].to_string(),
            source: unescape(r[1]),
            super_options: r[2].to_string(),
        });
    }
    out
}

/// The mounts of this process's namespace.
pub fn mounts() -> Vec<MountEntry> {
    std::fs::read_to_string("/proc/self/mountinfo")
        .map(|t| parse_mountinfo(&t))
        .unwrap_or_default()
}

/// The mount that holds `path`: the topmost whose mount point is a prefix of it.
pub fn containing(path: &Path) -> Option<MountEntry> {
    mounts()
        .into_iter()
        .rev()
        .find(|m| path.starts_with(&m.mountpoint))
}

/// The topmost mount at exactly `path`, if any.
pub fn mount_at(path: &Path) -> Option<MountEntry> {
    mounts().into_iter().rev().find(|m| m.mountpoint == path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_fields_and_escapes() {
        let text = "43 27 0:40 / /tmp/z\\040mnt rw,relatime - fuse.zfs fsbtest rw,user_id=0\n\
                    36 25 7:0 / /mnt/b rw,noatime shared:1 - btrfs /dev/loop0 rw,compress=zstd:3,nodatacow\n";
        let m = parse_mountinfo(text);
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].mountpoint, PathBuf::from("/tmp/z mnt"));
        assert_eq!(m[0].dev, (0, 40));
        assert_eq!(m[1].dev, (7, 0));
        assert_eq!(m[1].fstype, "btrfs");
        assert_eq!(m[1].source, "/dev/loop0");
        assert!(m[1].all_options().contains(&"nodatacow".to_string()));
        assert!(m[1].all_options().contains(&"noatime".to_string()));
    }
}
