//! Incompressible test data: xoshiro256** keyed by a seed, so that a reader can regenerate and
//! compare what a writer wrote without keeping a copy; and `WriteData`, the block loop's
//! fresh write buffers.

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

/// Fresh, incompressible write data: a random pool XORed with a new random key for every write,
/// from a new random place in the pool, so no two writes carry the same bytes (not one repeated
/// buffer) at the cost of one pass over the buffer.
pub struct WriteData {
    pool: Vec<u64>,
    compress_pct: u32,
}

/// 256 KiB of random words: small enough to stay in the CPU's cache, so that regenerating a
/// buffer costs one pass of writes and not a second stream of reads from memory.
const POOL_WORDS: usize = 1 << 15;
/// Each 64 KiB of a buffer takes its own key and its own place in the pool.
const SEGMENT: usize = 64 << 10;

impl WriteData {
    pub fn new(seed: u64, max_bs: u64, compress_pct: u32) -> WriteData {
        let mut gen = DataGen::new(seed ^ 0x5eed_da7a);
        let words = POOL_WORDS + SEGMENT.min(max_bs as usize) / 8;
        let pool = (0..words).map(|_| gen.next_u64()).collect();
        WriteData { pool, compress_pct }
    }

    /// Makes a buffer that was filled once unique again: a fresh random key (plus the sector's
    /// index) over the first 8 bytes of every 512-byte sector. No two writes share a sector.
    pub fn scramble(&self, dst: &mut [u8], rng: &mut DataGen) {
        let key = rng.next_u64();
        for (i, sector) in dst.chunks_mut(512).enumerate() {
            let n = sector.len().min(8);
            sector[..n].copy_from_slice(&key.wrapping_add(i as u64).to_ne_bytes()[..n]);
        }
        if self.compress_pct > 0 {
            let zeros = 4096 * self.compress_pct as usize / 100;
            for seg in dst.chunks_mut(4096) {
                let n = zeros.min(seg.len());
                seg[..n].fill(0);
            }
        }
    }

    pub fn fill(&self, dst: &mut [u8], rng: &mut DataGen) {
        for seg in dst.chunks_mut(SEGMENT) {
            let key = rng.next_u64();
            let words = seg.len().div_ceil(8);
            let start = (rng.next_u64() % (self.pool.len() - words + 1) as u64) as usize;
            let src = &self.pool[start..start + words];
            let mut chunks = seg.chunks_exact_mut(8);
            for (d, s) in (&mut chunks).zip(src) {
                d.copy_from_slice(&(s ^ key).to_ne_bytes());
            }
            let rest = chunks.into_remainder();
            if !rest.is_empty() {
                let n = rest.len();
                rest.copy_from_slice(&(src[words - 1] ^ key).to_ne_bytes()[..n]);
            }
        }
        if self.compress_pct > 0 {
            let zeros = 4096 * self.compress_pct as usize / 100;
            for seg in dst.chunks_mut(4096) {
                let n = zeros.min(seg.len());
                seg[..n].fill(0);
            }
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
