//! The phases of an mdtest run, in mdtest's order per iteration: the tree made, the directory
//! test (create, stat, rename, remove), the file test (create, stat, read, remove), the tree
//! removed; and each phase's record, its rate mdtest's: every rank's items over the slowest rank's
//! time, each rank's from its start after the barrier before the phase to its end after the
//! barrier after it (a tree's directories over rank 0's time).

use std::collections::BTreeMap;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::items::{run, Done, Io, Op, Short, Walk};
use super::tree::{Owner, Tree};
use crate::frame::{
    CachePolicy, Empty, Merged, Phase, PhaseSpec, RunError, Session, TargetCtx, WorkerCtx,
    WorkerOut,
};
use crate::io::calls::Lat;
use crate::metrics::name as metric;
use crate::plan::hpc::mdtest::{MdPlan, Stage};
use crate::store::note;
use crate::workload::hpc;

/// One phase: an op of one iteration.
pub type Step = hpc::Step<Op>;

/// Every phase, in mdtest's order.
pub fn steps(p: &MdPlan) -> Vec<Step> {
    let s = |x| p.runs(x);
    let mut ops = Vec::new();
    let mut add = |on: bool, op| {
        if on {
            ops.push(op)
        }
    };
    add(s(Stage::Create), Op::TreeCreate);
    let dirs = p.dirs();
    add(dirs && s(Stage::Create), Op::DirCreate);
    add(dirs && s(Stage::Stat), Op::DirStat);
    add(dirs && s(Stage::Rename) && p.per_rank > 1, Op::DirRename);
    add(dirs && s(Stage::Remove), Op::DirRemove);
    let files = p.files();
    add(files && s(Stage::Create), Op::FileCreate);
    add(files && s(Stage::Stat), Op::FileStat);
    add(files && s(Stage::Read), Op::FileRead);
    add(files && s(Stage::Remove), Op::FileRemove);
    add(s(Stage::Remove), Op::TreeRemove);
    Step::all(p.iterations, &ops)
}

pub struct MdSession {
    plan: MdPlan,
    /// The target's directory, and the test's in it (-d).
    target: PathBuf,
    root: PathBuf,
    rank: usize,
    ranks: usize,
    /// -N, in ranks (times a node's ranks across nodes, as mdtest).
    stride: usize,
    per_node: usize,
    steps: Vec<Step>,
    specs: Vec<PhaseSpec>,
    /// The data each file gets (-w), this rank's (aligned for O_DIRECT).
    data: crate::sys::AlignedBuf,
    /// Items per rank from now on: a stonewalled create's (-W), or a status file's (-x).
    items: Mutex<u64>,
    seed: u64,
}

impl MdSession {
    pub fn new(plan: &MdPlan, target: &Path, t: &TargetCtx, seed: u64) -> MdSession {
        let (rank, ranks) = (t.ranks.rank.index, t.ranks.rank.size.max(1));
        let per_node = t.ranks.node_shift();
        let stride = match per_node > 1 && per_node < ranks {
            true => plan.stride as usize * per_node,
            false => plan.stride as usize,
        };
        let steps = steps(plan);
        let specs = steps.iter().map(|s| spec(plan, s)).collect();
        let mut data = crate::sys::AlignedBuf::new(plan.write_bytes.max(1) as usize);
        crate::io::DataGen::new(seed ^ rank as u64).fill(&mut data);
        MdSession {
            plan: plan.clone(),
            per_node: per_node.min(ranks),
            target: target.to_path_buf(),
            root: target.join(&plan.dir),
            rank,
            ranks,
            stride,
            steps,
            specs,
            data,
            items: Mutex::new(plan.per_rank),
            seed,
        }
    }

    fn tree(&self) -> Tree<'_> {
        Tree {
            plan: &self.plan,
            root: &self.root,
        }
    }

    /// The rank `k` strides on.
    fn on(&self, k: u64) -> usize {
        (self.rank + k as usize * self.stride) % self.ranks
    }

    fn owner(&self, r: usize) -> Owner {
        match self.plan.unique_dir {
            true => Owner::Rank(r),
            false => Owner::Shared,
        }
    }

    fn items(&self) -> u64 {
        *self.items.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// What a phase works on, in mdtest's order: its items (or a tree's directories) by
    /// number, in whose tree, under whose name.
    fn walk(&self, s: Step) -> Walk {
        let t = self.tree();
        let (tree_at, name_at) = s.kind.shift();
        let count = self.items();
        let nums: Vec<u64> = match s.kind {
            // A tree per rank, or rank 0 makes the shared one.
            Op::TreeCreate | Op::TreeRemove if !self.plan.unique_dir && self.rank != 0 => {
                Vec::new()
            }
            Op::TreeCreate => t.dirs(),
            Op::TreeRemove => t.dirs().into_iter().rev().collect(),
            Op::DirCreate | Op::DirRemove | Op::FileCreate | Op::FileRemove => {
                t.made().into_iter().take(count as usize).collect()
            }
            Op::DirStat | Op::FileStat | Op::FileRead => {
                let mut v = t.numbered(count);
                if self.plan.random {
                    let seed = self.plan.random_seed.map_or(self.seed, |x| x as u64);
                    shuffle(&mut v, seed.wrapping_add(self.rank as u64));
                }
                v
            }
            Op::DirRename => t.numbered(count),
        };
        Walk {
            op: s.kind,
            iteration: s.iteration,
            owner: self.owner(self.on(tree_at)),
            name: self.on(name_at),
            nums,
        }
    }
}

fn shuffle(v: &mut [u64], seed: u64) {
    let mut g = crate::io::DataGen::new(seed);
    for i in (1..v.len()).rev() {
        let k = (g.next_u64() % (i as u64 + 1)) as usize;
        v.swap(i, k);
    }
}

fn spec(p: &MdPlan, s: &Step) -> PhaseSpec {
    PhaseSpec {
        name: s.name(p.iterations),
        does: format!("mdtest's {}", s.kind.name()),
        cache: match s.kind.reads() && p.drop_caches {
            true => CachePolicy::Drop,
            false => CachePolicy::Keep,
        },
        // mdtest syncs only with -Y, inside the phase: the frame does not after it.
        writes: false,
        reads: s.kind == Op::FileRead && p.read_bytes > 0,
        workers: 1,
        unit: "items",
        empty: Empty::Fails,
        ..Default::default()
    }
}

impl MdSession {
    /// Whether a phase takes its item count from the status file (-x without a create):
    /// rank 0 reads it, every rank gets it.
    fn counts_from_status(&self, s: Step) -> bool {
        self.plan.status_file.is_some()
            && !self.plan.runs(Stage::Create)
            && matches!(s.kind, Op::FileStat | Op::FileRead | Op::FileRemove)
    }

    fn status_path(&self) -> Option<PathBuf> {
        self.plan.status_file.as_ref().map(|f| self.target.join(f))
    }

    /// Untimed, before a phase: rank 0 makes the test's directory and the iteration's.
    fn make_testdir(&self, s: Step) -> Result<(), RunError> {
        if s.kind != Op::TreeCreate || self.rank != 0 {
            return Ok(());
        }
        let d = self.tree().testdir(s.iteration);
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o775)
            .create(&d)
            .map_err(RunError::io(d.display()))
    }
}

impl Session for MdSession {
    fn phases(&self) -> &[PhaseSpec] {
        &self.specs
    }

    fn prepare(&mut self, phase: usize) -> Result<(), RunError> {
        self.make_testdir(self.steps[phase])
    }

    fn work(&self, phase: usize, ctx: &WorkerCtx) -> WorkerOut {
        let s = self.steps[phase];
        let mut out = WorkerOut::default();
        let agree = |out: &mut WorkerOut, v: u64| hpc::agree(ctx, out, v);
        if let (true, Some(path)) = (self.counts_from_status(s), self.status_path()) {
            let all = agree(&mut out, hpc::status_count(self.rank, &path));
            if all > 0 {
                *self.items.lock().unwrap_or_else(|e| e.into_inner()) = all.min(self.plan.per_rank);
            }
        }
        let walk = self.walk(s);
        let tree = self.tree();
        let mut buf = crate::sys::AlignedBuf::new(self.plan.read_bytes.max(1) as usize);
        let mut io = Io {
            plan: &self.plan,
            data: &self.data[..self.plan.write_bytes as usize],
            buf: &mut buf[..self.plan.read_bytes as usize],
        };
        let walled = s.kind == Op::FileCreate && self.plan.stonewall_s > 0;
        let wall = walled.then(|| Duration::from_secs(self.plan.stonewall_s));
        let mut lat = Lat::over(ctx.interval).touched();
        let mut d = Done::default();
        let barrier = |out: &mut WorkerOut| hpc::barrier(ctx, out);
        ctx.start_line();
        // mdtest's ranks reach the barrier before its timer straight from the previous phase's
        // end barrier; fsbench's come from the frame's reduction, record and a new thread. A
        // first barrier gathers them, so every rank is running here when the second, mdtest's
        // barrier before its timer, lets them start together.
        barrier(&mut out);
        barrier(&mut out);
        let t0 = Instant::now();
        lat.begin(t0);
        let all = walk.nums.len();
        let mut r = run(&mut io, &tree, &walk, (0, all), wall, &mut d, &mut lat, ctx);
        if walled {
            // mdtest's stonewall: every rank goes on to as many items as the rank that made
            // most, and later phases work on that many.
            let most = agree(&mut out, d.items);
            if r.is_ok() && d.items < most {
                r = run(
                    &mut io,
                    &tree,
                    &walk,
                    (d.items as usize, most as usize),
                    None,
                    &mut d,
                    &mut lat,
                    ctx,
                );
            }
            *self.items.lock().unwrap_or_else(|e| e.into_inner()) = most;
        }
        if self.plan.sync_phase && r.is_ok() {
            crate::sys::sync();
        }
        // mdtest's barrier after the phase, inside its timer: a rank's time ends when every
        // rank's part has.
        barrier(&mut out);
        let t1 = Instant::now();
        // mdtest's rate divides by one time: its slowest rank's (a tree's: rank 0's), each from
        // the rank's own start; rank 0 keeps it as the span "timed" (after the timer).
        let own = t1 - t0;
        let timed = match s.kind {
            Op::TreeCreate | Op::TreeRemove => own,
            _ => Duration::from_nanos(agree(&mut out, own.as_nanos() as u64)),
        };
        if self.rank == 0 {
            out.spans.insert("timed", ctx.span(t0, t0 + timed));
        }
        match r {
            Err(Short::Stopped(why)) => out.stopped = Some(why),
            Err(Short::Failed(e, path)) => {
                out.error = Some(format!("{} {}: {e}", s.kind.name(), path.display()));
                out.failure = Some(crate::io::Failure::io(s.kind.name(), &e).path(&path));
            }
            Ok(()) => {}
        }
        // Joined over ranks: the earliest start to the latest end (mdtest's slowest rank's time).
        out.spans.insert("phase", ctx.span(t0, t1));
        out.counters.insert("items", d.items as f64);
        out.counters.insert("bytes", d.bytes as f64);
        if let Some((items, when)) = d.wall {
            out.counters.insert(metric::STONEWALL_ITEMS, items as f64);
            out.spans.insert("wall", ctx.span(t0, when));
        }
        out.window = t1 - t0;
        hpc::keep_lat(&mut out, lat, t1);
        out
    }

    fn finish(&mut self, phase: usize, m: &Merged) -> Result<Vec<Phase>, RunError> {
        let s = self.steps[phase];
        let p = self.figures(s, m);
        let walled = s.kind == Op::FileCreate && self.plan.stonewall_s > 0;
        if let (true, 0, Some(path)) = (walled, self.rank, self.status_path()) {
            hpc::keep_status(&path, self.items())?;
        }
        if s.kind == Op::TreeRemove && self.rank == 0 {
            let d = self.tree().testdir(s.iteration);
            if let Err(e) = std::fs::remove_dir(&d) {
                if e.kind() != std::io::ErrorKind::NotFound {
                    return Err(RunError::io(d.display())(e));
                }
            }
        }
        Ok(vec![p])
    }
}

impl MdSession {
    /// The phase's record: mdtest's rate (every rank's items over the slowest rank's time; a
    /// tree's directories over rank 0's, as mdtest counts one tree); its duration the earliest
    /// start to the latest end.
    fn figures(&self, s: Step, m: &Merged) -> Phase {
        let part = &m.parts[0];
        let span = part.spans.get("phase").copied().unwrap_or_default();
        let timed = part.spans.get("timed").copied().unwrap_or(span);
        let secs = timed.secs().max(1e-9);
        let items = part.counter("items");
        let counted = match s.kind {
            Op::TreeCreate | Op::TreeRemove => self.plan.tree_dirs as f64,
            _ => items,
        };
        let mut mt = BTreeMap::new();
        mt.insert(metric::OPS_PER_SEC.to_string(), counted / secs);
        mt.insert("items".into(), items);
        mt.insert("bytes".into(), part.counter("bytes"));
        mt.insert(metric::RUNTIME_S.into(), span.secs());
        mt.insert("iteration".into(), s.iteration as f64);
        if let Some(w) = part.spans.get("wall") {
            mt.insert(
                metric::STONEWALL_ITEMS.into(),
                part.counter(metric::STONEWALL_ITEMS),
            );
            mt.insert(metric::STONEWALL_S.into(), w.end);
        }
        let mut histograms = BTreeMap::new();
        hpc::lat_figures(m, &mut mt, &mut histograms);
        let mut notes = Vec::new();
        match (s.kind.reads(), self.plan.drop_caches) {
            (true, false) => notes.push(note::make(
                note::Kind::PageCache,
                "mdtest keeps the page cache: stats and reads may come from memory (--drop-caches drops it first)",
            )),
            (true, true) => notes.push("caches dropped before the phase (--drop-caches): mdtest itself does not".into()),
            _ => {}
        }
        Phase {
            test: s.name(self.plan.iterations),
            duration_s: span.secs(),
            error: part.error.clone(),
            metrics: mt,
            notes,
            histograms,
            config: Some(serde_json::json!({
                "tool": "mdtest",
                "mdtest": self.plan,
                "tasks": self.ranks,
                "tasks_per_node": self.per_node,
                "iteration": s.iteration,
                "dir": self.plan.dir,
            })),
            ..Default::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::Span;

    /// One phase's merged figures: `items` done between the earliest start and the latest end
    /// (`phase`), and the time mdtest's rate divides by (`timed`).
    fn merged(items: f64, phase: Span, timed: Option<Span>) -> Merged {
        let mut part = WorkerOut::default();
        part.counters.insert("items", items);
        part.spans.insert("phase", phase);
        if let Some(t) = timed {
            part.spans.insert("timed", t);
        }
        Merged {
            parts: vec![part],
            ..Default::default()
        }
    }

    #[test]
    fn rates_divide_by_the_slowest_ranks_time_and_a_tree_by_rank_0s() {
        let dir = tempfile::tempdir().unwrap();
        let plan = MdPlan::parse("-n 50 -z 1 -b 3 -u").unwrap();
        let t = TargetCtx::for_tests(dir.path());
        let s = MdSession::new(&plan, dir.path(), &t, 1);
        let step = |kind| Step { iteration: 0, kind };
        let wide = Span {
            start: 0.0,
            end: 2.0,
        };
        let rank = Span {
            start: 0.5,
            end: 1.5,
        };
        let rate = |p: &Phase| p.metrics[metric::OPS_PER_SEC];
        // 200 items: over the slowest rank's 1 s, not the 2 s from the first start to the last end.
        let p = s.figures(step(Op::FileStat), &merged(200.0, wide, Some(rank)));
        assert_eq!(rate(&p), 200.0);
        assert_eq!(p.duration_s, 2.0, "the record's duration is the phase's");
        // A tree counts its directories once (4 here), over rank 0's time.
        let p = s.figures(step(Op::TreeCreate), &merged(16.0, wide, Some(rank)));
        assert_eq!(rate(&p), 4.0);
        // One process: the phase's own time.
        assert_eq!(
            rate(&s.figures(step(Op::FileStat), &merged(200.0, wide, None))),
            100.0
        );
    }
}
