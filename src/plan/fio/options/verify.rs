//! How a job's writes are checked: the header each block carries (a digest, or a pattern), its
//! interval and place, when blocks are read back, what a bad one does, and the state a writer
//! leaves for a later reader.

use super::{Arg, Done, Family, FioOpt, Got, Noted, R};
use crate::plan::fio::values::{parse_pattern, parse_verify_kind};
use crate::plan::job::{Job, Verify};

const fn opt(
    name: (&'static str, &'static [&'static str]),
    help: &'static str,
    example: &'static str,
    apply: fn(&mut Job, Arg) -> R<Got>,
) -> FioOpt {
    FioOpt::new(Family::Verify, name, help, example, apply)
}

impl Job {
    /// The job's verify settings, made (checking nothing) by the first companion option.
    fn verifying(&mut self) -> &mut Verify {
        self.verify.get_or_insert_with(|| Verify {
            kind: "null".into(),
            ..Verify::default()
        })
    }
}

pub(super) const OPTIONS: &[FioOpt] = &[
    opt(
        ("verify", &[]),
        "the header each written block carries: md5, crc32c, sha256, pattern, ...",
        "crc32c",
        |j, a| {
            let kind = parse_verify_kind(a.need()?)?;
            j.verify = kind.map(|k| Verify {
                kind: k.into(),
                ..j.verify.clone().unwrap_or_default()
            });
            Ok(Done)
        },
    ),
    opt(
        ("do_verify", &[]),
        "reads back what the job wrote once its writing is done",
        "1",
        |j, a| {
            j.verifying().after_write = a.bool()?;
            Ok(Done)
        },
    ),
    opt(
        ("verify_only", &[]),
        "only checks what an earlier run wrote",
        "1",
        |j, a| {
            j.verifying().only = a.bool()?;
            Ok(Done)
        },
    ),
    opt(
        ("verify_pattern", &[]),
        "the bytes written and checked (alone: verify=pattern)",
        "0xdeadbeef",
        |j, a| {
            let p = a.need()?;
            // With verify= given before or after it, that kind stands; alone it is verify=pattern.
            let unset = j.verify.is_none();
            let bytes = if super::data::pattern_file(j, a.key, p)? {
                parse_pattern("0")?
            } else {
                parse_pattern(p)?
            };
            let v = j.verifying();
            v.pattern = bytes;
            if unset {
                v.kind = "pattern".into();
            }
            Ok(Done)
        },
    ),
    opt(
        ("verify_interval", &[]),
        "bytes each header covers",
        "4k",
        |j, a| {
            j.verifying().interval = a.block()?;
            Ok(Done)
        },
    ),
    opt(
        ("verify_offset", &[]),
        "where in each interval the header sits",
        "0",
        |j, a| {
            j.verifying().offset = a.u64()?;
            Ok(Done)
        },
    ),
    opt(
        ("verify_fatal", &[]),
        "the first bad block stops the job",
        "1",
        |j, a| {
            j.verifying().fatal = a.bool()?;
            Ok(Done)
        },
    ),
    opt(
        ("verify_dump", &[]),
        "writes each bad block beside the file",
        "1",
        |j, a| {
            j.verifying().dump = a.bool()?;
            Ok(Done)
        },
    ),
    opt(
        ("verify_backlog", &[]),
        "verify every N blocks (fsbench: once writing is done)",
        "32",
        |j, a| {
            j.verifying().backlog = a.u64()?;
            Ok(Noted("verify_backlog: fsbench checks the blocks once the job's writing is done, not every N blocks while it writes (the same blocks, checked later)".into()))
        },
    ),
    opt(
        ("verify_state_save", &[]),
        "a writer keeps what it wrote in fio's state file",
        "1",
        |j, a| {
            j.verify_state_save = a.bool()?;
            Ok(Done)
        },
    ),
    opt(
        ("verify_state_load", &[]),
        "a reader checks only what the writer's state lists",
        "1",
        |j, a| {
            j.verify_state_load = a.bool()?;
            Ok(Done)
        },
    ),
    opt(
        ("verify_async", &[]),
        "verify threads (fsbench checks in the worker)",
        "0",
        |_, a| {
            a.u32(0, u32::MAX)?;
            Ok(Noted(format!("verify_async={}: fsbench checks each block in the worker that reads it (fio's verify_async=0); the blocks checked are the same, only the threads differ", a.shown())))
        },
    ),
    opt(
        ("verify_async_cpus", &[]),
        "the verify threads' CPUs (no effect)",
        "0-3",
        |_, a| {
            super::cpus::parse_cpus(a.need()?)
                .map_err(|e| e.0.replacen("cpus_allowed", a.key, 1))?;
            Ok(Noted(format!("verify_async_cpus={}: fsbench has no verify threads (it checks in the worker, whose CPUs cpus_allowed sets); the option has no effect", a.shown())))
        },
    ),
    opt(
        ("experimental_verify", &[]),
        "fio's replayed verify (fsbench remembers the blocks)",
        "1",
        |_, a| {
            match a.bool()? {
            true => Ok(Noted("experimental_verify: fsbench checks the blocks the job wrote once its writing is done, each against its own header (fio's experimental verify replays the job's offsets to find them; fsbench remembers them): the same blocks are checked".into())),
            false => Ok(Done),
        }
        },
    ),
    opt(
        ("verify_write_sequence", &[]),
        "fio's write sequence numbers (fsbench's headers have none)",
        "1",
        |_, a| {
            a.bool()?;
            Ok(Noted("verify_write_sequence: fsbench's verify header carries no write sequence number (only what identifies the block and its checksum): there is nothing to check or skip".into()))
        },
    ),
];
