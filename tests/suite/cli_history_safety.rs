//! The history database as an adversary would hand it over (issue 39): another application's
//! SQLite file, a schema version no fsbench writes, stale tables, symbolic links and kernel
//! filesystems at the history path or the trend page's, and a history on a read-only mount.
//! Every refusal is exit 2 naming the input and the fix, with nothing created or changed; a
//! study whose history cannot be written warns and completes.

use crate::common::*;

use std::path::{Path, PathBuf};
use std::process::Output;

const WL: &str = "block:ioengine=null,rw=randread,size=8m,runtime=200ms";

fn fsb(db: &Path, args: &[&str]) -> Output {
    bin()
        .env("FSBENCH_HISTORY", db)
        .args(args)
        .output()
        .unwrap()
}

fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

/// `fsbench compare dir:TARGET` into `out`, indexed in `db`.
fn compare(target: &Path, out: &Path, db: &Path) -> Output {
    bin()
        .env("FSBENCH_HISTORY", db)
        .args(["compare", &format!("dir:{}", target.display()), "-q"])
        .args(["--workload", WL, "--out"])
        .arg(out)
        .output()
        .unwrap()
}

/// A study in `t/study` (its target `t/target`), indexed in `t/h.db`.
fn study(t: &Path) -> (PathBuf, PathBuf) {
    let (target, db, out) = (t.join("target"), t.join("h.db"), t.join("study"));
    std::fs::create_dir_all(&target).unwrap();
    let o = compare(&target, &out, &db);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    (out, db)
}

/// Every command that opens the history: those that read it, `rebuild` (of `t/study`), and
/// `check` of `checked` against it; the trend of `t/target`, its page to `page`.
fn commands(t: &Path, checked: &Path, page: &Path) -> Vec<Vec<String>> {
    let s = t.join("study").display().to_string();
    let spec = format!("dir:{}", t.join("target").display());
    let trend = [
        "history",
        "trend",
        "iops",
        "--target",
        &spec,
        "--workload",
        WL,
    ];
    let page = page.display().to_string();
    let checked = checked.display().to_string();
    [
        vec!["history"],
        vec!["history", "--json"],
        vec!["history", "rebuild", &s],
        [&trend[..], &["--html", &page]].concat(),
        [&trend[..], &["--json", "--html", &page]].concat(),
        vec!["check", &checked, "--against-history", "3"],
    ]
    .into_iter()
    .map(|v| v.into_iter().map(String::from).collect())
    .collect()
}

/// Exit 2, one line naming `path` and a fix, and no panic.
fn refused(o: &Output, path: &Path, fix: &str) {
    let e = stderr(o);
    assert_eq!(code(o), 2, "{e}{}", stdout(o));
    assert!(
        e.contains(&path.display().to_string()) && e.contains(fix),
        "{e}"
    );
    assert_eq!(e.trim_end().lines().count(), 1, "{e}");
    assert!(!e.contains("panicked") && !e.contains("CREATE"), "{e}");
}

fn siblings_absent(db: &Path) {
    for s in ["-wal", "-shm", "-journal"] {
        let p = PathBuf::from(format!("{}{s}", db.display()));
        assert!(!p.exists(), "{} was made", p.display());
    }
}

#[test]
fn another_applications_database_is_refused_and_left_as_it_was() {
    let t = tempfile::tempdir().unwrap();
    let (s, _) = study(t.path());
    for (name, wal) in [("contacts.db", false), ("contacts-wal.db", true)] {
        let db = t.path().join(name);
        {
            let c = rusqlite::Connection::open(&db).unwrap();
            if wal {
                c.query_row("PRAGMA journal_mode=WAL", [], |_| Ok(()))
                    .unwrap();
            }
            c.execute_batch(
                "CREATE TABLE contacts (name TEXT); INSERT INTO contacts VALUES ('x');",
            )
            .unwrap();
        }
        let before = std::fs::read(&db).unwrap();
        for args in commands(t.path(), &s, &t.path().join("p.html")) {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let o = fsb(&db, &args);
            refused(&o, &db, "another application's");
            assert_eq!(std::fs::read(&db).unwrap(), before, "{args:?}");
            siblings_absent(&db);
        }
        // A study is refused before it makes anything.
        let out = t.path().join(format!("{name}-study"));
        let o = compare(&t.path().join("target"), &out, &db);
        refused(&o, &db, "--no-history");
        assert!(!out.exists());
        assert_eq!(std::fs::read(&db).unwrap(), before);
        siblings_absent(&db);
    }
}

#[test]
fn an_impossible_or_stale_schema_is_refused_in_one_line_and_a_study_warns() {
    let t = tempfile::tempdir().unwrap();
    let (s, good) = study(t.path());
    let cases = [
        (
            "negative.db",
            "PRAGMA user_version = -3;",
            "which no fsbench writes",
        ),
        ("huge.db", "PRAGMA user_version = 2147483647;", "newer"),
        ("stale.db", "", "do not match"),
    ];
    for (name, sql, why) in cases {
        let db = t.path().join(name);
        if sql.is_empty() {
            // fsbench's own tables, the version that says so gone.
            std::fs::copy(&good, &db).unwrap();
            rusqlite::Connection::open(&db)
                .unwrap()
                .execute_batch("PRAGMA user_version = 0;")
                .unwrap();
        } else {
            rusqlite::Connection::open(&db)
                .unwrap()
                .execute_batch(sql)
                .unwrap();
        }
        let before = std::fs::read(&db).unwrap();
        for args in commands(t.path(), &s, &t.path().join("p.html")) {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let o = fsb(&db, &args);
            refused(&o, &db, "fsbench history rebuild");
            assert!(stderr(&o).contains(why), "{}", stderr(&o));
            assert_eq!(std::fs::read(&db).unwrap(), before, "{name} {args:?}");
        }
        // A study measures, warns once and completes; the database stays as it was.
        let out = t.path().join(format!("{name}-study"));
        let o = compare(&t.path().join("target"), &out, &db);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        assert!(
            stderr(&o).contains("not in the history") && stderr(&o).contains(why),
            "{}",
            stderr(&o)
        );
        let records = std::fs::read_to_string(out.join("results.jsonl")).unwrap();
        assert_eq!(records.lines().count(), 1);
        assert!(std::fs::read_to_string(out.join("manifest.json"))
            .unwrap()
            .contains("\"complete\""));
        assert_eq!(std::fs::read(&db).unwrap(), before, "{name}");
    }
}

#[test]
fn links_and_kernel_filesystems_are_refused_and_nothing_is_made() {
    let t = tempfile::tempdir().unwrap();
    let (s, good) = study(t.path());
    // A dangling link: its target is never created, by a reader, a writer or a study.
    let absent = t.path().join("absent.db");
    let dangling = t.path().join("dangling.db");
    std::os::unix::fs::symlink(&absent, &dangling).unwrap();
    for args in commands(t.path(), &s, &t.path().join("p.html")) {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        refused(&fsb(&dangling, &args), &dangling, "symbolic link");
        assert!(!absent.exists(), "{args:?}");
    }
    let out = t.path().join("linked-study");
    refused(
        &compare(&t.path().join("target"), &out, &dangling),
        &dangling,
        "--no-history",
    );
    assert!(!out.exists() && !absent.exists());
    // A link to a real history is refused too, and so is a -wal file that is a link.
    let linked = t.path().join("linked.db");
    std::os::unix::fs::symlink(&good, &linked).unwrap();
    refused(&fsb(&linked, &["history"]), &linked, "symbolic link");
    let copy = t.path().join("copy.db");
    std::fs::copy(&good, &copy).unwrap();
    let wal = t.path().join("copy.db-wal");
    let elsewhere = t.path().join("elsewhere");
    std::os::unix::fs::symlink(&elsewhere, &wal).unwrap();
    let o = fsb(&copy, &["history", "rebuild", s.to_str().unwrap()]);
    refused(&o, &wal, "symbolic link");
    assert!(!elsewhere.exists());
    // Kernel filesystems: nothing made there, not even the directory.
    for p in [
        "/dev/fsbench-history-test/h.db",
        "/proc/fsbench-history.db",
        "/sys/fsbench-history.db",
    ] {
        let p = Path::new(p);
        let o = fsb(p, &["history", "rebuild", s.to_str().unwrap()]);
        assert_eq!(code(&o), 2, "{}", stderr(&o));
        assert!(
            stderr(&o).contains("fsbench writes no file there"),
            "{}",
            stderr(&o)
        );
        assert!(!Path::new("/dev/fsbench-history-test").exists());
    }
    // The trend page: never through a link, never in /proc.
    let spec = format!("dir:{}", t.path().join("target").display());
    let kept = t.path().join("kept.txt");
    std::fs::write(&kept, "keep").unwrap();
    let page = t.path().join("page.html");
    std::os::unix::fs::symlink(&kept, &page).unwrap();
    for page in [page.as_path(), Path::new("/proc/self/fsbench-trend.html")] {
        let o = bin()
            .env("FSBENCH_HISTORY", &good)
            .args([
                "history",
                "trend",
                "iops",
                "--target",
                &spec,
                "--workload",
                WL,
            ])
            .arg("--html")
            .arg(page)
            .output()
            .unwrap();
        refused(&o, page, "--html");
    }
    assert_eq!(std::fs::read_to_string(&kept).unwrap(), "keep");
}

/// A tmpfs mounted on a directory of the test's, unmounted when dropped.
struct Mounted(PathBuf);

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = sh(&format!("umount {}", self.0.display()));
    }
}

#[test]
fn a_history_on_a_read_only_mount_is_read() {
    if skip(!is_root(), "mounting a tmpfs needs root") {
        return;
    }
    let _serial = serial();
    let t = tempfile::tempdir().unwrap();
    let (_, good) = study(t.path());
    let second = t.path().join("second");
    assert_eq!(code(&compare(&t.path().join("target"), &second, &good)), 0);
    let ro = t.path().join("ro");
    std::fs::create_dir(&ro).unwrap();
    let (ok, why) = sh(&format!(
        "mount -t tmpfs -o size=16m tmpfs {}",
        ro.display()
    ));
    assert!(ok, "{why}");
    let mounted = Mounted(ro.clone());
    let db = ro.join("h.db");
    std::fs::copy(&good, &db).unwrap();
    let (ok, why) = sh(&format!("mount -o remount,ro {}", ro.display()));
    assert!(ok, "{why}");
    let page = t.path().join("trend.html");
    for args in commands(t.path(), &second, &page) {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        if args.contains(&"rebuild") {
            // Writing is refused, as it must be, saying why.
            let o = fsb(&db, &args);
            assert_eq!(code(&o), 2);
            assert!(stderr(&o).contains("cannot write"), "{}", stderr(&o));
            continue;
        }
        let o = fsb(&db, &args);
        assert!(code(&o) < 2, "{args:?}: {}{}", stderr(&o), stdout(&o));
        assert!(!stderr(&o).contains("cannot write"), "{}", stderr(&o));
    }
    let o = fsb(&db, &["history", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 2);
    assert!(page.exists());
    drop(mounted);
}
