//! Block I/O workloads: presets (`cdm`, `seed000`, ...), ad hoc `block:` jobs and fio job files
//! (`fio:JOBFILE`, `fsbench run`). Jobs run in groups split at `stonewall`; jobs of a group run
//! side by side, each with `numjobs` workers on their own threads and engines. Each job becomes one
//! record with throughput, IOPS, latency (whole histogram), CPU, a per-second series and what the
//! device itself wrote.

use std::collections::{BTreeMap, HashSet};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Barrier;
use std::time::{Duration, Instant};

use super::presets::{self, Preset};
use super::{Context, Phase, Workload};
use crate::engine;
use crate::metrics::clock::now_rfc3339;
use crate::metrics::{cpu, diskstats, hist};
use crate::plan::job::{EngineKind, Job, Rw, SizeSpec};
use crate::plan::workload::Overrides;
use crate::plan::WorkloadSpec;
use crate::runner::io::{self, Pattern, Stats, WriteData};

/// Metrics every block record carries (docs/results-schema.md); device figures come on top when
/// the target has a block device.
pub const RECORD_METRICS: &[&str] = &[
    "ios",
    "bytes",
    "runtime_s",
    "iops",
    "bytes_per_sec",
    "lat_mean_ns",
    "lat_p50_ns",
    "lat_p90_ns",
    "lat_p99_ns",
    "lat_p999_ns",
    "lat_max_ns",
    "cpu_user_pct",
    "cpu_sys_pct",
    "system_cpu_user_pct",
    "system_cpu_sys_pct",
];

pub struct Block {
    jobs: Vec<Job>,
    /// Notes from reading the jobs (e.g. libaio run on io_uring).
    notes: Vec<String>,
    from_jobfile: bool,
}

/// Where the jobs' files are.
pub enum Place<'a> {
    /// A target's mount point: file names are relative to it; a job file's `directory` is ignored.
    Mount(&'a Path),
    /// A target's raw block device; `layout` writes the job's region before the first test
    /// (fsbench's own or a --wipe'd device).
    Raw { device: &'a Path, layout: bool },
    /// As fio: `directory` and `filename` decide, relative to the current directory. Block
    /// devices named by `filename` are written only if they pass the guards (`wipe` as --wipe).
    AsFio { wipe: bool },
}

pub struct Env<'a> {
    pub place: Place<'a>,
    /// Filesystem type, for notes (tmpfs reads are memory reads).
    pub fs: &'a str,
    /// Block device whose /proc/diskstats give what the device wrote.
    pub stats_device: Option<PathBuf>,
    pub quiet: bool,
}

fn extra_options(spec: &WorkloadSpec) -> String {
    spec.params
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

fn finish_jobs(mut jobs: Vec<Job>, o: &Overrides) -> Vec<Job> {
    for j in &mut jobs {
        presets::apply_overrides(j, o);
    }
    jobs
}

pub fn build_preset(
    p: &Preset,
    spec: &WorkloadSpec,
    o: &Overrides,
) -> Result<Box<dyn Workload>, String> {
    let jobs = presets::expand(p, &extra_options(spec))
        .map_err(|e| format!("workload '{}': {e}", spec.spec))?;
    Ok(Box::new(Block {
        jobs: finish_jobs(jobs, o),
        notes: Vec::new(),
        from_jobfile: false,
    }))
}

/// `block:rw=randread,bs=4k,iodepth=32`: one job with the presets' defaults and these options.
pub fn build_adhoc(spec: &WorkloadSpec, o: &Overrides) -> Result<Box<dyn Workload>, String> {
    let mut job = Job::default();
    let wrap = |e: String| format!("workload '{}': {e}", spec.spec);
    presets::apply_options(&mut job, presets::DEFAULTS).map_err(wrap)?;
    job.filename = Some(presets::SHARED_FILE.into());
    job.name = "block".into();
    let notes = presets::apply_options(&mut job, &extra_options(spec)).map_err(wrap)?;
    Ok(Box::new(Block {
        jobs: finish_jobs(vec![job], o),
        notes,
        from_jobfile: false,
    }))
}

/// Reads and checks a fio job file (errors carry line numbers).
pub fn from_jobfile(path: &Path, o: &Overrides) -> Result<Block, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read job file {}: {e}", path.display()))?;
    let parsed =
        crate::plan::jobfile::parse(&text, &path.display().to_string()).map_err(|errs| {
            format!(
                "job file {} has errors:\n  {}",
                path.display(),
                errs.join("\n  ")
            )
        })?;
    for j in &parsed.jobs {
        if j.filename.as_deref().is_some_and(|f| f.contains(':')) {
            return Err(format!(
                "{}: job '{}': several files per job (filename=a:b) are not supported; give one file",
                path.display(),
                j.name
            ));
        }
    }
    Ok(Block {
        jobs: finish_jobs(parsed.jobs, o),
        notes: parsed.notes,
        from_jobfile: true,
    })
}

/// `fio:JOBFILE` in compare.
pub fn build_jobfile(spec: &WorkloadSpec, o: &Overrides) -> Result<Box<dyn Workload>, String> {
    let file = spec.param("file").unwrap_or_default();
    Ok(Box::new(from_jobfile(Path::new(file), o)?))
}

impl Workload for Block {
    fn run(&self, ctx: &mut Context) -> Result<(), String> {
        let place = match ctx.raw_device {
            Some(dev) => Place::Raw {
                device: dev,
                layout: true,
            },
            None => Place::Mount(ctx.dir),
        };
        let env = Env {
            place,
            fs: ctx.fs,
            stats_device: ctx.device.map(Path::to_path_buf),
            quiet: ctx.quiet,
        };
        self.execute(&env, ctx.emit)
    }
}

/// One worker of a job, resolved: its file, its pattern.
struct Worker {
    job: usize,
    path: PathBuf,
    blockdev: bool,
    pattern: Pattern,
}

struct Resolved {
    workers: Vec<Worker>,
    /// path -> region to lay out (written once per run before it is first used).
    layout: Vec<(PathBuf, u64)>,
    notes: Vec<Vec<String>>,
}

fn writes(rw: Rw) -> bool {
    !matches!(rw, Rw::Read | Rw::RandRead)
}

fn seed_of(name: &str, clone: u32) -> u64 {
    // FNV-1a of the job name, so every job and worker has its own reproducible stream.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes() {
        h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
    }
    h ^ (clone as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

fn fmt(n: u64) -> String {
    crate::plan::units::format_bytes(n)
}

impl Block {
    pub fn jobs(&self) -> &[Job] {
        &self.jobs
    }

    /// Everything that can be checked before running: files, sizes, space, guards, engines.
    pub fn check(&self, env: &Env) -> Result<(), String> {
        self.resolve(env).map(|_| ())
    }

    fn resolve(&self, env: &Env) -> Result<Resolved, String> {
        let mut workers = Vec::new();
        let mut layout: Vec<(PathBuf, u64)> = Vec::new();
        let mut notes = Vec::new();
        let mut new_bytes = 0u64;
        for (ji, job) in self.jobs.iter().enumerate() {
            let mut jn: Vec<String> = self.notes.clone();
            let name = &job.name;
            let base: PathBuf = match &env.place {
                Place::Mount(dir) => {
                    if self.from_jobfile && job.directory.is_some() {
                        jn.push(format!(
                            "directory={} ignored: compare runs each job on the target's mount point",
                            job.directory.as_deref().unwrap_or("")
                        ));
                    }
                    dir.to_path_buf()
                }
                Place::Raw { device, .. } => device.to_path_buf(),
                Place::AsFio { .. } => PathBuf::from(job.directory.as_deref().unwrap_or(".")),
            };
            for clone in 0..job.numjobs {
                let path = match (&env.place, &job.filename) {
                    (Place::Raw { device, .. }, _) => device.to_path_buf(),
                    (Place::Mount(_), Some(f)) if Path::new(f).is_absolute() => {
                        return Err(format!(
                            "job '{name}': filename={f} is absolute; in compare each job runs on the target's mount point: give a plain file name"
                        ))
                    }
                    (_, Some(f)) => base.join(f),
                    (_, None) => base.join(format!("{name}.{clone}.0")),
                };
                let meta = std::fs::metadata(&path).ok();
                let blockdev = meta
                    .as_ref()
                    .is_some_and(|m| m.file_type().is_block_device());
                let existing = if blockdev {
                    File::open(&path)
                        .and_then(|f| crate::sys::block_device_size(&f))
                        .map_err(|e| format!("job '{name}': {}: {e}", path.display()))?
                } else {
                    meta.as_ref().map(|m| m.len()).unwrap_or(0)
                };
                let region = match job.size {
                    Some(SizeSpec::Bytes(n)) => n,
                    Some(SizeSpec::Percent(p)) => {
                        let whole = if blockdev {
                            existing
                        } else {
                            let dir = path.parent().unwrap_or(Path::new("."));
                            crate::sys::statvfs(dir)
                                .map(|s| s.blocks_avail * s.block_size)
                                .map_err(|e| format!("job '{name}': {}: {e}", dir.display()))?
                        };
                        (whole as f64 * p / 100.0) as u64
                    }
                    None if existing > 0 => existing,
                    None => {
                        return Err(format!(
                        "job '{name}': no size and {} does not exist: add size=1G (or --file-size)",
                        path.display()
                    ))
                    }
                };
                let region = if blockdev {
                    region.min(existing)
                } else {
                    region
                };
                let max_bs = io::max_bs(&job.bs);
                if region < max_bs {
                    return Err(format!(
                        "job '{name}': its size ({}) is smaller than its largest block ({}): raise size=",
                        fmt(region),
                        fmt(max_bs)
                    ));
                }
                if blockdev {
                    if let Place::AsFio { wipe } = env.place {
                        if writes(job.rw) {
                            crate::provision::safety::check_device(&path, wipe).map_err(|e| {
                                format!("job '{name}' writes to {}: {e}", path.display())
                            })?;
                        }
                    }
                }
                let lay = match &env.place {
                    Place::Raw { layout, .. } => *layout,
                    _ => !blockdev && existing < region,
                };
                if lay && !layout.iter().any(|(p, _)| p == &path) {
                    if !blockdev {
                        new_bytes += region.saturating_sub(existing);
                    }
                    layout.push((path.clone(), region));
                } else if let Some(l) = layout.iter_mut().find(|(p, _)| p == &path) {
                    l.1 = l.1.max(region);
                }
                if job.engine == EngineKind::Sync && job.iodepth > 1 && clone == 0 {
                    jn.push(format!(
                        "iodepth={} has no effect with ioengine=sync (one I/O at a time)",
                        job.iodepth
                    ));
                }
                workers.push(Worker {
                    job: ji,
                    path,
                    blockdev,
                    pattern: Pattern {
                        rw: job.rw,
                        rwmixread: job.rwmixread,
                        bs: job.bs.clone(),
                        depth: job.iodepth as usize,
                        region,
                        limit_bytes: if job.time_based { None } else { Some(region) },
                        runtime: job.runtime,
                        ramp: job.ramp_time.unwrap_or(Duration::ZERO),
                        fsync_every: job.fsync,
                        fdatasync_every: job.fdatasync,
                        end_fsync: job.end_fsync,
                        seed: seed_of(name, clone),
                        compress_pct: job.compress_pct,
                        refill: job.refill_buffers,
                        randommap: !job.norandommap,
                    },
                });
            }
            if !job.refill_buffers && writes(job.rw) {
                jn.push("refill_buffers=0: write buffers are reused with a fresh stamp per sector; a filesystem that compresses across several writes may shrink them".into());
            }
            if job.numjobs > 1 {
                jn.push(format!(
                    "{} workers reported together (group_reporting)",
                    job.numjobs
                ));
            }
            notes.push(jn);
        }
        // Will the new files fit?
        if new_bytes > 0 {
            if let Some(w) = workers.iter().find(|w| !w.blockdev) {
                let dir = w.path.parent().unwrap_or(Path::new("."));
                if let Ok(s) = crate::sys::statvfs(dir) {
                    let avail = s.blocks_avail * s.block_size;
                    if new_bytes > avail {
                        return Err(format!(
                            "the jobs' files need {} but {} has {} free: lower the size (--file-size 256M) or give the target more room (--size)",
                            fmt(new_bytes),
                            dir.display(),
                            fmt(avail)
                        ));
                    }
                }
            }
        }
        for job in &self.jobs {
            (engine::def(job.engine).available)().map_err(|e| {
                format!(
                    "job '{}': ioengine={} is not available here: {e}",
                    job.name,
                    engine::def(job.engine).name
                )
            })?;
        }
        Ok(Resolved {
            workers,
            layout,
            notes,
        })
    }

    /// Runs every job, emitting one phase per job as it finishes.
    pub fn execute(
        &self,
        env: &Env,
        emit: &mut dyn FnMut(Phase) -> std::io::Result<()>,
    ) -> Result<(), String> {
        let r = self.resolve(env)?;
        let mut laid: HashSet<PathBuf> = HashSet::new();
        // Groups: a job with stonewall starts a new group (fio's semantics).
        let mut groups: Vec<Vec<usize>> = Vec::new();
        for (i, j) in self.jobs.iter().enumerate() {
            if j.stonewall || groups.is_empty() {
                groups.push(Vec::new());
            }
            groups.last_mut().expect("a group exists").push(i);
        }
        let stats_name = env.stats_device.as_deref().and_then(diskstats::kernel_name);
        let mem_total = crate::store::mem_total_bytes();
        for group in groups {
            if crate::runner::stop_requested() {
                return Err("interrupted".into());
            }
            let members: Vec<&Worker> = r
                .workers
                .iter()
                .filter(|w| group.contains(&w.job))
                .collect();
            for w in &members {
                if let Some((path, region)) = r.layout.iter().find(|(p, _)| p == &w.path) {
                    if laid.insert(path.clone()) {
                        lay_out(path, *region, w.blockdev, env.quiet)?;
                    }
                }
            }
            let dropped = crate::runner::sync_and_drop_caches();
            let started_at = now_rfc3339();
            let t0 = Instant::now();
            let disk_before = stats_name.as_deref().and_then(diskstats::read);
            let cpu0 = cpu::start();
            let results = run_group(&self.jobs, &members);
            let mut cpu_m = BTreeMap::new();
            let (user_ns, _) = cpu0.finish(&mut cpu_m);
            // What the device wrote includes what the filesystem writes back after the phase.
            if let Some(w) = members.first() {
                if !w.blockdev {
                    if let Ok(f) = File::open(&w.path) {
                        let _ = crate::sys::syncfs(&f);
                    }
                }
            }
            let disk_after = stats_name.as_deref().and_then(diskstats::read);
            let wall = t0.elapsed().as_secs_f64();
            let group_ios: u64 = results.iter().map(|(_, s, _)| s.reads + s.writes).sum();
            let group_written: u64 = results.iter().map(|(_, s, _)| s.write_bytes).sum();
            for &ji in &group {
                let job = &self.jobs[ji];
                let mut st = Stats::new();
                let mut how: Vec<String> = Vec::new();
                for (_, s, h) in results.iter().filter(|(j, _, _)| *j == ji) {
                    st.merge(s);
                    for x in h {
                        if !how.contains(x) {
                            how.push(x.clone());
                        }
                    }
                }
                let mut metrics = cpu_m.clone();
                let secs = st.measured.as_secs_f64().max(1e-9);
                let ios = st.reads + st.writes;
                let bytes = st.read_bytes + st.write_bytes;
                metrics.insert("ios".into(), ios as f64);
                metrics.insert("bytes".into(), bytes as f64);
                metrics.insert("runtime_s".into(), st.measured.as_secs_f64());
                metrics.insert("iops".into(), ios as f64 / secs);
                metrics.insert("bytes_per_sec".into(), bytes as f64 / secs);
                metrics.insert("read_ios".into(), st.reads as f64);
                metrics.insert("write_ios".into(), st.writes as f64);
                metrics.insert("read_bytes".into(), st.read_bytes as f64);
                metrics.insert("write_bytes".into(), st.write_bytes as f64);
                metrics.insert("read_iops".into(), st.reads as f64 / secs);
                metrics.insert("write_iops".into(), st.writes as f64 / secs);
                metrics.insert("read_bytes_per_sec".into(), st.read_bytes as f64 / secs);
                metrics.insert("write_bytes_per_sec".into(), st.write_bytes as f64 / secs);
                metrics.insert("iodepth".into(), job.iodepth as f64);
                metrics.insert("numjobs".into(), job.numjobs as f64);
                if group_ios > 0 {
                    metrics.insert(
                        "cpu_user_ns_per_io".into(),
                        user_ns as f64 / group_ios as f64,
                    );
                }
                hist::summarize(&st.lat, "lat", &mut metrics);
                let mixed = st.reads > 0 && st.writes > 0;
                if mixed {
                    hist::summarize(&st.read_lat, "read_lat", &mut metrics);
                    hist::summarize(&st.write_lat, "write_lat", &mut metrics);
                }
                if let (Some(a), Some(b)) = (disk_before, disk_after) {
                    let dw = b.write_bytes.saturating_sub(a.write_bytes);
                    metrics.insert("device_write_bytes".into(), dw as f64);
                    metrics.insert(
                        "device_read_bytes".into(),
                        b.read_bytes.saturating_sub(a.read_bytes) as f64,
                    );
                    if group_written > 0 {
                        metrics.insert(
                            "write_amplification".into(),
                            dw as f64 / group_written as f64,
                        );
                    }
                }
                let mut histograms = BTreeMap::new();
                histograms.insert("lat_ns".to_string(), hist::encode(&st.lat));
                if mixed {
                    histograms.insert("read_lat_ns".to_string(), hist::encode(&st.read_lat));
                    histograms.insert("write_lat_ns".to_string(), hist::encode(&st.write_lat));
                }
                let mut series = BTreeMap::new();
                series.insert(
                    "iops".to_string(),
                    st.per_sec.iter().map(|x| x.0 as f64).collect(),
                );
                series.insert(
                    "bytes_per_sec".to_string(),
                    st.per_sec.iter().map(|x| x.1 as f64).collect(),
                );
                let mut notes = r.notes[ji].clone();
                let buffered = how.iter().any(|h| h.starts_with("buffered"));
                let region_total: u64 = r
                    .workers
                    .iter()
                    .filter(|w| w.job == ji)
                    .map(|w| w.pattern.region)
                    .sum();
                if st.reads > 0 && env.fs == "tmpfs" {
                    notes.push(
                        "page_cache: tmpfs lives in the page cache; reads measure memory".into(),
                    );
                } else if st.reads > 0 && buffered && region_total < mem_total {
                    notes.push(format!(
                        "page_cache: buffered reads of {} on a machine with {} of RAM may be served from the page cache",
                        fmt(region_total),
                        fmt(mem_total)
                    ));
                }
                if !dropped {
                    notes.push(
                        "page_cache: caches could not be dropped before the test (not root)".into(),
                    );
                }
                if how.iter().any(|h| h.contains("O_DIRECT refused")) {
                    notes.push(format!("direct=1 refused by {}: ran buffered", env.fs));
                }
                if group.len() > 1 {
                    notes.push(format!(
                        "cpu and device figures are for the {} jobs that ran together",
                        group.len()
                    ));
                }
                if st.interrupted {
                    notes.push("interrupted: stopped early by a signal".into());
                }
                let mut config = serde_json::to_value(job).unwrap_or_default();
                if let Some(o) = config.as_object_mut() {
                    let files: Vec<String> = r
                        .workers
                        .iter()
                        .filter(|w| w.job == ji)
                        .map(|w| w.path.display().to_string())
                        .collect::<HashSet<_>>()
                        .into_iter()
                        .collect();
                    o.insert("files".into(), files.into());
                    o.insert(
                        "region_bytes".into(),
                        (region_total / job.numjobs as u64).into(),
                    );
                    o.insert("engine_detail".into(), how.join("; ").into());
                }
                let phase = Phase {
                    test: job.name.clone(),
                    started_at: started_at.clone(),
                    duration_s: wall,
                    error: st.error.clone(),
                    metrics,
                    notes,
                    histograms,
                    series,
                    config: Some(config),
                    skipped: None,
                };
                emit(phase).map_err(|e| format!("cannot save the record: {e}"))?;
                if st.interrupted {
                    return Err("interrupted".into());
                }
            }
        }
        Ok(())
    }
}

/// Runs the workers of one group side by side; returns (job index, stats, how it ran).
fn run_group(jobs: &[Job], members: &[&Worker]) -> Vec<(usize, Stats, Vec<String>)> {
    let barrier = Barrier::new(members.len());
    let datas: Vec<WriteData> = members
        .iter()
        .map(|w| WriteData::new(w.pattern.seed, w.pattern.max_bs(), w.pattern.compress_pct))
        .collect();
    std::thread::scope(|s| {
        let handles: Vec<_> = members
            .iter()
            .zip(&datas)
            .map(|(w, data)| {
                let job = &jobs[w.job];
                let barrier = &barrier;
                s.spawn(move || {
                    let prepared = open_engine(job, w);
                    barrier.wait();
                    match prepared {
                        Ok((mut eng, how)) => {
                            let st = io::drive(eng.as_mut(), &w.pattern, data);
                            (w.job, st, how)
                        }
                        Err(e) => {
                            let mut st = Stats::new();
                            st.error = Some(e);
                            (w.job, st, Vec::new())
                        }
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    let mut st = Stats::new();
                    st.error = Some("a worker thread panicked".into());
                    (usize::MAX, st, Vec::new())
                })
            })
            .collect()
    })
}

type Prepared = (Box<dyn engine::IoEngine>, Vec<String>);

fn open_engine(job: &Job, w: &Worker) -> Result<Prepared, String> {
    let def = engine::def(job.engine);
    let depth = job.iodepth.max(1) as usize;
    let bs = w.pattern.max_bs() as usize;
    if job.engine == EngineKind::Null {
        let eng = (def.open)(None, depth, bs).map_err(|e| e.to_string())?;
        return Ok((eng, vec!["null".into()]));
    }
    let mut how = Vec::new();
    let open = |direct: bool| {
        let mut o = OpenOptions::new();
        o.read(true).write(writes(job.rw));
        if direct {
            o.custom_flags(libc::O_DIRECT);
        }
        o.open(&w.path)
    };
    let file = match open(job.direct) {
        Ok(f) => {
            how.push(if job.direct { "direct" } else { "buffered" }.to_string());
            f
        }
        Err(e) if job.direct && e.raw_os_error() == Some(libc::EINVAL) => {
            how.push("buffered (O_DIRECT refused by the filesystem)".to_string());
            open(false).map_err(|e| format!("{}: {e}", w.path.display()))?
        }
        Err(e) => return Err(format!("{}: {e}", w.path.display())),
    };
    let eng = (def.open)(Some(file), depth, bs)
        .map_err(|e| format!("cannot set up {} on {}: {e}", def.name, w.path.display()))?;
    how.push(eng.describe());
    Ok((eng, how))
}

/// Writes `region` bytes of fresh data to a job's file (or fsbench's device) and syncs it, so that
/// reads read real data, as fio lays out its files. Not measured.
fn lay_out(path: &Path, region: u64, blockdev: bool, quiet: bool) -> Result<(), String> {
    if !quiet {
        eprintln!(
            "fsbench:   laying out {} of test data in {}",
            fmt(region),
            path.display()
        );
    }
    let err = |e: std::io::Error| format!("laying out {}: {e}", path.display());
    let mut f = OpenOptions::new()
        .write(true)
        .create(!blockdev)
        .truncate(false)
        .open(path)
        .map_err(err)?;
    const CHUNK: usize = 1 << 20;
    let data = WriteData::new(0x1a70_u64, CHUNK as u64, 0);
    let mut rng = crate::workload::data::DataGen::new(region);
    let mut buf = vec![0u8; CHUNK];
    let mut done = 0u64;
    while done < region {
        if crate::runner::stop_requested() {
            return Err("interrupted".into());
        }
        let n = (region - done).min(CHUNK as u64) as usize;
        data.fill(&mut buf[..n], &mut rng);
        f.write_all(&buf[..n]).map_err(err)?;
        done += n as u64;
    }
    f.sync_all().map_err(err)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_in(dir: &Path, jobfile: &str) -> Vec<Phase> {
        let path = dir.join("t.fio");
        std::fs::write(&path, jobfile).unwrap();
        let b = from_jobfile(&path, &Overrides::default()).unwrap();
        let mut phases = Vec::new();
        let env = Env {
            place: Place::Mount(dir),
            fs: "test",
            stats_device: None,
            quiet: true,
        };
        b.execute(&env, &mut |p| {
            phases.push(p);
            Ok(())
        })
        .unwrap();
        phases
    }

    #[test]
    fn written_data_is_incompressible_and_never_repeats() {
        let dir = tempfile::tempdir().unwrap();
        let phases = run_in(
            dir.path(),
            "[w]\nrw=write\nbs=64k\nsize=4m\nfilename=data\nioengine=sync\n",
        );
        assert_eq!(phases.len(), 1);
        assert!(phases[0].error.is_none(), "{:?}", phases[0].error);
        assert_eq!(phases[0].metrics["write_bytes"], (4 << 20) as f64);
        let data = std::fs::read(dir.path().join("data")).unwrap();
        assert_eq!(data.len(), 4 << 20);
        // gzip -9 gains less than 1%.
        let out = std::process::Command::new("gzip")
            .args(["-9", "-c"])
            .arg(dir.path().join("data"))
            .output()
            .unwrap();
        let ratio = out.stdout.len() as f64 / data.len() as f64;
        assert!(ratio > 0.99, "compressed to {ratio}");
        // No 4 KiB block appears twice.
        let blocks: HashSet<&[u8]> = data.chunks(4096).collect();
        assert_eq!(blocks.len(), data.len() / 4096);
    }

    #[test]
    fn jobs_record_every_metric_and_the_histogram_decodes() {
        let dir = tempfile::tempdir().unwrap();
        let phases = run_in(
            dir.path(),
            "[global]\nsize=2m\nfilename=f\n[r]\nrw=randread\nbs=4k\nstonewall\n[m]\nrw=randrw\nrwmixread=50\nbs=4k\nnumjobs=2\nstonewall\n",
        );
        assert_eq!(phases.len(), 2);
        let r = &phases[0];
        assert_eq!(r.test, "r");
        for k in RECORD_METRICS {
            assert!(r.metrics.contains_key(*k), "missing {k}");
        }
        assert_eq!(r.metrics["read_bytes"], (2 << 20) as f64);
        let h = hist::decode(&r.histograms["lat_ns"]).unwrap();
        assert_eq!(h.len() as f64, r.metrics["ios"]);
        let m = &phases[1];
        assert_eq!(m.metrics["bytes"], (4 << 20) as f64, "2 workers x 2 MiB");
        assert!(
            m.metrics.contains_key("read_lat_p99_ns") && m.metrics.contains_key("write_lat_p99_ns")
        );
        assert!(m.notes.iter().any(|n| n.contains("2 workers")));
        assert!(
            r.notes.iter().any(|n| n.starts_with("page_cache")),
            "{:?}",
            r.notes
        );
    }

    #[test]
    fn bad_jobs_are_refused_before_anything_runs() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.fio");
        std::fs::write(&path, "[a]\nrw=read\nfilename=/etc/passwd\nsize=1m\n").unwrap();
        let b = from_jobfile(&path, &Overrides::default()).unwrap();
        let env = Env {
            place: Place::Mount(dir.path()),
            fs: "test",
            stats_device: None,
            quiet: true,
        };
        let e = b.execute(&env, &mut |_| Ok(())).unwrap_err();
        assert!(e.contains("absolute"), "{e}");
        std::fs::write(&path, "[a]\nrw=read\nfilename=nofile\n").unwrap();
        let b = from_jobfile(&path, &Overrides::default()).unwrap();
        let e = b.execute(&env, &mut |_| Ok(())).unwrap_err();
        assert!(e.contains("no size"), "{e}");
        std::fs::write(&path, "[a]\nrw=read\nsize=1p\n").unwrap();
        let e = from_jobfile(&path, &Overrides::default()).err().unwrap();
        assert!(e.contains("t.fio:3:"), "{e}");
    }
}
