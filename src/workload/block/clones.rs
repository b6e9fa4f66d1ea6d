//! fio's clones: each worker of a block job of `numjobs` above 1 keeps its own figures on the
//! record (`clones`), so fio's JSON without group_reporting has a job per clone, as fio's has.

use std::sync::Mutex;

use super::resolve::Worker;
use crate::io::Stats;
use crate::metrics::hist;
use crate::plan::dir::Dir;
use crate::store::{CloneBw, CloneFigures, CloneLat};

/// A worker's per-second bandwidth, summed up.
fn per_sec(st: &Stats) -> Option<CloneBw> {
    let bw: Vec<f64> = st.per_sec.iter().map(|x| x.bytes as f64).collect();
    (!bw.is_empty()).then(|| CloneBw {
        min: bw.iter().cloned().fold(f64::INFINITY, f64::min),
        max: bw.iter().cloned().fold(0.0, f64::max),
        mean: bw.iter().sum::<f64>() / bw.len() as f64,
        samples: bw.len(),
    })
}

/// A latency histogram as a clone keeps it.
fn summary(h: &hist::Hist) -> CloneLat {
    if h.is_empty() {
        return CloneLat::default();
    }
    CloneLat {
        min: h.min(),
        mean: h.mean(),
        stddev: h.stdev(),
        max: h.max(),
        percentile: hist::fio_percentiles(h),
    }
}

/// Each worker's figures, by worker index, kept as the workers end.
#[derive(Default)]
pub struct Clones(Mutex<Vec<Option<CloneFigures>>>);

impl Clones {
    pub fn new(workers: usize) -> Clones {
        Clones(Mutex::new(vec![None; workers]))
    }

    /// Keeps worker `wi`'s figures (clone `clone` of its job).
    pub fn keep(&self, wi: usize, clone: usize, st: &Stats) {
        let (r, w) = (&st.tally.dirs[Dir::Read], &st.tally.dirs[Dir::Write]);
        let mixed = r.ios > 0 && w.ios > 0;
        let f = CloneFigures {
            clone: clone as u32,
            read_ios: r.ios,
            read_bytes: r.bytes,
            write_ios: w.ios,
            write_bytes: w.bytes,
            runtime_s: st.measured.as_secs_f64(),
            lat_ns: summary(&st.tally.lat()),
            read_lat_ns: mixed.then(|| summary(&r.lat)),
            write_lat_ns: mixed.then(|| summary(&w.lat)),
            bw_per_sec: per_sec(st),
            error: st.ended.error.clone(),
        };
        let mut all = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(slot) = all.get_mut(wi) {
            *slot = Some(f);
        }
    }

    /// The clones of job `ji` in clone order; none for a job of one worker.
    pub fn of(&self, workers: &[Worker], ji: usize) -> Vec<CloneFigures> {
        let all = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let mut out: Vec<CloneFigures> = workers
            .iter()
            .zip(all.iter())
            .filter(|(w, _)| w.job == ji)
            .filter_map(|(_, f)| f.clone())
            .collect();
        if out.len() < 2 {
            return Vec::new();
        }
        out.sort_by_key(|f| f.clone);
        out
    }
}
