//! fio's log files as one worker's loop writes them (fio 3.3x's text formats, re-implemented from
//! fio's documentation and from logs fio wrote): the bandwidth, IOPS and latency logs
//! (`time, value, ddir, bs[, offset], prio`: ms since the job's measured start, KiB/s, IOPS or
//! ns), a line per I/O or, with `log_avg_msec`, a line per direction per window (the average, the
//! maximum or both; block size and offset 0), and the completion-latency histogram log
//! (`time, ddir, bs, bins...`: fio's 1856 latency bins, 64 per power of two of ns, summed in
//! groups of 2^coarseness, counting the window's I/Os). The session writes the texts to files.

use std::fmt::Write;

use super::clock::Latency;
use crate::plan::dir::{Dir, PerDir};
use crate::plan::job::{FioLogs, LogWindow};

/// The directions fio's logs have lines for (fsbench logs no trims).
const LOGGED: [Dir; 2] = [Dir::Read, Dir::Write];

/// fio's latency bins: 2^6 bins per power of two, 29 groups (values in ns).
const PLAT_BITS: u32 = 6;
const PLAT_VAL: u64 = 1 << PLAT_BITS;
pub const PLAT_NR: usize = 29 * PLAT_VAL as usize;

/// The bin of a latency in ns: exact below 128 ns, then 64 bins per power of two (each bin
/// ~1.6% wide), the last bin holding everything above.
pub fn plat_index(ns: u64) -> usize {
    if ns < 2 * PLAT_VAL {
        return ns as usize;
    }
    let msb = 63 - ns.leading_zeros();
    let shift = msb - PLAT_BITS;
    let base = ((shift + 1) as u64) << PLAT_BITS;
    let offset = (ns >> shift) & (PLAT_VAL - 1);
    ((base + offset) as usize).min(PLAT_NR - 1)
}

/// One direction's I/Os in the current window: their count, bytes, and the sum and maximum of
/// their whole, completion and submission latencies.
#[derive(Debug, Clone, Copy, Default)]
struct Acc {
    ios: u64,
    bytes: u64,
    lat: Spread,
    clat: Spread,
    slat: Spread,
}

/// Latencies of a window: their sum and their maximum, ns.
#[derive(Debug, Clone, Copy, Default)]
struct Spread {
    sum: u128,
    max: u64,
}

impl Spread {
    fn add(&mut self, ns: u64) {
        self.sum += ns as u128;
        self.max = self.max.max(ns);
    }
}

/// A completed I/O as the logs take it: `ms` after the job's measured start, issued `issue_ns`
/// after it (the latency logs' last column with log_issue_time), its direction, size and offset.
#[derive(Debug, Clone, Copy)]
pub struct Logged {
    pub ms: u64,
    pub issue_ns: u64,
    pub dir: Dir,
    pub len: u64,
    pub offset: u64,
}

/// The window of log_avg_msec open now: each direction's I/Os in it, and when it ends (ms).
#[derive(Debug, Clone, Default)]
struct Window {
    dirs: PerDir<Acc>,
    ends_ms: u64,
}

/// The histogram window open now: each direction's bins and its last I/O's size, and when it
/// ends (ms).
#[derive(Debug, Clone, Default)]
struct HistWindow {
    bins: PerDir<Vec<u64>>,
    last_len: PerDir<u64>,
    ends_ms: u64,
}

/// The lines of one worker's logs, as fio writes them.
#[derive(Debug, Clone, Default)]
pub struct LogBook {
    spec: FioLogs,
    /// Whether the job does each direction (windowed bandwidth and IOPS lines are written for
    /// each it does, 0 when it did none in the window, as fio does).
    does: PerDir<bool>,
    /// Added to every time stamp (ms since the Unix epoch at the start, with log_unix_epoch).
    epoch_ms: u64,
    pub text: Texts,
    window: Window,
    hist: HistWindow,
    /// The ioprio value of the I/O logged next (the loop sets it: cmdprio's, or the job's).
    pub prio: u16,
}

/// The logs' lines.
#[derive(Debug, Clone, Default)]
pub struct Texts {
    pub bw: String,
    pub iops: String,
    pub lat: String,
    /// With `split`, fio's `_clat` and `_slat` lines (else `_clat` is `_lat`, `_slat` empty).
    pub clat: String,
    pub slat: String,
    pub split: bool,
    pub hist: String,
}

impl LogBook {
    /// The logs `spec` asks for, of a job doing the directions of `does`.
    pub fn new(spec: &FioLogs, does: PerDir<bool>, epoch_ms: u64) -> LogBook {
        let bins = PerDir::new(|d| {
            let n = if LOGGED.contains(&d) { PLAT_NR } else { 0 };
            vec![0; n]
        });
        LogBook {
            spec: spec.clone(),
            does,
            epoch_ms,
            window: Window {
                dirs: PerDir::default(),
                ends_ms: spec.avg_msec,
            },
            hist: HistWindow {
                bins,
                last_len: PerDir::default(),
                ends_ms: spec.hist_msec,
            },
            ..LogBook::default()
        }
    }

    /// The priority column: whether the I/O's class is realtime (1 or 0, fio's), or with
    /// log_prio its ioprio value in hexadecimal (class << 13 | hint << 3 | level).
    fn prio(&self) -> String {
        if self.spec.prio {
            format!("0x{:04x}", self.prio)
        } else {
            u8::from(self.prio >> 13 == 1).to_string()
        }
    }

    /// One completed I/O with its latency (and its parts, when the loop times them apart).
    pub fn io(&mut self, io: Logged, lat: Latency) {
        let lat = Latency {
            ns: lat.ns.max(1),
            ..lat
        };
        self.text.split |= lat.parts.is_some();
        let clat_ns = lat.parts.map_or(lat.ns, |p| p.clat_ns);
        let d = io.dir;
        if self.spec.avg_msec == 0 {
            let tail = self.tail(d.index(), io.len, io.offset);
            self.lines(io.ms + self.epoch_ms, io.len, &tail, lat, io.issue_ns);
        } else {
            while io.ms >= self.window.ends_ms {
                self.flush(self.window.ends_ms, self.spec.avg_msec);
                self.window.ends_ms += self.spec.avg_msec;
            }
            self.window.dirs[d].add(io.len, lat);
        }
        if self.spec.hist.is_some() && self.spec.hist_msec > 0 {
            while io.ms >= self.hist.ends_ms {
                self.flush_hist(self.hist.ends_ms);
                self.hist.ends_ms += self.spec.hist_msec;
            }
            self.hist.bins[d][plat_index(clat_ns)] += 1;
            self.hist.last_len[d] = io.len;
        }
    }

    /// A line's columns after the value: direction, size[, offset], priority.
    fn tail(&self, ddir: usize, len: u64, offset: u64) -> String {
        if self.spec.offset {
            format!("{ddir}, {len}, {offset}, {}", self.prio())
        } else {
            format!("{ddir}, {len}, {}", self.prio())
        }
    }

    /// One I/O's lines at `t` ms: its bandwidth, IOPS and latencies (and its completion and
    /// submission parts when timed apart), `tail` after each value.
    fn lines(&mut self, t: u64, len: u64, tail: &str, lat: Latency, issue_ns: u64) {
        // log_issue_time: the latency log's I/O's issue time, 0 in the others (as fio).
        let (zero, issued) = match self.spec.issue_time {
            true => (", 0".to_string(), format!(", {issue_ns}")),
            false => (String::new(), String::new()),
        };
        let x = &mut self.text;
        if self.spec.bw.is_some() {
            // Bytes per ms of this I/O's completion latency, as fio logs it.
            let v = len as u128 * 1_000_000 / lat.ns as u128;
            let _ = writeln!(x.bw, "{t}, {v}, {tail}{zero}");
        }
        if self.spec.iops.is_some() {
            let _ = writeln!(x.iops, "{t}, 1, {tail}{zero}");
        }
        if self.spec.lat.is_some() {
            let _ = writeln!(x.lat, "{t}, {}, {tail}{issued}", lat.ns);
            if let Some(p) = lat.parts {
                let _ = writeln!(x.clat, "{t}, {}, {tail}{issued}", p.clat_ns);
                let _ = writeln!(x.slat, "{t}, {}, {tail}{issued}", p.slat_ns);
            }
        }
    }

    /// The windowed lines of the window ending at `t` ms, `len` ms long (the rates only when
    /// `rates`).
    fn flush(&mut self, t: u64, len: u64) {
        self.flush_some(t, len, true)
    }

    fn flush_some(&mut self, t: u64, len: u64, rates: bool) {
        let len = len.max(1) as u128;
        let at = t + self.epoch_ms;
        let both = |v: u128| match self.spec.window {
            LogWindow::Both => format!("{v}, {v}"),
            _ => v.to_string(),
        };
        for d in LOGGED {
            let a = self.window.dirs[d];
            let mut tail = self.tail(d.index(), 0, 0);
            if self.spec.issue_time {
                tail.push_str(", 0");
            }
            let x = &mut self.text;
            if rates && (self.does[d] || a.ios > 0) {
                if self.spec.bw.is_some() {
                    let kib_s = a.bytes as u128 * 1000 / 1024 / len;
                    let _ = writeln!(x.bw, "{at}, {}, {tail}", both(kib_s));
                }
                if self.spec.iops.is_some() {
                    let iops = a.ios as u128 * 1000 / len;
                    let _ = writeln!(x.iops, "{at}, {}, {tail}", both(iops));
                }
            }
            if self.spec.lat.is_some() && a.ios > 0 {
                let [l, c, s] = a.values(self.spec.window);
                let _ = writeln!(x.lat, "{at}, {l}, {tail}");
                if x.split {
                    let _ = writeln!(x.clat, "{at}, {c}, {tail}");
                    let _ = writeln!(x.slat, "{at}, {s}, {tail}");
                }
            }
        }
        self.window.dirs = PerDir::default();
    }

    /// The histogram lines of the window ending at `t` ms: each direction the job does.
    fn flush_hist(&mut self, t: u64) {
        let group = 1usize << self.spec.hist_coarseness.min(6);
        let HistWindow {
            bins, last_len: bs, ..
        } = &mut self.hist;
        for d in LOGGED {
            if !self.does[d] && bins[d].iter().all(|&c| c == 0) {
                continue;
            }
            let (at, ddir) = (t + self.epoch_ms, d.index());
            let h = &mut self.text.hist;
            let _ = write!(h, "{at}, {ddir}, {}", bs[d]);
            for chunk in bins[d].chunks(group) {
                let _ = write!(h, ", {}", chunk.iter().sum::<u64>());
            }
            h.push('\n');
            bins[d].iter_mut().for_each(|c| *c = 0);
        }
    }

    /// The job ended `ms` after its measured start: a last partial window is written when it
    /// holds I/Os (fio's latency logs do; its histogram log keeps only whole windows), its
    /// bandwidth and IOPS only when it lasted half a window or more (a rate over a sliver of a
    /// window is noise).
    pub fn finish(&mut self, ms: u64) {
        if self.spec.avg_msec > 0 && self.window.dirs.iter().any(|(_, a)| a.ios > 0) {
            let start = self.window.ends_ms - self.spec.avg_msec;
            let len = ms.saturating_sub(start);
            let rates = len * 2 >= self.spec.avg_msec;
            self.flush_some(ms.max(start + 1), len.max(1), rates);
        }
    }
}

impl Acc {
    /// One I/O of `len` bytes with its latency (its whole latency its completion part when
    /// not timed apart, as fio's).
    fn add(&mut self, len: u64, lat: Latency) {
        self.ios += 1;
        self.bytes += len;
        self.lat.add(lat.ns);
        self.clat.add(lat.parts.map_or(lat.ns, |p| p.clat_ns));
        self.slat.add(lat.parts.map_or(0, |p| p.slat_ns));
    }

    /// The window's (whole, completion, submission) latency values as the log writes them.
    fn values(&self, w: LogWindow) -> [String; 3] {
        [self.lat, self.clat, self.slat].map(|Spread { sum, max }| {
            let avg = sum / self.ios as u128;
            match w {
                LogWindow::Avg => avg.to_string(),
                LogWindow::Max => max.to_string(),
                LogWindow::Both => format!("{avg}, {max}"),
            }
        })
    }
}

#[cfg(test)]
mod tests;
