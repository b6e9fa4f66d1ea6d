//! The history's schema, versioned by `PRAGMA user_version`: each migration takes the database
//! from the version before it to its own, in one transaction. A database of a newer version is
//! refused (an older fsbench must not write what it does not know), and so is one whose version
//! no fsbench writes or whose tables are not what its version says. fsbench's databases carry
//! its `PRAGMA application_id` (from version 3); another application's database is refused
//! before anything is written to it (`identify`).

use std::path::Path;

use rusqlite::{params, Connection, Transaction};

use super::{classify, message, HistoryError};
use crate::plan::workload::{job_of, WorkloadSpec};

/// fsbench's `PRAGMA application_id`: "fsbh".
pub(crate) const APP_ID: i64 = 0x6673_6268;

/// One migration: statements, or code where SQL alone cannot say it.
pub(crate) enum Step {
    Sql(&'static str),
    Code(fn(&Transaction) -> rusqlite::Result<()>),
}

/// Version 1: studies, their targets (with the environment fingerprint) and workloads, records,
/// and each record's metrics. Version 2: indexes for the queries of `history` and `check`, and
/// the time a study was last indexed. Version 3: fsbench's application id, and records and
/// workloads keyed by their job (`WorkloadSpec::canonical`), no longer by the workload's name
/// (every block job was `block`).
pub(crate) const MIGRATIONS: &[Step] = &[
    Step::Sql(
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
    ),
    Step::Sql(
        r#"
CREATE INDEX records_figure ON records (target, workload, test);
CREATE INDEX studies_started ON studies (started);
ALTER TABLE studies ADD COLUMN indexed_at TEXT;
"#,
    ),
    Step::Code(by_job),
];

/// Every table and column the queries read: a database whose version says it has them and
/// does not is refused as stale, not answered with an SQL error.
const TABLES: &[(&str, &str)] = &[
    (
        "studies",
        "id, run_id, dir, started, finished, host, status, command, fsbench_version, repeats, \
         plan, indexed_at",
    ),
    ("targets", "study, label, spec, fs, fingerprint, fp_hash"),
    ("workloads", "study, spec, name"),
    (
        "records",
        "id, study, target, workload, test, repeat, started, duration_s, outcome, less_work",
    ),
    ("metrics", "record, name, value"),
];

/// The indexes the migrations make (with the tables, every name fsbench puts in a database).
const INDEXES: &[&str] = &["records_figure", "studies_started"];

/// The schema version this fsbench writes.
pub const VERSION: i64 = MIGRATIONS.len() as i64;

/// Version 3: each study's records and workloads under their job's canonical spec, from the
/// plan the study row holds (a plan that does not read leaves its study as it was).
fn by_job(tx: &Transaction) -> rusqlite::Result<()> {
    tx.execute_batch(&format!("PRAGMA application_id = {APP_ID}"))?;
    let studies: Vec<(i64, String)> = tx
        .prepare("SELECT id, plan FROM studies")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<Result<_, _>>()?;
    for (id, plan) in studies {
        let Some(workloads) = serde_json::from_str::<serde_json::Value>(&plan)
            .ok()
            .and_then(|v| serde_json::from_value::<Vec<WorkloadSpec>>(v["workloads"].clone()).ok())
        else {
            continue;
        };
        for w in &workloads {
            rekey(tx, "workloads", "spec", id, &w.spec, &w.canonical())?;
        }
        let recorded: Vec<String> = tx
            .prepare("SELECT DISTINCT workload FROM records WHERE study = ?1")?
            .query_map([id], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        for old in recorded {
            rekey(
                tx,
                "records",
                "workload",
                id,
                &old,
                &job_of(&workloads, &old),
            )?;
        }
    }
    Ok(())
}

/// A study's rows of `table` from `old` to `new` in `column`; a row that would clash with one
/// already there (one job written two ways) goes, with its metrics.
fn rekey(
    tx: &Transaction,
    table: &str,
    column: &str,
    study: i64,
    old: &str,
    new: &str,
) -> rusqlite::Result<()> {
    if old == new {
        return Ok(());
    }
    tx.execute(
        &format!("UPDATE OR IGNORE {table} SET {column} = ?1 WHERE study = ?2 AND {column} = ?3"),
        params![new, study, old],
    )?;
    tx.execute(
        &format!("DELETE FROM {table} WHERE study = ?1 AND {column} = ?2"),
        params![study, old],
    )?;
    Ok(())
}

/// What a database holds, read before anything is written to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Found {
    /// No tables and no version: a new file, made into a history by its first writer.
    Empty,
    /// fsbench's, at this version (0 < version <= VERSION).
    Ours(i64),
}

/// Whose the database is and at which version; another application's database, a version no
/// fsbench writes, or a newer one is an error. Reads only.
pub(crate) fn identify(conn: &Connection, path: &Path) -> Result<Found, HistoryError> {
    let err = |e| classify(path, e);
    // One read transaction: the version and the tables as one writer left them, never a
    // version read before another process's first migration and its tables after.
    let tx = conn.unchecked_transaction().map_err(err)?;
    let found = identify_in(&tx, path);
    tx.finish().map_err(err)?;
    found
}

fn identify_in(conn: &Connection, path: &Path) -> Result<Found, HistoryError> {
    let err = |e| classify(path, e);
    let app: i64 = conn
        .query_row("PRAGMA application_id", [], |r| r.get(0))
        .map_err(err)?;
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(err)?;
    let names: Vec<String> = conn
        .prepare(
            "SELECT name FROM sqlite_schema WHERE substr(name, 1, 7) <> 'sqlite_' ORDER BY name",
        )
        .and_then(|mut st| st.query_map([], |r| r.get(0))?.collect())
        .map_err(err)?;
    let shown = path.display().to_string();
    let ours = |n: &String| TABLES.iter().any(|(t, _)| t == n) || INDEXES.contains(&n.as_str());
    if (app != 0 && app != APP_ID) || (app == 0 && !names.iter().all(ours)) {
        return Err(HistoryError::Foreign { path: shown });
    }
    if version < 0 {
        return Err(HistoryError::Unreadable {
            path: shown,
            found: version,
        });
    }
    if version > VERSION {
        return Err(HistoryError::Newer {
            path: shown,
            found: version,
            known: VERSION,
        });
    }
    match (version, names.is_empty()) {
        (0, true) => Ok(Found::Empty),
        (0, false) => Err(HistoryError::Stale {
            path: shown,
            version,
            why: "it holds fsbench's tables without a schema version".into(),
        }),
        (v, true) => Err(HistoryError::Stale {
            path: shown,
            version: v,
            why: "it holds none of the tables".into(),
        }),
        (v, false) => Ok(Found::Ours(v)),
    }
}

/// Every table and column the queries read is there (statements prepared, nothing run).
pub(crate) fn verify(conn: &Connection, path: &Path, version: i64) -> Result<(), HistoryError> {
    for (table, cols) in TABLES {
        conn.prepare(&format!("SELECT {cols} FROM {table} LIMIT 0"))
            .map_err(|e| stale(path, version, e))?;
    }
    Ok(())
}

/// A failed statement on a database that says it has the schema: stale, unless the failure
/// is damage, a lock or a read-only place, which keep their own words.
fn stale(path: &Path, version: i64, e: rusqlite::Error) -> HistoryError {
    let why = message(&e);
    match classify(path, e) {
        HistoryError::Sql { path, .. } => HistoryError::Stale { path, version, why },
        other => other,
    }
}

/// Brings the database to `VERSION` (the caller has identified it as fsbench's).
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
    if !(0..=VERSION).contains(&found) {
        // Another process wrote a version since it was identified: identify says what it is.
        identify(conn, path)?;
    }
    for v in found.max(0)..target {
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
        match &MIGRATIONS[v as usize] {
            Step::Sql(sql) => tx.execute_batch(sql),
            Step::Code(f) => f(&tx),
        }
        .map_err(|e| stale(path, v, e))?;
        tx.execute_batch(&format!("PRAGMA user_version = {}", v + 1))
            .map_err(|e| classify(path, e))?;
        tx.commit().map_err(|e| classify(path, e))?;
    }
    Ok(())
}
