//! fio's steady state: the criterion a job's IOPS, bandwidth or latency must meet, the window it
//! is judged over and the time before it; given in any order, checked together.

use std::time::Duration;

use super::{Arg, Done, Family, FioOpt, Got, R};
use crate::plan::fio::values::parse_steady;
use crate::plan::job::{Job, Steady};

const fn opt(
    name: (&'static str, &'static [&'static str]),
    help: &'static str,
    example: &'static str,
    apply: fn(&mut Job, Arg) -> R<Got>,
) -> FioOpt {
    FioOpt::new(Family::Steady, name, help, example, apply)
}

pub(super) const OPTIONS: &[FioOpt] = &[
    opt(
        ("steadystate", &["ss"]),
        "the criterion: iops, bw, lat (or _slope):LIMIT[%]",
        "iops_slope:0.3%",
        |j, a| {
            let (kind, limit, pct) = parse_steady(a.need()?)?;
            steady(j, a, |ss| (ss.kind, ss.limit, ss.pct) = (kind, limit, pct))
        },
    ),
    opt(
        ("steadystate_duration", &["ss_dur"]),
        "the window judged (0: not judged)",
        "30s",
        |j, a| {
            let d = a.duration()?;
            if !d.is_zero() && d < Duration::from_secs(1) {
                return Err(format!("{}={}: the window holds one sample a second: give 1s or more (0 turns steady state off)", a.key, a.shown()).into());
            }
            steady(j, a, |ss| ss.dur = d)
        },
    ),
    opt(
        ("steadystate_ramp_time", &["ss_ramp"]),
        "time after ramp_time before the first sample",
        "10s",
        |j, a| {
            let d = a.duration()?;
            steady(j, a, |ss| ss.ramp = d)
        },
    ),
    opt(
        ("steadystate_check_interval", &["ss_interval"]),
        "time between samples (1s or more)",
        "1s",
        |j, a| {
            let d = a.duration()?;
            if d < Duration::from_secs(1) {
                return Err(format!(
                    "{}={}: fio samples at most once a second: give 1s or more",
                    a.key,
                    a.shown()
                )
                .into());
            }
            steady(j, a, |ss| ss.interval = d)
        },
    ),
];

/// Sets part of the job's steady state, then checks fio's rule: the window is a whole number
/// of intervals, more than one.
fn steady(j: &mut Job, a: Arg, set: impl FnOnce(&mut Steady)) -> R<Got> {
    let ss = j.steadystate.get_or_insert_with(Default::default);
    set(ss);
    let (dur, every) = (ss.dur.as_millis(), ss.every().as_millis());
    if dur > 0 && (dur % every != 0 || dur <= every) {
        return Err(format!("{}={}: ss_dur ({} s) must be a multiple of ss_interval ({} s) and longer, as fio requires", a.key, a.shown(), ss.dur.as_secs_f64(), ss.every().as_secs_f64()).into());
    }
    Ok(Done)
}
