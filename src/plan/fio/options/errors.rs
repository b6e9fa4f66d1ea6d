//! What a job does on errors: the failed reads, writes and verifies it counts and goes past
//! (which errnos), whether it says each, and writing until the filesystem is full.

use super::{Arg, Done, Family, FioOpt, Got, Noted, R};
use crate::plan::job::{ContinueOn, Failing, Job, SizeSpec};

const fn opt(
    name: (&'static str, &'static [&'static str]),
    help: &'static str,
    example: &'static str,
    apply: fn(&mut Job, Arg) -> R<Got>,
) -> FioOpt {
    FioOpt::new(Family::Errors, name, help, example, apply)
}

pub(super) const OPTIONS: &[FioOpt] = &[
    opt(
        ("continue_on_error", &[]),
        "failures gone past: none, read, write, io, verify or all",
        "io",
        |j, a| {
            use Failing::{Read, Verify, Write};
            j.continue_on_error = match a.need()? {
                "none" | "0" => ContinueOn::NONE,
                "read" => ContinueOn::of(&[Read]),
                "write" => ContinueOn::of(&[Write]),
                "io" => ContinueOn::of(&[Read, Write]),
                "verify" => ContinueOn::of(&[Verify]),
                "all" | "1" => ContinueOn::of(&[Read, Write, Verify]),
                o => {
                    return Err(format!(
                        "continue_on_error={o}: expected none, read, write, io, verify or all"
                    )
                    .into())
                }
            };
            Ok(Done)
        },
    ),
    opt(
        ("ignore_error", &[]),
        "the errnos gone past, per direction (READ,WRITE,VERIFY)",
        ",ENOSPC",
        |j, a| {
            j.ignore_error = parse_ignore_error(a.need()?)?;
            // As in fio: a direction with a list goes on past its errors.
            let kinds = [Failing::Read, Failing::Write, Failing::Verify];
            for (k, l) in kinds.into_iter().zip(&j.ignore_error) {
                if !l.is_empty() {
                    j.continue_on_error = j.continue_on_error.with(k);
                }
            }
            Ok(Done)
        },
    ),
    opt(
        ("error_dump", &[]),
        "says every error (fsbench: the count and the first)",
        "1",
        |_, a| {
            match a.bool()? {
            true => Ok(Noted("error_dump: fsbench notes how many errors the job went past and the first of them (with its errno, call and offset), not each one".into())),
            false => Ok(Done),
        }
        },
    ),
    opt(
        ("fill_device", &["fill_fs"]),
        "writes until the filesystem is full (ENOSPC ends it)",
        "1",
        |j, a| {
            j.fill_device = a.bool()?;
            if j.fill_device && j.size.is_none() {
                j.size = Some(SizeSpec::Percent(100.0));
            }
            Ok(Done)
        },
    ),
];

/// fio's ignore_error: `READ,WRITE,VERIFY` lists, each of errnos separated by `:` (a name such
/// as ENOSPC, or a number, decimal or 0x hex).
pub(super) fn parse_ignore_error(v: &str) -> R<[Vec<i32>; 3]> {
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
