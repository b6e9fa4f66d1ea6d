//! `audit`: what each filesystem does when the disk returns damaged data, and when a flush fails.
//! It runs on targets fsbench provisions on loop images (never a user's device or directory), as
//! a workload of the coordinator, so an audit resumes and repeats as any study does.
//!
//! `case=corruption` writes files of known content (the files workload's trailer), takes the
//! filesystem offline, flips bytes in the image where one copy of half the files' data lies (and
//! in a block of a directory's entries), brings it back and reads everything: each damaged file is
//! `detected_by_fs` (EIO, EBADMSG, EUCLEAN), `silent` (read back wrong; the trailer caught it),
//! `repaired` (read back right and the filesystem logged a repair), `unnoticed` (read back right,
//! no repair logged: the read took an intact copy) or `lost` (gone). Then the filesystem's own
//! checker runs (corrupt.rs, locate.rs, check.rs). Records: `data`, `directory`, `checker`.
//!
//! `case=fsync` runs on the target provisioned afresh behind fsbench's fault device (its own
//! variant of the target): the "fsyncgate" experiment (fsync.rs). Record: `fsync`.

pub mod check;
pub mod corrupt;
pub mod fsync;
pub mod locate;

use super::{Opened, SpecError, Variant, Workload, WorkloadDef};
use crate::frame::{RunError, TargetCtx};
use crate::metrics::catalog::{m, Better::*, Unit::*};
use crate::metrics::name as metric;
use crate::plan::{TargetSpec, WorkloadSpec};
use crate::provision::exec::ExecError;
use crate::provision::ProvisionError;

/// The workload's name, which every audit record carries (both cases).
pub const NAME: &str = "audit";

pub const DEF: WorkloadDef = WorkloadDef {
    name: NAME,
    summary: "damage the disk image under known files and record what the filesystem and its checker do (case=corruption), or fail its disk under an fsync (case=fsync); loop images fsbench provisions only",
    params: &[
        ("case", "corruption (default) or fsync"),
        ("files", "data files written, every other one damaged (default 64)"),
        ("file_size", "size of each data file, at least 8K (default 64K)"),
        ("dir_files", "small files in the directory whose entries are damaged (default 400)"),
    ],
    takes: super::Takes::Listed,
    metrics: &[
        m("files", Count, Neither),
        m("damaged", Count, Neither),
        m(metric::BYTES_FLIPPED, Bytes, Neither),
        m(metric::DETECTED_BY_FS, Count, Higher),
        m("silent", Count, Lower),
        m("repaired", Count, Higher),
        m("unnoticed", Count, Neither),
        m("lost", Count, Lower),
        m(metric::CONTROLS_OK, Count, Higher),
        m(metric::CONTROLS_DAMAGED, Count, Lower),
        m(metric::FS_ERROR_COUNT, Count, Neither),
        m("intact", Count, Higher),
        m("problems", Count, Neither),
        m(metric::EXIT_CODE, Count, Neither),
        m(metric::FIRST_FSYNC_ERRNO, Count, Neither),
        m(metric::RETRY_FSYNC_ERRNO, Count, Neither),
        m(metric::FIRST_FSYNC_BLOCKED, Count, Neither),
        m(metric::CACHED_NEW, Count, Neither),
        m(metric::CACHED_OLD, Count, Neither),
        m(metric::CACHED_MIXED, Count, Neither),
        m(metric::CACHED_OTHER, Count, Neither),
        m(metric::CACHED_FAILED, Count, Neither),
        m(metric::DEVICE_NEW, Count, Neither),
        m(metric::DEVICE_OLD, Count, Neither),
        m(metric::DEVICE_MIXED, Count, Neither),
        m(metric::DEVICE_OTHER, Count, Neither),
        m(metric::DEVICE_FAILED, Count, Neither),
        m(metric::READ_ONLY_AFTER, Count, Neither),
        m(metric::MOUNTS_AGAIN, Count, Neither),
        m(metric::DEVICE_WRITES, Count, Neither),
        m(metric::DEVICE_WRITTEN_BYTES, Bytes, Neither),
        m(metric::DEVICE_FAILED_WRITES, Count, Neither),
        m(metric::DEVICE_FAILED_READS, Count, Neither),
        m(metric::DEVICE_FLUSHES, Count, Neither),
    ],
    build,
    ranks: false,
};

/// Why an audit step could not be done.
#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    /// A file or directory of the audit's could not be written or read.
    #[error("{what}: {err}")]
    Io { what: String, err: std::io::Error },
    /// A tool the audit runs failed (btrfs-map-logical, zdb, debugfs, xfs_db, a checker).
    #[error(transparent)]
    Command(#[from] ExecError),
    /// The target could not be taken offline or brought back.
    #[error(transparent)]
    Target(#[from] ProvisionError),
    /// Where the data lies could not be found on this filesystem.
    #[error("{0}")]
    Locate(String),
    /// The case cannot be run as it stands (the disk hung, no fault device).
    #[error("{0}")]
    Case(String),
}

impl AuditError {
    pub fn io(what: impl std::fmt::Display) -> impl FnOnce(std::io::Error) -> AuditError {
        let what = what.to_string();
        move |err| AuditError::Io { what, err }
    }
}

/// One experiment of the audit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Case {
    /// Damaged data and a damaged directory block in the image, read back; the checker.
    Corruption,
    /// A flush that fails, retried once the disk heals (the target behind the fault device).
    Fsync,
}

impl Case {
    pub fn name(self) -> &'static str {
        match self {
            Case::Corruption => "corruption",
            Case::Fsync => "fsync",
        }
    }
}

/// What the corruption case does on each target.
#[derive(Debug, Clone)]
pub struct Options {
    /// Data files written (half of them damaged).
    pub files: u64,
    pub file_size: u64,
    /// Files in the directory whose entries are damaged.
    pub dir_files: u64,
    pub seed: u64,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            files: 64,
            file_size: 64 << 10,
            dir_files: 400,
            seed: 0x000a_0d17,
        }
    }
}

/// One case of the audit on the targets of a plan.
pub struct Audit {
    pub case: Case,
    pub o: Options,
}

fn build(spec: &WorkloadSpec, _o: &crate::plan::Overrides) -> Result<Box<dyn Workload>, SpecError> {
    let bad = |what: String| SpecError(format!("workload '{}': {what}", spec.spec));
    let count = |k: &str, default: u64, min: u64, max: u64| -> Result<u64, SpecError> {
        match spec.param(k) {
            None => Ok(default),
            Some(v) => match v.parse::<u64>() {
                Ok(n) if (min..=max).contains(&n) => Ok(n),
                _ => Err(bad(format!("{k}={v}: a whole number from {min} to {max}"))),
            },
        }
    };
    let case = match spec.param("case") {
        None | Some("corruption") => Case::Corruption,
        Some("fsync") => Case::Fsync,
        Some(v) => return Err(bad(format!("case={v}: corruption or fsync"))),
    };
    let file_size = match spec.param("file_size") {
        None => Options::default().file_size,
        Some(v) => crate::plan::units::parse_size(v).map_err(|e| bad(format!("file_size: {e}")))?,
    };
    if file_size < 8 << 10 {
        return Err(bad(format!(
            "file_size {file_size}: at least 8K, so that no filesystem keeps the files inline in its metadata"
        )));
    }
    let o = Options {
        files: count("files", 64, 2, 100_000)?,
        file_size,
        dir_files: count("dir_files", 400, 1, 100_000)?,
        ..Options::default()
    };
    Ok(Box::new(Audit { case, o }))
}

/// Why a target cannot be audited (checked from the spec, before anything runs).
pub fn refuse(spec: &TargetSpec) -> Option<String> {
    let caps = crate::provision::caps(&spec.fs);
    let why = if caps.integrity.is_some() {
        if crate::provision::layout::zvol(spec) {
            "a zvol has no files to audit".to_string()
        } else if spec.option("raidz").is_some() {
            "raidz spreads a block over its members with parity; the audit locates data on single devices and mirrors".to_string()
        } else {
            return None;
        }
    } else if caps.existing_dir {
        "the audit damages the disk image under a filesystem, so it runs only on loop images fsbench provisions itself, never on a directory of yours".to_string()
    } else if caps.memory_backed {
        format!("{} has no disk to damage", spec.fs)
    } else {
        let can: Vec<&str> = crate::provision::FILESYSTEMS
            .iter()
            .filter(|d| d.integrity.is_some())
            .map(|d| d.schema.name)
            .collect();
        format!(
            "the audit runs on filesystems fsbench provisions on loop images ({})",
            can.join(", ")
        )
    };
    Some(format!("target '{}': {why}", spec.label))
}

impl Workload for Audit {
    fn open(&self, t: &TargetCtx) -> Result<Opened, RunError> {
        let test = match self.case {
            Case::Corruption => "data",
            Case::Fsync => "fsync",
        };
        let Some(h) = t.target.clone() else {
            return Ok(Opened::Skip {
                test: test.into(),
                reason: "the audit needs a target fsbench provisioned on loop images".into(),
            });
        };
        Ok(Opened::Run(match self.case {
            Case::Corruption => Box::new(corrupt::CorruptSession::new(h, &self.o)),
            Case::Fsync => Box::new(fsync::FsyncSession::new(h)),
        }))
    }

    fn check_target(&self, t: &TargetSpec, _size: Option<u64>) -> Result<(), SpecError> {
        match refuse(t) {
            Some(why) => Err(SpecError(why)),
            None => Ok(()),
        }
    }

    /// The fsync case runs on the target provisioned afresh behind the fault device.
    fn variant(&self, t: &TargetSpec) -> Variant {
        if self.case != Case::Fsync {
            return Variant::Same;
        }
        let mut spec = t.clone();
        spec.fault.get_or_insert_with(Default::default);
        match crate::provision::faultdev::refuse(&spec, false, false) {
            Some(reason) => Variant::Skip {
                test: "fsync".into(),
                reason,
            },
            None => Variant::Own {
                spec,
                test: "fsync".into(),
            },
        }
    }

    fn record_name(&self) -> Option<&'static str> {
        Some(NAME)
    }
}
