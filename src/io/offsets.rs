//! Where a worker's next I/O goes in one file's region: in order (with fio's `rw=read:8k` holes,
//! or backwards with `rw=read:-8k`, wrapping when the job asks for more than one pass), or at
//! random (through the random map, cut at blocks done with several block sizes, independently,
//! by a non-uniform distribution, or by a sequence of blocks), partly random
//! (`percentage_random`), and random with runs (`rw=randread:8`, sequential or identical). Each
//! direction keeps its own position, as fio's last_pos[ddir].

use super::blockmap::BlockMap;
use super::dist::Picker;
use super::{DataGen, Permutation};
use crate::plan::dir::{Dir, PerDir};
use crate::plan::job::Distribution;

/// The order of offsets in a region.
#[derive(Debug, Clone, PartialEq)]
pub enum Order {
    /// One after another from the region's start.
    InTurn { step: Step, at_end: AtEnd },
    /// Drawn at random; `random_pct` of the I/Os (the others go on from the last one), each
    /// random offset starting a run.
    Random {
        draw: Draw,
        random_pct: u32,
        run: Run,
    },
}

/// What separates two offsets in turn: a hole after each I/O, or a step back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Forward {
        hole: u64,
    },
    /// rw=read:-N: each I/O steps N less its own size back from the last.
    Back {
        by: u64,
    },
}

/// What an in-turn direction does at the region's end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AtEnd {
    /// Back to the start (time based, or more than one pass).
    Wrap,
    Stop,
}

/// How a random offset is drawn.
#[derive(Debug, Clone, PartialEq)]
pub enum Draw {
    /// Every block once per pass (fio's random map).
    Map,
    /// The random map, an I/O starting at a block not done this pass and cut at the first done
    /// one (one spread of sizes for reads and writes, as fio's map cuts).
    MapCut,
    /// Each offset drawn on its own (fio's norandommap).
    Independent,
    /// A non-uniform distribution (zipf, pareto, normal, zoned) and where it centres.
    Skewed(Distribution, Option<f64>),
    /// These blocks in order, over and over (each round moving on by their count with
    /// `Stride::On`).
    Sequence { blocks: Vec<u64>, stride: Stride },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stride {
    Repeat,
    On,
}

/// I/Os per random offset (rw=randread:N) and what the ones after the first do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Run {
    pub len: u64,
    pub then: RunNext,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunNext {
    /// Each goes on where the last one of its direction ended.
    Sequential,
    /// Each repeats the last one's offset (rw_sequencer=identical).
    Identical,
}

impl Run {
    pub const ONE: Run = Run {
        len: 1,
        then: RunNext::Sequential,
    };
}

/// The state of a random draw.
enum Drawer {
    Map(Permutation),
    MapCut(Permutation, BlockMap),
    Independent,
    Skewed(Picker),
    Sequence {
        blocks: Vec<u64>,
        stride: Stride,
        done: PerDir<u64>,
    },
}

enum Mode {
    InTurn(Step, AtEnd),
    Random {
        drawer: Drawer,
        random_pct: u32,
        run: Run,
        run_left: u64,
    },
}

pub struct Offsets {
    region: u64,
    align: u64,
    mode: Mode,
    /// Where each direction's next in-turn I/O goes, and where its last one started.
    next: PerDir<u64>,
    last: PerDir<u64>,
    /// A pass over the region ended since the last `take_wrapped` (fio invalidates the file's
    /// cache there): an in-turn direction went back to the start, or the random map began again.
    wrapped: bool,
}

/// Where an I/O goes in its file's region, and how long it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Extent {
    pub offset: u64,
    pub len: u64,
}

/// The space offsets are drawn in: `region` bytes, I/Os of up to `max_bs` bytes at multiples of
/// `align`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Geometry {
    pub region: u64,
    pub align: u64,
    pub max_bs: u64,
}

/// A random offset drawn: where the I/O goes, and whether a pass of the map ended with it.
struct Drawn {
    at: Extent,
    wrapped: bool,
}

impl Offsets {
    /// Offsets of I/Os in `geo`, in `order`.
    pub fn new(order: &Order, geo: Geometry, rng: &mut DataGen) -> Offsets {
        let Geometry {
            region,
            align,
            max_bs,
        } = geo;
        let slots = (region - max_bs.min(region)) / align + 1;
        let mode = match order {
            Order::InTurn { step, at_end } => Mode::InTurn(*step, *at_end),
            Order::Random {
                draw,
                random_pct,
                run,
            } => Mode::Random {
                drawer: Drawer::new(draw, geo, slots, rng),
                random_pct: *random_pct,
                run: *run,
                run_left: 0,
            },
        };
        Offsets {
            region,
            align,
            mode,
            next: PerDir::default(),
            last: PerDir::default(),
            wrapped: false,
        }
    }

    /// The offset (in the region) of the next I/O of `len` bytes, and its length: shorter than
    /// asked when the random map cuts it at a block done this pass. None when an in-turn
    /// direction that stops has reached the region's end (or a strided sequence has).
    #[inline]
    pub fn next(&mut self, dir: Dir, len: u64, rng: &mut DataGen) -> Option<Extent> {
        let at = |offset| Extent { offset, len };
        match &mut self.mode {
            Mode::InTurn(Step::Forward { hole }, at_end) => {
                let (hole, at_end) = (*hole, *at_end);
                self.forward(dir, len, hole, at_end).map(at)
            }
            Mode::InTurn(Step::Back { by }, _) => {
                let by = *by;
                self.back(dir, len, by).map(at)
            }
            Mode::Random { .. } => self.random(dir, len, rng),
        }
    }

    /// Whether a pass over the region ended since the last call.
    pub fn take_wrapped(&mut self) -> bool {
        std::mem::take(&mut self.wrapped)
    }

    fn forward(&mut self, d: Dir, len: u64, hole: u64, at_end: AtEnd) -> Option<u64> {
        if self.next[d] + len > self.region {
            if at_end == AtEnd::Stop {
                return None;
            }
            self.next[d] = 0;
            // With holes (rw=read:8k) fio wraps without invalidating (its ddir_seq_add branch).
            self.wrapped |= hole == 0;
        }
        let o = self.next[d];
        self.next[d] += len + hole;
        Some(o)
    }

    /// rw=read:-N: each I/O steps N less its own size back from the last; below the region's
    /// start it wraps towards the end (the job's size or runtime ends it, as fio's).
    fn back(&mut self, d: Dir, len: u64, by: u64) -> Option<u64> {
        let o = self.next[d];
        if o + len > self.region {
            return None;
        }
        let next = o as i128 - (by as i128 - len as i128);
        self.next[d] = if next < 0 || next as u64 + len > self.region {
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

    #[inline]
    fn random(&mut self, d: Dir, len: u64, rng: &mut DataGen) -> Option<Extent> {
        let Mode::Random {
            drawer,
            random_pct,
            run,
            run_left,
        } = &mut self.mode
        else {
            return None;
        };
        if *run_left > 0 {
            // A run (rw=randrw:N) goes on in this direction from where its last I/O was
            // (identical) or ended, as fio's last_start[ddir] / last_pos[ddir]: a write after a
            // random read continues the writes. Past the region's end, a random block.
            *run_left -= 1;
            if run.then == RunNext::Identical {
                return Some(Extent {
                    offset: self.last[d],
                    len,
                });
            }
            let o = self.next[d];
            if o + len <= self.region {
                (self.next[d], self.last[d]) = (o + len, o);
                return Some(Extent { offset: o, len });
            }
        } else {
            *run_left = run.len - 1;
        }
        let at = if *random_pct < 100 && (rng.next_u64() % 100) as u32 >= *random_pct {
            let from = self.next[d];
            let o = if from + len > self.region { 0 } else { from };
            self.wrapped |= o == 0 && from != 0;
            Extent { offset: o, len }
        } else {
            let drawn = drawer.draw(d, len, self.region, self.align, rng)?;
            self.wrapped |= drawn.wrapped;
            drawn.at
        };
        // The direction goes on from the end of the block asked for, cut or not.
        (self.next[d], self.last[d]) = (at.offset + len, at.offset);
        Some(at)
    }
}

impl Drawer {
    fn new(draw: &Draw, geo: Geometry, slots: u64, rng: &mut DataGen) -> Drawer {
        let Geometry { region, align, .. } = geo;
        match draw {
            Draw::Map => Drawer::Map(Permutation::new(slots, rng)),
            Draw::MapCut => Drawer::MapCut(
                Permutation::new(slots, rng),
                BlockMap::new(region / align, slots),
            ),
            Draw::Independent => Drawer::Independent,
            Draw::Skewed(dist, center) => match Picker::new(dist, *center, slots, align) {
                Some(p) => Drawer::Skewed(p),
                None => Drawer::Independent,
            },
            Draw::Sequence { blocks, stride } => Drawer::Sequence {
                blocks: blocks.clone(),
                stride: *stride,
                done: PerDir::default(),
            },
        }
    }

    /// A random offset for `len` bytes in `region` at multiples of `align`.
    #[inline]
    fn draw(
        &mut self,
        d: Dir,
        len: u64,
        region: u64,
        align: u64,
        rng: &mut DataGen,
    ) -> Option<Drawn> {
        let drawn = |offset, len, wrapped| Drawn {
            at: Extent { offset, len },
            wrapped,
        };
        Some(match self {
            Drawer::Map(map) => {
                let pass = map.pass();
                let k = map.next(rng);
                drawn(k * align, len, map.pass() != pass)
            }
            Drawer::MapCut(map, blocks) => {
                let spent = blocks.spent();
                let (k, n) = blocks.claim(map, len.div_ceil(align), rng);
                drawn(k * align, len.min(n * align), spent)
            }
            Drawer::Independent => {
                let slots = (region - len) / align + 1;
                drawn((rng.next_u64() % slots) * align, len, false)
            }
            Drawer::Skewed(p) => drawn(p.next(rng) * align, len, false),
            Drawer::Sequence {
                blocks,
                stride,
                done,
            } => {
                let n = &mut done[d];
                let k = blocks.len() as u64;
                let mut b = blocks[(*n % k) as usize];
                if *stride == Stride::On {
                    b += *n / k * k;
                }
                *n += 1;
                let o = b * align;
                if o + len > region {
                    return None;
                }
                drawn(o, len, false)
            }
        })
    }
}

#[cfg(test)]
mod tests;
