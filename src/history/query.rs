//! What the history answers: the studies (filtered), a figure's series over studies (the trend,
//! and the earlier studies `check --against-history` compares with), the metrics it holds, and
//! the spread of a figure between studies on one fingerprint.

use std::collections::BTreeMap;

use rusqlite::params;

use super::{Db, HistoryError};

/// `fsbench history`'s filters: a target (its label or spec, in part), a workload (a job, or a
/// workload's name), a host, a date (studies started on or after it, `2026-11-01` or an RFC 3339
/// time).
#[derive(Debug, Clone, Default)]
pub struct ListFilter {
    pub target: Option<String>,
    pub workload: Option<String>,
    pub host: Option<String>,
    pub since: Option<String>,
}

/// One study as `fsbench history` lists it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Listed {
    pub run_id: String,
    pub dir: String,
    pub started: String,
    pub host: String,
    pub status: String,
    pub targets: Vec<String>,
    pub workloads: Vec<String>,
    pub records: i64,
}

/// One study's values of a figure (one per repeat), with the target's fingerprint there.
#[derive(Debug, Clone)]
pub struct Point {
    pub run_id: String,
    pub started: String,
    pub fp_hash: String,
    pub fingerprint: BTreeMap<String, String>,
    pub values: Vec<f64>,
}

impl Db {
    fn sql(&self) -> impl Fn(rusqlite::Error) -> HistoryError + '_ {
        |e| super::classify(&self.path, e)
    }

    /// The studies, oldest first.
    pub fn list(&self, f: &ListFilter) -> Result<Vec<Listed>, HistoryError> {
        let mut st = self
            .conn
            .prepare(
                "SELECT s.id, s.run_id, s.dir, s.started, s.host, s.status, \
                 (SELECT group_concat(label, ' ') FROM targets WHERE study = s.id), \
                 (SELECT group_concat(spec, ' ') FROM workloads WHERE study = s.id), \
                 (SELECT count(*) FROM records WHERE study = s.id) \
                 FROM studies s \
                 WHERE (?1 IS NULL OR EXISTS (SELECT 1 FROM targets t WHERE t.study = s.id \
                        AND (instr(t.label, ?1) > 0 OR instr(t.spec, ?1) > 0))) \
                 AND (?2 IS NULL OR EXISTS (SELECT 1 FROM workloads w WHERE w.study = s.id \
                        AND (w.spec = ?2 OR w.name = ?2))) \
                 AND (?3 IS NULL OR s.host = ?3) \
                 AND (?4 IS NULL OR s.started >= ?4) \
                 ORDER BY s.started, s.id",
            )
            .map_err(self.sql())?;
        let rows = st
            .query_map(params![f.target, f.workload, f.host, f.since], |r| {
                let split = |s: Option<String>| -> Vec<String> {
                    s.unwrap_or_default()
                        .split(' ')
                        .filter(|x| !x.is_empty())
                        .map(str::to_string)
                        .collect()
                };
                Ok(Listed {
                    run_id: r.get(1)?,
                    dir: r.get(2)?,
                    started: r.get(3)?,
                    host: r.get(4)?,
                    status: r.get(5)?,
                    targets: split(r.get(6)?),
                    workloads: split(r.get(7)?),
                    records: r.get(8)?,
                })
            })
            .map_err(self.sql())?;
        rows.collect::<Result<_, _>>().map_err(self.sql())
    }

    /// A metric's values for a target (label or spec) and job (`WorkloadSpec::canonical`) in
    /// every study, per test, oldest study first. Only records that ran whole count.
    pub fn series(
        &self,
        target: &str,
        workload: &str,
        metric: &str,
    ) -> Result<BTreeMap<String, Vec<Point>>, HistoryError> {
        let mut st = self
            .conn
            .prepare_cached(
                "SELECT s.run_id, s.started, t.fp_hash, t.fingerprint, r.test, r.repeat, \
                 m.value FROM records r JOIN studies s ON s.id = r.study \
                 JOIN metrics m ON m.record = r.id \
                 JOIN targets t ON t.study = r.study AND t.label = r.target \
                 WHERE (r.target = ?1 OR t.spec = ?1) AND r.workload = ?2 \
                 AND m.name = ?3 AND r.outcome = 'ok' AND r.less_work = 0 \
                 ORDER BY s.started, s.id, r.test, r.repeat",
            )
            .map_err(self.sql())?;
        type Row = (String, String, String, String, String, i64, f64);
        let rows = st
            .query_map(params![target, workload, metric], |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                    r.get(6)?,
                ))
            })
            .map_err(self.sql())?
            .collect::<Result<Vec<Row>, _>>()
            .map_err(self.sql())?;
        // (test, run) -> repeat -> values (several records of one repeat are averaged).
        let mut out: BTreeMap<String, Vec<Point>> = BTreeMap::new();
        let mut reps: BTreeMap<(String, String), BTreeMap<i64, Vec<f64>>> = BTreeMap::new();
        for (run, started, hash, fp, test, repeat, v) in rows {
            let pts = out.entry(test.clone()).or_default();
            if !pts.iter().any(|p| p.run_id == run) {
                pts.push(Point {
                    run_id: run.clone(),
                    started,
                    fp_hash: hash,
                    fingerprint: serde_json::from_str(&fp).unwrap_or_default(),
                    values: Vec::new(),
                });
            }
            reps.entry((test, run))
                .or_default()
                .entry(repeat)
                .or_default()
                .push(v);
        }
        for (test, pts) in out.iter_mut() {
            for p in pts.iter_mut() {
                if let Some(by) = reps.get(&(test.clone(), p.run_id.clone())) {
                    p.values = by
                        .values()
                        .map(|vs| vs.iter().sum::<f64>() / vs.len() as f64)
                        .collect();
                }
            }
        }
        Ok(out)
    }

    /// The metric names the history holds for a target and job.
    pub fn metrics_of(&self, target: &str, job: &str) -> Result<Vec<String>, HistoryError> {
        self.strings(
            "SELECT DISTINCT m.name FROM metrics m JOIN records r ON r.id = m.record \
             JOIN targets t ON t.study = r.study AND t.label = r.target \
             WHERE (r.target = ?1 OR t.spec = ?1) AND r.workload = ?2 ORDER BY m.name",
            target,
            job,
        )
    }

    /// The jobs the history holds for a target that `workload` names: the job itself, or every
    /// job of a workload named so (`block` names each `block:...` job).
    pub fn jobs_of(&self, target: &str, workload: &str) -> Result<Vec<String>, HistoryError> {
        self.strings(
            "SELECT DISTINCT r.workload FROM records r \
             JOIN targets t ON t.study = r.study AND t.label = r.target \
             WHERE (r.target = ?1 OR t.spec = ?1) AND (r.workload = ?2 \
             OR substr(r.workload, 1, length(?2) + 1) = ?2 || ':') ORDER BY r.workload",
            target,
            workload,
        )
    }

    /// A query's one text column, given two parameters.
    fn strings(&self, sql: &str, a: &str, b: &str) -> Result<Vec<String>, HistoryError> {
        let mut st = self.conn.prepare(sql).map_err(self.sql())?;
        let rows = st
            .query_map(params![a, b], |r| r.get(0))
            .map_err(self.sql())?;
        rows.collect::<Result<_, _>>().map_err(self.sql())
    }

    /// How many studies the history holds.
    pub fn count(&self) -> Result<i64, HistoryError> {
        self.conn
            .query_row("SELECT count(*) FROM studies", [], |r| r.get(0))
            .map_err(self.sql())
    }
}

/// The spread of a figure between studies on one fingerprint: the standard deviation of the
/// studies' mean logs and its degrees of freedom (None with fewer than two such studies).
pub fn spread(points: &[&Point]) -> Option<(f64, f64)> {
    let logs: Vec<f64> = points
        .iter()
        .filter(|p| !p.values.is_empty() && p.values.iter().all(|v| *v > 0.0))
        .map(|p| p.values.iter().map(|v| v.ln()).sum::<f64>() / p.values.len() as f64)
        .collect();
    if logs.len() < 2 {
        return None;
    }
    let n = logs.len() as f64;
    let mean = logs.iter().sum::<f64>() / n;
    let var = logs.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / (n - 1.0);
    Some((var.sqrt(), n - 1.0))
}
