//! fio's steady state for block jobs (`steadystate`, `ss_dur`, `ss_ramp`, and `compare
//! --until-steady`): a monitor beside the phase's workers samples each judged job's I/Os and
//! bytes and latencies once an interval (a second, or ss_interval; the sum of its workers'
//! progress, which counts only after ramp_time),
//! feeds them to the job's `metrics::steady::Watch`, and raises the job's halt flag the moment
//! the criterion holds; the job's workers stop issuing at their next check. The record then
//! carries `steady_*` figures, the window's samples and a note; with `--until-steady` the
//! headline figures are the steady window's.

use crate::metrics::name as metric;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::metrics::progress::Progress;
use crate::metrics::steady::Watch;
use crate::plan::job::Steady;
use crate::store::note;

/// One judged job: its halt flag (read by its workers' loops) and its watch.
#[derive(Debug)]
pub struct SteadyRun {
    pub halt: AtomicBool,
    pub watch: Mutex<Watch>,
}

impl SteadyRun {
    pub fn new(spec: Steady) -> SteadyRun {
        SteadyRun {
            halt: AtomicBool::new(false),
            watch: Mutex::new(Watch::new(spec)),
        }
    }
}

/// A job the monitor samples: its run, the positions of its workers in the phase, and how long
/// after the start line its measuring starts (startdelay + ramp_time).
pub struct Judged<'a> {
    pub run: &'a SteadyRun,
    pub workers: Vec<usize>,
    pub offset: Duration,
}

/// One job's sampling state.
struct Clock {
    start: Instant,
    /// The sample number due next (0: the baseline at the start), when, and the last reading.
    k: u32,
    prev: (u64, u64, Instant),
    /// The latencies summed at the last reading, ns.
    prev_lat: u64,
    /// The time between samples.
    every: Duration,
    over: bool,
}

impl Clock {
    fn due(&self) -> Instant {
        self.start + self.every * self.k
    }
}

/// Samples every judged job once a second from its measured start until `done` (every worker
/// ended) or until each is steady.
pub fn monitor(jobs: &[Judged], progress: &[Progress], done: &AtomicBool) {
    let t0 = Instant::now();
    let mut clocks: Vec<Clock> = jobs
        .iter()
        .map(|j| Clock {
            start: t0 + j.offset,
            k: 0,
            prev: (0, 0, t0),
            prev_lat: 0,
            every: j
                .run
                .watch
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .spec
                .every(),
            over: false,
        })
        .collect();
    let sum = |j: &Judged| {
        j.workers
            .iter()
            .filter_map(|&w| progress.get(w))
            .map(Progress::get)
            .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
    };
    while !done.load(Ordering::Acquire) && clocks.iter().any(|c| !c.over) {
        let now = Instant::now();
        for (j, c) in jobs.iter().zip(clocks.iter_mut()).filter(|(_, c)| !c.over) {
            if now < c.due() {
                continue;
            }
            let (ops, bytes) = sum(j);
            let lat: u64 = j
                .workers
                .iter()
                .filter_map(|&w| progress.get(w))
                .map(Progress::lat_ns)
                .sum();
            if c.k > 0 {
                let dt = now.duration_since(c.prev.2).as_secs_f64().max(1e-6);
                let iops = ops.saturating_sub(c.prev.0) as f64 / dt;
                let bw = bytes.saturating_sub(c.prev.1) as f64 / dt;
                let n = ops.saturating_sub(c.prev.0);
                let mean_lat = lat.saturating_sub(c.prev_lat) as f64 / n.max(1) as f64;
                let at = (c.every * c.k).as_secs_f64();
                let mut w = j.run.watch.lock().unwrap_or_else(|e| e.into_inner());
                if w.push_lat(at, iops, bw, mean_lat) {
                    j.run.halt.store(true, Ordering::Release);
                    c.over = true;
                }
            }
            c.prev = (ops, bytes, now);
            c.prev_lat = lat;
            c.k += 1;
        }
        let next = clocks
            .iter()
            .filter(|c| !c.over)
            .map(Clock::due)
            .min()
            .unwrap_or(now);
        let wait = next.saturating_duration_since(Instant::now());
        std::thread::sleep(wait.min(Duration::from_millis(20)));
    }
}

/// The record's steady-state figures, samples and note; with `headline` and the state reached,
/// its throughput figures become the steady window's (the whole run's kept as `run_*`).
pub fn decorate(
    w: &Watch,
    metrics: &mut BTreeMap<String, f64>,
    series: &mut BTreeMap<String, Vec<f64>>,
    notes: &mut Vec<String>,
) {
    w.metrics(metrics);
    let (iops, bw) = w.window();
    series.insert(metric::STEADY_IOPS.into(), iops);
    series.insert(metric::STEADY_BYTES_PER_SEC.into(), bw);
    if w.spec.kind.lat() {
        let n = w.spec.samples().max(1);
        series.insert(
            metric::STEADY_LAT_NS.into(),
            w.lat[w.lat.len().saturating_sub(n)..].to_vec(),
        );
    }
    let s = &w.spec;
    let judged = format!(
        "{} over {} s after a ramp of {} s",
        s.criterion(),
        s.window(),
        s.ramp.as_secs_f64()
    );
    let Some(at) = w.at_s else {
        let ran = metrics.get(metric::RUNTIME_S).copied().unwrap_or(0.0);
        notes.push(note::make(
            note::Kind::Steady,
            format!("not reached in {ran:.0} s ({judged}): the figures are the whole run's"),
        ));
        return;
    };
    let value = w.last.map_or(0.0, |v| v.criterion);
    let mut text = format!(
        "reached at {at:.0} s ({judged}: {value:.3}{} < {}{})",
        if s.pct { "%" } else { "" },
        s.limit,
        if s.pct { "%" } else { "" }
    );
    if s.headline {
        headline(metrics);
        text.push_str("; the figures are the steady window's, the whole run's are run_iops and run_bytes_per_sec");
    }
    notes.push(note::make(note::Kind::Steady, text));
}

/// The throughput figures of the steady window in place of the whole run's, each direction in
/// the share it had over the run.
fn headline(m: &mut BTreeMap<String, f64>) {
    let (Some(iops), Some(bw)) = (
        m.get(metric::STEADY_IOPS).copied(),
        m.get(metric::STEADY_BYTES_PER_SEC).copied(),
    ) else {
        return;
    };
    let get = |m: &BTreeMap<String, f64>, k: &str| m.get(k).copied().unwrap_or(0.0);
    let (run_iops, run_bw) = (get(m, "iops"), get(m, metric::BYTES_PER_SEC));
    let share = |part: f64, whole: f64| if whole > 0.0 { part / whole } else { 0.0 };
    for d in ["read", "write"] {
        let k_iops = format!("{d}_iops");
        let k_bw = format!("{d}_bytes_per_sec");
        let (i, b) = (get(m, &k_iops), get(m, &k_bw));
        m.insert(k_iops, iops * share(i, run_iops));
        m.insert(k_bw, bw * share(b, run_bw));
    }
    m.insert(metric::RUN_IOPS.into(), run_iops);
    m.insert(metric::RUN_BYTES_PER_SEC.into(), run_bw);
    m.insert("iops".into(), iops);
    m.insert(metric::BYTES_PER_SEC.into(), bw);
}
