//! The phases of an IOR test (each iteration's write, then its read) and their records. A phase
//! is one access of every rank: barrier, open (create, for a write), the transfers (and -e's
//! fsync), close; each rank's open, transfers and close are spans the frame joins over ranks as
//! IOR reduces its timers (the earliest start, the latest end).

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::xfer::{self, Data, Limits, Moved, Offsets};
use crate::frame::{
    CachePolicy, Empty, Merged, Phase, PhaseSpec, RunError, Session, TargetCtx, WorkerCtx,
    WorkerOut,
};
use crate::io::calls::Lat;
use crate::metrics::name as metric;
use crate::plan::hpc::ior::{Access, IorPlan, Way};
use crate::store::note;
use crate::workload::hpc;

/// One phase: an access of one iteration; its test IOR's access (`write`, `read`), with the
/// iteration when there are several (`write.0`, `read.0`, `write.1`, ...).
pub type Step = hpc::Step<Way>;

impl hpc::Kind for Way {
    fn name(self) -> &'static str {
        match self {
            Way::Write => "write",
            Way::Read => "read",
        }
    }
}

/// Each iteration's accesses, in IOR's order.
pub fn steps(p: &IorPlan) -> Vec<Step> {
    Step::all(p.iterations, &p.ways)
}

pub fn ways(p: &IorPlan) -> Vec<&'static str> {
    p.ways
        .iter()
        .map(|&w| match (w, p.check_read) {
            (Way::Read, true) => "read, checked",
            _ => hpc::Kind::name(w),
        })
        .collect()
}

pub struct IorSession {
    plan: IorPlan,
    dir: PathBuf,
    rank: usize,
    ranks: usize,
    /// The rank whose data this rank reads (IOR's -C shift by -Q nodes).
    reads_of: usize,
    /// Ranks on a node (IOR's tasks per node).
    per_node: usize,
    seed: u64,
    steps: Vec<Step>,
    specs: Vec<PhaseSpec>,
    /// This rank's transfers in the last write (with wear-out, every rank's most): a read of
    /// the same iteration stops there when the write had a deadline, as IOR's.
    wrote: Mutex<u64>,
}

impl IorSession {
    pub fn new(plan: &IorPlan, dir: &Path, t: &TargetCtx, seed: u64) -> IorSession {
        let (rank, ranks) = (t.ranks.rank.index, t.ranks.rank.size.max(1));
        let shift = match plan.reorder {
            true => (plan.task_offset as usize).saturating_mul(t.ranks.node_shift()) % ranks,
            false => 0,
        };
        let steps = steps(plan);
        let specs = steps.iter().map(|s| spec(plan, s, ranks)).collect();
        IorSession {
            plan: plan.clone(),
            dir: dir.to_path_buf(),
            rank,
            ranks,
            reads_of: (rank + shift) % ranks,
            per_node: t.ranks.node_shift().min(ranks),
            seed,
            steps,
            specs,
            wrote: Mutex::new(0),
        }
    }

    /// Rank `r`'s file of iteration `i`, as IOR names it: the test file; with -F `.%08d` of the
    /// rank, in a directory of the rank with -u; with -m `.i`.
    fn file(&self, r: usize, i: u32) -> PathBuf {
        let mut p = self.dir.join(&self.plan.test_file);
        if self.plan.access == Access::FilePerProcess {
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            if self.plan.unique_dir {
                p.set_file_name(r.to_string());
                p.push(&name);
            }
            p.set_file_name(format!("{name}.{r:08}"));
        }
        if self.plan.multi_file {
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            p.set_file_name(format!("{name}.{i}"));
        }
        p
    }

    /// The files this rank removes (its own; the shared file is rank 0's).
    fn own_file(&self, i: u32) -> Option<PathBuf> {
        (self.plan.access == Access::FilePerProcess || self.rank == 0)
            .then(|| self.file(self.rank, i))
    }

    fn status_path(&self) -> Option<PathBuf> {
        self.plan.status_file.as_ref().map(|f| self.dir.join(f))
    }

    /// The count a phase's transfers stop at, before any wear-out: -O
    /// stoneWallingWearOutIterations, or for a read the write's before it (when it had a
    /// deadline) or the status file's (rank 0 reads it; every rank gets it).
    fn count(&self, step: Step, ctx: &WorkerCtx) -> Result<Option<u64>, crate::stop::StopReason> {
        let p = &self.plan;
        let given = (p.wear_out_iterations > 0).then_some(p.wear_out_iterations);
        if step.kind == Way::Write {
            return Ok(given);
        }
        if let Some(path) = self.status_path() {
            let all = ctx.agree_max(hpc::status_count(self.rank, &path))?;
            return Ok((all > 0).then_some(all).or(given));
        }
        let wrote = *self.wrote.lock().unwrap_or_else(|e| e.into_inner());
        Ok(match p.does(Way::Write) && p.deadline_s > 0 && wrote > 0 {
            true => Some(wrote),
            false => given,
        })
    }

    fn open(&self, path: &Path, way: Way) -> std::io::Result<File> {
        use std::os::unix::fs::OpenOptionsExt;
        let mut o = std::fs::OpenOptions::new();
        if self.plan.odirect {
            o.custom_flags(libc::O_DIRECT);
        }
        match way {
            Way::Write => o.read(true).write(true).create(true).mode(0o664),
            Way::Read => o.read(true),
        };
        o.open(path)
    }
}

fn spec(p: &IorPlan, s: &Step, ranks: usize) -> PhaseSpec {
    let read = s.kind == Way::Read;
    PhaseSpec {
        name: s.name(p.iterations),
        does: match s.kind {
            Way::Write => "IOR's write: create, transfers, close".into(),
            Way::Read => "IOR's read: open, transfers, close".into(),
        },
        cache: match read && p.drop_caches {
            true => CachePolicy::Drop,
            false => CachePolicy::Keep,
        },
        // IOR syncs nothing after a phase (-e's fsync is inside it): the frame does not either.
        writes: false,
        reads: read,
        workers: 1,
        unit: "transfers",
        total_ops: Some(p.per_block() * p.segments * ranks as u64),
        empty: Empty::Fails,
        ..Default::default()
    }
}

impl Session for IorSession {
    fn phases(&self) -> &[PhaseSpec] {
        &self.specs
    }

    /// Untimed: IOR's delay (-d), the write's files removed first (unless -E), the directories
    /// the files go in.
    fn prepare(&mut self, phase: usize) -> Result<(), RunError> {
        let step = self.steps[phase];
        if self.plan.inter_test_delay > 0 && self.rank == 0 {
            std::thread::sleep(Duration::from_secs(self.plan.inter_test_delay));
        }
        if step.kind == Way::Write {
            let own = self.file(self.rank, step.iteration);
            if let Some(parent) = own.parent() {
                std::fs::create_dir_all(parent).map_err(RunError::io(parent.display()))?;
            }
            if let (false, Some(f)) = (self.plan.use_existing, self.own_file(step.iteration)) {
                remove(&f)?;
            }
        }
        Ok(())
    }

    fn work(&self, phase: usize, ctx: &WorkerCtx) -> WorkerOut {
        let step = self.steps[phase];
        let p = &self.plan;
        let whose = match step.kind {
            Way::Write => self.rank,
            Way::Read => self.reads_of,
        };
        let path = self.file(whose, step.iteration);
        let mut data = Data::new(
            p.transfer as usize,
            self.seed,
            whose,
            p.check_read && step.kind == Way::Read,
        );
        let at = Offsets::new(
            p,
            whose,
            self.ranks,
            p.random_seed.map_or(self.seed, |s| s as u64),
        );
        let mut out = WorkerOut::default();
        let count = match self.count(step, ctx) {
            Ok(c) => c,
            Err(why) => {
                out.stopped = Some(why);
                return out;
            }
        };
        let lim = Limits {
            segments: p.segments,
            deadline: (p.deadline_s > 0).then(|| Duration::from_secs(p.deadline_s)),
            count,
            fsync_each: p.fsync_per_write,
            writes: step.kind == Way::Write,
        };
        let mut lat = Lat::over(ctx.interval).touched();
        ctx.start_line();
        // IOR's barrier before its open timer: every rank starts together.
        if let Err(why) = ctx.barrier() {
            out.stopped = Some(why);
            return out;
        }
        let o0 = Instant::now();
        lat.begin(o0);
        let mut file = self.open(&path, step.kind);
        let o1 = Instant::now();
        if let Err(e) = &file {
            fail(&mut out, "open", e, &path);
        }
        let mut run = Run {
            s: self,
            ctx,
            out: &mut out,
            path: &path,
        };
        let (moved, x0, x1) =
            run.transfers(file.as_mut().ok(), &mut data, &at, &lim, &mut lat, step);
        let c0 = Instant::now();
        drop(file);
        let c1 = Instant::now();
        // IOR's barrier after its timers (after a write's close; after a read's, its reduction
        // and its barrier): a rank that is done waits in MPI, as IOR's do, while others finish.
        hpc::barrier(ctx, &mut out);
        if step.kind == Way::Write {
            *self.wrote.lock().unwrap_or_else(|e| e.into_inner()) = moved.transfers;
        }
        out.spans.insert("open", ctx.span(o0, o1));
        out.spans.insert("xfer", ctx.span(x0, x1));
        out.spans.insert("close", ctx.span(c0, c1));
        out.counters.insert("ios", moved.transfers as f64);
        out.counters.insert("bytes", moved.bytes as f64);
        out.counters
            .insert(metric::IOR_XFER_S, (x1 - x0).as_secs_f64());
        out.counters
            .insert(metric::WRONG_TRANSFERS, moved.wrong as f64);
        if let Some((bytes, when)) = moved.at_wall {
            out.counters
                .insert(metric::IOR_STONEWALL_BYTES, bytes as f64);
            out.spans.insert("wall", ctx.span(x0, when));
        }
        out.stopped = out.stopped.or(moved.stopped);
        out.window = c1 - o0;
        hpc::keep_lat(&mut out, lat, c1);
        out
    }

    fn finish(&mut self, phase: usize, m: &Merged) -> Result<Vec<Phase>, RunError> {
        let step = self.steps[phase];
        let p = self.figures(step, m);
        if step.kind == Way::Write && self.plan.wear_out && self.rank == 0 {
            if let Some(path) = self.status_path() {
                hpc::keep_status(&path, *self.wrote.lock().unwrap_or_else(|e| e.into_inner()))?;
            }
        }
        let last = self
            .steps
            .get(phase + 1)
            .is_none_or(|n| n.iteration != step.iteration);
        if last && !self.plan.keep {
            if let Some(f) = self.own_file(step.iteration) {
                remove(&f)?;
            }
        }
        Ok(vec![p])
    }
}

/// The transfers of one rank's phase and the rounds every rank takes part in (-g's barriers,
/// the wear-out), whatever befell this rank.
struct Run<'a, 'c> {
    s: &'a IorSession,
    ctx: &'a WorkerCtx<'c>,
    out: &'a mut WorkerOut,
    path: &'a Path,
}

impl Run<'_, '_> {
    #[allow(clippy::too_many_arguments)]
    fn transfers(
        &mut self,
        mut f: Option<&mut File>,
        data: &mut Data,
        at: &Offsets,
        lim: &Limits,
        lat: &mut Lat,
        step: Step,
    ) -> (Moved, Instant, Instant) {
        let p = &self.s.plan;
        if p.barriers {
            hpc::barrier(self.ctx, self.out);
        }
        let x0 = Instant::now();
        let mut moved = Moved::default();
        let progress = self.ctx.progress;
        let what = if lim.writes { "write" } else { "read" };
        if let Some(f) = f.as_deref_mut() {
            if let Err(e) = xfer::run(f, data, at, lim, &mut moved, None, x0, lat, progress) {
                fail(self.out, what, &e, self.path);
            }
        }
        // IOR's stonewall figures: what the rank had done when its deadline (or its work)
        // ended, before any wear-out.
        if lim.deadline.is_some() {
            moved.at_wall = Some((moved.bytes, Instant::now()));
        }
        if p.wear_out {
            let most = hpc::agree(self.ctx, self.out, moved.transfers);
            if let (Some(f), None) = (f.as_deref_mut(), &self.out.error) {
                let to = Some(most);
                if let Err(e) = xfer::run(f, data, at, lim, &mut moved, to, x0, lat, progress) {
                    fail(self.out, what, &e, self.path);
                }
            }
        }
        if let (Way::Write, true, Some(f), None) = (step.kind, p.fsync, f, &self.out.error) {
            if let Err(e) = f.sync_all() {
                fail(self.out, "fsync", &e, self.path);
            }
        }
        let x1 = Instant::now();
        if p.barriers {
            hpc::barrier(self.ctx, self.out);
        }
        (moved, x0, x1)
    }
}

fn fail(out: &mut WorkerOut, op: &str, e: &std::io::Error, path: &Path) {
    if out.error.is_none() {
        out.error = Some(format!("{op} {}: {e}", path.display()));
        out.failure = Some(crate::io::Failure::io(op, e).path(path));
    }
}

fn remove(f: &Path) -> Result<(), RunError> {
    match std::fs::remove_file(f) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(RunError::io(f.display())(e)),
        _ => Ok(()),
    }
}

impl IorSession {
    /// The phase's record: IOR's figures from the spans every rank's joined.
    fn figures(&self, step: Step, m: &Merged) -> Phase {
        let part = &m.parts[0];
        let span = |k: &str| part.spans.get(k).copied().unwrap_or_default();
        let (open, xfer, close) = (span("open"), span("xfer"), span("close"));
        let total = (close.end - open.start).max(1e-9);
        let (bytes, ios) = (part.counter("bytes"), part.counter("ios"));
        let mut mt = BTreeMap::new();
        mt.insert(metric::BYTES_PER_SEC.to_string(), bytes / total);
        mt.insert("iops".into(), ios / xfer.secs().max(1e-9));
        mt.insert("ios".into(), ios);
        mt.insert("bytes".into(), bytes);
        mt.insert(metric::RUNTIME_S.into(), total);
        mt.insert(metric::IOR_OPEN_S.into(), open.secs());
        mt.insert(metric::IOR_XFER_S.into(), xfer.secs());
        mt.insert(metric::IOR_CLOSE_S.into(), close.secs());
        mt.insert(
            metric::IOR_LATENCY_S.into(),
            part.counter(metric::IOR_XFER_S) / ios.max(1.0),
        );
        mt.insert("iteration".into(), step.iteration as f64);
        let wrong = part.counter(metric::WRONG_TRANSFERS);
        if self.plan.check_read && step.kind == Way::Read {
            mt.insert(metric::WRONG_TRANSFERS.into(), wrong);
        }
        if let Some(w) = part.spans.get("wall") {
            mt.insert(metric::IOR_STONEWALL_S.into(), w.end);
            mt.insert(
                metric::IOR_STONEWALL_BYTES.into(),
                part.counter(metric::IOR_STONEWALL_BYTES),
            );
        }
        let mut histograms = BTreeMap::new();
        hpc::lat_figures(&m.parts[0], &mut mt, &mut histograms);
        let mut notes = Vec::new();
        if step.kind == Way::Read && !self.plan.odirect && !self.plan.drop_caches {
            notes.push(note::make(
                note::Kind::PageCache,
                "IOR keeps the page cache: reads may come from memory (--posix.odirect reads the device; --drop-caches drops the cache first)",
            ));
        }
        if step.kind == Way::Read && self.plan.drop_caches {
            notes
                .push("caches dropped before the read (--drop-caches): IOR itself does not".into());
        }
        let error = part.error.clone().or_else(|| {
            (wrong > 0.0)
                .then(|| format!("{wrong} transfer(s) read differ from what was written (-R)"))
        });
        Phase {
            test: step.name(self.plan.iterations),
            duration_s: total,
            error,
            metrics: mt,
            notes,
            histograms,
            config: Some(self.config(step)),
            ..Default::default()
        }
    }

    /// The test as it ran, for the record and IOR's summary (`report --format ior`).
    fn config(&self, step: Step) -> serde_json::Value {
        serde_json::json!({
            "tool": "ior",
            "ior": self.plan,
            "tasks": self.ranks,
            "tasks_per_node": self.per_node,
            "iteration": step.iteration,
            "file": self.file(self.rank, step.iteration).strip_prefix(&self.dir).unwrap_or(Path::new("")).display().to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::{Rank, RankCtx};

    fn target(rank: usize, size: usize, per_node: usize) -> TargetCtx {
        TargetCtx {
            ranks: RankCtx {
                rank: Rank { index: rank, size },
                per_node,
                ..Default::default()
            },
            ..TargetCtx::for_tests(Path::new("/t"))
        }
    }

    fn session(args: &str, rank: usize, size: usize, per_node: usize) -> IorSession {
        let p = IorPlan::parse(args).unwrap();
        IorSession::new(&p, Path::new("/t"), &target(rank, size, per_node), 1)
    }

    #[test]
    fn c_reads_the_data_a_node_on_as_ior_does() {
        // Four nodes of one rank: the next rank's; -Q 2: two on.
        assert_eq!(session("-F -C", 0, 4, 1).reads_of, 1);
        assert_eq!(session("-F -C -Q 2", 3, 4, 1).reads_of, 1);
        // Two nodes of two ranks (numbered together): the other node's.
        assert_eq!(session("-F -C", 1, 4, 2).reads_of, 3);
        // One node: IOR's shift is every rank, so a rank reads its own.
        assert_eq!(session("-F -C", 2, 4, 4).reads_of, 2);
        assert_eq!(session("-F", 2, 4, 1).reads_of, 2, "no -C: its own");
    }

    #[test]
    fn files_are_named_as_ior_names_them() {
        let s = session("-F -o d/f -u -m -i 3", 0, 2, 1);
        assert_eq!(s.file(1, 2), Path::new("/t/d/1/f.00000001.2"));
        let s = session("-o f", 1, 2, 1);
        assert_eq!(s.file(1, 0), Path::new("/t/f"));
        assert_eq!(s.own_file(0), None, "the shared file is rank 0's to remove");
        let names: Vec<String> = steps(&IorPlan::parse("-i 2 -r").unwrap())
            .iter()
            .map(|x| x.name(2))
            .collect();
        assert_eq!(names, ["read.0", "read.1"]);
    }
}
