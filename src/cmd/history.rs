//! `fsbench history`: the studies of the history database, a metric's trend across them, and
//! the database rebuilt from study directories. Also where the database is for the commands
//! that run studies (`recorder`).

use std::path::PathBuf;
use std::sync::Arc;

use super::Exit;
use crate::cli::{HistoryAction, HistoryArgs, HistoryCmd};
use crate::history::{self, Db, Indexed, ListFilter};
use crate::report::trend::{Trend, TrendPoint};

/// The database the flags name: `--history`/`FSBENCH_HISTORY`, else the default; None with
/// `--no-history`.
pub fn path_of(a: &HistoryArgs) -> Option<PathBuf> {
    if a.no_history {
        return None;
    }
    Some(
        a.history
            .clone()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or_else(|| history::default_path(crate::sys::is_root())),
    )
}

/// What indexes a study's records in the history as they are written (none when `skip`: a dry
/// run, a rank other than 0, or `--no-history`). A history path fsbench must not write (a
/// symbolic link, a kernel filesystem) or another application's database there refuses the
/// study before anything is made.
pub fn recorder(
    a: &HistoryArgs,
    skip: bool,
) -> anyhow::Result<Option<Arc<dyn crate::store::Observer>>> {
    if skip {
        return Ok(None);
    }
    let Some(p) = path_of(a) else {
        return Ok(None);
    };
    history::preflight(&p)?;
    Ok(Some(
        Arc::new(history::Recorder::new(&p)) as Arc<dyn crate::store::Observer>
    ))
}

/// The database for a reading command: --no-history there is a usage error.
pub fn open_for_reading(a: &HistoryArgs, what: &str) -> anyhow::Result<Db> {
    let Some(path) = path_of(a) else {
        anyhow::bail!("{what} reads the history, and --no-history turns it off: drop --no-history, or give --history PATH");
    };
    Ok(Db::open_read(&path)?)
}

pub fn run(c: HistoryCmd) -> anyhow::Result<Exit> {
    match c.action {
        None => list(&c.where_, &c.filter, c.json),
        Some(HistoryAction::Rebuild { dirs }) => rebuild(&c.where_, &dirs),
        Some(HistoryAction::Trend {
            metric,
            target,
            workload,
            html,
        }) => trend(&c.where_, &metric, &target, &workload, html, c.json),
    }
}

fn list(a: &HistoryArgs, f: &crate::cli::history::ListArgs, json: bool) -> anyhow::Result<Exit> {
    let db = open_for_reading(a, "fsbench history")?;
    let rows = db.list(&ListFilter {
        target: f.target.clone(),
        workload: f.workload.as_deref().map(job_text),
        host: f.host.clone(),
        since: f.since.clone(),
    })?;
    if json {
        crate::out::print(&(serde_json::to_string_pretty(&rows)? + "\n"));
        return Ok(Exit::Ok);
    }
    let mut s = format!(
        "{:<20} {:<12} {:<11} {:<7} {:<30} {:<24} dir\n",
        "started", "host", "status", "records", "targets", "workloads"
    );
    for r in &rows {
        s.push_str(&format!(
            "{:<20} {:<12} {:<11} {:<7} {:<30} {:<24} {}\n",
            r.started.chars().take(19).collect::<String>(),
            r.host,
            r.status,
            r.records,
            r.targets.join(" "),
            r.workloads.join(" "),
            r.dir
        ));
    }
    s.push_str(&format!(
        "{} studies in {}\n",
        rows.len(),
        db.path().display()
    ));
    crate::out::print(&s);
    Ok(Exit::Ok)
}

fn rebuild(a: &HistoryArgs, dirs: &[PathBuf]) -> anyhow::Result<Exit> {
    let Some(path) = path_of(a) else {
        anyhow::bail!("fsbench history rebuild writes the history, and --no-history turns it off: drop --no-history, or give --history PATH");
    };
    let mut db = Db::open(&path)?;
    let mut bad = 0;
    for d in dirs {
        match db.index_study(d) {
            Ok(Indexed::Study(_)) => crate::out::line(&format!("indexed {}", d.display())),
            Ok(Indexed::CopyOf { run_id, original }) => crate::out::line(&format!(
                "skipped {}: a copy of study {run_id}, which the history keeps at {original} (a copy is no new measurement; to index it here, move the original away first)",
                d.display()
            )),
            Err(e) => {
                bad += 1;
                crate::out::eline!("fsbench: error: {}: not indexed: {e} (give the directory of a study: it holds manifest.json and results.jsonl)", d.display());
            }
        }
    }
    crate::out::line(&format!(
        "{} studies in {}",
        db.count()?,
        db.path().display()
    ));
    Ok(if bad > 0 { Exit::Usage } else { Exit::Ok })
}

fn trend(
    a: &HistoryArgs,
    metric: &str,
    target: &str,
    workload: &str,
    html: Option<PathBuf>,
    json: bool,
) -> anyhow::Result<Exit> {
    let db = open_for_reading(a, "fsbench history trend")?;
    let job = job_for_trend(&db, target, workload)?;
    let workload = job.as_str();
    let known = db.metrics_of(target, workload)?;
    if !known.iter().any(|m| m == metric) {
        anyhow::bail!(
            "'{metric}' is not a metric of target '{target}' with workload '{workload}': give one of {}",
            known.join(", ")
        );
    }
    let series = db.series(target, workload, metric)?;
    let tests = series
        .into_iter()
        .map(|(test, pts)| {
            let tp = pts
                .iter()
                .enumerate()
                .map(|(i, p)| TrendPoint {
                    run_id: p.run_id.clone(),
                    started: p.started.clone(),
                    values: p.values.clone(),
                    changed: match i {
                        0 => Vec::new(),
                        _ => history::differences(&pts[i - 1].fingerprint, &p.fingerprint),
                    },
                })
                .collect();
            (test, tp)
        })
        .collect();
    let t = Trend {
        metric: metric.into(),
        target: target.into(),
        workload: workload.into(),
        tests,
    };
    let page = html.unwrap_or_else(|| PathBuf::from(format!("fsbench-trend-{metric}.html")));
    let written = crate::sys::outfile::create(&page, crate::sys::outfile::Create::Replace)
        .and_then(|mut f| std::io::Write::write_all(&mut f, t.html().as_bytes()));
    written.map_err(|e| {
        anyhow::anyhow!("cannot write the trend page: {e}: give --html a file path you can write")
    })?;
    if json {
        crate::out::print(&(serde_json::to_string_pretty(&t.json())? + "\n"));
    } else {
        crate::out::print(&t.text());
        crate::out::line(&format!("chart: {}", page.display()));
    }
    Ok(Exit::Ok)
}

/// A workload as the user wrote it, as the history keys it (`WorkloadSpec::canonical`); text
/// that is no workload spec stays as written (it then matches nothing).
fn job_text(s: &str) -> String {
    crate::plan::workload::parse_workload(s)
        .map(|w| w.canonical())
        .unwrap_or_else(|_| s.trim().to_string())
}

/// The one job `--workload` names for the target: the job itself, or a workload's name when
/// the target ran one job of it. None, or several, is an error naming what to give.
fn job_for_trend(db: &Db, target: &str, workload: &str) -> anyhow::Result<String> {
    let want = job_text(workload);
    let jobs = db.jobs_of(target, &want)?;
    if jobs.contains(&want) {
        return Ok(want);
    }
    match jobs.as_slice() {
        [one] => Ok(one.clone()),
        [] => anyhow::bail!("the history has no records of target '{target}' with workload '{workload}': `fsbench history --target {target}` lists the studies of that target (give --target and --workload as the studies name them)"),
        many => anyhow::bail!(
            "workload '{workload}' names {} jobs of target '{target}' in the history, whose figures are not one series: give one of them with --workload: {}",
            many.len(),
            many.iter().map(|j| format!("'{j}'")).collect::<Vec<_>>().join(", ")
        ),
    }
}
