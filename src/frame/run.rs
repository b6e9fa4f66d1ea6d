//! One phase through the frame: the same steps for every phase of every workload.

use crate::metrics::name as metric;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

use super::{
    explain, pool, probe, CachePolicy, Cluster, FirstDone, Frame, Merged, Phase, PhaseSpec,
    RankTimes, RunError, Runs, Session, TargetCtx, WorkerOut,
};
use crate::metrics::clock::now_rfc3339;
use crate::metrics::evidence::{Board, Scan, Snapshot, Walk, Watch};
use crate::metrics::progress::Progress;
use crate::stop::StopReason;

/// A phase's records, and whether a stop request ended it early.
pub struct PhaseOutcome {
    pub phases: Vec<Phase>,
    pub stopped: Option<StopReason>,
}

/// Runs phase `i` of `s` on target `t`: prepare, barrier, cache policy, the probes, workers,
/// flush, merge, records. `label` names the target on the progress line; `last` holds the walk
/// over every process that ended the phase before (`Snapshot::first`), then this phase's.
pub fn run_phase(
    s: &mut dyn Session,
    i: usize,
    t: &TargetCtx,
    label: &str,
    cluster: &dyn Cluster,
    last: &mut Option<Walk>,
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
    let around = Around::start(&spec, t, stat_dir, last.take());
    let run = workers(s, i, &spec, label, t, cluster, &around.board);
    let from = run
        .t0
        .saturating_duration_since(after_barrier)
        .as_secs_f64();
    let (parts, mut frame, walk) = around.end(&run, &spec, t, from);
    *last = walk;
    frame.dropped = dropped;
    frame.rank.barrier_mono = barrier_mono;
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
    }
    Ok(PhaseOutcome { phases, stopped })
}

/// What the frame keeps around the workers: the device stack it reads, the board the workers
/// leave their figures on, the first readings and the probes.
struct Around {
    stat_dir: Option<PathBuf>,
    watch: Watch,
    board: Arc<Board>,
    statvfs_before: Option<crate::sys::FsStat>,
    before: Snapshot,
    probes: probe::Probes,
    started_at: String,
    t0: Instant,
}

impl Around {
    /// The first readings and every probe started, the moment before the pool starts (`last`:
    /// the walk that ended the phase before).
    fn start(
        spec: &PhaseSpec,
        t: &TargetCtx,
        stat_dir: Option<PathBuf>,
        last: Option<Walk>,
    ) -> Around {
        let watch = explain::watch_of(t);
        let board = Arc::new(Board::new(spec.workers.max(1)));
        let statvfs_before = probe::statvfs(stat_dir.as_deref(), t, spec.space);
        let before = Snapshot::first(&watch, last);
        let probes = probe::start(&super::reading::Start {
            spec,
            t,
            watch: &watch,
            before: &before,
            board: &board,
        });
        Around {
            stat_dir,
            watch,
            board,
            statvfs_before,
            before,
            probes,
            started_at: now_rfc3339(),
            t0: Instant::now(),
        }
    }

    /// The workers ended: the last readings (after the flush of a writing phase), the parts
    /// merged, the frame with every probe's figures and the last walk over every process (this
    /// phase's, or the one it started from), for the next phase (`from`: the pool's start after
    /// the barrier).
    fn end(
        self,
        run: &pool::PoolRun,
        spec: &PhaseSpec,
        t: &TargetCtx,
        from: f64,
    ) -> (Vec<WorkerOut>, Frame, Option<Walk>) {
        let done = Snapshot::last(&self.watch, &self.before);
        let mut probes = self.probes;
        probes.workers_done(run);
        let dir = self.stat_dir.as_deref();
        let (flushed, sync_failure) = flush(spec, dir, &self.watch);
        // The phase's time ends here: a ZFS pool's commit below is not the workload's.
        let wall = self.t0.elapsed();
        let statvfs_after = probe::statvfs(dir, t, spec.space);
        let (parts, first_done, rank) = merge_parts(run, from);
        let mut frame = Frame {
            started_at: self.started_at,
            wall,
            workers: run.outs.len(),
            first_done,
            last_done_s: run.last_done_s,
            sync_failure,
            rank,
            ..Default::default()
        };
        let readings = super::reading::Readings {
            watch: self.watch,
            before: self.before,
            done,
            flushed,
            statvfs: [self.statvfs_before, statvfs_after],
        };
        probes.end(&readings, &parts, &mut frame);
        let walk = readings.done.into_walk();
        (parts, frame, walk.or_else(|| readings.before.into_walk()))
    }
}

/// The pool of the phase's workers, each running the session's work (and its work beside them
/// when the spec asks).
fn workers(
    s: &dyn Session,
    i: usize,
    spec: &PhaseSpec,
    label: &str,
    t: &TargetCtx,
    cluster: &dyn Cluster,
    board: &Board,
) -> pool::PoolRun {
    let beside = |done: &AtomicBool, p: &[Progress]| s.beside(i, done, p);
    let beside: Option<pool::Beside> = spec.beside.then_some(&beside);
    pool::run_workers(
        spec,
        label,
        t.quiet,
        |ctx| s.work(i, ctx),
        beside,
        cluster,
        board,
    )
}

/// After a writing phase, the filesystem's write-back: syncfs on its directory, and the reading
/// after it (what the device wrote includes it). A stopped phase skips it (the launcher of a
/// multi-rank run allows a second for the end).
fn flush(
    spec: &PhaseSpec,
    dir: Option<&Path>,
    watch: &Watch,
) -> (Option<Snapshot>, Option<crate::io::Failure>) {
    let Some(d) = dir.filter(|_| spec.writes && !crate::stop::stop_requested()) else {
        return (None, None);
    };
    let failure = File::open(d).ok().and_then(|f| {
        let e = crate::sys::syncfs(&f).err()?;
        Some(crate::io::Failure::io("syncfs after the phase", &e).path(d))
    });
    (Some(Snapshot::take(watch, Scan::No)), failure)
}

/// The workers' figures merged per part, the first-done figures per part, and this process's
/// times and totals for the reduction across ranks (`from`: the pool's start after the barrier).
/// A part a worker ran at once after its own (`WorkerOut::then`) is a part of its own, its
/// operations and bytes moved out of the worker's.
fn merge_parts(run: &pool::PoolRun, from: f64) -> (Vec<WorkerOut>, Vec<FirstDone>, RankTimes) {
    let mut into = Parts {
        parts: Vec::new(),
        first_done: Vec::new(),
        rank: RankTimes {
            start_s: from,
            first_s: from + run.first_done_s,
            end_s: from + run.last_done_s,
            ..Default::default()
        },
        first_done_s: run.first_done_s,
    };
    for (w, out) in run.outs.iter().enumerate() {
        let mut totals = run.totals.get(w).copied();
        let mut first_done = run.first_done.get(w).copied();
        let mut across = run.across.as_ref().and_then(|a| a.get(w)).copied();
        if let Some(then) = &out.then {
            // The worker's counts include the part it ran at once: they are that part's.
            let moved = (then.ops, then.bytes);
            let less = |x: (u64, u64)| (x.0.saturating_sub(moved.0), x.1.saturating_sub(moved.1));
            totals = totals.map(less);
            first_done = first_done.map(less);
            across = across.map(less);
            into.add(&then.out, Some(moved), None, None);
        }
        into.add(out, totals, across, first_done);
    }
    (into.parts, into.first_done, into.rank)
}

/// The parts being merged.
struct Parts {
    parts: Vec<WorkerOut>,
    first_done: Vec<FirstDone>,
    rank: RankTimes,
    first_done_s: f64,
}

impl Parts {
    /// One worker's figures of its part: what it measured, its totals (ops, bytes), what it had
    /// done when the fastest worker of all ranks finished (`across`) and when this process's
    /// fastest did (`first_done`).
    fn add(
        &mut self,
        out: &WorkerOut,
        totals: Option<(u64, u64)>,
        across: Option<(u64, u64)>,
        first_done: Option<(u64, u64)>,
    ) {
        while self.parts.len() <= out.part {
            self.parts.push(WorkerOut {
                part: self.parts.len(),
                ..Default::default()
            });
            self.first_done.push(FirstDone {
                secs: self.first_done_s,
                ..Default::default()
            });
            self.rank.totals.push((0, 0));
            self.rank.across.push((0, 0));
        }
        let k = out.part;
        self.parts[k].merge(out);
        let add = |to: &mut (u64, u64), x: Option<(u64, u64)>| {
            if let Some((ops, bytes)) = x {
                to.0 += ops;
                to.1 += bytes;
            }
        };
        if let Some((ops, bytes)) = first_done {
            self.first_done[k].ops += ops;
            self.first_done[k].bytes += bytes;
        }
        add(&mut self.rank.totals[k], totals);
        add(&mut self.rank.across[k], across);
    }
}

/// A phase that failed keeps the failed call (the first worker's, or the filesystem's sync
/// after it).
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
}

/// What part `k` moved in all: every rank's operations and bytes, or this process's.
fn moved(m: &Merged, k: usize) -> (u64, u64) {
    match m.ranks.get(k).filter(|r| !r.is_empty()) {
        Some(ranks) => ranks
            .iter()
            .fold((0, 0), |(o, b), r| (o + r.work.ops, b + r.work.bytes)),
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

/// The frame's own figures and notes on every record, then each probe's part.
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
    if p.latency.is_none() && p.skipped.is_none() {
        p.latency = m.parts.get(k).and_then(|x| x.timeline.clone());
    }
    if p.started_at.is_empty() {
        p.started_at = f.started_at.clone();
    }
    if p.duration_s == 0.0 {
        p.duration_s = f.wall.as_secs_f64();
    }
    probe::write(p, k, m, spec, t);
    if f.workers > 1 {
        if let Some(fd) = f.first_done.get(k) {
            first_done(p, fd, f.last_done_s);
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
        p.notes.extend(t.ranks.placement.note());
    }
    for n in notes(k, spec, m, t, stopped) {
        if !p.notes.contains(&n) {
            p.notes.push(n);
        }
    }
}

/// What every worker had done when the fastest finished, and when the last did.
fn first_done(p: &mut Phase, fd: &FirstDone, last_done_s: f64) {
    let secs = fd.secs.max(1e-9);
    let m = &mut p.metrics;
    m.insert(metric::FIRST_DONE_S.into(), fd.secs);
    m.insert(metric::FIRST_DONE_OPS.into(), fd.ops as f64);
    m.insert(metric::FIRST_DONE_OPS_PER_SEC.into(), fd.ops as f64 / secs);
    m.insert(
        metric::FIRST_DONE_BYTES_PER_SEC.into(),
        fd.bytes as f64 / secs,
    );
    m.insert(metric::LAST_DONE_S.into(), last_done_s);
}

/// The frame's notes: reads that measure memory, jobs that ran together, a stop.
fn notes(
    k: usize,
    spec: &PhaseSpec,
    m: &Merged,
    t: &TargetCtx,
    stopped: Option<StopReason>,
) -> Vec<String> {
    use crate::store::note::{make, Kind};
    let part_reads = m.parts.get(k).map(|x| x.counters.get("reads").copied());
    let reads = spec.reads && !matches!(part_reads, Some(Some(r)) if r == 0.0);
    let mut notes = Vec::new();
    if reads && t.caps.memory_backed {
        notes.push(make(
            Kind::PageCache,
            "tmpfs lives in the page cache; reads measure memory",
        ));
    } else if reads && !m.frame.dropped {
        notes.push(make(
            Kind::PageCache,
            "caches could not be dropped before the phase (not root); reads may be served from memory",
        ));
    }
    notes.extend(shared_figures(k, spec, m));
    if let Some(why) = stopped {
        notes.push(make(Kind::Interrupted, format!("stopped early ({why})")));
    }
    notes
}

/// Whose cpu and device figures a part's record carries when the phase had several parts: the
/// jobs' that ran together, or the phase's, for a part run at once after the one before.
fn shared_figures(k: usize, spec: &PhaseSpec, m: &Merged) -> Option<String> {
    let runs = |k: usize| spec.parts.get(k).map_or(Runs::Together, |p| p.runs);
    let together = (0..m.parts.len())
        .filter(|&j| runs(j) == Runs::Together)
        .count();
    match runs(k) {
        Runs::AtOnce => Some(format!(
            "run at once after '{}' on the same workers, as its tool does (no gap between them): its cpu, device and rank windows are that whole phase's",
            spec.name
        )),
        Runs::Together if together > 1 => Some(format!(
            "cpu and device figures are for the {together} jobs that ran together"
        )),
        Runs::Together => None,
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
    let mut last = None;
    for i in 0..s.phases().len() {
        let out = run_phase(s, i, t, label, cluster, &mut last)?;
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
