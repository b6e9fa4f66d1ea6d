//! Parts of a job: how written blocks are checked (fio's verify), and how a worker moves
//! between its several files (fio's file_service_type).

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
