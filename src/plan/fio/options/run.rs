//! How many workers a job runs and for how long: its name, numjobs, reporting groups, the bytes,
//! I/Os, passes or time that end it, when it starts, and which jobs wait for or end others.

use super::{Arg, Done, Family, FioOpt, Got, Noted, R};
use crate::plan::fio::values::parse_fio_size;
use crate::plan::job::ExitWhat;
use crate::plan::job::Job;

const fn opt(
    name: (&'static str, &'static [&'static str]),
    help: &'static str,
    example: &'static str,
    apply: fn(&mut Job, Arg) -> R<Got>,
) -> FioOpt {
    FioOpt::new(Family::Run, name, help, example, apply)
}

pub(super) const OPTIONS: &[FioOpt] = &[
    opt(("name", &[]), "the job's name", "randread", |j, a| {
        j.name = a.need()?.to_string();
        Ok(Done)
    }),
    opt(
        ("description", &[]),
        "a description (kept out of the run)",
        "x",
        |_, _| Ok(Done),
    ),
    opt(
        ("thread", &[]),
        "threads rather than processes (fsbench's workers are threads)",
        "1",
        |_, a| {
            a.bool()?;
            Ok(Done)
        },
    ),
    opt(("numjobs", &[]), "workers of the job", "4", |j, a| {
        j.numjobs = a.u32(1, 4096)?;
        Ok(Done)
    }),
    opt(
        ("group_reporting", &[]),
        "one record for the job's workers together",
        "1",
        |j, a| {
            j.group_reporting = a.bool()?;
            Ok(Done)
        },
    ),
    opt(
        ("new_group", &[]),
        "starts a new reporting group",
        "1",
        |j, a| {
            j.new_group = a.bool()?;
            Ok(Done)
        },
    ),
    opt(("loops", &[]), "passes over the region", "3", |j, a| {
        j.loops = a.u32(1, u32::MAX)?;
        Ok(Done)
    }),
    opt(
        ("io_size", &["io_limit"]),
        "bytes of I/O before the job ends",
        "1G",
        |j, a| {
            let v = a.need()?;
            j.io_size = Some(parse_fio_size(v).map_err(|e| format!("{}: {e}", a.key))?);
            Ok(Done)
        },
    ),
    opt(
        ("number_ios", &[]),
        "I/Os before the job ends",
        "1000",
        |j, a| {
            j.number_ios = Some(a.u64()?);
            Ok(Done)
        },
    ),
    opt(
        ("runtime", &["timeout"]),
        "how long the job runs at most (0: no limit, as fio)",
        "30s",
        |j, a| {
            j.runtime = Some(a.duration()?).filter(|d| !d.is_zero());
            Ok(Done)
        },
    ),
    opt(
        ("time_based", &[]),
        "the runtime ends the job, whatever it has done",
        "1",
        |j, a| {
            j.time_based = a.bool()?;
            Ok(Done)
        },
    ),
    opt(
        ("ramp_time", &[]),
        "time run before the figures start",
        "10s",
        |j, a| {
            j.ramp_time = Some(a.duration()?);
            Ok(Done)
        },
    ),
    opt(
        ("startdelay", &[]),
        "the job starts this long after the others of its group",
        "30s",
        |j, a| {
            let d = a.need()?;
            if d.contains('-') {
                return Err(format!("startdelay={d}: a random start delay (a range) is not supported; give one time").into());
            }
            j.startdelay = Some(a.duration()?);
            Ok(Done)
        },
    ),
    opt(
        ("stonewall", &["wait_for_previous"]),
        "waits for the jobs before it: a new phase",
        "1",
        |j, a| {
            j.stonewall = a.bool()?;
            Ok(Done)
        },
    ),
    opt(
        ("wait_for", &[]),
        "starts once every worker of this earlier job is done",
        "writers",
        |j, a| {
            j.wait_for = Some(a.need()?.to_string());
            Ok(Done)
        },
    ),
    opt(
        ("exitall", &[]),
        "when a worker of it ends, the jobs of exit_what end too",
        "1",
        |j, a| {
            j.exitall = a.bool()?;
            Ok(Done)
        },
    ),
    opt(
        ("exit_what", &[]),
        "which jobs exitall ends: group, stonewall or all",
        "group",
        |j, a| {
            j.exit_what = a.choice(&[
                ("group", ExitWhat::Group),
                ("stonewall", ExitWhat::Stonewall),
                ("all", ExitWhat::All),
            ])?;
            Ok(Done)
        },
    ),
    opt(
        ("threads", &[]),
        "fio's tiobench profile's workers (no effect in a job file)",
        "1",
        |_, a| {
            a.u32(1, u32::MAX)?;
            Ok(Noted(format!("threads={}: fio reads this option only in its tiobench profile (profile=tiobench); in a job file it has no effect in fio, nor here (numjobs sets the workers)", a.shown())))
        },
    ),
];

/// fio's wait_for, read once every job is known: the waitee is a job before the waiter (fio
/// allows no forward reference) with a name of its own. The waiting itself is the block
/// workload's (`workload::block::waits`).
pub fn wait_for(jobs: &mut [Job]) -> Result<(), String> {
    for i in 0..jobs.len() {
        let Some(x) = jobs[i].wait_for.clone() else {
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
