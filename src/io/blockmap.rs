//! fio's random map for jobs of several block sizes (bsrange, bssplit): the blocks (of the
//! smallest size) done this pass. An I/O starts only at a block not yet done, and is cut short
//! at the first block already done after it, as fio's random map cuts it (io_u.c's
//! mark_random_map): late in a pass many large I/Os come out smaller, which is what fio measures.
//! When every block an I/O may start at is done, the pass ends and the map is cleared.

use super::{DataGen, Permutation};

pub struct BlockMap {
    used: Vec<u64>,
    /// A bit per word of `used` that is all done, to find the next block not done in a few
    /// steps (fio's axmap is a tree of such levels).
    full: Vec<u64>,
    /// Blocks in the region, and those an I/O may start at (its largest size still fits).
    blocks: u64,
    starts: u64,
    /// Start blocks not yet done this pass.
    free: u64,
}

impl BlockMap {
    pub fn new(blocks: u64, starts: u64) -> BlockMap {
        let words = blocks.div_ceil(64);
        BlockMap {
            used: vec![0; words as usize],
            full: vec![0; words.div_ceil(64) as usize],
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
        self.free_from(k)
            .or_else(|| self.free_from(0))
            .expect("a start block is free")
    }

    /// The first start block not done at or after `k`: whole words that are done are passed a
    /// summary word (64 of them) at a time.
    fn free_from(&self, k: u64) -> Option<u64> {
        let words = self.starts.div_ceil(64);
        let mut w = k / 64;
        let mut mask = !0u64 << (k % 64);
        while w < words {
            let free = !self.used[w as usize] & mask;
            if free != 0 {
                let b = w * 64 + free.trailing_zeros() as u64;
                return (b < self.starts).then_some(b);
            }
            mask = !0;
            w += 1;
            // Skip the words that are all done.
            while w < words {
                let open = !self.full[(w / 64) as usize] & (!0u64 << (w % 64));
                if open != 0 {
                    w = (w / 64) * 64 + open.trailing_zeros() as u64;
                    break;
                }
                w = (w / 64 + 1) * 64;
            }
        }
        None
    }

    /// Whether every block an I/O may start at is done: the next claim begins a new pass.
    pub fn spent(&self) -> bool {
        self.free == 0
    }

    /// The first block and the number of blocks (at most `want`, at least 1) of the next I/O,
    /// its start drawn from `map` (a permutation of the start blocks) among those not yet done.
    pub fn claim(&mut self, map: &mut Permutation, want: u64, rng: &mut DataGen) -> (u64, u64) {
        if self.free == 0 {
            self.used.iter_mut().for_each(|w| *w = 0);
            self.full.iter_mut().for_each(|w| *w = 0);
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
            let w = (b / 64) as usize;
            self.used[w] |= 1 << (b % 64);
            if self.used[w] == !0 {
                self.full[w / 64] |= 1 << (w % 64);
            }
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
    fn the_next_block_not_done_is_found_past_whole_words_done() {
        let n = 64 * 130;
        let mut m = BlockMap::new(n, n);
        let mut perm = Permutation::new(1, &mut DataGen::new(1));
        let mut rng = DataGen::new(2);
        // Every block done but two: word 129's bit 5, and block 3.
        for b in 0..n {
            if b != 129 * 64 + 5 && b != 3 {
                let w = (b / 64) as usize;
                m.used[w] |= 1 << (b % 64);
                if m.used[w] == !0 {
                    m.full[w / 64] |= 1 << (w % 64);
                }
            }
        }
        assert_eq!(m.next_free(4), 129 * 64 + 5);
        assert_eq!(m.next_free(129 * 64 + 6), 3, "wraps to the start");
        assert_eq!(m.next_free(0), 3);
        // claim from a done block (perm over 1 start: block 0) takes the next not done.
        m.free = 2;
        assert_eq!(
            m.claim(&mut perm, 4, &mut rng),
            (3, 1),
            "cut at block 4, done"
        );
    }

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
