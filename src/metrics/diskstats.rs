//! Bytes a block device read and wrote, from /proc/diskstats (sectors are always 512 bytes there).
//! Used for what the device itself wrote during a phase, and the write amplification it gives.

use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DevIo {
    pub read_bytes: u64,
    pub write_bytes: u64,
}

pub fn parse(text: &str, name: &str) -> Option<DevIo> {
    text.lines().find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.len() < 10 || f[2] != name {
            return None;
        }
        Some(DevIo {
            read_bytes: f[5].parse::<u64>().ok()? * 512,
            write_bytes: f[9].parse::<u64>().ok()? * 512,
        })
    })
}

/// The kernel's name for a block device node (e.g. /dev/loop3 -> loop3), by device number.
pub fn kernel_name(device: &Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let rdev = std::fs::metadata(device).ok()?.rdev();
    let (maj, min) = crate::sys::split_dev(rdev);
    let link = std::fs::read_link(format!("/sys/dev/block/{maj}:{min}")).ok()?;
    Some(link.file_name()?.to_string_lossy().into_owned())
}

/// The block device under a directory's filesystem, when it has one (not tmpfs, fuse or nfs).
pub fn device_of_dir(dir: &Path) -> Option<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let dev = std::fs::metadata(dir).ok()?.dev();
    let (maj, min) = crate::sys::split_dev(dev);
    let link = std::fs::read_link(format!("/sys/dev/block/{maj}:{min}")).ok()?;
    Some(PathBuf::from("/dev").join(link.file_name()?))
}

pub fn read(name: &str) -> Option<DevIo> {
    parse(&std::fs::read_to_string("/proc/diskstats").ok()?, name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_device_line() {
        let text = "   7       3 loop3 120 0 960 10 40 0 8192 30 0 50 40 0 0 0 0\n 259 0 nvme0n1 1 2 3 4 5 6 7 8 9 10 11\n";
        assert_eq!(
            parse(text, "loop3"),
            Some(DevIo {
                read_bytes: 960 * 512,
                write_bytes: 8192 * 512
            })
        );
        assert_eq!(parse(text, "loop1"), None);
    }
}
