//! Latency over time: beside a phase's whole-run histogram, one histogram per interval (1 s by
//! default, `--interval`). A worker records into its whole-run histogram only, as before; at each
//! interval boundary (checked against a clock reading the worker takes anyway) the slicer keeps
//! what the cumulative histogram gained since the last boundary, as a sparse list of
//! (value, count). So an interval costs nothing per operation, a little work once per interval,
//! and a few hundred bytes of memory. Timelines merge like the whole-run histograms: interval by
//! interval, counts added (workers of a part, then ranks).

use std::cell::RefCell;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::hist::{self, Hist};

/// The default interval.
pub const DEFAULT: Duration = crate::plan::workload::DEFAULT_INTERVAL;
/// The significant digits an interval keeps (1%: what the interval log stores, and a tenth of
/// the memory of the whole-run histogram's 3 digits for a long phase of many workers).
pub const SIGFIG: u8 = 2;
/// The shortest and longest interval `--interval` takes.
pub const MIN: Duration = crate::plan::flags::INTERVAL_MIN;
pub const MAX: Duration = crate::plan::flags::INTERVAL_MAX;

/// One interval's latencies: (value, count) pairs in increasing value, the values being bucket
/// values of a histogram of `SIGFIG` significant digits (so slices of different workers add
/// bucket by bucket).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Slice(pub Vec<(u64, u64)>);

impl Slice {
    /// What `now` holds beyond `before` (both cumulative, the same configuration), at
    /// `SIGFIG` significant digits.
    pub fn between(before: Option<&Hist>, now: &Hist) -> Slice {
        let mut diff = now.clone();
        if let Some(b) = before {
            if diff.subtract(b).is_err() {
                // Not cumulative (cannot happen for a worker's own histogram): keep it whole.
                diff = now.clone();
            }
        }
        Slice::of(&diff).coarse()
    }

    /// The same counts in the buckets of `SIGFIG` significant digits.
    fn coarse(self) -> Slice {
        let grid = hist::with_sigfig(SIGFIG);
        let mut out: Vec<(u64, u64)> = Vec::with_capacity(self.0.len() / 4 + 1);
        for (v, n) in self.0 {
            let b = grid.highest_equivalent(v);
            match out.last_mut() {
                Some(last) if last.0 == b => last.1 += n,
                _ => out.push((b, n)),
            }
        }
        Slice(out)
    }

    pub fn of(h: &Hist) -> Slice {
        Slice(
            h.iter_recorded()
                .map(|v| (v.value_iterated_to(), v.count_at_value()))
                .collect(),
        )
    }

    pub fn count(&self) -> u64 {
        self.0.iter().map(|x| x.1).sum()
    }

    /// Adds another slice, bucket by bucket.
    pub fn add(&mut self, o: &Slice) {
        if o.0.is_empty() {
            return;
        }
        if self.0.is_empty() {
            self.0.clone_from(&o.0);
            return;
        }
        let (a, b) = (std::mem::take(&mut self.0), &o.0);
        let mut out = Vec::with_capacity(a.len() + b.len());
        let (mut i, mut j) = (0, 0);
        while i < a.len() || j < b.len() {
            let next = match (a.get(i), b.get(j)) {
                (Some(x), Some(y)) if x.0 == y.0 => {
                    i += 1;
                    j += 1;
                    (x.0, x.1 + y.1)
                }
                (Some(x), Some(y)) if x.0 < y.0 => {
                    i += 1;
                    *x
                }
                (Some(x), None) => {
                    i += 1;
                    *x
                }
                (_, Some(y)) => {
                    j += 1;
                    *y
                }
                (None, None) => break,
            };
            out.push(next);
        }
        self.0 = out;
    }

    /// The slice as a histogram with `sigfig` significant digits (3: the whole-run resolution;
    /// fewer for a compact interval log).
    pub fn to_hist(&self, sigfig: u8) -> Hist {
        let mut h = hist::with_sigfig(sigfig);
        for &(v, n) in &self.0 {
            let _ = h.record_n(v.max(1), n);
        }
        h
    }
}

/// A part's latency over time: the slices from the measured start, `width` apart.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Timeline {
    /// The interval, in seconds.
    pub width_s: f64,
    /// The measured start, in seconds since the epoch (the earliest worker's).
    pub start_epoch_s: f64,
    /// From the start to the last operation, in seconds (the last interval may be shorter).
    pub end_s: f64,
    pub slices: Vec<Slice>,
}

impl Timeline {
    /// Adds another worker's (or rank's) timeline: interval by interval. Workers start together
    /// (the start line), so interval i of each is the same stretch of time.
    pub fn merge(&mut self, o: &Timeline) {
        if self.slices.is_empty() && self.width_s == 0.0 {
            self.clone_from(o);
            return;
        }
        if self.slices.len() < o.slices.len() {
            self.slices.resize(o.slices.len(), Slice::default());
        }
        for (a, b) in self.slices.iter_mut().zip(&o.slices) {
            a.add(b);
        }
        if o.start_epoch_s > 0.0
            && (self.start_epoch_s == 0.0 || o.start_epoch_s < self.start_epoch_s)
        {
            self.start_epoch_s = o.start_epoch_s;
        }
        self.end_s = self.end_s.max(o.end_s);
    }

    /// The length of interval `i` (the last one ends at `end_s`).
    pub fn length_s(&self, i: usize) -> f64 {
        let start = i as f64 * self.width_s;
        (self.end_s - start).clamp(0.0, self.width_s)
    }

    /// Every interval's operations added: the whole measured window.
    pub fn total(&self) -> Slice {
        let mut all = Slice::default();
        for s in &self.slices {
            all.add(s);
        }
        all
    }
}

/// Cuts a worker's cumulative latencies into intervals as it runs. The worker asks `due` with a
/// clock reading it has anyway and calls `cut` with its cumulative figures when it is; the
/// operations recorded between two cuts happened in the interval open at the first of them.
#[derive(Debug)]
pub struct Slicer {
    width: Duration,
    origin: Instant,
    epoch_s: f64,
    /// The interval open now, and when it ends.
    index: usize,
    next: Instant,
    slices: Vec<Slice>,
    /// The cumulative histogram at the last cut (Hist-based workers).
    prev: Option<Hist>,
    /// Where each closed interval goes while the phase is watched live (`--metrics`): the
    /// worker thread's when the slicer was made (`publish_here`).
    publish: Option<Publisher>,
}

/// What a slicer hands each interval it closes to.
pub type Publish = Arc<dyn Fn(&Slice) + Send + Sync>;

#[derive(Clone)]
struct Publisher(Publish);

impl std::fmt::Debug for Publisher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Publisher")
    }
}

thread_local! {
    static PUBLISH: RefCell<Option<Publisher>> = const { RefCell::new(None) };
}

/// The slicers made on this thread from now on publish each interval they close to `p` (the
/// live feed sets it on a watched phase's worker threads; None stops it).
pub fn publish_here(p: Option<Publish>) {
    PUBLISH.with(|c| *c.borrow_mut() = p.map(Publisher));
}

impl Slicer {
    /// Intervals of `width` from `origin` (the worker's measured start).
    pub fn new(width: Duration, origin: Instant) -> Slicer {
        let width = width.clamp(MIN, MAX);
        let (now, wall) = (Instant::now(), SystemTime::now());
        let wall = wall.duration_since(UNIX_EPOCH).unwrap_or_default();
        // The origin may be ahead (a ramp) or behind.
        let epoch = if origin >= now {
            wall + (origin - now)
        } else {
            wall.saturating_sub(now - origin)
        };
        Slicer {
            width,
            origin,
            epoch_s: epoch.as_secs_f64(),
            index: 0,
            next: origin + width,
            slices: Vec::new(),
            prev: None,
            publish: PUBLISH.with(|c| c.borrow().clone()),
        }
    }

    pub fn width(&self) -> Duration {
        self.width
    }

    /// An interval boundary has passed.
    #[inline]
    pub fn due(&self, now: Instant) -> bool {
        now >= self.next
    }

    /// Closes the interval open since the last cut with `gained` (what was recorded since), and
    /// any empty ones after it up to `now`.
    pub fn cut(&mut self, now: Instant, gained: Slice) {
        while self.slices.len() <= self.index {
            self.slices.push(Slice::default());
        }
        self.slices[self.index].add(&gained);
        if let Some(Publisher(p)) = &self.publish {
            p(&self.slices[self.index]);
        }
        let since = now.saturating_duration_since(self.origin);
        self.index = (since.as_nanos() / self.width.as_nanos()) as usize;
        self.next = self.origin + self.width * (self.index as u32 + 1);
    }

    /// `cut` for a worker whose cumulative figures are one histogram.
    pub fn cut_hist(&mut self, now: Instant, cum: &Hist) {
        let gained = Slice::between(self.prev.as_ref(), cum);
        self.prev = Some(cum.clone());
        self.cut(now, gained);
    }

    /// The timeline, the last interval closed at `end` with `gained`.
    pub fn finish(mut self, end: Instant, gained: Slice) -> Timeline {
        self.cut(end, gained);
        // Intervals after the last operation hold nothing.
        while self.slices.last().is_some_and(|s| s.0.is_empty()) {
            self.slices.pop();
        }
        Timeline {
            width_s: self.width.as_secs_f64(),
            start_epoch_s: self.epoch_s,
            end_s: end.saturating_duration_since(self.origin).as_secs_f64(),
            slices: self.slices,
        }
    }

    /// `finish` for a worker whose cumulative figures are one histogram.
    pub fn finish_hist(self, end: Instant, cum: &Hist) -> Timeline {
        let gained = Slice::between(self.prev.as_ref(), cum);
        self.finish(end, gained)
    }
}

#[cfg(test)]
mod tests;
