//! Timed calls: a loop that times every call of a test with one clock read per call (the end of
//! one is the start of the next) into a cheap bucketed histogram, checks for a stop request as
//! it goes, and runs over any file-like `Fd` (a counting wrapper in the tests checks the calls).
//! Used by the workloads that make one system call per operation (bonnie, iozone).

use std::fs::File;
use std::io::{self, Read, Seek, Write};
use std::time::{Duration, Instant};

use crate::metrics::hist::Hist;
use crate::metrics::timeline::{Slice, Slicer, Timeline};
use crate::stop::StopReason;

/// What the IO tests need of a file.
pub trait Fd: Read + Write + Seek {
    /// fsync(2).
    fn sync(&mut self) -> io::Result<()>;

    /// One one-byte write() call.
    fn putc(&mut self, b: u8) -> io::Result<()> {
        self.write_all(&[b])
    }

    /// One one-byte read() call; false at the end of the file.
    fn getc(&mut self) -> io::Result<bool> {
        let mut b = [0u8; 1];
        Ok(self.read(&mut b)? == 1)
    }
}

impl Fd for File {
    fn sync(&mut self) -> io::Result<()> {
        self.sync_all()
    }

    fn putc(&mut self, b: u8) -> io::Result<()> {
        match crate::sys::raw_write(self, &[b])? {
            1 => Ok(()),
            _ => Err(io::Error::new(
                io::ErrorKind::WriteZero,
                "write() wrote nothing",
            )),
        }
    }

    fn getc(&mut self) -> io::Result<bool> {
        let mut b = [0u8; 1];
        Ok(crate::sys::raw_read(self, &mut b)? == 1)
    }
}

/// What a test did: calls (bytes for per-char tests, chunks, seeks), bytes, writes back.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Done {
    pub ops: u64,
    pub bytes: u64,
    pub rewrites: u64,
    pub stopped: Option<StopReason>,
    /// Where the span starts when the loop's own caller did not read it: the first seek's
    /// ticket (bonnie's seekers), an iozone stream test's clock read after its stream was made.
    pub started: Option<Instant>,
    /// When the last call ended (the clock read after it): a test timed with `calls_from` from
    /// its own clock read ends here, with no clock read of its own.
    pub ended: Option<Instant>,
}

/// Latencies of cheap calls (one-byte writes take half a microsecond): 16 buckets per power of
/// two (about 6% wide) and the exact maximum, a few nanoseconds per call; turned into a
/// histogram at the end. `Lat::over` also cuts them into intervals (latency over time) at the
/// clock readings the calls take anyway.
pub struct Lat {
    counts: Vec<u64>,
    max: u64,
    /// The intervals so far, and the counts at the last cut.
    slicer: Option<(Slicer, Vec<u64>)>,
}

impl Default for Lat {
    fn default() -> Lat {
        Lat {
            counts: vec![0; 64 * 16],
            max: 0,
            slicer: None,
        }
    }
}

fn bucket(ns: u64) -> usize {
    let p = 63 - ns.max(1).leading_zeros();
    if p < 4 {
        ns as usize
    } else {
        (p as usize - 3) * 16 + ((ns >> (p - 4)) & 15) as usize
    }
}

/// The middle of a bucket.
fn middle(idx: usize) -> u64 {
    if idx < 16 {
        return idx as u64;
    }
    let p = (idx / 16 + 3) as u32;
    let low = (16 + (idx % 16) as u64) << (p - 4);
    low + (1u64 << (p - 4)) / 2
}

impl Lat {
    /// Latencies with their intervals of `interval` from now.
    pub fn over(interval: Duration) -> Lat {
        Lat {
            slicer: Some((Slicer::new(interval, Instant::now()), vec![0; 64 * 16])),
            ..Lat::default()
        }
    }

    /// The same, its counters written once, so that recording into them later takes no page
    /// fault (calloc may hand out zero pages the kernel maps only on the first write).
    pub fn touched(mut self) -> Lat {
        let all = [
            Some(&mut self.counts),
            self.slicer.as_mut().map(|s| &mut s.1),
        ];
        for c in all.into_iter().flatten() {
            for x in c.iter_mut() {
                // An opaque zero: the store of the value already there is not left out.
                *x = std::hint::black_box(0);
            }
        }
        self
    }

    /// Starts the intervals at `at` (the start line), when nothing was recorded yet.
    pub fn begin(&mut self, at: Instant) {
        if let Some((s, _)) = self.slicer.as_mut() {
            *s = Slicer::new(s.width(), at);
        }
    }

    #[inline]
    pub fn record(&mut self, ns: u64) {
        self.counts[bucket(ns)] += 1;
        self.max = self.max.max(ns);
    }

    /// Records the call that started at `t0` and ends now (returned: the next call's start).
    #[inline]
    pub fn since(&mut self, t0: Instant) -> Instant {
        let now = Instant::now();
        self.record(now.duration_since(t0).as_nanos() as u64);
        self.tick(now);
        now
    }

    /// Closes the interval open when an interval boundary has passed.
    #[inline]
    pub fn tick(&mut self, now: Instant) {
        if self.slicer.as_ref().is_some_and(|s| s.0.due(now)) {
            let gained = self.gained();
            if let Some((s, _)) = self.slicer.as_mut() {
                s.cut(now, gained);
            }
        }
    }

    /// What the buckets gained since the last cut (each at its bucket's middle).
    fn gained(&mut self) -> Slice {
        let Some((_, prev)) = self.slicer.as_mut() else {
            return Slice::default();
        };
        let mut out = Vec::new();
        for (i, (now, before)) in self.counts.iter().zip(prev.iter_mut()).enumerate() {
            if *now > *before {
                out.push((middle(i).max(1), *now - *before));
                *before = *now;
            }
        }
        Slice(out)
    }

    /// The latency over time up to `end` (None unless made by `over`).
    pub fn timeline(&mut self, end: Instant) -> Option<Timeline> {
        let gained = self.gained();
        self.slicer.take().map(|(s, _)| s.finish(end, gained))
    }

    /// Adds everything to `h`, the maximum exactly.
    pub fn into_hist(mut self, h: &mut Hist) {
        if self.max > 0 {
            self.counts[bucket(self.max)] -= 1;
            h.saturating_record(self.max);
        }
        for (i, &n) in self.counts.iter().enumerate() {
            if n > 0 {
                let _ = h.record_n(middle(i).max(1), n);
            }
        }
    }
}

/// Times each call: one clock read per call (the end of one is the start of the next).
struct Clock {
    last: Instant,
}

impl Clock {
    #[inline]
    fn lap(&mut self, lat: &mut Lat) {
        let now = Instant::now();
        lat.record(now.duration_since(self.last).as_nanos() as u64);
        lat.tick(now);
        self.last = now;
    }
}

/// Checks for a stop request every 4096 calls.
#[inline]
pub fn stopped(i: u64) -> Option<StopReason> {
    if i % 4096 == 0 {
        crate::stop::requested()
    } else {
        None
    }
}

/// Makes up to `n` timed calls of `op` (given the call's number, returning the bytes it moved;
/// 0 ends early), checking for a stop request as it goes.
#[inline]
pub fn calls(n: u64, lat: &mut Lat, op: impl FnMut(u64) -> io::Result<u64>) -> io::Result<Done> {
    calls_from(Instant::now(), n, lat, op)
}

/// `calls`, the first call timed from `start`, the caller's clock read that opens the test's span.
/// With `Done::ended` closing it, a test reads the clock once before its first call and once
/// after each call, as iozone's two reads enclose its loop (and nothing else).
#[inline]
pub fn calls_from(
    start: Instant,
    n: u64,
    lat: &mut Lat,
    mut op: impl FnMut(u64) -> io::Result<u64>,
) -> io::Result<Done> {
    let mut d = Done::default();
    let mut c = Clock { last: start };
    for i in 0..n {
        if let Some(why) = stopped(i) {
            d.stopped = Some(why);
            break;
        }
        let bytes = op(i)?;
        if bytes == 0 {
            break;
        }
        c.lap(lat);
        d.ops += 1;
        d.bytes += bytes;
    }
    d.ended = (d.ops > 0).then_some(c.last);
    Ok(d)
}

/// fsync at the end of a test that ran to its end.
pub fn sync_unless_stopped<F: Fd>(f: &mut F, d: Done) -> io::Result<Done> {
    if d.stopped.is_none() {
        f.sync()?;
    }
    Ok(d)
}

/// A file in memory that counts every call by kind and size, for the workloads' tests.
#[cfg(test)]
pub mod testing {
    use super::Fd;
    use std::io::{self, Cursor, Read, Seek, SeekFrom, Write};

    /// A file in memory that counts every call by kind and size, and where each read or write
    /// started.
    #[derive(Default)]
    pub struct Counting {
        pub data: Cursor<Vec<u8>>,
        pub reads: Vec<usize>,
        pub writes: Vec<usize>,
        pub at: Vec<u64>,
        pub seeks: u64,
        pub syncs: u64,
    }

    impl Read for Counting {
        fn read(&mut self, b: &mut [u8]) -> io::Result<usize> {
            self.reads.push(b.len());
            self.at.push(self.data.position());
            self.data.read(b)
        }
    }
    impl Write for Counting {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            self.writes.push(b.len());
            self.at.push(self.data.position());
            self.data.write(b)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    impl Seek for Counting {
        fn seek(&mut self, p: SeekFrom) -> io::Result<u64> {
            self.seeks += 1;
            self.data.seek(p)
        }
    }
    impl Fd for Counting {
        fn sync(&mut self) -> io::Result<()> {
            self.syncs += 1;
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fast_latencies_keep_the_maximum_and_land_within_their_bucket() {
        let mut l = Lat::default();
        for v in [1u64, 15, 16, 17, 1000, 123_456, 5_000_000_000] {
            l.record(v);
        }
        let mut h = crate::metrics::hist::new();
        l.into_hist(&mut h);
        assert_eq!(h.len(), 7);
        assert_eq!(h.max(), h.highest_equivalent(5_000_000_000));
        let p50 = h.value_at_quantile(0.5) as f64;
        assert!((p50 - 17.0).abs() <= 2.0, "{p50}");
        for v in [20u64, 1000, 123_456, 99_999_999] {
            let m = middle(bucket(v)) as f64;
            assert!((m - v as f64).abs() / v as f64 <= 0.07, "{v} -> {m}");
        }
    }

    #[test]
    fn calls_from_a_clock_read_time_the_first_call_from_it_and_end_with_the_last() {
        let mut l = Lat::default();
        let start = Instant::now();
        std::thread::sleep(Duration::from_millis(3));
        let mut ends = Vec::new();
        let d = calls_from(start, 3, &mut l, |_| {
            std::thread::sleep(Duration::from_millis(2));
            ends.push(Instant::now());
            Ok(1)
        })
        .unwrap();
        let ended = d.ended.expect("the last call's end");
        let last = *ends.last().unwrap();
        assert!(ended >= last && ended < last + Duration::from_millis(100));
        let mut h = crate::metrics::hist::new();
        l.into_hist(&mut h);
        assert_eq!(h.len(), 3);
        // The first call's latency runs from the caller's read, 3 ms before it began.
        assert!(h.max() >= 5_000_000, "{}", h.max());
        let none = calls_from(start, 0, &mut Lat::default(), |_| Ok(1)).unwrap();
        assert_eq!(none.ended, None, "no call, no end");
    }
}
