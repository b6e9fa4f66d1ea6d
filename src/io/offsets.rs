//! Where a worker's next I/O goes: sequential (with fio's `rw=read:8k` holes, wrapping when the
//! job asks for more than one pass), uniform random (through the random map or independent),
//! non-uniform (`dist`), partly random (`percentage_random`), and random with runs
//! (`rw=randread:8`, sequential or identical).

use super::blockmap::BlockMap;
use super::dist::Picker;
use super::{DataGen, Pattern, Permutation};

pub struct Offsets {
    region: u64,
    align: u64,
    random: bool,
    randommap: bool,
    map: Permutation,
    /// With several block sizes, the blocks done this pass (fio's map cuts I/Os at them), and
    /// the length the last I/O was cut to.
    blocks: Option<BlockMap>,
    cut: Option<u64>,
    picker: Option<Picker>,
    /// fio's sequence distribution: the block indices, whether each round strides on, and the
    /// reads and writes issued so far (each direction walks it on its own, as fio's).
    seq: Option<(Vec<u64>, bool)>,
    seq_done: [u64; 2],
    random_pct: u32,
    /// I/Os per random offset (rw=randread:N), and whether they repeat it.
    run: u64,
    identical: bool,
    run_left: u64,
    /// Bytes skipped after each sequential I/O (rw=read:N), or stepped back (rw=read:-N).
    skip: u64,
    back: bool,
    /// Sequential I/O wraps at the end of the region (time based, or more than one pass).
    wrap: bool,
    /// Where the next sequential read and write go: each direction walks the region on its own,
    /// as fio's last_pos[ddir] (rw=rw reads 0, 4k, 8k while its writes go 0, 4k).
    next_seq: [u64; 2],
    /// Where the last read and the last write started.
    last: [u64; 2],
    /// A sequential direction went back to the start, or the random map began a new pass, since
    /// the last `take_wrapped` (fio invalidates the file's cache there).
    wrapped: bool,
}

/// Does fio's random map cut this job's I/Os? When reads and writes share one spread of sizes
/// (bsrange, bssplit) smaller than its largest: fio marks and cuts in units of each direction's
/// smallest size, so a direction of one size (bs=4k,64k) or trims of their own never are.
fn cuts(p: &Pattern) -> bool {
    use crate::plan::job::BlockSize;
    let spread = match &p.bs {
        BlockSize::Fixed(_) => false,
        BlockSize::Range(lo, hi) => lo < hi,
        BlockSize::Split(v) => v.iter().any(|x| x.0 != v[0].0),
    };
    spread && p.wbs.is_none() && !p.rw.trims()
}

/// Whether fio drops a file's cached pages when a pass over it ends (io_u.c's
/// loop_cache_invalidate): a sequential direction back at the start of a time-based job's only
/// file (or a writing job asked for more bytes than the file), or a time-based random job's
/// random map full; and with `loops`, at each loop (fio opens the files again).
pub fn invalidates_at_wraps(p: &Pattern) -> bool {
    // A time-based job has no byte limit (its runtime ends it).
    let time_based = p.limit_bytes.is_none();
    let passes = if p.rw.random() {
        time_based
    } else {
        let more = p.limit_bytes.is_some_and(|l| l > p.region) && p.rw.writes();
        time_based && p.files <= 1 || more
    };
    passes || p.loops > 1
}

impl Offsets {
    pub fn new(p: &Pattern, rng: &mut DataGen) -> Offsets {
        let align = p.align();
        let slots = (p.region - p.max_bs().min(p.region)) / align + 1;
        let random = p.rw.random();
        let picker = Picker::new(&p.shape.dist, p.shape.dist_center, slots, align);
        Offsets {
            region: p.region,
            align,
            random,
            randommap: p.randommap && picker.is_none(),
            blocks: (random && p.randommap && picker.is_none() && cuts(p))
                .then(|| BlockMap::new(p.region / align, slots)),
            cut: None,
            map: Permutation::new(slots, rng),
            picker,
            seq: match &p.shape.dist {
                crate::plan::job::Distribution::Sequence { blocks, stride } => {
                    Some((blocks.clone(), *stride)).filter(|s| !s.0.is_empty())
                }
                _ => None,
            },
            seq_done: [0; 2],
            random_pct: p.shape.random_pct,
            run: if random {
                p.shape.rw_mod.unwrap_or(1).max(1)
            } else {
                1
            },
            identical: p.shape.rw_identical,
            run_left: 0,
            skip: if random {
                0
            } else {
                p.shape.rw_mod.unwrap_or(0)
            },
            back: p.shape.backwards && !random,
            wrap: p.runtime.is_some() || p.limit_bytes.is_none_or(|l| l > p.region),
            next_seq: [0; 2],
            last: [0; 2],
            wrapped: false,
        }
    }

    /// The offset (in the region) of the next I/O of `len` bytes; None when a sized sequential
    /// job has reached the end of its region (or a strided sequence has).
    #[inline]
    /// With several block sizes and the random map, `len` may come back shorter: cut at the
    /// first block this pass already did (fio's random map does so).
    pub fn next(&mut self, len: &mut u64, write: bool, rng: &mut DataGen) -> Option<u64> {
        let o = self.next_of(*len, write, rng)?;
        if let Some(c) = self.cut.take() {
            *len = c;
        }
        Some(o)
    }

    #[inline]
    fn next_of(&mut self, len: u64, write: bool, rng: &mut DataGen) -> Option<u64> {
        let d = usize::from(write);
        if !self.random {
            return self.sequential(len, d);
        }
        if self.run_left > 0 {
            // A run (rw=randrw:N) goes on in this direction from where its last I/O was
            // (identical) or ended, as fio's last_start[ddir] / last_pos[ddir]: a write after a
            // random read continues the writes. Past the region's end, a random block.
            self.run_left -= 1;
            if self.identical {
                return Some(self.last[d]);
            }
            let o = self.next_seq[d];
            if o + len <= self.region {
                self.next_seq[d] = o + len;
                self.last[d] = o;
                return Some(o);
            }
        } else {
            self.run_left = self.run - 1;
        }
        let o = if self.random_pct < 100 && (rng.next_u64() % 100) as u32 >= self.random_pct {
            let o = self.sequential_from(self.next_seq[d], len);
            self.wrapped |= o == 0 && self.next_seq[d] != 0;
            o
        } else if let Some((blocks, stride)) = &self.seq {
            let n = &mut self.seq_done[write as usize];
            let k = blocks.len() as u64;
            let mut b = blocks[(*n % k) as usize];
            if *stride {
                b += *n / k * k;
            }
            *n += 1;
            let o = b * self.align;
            if o + len > self.region {
                return None;
            }
            o
        } else if let Some(p) = &self.picker {
            p.next(rng) * self.align
        } else if let Some(b) = self.blocks.as_mut() {
            self.wrapped |= b.spent();
            let (k, n) = b.claim(&mut self.map, len.div_ceil(self.align), rng);
            self.cut = Some(len.min(n * self.align));
            k * self.align
        } else if self.randommap {
            let pass = self.map.pass();
            let k = self.map.next(rng);
            self.wrapped |= self.map.pass() != pass;
            k * self.align
        } else {
            let slots = (self.region - len) / self.align + 1;
            (rng.next_u64() % slots) * self.align
        };
        self.next_seq[d] = o + len;
        self.last[d] = o;
        Some(o)
    }

    /// Whether a pass over the region ended since the last call: a sequential direction went
    /// back to its start, or the random map began again.
    pub fn take_wrapped(&mut self) -> bool {
        std::mem::take(&mut self.wrapped)
    }

    /// `from`, or the start when a block of `len` does not fit there.
    fn sequential_from(&self, from: u64, len: u64) -> u64 {
        if from + len > self.region {
            0
        } else {
            from
        }
    }

    fn sequential(&mut self, len: u64, d: usize) -> Option<u64> {
        if self.back {
            return self.backwards(len, d);
        }
        if self.next_seq[d] + len > self.region {
            if !self.wrap {
                return None;
            }
            self.next_seq[d] = 0;
            // With holes (rw=read:8k) fio wraps without invalidating (its ddir_seq_add branch).
            self.wrapped |= self.skip == 0;
        }
        let o = self.next_seq[d];
        self.next_seq[d] += len + self.skip;
        Some(o)
    }

    /// rw=read:-N: each I/O steps N less its own size back from the last; below the region's
    /// start it wraps towards the end (the job's size or runtime ends it, as fio's).
    fn backwards(&mut self, len: u64, d: usize) -> Option<u64> {
        let o = self.next_seq[d];
        if o + len > self.region {
            return None;
        }
        let step = self.skip as i128 - len as i128;
        let next = o as i128 - step;
        self.next_seq[d] = if next < 0 || next as u64 + len > self.region {
            // Below the start: as far from the region's last block as it went below (fio's
            // wrap: from 0 with 4 KiB blocks and -8k, the next is 24 KiB of 32).
            let wrapped = self.region as i128 + next - len as i128;
            let last = (self.region - len) as i128;
            (wrapped.clamp(0, last) as u64) / self.align * self.align
        } else {
            next as u64
        };
        Some(o)
    }
}

#[cfg(test)]
mod backwards_tests {
    use super::*;
    use crate::plan::job::{BlockSize, Rw};

    #[test]
    fn a_negative_hole_reads_backwards_wrapping_as_fio_does() {
        let mut p = Pattern::basic(Rw::Read, BlockSize::Fixed(4096), 1, 32768);
        p.shape.rw_mod = Some(8192);
        p.shape.backwards = true;
        let mut rng = DataGen::new(1);
        let mut o = Offsets::new(&p, &mut rng);
        let got: Vec<u64> = (0..9)
            .map(|_| o.next(&mut 4096, false, &mut rng).unwrap() / 1024)
            .collect();
        // fio 3.33, rw=read:-8k bs=4k size=32k: 0 24576 20480 ... 4096 0 (its write_iolog).
        assert_eq!(got, [0, 24, 20, 16, 12, 8, 4, 0, 24]);
    }
}

#[cfg(test)]
mod run_tests {
    use super::*;
    use crate::plan::job::{BlockSize, Rw};

    /// rw=randrw:4 as fio 3.33's write_iolog shows it: a random I/O, then three that go on in
    /// their own direction (a write after a random read continues the writes, from 0 at first);
    /// with rw_sequencer=identical, each repeats its direction's last start.
    #[test]
    fn a_run_goes_on_in_each_direction_as_fio_does() {
        let mut p = Pattern::basic(Rw::RandRw, BlockSize::Fixed(4096), 1, 1 << 20);
        p.shape.rw_mod = Some(4);
        let mut rng = DataGen::new(3);
        let mut o = Offsets::new(&p, &mut rng);
        let mut at = |w: bool| o.next(&mut 4096, w, &mut rng).unwrap();
        let r0 = at(false);
        assert_eq!([at(true), at(true), at(false)], [0, 4096, r0 + 4096]);
        let w1 = at(true);
        assert_eq!(
            [at(false), at(true), at(true)],
            [r0 + 8192, w1 + 4096, w1 + 8192]
        );
        p.shape.rw_identical = true;
        let mut o = Offsets::new(&p, &mut rng);
        let mut at = |w: bool| o.next(&mut 4096, w, &mut rng).unwrap();
        let r0 = at(false);
        assert_eq!([at(true), at(false), at(false)], [0, r0, r0]);
    }
}

#[cfg(test)]
mod sequence_tests {
    use super::*;
    use crate::plan::job::{BlockSize, Distribution, Rw};

    fn walk(stride: bool, n: usize) -> Vec<Option<u64>> {
        let mut p = Pattern::basic(Rw::RandRead, BlockSize::Fixed(4096), 1, 48 << 10);
        p.shape.dist = Distribution::Sequence {
            blocks: vec![2, 0, 1],
            stride,
        };
        let mut rng = DataGen::new(1);
        let mut o = Offsets::new(&p, &mut rng);
        (0..n)
            .map(|_| o.next(&mut 4096, false, &mut rng).map(|x| x / 4096))
            .collect()
    }

    #[test]
    fn a_sequence_repeats_or_strides_on_as_fio_does() {
        // fio's examples/sequence-distribution.fio (12 blocks, 6 I/Os).
        assert_eq!(walk(false, 6), [2, 0, 1, 2, 0, 1].map(Some));
        assert_eq!(walk(true, 6), [2, 0, 1, 5, 3, 4].map(Some));
        // Strided past the region's end: the job ends there.
        let w = walk(true, 13);
        assert_eq!(w[11], Some(10));
        assert_eq!(w[12], None);
    }
}

#[cfg(test)]
mod cut_tests {
    use super::*;
    use crate::plan::job::{BlockSize, Rw};

    #[test]
    fn a_spread_of_sizes_is_cut_at_blocks_done_this_pass_as_fio_does() {
        let split = BlockSize::Split(vec![(4096, 50), (65536, 50)]);
        let p = Pattern::basic(Rw::RandRead, split, 1, 1 << 20);
        let mut rng = DataGen::new(9);
        let mut o = Offsets::new(&p, &mut rng);
        let mut done = vec![false; 256];
        let mut ios = Vec::new();
        // One pass: I/Os until every block an I/O may start at is done (the last 15 blocks can
        // only be reached by an I/O starting before them).
        while done[..241].iter().any(|d| !d) {
            let mut len = if rng.next_u64() % 2 == 0 { 4096 } else { 65536 };
            let at = o.next(&mut len, false, &mut rng).unwrap();
            assert!(len % 4096 == 0 && (4096..=65536).contains(&len));
            for b in at / 4096..(at + len) / 4096 {
                assert!(!done[b as usize], "block {b} twice in a pass");
                done[b as usize] = true;
            }
            ios.push(len);
        }
        let cut = ios.iter().filter(|&&l| l != 4096 && l != 65536).count();
        assert!(cut > 0, "some 64 KiB I/Os were cut short");
        // The pass ends with the next I/O, which says so (fio invalidates there).
        assert!(!o.take_wrapped(), "no pass ended during the first");
        o.next(&mut 4096, false, &mut rng).unwrap();
        assert!(o.take_wrapped());
        // One size (or sizes per direction) is never cut.
        let p = Pattern::basic(Rw::RandRead, BlockSize::Fixed(65536), 1, 1 << 20);
        let mut o = Offsets::new(&p, &mut rng);
        for _ in 0..64 {
            let mut len = 65536;
            o.next(&mut len, false, &mut rng).unwrap();
            assert_eq!(len, 65536);
        }
    }
}
