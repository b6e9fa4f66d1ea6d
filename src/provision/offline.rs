//! A provisioned target as a workload may handle it (`Handle`): its pool, device and loop images,
//! the space figures made current (a ZFS pool commits), and the target taken offline and brought
//! back (the integrity audit damages its images in between): unmount or `zpool export`, the
//! caller's work on the backing, then the block devices' caches flushed and the same mount (or
//! `zpool import`) again, so that what the filesystem reads next comes from the images. A handle
//! never tears the target down: the coordinator's `Mounted` does.

use std::path::PathBuf;
use std::sync::Arc;

use super::exec::{argv, Sys};
use super::faultdev::Faults;
use super::lifecycle::{Mounted, ProvisionError};
use super::registry::Resource;
use crate::plan::{TargetInfo, TargetSpec};

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

/// A provisioned target, as the workloads on it may handle it.
#[derive(Clone)]
pub struct Handle {
    sys: Sys,
    spec: TargetSpec,
    pub mountpoint: PathBuf,
    pub info: TargetInfo,
    resources: Vec<Resource>,
    /// The fault device's controls, for a target behind it (`faulty`).
    pub faults: Option<Arc<Faults>>,
}

impl std::fmt::Debug for Handle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Handle")
            .field("label", &self.info.label)
            .field("mountpoint", &self.mountpoint)
            .field("pool", &self.pool())
            .field("faulty", &self.faults.is_some())
            .finish()
    }
}

impl Mounted {
    /// What the workloads on this target may handle of it.
    pub fn handle(&self, spec: &TargetSpec) -> Handle {
        Handle {
            sys: self.sys.clone(),
            spec: spec.clone(),
            mountpoint: self.mountpoint.clone(),
            info: self.info.clone(),
            resources: self.state.resources.clone(),
            faults: self.fault.as_ref().map(|f| f.faults.clone()),
        }
    }
}

impl Handle {
    pub fn spec(&self) -> &TargetSpec {
        &self.spec
    }

    /// The command runner the target was made with (queries and commands on it are logged for
    /// the manifest).
    pub fn sys(&self) -> &Sys {
        &self.sys
    }

    /// The ZFS pool under this target, if it is one.
    pub fn pool(&self) -> Option<String> {
        self.resources.iter().find_map(|r| match r {
            Resource::Pool { name } => Some(name.clone()),
            _ => None,
        })
    }

    /// Makes the filesystem's space and inode figures current before a statvfs (a ZFS pool
    /// commits its transaction group); None when it needs nothing. Says what it ran.
    pub fn settle(&self) -> Option<Result<&'static str, String>> {
        let pool = self.pool()?;
        Some(
            super::zfs::settle(&pool, &self.mountpoint)
                .map_err(|e| format!("cannot commit pool {pool}: {e}")),
        )
    }

    /// The loop images fsbench made for this target (none for a `--device`, tmpfs or dir).
    pub fn backing(&self) -> Backing {
        let mut b = Backing::default();
        for r in &self.resources {
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
    pub fn offline<T>(&self, work: impl FnOnce(&Backing) -> T) -> Result<T, ProvisionError> {
        let b = self.backing();
        let mnt = self.mountpoint.to_string_lossy().into_owned();
        let pool = self.pool();
        match &pool {
            Some(p) => {
                self.sys.run(&argv(&["zpool", "export", p]))?;
            }
            // (Never lazily: `work` needs the filesystem really off its devices.)
            None => super::cleanup::unmount_retrying(&self.sys, &self.mountpoint)
                .map_err(ProvisionError::Failed)?,
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
                self.sys.run(&super::mount_argv(
                    &self.spec,
                    &dev,
                    &mnt,
                    self.info.size_bytes,
                ))?
            }
        };
        Ok(out)
    }
}
