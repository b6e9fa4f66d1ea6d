//! tracefs for the timer tick's tracepoint (`--profile`'s on-CPU samples). Where no tracefs is
//! mounted and fsbench runs as root, it is mounted at /sys/kernel/tracing for the run, as
//! libtracefs does when it finds none: a resource of a state of its own (label `tracefs`),
//! recorded before the mount is made and again with the mount's id once it exists; the
//! tracepoint's id is read at once (the events are opened by it, tracefs or not), and the mount
//! goes when the run ends. A SIGKILLed run's mount is unmounted by the next start (or `fsbench
//! cleanup`) only while the mount there is still the one it made. A lock in the state directory
//! makes runs that start together mount it once; a tracefs someone else mounted is left alone.

use std::path::Path;

use super::exec::{argv, Sys};
use super::registry::{self, Owner, Registry, Resource, TargetState};
use crate::profile::perf::{tick_id, TRACEFS};
use crate::sys::mounts;

/// tracefs mounted by this run; unmounted when dropped.
pub struct Mounted {
    sys: Sys,
    registry: Registry,
    state: TargetState,
}

impl Drop for Mounted {
    fn drop(&mut self) {
        if let Err(e) = super::cleanup::clean_state(&self.sys, Some(&self.registry), &self.state) {
            crate::out::eline!("fsbench: warning: tracefs: {e}");
        }
    }
}

/// Whether a tracefs is mounted where the tracepoint is looked for.
fn mounted() -> bool {
    TRACEFS
        .iter()
        .any(|p| mounts::mount_at(Path::new(p)).is_some_and(|m| m.fstype == "tracefs"))
}

/// tracefs where the tick's tracepoint is looked for, for the run: None when it is there
/// already (its tracepoint's id read now), when fsbench is not root (the probe says how to
/// enable it), or under --dry-run (the command is printed); Err when mounting it failed.
pub fn for_profiles(sys: &Sys) -> Result<Option<Mounted>, String> {
    if !crate::sys::is_root() || mounted() {
        let _ = tick_id();
        return Ok(None);
    }
    let path = Path::new(TRACEFS[0]);
    let mount = argv(&["mount", "-t", "tracefs", "nodev", &path.to_string_lossy()]);
    if sys.dry_run {
        sys.run(&mount).map_err(|e| e.to_string())?;
        return Ok(None);
    }
    let registry = Registry::open().map_err(|e| format!("fsbench's state directory: {e}"))?;
    let lock = std::fs::File::create(registry::state_dir().join("tracefs.lock"))
        .and_then(|f| crate::sys::lock_exclusive(&f).map(|_| f))
        .map_err(|e| format!("fsbench's tracefs lock: {e}"))?;
    // (Another run may have mounted it while this one waited.)
    if mounted() {
        let _ = tick_id();
        return Ok(None);
    }
    let owner = Owner::current();
    let mut state = TargetState {
        id: format!("tracefs-{}-{}", owner.pid, owner.start_ticks),
        label: "tracefs".into(),
        fs: "tracefs".into(),
        owner,
        persistent: false,
        keep_image: false,
        mountpoint: Some(path.to_path_buf()),
        resources: vec![Resource::HostMount {
            path: path.to_path_buf(),
            fstype: "tracefs".into(),
            id: None,
        }],
    };
    let save = |s: &TargetState| {
        registry
            .save(s)
            .map_err(|e| format!("cannot write fsbench state: {e}"))
    };
    save(&state)?;
    if let Err(e) = sys.run(&mount) {
        let _ = registry.remove(&state.id);
        return Err(e.to_string());
    }
    let id = mounts::mount_at(path)
        .filter(|m| m.fstype == "tracefs")
        .map(|m| m.id);
    state.resources = vec![Resource::HostMount {
        path: path.to_path_buf(),
        fstype: "tracefs".into(),
        id,
    }];
    save(&state)?;
    let _ = tick_id();
    drop(lock);
    Ok(Some(Mounted {
        sys: sys.clone(),
        registry,
        state,
    }))
}
