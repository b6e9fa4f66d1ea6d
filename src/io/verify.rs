//! Verified writes (fio `verify=`): every interval of a written block carries fsbench's own
//! header (magic, length, offset in the file, the job's seed, a digest of the interval's other
//! bytes); reads check it. A bad interval is reported in fio's shape: what failed, at which file
//! and offset, and the expected and received values.

use crate::plan::job::Verify;
use crate::plan::units::Span;

const MAGIC: [u8; 4] = *b"fsbV";
/// magic, length (u32), offset (u64), seed (u64).
const FIXED: usize = 24;

#[derive(Debug, Clone)]
pub struct Verifier {
    kind: String,
    /// Bytes per header (0: the whole block).
    interval: u64,
    hdr_off: usize,
    pattern: Vec<u8>,
    seed: u64,
}

/// What was wrong with one interval.
#[derive(Debug, Clone, PartialEq)]
pub struct Mismatch {
    pub kind: String,
    /// Where the bad interval starts in the file, and its length.
    pub offset: u64,
    pub len: usize,
    /// The I/O it was part of.
    pub block: (u64, usize),
    pub what: Bad,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Bad {
    Magic {
        got: [u8; 4],
    },
    Offset {
        got: u64,
    },
    Length {
        got: u32,
    },
    Digest {
        expected: String,
        received: String,
    },
    Pattern {
        at: usize,
        expected: u8,
        received: u8,
    },
}

impl Mismatch {
    /// fio's words for it, with the file's path.
    pub fn describe(&self, path: &str) -> String {
        let tail = format!(
            "at file {path} offset {}, length {} (requested block: offset={}, length={})",
            self.offset, self.len, self.block.0, self.block.1
        );
        match &self.what {
            Bad::Magic { got } => format!(
                "verify: bad magic header {}, wanted {} {tail}",
                hex(got),
                hex(&MAGIC)
            ),
            Bad::Offset { got } => format!("verify: bad header offset {got}, wanted {} {tail}", self.offset),
            Bad::Length { got } => format!("verify: bad header length {got}, wanted {} {tail}", self.len),
            Bad::Digest { expected, received } => format!(
                "{}: verify failed {tail}\n       Expected CRC: {expected}\n       Received CRC: {received}",
                self.kind
            ),
            Bad::Pattern { at, expected, received } => format!(
                "pattern: verify failed {tail}\n       byte {at}: expected {expected:#04x}, received {received:#04x}"
            ),
        }
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

impl Verifier {
    pub fn new(v: &Verify, seed: u64) -> Verifier {
        Verifier {
            kind: v.kind.clone(),
            interval: v.interval,
            hdr_off: v.offset as usize,
            pattern: v.pattern.clone(),
            seed,
        }
    }

    /// Does this kind check anything (null only fills a pattern)?
    pub fn checks(&self) -> bool {
        self.kind != "null"
    }

    fn digest_len(&self) -> usize {
        match self.kind.as_str() {
            "md5" => 16,
            "crc32c" | "crc32" | "xxhash" => 4,
            "crc64" => 8,
            "sha1" => 20,
            "sha256" => 32,
            "sha512" => 64,
            _ => 0,
        }
    }

    fn header_len(&self) -> usize {
        match self.kind.as_str() {
            "pattern" | "null" => 0,
            _ => FIXED + self.digest_len(),
        }
    }

    /// Where the header of an interval of `len` bytes sits.
    fn header_at(&self, len: usize) -> usize {
        self.hdr_off.min(len.saturating_sub(self.header_len()))
    }

    fn digest(&self, a: &[u8], b: &[u8]) -> Vec<u8> {
        /// A RustCrypto hash of the two parts.
        fn hash<D: md5::Digest>(a: &[u8], b: &[u8]) -> Vec<u8> {
            let mut h = D::new();
            h.update(a);
            h.update(b);
            h.finalize().to_vec()
        }
        match self.kind.as_str() {
            "md5" => hash::<md5::Md5>(a, b),
            "sha1" => hash::<sha1::Sha1>(a, b),
            "sha256" => hash::<sha2::Sha256>(a, b),
            "sha512" => hash::<sha2::Sha512>(a, b),
            "crc32c" => crc32c::crc32c_append(crc32c::crc32c(a), b)
                .to_le_bytes()
                .to_vec(),
            "crc32" => {
                let mut h = crc32fast::Hasher::new();
                h.update(a);
                h.update(b);
                h.finalize().to_le_bytes().to_vec()
            }
            "crc64" => {
                let c = crc::Crc::<u64>::new(&crc::CRC_64_ECMA_182);
                let mut d = c.digest();
                d.update(a);
                d.update(b);
                d.finalize().to_le_bytes().to_vec()
            }
            "xxhash" => {
                let mut h = xxhash_rust::xxh32::Xxh32::new(1);
                h.update(a);
                h.update(b);
                h.digest().to_le_bytes().to_vec()
            }
            _ => Vec::new(),
        }
    }

    fn intervals(&self, len: usize) -> impl Iterator<Item = (usize, usize)> {
        let step = if self.interval == 0 {
            len.max(1)
        } else {
            (self.interval as usize).min(len.max(1))
        };
        (0..len).step_by(step).map(move |s| (s, step.min(len - s)))
    }

    /// Stamps a block about to be written at `offset` of the file.
    pub fn stamp(&self, buf: &mut [u8], offset: u64) {
        let hl = self.header_len();
        for (s, n) in self.intervals(buf.len()) {
            let chunk = &mut buf[s..s + n];
            if !self.pattern.is_empty() {
                for (i, b) in chunk.iter_mut().enumerate() {
                    *b = self.pattern[i % self.pattern.len()];
                }
            }
            if hl == 0 || n < hl {
                continue;
            }
            let h = self.header_at(n);
            chunk[h..h + 4].copy_from_slice(&MAGIC);
            chunk[h + 4..h + 8].copy_from_slice(&(n as u32).to_le_bytes());
            chunk[h + 8..h + 16].copy_from_slice(&(offset + s as u64).to_le_bytes());
            chunk[h + 16..h + 24].copy_from_slice(&self.seed.to_le_bytes());
            let d = self.digest(&chunk[..h], &chunk[h + hl..]);
            chunk[h + FIXED..h + FIXED + d.len()].copy_from_slice(&d);
        }
    }

    /// Checks a block read from `offset` of the file; every bad interval when `all`, else the
    /// first.
    pub fn check(&self, buf: &[u8], offset: u64, all: bool) -> Vec<Mismatch> {
        let mut bad = Vec::new();
        let hl = self.header_len();
        for (s, n) in self.intervals(buf.len()) {
            let chunk = &buf[s..s + n];
            let at = offset + s as u64;
            let miss = |what| Mismatch {
                kind: self.kind.clone(),
                offset: at,
                len: n,
                block: (offset, buf.len()),
                what,
            };
            let h = self.header_at(n);
            let found = if hl == 0 || n < hl {
                self.check_pattern(chunk, 0, n).map(miss)
            } else {
                self.check_header(chunk, h, at, n).map(miss)
            };
            if let Some(m) = found {
                bad.push(m);
                if !all {
                    break;
                }
            }
        }
        bad
    }

    fn check_pattern(&self, chunk: &[u8], from: usize, to: usize) -> Option<Bad> {
        if self.pattern.is_empty() {
            return None;
        }
        (from..to)
            .find(|&i| chunk[i] != self.pattern[i % self.pattern.len()])
            .map(|i| Bad::Pattern {
                at: i,
                expected: self.pattern[i % self.pattern.len()],
                received: chunk[i],
            })
    }

    fn check_header(&self, chunk: &[u8], h: usize, at: u64, n: usize) -> Option<Bad> {
        let hl = self.header_len();
        let word = |a: usize, b: usize| &chunk[h + a..h + b];
        let magic: [u8; 4] = word(0, 4).try_into().unwrap_or_default();
        if magic != MAGIC {
            return Some(Bad::Magic { got: magic });
        }
        let len = u32::from_le_bytes(word(4, 8).try_into().unwrap_or_default());
        if len as usize != n {
            return Some(Bad::Length { got: len });
        }
        let off = u64::from_le_bytes(word(8, 16).try_into().unwrap_or_default());
        if off != at {
            return Some(Bad::Offset { got: off });
        }
        if self.kind != "meta" {
            let d = self.digest(&chunk[..h], &chunk[h + hl..]);
            let stored = word(FIXED, FIXED + d.len());
            if stored != d.as_slice() {
                return Some(Bad::Digest {
                    expected: hex(stored),
                    received: hex(&d),
                });
            }
        }
        // With a pattern, the data around the header is the pattern.
        self.check_pattern(chunk, 0, h)
            .or_else(|| self.check_pattern(chunk, h + hl, n))
    }
}

/// What reading a job's writes back found.
#[derive(Debug, Default)]
pub struct ReadBack {
    pub blocks: u64,
    pub bytes: u64,
    pub secs: f64,
    pub errors: u64,
    pub first: Option<Mismatch>,
    /// A read that failed outright (an errno), or opening the file.
    pub io_error: Option<super::Failure>,
    /// How it read: direct, or buffered after dropping the file's cached pages.
    pub how: &'static str,
    /// Writes later writes overwrote in part or whole (not checked, as in fio).
    pub skipped: u64,
}

impl ReadBack {
    /// Adds another file's read back to this one (the first failure and mismatch kept).
    pub fn add(&mut self, o: ReadBack) {
        self.blocks += o.blocks;
        self.bytes += o.bytes;
        self.secs += o.secs;
        self.errors += o.errors;
        self.skipped += o.skipped;
        if self.first.is_none() {
            self.first = o.first;
        }
        if self.io_error.is_none() {
            self.io_error = o.io_error;
        }
        if self.how.is_empty() {
            self.how = o.how;
        }
    }
}

/// Is [offset, offset + len) inside one of the sorted, disjoint `ranges`?
pub fn covered(ranges: &[Span], offset: u64, len: u64) -> bool {
    let i = ranges.partition_point(|r| r.end <= offset);
    ranges.get(i).is_some_and(|r| r.holds(offset, len))
}

/// The writes no later write overlaps, latest first: only those hold what they wrote.
pub fn intact(written: &[(u64, u32)]) -> Vec<(u64, u32)> {
    use std::collections::BTreeMap;
    // Union of the ranges written later: start -> end, disjoint.
    let mut later: BTreeMap<u64, u64> = BTreeMap::new();
    let mut out = Vec::new();
    for &(o, l) in written.iter().rev() {
        let end = o + l as u64;
        let before = later.range(..end).next_back().map(|(s, e)| (*s, *e));
        let overlaps = before.is_some_and(|(_, e)| e > o);
        if !overlaps {
            out.push((o, l));
        }
        // Merge [o, end) into the union.
        let (mut s, mut e) = (o, end);
        let touching: Vec<(u64, u64)> = later
            .range(..=end)
            .rev()
            .take_while(|(_, ce)| **ce >= o)
            .map(|(a, b)| (*a, *b))
            .collect();
        for (a, b) in touching {
            later.remove(&a);
            s = s.min(a);
            e = e.max(b);
        }
        later.insert(s, e);
    }
    out
}

/// Reads back every block a job wrote (the last write at each offset), from the device: with
/// O_DIRECT when the job was direct (or the file system takes it), else after fdatasync and
/// dropping the file's cached pages.
pub fn read_back(
    (path, shift): (&std::path::Path, u64),
    written: &[(u64, u32)],
    v: &Verifier,
    direct: bool,
    fatal: bool,
    dump: bool,
) -> ReadBack {
    use std::os::unix::fs::FileExt;
    let mut out = ReadBack::default();
    let start = std::time::Instant::now();
    let mut blocks = intact(written);
    out.skipped = written.len() as u64 - blocks.len() as u64;
    blocks.sort_unstable();
    let file = match open_to_check(path, direct, &mut out) {
        Ok(f) => f,
        Err(e) => {
            out.io_error = Some(super::Failure::io("opening the file to verify it", &e));
            return out;
        }
    };
    let max = blocks.iter().map(|b| b.1 as usize).max().unwrap_or(0);
    let mut buf = crate::sys::AlignedBuf::new(max);
    for (offset, len) in blocks {
        let b = &mut buf[..len as usize];
        // The file's byte `offset - shift` holds the block stamped `offset` (a worker's files
        // share one offset space, file f from f x stride).
        if let Err(e) = file.read_exact_at(b, offset - shift) {
            out.io_error = Some(super::Failure::io("verify read", &e).at(offset - shift));
            break;
        }
        out.blocks += 1;
        out.bytes += len as u64;
        let bad = v.check(b, offset, !fatal);
        if !bad.is_empty() {
            out.errors += bad.len() as u64;
            if dump {
                let name = format!("{}.{offset}.received", path.display());
                let _ = std::fs::write(name, &b[..]);
            }
            out.first.get_or_insert_with(|| bad[0].clone());
            if fatal {
                break;
            }
        }
        if crate::stop::requested().is_some() {
            break;
        }
    }
    out.secs = start.elapsed().as_secs_f64();
    out
}

/// The file opened for the read back: with O_DIRECT when the job was direct (and the
/// filesystem takes it), else buffered after its cached pages are dropped, so that the blocks
/// come from the device; `out.how` says which.
fn open_to_check(
    path: &std::path::Path,
    direct: bool,
    out: &mut ReadBack,
) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let open = |flags: i32| {
        std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(flags)
            .open(path)
    };
    if let Some(Ok(f)) = direct.then(|| open(libc::O_DIRECT)) {
        out.how = "O_DIRECT";
        return Ok(f);
    }
    let f = open(0)?;
    f.sync_data()?;
    crate::sys::fadvise_dontneed(&f)?;
    out.how = "buffered, after dropping the file's cached pages";
    Ok(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verifier(kind: &str, interval: u64, pattern: &[u8]) -> Verifier {
        let v = Verify {
            kind: kind.into(),
            interval,
            pattern: pattern.to_vec(),
            ..Verify::default()
        };
        Verifier::new(&v, 42)
    }

    #[test]
    fn every_kind_catches_a_flipped_byte_and_passes_good_data() {
        for kind in [
            "md5", "crc32c", "crc32", "crc64", "sha1", "sha256", "sha512", "xxhash",
        ] {
            let v = verifier(kind, 0, &[]);
            let mut buf: Vec<u8> = (0..8192u32).map(|i| (i * 7 % 251) as u8).collect();
            v.stamp(&mut buf, 1 << 20);
            assert!(v.check(&buf, 1 << 20, true).is_empty(), "{kind}");
            buf[5000] ^= 1;
            let bad = v.check(&buf, 1 << 20, true);
            assert_eq!(bad.len(), 1, "{kind}");
            let text = bad[0].describe("/mnt/f");
            assert!(
                text.starts_with(&format!("{kind}: verify failed at file /mnt/f offset 1048576, length 8192 (requested block: offset=1048576, length=8192)")),
                "{text}"
            );
            assert!(
                text.contains("Expected CRC: ") && text.contains("Received CRC: "),
                "{text}"
            );
            // The same bytes read from another offset are a misplaced block.
            buf[5000] ^= 1;
            let bad = v.check(&buf, 0, true);
            assert!(
                matches!(bad[0].what, Bad::Offset { got: 1048576 }),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn only_intact_writes_are_read_back() {
        // 0..8k, then 4k..12k over it, then 0..4k again, then 16k..20k twice.
        let w = [
            (0, 8192),
            (4096, 8192),
            (0, 4096),
            (16384, 4096),
            (16384, 4096),
        ];
        let mut got = intact(&w);
        got.sort_unstable();
        assert_eq!(got, vec![(0, 4096), (4096, 8192), (16384, 4096)]);
    }

    #[test]
    fn intervals_patterns_and_meta() {
        let v = verifier("crc32c", 4096, &[]);
        let mut buf = vec![7u8; 16384];
        v.stamp(&mut buf, 0);
        buf[3 * 4096 + 100] = 0;
        buf[4096 + 9] = 1;
        let bad = v.check(&buf, 0, true);
        assert_eq!(
            bad.iter().map(|b| b.offset).collect::<Vec<_>>(),
            vec![4096, 12288]
        );
        assert_eq!(v.check(&buf, 0, false).len(), 1);
        let p = verifier("pattern", 0, &[0xde, 0xad]);
        let mut buf = vec![0u8; 4096];
        p.stamp(&mut buf, 0);
        assert_eq!(&buf[..4], &[0xde, 0xad, 0xde, 0xad]);
        buf[301] = 0;
        let bad = p.check(&buf, 0, true);
        assert_eq!(
            bad[0].what,
            Bad::Pattern {
                at: 301,
                expected: 0xad,
                received: 0
            }
        );
        let zeros = vec![0u8; 4096];
        let m = verifier("meta", 0, &[]).check(&zeros, 0, true);
        assert!(m[0]
            .describe("f")
            .starts_with("verify: bad magic header 00000000, wanted 66736256 at file f offset 0"));
    }
}
