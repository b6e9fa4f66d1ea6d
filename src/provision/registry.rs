//! What fsbench owns. Before it creates anything (an image, a mount, a pool, a directory) it writes
//! that intent to a state file of the target, named after the owning process (pid and start time).
//! Cleanup touches only what a state file names and whose owner is dead (or what the user asks to
//! tear down), so concurrent runs and tests never touch each other's targets.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

/// Where state files live: `$FSBENCH_STATE_DIR`; else /run/fsbench for root, and for another user
/// (who can test only `dir:` targets) `$XDG_RUNTIME_DIR/fsbench` or `~/.local/state/fsbench`.
pub fn state_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("FSBENCH_STATE_DIR") {
        return PathBuf::from(d);
    }
    if !crate::sys::is_root() {
        if let Some(x) = std::env::var_os("XDG_RUNTIME_DIR") {
            return PathBuf::from(x).join("fsbench");
        }
        if let Some(h) = std::env::var_os("HOME").filter(|h| Path::new(h).is_dir()) {
            return PathBuf::from(h).join(".local/state/fsbench");
        }
    }
    PathBuf::from("/run/fsbench")
}

/// A process, named so that a reused pid is not mistaken for it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Owner {
    pub pid: u32,
    /// Start time in clock ticks since boot (field 22 of /proc/PID/stat).
    pub start_ticks: u64,
}

/// Field 22 (starttime) and field 3 (state) of /proc/PID/stat.
fn proc_stat(pid: u32) -> Option<(char, u64)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, t) = crate::metrics::procfs::parse_task_stat(&text)?;
    Some((t.state, t.start_ticks))
}

impl Owner {
    pub fn current() -> Owner {
        let pid = std::process::id();
        Owner {
            pid,
            start_ticks: proc_stat(pid).map(|s| s.1).unwrap_or(0),
        }
    }

    pub fn of(pid: u32) -> Option<Owner> {
        proc_stat(pid).map(|(_, start_ticks)| Owner { pid, start_ticks })
    }

    /// When the process started: the machine's boot time plus its start ticks.
    pub fn started(&self) -> Option<SystemTime> {
        use crate::metrics::procfs;
        let boot = procfs::machine_cpu()?.boot_time;
        let since_boot = self.start_ticks as f64 / procfs::TICKS_PER_SEC;
        (boot > 0)
            .then(|| UNIX_EPOCH + Duration::from_secs(boot) + Duration::from_secs_f64(since_boot))
    }

    /// The same process is still running (not a zombie, not a new process with the same pid).
    pub fn alive(&self) -> bool {
        matches!(proc_stat(self.pid), Some((state, start)) if state != 'Z' && start == self.start_ticks)
    }
}

/// One thing fsbench made, in the order it made them; teardown goes in reverse.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Resource {
    /// A directory fsbench created (mount point, run directory): removed if empty.
    Dir { path: PathBuf },
    /// A scratch directory inside a user's directory (dir: targets), removed with its contents;
    /// or a file of fsbench's (a pool's cache file), removed.
    Scratch { path: PathBuf },
    /// A sparse loop image; any loop device backed by it is detached at teardown.
    Image { path: PathBuf },
    /// A loop device fsbench attached to one of its images.
    Loop { device: PathBuf, image: PathBuf },
    /// A mount fsbench made.
    Mount { path: PathBuf },
    /// A mount fsbench made at a place of the host's for the run (tracefs at
    /// /sys/kernel/tracing): undone only while the mount there is still that one, of that type
    /// and id (the id is recorded once the mount exists; without it the mount is left alone).
    HostMount {
        path: PathBuf,
        fstype: String,
        id: Option<u64>,
    },
    /// A ZFS pool fsbench created.
    Pool { name: String },
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TargetState {
    pub id: String,
    pub label: String,
    pub fs: String,
    pub owner: Owner,
    /// Left mounted by `fsbench provision` for a person to use: only `teardown` removes it.
    pub persistent: bool,
    /// Keep the loop image at teardown (`--keep`).
    pub keep_image: bool,
    pub mountpoint: Option<PathBuf>,
    pub resources: Vec<Resource>,
}

#[derive(Debug, Clone)]
pub struct Registry {
    dir: PathBuf,
}

impl Registry {
    pub fn open() -> std::io::Result<Registry> {
        let dir = state_dir().join("targets");
        std::fs::create_dir_all(&dir)?;
        Ok(Registry { dir })
    }

    pub fn path_of(&self, id: &str) -> PathBuf {
        self.dir.join(format!("{id}.json"))
    }

    /// Writes the state durably (write, fsync, rename, fsync the directory) before anything it
    /// names is created.
    pub fn save(&self, state: &TargetState) -> std::io::Result<()> {
        let path = self.path_of(&state.id);
        let tmp = path.with_extension("json.tmp");
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(&serde_json::to_vec_pretty(state).map_err(std::io::Error::other)?)?;
        f.sync_all()?;
        std::fs::rename(&tmp, &path)?;
        std::fs::File::open(&self.dir)?.sync_all()
    }

    pub fn remove(&self, id: &str) -> std::io::Result<()> {
        match std::fs::remove_file(self.path_of(id)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }

    /// Every target state on this machine. Unreadable files are reported, not deleted.
    pub fn list(&self) -> Vec<TargetState> {
        let mut out = Vec::new();
        let Ok(dir) = std::fs::read_dir(&self.dir) else {
            return out;
        };
        for e in dir.flatten() {
            let p = e.path();
            if p.extension().and_then(|s| s.to_str()) != Some("json") {
                continue;
            }
            match std::fs::read(&p).map(|b| serde_json::from_slice::<TargetState>(&b)) {
                Ok(Ok(s)) => out.push(s),
                _ => crate::out::eline!(
                    "fsbench: warning: cannot read state file {}; leaving it alone",
                    p.display()
                ),
            }
        }
        out.sort_by(|a, b| a.id.cmp(&b.id));
        out
    }
}
