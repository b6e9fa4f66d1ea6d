//! fio's exitall and exit_what: when a job with exitall ends, the jobs of its reporting group
//! end (exit_what=group, the default), or every running job, after which the next stonewalled
//! group runs (stonewall), or every job, the later groups not running (all).

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Mutex;

use crate::plan::job::ExitWhat;
use crate::plan::job::Job;

pub struct Exits {
    /// Each job's reporting group (fio's groupid: a new one at each stonewall or new_group).
    gid: Vec<usize>,
    /// Raised: the group's jobs end (or, raised before they start, do not run).
    flags: Vec<AtomicBool>,
    /// The job whose exit_what=all ended every job, and its phase.
    by: Mutex<Option<(String, usize)>>,
}

impl Exits {
    pub fn new(jobs: &[Job]) -> Exits {
        let mut gid = Vec::with_capacity(jobs.len());
        let mut g = 0;
        for (i, j) in jobs.iter().enumerate() {
            if i > 0 && (j.stonewall || j.new_group) {
                g += 1;
            }
            gid.push(g);
        }
        Exits {
            flags: (0..=g).map(|_| AtomicBool::new(false)).collect(),
            gid,
            by: Mutex::new(None),
        }
    }

    /// The flag the workers of `job` watch: raised, they end.
    pub fn watch(&self, job: usize) -> &AtomicBool {
        &self.flags[self.gid[job]]
    }

    /// A worker of `job` ended, in phase `at`, which runs the jobs `phase`.
    pub fn ended(&self, jobs: &[Job], job: usize, at: usize, phase: &[usize]) {
        let j = &jobs[job];
        if !j.exitall {
            return;
        }
        let raise: Vec<usize> = match j.exit_what {
            ExitWhat::Group => vec![self.gid[job]],
            ExitWhat::Stonewall => phase.iter().map(|&k| self.gid[k]).collect(),
            ExitWhat::All => {
                self.by
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .get_or_insert_with(|| (j.name.clone(), at));
                (0..self.flags.len()).collect()
            }
        };
        for g in raise {
            self.flags[g].store(true, Relaxed);
        }
    }

    /// The note of the jobs of phase `at` when they did not run: exit_what=all ended them.
    pub fn note(&self, at: usize) -> Option<String> {
        let (by, when) = self.by.lock().unwrap_or_else(|e| e.into_inner()).clone()?;
        (when < at).then(|| format!("not run: job '{by}' ended with exitall and exit_what=all, which ends every job and runs no later group (as in fio)"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(name: &str, opts: &[(&str, Option<&str>)]) -> Job {
        let mut j = Job {
            name: name.into(),
            ..Job::default()
        };
        for (k, v) in opts {
            j.apply(k, *v).unwrap();
        }
        j
    }

    fn raised(e: &Exits) -> Vec<bool> {
        (0..e.gid.len()).map(|j| e.watch(j).load(Relaxed)).collect()
    }

    #[test]
    fn exit_what_ends_the_group_the_running_jobs_or_every_job() {
        // fio's examples/exitwhat.fio: two phases, the first of two reporting groups.
        let jobs = vec![
            job(
                "slow1",
                &[
                    ("exitall", None),
                    ("new_group", None),
                    ("exit_what", Some("stonewall")),
                ],
            ),
            job("fast1", &[("exitall", None), ("new_group", None)]),
            job(
                "slow2",
                &[
                    ("exitall", None),
                    ("stonewall", None),
                    ("exit_what", Some("all")),
                ],
            ),
            job("fast2", &[("exitall", None)]),
            job("runsnever", &[("exitall", None)]),
        ];
        let e = Exits::new(&jobs);
        assert_eq!(e.gid, [0, 1, 2, 2, 2]);
        // exit_what=group: fast1 ends its own group only.
        e.ended(&jobs, 1, 0, &[0, 1]);
        assert_eq!(raised(&e), [false, true, false, false, false]);
        // stonewall: every running job, not the next phase's.
        let e = Exits::new(&jobs);
        e.ended(&jobs, 0, 0, &[0, 1]);
        assert_eq!(raised(&e), [true, true, false, false, false]);
        assert_eq!(e.note(1), None);
        // all: every job, and a later phase does not run.
        let e = Exits::new(&jobs);
        e.ended(&jobs, 2, 1, &[2, 3, 4]);
        assert_eq!(raised(&e), [true; 5]);
        assert_eq!(e.note(1), None);
        assert!(e.note(2).unwrap().contains("slow2"));
        // A job without exitall ends nothing.
        let plain = vec![job("a", &[]), job("b", &[])];
        let e = Exits::new(&plain);
        e.ended(&plain, 0, 0, &[0, 1]);
        assert_eq!(raised(&e), [false, false]);
    }
}
