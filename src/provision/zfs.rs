//! ZFS: a pool on the backing device (`zpool create`), properties as data. Where the kernel has
//! no ZFS, fsbench uses zfs-fuse: it starts the one daemon of the machine only if none runs, shares
//! it, and stops it only if fsbench started it and no pool is left.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::exec::{argv, cmdline, ExecError, Sys};
use super::registry::{state_dir, Owner};
use super::{FsDef, Kind, MIB};
use crate::plan::spec::{Effect::*, FsSchema, OptKey, TargetSpec, ValueKind::*};

const ON_OFF: &[&str] = &["on", "off"];
const CACHE: &[&str] = &["all", "none", "metadata"];

const KEYS: &[OptKey] = &[
    OptKey {
        name: "recordsize",
        value: Choice(&[
            "512", "1k", "2k", "4k", "8k", "16k", "32k", "64k", "128k", "256k", "512k", "1m", "1M",
            "4K", "8K", "16K", "32K", "64K", "128K",
        ]),
        effect: ZfsProperty,
        help: "record size, the unit of copy-on-write and checksums",
    },
    OptKey {
        name: "compression",
        value: Choice(&[
            "on", "off", "lzjb", "gzip", "gzip-1", "gzip-2", "gzip-3", "gzip-4", "gzip-5",
            "gzip-6", "gzip-7", "gzip-8", "gzip-9", "zle", "lz4", "zstd",
        ]),
        effect: ZfsProperty,
        help: "compression (lz4 and zstd need kernel ZFS; zfs-fuse has lzjb, gzip, zle)",
    },
    OptKey {
        name: "primarycache",
        value: Choice(CACHE),
        effect: ZfsProperty,
        help: "what the ARC caches",
    },
    OptKey {
        name: "secondarycache",
        value: Choice(CACHE),
        effect: ZfsProperty,
        help: "what the L2ARC caches",
    },
    OptKey {
        name: "atime",
        value: Choice(ON_OFF),
        effect: ZfsProperty,
        help: "update access times",
    },
    OptKey {
        name: "sync",
        value: Choice(&["standard", "always", "disabled"]),
        effect: ZfsProperty,
        help: "synchronous write behaviour",
    },
    OptKey {
        name: "logbias",
        value: Choice(&["latency", "throughput"]),
        effect: ZfsProperty,
        help: "ZIL usage hint",
    },
    OptKey {
        name: "checksum",
        value: Choice(&["on", "off", "fletcher2", "fletcher4", "sha256"]),
        effect: ZfsProperty,
        help: "data checksum",
    },
    OptKey {
        name: "dedup",
        value: Choice(ON_OFF),
        effect: ZfsProperty,
        help: "deduplication",
    },
    OptKey {
        name: "copies",
        value: Choice(&["1", "2", "3"]),
        effect: ZfsProperty,
        help: "copies of each block",
    },
    OptKey {
        name: "mirror",
        value: Flag,
        effect: Layout,
        help: "the pool is a mirror of devices=N loop images (default 2)",
    },
    OptKey {
        name: "raidz",
        value: Flag,
        effect: Layout,
        help: "the pool is one raidz vdev of devices=N loop images (default 3)",
    },
    super::layout::DEVICES,
    OptKey {
        name: "zvol",
        value: Flag,
        effect: Layout,
        help: "a ZFS volume (block device) in the pool instead of a dataset: for raw block jobs (kernel ZFS; zfs-fuse has none)",
    },
    OptKey {
        name: "volblocksize",
        value: Choice(&["4k", "8k", "16k", "32k", "64k", "128k", "4K", "8K", "16K", "32K", "64K", "128K"]),
        effect: Layout,
        help: "a zvol's block size (zfs create -b)",
    },
    OptKey {
        name: "ashift",
        value: Int { min: 9, max: 16 },
        effect: ZpoolProperty,
        help: "vdev sector size as a power of two (zpool create -o ashift=)",
    },
];

pub const DEF: FsDef = FsDef {
    schema: FsSchema {
        name: "zfs",
        keys: KEYS,
        extra_mkfs: false,
        extra_mount: false,
        takes_path: false,
        vfs_mount: false,
    },
    kind: Kind::Zfs,
    snapshots: true,
    threads: crate::metrics::evidence::FsThreads {
        daemons: &["zfs-fuse"],
        kernel: &["z_", "txg_", "spa_", "arc_", "dp_sync", "zvol"],
        code: &[
            "zfs_", "zpl_", "zio_", "dmu_", "dbuf_", "arc_", "spa_", "vdev_", "zil_", "txg_",
        ],
    },
    room,
    cow: super::CopyOnWrite::Always,
    integrity: Some(super::Integrity {
        locate: super::Locate::Zdb,
        dir_blocks: None,
        checker: super::Checker::ZpoolScrub,
        errors: Some(super::ErrorCount::ZpoolCksum),
        kernel_prefix: "",
    }),
    axes: &[
        &[
            "recordsize=4k",
            "recordsize=16k",
            "recordsize=128k",
            "recordsize=1m",
        ],
        &["logbias=latency", "logbias=throughput"],
        &["", "primarycache=metadata"],
    ],
    summary: "a ZFS pool on a loop image or device (kernel ZFS, else zfs-fuse)",
    kernel_name: "zfs",
    tool: "zpool",
    version_args: &["upgrade", "-v"],
    min_size: 64 * MIB,
    mkfs_defaults: &[],
};

/// Which ZFS this host has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Backend {
    Kernel,
    Fuse,
}

/// The room table of this host's ZFS: zfs-fuse's where it serves the pools, kernel ZFS's (not
/// measured here, on the small side) otherwise.
fn room() -> Option<&'static super::room::Table> {
    Some(match backend() {
        Some(Backend::Fuse) => &super::room::ZFS_FUSE,
        _ => &super::room::ZFS_KERNEL,
    })
}

pub fn backend() -> Option<Backend> {
    let in_kernel =
        crate::sys::host::kernel_supports("zfs") || Path::new("/sys/module/zfs").exists();
    if in_kernel && super::exec::which("zpool").is_some() {
        return Some(Backend::Kernel);
    }
    if super::exec::which("zfs-fuse").is_some() && super::exec::which("zpool").is_some() {
        return Some(Backend::Fuse);
    }
    None
}

/// Why this spec cannot run on this backend, if it cannot.
pub fn unsupported(spec: &TargetSpec, backend: Backend) -> Option<String> {
    if backend != Backend::Fuse {
        return None;
    }
    let c = spec.option("compression")?.value.as_deref()?;
    matches!(c, "lz4" | "zstd").then(|| {
        format!(
            "compression={c} is not supported by zfs-fuse (pool version 23 has lzjb, gzip and zle); use a host with kernel ZFS, or another compression"
        )
    })
}

/// The user property every pool fsbench creates carries: the id of the target it was made for
/// (the pool's name is `fsbench-` and that id). Cleanup destroys no pool without it.
pub const OWNER_PROPERTY: &str = "fsbench:run";

/// `zpool create -m MOUNTPOINT [-o pool props] [-O dataset props] POOL DEVICE`.
pub fn create_argv(spec: &TargetSpec, pool: &str, device: &str, mountpoint: &str) -> Vec<String> {
    create_argv_on(spec, pool, &[device.to_string()], mountpoint)
}

/// The pool's own cache file, in fsbench's state directory: not the system's, so that no ZFS
/// imports the pool by itself at a later start (when its devices may be another run's); zdb and
/// `zpool import` are given it.
pub fn cache_path(pool: &str) -> PathBuf {
    state_dir().join("pools").join(format!("{pool}.cache"))
}

/// `zpool create ... POOL [mirror|raidz] DEVICE...`. The pool is fsbench's by a property
/// (`fsbench:run=ID`, ID the pool's name without `fsbench-`), and its cache file is its own
/// (`cache_path`).
pub fn create_argv_on(
    spec: &TargetSpec,
    pool: &str,
    devices: &[String],
    mountpoint: &str,
) -> Vec<String> {
    let id = pool.strip_prefix(super::NAME_PREFIX).unwrap_or(pool);
    let cache = format!("cachefile={}", cache_path(pool).display());
    let mut a = argv(&["zpool", "create", "-m", mountpoint, "-o", &cache]);
    a.push("-O".into());
    a.push(format!("{OWNER_PROPERTY}={id}"));
    for opt in &spec.options {
        let Some(key) = KEYS.iter().find(|k| k.name == opt.key) else {
            continue;
        };
        let flag = match key.effect {
            ZpoolProperty => "-o",
            Layout => continue,
            _ => "-O",
        };
        let mut value = opt.value.clone().unwrap_or_default();
        if key.name == "recordsize" {
            value = value.to_ascii_uppercase();
        }
        a.push(flag.to_string());
        a.push(format!("{}={value}", opt.key));
    }
    a.push(pool.to_string());
    if let Some(v) = super::layout::vdev(spec) {
        a.push(v.to_string());
    }
    a.extend(devices.iter().cloned());
    a
}

/// The volume of a `zvol` target: `zfs create -V SIZE [-b BLOCK] POOL/vol`, and its device.
pub fn zvol_argv(spec: &TargetSpec, pool: &str, size: u64) -> (Vec<String>, String) {
    let name = format!("{pool}/vol");
    let mut a = argv(&["zfs", "create", "-V", &size.to_string()]);
    if let Some(b) = spec.option("volblocksize").and_then(|o| o.value.as_deref()) {
        a.push("-b".into());
        a.push(b.to_ascii_uppercase());
    }
    a.push(name.clone());
    (a, format!("/dev/zvol/{name}"))
}

/// Reads back the dataset properties the spec set, as ZFS reports them.
pub fn properties(sys: &Sys, spec: &TargetSpec, pool: &str) -> Vec<(String, String)> {
    let props: Vec<&str> = spec
        .options
        .iter()
        .filter(|o| {
            KEYS.iter()
                .any(|k| k.name == o.key && matches!(k.effect, ZfsProperty))
        })
        .map(|o| o.key.as_str())
        .collect();
    if props.is_empty() || sys.dry_run {
        return Vec::new();
    }
    let Ok(out) = sys.query(&argv(&[
        "zfs",
        "get",
        "-H",
        "-o",
        "property,value",
        &props.join(","),
        pool,
    ])) else {
        return Vec::new();
    };
    out.lines()
        .filter_map(|l| l.split_once('\t'))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// The zfs-fuse daemon fsbench started, as recorded in its state directory.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct DaemonRecord {
    owner: Owner,
    started_by: u32,
}

fn daemon_record_path() -> PathBuf {
    state_dir().join("zfs-fuse.json")
}

/// Serialises starting and stopping the daemon between fsbench processes.
fn daemon_lock() -> std::io::Result<std::fs::File> {
    std::fs::create_dir_all(state_dir())?;
    let f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(state_dir().join("zfs-fuse.lock"))?;
    crate::sys::lock_exclusive(&f)?;
    Ok(f)
}

/// The pid of a running (not zombie) zfs-fuse, if one runs.
pub fn daemon_pid() -> Option<u32> {
    let dir = std::fs::read_dir("/proc").ok()?;
    for e in dir.flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
        if comm.trim() == "zfs-fuse" && Owner::of(pid).is_some_and(|o| o.alive()) {
            return Some(pid);
        }
    }
    None
}

fn zpool_answers() -> bool {
    super::exec::run_command(&argv(&["zpool", "list", "-H"])).is_ok()
}

/// Makes sure a ZFS is there to talk to: with zfs-fuse, starts the daemon if none runs.
pub fn ensure_daemon(sys: &Sys, backend: Backend) -> Result<(), String> {
    if backend == Backend::Kernel {
        return Ok(());
    }
    let _lock = daemon_lock().map_err(|e| format!("cannot lock the zfs-fuse state: {e}"))?;
    if daemon_pid().is_some() {
        return Ok(());
    }
    let log_path = state_dir().join("zfs-fuse.log");
    // No kstat mount: fsbench reads none, and a daemon without FUSE mounts of its own can be
    // stopped outright once its last pool is gone (release_daemon).
    let cmd = argv(&["zfs-fuse", "--no-daemon", "--no-kstat-mount"]);
    if sys.dry_run {
        crate::out::line(&format!(
            "would run: {} (in the background; stopped when no pool is left)",
            cmdline(&cmd)
        ));
        return Ok(());
    }
    let log =
        std::fs::File::create(&log_path).map_err(|e| format!("{}: {e}", log_path.display()))?;
    use std::os::unix::process::CommandExt;
    // Its own process group: a Ctrl-C at the terminal must not kill the daemon under mounted
    // pools before fsbench has destroyed them.
    let child = Command::new(&cmd[0])
        .args(&cmd[1..])
        .stdin(Stdio::null())
        .stdout(log.try_clone().map_err(|e| e.to_string())?)
        .stderr(log)
        .process_group(0)
        .spawn()
        .map_err(|e| format!("cannot start zfs-fuse: {e}"))?;
    let pid = child.id();
    sys.record(&cmd);
    // The daemon outlives this handle on purpose; it is reaped by whoever stops it or by init.
    std::mem::forget(child);
    let rec = DaemonRecord {
        owner: Owner::of(pid).unwrap_or(Owner {
            pid,
            start_ticks: 0,
        }),
        started_by: std::process::id(),
    };
    std::fs::write(
        daemon_record_path(),
        serde_json::to_vec(&rec).unwrap_or_default(),
    )
    .map_err(|e| format!("cannot record the zfs-fuse daemon: {e}"))?;
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        if zpool_answers() {
            crate::out::eline!(
                "fsbench: started zfs-fuse (pid {pid}); it will be stopped when no pool is left"
            );
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Err(format!(
        "zfs-fuse (pid {pid}) did not answer `zpool list` within 20 s; see {}",
        log_path.display()
    ))
}

/// Pools that exist now; an error when ZFS does not answer (then nothing can be said about a
/// pool: it may be gone, or only out of sight until the daemon runs again).
pub fn pools() -> Result<Vec<String>, String> {
    match super::exec::run_command(&argv(&["zpool", "list", "-H", "-o", "name"])) {
        Ok((out, _)) => Ok(out
            .lines()
            .map(|l| l.trim().to_string())
            .filter(|l| !l.is_empty())
            .collect()),
        Err(e) => Err(format!(
            "ZFS does not answer `zpool list` ({})",
            e.to_string().lines().last().unwrap_or("").trim()
        )),
    }
}

/// The owner property of a pool (`fsbench:run`), None when it has none (`-`) or ZFS cannot say.
pub fn owner_of(pool: &str) -> Option<String> {
    let (out, _) = super::exec::run_command(&argv(&[
        "zfs",
        "get",
        "-H",
        "-o",
        "value",
        OWNER_PROPERTY,
        pool,
    ]))
    .ok()?;
    let v = out.trim();
    (!v.is_empty() && v != "-").then(|| v.to_string())
}

/// Is a live process (a run, or a target `fsbench provision` left) using a pool, by its state?
/// A pool is recorded before `zpool create` runs, so this covers a pool being made.
fn pools_claimed() -> bool {
    let Ok(reg) = super::registry::Registry::open() else {
        return true;
    };
    reg.list().iter().any(|s| {
        (s.persistent || s.owner.alive())
            && s.resources
                .iter()
                .any(|r| matches!(r, super::registry::Resource::Pool { .. }))
    })
}

/// Stops the zfs-fuse daemon if fsbench started it, no pool at all is left, and no live fsbench
/// has recorded a pool (one may be about to create it). Returns a notice.
pub fn release_daemon(sys: &Sys) -> Option<String> {
    let path = daemon_record_path();
    if !path.exists() {
        return None;
    }
    let _lock = daemon_lock().ok()?;
    let rec: DaemonRecord = serde_json::from_slice(&std::fs::read(&path).ok()?).ok()?;
    if !rec.owner.alive() {
        let _ = std::fs::remove_file(&path);
        return None;
    }
    if !pools().is_ok_and(|p| p.is_empty()) || pools_claimed() {
        return None;
    }
    if sys.dry_run {
        return Some(format!(
            "would stop zfs-fuse (pid {}), which fsbench started",
            rec.owner.pid
        ));
    }
    // zfs-fuse sees a SIGTERM only when its FUSE listener's poll times out, and exits about 3 s
    // later (every ZFS target paid that). With no pool imported and no mount of its own
    // (--no-kstat-mount) it holds nothing to write, so it is killed outright. Recorded as the
    // command it is equivalent to, so that the manifest lists the daemon's end beside its start.
    crate::sys::send_signal(rec.owner.pid, libc::SIGKILL);
    sys.record(&argv(&["kill", "-KILL", &rec.owner.pid.to_string()]));
    let deadline = Instant::now() + Duration::from_secs(5);
    while rec.owner.alive() && Instant::now() < deadline {
        crate::sys::reap(rec.owner.pid);
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = std::fs::remove_file(&path);
    Some(format!(
        "stopped zfs-fuse (pid {}), which fsbench started",
        rec.owner.pid
    ))
}

/// Makes a pool commit what it holds in memory, so that statvfs counts it: ZFS updates its space
/// and inode figures only when a transaction group commits (zfs-fuse left a 12 MB write
/// uncounted for over a minute here). `zpool sync` where the tools have it (OpenZFS 0.7 and
/// later); otherwise a snapshot, created and destroyed at once, which commits a transaction
/// group in every ZFS version. Then waits, up to 2 s, until two statvfs readings of `dir` agree.
/// Returns what it ran, for the record.
pub fn settle(pool: &str, dir: &Path) -> Result<&'static str, ExecError> {
    let how = if super::exec::run_command(&argv(&["zpool", "sync", pool])).is_ok() {
        "zpool sync"
    } else {
        let snap = format!("{pool}@fsbench-settle");
        super::exec::run_command(&argv(&["zfs", "snapshot", &snap]))?;
        super::exec::run_command(&argv(&["zfs", "destroy", &snap]))?;
        "zfs snapshot + destroy"
    };
    let read = || {
        crate::sys::statvfs(dir)
            .ok()
            .map(|s| (s.blocks_free, s.inodes_free))
    };
    let deadline = Instant::now() + Duration::from_secs(2);
    let mut last = read();
    while Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
        let now = read();
        if now == last {
            break;
        }
        last = now;
    }
    Ok(how)
}

pub fn destroy_argv(pool: &str) -> Vec<String> {
    argv(&["zpool", "destroy", "-f", pool])
}

/// Destroys a pool if it exists. zfs-fuse can report a pool "busy" for a few seconds after heavy
/// metadata work (e.g. thousands of files just written): retry for up to about 20 s. A pool whose
/// absence ZFS cannot confirm (no answer) is an error: the caller keeps its record and devices.
pub fn destroy(sys: &Sys, pool: &str) -> Result<(), String> {
    if !sys.dry_run && !pools()?.iter().any(|p| p == pool) {
        return Ok(());
    }
    destroy_existing(sys, pool).map_err(|e| e.to_string())
}

fn destroy_existing(sys: &Sys, pool: &str) -> Result<(), ExecError> {
    let mut wait = Duration::from_millis(250);
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        match sys.run(&destroy_argv(pool)) {
            Ok(_) => return Ok(()),
            Err(e) if e.to_string().contains("busy") && Instant::now() < deadline => {
                let _ = sys.run(&argv(&["sync"]));
                std::thread::sleep(wait);
                wait = (wait * 2).min(Duration::from_secs(4));
            }
            Err(e) => return Err(e),
        }
    }
}
