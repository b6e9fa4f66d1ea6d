//! What a job's writes carry: fresh data (refilled, or stamped afresh), a compressible share, a
//! deduplicable share and its working set, a pattern (or a pattern file's bytes), and where its
//! buffers sit in memory.

use super::{Arg, Done, Family, FioOpt, Got, Noted, R};
use crate::plan::fio::pattern::{has_file, parse_pattern, parse_pattern_with};
use crate::plan::job::Job;

const fn opt(
    name: (&'static str, &'static [&'static str]),
    help: &'static str,
    example: &'static str,
    apply: fn(&mut Job, Arg) -> R<Got>,
) -> FioOpt {
    FioOpt::new(Family::Data, name, help, example, apply)
}

pub(super) const OPTIONS: &[FioOpt] = &[
    opt(
        ("refill_buffers", &[]),
        "every write's buffer regenerated (0: stamped afresh)",
        "1",
        |j, a| {
            j.refill_buffers = Some(a.bool()?);
            Ok(Done)
        },
    ),
    opt(
        ("scramble_buffers", &[]),
        "a fresh stamp per sector (fsbench always; 0 is refused)",
        "1",
        |_, a| {
            if !a.bool()? {
                return Err("scramble_buffers=0 would write one repeated buffer; fsbench always scrambles (or refills, with refill_buffers=1)".into());
            }
            Ok(Done)
        },
    ),
    opt(("zero_buffers", &[]), "writes of zeros", "1", |j, a| {
        if a.bool()? {
            j.compress_pct = 100;
        }
        Ok(Done)
    }),
    opt(
        ("buffer_compress_percentage", &[]),
        "percent of each 4 KiB that compresses",
        "50",
        |j, a| {
            j.compress_pct = a.u32(0, 100)?;
            Ok(Done)
        },
    ),
    opt(
        ("buffer_compress_chunk", &[]),
        "the compressible chunk (fsbench: per 4 KiB)",
        "4k",
        |_, a| {
            a.u64()?;
            Ok(Noted("buffer_compress_chunk: fsbench's compressible share is laid out per 4 KiB (the start of every 4 KiB is zeros), whatever the chunk".into()))
        },
    ),
    opt(
        ("dedupe_percentage", &[]),
        "percent of writes that repeat earlier data",
        "50",
        |j, a| {
            j.dedupe_pct = a.u32(0, 100)?;
            Ok(Done)
        },
    ),
    opt(
        ("dedupe_mode", &[]),
        "what a deduped write repeats: repeat or working_set",
        "working_set",
        |j, a| {
            j.dedupe_working_set = a.choice(&[("repeat", false), ("working_set", true)])?;
            Ok(Done)
        },
    ),
    opt(
        ("dedupe_working_set_percentage", &[]),
        "the working set's share of the size",
        "5",
        |j, a| {
            j.dedupe_ws_pct = Some(a.u32(0, 100)?);
            Ok(Done)
        },
    ),
    opt(
        ("dedupe_global", &[]),
        "one working set for every job that sets it",
        "1",
        |j, a| {
            j.dedupe_global = a.bool()?;
            Ok(Done)
        },
    ),
    opt(
        ("buffer_pattern", &[]),
        "the bytes every write repeats (or a 'file's)",
        "0xdeadbeef",
        |j, a| {
            let p = a.need()?;
            if pattern_file(j, a.key, p)? {
                j.buffer_pattern = vec![0];
            } else {
                j.buffer_pattern = parse_pattern(a.key, p)?;
            }
            Ok(Done)
        },
    ),
    opt(
        ("iomem", &["mem"]),
        "where buffers come from: malloc, or mmap/mmapshared/shm (page-aligned)",
        "malloc",
        |j, a| {
            match a.need()? {
            "malloc" => j.malloc_buffers = true,
            "mmap" | "mmapshared" | "shm" => j.malloc_buffers = false,
            o => return Err(format!("{}={o}: fsbench takes its buffers from malloc (fio's default) or as mmap/mmapshared/shm memory (page-aligned); huge pages, a backing file and GPU memory are not supported: run this job with fio", a.key).into()),
        }
            Ok(Done)
        },
    ),
    opt(
        ("iomem_align", &["mem_align"]),
        "buffers this many bytes past a page boundary",
        "512",
        |j, a| {
            j.mem_align = Some(a.u32(0, 1 << 20)?);
            Ok(Done)
        },
    ),
];

/// A pattern with a `'file'` piece (buffer_pattern or verify_pattern): its other pieces checked
/// now, kept as written (the file is read when the job runs or is checked). Whether it had one.
pub(super) fn pattern_file(j: &mut Job, key: &str, p: &str) -> R<bool> {
    j.pattern_src.retain(|(k, _)| k != key);
    if !has_file(p) {
        return Ok(false);
    }
    let none = |_: &str| Ok(vec![0]);
    parse_pattern_with(key, p, Some(&none))?;
    j.pattern_src.push((key.to_string(), p.to_string()));
    Ok(true)
}
