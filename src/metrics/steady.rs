//! Steady state as fio judges it (`steadystate=iops|iops_slope|bw|bw_slope|lat|lat_slope:LIMIT[%]`,
//! `ss_dur`, `ss_ramp`, `ss_interval`): once an interval (a second by default) after the ramp, a
//! sample of the job's IOPS, bandwidth and mean completion latency over that interval; over the
//! rolling window of the last `ss_dur / ss_interval` samples, either every sample lies within
//! LIMIT of the window's mean (`iops`, `bw`: the largest deviation below the limit) or the
//! least-squares slope of the samples (per second) is below LIMIT (`*_slope`); a LIMIT with `%` is
//! a percentage of the window's mean. The job ends the moment the criterion holds. Pure: samples
//! in, verdicts out (the block workload's monitor feeds it).

use crate::metrics::name as metric;
use std::collections::BTreeMap;

use crate::plan::job::Steady;

/// One window judged.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Verdict {
    pub attained: bool,
    /// What was compared with the limit: the deviation or |slope|, in percent of the mean when
    /// the limit is a percentage.
    pub criterion: f64,
    pub slope: f64,
    pub max_deviation: f64,
    pub mean: f64,
}

/// Judges one full window of samples against the criterion.
pub fn judge(s: &Steady, window: &[f64]) -> Verdict {
    let n = window.len() as f64;
    if window.is_empty() {
        return Verdict::default();
    }
    let mean = window.iter().sum::<f64>() / n;
    let max_deviation = window.iter().map(|y| (y - mean).abs()).fold(0.0, f64::max);
    // Least squares over x = 0, 1, ..., n-1 (seconds).
    let x_mean = (n - 1.0) / 2.0;
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for (i, y) in window.iter().enumerate() {
        let dx = i as f64 - x_mean;
        sxy += dx * (y - mean);
        sxx += dx * dx;
    }
    let slope = if sxx > 0.0 { sxy / sxx } else { 0.0 };
    let raw = if s.kind.slope() {
        slope.abs()
    } else {
        max_deviation
    };
    let criterion = match (s.pct, mean > 0.0) {
        (true, true) => raw / mean * 100.0,
        (true, false) => f64::INFINITY,
        (false, _) => raw,
    };
    Verdict {
        attained: criterion < s.limit,
        criterion,
        slope,
        max_deviation,
        mean,
    }
}

/// A job's samples as they come, judged each time the window is full.
#[derive(Debug, Clone)]
pub struct Watch {
    pub spec: Steady,
    /// Every sample after the ramp: (seconds from the measured start, IOPS, bytes per second).
    pub samples: Vec<(f64, f64, f64)>,
    /// Each sample's mean completion latency, ns (0 without I/O).
    pub lat: Vec<f64>,
    /// The last window judged, and when it held (seconds from the measured start).
    pub last: Option<Verdict>,
    pub at_s: Option<f64>,
}

impl Watch {
    pub fn new(spec: Steady) -> Watch {
        Watch {
            spec,
            samples: Vec::new(),
            lat: Vec::new(),
            last: None,
            at_s: None,
        }
    }

    /// A sample taken `at_s` seconds after the measured start (one before the ramp ends is not
    /// kept); true when steady state holds from now on.
    #[cfg(test)]
    pub fn push(&mut self, at_s: f64, iops: f64, bw: f64) -> bool {
        self.push_lat(at_s, iops, bw, 0.0)
    }

    /// A sample with its mean latency (ns); as `push`.
    pub fn push_lat(&mut self, at_s: f64, iops: f64, bw: f64, lat_ns: f64) -> bool {
        if self.at_s.is_some() {
            return true;
        }
        // The first sample is one interval after the ramp (fio's).
        if at_s + 1e-9 < (self.spec.ramp + self.spec.every()).as_secs_f64() {
            return false;
        }
        self.samples.push((at_s, iops, bw));
        self.lat.push(lat_ns);
        let n = self.spec.samples().max(1);
        if self.samples.len() < n {
            return false;
        }
        let v = judge(&self.spec, &self.series(n));
        self.last = Some(v);
        if v.attained {
            self.at_s = Some(at_s);
        }
        v.attained
    }

    /// The window's samples of the judged figure (IOPS, bandwidth or latency), the last `n`.
    fn series(&self, n: usize) -> Vec<f64> {
        if self.spec.kind.lat() {
            return self.lat[self.lat.len().saturating_sub(n)..].to_vec();
        }
        let iops = self.spec.kind.iops();
        self.samples[self.samples.len().saturating_sub(n)..]
            .iter()
            .map(|s| if iops { s.1 } else { s.2 })
            .collect()
    }

    /// The last window's IOPS and bandwidth samples.
    pub fn window(&self) -> (Vec<f64>, Vec<f64>) {
        let n = self.spec.samples().max(1);
        let w = &self.samples[self.samples.len().saturating_sub(n)..];
        (
            w.iter().map(|s| s.1).collect(),
            w.iter().map(|s| s.2).collect(),
        )
    }

    /// The record's steady-state figures: whether it was reached and when, the criterion's last
    /// value, the window's slope, largest deviation and means.
    pub fn metrics(&self, out: &mut BTreeMap<String, f64>) {
        out.insert(
            metric::STEADY_REACHED.into(),
            self.at_s.map_or(0.0, |_| 1.0),
        );
        if let Some(t) = self.at_s {
            out.insert(metric::STEADY_AT_S.into(), t);
        }
        out.insert(metric::STEADY_WINDOW_S.into(), self.spec.window() as f64);
        if let Some(v) = self.last {
            out.insert(metric::STEADY_CRITERION.into(), v.criterion);
            out.insert(metric::STEADY_SLOPE.into(), v.slope);
            out.insert(metric::STEADY_MAX_DEVIATION.into(), v.max_deviation);
        }
        let (iops, bw) = self.window();
        if !iops.is_empty() {
            let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
            out.insert(metric::STEADY_IOPS.into(), mean(&iops));
            out.insert(metric::STEADY_BYTES_PER_SEC.into(), mean(&bw));
        }
        // Judged on latency: the window's mean completion latency too.
        let lat = &self.lat[self.lat.len().saturating_sub(self.spec.samples().max(1))..];
        if self.spec.kind.lat() && !lat.is_empty() {
            out.insert(
                metric::STEADY_LAT_NS.into(),
                lat.iter().sum::<f64>() / lat.len() as f64,
            );
        }
    }
}

#[cfg(test)]
mod tests;
