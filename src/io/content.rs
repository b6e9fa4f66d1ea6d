//! The tree and the trailer: what a files tree is (shape, size distribution, seed), each file's
//! content, and the check of a file read back.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::io::DataGen;

pub const TRAILER: usize = 20;
/// Bytes of the random pool file contents are cut from.
pub const POOL: usize = 16 << 20;

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Dist {
    Normal,
    Fixed,
    Uniform,
    LogNormal,
    Exponential,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Checksum {
    Crc32c,
    Crc32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Fsync {
    None,
    File,
    Dir,
    End,
}

/// What a tree is: everything needed to regenerate and verify it, kept in its root.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tree {
    pub version: u32,
    pub seed: u64,
    pub tops: u64,
    pub subs: u64,
    pub per_sub: u64,
    pub count: u64,
    pub dist: Dist,
    pub mean: f64,
    pub sd: f64,
    pub min: u64,
    pub max: u64,
    pub checksum: Checksum,
}

impl Tree {
    pub fn units(&self) -> u64 {
        self.tops * self.subs
    }

    /// Files in subfolder `u` (the last ones may hold fewer).
    pub fn files_in(&self, u: u64) -> u64 {
        self.count
            .saturating_sub(u * self.per_sub)
            .min(self.per_sub)
    }

    /// The size of file `n`: drawn from the distribution with a generator keyed by the seed and
    /// the file number, so a reader knows it without any per-file state.
    pub fn size_of(&self, n: u64) -> u64 {
        let mut g = DataGen::new(self.seed ^ n.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x5112_e5eb);
        let u = |g: &mut DataGen| ((g.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
        let normal = |g: &mut DataGen| {
            let (u1, u2) = (u(g), u(g));
            (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
        };
        let v = match self.dist {
            Dist::Fixed => self.mean,
            Dist::Normal => self.mean + self.sd * normal(&mut g),
            Dist::Uniform => self.min as f64 + u(&mut g) * (self.max - self.min + 1) as f64,
            Dist::LogNormal => {
                let s2 = (1.0 + (self.sd / self.mean).powi(2)).ln();
                let mu = self.mean.ln() - s2 / 2.0;
                (mu + s2.sqrt() * normal(&mut g)).exp()
            }
            Dist::Exponential => -self.mean * u(&mut g).ln(),
        };
        if self.dist == Dist::Fixed {
            return self.mean as u64;
        }
        (v.max(0.0) as u64).clamp(self.min, self.max)
    }

    pub fn path_of(&self, root: &Path, u: u64) -> PathBuf {
        root.join(format!("t{:03}", u / self.subs))
            .join(format!("s{:03}", u % self.subs))
    }
}

fn checksum(kind: Checksum, seed: u64, number: u64, len: u64, payload: &[u8]) -> u32 {
    let mut head = [0u8; 24];
    head[..8].copy_from_slice(&seed.to_le_bytes());
    head[8..16].copy_from_slice(&number.to_le_bytes());
    head[16..].copy_from_slice(&len.to_le_bytes());
    match kind {
        Checksum::Crc32c => crc32c::crc32c_append(crc32c::crc32c(&head), payload),
        Checksum::Crc32 => {
            let mut h = crc32fast::Hasher::new();
            h.update(&head);
            h.update(payload);
            h.finalize()
        }
    }
}

impl Tree {
    /// The random pool of `len` bytes that file contents are cut from (`POOL` for the workload;
    /// anything longer than the largest file works).
    pub fn pool(&self, len: usize) -> Vec<u8> {
        let mut pool = vec![0u8; len];
        DataGen::new(self.seed ^ 0x900d).fill(&mut pool);
        pool
    }
}

/// Fills `buf` (its length is the file's size) with file `n`'s content: a slice of the random
/// pool at a place keyed by the file number, then the trailer.
pub fn content(tree: &Tree, pool: &[u8], n: u64, buf: &mut [u8]) {
    let len = buf.len();
    if len < TRAILER {
        let mut g = DataGen::new(tree.seed ^ n);
        g.fill(buf);
        return;
    }
    let body = len - TRAILER;
    let mut g = DataGen::new(tree.seed ^ n.rotate_left(17) ^ 0x00C0_FFEE);
    let at = (g.next_u64() % (pool.len() - body) as u64) as usize;
    buf[..body].copy_from_slice(&pool[at..at + body]);
    let c = checksum(tree.checksum, tree.seed, n, len as u64, &buf[..body]);
    buf[body..body + 8].copy_from_slice(&tree.seed.to_le_bytes());
    buf[body + 8..body + 16].copy_from_slice(&n.to_le_bytes());
    buf[body + 16..].copy_from_slice(&c.to_le_bytes());
}

/// What reading a file back found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Ok,
    CrcMismatch,
    WrongIdentity,
    WrongSize,
}

/// Checks a file's bytes against what file `n` of `tree` must hold.
pub fn verify(tree: &Tree, n: u64, data: &[u8]) -> Verdict {
    let want = tree.size_of(n) as usize;
    let len = data.len();
    if len < TRAILER || want < TRAILER {
        return if len != want {
            Verdict::WrongSize
        } else {
            let mut expect = vec![0u8; len];
            DataGen::new(tree.seed ^ n).fill(&mut expect);
            if expect == data {
                Verdict::Ok
            } else {
                Verdict::CrcMismatch
            }
        };
    }
    let body = len - TRAILER;
    let t = &data[body..];
    let seed = u64::from_le_bytes(t[..8].try_into().expect("8 bytes"));
    let number = u64::from_le_bytes(t[8..16].try_into().expect("8 bytes"));
    let crc = u32::from_le_bytes(t[16..].try_into().expect("4 bytes"));
    if checksum(tree.checksum, seed, number, len as u64, &data[..body]) != crc {
        return if len != want {
            Verdict::WrongSize
        } else {
            Verdict::CrcMismatch
        };
    }
    if seed != tree.seed || number != n {
        return Verdict::WrongIdentity;
    }
    if len != want {
        return Verdict::WrongSize;
    }
    Verdict::Ok
}
