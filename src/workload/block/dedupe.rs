//! fio's dedupe_mode=working_set and dedupe_global: each job's working set (its first unique
//! pages, dedupe_working_set_percentage of its size), or one shared by every job with
//! dedupe_global, the pages spread evenly over their workers, as fio spreads them.

use crate::frame::RunError;
use crate::io::worker::{Data, WorkerPlan, WorkingSet};
use crate::plan::job::Job;

/// fio's default share of the size that is the working set.
const DEFAULT_WS_PCT: u32 = 5;

fn ws_job(j: &Job) -> bool {
    j.dedupe_pct > 0 && j.dedupe_working_set && j.verify.is_none()
}

/// fio's checks: a working set needs the job's size, and room for the deduped share.
pub fn check(jobs: &[Job]) -> Result<(), RunError> {
    for j in jobs.iter().filter(|j| ws_job(j)) {
        let ws = j.dedupe_ws_pct.unwrap_or(DEFAULT_WS_PCT);
        let why = if j.size.is_none() {
            "dedupe_mode=working_set needs the job's size= (the working set is a share of it)"
                .to_string()
        } else if ws + j.dedupe_pct > 100 {
            format!("dedupe_percentage={} and dedupe_working_set_percentage={ws} add up to more than 100: the working set's pages are unique, so that share cannot be deduped (as fio says)", j.dedupe_pct)
        } else {
            continue;
        };
        return Err(RunError::Invalid(format!("job '{}': {why}", j.name)));
    }
    Ok(())
}

/// Gives each worker (its job's index, its plan, its region's bytes) of a working-set job its
/// working set.
pub fn assign(jobs: &[Job], workers: &mut [(usize, &mut WorkerPlan, u64)]) {
    let global: Vec<usize> = (0..workers.len())
        .filter(|&w| {
            let j = &jobs[workers[w].0];
            ws_job(j) && j.dedupe_global
        })
        .collect();
    for (w, (job, plan, region)) in workers.iter_mut().enumerate() {
        let j = &jobs[*job];
        if !ws_job(j) {
            continue;
        }
        let page = plan.min_bs();
        let pct = u64::from(j.dedupe_ws_pct.unwrap_or(DEFAULT_WS_PCT));
        let pages = (*region * pct / 100 / page.max(1)).max(1);
        let ws = match global.iter().position(|&g| g == w) {
            Some(me) => WorkingSet {
                key: 0x6c0b_a1de_d0de_5e70,
                per: (pages / global.len() as u64).max(1),
                me: me as u64,
                of: global.len() as u64,
            },
            None => WorkingSet {
                key: plan.seed ^ 0xd0de_5e70,
                per: pages,
                me: 0,
                of: 1,
            },
        };
        if let Data::Dedupe { set, .. } = &mut plan.fill.data {
            *set = Some(ws);
        }
    }
}
