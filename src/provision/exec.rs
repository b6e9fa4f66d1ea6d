//! Runs system commands (mkfs, mount, zpool, losetup), or only prints them under `--dry-run`, and
//! keeps a log of every command as it was actually run, for the study manifest.

use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Instant;

pub use crate::plan::provisioned::CommandRecord;

#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    #[error("'{tool}' is not installed (needed to run: {cmdline}); install it, e.g. `apt-get install {package}`")]
    Missing {
        tool: String,
        cmdline: String,
        package: String,
    },
    #[error("command failed (exit {code}): {cmdline}\n{stderr}")]
    Failed {
        cmdline: String,
        code: String,
        stderr: String,
    },
}

/// Runs commands for the provisioning code, or prints them in dry-run mode.
#[derive(Clone, Default)]
pub struct Sys {
    pub dry_run: bool,
    log: Arc<Mutex<Vec<CommandRecord>>>,
}

/// Shell-quotes argv for display, so that a printed command can be pasted back into a shell.
pub fn cmdline(argv: &[String]) -> String {
    argv.iter()
        .map(|a| {
            if !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,^+@%".contains(c))
            {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The Debian package that carries a tool, for error messages.
pub fn package_of(tool: &str) -> &'static str {
    match tool {
        "mkfs.xfs" | "xfs_info" | "xfs_db" | "xfs_repair" => "xfsprogs",
        "mkfs.btrfs" | "btrfs" | "btrfs-map-logical" => "btrfs-progs",
        "mkfs.f2fs" | "fsck.f2fs" => "f2fs-tools",
        "zpool" | "zfs" | "zfs-fuse" | "zdb" => {
            "zfs-fuse (or zfsutils-linux with the kernel module)"
        }
        "mkfs.ext4" | "e2fsck" | "debugfs" | "dumpe2fs" => "e2fsprogs",
        "mpirun" => "openmpi-bin",
        _ => "util-linux",
    }
}

impl Sys {
    pub fn new(dry_run: bool) -> Sys {
        Sys {
            dry_run,
            log: Arc::default(),
        }
    }

    /// Runs a command that changes the system. In dry-run mode it is printed and not run.
    pub fn run(&self, argv: &[String]) -> Result<String, ExecError> {
        if self.dry_run {
            crate::out::line(&format!("would run: {}", cmdline(argv)));
            return Ok(String::new());
        }
        self.run_logged(argv)
    }

    /// Runs a command that only reads the system (blkid, zpool list): also in dry-run mode.
    pub fn query(&self, argv: &[String]) -> Result<String, ExecError> {
        run_command(argv).map(|(out, _)| out)
    }

    fn run_logged(&self, argv: &[String]) -> Result<String, ExecError> {
        let start = Instant::now();
        let result = run_command(argv);
        let exit_code = match &result {
            Ok(_) => Some(0),
            Err(ExecError::Failed { code, .. }) => code.parse().ok(),
            Err(_) => None,
        };
        self.log
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(CommandRecord {
                argv: argv.to_vec(),
                exit_code,
                duration_s: start.elapsed().as_secs_f64(),
            });
        result.map(|(out, _)| out)
    }

    /// Logs a command started some other way (a daemon spawned in the background).
    pub fn record(&self, argv: &[String]) {
        self.log
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(CommandRecord {
                argv: argv.to_vec(),
                exit_code: None,
                duration_s: 0.0,
            });
    }

    /// Takes the commands run so far out of the log.
    pub fn take_log(&self) -> Vec<CommandRecord> {
        std::mem::take(&mut *self.log.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

/// Runs argv to completion with no standard input.
fn output_of(argv: &[String]) -> Result<std::process::Output, ExecError> {
    Command::new(&argv[0])
        .args(&argv[1..])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                ExecError::Missing {
                    tool: argv[0].clone(),
                    cmdline: cmdline(argv),
                    package: package_of(&argv[0]).to_string(),
                }
            } else {
                ExecError::Failed {
                    cmdline: cmdline(argv),
                    code: "none".into(),
                    stderr: e.to_string(),
                }
            }
        })
}

/// Runs argv to completion with no standard input; returns standard output and error.
pub fn run_command(argv: &[String]) -> Result<(String, String), ExecError> {
    let out = output_of(argv)?;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    if !out.status.success() {
        let code = out
            .status
            .code()
            .map(|c| c.to_string())
            .unwrap_or_else(|| "killed by a signal".into());
        let text = if stderr.trim().is_empty() {
            &stdout
        } else {
            &stderr
        };
        return Err(ExecError::Failed {
            cmdline: cmdline(argv),
            code,
            stderr: text.trim().lines().take(12).collect::<Vec<_>>().join("\n"),
        });
    }
    Ok((stdout, stderr))
}

/// Runs argv to completion and returns its exit code (None: killed by a signal) with standard
/// output and error, whatever the code: for checkers, whose exit code is the finding.
pub fn run_status(argv: &[String]) -> Result<(Option<i32>, String, String), ExecError> {
    let out = output_of(argv)?;
    Ok((
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    ))
}

/// Builds an argv from string slices.
pub fn argv(parts: &[&str]) -> Vec<String> {
    parts.iter().map(|s| s.to_string()).collect()
}

/// Is a tool on PATH (or at an absolute path)?
pub fn which(tool: &str) -> Option<std::path::PathBuf> {
    if tool.contains('/') {
        let p = std::path::PathBuf::from(tool);
        return p.exists().then_some(p);
    }
    let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/sbin:/usr/bin:/sbin:/bin".into());
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/sbin"].iter().map(std::path::PathBuf::from))
        .map(|d| d.join(tool))
        .find(|p| p.is_file())
}
