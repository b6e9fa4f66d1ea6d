//! Snapshots of a provisioned target while a workload runs: btrfs read-only subvolume snapshots
//! (the workload's files live in a subvolume made for them) and ZFS dataset snapshots. Each
//! creation and deletion is one `btrfs` / `zfs` command, timed as a whole (so a figure includes
//! the command's start, about a millisecond here). The snapshots live inside the target: its
//! teardown (or the cleanup after a killed run) removes them with the filesystem or pool.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::exec::{argv, run_command, ExecError};

/// The subvolume a btrfs target's snapshotted workload works in, under the mount point.
pub const SUBVOLUME: &str = "fsbench-data";
/// Where the read-only snapshots of it go.
pub const SNAP_DIR: &str = "fsbench-snapshots";

#[derive(Debug, Clone)]
enum How {
    Btrfs { mount: PathBuf },
    Zfs { dataset: String, mount: PathBuf },
}

/// A target that can snapshot, bound to the directory its workload uses.
#[derive(Debug, Clone)]
pub struct Snapper {
    how: How,
    /// Names taken and not yet deleted, oldest first.
    live: Vec<String>,
}

/// Why a target cannot snapshot, named for the user; None when it can.
pub fn unsupported(fs: &str) -> Option<String> {
    match fs {
        "btrfs" | "zfs" => None,
        other => Some(format!(
            "snapshots= needs a filesystem that snapshots (btrfs or zfs); {other} cannot: drop snapshots= for it or compare btrfs and zfs targets only"
        )),
    }
}

fn fail(e: ExecError) -> String {
    e.to_string()
}

impl Snapper {
    /// Binds to a provisioned target's mount point. For btrfs this creates the subvolume the
    /// workload's files go in (a snapshot covers a subvolume, not a directory).
    pub fn open(fs: &str, mount: &Path, pool: Option<&str>) -> Result<Snapper, String> {
        if let Some(why) = unsupported(fs) {
            return Err(why);
        }
        let how = if fs == "zfs" {
            let dataset = pool
                .ok_or("snapshots=: this zfs target has no pool of fsbench's")?
                .to_string();
            How::Zfs {
                dataset,
                mount: mount.to_path_buf(),
            }
        } else {
            let sub = mount.join(SUBVOLUME);
            if !sub.exists() {
                run_command(&argv(&[
                    "btrfs",
                    "subvolume",
                    "create",
                    &sub.to_string_lossy(),
                ]))
                .map_err(fail)?;
            }
            std::fs::create_dir_all(mount.join(SNAP_DIR))
                .map_err(|e| format!("cannot create {}: {e}", mount.join(SNAP_DIR).display()))?;
            How::Btrfs {
                mount: mount.to_path_buf(),
            }
        };
        Ok(Snapper {
            how,
            live: Vec::new(),
        })
    }

    /// The directory the workload works in (inside what a snapshot covers).
    pub fn work_dir(&self) -> PathBuf {
        match &self.how {
            How::Btrfs { mount } => mount.join(SUBVOLUME),
            How::Zfs { mount, .. } => mount.clone(),
        }
    }

    fn create_argv(&self, name: &str) -> Vec<String> {
        match &self.how {
            How::Btrfs { mount } => argv(&[
                "btrfs",
                "subvolume",
                "snapshot",
                "-r",
                &mount.join(SUBVOLUME).to_string_lossy(),
                &mount.join(SNAP_DIR).join(name).to_string_lossy(),
            ]),
            How::Zfs { dataset, .. } => argv(&["zfs", "snapshot", &format!("{dataset}@{name}")]),
        }
    }

    fn delete_argv(&self, name: &str) -> Vec<String> {
        match &self.how {
            How::Btrfs { mount } => argv(&[
                "btrfs",
                "subvolume",
                "delete",
                &mount.join(SNAP_DIR).join(name).to_string_lossy(),
            ]),
            How::Zfs { dataset, .. } => argv(&["zfs", "destroy", &format!("{dataset}@{name}")]),
        }
    }

    /// The command that takes a snapshot, for the record.
    pub fn describe(&self) -> String {
        super::exec::cmdline(&self.create_argv("NAME"))
    }

    /// Takes a read-only snapshot; returns how long the command took.
    pub fn take(&mut self, name: &str) -> Result<Duration, String> {
        let t0 = Instant::now();
        run_command(&self.create_argv(name)).map_err(fail)?;
        self.live.push(name.to_string());
        Ok(t0.elapsed())
    }

    /// Deletes the oldest snapshot; returns how long the command took.
    pub fn delete_oldest(&mut self) -> Option<Result<Duration, String>> {
        if self.live.is_empty() {
            return None;
        }
        let name = self.live.remove(0);
        let t0 = Instant::now();
        Some(
            run_command(&self.delete_argv(&name))
                .map(|_| t0.elapsed())
                .map_err(fail),
        )
    }

    pub fn count(&self) -> usize {
        self.live.len()
    }

    /// ZFS's own count of the bytes only the snapshots hold, after a pool commit.
    fn zfs_used_by_snapshots(dataset: &str, mount: &Path) -> Option<u64> {
        let _ = super::zfs::settle(dataset, mount);
        let out = run_command(&argv(&[
            "zfs",
            "get",
            "-Hp",
            "-o",
            "value",
            "usedbysnapshots",
            dataset,
        ]))
        .ok()?;
        out.0.trim().parse().ok()
    }

    /// Deletes every snapshot left; returns the bytes only they held. ZFS reports it
    /// (`usedbysnapshots`, read first); btrfs without quotas does not, so there it is the space
    /// deleting them frees (statvfs before and after, waiting for the cleaner between).
    pub fn delete_all(&mut self) -> Result<Option<u64>, String> {
        let used = |d: &Path| {
            crate::sys::statvfs(d)
                .ok()
                .map(|s| (s.blocks - s.blocks_free) * s.block_size)
        };
        let space = match &self.how {
            How::Zfs { dataset, mount } => Self::zfs_used_by_snapshots(dataset, mount),
            How::Btrfs { mount } => {
                let m = mount.to_string_lossy();
                let _ = run_command(&argv(&["btrfs", "filesystem", "sync", &m]));
                used(mount)
            }
        };
        while let Some(r) = self.delete_oldest() {
            r?;
        }
        let How::Btrfs { mount } = &self.how else {
            return Ok(space);
        };
        // The deletions are committed first: that commit wakes btrfs's cleaner, which would
        // otherwise wait for the next periodic commit (30 s) before `subvolume sync` returns;
        // the last commit puts the freed space in statvfs.
        let m = mount.to_string_lossy();
        for step in [
            ["filesystem", "sync"],
            ["subvolume", "sync"],
            ["filesystem", "sync"],
        ] {
            let _ = run_command(&argv(&["btrfs", step[0], step[1], &m]));
        }
        Ok(space.zip(used(mount)).map(|(b, a)| b.saturating_sub(a)))
    }
}
