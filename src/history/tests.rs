use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::*;
use crate::plan::{Plan, WorkloadSpec};
use crate::store::{Manifest, Observer, Outcome, Record, Status, Study};

/// A study directory of `target` with one workload, a test and the given iops per repeat.
pub(crate) fn make_study(dir: &Path, run_id: &str, kernel: &str, iops: &[f64]) -> PathBuf {
    let spec = crate::provision::parse_target("dir:/tmp").expect("a target spec");
    let plan = Plan {
        targets: vec![spec],
        workloads: vec![WorkloadSpec {
            spec: "block".into(),
            name: "block".into(),
            params: vec![],
        }],
        repeat: iops.len() as u32,
        ..Plan::default()
    };
    let env = crate::store::Environment {
        hostname: "h".into(),
        kernel: kernel.into(),
        ..Default::default()
    };
    let mut m = Manifest::new(plan, vec!["fsbench".into(), "compare".into()], env);
    m.run_id = run_id.into();
    let out = dir.join(run_id);
    let mut s = Study::create(&out, &m).unwrap();
    for (i, v) in iops.iter().enumerate() {
        s.append(&record(i as u32, *v)).unwrap();
    }
    m.status = Status::Complete;
    s.save_manifest(&m).unwrap();
    out
}

fn record(repeat: u32, iops: f64) -> Record {
    Record {
        schema: 1,
        target: "dir:/tmp".into(),
        fs: "dir".into(),
        workload: "block".into(),
        test: "rand".into(),
        repeat,
        started_at: format!("2026-11-2{repeat}T00:00:00Z"),
        duration_s: 1.0,
        outcome: Outcome::Ok,
        reason: None,
        error: None,
        metrics: BTreeMap::from([("iops".to_string(), iops)]),
        notes: vec![],
        histograms: BTreeMap::new(),
        series: BTreeMap::new(),
        latency_log: None,
        config: None,
        failure: None,
        ranks: vec![],
        nodes: vec![],
        clones: Vec::new(),
        limiter: None,
        evidence: None,
        profile: None,
    }
}

/// Every row of every table, in order: two databases with the same studies compare equal.
fn dump(db: &Db) -> Vec<String> {
    let mut out = Vec::new();
    for (table, cols) in [
        (
            "studies",
            "run_id, dir, started, finished, host, status, repeats",
        ),
        ("targets", "label, spec, fs, fingerprint, fp_hash"),
        ("workloads", "spec, name"),
        (
            "records r JOIN metrics m ON m.record = r.id",
            "r.target, r.workload, r.test, r.repeat, r.outcome, m.name, m.value",
        ),
    ] {
        let mut st = db
            .conn
            .prepare(&format!("SELECT {cols} FROM {table} ORDER BY 1, 2"))
            .unwrap();
        let n = st.column_count();
        let rows = st
            .query_map([], |r| {
                let v: Vec<String> = (0..n)
                    .map(|i| format!("{:?}", r.get_ref(i).unwrap()))
                    .collect();
                Ok(v.join("|"))
            })
            .unwrap();
        let mut v: Vec<String> = rows.map(Result::unwrap).collect();
        v.sort();
        out.extend(v);
    }
    out
}

#[test]
fn a_new_database_is_migrated_from_empty_to_the_current_schema() {
    let t = tempfile::tempdir().unwrap();
    let db = Db::open(&t.path().join("a/b/history.db")).unwrap();
    let v: i64 = db
        .conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(v, schema::VERSION);
    let mode: String = db
        .conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
}

#[test]
fn a_database_of_the_previous_schema_is_migrated_and_keeps_its_studies() {
    let t = tempfile::tempdir().unwrap();
    let path = t.path().join("h.db");
    let study = make_study(t.path(), "r1", "6.1", &[100.0, 110.0]);
    {
        // A database as the previous fsbench left it: version 1, one study in it.
        let mut c = rusqlite::Connection::open(&path).unwrap();
        schema::migrate_to(&mut c, &path, 1).unwrap();
        let m = crate::store::read_manifest(&study).unwrap();
        let tx = c.transaction().unwrap();
        tx.execute(
            "INSERT INTO studies (run_id, dir, started, host, status, command, \
             fsbench_version, repeats, plan) VALUES (?1, 'd', ?2, 'h', 'complete', 'c', 'v', 2, '{}')",
            rusqlite::params![m.run_id, m.created_at],
        )
        .unwrap();
        tx.commit().unwrap();
    }
    let mut db = Db::open(&path).unwrap();
    assert_eq!(db.count().unwrap(), 1);
    // The new column exists and indexing the same study again replaces it, not duplicates it.
    db.index_study(&study).unwrap();
    assert_eq!(db.count().unwrap(), 1);
    let at: Option<String> = db
        .conn
        .query_row("SELECT indexed_at FROM studies", [], |r| r.get(0))
        .unwrap();
    assert!(at.is_some());
}

#[test]
fn a_newer_schema_or_a_corrupt_file_is_refused_naming_rebuild() {
    let t = tempfile::tempdir().unwrap();
    let newer = t.path().join("newer.db");
    {
        let c = rusqlite::Connection::open(&newer).unwrap();
        c.execute_batch("PRAGMA user_version = 99").unwrap();
    }
    let e = Db::open(&newer).err().unwrap().to_string();
    assert!(
        e.contains("newer") && e.contains("fsbench history rebuild"),
        "{e}"
    );
    let junk = t.path().join("junk.db");
    std::fs::write(&junk, vec![b'x'; 8192]).unwrap();
    let e = Db::open(&junk).err().unwrap();
    assert!(matches!(e, HistoryError::Corrupt { .. }), "{e}");
    assert!(e.to_string().contains("fsbench history rebuild"), "{e}");
    // The file is left as it was: nothing is lost.
    assert_eq!(std::fs::read(&junk).unwrap(), vec![b'x'; 8192]);
    let e = Db::open(t.path()).err().unwrap().to_string();
    assert!(
        e.contains("is a directory") && e.contains("--history"),
        "{e}"
    );
}

#[test]
fn records_indexed_as_written_equal_the_study_rebuilt_from_its_directory() {
    let t = tempfile::tempdir().unwrap();
    let study = make_study(t.path(), "r1", "6.1", &[100.0, 110.0, 105.0]);
    let live = t.path().join("live.db");
    let rec = Recorder::new(&live);
    for r in crate::store::load_results(&study).unwrap() {
        rec.record(&study, &r);
    }
    // Killed here: every record is in already.
    let db = Db::open(&live).unwrap();
    let s = db.series("dir:/tmp", "block", "iops").unwrap();
    assert_eq!(s["rand"][0].values, vec![100.0, 110.0, 105.0]);
    drop(db);
    rec.finish(&study);
    let mut rebuilt = Db::open(&t.path().join("rebuilt.db")).unwrap();
    rebuilt.index_study(&study).unwrap();
    assert_eq!(dump(&Db::open(&live).unwrap()), dump(&rebuilt));
}

#[test]
fn two_writers_at_once_both_land() {
    let t = tempfile::tempdir().unwrap();
    let path = t.path().join("h.db");
    let dirs: Vec<PathBuf> = (0..4)
        .map(|i| make_study(t.path(), &format!("r{i}"), "6.1", &[100.0 + i as f64; 3]))
        .collect();
    std::thread::scope(|s| {
        for d in &dirs {
            let path = path.clone();
            s.spawn(move || {
                let rec = Recorder::new(&path);
                for r in crate::store::load_results(d).unwrap() {
                    rec.record(d, &r);
                }
                rec.finish(d);
            });
        }
    });
    let db = Db::open(&path).unwrap();
    assert_eq!(db.count().unwrap(), 4);
    let s = db.series("dir:/tmp", "block", "iops").unwrap();
    assert_eq!(s["rand"].len(), 4);
    assert!(s["rand"].iter().all(|p| p.values.len() == 3));
}

#[test]
fn the_trend_sees_a_fingerprint_change_and_the_list_filters() {
    let t = tempfile::tempdir().unwrap();
    let mut db = Db::open(&t.path().join("h.db")).unwrap();
    for (id, k) in [("r1", "6.1"), ("r2", "6.1"), ("r3", "6.6")] {
        db.index_study(&make_study(t.path(), id, k, &[100.0, 101.0]))
            .unwrap();
    }
    let pts = &db.series("dir:/tmp", "block", "iops").unwrap()["rand"];
    assert_eq!(pts.len(), 3);
    assert_eq!(pts[0].fp_hash, pts[1].fp_hash);
    let d = differences(&pts[1].fingerprint, &pts[2].fingerprint);
    assert_eq!(d, vec![("kernel".into(), "6.1".into(), "6.6".into())]);
    let all = db.list(&ListFilter::default()).unwrap();
    assert_eq!(all.len(), 3);
    let f = ListFilter {
        target: Some("dir:".into()),
        workload: Some("block".into()),
        host: Some("h".into()),
        since: Some("2000-01-01".into()),
    };
    assert_eq!(db.list(&f).unwrap().len(), 3);
    let none = ListFilter {
        host: Some("elsewhere".into()),
        ..ListFilter::default()
    };
    assert!(db.list(&none).unwrap().is_empty());
    assert_eq!(db.metrics_of("dir:/tmp", "block").unwrap(), vec!["iops"]);
    // The spread between studies of one fingerprint.
    let alike: Vec<&Point> = pts.iter().filter(|p| p.fp_hash == pts[0].fp_hash).collect();
    assert_eq!(spread(&alike).map(|s| s.1), Some(1.0));
}

#[test]
fn an_unwritable_database_is_a_warning_and_the_study_goes_on() {
    let t = tempfile::tempdir().unwrap();
    let study = make_study(t.path(), "r1", "6.1", &[100.0]);
    // A directory where the database should be: every write fails, nothing panics.
    let rec = Recorder::new(t.path());
    for r in crate::store::load_results(&study).unwrap() {
        rec.record(&study, &r);
    }
    rec.finish(&study);
    assert!(rec.failed());
}

#[test]
fn a_version_2_database_keyed_by_workload_name_is_rekeyed_by_job() {
    let t = tempfile::tempdir().unwrap();
    let path = t.path().join("h.db");
    let mut plan: serde_json::Value = serde_json::to_value(
        crate::store::read_manifest(&make_study(t.path(), "r1", "6.1", &[1.0]))
            .unwrap()
            .plan,
    )
    .unwrap();
    let jobs = ["block:rw=read, bs=4k", "block:rw=write,bs=1m"];
    plan["workloads"] = serde_json::to_value(
        jobs.iter()
            .map(|j| crate::plan::workload::parse_workload(j).unwrap())
            .collect::<Vec<_>>(),
    )
    .unwrap();
    {
        // As fsbench 0.x left it: records of a plan with two block jobs, one per job, named
        // by the spec as written (two workloads of one name), and one of a plan with one job,
        // named `block`.
        let mut c = rusqlite::Connection::open(&path).unwrap();
        schema::migrate_to(&mut c, &path, 2).unwrap();
        let one = serde_json::json!({"workloads": [plan["workloads"][1].clone()]});
        for (id, p, recorded) in [
            (1, plan.to_string(), vec![jobs[0], jobs[1]]),
            (2, one.to_string(), vec!["block"]),
        ] {
            c.execute(
                "INSERT INTO studies (id, run_id, dir, started, host, status, command, \
                 fsbench_version, repeats, plan) VALUES (?1, ?1, 'd', ?1, 'h', 'complete', 'c', \
                 'v', 1, ?2)",
                rusqlite::params![id, p],
            )
            .unwrap();
            for w in recorded {
                c.execute(
                    "INSERT INTO records (study, target, workload, test, repeat, started, \
                     duration_s, outcome, less_work) VALUES (?1, 't', ?2, 'x', 0, '', 1, 'ok', 0)",
                    rusqlite::params![id, w],
                )
                .unwrap();
            }
        }
        c.execute(
            "INSERT INTO workloads (study, spec, name) VALUES (1, ?1, 'block')",
            [jobs[0]],
        )
        .unwrap();
    }
    let db = Db::open(&path).unwrap();
    let all = |sql: &str| -> Vec<String> {
        let mut st = db.conn.prepare(sql).unwrap();
        let rows = st.query_map([], |r| r.get(0)).unwrap();
        rows.map(Result::unwrap).collect()
    };
    assert_eq!(
        all("SELECT workload FROM records ORDER BY study, workload"),
        vec![
            "block:rw=read,bs=4k",
            "block:rw=write,bs=1m",
            "block:rw=write,bs=1m"
        ]
    );
    assert_eq!(
        all("SELECT spec FROM workloads"),
        vec!["block:rw=read,bs=4k"]
    );
    let app: i64 = db
        .conn
        .query_row("PRAGMA application_id", [], |r| r.get(0))
        .unwrap();
    assert_eq!(app, schema::APP_ID);
}

#[test]
fn another_applications_database_and_impossible_versions_are_refused_unchanged() {
    let t = tempfile::tempdir().unwrap();
    let cases: [(&str, &str); 5] = [
        (
            "foreign",
            "CREATE TABLE contacts (name TEXT); INSERT INTO contacts VALUES ('x');",
        ),
        ("foreign-id", "PRAGMA application_id = 7;"),
        ("negative", "PRAGMA user_version = -3;"),
        ("unversioned", MIGRATIONS_V1),
        ("empty-v2", "PRAGMA user_version = 2;"),
    ];
    for (name, sql) in cases {
        let path = t.path().join(format!("{name}.db"));
        rusqlite::Connection::open(&path)
            .unwrap()
            .execute_batch(sql)
            .unwrap();
        let before = std::fs::read(&path).unwrap();
        for e in [
            Db::open(&path).err().unwrap(),
            Db::open_read(&path).err().unwrap(),
        ] {
            let want = match name {
                "foreign" | "foreign-id" => matches!(e, HistoryError::Foreign { .. }),
                "negative" => matches!(e, HistoryError::Unreadable { found: -3, .. }),
                _ => matches!(e, HistoryError::Stale { .. }),
            };
            assert!(want, "{name}: {e}");
            let text = e.to_string();
            assert!(!text.contains('\n') && !text.contains("CREATE"), "{text}");
        }
        assert_eq!(std::fs::read(&path).unwrap(), before, "{name}");
        for s in ["-wal", "-shm"] {
            assert!(
                !t.path().join(format!("{name}.db{s}")).exists(),
                "{name}{s}"
            );
        }
    }
}

/// fsbench's first tables, without the version that says so.
const MIGRATIONS_V1: &str = "CREATE TABLE studies (id INTEGER PRIMARY KEY);";
