//! The history: every study in one SQLite database (`history.db`), indexed as it is written, so
//! that `fsbench history` lists studies and draws trends and `fsbench check` gates a study
//! against an earlier one or against the history. The study directories stay the source of
//! truth: the database is an index of them, rebuilt from them by `fsbench history rebuild DIR...`.
//!
//! The schema is versioned (`PRAGMA user_version`, `schema.rs`); a database written by a newer
//! fsbench, or one that is not a database, is refused with the command that rebuilds it. Writes
//! use WAL and a busy timeout, one transaction per record, so two studies ending at once both land
//! and a study killed mid-way keeps what it had written.

mod fingerprint;
mod index;
mod query;
mod schema;

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::Connection;

pub use fingerprint::digest;
pub use fingerprint::{differences, fingerprint};
pub use index::Recorder;
pub use query::{spread, ListFilter, Point};

/// Why the history could not be opened, read or written.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    /// The path cannot hold a database (a directory, an unwritable place).
    #[error("{path}: {why}: give --history a file path fsbench can write (or FSBENCH_HISTORY), or --no-history")]
    Path { path: String, why: String },
    /// No database there yet (a reading command).
    #[error("{path}: no history there yet (studies are indexed there as compare, study, audit, tune and run end): give --history the database you mean, or index existing studies with `fsbench history rebuild --history {path} DIR...`")]
    Missing { path: String },
    /// Not an SQLite database, or damaged.
    #[error("{path} is not a readable fsbench history ({why}): move it aside and rebuild it from the study directories with `fsbench history rebuild --history {path} DIR...`")]
    Corrupt { path: String, why: String },
    /// Written by a newer fsbench.
    #[error("{path} has history schema {found}, newer than this fsbench's {known}: use the newer fsbench, or rebuild a database of this version with `fsbench history rebuild --history NEW.db DIR...`")]
    Newer {
        path: String,
        found: i64,
        known: i64,
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
    /// Opens (creating it and its directory when missing) and migrates the database.
    pub fn open(path: &Path) -> Result<Db, HistoryError> {
        let shown = path.display().to_string();
        if path.is_dir() {
            return Err(HistoryError::Path {
                path: shown,
                why: "is a directory".into(),
            });
        }
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|e| HistoryError::Path {
                path: shown.clone(),
                why: format!("cannot create {}: {e}", parent.display()),
            })?;
        }
        // SQLite can answer "database is locked" at once, without its busy handler, while
        // other connections create the same database and switch it to WAL: start again then.
        let start = std::time::Instant::now();
        loop {
            let conn = Connection::open(path).map_err(|e| classify(path, e))?;
            let mut db = Db {
                conn,
                path: path.to_path_buf(),
            };
            match db.setup() {
                Err(HistoryError::Busy { .. })
                    if start.elapsed() < Duration::from_secs(BUSY_WAIT_S) =>
                {
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(e) => return Err(e),
                Ok(()) => return Ok(db),
            }
        }
    }

    /// Opens an existing database without creating it (the readers: list, trend, check).
    pub fn open_existing(path: &Path) -> Result<Db, HistoryError> {
        if !path.exists() {
            return Err(HistoryError::Missing {
                path: path.display().to_string(),
            });
        }
        Db::open(path)
    }

    fn setup(&mut self) -> Result<(), HistoryError> {
        let c = &self.conn;
        c.busy_timeout(Duration::from_secs(BUSY_WAIT_S))
            .map_err(|e| self.err(e))?;
        // A file that is not a database fails on its first read: said as corrupt.
        c.query_row("PRAGMA journal_mode=WAL", [], |r| r.get::<_, String>(0))
            .map_err(|e| classify(&self.path, e))?;
        c.execute_batch("PRAGMA foreign_keys=ON; PRAGMA synchronous=NORMAL;")
            .map_err(|e| self.err(e))?;
        schema::migrate(&mut self.conn, &self.path)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn err(&self, e: rusqlite::Error) -> HistoryError {
        classify(&self.path, e)
    }
}

/// A database error as one of ours: damage and read-only places get their own words.
fn classify(path: &Path, e: rusqlite::Error) -> HistoryError {
    use rusqlite::ErrorCode as C;
    let shown = path.display().to_string();
    match e.sqlite_error_code() {
        Some(C::NotADatabase) | Some(C::DatabaseCorrupt) => HistoryError::Corrupt {
            path: shown,
            why: e.to_string(),
        },
        Some(C::ReadOnly) | Some(C::CannotOpen) | Some(C::PermissionDenied) => HistoryError::Path {
            path: shown,
            why: format!("cannot write it ({e})"),
        },
        Some(C::DatabaseBusy) | Some(C::DatabaseLocked) => HistoryError::Busy {
            path: shown,
            why: e.to_string(),
        },
        _ => HistoryError::Sql {
            path: shown,
            why: e.to_string(),
        },
    }
}

#[cfg(test)]
mod tests;
