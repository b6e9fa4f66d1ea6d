//! How a job's writes reach the device: direct or through the page cache, files opened with
//! O_SYNC or O_DSYNC, an fsync or fdatasync every so many writes, one at the end.

use super::{Arg, Done, Family, FioOpt, Got, R};
use crate::plan::job::{Job, OpenSync};

const fn opt(
    name: (&'static str, &'static [&'static str]),
    help: &'static str,
    example: &'static str,
    apply: fn(&mut Job, Arg) -> R<Got>,
) -> FioOpt {
    FioOpt::new(Family::Sync, name, help, example, apply)
}

pub(super) const OPTIONS: &[FioOpt] = &[
    opt(
        ("direct", &[]),
        "O_DIRECT: around the page cache",
        "1",
        |j, a| {
            j.direct = a.bool()?;
            Ok(Done)
        },
    ),
    opt(
        ("buffered", &[]),
        "through the page cache (direct's opposite)",
        "1",
        |j, a| {
            j.direct = !a.bool()?;
            Ok(Done)
        },
    ),
    opt(
        ("sync", &[]),
        "files opened with O_SYNC (1) or O_DSYNC (dsync)",
        "dsync",
        |j, a| {
            j.open_sync = match a.need()? {
                "0" | "none" | "false" => OpenSync::None,
                "1" | "sync" | "true" => OpenSync::Sync,
                "dsync" => OpenSync::Dsync,
                o => return Err(format!("sync={o}: expected 0, 1 (O_SYNC) or dsync").into()),
            };
            Ok(Done)
        },
    ),
    opt(("fsync", &[]), "an fsync every N writes", "32", |j, a| {
        j.fsync = a.u32(0, u32::MAX)?;
        Ok(Done)
    }),
    opt(
        ("fdatasync", &[]),
        "an fdatasync every N writes",
        "32",
        |j, a| {
            j.fdatasync = a.u32(0, u32::MAX)?;
            Ok(Done)
        },
    ),
    opt(
        ("end_fsync", &[]),
        "an fsync when the job ends",
        "1",
        |j, a| {
            j.end_fsync = a.bool()? || j.end_fsync;
            Ok(Done)
        },
    ),
    opt(
        ("fsync_on_close", &[]),
        "an fsync as each file closes (at the job's end)",
        "1",
        |j, a| {
            j.end_fsync = a.bool()? || j.end_fsync;
            Ok(Done)
        },
    ),
];
