//! FIEMAP (ioctl FS_IOC_FIEMAP, linux/fiemap.h): the extents of a file, logical to physical.
//! Filesystems without it (ZFS, FUSE) answer EOPNOTSUPP, which callers report as such.

use std::io;
use std::os::fd::AsRawFd;

/// _IOWR('f', 11, struct fiemap): 0xC020660B.
const FS_IOC_FIEMAP: u64 = 0xC020_660B;
/// Sync the file before mapping it (delayed allocation has no blocks yet).
const FIEMAP_FLAG_SYNC: u32 = 0x1;
const FIEMAP_EXTENT_LAST: u32 = 0x1;
/// The extent is compressed/encoded (btrfs): its length on disk differs.
pub const FIEMAP_EXTENT_ENCODED: u32 = 0x8;
/// The extent is shared with another file or snapshot (reflink, CoW).
pub const FIEMAP_EXTENT_SHARED: u32 = 0x2000;
const BATCH: usize = 256;

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct RawExtent {
    logical: u64,
    physical: u64,
    length: u64,
    reserved64: [u64; 2],
    flags: u32,
    reserved: [u32; 3],
}

#[repr(C)]
struct Request {
    start: u64,
    length: u64,
    flags: u32,
    mapped_extents: u32,
    extent_count: u32,
    reserved: u32,
    extents: [RawExtent; BATCH],
}

/// One extent as the filesystem maps it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Extent {
    pub logical: u64,
    pub physical: u64,
    pub length: u64,
    pub flags: u32,
}

/// Every extent of `file`, in logical order (the file is synced first).
pub fn extents(file: &std::fs::File) -> io::Result<Vec<Extent>> {
    let mut out = Vec::new();
    let mut start = 0u64;
    loop {
        let mut req = Box::new(Request {
            start,
            length: u64::MAX - start,
            flags: FIEMAP_FLAG_SYNC,
            mapped_extents: 0,
            extent_count: BATCH as u32,
            reserved: 0,
            extents: [RawExtent::default(); BATCH],
        });
        // SAFETY: `req` is a valid struct fiemap followed by `extent_count` extents, as the
        // ioctl expects; it lives until the call returns.
        let rc = unsafe {
            libc::ioctl(
                file.as_raw_fd(),
                FS_IOC_FIEMAP as _,
                &mut *req as *mut Request,
            )
        };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        let n = (req.mapped_extents as usize).min(BATCH);
        if n == 0 {
            return Ok(out);
        }
        let mut last = false;
        for e in &req.extents[..n] {
            out.push(Extent {
                logical: e.logical,
                physical: e.physical,
                length: e.length,
                flags: e.flags,
            });
            last |= e.flags & FIEMAP_EXTENT_LAST != 0;
        }
        let end = req.extents[n - 1].logical + req.extents[n - 1].length;
        if last || end <= start {
            return Ok(out);
        }
        start = end;
    }
}
