//! CPU affinity of a block job's workers (fio's cpus_allowed and cpus_allowed_policy).

use crate::frame::RunError;
use crate::plan::job::Job;

/// Refuses, before anything runs, a CPU this host does not have.
pub fn check(jobs: &[Job]) -> Result<(), RunError> {
    let n = crate::sys::host::cpus();
    for job in jobs {
        if let Some(c) = job.cpus_allowed.iter().find(|&&c| c >= n) {
            return Err(RunError::Invalid(format!(
                "job '{}': cpus_allowed names CPU {c} and this host has {n} (0 to {}): name CPUs it has",
                job.name,
                n.saturating_sub(1)
            )));
        }
    }
    Ok(())
}

/// Runs the calling worker on the job's CPUs (cpus_allowed; one each in turn with
/// cpus_allowed_policy=split).
pub fn pin(job: &Job, clone: usize) -> Result<(), String> {
    let cpus = &job.cpus_allowed;
    if cpus.is_empty() {
        return Ok(());
    }
    let mine = if job.cpus_split {
        vec![cpus[clone % cpus.len()]]
    } else {
        cpus.clone()
    };
    crate::sys::pin_thread(&mine).map_err(|e| {
        format!(
            "cpus_allowed: running on CPUs {mine:?} failed: {e}; name CPUs this host has (0 to {})",
            crate::sys::host::cpus().saturating_sub(1)
        )
    })
}
