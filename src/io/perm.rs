//! The random map: a permutation of block numbers, so random I/O touches every block once per pass.

use crate::io::DataGen;

/// A random permutation of 0..n: a 4-round Feistel network over the next even power of two, with
/// cycle walking, re-keyed for every pass. Random I/O then touches every block once per pass, as
/// fio's default random map does, without a bitmap.
pub struct Permutation {
    n: u64,
    half: u32,
    keys: [u64; 4],
    i: u64,
    /// Passes begun (each with keys of its own).
    passes: u64,
}

fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Permutation {
    pub fn new(n: u64, rng: &mut DataGen) -> Permutation {
        let bits = (64 - n.max(2).saturating_sub(1).leading_zeros()).max(2);
        let half = bits.div_ceil(2);
        let mut p = Permutation {
            n: n.max(1),
            half,
            keys: [0; 4],
            i: 0,
            passes: 0,
        };
        p.rekey(rng);
        p
    }

    fn rekey(&mut self, rng: &mut DataGen) {
        for k in &mut self.keys {
            *k = rng.next_u64();
        }
        self.i = 0;
        self.passes += 1;
    }

    /// The pass the last value came from (the first is 1): it changes with the first value of
    /// the next pass.
    pub fn pass(&self) -> u64 {
        self.passes
    }

    fn apply(&self, x: u64) -> u64 {
        let mask = (1u64 << self.half) - 1;
        let (mut l, mut r) = (x >> self.half, x & mask);
        for k in self.keys {
            let t = l ^ (mix(r ^ k) & mask);
            l = r;
            r = t;
        }
        (l << self.half) | r
    }

    pub fn next(&mut self, rng: &mut DataGen) -> u64 {
        let domain = 1u64 << (2 * self.half);
        loop {
            if self.i >= domain {
                self.rekey(rng);
            }
            let v = self.apply(self.i);
            self.i += 1;
            if v < self.n {
                return v;
            }
        }
    }
}
