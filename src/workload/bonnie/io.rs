//! The IO tests, over any file-like `Fd` (a counting wrapper in the tests checks the calls):
//! per-character output and input (one-byte write() and read() calls), block output (fresh data
//! each chunk), rewrite (read a chunk, dirty a byte, seek back, write), block input, and random
//! seeks (read a random chunk; about one in ten written back).

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::time::Instant;

use crate::io::{DataGen, WriteData};
use crate::metrics::hist::Hist;
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
    /// When the first seek's ticket arrived (the seekers' clock starts there).
    pub started: Option<Instant>,
}

/// Latencies of cheap calls (one-byte writes take half a microsecond): 16 buckets per power of
/// two (about 6% wide) and the exact maximum, a few nanoseconds per call; turned into a
/// histogram at the end.
pub struct Lat {
    counts: Vec<u64>,
    max: u64,
}

impl Default for Lat {
    fn default() -> Lat {
        Lat {
            counts: vec![0; 64 * 16],
            max: 0,
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
    #[inline]
    pub fn record(&mut self, ns: u64) {
        self.counts[bucket(ns)] += 1;
        self.max = self.max.max(ns);
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
    fn new() -> Clock {
        Clock {
            last: Instant::now(),
        }
    }

    #[inline]
    fn lap(&mut self, lat: &mut Lat) {
        let now = Instant::now();
        lat.record(now.duration_since(self.last).as_nanos() as u64);
        self.last = now;
    }
}

/// Checks for a stop request every 4096 calls.
#[inline]
fn stopped(i: u64) -> Option<StopReason> {
    if i % 4096 == 0 {
        crate::stop::requested()
    } else {
        None
    }
}

/// Makes up to `n` timed calls of `op` (given the call's number, returning the bytes it moved;
/// 0 ends early), checking for a stop request as it goes.
#[inline]
fn calls(n: u64, lat: &mut Lat, mut op: impl FnMut(u64) -> io::Result<u64>) -> io::Result<Done> {
    let mut d = Done::default();
    let mut c = Clock::new();
    for i in 0..n {
        if let Some(why) = stopped(i) {
            d.stopped = Some(why);
            return Ok(d);
        }
        let bytes = op(i)?;
        if bytes == 0 {
            break;
        }
        c.lap(lat);
        d.ops += 1;
        d.bytes += bytes;
    }
    Ok(d)
}

/// fsync at the end of a test that ran to its end.
fn sync_unless_stopped<F: Fd>(f: &mut F, d: Done) -> io::Result<Done> {
    if d.stopped.is_none() {
        f.sync()?;
    }
    Ok(d)
}

/// Per-character output: `n` one-byte write() calls, then fsync.
pub fn putc<F: Fd>(f: &mut F, n: u64, lat: &mut Lat) -> io::Result<Done> {
    let d = calls(n, lat, |i| f.putc((i & 0x7f) as u8).map(|_| 1))?;
    sync_unless_stopped(f, d)
}

/// Per-character input: `n` one-byte read() calls.
pub fn getc<F: Fd>(f: &mut F, n: u64, lat: &mut Lat) -> io::Result<Done> {
    calls(n, lat, |_| Ok(u64::from(f.getc()?)))
}

/// Block output: `size` bytes in chunks of `buf.len()`, fresh data in every chunk, then fsync.
pub fn put_block<F: Fd>(
    f: &mut F,
    size: u64,
    buf: &mut [u8],
    data: &WriteData,
    rng: &mut DataGen,
    lat: &mut Lat,
) -> io::Result<Done> {
    let chunk = buf.len() as u64;
    let d = calls(size / chunk, lat, |_| {
        data.fill(buf, rng);
        f.write_all(buf)?;
        Ok(chunk)
    })?;
    sync_unless_stopped(f, d)
}

/// Rewrite: read each chunk, dirty one byte, seek back, write it; then fsync.
pub fn rewrite<F: Fd>(f: &mut F, size: u64, buf: &mut [u8], lat: &mut Lat) -> io::Result<Done> {
    let chunk = buf.len() as u64;
    f.seek(SeekFrom::Start(0))?;
    let d = calls(size / chunk, lat, |i| {
        f.read_exact(buf)?;
        buf[(i as usize * 31) % buf.len()] ^= 0x5a;
        f.seek(SeekFrom::Current(-(chunk as i64)))?;
        f.write_all(buf)?;
        Ok(chunk)
    })?;
    sync_unless_stopped(f, d)
}

/// Block input: every chunk of `size` bytes.
pub fn get_block<F: Fd>(f: &mut F, size: u64, buf: &mut [u8], lat: &mut Lat) -> io::Result<Done> {
    let chunk = buf.len() as u64;
    calls(size / chunk, lat, |_| {
        f.read_exact(buf)?;
        Ok(chunk)
    })
}

/// The end of the tickets: one per seeker follows the last seek.
pub const END: u32 = u32::MAX;

/// One seeker, as bonnie++'s: it takes each seek's ticket (a random number) from a queue shared
/// with the other seekers, reads the chunk the ticket names, and writes about one in ten back
/// with a byte dirtied. It ends at the END ticket.
pub fn seeks<F: Fd>(
    f: &mut F,
    tickets: &mut dyn FnMut() -> io::Result<u32>,
    chunks: u64,
    buf: &mut [u8],
    rng: &mut DataGen,
    lat: &mut Lat,
) -> io::Result<Done> {
    let chunk = buf.len() as u64;
    let mut d = Done::default();
    loop {
        if let Some(why) = stopped(d.ops) {
            d.stopped = Some(why);
            return Ok(d);
        }
        let t0 = Instant::now();
        let ticket = tickets()?;
        if ticket == END {
            return Ok(d);
        }
        d.started.get_or_insert(t0);
        let at = (ticket as u64 % chunks.max(1)) * chunk;
        f.seek(SeekFrom::Start(at))?;
        f.read_exact(buf)?;
        d.bytes += chunk;
        let r = rng.next_u64();
        if r % 10 == 0 {
            buf[(r >> 20) as usize % buf.len()] ^= 0x5a;
            f.seek(SeekFrom::Start(at))?;
            f.write_all(buf)?;
            d.rewrites += 1;
        }
        lat.record(t0.elapsed().as_nanos() as u64);
        d.ops += 1;
    }
}

#[cfg(test)]
pub mod tests {
    use super::*;
    use std::io::Cursor;

    /// A file in memory that counts every call by kind and size.
    #[derive(Default)]
    pub struct Counting {
        pub data: Cursor<Vec<u8>>,
        pub reads: Vec<usize>,
        pub writes: Vec<usize>,
        pub seeks: u64,
        pub syncs: u64,
    }

    impl Read for Counting {
        fn read(&mut self, b: &mut [u8]) -> io::Result<usize> {
            self.reads.push(b.len());
            self.data.read(b)
        }
    }
    impl Write for Counting {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            self.writes.push(b.len());
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

    fn hist() -> Lat {
        Lat::default()
    }

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
    fn each_test_makes_bonnies_calls() {
        let mut f = Counting::default();
        let d = putc(&mut f, 3000, &mut hist()).unwrap();
        assert_eq!((d.ops, d.bytes), (3000, 3000));
        assert!(f.writes.iter().all(|&n| n == 1) && f.writes.len() == 3000);
        assert_eq!(f.syncs, 1, "putc ends with fsync");

        let mut f = Counting::default();
        let mut buf = vec![0u8; 8192];
        let data = WriteData::new(1, 8192, 0);
        let d = put_block(
            &mut f,
            80 * 8192,
            &mut buf,
            &data,
            &mut DataGen::new(1),
            &mut hist(),
        )
        .unwrap();
        assert_eq!(d.ops, 80);
        assert_eq!(f.writes, vec![8192; 80]);
        assert_eq!(f.syncs, 1);
        let written = f.data.get_ref().clone();
        // Fresh data in every chunk: no two chunks alike.
        let uniq: std::collections::HashSet<&[u8]> = written.chunks(8192).collect();
        assert_eq!(uniq.len(), 80);

        let mut f2 = Counting {
            data: Cursor::new(written.clone()),
            ..Default::default()
        };
        let d = rewrite(&mut f2, 80 * 8192, &mut buf, &mut hist()).unwrap();
        assert_eq!(d.ops, 80);
        assert_eq!((f2.reads.len(), f2.writes.len()), (80, 80));
        assert_eq!(
            f2.seeks, 81,
            "one seek to the start, then one back per chunk"
        );
        assert_ne!(f2.data.get_ref(), &written, "every chunk dirtied");

        let mut f3 = Counting {
            data: Cursor::new(written.clone()),
            ..Default::default()
        };
        getc(&mut f3, 5000, &mut hist()).unwrap();
        assert!(f3.reads.iter().all(|&n| n == 1) && f3.reads.len() == 5000);
        let mut f4 = Counting {
            data: Cursor::new(written),
            ..Default::default()
        };
        let d = get_block(&mut f4, 80 * 8192, &mut buf, &mut hist()).unwrap();
        assert_eq!((d.ops, d.bytes), (80, 80 * 8192));
        assert!(f4.writes.is_empty());
    }

    #[test]
    fn about_one_seek_in_ten_writes_back() {
        let mut f = Counting {
            data: Cursor::new(vec![7u8; 64 * 4096]),
            ..Default::default()
        };
        let mut buf = vec![0u8; 4096];
        let mut g = DataGen::new(9);
        let mut left = 8192i64;
        // 8192 tickets, then the end (as the feeder writes one end per seeker).
        let mut tickets = || {
            left -= 1;
            Ok(if left < 0 {
                END
            } else {
                g.next_u64() as u32 % END
            })
        };
        let d = seeks(
            &mut f,
            &mut tickets,
            64,
            &mut buf,
            &mut DataGen::new(3),
            &mut hist(),
        )
        .unwrap();
        assert_eq!(d.ops, 8192);
        assert_eq!(f.reads.len(), 8192, "one read per seek");
        let share = d.rewrites as f64 / d.ops as f64;
        assert!((0.08..0.12).contains(&share), "rewrite share {share}");
        assert_eq!(f.writes.len() as u64, d.rewrites);
        assert_eq!(f.seeks, 8192 + d.rewrites);
    }
}
