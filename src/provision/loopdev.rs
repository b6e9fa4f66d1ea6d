//! Loop devices: attach an image with `losetup --find --show`, list them with their backing files
//! from sysfs, detach one by name. Never "detach all": the devices may be shared.

use std::path::{Path, PathBuf};

use super::exec::{argv, ExecError, Sys};

#[derive(Debug, Clone)]
pub struct LoopDev {
    pub device: PathBuf,
    /// The backing file as the kernel reports it, without a trailing " (deleted)".
    pub backing_file: PathBuf,
    pub deleted: bool,
}

/// Every configured loop device and its backing file.
pub fn list() -> Vec<LoopDev> {
    let mut out = Vec::new();
    let Ok(dir) = std::fs::read_dir("/sys/block") else {
        return out;
    };
    for e in dir.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.starts_with("loop") {
            continue;
        }
        let Ok(bf) = std::fs::read_to_string(e.path().join("loop/backing_file")) else {
            continue;
        };
        let bf = bf.trim_end_matches('\n');
        let (path, deleted) = match bf.strip_suffix(" (deleted)") {
            Some(p) => (p, true),
            None => (bf, false),
        };
        out.push(LoopDev {
            device: PathBuf::from(format!("/dev/{name}")),
            backing_file: PathBuf::from(path),
            deleted,
        });
    }
    out.sort_by(|a, b| a.device.cmp(&b.device));
    out
}

/// Loop devices backed by `image`.
pub fn backed_by(image: &Path) -> Vec<LoopDev> {
    list()
        .into_iter()
        .filter(|l| l.backing_file == image)
        .collect()
}

/// Attaches `image` to a free loop device and returns the device. The loop device does direct
/// I/O to the image where the host filesystem allows it, so that the image's pages are not cached
/// a second time in the host's page cache (reads after a cache drop then reach the disk).
pub fn attach(sys: &Sys, image: &Path) -> Result<PathBuf, ExecError> {
    let out = sys.run(&argv(&[
        "losetup",
        "--find",
        "--show",
        "--direct-io=on",
        &image.to_string_lossy(),
    ]))?;
    if sys.dry_run {
        return Ok(PathBuf::from("/dev/loopN"));
    }
    Ok(PathBuf::from(out.trim()))
}

/// Whether a loop device does direct I/O to its backing file (/sys/block/loopN/loop/dio).
pub fn direct_io(device: &Path) -> Option<bool> {
    let name = device.file_name()?.to_string_lossy().into_owned();
    let v = std::fs::read_to_string(format!("/sys/block/{name}/loop/dio")).ok()?;
    Some(v.trim() == "1")
}

/// Detaches one loop device, by name. A device something still holds open (udev probing after a
/// write, a filesystem daemon letting go) is only marked to detach on its last close: wait up to
/// 3 s for that, so that teardown ends with the device really gone. One found detached already
/// when losetup fails is not an error.
pub fn detach(sys: &Sys, device: &Path) -> Result<(), ExecError> {
    let backing = |d: &Path| {
        let name = d.file_name()?.to_string_lossy().into_owned();
        std::fs::read_to_string(format!("/sys/block/{name}/loop/backing_file")).ok()
    };
    let before = backing(device);
    if let Err(e) = sys.run(&argv(&["losetup", "--detach", &device.to_string_lossy()])) {
        // Detached since it was listed (autoclear at its last close, as after the fault
        // device's unmount): what was asked for holds.
        if sys.dry_run || backing(device).is_some() {
            return Err(e);
        }
    }
    if !sys.dry_run && before.is_some() {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(3);
        while backing(device) == before && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }
    Ok(())
}
