//! fio options of issue 29 part 5: options that change nothing here (fio's tiobench profile's
//! `threads`, asynchronous verification), and fio's error lists, dedupe modes, sequence
//! distributions and latency steady state.

use super::{Got, R};
use crate::plan::fio::values::*;
use crate::plan::job::Job;
use crate::plan::jobmore::ExitWhat;
use Got::{Done, NotMine, Noted};

/// The options `apply_more` adds (listed in `fsbench run --help`; it reads some of other groups
/// too: new_group, exit_what).
pub(super) const MORE: &str = "threads verify_async verify_async_cpus";

impl Job {
    /// The options of this module; each sets the job, or says why it changes nothing here.
    pub(super) fn apply_more(&mut self, key: &str, v: Option<&str>) -> R<Got> {
        match key {
            "threads" => {
                parse_u32(key, need(key, v)?, 1, u32::MAX)?;
                Ok(Noted(format!("threads={}: fio reads this option only in its tiobench profile (profile=tiobench); in a job file it has no effect in fio, nor here (numjobs sets the workers)", v.unwrap_or(""))))
            }
            "verify_async" => {
                parse_u32(key, need(key, v)?, 0, u32::MAX)?;
                Ok(Noted(format!("verify_async={}: fsbench checks each block in the worker that reads it (fio's verify_async=0); the blocks checked are the same, only the threads differ", v.unwrap_or(""))))
            }
            "verify_async_cpus" => {
                super::families::parse_cpus(need(key, v)?)
                    .map_err(|e| e.0.replacen("cpus_allowed", key, 1))?;
                Ok(Noted(format!("verify_async_cpus={}: fsbench has no verify threads (it checks in the worker, whose CPUs cpus_allowed sets); the option has no effect", v.unwrap_or(""))))
            }
            "new_group" => {
                self.more.new_group = parse_bool(key, v)?;
                Ok(Done)
            }
            "exit_what" => {
                self.more.exit_what = match need(key, v)? {
                    "group" => ExitWhat::Group,
                    "stonewall" => ExitWhat::Stonewall,
                    "all" => ExitWhat::All,
                    o => {
                        return Err(
                            format!("exit_what={o}: expected group, stonewall or all").into()
                        )
                    }
                };
                Ok(Done)
            }
            _ => Ok(NotMine),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn note(k: &str, v: &str) -> String {
        match Job::default().apply(k, Some(v)) {
            Ok(Some(n)) => n,
            o => panic!("{k}={v}: {o:?}"),
        }
    }

    #[test]
    fn options_without_effect_are_accepted_with_a_note() {
        assert!(note("threads", "1").contains("tiobench"));
        assert!(Job::default().apply("threads", Some("x")).is_err());
        let j = {
            let mut j = Job::default();
            j.apply("verify_async", Some("6")).unwrap();
            j
        };
        assert_eq!(j, Job::default());
        assert!(note("verify_async_cpus", "0-3").contains("no effect"));
        let e = Job::default()
            .apply("verify_async_cpus", Some("3-1"))
            .unwrap_err();
        assert!(e.0.contains("verify_async_cpus=3-1"), "{e}");
    }

    #[test]
    fn exit_what_and_new_group_are_kept() {
        let mut j = Job::default();
        j.apply("exit_what", Some("stonewall")).unwrap();
        j.apply("new_group", None).unwrap();
        assert_eq!(j.more.exit_what, ExitWhat::Stonewall);
        assert!(j.more.new_group);
        j.apply("exit_what", Some("all")).unwrap();
        assert_eq!(j.more.exit_what, ExitWhat::All);
        let e = Job::default().apply("exit_what", Some("some")).unwrap_err();
        assert!(e.0.contains("group, stonewall or all"), "{e}");
    }
}
