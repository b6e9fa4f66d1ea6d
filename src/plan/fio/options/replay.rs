//! Recording a job's I/O as an iolog, and replaying one (or a blktrace): which trace, how fast,
//! onto which file, with its offsets scaled and aligned and some kinds of operation left out.

use super::{Arg, Done, Family, FioOpt, Got, Noted, R};
use crate::plan::job::{Job, ReplaySpec};

const fn opt(
    name: (&'static str, &'static [&'static str]),
    help: &'static str,
    example: &'static str,
    apply: fn(&mut Job, Arg) -> R<Got>,
) -> FioOpt {
    FioOpt::new(Family::Replay, name, help, example, apply)
}

/// The job's replay settings, made by the first replay option.
fn replay(j: &mut Job) -> &mut ReplaySpec {
    j.replay.get_or_insert_with(Default::default)
}

pub(super) const OPTIONS: &[FioOpt] = &[
    opt(
        ("write_iolog", &[]),
        "records the job's I/O as a version 3 iolog in this file",
        "job.iolog",
        |j, a| {
            j.write_iolog = Some(a.need()?.to_string());
            Ok(Done)
        },
    ),
    opt(
        ("read_iolog", &[]),
        "replays this iolog (or blktrace) instead of rw",
        "job.iolog",
        |j, a| {
            let f = a.need()?;
            if f == "-" || (f.contains(':') && !f.contains("\\:")) {
                return Err(format!("read_iolog={f}: fsbench replays one iolog file per job (not standard input, nor a : separated list); give one file, a job per trace").into());
            }
            replay(j).file = f.replace("\\:", ":");
            Ok(Done)
        },
    ),
    opt(
        ("read_iolog_chunked", &[]),
        "reads the iolog in chunks (fsbench reads it whole)",
        "1",
        |_, a| {
            a.bool()?;
            Ok(Noted("read_iolog_chunked: fsbench reads the whole iolog before the job starts (it checks every line first); the option has no effect".into()))
        },
    ),
    opt(
        ("replay_no_stall", &[]),
        "as fast as it can, not at the trace's times",
        "1",
        |j, a| {
            let on = a.bool()?;
            replay(j).no_stall = on;
            Ok(Done)
        },
    ),
    opt(
        ("replay_time_scale", &[]),
        "percent of the trace's rate",
        "200",
        |j, a| {
            let pct = a.u32(1, 1_000_000)?;
            replay(j).time_scale = pct;
            Ok(Done)
        },
    ),
    opt(
        ("replay_scale", &[]),
        "offsets divided by this",
        "2",
        |j, a| {
            let n = a.u64()?.max(1);
            replay(j).scale = n;
            Ok(Done)
        },
    ),
    opt(
        ("replay_align", &[]),
        "offsets rounded down to this power of 2",
        "4k",
        |j, a| {
            let b = a.bytes()?;
            if b != 0 && !b.is_power_of_two() {
                return Err(
                    format!("replay_align={}: must be a power of 2 (e.g. 4k)", a.shown()).into(),
                );
            }
            replay(j).align = b;
            Ok(Done)
        },
    ),
    opt(
        ("replay_redirect", &[]),
        "every I/O of the trace to this file or device",
        "/dev/sdb",
        |j, a| {
            // Every I/O of the trace goes to this one file or device (fio's semantics): the job's.
            let f = a.need()?.to_string();
            replay(j);
            j.filename = Some(f);
            Ok(Done)
        },
    ),
    opt(
        ("replay_skip", &[]),
        "kinds left out: read, write, trim, sync",
        "trim,sync",
        |j, a| {
            let mut skip = Vec::new();
            for k in a.need()?.split(',').map(str::trim) {
                if !["read", "write", "trim", "sync"].contains(&k) {
                    return Err(format!(
                        "replay_skip={}: '{k}' is not read, write, trim or sync",
                        a.shown()
                    )
                    .into());
                }
                skip.push(k.to_string());
            }
            replay(j).skip = skip;
            Ok(Done)
        },
    ),
];
