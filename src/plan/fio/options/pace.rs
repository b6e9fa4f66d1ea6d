//! How fast a job goes: its rates per direction (and the rate it must not fall below), pauses
//! after every so many I/Os, its share of a flow of jobs, and how it batches submissions and
//! completions.

use std::time::Duration;

use super::{Arg, Done, Family, FioOpt, Got, Noted, R};
use crate::plan::fio::values::{parse_u64, per_dir};
use crate::plan::job::Job;

const fn opt(
    name: (&'static str, &'static [&'static str]),
    help: &'static str,
    example: &'static str,
    apply: fn(&mut Job, Arg) -> R<Got>,
) -> FioOpt {
    FioOpt::new(Family::Pace, name, help, example, apply)
}

/// A per-direction rate (`R[,W]`).
fn rate(a: &Arg) -> R<[Option<u64>; 2]> {
    per_dir(a.need()?, |s| parse_u64(a.key, s))
}

/// What fsbench says of a submission batch: it submits every I/O at once.
fn submits_each(a: Arg) -> R<Got> {
    a.u32(0, 65536)?;
    Ok(Noted(format!("{}: fsbench submits each I/O as soon as a slot is free (fio's iodepth_batch_submit=1, iodepth_low=iodepth); the option has no effect", a.key)))
}

/// What fsbench says of a completion batch: it waits for one.
fn reaps(a: &Arg) -> Got {
    Noted(format!("{}: fsbench waits for one completion when its queue is full and takes up to iodepth_batch_complete_max of them per reap (libaio: per io_getevents), as fio does with iodepth_batch_complete_min=1; a larger minimum is not waited for", a.key))
}

pub(super) const OPTIONS: &[FioOpt] = &[
    opt(
        ("rate", &[]),
        "bytes per second of reads and writes (R,W)",
        "10m",
        |j, a| {
            j.rate = rate(&a)?;
            Ok(Done)
        },
    ),
    opt(
        ("rate_iops", &[]),
        "I/Os per second of reads and writes (R,W)",
        "1000",
        |j, a| {
            j.rate_iops = rate(&a)?;
            Ok(Done)
        },
    ),
    opt(
        ("rate_min", &["ratemin"]),
        "the job fails below this bandwidth (R,W)",
        "1m",
        |j, a| {
            j.rate_min = rate(&a)?;
            Ok(Done)
        },
    ),
    opt(
        ("rate_cycle", &["ratecycle"]),
        "the window of rate_min (fsbench: the whole run)",
        "1000",
        |_, a| {
            a.u64()?;
            Ok(Noted(
                "rate_cycle: fsbench judges rate_min over the job's whole run, not per cycle"
                    .into(),
            ))
        },
    ),
    opt(
        ("rate_process", &[]),
        "evenly spaced (linear) or Poisson arrivals",
        "poisson",
        |j, a| {
            j.rate_poisson = a.choice(&[("linear", false), ("poisson", true)])?;
            Ok(Done)
        },
    ),
    opt(
        ("thinktime", &[]),
        "a pause after every thinktime_blocks I/Os (us)",
        "100",
        |j, a| {
            j.thinktime = Some(a.usecs()?);
            Ok(Done)
        },
    ),
    opt(
        ("thinktime_spin", &[]),
        "the first part of the pause spent busy (us)",
        "100",
        |j, a| {
            j.thinktime_spin = Some(a.usecs()?);
            Ok(Done)
        },
    ),
    opt(
        ("thinktime_blocks", &[]),
        "I/Os between pauses",
        "8",
        |j, a| {
            j.thinktime_blocks = a.u32(1, u32::MAX)?;
            Ok(Done)
        },
    ),
    opt(
        ("flow", &[]),
        "the job's weight in its flow (fio's flow control)",
        "8",
        |j, a| {
            let w: i64 = a.need()?.parse().map_err(|_| {
                format!(
                    "flow={}: expected a whole number (the job's weight)",
                    a.shown()
                )
            })?;
            if w < 0 {
                return Err(format!("flow={w}: fsbench takes fio's positive weights only (the share of the flow's I/Os this job gets)").into());
            }
            j.flow = w as u64;
            Ok(Done)
        },
    ),
    opt(
        ("flow_id", &[]),
        "the flow the job belongs to",
        "1",
        |j, a| {
            j.flow_id = a.u64()?;
            Ok(Done)
        },
    ),
    opt(
        ("flow_sleep", &[]),
        "the wait when ahead of its share (us)",
        "100",
        |j, a| {
            j.flow_sleep = Some(Duration::from_micros(a.u64()?));
            Ok(Done)
        },
    ),
    opt(
        ("iodepth_batch_submit", &["iodepth_batch"]),
        "I/Os submitted together (fsbench: each at once)",
        "1",
        |_, a| submits_each(a),
    ),
    opt(
        ("iodepth_low", &[]),
        "the depth below which a batch is submitted (no effect)",
        "1",
        |_, a| submits_each(a),
    ),
    opt(
        ("iodepth_batch_complete_min", &["iodepth_batch_complete"]),
        "completions waited for at least",
        "1",
        |j, a| {
            j.reap_min = Some(a.u32(0, 65536)?);
            Ok(reaps(&a))
        },
    ),
    opt(
        ("iodepth_batch_complete_max", &[]),
        "completions taken per reap at most",
        "16",
        |j, a| {
            j.reap_max = Some(a.u32(0, 65536)?);
            Ok(reaps(&a))
        },
    ),
];
