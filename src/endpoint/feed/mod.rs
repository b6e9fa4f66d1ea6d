//! The live feed: what a running study shows on its metrics endpoint (`--metrics ADDR`). It
//! observes the run (`frame::observe::Observer`, installed while the endpoint is open): the
//! coordinator says which workload runs on which target in which repeat; the frame says which
//! phase runs, with its workers' `Progress`, read live: operations and bytes by direction, and
//! each worker's last closed interval of latencies, which its slicer publishes once per
//! interval; and what decides the phase's limiter so far. Nothing is added per I/O.
//!
//! Counters (`fsbench_operations_total`, `fsbench_bytes_total`) add up over the whole run per
//! (target, workload, test, direction): a repeat of a phase carries on from the last. The
//! gauges are the running phase's and go when it ends. `render.rs` writes the text.

pub mod render;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use crate::frame::observe::{Observer, PhaseInfo};
use crate::metrics::evidence::sofar::SoFar;
use crate::metrics::evidence::Volume;
use crate::metrics::limiter::Limit;
use crate::metrics::progress::{ByDirection, Progress};
use crate::metrics::timeline::{self, Slice};
use crate::plan::dir::Dir;
use crate::plan::job::Achieved;

/// What `fsbench_info` says of the run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Info {
    /// fsbench's version, commit and features (`fsbench --version`).
    pub build: String,
    /// compare, study, run or tune.
    pub command: String,
    /// The study directory.
    pub study: String,
    pub host: String,
    /// This process's rank (0 without a launcher).
    pub rank: usize,
}

/// A phase's labels: the target (its label), the workload (the name its records carry), the
/// test (the phase's name).
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Key {
    pub target: String,
    pub workload: String,
    pub test: String,
}

/// Where the coordinator is.
#[derive(Debug, Clone)]
struct At {
    target: String,
    repeat: u32,
    workload: String,
}

/// The phase the workers run now.
struct Running {
    key: Key,
    repeat: u32,
    started: Instant,
    interval: Duration,
    total_ops: Option<u64>,
    total_secs: Option<f64>,
    workers: Arc<[Progress]>,
    /// The last interval boundary passed (`tick`): when, and the workers' totals then.
    tick: (Instant, ByDirection),
    /// Operations and bytes per second over the last whole interval, by direction.
    rates: Option<[(f64, f64); 4]>,
}

impl Running {
    fn totals(&self) -> ByDirection {
        sum(self.workers.iter().map(Progress::by_direction))
    }
}

fn sum(all: impl Iterator<Item = ByDirection>) -> ByDirection {
    all.fold(ByDirection::default(), |mut acc, x| {
        acc += x;
        acc
    })
}

#[derive(Default)]
struct State {
    at: Option<At>,
    running: Option<Running>,
    /// What ended phases did, per key.
    finished: BTreeMap<Key, ByDirection>,
    /// The running phase's evidence so far, and the limiter it last gave (with when).
    evidence: Option<Arc<SoFar>>,
    limiter: Option<(Instant, Option<Limit>)>,
}

/// What serves the feed: stopped (its thread ended) while a phase runs that must have no other
/// thread alive in the process (`PhaseSpec::single_thread`), and started again after it.
pub trait Server: Send + Sync {
    fn pause(&self);
    fn resume(&self);
}

pub struct Feed {
    info: Info,
    state: Mutex<State>,
    server: Mutex<Option<Weak<dyn Server>>>,
}

/// The running phase as the endpoint shows it: plain figures.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PhaseView {
    pub key: Key,
    /// 1-based.
    pub repeat: u32,
    pub elapsed_s: f64,
    pub workers: usize,
    /// Done over expected (0 to 1), and the seconds left at the pace so far, when the end is
    /// known.
    pub progress: Option<f64>,
    pub eta_s: Option<f64>,
    /// Operations and bytes per second over the last whole interval, by direction.
    pub rates: Option<[(f64, f64); 4]>,
    /// p50, p99 and p99.9 of the workers' last closed intervals, seconds.
    pub latency: Option<[f64; 3]>,
    pub limiter: Option<Limit>,
}

/// Everything one scrape shows.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct View {
    pub info: Info,
    /// Per key: operations and bytes by direction, the running phase's included.
    pub counters: Vec<(Key, ByDirection)>,
    pub phase: Option<PhaseView>,
}

/// The percentiles the endpoint gives (as `percentile` label values) and their quantiles.
pub const PERCENTILES: [(&str, f64); 3] = [("50", 0.50), ("99", 0.99), ("99.9", 0.999)];

impl Feed {
    pub fn new(info: Info) -> Feed {
        Feed {
            info,
            state: Mutex::new(State::default()),
            server: Mutex::new(None),
        }
    }

    fn with<R>(&self, f: impl FnOnce(&mut State) -> R) -> R {
        f(&mut self.state.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// The server to stop while a single-threaded phase runs.
    pub fn served_by(&self, s: Weak<dyn Server>) {
        *self.server.lock().unwrap_or_else(|e| e.into_inner()) = Some(s);
    }

    fn server(&self) -> Option<Arc<dyn Server>> {
        self.server
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .and_then(Weak::upgrade)
    }

    pub fn enter_workload(&self, target: &str, repeat: u32, workload: &str) {
        let at = At {
            target: target.to_string(),
            repeat,
            workload: workload.to_string(),
        };
        self.with(|s| s.at = Some(at));
    }

    pub fn leave_workload(&self) {
        self.with(|s| s.at = None);
    }

    /// A phase starts with these workers.
    pub fn start_phase(&self, p: PhaseInfo, workers: Arc<[Progress]>, now: Instant) {
        self.with(|s| {
            let at = s.at.clone().unwrap_or(At {
                target: String::new(),
                repeat: 0,
                workload: String::new(),
            });
            s.running = Some(Running {
                key: Key {
                    target: at.target,
                    workload: at.workload,
                    test: p.test.to_string(),
                },
                repeat: at.repeat,
                started: now,
                interval: p.interval.max(Duration::from_millis(100)),
                total_ops: p.total_ops,
                total_secs: p.total_secs,
                workers,
                tick: (now, ByDirection::default()),
                rates: None,
            });
        });
    }

    /// The phase ended: what its workers did joins the run's counters.
    pub fn end_phase(&self) {
        self.with(|s| {
            if let Some(r) = s.running.take() {
                let done = r.totals();
                *s.finished.entry(r.key).or_default() += done;
            }
            s.evidence = None;
            s.limiter = None;
        });
    }

    /// What decides the running phase's limiter so far.
    pub fn set_evidence(&self, e: Arc<SoFar>) {
        self.with(|s| {
            s.evidence = Some(e);
            s.limiter = None;
        });
    }

    /// Called often (the server's every wake-up): at each interval boundary of the running
    /// phase, the rates over the interval that ended.
    pub fn tick(&self, now: Instant) {
        self.with(|s| {
            let Some(r) = s.running.as_mut() else {
                return;
            };
            if now < r.tick.0 + r.interval {
                return;
            }
            let totals = r.totals();
            let secs = now.saturating_duration_since(r.tick.0).as_secs_f64();
            let mut rates = [(0.0, 0.0); 4];
            for ((rate, (_, a)), (_, b)) in rates.iter_mut().zip(r.tick.1.iter()).zip(totals.iter())
            {
                *rate = (
                    b.ops.saturating_sub(a.ops) as f64 / secs,
                    b.bytes.saturating_sub(a.bytes) as f64 / secs,
                );
            }
            r.rates = Some(rates);
            r.tick = (now, totals);
        });
    }

    /// Everything a scrape at `now` shows. The limiter so far is worked out at most once per
    /// interval (it reads every process's CPU).
    pub fn view(&self, now: Instant) -> View {
        let due = self.with(|s| {
            let r = s.running.as_ref()?;
            let fresh = s
                .limiter
                .is_some_and(|(at, _)| now.saturating_duration_since(at) < r.interval);
            let e = s.evidence.clone().filter(|_| !fresh)?;
            let t = r.totals();
            // (Bytes a workload moved by direction: block I/O says; the others do not.)
            let moved = |d: Dir| {
                let c = t[Some(d)];
                (c.ops > 0).then_some(c.bytes as f64)
            };
            let volume = Volume {
                read: moved(Dir::Read),
                written: moved(Dir::Write),
                read_ops: moved(Dir::Read).map(|_| t[Some(Dir::Read)].ops as f64),
            };
            let secs = now
                .saturating_duration_since(r.started)
                .as_secs_f64()
                .max(1e-3);
            let rate = |d: Dir| {
                let c = t[Some(d)];
                (c.ops as f64 / secs, c.bytes as f64 / secs)
            };
            let (r, w) = (rate(Dir::Read), rate(Dir::Write));
            let achieved = Achieved {
                iops: [r.0, w.0],
                bytes: [r.1, w.1],
            };
            Some((e, volume, achieved))
        });
        // (Outside the lock: the phase's hooks do not wait for it.)
        if let Some((e, volume, achieved)) = due {
            let l = e.limiter(volume, &achieved);
            self.with(|s| s.limiter = Some((now, l)));
        }
        self.with(|s| view_of(&self.info, s, now))
    }
}

fn view_of(info: &Info, s: &State, now: Instant) -> View {
    let mut counters = s.finished.clone();
    let phase = s.running.as_ref().map(|r| {
        let live = r.totals();
        *counters.entry(r.key.clone()).or_default() += live;
        let elapsed_s = now.saturating_duration_since(r.started).as_secs_f64();
        let done = live.total().ops;
        let (progress, eta_s) = progress_of(r.total_ops, r.total_secs, done, elapsed_s);
        PhaseView {
            key: r.key.clone(),
            repeat: r.repeat + 1,
            elapsed_s,
            workers: r.workers.len(),
            progress,
            eta_s,
            rates: r.rates,
            latency: latency_of(&r.workers, r.started, r.interval, now),
            limiter: s.limiter.and_then(|(_, l)| l),
        }
    });
    View {
        info: info.clone(),
        counters: counters.into_iter().collect(),
        phase,
    }
}

/// The share done and the seconds left: by operations when the phase knows how many, else by
/// its runtime.
fn progress_of(
    total_ops: Option<u64>,
    total_secs: Option<f64>,
    done: u64,
    elapsed_s: f64,
) -> (Option<f64>, Option<f64>) {
    match (total_ops, total_secs) {
        (Some(n), _) if n > 0 => {
            let f = (done as f64 / n as f64).clamp(0.0, 1.0);
            let eta = (f > 0.0).then(|| elapsed_s * (1.0 - f) / f);
            (Some(f), eta)
        }
        (_, Some(t)) if t > 0.0 => (
            Some((elapsed_s / t).clamp(0.0, 1.0)),
            Some((t - elapsed_s).max(0.0)),
        ),
        _ => (None, None),
    }
}

/// The percentiles of every worker's last closed interval (those closed in the last two
/// intervals: a worker that closed none since has stopped or stalled).
fn latency_of(
    workers: &[Progress],
    started: Instant,
    interval: Duration,
    now: Instant,
) -> Option<[f64; 3]> {
    let mut all = Slice::default();
    for w in workers {
        if let Some(c) = w.last_interval() {
            if c.at >= started && now.saturating_duration_since(c.at) <= interval * 2 {
                all.add(&c.slice);
            }
        }
    }
    if all.count() == 0 {
        return None;
    }
    let h = all.to_hist(timeline::SIGFIG);
    Some(PERCENTILES.map(|(_, q)| h.value_at_quantile(q) as f64 / 1e9))
}

impl Observer for Feed {
    fn entered(&self, target: &str, repeat: u32, workload: &str) {
        self.enter_workload(target, repeat, workload);
    }
    fn left(&self) {
        self.leave_workload();
    }
    fn started(&self, p: PhaseInfo, workers: Arc<[Progress]>) {
        self.start_phase(p, workers, Instant::now());
    }
    fn ended(&self) {
        self.end_phase();
    }
    fn evidence(&self, s: SoFar) {
        self.set_evidence(Arc::new(s));
    }
    fn pause(&self) {
        if let Some(s) = self.server() {
            s.pause();
        }
    }
    fn resume(&self) {
        if let Some(s) = self.server() {
            s.resume();
        }
    }
}

#[cfg(test)]
mod tests;
