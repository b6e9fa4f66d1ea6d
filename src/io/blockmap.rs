//! fio's random map for jobs of several block sizes (bsrange, bssplit): the blocks (of the
//! smallest size) done this pass. An I/O starts only at a block not yet done, and is cut short
//! at the first block already done after it, as fio's random map cuts it (io_u.c's
//! mark_random_map): late in a pass many large I/Os come out smaller, which is what fio measures.
//! When every block an I/O may start at is done, the pass ends and the map is cleared.

use super::{DataGen, Permutation};

pub struct BlockMap {
    used: Vec<u64>,
    /// Blocks in the region, and those an I/O may start at (its largest size still fits).
    blocks: u64,
    starts: u64,
    /// Start blocks not yet done this pass.
    free: u64,
}

impl BlockMap {
    pub fn new(blocks: u64, starts: u64) -> BlockMap {
        BlockMap {
            used: vec![0; blocks.div_ceil(64) as usize],
            blocks,
            starts: starts.min(blocks),
            free: starts.min(blocks),
        }
    }

    fn is_used(&self, b: u64) -> bool {
        self.used[(b / 64) as usize] & (1 << (b % 64)) != 0
    }

    /// The first start block not done from `k` on, wrapping to 0 (one exists: `free` > 0).
    fn next_free(&self, k: u64) -> u64 {
        let words = self.starts.div_ceil(64);
        for step in 0..=words {
            let w = (k / 64 + step) % words;
            let mut free = !self.used[w as usize];
            if step == 0 {
                free &= !0u64 << (k % 64);
            }
            while free != 0 {
                let b = w * 64 + free.trailing_zeros() as u64;
                if b < self.starts {
                    return b;
                }
                free &= free - 1;
            }
        }
        // Only blocks before `k` in its own word are left.
        (0..self.starts)
            .find(|&b| !self.is_used(b))
            .expect("a start block is free")
    }

    /// The first block and the number of blocks (at most `want`, at least 1) of the next I/O,
    /// its start drawn from `map` (a permutation of the start blocks) among those not yet done.
    pub fn claim(&mut self, map: &mut Permutation, want: u64, rng: &mut DataGen) -> (u64, u64) {
        if self.free == 0 {
            self.used.iter_mut().for_each(|w| *w = 0);
            self.free = self.starts;
        }
        // A random start block; when it is done, the next one not done after it (wrapping), as
        // fio's axmap_next_free finds it.
        let k = map.next(rng);
        let k = if self.is_used(k) {
            self.next_free(k)
        } else {
            k
        };
        let mut run = 0;
        while run < want.max(1) && k + run < self.blocks && !self.is_used(k + run) {
            let b = k + run;
            self.used[(b / 64) as usize] |= 1 << (b % 64);
            if b < self.starts {
                self.free -= 1;
            }
            run += 1;
        }
        (k, run)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_io_starts_at_a_free_block_and_stops_at_a_done_one() {
        let mut rng = DataGen::new(5);
        // 16 blocks; I/Os of up to 4 blocks start at blocks 0..=12.
        let mut m = BlockMap::new(16, 13);
        let mut perm = Permutation::new(13, &mut rng);
        let mut seen = [0u32; 16];
        let mut cut = 0;
        while m.free > 0 {
            let (k, n) = m.claim(&mut perm, 4, &mut rng);
            assert!((1..=4).contains(&n) && k < 13);
            cut += (n < 4) as u32;
            for b in k..k + n {
                seen[b as usize] += 1;
            }
        }
        assert!(
            seen.iter().all(|&s| s <= 1),
            "no block twice in a pass: {seen:?}"
        );
        assert!(
            seen[..13].iter().all(|&s| s == 1),
            "every start block once: {seen:?}"
        );
        assert!(cut > 0, "some I/Os were cut at a block already done");
        // The next pass starts afresh.
        let (_, n) = m.claim(&mut perm, 4, &mut rng);
        assert!(n >= 1);
        assert_eq!(m.free, 13 - n.min(13));
    }
}
