//! A provisioned target taken offline and brought back (the integrity audit damages its images in
//! between): unmount or `zpool export`, the caller's work on the backing, then the block devices'
//! caches flushed and the same mount (or `zpool import`) again, so that what the filesystem reads
//! next comes from the images.

use std::path::PathBuf;

use super::exec::argv;
use super::lifecycle::{Mounted, ProvisionError};
use super::registry::Resource;
use crate::plan::TargetSpec;

/// What lies under a provisioned target: its loop devices and their images, in member order.
#[derive(Debug, Clone, Default)]
pub struct Backing {
    pub devices: Vec<PathBuf>,
    pub images: Vec<PathBuf>,
}

impl Backing {
    /// The member index of a device path as a tool names it (`/dev/loop3`).
    pub fn member(&self, device: &str) -> Option<usize> {
        self.devices.iter().position(|d| d.as_os_str() == device)
    }
}

impl Mounted {
    /// The loop images fsbench made for this target (none for a `--device`, tmpfs or dir).
    pub fn backing(&self) -> Backing {
        let mut b = Backing::default();
        for r in &self.state.resources {
            if let Resource::Loop { device, image } = r {
                b.devices.push(device.clone());
                b.images.push(image.clone());
            }
        }
        b
    }

    /// The filesystem's own device (the first member), for tools that read it offline.
    pub fn device(&self) -> Option<String> {
        self.info.device.clone()
    }

    /// Runs `work` while the filesystem is offline, then brings it back where it was. An error
    /// bringing it back (a filesystem that no longer mounts) is returned with `work`'s result
    /// lost; teardown still removes everything.
    pub fn offline<T>(
        &self,
        spec: &TargetSpec,
        work: impl FnOnce(&Backing) -> T,
    ) -> Result<T, ProvisionError> {
        let b = self.backing();
        let mnt = self.mountpoint.to_string_lossy().into_owned();
        let pool = self.pool();
        match &pool {
            Some(p) => self.sys.run(&argv(&["zpool", "export", p]))?,
            None => self.sys.run(&argv(&["umount", &mnt]))?,
        };
        let out = work(&b);
        for d in &b.devices {
            let _ = self
                .sys
                .run(&argv(&["blockdev", "--flushbufs", &d.to_string_lossy()]));
        }
        crate::sys::host::sync_and_drop_caches();
        match &pool {
            Some(p) => {
                let cache = format!("cachefile={}", super::zfs::cache_path(p).display());
                self.sys
                    .run(&argv(&["zpool", "import", "-d", "/dev", "-o", &cache, p]))?
            }
            None => {
                let dev = self.device().ok_or_else(|| {
                    ProvisionError::Failed(format!("{} has no device to mount", self.info.label))
                })?;
                self.sys
                    .run(&super::mount_argv(spec, &dev, &mnt, self.info.size_bytes))?
            }
        };
        Ok(out)
    }
}
