//! iozone's 13 tests as data (name, iozone's report title, group) and their access patterns:
//! which record each call touches, and the timed loops over any `Fd` (a counting file in the
//! tests checks the calls and their offsets).

use std::io::{self, BufReader, BufWriter, Read, SeekFrom, Write};
use std::time::Instant;

use crate::io::calls::{calls_from, Done, Fd, Lat};
use crate::io::{DataGen, Permutation};
use crate::sys::AlignedBuf;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Test {
    Write,
    Rewrite,
    Read,
    Reread,
    RandomRead,
    RandomWrite,
    BackwardRead,
    RecordRewrite,
    StrideRead,
    Fwrite,
    Frewrite,
    Fread,
    Freread,
}

/// How a test opens the file and walks it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Recreate the file and write it sequentially.
    Create,
    /// Write over the existing file in this order.
    Write(Order),
    Read(Order),
}

/// The order of the records a test touches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// From the start, no seek (the file position moves on by itself).
    Sequential,
    /// One fixed shuffle: each record once, a seek before each call.
    Random,
    /// From the last record to the first, a seek before each call.
    Backward,
    /// The record at offset 0, once per record of the file, a seek before each call.
    Same,
    /// One record, then `stride` records further, wrapping to the next start until all are read.
    Stride,
}

pub struct TestDef {
    pub test: Test,
    /// The record's test name.
    pub name: &'static str,
    /// iozone's -R block title.
    pub report: &'static str,
    /// iozone's throughput-mode wording ("Children see throughput for 4 initial writers").
    pub actors: &'static str,
    pub access: Access,
    /// Through a buffered stream with a one-record buffer (fwrite/fread), never O_DIRECT.
    pub stream: bool,
    pub does: &'static str,
}

use Access::*;
use Order::*;

/// The 13 tests in iozone's order.
pub static TESTS: [TestDef; 13] = [
    TestDef {
        test: Test::Write,
        name: "write",
        report: "Writer report",
        actors: "initial writers",
        access: Create,
        stream: false,
        does: "recreate the file and write it record by record",
    },
    TestDef {
        test: Test::Rewrite,
        name: "rewrite",
        report: "Re-writer report",
        actors: "rewriters",
        access: Write(Sequential),
        stream: false,
        does: "write the existing file again, record by record",
    },
    TestDef {
        test: Test::Read,
        name: "read",
        report: "Reader report",
        actors: "readers",
        access: Read(Sequential),
        stream: false,
        does: "read the file sequentially (after one untimed priming pass)",
    },
    TestDef {
        test: Test::Reread,
        name: "reread",
        report: "Re-Reader report",
        actors: "re-readers",
        access: Read(Sequential),
        stream: false,
        does: "read the file sequentially again",
    },
    TestDef {
        test: Test::RandomRead,
        name: "random_read",
        report: "Random read report",
        actors: "random readers",
        access: Read(Random),
        stream: false,
        does: "read every record once in a fixed shuffle, a seek before each",
    },
    TestDef {
        test: Test::RandomWrite,
        name: "random_write",
        report: "Random write report",
        actors: "random writers",
        access: Write(Random),
        stream: false,
        does: "write every record once in the same shuffle, a seek before each",
    },
    TestDef {
        test: Test::BackwardRead,
        name: "backward_read",
        report: "Backward read report",
        actors: "reverse readers",
        access: Read(Backward),
        stream: false,
        does: "read from the last record back to the first",
    },
    TestDef {
        test: Test::RecordRewrite,
        name: "record_rewrite",
        report: "Record rewrite report",
        actors: "record rewriters",
        access: Write(Same),
        stream: false,
        does: "write the record at offset 0 once per record of the file",
    },
    TestDef {
        test: Test::StrideRead,
        name: "stride_read",
        report: "Stride read report",
        actors: "stride readers",
        access: Read(Stride),
        stream: false,
        does: "read one record, skip ahead by the stride, wrap until all are read",
    },
    TestDef {
        test: Test::Fwrite,
        name: "fwrite",
        report: "Fwrite report",
        actors: "fwriters",
        access: Create,
        stream: true,
        does: "recreate the file and write it through a buffered stream",
    },
    TestDef {
        test: Test::Frewrite,
        name: "frewrite",
        report: "Re-Fwrite report",
        actors: "re-fwriters",
        access: Write(Sequential),
        stream: true,
        does: "write the file again through a buffered stream",
    },
    TestDef {
        test: Test::Fread,
        name: "fread",
        report: "Fread report",
        actors: "freaders",
        access: Read(Sequential),
        stream: true,
        does: "read the file through a buffered stream",
    },
    TestDef {
        test: Test::Freread,
        name: "freread",
        report: "Re-Fread report",
        actors: "re-freaders",
        access: Read(Sequential),
        stream: true,
        does: "read the file through a buffered stream again",
    },
];

impl Test {
    pub fn def(self) -> &'static TestDef {
        &TESTS[self as usize]
    }

    pub fn writes(self) -> bool {
        !matches!(self.def().access, Read(_))
    }
}

/// The groups iozone's -i picks (0 to 7), in its order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Group {
    Write,
    Read,
    Random,
    Backward,
    RecordRewrite,
    Stride,
    Fwrite,
    Fread,
}

pub const GROUPS: [Group; 8] = [
    Group::Write,
    Group::Read,
    Group::Random,
    Group::Backward,
    Group::RecordRewrite,
    Group::Stride,
    Group::Fwrite,
    Group::Fread,
];

impl Group {
    /// The names tests= takes for it, the first its own.
    pub fn names(self) -> &'static [&'static str] {
        match self {
            Group::Write => &["write", "rewrite"],
            Group::Read => &["read", "reread"],
            Group::Random => &["random", "random_read", "random_write"],
            Group::Backward => &["backward", "backward_read"],
            Group::RecordRewrite => &["record_rewrite"],
            Group::Stride => &["stride", "stride_read"],
            Group::Fwrite => &["fwrite", "frewrite"],
            Group::Fread => &["fread", "freread"],
        }
    }

    pub fn tests(self) -> &'static [Test] {
        match self {
            Group::Write => &[Test::Write, Test::Rewrite],
            Group::Read => &[Test::Read, Test::Reread],
            Group::Random => &[Test::RandomRead, Test::RandomWrite],
            Group::Backward => &[Test::BackwardRead],
            Group::RecordRewrite => &[Test::RecordRewrite],
            Group::Stride => &[Test::StrideRead],
            Group::Fwrite => &[Test::Fwrite, Test::Frewrite],
            Group::Fread => &[Test::Fread, Test::Freread],
        }
    }
}

/// The records a positioned test touches, in order (`n` records in the file).
pub fn records(order: Order, n: u64, stride: u64, seed: u64) -> Box<dyn Iterator<Item = u64>> {
    match order {
        Sequential => Box::new(0..n),
        Backward => Box::new((0..n).rev()),
        Same => Box::new((0..n).map(|_| 0)),
        Stride => {
            let s = stride.clamp(1, n.max(1));
            Box::new((0..s).flat_map(move |start| (start..n).step_by(s as usize)))
        }
        Random => {
            let mut rng = DataGen::new(seed);
            let mut p = Permutation::new(n, &mut rng);
            Box::new((0..n).map(move |_| p.next(&mut rng)))
        }
    }
}

/// Incompressible write data: a random pool at least twice the largest record, each write taking
/// its record from the next 4 KiB-aligned place in a window of the pool's start (no buffer is
/// regenerated per write, as iozone writes one buffer; unlike it, the bytes are random).
///
/// The window is twice the record (a record and 4 KiB for records under 4 KiB): the record after
/// a record comes from another place (they differ), and for small records the data sits in the
/// CPU's first-level cache, as iozone's one buffer does. Like iozone's, a file's records repeat
/// (with 4 KiB records it holds two distinct blocks): the bytes are random, so nothing compresses
/// them, but a deduplicating filesystem would store each distinct one once. Over the whole pool (32 MiB for the matrix's 16 MiB records) every
/// 4 KiB write read its data from memory, which cost rewrite and random write about a fifth of
/// iozone's rate at every file size; a window of at least 256 KiB (the data from the L2 cache,
/// not L1) still cost rewrite and random write 3-6% at files of 64-512 KiB against this one
/// (docs/performance.md).
///
/// The pool sits on transparent huge pages (`AlignedBuf::huge`), as iozone's one buffer does (it
/// is 2 MiB-aligned, so THP backs it): on 4 KiB pages each write of a large record took a TLB
/// miss per page of its data, and on ext4 rewrite and random write of 2-16 MiB records ran at
/// 0.63-0.74 of iozone's rate (now 0.88-1.03).
pub struct Pool {
    buf: AlignedBuf,
}

impl Pool {
    /// A pool for records of up to `max_record` bytes.
    pub fn new(max_record: u64, seed: u64) -> Pool {
        let len = (2 * max_record).max(1 << 20).next_multiple_of(4096) as usize;
        let mut buf = AlignedBuf::huge(len);
        DataGen::new(seed).fill(&mut buf);
        Pool { buf }
    }

    pub fn len(&self) -> usize {
        self.buf.len()
    }

    /// How much of the pool's start records of `len` bytes come from (given a pool for them).
    pub fn window(len: usize) -> usize {
        len + len.max(4096)
    }

    /// How many places records of `len` bytes come from.
    #[inline]
    fn places(&self, len: usize) -> u64 {
        let window = Pool::window(len).min(self.buf.len());
        ((window - len) / 4096 + 1) as u64
    }

    /// The data of write number `i`, `len` bytes (at most the pool's record size).
    #[inline]
    pub fn record(&self, i: u64, len: usize) -> &[u8] {
        let at = ((i.wrapping_mul(7919)) % self.places(len)) as usize * 4096;
        &self.buf[at..at + len]
    }
}

/// How a test walks the file: `n` records, and for a positioned test (random, backward, stride,
/// record rewrite) the record of each call, made before the clock starts (the shuffle's keys,
/// the iterator's allocation): between the clock reads only the calls run, and the next offset
/// of each, as iozone draws its own. A sequential test has no offsets to draw.
pub struct Walk {
    pub n: u64,
    at: Option<Box<dyn Iterator<Item = u64>>>,
}

impl Walk {
    /// The walk of test `t` over `n` records, with iozone's stride and the shuffle's seed.
    pub fn new(t: &TestDef, n: u64, stride: u64, seed: u64) -> Walk {
        let at = match t.access {
            Create | Write(Sequential) | Read(Sequential) => None,
            Write(o) | Read(o) => Some(records(o, n, stride, seed)),
        };
        Walk { n, at }
    }

    /// The record of the next positioned call.
    #[inline]
    fn next_at(&mut self) -> u64 {
        self.at.as_mut().and_then(Iterator::next).unwrap_or(0)
    }
}

/// iozone's untimed calls between opening the file and starting its clock, in its -a matrix:
/// an fsync before each sequential test (it also writes back what the test before left dirty),
/// and before a sequential read the first record read and the file position put back to 0.
/// The random tests start their clock right after the open; stream tests have none of this.
pub fn before<F: Fd>(f: &mut F, t: &TestDef, buf: &mut [u8]) -> io::Result<()> {
    if t.stream {
        return Ok(());
    }
    match t.access {
        Create | Write(Sequential) => f.sync(),
        Read(Sequential) => {
            f.sync()?;
            f.read_exact(buf)?;
            f.seek(SeekFrom::Start(0)).map(|_| ())
        }
        Write(_) | Read(_) => Ok(()),
    }
}

/// Runs one non-stream test over `w.n` records of `buf.len()` bytes, timed from `start` (the
/// test's clock read): `Done::ended` is the end of its last call.
pub fn run<F: Fd>(
    f: &mut F,
    t: &TestDef,
    mut w: Walk,
    buf: &mut [u8],
    pool: &Pool,
    lat: &mut Lat,
    start: Instant,
) -> io::Result<Done> {
    let (rec, n) = (buf.len() as u64, w.n);
    match t.access {
        Create | Write(Sequential) => calls_from(start, n, lat, |i| {
            f.write_all(pool.record(i, rec as usize))?;
            Ok(rec)
        }),
        Read(Sequential) => calls_from(start, n, lat, |_| {
            f.read_exact(buf)?;
            Ok(rec)
        }),
        Write(_) => calls_from(start, n, lat, |i| {
            f.seek(SeekFrom::Start(w.next_at() * rec))?;
            f.write_all(pool.record(i, rec as usize))?;
            Ok(rec)
        }),
        Read(_) => calls_from(start, n, lat, |_| {
            f.seek(SeekFrom::Start(w.next_at() * rec))?;
            f.read_exact(buf)?;
            Ok(rec)
        }),
    }
}

/// Runs one stream test: the same records through a buffered stream of one record. The stream
/// is made before the clock, whose read is `Done::started`; a write test's span ends after the
/// stream's last flush, before the stream is dropped.
pub fn run_stream<F: Read + Write>(
    f: &mut F,
    t: &TestDef,
    n: u64,
    buf: &mut [u8],
    pool: &Pool,
    lat: &mut Lat,
) -> io::Result<Done> {
    let rec = buf.len() as u64;
    if matches!(t.access, Read(_)) {
        let mut s = BufReader::with_capacity(buf.len(), f);
        let start = Instant::now();
        let mut d = calls_from(start, n, lat, |_| {
            s.read_exact(buf)?;
            Ok(rec)
        })?;
        d.started = Some(start);
        Ok(d)
    } else {
        let mut s = BufWriter::with_capacity(buf.len(), f);
        let start = Instant::now();
        let mut d = calls_from(start, n, lat, |i| {
            s.write_all(pool.record(i, rec as usize))?;
            Ok(rec)
        })?;
        s.flush()?;
        d.started = Some(start);
        d.ended = Some(Instant::now());
        Ok(d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::calls::testing::Counting;
    use std::io::Cursor;

    fn visits(order: Order, n: u64) -> Vec<u64> {
        records(order, n, 17, 5).collect()
    }

    #[test]
    fn each_pattern_visits_what_iozone_visits() {
        assert_eq!(visits(Backward, 4), vec![3, 2, 1, 0]);
        assert_eq!(visits(Same, 3), vec![0, 0, 0]);
        let s = visits(Stride, 40);
        assert_eq!(&s[..3], &[0, 17, 34], "one record, then 17 further");
        assert_eq!(&s[3..5], &[1, 18], "wraps to the next start");
        for order in [Random, Stride, Backward, Sequential] {
            let mut v = visits(order, 1000);
            v.sort_unstable();
            assert_eq!(
                v,
                (0..1000).collect::<Vec<_>>(),
                "{order:?} visits each once"
            );
        }
        assert_ne!(visits(Random, 100), visits(Sequential, 100));
        assert_eq!(
            visits(Random, 100),
            visits(Random, 100),
            "one fixed shuffle"
        );
        assert_eq!(
            visits(Stride, 4),
            vec![0, 1, 2, 3],
            "a stride past the end wraps"
        );
    }

    #[test]
    fn the_loops_make_the_calls_at_the_offsets() {
        let (rec, n) = (4096usize, 8u64);
        // The pool serves the matrix's largest record; a cell writes its own.
        let pool = Pool::new(16 * rec as u64, 1);
        let mut buf = vec![0u8; rec];
        let file = || Counting {
            data: Cursor::new(vec![1u8; rec * n as usize]),
            ..Default::default()
        };
        for t in &TESTS {
            let mut f = file();
            let mut lat = Lat::default();
            let d = if t.stream {
                run_stream(&mut f, t, n, &mut buf, &pool, &mut lat).unwrap()
            } else {
                let w = Walk::new(t, n, 17, 9);
                run(&mut f, t, w, &mut buf, &pool, &mut lat, Instant::now()).unwrap()
            };
            assert_eq!((d.ops, d.bytes), (n, n * rec as u64), "{}", t.name);
            let calls = if t.test.writes() { &f.writes } else { &f.reads };
            assert_eq!(
                calls,
                &vec![rec; n as usize],
                "{}: one call per record",
                t.name
            );
            let offsets: Vec<u64> = f.at.iter().map(|o| o / rec as u64).collect();
            let want: Vec<u64> = match t.access {
                Create | Write(Sequential) | Read(Sequential) => (0..n).collect(),
                Write(o) | Read(o) => records(o, n, 17, 9).collect(),
            };
            assert_eq!(offsets, want, "{}", t.name);
            let seeks = match t.access {
                Create | Write(Sequential) | Read(Sequential) => 0,
                _ => n,
            };
            assert_eq!(
                f.seeks, seeks,
                "{}: a seek before each positioned call",
                t.name
            );
        }
    }

    #[test]
    fn before_the_clock_the_calls_iozone_makes_untimed() {
        let rec = 4096usize;
        let mut buf = vec![0u8; rec];
        for t in &TESTS {
            let mut f = Counting {
                data: Cursor::new(vec![1u8; rec * 4]),
                ..Default::default()
            };
            before(&mut f, t, &mut buf).unwrap();
            let sequential = matches!(t.access, Create | Write(Sequential) | Read(Sequential));
            let want_syncs = u64::from(sequential && !t.stream);
            assert_eq!(
                f.syncs, want_syncs,
                "{}: fsync before a sequential test",
                t.name
            );
            let reads = t.access == Read(Sequential) && !t.stream;
            let want: Vec<usize> = if reads { vec![rec] } else { vec![] };
            assert_eq!(f.reads, want, "{}: the first record read untimed", t.name);
            assert_eq!(f.seeks, u64::from(reads), "{}", t.name);
            assert!(f.writes.is_empty(), "{}: nothing written", t.name);
            assert_eq!(
                f.data.position(),
                0,
                "{}: the clock starts at offset 0",
                t.name
            );
        }
    }

    #[test]
    fn write_data_is_random_and_varies_between_records() {
        let pool = Pool::new(65536, 3);
        assert!(pool.len() >= 2 * 65536);
        assert_ne!(pool.record(0, 65536), pool.record(1, 65536));
        assert_eq!(
            pool.record(3, 4096).len(),
            4096,
            "a cell's record, not the largest"
        );
        for len in [512usize, 2048, 4096, 65536] {
            let ends: Vec<usize> = (0..1000)
                .map(|i| pool.record(i, len).as_ptr() as usize + len - pool.buf.as_ptr() as usize)
                .collect();
            let most = ends.iter().max().copied().unwrap_or(0);
            assert!(
                most <= len + len.max(4096),
                "{len}: from a window of twice the record (or a record and 4 KiB)"
            );
            for i in 0..999 {
                assert_ne!(
                    pool.record(i, len),
                    pool.record(i + 1, len),
                    "{len}: record {i} and the next differ"
                );
            }
            let mut starts: Vec<usize> = ends.iter().map(|e| e - len).collect();
            starts.sort_unstable();
            starts.dedup();
            assert_eq!(
                starts.len(),
                len.max(4096) / 4096 + 1,
                "{len}: every place of the window"
            );
        }
        let zeros = pool.record(5, 65536).iter().filter(|b| **b == 0).count();
        assert!(zeros < 65536 / 64, "random bytes, not a pattern");
    }
}
