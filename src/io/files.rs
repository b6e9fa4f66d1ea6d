//! A worker's several files (fio's nrfiles, filename=a:b): which file the next I/O goes to
//! (fio's file_service_type), each file with its own offsets (and strided zones), and the one
//! offset space the loop keeps its I/Os in (file f's byte o is `f x stride + o`), so that
//! verification headers, written lists and failures stay unique across files. One file is the
//! plain case: file 0, and offsets unchanged.

use super::offsets::{Extent, Geometry, Offsets, Order};
use super::DataGen;
use crate::plan::dir::Dir;
use crate::plan::job::Strided;
use crate::plan::job::{FileService, FileServiceKind};

/// Where a worker's I/Os go: a region of each of its files, the order of offsets in it, and how
/// it moves between its files.
#[derive(Debug, Clone, PartialEq)]
pub struct Walk {
    pub region: Region,
    pub order: Order,
    pub files: Files,
    /// fio's strided zones over each file, and the order of offsets within a zone.
    pub zones: Option<(Strided, Order)>,
    pub pass_ends: PassEnds,
}

/// What the end of a pass over a file does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PassEnds {
    #[default]
    Nothing,
    /// The file's cached pages over the region are dropped (fio's invalidate of a buffered job
    /// at each pass, its loop_cache_invalidate), when the worker's files are buffered.
    DropPages,
}

/// Bytes `len` from `base` in each file; offsets are multiples of `align`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Region {
    pub base: u64,
    pub len: u64,
    pub align: u64,
}

impl Region {
    /// Where file f's region sits in the loop's offsets: f x this (the end of a file's region),
    /// so that offsets stay unique across files.
    pub fn stride(&self) -> u64 {
        (self.base + self.len).max(1)
    }
}

/// A worker's files: how many, how it moves between them, each one's share of the bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Files {
    pub count: u32,
    pub service: FileService,
    /// Each file is done after this many bytes (fio's io_size over its files).
    pub share: Option<u64>,
}

impl Files {
    pub const ONE: Files = Files {
        count: 1,
        service: FileService {
            kind: FileServiceKind::Roundrobin,
            batch: 1,
        },
        share: None,
    };
}

/// One file's walk.
struct FileWalk {
    offsets: Offsets,
    /// Its offsets ended (an in-turn job that stops), or it has had its share.
    done: bool,
    issued: u64,
    /// With strided zones: where its zone starts, and the bytes done in it.
    zone_start: u64,
    zone_done: u64,
}

/// fio's strided zones: the offsets of a zone of `range` bytes from its start, moved on by
/// `range + skip` once `size` bytes were done in it.
struct Zones {
    z: Strided,
    order: Order,
    region: u64,
}

pub struct FileSet {
    files: Vec<FileWalk>,
    service: FileService,
    /// The file in use and the I/Os left before the next one.
    cur: usize,
    left: u32,
    share: Option<u64>,
    stride: u64,
    zones: Option<Zones>,
    /// What a zone's offsets are made with: the alignment and the largest block.
    align: u64,
    max_bs: u64,
}

/// Where the next I/O goes: its file, and where in that file's region.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placed {
    pub file: usize,
    pub at: Extent,
}

impl FileSet {
    pub fn new(w: &Walk, max_bs: u64, rng: &mut DataGen) -> FileSet {
        let n = w.files.count.max(1) as usize;
        let r = w.region;
        let (order, len) = match &w.zones {
            Some((z, order)) => (order, z.range),
            None => (&w.order, r.len),
        };
        let files = (0..n)
            .map(|_| FileWalk {
                offsets: Offsets::new(
                    order,
                    Geometry {
                        region: len,
                        align: r.align,
                        max_bs,
                    },
                    rng,
                ),
                done: false,
                issued: 0,
                zone_start: 0,
                zone_done: 0,
            })
            .collect();
        FileSet {
            files,
            service: FileService {
                batch: w.files.service.batch.max(1),
                ..w.files.service
            },
            cur: 0,
            left: w.files.service.batch.max(1),
            share: w.files.share.filter(|_| n > 1),
            stride: r.stride(),
            zones: w.zones.clone().map(|(z, order)| Zones {
                z,
                order,
                region: r.len,
            }),
            align: r.align,
            max_bs,
        }
    }

    /// The file, the offset (in its region) and the length of the next I/O of `len` bytes (the
    /// random map may cut it shorter); None when every file is done.
    #[inline]
    pub fn next(&mut self, dir: Dir, len: u64, rng: &mut DataGen) -> Option<Placed> {
        if self.files.len() == 1 && self.zones.is_none() {
            return self.files[0]
                .offsets
                .next(dir, len, rng)
                .map(|at| Placed { file: 0, at });
        }
        loop {
            let f = self.pick(rng)?;
            match self.files[f].offsets.next(dir, len, rng) {
                Some(at) => {
                    let file = &mut self.files[f];
                    file.issued += at.len;
                    if self.share.is_some_and(|s| file.issued >= s) {
                        file.done = true;
                    }
                    let offset = self.in_zone(f, at.offset, at.len, rng);
                    return Some(Placed {
                        file: f,
                        at: Extent { offset, ..at },
                    });
                }
                None => {
                    self.files[f].done = true;
                    self.left = 0;
                }
            }
        }
    }

    /// Whether a pass over `file` ended with its last offset (`Offsets::take_wrapped`).
    #[inline]
    pub fn take_wrapped(&mut self, file: usize) -> bool {
        self.files
            .get_mut(file)
            .is_some_and(|f| f.offsets.take_wrapped())
    }

    /// The file of the next I/O (fio's file_service_type), skipping the done ones.
    fn pick(&mut self, rng: &mut DataGen) -> Option<usize> {
        let n = self.files.len();
        if self.files.iter().all(|f| f.done) {
            return None;
        }
        let stay = match self.service.kind {
            FileServiceKind::Sequential => !self.files[self.cur].done,
            _ => self.left > 0 && !self.files[self.cur].done,
        };
        if !stay {
            self.cur = match self.service.kind {
                FileServiceKind::Random => {
                    let open: Vec<usize> = (0..n).filter(|&f| !self.files[f].done).collect();
                    open[(rng.next_u64() % open.len() as u64) as usize]
                }
                _ => (1..=n)
                    .map(|k| (self.cur + k) % n)
                    .find(|&f| !self.files[f].done)
                    .expect("a file is not done"),
            };
            self.left = self.service.batch;
        }
        self.left = self.left.saturating_sub(1);
        Some(self.cur)
    }

    /// With strided zones, the offset `o` in file `f`'s zone as an offset in its region; the zone
    /// moves on once `size` bytes were done in it (fio's setup_strided_zone_mode).
    fn in_zone(&mut self, f: usize, o: u64, len: u64, rng: &mut DataGen) -> u64 {
        let Some(zs) = self.zones.as_ref() else {
            return o;
        };
        let file = &mut self.files[f];
        let at = file.zone_start + o;
        file.zone_done += len;
        if file.zone_done >= zs.z.size {
            file.zone_done = 0;
            file.zone_start += zs.z.range + zs.z.skip;
            // From the start again past the end (a zone is never cut short by the region's end).
            if file.zone_start + zs.z.range > zs.region {
                file.zone_start = 0;
            }
            let geo = Geometry {
                region: zs.z.range,
                align: self.align,
                max_bs: self.max_bs,
            };
            file.offsets = Offsets::new(&zs.order, geo, rng);
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
        if self.files.len() == 1 {
            return (0, virt);
        }
        ((virt / self.stride) as usize, virt % self.stride)
    }
}

#[cfg(test)]
mod tests {
    use super::super::offsets::{AtEnd, Draw, Run, Step};
    use super::*;

    fn walk(order: Order, region: u64, files: Files) -> Walk {
        Walk {
            region: Region {
                base: 0,
                len: region,
                align: 4096,
            },
            order,
            files,
            zones: None,
            pass_ends: PassEnds::Nothing,
        }
    }

    fn in_turn(at_end: AtEnd) -> Order {
        Order::InTurn {
            step: Step::Forward { hole: 0 },
            at_end,
        }
    }

    fn set(kind: FileServiceKind, batch: u32, order: Order) -> (FileSet, DataGen) {
        let files = Files {
            count: 3,
            service: FileService { kind, batch },
            share: Some(4 * 4096),
        };
        let mut rng = DataGen::new(7);
        (
            FileSet::new(&walk(order, 4 * 4096, files), 4096, &mut rng),
            rng,
        )
    }

    fn random() -> Order {
        Order::Random {
            draw: Draw::Map,
            random_pct: 100,
            run: Run::ONE,
        }
    }

    fn drain(s: &mut FileSet, rng: &mut DataGen) -> Vec<(usize, u64)> {
        std::iter::from_fn(|| s.next(Dir::Write, 4096, rng).map(|p| (p.file, p.at.offset)))
            .take(100)
            .collect()
    }

    #[test]
    fn round_robin_takes_the_files_in_turn_each_from_its_start() {
        let (mut s, mut rng) = set(FileServiceKind::Roundrobin, 1, in_turn(AtEnd::Stop));
        let got = drain(&mut s, &mut rng);
        assert_eq!(got.len(), 12, "each file's 4 blocks once");
        assert_eq!(&got[..4], &[(0, 0), (1, 0), (2, 0), (0, 4096)]);
        let (mut s, mut rng) = set(FileServiceKind::Roundrobin, 2, in_turn(AtEnd::Stop));
        let got = drain(&mut s, &mut rng);
        assert_eq!(&got[..5], &[(0, 0), (0, 4096), (1, 0), (1, 4096), (2, 0)]);
    }

    #[test]
    fn sequential_service_finishes_a_file_before_the_next() {
        let (mut s, mut rng) = set(FileServiceKind::Sequential, 1, random());
        let got = drain(&mut s, &mut rng);
        let files: Vec<usize> = got.iter().map(|g| g.0).collect();
        assert_eq!(files, [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2]);
        let mut first: Vec<u64> = got[..4].iter().map(|g| g.1).collect();
        first.sort_unstable();
        assert_eq!(first, [0, 4096, 8192, 12288], "every block of file 0 once");
    }

    #[test]
    fn random_service_gives_every_file_its_share() {
        let (mut s, mut rng) = set(FileServiceKind::Random, 1, random());
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
        // A 64 KiB region, zones of 8 KiB every 8 + 16 KiB, 4 KiB reads in turn.
        let mut w = walk(in_turn(AtEnd::Stop), 64 << 10, Files::ONE);
        let z = Strided {
            size: 8192,
            range: 8192,
            skip: 16384,
        };
        w.zones = Some((z, in_turn(AtEnd::Wrap)));
        let mut rng = DataGen::new(3);
        let mut s = FileSet::new(&w, 4096, &mut rng);
        let got: Vec<u64> = (0..8)
            .map(|_| s.next(Dir::Read, 4096, &mut rng).unwrap().at.offset)
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
        let (s, _) = set(FileServiceKind::Roundrobin, 1, in_turn(AtEnd::Stop));
        let a = s.virt(1, 8192);
        assert_eq!(s.split(a), (1, 8192));
        assert_ne!(s.virt(0, 8192), a);
        assert_eq!(s.virt(0, 8192), 8192, "file 0 keeps its offsets");
    }
}
