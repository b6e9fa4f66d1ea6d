//! What a job reports and how it times: its latency percentiles, submission and completion
//! latency apart, and fio's clock and unit options (fsbench times every I/O its own way).

use super::{Arg, Done, Family, FioOpt, Got, Noted, R};
use crate::plan::job::Job;
use crate::plan::PlanError;

const fn opt(
    name: (&'static str, &'static [&'static str]),
    help: &'static str,
    example: &'static str,
    apply: fn(&mut Job, Arg) -> R<Got>,
) -> FioOpt {
    FioOpt::new(Family::Report, name, help, example, apply)
}

/// What fsbench says of fio's ways to time I/Os: it times each its one way.
fn timed(a: Arg) -> R<Got> {
    Ok(Noted(format!("{}: fsbench times every I/O from queue to completion with its own clock (the CPU's counter where the kernel keeps time by it, else the monotonic clock), whatever this says", a.key)))
}

pub(super) const OPTIONS: &[FioOpt] = &[
    opt(
        ("percentile_list", &[]),
        "latency percentiles reported besides the usual",
        "50:99.9",
        |j, a| {
            j.percentiles = a
                .need()?
                .split(':')
                .map(|p| {
                    p.trim()
                        .parse::<f64>()
                        .ok()
                        .filter(|x| *x > 0.0 && *x <= 100.0)
                        .ok_or_else(|| {
                            PlanError(format!(
                                "percentile_list: '{p}' is not a percentile from 0 to 100"
                            ))
                        })
                })
                .collect::<R<Vec<f64>>>()?;
            Ok(Done)
        },
    ),
    opt(
        ("slat_percentiles", &[]),
        "submission and completion latency timed apart",
        "1",
        |j, a| {
            j.split_lat |= a.bool()?;
            Ok(Done)
        },
    ),
    opt(
        ("clat_percentiles", &[]),
        "completion latency timed apart from submission",
        "1",
        |j, a| {
            j.split_lat |= a.bool()?;
            Ok(Done)
        },
    ),
    opt(
        ("lat_percentiles", &[]),
        "percentiles of the whole latency (always)",
        "1",
        |_, a| {
            a.bool()?;
            Ok(Done)
        },
    ),
    opt(
        ("disk_util", &[]),
        "the device's utilization (fsbench samples it always)",
        "1",
        |_, a| {
            a.bool()?;
            Ok(Done)
        },
    ),
    opt(
        ("gtod_reduce", &[]),
        "fewer clock reads (fsbench's are cheap)",
        "1",
        |_, a| {
            a.bool()?;
            timed(a)
        },
    ),
    opt(
        ("disable_lat", &[]),
        "no whole latency (timed anyway)",
        "1",
        |_, a| {
            a.bool()?;
            timed(a)
        },
    ),
    opt(
        ("disable_clat", &[]),
        "no completion latency (timed anyway)",
        "1",
        |_, a| {
            a.bool()?;
            timed(a)
        },
    ),
    opt(
        ("disable_slat", &[]),
        "no submission latency (timed anyway)",
        "1",
        |_, a| {
            a.bool()?;
            timed(a)
        },
    ),
    opt(
        ("clocksource", &[]),
        "fio's clock (fsbench uses its own)",
        "clock_gettime",
        |_, a| {
            a.need()?;
            timed(a)
        },
    ),
    opt(
        ("kb_base", &[]),
        "fio's unit base for its output",
        "1024",
        |_, a| {
            a.need()?;
            Ok(Done)
        },
    ),
    opt(
        ("unit_base", &[]),
        "fio's bits or bytes for its output",
        "8",
        |_, a| {
            a.need()?;
            Ok(Done)
        },
    ),
];
