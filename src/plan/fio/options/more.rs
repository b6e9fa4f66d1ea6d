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
pub(super) const MORE: &str =
    "threads verify_async verify_async_cpus experimental_verify ignore_error error_dump random_sequence_stride dedupe_mode dedupe_working_set_percentage dedupe_global wait_for fadvise_hint";

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
            "random_distribution" if v.is_some_and(|v| v.trim().starts_with("sequence")) => {
                self.distribution = crate::plan::job::Distribution::Sequence {
                    blocks: parse_sequence(need(key, v)?)?,
                    stride: self.more.seq_stride,
                };
                self.dist_center = None;
                Ok(Done)
            }
            "random_sequence_stride" => {
                let on = parse_bool(key, v)?;
                self.more.seq_stride = on;
                if let crate::plan::job::Distribution::Sequence { stride, .. } =
                    &mut self.distribution
                {
                    *stride = on;
                }
                Ok(Done)
            }
            "dedupe_mode" => {
                self.more.dedupe_working_set = match need(key, v)? {
                    "repeat" => false,
                    "working_set" => true,
                    o => {
                        return Err(
                            format!("dedupe_mode={o}: expected repeat or working_set").into()
                        )
                    }
                };
                Ok(Done)
            }
            "dedupe_working_set_percentage" => {
                self.more.dedupe_ws_pct = Some(parse_u32(key, need(key, v)?, 0, 100)?);
                Ok(Done)
            }
            "dedupe_global" => {
                self.more.dedupe_global = parse_bool(key, v)?;
                Ok(Done)
            }
            "buffer_pattern" | "verify_pattern" => self.apply_pattern(key, need(key, v)?),
            "wait_for" => {
                self.more.wait_for = Some(need(key, v)?.to_string());
                Ok(Done)
            }
            "fadvise_hint" => {
                use crate::plan::jobmore::Fadvise;
                self.more.fadvise = match v.unwrap_or("1") {
                    "1" => Fadvise::Pattern,
                    "0" => Fadvise::Off,
                    "sequential" => Fadvise::Sequential,
                    "random" => Fadvise::Random,
                    o => {
                        return Err(format!(
                            "fadvise_hint={o}: expected 0, 1, sequential or random"
                        )
                        .into())
                    }
                };
                Ok(Done)
            }
            "experimental_verify" => {
                if parse_bool(key, v)? {
                    return Ok(Noted("experimental_verify: fsbench checks the blocks the job wrote once its writing is done, each against its own header (fio's experimental verify replays the job's offsets to find them; fsbench remembers them): the same blocks are checked".into()));
                }
                Ok(Done)
            }
            "ignore_error" => {
                self.more.ignore_error = parse_ignore_error(need(key, v)?)?;
                // As in fio: a direction with a list goes on past its errors.
                for (d, l) in ["read", "write", "verify"]
                    .iter()
                    .zip(&self.more.ignore_error)
                {
                    if !l.is_empty() && !self.continue_on_error.iter().any(|k| k == d) {
                        self.continue_on_error.push(d.to_string());
                    }
                }
                Ok(Done)
            }
            "error_dump" => {
                if parse_bool(key, v)? {
                    return Ok(Noted("error_dump: fsbench notes how many errors the job went past and the first of them (with its errno, call and offset), not each one".into()));
                }
                Ok(Done)
            }
            _ => Ok(NotMine),
        }
    }
}

impl Job {
    /// buffer_pattern and verify_pattern: a value with a `'file'` piece is kept as written (the
    /// file read when the job runs); verify_pattern without verify= verifies the pattern.
    fn apply_pattern(&mut self, key: &str, p: &str) -> R<Got> {
        self.more.pattern_src.retain(|(k, _)| k != key);
        let unset = self.verify.is_none();
        if !crate::plan::fio::pattern::has_file(p) {
            if key == "buffer_pattern" {
                return Ok(NotMine);
            }
            let got = self.apply_verify(key, Some(p))?;
            self.pattern_verify(unset);
            return Ok(got);
        }
        // The other pieces checked now, the file read when the job runs.
        let none = |_: &str| Ok(vec![0]);
        crate::plan::fio::pattern::parse_pattern_with(key, p, Some(&none))?;
        self.more.pattern_src.push((key.to_string(), p.to_string()));
        if key == "buffer_pattern" {
            self.buffer_pattern = vec![0];
            return Ok(Done);
        }
        let got = self.apply_verify(key, Some("0"))?;
        self.pattern_verify(unset);
        Ok(got)
    }

    /// verify_pattern without verify= verifies the pattern (fio's verify=pattern).
    fn pattern_verify(&mut self, verify_was_unset: bool) {
        if let Some(v) = self.verify.as_mut().filter(|_| verify_was_unset) {
            v.kind = "pattern".into();
        }
    }
}

/// fio's wait_for, read once every job is known: the waitee is a job before the waiter (fio
/// allows no forward reference) with a name of its own. The waiting itself is the block
/// workload's (`workload::block::waits`).
pub fn wait_for(jobs: &mut [Job]) -> Result<(), String> {
    for i in 0..jobs.len() {
        let Some(x) = jobs[i].more.wait_for.clone() else {
            continue;
        };
        let name = &jobs[i].name;
        match jobs[..i].iter().filter(|j| j.name == x).count() {
            0 => return Err(format!("job '{name}': wait_for={x}: no job named '{x}' before this one (fio's waitee is defined earlier in the file)")),
            1 => {}
            _ => return Err(format!("job '{name}': wait_for={x}: several jobs are named '{x}'; fio's waitee has a name of its own")),
        }
    }
    Ok(())
}

/// fio's sequence distribution, `sequence:2,0,1`: up to 64 block indices.
fn parse_sequence(v: &str) -> R<Vec<u64>> {
    let bad = |why: &str| format!("random_distribution={v}: {why}, e.g. sequence:2,0,1");
    let list = v
        .trim()
        .strip_prefix("sequence:")
        .ok_or_else(|| bad("the sequence's block indices follow 'sequence:'"))?;
    let blocks = list
        .split(',')
        .map(|b| {
            b.trim()
                .parse::<u64>()
                .map_err(|_| bad(&format!("'{b}' is not a block index")))
        })
        .collect::<Result<Vec<u64>, String>>()?;
    if blocks.len() > 64 {
        return Err(bad("at most 64 block indices (fio's limit)").into());
    }
    Ok(blocks)
}

/// fio's ignore_error: `READ,WRITE,VERIFY` lists, each of errnos separated by `:` (a name such
/// as ENOSPC, or a number, decimal or 0x hex). A list given makes the job go past those errors
/// of its direction (fio sets continue_on_error for it).
fn parse_ignore_error(v: &str) -> R<[Vec<i32>; 3]> {
    let parts: Vec<&str> = v.split(',').map(str::trim).collect();
    if parts.len() > 3 {
        return Err(format!(
            "ignore_error={v}: at most three lists (reads, writes, verifies), separated by ','"
        )
        .into());
    }
    let mut out: [Vec<i32>; 3] = Default::default();
    for (i, part) in parts.iter().enumerate() {
        for e in part.split(':').map(str::trim) {
            if e.is_empty() {
                break;
            }
            let n = if e.starts_with('E') {
                crate::plan::fio::errno::errno_of(e)
            } else if let Some(h) = e.strip_prefix("0x").or_else(|| e.strip_prefix("0X")) {
                i32::from_str_radix(h, 16).ok()
            } else {
                e.parse::<i32>().ok().map(i32::abs)
            };
            match n.filter(|n| *n > 0) {
                Some(n) => out[i].push(n),
                None => return Err(format!("ignore_error={v}: '{e}' is not an errno: give its name (ENOSPC, EIO) or its number").into()),
            }
        }
    }
    Ok(out)
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
        assert!(note("experimental_verify", "1").contains("the same blocks"));
        let e = Job::default()
            .apply("verify_async_cpus", Some("3-1"))
            .unwrap_err();
        assert!(e.0.contains("verify_async_cpus=3-1"), "{e}");
    }

    #[test]
    fn ignore_error_lists_per_direction() {
        let l = parse_ignore_error(",ENOSPC").unwrap();
        assert_eq!(l, [vec![], vec![28], vec![]]);
        let mut j = Job::default();
        j.apply("ignore_error", Some(",ENOSPC")).unwrap();
        assert_eq!(j.continue_on_error, ["write"]);
        assert_eq!(j.more.ignore_error[1], [28]);
        // fio's HOWTO example: EAGAIN for reads, ENOSPC and 122 (EDQUOT) for writes.
        let l = parse_ignore_error("EAGAIN,ENOSPC:122").unwrap();
        assert_eq!(l, [vec![11], vec![28, 122], vec![]]);
        let l = parse_ignore_error("EIO:0x1c,-5,EILSEQ").unwrap();
        assert_eq!(l, [vec![5, 28], vec![5], vec![84]]);
        for bad in ["ENOPE", "0", "x", "1,2,3,4"] {
            let e = Job::default().apply("ignore_error", Some(bad)).unwrap_err();
            assert!(e.0.starts_with(&format!("ignore_error={bad}")), "{e}");
        }
        assert!(note("error_dump", "1").contains("first"));
        assert!(Job::default()
            .apply("error_dump", Some("0"))
            .unwrap()
            .is_none());
    }

    #[test]
    fn steady_state_on_latency_with_a_check_interval() {
        use crate::plan::job::SteadyKind;
        let mut j = Job::default();
        j.apply("steadystate", Some("lat:5%")).unwrap();
        j.apply("steadystate_duration", Some("300")).unwrap();
        j.apply("steadystate_check_interval", Some("10")).unwrap();
        let s = j.steadystate.unwrap();
        assert_eq!((s.kind, s.limit, s.pct), (SteadyKind::Lat, 5.0, true));
        assert_eq!(s.samples(), 30);
        j.apply("ss", Some("lat_slope:500us")).unwrap();
        let s = j.steadystate.unwrap();
        assert_eq!(
            (s.kind, s.limit, s.pct),
            (SteadyKind::LatSlope, 500_000.0, false)
        );
        // A bare number is ns, as fio compares it.
        j.apply("ss", Some("lat:2000")).unwrap();
        assert_eq!(j.steadystate.unwrap().limit, 2000.0);
        let e = Job::default()
            .apply("ss_interval", Some("500ms"))
            .unwrap_err();
        assert!(e.0.contains("1s or more"), "{e}");
        let e = j.apply("ss_interval", Some("7")).unwrap_err();
        assert!(e.0.contains("multiple of ss_interval"), "{e}");
    }

    #[test]
    fn a_sequence_distribution_and_its_stride_in_either_order() {
        use crate::plan::job::Distribution;
        let mut j = Job::default();
        j.apply("random_distribution", Some("sequence:2,0,1"))
            .unwrap();
        j.apply("random_sequence_stride", Some("1")).unwrap();
        let seq = |stride| Distribution::Sequence {
            blocks: vec![2, 0, 1],
            stride,
        };
        assert_eq!(j.distribution, seq(true));
        let mut j = Job::default();
        j.apply("random_sequence_stride", Some("1")).unwrap();
        j.apply("random_distribution", Some("sequence:2,0,1"))
            .unwrap();
        assert_eq!(j.distribution, seq(true));
        j.apply("random_sequence_stride", Some("0")).unwrap();
        assert_eq!(j.distribution, seq(false));
        for bad in ["sequence", "sequence:1,x", "sequence:"] {
            let e = Job::default()
                .apply("random_distribution", Some(bad))
                .unwrap_err();
            assert!(
                e.0.starts_with(&format!("random_distribution={bad}")),
                "{e}"
            );
        }
    }

    #[test]
    fn dedupe_modes_are_kept() {
        let mut j = Job::default();
        j.apply("dedupe_mode", Some("working_set")).unwrap();
        j.apply("dedupe_working_set_percentage", Some("50"))
            .unwrap();
        j.apply("dedupe_global", Some("1")).unwrap();
        assert!(j.more.dedupe_working_set && j.more.dedupe_global);
        assert_eq!(j.more.dedupe_ws_pct, Some(50));
        j.apply("dedupe_mode", Some("repeat")).unwrap();
        assert!(!j.more.dedupe_working_set);
        let e = Job::default().apply("dedupe_mode", Some("x")).unwrap_err();
        assert!(e.0.contains("repeat or working_set"), "{e}");
    }

    #[test]
    fn wait_for_names_an_earlier_job_of_its_own_name() {
        let jobs = |spec: &[(&str, &[(&str, &str)])]| -> Vec<Job> {
            spec.iter()
                .map(|(n, o)| {
                    let mut j = Job {
                        name: n.to_string(),
                        ..Job::default()
                    };
                    for (k, v) in o.iter() {
                        j.apply(k, Some(v)).unwrap();
                    }
                    j
                })
                .collect()
        };
        // fio's examples/waitfor.fio: a chain, each waiting for the one before; groups unchanged
        // (the waiting is done as the jobs run).
        let mut js = jobs(&[
            ("writers", &[]),
            ("readers", &[("new_group", "1"), ("wait_for", "writers")]),
            ("writers2", &[("wait_for", "readers")]),
        ]);
        wait_for(&mut js).unwrap();
        assert!(js.iter().all(|j| !j.stonewall));
        for (spec, says) in [
            (
                vec![("a", &[][..]), ("c", &[("wait_for", "x")][..])],
                "no job named 'x'",
            ),
            (
                vec![("c", &[("wait_for", "a")][..]), ("a", &[][..])],
                "defined earlier",
            ),
            (
                vec![
                    ("a", &[][..]),
                    ("a", &[][..]),
                    ("c", &[("wait_for", "a")][..]),
                ],
                "several jobs",
            ),
        ] {
            let e = wait_for(&mut jobs(&spec)).unwrap_err();
            assert!(e.contains(says), "{e}");
        }
    }

    #[test]
    fn verify_pattern_alone_verifies_the_pattern() {
        let mut j = Job::default();
        j.apply("verify_pattern", Some("0xaaa")).unwrap();
        let v = j.verify.clone().unwrap();
        assert_eq!((v.kind.as_str(), v.pattern), ("pattern", vec![0x0a, 0xaa]));
        // With verify= given (before or after), its kind stands.
        j.apply("verify", Some("meta")).unwrap();
        assert_eq!(j.verify.clone().unwrap().kind, "meta");
        let mut j = Job::default();
        j.apply("verify", Some("crc32c")).unwrap();
        j.apply("verify_pattern", Some("0xff")).unwrap();
        assert_eq!(j.verify.unwrap().kind, "crc32c");
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

    #[test]
    fn the_settings_read_back_flat_with_the_jobs_own() {
        let mut j = Job::default();
        for (k, v) in [
            ("exit_what", "all"),
            ("ignore_error", ",ENOSPC"),
            ("dedupe_mode", "working_set"),
            ("wait_for", "a"),
        ] {
            j.apply(k, Some(v)).unwrap();
        }
        let v = serde_json::to_value(&j).unwrap();
        assert_eq!(v["exit_what"], "all");
        assert_eq!(v["wait_for"], "a");
        assert!(v.get("more").is_none() && v.get("new_group").is_none());
        assert_eq!(serde_json::from_value::<Job>(v).unwrap(), j);
    }
}
