//! What this host can test, and why not where it cannot: the preflight of every run and the
//! body of `fsbench doctor`.

use std::path::Path;

use serde::Serialize;

use super::exec::{run_command, which};
use super::{zfs, FsDef, Kind, FILESYSTEMS};

#[derive(Debug, Clone, Serialize)]
pub struct Check {
    pub name: String,
    pub ok: bool,
    pub detail: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct FsStatus {
    pub fs: String,
    pub available: bool,
    pub kernel: String,
    pub tool: Option<String>,
    pub version: Option<String>,
    /// Why not, when not available.
    pub reason: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Doctor {
    pub fsbench_version: String,
    pub kernel: String,
    pub host: Vec<Check>,
    pub filesystems: Vec<FsStatus>,
}

/// The tool's version line, e.g. "mkfs.xfs version 6.1.0".
pub fn tool_version(def: &FsDef) -> Option<String> {
    if def.tool.is_empty() {
        return None;
    }
    which(def.tool)?;
    if def.kind == Kind::Zfs {
        return Some(match zfs::backend()? {
            zfs::Backend::Fuse => "zfs-fuse (pool version 23)".to_string(),
            zfs::Backend::Kernel => std::fs::read_to_string("/sys/module/zfs/version")
                .map(|v| format!("kernel zfs {}", v.trim()))
                .unwrap_or_else(|_| "kernel zfs".into()),
        });
    }
    let mut argv = vec![def.tool.to_string()];
    argv.extend(def.version_args.iter().map(|s| s.to_string()));
    let (out, err) = match run_command(&argv) {
        Ok(o) => o,
        Err(super::exec::ExecError::Failed { stderr, .. }) => (String::new(), stderr),
        Err(_) => return None,
    };
    out.lines()
        .chain(err.lines())
        .map(str::trim)
        .find(|l| !l.is_empty() && l.chars().any(|c| c.is_ascii_digit()))
        .map(str::to_string)
}

pub fn fs_status(def: &FsDef) -> FsStatus {
    let name = def.schema.name.to_string();
    let tool = (!def.tool.is_empty()).then(|| def.tool.to_string());
    let version = tool_version(def);
    let (available, kernel, reason) = match def.kind {
        Kind::Dir => (true, "any mounted directory".to_string(), None),
        Kind::Raw => (true, "a loop image or --device".to_string(), None),
        Kind::Zfs => match zfs::backend() {
            Some(zfs::Backend::Kernel) => (true, "zfs kernel module".to_string(), None),
            Some(zfs::Backend::Fuse) => {
                let running = zfs::daemon_pid()
                    .map(|p| format!("running, pid {p}"))
                    .unwrap_or_else(|| "started on demand".into());
                if Path::new("/dev/fuse").exists() {
                    (true, format!("zfs-fuse ({running}); no lz4/zstd"), None)
                } else {
                    (false, "zfs-fuse".into(), Some("no /dev/fuse".to_string()))
                }
            }
            None => (
                false,
                "none".into(),
                Some("no zfs kernel module and no zfs-fuse: apt-get install zfs-fuse".into()),
            ),
        },
        Kind::Mkfs | Kind::Tmpfs => {
            let k = crate::sys::host::kernel_supports(def.kernel_name);
            let kernel = if k {
                "in /proc/filesystems"
            } else {
                "not in /proc/filesystems"
            }
            .to_string();
            if !k {
                (
                    false,
                    kernel,
                    Some(format!(
                        "{} is not supported by this kernel",
                        def.schema.name
                    )),
                )
            } else if !def.tool.is_empty() && which(def.tool).is_none() {
                (
                    false,
                    kernel,
                    Some(format!(
                        "{} missing: apt-get install {}",
                        def.tool,
                        super::exec::package_of(def.tool)
                    )),
                )
            } else {
                (true, kernel, None)
            }
        }
    };
    FsStatus {
        fs: name,
        available,
        kernel,
        tool,
        version,
        reason,
    }
}

fn free_loop_devices() -> (usize, usize) {
    let mut total = 0;
    let mut free = 0;
    if let Ok(dir) = std::fs::read_dir("/sys/block") {
        for e in dir.flatten() {
            if e.file_name().to_string_lossy().starts_with("loop") {
                total += 1;
                if !e.path().join("loop/backing_file").exists() {
                    free += 1;
                }
            }
        }
    }
    (total, free)
}

pub use crate::sys::host::kernel_release;

pub fn doctor() -> Doctor {
    let mut host = Vec::new();
    let root = crate::sys::is_root();
    host.push(Check {
        name: "root".into(),
        ok: root,
        detail: if root {
            "running as root".into()
        } else {
            "not root: provisioning needs root (run with sudo)".into()
        },
    });
    let (total, free) = free_loop_devices();
    let ctl = Path::new("/dev/loop-control").exists();
    host.push(Check {
        name: "loop devices".into(),
        ok: ctl && (free > 0 || total == 0),
        detail: format!(
            "{free} free of {total}; /dev/loop-control {}",
            if ctl {
                "present"
            } else {
                "missing: loop images cannot be used"
            }
        ),
    });
    let uring = crate::sys::io_uring_available();
    host.push(Check {
        name: "io_uring".into(),
        ok: uring.is_ok(),
        detail: match uring {
            Ok(()) => "io_uring_setup works".into(),
            Err(e) => format!("io_uring_setup failed: {e}"),
        },
    });
    let drop_ok = std::fs::OpenOptions::new()
        .write(true)
        .open("/proc/sys/vm/drop_caches")
        .is_ok();
    host.push(Check {
        name: "drop caches".into(),
        ok: drop_ok,
        detail: if drop_ok {
            "/proc/sys/vm/drop_caches writable".into()
        } else {
            "cannot write /proc/sys/vm/drop_caches: reads may come from the page cache".into()
        },
    });
    host.push(Check {
        name: "blkid / wipefs".into(),
        ok: which("blkid").is_some() && which("wipefs").is_some(),
        detail: "device signature checks (util-linux)".into(),
    });
    let mpi = which("mpirun").and_then(|_| {
        run_command(&["mpirun".to_string(), "--version".to_string()])
            .ok()
            .and_then(|(o, _)| o.lines().next().map(str::to_string))
    });
    let built = if cfg!(feature = "mpi") {
        "this fsbench has MPI (mpirun -np N fsbench compare dir:/shared ...)"
    } else {
        "this fsbench was built without MPI (cargo build --release --features mpi)"
    };
    host.push(Check {
        name: "MPI".into(),
        ok: mpi.is_some() && cfg!(feature = "mpi"),
        detail: format!(
            "{}; {built}",
            mpi.unwrap_or_else(|| "mpirun not found (multi-node runs need openmpi-bin)".into())
        ),
    });
    Doctor {
        fsbench_version: env!("CARGO_PKG_VERSION").to_string(),
        kernel: kernel_release(),
        host,
        filesystems: FILESYSTEMS.iter().map(|d| fs_status(d)).collect(),
    }
}
