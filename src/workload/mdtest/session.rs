//! The phases of an mdtest run, in mdtest's order per iteration: the tree made, the directory
//! test (create, stat, rename, remove), the file test (create, stat, read, remove), the tree
//! removed (at once after the removals, a part of their phase, as mdtest goes straight on); and
//! each step's record, its rate mdtest's: every rank's items over the slowest rank's
//! time, each rank's from its start after the barrier before the phase to its end after the
//! barrier after it (a tree's directories over rank 0's time).

use std::collections::BTreeMap;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::items::{run, Done, Io, Namer, Op, Short, Walk};
use super::tree::{Owner, Tree};
use crate::frame::{
    CachePolicy, Empty, Merged, PartSpec, Phase, PhaseSpec, RunError, Runs, Session, TargetCtx,
    Then, WorkerCtx, WorkerOut,
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

/// A phase of the frame: a step, and the step mdtest runs the moment it ends, which fsbench
/// runs on the same worker with no gap between them (`Runs::AtOnce`).
#[derive(Debug, Clone, Copy)]
struct Chain {
    step: Step,
    then: Option<Step>,
}

/// The steps as the frame's phases: the tree's removal runs at once after the removals before
/// it. mdtest goes from one to the other in microseconds; the frame's readings, reduction and
/// record between two phases take milliseconds, after which a tmpfs's rmdir of a directory
/// whose entries were just removed is slower (docs/performance.md).
fn chains(steps: &[Step]) -> Vec<Chain> {
    let mut out: Vec<Chain> = Vec::new();
    for &step in steps {
        match out.last_mut() {
            Some(c) if c.then.is_none() && follows(c.step, step) => c.then = Some(step),
            _ => out.push(Chain { step, then: None }),
        }
    }
    out
}

/// Whether `next` is the tree's removal after `before`'s removals, in one iteration.
fn follows(before: Step, next: Step) -> bool {
    next.kind == Op::TreeRemove
        && before.iteration == next.iteration
        && matches!(before.kind, Op::DirRemove | Op::FileRemove)
}

/// One rank's step, ready for mdtest's timer.
struct Ready {
    s: Step,
    walk: Walk,
    buf: crate::sys::AlignedBuf,
    lat: Lat,
    /// -W: creating stops after this long.
    wall: Option<Duration>,
    out: WorkerOut,
}

/// What a step's timed part did, between its timer's start and end.
struct Timed {
    t0: Instant,
    t1: Instant,
    res: Result<(), Short>,
    d: Done,
}

/// How a step's ranks arrive at mdtest's barrier before its timer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Arrival {
    /// From the frame, between two phases: a first barrier gathers them.
    Frame,
    /// Straight from the step before, on the same worker.
    AtOnce,
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
    chains: Vec<Chain>,
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
        let chains = chains(&steps(plan));
        let specs = chains.iter().map(|c| spec(plan, c)).collect();
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
            chains,
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

fn spec(p: &MdPlan, c: &Chain) -> PhaseSpec {
    let s = c.step;
    let (does, parts) = match c.then {
        None => (format!("mdtest's {}", s.kind.name()), Vec::new()),
        Some(t) => (
            format!(
                "mdtest's {}, then its {} at once",
                s.kind.name(),
                t.kind.name()
            ),
            vec![
                PartSpec::default(),
                PartSpec {
                    runs: Runs::AtOnce,
                    ..Default::default()
                },
            ],
        ),
    };
    PhaseSpec {
        name: s.name(p.iterations),
        does,
        parts,
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
        self.make_testdir(self.chains[phase].step)
    }

    /// The step, and the one mdtest runs at once after it, on this worker with no gap.
    fn work(&self, phase: usize, ctx: &WorkerCtx) -> WorkerOut {
        let c = self.chains[phase];
        ctx.start_line();
        let mut out = self.step(c.step, Arrival::Frame, ctx);
        if let (Some(then), None) = (c.then, out.stopped) {
            let mut t = self.step(then, Arrival::AtOnce, ctx);
            t.part = 1;
            let (ops, bytes) = (t.counter("items") as u64, t.counter("bytes") as u64);
            out.then = Some(Box::new(Then { out: t, ops, bytes }));
        }
        out
    }

    fn finish(&mut self, phase: usize, m: &Merged) -> Result<Vec<Phase>, RunError> {
        let c = self.chains[phase];
        let s = c.step;
        let mut records = vec![self.figures(s, &m.parts[0])];
        if let (Some(then), Some(part)) = (c.then, m.parts.get(1)) {
            records.push(self.figures(then, part));
        }
        let walled = s.kind == Op::FileCreate && self.plan.stonewall_s > 0;
        if let (true, 0, Some(path)) = (walled, self.rank, self.status_path()) {
            hpc::keep_status(&path, self.items())?;
        }
        let tree_gone = [Some(s), c.then]
            .into_iter()
            .flatten()
            .find(|s| s.kind == Op::TreeRemove);
        if let (Some(s), 0) = (tree_gone, self.rank) {
            let d = self.tree().testdir(s.iteration);
            if let Err(e) = std::fs::remove_dir(&d) {
                if e.kind() != std::io::ErrorKind::NotFound {
                    return Err(RunError::io(d.display())(e));
                }
            }
        }
        Ok(records)
    }
}

impl MdSession {
    /// One rank's step, made ready before mdtest's barrier: what it walks, its buffer and
    /// clock (the status file's count agreed first, where a phase takes it).
    fn ready(&self, s: Step, ctx: &WorkerCtx) -> Ready {
        let mut out = WorkerOut::default();
        if let (true, Some(path)) = (self.counts_from_status(s), self.status_path()) {
            let all = hpc::agree(ctx, &mut out, hpc::status_count(self.rank, &path));
            if all > 0 {
                *self.items.lock().unwrap_or_else(|e| e.into_inner()) = all.min(self.plan.per_rank);
            }
        }
        let walled = s.kind == Op::FileCreate && self.plan.stonewall_s > 0;
        Ready {
            s,
            walk: self.walk(s),
            buf: crate::sys::AlignedBuf::new(self.plan.read_bytes.max(1) as usize),
            lat: Lat::over(ctx.interval).touched(),
            wall: walled.then(|| Duration::from_secs(self.plan.stonewall_s)),
            out,
        }
    }

    /// mdtest's timed part of a step: its barrier, its timer, the items (a stonewall's
    /// wear-out), the barrier after them inside the timer.
    fn timed(&self, r: &mut Ready, arrival: Arrival, ctx: &WorkerCtx) -> Timed {
        let tree = self.tree();
        let mut io = Io {
            plan: &self.plan,
            data: &self.data[..self.plan.write_bytes as usize],
            buf: &mut r.buf[..self.plan.read_bytes as usize],
        };
        let (walk, lat, out) = (&r.walk, &mut r.lat, &mut r.out);
        let mut names = Namer::new(&tree, walk);
        let mut d = Done::default();
        // mdtest's ranks reach the barrier before its timer straight from the previous phase's
        // end barrier; fsbench's come from the frame's reduction and record. A first barrier
        // gathers them, so every rank is running here when the second, mdtest's barrier before
        // its timer, lets them start together.
        if arrival == Arrival::Frame {
            hpc::barrier(ctx, out);
        }
        hpc::barrier(ctx, out);
        let t0 = Instant::now();
        lat.begin(t0);
        let all = walk.nums.len();
        let mut res = run(&mut io, &mut names, (0, all), r.wall, &mut d, lat, ctx);
        if r.wall.is_some() {
            // mdtest's stonewall: every rank goes on to as many items as the rank that made
            // most, and later phases work on that many.
            let most = hpc::agree(ctx, out, d.items);
            if res.is_ok() && d.items < most {
                let rest = (d.items as usize, most as usize);
                res = run(&mut io, &mut names, rest, None, &mut d, lat, ctx);
            }
            *self.items.lock().unwrap_or_else(|e| e.into_inner()) = most;
        }
        if self.plan.sync_phase && res.is_ok() {
            crate::sys::sync();
        }
        // mdtest's barrier after the phase, inside its timer: a rank's time ends when every
        // rank's part has.
        hpc::barrier(ctx, out);
        let t1 = Instant::now();
        Timed { t0, t1, res, d }
    }

    /// One rank's step: made ready, mdtest's timed part, its figures.
    fn step(&self, s: Step, arrival: Arrival, ctx: &WorkerCtx) -> WorkerOut {
        let mut r = self.ready(s, ctx);
        let t = self.timed(&mut r, arrival, ctx);
        self.figures_of(r, t, ctx)
    }

    /// A step's figures, after its timer.
    fn figures_of(&self, r: Ready, t: Timed, ctx: &WorkerCtx) -> WorkerOut {
        let (s, mut out, Timed { t0, t1, res, d }) = (r.s, r.out, t);
        // mdtest's rate divides by one time: its slowest rank's (a tree's: rank 0's), each from
        // the rank's own start; rank 0 keeps it as the span "timed".
        let own = t1 - t0;
        let timed = match s.kind {
            Op::TreeCreate | Op::TreeRemove => own,
            _ => Duration::from_nanos(hpc::agree(ctx, &mut out, own.as_nanos() as u64)),
        };
        if self.rank == 0 {
            out.spans.insert("timed", ctx.span(t0, t0 + timed));
        }
        match res {
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
        hpc::keep_lat(&mut out, r.lat, t1);
        out
    }
}

impl MdSession {
    /// The phase's record: mdtest's rate (every rank's items over the slowest rank's time; a
    /// tree's directories over rank 0's, as mdtest counts one tree); its duration the earliest
    /// start to the latest end.
    fn figures(&self, s: Step, part: &WorkerOut) -> Phase {
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
        hpc::lat_figures(part, &mut mt, &mut histograms);
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

    /// One part's merged figures: `items` done between the earliest start and the latest end
    /// (`phase`), and the time mdtest's rate divides by (`timed`).
    fn merged(items: f64, phase: Span, timed: Option<Span>) -> WorkerOut {
        let mut part = WorkerOut::default();
        part.counters.insert("items", items);
        part.spans.insert("phase", phase);
        if let Some(t) = timed {
            part.spans.insert("timed", t);
        }
        part
    }

    #[test]
    fn the_trees_removal_runs_at_once_after_the_removals_before_it() {
        let names = |args: &str| {
            let plan = MdPlan::parse(args).unwrap();
            chains(&steps(&plan))
                .iter()
                .map(|c| match c.then {
                    Some(t) => format!(
                        "{}+{}",
                        c.step.name(plan.iterations),
                        t.name(plan.iterations)
                    ),
                    None => c.step.name(plan.iterations),
                })
                .collect::<Vec<_>>()
                .join(" ")
        };
        assert_eq!(
            names("-n 10 -F"),
            "tree-create file-create file-stat file-read file-remove+tree-remove"
        );
        assert_eq!(
            names("-n 10 -D -i 2"),
            "tree-create.0 dir-create.0 dir-stat.0 dir-rename.0 dir-remove.0+tree-remove.0 \
             tree-create.1 dir-create.1 dir-stat.1 dir-rename.1 dir-remove.1+tree-remove.1"
        );
        // Without the removals (-C), nothing follows at once.
        assert_eq!(names("-n 10 -F -C"), "tree-create file-create");
        // The chained phase declares its second part as run at once.
        let dir = tempfile::tempdir().unwrap();
        let t = TargetCtx::for_tests(dir.path());
        let s = MdSession::new(&MdPlan::parse("-n 10 -F -r").unwrap(), dir.path(), &t, 1);
        let last = s.phases().last().unwrap();
        assert_eq!(last.name, "file-remove");
        let runs: Vec<Runs> = last.parts.iter().map(|p| p.runs).collect();
        assert_eq!(runs, [Runs::Together, Runs::AtOnce]);
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
