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
