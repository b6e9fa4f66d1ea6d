//! Guards before fsbench formats a block device. A device is identified by its device number
//! (st_rdev), never by its path, so a symlink or /dev/./loop0 cannot slip through.
//!
//! Refused always (even with --wipe): the device or one of its partitions is mounted, is the device
//! of a mounted filesystem, is used as swap, has holders (dm, md, bcache), is held open exclusively,
//! or is a member of an imported ZFS pool. Refused unless --wipe: it carries a filesystem signature,
//! a partition table or a pool label.

use std::fs::OpenOptions;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use super::exec::{argv, run_command};
use crate::sys::mounts;

#[derive(Debug, thiserror::Error)]
pub enum GuardError {
    #[error("{path}: {reason}")]
    NotADevice { path: String, reason: String },
    #[error("refusing to format {path}: {reason}. fsbench never formats a device in use, even with --wipe")]
    InUse { path: String, reason: String },
    #[error("refusing to format {path}: it carries {what}. If you are sure its contents may be destroyed, add --wipe")]
    HasData { path: String, what: String },
}

pub use crate::sys::split_dev;

/// The device number of a block device path (following symlinks).
pub fn block_dev_number(path: &Path) -> Result<(u32, u32), GuardError> {
    let md = std::fs::metadata(path).map_err(|e| GuardError::NotADevice {
        path: path.display().to_string(),
        reason: format!("cannot stat it ({e}); name an existing block device such as /dev/sdb"),
    })?;
    if !md.file_type().is_block_device() {
        return Err(GuardError::NotADevice {
            path: path.display().to_string(),
            reason:
                "is not a block device; --device takes a whole device or partition such as /dev/sdb"
                    .into(),
        });
    }
    Ok(split_dev(md.rdev()))
}

/// The device itself and its partitions, by number, with their sysfs directories.
fn device_family(dev: (u32, u32)) -> Vec<((u32, u32), PathBuf)> {
    let base = PathBuf::from(format!("/sys/dev/block/{}:{}", dev.0, dev.1));
    let mut out = vec![(dev, base.clone())];
    if let Ok(dir) = std::fs::read_dir(&base) {
        for e in dir.flatten() {
            let p = e.path();
            if !p.join("partition").exists() {
                continue;
            }
            if let Ok(d) = std::fs::read_to_string(p.join("dev")) {
                if let Some((a, b)) = d.trim().split_once(':') {
                    if let (Ok(a), Ok(b)) = (a.parse(), b.parse()) {
                        out.push(((a, b), p));
                    }
                }
            }
        }
    }
    out
}

fn dev_of_path(path: &str) -> Option<(u32, u32)> {
    let md = std::fs::metadata(path).ok()?;
    md.file_type()
        .is_block_device()
        .then(|| split_dev(md.rdev()))
}

/// Why a device (or one of its partitions) is in use, if it is.
pub fn in_use(path: &Path) -> Result<Option<String>, GuardError> {
    let dev = block_dev_number(path)?;
    let family = device_family(dev);
    let numbers: Vec<(u32, u32)> = family.iter().map(|f| f.0).collect();
    let name = |n: (u32, u32)| format!("device {}:{}", n.0, n.1);
    for m in mounts::mounts() {
        let by_number = numbers.contains(&m.dev);
        let by_source = m.source.starts_with('/')
            && dev_of_path(&m.source).is_some_and(|d| numbers.contains(&d));
        if by_number || by_source {
            return Ok(Some(format!(
                "it is mounted ({} {} on {})",
                m.source,
                m.fstype,
                m.mountpoint.display()
            )));
        }
    }
    if let Ok(swaps) = std::fs::read_to_string("/proc/swaps") {
        for line in swaps.lines().skip(1) {
            if let Some(src) = line.split_whitespace().next() {
                if dev_of_path(src).is_some_and(|d| numbers.contains(&d)) {
                    return Ok(Some(format!("it is in use as swap ({src})")));
                }
            }
        }
    }
    for (n, sys) in &family {
        if let Ok(dir) = std::fs::read_dir(sys.join("holders")) {
            let holders: Vec<String> = dir
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect();
            if !holders.is_empty() {
                return Ok(Some(format!(
                    "{} is held by {} (device-mapper, md or similar)",
                    name(*n),
                    holders.join(", ")
                )));
            }
        }
    }
    if let Some(why) = loop_on(&numbers) {
        return Ok(Some(why));
    }
    // O_EXCL on a block device fails with EBUSY when the kernel holds it exclusively
    // (mounted, md/dm member, kernel ZFS vdev) (open(2)).
    match OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_EXCL)
        .open(path)
    {
        Ok(_) => {}
        Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {
            return Ok(Some(
                "it is held open exclusively by another user (EBUSY)".into(),
            ))
        }
        Err(e) => {
            return Ok(Some(format!("it cannot be opened ({e})")));
        }
    }
    if let Some(pool) = imported_pool_member(&numbers) {
        return Ok(Some(format!(
            "it is a vdev of the imported ZFS pool '{pool}'"
        )));
    }
    Ok(None)
}

/// A loop device attached to one of these devices (a loop at an offset on a disk is held by no
/// `holders/` entry): by the device number of each loop device's backing file, as the kernel
/// reports it (LOOP_GET_STATUS64's lo_rdevice) and as its sysfs path stats.
fn loop_on(numbers: &[(u32, u32)]) -> Option<String> {
    for l in super::loopdev::list() {
        let by_path = std::fs::metadata(&l.backing_file)
            .ok()
            .filter(|m| m.file_type().is_block_device())
            .map(|m| split_dev(m.rdev()));
        let by_kernel = crate::sys::loopctl::backing_rdev(&l.device)
            .ok()
            .filter(|r| *r != 0)
            .map(split_dev);
        if let Some(n) = [by_path, by_kernel]
            .into_iter()
            .flatten()
            .find(|n| numbers.contains(n))
        {
            return Some(format!(
                "the loop device {} is attached to it (device {}:{})",
                l.device.display(),
                n.0,
                n.1
            ));
        }
    }
    None
}

/// Option names that take a device: external logs, realtime sections and journals, extra
/// devices (mkfs.xfs -l logdev= / -r rtdev=, mkfs.ext4 -J device=, the logdev=, rtdev=,
/// journal_path=, journal_dev= and device= mount options).
const DEVICE_KEYS: &[&str] = &[
    "logdev",
    "rtdev",
    "device",
    "journal_path",
    "journal_dev",
    "journal_device",
];

/// Why one word of a spec's mkfs=, mount= or option values may not be passed on, if it may not:
/// an option that takes a device, a path under /dev, anything that resolves to a block device
/// (absolute, relative to here, or a bare name under /dev), or an existing file that is not a
/// directory (mkfs.btrfs formats every file it is given as a device).
fn named_device(word: &str) -> Option<String> {
    let word = word.trim_matches(|c| c == '\'' || c == '"');
    if word.is_empty() || word.starts_with('-') {
        return None;
    }
    if DEVICE_KEYS.contains(&word) {
        return Some(format!("'{word}' takes a device"));
    }
    if word.starts_with("/dev/") {
        return Some(format!("it names the device {word}"));
    }
    let candidates = [
        Some(PathBuf::from(word)),
        (!word.contains('/')).then(|| Path::new("/dev").join(word)),
    ];
    for p in candidates.into_iter().flatten() {
        let Ok(m) = std::fs::metadata(&p) else {
            continue;
        };
        if m.file_type().is_block_device() {
            let (a, b) = split_dev(m.rdev());
            return Some(format!(
                "'{word}' resolves to the block device {} (device {a}:{b})",
                p.display()
            ));
        }
        if !m.is_dir() && p == Path::new(word) {
            return Some(format!(
                "'{word}' names the existing file {}, which mkfs could take for a device and overwrite",
                p.display()
            ));
        }
    }
    None
}

/// Refuses a target whose mkfs=, mount= or option values name a device or file besides the ones
/// fsbench makes for it (or the --device it checked): mkfs and mount would write to it with no
/// guard. Checked when a spec is parsed and again before a target is provisioned.
pub fn check_named_devices(spec: &crate::plan::TargetSpec) -> Result<(), String> {
    let sources = [
        ("mkfs=", spec.extra_mkfs.clone()),
        ("mount=", spec.extra_mount.clone()),
        (
            "its options",
            spec.options
                .iter()
                .filter_map(|o| o.value.clone())
                .collect(),
        ),
    ];
    for (what, words) in sources {
        for w in &words {
            for piece in w.split(['=', ',', ':']) {
                if let Some(why) = named_device(piece) {
                    return Err(format!(
                        "target '{}': {what} '{w}' is refused: {why}. fsbench formats and mounts only the devices it makes for a target (or the one --device names, after its guards); external logs, journals and extra devices are not supported: remove it",
                        spec.label
                    ));
                }
            }
        }
    }
    Ok(())
}

/// The imported pool (zfs-fuse or kernel) that uses one of these devices, from `zpool status`.
fn imported_pool_member(numbers: &[(u32, u32)]) -> Option<String> {
    let (out, _) = run_command(&argv(&["zpool", "status"])).ok()?;
    let mut pool = String::new();
    for line in out.lines() {
        let t = line.trim();
        if let Some(p) = t.strip_prefix("pool:") {
            pool = p.trim().to_string();
            continue;
        }
        let Some(word) = t.split_whitespace().next() else {
            continue;
        };
        let path = if word.starts_with('/') {
            word.to_string()
        } else {
            format!("/dev/{word}")
        };
        if dev_of_path(&path).is_some_and(|d| numbers.contains(&d)) {
            return Some(pool);
        }
    }
    None
}

/// What a device carries (filesystem, partition table, pool label), from `blkid -p`, which reads
/// the device itself rather than a cache.
pub fn signature(path: &Path) -> Result<Option<String>, GuardError> {
    let p = path.to_string_lossy().to_string();
    match run_command(&argv(&["blkid", "-p", "-o", "export", &p])) {
        Ok((out, _)) => {
            let mut kv = std::collections::BTreeMap::new();
            for line in out.lines() {
                if let Some((k, v)) = line.split_once('=') {
                    kv.insert(k.to_string(), v.to_string());
                }
            }
            let what = if let Some(t) = kv.get("TYPE") {
                let label = kv
                    .get("LABEL")
                    .map(|l| format!(" labelled '{l}'"))
                    .unwrap_or_default();
                if t == "zfs_member" {
                    format!("a ZFS pool label{label}")
                } else {
                    format!("a {t} filesystem signature{label}")
                }
            } else if let Some(t) = kv.get("PTTYPE") {
                format!("a {t} partition table")
            } else {
                "a signature blkid recognises".to_string()
            };
            Ok(Some(what))
        }
        // blkid -p exits 2 when it finds nothing.
        Err(super::exec::ExecError::Failed { code, .. }) if code == "2" => Ok(None),
        Err(e) => Err(GuardError::NotADevice {
            path: p,
            reason: format!("cannot probe it with blkid: {e}"),
        }),
    }
}

/// The whole check before formatting a device: refuse a busy device always, and a device that
/// holds data unless `wipe`.
pub fn check_device(path: &Path, wipe: bool) -> Result<(), GuardError> {
    let shown = path.display().to_string();
    if let Some(reason) = in_use(path)? {
        return Err(GuardError::InUse {
            path: shown,
            reason,
        });
    }
    if !wipe {
        if let Some(what) = signature(path)? {
            return Err(GuardError::HasData { path: shown, what });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_numbers_split_like_glibc() {
        // makedev(7, 0) = 0x700; makedev(259, 1) = 0x10300001 (major 259 has high bits).
        assert_eq!(split_dev(0x700), (7, 0));
        assert_eq!(split_dev(libc::makedev(259, 1)), (259, 1));
        assert_eq!(split_dev(libc::makedev(8, 300)), (8, 300));
    }

    fn spec(text: &str) -> crate::plan::TargetSpec {
        crate::plan::spec::parse_target(text, &super::super::schemas()).unwrap()
    }

    #[test]
    fn devices_and_files_named_in_mkfs_or_mount_are_refused_with_the_reason() {
        let refused = |text: &str| check_named_devices(&spec(text)).unwrap_err();
        let e = refused("btrfs:mkfs=/dev/loop7");
        assert!(e.contains("/dev/loop7") && e.contains("remove it"), "{e}");
        assert!(
            refused("xfs:mkfs='-l logdev=/dev/sdz,size=10m'").contains("'logdev' takes a device")
        );
        assert!(refused("xfs:mkfs='-r rtdev=/x'").contains("rtdev"));
        assert!(refused("ext4:mkfs='-J device=/dev/sdq'").contains("device"));
        assert!(refused("xfs:mount='noatime,logdev=/dev/sdz'").contains("mount="));
        assert!(refused("ext4:mount='journal_path=/dev/sdz'").contains("journal_path"));
        assert!(refused("btrfs:mount='device=/dev/sdz'").contains("device"));
        // An existing file: mkfs.btrfs formats every file it is given.
        let t = tempfile::tempdir().unwrap();
        let f = t.path().join("precious.img");
        std::fs::write(&f, b"data").unwrap();
        let e = refused(&format!("btrfs:mkfs={}", f.display()));
        assert!(e.contains("existing file"), "{e}");
        // A symbolic link to a block device resolves to it, when the host has one.
        if let Some(dev) = ["/dev/loop0", "/dev/sda", "/dev/vda"]
            .iter()
            .find(|d| std::fs::metadata(d).is_ok_and(|m| m.file_type().is_block_device()))
        {
            let l = t.path().join("innocent");
            std::os::unix::fs::symlink(dev, &l).unwrap();
            let e = refused(&format!("btrfs:mkfs={}", l.display()));
            assert!(e.contains("resolves to the block device"), "{e}");
            let bare = dev.trim_start_matches("/dev/");
            assert!(refused(&format!("btrfs:mkfs={bare}")).contains("block device"));
        }
        // What does not name a device or file passes.
        for ok in [
            "ext4:mkfs='-O ^metadata_csum -m 0'",
            "xfs:mkfs='-m crc=1 -l size=64m'",
            "xfs:mount='noatime,logbufs=8'",
            "btrfs:compress=zstd",
            "zfs:recordsize=4k",
        ] {
            assert!(check_named_devices(&spec(ok)).is_ok(), "{ok}");
        }
    }
}
