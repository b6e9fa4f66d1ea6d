//! The evidence over time: a thread that wakes once per interval while a phase's workers run
//! and reads the machine, fsbench's process, the filesystem's daemons, the workers' threads and
//! the devices (a few small /proc files; nothing per I/O).

use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use super::super::procfs;
use super::{Board, IntervalFigures, Owner, Snapshot, Watch};

/// The figures one wake-up reads.
struct Reading {
    at: Instant,
    machine: Option<procfs::MachineCpu>,
    own_ns: u64,
    daemons: u64,
    workers: u64,
    disks: Vec<Option<procfs::DiskLine>>,
}

fn read(watch: &Watch, daemons: &[u32], tids: &[u32]) -> Reading {
    let disks = procfs::diskstats();
    let (u, s) = crate::sys::process_cpu_ns();
    let ticks = |path: String| {
        std::fs::read_to_string(path)
            .ok()
            .and_then(|t| procfs::parse_task_stat(&t))
            .map(|(_, c)| c.user + c.system)
            .unwrap_or(0)
    };
    Reading {
        at: Instant::now(),
        machine: procfs::machine_cpu(),
        own_ns: u + s,
        daemons: daemons
            .iter()
            .map(|p| ticks(format!("/proc/{p}/stat")))
            .sum(),
        workers: tids
            .iter()
            .filter_map(|t| {
                let text =
                    std::fs::read_to_string(format!("/proc/self/task/{t}/schedstat")).ok()?;
                procfs::parse_schedstat(&text).map(|x| x.0)
            })
            .sum(),
        disks: watch
            .devices
            .iter()
            .map(|d| procfs::parse_disk_line(&disks, &d.name))
            .collect(),
    }
}

fn interval(a: &Reading, b: &Reading, t0: Instant) -> IntervalFigures {
    let secs = b.at.saturating_duration_since(a.at).as_secs_f64().max(1e-6);
    let tick_cores = |t: u64| t as f64 / procfs::TICKS_PER_SEC / secs;
    let own = b.own_ns.saturating_sub(a.own_ns) as f64 / 1e9 / secs;
    let daemons = tick_cores(b.daemons.saturating_sub(a.daemons));
    let (busy, busy_cores) = match (a.machine, b.machine) {
        (Some(x), Some(y)) => {
            let total = y.total.saturating_sub(x.total).max(1);
            let idle = y.idle.saturating_sub(x.idle)
                + y.iowait.saturating_sub(x.iowait)
                + y.steal.saturating_sub(x.steal);
            let busy = total.saturating_sub(idle);
            (busy as f64 / total as f64, tick_cores(busy))
        }
        _ => (0.0, 0.0),
    };
    let util = a
        .disks
        .iter()
        .zip(&b.disks)
        .filter_map(|(x, y)| {
            let (x, y) = (x.as_ref()?, y.as_ref()?);
            Some((y.busy_ms.saturating_sub(x.busy_ms) as f64 / (secs * 1000.0)).clamp(0.0, 1.0))
        })
        .reduce(f64::max);
    IntervalFigures {
        t: b.at.saturating_duration_since(t0).as_secs_f64(),
        workers: b.workers.saturating_sub(a.workers) as f64 / 1e9 / secs,
        daemons,
        busy,
        others: (busy_cores - own - daemons).max(0.0),
        util,
    }
}

/// The running sampler; `stop` ends it and hands over its intervals.
pub struct Sampler {
    done: Arc<(Mutex<bool>, Condvar)>,
    thread: Option<std::thread::JoinHandle<Vec<IntervalFigures>>>,
}

impl Sampler {
    /// Starts sampling every `every` (none below 100 ms: the figures would be mostly noise). The
    /// daemons are found in the phase's first snapshot.
    pub fn start(
        watch: &Watch,
        first: &Snapshot,
        board: Arc<Board>,
        every: Duration,
    ) -> std::io::Result<Sampler> {
        let daemons: Vec<u32> = first
            .processes
            .iter()
            .filter(|t| watch.owner(t.pid, &t.comm, &t.cpu) == Owner::Daemon)
            .map(|t| t.pid)
            .collect();
        let every = every.max(Duration::from_millis(100));
        let done = Arc::new((Mutex::new(false), Condvar::new()));
        let (watch, flag) = (watch.clone(), done.clone());
        let t0 = first.at;
        // The first reading here, before the workers start: on the thread it would compete
        // with their first moments (a short phase's whole timed window).
        let mut last = read(&watch, &daemons, &board.tids());
        let thread = std::thread::Builder::new()
            .name("fsbench-evidence".into())
            .spawn(move || {
                let mut out = Vec::new();
                let (lock, cv) = &*flag;
                let mut stop = lock.lock().unwrap_or_else(|e| e.into_inner());
                loop {
                    let (g, timeout) = cv
                        .wait_timeout(stop, every)
                        .unwrap_or_else(|e| e.into_inner());
                    stop = g;
                    if *stop {
                        break;
                    }
                    if !timeout.timed_out() {
                        continue;
                    }
                    let now = read(&watch, &daemons, &board.tids());
                    out.push(interval(&last, &now, t0));
                    last = now;
                }
                out
            })?;
        Ok(Sampler {
            done,
            thread: Some(thread),
        })
    }

    pub fn stop(mut self) -> Vec<IntervalFigures> {
        self.signal();
        self.thread
            .take()
            .and_then(|t| t.join().ok())
            .unwrap_or_default()
    }

    fn signal(&self) {
        let (lock, cv) = &*self.done;
        *lock.lock().unwrap_or_else(|e| e.into_inner()) = true;
        cv.notify_all();
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        self.signal();
    }
}
