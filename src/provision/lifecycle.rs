//! Provisioning one target: check, record intent, create backing, mkfs / zpool create / mount,
//! read back what the kernel really did. Teardown is the same code as leftover cleanup.

use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use super::exec::{argv, ExecError, Sys};
use super::registry::{self, Owner, Registry, Resource, TargetState};
use super::{cleanup, loopdev, probe, safety, zfs, Kind, NAME_PREFIX};
use crate::plan::TargetSpec;
use crate::sys::mounts;

/// What a provisioning request needs besides the spec.
#[derive(Debug, Clone)]
pub struct Request<'a> {
    pub workdir: &'a Path,
    pub run_id: &'a str,
    pub index: usize,
    /// Loop image size (or tmpfs size) unless the spec sets its own.
    pub size: u64,
    pub device: Option<&'a Path>,
    pub wipe: bool,
    pub keep_image: bool,
    /// Leave it for a person (`fsbench provision`): only `teardown` removes it.
    pub persistent: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum ProvisionError {
    /// This host cannot provide the filesystem: the target is skipped with this reason.
    #[error("{0}")]
    Unsupported(String),
    /// A guard or a bad request: nothing was changed.
    #[error("{0}")]
    Refused(String),
    /// Something failed while creating it; whatever was made has been torn down.
    #[error("{0}")]
    Failed(String),
    /// A stop request (a signal) came while provisioning; what was made has been torn down.
    #[error(transparent)]
    Stopped(#[from] crate::stop::StopReason),
}

impl From<ExecError> for ProvisionError {
    fn from(e: ExecError) -> Self {
        ProvisionError::Failed(e.to_string())
    }
}

pub use crate::plan::provisioned::TargetInfo;

/// A provisioned target. Teardown runs when it is dropped, if not before.
pub struct Mounted {
    pub info: TargetInfo,
    /// The fault device under the target's loop device (`faulty` targets); it is stopped after
    /// teardown has detached the loop device (the field drops after `Drop::drop` runs).
    pub fault: Option<super::faultdev::FaultDevice>,
    pub mountpoint: PathBuf,
    pub(super) state: TargetState,
    registry: Option<Registry>,
    pub(super) sys: Sys,
    done: bool,
}

impl Mounted {
    /// Unmounts, destroys the pool, detaches the loop device, deletes the image (unless kept).
    pub fn teardown(mut self) -> Result<Vec<String>, cleanup::TeardownError> {
        self.done = true;
        self.teardown_inner()
    }

    fn teardown_inner(&mut self) -> Result<Vec<String>, cleanup::TeardownError> {
        cleanup::clean_state(&self.sys, self.registry.as_ref(), &self.state)
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        if !self.done && !self.state.persistent {
            self.done = true;
            if let Err(e) = self.teardown_inner() {
                crate::out::eline!("fsbench: teardown of {}: {e}", self.info.label);
            }
        }
    }
}

/// Records a resource in the target's state file before it is created.
struct Intent<'a> {
    sys: &'a Sys,
    registry: Option<&'a Registry>,
    state: TargetState,
    fault: Option<super::faultdev::FaultDevice>,
}

impl Intent<'_> {
    fn record(&mut self, r: Resource) -> Result<(), ProvisionError> {
        self.state.resources.push(r);
        match self.registry {
            Some(reg) if !self.sys.dry_run => reg
                .save(&self.state)
                .map_err(|e| ProvisionError::Failed(format!("cannot write fsbench state: {e}"))),
            _ => Ok(()),
        }
    }

    /// A directory of ours, made afresh (a plain mkdir: nothing already at that name is used,
    /// a planted symlink neither). `run_dir`: the run directory, which this process's later
    /// targets reuse while it exists.
    fn mkdir(&mut self, path: &Path, run_dir: bool) -> Result<(), ProvisionError> {
        let mut ours = RUN_DIRS.lock().unwrap_or_else(|p| p.into_inner());
        if run_dir && ours.iter().any(|d| d == path) && path.is_dir() {
            return Ok(());
        }
        self.record(Resource::Dir {
            path: path.to_path_buf(),
        })?;
        if !self.sys.dry_run {
            super::workdir::mkdir_fresh(path).map_err(|e| {
                ProvisionError::Failed(match e.kind() {
                    std::io::ErrorKind::AlreadyExists => format!(
                        "{} already exists, and fsbench did not make it in this run: it never reuses a directory it finds there (remove it, or choose another --workdir)",
                        path.display()
                    ),
                    _ => format!("cannot create {}: {e}", path.display()),
                })
            })?;
            if run_dir {
                ours.push(path.to_path_buf());
            }
        }
        Ok(())
    }
}

/// Run directories this process made: the only ones it reuses (for its next target).
static RUN_DIRS: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

fn sanitize(label: &str) -> String {
    label
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(40)
        .collect()
}

/// Why the host cannot provide this target, if it cannot (checked before anything is changed).
pub fn availability(spec: &TargetSpec) -> Result<(), ProvisionError> {
    let def = super::find(&spec.fs).expect("parsed spec");
    match def.kind {
        Kind::Dir | Kind::Raw => Ok(()),
        Kind::Zfs => {
            let Some(backend) = zfs::backend() else {
                return Err(ProvisionError::Unsupported(
                    "ZFS is not available: no zfs kernel module and no zfs-fuse; install zfs-fuse (apt-get install zfs-fuse) or zfsutils-linux with the module".into(),
                ));
            };
            if let Some(why) = zfs::unsupported(spec, backend) {
                return Err(ProvisionError::Unsupported(why));
            }
            if backend == zfs::Backend::Fuse && !Path::new("/dev/fuse").exists() {
                return Err(ProvisionError::Unsupported(
                    "zfs-fuse needs /dev/fuse, which this host lacks".into(),
                ));
            }
            Ok(())
        }
        Kind::Mkfs | Kind::Tmpfs => {
            if !crate::sys::host::kernel_supports(def.kernel_name) {
                return Err(ProvisionError::Unsupported(format!(
                    "{} is not supported by this kernel (not in /proc/filesystems, and modules cannot be loaded)",
                    def.schema.name
                )));
            }
            if !def.tool.is_empty() && super::exec::which(def.tool).is_none() {
                return Err(ProvisionError::Unsupported(format!(
                    "{} is not installed; install it with `apt-get install {}`",
                    def.tool,
                    super::exec::package_of(def.tool)
                )));
            }
            Ok(())
        }
    }
}

/// Creates one target and mounts it.
pub fn provision(sys: &Sys, spec: &TargetSpec, req: &Request) -> Result<Mounted, ProvisionError> {
    let def = super::find(&spec.fs).expect("parsed spec");
    availability(spec)?;
    let size = spec.size.unwrap_or(req.size);
    if let Some(why) = super::faultdev::refuse(spec, req.device.is_some(), req.persistent) {
        return Err(ProvisionError::Refused(why));
    }
    // Again here: a resumed study's plan comes from its manifest, not from the parser.
    safety::check_named_devices(spec).map_err(ProvisionError::Refused)?;
    if req.device.is_none() || def.kind == Kind::Tmpfs {
        super::check_size(spec, size).map_err(|e| ProvisionError::Refused(e.0))?;
    }
    if let Some(dev) = req.device {
        if matches!(def.kind, Kind::Mkfs | Kind::Zfs | Kind::Raw) {
            safety::check_device(dev, req.wipe)
                .map_err(|e| ProvisionError::Refused(e.to_string()))?;
        }
    }
    if let (Kind::Dir, Some(p)) = (def.kind, &spec.path) {
        check_dir(&spec.label, Path::new(p))?;
    }
    // A `dir:` target works in a scratch directory inside the user's: no work directory. The
    // work directory is checked (owned by root, writable by no one else, nor anything above it)
    // and used by its resolved path from here on.
    let workdir;
    let mut req = req.clone();
    if !sys.dry_run && def.kind != Kind::Dir {
        workdir = super::workdir::secure(req.workdir)
            .map_err(|e| ProvisionError::Refused(e.to_string()))?;
        req.workdir = &workdir;
    } else if def.kind != Kind::Dir {
        super::workdir::refuse_system(req.workdir)
            .map_err(|e| ProvisionError::Refused(e.to_string()))?;
    }
    let req = &req;
    let registry = if sys.dry_run {
        None
    } else {
        Some(Registry::open().map_err(|e| {
            ProvisionError::Refused(format!(
                "cannot open fsbench's state directory {}: {e}",
                registry::state_dir().display()
            ))
        })?)
    };
    let id = format!("{}-{}", req.run_id, req.index);
    let mut intent = Intent {
        sys,
        registry: registry.as_ref(),
        state: TargetState {
            id: id.clone(),
            label: spec.label.clone(),
            fs: spec.fs.clone(),
            owner: Owner::current(),
            persistent: false,
            keep_image: req.keep_image,
            mountpoint: None,
            resources: Vec::new(),
        },
        fault: None,
    };
    let mut info = TargetInfo {
        id: id.clone(),
        label: spec.label.clone(),
        fs: spec.fs.clone(),
        spec: spec.spec.clone(),
        size_bytes: size,
        tool_version: probe::tool_version(def),
        requested_mount_options: super::mount_options(spec),
        ..Default::default()
    };
    let result = build(sys, spec, req, size, &mut intent, &mut info);
    let state = intent.state;
    let fault = intent.fault;
    match result {
        Ok(mountpoint) => {
            if let (Some(f), Some(plan)) = (&fault, &spec.fault) {
                // Armed now: what mkfs and mount wrote is not spent from the budget.
                if let Some(n) = plan.fail_writes_after {
                    f.faults.set_write_budget(n);
                }
            }
            let mut mounted = Mounted {
                info,
                fault,
                mountpoint,
                state,
                registry,
                sys: sys.clone(),
                done: sys.dry_run,
            };
            if req.persistent && !sys.dry_run {
                mounted.state.persistent = true;
                if let Some(reg) = &mounted.registry {
                    reg.save(&mounted.state).map_err(|e| {
                        ProvisionError::Failed(format!("cannot write fsbench state: {e}"))
                    })?;
                }
            }
            mounted.info.commands = sys.take_log();
            Ok(mounted)
        }
        Err(e) => {
            if let Err(t) = cleanup::clean_state(sys, registry.as_ref(), &state) {
                crate::out::eline!(
                    "fsbench: cleaning up after the failed provisioning of {}: {t}",
                    spec.label
                );
            }
            drop(fault);
            Err(e)
        }
    }
}

fn interrupted() -> Result<(), ProvisionError> {
    match crate::stop::requested() {
        Some(why) => Err(ProvisionError::Stopped(why)),
        None => Ok(()),
    }
}

/// A `dir:` target's directory exists and is not the kernel's.
fn check_dir(label: &str, p: &Path) -> Result<(), ProvisionError> {
    if !p.is_dir() {
        return Err(ProvisionError::Refused(format!(
            "target '{label}': {} is not an existing directory; mount it first, or name another",
            p.display()
        )));
    }
    if let Some(why) = crate::sys::outfile::kernel_dir(p) {
        return Err(ProvisionError::Refused(format!(
            "target '{label}': {why}, the kernel's: fsbench makes no files there; name a directory on a data filesystem"
        )));
    }
    Ok(())
}

/// A `dir:` target: a scratch directory of ours inside the user's directory.
fn dir_target(
    sys: &Sys,
    spec: &TargetSpec,
    intent: &mut Intent,
    info: &mut TargetInfo,
) -> Result<PathBuf, ProvisionError> {
    let user_dir = PathBuf::from(spec.path.as_deref().unwrap_or("/"));
    let scratch = user_dir.join(format!("{NAME_PREFIX}{}", intent.state.id));
    intent.record(Resource::Scratch {
        path: scratch.clone(),
    })?;
    if sys.dry_run {
        crate::out::line(&format!("would create: {}", scratch.display()));
    } else {
        std::fs::create_dir(&scratch).map_err(|e| {
            ProvisionError::Failed(format!("cannot create {}: {e}", scratch.display()))
        })?;
    }
    info.backing = format!("existing directory {}", user_dir.display());
    info.mountpoint = scratch.to_string_lossy().into_owned();
    if let Some(m) = mounts::containing(&user_dir) {
        info.mount_options = m.all_options();
        info.fs = format!("dir ({})", m.fstype);
    }
    Ok(scratch)
}

/// Sparse loop images of ours (one per device the target spans), attached; returns the loop
/// devices.
fn loop_images(
    sys: &Sys,
    spec: &TargetSpec,
    req: &Request,
    run_dir: &Path,
    size: u64,
    intent: &mut Intent,
    info: &mut TargetInfo,
) -> Result<Vec<PathBuf>, ProvisionError> {
    let n = super::layout::members(spec);
    let mut devices = Vec::new();
    let mut backings = Vec::new();
    for k in 0..n {
        interrupted()?;
        let (dev, backing) = loop_image(sys, spec, req, run_dir, size, k, intent)?;
        devices.push(dev);
        backings.push(backing);
    }
    info.backing = match n {
        1 => backings.remove(0),
        _ => format!("{n} devices: {}", backings.join("; ")),
    };
    Ok(devices)
}

/// A sparse loop image of ours (member `k` of the target's devices), attached; returns the loop
/// device and the line that describes it.
fn loop_image(
    sys: &Sys,
    spec: &TargetSpec,
    req: &Request,
    run_dir: &Path,
    size: u64,
    k: usize,
    intent: &mut Intent,
) -> Result<(PathBuf, String), ProvisionError> {
    let image = run_dir.join(match k {
        0 => format!("{NAME_PREFIX}{}.img", req.index),
        k => format!("{NAME_PREFIX}{}-{k}.img", req.index),
    });
    intent.record(Resource::Image {
        path: image.clone(),
    })?;
    if sys.dry_run {
        crate::out::line(&format!(
            "would create: sparse image {} of {}",
            image.display(),
            crate::plan::units::format_bytes(size)
        ));
    } else {
        let f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&image)
            .and_then(|f| f.set_len(size).map(|_| f));
        f.map_err(|e| {
            ProvisionError::Failed(format!("cannot create image {}: {e}", image.display()))
        })?;
    }
    let disk = match (&spec.fault, k) {
        (Some(_), 0) => fault_disk(sys, &image, run_dir, req.index, intent)?,
        _ => image.clone(),
    };
    let dev = loopdev::attach(sys, &disk)?;
    intent.record(Resource::Loop {
        device: dev.clone(),
        image: disk.clone(),
    })?;
    if !sys.dry_run {
        // Belt and braces: the device losetup handed us must be ours and idle.
        safety::check_device(&dev, false).map_err(|e| ProvisionError::Failed(e.to_string()))?;
    }
    let backing = format!(
        "loop image {} ({}, sparse){} on {}{}",
        image.display(),
        crate::plan::units::format_bytes(size),
        match &spec.fault {
            Some(f) if k == 0 => super::faultdev::describe(f, &disk),
            _ => String::new(),
        },
        dev.display(),
        match loopdev::direct_io(&dev) {
            Some(true) => ", loop direct I/O on",
            Some(false) => ", loop direct I/O off: the host page cache also caches the image",
            None => "",
        }
    );
    Ok((dev, backing))
}

/// fsbench's fault device serving `image` (a FUSE mount of ours beside it, and its control
/// directory, both recorded before they exist); returns the file to attach the loop device to.
fn fault_disk(
    sys: &Sys,
    image: &Path,
    run_dir: &Path,
    index: usize,
    intent: &mut Intent,
) -> Result<PathBuf, ProvisionError> {
    let mnt = run_dir.join(format!("fault-{index}"));
    let ctl = run_dir.join(format!("fault-{index}.ctl"));
    intent.mkdir(&mnt, false)?;
    intent.record(Resource::Scratch { path: ctl.clone() })?;
    intent.record(Resource::Mount { path: mnt.clone() })?;
    if sys.dry_run {
        crate::out::line(&format!(
            "would serve: {} through fsbench's fault device at {}",
            image.display(),
            mnt.display()
        ));
        return Ok(mnt.join(super::faultdev::DISK));
    }
    let dev = super::faultdev::FaultDevice::start(image, &mnt, &ctl).map_err(|e| {
        ProvisionError::Failed(format!(
            "cannot start fsbench's fault device on {}: {e}",
            mnt.display()
        ))
    })?;
    let disk = dev.disk.clone();
    intent.fault = Some(dev);
    Ok(disk)
}

fn build(
    sys: &Sys,
    spec: &TargetSpec,
    req: &Request,
    size: u64,
    intent: &mut Intent,
    info: &mut TargetInfo,
) -> Result<PathBuf, ProvisionError> {
    let def = super::find(&spec.fs).expect("parsed spec");
    let run_dir = req.workdir.join(format!("{NAME_PREFIX}{}", req.run_id));
    let mnt = run_dir.join(format!("mnt-{}-{}", req.index, sanitize(&spec.label)));
    let mnt_s = mnt.to_string_lossy().to_string();
    if def.kind == Kind::Dir {
        return dir_target(sys, spec, intent, info);
    }
    intent.mkdir(&run_dir, true)?;
    if def.kind != Kind::Raw {
        intent.mkdir(&mnt, false)?;
        intent.state.mountpoint = Some(mnt.clone());
    }
    if def.kind == Kind::Tmpfs {
        intent.record(Resource::Mount { path: mnt.clone() })?;
        let source = format!("{NAME_PREFIX}{}", intent.state.id);
        sys.run(&super::mount_argv(spec, &source, &mnt_s, size))?;
        info.backing = format!(
            "memory (tmpfs, size {})",
            crate::plan::units::format_bytes(size)
        );
        return finish(sys, spec, info, mnt, None);
    }
    interrupted()?;
    // The block devices: the user's (already checked) or sparse loop images of ours.
    let n = super::layout::members(spec);
    let devices: Vec<PathBuf> = match req.device {
        Some(_) if n > 1 => {
            return Err(ProvisionError::Refused(format!(
                "target '{}' spans {n} devices and --device gives one: multi-device targets run on loop images fsbench makes (drop --device)",
                spec.label
            )))
        }
        Some(dev) => {
            if req.wipe {
                sys.run(&argv(&["wipefs", "--all", &dev.to_string_lossy()]))?;
            }
            info.backing = format!("block device {}", dev.display());
            vec![dev.to_path_buf()]
        }
        None => loop_images(sys, spec, req, &run_dir, size, intent, info)?,
    };
    let device = devices[0].clone();
    let devs: Vec<String> = devices
        .iter()
        .map(|d| d.to_string_lossy().into_owned())
        .collect();
    info.device = Some(device.to_string_lossy().into_owned());
    let dev_s = device.to_string_lossy().to_string();
    if def.kind == Kind::Raw {
        info.mountpoint = String::new();
        return Ok(device);
    }
    interrupted()?;
    if def.kind == Kind::Zfs {
        let backend = zfs::backend().expect("checked by availability");
        // The pool is on record before the daemon is asked for: a cleanup running meanwhile
        // then sees a live run that needs the daemon, and leaves it running.
        let pool = format!("{NAME_PREFIX}{}", intent.state.id);
        let cache = zfs::cache_path(&pool);
        intent.record(Resource::Scratch {
            path: cache.clone(),
        })?;
        intent.record(Resource::Pool { name: pool.clone() })?;
        zfs::ensure_daemon(sys, backend).map_err(ProvisionError::Failed)?;
        if let (Some(dir), false) = (cache.parent(), sys.dry_run) {
            std::fs::create_dir_all(dir).map_err(|e| {
                ProvisionError::Failed(format!("cannot create {}: {e}", dir.display()))
            })?;
        }
        intent.record(Resource::Mount { path: mnt.clone() })?;
        sys.run(&zfs::create_argv_on(spec, &pool, &devs, &mnt_s))?;
        info.zfs_properties = zfs::properties(sys, spec, &pool);
        if super::layout::zvol(spec) {
            return zvol(sys, spec, &pool, size, backend, info);
        }
        return finish(sys, spec, info, mnt, Some(&pool));
    }
    sys.run(&super::mkfs_argv_on(spec, &devs))?;
    interrupted()?;
    intent.record(Resource::Mount { path: mnt.clone() })?;
    sys.run(&super::mount_argv(spec, &dev_s, &mnt_s, size))?;
    finish(sys, spec, info, mnt, None)
}

/// A ZFS volume in the new pool: its block device is the target (raw block jobs). zfs-fuse has
/// no volumes: what `zfs create -V` answers there makes the target a skip, with that reason.
fn zvol(
    sys: &Sys,
    spec: &TargetSpec,
    pool: &str,
    size: u64,
    backend: zfs::Backend,
    info: &mut TargetInfo,
) -> Result<PathBuf, ProvisionError> {
    // Most of one device's size, in whole MiB: the pool keeps some for itself.
    let vol = (size / 10 * 7) / super::MIB * super::MIB;
    let (a, dev) = zfs::zvol_argv(spec, pool, vol);
    if let Err(e) = sys.run(&a) {
        return Err(match backend {
            zfs::Backend::Fuse => ProvisionError::Unsupported(format!(
                "zvol: this host's ZFS is zfs-fuse, which has no volumes (`zfs create -V` failed: {})",
                e.to_string().lines().last().unwrap_or("").trim()
            )),
            zfs::Backend::Kernel => ProvisionError::from(e),
        });
    }
    let dev = PathBuf::from(dev);
    let t0 = std::time::Instant::now();
    while !sys.dry_run && !dev.exists() && t0.elapsed() < std::time::Duration::from_secs(10) {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    if !sys.dry_run && !dev.exists() {
        return Err(ProvisionError::Failed(format!(
            "zfs created the volume but {} did not appear within 10 s",
            dev.display()
        )));
    }
    info.backing = format!(
        "zvol {} ({}) in pool {pool} on {}",
        dev.display(),
        crate::plan::units::format_bytes(vol),
        info.backing
    );
    info.device = Some(dev.to_string_lossy().into_owned());
    info.mountpoint = String::new();
    Ok(dev)
}

/// Reads back what the kernel mounted and which requested options it did not keep.
fn finish(
    sys: &Sys,
    spec: &TargetSpec,
    info: &mut TargetInfo,
    mnt: PathBuf,
    pool: Option<&str>,
) -> Result<PathBuf, ProvisionError> {
    info.mountpoint = mnt.to_string_lossy().into_owned();
    if sys.dry_run {
        return Ok(mnt);
    }
    let Some(m) = mounts::mount_at(&mnt) else {
        return Err(ProvisionError::Failed(format!(
            "{} reported success but nothing is mounted on {}",
            if pool.is_some() {
                "zpool create"
            } else {
                "mount"
            },
            mnt.display()
        )));
    };
    info.mount_options = m.all_options();
    info.options_not_in_effect = info
        .requested_mount_options
        .iter()
        .filter(|o| !option_in_effect(o, &info.mount_options))
        .cloned()
        .collect();
    for (k, v) in &info.zfs_properties {
        if let Some(opt) = spec.option(k) {
            let want = opt.value.as_deref().unwrap_or("").to_ascii_lowercase();
            if v.to_ascii_lowercase() != want {
                info.options_not_in_effect
                    .push(format!("{k}={want} (zfs reports {v})"));
            }
        }
    }
    Ok(mnt)
}

/// Is a requested mount option visible in the mount's options? `compress=zstd` matches
/// `compress=zstd:3`; `barrier=0` matches `nobarrier`.
pub fn option_in_effect(want: &str, have: &[String]) -> bool {
    have.iter().any(|h| {
        h == want
            || h.starts_with(&format!("{want}:"))
            || (want == "barrier=0" && h == "nobarrier")
            || (want.starts_with("size=") && h.starts_with("size="))
    })
}
