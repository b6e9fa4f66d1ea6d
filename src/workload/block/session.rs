//! A block workload on one target: one frame phase per stonewall group; each worker opens its
//! engine, crosses the start line with the others and drives its I/O loop.

use crate::metrics::name as metric;
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use super::resolve::Resolved;
use super::snap::{self, SnapOpts, SnapRun};
use super::steady::{self, SteadyRun};
use super::{fmt, writes, Block, Origin};
use crate::frame::{Merged, Phase, PhaseSpec, RunError, Session, TargetCtx, WorkerCtx, WorkerOut};
use crate::io::{self, Stats, WriteData};
use crate::metrics::hist;
use crate::metrics::progress::Progress;
use crate::plan::dir::Dir;
use crate::plan::job::Job;
use crate::provision::snapshot::Snapper;
use std::sync::atomic::AtomicBool;
use std::sync::Mutex;

pub struct BlockSession {
    block: Block,
    r: Resolved,
    /// The target, as the notes need it.
    target: Target,
    phases: phases::Phases,
    /// Each worker's write data.
    datas: Vec<WriteData>,
    laid: HashSet<PathBuf>,
    snap: Option<Snapping>,
    run: Shared,
}

/// The target as a block session's notes need it: its filesystem, whether it lives in memory
/// (tmpfs: no page-cache note), whether to be quiet, the host's memory.
struct Target {
    fs: String,
    memory: bool,
    quiet: bool,
    mem_total: u64,
}

/// What the jobs share as they run.
struct Shared {
    /// Per job: its steady-state monitor's state, when the job judges steady state.
    steady: Vec<Option<SteadyRun>>,
    /// fio's log files, written as each worker ends.
    logs: super::logs::Writer,
    /// Which workers end when a worker of a job with exitall ends.
    exits: super::exits::Exits,
    /// Each worker's own figures (fio's clones, for fio's JSON without group_reporting).
    clones: super::clones::Clones,
}

/// Snapshots under load: the target's snapper and what the phase's side thread measured.
struct Snapping {
    opts: SnapOpts,
    snapper: Mutex<Snapper>,
    run: Mutex<Option<SnapRun>>,
    how: String,
}

impl BlockSession {
    pub fn new(block: Block, r: Resolved, t: &TargetCtx, snapper: Option<Snapper>) -> BlockSession {
        let phases = phases::Phases::new(&block, &r, snapper.is_some());
        let snap = block.snap.zip(snapper).map(|(opts, s)| Snapping {
            opts,
            how: s.describe(),
            snapper: Mutex::new(s),
            run: Mutex::new(None),
        });
        let datas = r
            .workers
            .iter()
            .map(|w| WriteData::new(w.plan.seed, w.plan.max_bs(), w.plan.fill.compress_pct))
            .collect();
        let run = Shared {
            steady: block
                .jobs
                .iter()
                .map(|j| judged(j).map(SteadyRun::new))
                .collect(),
            logs: Default::default(),
            exits: super::exits::Exits::new(&block.jobs),
            clones: super::clones::Clones::new(r.workers.len()),
        };
        BlockSession {
            run,
            block,
            r,
            target: Target {
                fs: t.fs.clone(),
                memory: t.caps.memory_backed,
                quiet: t.quiet,
                mem_total: crate::sys::host::mem_total_bytes(),
            },
            phases,
            datas,
            laid: HashSet::new(),
            snap,
        }
    }
}

impl BlockSession {
    /// fio's invalidate for a job file's jobs: each job with invalidate=1 drops its own files'
    /// cached pages (posix_fadvise DONTNEED, as fio's file_invalidate_cache) before the phase;
    /// the rest of the page cache (other files, a loop image's backing file) is left, as fio
    /// leaves it. fsbench's own workloads drop the whole cache instead (CachePolicy::Drop).
    fn invalidate_files(&self, phase: usize) -> Result<(), RunError> {
        // Each file once, however many of the phase's workers share it (numjobs on one file).
        let files: std::collections::BTreeSet<&std::path::PathBuf> = self.phases.members[phase]
            .iter()
            .map(|&wi| &self.r.workers[wi])
            .filter(|w| self.block.jobs[w.job].invalidate)
            .flat_map(|w| w.files())
            .filter(|p| p.exists())
            .collect();
        for path in files {
            let f = std::fs::File::open(path)
                .map_err(RunError::io(format!("opening {}", path.display())))?;
            crate::sys::fadvise_dontneed(&f).map_err(RunError::io(format!(
                "dropping the cached pages of {} (fio's invalidate)",
                path.display()
            )))?;
        }
        Ok(())
    }
}

impl Session for BlockSession {
    fn phases(&self) -> &[PhaseSpec] {
        &self.phases.specs
    }

    fn prepare(&mut self, phase: usize) -> Result<(), RunError> {
        // The loop's clock learns the CPU counter's rate here, outside the timed phase.
        io::clock::calibrate();
        for &wi in &self.phases.members[phase] {
            let w = &self.r.workers[wi];
            for (path, start, end) in w.files().filter_map(|f| self.r.layout.get(f)) {
                if !self.laid.insert(path.clone()) {
                    continue;
                }
                let job = &self.block.jobs[w.job];
                // A job filling the filesystem writes it from empty (not laid out first).
                let fill = job.fill_device && writes(job.rw);
                if (self.block.fresh || fill) && !w.blockdev {
                    std::fs::File::create(path)
                        .map_err(RunError::io(format!("creating {}", path.display())))?;
                } else {
                    lay_out(path, (*start, *end), w.blockdev, self.target.quiet)?;
                }
            }
        }
        if self.block.origin == Origin::JobFile {
            self.invalidate_files(phase)?;
        }
        Ok(())
    }

    fn work(&self, phase: usize, ctx: &WorkerCtx) -> WorkerOut {
        let wi = self.phases.members[phase][ctx.index];
        let w = &self.r.workers[wi];
        let part = self.phases.groups[phase]
            .iter()
            .position(|&j| j == w.job)
            .unwrap_or(0);
        let job = &self.block.jobs[w.job];
        let clone = self.r.workers[..wi]
            .iter()
            .filter(|x| x.job == w.job)
            .count();
        // Done however it ends; a job with wait_for starts once its waitee's workers are.
        let _finished = self.r.waits.worker(w.job);
        if let Err(e) = super::cpus::pin(job, clone) {
            return crate::workload::failed(part, e);
        }
        let (mut eng, mut how, kept) = match open_engine(job, w) {
            Ok(x) => x,
            Err(e) => return crate::workload::failed(part, e),
        };
        ctx.start_line();
        // After the start line, which every worker of the phase (its waitee's too) must reach.
        let waited = self.r.waits.wait(w.job);
        let live = io::Live {
            progress: ctx.progress,
            interval: ctx.interval,
            halt: self.run.steady[w.job].as_ref().map(|s| &s.halt),
            exit_all: Some(self.run.exits.watch(w.job)),
            files: Some(&kept[..]).filter(|k| !k.is_empty()),
        };
        let st = io::drive(&mut eng, &w.plan, &self.datas[wi], live);
        if st.pages_dropped > 0 {
            how.push(format!(
                "fio's invalidate: the file's cached pages dropped at the end of each pass ({} times)",
                st.pages_dropped
            ));
        }
        (self.run.exits).ended(&self.block.jobs, w.job, phase, &self.phases.groups[phase]);
        drop(eng);
        let mut out = self.recorded((wi, clone, part), st, how);
        if let (Some(_), Some(name)) = (waited, &job.wait_for) {
            out.how.push(format!(
                "wait_for: started when every worker of '{name}' was done (the wait is not in its figures)"
            ));
        }
        out
    }

    fn beside(&self, phase: usize, done: &AtomicBool, workers: &[Progress]) {
        let judged = self.judged(phase);
        std::thread::scope(|scope| {
            if !judged.is_empty() {
                scope.spawn(|| steady::monitor(&judged, workers, done));
            }
            if let Some(s) = &self.snap {
                let r = snap::run(&s.snapper, s.opts, &format!("p{phase}"), done);
                *s.run.lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
            }
        });
    }

    fn finish(&mut self, phase: usize, m: &Merged) -> Result<Vec<Phase>, RunError> {
        let group_ios: f64 = m
            .parts
            .iter()
            .map(|p| p.counter("reads") + p.counter("writes"))
            .sum();
        let mut out = Vec::new();
        for (k, &ji) in self.phases.groups[phase].iter().enumerate() {
            let Some(part) = m.parts.get(k) else { continue };
            let mut metrics = job_metrics(&self.block.jobs[ji], part);
            if group_ios > 0.0 {
                metrics.insert(
                    metric::CPU_USER_NS_PER_IO.into(),
                    m.frame.cpu_user_ns as f64 / group_ios,
                );
            }
            let error = part
                .error
                .clone()
                .or_else(|| rate_min_missed(&self.block.jobs[ji], &metrics));
            let mut series: BTreeMap<String, Vec<f64>> = part
                .series
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect();
            let mut notes = self.notes(ji, part);
            // A job exit_what=all ended before its group began did not run: skipped, not empty.
            let not_run = self.run.exits.note(phase);
            notes.extend(not_run.clone());
            if let Some(s) = &self.run.steady[ji] {
                let w = s.watch.lock().unwrap_or_else(|e| e.into_inner());
                steady::decorate(&w, &mut metrics, &mut series, &mut notes);
            }
            out.push(Phase {
                test: self.block.jobs[ji].name.clone(),
                started_at: m.frame.started_at.clone(),
                duration_s: m.frame.wall.as_secs_f64(),
                error,
                metrics,
                notes,
                histograms: histograms(part),
                series,
                latency: None,
                config: Some(self.config(ji, part)),
                skipped: not_run,
                failure: part.failure.clone(),
                ranks: Vec::new(),
                clones: self.run.clones.of(&self.r.workers, ji),
                ..Default::default()
            });
        }
        self.finish_snapshots(&mut out);
        self.unlink(phase, &mut out);
        Ok(out)
    }
}

impl BlockSession {
    /// What worker `wi` (clone `clone` of its job, part `part` of the phase) measured, with
    /// its failure worded with its file's path, its logs, iolog and verify state written, and
    /// what it wrote read back and checked.
    fn recorded(
        &self,
        (wi, clone, part): (usize, usize, usize),
        mut st: Stats,
        how: Vec<String>,
    ) -> WorkerOut {
        let w = &self.r.workers[wi];
        let job = &self.block.jobs[w.job];
        let end = &mut st.ended;
        if let (Some(m), Some(f)) = (st.verified.mismatch.take(), end.failure.as_mut()) {
            f.message = m.describe(&w.path.display().to_string());
        }
        if let Some(f) = end.failure.take() {
            let path = w.files().nth(f.file).unwrap_or(&w.path);
            let f = f.path(path);
            end.error = Some(f.to_string());
            end.failure = Some(f);
        }
        let written = std::mem::take(&mut st.verified.written);
        let v = &st.verified;
        let (verified, bad, skipped) = (v.checked, v.errors, v.skipped);
        let (book, rec) = (st.logs.take(), st.iolog.take());
        self.run.clones.keep(wi, clone, &st);
        let mut out = worker_out(part, st, how);
        let mut fail = |e: String| {
            out.error.get_or_insert(e);
        };
        if let Some(Err(e)) = book.map(|b| self.run.logs.write(job, wi + 1, &b)) {
            fail(e);
        }
        if let Some(Err(e)) = rec.map(|r| super::logs::write_iolog(job, clone as u32, &r.text)) {
            fail(e);
        }
        // A reading verifier (verify_only runs its job as reads).
        if job.verify.is_some() && !w.plan.changes() {
            out.counters.insert(metric::VERIFY_BLOCKS, verified as f64);
            out.counters.insert(metric::VERIFY_ERRORS, bad as f64);
            let checks = w.plan.sinks.checks.as_ref();
            if checks.is_some_and(|c| c.ranges.is_some()) {
                out.counters.insert(metric::VERIFY_SKIPPED, skipped as f64);
            }
        }
        if job.verify_state_save && w.plan.changes() {
            match super::vstate::save(Path::new("."), job, clone as u32, &written) {
                Ok(p) => out
                    .how
                    .push(format!("verify state saved in {}", p.display())),
                Err(e) => {
                    out.error.get_or_insert(e);
                }
            }
        }
        if out.error.is_none() && out.stopped.is_none() && !written.is_empty() {
            verify_written(job, w, &written, &mut out);
        }
        out
    }

    /// The file (or device) of the first worker.
    pub fn first_path(&self) -> Option<&Path> {
        self.r.workers.first().map(|w| w.path.as_path())
    }

    /// The phase's snapshot figures on its records; then its snapshots are deleted (the space
    /// they held is measured by deleting them where the filesystem does not report it).
    fn finish_snapshots(&mut self, out: &mut [Phase]) {
        let Some(s) = &self.snap else { return };
        let Some(run) = s.run.lock().unwrap_or_else(|e| e.into_inner()).take() else {
            return;
        };
        let mut snapper = s.snapper.lock().unwrap_or_else(|e| e.into_inner());
        let deleted = snapper.delete_all();
        let space = deleted.as_ref().ok().copied().flatten();
        for p in out.iter_mut() {
            snap::decorate(p, &run, s.opts, space, &s.how);
            if let Err(e) = &deleted {
                p.notes
                    .push(format!("snapshots: deleting them failed: {e}"));
            }
        }
    }

    /// Deletes the files of the phase's jobs that ask for it (fio unlink).
    fn unlink(&mut self, phase: usize, out: &mut [Phase]) {
        for &wi in &self.phases.members[phase] {
            let w = &self.r.workers[wi];
            let job = &self.block.jobs[w.job];
            if !job.unlink || w.blockdev {
                continue;
            }
            for path in w.files() {
                if !self.laid.remove(path) {
                    continue;
                }
                if let Err(e) = std::fs::remove_file(path) {
                    if let Some(p) = out.iter_mut().find(|p| p.test == job.name) {
                        p.notes
                            .push(format!("unlink: removing {} failed: {e}", path.display()));
                    }
                }
            }
        }
    }

    /// The jobs of a phase that judge steady state, for the monitor.
    fn judged(&self, phase: usize) -> Vec<steady::Judged<'_>> {
        let members = &self.phases.members[phase];
        self.phases.groups[phase]
            .iter()
            .filter_map(|&ji| {
                let run = self.run.steady[ji].as_ref()?;
                let workers: Vec<usize> = (0..members.len())
                    .filter(|&k| self.r.workers[members[k]].job == ji)
                    .collect();
                let first = &self.r.workers[members[*workers.first()?]].plan;
                Some(steady::Judged {
                    run,
                    workers,
                    offset: first.gates.start_delay + first.ends.ramp,
                })
            })
            .collect()
    }

    fn region_total(&self, ji: usize) -> u64 {
        self.r
            .workers
            .iter()
            .filter(|w| w.job == ji)
            .map(|w| w.region)
            .sum()
    }

    fn notes(&self, ji: usize, part: &WorkerOut) -> Vec<String> {
        let mut notes = self.r.notes[ji].clone();
        let ignored = part.counter("io_errors");
        if ignored > 0.0 {
            notes.push(format!("continue_on_error: {ignored} failed I/Os counted and gone past (fio's total_err), the first: {}", part.how.iter().find_map(|h| h.strip_prefix("first error: ")).unwrap_or("?")));
        }
        if part.counter("filled") > 0.0 {
            notes.push("fill_device: the job wrote until the filesystem was full (ENOSPC ended it, as in fio)".into());
        }
        let buffered = part.how.iter().any(|h| h.starts_with("buffered"));
        let region_total = self.region_total(ji);
        if part.counter("reads") > 0.0
            && !self.target.memory
            && buffered
            && region_total < self.target.mem_total
        {
            notes.push(crate::store::note::make(crate::store::note::Kind::PageCache, format!(
                "buffered reads of {} on a machine with {} of RAM may be served from the page cache",
                fmt(region_total),
                fmt(self.target.mem_total)
            )));
        }
        if self.block.jobs[ji]
            .steadystate
            .is_some_and(|s| s.dur.is_zero())
        {
            notes.push("steadystate without ss_dur (0): not judged, as in fio".to_string());
        }
        if part.how.iter().any(|h| h.contains("O_DIRECT refused")) {
            notes.push(format!(
                "direct=1 refused by {}: ran buffered",
                self.target.fs
            ));
        }
        notes
    }

    fn config(&self, ji: usize, part: &WorkerOut) -> serde_json::Value {
        let job = &self.block.jobs[ji];
        let mut config = serde_json::to_value(job).unwrap_or_default();
        if let Some(o) = config.as_object_mut() {
            let files: Vec<String> = self
                .r
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
                (self.region_total(ji) / job.numjobs as u64).into(),
            );
            o.insert("engine_detail".into(), part.how.join("; ").into());
        }
        config
    }
}

/// A job's steady-state criterion when it is judged (ss_dur above 0, as in fio).
fn judged(j: &Job) -> Option<crate::plan::job::Steady> {
    j.steadystate.filter(|s| !s.dur.is_zero())
}

/// A worker's loop statistics as the frame merges them.
fn worker_out(part: usize, mut st: Stats, how: Vec<String>) -> WorkerOut {
    let end = std::mem::take(&mut st.ended);
    let mut o = WorkerOut {
        part,
        timeline: st.timeline.take(),
        window: st.measured,
        how,
        error: end.error,
        failure: end.failure,
        stopped: end.stopped,
        ..Default::default()
    };
    if end.gone_past > 0 {
        o.counters.insert("io_errors", end.gone_past as f64);
        o.how
            .extend(end.first_gone_past.map(|f| format!("first error: {f}")));
    }
    if end.filled {
        o.counters.insert("filled", 1.0);
    }
    super::per_io_figures::count(&mut o, &mut st);
    let lat = st.tally.lat();
    let [read, write] = [Dir::Read, Dir::Write].map(|d| {
        let t = &mut st.tally.dirs[d];
        (t.ios, t.bytes, std::mem::replace(&mut t.lat, hist::new()))
    });
    o.counters.insert("reads", read.0 as f64);
    o.counters.insert("writes", write.0 as f64);
    o.counters.insert(metric::READ_BYTES, read.1 as f64);
    o.counters.insert(metric::WRITE_BYTES, write.1 as f64);
    o.series
        .insert("iops", st.per_sec.iter().map(|x| x.0 as f64).collect());
    o.series.insert(
        metric::BYTES_PER_SEC,
        st.per_sec.iter().map(|x| x.1 as f64).collect(),
    );
    o.hists.insert("lat", lat);
    o.hists.insert("read_lat", read.2);
    o.hists.insert("write_lat", write.2);
    if let Some(split) = st.tally.split.take() {
        let [r, w] = [Dir::Read, Dir::Write].map(|d| split[d].clone());
        o.hists.insert("read_slat", r.slat);
        o.hists.insert("write_slat", w.slat);
        o.hists.insert("read_clat", r.clat);
        o.hists.insert("write_clat", w.clat);
    }
    o
}

fn job_metrics(job: &Job, p: &WorkerOut) -> BTreeMap<String, f64> {
    let mut metrics = BTreeMap::new();
    let secs = p.window.as_secs_f64().max(1e-9);
    let (reads, writes) = (p.counter("reads"), p.counter("writes"));
    let (rb, wb) = (
        p.counter(metric::READ_BYTES),
        p.counter(metric::WRITE_BYTES),
    );
    let mut put = |k: &str, v: f64| {
        metrics.insert(k.to_string(), v);
    };
    put("ios", reads + writes);
    put("bytes", rb + wb);
    put(metric::RUNTIME_S, p.window.as_secs_f64());
    put("iops", (reads + writes) / secs);
    put(metric::BYTES_PER_SEC, (rb + wb) / secs);
    put(metric::READ_IOS, reads);
    put(metric::WRITE_IOS, writes);
    put(metric::READ_BYTES, rb);
    put(metric::WRITE_BYTES, wb);
    put(metric::READ_IOPS, reads / secs);
    put(metric::WRITE_IOPS, writes / secs);
    put(metric::READ_BYTES_PER_SEC, rb / secs);
    put(metric::WRITE_BYTES_PER_SEC, wb / secs);
    put("iodepth", job.iodepth as f64);
    put("numjobs", job.numjobs as f64);
    if let Some(h) = p.hists.get("lat") {
        hist::summarize(h, "lat", &mut metrics);
        for q in &job.percentiles {
            let name = format!("lat_p{}_ns", format!("{q}").replace('.', ""));
            metrics.insert(name, h.value_at_quantile(q / 100.0) as f64);
        }
    }
    for k in [
        metric::VERIFY_BLOCKS,
        metric::VERIFY_BYTES,
        metric::VERIFY_ERRORS,
        metric::VERIFY_S,
        metric::VERIFY_SKIPPED,
    ] {
        if p.counters.contains_key(k) {
            metrics.insert(k.to_string(), p.counter(k));
        }
    }
    if reads > 0.0 && writes > 0.0 {
        for k in ["read_lat", "write_lat"] {
            if let Some(h) = p.hists.get(k) {
                hist::summarize(h, k, &mut metrics);
            }
        }
    }
    // fio's submission and completion latency, per direction (when timed apart).
    for k in ["read_slat", "write_slat", "read_clat", "write_clat"] {
        if let Some(h) = p.hists.get(k) {
            hist::summarize(h, k, &mut metrics);
        }
    }
    super::per_io_figures::metrics(p, &mut metrics);
    metrics
}

fn histograms(p: &WorkerOut) -> BTreeMap<String, String> {
    let mixed = p.counter("reads") > 0.0 && p.counter("writes") > 0.0;
    let mut out = BTreeMap::new();
    for (k, name) in [
        ("lat", "lat_ns"),
        ("read_lat", "read_lat_ns"),
        ("write_lat", "write_lat_ns"),
    ] {
        if k != "lat" && !mixed {
            continue;
        }
        if let Some(h) = p.hists.get(k) {
            out.insert(name.to_string(), hist::encode(h));
        }
    }
    for (k, name) in [
        ("read_slat", "read_slat_ns"),
        ("write_slat", "write_slat_ns"),
        ("read_clat", "read_clat_ns"),
        ("write_clat", "write_clat_ns"),
    ] {
        if let Some(h) = p.hists.get(k).filter(|h| !h.is_empty()) {
            out.insert(name.to_string(), hist::encode(h));
        }
    }
    super::per_io_figures::histograms(p, &mut out);
    out
}

/// fio's rate_min: a job whose bandwidth in a direction fell below it fails.
fn rate_min_missed(job: &Job, metrics: &BTreeMap<String, f64>) -> Option<String> {
    for (d, dir) in ["read", "write"].iter().enumerate() {
        let (Some(min), Some(got)) = (
            job.rate_min[d],
            metrics.get(&format!("{dir}_bytes_per_sec")).copied(),
        ) else {
            continue;
        };
        if metrics.get(&format!("{dir}_ios")).copied().unwrap_or(0.0) > 0.0 && got < min as f64 {
            return Some(format!(
                "rate_min: the {dir}s ran at {} per second, below the {} per second the job asks for",
                fmt(got as u64),
                fmt(min)
            ));
        }
    }
    None
}

mod files;
mod phases;
use files::{lay_out, open_engine, verify_written};
