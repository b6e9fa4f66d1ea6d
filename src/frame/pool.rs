//! The one worker pool: N threads for a phase, a start line they cross together, the live
//! progress line, and the "first done" snapshot taken the moment the fastest worker finishes.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use super::rounds::Across;
use super::{Cluster, PhaseSpec, WorkerCtx, WorkerOut};
use crate::metrics::evidence::Board;
use crate::metrics::progress::Progress;

/// A barrier that a worker may also pass by returning: no worker waits for one that failed.
pub struct StartLine {
    ready: Mutex<Vec<bool>>,
    all: Condvar,
}

impl StartLine {
    fn new(n: usize) -> StartLine {
        StartLine {
            ready: Mutex::new(vec![false; n]),
            all: Condvar::new(),
        }
    }

    fn mark(&self, index: usize) -> std::sync::MutexGuard<'_, Vec<bool>> {
        let mut r = self.ready.lock().unwrap_or_else(|e| e.into_inner());
        r[index] = true;
        if r.iter().all(|x| *x) {
            self.all.notify_all();
        }
        r
    }

    /// Waits until every worker has crossed the start line (or ended), without being one.
    fn wait_all(&self) {
        let mut r = self.ready.lock().unwrap_or_else(|e| e.into_inner());
        while !r.iter().all(|x| *x) {
            r = self.all.wait(r).unwrap_or_else(|e| e.into_inner());
        }
    }

    pub(super) fn wait(&self, index: usize) {
        let mut r = self.mark(index);
        while !r.iter().all(|x| *x) {
            r = self.all.wait(r).unwrap_or_else(|e| e.into_inner());
        }
    }
}

/// What the pool saw: each worker's output, its progress when the first finished, and times.
pub struct PoolRun {
    pub outs: Vec<WorkerOut>,
    /// (ops, bytes) of every worker at the moment the fastest finished.
    pub first_done: Vec<(u64, u64)>,
    pub first_done_s: f64,
    pub last_done_s: f64,
    /// When the pool started (the workers' clocks start after it).
    pub t0: Instant,
    /// (ops, bytes) of every worker at its end.
    pub totals: Vec<(u64, u64)>,
    /// With several ranks: (ops, bytes) of every worker when the fastest worker of all ranks
    /// finished (the cluster's stonewall signal).
    pub across: Option<Vec<(u64, u64)>>,
}

/// Work beside the workers (`Session::beside`): it starts when they cross the start line and is
/// told to end (the flag turns true) when the last of them has ended.
/// It sees every worker's progress (in the order of their index).
pub type Beside<'a> = &'a (dyn Fn(&AtomicBool, &[Progress]) + Sync);

/// How often the coordinator's thread looks at the cluster's stonewall signal while the
/// workers of a multi-rank phase run.
const WATCH: Duration = Duration::from_millis(2);

/// Whether the pool runs its one worker on the calling thread (see
/// `PhaseSpec::single_thread`): then no other thread may run beside it.
pub fn inline(spec: &PhaseSpec) -> bool {
    spec.workers.max(1) == 1 && spec.single_thread && !spec.beside
}

/// What the workers of a phase share while they run.
struct Shared<'a> {
    spec: &'a PhaseSpec,
    board: &'a Board,
    progress: Arc<[Progress]>,
    start: StartLine,
    t0: Instant,
    /// Whether a worker has ended; every worker's progress and the time when the first did.
    first: AtomicBool,
    snapshot: Mutex<(Vec<(u64, u64)>, f64)>,
    /// When each worker ended (seconds from `t0`).
    ends: Mutex<Vec<f64>>,
    /// The agreements the workers reach in the middle of the phase (IOR's -g, the wear-out).
    rounds: super::rounds::Rounds<'a>,
}

impl<'a> Shared<'a> {
    fn new(spec: &'a PhaseSpec, board: &'a Board, n: usize, across: Across<'a>) -> Shared<'a> {
        Shared {
            spec,
            board,
            progress: (0..n).map(|_| Progress::new()).collect(),
            start: StartLine::new(n),
            t0: Instant::now(),
            first: AtomicBool::new(false),
            snapshot: Mutex::new((Vec::new(), 0.0)),
            ends: Mutex::new(Vec::new()),
            rounds: super::rounds::Rounds::new(n, across),
        }
    }

    /// Worker `index`, on its own thread.
    fn worker<F>(&self, index: usize, work: &F) -> WorkerOut
    where
        F: Fn(&WorkerCtx) -> WorkerOut + Sync,
    {
        let _tap = super::observe::tap(&self.progress, index);
        self.board.begin(index);
        let ctx = WorkerCtx {
            index,
            progress: &self.progress[index],
            interval: self.spec.interval,
            origin: self.t0,
            start: &self.start,
            board: self.board,
            rounds: &self.rounds,
        };
        let out = work(&ctx);
        self.rounds.ended(index);
        self.board.ended(index);
        // A worker that never reached the start line must not hold the others.
        drop(self.start.mark(index));
        let at = self.t0.elapsed().as_secs_f64();
        if !self.first.swap(true, Ordering::AcqRel) {
            let snap = self.progress.iter().map(Progress::get).collect();
            *self.snapshot.lock().unwrap_or_else(|e| e.into_inner()) = (snap, at);
        }
        self.ends.lock().unwrap_or_else(|e| e.into_inner()).push(at);
        out
    }

    /// While the workers run: the progress line, and under several ranks the cluster's
    /// stonewall signal (every worker's progress when the fastest of all ranks finished).
    fn watch(&self, ended: &dyn Fn() -> bool, line: Line, cluster: &dyn Cluster) -> Walled {
        let Line { label, show } = line;
        let many = cluster.rank().many();
        let mut across = None;
        if !(show || many) {
            return across;
        }
        let live = show.then(|| super::live::Live::start(self.spec, label));
        let mut shown = Instant::now();
        while !ended() {
            match (many, many && self.rounds.open()) {
                // A worker waits in a round: stay ready, as MPI's barrier does.
                (_, true) => std::thread::yield_now(),
                (true, false) => self.rounds.idle(WATCH),
                (false, _) => std::thread::sleep(Duration::from_millis(200)),
            }
            // (Every turn: the cluster also watches a wait in its collectives there.)
            let walled = many && cluster.stonewall(self.first.load(Ordering::Acquire));
            if walled && across.is_none() {
                across = Some(self.progress.iter().map(Progress::get).collect());
            }
            if many {
                self.rounds.pump(cluster);
            }
            if let Some(live) = &live {
                if shown.elapsed() >= Duration::from_millis(200) {
                    shown = Instant::now();
                    let done: u64 = self.progress.iter().map(|p| p.get().0).sum();
                    live.update(&self.spec.name, done, self.t0.elapsed());
                }
            }
        }
        if let Some(live) = live {
            live.finish();
        }
        across
    }
}

/// Where a phase's workers run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Seats {
    /// Each on a thread of its own; the calling thread watches them.
    Threads,
    /// The one worker on the calling thread, the rank's own from phase to phase as an MPI
    /// program's; the watch on a thread of its own. Under several ranks where any thread may
    /// call MPI: a new thread in every phase is placed afresh by the scheduler, and with more
    /// ranks than CPUs, unbound, three workers could share one CPU while the fourth spun alone
    /// in a barrier on the other (docs/performance.md, "Ranks bound to cores").
    Calling,
}

impl Seats {
    fn of(workers: usize, cluster: &dyn Cluster) -> Seats {
        match workers == 1 && cluster.rank().many() && cluster.meet().is_some() {
            true => Seats::Calling,
            false => Seats::Threads,
        }
    }
}

/// Every worker's progress when the fastest of all ranks finished (the cluster's stonewall
/// signal), when it came while they ran.
type Walled = Option<Vec<(u64, u64)>>;

/// The progress line: its label, and whether it is shown.
#[derive(Clone, Copy)]
struct Line<'l> {
    label: &'l str,
    show: bool,
}

impl Shared<'_> {
    /// Every worker on a thread of its own, in scope `s`; this thread watches them to their end.
    fn on_threads<'s, F: Fn(&WorkerCtx) -> WorkerOut + Sync>(
        &'s self,
        s: &'s std::thread::Scope<'s, '_>,
        work: &'s F,
        line: Line,
        cluster: &dyn Cluster,
    ) -> (Vec<WorkerOut>, Walled) {
        let handles: Vec<_> = (0..self.progress.len())
            .map(|i| s.spawn(move || self.worker(i, work)))
            .collect();
        let ended = || handles.iter().all(|h| h.is_finished());
        let across = self.watch(&ended, line, cluster);
        (handles.into_iter().map(joined).collect(), across)
    }

    /// The one worker on this thread; the watch on a thread of its own to the worker's end.
    fn on_calling<F: Fn(&WorkerCtx) -> WorkerOut + Sync>(
        &self,
        work: &F,
        line: Line,
        cluster: &dyn Cluster,
    ) -> (Vec<WorkerOut>, Walled) {
        let done = &AtomicBool::new(false);
        // The cluster goes to the watch thread; the worker meets the other ranks through its
        // collectives (`Cluster::meet`), never through the cluster.
        let (across, out) = crate::sys::lend::lend(
            cluster,
            move |c| self.watch(&|| done.load(Ordering::Acquire), line, c),
            move || {
                let run = std::panic::AssertUnwindSafe(|| self.worker(0, work));
                let out = std::panic::catch_unwind(run).unwrap_or_else(|_| panicked());
                done.store(true, Ordering::Release);
                out
            },
        );
        (vec![out], across.flatten())
    }
}

/// Runs `spec.workers` workers side by side, with any work `beside` them for the length of the
/// phase, and waits for all of them. Each worker leaves its thread's figures on `board`.
pub fn run_workers<F>(
    spec: &PhaseSpec,
    label: &str,
    quiet: bool,
    work: F,
    beside: Option<Beside>,
    cluster: &dyn Cluster,
    board: &Board,
) -> PoolRun
where
    F: Fn(&WorkerCtx) -> WorkerOut + Sync,
{
    let n = spec.workers.max(1);
    if n == 1 && spec.single_thread && beside.is_none() {
        return run_inline(work, spec, board);
    }
    let sh = Shared::new(spec, board, n, Across::of(cluster));
    let _live = super::observe::phase(live_info(spec), &sh.progress);
    let show = !quiet && std::io::IsTerminal::is_terminal(&std::io::stderr());
    let all_done = AtomicBool::new(false);
    let (outs, across) = std::thread::scope(|s| {
        let side = beside.map(|b| {
            let (sh, all_done) = (&sh, &all_done);
            s.spawn(move || {
                sh.start.wait_all();
                b(all_done, &sh.progress)
            })
        });
        let line = Line { label, show };
        let (outs, across) = match Seats::of(n, cluster) {
            Seats::Threads => sh.on_threads(s, &work, line, cluster),
            Seats::Calling => sh.on_calling(&work, line, cluster),
        };
        all_done.store(true, Ordering::Release);
        if let Some(h) = side {
            let _ = h.join();
        }
        (outs, across)
    });
    let (first_done, first_done_s) = sh.snapshot.into_inner().unwrap_or_else(|e| e.into_inner());
    let ends = sh.ends.into_inner().unwrap_or_else(|e| e.into_inner());
    let totals: Vec<(u64, u64)> = sh.progress.iter().map(Progress::get).collect();
    PoolRun {
        outs,
        first_done,
        first_done_s,
        last_done_s: ends.into_iter().fold(0.0, f64::max),
        t0: sh.t0,
        // The workers of this rank ended before the signal came: all they did counts.
        across: cluster
            .rank()
            .many()
            .then(|| across.unwrap_or_else(|| totals.clone())),
        totals,
    }
}

/// A worker's output, or the error of one that panicked.
fn joined(h: std::thread::ScopedJoinHandle<'_, WorkerOut>) -> WorkerOut {
    h.join().unwrap_or_else(|_| panicked())
}

fn panicked() -> WorkerOut {
    WorkerOut {
        error: Some("a worker thread panicked".into()),
        ..Default::default()
    }
}

/// What the live metrics endpoint is told of a phase.
fn live_info(spec: &PhaseSpec) -> super::observe::PhaseInfo<'_> {
    super::observe::PhaseInfo {
        test: &spec.name,
        interval: spec.interval,
        total_ops: spec.total_ops,
        total_secs: spec.total_secs,
    }
}

/// One worker on the calling thread, no other thread started (see `PhaseSpec::single_thread`).
fn run_inline<F>(work: F, spec: &PhaseSpec, board: &Board) -> PoolRun
where
    F: Fn(&WorkerCtx) -> WorkerOut,
{
    let progress: Arc<[Progress]> = Arc::new([Progress::new()]);
    let _live = super::observe::phase(live_info(spec), &progress);
    let progress = &progress[0];
    let start = StartLine::new(1);
    let rounds = super::rounds::Rounds::new(1, Across::Alone);
    let t0 = Instant::now();
    board.begin(0);
    let ctx = WorkerCtx {
        index: 0,
        progress,
        interval: spec.interval,
        origin: t0,
        start: &start,
        board,
        rounds: &rounds,
    };
    // The point of running here: no other thread shares the file table (else every read and
    // write takes the file position lock). Said in the record when that does not hold.
    let threads = crate::sys::host::threads();
    let mut out = work(&ctx);
    board.ended(0);
    if threads > 1 {
        out.how.push(format!("{threads} threads were alive in fsbench's process during this single-threaded phase: each call took the file position lock, which a single-threaded program such as bonnie++ does not"));
    }
    let at = t0.elapsed().as_secs_f64();
    PoolRun {
        outs: vec![out],
        first_done: vec![progress.get()],
        first_done_s: at,
        last_done_s: at,
        t0,
        totals: vec![progress.get()],
        // One thread and nothing beside it: no signal is read while it runs.
        across: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::CachePolicy;

    fn spec(workers: usize) -> PhaseSpec {
        crate::frame::tests::spec("t", workers, CachePolicy::Keep)
    }

    #[test]
    fn first_done_is_what_all_had_done_when_the_fastest_finished() {
        // Worker 0 does 10 ops and ends; the others do 10 before the start line is crossed
        // and 1000 more after worker 0 has ended.
        let r = run_workers(
            &spec(3),
            "x",
            true,
            |ctx| {
                ctx.progress.add(10, 10 * 4096);
                ctx.start_line();
                if ctx.index > 0 {
                    std::thread::sleep(Duration::from_millis(100));
                    ctx.progress.add(1000, 0);
                }
                WorkerOut::default()
            },
            None,
            &crate::frame::Local,
            &Board::new(3),
        );
        let at_first: u64 = r.first_done.iter().map(|x| x.0).sum();
        assert_eq!(at_first, 30);
        assert!(r.first_done_s <= r.last_done_s);
        assert!(r.last_done_s >= 0.1);
    }

    /// A cluster of two ranks whose collectives any thread may call; it keeps the thread of
    /// every look the pool takes at it while the workers run.
    #[derive(Default)]
    struct Anywhere(Mutex<Vec<u32>>);

    impl crate::frame::cluster::Meet for Anywhere {
        fn meet(
            &self,
            _ask: crate::frame::cluster::Ask,
            v: u64,
        ) -> Result<u64, crate::stop::StopReason> {
            Ok(v)
        }
    }

    impl Cluster for Anywhere {
        fn rank(&self) -> crate::frame::Rank {
            crate::frame::Rank { index: 0, size: 2 }
        }
        fn barrier(&self, _what: &str) -> Result<(), crate::frame::RunError> {
            Ok(())
        }
        fn stonewall(&self, _first: bool) -> bool {
            self.0.lock().unwrap().push(crate::sys::gettid());
            false
        }
        fn meet(&self) -> Option<&dyn crate::frame::cluster::Meet> {
            Some(self)
        }
        fn reduce(
            &self,
            m: crate::frame::Merged,
        ) -> Result<crate::frame::Merged, crate::frame::RunError> {
            Ok(m)
        }
    }

    #[test]
    fn a_ranks_one_worker_runs_on_the_calling_thread_and_several_on_their_own() {
        let here = crate::sys::gettid();
        for (workers, on_caller) in [(1, true), (2, false)] {
            let cluster = Anywhere::default();
            let seats = Mutex::new(Vec::new());
            run_workers(
                &spec(workers),
                "x",
                true,
                |ctx| {
                    seats.lock().unwrap().push(crate::sys::gettid());
                    ctx.start_line();
                    // Until the pool has looked at the cluster a few times (however busy the
                    // machine is).
                    let until = Instant::now() + Duration::from_secs(20);
                    while cluster.0.lock().unwrap().len() < 3 && Instant::now() < until {
                        std::thread::sleep(Duration::from_millis(1));
                    }
                    WorkerOut::default()
                },
                None,
                &cluster,
                &Board::new(workers),
            );
            let seats = seats.into_inner().unwrap();
            assert_eq!(seats.len(), workers);
            assert_eq!(seats.iter().all(|t| *t == here), on_caller, "{seats:?}");
            // The cluster is watched every few ms all the while, from the thread that is not
            // the worker's.
            let looks = cluster.0.into_inner().unwrap();
            assert!(looks.len() >= 3, "{looks:?}");
            assert_eq!(looks.iter().all(|t| *t != here), on_caller, "{looks:?}");
        }
    }

    #[test]
    fn a_worker_that_fails_before_the_start_line_does_not_hold_the_others() {
        let r = run_workers(
            &spec(2),
            "x",
            true,
            |ctx| {
                if ctx.index == 0 {
                    return WorkerOut {
                        error: Some("cannot open".into()),
                        ..Default::default()
                    };
                }
                ctx.start_line();
                WorkerOut::default()
            },
            None,
            &crate::frame::Local,
            &Board::new(2),
        );
        assert_eq!(r.outs.len(), 2);
        assert!(r.outs[0].error.is_some());
    }
    #[test]
    fn a_worker_on_a_thread_of_its_own_is_read_there_at_both_ends() {
        // The worker moves to a thread of its own, crosses the start line there and spins for
        // 60 ms of CPU: its id and both of its readings are that thread's (an end read on the
        // pool's idle thread would give less CPU than it spent, or none).
        let board = Board::new(1);
        let cpu = || {
            let (u, s) = crate::sys::thread_cpu_ns();
            u + s
        };
        let inner = std::sync::atomic::AtomicU32::new(0);
        run_workers(
            &spec(1),
            "x",
            true,
            |ctx| {
                ctx.on_own_thread(|ctx| {
                    inner.store(crate::sys::gettid(), Ordering::Relaxed);
                    ctx.start_line();
                    let c0 = cpu();
                    while cpu() - c0 < 60_000_000 {
                        std::hint::black_box(c0.wrapping_mul(3));
                    }
                });
                WorkerOut::default()
            },
            None,
            &crate::frame::Local,
            &board,
        );
        let w = board.take()[0];
        assert_eq!(w.tid, inner.load(Ordering::Relaxed));
        let (a, b) = (w.start.unwrap(), w.end.unwrap());
        let spent = (b.user_ns + b.sys_ns).saturating_sub(a.user_ns + a.sys_ns);
        assert!(spent >= 50_000_000, "{spent} ns between the two readings");
        assert!(
            b.sched.on_cpu_ns >= a.sched.on_cpu_ns + 50_000_000,
            "{a:?} {b:?}"
        );
    }
}
