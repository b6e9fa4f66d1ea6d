//! The history: every study in one SQLite database (`history.db`), indexed as it is written, so
//! that `fsbench history` lists studies and draws trends and `fsbench check` gates a study
//! against an earlier one or against the history. The study directories stay the source of
//! truth: the database is an index of them, rebuilt from them by `fsbench history rebuild DIR...`.
//!
//! The schema is versioned (`PRAGMA user_version`, `schema.rs`); a database written by a newer
//! fsbench, one of a version no fsbench writes or whose tables do not match its version, or one
//! that is not a database, is refused with the command that rebuilds it; another application's
//! database is refused and left as it was (`open.rs`). Writes use WAL and a busy timeout, one
//! transaction per record, so two studies ending at once both land and a study killed mid-way
//! keeps what it had written; readers open it read-only and write nothing.

mod fingerprint;
mod index;
mod open;
mod query;
mod schema;

use std::path::{Path, PathBuf};

use rusqlite::Connection;

pub use fingerprint::digest;
pub use fingerprint::{differences, fingerprint};
pub use index::{Indexed, Recorder};
pub use open::preflight;
pub use query::{spread, ListFilter, Point};

/// Why the history could not be opened, read or written.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    /// The path cannot hold a database (a directory, an unwritable place).
    #[error("{path}: {why}: give --history a file path fsbench can write (or FSBENCH_HISTORY), or --no-history")]
    Path { path: String, why: String },
    /// A place fsbench does not write: a symbolic link, a special file, a kernel filesystem.
    #[error("{why}: give --history a regular file on a data filesystem (or FSBENCH_HISTORY), or --no-history")]
    Refused { why: String },
    /// A reading command that cannot open the database at all.
    #[error("{path}: cannot read it ({why}): give --history a history fsbench can read (or FSBENCH_HISTORY)")]
    CannotRead { path: String, why: String },
    /// No database there yet (a reading command).
    #[error("{path}: no history there yet (studies are indexed there as compare, study, audit, tune and run end): give --history the database you mean, or index existing studies with `fsbench history rebuild --history {path} DIR...`")]
    Missing { path: String },
    /// Not an SQLite database, or damaged.
    #[error("{path} is not a readable fsbench history ({why}): move it aside and rebuild it from the study directories with `fsbench history rebuild --history {path} DIR...`")]
    Corrupt { path: String, why: String },
    /// Another application's SQLite database: never written.
    #[error("{path} is another application's SQLite database, not an fsbench history (left as it is): give --history a new file or an fsbench history (or FSBENCH_HISTORY), or --no-history")]
    Foreign { path: String },
    /// Written by a newer fsbench.
    #[error("{path} has history schema {found}, newer than this fsbench's {known}: use the newer fsbench, or rebuild a database of this version with `fsbench history rebuild --history NEW.db DIR...`")]
    Newer {
        path: String,
        found: i64,
        known: i64,
    },
    /// A schema version no fsbench writes (below 0).
    #[error("{path} has history schema {found}, which no fsbench writes: move it aside and rebuild it with `fsbench history rebuild --history {path} DIR...`")]
    Unreadable { path: String, found: i64 },
    /// Tables that are not what the version says.
    #[error("{path}: its tables do not match the history schema version it says it has ({version}): {why}: move it aside and rebuild it with `fsbench history rebuild --history {path} DIR...`")]
    Stale {
        path: String,
        version: i64,
        why: String,
    },
    /// An older schema where it cannot be brought up to date.
    #[error("{path} has history schema {found}, older than this fsbench's {known}, and cannot be upgraded where it is ({why}): run any fsbench history command once where it can be written, or rebuild it elsewhere with `fsbench history rebuild --history NEW.db DIR...`")]
    Older {
        path: String,
        found: i64,
        known: i64,
        why: String,
    },
    /// A study directory that does not read.
    #[error("{0}")]
    Study(#[from] crate::store::StoreError),
    /// Any other database error (its text, where).
    #[error("{path}: {why}")]
    Sql { path: String, why: String },
    /// Locked by other writers beyond the busy timeout and the retries.
    #[error("{path}: {why} (other fsbench processes kept it locked for over {BUSY_WAIT_S} s)")]
    Busy { path: String, why: String },
}

/// How long opening the database waits, retrying, while other processes hold it locked.
const BUSY_WAIT_S: u64 = 30;

/// Where the history is: `--history`/`FSBENCH_HISTORY`, else as root `/var/lib/fsbench`, else
/// `$XDG_DATA_HOME/fsbench` (`~/.local/share/fsbench`). None with `--no-history`.
pub fn default_path(is_root: bool) -> PathBuf {
    if is_root {
        return PathBuf::from("/var/lib/fsbench/history.db");
    }
    let data = std::env::var_os("XDG_DATA_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))
        .unwrap_or_else(|| PathBuf::from("."));
    data.join("fsbench/history.db")
}

/// An open history database.
pub struct Db {
    conn: Connection,
    path: PathBuf,
}

impl Db {
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn err(&self, e: rusqlite::Error) -> HistoryError {
        classify(&self.path, e)
    }
}

/// SQLite's own message, without the statement it came from (a failed migration would
/// otherwise print the schema's SQL).
fn message(e: &rusqlite::Error) -> String {
    match e {
        rusqlite::Error::SqlInputError { msg, .. } => msg.clone(),
        rusqlite::Error::SqliteFailure(_, Some(msg)) => msg.clone(),
        e => e.to_string(),
    }
}

/// A database error as one of ours: damage and read-only places get their own words.
fn classify(path: &Path, e: rusqlite::Error) -> HistoryError {
    use rusqlite::ErrorCode as C;
    let shown = path.display().to_string();
    let why = message(&e);
    match e.sqlite_error_code() {
        Some(C::NotADatabase) | Some(C::DatabaseCorrupt) => {
            HistoryError::Corrupt { path: shown, why }
        }
        Some(C::ReadOnly) | Some(C::CannotOpen) | Some(C::PermissionDenied) => HistoryError::Path {
            path: shown,
            why: format!("cannot write it ({why})"),
        },
        Some(C::DatabaseBusy) | Some(C::DatabaseLocked) => HistoryError::Busy { path: shown, why },
        _ => HistoryError::Sql { path: shown, why },
    }
}

#[cfg(test)]
mod tests;
