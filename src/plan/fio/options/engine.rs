//! Which engine does a job's I/O and how: fio's engine names (those fsbench lacks refused or
//! run on the nearest it has), io_uring's registered buffers and files, where I/O is submitted.

use super::{Arg, Done, Family, FioOpt, Got, Noted, R};
use crate::plan::fio::values::parse_engine;
use crate::plan::job::Job;

const fn opt(
    name: (&'static str, &'static [&'static str]),
    help: &'static str,
    example: &'static str,
    apply: fn(&mut Job, Arg) -> R<Got>,
) -> FioOpt {
    FioOpt::new(Family::Engine, name, help, example, apply)
}

/// fio's io_uring options, which fsbench's io_uring always has on where the kernel allows (it
/// registers its buffers and file): fio without them pins every buffer's pages per I/O and
/// writes 1 MiB blocks up to a quarter slower.
fn registered(a: Arg) -> R<Got> {
    if !a.bool()? {
        return Err(format!("{}=0: fsbench's io_uring always registers its buffers and file where the kernel allows (fio's fixedbufs=1 and registerfiles=1); leave {} out or set it to 1", a.key, a.key).into());
    }
    Ok(Done)
}

pub(super) const OPTIONS: &[FioOpt] = &[
    opt(
        ("ioengine", &[]),
        "sync, psync, pvsync, pvsync2, io_uring, libaio, null (and fio's nearest)",
        "io_uring",
        |j, a| {
            let (engine, note) = parse_engine(a.need()?)?;
            j.engine = engine;
            Ok(note.map_or(Done, Noted))
        },
    ),
    opt(
        ("fixedbufs", &[]),
        "io_uring's registered buffers (always on)",
        "1",
        |_, a| registered(a),
    ),
    opt(
        ("registerfiles", &[]),
        "io_uring's registered files (always on)",
        "1",
        |_, a| registered(a),
    ),
    opt(
        ("io_submit_mode", &[]),
        "inline (offload is run inline)",
        "inline",
        |_, a| {
            match a.need()? {
            "inline" => Ok(Done),
            "offload" => Ok(Noted("io_submit_mode=offload: fsbench submits from the job's own thread (fio's inline); latencies are timed from each I/O's queueing, as with inline".into())),
            o => Err(format!("io_submit_mode={o}: expected inline or offload").into()),
        }
        },
    ),
];
