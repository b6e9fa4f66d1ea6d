//! How each I/O is issued beyond its offset and size: the worker's I/O priority and each I/O's
//! own (fio's cmdprio_*, for a share of I/Os or by block size), atomic writes, the queue depth
//! searched for a latency target, and I/Os that wait for the ones they overlap.

use super::{Arg, Done, Family, FioOpt, Got, R};
use crate::plan::fio::values::{block_size, parse_u32, per_dir};
use crate::plan::job::per_io::{ioprio_value, IoOpts, LatencyTarget, SplitPrio};
use crate::plan::job::Job;
use crate::plan::PlanError;

const fn opt(
    name: (&'static str, &'static [&'static str]),
    help: &'static str,
    example: &'static str,
    apply: fn(&mut Job, Arg) -> R<Got>,
) -> FioOpt {
    FioOpt::new(Family::PerIo, name, help, example, apply)
}

/// Sets part of the job's latency target.
fn latency(j: &mut Job, set: impl FnOnce(&mut LatencyTarget)) -> R<Got> {
    set(j.issue.latency.get_or_insert_with(Default::default));
    Ok(Done)
}

/// Sets part of the job's issuing options.
fn issue(j: &mut Job, set: impl FnOnce(&mut IoOpts)) -> R<Got> {
    set(&mut j.issue);
    Ok(Done)
}

pub(super) const OPTIONS: &[FioOpt] = &[
    opt(
        ("prio", &[]),
        "the worker's I/O priority level (0-7)",
        "4",
        |j, a| {
            let v = a.u32(0, 7)? as u8;
            issue(j, |io| io.level = Some(v))
        },
    ),
    opt(
        ("prioclass", &[]),
        "its class: 1 realtime, 2 best effort, 3 idle",
        "2",
        |j, a| {
            let v = a.u32(0, 3)? as u8;
            issue(j, |io| io.class = Some(v))
        },
    ),
    opt(("priohint", &[]), "its hint", "1", |j, a| {
        let v = a.u32(0, 1023)? as u16;
        issue(j, |io| io.hint = Some(v))
    }),
    opt(
        ("cmdprio_percentage", &[]),
        "percent of I/Os with a priority of their own (R,W)",
        "20",
        |j, a| {
            if j.issue.cmdprio.bssplit.is_some() {
                return Err(exclusive());
            }
            let v = both(&a, 0, 100)?;
            issue(j, |io| io.cmdprio.percentage = v)
        },
    ),
    opt(("cmdprio_class", &[]), "their class (R,W)", "1", |j, a| {
        let v = both(&a, 1, 3)?.map(|c| c as u8);
        issue(j, |io| io.cmdprio.class = v)
    }),
    opt(("cmdprio", &[]), "their level (R,W)", "1", |j, a| {
        let v = both(&a, 0, 7)?.map(|c| c as u8);
        issue(j, |io| io.cmdprio.level = v)
    }),
    opt(("cmdprio_hint", &[]), "their hint (R,W)", "1", |j, a| {
        let v = both(&a, 0, 1023)?.map(|c| c as u16);
        issue(j, |io| io.cmdprio.hint = v)
    }),
    opt(
        ("cmdprio_bssplit", &[]),
        "priorities by block size: bs/perc[/class/level[/hint]]:...",
        "4k/50",
        |j, a| {
            if j.issue.cmdprio.percentage != [0, 0] {
                return Err(exclusive());
            }
            let [r, w] = per_dir(a.need()?, parse_split_prio)?;
            issue(j, |io| {
                io.cmdprio.bssplit = Some([r.unwrap_or_default(), w.unwrap_or_default()])
            })
        },
    ),
    opt(
        ("atomic", &[]),
        "writes with RWF_ATOMIC (torn-write protection)",
        "1",
        |j, a| {
            let on = a.bool()?;
            issue(j, |io| io.atomic = on)
        },
    ),
    opt(
        ("latency_target", &[]),
        "searches the deepest queue meeting this latency (us)",
        "1000",
        |j, a| {
            let d = a.usecs()?;
            latency(j, |t| t.target = d)
        },
    ),
    opt(
        ("latency_window", &[]),
        "each depth is judged over this long (us)",
        "1000000",
        |j, a| {
            let d = a.usecs()?;
            latency(j, |t| t.window = d)
        },
    ),
    opt(
        ("latency_percentile", &[]),
        "the share of I/Os that must meet the target",
        "99.9",
        |j, a| {
            let p = percent(a.key, a.need()?)?;
            latency(j, |t| t.percentile = p)
        },
    ),
    opt(
        ("latency_run", &[]),
        "keeps adjusting the depth until the job ends",
        "1",
        |j, a| {
            let on = a.bool()?;
            latency(j, |t| t.run = on)
        },
    ),
    opt(
        ("serialize_overlap", &[]),
        "an I/O overlapping one in flight waits for it",
        "1",
        |j, a| {
            let on = a.bool()?;
            issue(j, |io| io.serialize_overlap = on)
        },
    ),
];

fn percent(key: &str, v: &str) -> R<f64> {
    v.trim()
        .parse::<f64>()
        .ok()
        .filter(|p| *p > 0.0 && *p <= 100.0)
        .ok_or_else(|| format!("{key}={v}: expected a percentage above 0, up to 100").into())
}

fn exclusive() -> PlanError {
    "cmdprio_percentage and cmdprio_bssplit are mutually exclusive (as in fio): give one".into()
}

/// A per-direction whole number (`int[,int]`): a single value applies to reads and writes.
fn both(a: &Arg, min: u32, max: u32) -> R<[u32; 2]> {
    let [r, w] = per_dir(a.need()?, |s| parse_u32(a.key, s, min, max))?;
    Ok([r.unwrap_or(0), w.unwrap_or(0)])
}

/// One direction of cmdprio_bssplit: `bs/perc[/class/level[/hint]]:...`.
fn parse_split_prio(v: &str) -> R<Vec<SplitPrio>> {
    let key = "cmdprio_bssplit";
    let mut out = Vec::new();
    for e in v.split(':').map(str::trim) {
        let f: Vec<&str> = e.split('/').map(str::trim).collect();
        if !matches!(f.len(), 2 | 4 | 5) {
            return Err(format!("cmdprio_bssplit: '{e}' is bs/percentage, bs/percentage/class/level or bs/percentage/class/level/hint").into());
        }
        let prio = if f.len() > 2 {
            let hint = f.get(4).map_or(Ok(0), |h| parse_u32(key, h, 0, 1023))?;
            Some(ioprio_value(
                parse_u32(key, f[2], 0, 3)? as u8,
                parse_u32(key, f[3], 0, 7)? as u8,
                hint as u16,
            ))
        } else {
            None
        };
        out.push(SplitPrio {
            bs: block_size(key, f[0])?,
            perc: parse_u32(key, f[1], 0, 100)?,
            prio,
        });
    }
    let mut sizes: Vec<u64> = out.iter().map(|e| e.bs).collect();
    sizes.dedup();
    for bs in sizes {
        let tot: u32 = out.iter().filter(|e| e.bs == bs).map(|e| e.perc).sum();
        if tot > 100 {
            return Err(format!("cmdprio_bssplit={v}: the percentages of {bs}-byte I/Os add up to {tot}, more than 100").into());
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::job::per_io::CmdPrio;
    use crate::plan::job::BlockSize;

    fn job(opts: &[(&str, &str)]) -> Job {
        let mut j = Job::default();
        for (k, v) in opts {
            j.apply(k, Some(v))
                .unwrap_or_else(|e| panic!("{k}={v}: {e}"));
        }
        j
    }

    #[test]
    fn prio_class_and_hint_make_the_workers_ioprio() {
        assert_eq!(Job::default().issue.ioprio(), None);
        let j = job(&[("prioclass", "2"), ("prio", "7")]);
        assert_eq!(j.issue.ioprio(), Some((2 << 13) | 7));
        let j = job(&[("prio", "3")]);
        assert_eq!(
            j.issue.ioprio(),
            Some((2 << 13) | 3),
            "no class: best effort"
        );
        assert!(Job::default().apply("prio", Some("8")).is_err());
    }

    #[test]
    fn trims_take_the_third_block_size_or_the_last_before_it() {
        let bs = |v: &str| job(&[("bs", v)]).trim_bs;
        // None: the writes' size.
        assert_eq!(bs("4k,4k,8k"), Some(BlockSize::Fixed(8192)));
        assert_eq!(bs("4k,16k"), None);
        assert_eq!(bs("2k"), None);
        assert_eq!(bs("4k,"), None);
        assert_eq!(bs("4k,8k,"), None);
        assert_eq!(bs("8k,8k,8k"), None);
        let j = job(&[("bs", "4k,4k,8k"), ("bs", "4k,4k,")]);
        assert_eq!(j.trim_bs, Some(BlockSize::Fixed(8192)), "kept");
        let j = job(&[("bs", "4k,4k,8k"), ("bs", "16k")]);
        assert_eq!(j.trim_bs, None, "all three from the last");
        let j = job(&[("bssplit", "4k/50:8k/50,4k/100,512/25:1k/:2k/:4k/")]);
        let want = Some(BlockSize::Split(vec![
            (512, 25),
            (1024, 25),
            (2048, 25),
            (4096, 25),
        ]));
        assert_eq!(j.trim_bs, want);
        let j = job(&[("bsrange", "1k-4k,1k-4k,512-4k")]);
        assert_eq!(j.trim_bs, Some(BlockSize::Range(512, 4096)));
    }

    #[test]
    fn cmdprio_options_as_in_fios_examples() {
        let j = job(&[
            ("prioclass", "3"),
            ("cmdprio_percentage", "20"),
            ("cmdprio_class", "1"),
        ]);
        let c = &j.issue.cmdprio;
        assert_eq!(c.percentage, [20, 20]);
        assert_eq!(c.implicit(crate::plan::dir::Dir::Read), 1 << 13);
        let j = job(&[("cmdprio_bssplit", "64k/25/1/1:64k/75/3/2:1024k/0,1024k/0")]);
        let s = j.issue.cmdprio.bssplit.clone().unwrap();
        assert_eq!(s[0].len(), 3);
        assert_eq!(s[0][1].prio, Some((3 << 13) | 2));
        assert_eq!(
            j.issue.cmdprio.share(crate::plan::dir::Dir::Read, 65536),
            100
        );
        assert_eq!(
            j.issue.cmdprio.share(crate::plan::dir::Dir::Write, 1 << 20),
            0
        );
        let j = job(&[("cmdprio_bssplit", "1M/10/2/0/1:1M/90/2/0/0")]);
        let c: &CmdPrio = &j.issue.cmdprio;
        assert_eq!(
            c.pick(crate::plan::dir::Dir::Read, 1 << 20, 5),
            Some((2 << 13) | (1 << 3))
        );
        let mut j = job(&[("cmdprio_percentage", "10")]);
        assert!(j
            .apply("cmdprio_bssplit", Some("4k/10"))
            .unwrap_err()
            .to_string()
            .contains("mutually exclusive"));
        assert!(Job::default()
            .apply("cmdprio_bssplit", Some("4k/60:4k/50"))
            .is_err());
    }
}
