//! A worker's several files (fio's nrfiles, filename=a:b): which file the next I/O goes to
//! (fio's file_service_type), each file with its own offsets, and the one offset space the loop
//! keeps its I/Os in (file f's byte o is `f x stride + o`), so that verification headers,
//! written lists and failures stay unique across files. One file is the plain case: file 0, and
//! offsets unchanged.

use super::offsets::Offsets;
use super::{DataGen, Pattern};
use crate::plan::job::FileServiceKind;
use crate::plan::jobmore::Strided;

/// fio's strided zones over each file: the offsets of a zone of `range` bytes from `start`,
/// moved on by `range + skip` once `size` bytes were done in it.
struct Zones {
    /// The pattern a zone's offsets are drawn over (its region: the zone's range).
    zone: Pattern,
    z: Strided,
    region: u64,
    start: Vec<u64>,
    done: Vec<u64>,
}

pub struct FileSet {
    offsets: Vec<Offsets>,
    kind: FileServiceKind,
    batch: u32,
    /// The file in use and the I/Os left before the next one.
    cur: usize,
    left: u32,
    /// A file is done when its offsets end (a sized sequential job) or it has had its share.
    done: Vec<bool>,
    issued: Vec<u64>,
    share: Option<u64>,
    stride: u64,
    zones: Option<Zones>,
}

impl FileSet {
    pub fn new(p: &Pattern, rng: &mut DataGen) -> FileSet {
        let n = p.files.max(1) as usize;
        let zones = p.zones.map(|z| Zones {
            zone: Pattern {
                region: z.range,
                ..p.clone()
            },
            z,
            region: p.region,
            start: vec![0; n],
            done: vec![0; n],
        });
        let first = zones.as_ref().map_or(p, |z| &z.zone);
        FileSet {
            offsets: (0..n).map(|_| Offsets::new(first, rng)).collect(),
            zones,
            kind: p.file_service.kind,
            batch: p.file_service.batch.max(1),
            cur: 0,
            left: p.file_service.batch.max(1),
            done: vec![false; n],
            issued: vec![0; n],
            // Each file its share of the job's bytes (fio's io_size over its files).
            share: p
                .limit_bytes
                .filter(|_| n > 1)
                .map(|l| l.div_ceil(n as u64)),
            stride: p.file_stride(),
        }
    }

    /// The file and the offset (in the region) of the next I/O of `len` bytes; None when every
    /// file is done.
    #[inline]
    pub fn next(&mut self, len: &mut u64, write: bool, rng: &mut DataGen) -> Option<(usize, u64)> {
        if self.offsets.len() == 1 && self.zones.is_none() {
            return self.offsets[0].next(len, write, rng).map(|o| (0, o));
        }
        loop {
            let f = self.pick(rng)?;
            match self.offsets[f].next(len, write, rng) {
                Some(o) => {
                    self.issued[f] += *len;
                    if self.share.is_some_and(|s| self.issued[f] >= s) {
                        self.done[f] = true;
                    }
                    return Some((f, self.in_zone(f, o, *len, rng)));
                }
                None => {
                    self.done[f] = true;
                    self.left = 0;
                }
            }
        }
    }

    /// Whether a pass over `file` ended with its last offset (`Offsets::take_wrapped`).
    #[inline]
    pub fn take_wrapped(&mut self, file: usize) -> bool {
        self.offsets
            .get_mut(file)
            .is_some_and(Offsets::take_wrapped)
    }

    /// The file of the next I/O (fio's file_service_type), skipping the done ones.
    fn pick(&mut self, rng: &mut DataGen) -> Option<usize> {
        let n = self.offsets.len();
        if self.done.iter().all(|&d| d) {
            return None;
        }
        let stay = match self.kind {
            FileServiceKind::Sequential => !self.done[self.cur],
            _ => self.left > 0 && !self.done[self.cur],
        };
        if !stay {
            self.cur = match self.kind {
                FileServiceKind::Random => {
                    let open: Vec<usize> = (0..n).filter(|&f| !self.done[f]).collect();
                    open[(rng.next_u64() % open.len() as u64) as usize]
                }
                _ => (1..=n)
                    .map(|k| (self.cur + k) % n)
                    .find(|&f| !self.done[f])
                    .expect("a file is not done"),
            };
            self.left = self.batch;
        }
        self.left = self.left.saturating_sub(1);
        Some(self.cur)
    }

    /// With strided zones, the offset `o` in file `f`'s zone as an offset in its region; the zone
    /// moves on once `size` bytes were done in it (fio's setup_strided_zone_mode).
    fn in_zone(&mut self, f: usize, o: u64, len: u64, rng: &mut DataGen) -> u64 {
        let Some(zs) = self.zones.as_mut() else {
            return o;
        };
        let at = zs.start[f] + o;
        zs.done[f] += len;
        if zs.done[f] >= zs.z.size {
            zs.done[f] = 0;
            zs.start[f] += zs.z.range + zs.z.skip;
            // From the start again past the end (a zone is never cut short by the region's end).
            if zs.start[f] + zs.z.range > zs.region {
                zs.start[f] = 0;
            }
            self.offsets[f] = Offsets::new(&zs.zone, rng);
        }
        at
    }

    /// The loop's offset of byte `at` of file `f`.
    #[inline]
    pub fn virt(&self, f: usize, at: u64) -> u64 {
        f as u64 * self.stride + at
    }

    /// (file, byte in it) of a loop offset.
    #[inline]
    pub fn split(&self, virt: u64) -> (usize, u64) {
        if self.offsets.len() == 1 {
            return (0, virt);
        }
        ((virt / self.stride) as usize, virt % self.stride)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::job::{BlockSize, FileService, Rw};

    fn set(kind: FileServiceKind, batch: u32, rw: Rw) -> (FileSet, DataGen) {
        let mut p = Pattern::basic(rw, BlockSize::Fixed(4096), 1, 4 * 4096);
        p.files = 3;
        p.limit_bytes = Some(3 * 4 * 4096);
        p.file_service = FileService { kind, batch };
        let mut rng = DataGen::new(7);
        (FileSet::new(&p, &mut rng), rng)
    }

    fn drain(s: &mut FileSet, rng: &mut DataGen) -> Vec<(usize, u64)> {
        std::iter::from_fn(|| s.next(&mut 4096, true, rng))
            .take(100)
            .collect()
    }

    #[test]
    fn round_robin_takes_the_files_in_turn_each_from_its_start() {
        let (mut s, mut rng) = set(FileServiceKind::Roundrobin, 1, Rw::Write);
        let got = drain(&mut s, &mut rng);
        assert_eq!(got.len(), 12, "each file's 4 blocks once");
        assert_eq!(&got[..4], &[(0, 0), (1, 0), (2, 0), (0, 4096)]);
        let (mut s, mut rng) = set(FileServiceKind::Roundrobin, 2, Rw::Write);
        let got = drain(&mut s, &mut rng);
        assert_eq!(&got[..5], &[(0, 0), (0, 4096), (1, 0), (1, 4096), (2, 0)]);
    }

    #[test]
    fn sequential_service_finishes_a_file_before_the_next() {
        let (mut s, mut rng) = set(FileServiceKind::Sequential, 1, Rw::RandWrite);
        let got = drain(&mut s, &mut rng);
        let files: Vec<usize> = got.iter().map(|g| g.0).collect();
        assert_eq!(files, [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2]);
        let mut first: Vec<u64> = got[..4].iter().map(|g| g.1).collect();
        first.sort_unstable();
        assert_eq!(first, [0, 4096, 8192, 12288], "every block of file 0 once");
    }

    #[test]
    fn random_service_gives_every_file_its_share() {
        let (mut s, mut rng) = set(FileServiceKind::Random, 1, Rw::RandRead);
        let got = drain(&mut s, &mut rng);
        assert_eq!(got.len(), 12);
        for f in 0..3 {
            assert_eq!(got.iter().filter(|g| g.0 == f).count(), 4, "file {f}");
        }
        let switches = got.windows(2).filter(|w| w[0].0 != w[1].0).count();
        assert!(
            switches >= 3,
            "files chosen at random, not in runs: {got:?}"
        );
    }

    #[test]
    fn strided_zones_do_zonesize_bytes_then_skip_as_fio() {
        // A 64 KiB region, zones of 8 KiB every 8 + 16 KiB, 4 KiB sequential reads.
        let mut p = Pattern::basic(Rw::Read, BlockSize::Fixed(4096), 1, 64 << 10);
        p.limit_bytes = Some(64 << 10);
        p.zones = Some(Strided {
            size: 8192,
            range: 8192,
            skip: 16384,
        });
        let mut rng = DataGen::new(3);
        let mut s = FileSet::new(&p, &mut rng);
        let got: Vec<u64> = (0..8)
            .map(|_| s.next(&mut 4096, false, &mut rng).unwrap().1)
            .collect();
        let k = 1024;
        assert_eq!(
            got,
            [0, 4 * k, 24 * k, 28 * k, 48 * k, 52 * k, 0, 4 * k],
            "each zone's 8 KiB, then 16 KiB skipped; from the start again at the end"
        );
    }

    #[test]
    fn offsets_of_different_files_never_meet() {
        let (s, _) = set(FileServiceKind::Roundrobin, 1, Rw::Write);
        let a = s.virt(1, 8192);
        assert_eq!(s.split(a), (1, 8192));
        assert_ne!(s.virt(0, 8192), a);
        assert_eq!(s.virt(0, 8192), 8192, "file 0 keeps its offsets");
    }
}
