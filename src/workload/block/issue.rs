//! fio's options of how each I/O is issued (`plan::issue`), checked before anything runs and
//! told on the record: priorities, atomic writes, latency_target, serialize_overlap.

use crate::frame::RunError;
use crate::plan::issue::describe;
use crate::plan::job::{EngineKind, Job};

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
    if io.serialize_overlap {
        n.push("serialize_overlap: an I/O whose bytes overlap one of the worker's I/Os in flight waits until that one completes (fio's serialize_overlap within a job; fsbench submits from the worker itself, fio's io_submit_mode=inline)".into());
    }
    let c = &io.cmdprio;
    if !c.is_off() {
        let dirs = ["reads", "writes"];
        let mut parts = Vec::new();
        let used = [job.rw.reads(), job.rw.writes()];
        for d in (0..2).filter(|&d| used[d]) {
            match &c.bssplit {
                None if c.percentage[d] > 0 => parts.push(format!(
                    "{}% of {} at {}",
                    c.percentage[d],
                    dirs[d],
                    describe(c.implicit(d))
                )),
                None => {}
                Some(s) => parts.extend(s[d].iter().filter(|e| e.perc > 0).map(|e| {
                    format!(
                        "{}% of {}-byte {} at {}",
                        e.perc,
                        e.bs,
                        dirs[d],
                        describe(e.prio.unwrap_or_else(|| c.implicit(d)))
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
