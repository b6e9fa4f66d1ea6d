//! Opening the history. Where: never through a final symbolic link (the database, or its -wal,
//! -shm and -journal files), never a special file, never in /proc, /sys, /dev or a kernel
//! filesystem (`sys::outfile`); SQLite opens it with SQLITE_OPEN_NOFOLLOW. Whose: a database
//! that is not fsbench's is refused before anything is written to it (`schema::identify`).
//! How: a writer creates it, switches it to WAL and migrates it; a reader opens it read-only,
//! immutable where a read-only place leaves WAL no shared-memory file, and writes nothing.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

use super::schema::{self, Found};
use super::{classify, Db, HistoryError, BUSY_WAIT_S};
use crate::sys::outfile;

/// The files SQLite keeps beside a database.
const SIBLINGS: [&str; 3] = ["-wal", "-shm", "-journal"];

fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

fn refused(e: std::io::Error) -> HistoryError {
    HistoryError::Refused { why: e.to_string() }
}

/// Refuses a history path fsbench must not write (a final symbolic link, a special file or a
/// directory, a kernel filesystem), and the same of its -wal, -shm and -journal files. A
/// directory that would be made for it is checked as the first of them would be made.
pub fn check_path(path: &Path) -> Result<(), HistoryError> {
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if !parent.exists() {
        let mut first = parent;
        while let Some(up) = first
            .parent()
            .filter(|u| !u.as_os_str().is_empty() && !u.exists())
        {
            first = up;
        }
        return outfile::check(first).map_err(refused);
    }
    outfile::check(path).map_err(refused)?;
    for s in SIBLINGS {
        outfile::check(&sibling(path, s)).map_err(refused)?;
    }
    Ok(())
}

/// Before a study runs: a history path it must not write (a symbolic link, a special file, a
/// kernel filesystem), or another application's database there, refuses the study (nothing is
/// made). Anything else wrong (a directory, damage, a version it cannot write) is said when the
/// first record is indexed, as a warning, and the study goes on.
pub fn preflight(path: &Path) -> Result<(), HistoryError> {
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir()) {
        return Ok(());
    }
    check_path(path)?;
    not_foreign(path)
}

/// Another application's database is refused from what its file holds, opened immutable: no
/// lock taken, no -wal or -shm made beside it, nothing written. (A foreign database whose
/// tables are all still in its -wal file is found by the connection that opens it next,
/// before it writes anything.) Whatever else the file is, the next open says.
fn not_foreign(path: &Path) -> Result<(), HistoryError> {
    if !std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file() && m.len() > 0) {
        return Ok(());
    }
    match reader(path, true) {
        Err(e @ HistoryError::Foreign { .. }) => Err(e),
        _ => Ok(()),
    }
}

/// `path` as an SQLite URI that opens it immutable: read-only, no locks, no -shm or -wal.
fn immutable_uri(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut s = String::from("file:");
    for &b in path.as_os_str().as_bytes() {
        if b.is_ascii_alphanumeric() || b"/-_.~".contains(&b) {
            s.push(b as char);
        } else {
            s.push_str(&format!("%{b:02X}"));
        }
    }
    s + "?immutable=1"
}

/// A read-only connection and what it holds.
fn reader(path: &Path, immutable: bool) -> Result<(Connection, Found), HistoryError> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
        | OpenFlags::SQLITE_OPEN_NO_MUTEX
        | OpenFlags::SQLITE_OPEN_NOFOLLOW;
    let conn = if immutable {
        Connection::open_with_flags(immutable_uri(path), flags | OpenFlags::SQLITE_OPEN_URI)
    } else {
        Connection::open_with_flags(path, flags)
    }
    .map_err(|e| cannot_read(path, classify(path, e)))?;
    conn.busy_timeout(Duration::from_secs(BUSY_WAIT_S))
        .map_err(|e| cannot_read(path, classify(path, e)))?;
    let found = schema::identify(&conn, path).map_err(|e| cannot_read(path, e))?;
    Ok((conn, found))
}

/// A reader's failure: a place it cannot open is "cannot read", not "cannot write".
fn cannot_read(path: &Path, e: HistoryError) -> HistoryError {
    match e {
        HistoryError::Path { why, .. } => HistoryError::CannotRead {
            path: path.display().to_string(),
            why: why.trim_start_matches("cannot write it ").to_string(),
        },
        other => other,
    }
}

impl Db {
    /// Opens (creating it and its directory when missing) and migrates the database.
    pub fn open(path: &Path) -> Result<Db, HistoryError> {
        let shown = path.display().to_string();
        check_path(path)?;
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|e| HistoryError::Path {
                path: shown.clone(),
                why: format!("cannot create {}: {e}", parent.display()),
            })?;
        }
        not_foreign(path)?;
        // SQLite can answer "database is locked" at once, without its busy handler, while
        // other connections create the same database and switch it to WAL: start again then.
        let start = std::time::Instant::now();
        loop {
            let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX
                | OpenFlags::SQLITE_OPEN_NOFOLLOW;
            let conn = Connection::open_with_flags(path, flags).map_err(|e| classify(path, e))?;
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

    /// Opens an existing database to read it (list, trend, check): read-only, immutable on a
    /// read-only place; nothing is created or written. A database of an older schema is brought
    /// up to date first, where it can be written.
    pub fn open_read(path: &Path) -> Result<Db, HistoryError> {
        check_path(path)?;
        if std::fs::symlink_metadata(path).is_err() {
            return Err(HistoryError::Missing {
                path: path.display().to_string(),
            });
        }
        not_foreign(path)?;
        let (conn, found) = match reader(path, false) {
            Err(HistoryError::CannotRead { .. }) => reader(path, true)?,
            r => r?,
        };
        match found {
            Found::Empty => Err(HistoryError::Missing {
                path: path.display().to_string(),
            }),
            Found::Ours(v) if v < schema::VERSION => {
                drop(conn);
                Db::open(path).map_err(|e| match e {
                    HistoryError::Path { why, .. } => HistoryError::Older {
                        path: path.display().to_string(),
                        found: v,
                        known: schema::VERSION,
                        why,
                    },
                    e => e,
                })
            }
            Found::Ours(v) => {
                schema::verify(&conn, path, v)?;
                Ok(Db {
                    conn,
                    path: path.to_path_buf(),
                })
            }
        }
    }

    /// Whose the database is first (nothing written to another's: not even the checkpoint a
    /// closing connection makes of a WAL file), then WAL, then the schema.
    fn setup(&mut self) -> Result<(), HistoryError> {
        use rusqlite::config::DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE as NO_CKPT;
        let c = &self.conn;
        c.busy_timeout(Duration::from_secs(BUSY_WAIT_S))
            .map_err(|e| self.err(e))?;
        c.set_db_config(NO_CKPT, true).map_err(|e| self.err(e))?;
        schema::identify(c, &self.path)?;
        c.set_db_config(NO_CKPT, false).map_err(|e| self.err(e))?;
        c.query_row("PRAGMA journal_mode=WAL", [], |r| r.get::<_, String>(0))
            .map_err(|e| self.err(e))?;
        c.execute_batch("PRAGMA foreign_keys=ON; PRAGMA synchronous=NORMAL;")
            .map_err(|e| self.err(e))?;
        schema::migrate(&mut self.conn, &self.path)?;
        schema::verify(&self.conn, &self.path, schema::VERSION)
    }
}
