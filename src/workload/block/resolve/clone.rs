//! One worker of a job resolved: its files (several with fio's nrfiles or filename=a:b), their
//! region and checks, the layout, and its plan.

use std::path::Path;
use std::sync::Arc;

use super::super::lower::{self, Placed};
use super::super::Origin;
use super::super::{fmt, writes};
use super::{
    check_file, check_replay, data_files, existing, invalid, path_of, rank_file, region_of, Layout,
    Worker,
};
use crate::frame::{Place, RunError, TargetCtx};
use crate::io::iolog::Replay;
use crate::io::worker::{max_bs, Source};
use crate::plan::job::{EngineKind, Job, SizeSpec};
use crate::plan::units::Span;

/// Worker `clone` of job `ji`: its files (checked, and added to the layout), region and pattern;
/// with the bytes its new files take.
pub(super) fn resolve_clone(
    job: &Job,
    (ji, clone, origin): (usize, u32, Origin),
    (t, base): (&TargetCtx, &Path),
    replay: Option<&Arc<Replay>>,
    layout: &mut Layout,
) -> Result<(Worker, u64), RunError> {
    let rk = t.ranks;
    let many = rk.rank.many();
    let nfiles = job.files_per_worker();
    if nfiles > 1 && replay.is_some() {
        return Err(invalid(format!(
            "job '{}': read_iolog replays onto one file; give one file (no nrfiles or filename list)",
            job.name
        )));
    }
    let mut paths = Vec::new();
    for i in 0..nfiles {
        paths.push(path_of(&t.place, base, job, clone, i)?);
    }
    let mut stats = paths
        .iter()
        .map(|p| existing(p, &job.name))
        .collect::<Result<Vec<_>, _>>()?;
    // Several ranks: a file each (N-N), or one file (or a device) in segments (N-1).
    let segment = many && (rk.plan.shared_file || stats[0].0);
    if many && !segment {
        for p in &mut paths {
            *p = rank_file(p, rk.rank.index);
        }
        stats = paths
            .iter()
            .map(|p| existing(p, &job.name))
            .collect::<Result<Vec<_>, _>>()?;
    }
    // Checked as named by the job (and per rank), before anything is opened.
    data_files(&t.place, &job.name, &paths)?;
    let (blockdev, have) = stats[0];
    let seg = segment.then_some(rk.rank.index);
    let sizing = match (replay, job.size, job.filesize) {
        // A replay without size= covers the trace (or the file, when larger).
        (Some(r), None, None) if !blockdev => Job {
            size: Some(SizeSpec::Bytes(r.extent().max(have))),
            ..job.clone()
        },
        // Each file is filesize= long.
        (_, _, Some(fs)) => Job {
            size: Some(SizeSpec::Bytes(fs)),
            ..job.clone()
        },
        _ => job.clone(),
    };
    let span = region_of(&sizing, clone, &paths[0], (blockdev, have), seg)?;
    let (base, region) = (span.start, span.len());
    // Several files share size= (fio: size / nrfiles each) unless filesize= gives each its own.
    let (region, total) = match (nfiles, job.filesize, job.size) {
        (1, None, _) => (region, region),
        // fio: each file size / nrfiles (not rounded), and one pass is a pass over each file's
        // whole blocks.
        (n, None, _) => {
            let each = per_file(job, region, n)?;
            let max_bs = max_bs(&job.bs).max(max_bs(job.wbs())).max(1);
            (each, each / max_bs * max_bs * n as u64)
        }
        (_, Some(_), Some(SizeSpec::Bytes(total))) => (region, total),
        (n, Some(_), _) => (region, region * n as u64),
    };
    if let Some(r) = replay {
        check_replay(job, r, &paths[0], base + region)?;
    }
    check_zones(job, region)?;
    let end = base + region;
    let mut new_bytes = 0;
    for (path, &(blockdev, have)) in paths.iter().zip(&stats) {
        new_bytes += check_and_lay(
            job,
            (path, blockdev, have),
            Span::new(base, end),
            (t, segment),
            layout,
        )?;
    }
    let placed = Placed {
        base,
        region,
        total,
    };
    let mut plan = lower::plan(job, (clone, rk.rank.index), placed, origin);
    plan.sinks.record = super::super::logs::record_of(job, clone)
        .map(|_| paths.iter().map(|p| p.display().to_string()).collect());
    if let Some(r) = replay {
        plan = lower::replaying(job, plan, r.clone());
    }
    // A verifying reader checks only what its writer's state says it wrote (fio's
    // verify_state_load), every range inside its files' offsets (file f from f x stride).
    if job.verify_state_load && job.verify.is_some() && !plan.changes() {
        let stride = match &plan.source {
            Source::Walk(w) => w.region.stride(),
            Source::Replay(_) => region,
        };
        let span = Span::new(base, (nfiles.max(1) as u64).saturating_mul(stride));
        let ranges = super::super::vstate::load(Path::new("."), job, clone, span)
            .map_err(|e| invalid(format!("job '{}': {e}", job.name)))?;
        if let Some(checks) = plan.sinks.checks.as_mut() {
            checks.ranges = Some(Arc::new(ranges));
        }
    }
    let path = paths.remove(0);
    Ok((
        Worker {
            job: ji,
            path,
            others: paths,
            blockdev,
            region,
            plan,
        },
        new_bytes,
    ))
}

/// fio's strided zones need a zone size, and a zone within the job's region.
fn check_zones(job: &Job, region: u64) -> Result<(), RunError> {
    if !job.strided {
        return Ok(());
    }
    let z = job.zones.resolved();
    let range = z.range;
    if z.size == 0 {
        return Err(invalid(format!(
            "job '{}': zonemode=strided needs zonesize= (the bytes done in a zone before moving on), e.g. zonesize=256m",
            job.name
        )));
    }
    let max_bs = max_bs(&job.bs).max(max_bs(job.wbs()));
    if range > region || range < max_bs {
        return Err(invalid(format!(
            "job '{}': a strided zone of {} (zonerange, else zonesize) must hold a block ({}) and fit in the job's region ({}): change zonerange= or size=",
            job.name,
            fmt(range),
            fmt(max_bs),
            fmt(region)
        )));
    }
    Ok(())
}

/// What a job with several files per worker does, for its record.
pub(super) fn files_note(job: &Job) -> String {
    use crate::plan::job::FileServiceKind as K;
    let fs = job.file_service;
    let how = match fs.kind {
        K::Roundrobin => format!("in turn, {} I/O(s) each", fs.batch),
        K::Random => format!("a file at random every {} I/O(s)", fs.batch),
        K::Sequential => "one after another, each to its end".to_string(),
    };
    format!(
        "files: {} per worker ({}), {how}; each file's I/O through one engine (io_uring registers them all)",
        job.files_per_worker(),
        if job.filename.is_some() { "filename list, shared by the job's workers" } else { "nrfiles" }
    )
}

/// Each file's share of `region` when a worker has `n` files (fio's size / nrfiles).
fn per_file(job: &Job, region: u64, n: u32) -> Result<u64, RunError> {
    let max_bs = max_bs(&job.bs).max(max_bs(job.wbs()));
    let each = region / n as u64;
    if each < max_bs {
        return Err(invalid(format!(
            "job '{}': size {} over {n} files leaves less than a block ({}) per file: raise size= or give filesize=",
            job.name,
            fmt(region),
            fmt(max_bs)
        )));
    }
    Ok(each)
}

/// Checks one of a worker's files (its size, and a device's safety) and adds it to the layout;
/// the bytes it will newly take.
fn check_and_lay(
    job: &Job,
    (path, blockdev, have): (&Path, bool, u64),
    span: Span,
    (t, segment): (&TargetCtx, bool),
    layout: &mut Layout,
) -> Result<u64, RunError> {
    let Span { start: base, end } = span;
    check_file(job, path, blockdev, have, end)?;
    super::super::per_io::check_file(job, path)?;
    if let Place::Here { wipe } = t.place {
        if blockdev && writes(job.rw) {
            crate::provision::safety::check_device(path, wipe).map_err(|e| {
                invalid(format!(
                    "job '{}' writes to {}: {e}",
                    job.name,
                    path.display()
                ))
            })?;
        }
    }
    // The null engine does no I/O and opens no file: nothing to lay out (fio's null creates no
    // file either).
    let lay = job.engine != EngineKind::Null
        && match &t.place {
            Place::Raw(_) => true,
            _ => !blockdev && have < end,
        };
    let start = if segment { base } else { 0 };
    let mut new_bytes = 0;
    if lay && !layout.contains(path) {
        // A job filling the filesystem writes until it is full: no room to check.
        if !(blockdev || job.fill_device && writes(job.rw)) {
            new_bytes = end.saturating_sub(have.max(start));
        }
        layout.add(path, Span::new(start, end));
    } else {
        layout.widen(path, Span::new(start, end));
    }
    Ok(new_bytes)
}
