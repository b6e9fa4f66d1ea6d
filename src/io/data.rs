//! Incompressible test data: xoshiro256** keyed by a seed, so that a reader can regenerate and
//! compare what a writer wrote without keeping a copy; and `WriteData`, the block loop's
//! fresh write buffers.
//!
//! What a write costs is the memory it touches, not the generator: regenerating a 1 MiB buffer
//! writes every one of its 16,384 cache lines (about as dear as a `memset` of it, 30-50 us on the
//! reference VM, whatever the generator), while fio's default touches one line per 512-byte
//! sector. Large writes therefore cycle through a ring of buffers holding at least `RING_BYTES`
//! of distinct random data, each filled in full once and then given a fresh random stamp every
//! `RING_STAMP_EVERY` bytes (`WriteData::scramble`) each time it is written again: every 4 KiB of
//! every write is unique (no two 4 KiB blocks are equal, however aligned) and nothing longer
//! than the stamps' spacing recurs closer than `RING_BYTES` apart, beyond the window of any
//! filesystem's compression (btrfs 128 KiB, ZFS records up to 16 MiB) and of zstd -1 (512 KiB)
//! or lz4 (64 KiB).

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

/// Bytes of distinct random data a ring of write buffers holds (see the module's note).
pub const RING_BYTES: u64 = 16 << 20;
/// Writes at least this large go through a ring; smaller ones are regenerated in full (it costs
/// little beside the system call, and a ring would need too many buffers).
pub const RING_MIN_BS: u64 = 64 << 10;
/// A ring buffer written again gets a fresh stamp every 4 KiB: every 4 KiB stretch of every
/// write is unique (the unit of filesystem dedupe) for one cache line in 64, an eighth of what
/// fio's stamp per 512-byte sector touches.
pub const RING_STAMP_EVERY: usize = 4096;

/// How many buffers a worker writing blocks of up to `max_bs` bytes with `depth` I/Os in flight
/// cycles through to keep `RING_BYTES` of distinct data; None when its writes are too small for a
/// ring (they are regenerated in full).
pub fn ring_buffers(max_bs: u64, depth: usize) -> Option<usize> {
    if max_bs < RING_MIN_BS {
        return None;
    }
    Some((RING_BYTES.div_ceil(max_bs) as usize).max(depth))
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

    /// Makes a buffer that was filled once unique again: a stamp drawn from a fresh random key
    /// and the chunk's index over the first 8 bytes of every `every` bytes (512: every sector,
    /// as fio scrambles). Any `every` bytes in a row hold a stamp of their own, so no two writes
    /// share such a stretch; neighbouring stamps share no bytes an LZ compressor could match
    /// (the key plus the index alone left 7 equal bytes 512 apart: lz4 gained 0.24% on 1 GiB).
    pub fn scramble(&self, dst: &mut [u8], every: usize, rng: &mut DataGen) {
        let key = rng.next_u64();
        for (i, sector) in dst.chunks_mut(every).enumerate() {
            let n = sector.len().min(8);
            // A Weyl step then an xorshift-multiply: a bijection of the index, so every stamp of
            // a write differs, and each differs from the next in about half its bits.
            let mut z = key.wrapping_add((i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
            z = (z ^ (z >> 32)).wrapping_mul(0xD6E8_FEB8_6659_FD93);
            sector[..n].copy_from_slice(&(z ^ (z >> 32)).to_ne_bytes()[..n]);
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
            // Whole words by index: the same code as a zip of chunks once optimised, and about
            // 10x faster unoptimised, where an iterator costs calls per word (the test suite's
            // debug binary lays out its files with this).
            let whole = seg.len() / 8;
            let mut i = 0;
            while i < whole {
                seg[8 * i..8 * i + 8].copy_from_slice(&(src[i] ^ key).to_ne_bytes());
                i += 1;
            }
            let rest = &mut seg[8 * whole..];
            if !rest.is_empty() {
                let n = rest.len();
                rest.copy_from_slice(&(src[words - 1] ^ key).to_ne_bytes()[..n]);
            }
        }
        self.compress(dst);
    }

    /// A page of a dedupe working set: `page`'s stream (the same in every worker), made as
    /// compressible as the job's other writes.
    pub fn fill_page(&self, dst: &mut [u8], page: &mut DataGen) {
        page.fill(dst);
        self.compress(dst);
    }

    /// The compressible share of every 4 KiB (buffer_compress_percentage): zeros at its start.
    fn compress(&self, dst: &mut [u8]) {
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
    fn large_writes_take_a_ring_of_sixteen_mib_small_ones_none() {
        assert_eq!(ring_buffers(1 << 20, 8), Some(16));
        assert_eq!(ring_buffers(1 << 20, 32), Some(32));
        assert_eq!(ring_buffers(64 << 10, 1), Some(256));
        assert_eq!(ring_buffers(3 << 20, 1), Some(6));
        assert_eq!(ring_buffers(4096, 32), None);
    }

    #[test]
    fn fill_and_scramble_are_determined_by_the_seed() {
        let run = |seed: u64| {
            let data = WriteData::new(seed, 1 << 20, 0);
            let mut rng = DataGen::new(seed);
            let mut a = vec![0u8; 1 << 20];
            data.fill(&mut a, &mut rng);
            let mut b = a.clone();
            data.scramble(&mut b, 512, &mut rng);
            (a, b)
        };
        assert_eq!(run(5), run(5));
        assert_ne!(run(5).0, run(6).0);
        let (a, b) = run(5);
        assert_ne!(a, b);
    }

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
