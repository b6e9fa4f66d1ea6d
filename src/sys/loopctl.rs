//! Loop devices by ioctl(2) on an open descriptor (loop(4)): which file backs a device, by device
//! number and inode, and detaching a device only while that is still the file behind it.

use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::io::AsRawFd;
use std::path::Path;

const LOOP_CLR_FD: libc::c_ulong = 0x4C01;
const LOOP_GET_STATUS64: libc::c_ulong = 0x4C05;

/// struct loop_info64 (linux/loop.h).
#[repr(C)]
struct LoopInfo64 {
    lo_device: u64,
    lo_inode: u64,
    lo_rdevice: u64,
    lo_offset: u64,
    lo_sizelimit: u64,
    lo_number: u32,
    lo_encrypt_type: u32,
    lo_encrypt_key_size: u32,
    lo_flags: u32,
    lo_file_name: [u8; 64],
    lo_crypt_name: [u8; 64],
    lo_encrypt_key: [u8; 32],
    lo_init: [u64; 2],
}

/// The file behind a loop device: the device number of the filesystem it lives on and its inode
/// (st_dev and st_ino of the backing file, as the kernel holds them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backing {
    pub dev: u64,
    pub ino: u64,
}

fn status(file: &std::fs::File) -> io::Result<Backing> {
    info(file).map(|i| Backing {
        dev: i.lo_device,
        ino: i.lo_inode,
    })
}

/// The device number of the file behind a loop device (its st_rdev: the disk, when a loop device
/// is attached to a block device; 0 for a regular file).
pub fn backing_rdev(device: &Path) -> io::Result<u64> {
    info(&open(device)?).map(|i| i.lo_rdevice)
}

fn info(file: &std::fs::File) -> io::Result<LoopInfo64> {
    let mut info = std::mem::MaybeUninit::<LoopInfo64>::zeroed();
    // SAFETY: LOOP_GET_STATUS64 writes one struct loop_info64 into `info`, which is writable
    // memory of that layout; the descriptor is valid for the lifetime of `file` (loop(4)).
    let rc = unsafe { libc::ioctl(file.as_raw_fd(), LOOP_GET_STATUS64 as _, info.as_mut_ptr()) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the ioctl returned 0, so the kernel filled the struct.
    Ok(unsafe { info.assume_init() })
}

fn open(device: &Path) -> io::Result<std::fs::File> {
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_CLOEXEC | libc::O_NOFOLLOW)
        .open(device)
}

/// The file behind a configured loop device (ENXIO when none is).
pub fn backing(device: &Path) -> io::Result<Backing> {
    status(&open(device)?)
}

/// Detaches `device` if, checked on the same open descriptor just before, `expect` is still the
/// file behind it. Returns false (and leaves the device alone) when another file backs it now.
/// The kernel detaches at once, or at the last close when the device is still open elsewhere.
pub fn detach_if_backed_by(device: &Path, expect: Backing) -> io::Result<bool> {
    let f = open(device)?;
    if status(&f)? != expect {
        return Ok(false);
    }
    // SAFETY: LOOP_CLR_FD takes no argument; the descriptor is valid while `f` lives (loop(4)).
    let rc = unsafe { libc::ioctl(f.as_raw_fd(), LOOP_CLR_FD as _, 0) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(true)
}
