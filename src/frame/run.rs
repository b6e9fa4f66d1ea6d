//! One phase through the frame: the same steps for every phase of every workload.

use crate::metrics::name as metric;
use std::collections::BTreeMap;
use std::fs::File;
use std::path::Path;
use std::time::Instant;

use super::{
    explain, pool, profiled, CachePolicy, Cluster, FirstDone, Frame, Merged, Phase, PhaseSpec,
    RankTimes, RunError, Session, TargetCtx, WorkerOut,
};
use crate::metrics::clock::now_rfc3339;
use crate::metrics::{cpu, diskstats};
use crate::stop::StopReason;

/// A phase's records, and whether a stop request ended it early.
pub struct PhaseOutcome {
    pub phases: Vec<Phase>,
    pub stopped: Option<StopReason>,
}

/// statvfs of the target's directory. For a phase that reports space figures the target settles
/// first (a ZFS pool commits), or its figures lag behind what was written.
fn statvfs(dir: Option<&Path>, t: &TargetCtx, space: bool) -> Option<crate::sys::FsStat> {
    let dir = dir?;
    let settled = t.target.as_ref().filter(|_| space).and_then(|h| h.settle());
    if let Some(Err(e)) = settled {
        crate::out::eline!("fsbench: warning: before statvfs: {e}");
    }
    crate::sys::statvfs(dir).ok()
}

/// Runs phase `i` of `s` on target `t`: prepare, barrier, cache policy, sampling, workers,
/// merge, records. `label` names the target on the progress line.
pub fn run_phase(
    s: &mut dyn Session,
    i: usize,
    t: &TargetCtx,
    label: &str,
    cluster: &dyn Cluster,
) -> Result<PhaseOutcome, RunError> {
    let mut spec = s.phases()[i].clone();
    spec.interval = t.interval;
    s.prepare(i)?;
    if let Some(why) = crate::stop::requested() {
        return Err(RunError::Stopped(why));
    }
    cluster.barrier(&format!("phase '{}' on {label}", spec.name))?;
    let after_barrier = Instant::now();
    let barrier_mono = crate::sys::monotonic_s();
    let dropped = match spec.cache {
        CachePolicy::Drop => crate::sys::host::sync_and_drop_caches(),
        CachePolicy::Keep => true,
    };
    let stat_dir = s
        .stat_dir()
        .or(t.stat_dir.as_deref())
        .map(Path::to_path_buf);
    let stats_name = t.device.as_deref().and_then(diskstats::kernel_name);
    let disk_before = stats_name.as_deref().and_then(diskstats::read);
    let statvfs_before = statvfs(stat_dir.as_deref(), t, spec.space);
    // A phase that runs with no other thread alive stops the live metrics endpoint's thread
    // for its length.
    let _hushed = pool::inline(&spec).then(crate::metrics::feed::hush);
    let mut gathering = explain::Gathering::start(&spec, t, pool::inline(&spec));
    let profile = profiled::start(t, gathering.board());
    let started_at = now_rfc3339();
    let t0 = Instant::now();
    let cpu0 = cpu::start();
    let run = {
        let shared: &dyn Session = s;
        let beside = |done: &std::sync::atomic::AtomicBool,
                      p: &[crate::metrics::progress::Progress]| {
            shared.beside(i, done, p)
        };
        let beside: Option<pool::Beside> = spec.beside.then_some(&beside);
        pool::run_workers(
            &spec,
            label,
            t.quiet,
            |ctx| shared.work(i, ctx),
            beside,
            cluster,
            gathering.board(),
        )
    };
    let intervals = gathering.workers_done();
    let profiled = profiled::finish(profile, &run);
    let mut cpu = BTreeMap::new();
    let (cpu_user_ns, _) = cpu0.finish(&mut cpu);
    // What the device wrote includes what the filesystem writes back after the phase.
    let mut sync_failure = None;
    // (A stopped phase skips it: the launcher of a multi-rank run allows a second for the end.)
    if spec.writes && !crate::stop::stop_requested() {
        if let Some(d) = stat_dir.as_deref() {
            if let Ok(f) = File::open(d) {
                if let Err(e) = crate::sys::syncfs(&f) {
                    sync_failure =
                        Some(crate::io::Failure::io("syncfs after the phase", &e).path(d));
                }
            }
        }
    }
    let disk_after = stats_name.as_deref().and_then(diskstats::read);
    // The phase's time ends here: a ZFS pool's commit below is not the workload's.
    let wall = t0.elapsed();
    let statvfs_after = statvfs(stat_dir.as_deref(), t, spec.space);
    let from = run
        .t0
        .saturating_duration_since(after_barrier)
        .as_secs_f64();
    let (parts, first_done, mut rank) = merge_parts(&run, from);
    rank.barrier_mono = barrier_mono;
    let evidence = Some(gathering.end(intervals, &parts));
    let frame = Frame {
        started_at,
        wall,
        dropped,
        cpu,
        cpu_user_ns,
        device: match (disk_before, disk_after) {
            (Some(a), Some(b)) => Some(diskstats::DevIo {
                read_bytes: b.read_bytes.saturating_sub(a.read_bytes),
                write_bytes: b.write_bytes.saturating_sub(a.write_bytes),
            }),
            _ => None,
        },
        statvfs_before,
        statvfs_after,
        workers: run.outs.len(),
        first_done,
        last_done_s: run.last_done_s,
        sync_failure,
        rank,
        evidence,
    };
    let merged = cluster.reduce(Merged {
        parts,
        frame,
        ranks: Vec::new(),
        nodes: Vec::new(),
    })?;
    let stopped = merged.parts.iter().find_map(|p| p.stopped);
    let mut phases = s.finish(i, &merged)?;
    for (k, p) in phases.iter_mut().enumerate() {
        decorate(p, k, &spec, &merged, t, stopped);
        profiled::attach(p, k, profiled.as_ref());
    }
    Ok(PhaseOutcome { phases, stopped })
}

/// The workers' figures merged per part, the first-done figures per part, and this process's
/// times and totals for the reduction across ranks (`from`: the pool's start after the barrier).
fn merge_parts(run: &pool::PoolRun, from: f64) -> (Vec<WorkerOut>, Vec<FirstDone>, RankTimes) {
    let mut parts: Vec<WorkerOut> = Vec::new();
    let mut first_done: Vec<FirstDone> = Vec::new();
    let mut rank = RankTimes {
        start_s: from,
        first_s: from + run.first_done_s,
        end_s: from + run.last_done_s,
        ..Default::default()
    };
    for (w, out) in run.outs.iter().enumerate() {
        while parts.len() <= out.part {
            parts.push(WorkerOut {
                part: parts.len(),
                ..Default::default()
            });
            first_done.push(FirstDone {
                secs: run.first_done_s,
                ..Default::default()
            });
            rank.totals.push((0, 0));
            rank.across.push((0, 0));
        }
        parts[out.part].merge(out);
        if let Some((ops, bytes)) = run.first_done.get(w) {
            first_done[out.part].ops += ops;
            first_done[out.part].bytes += bytes;
        }
        let add = |to: &mut (u64, u64), x: Option<&(u64, u64)>| {
            if let Some((ops, bytes)) = x {
                to.0 += ops;
                to.1 += bytes;
            }
        };
        add(&mut rank.totals[out.part], run.totals.get(w));
        add(
            &mut rank.across[out.part],
            run.across.as_ref().and_then(|a| a.get(w)),
        );
    }
    (parts, first_done, rank)
}

/// The frame's own figures and notes, the same on every record.
/// A phase that failed keeps the failed call (the first worker's, or the filesystem's sync after
/// it) and the target's space when it ended.
fn failure(p: &mut Phase, k: usize, m: &Merged) {
    if p.error.is_none() && p.skipped.is_none() {
        if let Some(sf) = &m.frame.sync_failure {
            p.error = Some(sf.to_string());
            p.failure = Some(sf.clone());
        }
    }
    if p.error.is_some() && p.failure.is_none() {
        p.failure = m.parts.get(k).and_then(|x| x.failure.clone());
    }
    if let (Some(fl), Some(st)) = (&mut p.failure, &m.frame.statvfs_after) {
        if fl.space.is_empty() {
            fl.add_space(st);
        }
    }
}

/// What part `k` moved in all: every rank's operations and bytes, or this process's.
fn moved(m: &Merged, k: usize) -> (u64, u64) {
    match m.ranks.get(k).filter(|r| !r.is_empty()) {
        Some(ranks) => ranks
            .iter()
            .fold((0, 0), |(o, b), r| (o + r.ops, b + r.bytes)),
        None => m.frame.rank.totals.get(k).copied().unwrap_or_default(),
    }
}

/// A phase whose workers count their work and did none is no measurement: it fails, saying
/// why, unless it failed already, was skipped or was stopped.
fn moved_nothing(p: &mut Phase, k: usize, spec: &PhaseSpec, m: &Merged, stop: Option<StopReason>) {
    let judged = spec.empty == super::Empty::Fails;
    if !judged || p.error.is_some() || p.skipped.is_some() || stop.is_some() {
        return;
    }
    if moved(m, k) == (0, 0) {
        p.error = Some(format!(
            "moved no data: the workers of '{}' ended without one I/O or operation (a limit that ended them first, or nothing asked of them); its figures measure nothing",
            p.test
        ));
    }
}

fn decorate(
    p: &mut Phase,
    k: usize,
    spec: &PhaseSpec,
    m: &Merged,
    t: &TargetCtx,
    stopped: Option<StopReason>,
) {
    let f = &m.frame;
    failure(p, k, m);
    moved_nothing(p, k, spec, m, stopped);
    explain::explain(p, spec, t, f.evidence.as_ref());
    if p.latency.is_none() && p.skipped.is_none() {
        p.latency = m.parts.get(k).and_then(|x| x.timeline.clone());
    }
    if p.started_at.is_empty() {
        p.started_at = f.started_at.clone();
    }
    if p.duration_s == 0.0 {
        p.duration_s = f.wall.as_secs_f64();
    }
    for (name, v) in &f.cpu {
        p.metrics.entry(name.clone()).or_insert(*v);
    }
    if let Some(d) = f.device {
        p.metrics
            .insert(metric::DEVICE_WRITE_BYTES.into(), d.write_bytes as f64);
        p.metrics
            .insert(metric::DEVICE_READ_BYTES.into(), d.read_bytes as f64);
        let written: f64 = m.parts.iter().map(|x| x.counter(metric::WRITE_BYTES)).sum();
        if written > 0.0 {
            p.metrics.insert(
                metric::WRITE_AMPLIFICATION.into(),
                d.write_bytes as f64 / written,
            );
        }
    }
    if f.workers > 1 {
        if let Some(fd) = f.first_done.get(k) {
            let secs = fd.secs.max(1e-9);
            p.metrics.insert(metric::FIRST_DONE_S.into(), fd.secs);
            p.metrics
                .insert(metric::FIRST_DONE_OPS.into(), fd.ops as f64);
            p.metrics
                .insert(metric::FIRST_DONE_OPS_PER_SEC.into(), fd.ops as f64 / secs);
            p.metrics.insert(
                metric::FIRST_DONE_BYTES_PER_SEC.into(),
                fd.bytes as f64 / secs,
            );
            p.metrics.insert(metric::LAST_DONE_S.into(), f.last_done_s);
        }
    }
    if let Some(ranks) = m.ranks.get(k).filter(|r| !r.is_empty()) {
        super::share::rank_metrics(ranks, &mut p.metrics);
        p.ranks = ranks.clone();
        p.nodes = m.nodes.get(k).cloned().unwrap_or_default();
        p.notes.push(format!(
            "ranks: {} ranks; rates are all ranks' work over the earliest start to the latest end",
            ranks.len()
        ));
    }
    let part_reads = m.parts.get(k).map(|x| x.counters.get("reads").copied());
    let reads = spec.reads && !matches!(part_reads, Some(Some(r)) if r == 0.0);
    let mut notes = Vec::new();
    if reads && t.caps.memory_backed {
        notes.push(crate::store::note::make(
            crate::store::note::Kind::PageCache,
            "tmpfs lives in the page cache; reads measure memory",
        ));
    } else if reads && !f.dropped {
        notes.push(crate::store::note::make(
            crate::store::note::Kind::PageCache,
            "caches could not be dropped before the phase (not root); reads may be served from memory",
        ));
    }
    if m.parts.len() > 1 {
        notes.push(format!(
            "cpu and device figures are for the {} jobs that ran together",
            m.parts.len()
        ));
    }
    if let Some(why) = stopped {
        notes.push(crate::store::note::make(
            crate::store::note::Kind::Interrupted,
            format!("stopped early ({why})"),
        ));
    }
    for n in notes {
        if !p.notes.contains(&n) {
            p.notes.push(n);
        }
    }
}

/// Runs every phase of a session, handing each record to `save` the moment it exists; then closes
/// the session. Returns the stop reason when a stop request ended it early.
pub fn run_session(
    s: &mut dyn Session,
    t: &TargetCtx,
    label: &str,
    cluster: &dyn Cluster,
    save: &mut dyn FnMut(Phase) -> Result<(), RunError>,
) -> Result<Option<StopReason>, RunError> {
    for i in 0..s.phases().len() {
        let out = run_phase(s, i, t, label, cluster)?;
        for p in out.phases {
            save(p)?;
        }
        if let Some(why) = out.stopped {
            return Ok(Some(why));
        }
    }
    s.close()?;
    Ok(crate::stop::requested())
}
