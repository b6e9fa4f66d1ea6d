//! fio's options of how each I/O is issued (`plan::job::per_io`), checked before anything runs and
//! told on the record: priorities, atomic writes, latency_target, serialize_overlap.

use crate::frame::RunError;
use crate::plan::dir::Dir;
use crate::plan::job::per_io::describe;
use crate::plan::job::{BlockSize, EngineKind, Job};
use std::path::Path;

fn invalid(job: &Job, s: String) -> RunError {
    RunError::Invalid(format!("job '{}': {s}", job.name))
}

/// Refuses what fio would refuse, or what cannot take effect here.
pub fn check(jobs: &[Job]) -> Result<(), RunError> {
    for job in jobs {
        let io = &job.issue;
        let per_io = [EngineKind::IoUring, EngineKind::Libaio];
        if !io.cmdprio.is_off() && !per_io.contains(&job.engine) {
            return Err(invalid(job, format!("cmdprio_percentage and cmdprio_bssplit are options of fio's io_uring and libaio engines (a priority per I/O, passed with the I/O); ioengine={} has none: use prio and prioclass (the worker's priority) or one of those engines", crate::engine::def(job.engine).name)));
        }
    }
    Ok(())
}

/// atomic=1 (fio's rules): an engine that passes RWF_ATOMIC (pvsync2, libaio, io_uring),
/// direct=1, and write sizes within the atomic write unit limits statx(2) reports for the file
/// or device (STATX_WRITE_ATOMIC); a file not made yet is asked through a probe file beside it.
pub fn check_file(job: &Job, path: &Path) -> Result<(), RunError> {
    if !job.issue.atomic || !job.rw.writes() {
        return Ok(());
    }
    let ok = [EngineKind::Pvsync2, EngineKind::Libaio, EngineKind::IoUring];
    if !ok.contains(&job.engine) {
        return Err(invalid(job, format!("atomic=1: ioengine={} does not support atomic writes (fio's rule): use pvsync2, libaio or io_uring, which pass RWF_ATOMIC with each write", crate::engine::def(job.engine).name)));
    }
    if !job.direct {
        return Err(invalid(job, "atomic=1: the kernel takes atomic writes (RWF_ATOMIC) with O_DIRECT only: add direct=1".into()));
    }
    let units = atomic_units(path).map_err(|e| {
        invalid(
            job,
            format!(
                "atomic=1: asking {} for its atomic write limits (statx STATX_WRITE_ATOMIC) failed: {e}",
                path.display()
            ),
        )
    })?;
    let Some((min, max)) = units else {
        return Err(invalid(job, format!("atomic=1: {} cannot be written atomically: statx reports no atomic write unit for it (its filesystem or device does not support torn-write protection); run on a filesystem and device that do (e.g. XFS or ext4 on an NVMe or SCSI device with atomic writes)", path.display())));
    };
    let sizes: Vec<u64> = match job.wbs() {
        BlockSize::Fixed(b) => vec![*b],
        BlockSize::Range(lo, hi) => (1..=hi / lo).map(|k| lo * k).collect(),
        BlockSize::Split(v) => v.iter().map(|e| e.0).collect(),
    };
    if let Some(b) = sizes
        .iter()
        .find(|&&b| !b.is_power_of_two() || b < min as u64 || b > max as u64)
    {
        return Err(invalid(job, format!("atomic=1: a write of {b} bytes cannot be atomic on {}: the kernel takes a power of 2 from {min} to {max} bytes there (statx's atomic write unit limits); give bs= within them", path.display())));
    }
    Ok(())
}

fn atomic_units(path: &Path) -> std::io::Result<Option<(u32, u32)>> {
    if path.exists() {
        return crate::sys::ioflags::atomic_write_units(path);
    }
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
    let probe = dir
        .unwrap_or(Path::new("."))
        .join(format!(".fsbench-atomic-probe-{}", std::process::id()));
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)?;
    let units = crate::sys::ioflags::atomic_write_units(&probe);
    let _ = std::fs::remove_file(&probe);
    units
}

/// What the record says of the job's issuing options.
pub fn notes(job: &Job) -> Vec<String> {
    let io = &job.issue;
    let mut n = Vec::new();
    if let Some(v) = io.ioprio() {
        n.push(format!(
            "prio/prioclass/priohint: each worker's I/O priority is {} (ioprio_set(2) value {v:#x}, as fio sets it)",
            describe(v)
        ));
    }
    if job.rw.trims() {
        n.push("trims: each is done when issued, as fio's engines do them: a hole punched in a file (fallocate PUNCH_HOLE|KEEP_SIZE), a discard on a block device (BLKDISCARD); counted as fio's trim direction (trim_ios, trim_bytes, the fio JSON's trim); trims take the third value of bs=, bsrange= or bssplit= (or the last one before it, as fio reads them), and trimwrite writes each trimmed block whole".into());
    }
    if io.atomic {
        n.push(if job.rw.writes() {
            "atomic=1: every write carries RWF_ATOMIC (torn-write protection, within the file's statx atomic write unit limits)".into()
        } else {
            "atomic=1: no effect, the job does not write (as in fio)".to_string()
        });
    }
    if let Some(t) = io.latency.as_ref().filter(|t| !t.target.is_zero()) {
        n.push(format!(
            "latency_target={} us: the queue depth is searched from 1 to iodepth={} as fio searches it, each depth judged over latency_window={} us by whether {}% of its I/Os complete within the target; {}; the depth found is the record's latency_qd",
            t.target.as_micros(),
            job.iodepth,
            t.window.as_micros(),
            t.percentile,
            if t.run {
                "latency_run=1: the search goes on until the job ends"
            } else {
                "once found, one more window runs at it, the job's figures started afresh, and the job ends"
            }
        ));
    }
    if io.serialize_overlap {
        n.push("serialize_overlap: an I/O whose bytes overlap one of the worker's I/Os in flight waits until that one completes (fio's serialize_overlap within a job; fsbench submits from the worker itself, fio's io_submit_mode=inline)".into());
    }
    let c = &io.cmdprio;
    if !c.is_off() {
        let mut parts = Vec::new();
        let used = [(Dir::Read, job.rw.reads()), (Dir::Write, job.rw.writes())];
        for (k, (dir, _)) in used.into_iter().enumerate().filter(|u| u.1 .1) {
            let plural = format!("{}s", dir.name());
            match &c.bssplit {
                None if c.percentage[k] > 0 => parts.push(format!(
                    "{}% of {plural} at {}",
                    c.percentage[k],
                    describe(c.implicit(dir))
                )),
                None => {}
                Some(s) => parts.extend(s[k].iter().filter(|e| e.perc > 0).map(|e| {
                    format!(
                        "{}% of {}-byte {plural} at {}",
                        e.perc,
                        e.bs,
                        describe(e.prio.unwrap_or_else(|| c.implicit(dir)))
                    )
                })),
            }
        }
        let how = if job.engine == EngineKind::IoUring {
            "in the SQE's ioprio"
        } else {
            "in the iocb's aio_reqprio (IOCB_FLAG_IOPRIO)"
        };
        n.push(format!(
            "cmdprio: {} ({how}); the others at the job's priority",
            parts.join(", ")
        ));
        if !job.direct {
            n.push("cmdprio: buffered I/O reaches the device from the page cache, without the I/O's priority; fio asks for direct=1".into());
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    fn atomic_job(engine: EngineKind, direct: bool) -> Job {
        let mut j = Job {
            engine,
            direct,
            rw: crate::plan::job::Rw::RandWrite,
            ..Job::default()
        };
        j.issue.atomic = true;
        j
    }

    #[test]
    fn atomic_needs_an_engine_that_passes_it_direct_io_and_a_file_that_takes_it() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("f");
        let e = |j: &Job| check_file(j, &f).unwrap_err().to_string();
        assert!(e(&atomic_job(EngineKind::Sync, true)).contains("does not support atomic"));
        assert!(e(&atomic_job(EngineKind::Libaio, false)).contains("direct=1"));
        let j = atomic_job(EngineKind::Pvsync2, true);
        match crate::sys::ioflags::atomic_write_units(dir.path()) {
            Ok(Some(_)) => {}
            _ => assert!(e(&j).contains("no atomic write unit"), "{}", e(&j)),
        }
        assert!(!f.exists(), "the probe file is gone");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        let reads = Job {
            rw: crate::plan::job::Rw::Read,
            ..atomic_job(EngineKind::Sync, false)
        };
        assert!(
            check_file(&reads, &f).is_ok(),
            "no effect on a job that does not write"
        );
    }
}
