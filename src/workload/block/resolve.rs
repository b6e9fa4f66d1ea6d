//! A block workload resolved against a target: every worker's file, region and pattern, the files
//! to lay out, and the notes of each job. Everything that can fail does so here, before anything
//! runs.

use std::fs::File;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use super::{fmt, writes, Block};
use crate::engine;
use crate::frame::{Place, RunError, TargetCtx};
use crate::io::iolog::{self, Adjust, OpKind, Replay};
use crate::io::{self, Pace, Pattern, Shape};
use crate::plan::job::{BlockSize, Distribution, EngineKind, Job, Rw, SizeSpec};

/// One worker of a job, resolved: its file, its pattern.
pub struct Worker {
    pub job: usize,
    /// Its (first) file.
    pub path: PathBuf,
    /// Its other files (fio's nrfiles, filename=a:b), I/O file index 1 on.
    pub more: Vec<PathBuf>,
    pub blockdev: bool,
    pub pattern: Pattern,
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

fn seed_of(name: &str, clone: u32) -> u64 {
    // FNV-1a of the job name, so every job and worker has its own reproducible stream.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes() {
        h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
    }
    h ^ (clone as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

impl Worker {
    /// All its files, in I/O file index order.
    pub fn files(&self) -> impl Iterator<Item = &PathBuf> {
        std::iter::once(&self.path).chain(&self.more)
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

/// Where a worker's region starts (fio offset + offset_increment x clone, and with several ranks
/// on one file, the rank's segment: `segment` is the rank) and its bytes.
fn region_of(
    job: &Job,
    clone: u32,
    path: &Path,
    (blockdev, existing): (bool, u64),
    segment: Option<usize>,
) -> Result<(u64, u64), RunError> {
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
    let max_bs = io::max_bs(&job.bs).max(io::max_bs(job.wbs()));
    if region < max_bs {
        return Err(invalid(format!(
            "job '{name}': its size ({}) is smaller than its largest block ({}): raise size={}",
            fmt(region),
            fmt(max_bs),
            if base > 0 { " or lower offset=" } else { "" }
        )));
    }
    Ok((base, region))
}

/// The pattern of worker `clone`: its files' region from `base`, `total` bytes over them all.
fn pattern_of(
    job: &Job,
    clone: u32,
    (base, region, total): (u64, u64, u64),
    rank: usize,
) -> Pattern {
    let verify_only = job.verify.as_ref().is_some_and(|v| v.only);
    let mut rw = job.rw;
    if verify_only {
        rw = if rw.random() { Rw::RandRead } else { Rw::Read };
    }
    let passes = job
        .io_size
        .unwrap_or(total)
        .saturating_mul(job.loops.max(1) as u64);
    let mut p = Pattern {
        rw,
        rwmixread: job.rwmixread,
        bs: job.bs.clone(),
        depth: job.iodepth as usize,
        region,
        limit_bytes: if job.time_based { None } else { Some(passes) },
        loops: job.loops.max(1),
        runtime: job.runtime,
        ramp: job.ramp_time.unwrap_or(Duration::ZERO),
        fsync_every: job.fsync,
        fdatasync_every: job.fdatasync,
        end_fsync: job.end_fsync,
        // Each rank its own stream (rank 0's is a single process's).
        seed: seed_of(&job.name, clone)
            ^ job.randseed.unwrap_or(0)
            ^ (rank as u64).wrapping_mul(0xA24B_AED4_963E_E407),
        compress_pct: job.compress_pct,
        refill: job.refill_buffers != Some(false),
        buffers: job.iodepth.max(1) as usize,
        stamp_every: 512,
        randommap: !job.norandommap,
        wbs: job.write_bs.clone(),
        base,
        shape: Shape {
            rw_mod: job.rw_mod,
            backwards: job.rw_backwards,
            rw_identical: job.rw_identical,
            random_pct: job.random_pct,
            dist: job.distribution.clone(),
            dist_center: job.dist_center,
            align: job.blockalign,
        },
        pace: Pace {
            limit_ios: job.number_ios,
            startdelay: job.startdelay.unwrap_or_default(),
            rate: job.rate,
            rate_iops: job.rate_iops,
            poisson: job.rate_poisson,
            thinktime: job.thinktime,
            thinktime_spin: job.thinktime_spin.unwrap_or_default(),
            thinktime_blocks: job.thinktime_blocks,
        },
        dedupe_pct: if job.verify.is_some() {
            0
        } else {
            job.dedupe_pct
        },
        working_set: None,
        verify: job.verify.clone(),
        logs: job.logs.clone().filter(|l| l.any()),
        replay: None,
        record: None,
        continue_on: ["read", "write"].map(|d| job.continue_on_error.iter().any(|k| k == d)),
        // fio's non-fatal errors unless ignore_error lists the direction's.
        ignore_errors: [0, 1].map(|d| match &job.more.ignore_error[d] {
            l if l.is_empty() => vec![libc::EIO, libc::EILSEQ],
            l => l.clone(),
        }),
        fill_device: job.fill_device,
        buffer_pattern: job.buffer_pattern.clone(),
        flow: None,
        files: job.files_per_worker(),
        file_service: job.file_service,
        save_written: job.verify_state_save,
        zones: job.more.strided.then(|| job.more.zones.resolved()),
        // fio's slat and clat: the asynchronous engines, when the job asks for them.
        split_lat: matches!(job.engine, EngineKind::IoUring | EngineKind::Libaio)
            && (job.split_lat || job.logs.as_ref().is_some_and(|l| l.lat.is_some())),
        verify_ranges: None,
        issue: job.issue.clone(),
        trim_bs: job.trim_bs.clone(),
    };
    // Unique, incompressible data for large writes at the cost of a stamp per sector: a ring of
    // random buffers (io::data::ring_buffers) instead of regenerating each one in full.
    let only_writes = matches!(p.rw, Rw::Write | Rw::RandWrite);
    // Not with compressible data (its zeros at the head of each 4 KiB would cover the stamps),
    // nor with a buffer_pattern (the job asked for those bytes).
    let plain = p.verify.is_none()
        && p.dedupe_pct == 0
        && p.compress_pct == 0
        && p.buffer_pattern.is_empty();
    if job.refill_buffers.is_none() && only_writes && plain {
        if let Some(n) = crate::io::data::ring_buffers(p.max_bs(), p.depth) {
            p.refill = false;
            p.buffers = n;
            p.stamp_every = crate::io::data::RING_STAMP_EVERY;
        }
    }
    p
}

/// fio's dedupe working sets (dedupe.rs); a sequence distribution's blocks inside the region
/// (fio fails a job whose sequence names a block past its end).
fn finish_patterns(b: &Block, workers: &mut [Worker]) -> Result<(), RunError> {
    for w in workers.iter() {
        let p = &w.pattern;
        if let Distribution::Sequence { blocks, .. } = &p.shape.dist {
            let have = p.region / p.align();
            if let Some(x) = blocks.iter().find(|&&x| x >= have) {
                return Err(invalid(format!("job '{}': random_distribution=sequence names block {x}, past the job's {have} blocks of {} (fio fails such a job): give blocks below {have}, or a larger size", b.jobs[w.job].name, fmt(p.align()))));
            }
        }
    }
    let mut ws: Vec<(usize, &mut Pattern)> = workers
        .iter_mut()
        .map(|w| (w.job, &mut w.pattern))
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
        let flow = Arc::new(io::flow::Flow::new(weights));
        for (k, &w) in members.iter().enumerate() {
            let sleep = b.jobs[workers[w].job].flow_sleep.unwrap_or_default();
            workers[w].pattern.flow = Some((flow.clone(), k, sleep));
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

/// A replaying worker: the trace's offsets from the file's start, its largest I/O as the
/// buffer size, nothing but the trace (and the runtime) to end it.
fn replaying(mut p: Pattern, r: Arc<Replay>) -> Pattern {
    let largest = r.ops.iter().map(|o| o.len).max().unwrap_or(4096);
    p.bs = BlockSize::Fixed(largest);
    p.wbs = None;
    p.base = 0;
    p.limit_bytes = None;
    p.pace = Pace::default();
    p.rw = if r.ops.iter().any(|o| o.kind == OpKind::Write) {
        Rw::RandRw
    } else {
        Rw::RandRead
    };
    p.replay = Some(r);
    p
}

/// The notes a job carries whatever it measures.
fn job_notes(b: &Block, job: &Job, place: &Place) -> Vec<String> {
    let mut jn: Vec<String> = b.notes.clone();
    if matches!(place, Place::Mount(_)) && b.from_jobfile && job.directory.is_some() {
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
    super::issue::check(&b.jobs)?;
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
            let w = resolve_clone(job, (ji, clone), (t, &base), replay.as_ref(), &mut layout)?;
            new_bytes += w.1;
            workers.push(w.0);
        }
        let mut jn = job_notes(b, job, &t.place);
        jn.extend(replay.as_deref().map(|r| replay_note(job, r)));
        if job.files_per_worker() > 1 {
            jn.push(files_note(job));
        }
        jn.extend(super::issue::notes(job));
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
    finish_patterns(b, &mut workers)?;
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
        let wbs = w.pattern.wbs.as_ref().map(io::max_bs).unwrap_or(0);
        let bs = io::max_bs(&w.pattern.bs).max(wbs);
        sum.saturating_add(bs.saturating_mul(w.pattern.depth.max(1) as u64))
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
