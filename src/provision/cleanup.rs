//! Teardown and leftover cleanup share one routine: undo a target's recorded resources in reverse.
//! Leftovers are found two ways: state files whose owner is dead (after a SIGKILL), and, for
//! anything whose state file is gone, by name: mounts and images inside a marked work directory,
//! loop devices backed by `fsbench-*.img` images there, and pools named `fsbench-*`. Resources
//! claimed by a live run or left by `fsbench provision` are never touched here.

use std::path::Path;
use std::time::Duration;

use super::exec::{argv, Sys};
use super::names::{is_own_image, is_own_mountpoint, pool_id, run_maker, run_of_path, run_of_pool};
use super::registry::{Owner, Registry, Resource, TargetState};
use super::{loopdev, zfs, NAME_PREFIX};
use crate::sys::mounts;

/// Unmounts a mount point, retrying while it is busy; a lazy unmount is the last resort.
fn unmount(sys: &Sys, path: &Path) -> Result<(), String> {
    if let Err(last) = unmount_retrying(sys, path) {
        crate::out::eline!(
            "fsbench: warning: {} stays busy ({last}); detaching it lazily",
            path.display()
        );
        sys.run(&argv(&["umount", "--lazy", &path.to_string_lossy()]))
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// Unmounts a mount point, retrying for about 5 s while it is busy (another process's moment in
/// it: a scan, a probe); the last error when it is still mounted then.
pub(super) fn unmount_retrying(sys: &Sys, path: &Path) -> Result<(), String> {
    if sys.dry_run {
        sys.run(&argv(&["umount", &path.to_string_lossy()]))
            .map_err(|e| e.to_string())?;
        return Ok(());
    }
    let mut last = String::new();
    for attempt in 0..10 {
        if mounts::mount_at(path).is_none() {
            return Ok(());
        }
        match sys.run(&argv(&["umount", &path.to_string_lossy()])) {
            Ok(_) => continue,
            Err(e) => last = e.to_string(),
        }
        std::thread::sleep(Duration::from_millis(100 * (attempt + 1)));
    }
    match mounts::mount_at(path) {
        Some(_) => Err(last),
        None => Ok(()),
    }
}

/// What cleanup does to a resource, for its notices.
#[derive(Debug, Clone, Copy)]
enum Act {
    Unmount,
    Detach,
    DestroyPool,
}

/// The notice of an act on `what`: what was done ("unmounted X"), or under --dry-run what would
/// be ("would unmount X"): a dry run changes nothing and says so.
fn notice(sys: &Sys, act: Act, what: impl std::fmt::Display) -> String {
    let (done, would) = match act {
        Act::Unmount => ("unmounted", "would unmount"),
        Act::Detach => ("detached", "would detach"),
        Act::DestroyPool => ("destroyed pool", "would destroy pool"),
    };
    format!("{} {what}", if sys.dry_run { would } else { done })
}

/// Unmounts a mount fsbench made at a place of the host's while the mount there is still that
/// one (its type and id); one it does not know as its own stays, said.
fn host_mount(
    sys: &Sys,
    path: &Path,
    fstype: &str,
    id: Option<u64>,
) -> Result<Option<String>, String> {
    match mounts::mount_at(path) {
        Some(m) if m.fstype == fstype && Some(m.id) == id => {
            unmount(sys, path).map(|_| Some(notice(sys, Act::Unmount, path.display())))
        }
        Some(m) if m.fstype == fstype && id.is_none() => Ok(Some(format!(
            "left {fstype} at {} alone: fsbench stopped before it knew that mount as its own (umount {} if nothing else uses it)",
            path.display(),
            path.display()
        ))),
        _ => Ok(None),
    }
}

/// What could not be removed; the state file stays so that a later `fsbench cleanup` retries.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{}", .0.join("; "))]
pub struct TeardownError(pub Vec<String>);

/// A multi-device btrfs stays in the kernel's device list after it is unmounted; forget its
/// members (ours, by name) before their loop devices are detached and reused.
fn forget_btrfs_members(sys: &Sys, state: &TargetState) {
    let loops: Vec<String> = state
        .resources
        .iter()
        .filter_map(|r| match r {
            Resource::Loop { device, .. } => Some(device.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect();
    if state.fs != "btrfs" || loops.len() < 2 || super::exec::which("btrfs").is_none() {
        return;
    }
    for d in loops {
        let _ = sys.run(&super::exec::argv(&[
            "btrfs", "device", "scan", "--forget", &d,
        ]));
    }
}

/// A recorded pool, gone for sure: destroyed now, or confirmed absent by a ZFS that answers (with
/// zfs-fuse, the daemon is started to ask it). A pool whose `fsbench:run` names another target
/// is not this state's: it is left alone. Err when ZFS cannot confirm either.
fn pool_gone(sys: &Sys, name: &str, id: &str) -> Result<Option<String>, String> {
    if sys.dry_run {
        return zfs::destroy(sys, name).map(|_| Some(notice(sys, Act::DestroyPool, name)));
    }
    if let Some(backend) = zfs::backend() {
        if zfs::pools().is_err() {
            zfs::ensure_daemon(sys, backend)?;
        }
    }
    let pools = zfs::pools().map_err(|e| format!("cannot confirm that pool {name} is gone: {e}; its devices are kept until `fsbench cleanup` can"))?;
    if !pools.contains(&name.to_string()) {
        return Ok(None);
    }
    match zfs::owner_of(name) {
        Some(owner) if owner != id => Ok(Some(format!(
            "left pool {name} alone: its {} is {owner}, not this target's",
            zfs::OWNER_PROPERTY
        ))),
        _ => zfs::destroy(sys, name).map(|_| Some(notice(sys, Act::DestroyPool, name))),
    }
}

/// Undoes what a state names, last first, then forgets the state. Returns notices; on failure the
/// state file stays, so that a later `fsbench cleanup` can try again. A pool that cannot be
/// confirmed gone keeps the loop devices and images under it (recorded before it): a pool a ZFS
/// imports again later must find its own devices, never another run's.
pub fn clean_state(
    sys: &Sys,
    registry: Option<&Registry>,
    state: &TargetState,
) -> Result<Vec<String>, TeardownError> {
    let mut errors = Vec::new();
    let mut notices = Vec::new();
    let mut had_pool = false;
    let mut hold_devices = false;
    for r in state.resources.iter().rev() {
        let result: Result<(), String> = match r {
            Resource::Mount { path } => {
                if sys.dry_run || mounts::mount_at(path).is_some() {
                    let r = unmount(sys, path)
                        .map(|_| notices.push(notice(sys, Act::Unmount, path.display())));
                    forget_btrfs_members(sys, state);
                    r
                } else {
                    Ok(())
                }
            }
            Resource::HostMount { path, fstype, id } => {
                host_mount(sys, path, fstype, *id).map(|n| notices.extend(n))
            }
            Resource::Pool { name } => {
                had_pool = true;
                let r = pool_gone(sys, name, &state.id).map(|n| notices.extend(n));
                hold_devices |= r.is_err();
                r
            }
            Resource::Loop { .. } | Resource::Image { .. } | Resource::Dir { .. }
                if hold_devices =>
            {
                Ok(())
            }
            Resource::Loop { device, image } => {
                let ours = loopdev::list()
                    .iter()
                    .any(|l| &l.device == device && &l.backing_file == image);
                if ours || sys.dry_run {
                    loopdev::detach(sys, device)
                        .map(|_| notices.push(notice(sys, Act::Detach, device.display())))
                        .map_err(|e| e.to_string())
                } else {
                    Ok(())
                }
            }
            Resource::Image { path } => {
                let mut res = Ok(());
                for l in loopdev::backed_by(path) {
                    if let Err(e) = loopdev::detach(sys, &l.device) {
                        res = Err(e.to_string());
                    } else {
                        notices.push(notice(sys, Act::Detach, l.device.display()));
                    }
                }
                if res.is_ok() && !state.keep_image && (path.exists() || sys.dry_run) {
                    if sys.dry_run {
                        crate::out::line(&format!("would delete: {}", path.display()));
                    } else {
                        res = std::fs::remove_file(path)
                            .map_err(|e| format!("{}: {e}", path.display()));
                    }
                } else if state.keep_image && path.exists() {
                    notices.push(format!("kept image {}", path.display()));
                }
                res
            }
            Resource::Dir { path } => {
                if !sys.dry_run {
                    let _ = std::fs::remove_dir(path);
                }
                Ok(())
            }
            Resource::Scratch { path } => {
                if sys.dry_run {
                    crate::out::line(&format!(
                        "would delete: {} and its contents",
                        path.display()
                    ));
                    Ok(())
                } else if path.is_dir() {
                    std::fs::remove_dir_all(path).map_err(|e| format!("{}: {e}", path.display()))
                } else if path.exists() {
                    // A pool's cache file.
                    std::fs::remove_file(path).map_err(|e| format!("{}: {e}", path.display()))
                } else {
                    Ok(())
                }
            }
        };
        if let Err(e) = result {
            errors.push(e);
        }
    }
    if !errors.is_empty() {
        return Err(TeardownError(errors));
    }
    if let (Some(reg), false) = (registry, sys.dry_run) {
        reg.remove(&state.id).map_err(|e| {
            TeardownError(vec![format!(
                "cannot forget the state of {}: {e}",
                state.id
            )])
        })?;
    }
    // After the state is gone: the daemon stays while any live state records a pool.
    if had_pool {
        if let Some(n) = zfs::release_daemon(sys) {
            notices.push(n);
        }
    }
    Ok(notices)
}

/// What cleanup found and did.
#[derive(Debug, Default, serde::Serialize)]
pub struct Report {
    /// One line per leftover found.
    pub found: Vec<String>,
    /// What was done (or would be, with --dry-run).
    pub actions: Vec<String>,
    pub errors: Vec<String>,
    /// Provisioned targets left alone (use `fsbench teardown`).
    pub provisioned_left: Vec<String>,
    /// Things with fsbench-like names that are not fsbench's, left alone, and why.
    pub left_alone: Vec<String>,
}

/// Which targets a cleanup pass takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Only leftovers of dead runs (and unrecorded fsbench-named resources).
    Leftovers,
    /// Leftovers and every target `fsbench provision` left mounted.
    AllProvisioned,
}

/// Finds and removes what fsbench owns and nobody alive claims.
pub fn cleanup(sys: &Sys, scope: Scope, only_mountpoint: Option<&Path>) -> Report {
    let mut rep = Report::default();
    let registry = match Registry::open() {
        Ok(r) => r,
        Err(e) => {
            rep.errors
                .push(format!("cannot open fsbench's state directory: {e}"));
            return rep;
        }
    };
    let states = registry.list();
    for s in &states {
        let mp = s.mountpoint.as_deref();
        if let Some(want) = only_mountpoint {
            if mp != Some(want) {
                continue;
            }
        }
        let take = if s.owner.alive() && !s.persistent {
            false
        } else if s.persistent {
            scope == Scope::AllProvisioned
        } else {
            true
        };
        let desc = format!(
            "{} target '{}' ({}){}",
            if s.persistent {
                "provisioned"
            } else {
                "leftover"
            },
            s.label,
            s.fs,
            mp.map(|p| format!(" on {}", p.display()))
                .unwrap_or_default()
        );
        if !take {
            if s.persistent {
                rep.provisioned_left.push(desc);
            }
            continue;
        }
        rep.found.push(desc);
        match clean_state(sys, Some(&registry), s) {
            Ok(n) => rep.actions.extend(n),
            Err(e) => rep.errors.push(format!("{}: {e}", s.label)),
        }
    }
    if only_mountpoint.is_some() {
        return rep;
    }
    scan_unrecorded(sys, &registry, &mut rep);
    if let Some(n) = zfs::release_daemon(sys) {
        rep.actions.push(n);
    }
    rep
}

/// Tears down, now, every target this process made and still holds (a rank that must end in the
/// middle of a phase, `Team::last_word`): what its states name, last first, as a teardown
/// does. Returns what was done and what failed (a state that failed stays for `fsbench
/// cleanup`).
pub fn release_own(sys: &Sys) -> Vec<String> {
    let Ok(registry) = Registry::open() else {
        return vec![
            "cannot open fsbench's state directory: `fsbench cleanup` removes the rest".into(),
        ];
    };
    let me = Owner::current();
    let mut said = Vec::new();
    for s in registry
        .list()
        .iter()
        .filter(|s| s.owner == me && !s.persistent)
    {
        match clean_state(sys, Some(&registry), s) {
            Ok(n) => said.extend(n),
            Err(e) => said.push(format!("{}: {e}", s.label)),
        }
    }
    said.extend(zfs::release_daemon(sys));
    said
}

/// The pid of the process that made run `run`, while it runs: a live process with the run id's
/// pid that started no later than the run (a reused pid is a younger process). Another fsbench
/// keeps its state elsewhere (its own FSBENCH_STATE_DIR): what it made is unrecorded here but
/// not a leftover.
fn live_maker(run: &str) -> Option<u32> {
    let (pid, stamp) = run_maker(run)?;
    let started = Owner::of(pid).filter(Owner::alive)?.started()?;
    // The boot time is whole seconds: two of slack.
    let started = crate::metrics::clock::compact(started - Duration::from_secs(2));
    (started.as_str() <= stamp).then_some(pid)
}

/// Leaves `what` alone when the run that made it still runs; says so.
fn made_by_a_live_run(run: Option<&str>, what: &dyn std::fmt::Display, rep: &mut Report) -> bool {
    let Some(pid) = run.and_then(live_maker) else {
        return false;
    };
    rep.left_alone.push(format!(
        "{what}: no state file here names it, but the run that made it is running (pid {pid}): \
         another fsbench with a state directory of its own (FSBENCH_STATE_DIR)?"
    ));
    true
}

/// The unrecorded pools of `scan_unrecorded`: destroyed only when fsbench's name and mark are on
/// them and the run that made them is gone.
fn unrecorded_pools(sys: &Sys, pools: Vec<String>, claimed: &[Resource], rep: &mut Report) {
    for pool in pools {
        let claimed_pool = claimed
            .iter()
            .any(|r| matches!(r, Resource::Pool { name } if *name == pool));
        if claimed_pool || !pool.starts_with(NAME_PREFIX) {
            continue;
        }
        let id = pool_id(&pool);
        let owner = zfs::owner_of(&pool);
        if id.is_none() || owner.as_deref() != id {
            rep.left_alone.push(format!(
                "pool {pool}: not marked as fsbench's ({}{}); destroy it yourself (zpool destroy {pool}) if it is a leftover",
                zfs::OWNER_PROPERTY,
                match owner {
                    Some(o) => format!(" is {o}"),
                    None => " is not set".into(),
                }
            ));
            continue;
        }
        if made_by_a_live_run(run_of_pool(&pool), &format_args!("pool {pool}"), rep) {
            continue;
        }
        rep.found.push(format!("unrecorded pool {pool}"));
        match zfs::destroy(sys, &pool) {
            Ok(()) => rep.actions.push(notice(sys, Act::DestroyPool, &pool)),
            Err(e) => rep.errors.push(e),
        }
    }
}

/// Resources of fsbench's that no state file names (a state directory lost or cleared), found by
/// names only fsbench generates: a pool named `fsbench-RUNID-N` that carries `fsbench:run=RUNID-N`;
/// a mount point `mnt-N-LABEL` or `fault-N` in a run directory `fsbench-RUNID` directly inside a
/// marked work directory; a loop device backed by an image of such a run directory. Anything else
/// (a user's pool named fsbench-something, a user's mount inside the work directory) stays.
fn scan_unrecorded(sys: &Sys, registry: &Registry, rep: &mut Report) {
    // What exists is read first, the claims after: a run records a resource before it creates
    // it, so anything seen here is claimed by the time the states are read. (The other order
    // took a run that started meanwhile for a leftover, and unmounted or detached under it.)
    let pools = zfs::pools().unwrap_or_default();
    let mount_list = mounts::mounts();
    let loops: Vec<(loopdev::LoopDev, Option<crate::sys::loopctl::Backing>)> = loopdev::list()
        .into_iter()
        .map(|l| {
            let b = crate::sys::loopctl::backing(&l.device).ok();
            (l, b)
        })
        .collect();
    let claims = || -> Vec<Resource> {
        registry
            .list()
            .into_iter()
            .flat_map(|s| s.resources)
            .collect()
    };
    // Every state still on file claims its resources: live runs, provisioned targets, and
    // leftovers the first pass reported (or could not remove).
    let claimed = claims();
    let claims_mount = |p: &Path| {
        claimed
            .iter()
            .any(|r| matches!(r, Resource::Mount { path } if path == p))
    };
    let claims_image = |claimed: &[Resource], p: &Path| {
        claimed
            .iter()
            .any(|r| matches!(r, Resource::Image { path } | Resource::Loop { image: path, .. } if path == p))
    };
    unrecorded_pools(sys, pools, &claimed, rep);
    for m in mount_list.into_iter().rev() {
        let what = format!("mount {}", m.mountpoint.display());
        if is_own_mountpoint(&m.mountpoint)
            && !claims_mount(&m.mountpoint)
            && !made_by_a_live_run(run_of_path(&m.mountpoint), &what, rep)
        {
            rep.found.push(format!(
                "unrecorded mount {} ({})",
                m.mountpoint.display(),
                m.fstype
            ));
            match unmount(sys, &m.mountpoint) {
                Ok(()) => rep
                    .actions
                    .push(notice(sys, Act::Unmount, m.mountpoint.display())),
                Err(e) => rep.errors.push(e),
            }
        }
    }
    for (l, backing) in loops {
        if !is_own_image(&l.backing_file)
            || claims_image(&claimed, &l.backing_file)
            || made_by_a_live_run(
                run_of_path(&l.backing_file),
                &format_args!("loop device {}", l.device.display()),
                rep,
            )
        {
            continue;
        }
        rep.found.push(format!(
            "unrecorded loop device {} backed by {}{}",
            l.device.display(),
            l.backing_file.display(),
            if l.deleted { " (deleted)" } else { "" }
        ));
        if sys.dry_run {
            if loopdev::detach(sys, &l.device).is_ok() {
                rep.actions
                    .push(notice(sys, Act::Detach, l.device.display()));
            }
            continue;
        }
        // Claims again, then the device's backing file checked on the descriptor that detaches
        // it: a device detached and attached again since the listing (another run's image now,
        // recorded before it was made) is left alone.
        let Some(backing) = backing else {
            continue;
        };
        if claims_image(&claims(), &l.backing_file) {
            continue;
        }
        match crate::sys::loopctl::detach_if_backed_by(&l.device, backing) {
            Ok(true) => rep
                .actions
                .push(notice(sys, Act::Detach, l.device.display())),
            Ok(false) => rep.left_alone.push(format!(
                "{}: another file backs it since it was listed",
                l.device.display()
            )),
            Err(e) if e.raw_os_error() == Some(libc::ENXIO) => {}
            Err(e) => rep
                .errors
                .push(format!("cannot detach {}: {e}", l.device.display())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_is_live_only_while_the_process_its_id_names_runs_since_before_it() {
        // This process made a run now; a run stamped before it started, or with a pid no
        // process has, was another's.
        let now = crate::metrics::clock::run_id();
        assert_eq!(live_maker(&now), Some(std::process::id()));
        let pid = std::process::id();
        assert_eq!(live_maker(&format!("20000101T000000-{pid}")), None);
        assert_eq!(live_maker("20991231T235959-0"), None);
        let mut rep = Report::default();
        assert!(made_by_a_live_run(Some(&now), &"mount /w/x", &mut rep));
        assert!(rep.left_alone[0].starts_with("mount /w/x: no state file here names it"));
        assert!(!made_by_a_live_run(None, &"mount /w/x", &mut rep));
    }
}
