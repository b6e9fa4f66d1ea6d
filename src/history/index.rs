//! Indexing: a study from its directory (at its end, and by `history rebuild`), and each record
//! the moment it is written (`Recorder`, the study's `store::Observer`), one transaction each.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rusqlite::{params, Transaction};

use super::fingerprint::{digest, fingerprint};
use super::{Db, HistoryError};
use crate::plan::workload::{job_of, WorkloadSpec};
use crate::store::{self, Manifest, Record};

/// What `index_study` did with a study directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Indexed {
    /// Indexed (its row's id).
    Study(i64),
    /// Left out: a copy of a study the history holds from another directory that still holds
    /// it. A study's run id keeps pointing at the directory it was indexed from: a copy is not
    /// another measurement, and indexing it must not move the original's entry.
    CopyOf { run_id: String, original: String },
}

fn status_text(m: &Manifest) -> String {
    serde_json::to_value(m.status)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_else(|| "unknown".into())
}

/// The study's own row, its targets (with their fingerprints) and workloads; its records stay.
fn put_study(
    tx: &Transaction,
    dir: &Path,
    m: &Manifest,
    extra_labels: &BTreeSet<String>,
) -> rusqlite::Result<i64> {
    let plan = serde_json::to_string(&m.plan).unwrap_or_default();
    let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let id: i64 = tx.query_row(
        "INSERT INTO studies (run_id, dir, started, finished, host, status, command, \
         fsbench_version, repeats, plan, indexed_at) VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11) \
         ON CONFLICT(run_id) DO UPDATE SET dir=excluded.dir, finished=excluded.finished, \
         status=excluded.status, plan=excluded.plan, indexed_at=excluded.indexed_at RETURNING id",
        params![
            m.run_id,
            dir.display().to_string(),
            m.created_at,
            m.finished_at,
            m.environment.hostname,
            status_text(m),
            m.command_line.join(" "),
            m.fsbench_version,
            m.plan.repeat,
            plan,
            crate::metrics::clock::now_rfc3339(),
        ],
        |r| r.get(0),
    )?;
    let mut labels: BTreeSet<String> = m.plan.targets.iter().map(|t| t.label.clone()).collect();
    labels.extend(m.targets.iter().map(|t| t.label.clone()));
    labels.extend(extra_labels.iter().cloned());
    for label in &labels {
        let fp = fingerprint(m, label);
        let spec = m.plan.targets.iter().find(|t| &t.label == label);
        tx.execute(
            "INSERT OR REPLACE INTO targets (study, label, spec, fs, fingerprint, fp_hash) \
             VALUES (?1,?2,?3,?4,?5,?6)",
            params![
                id,
                label,
                spec.map(|s| s.spec.as_str()).unwrap_or(label),
                spec.map(|s| s.fs.as_str()).unwrap_or(""),
                serde_json::to_string(&fp).unwrap_or_default(),
                digest(&fp),
            ],
        )?;
    }
    for w in &m.plan.workloads {
        tx.execute(
            "INSERT OR REPLACE INTO workloads (study, spec, name) VALUES (?1,?2,?3)",
            params![id, w.canonical(), w.name],
        )?;
    }
    Ok(id)
}

/// One record and its metrics, under its job (`job_of` the plan's workloads); a record measured
/// again replaces the one before.
fn put_record(
    tx: &Transaction,
    study: i64,
    workloads: &[WorkloadSpec],
    r: &Record,
) -> rusqlite::Result<()> {
    let outcome = serde_json::to_value(r.outcome)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    let evidence = r.evidence.as_ref().map(|e| {
        let mut e = e.clone();
        e.intervals.clear();
        serde_json::to_string(&e).unwrap_or_default()
    });
    let id: i64 = tx.query_row(
        "INSERT INTO records (study, target, workload, test, repeat, started, duration_s, \
         outcome, less_work, limiter, limiter_rule, evidence) \
         VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12) \
         ON CONFLICT(study, target, workload, test, repeat) DO UPDATE SET \
         started=excluded.started, duration_s=excluded.duration_s, outcome=excluded.outcome, \
         less_work=excluded.less_work, limiter=excluded.limiter, \
         limiter_rule=excluded.limiter_rule, evidence=excluded.evidence RETURNING id",
        params![
            study,
            r.target,
            job_of(workloads, &r.workload),
            r.test,
            r.repeat,
            r.started_at,
            r.duration_s,
            outcome,
            r.less_work().is_some(),
            r.limiter.as_ref().map(|l| l.kind.word()),
            r.limiter.as_ref().map(|l| l.rule.as_str()),
            evidence,
        ],
        |row| row.get(0),
    )?;
    tx.execute("DELETE FROM metrics WHERE record = ?1", [id])?;
    let mut ins =
        tx.prepare_cached("INSERT INTO metrics (record, name, value) VALUES (?1,?2,?3)")?;
    for (k, v) in &r.metrics {
        if v.is_finite() {
            ins.execute(params![id, k, v])?;
        }
    }
    Ok(())
}

impl Db {
    /// Runs `f` in one immediate transaction and commits it; SQLite's errors named with the
    /// database's path.
    fn in_transaction<T>(
        &mut self,
        f: impl FnOnce(&Transaction) -> rusqlite::Result<T>,
    ) -> Result<T, HistoryError> {
        let path = self.path.clone();
        let sql = |e| super::classify(&path, e);
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(sql)?;
        let out = f(&tx).map_err(sql)?;
        tx.commit().map_err(sql)?;
        Ok(out)
    }

    /// Indexes a whole study from its directory, replacing what the database held of it;
    /// a copy of a study indexed from a directory that still holds it is left out.
    pub fn index_study(&mut self, dir: &Path) -> Result<Indexed, HistoryError> {
        let m = store::read_manifest(dir)?;
        let records = store::load_results(dir)?;
        if let Some(original) = self.original_of(dir, &m.run_id)? {
            return Ok(Indexed::CopyOf {
                run_id: m.run_id,
                original,
            });
        }
        let labels = records.iter().map(|r| r.target.clone()).collect();
        self.in_transaction(|tx| {
            let id = put_study(tx, dir, &m, &labels)?;
            tx.execute("DELETE FROM records WHERE study = ?1", [id])?;
            for r in &records {
                put_record(tx, id, &m.plan.workloads, r)?;
            }
            Ok(Indexed::Study(id))
        })
    }

    /// The directory the history holds `run_id` from, when it is not `dir` and still holds
    /// that study.
    fn original_of(&self, dir: &Path, run_id: &str) -> Result<Option<String>, HistoryError> {
        let held: Option<String> = self
            .conn
            .query_row("SELECT dir FROM studies WHERE run_id = ?1", [run_id], |r| {
                r.get(0)
            })
            .map(Some)
            .or_else(|e| match e {
                rusqlite::Error::QueryReturnedNoRows => Ok(None),
                e => Err(super::classify(&self.path, e)),
            })?;
        let here = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
        Ok(held.filter(|h| {
            Path::new(h) != here
                && store::read_manifest(Path::new(h)).is_ok_and(|o| o.run_id == run_id)
        }))
    }

    /// The study's row (from its manifest as it is now), for the records that follow.
    pub fn begin_study(&mut self, dir: &Path, m: &Manifest) -> Result<i64, HistoryError> {
        self.in_transaction(|tx| put_study(tx, dir, m, &BTreeSet::new()))
    }

    /// One record, in a transaction of its own.
    pub fn add_record(
        &mut self,
        study: i64,
        workloads: &[WorkloadSpec],
        r: &Record,
    ) -> Result<(), HistoryError> {
        self.in_transaction(|tx| put_record(tx, study, workloads, r))
    }
}

/// Indexes a study's records as they are written, and the whole study at its end. A database
/// that cannot be opened or written is a warning, said once; the study goes on.
pub struct Recorder {
    path: PathBuf,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    db: Option<Db>,
    study: Option<i64>,
    /// The plan's workloads, which name each record's job.
    workloads: Vec<WorkloadSpec>,
    /// The target and repeat of the last record: a new one reads the manifest again (it holds the
    /// targets torn down since, with their options, for the fingerprints).
    last: Option<(String, u32)>,
    failed: bool,
}

impl Recorder {
    pub fn new(path: &Path) -> Recorder {
        Recorder {
            path: path.to_path_buf(),
            state: Mutex::new(State::default()),
        }
    }

    /// Whether the database could not be written (the warning was said).
    #[cfg(test)]
    pub fn failed(&self) -> bool {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).failed
    }

    fn warn(&self, st: &mut State, e: &HistoryError) {
        if !st.failed {
            crate::out::eline!("fsbench: warning: the study is not in the history: {e} (the study itself is complete in its directory; add it later with `fsbench history rebuild DIR`)");
        }
        st.failed = true;
    }
}

impl store::Observer for Recorder {
    /// The study as it ended: indexed again whole from its directory (its status, the targets
    /// as provisioned, the records set aside by a resume gone).
    fn finish(&self, dir: &Path) {
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if st.failed {
            return;
        }
        let r = match st.db.take() {
            Some(db) => Ok(db),
            None => Db::open(&self.path),
        }
        .and_then(|mut db| db.index_study(dir).map(|_| db));
        match r {
            Ok(db) => st.db = Some(db),
            Err(e) => self.warn(&mut st, &e),
        }
    }

    fn record(&self, dir: &Path, rec: &Record) {
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if st.failed {
            return;
        }
        let here = (rec.target.clone(), rec.repeat);
        let known = st.study.filter(|_| st.last.as_ref() == Some(&here));
        let s = &mut *st;
        let r = (|| {
            let db = match &mut s.db {
                Some(db) => db,
                empty => empty.insert(Db::open(&self.path)?),
            };
            let study = match known {
                Some(id) => id,
                None => {
                    let m = store::read_manifest(dir)?;
                    s.workloads = m.plan.workloads.clone();
                    db.begin_study(dir, &m)?
                }
            };
            db.add_record(study, &s.workloads, rec)?;
            Ok(study)
        })();
        match r {
            Ok(id) => {
                st.study = Some(id);
                st.last = Some(here);
            }
            Err(e) => self.warn(&mut st, &e),
        }
    }
}
