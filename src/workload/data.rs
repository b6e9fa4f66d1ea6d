//! Incompressible test data: xoshiro256** keyed by a seed, so that a reader can regenerate and
//! compare what a writer wrote without keeping a copy.

pub struct DataGen {
    s: [u64; 4],
}

impl DataGen {
    pub fn new(seed: u64) -> DataGen {
        // SplitMix64 spreads the seed over the state, as the xoshiro authors recommend.
        let mut x = seed;
        let mut next = || {
            x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        };
        DataGen {
            s: [next(), next(), next(), next()],
        }
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// Fills `buf` with the next bytes of the stream.
    pub fn fill(&mut self, buf: &mut [u8]) {
        let mut chunks = buf.chunks_exact_mut(8);
        for c in &mut chunks {
            c.copy_from_slice(&self.next_u64().to_le_bytes());
        }
        let rest = chunks.into_remainder();
        if !rest.is_empty() {
            let v = self.next_u64().to_le_bytes();
            rest.copy_from_slice(&v[..rest.len()]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_stream_other_seed_other_stream() {
        let (mut a, mut b, mut c) = (vec![0u8; 4099], vec![0u8; 4099], vec![0u8; 4099]);
        DataGen::new(7).fill(&mut a);
        DataGen::new(7).fill(&mut b);
        DataGen::new(8).fill(&mut c);
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn bytes_are_spread_evenly() {
        let mut buf = vec![0u8; 1 << 20];
        DataGen::new(1).fill(&mut buf);
        let mut counts = [0u32; 256];
        for b in &buf {
            counts[*b as usize] += 1;
        }
        let expected = (1 << 20) / 256;
        assert!(counts
            .iter()
            .all(|&c| (c as i64 - expected as i64).abs() < expected as i64 / 10));
    }
}
