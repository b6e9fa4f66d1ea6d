//! A block workload resolved against a target: every worker's file, region and pattern, the files
//! to lay out, and the notes of each job. Everything that can fail does so here, before anything
//! runs.

use std::fs::File;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::{fmt, writes, Block};
use crate::engine;
use crate::frame::{Place, RunError, TargetCtx};
use crate::io::{self, Pattern};
use crate::plan::job::{EngineKind, Job, SizeSpec};

/// One worker of a job, resolved: its file, its pattern.
pub struct Worker {
    pub job: usize,
    pub path: PathBuf,
    pub blockdev: bool,
    pub pattern: Pattern,
}

pub struct Resolved {
    pub workers: Vec<Worker>,
    /// path -> region to lay out (written once per run before it is first used).
    pub layout: Vec<(PathBuf, u64)>,
    pub notes: Vec<Vec<String>>,
}

fn invalid(s: String) -> RunError {
    RunError::Invalid(s)
}

fn seed_of(name: &str, clone: u32) -> u64 {
    // FNV-1a of the job name, so every job and worker has its own reproducible stream.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes() {
        h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
    }
    h ^ (clone as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// The file of worker `clone` of `job`.
fn path_of(place: &Place, base: &Path, job: &Job, clone: u32) -> Result<PathBuf, RunError> {
    Ok(match (place, &job.filename) {
        (Place::Raw(device), _) => device.to_path_buf(),
        (Place::Mount(_), Some(f)) if Path::new(f).is_absolute() => {
            return Err(invalid(format!(
                "job '{}': filename={f} is absolute; in compare each job runs on the target's mount point: give a plain file name",
                job.name
            )))
        }
        (_, Some(f)) => base.join(f),
        (_, None) => base.join(format!("{}.{clone}.0", job.name)),
    })
}

/// (is a block device, bytes it or the file has now).
fn existing(path: &Path, name: &str) -> Result<(bool, u64), RunError> {
    let meta = std::fs::metadata(path).ok();
    let blockdev = meta
        .as_ref()
        .is_some_and(|m| m.file_type().is_block_device());
    let len = if blockdev {
        File::open(path)
            .and_then(|f| crate::sys::block_device_size(&f))
            .map_err(|e| invalid(format!("job '{name}': {}: {e}", path.display())))?
    } else {
        meta.as_ref().map(|m| m.len()).unwrap_or(0)
    };
    Ok((blockdev, len))
}

/// The bytes a worker's I/O falls in.
fn region_of(job: &Job, path: &Path, blockdev: bool, existing: u64) -> Result<u64, RunError> {
    let name = &job.name;
    let region = match job.size {
        Some(SizeSpec::Bytes(n)) => n,
        Some(SizeSpec::Percent(p)) => {
            let whole = if blockdev {
                existing
            } else {
                let dir = path.parent().unwrap_or(Path::new("."));
                crate::sys::statvfs(dir)
                    .map(|s| s.blocks_avail * s.block_size)
                    .map_err(|e| invalid(format!("job '{name}': {}: {e}", dir.display())))?
            };
            (whole as f64 * p / 100.0) as u64
        }
        None if existing > 0 => existing,
        None => {
            return Err(invalid(format!(
                "job '{name}': no size and {} does not exist: add size=1G (or --file-size)",
                path.display()
            )))
        }
    };
    let region = if blockdev {
        region.min(existing)
    } else {
        region
    };
    let max_bs = io::max_bs(&job.bs);
    if region < max_bs {
        return Err(invalid(format!(
            "job '{name}': its size ({}) is smaller than its largest block ({}): raise size=",
            fmt(region),
            fmt(max_bs)
        )));
    }
    Ok(region)
}

fn pattern_of(job: &Job, clone: u32, region: u64) -> Pattern {
    Pattern {
        rw: job.rw,
        rwmixread: job.rwmixread,
        bs: job.bs.clone(),
        depth: job.iodepth as usize,
        region,
        limit_bytes: if job.time_based {
            None
        } else {
            Some(job.io_size.unwrap_or(region))
        },
        runtime: job.runtime,
        ramp: job.ramp_time.unwrap_or(Duration::ZERO),
        fsync_every: job.fsync,
        fdatasync_every: job.fdatasync,
        end_fsync: job.end_fsync,
        seed: seed_of(&job.name, clone),
        compress_pct: job.compress_pct,
        refill: job.refill_buffers,
        randommap: !job.norandommap,
    }
}

/// The notes a job carries whatever it measures.
fn job_notes(b: &Block, job: &Job, place: &Place) -> Vec<String> {
    let mut jn: Vec<String> = b.notes.clone();
    if matches!(place, Place::Mount(_)) && b.from_jobfile && job.directory.is_some() {
        jn.push(format!(
            "directory={} ignored: compare runs each job on the target's mount point",
            job.directory.as_deref().unwrap_or("")
        ));
    }
    if job.engine == EngineKind::Sync && job.iodepth > 1 {
        jn.push(format!(
            "iodepth={} has no effect with ioengine=sync (one I/O at a time)",
            job.iodepth
        ));
    }
    if !job.refill_buffers && writes(job.rw) {
        jn.push("refill_buffers=0: write buffers are reused with a fresh stamp per sector; a filesystem that compresses across several writes may shrink them".into());
    }
    if job.numjobs > 1 {
        jn.push(format!(
            "{} workers reported together (group_reporting)",
            job.numjobs
        ));
    }
    jn
}

/// Resolves every worker of every job on target `t`.
pub fn resolve(b: &Block, t: &TargetCtx) -> Result<Resolved, RunError> {
    let mut workers = Vec::new();
    let mut layout: Vec<(PathBuf, u64)> = Vec::new();
    let mut notes = Vec::new();
    let mut new_bytes = 0u64;
    for (ji, job) in b.jobs.iter().enumerate() {
        let base: PathBuf = match &t.place {
            Place::Mount(dir) => dir.to_path_buf(),
            Place::Raw(device) => device.to_path_buf(),
            Place::Here { .. } => PathBuf::from(job.directory.as_deref().unwrap_or(".")),
        };
        for clone in 0..job.numjobs {
            let path = path_of(&t.place, &base, job, clone)?;
            let (blockdev, have) = existing(&path, &job.name)?;
            let region = region_of(job, &path, blockdev, have)?;
            if let Place::Here { wipe } = t.place {
                if blockdev && writes(job.rw) {
                    crate::provision::safety::check_device(&path, wipe).map_err(|e| {
                        invalid(format!(
                            "job '{}' writes to {}: {e}",
                            job.name,
                            path.display()
                        ))
                    })?;
                }
            }
            let lay = match &t.place {
                Place::Raw(_) => true,
                _ => !blockdev && have < region,
            };
            if lay && !layout.iter().any(|(p, _)| p == &path) {
                if !blockdev {
                    new_bytes += region.saturating_sub(have);
                }
                layout.push((path.clone(), region));
            } else if let Some(l) = layout.iter_mut().find(|(p, _)| p == &path) {
                l.1 = l.1.max(region);
            }
            workers.push(Worker {
                job: ji,
                path,
                blockdev,
                pattern: pattern_of(job, clone, region),
            });
        }
        notes.push(job_notes(b, job, &t.place));
    }
    check_space(&workers, new_bytes)?;
    for job in &b.jobs {
        (engine::def(job.engine).available)().map_err(|e| {
            invalid(format!(
                "job '{}': ioengine={} is not available here: {e}",
                job.name,
                engine::def(job.engine).name
            ))
        })?;
    }
    Ok(Resolved {
        workers,
        layout,
        notes,
    })
}

/// Will the new files fit?
fn check_space(workers: &[Worker], new_bytes: u64) -> Result<(), RunError> {
    if new_bytes == 0 {
        return Ok(());
    }
    let Some(w) = workers.iter().find(|w| !w.blockdev) else {
        return Ok(());
    };
    let dir = w.path.parent().unwrap_or(Path::new("."));
    if let Ok(s) = crate::sys::statvfs(dir) {
        let avail = s.blocks_avail * s.block_size;
        if new_bytes > avail {
            return Err(invalid(format!(
                "the jobs' files need {} but {} has {} free: lower the size (--file-size 256M) or give the target more room (--size)",
                fmt(new_bytes),
                dir.display(),
                fmt(avail)
            )));
        }
    }
    Ok(())
}
