//! CPU affinity of a block job's workers (fio's cpus_allowed and cpus_allowed_policy).

use crate::plan::job::Job;

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
