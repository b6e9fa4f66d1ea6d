//! fio's wait_for: a job's workers start once every worker of an earlier job (its waitee) is
//! done, whichever phase it ran in. A worker counts as done however it ends (an error before its
//! I/O included), so a waiter never waits for a worker that will not come.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use crate::frame::RunError;
use crate::plan::job::Job;

pub struct Waits {
    /// Per job: its workers done so far.
    done: Vec<AtomicU32>,
    /// Per job: the job it waits for, and that job's workers.
    waitee: Vec<Option<(usize, u32)>>,
}

impl Waits {
    /// Each waitee must be a job before the waiter (fio: no forward references), named once.
    pub fn new(jobs: &[Job]) -> Result<Waits, RunError> {
        let mut waitee = Vec::new();
        for (i, j) in jobs.iter().enumerate() {
            let Some(name) = &j.wait_for else {
                waitee.push(None);
                continue;
            };
            let earlier: Vec<usize> = (0..i).filter(|&k| &jobs[k].name == name).collect();
            match earlier[..] {
                [k] => waitee.push(Some((k, jobs[k].numjobs))),
                [] => {
                    return Err(RunError::Invalid(format!(
                        "job '{}': wait_for={name}: no job of that name before it (fio waits only for a job defined earlier in the file)",
                        j.name
                    )))
                }
                _ => {
                    return Err(RunError::Invalid(format!(
                        "job '{}': wait_for={name}: several jobs have that name; give the waited-for job a name of its own",
                        j.name
                    )))
                }
            }
        }
        Ok(Waits {
            done: jobs.iter().map(|_| AtomicU32::new(0)).collect(),
            waitee,
        })
    }

    /// Blocks a worker of `job` until its waitee is done (or a stop is asked for); how long it
    /// waited, when it waited.
    pub fn wait(&self, job: usize) -> Option<Duration> {
        let (k, n) = self.waitee[job]?;
        let start = std::time::Instant::now();
        while self.done[k].load(Ordering::Acquire) < n && crate::stop::requested().is_none() {
            std::thread::sleep(Duration::from_millis(1));
        }
        Some(start.elapsed())
    }

    /// A worker of `job` that ends when dropped.
    pub fn worker(&self, job: usize) -> Finished<'_> {
        Finished(self, job)
    }
}

/// Counts its worker done when dropped.
pub struct Finished<'a>(&'a Waits, usize);

impl Drop for Finished<'_> {
    fn drop(&mut self) {
        self.0.done[self.1].fetch_add(1, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(name: &str, wait_for: Option<&str>, numjobs: u32) -> Job {
        Job {
            name: name.into(),
            numjobs,
            wait_for: wait_for.map(String::from),
            ..Job::default()
        }
    }

    #[test]
    fn a_waiter_starts_once_every_worker_of_its_waitee_is_done() {
        let jobs = [job("w", None, 2), job("r", Some("w"), 1)];
        let waits = Waits::new(&jobs).unwrap();
        assert_eq!(waits.wait(0), None, "w waits for nobody");
        let started = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|s| {
            s.spawn(|| {
                waits.wait(1);
                started.store(true, Ordering::SeqCst);
            });
            drop(waits.worker(0));
            std::thread::sleep(Duration::from_millis(30));
            assert!(
                !started.load(Ordering::SeqCst),
                "one of w's two workers is done"
            );
            drop(waits.worker(0));
        });
        assert!(started.load(Ordering::SeqCst));
    }

    #[test]
    fn a_waitee_after_the_waiter_or_unknown_or_named_twice_is_refused() {
        let e = |jobs: &[Job]| match Waits::new(jobs) {
            Err(RunError::Invalid(m)) => m,
            _ => panic!("accepted"),
        };
        assert!(e(&[job("r", Some("w"), 1), job("w", None, 1)]).contains("defined earlier"));
        assert!(e(&[job("r", Some("x"), 1)]).contains("no job of that name"));
        let twice = [job("w", None, 1), job("w", None, 1), job("r", Some("w"), 1)];
        assert!(e(&twice).contains("several jobs"));
    }
}
