//! The history's schema, versioned by `PRAGMA user_version`: each migration takes the database
//! from the version before it to its own, in one transaction. A database of a newer version is
//! refused (an older fsbench must not write what it does not know).

use std::path::Path;

use rusqlite::Connection;

use super::{classify, HistoryError};

/// Version 1: studies, their targets (with the environment fingerprint) and workloads, records,
/// and each record's metrics. Version 2: indexes for the queries of `history` and `check`, and
/// the time a study was last indexed.
pub(crate) const MIGRATIONS: &[&str] = &[
    r#"
CREATE TABLE studies (
    id INTEGER PRIMARY KEY,
    run_id TEXT NOT NULL UNIQUE,
    dir TEXT NOT NULL,
    started TEXT NOT NULL,
    finished TEXT,
    host TEXT NOT NULL,
    status TEXT NOT NULL,
    command TEXT NOT NULL,
    fsbench_version TEXT NOT NULL,
    repeats INTEGER NOT NULL,
    plan TEXT NOT NULL
);
CREATE TABLE targets (
    study INTEGER NOT NULL REFERENCES studies(id) ON DELETE CASCADE,
    label TEXT NOT NULL,
    spec TEXT NOT NULL,
    fs TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    fp_hash TEXT NOT NULL,
    PRIMARY KEY (study, label)
);
CREATE TABLE workloads (
    study INTEGER NOT NULL REFERENCES studies(id) ON DELETE CASCADE,
    spec TEXT NOT NULL,
    name TEXT NOT NULL,
    PRIMARY KEY (study, spec)
);
CREATE TABLE records (
    id INTEGER PRIMARY KEY,
    study INTEGER NOT NULL REFERENCES studies(id) ON DELETE CASCADE,
    target TEXT NOT NULL,
    workload TEXT NOT NULL,
    test TEXT NOT NULL,
    repeat INTEGER NOT NULL,
    started TEXT NOT NULL,
    duration_s REAL NOT NULL,
    outcome TEXT NOT NULL,
    less_work INTEGER NOT NULL,
    UNIQUE (study, target, workload, test, repeat)
);
CREATE TABLE metrics (
    record INTEGER NOT NULL REFERENCES records(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    value REAL NOT NULL,
    PRIMARY KEY (record, name)
) WITHOUT ROWID;
"#,
    r#"
CREATE INDEX records_figure ON records (target, workload, test);
CREATE INDEX studies_started ON studies (started);
ALTER TABLE studies ADD COLUMN indexed_at TEXT;
"#,
];

/// The schema version this fsbench writes.
pub const VERSION: i64 = MIGRATIONS.len() as i64;

/// Brings the database to `VERSION`; refuses a newer one.
pub(crate) fn migrate(conn: &mut Connection, path: &Path) -> Result<(), HistoryError> {
    migrate_to(conn, path, VERSION)
}

/// Brings the database to `target` (tests stop at an earlier version).
pub(crate) fn migrate_to(
    conn: &mut Connection,
    path: &Path,
    target: i64,
) -> Result<(), HistoryError> {
    let found: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(|e| classify(path, e))?;
    if found > VERSION {
        return Err(HistoryError::Newer {
            path: path.display().to_string(),
            found,
            known: VERSION,
        });
    }
    for v in found..target {
        // IMMEDIATE: two processes migrating at once take turns (the busy timeout), and the
        // second sees the version the first wrote.
        let tx = conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(|e| classify(path, e))?;
        let now: i64 = tx
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(|e| classify(path, e))?;
        if now > v {
            continue;
        }
        tx.execute_batch(MIGRATIONS[v as usize])
            .map_err(|e| classify(path, e))?;
        tx.execute_batch(&format!("PRAGMA user_version = {}", v + 1))
            .map_err(|e| classify(path, e))?;
        tx.commit().map_err(|e| classify(path, e))?;
    }
    Ok(())
}
