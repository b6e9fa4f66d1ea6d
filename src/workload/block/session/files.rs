//! A worker's files: opening its engine over them, laying them out, and reading back what a
//! verifying job wrote to each.

use crate::plan::units::Span;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use super::super::resolve::Worker;
use super::super::{fmt, writes};
use crate::engine::{self, IoEngine};
use crate::frame::{RunError, WorkerOut};
use crate::io::files::PassEnds;
use crate::io::worker::Source;
use crate::io::{self, WriteData};
use crate::metrics::name as metric;
use crate::plan::job::{EngineKind, Job, OpenSync};

/// Reads back what a verifying job wrote and checks it; a bad block fails the job in fio's words.
pub(super) fn verify_written(job: &Job, w: &Worker, written: &[(u64, u32)], out: &mut WorkerOut) {
    let Some(ver) = &job.verify else { return };
    let v = io::verify::Verifier::new(ver, w.plan.seed);
    if !v.checks() {
        return;
    }
    // Each file's writes, read back from it (the loop's offsets put file f at f x stride).
    let stride = w.plan.file_stride();
    let mut rb = io::verify::ReadBack::default();
    let mut bad_path = &w.path;
    for (f, path) in w.files().enumerate() {
        let mine: std::borrow::Cow<[(u64, u32)]> = if w.others.is_empty() {
            written.into()
        } else {
            let range = f as u64 * stride..(f as u64 + 1) * stride;
            written
                .iter()
                .copied()
                .filter(|x| range.contains(&x.0))
                .collect::<Vec<_>>()
                .into()
        };
        let one = io::verify::read_back(
            (path, f as u64 * stride),
            &mine,
            &v,
            job.direct,
            ver.fatal,
            ver.dump,
        );
        if rb.io_error.is_none() && rb.first.is_none() {
            bad_path = path;
        }
        rb.add(one);
        if ver.fatal && (rb.io_error.is_some() || rb.first.is_some()) {
            break;
        }
    }
    out.counters.insert(metric::VERIFY_BLOCKS, rb.blocks as f64);
    out.counters.insert(metric::VERIFY_BYTES, rb.bytes as f64);
    out.counters.insert(metric::VERIFY_ERRORS, rb.errors as f64);
    out.counters.insert(metric::VERIFY_S, rb.secs);
    out.counters
        .insert(metric::VERIFY_SKIPPED, rb.skipped as f64);
    out.how.push(format!("verify read back {}", rb.how));
    let failure = match (rb.io_error, rb.first) {
        (Some(f), _) => Some(f),
        (None, Some(m)) => Some(io::Failure {
            op: "verify".into(),
            message: m.describe(&bad_path.display().to_string()),
            offset: Some(m.offset),
            ..Default::default()
        }),
        _ => None,
    };
    if let Some(f) = failure {
        let f = f.path(bad_path);
        out.error = Some(if rb.errors > 1 {
            format!("{f} ({} bad blocks in all)", rb.errors)
        } else {
            f.to_string()
        });
        out.failure = Some(f);
    }
}

/// A worker's engine, how it runs (for the record), and (a fio job file's buffered job with
/// fio's invalidate) its files again, for dropping their cached pages when a pass ends
/// (`io::Live::invalidate`).
type Prepared = (engine::Engine, Vec<String>, Vec<File>);

/// Opens a worker's engine over its files; keeps them open twice when its plan drops their
/// cached pages at each pass's end and they are buffered.
pub(super) fn open_engine(job: &Job, w: &Worker) -> Result<Prepared, String> {
    let def = engine::def(job.engine);
    // One buffer per slot: iodepth of them, or the ring of write buffers (io::data).
    let depth = w.plan.queue.slots.max(w.plan.queue.depth);
    let bs = w.plan.max_bs() as usize;
    if job.engine == EngineKind::Null {
        let eng =
            (def.open)(Vec::new(), engine::Slots::new(depth, bs)).map_err(|e| e.to_string())?;
        return Ok((eng, vec!["null".into()], Vec::new()));
    }
    let mut how = Vec::new();
    let open = |path: &Path, direct: bool| {
        let mut o = OpenOptions::new();
        o.read(true).write(writes(job.rw) || w.plan.changes());
        let sync = match job.open_sync {
            OpenSync::None => 0,
            OpenSync::Sync => libc::O_SYNC,
            OpenSync::Dsync => libc::O_DSYNC,
        };
        o.custom_flags(if direct { libc::O_DIRECT } else { 0 } | sync);
        o.open(path)
    };
    let mut direct = job.direct;
    let mut files = Vec::new();
    for path in w.files() {
        let file = match open(path, direct) {
            Ok(f) => f,
            Err(e) if direct && e.raw_os_error() == Some(libc::EINVAL) => {
                direct = false;
                files.clear();
                how.push("buffered (O_DIRECT refused by the filesystem)".to_string());
                // Open the ones before it again without O_DIRECT, as every file is opened alike.
                for p in w.files().take_while(|p| *p != path) {
                    files.push(open(p, false).map_err(|e| format!("{}: {e}", p.display()))?);
                }
                open(path, false).map_err(|e| format!("{}: {e}", path.display()))?
            }
            Err(e) => return Err(format!("{}: {e}", path.display())),
        };
        files.push(file);
    }
    if direct == job.direct {
        how.push(if job.direct { "direct" } else { "buffered" }.to_string());
    }
    if let Some((advice, name)) = fadvise_of(job) {
        for (f, path) in files.iter().zip(w.files()) {
            crate::sys::fadvise(f, advice)
                .map_err(|e| format!("posix_fadvise {name} on {}: {e}", path.display()))?;
        }
        how.push(format!("fadvise {name}"));
    }
    if files.len() > 1 {
        how.push(format!("{} files", files.len()));
    }
    let slots = engine::Slots {
        lead: job.buffer_lead(job.direct),
        ..engine::Slots::new(depth, bs)
    };
    if slots.lead != 0 {
        how.push(format!(
            "buffers {} bytes past a page boundary (as fio's {})",
            slots.lead,
            if job.mem_align.is_some() {
                "mem_align"
            } else {
                "malloc'd buffers"
            }
        ));
    }
    let drops = match &w.plan.source {
        Source::Walk(walk) => walk.pass_ends == PassEnds::DropPages,
        Source::Replay(_) => false,
    };
    let kept = if drops && !direct {
        let again: std::io::Result<Vec<File>> = files.iter().map(File::try_clone).collect();
        again.map_err(|e| format!("{}: {e}", w.path.display()))?
    } else {
        Vec::new()
    };
    let mut eng = (def.open)(files, slots)
        .map_err(|e| format!("cannot set up {} on {}: {e}", def.name, w.path.display()))?;
    eng.set_reap_max(job.completions_per_reap());
    how.push(eng.describe());
    Ok((eng, how, kept))
}

/// The posix_fadvise(2) advice a job gives its files when it opens them (fio's fadvise_hint).
fn fadvise_of(job: &Job) -> Option<(libc::c_int, &'static str)> {
    use crate::plan::job::Fadvise;
    let random = match job.fadvise {
        Fadvise::Off => return None,
        Fadvise::Pattern => job.rw.random(),
        Fadvise::Random => true,
        Fadvise::Sequential => false,
    };
    Some(if random {
        (libc::POSIX_FADV_RANDOM, "random")
    } else {
        (libc::POSIX_FADV_SEQUENTIAL, "sequential")
    })
}

/// Writes `region` bytes of fresh data to a job's file (or fsbench's device) and syncs it, so that
/// reads read real data, as fio lays out its files. Not measured.
pub(super) fn lay_out(
    path: &Path,
    span: Span,
    blockdev: bool,
    quiet: bool,
) -> Result<(), RunError> {
    let start = span.start;
    let region = span.len();
    if !quiet {
        crate::out::eline!(
            "fsbench:   laying out {} of test data in {}",
            fmt(region),
            path.display()
        );
    }
    let ctx = || format!("laying out {}", path.display());
    let mut f = OpenOptions::new()
        .write(true)
        .create(!blockdev)
        .truncate(false)
        .open(path)
        .map_err(RunError::io(ctx()))?;
    std::io::Seek::seek(&mut f, std::io::SeekFrom::Start(start)).map_err(RunError::io(ctx()))?;
    const CHUNK: usize = 1 << 20;
    let data = WriteData::new(0x1a70_u64, CHUNK as u64, 0);
    let mut rng = crate::io::DataGen::new(region);
    let mut buf = vec![0u8; CHUNK];
    let mut done = 0u64;
    while done < region {
        if let Some(why) = crate::stop::requested() {
            return Err(RunError::Stopped(why));
        }
        let n = (region - done).min(CHUNK as u64) as usize;
        data.fill(&mut buf[..n], &mut rng);
        f.write_all(&buf[..n]).map_err(RunError::io(ctx()))?;
        done += n as u64;
    }
    f.sync_all().map_err(RunError::io(ctx()))
}
