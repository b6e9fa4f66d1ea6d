//! Parts of a job: how written blocks are checked (fio's verify), how a worker moves between its
//! several files (fio's file_service_type), and the failures it goes past (continue_on_error).

use serde::{Deserialize, Serialize};

/// How written blocks are checked (fio `verify=` and its companions).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Verify {
    /// md5, crc32c, crc32, crc64, sha1, sha256, sha512, xxhash, meta, pattern (or null: none).
    pub kind: String,
    /// Read back what the job wrote once its writing is done (fio `do_verify`, default 1).
    pub after_write: bool,
    /// Only verify: read the region back and check it, writing nothing (fio `verify_only`).
    pub only: bool,
    /// Bytes covered by each header (fio `verify_interval`; 0: the block size).
    pub interval: u64,
    /// Where in each interval the header goes (fio `verify_offset`).
    pub offset: u64,
    /// The bytes written and checked (fio `verify_pattern`); for `pattern`, and after the header
    /// of the other kinds.
    pub pattern: Vec<u8>,
    /// Stop at the first bad block (fio `verify_fatal`); otherwise every block is checked and
    /// counted.
    pub fatal: bool,
    /// Write each bad block's received and expected bytes next to the file (fio `verify_dump`).
    pub dump: bool,
    /// Verify after every N blocks written (fio `verify_backlog`; 0: at the end).
    pub backlog: u64,
}

impl Default for Verify {
    fn default() -> Verify {
        Verify {
            kind: "crc32c".into(),
            after_write: true,
            only: false,
            interval: 0,
            offset: 0,
            pattern: Vec::new(),
            fatal: false,
            dump: false,
            backlog: 0,
        }
    }
}

/// fio's file_service_type: which of a worker's files the next I/O goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum FileServiceKind {
    /// The next file after `batch` I/Os (fio's default).
    #[default]
    Roundrobin,
    /// A file chosen at random every `batch` I/Os.
    Random,
    /// Each file to its end before the next.
    Sequential,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileService {
    pub kind: FileServiceKind,
    /// I/Os before moving on (fio's `:N` suffix), default 1.
    pub batch: u32,
}

impl Default for FileService {
    fn default() -> FileService {
        FileService {
            kind: FileServiceKind::Roundrobin,
            batch: 1,
        }
    }
}

/// A kind of failed operation a job may go past.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failing {
    Read,
    Write,
    Verify,
}

impl Failing {
    const ALL: [(Failing, &'static str); 3] = [
        (Failing::Read, "read"),
        (Failing::Write, "write"),
        (Failing::Verify, "verify"),
    ];
}

/// The failures a job counts and goes past (fio's continue_on_error), stored as their names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(into = "Vec<String>", from = "Vec<String>")]
pub struct ContinueOn(u8);

impl ContinueOn {
    pub const NONE: ContinueOn = ContinueOn(0);

    /// The set of these.
    pub fn of(kinds: &[Failing]) -> ContinueOn {
        kinds.iter().fold(ContinueOn::NONE, |s, k| s.with(*k))
    }

    pub fn with(self, k: Failing) -> ContinueOn {
        ContinueOn(self.0 | 1 << k as u8)
    }

    pub fn contains(self, k: Failing) -> bool {
        self.0 & 1 << k as u8 != 0
    }

    pub fn is_empty(&self) -> bool {
        self.0 == 0
    }
}

impl From<ContinueOn> for Vec<String> {
    fn from(c: ContinueOn) -> Vec<String> {
        Failing::ALL
            .iter()
            .filter(|k| c.contains(k.0))
            .map(|k| k.1.to_string())
            .collect()
    }
}

impl From<Vec<String>> for ContinueOn {
    fn from(names: Vec<String>) -> ContinueOn {
        Failing::ALL
            .iter()
            .filter(|k| names.iter().any(|n| n == k.1))
            .fold(ContinueOn::NONE, |s, k| s.with(k.0))
    }
}

/// Which jobs end when a job with exitall ends (fio's exit_what).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExitWhat {
    /// The jobs of its reporting group (fio's default).
    #[default]
    Group,
    /// Every running job (the phase's); the next stonewalled group then runs.
    Stonewall,
    /// Every job: the running ones end, the later groups do not run.
    All,
}

/// What a job tells the kernel of its access pattern when it opens its files (fio's
/// fadvise_hint, posix_fadvise(2)): on a buffered file it sets the readahead.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fadvise {
    /// By the job's rw: random for random jobs, sequential otherwise (fio's fadvise_hint=1,
    /// its default).
    #[default]
    Pattern,
    /// Nothing (fadvise_hint=0).
    Off,
    Sequential,
    Random,
}

/// Where glibc's malloc puts a large allocation (one mmap'd chunk): 16 bytes past a page
/// boundary, after the chunk's header. fio's buffers of a buffered job sit there.
pub const MALLOC_LEAD: usize = 16;

impl super::Job {
    /// How far past a page boundary the job's buffers start, by fio's rule (backend.c): with
    /// O_DIRECT or mem_align, a page boundary plus mem_align; otherwise where fio's memory came
    /// from (malloc: `MALLOC_LEAD`; mmap or shm: a page boundary).
    pub fn buffer_lead(&self, direct: bool) -> usize {
        match self.mem_align {
            Some(a) => a as usize,
            None if self.malloc_buffers && !direct => MALLOC_LEAD,
            None => 0,
        }
    }

    /// How many completions one reap takes at most, by fio's rule: iodepth_batch_complete_max,
    /// raised to iodepth_batch_complete_min (default 1) when below it, and at least 1.
    pub fn completions_per_reap(&self) -> usize {
        let min = self.reap_min.unwrap_or(1);
        self.reap_max.unwrap_or(0).max(min).max(1) as usize
    }
}

/// fio's strided zones: I/O stays in a zone of `range` bytes (0: `size`) until `size` bytes are
/// done, then moves on by `range + skip` (wrapping at the end of the region).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Strided {
    pub size: u64,
    pub range: u64,
    pub skip: u64,
}

impl Strided {
    /// As run: the zone's range is its size when zonerange is not given.
    pub fn resolved(self) -> Strided {
        Strided {
            range: if self.range == 0 {
                self.size
            } else {
                self.range
            },
            ..self
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// fio's rules: one completion per reap unless iodepth_batch_complete_max (or a larger
    /// minimum) says more; buffers on a page boundary unless a fio job file's malloc'd buffers
    /// are buffered, or mem_align moves them.
    #[test]
    fn reaps_and_buffer_leads_follow_fio() {
        let m = |min, max| super::super::Job {
            reap_min: min,
            reap_max: max,
            ..Default::default()
        };
        assert_eq!(m(None, None).completions_per_reap(), 1);
        assert_eq!(m(None, Some(16)).completions_per_reap(), 16);
        assert_eq!(m(Some(4), None).completions_per_reap(), 4);
        assert_eq!(m(Some(4), Some(2)).completions_per_reap(), 4);
        assert_eq!(m(Some(0), Some(0)).completions_per_reap(), 1);
        let fio = super::super::Job {
            malloc_buffers: true,
            ..Default::default()
        };
        assert_eq!(fio.buffer_lead(false), MALLOC_LEAD);
        assert_eq!(fio.buffer_lead(true), 0);
        assert_eq!(super::super::Job::default().buffer_lead(false), 0);
        let aligned = super::super::Job {
            mem_align: Some(512),
            ..fio
        };
        assert_eq!(aligned.buffer_lead(true), 512);
        assert_eq!(aligned.buffer_lead(false), 512);
    }
}
