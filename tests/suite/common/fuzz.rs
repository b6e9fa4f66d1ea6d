//! What the fuzzers share: a small reproducible random stream, and their size and seed from the
//! environment (`FSBENCH_FUZZ_CASES`, `FSBENCH_FUZZ_SEED`).

/// xorshift64*: a small, reproducible stream.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    pub fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len())]
    }
    pub fn chance(&mut self, pct: u64) -> bool {
        self.next() % 100 < pct
    }
}

/// (cases, seed): `FSBENCH_FUZZ_CASES` and `FSBENCH_FUZZ_SEED`, else the fuzzer's own defaults.
pub fn cases_and_seed(cases: usize, seed: u64) -> (usize, u64) {
    let var = |k: &str| std::env::var(k).ok();
    (
        var("FSBENCH_FUZZ_CASES")
            .and_then(|v| v.parse().ok())
            .unwrap_or(cases),
        var("FSBENCH_FUZZ_SEED")
            .and_then(|v| v.parse().ok())
            .unwrap_or(seed),
    )
}
