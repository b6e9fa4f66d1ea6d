//! One rank's transfers of an IOR phase, as IOR's WriteOrRead does them: the offsets of each
//! segment's block (in turn, or every transfer once in shuffled order with -z), a seek and a write
//! (or read) per transfer, an fsync after each write with -Y, the stonewall (-D: issuing stops
//! past the deadline; a count to reach, from a write before or a status file), and IOR's wear-out
//! (every rank goes on to as many transfers as the rank that did most).

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::time::{Duration, Instant};

use crate::io::calls::Lat;
use crate::io::DataGen;
use crate::metrics::progress::Progress;
use crate::plan::hpc::ior::{Access, IorPlan, Order};
use crate::stop::StopReason;
use crate::sys::AlignedBuf;

/// Each 4 KiB of the data carries its offset in the file, so that no two blocks are alike and a
/// read can be checked (-R).
const STAMP_EVERY: usize = 4096;

/// Where a rank's transfers go in its file.
pub struct Offsets {
    /// The transfers of one segment, as offsets from the segment's start.
    within: Vec<u64>,
    /// Bytes from one segment to the next.
    stride: u64,
}

impl Offsets {
    /// The offsets of `rank`'s data (the rank whose data this rank writes or reads) of `ranks`.
    pub fn new(plan: &IorPlan, rank: usize, ranks: usize, seed: u64) -> Offsets {
        let (b, t, n) = (plan.block, plan.transfer, ranks as u64);
        let per_block = plan.per_block();
        let (within, stride) = match (plan.access, plan.order) {
            (Access::FilePerProcess, Order::Sequential) => {
                ((0..per_block).map(|j| j * t).collect(), b)
            }
            (Access::SharedFile, Order::Sequential) => (
                (0..per_block).map(|j| rank as u64 * b + j * t).collect(),
                n * b,
            ),
            (Access::FilePerProcess, Order::Shuffled) => {
                let mut v: Vec<u64> = (0..per_block).map(|j| j * t).collect();
                shuffle(&mut v, seed ^ rank as u64);
                (v, b)
            }
            // Every transfer of the segment dealt to a rank at random (the same draw on every
            // rank), then this rank's in shuffled order.
            (Access::SharedFile, Order::Shuffled) => {
                let mut deal = DataGen::new(seed);
                let mut v: Vec<u64> = (0..per_block * n)
                    .filter(|_| deal.next_u64() % n == rank as u64)
                    .map(|slot| slot * t)
                    .collect();
                shuffle(&mut v, seed ^ (rank as u64 + 1).rotate_left(32));
                (v, n * b)
            }
        };
        Offsets { within, stride }
    }

    /// The offset of transfer `k` of the rank's sequence (segments in turn, wrapping).
    pub fn at(&self, k: u64, segments: u64) -> u64 {
        let per = self.within.len().max(1) as u64;
        let seg = (k / per) % segments.max(1);
        seg * self.stride + self.within[(k % per) as usize]
    }

    pub fn per_segment(&self) -> u64 {
        self.within.len() as u64
    }
}

fn shuffle(v: &mut [u64], seed: u64) {
    let mut g = DataGen::new(seed);
    for i in (1..v.len()).rev() {
        let j = (g.next_u64() % (i as u64 + 1)) as usize;
        v.swap(i, j);
    }
}

/// The data of the rank that writes it: random bytes from the seed and that rank, each 4 KiB
/// stamped with its offset in the file when written.
pub struct Data {
    buf: AlignedBuf,
    /// What a read is checked against (-R).
    expect: Option<AlignedBuf>,
}

impl Data {
    pub fn new(len: usize, seed: u64, writer: usize, check: bool) -> Data {
        // Page-aligned, on small pages as IOR's malloc'd buffer (huge pages would make a copy
        // through the page cache cheaper than IOR's).
        let mut buf = AlignedBuf::new(len);
        DataGen::new(seed ^ (writer as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)).fill(&mut buf);
        let expect = check.then(|| {
            let mut e = AlignedBuf::new(len);
            e.copy_from_slice(&buf);
            e
        });
        Data { buf, expect }
    }

    fn stamp(b: &mut [u8], offset: u64) {
        for at in (0..b.len()).step_by(STAMP_EVERY) {
            if let Some(s) = b.get_mut(at..at + 8) {
                s.copy_from_slice(&(offset + at as u64).to_le_bytes());
            }
        }
    }

    /// Whether what was read at `offset` is what its writer wrote there.
    fn checks(&mut self, offset: u64) -> bool {
        match self.expect.as_mut() {
            None => true,
            Some(e) => {
                Self::stamp(e, offset);
                e[..] == self.buf[..]
            }
        }
    }
}

/// How a rank's transfers end.
pub struct Limits {
    pub segments: u64,
    /// -D: issuing stops once this much time has passed since the first transfer.
    pub deadline: Option<Duration>,
    /// A count to stop at (a write's before it, a status file, -O stoneWallingWearOutIterations).
    pub count: Option<u64>,
    pub fsync_each: bool,
    pub writes: bool,
}

/// What one rank's transfers did.
#[derive(Debug, Default)]
pub struct Moved {
    pub transfers: u64,
    pub bytes: u64,
    /// Transfers read that differed from what was written (-R).
    pub wrong: u64,
    /// With a deadline: the bytes when the rank's transfers stopped before any wear-out, and
    /// when.
    pub at_wall: Option<(u64, Instant)>,
    pub stopped: Option<StopReason>,
}

/// Transfers from `from` (the count so far) until `to` (or every transfer of every segment),
/// the deadline or a stop.
#[allow(clippy::too_many_arguments)]
pub fn run(
    f: &mut File,
    data: &mut Data,
    at: &Offsets,
    lim: &Limits,
    moved: &mut Moved,
    to: Option<u64>,
    started: Instant,
    lat: &mut Lat,
    progress: &Progress,
) -> io::Result<()> {
    let all = at.per_segment() * lim.segments;
    let end = to.or(lim.count).unwrap_or(all);
    let len = data.buf.len() as u64;
    let mut t0 = Instant::now();
    while moved.transfers < end {
        if let Some(why) = crate::io::calls::stopped(moved.transfers) {
            moved.stopped = Some(why);
            return Ok(());
        }
        let offset = at.at(moved.transfers, lim.segments);
        f.seek(SeekFrom::Start(offset))?;
        if lim.writes {
            Data::stamp(&mut data.buf, offset);
            f.write_all(&data.buf)?;
            if lim.fsync_each {
                f.sync_all()?;
            }
        } else {
            f.read_exact(&mut data.buf)?;
            if !data.checks(offset) {
                moved.wrong += 1;
            }
        }
        let now = lat.since(t0);
        t0 = now;
        moved.transfers += 1;
        moved.bytes += len;
        progress.add(1, len);
        if to.is_none()
            && lim
                .deadline
                .is_some_and(|d| now.duration_since(started) > d)
        {
            return Ok(());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(args: &str) -> IorPlan {
        IorPlan::parse(args).unwrap()
    }

    #[test]
    fn offsets_follow_iors_layout() {
        // A shared file, 2 ranks, 2 segments of a 4-transfer block: rank 1's block of segment 1
        // is the fourth block of the file.
        let p = plan("-b 4k -t 1k -s 2");
        let o = Offsets::new(&p, 1, 2, 7);
        let got: Vec<u64> = (0..8).map(|k| o.at(k, 2)).collect();
        assert_eq!(got, [4096, 5120, 6144, 7168, 12288, 13312, 14336, 15360]);
        // A file each: rank 1's own file from 0.
        let p = plan("-F -b 4k -t 1k -s 2");
        let o = Offsets::new(&p, 1, 2, 7);
        assert_eq!(o.at(4, 2), 4096);
        // Shuffled: every transfer of the block once per segment.
        let p = plan("-F -z -b 8k -t 1k");
        let o = Offsets::new(&p, 0, 1, 7);
        let mut v: Vec<u64> = (0..8).map(|k| o.at(k, 1)).collect();
        assert_ne!(v, (0..8).map(|k| k * 1024).collect::<Vec<_>>());
        v.sort();
        assert_eq!(v, (0..8).map(|k| k * 1024).collect::<Vec<_>>());
        // Shuffled in a shared file: the ranks' transfers partition the segment.
        let p = plan("-z -b 8k -t 1k");
        let mut all: Vec<u64> = (0..3)
            .flat_map(|r| {
                let o = Offsets::new(&p, r, 3, 9);
                (0..o.per_segment()).map(move |k| o.at(k, 1))
            })
            .collect();
        all.sort();
        assert_eq!(all, (0..24).map(|k| k * 1024).collect::<Vec<_>>());
    }

    #[test]
    fn a_read_is_checked_against_its_writers_stamped_data() {
        let mut w = Data::new(8192, 5, 2, false);
        Data::stamp(&mut w.buf, 8192);
        let mut r = Data::new(8192, 5, 2, true);
        r.buf.copy_from_slice(&w.buf);
        assert!(r.checks(8192));
        assert!(!r.checks(0), "another offset's stamp");
        let mut other = Data::new(8192, 5, 3, true);
        other.buf.copy_from_slice(&w.buf);
        assert!(!other.checks(8192), "another writer's data");
    }
}
