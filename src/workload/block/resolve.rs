//! A block workload resolved against a target: every worker's files, region and plan (its job
//! lowered, `lower`, with what the run adds: its trace, flow, verify state, working set), the
//! files to lay out, and the notes of each job. Everything that can fail does so here, before
//! anything runs.

use crate::plan::units::Span;
use std::collections::HashSet;
use std::fs::File;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{fmt, writes, Block, Origin};
use crate::engine;
use crate::frame::{Place, RunError, TargetCtx};
use crate::io::iolog::{self, Adjust, OpKind, Replay};
use crate::io::worker::{max_bs, FlowSeat, Source, WorkerPlan};
use crate::plan::job::{Distribution, EngineKind, Job, SizeSpec};

/// One worker of a job, resolved: its files, its region in each, its plan.
pub struct Worker {
    pub job: usize,
    /// Its (first) file.
    pub path: PathBuf,
    /// Its other files (fio's nrfiles, filename=a:b), I/O file index 1 on.
    pub others: Vec<PathBuf>,
    pub blockdev: bool,
    /// Bytes of its region in each file.
    pub region: u64,
    pub plan: WorkerPlan,
}

pub struct Resolved {
    pub workers: Vec<Worker>,
    /// path -> the span to lay out, [start, end) (written once per run before it is first
    /// used; with several ranks on one file, each lays out its own segment).
    pub layout: Layout,
    pub notes: Vec<Vec<String>>,
    /// fio's wait_for between the jobs.
    pub waits: super::waits::Waits,
}

fn invalid(s: String) -> RunError {
    RunError::Invalid(s)
}

impl Worker {
    /// All its files, in I/O file index order.
    pub fn files(&self) -> impl Iterator<Item = &PathBuf> {
        std::iter::once(&self.path).chain(&self.others)
    }
}

/// File `i` of worker `clone` of `job`.
fn path_of(place: &Place, base: &Path, job: &Job, clone: u32, i: u32) -> Result<PathBuf, RunError> {
    let name = match i {
        0 => job.filename.as_ref(),
        i => job.more_files.get(i as usize - 1),
    };
    Ok(match (place, name) {
        (Place::Raw(device), _) if i == 0 => device.to_path_buf(),
        (Place::Raw(device), _) => {
            return Err(invalid(format!(
                "job '{}': {} files per worker on the device {}: a device is one file; use nrfiles with a file system target",
                job.name,
                job.files_per_worker(),
                device.display()
            )))
        }
        (Place::Mount(_), Some(f)) if Path::new(f).is_absolute() => {
            return Err(invalid(format!(
                "job '{}': filename={f} is absolute; in compare each job runs on the target's mount point: give a plain file name",
                job.name
            )))
        }
        (_, Some(f)) => base.join(f),
        (_, None) => base.join(format!("{}.{clone}.{i}", job.name)),
    })
}

/// Refuses the files of a job on a filesystem (not a raw device) that fsbench must not do I/O
/// through (`data_file`).
pub(super) fn data_files(place: &Place, name: &str, paths: &[PathBuf]) -> Result<(), RunError> {
    if matches!(place, Place::Raw(_)) {
        return Ok(());
    }
    let mut dirs = HashSet::new();
    paths.iter().try_for_each(|p| data_file(p, name, &mut dirs))
}

/// Refuses a data file fsbench must not do I/O through (it runs as root): a symbolic link, a
/// character device, FIFO, socket or directory, or a file under /proc, /sys or /dev or on a kernel
/// filesystem; a block device is the one thing a data file may be there (its own guards apply).
/// `dirs`: the directories already found to be data filesystems (a job with a million files has
/// few).
fn data_file(path: &Path, name: &str, dirs: &mut HashSet<PathBuf>) -> Result<(), RunError> {
    let refuse = |why: String| {
        invalid(format!(
            "job '{name}': its file {} {why}: fsbench does I/O only on regular files on a data filesystem (or a named block device); give another filename",
            path.display()
        ))
    };
    let meta = std::fs::symlink_metadata(path);
    match &meta {
        Ok(m) if m.file_type().is_block_device() => return Ok(()),
        Ok(m) if m.file_type().is_symlink() => {
            return Err(refuse("is a symbolic link (name the file itself)".into()))
        }
        Ok(m) if !m.file_type().is_file() => return Err(refuse("is not a regular file".into())),
        _ => {}
    }
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if dirs.contains(dir) {
        return Ok(());
    }
    if let Some(why) = crate::sys::outfile::kernel_dir(dir) {
        return Err(refuse(match meta {
            Err(_) => format!("does not exist, and fsbench makes no file there ({why})"),
            Ok(_) => format!("is one of the kernel's files ({why})"),
        }));
    }
    dirs.insert(dir.to_path_buf());
    Ok(())
}

/// Rank `r`'s own file beside `path` (N-N): `name.r<r>`.
fn rank_file(path: &Path, r: usize) -> PathBuf {
    let mut s = path.as_os_str().to_os_string();
    s.push(format!(".r{r}"));
    PathBuf::from(s)
}

/// (is a block device, bytes it or the file has now).
fn existing(path: &Path, name: &str) -> Result<(bool, u64), RunError> {
    let meta = std::fs::metadata(path).ok();
    let blockdev = meta
        .as_ref()
        .is_some_and(|m| m.file_type().is_block_device());
    let len = if blockdev {
        File::open(path)
            .and_then(|f| crate::sys::block_device_size(&f))
            .map_err(|e| invalid(format!("job '{name}': {}: {e}", path.display())))?
    } else {
        meta.as_ref().map(|m| m.len()).unwrap_or(0)
    };
    Ok((blockdev, len))
}

/// What a share (`size=50%`, `offset=25%`) is a share of: the device, or the file system's free
/// space for files.
fn whole(job: &Job, path: &Path, blockdev: bool, existing: u64) -> Result<u64, RunError> {
    if blockdev {
        return Ok(existing);
    }
    let dir = path.parent().unwrap_or(Path::new("."));
    crate::sys::statvfs(dir)
        .map(|s| s.blocks_avail * s.block_size)
        .map_err(|e| invalid(format!("job '{}': {}: {e}", job.name, dir.display())))
}

fn bytes_of(spec: SizeSpec, whole: &dyn Fn() -> Result<u64, RunError>) -> Result<u64, RunError> {
    Ok(match spec {
        SizeSpec::Bytes(n) => n,
        SizeSpec::Percent(p) => (whole()? as f64 * p / 100.0) as u64,
    })
}

/// A worker's region of its file: where it starts (fio offset + offset_increment x clone, and
/// with several ranks on one file, the rank's segment: `segment` is the rank) and ends.
fn region_of(
    job: &Job,
    clone: u32,
    path: &Path,
    (blockdev, existing): (bool, u64),
    segment: Option<usize>,
) -> Result<Span, RunError> {
    let name = &job.name;
    let whole = || whole(job, path, blockdev, existing);
    let base = match job.offset {
        Some(o) => bytes_of(o, &whole)?,
        None => 0,
    } + job.offset_increment * clone as u64;
    let region = match job.size {
        Some(s) => bytes_of(s, &whole)?,
        None if existing > base => existing - base,
        None => {
            return Err(invalid(format!(
                "job '{name}': no size and {} does not exist{}: add size=1G (or --file-size)",
                path.display(),
                if base > 0 { " beyond its offset" } else { "" }
            )))
        }
    };
    // IOR's N-1: rank r's segment follows rank r-1's (all of a rank's clones when they step by
    // offset_increment, else one region).
    let base = base
        + segment.unwrap_or(0) as u64
            * if job.offset_increment > 0 {
                job.offset_increment * job.numjobs as u64
            } else {
                region
            };
    let region = if blockdev {
        region.min(existing.saturating_sub(base))
    } else {
        region
    };
    let max_bs = max_bs(&job.bs).max(max_bs(job.wbs()));
    if region < max_bs {
        return Err(invalid(format!(
            "job '{name}': its size ({}) is smaller than its largest block ({}): raise size={}",
            fmt(region),
            fmt(max_bs),
            if base > 0 { " or lower offset=" } else { "" }
        )));
    }
    Ok(Span::new(base, base + region))
}

/// fio's dedupe working sets (dedupe.rs); a sequence distribution's blocks inside the region
/// (fio fails a job whose sequence names a block past its end).
fn finish_plans(b: &Block, workers: &mut [Worker]) -> Result<(), RunError> {
    for w in workers.iter() {
        let Source::Walk(walk) = &w.plan.source else {
            continue;
        };
        if let Distribution::Sequence { blocks, .. } = &b.jobs[w.job].distribution {
            let (align, have) = (walk.region.align, walk.region.len / walk.region.align);
            if let Some(x) = blocks.iter().find(|&&x| x >= have) {
                return Err(invalid(format!("job '{}': random_distribution=sequence names block {x}, past the job's {have} blocks of {} (fio fails such a job): give blocks below {have}, or a larger size", b.jobs[w.job].name, fmt(align))));
            }
        }
    }
    let mut ws: Vec<(usize, &mut WorkerPlan, u64)> = workers
        .iter_mut()
        .map(|w| (w.job, &mut w.plan, w.region))
        .collect();
    super::dedupe::assign(&b.jobs, &mut ws);
    Ok(())
}

/// fio's flow control: the workers of jobs with a weight, one shared flow per flow id.
fn join_flows(b: &Block, workers: &mut [Worker]) {
    let mut ids: Vec<u64> = b
        .jobs
        .iter()
        .filter(|j| j.flow > 0)
        .map(|j| j.flow_id)
        .collect();
    ids.sort_unstable();
    ids.dedup();
    for id in ids {
        let members: Vec<usize> = (0..workers.len())
            .filter(|&w| {
                let j = &b.jobs[workers[w].job];
                j.flow > 0 && j.flow_id == id
            })
            .collect();
        let weights = members
            .iter()
            .map(|&w| b.jobs[workers[w].job].flow)
            .collect();
        let flow = Arc::new(crate::io::flow::Flow::new(weights));
        for (seat, &w) in members.iter().enumerate() {
            let sleep = b.jobs[workers[w].job].flow_sleep.unwrap_or_default();
            workers[w].plan.gates.flow = Some(FlowSeat {
                flow: flow.clone(),
                seat,
                sleep,
            });
        }
    }
}

/// The trace a job replays (fio's read_iolog), read and checked before anything runs: a
/// malformed line is refused with the file and line.
fn load_replay(job: &Job) -> Result<Option<Arc<Replay>>, RunError> {
    let Some(spec) = job.replay.as_ref().filter(|r| !r.file.is_empty()) else {
        return Ok(None);
    };
    let bytes = std::fs::read(&spec.file).map_err(|e| {
        invalid(format!(
            "job '{}': read_iolog={}: {e}: give the path of an iolog (fio's write_iolog writes one)",
            job.name, spec.file
        ))
    })?;
    let adj = Adjust {
        time_scale: spec.time_scale,
        scale: spec.scale,
        align: spec.align,
    };
    let mut r = iolog::parse(&bytes, adj)
        .map_err(|e| invalid(format!("job '{}': read_iolog {}:{e}", job.name, spec.file)))?;
    r.no_stall = spec.no_stall;
    let skip = |k: OpKind| {
        let name = match k {
            OpKind::Read => "read",
            OpKind::Write => "write",
            OpKind::Trim => "trim",
            OpKind::Sync | OpKind::Datasync => "sync",
        };
        spec.skip.iter().any(|s| s == name)
    };
    r.ops.retain(|o| !skip(o.kind));
    if !r
        .ops
        .iter()
        .any(|o| matches!(o.kind, OpKind::Read | OpKind::Write))
    {
        return Err(invalid(format!(
            "job '{}': read_iolog {}: the trace has no reads or writes to replay{}",
            job.name,
            spec.file,
            if spec.skip.is_empty() {
                ""
            } else {
                " (after replay_skip)"
            }
        )));
    }
    Ok(Some(Arc::new(r)))
}

/// The notes a job carries whatever it measures.
fn job_notes(b: &Block, job: &Job, place: &Place) -> Vec<String> {
    let mut jn: Vec<String> = b.notes.clone();
    if matches!(place, Place::Mount(_)) && b.origin == Origin::JobFile && job.directory.is_some() {
        jn.push(format!(
            "directory={} ignored: compare runs each job on the target's mount point",
            job.directory.as_deref().unwrap_or("")
        ));
    }
    let one_at_a_time = [EngineKind::Sync, EngineKind::Pvsync, EngineKind::Pvsync2];
    if one_at_a_time.contains(&job.engine) && job.iodepth > 1 {
        jn.push(format!(
            "iodepth={} has no effect with ioengine={} (one I/O at a time)",
            job.iodepth,
            crate::engine::def(job.engine).name
        ));
    }
    if job.refill_buffers == Some(false) && writes(job.rw) {
        jn.push("refill_buffers=0: write buffers are reused with a fresh stamp per sector; a filesystem that compresses across several writes may shrink them".into());
    }
    if let Some(v) = job.verify.as_ref().filter(|v| v.kind != "null") {
        jn.push(if writes(job.rw) && !v.only {
            format!("verify={}: what the job wrote is read back from the device and checked once its writing is done; those reads are not in its figures (fio counts them as reads)", v.kind)
        } else if job.verify_state_load {
            format!("verify={}: the blocks read that the writer's verify state lists as written are checked against their header, the others counted as verify_skipped", v.kind)
        } else {
            format!("verify={}: every block read is checked against its header", v.kind)
        });
    }
    if job.rw.random()
        && !matches!(
            job.distribution,
            Distribution::Random | Distribution::Sequence { .. }
        )
    {
        jn.push(
            "random_distribution: offsets are drawn independently (no random map), as in fio"
                .into(),
        );
    }
    if job.numjobs > 1 {
        jn.push(format!(
            "{} workers reported together (group_reporting){}",
            job.numjobs,
            if job.group_reporting {
                ""
            } else {
                "; each one's own figures are in the record's clones"
            }
        ));
    }
    jn
}

/// Resolves every worker of every job on target `t`.
mod clone;
mod layout;
use clone::{files_note, resolve_clone};
pub use layout::Layout;

pub fn resolve(b: &Block, t: &TargetCtx) -> Result<Resolved, RunError> {
    let waits = super::waits::Waits::new(&b.jobs)?;
    super::logs::check(&b.jobs)?;
    super::cpus::check(&b.jobs)?;
    super::per_io::check(&b.jobs)?;
    super::dedupe::check(&b.jobs)?;
    let mut workers = Vec::new();
    let mut layout = Layout::default();
    let rk = t.ranks;
    let many = rk.rank.many();
    let mut notes = Vec::new();
    let mut new_bytes = 0u64;
    for (ji, job) in b.jobs.iter().enumerate() {
        let replay = load_replay(job)?;
        let base: PathBuf = match &t.place {
            Place::Mount(dir) => dir.to_path_buf(),
            Place::Raw(device) => device.to_path_buf(),
            Place::Here { .. } => PathBuf::from(job.directory.as_deref().unwrap_or(".")),
        };
        for clone in 0..job.numjobs {
            let who = (ji, clone, b.origin);
            let w = resolve_clone(job, who, (t, &base), replay.as_ref(), &mut layout)?;
            new_bytes += w.1;
            workers.push(w.0);
        }
        let mut jn = job_notes(b, job, &t.place);
        jn.extend(replay.as_deref().map(|r| replay_note(job, r)));
        if job.files_per_worker() > 1 {
            jn.push(files_note(job));
        }
        jn.extend(super::per_io::notes(job));
        if many {
            jn.push(if rk.plan.shared_file || matches!(t.place, Place::Raw(_)) {
                format!(
                    "ranks: {} ranks share one file, each its own segment (N-1)",
                    rk.rank.size
                )
            } else {
                format!("ranks: {} ranks, a file each (N-N)", rk.rank.size)
            });
        }
        notes.push(jn);
    }
    join_flows(b, &mut workers);
    finish_plans(b, &mut workers)?;
    check_space(&workers, new_bytes)?;
    check_buffers(&workers)?;
    for job in &b.jobs {
        (engine::def(job.engine).available)().map_err(|e| {
            invalid(format!(
                "job '{}': ioengine={} is not available here: {e}",
                job.name,
                engine::def(job.engine).name
            ))
        })?;
    }
    Ok(Resolved {
        workers,
        layout,
        notes,
        waits,
    })
}

/// What a replaying job's record says about its trace.
fn replay_note(job: &Job, r: &Replay) -> String {
    format!(
        "read_iolog: replays {} ({} operations{}{}, up to byte {}); the job's rw, bs and rates are not used",
        job.replay.as_ref().map_or("", |s| s.file.as_str()),
        r.ops.len(),
        if r.no_stall { ", as fast as it can" } else { ", at the trace's times" },
        if r.trims > 0 { format!(", {} trims left out", r.trims) } else { String::new() },
        r.extent()
    )
}

/// A replay that would run past the end of its file's region (or device) is refused before it
/// starts.
fn check_replay(job: &Job, r: &Replay, path: &Path, end: u64) -> Result<(), RunError> {
    let reach = r.extent();
    if reach > end {
        return Err(invalid(format!(
            "job '{}': the trace {} reaches byte {reach} ({}), past the end of {} ({}): give size={reach} or more, a larger file or device (replay_redirect=), or scale the offsets down (replay_scale=)",
            job.name,
            job.replay.as_ref().map_or("", |s| s.file.as_str()),
            fmt(reach),
            path.display(),
            fmt(end)
        )));
    }
    Ok(())
}

/// A job that may not create its file, or only verifies it, needs it there already.
fn check_file(job: &Job, path: &Path, blockdev: bool, have: u64, end: u64) -> Result<(), RunError> {
    if blockdev || have >= end {
        return Ok(());
    }
    if job.verify.as_ref().is_some_and(|v| v.only) {
        return Err(invalid(format!(
            "job '{}': verify_only checks what an earlier run wrote, but {} holds {} of the {} it would read: write it first (the same job without verify_only)",
            job.name,
            path.display(),
            fmt(have),
            fmt(end)
        )));
    }
    if !job.allow_file_create && have == 0 {
        return Err(invalid(format!(
            "job '{}': allow_file_create=0 and {} does not exist: create it first or drop the option",
            job.name,
            path.display()
        )));
    }
    Ok(())
}

/// The I/O buffers the workers will hold (iodepth x the largest block, each) must fit in half of
/// the memory, or the run would die allocating them.
fn check_buffers(workers: &[Worker]) -> Result<(), RunError> {
    let need = workers.iter().fold(0u64, |sum, w| {
        let depth = w.plan.queue.depth.max(1) as u64;
        sum.saturating_add(w.plan.max_bs().saturating_mul(depth))
    });
    let mem = crate::sys::host::mem_total_bytes();
    if mem > 0 && need > mem / 2 {
        return Err(invalid(format!(
            "the jobs' I/O buffers (iodepth x block size, per worker) need {} and this host has {} of memory: lower iodepth, bs or numjobs",
            fmt(need),
            fmt(mem)
        )));
    }
    Ok(())
}

/// Will the new files fit?
fn check_space(workers: &[Worker], new_bytes: u64) -> Result<(), RunError> {
    if new_bytes == 0 {
        return Ok(());
    }
    let Some(w) = workers.iter().find(|w| !w.blockdev) else {
        return Ok(());
    };
    let dir = w.path.parent().unwrap_or(Path::new("."));
    if let Ok(s) = crate::sys::statvfs(dir) {
        let avail = s.blocks_avail * s.block_size;
        if new_bytes > avail {
            return Err(invalid(format!(
                "the jobs' files need {} but {} has {} free: lower the size (--file-size 256M) or give the target more room (--size)",
                fmt(new_bytes),
                dir.display(),
                fmt(avail)
            )));
        }
    }
    Ok(())
}
