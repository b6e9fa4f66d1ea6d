//! The history (issue 30): studies indexed as they run, listed, trended and rebuilt; the
//! regression gate's rule on studies whose figures are set by hand; concurrent writers; a kill
//! while indexing; bad input. Every study is a `dir:` target with the null engine (no root, no
//! loop devices), and every run points FSBENCH_HISTORY at a database of the test's own.

use crate::common::*;

use std::path::{Path, PathBuf};
use std::process::Output;

const WL: &str = "block:ioengine=null,rw=randread,size=8m,runtime=200ms";

/// `fsbench compare dir:TARGET` into `out`, indexed in `db`.
fn compare(target: &Path, out: &Path, db: &Path, repeat: u32) -> Output {
    bin()
        .env("FSBENCH_HISTORY", db)
        .args(["compare", &format!("dir:{}", target.display()), "-q"])
        .args(["--workload", WL, "--repeat", &repeat.to_string(), "--out"])
        .arg(out)
        .output()
        .unwrap()
}

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

/// A copy of `from` as another study: its run id `id`, a start after the last variant's, its records' iops set to `iops` (one per
/// repeat, in order; a record of a repeat past the list is dropped).
fn variant(from: &Path, to: &Path, id: &str, iops: &[f64]) -> PathBuf {
    std::fs::create_dir_all(to).unwrap();
    let mut m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(from.join("manifest.json")).unwrap())
            .unwrap();
    m["run_id"] = id.into();
    // Each variant starts after the one made before it.
    static MADE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = MADE.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    m["created_at"] = format!("2026-01-01T{:02}:{:02}:00Z", n / 60, n % 60).into();
    m["plan"]["repeat"] = (iops.len() as u64).into();
    std::fs::write(to.join("manifest.json"), m.to_string()).unwrap();
    let mut lines = String::new();
    for l in std::fs::read_to_string(from.join("results.jsonl"))
        .unwrap()
        .lines()
    {
        let mut r: serde_json::Value = serde_json::from_str(l).unwrap();
        let rep = r["repeat"].as_u64().unwrap() as usize;
        if rep >= iops.len() {
            continue;
        }
        r["metrics"]["iops"] = iops[rep].into();
        lines.push_str(&r.to_string());
        lines.push('\n');
    }
    std::fs::write(to.join("results.jsonl"), lines).unwrap();
    to.to_path_buf()
}

fn listed(db: &Path) -> Vec<serde_json::Value> {
    let o = fsb(db, &["history", "--json"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    serde_json::from_str::<Vec<serde_json::Value>>(&stdout(&o)).unwrap()
}

#[test]
fn studies_are_indexed_listed_trended_and_rebuilt() {
    let t = tempfile::tempdir().unwrap();
    let (target, db) = (t.path().join("target"), t.path().join("h.db"));
    std::fs::create_dir(&target).unwrap();
    for s in ["a", "b"] {
        let o = compare(&target, &t.path().join(s), &db, 2);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
    }
    let l = listed(&db);
    assert_eq!(l.len(), 2);
    assert!(l
        .iter()
        .all(|s| s["status"] == "complete" && s["records"] == 2));
    let spec = format!("dir:{}", target.display());
    let o = fsb(&db, &["history", "--target", &spec, "--workload", WL]);
    assert_eq!(code(&o), 0);
    assert!(stdout(&o).contains("2 studies"), "{}", stdout(&o));
    let o = fsb(&db, &["history", "--host", "no-such-host"]);
    assert!(stdout(&o).contains("0 studies"), "{}", stdout(&o));
    // The trend: text with intervals, and the page.
    let page = t.path().join("trend.html");
    // Without --html the page goes to the working directory.
    let o = bin()
        .env("FSBENCH_HISTORY", &db)
        .current_dir(t.path())
        .args(["history", "trend", "iops", "--target", &spec])
        .args(["--workload", "block"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(t.path().join("fsbench-trend-iops.html").exists());
    let o = bin()
        .env("FSBENCH_HISTORY", &db)
        .args(["history", "trend", "iops", "--target", &spec])
        .args(["--workload", "block", "--html"])
        .arg(&page)
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(stdout(&o).contains("95% interval"), "{}", stdout(&o));
    assert!(std::fs::read_to_string(&page).unwrap().contains("<svg"));
    // An unknown metric: exit 2, naming those there are.
    let o = fsb(
        &db,
        &[
            "history",
            "trend",
            "nope",
            "--target",
            &spec,
            "--workload",
            "block",
        ],
    );
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("'nope' is not a metric") && stderr(&o).contains("iops"));
    // Rebuilt from the directories: the same studies.
    let db2 = t.path().join("rebuilt.db");
    let dirs = [t.path().join("a"), t.path().join("b")];
    let o = bin()
        .env("FSBENCH_HISTORY", &db2)
        .args(["history", "rebuild"])
        .args(&dirs)
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(listed(&db2), l);
}

#[test]
fn the_gate_says_regressed_improved_unchanged_and_when_it_cannot_tell() {
    let t = tempfile::tempdir().unwrap();
    let (target, db) = (t.path().join("target"), t.path().join("h.db"));
    std::fs::create_dir(&target).unwrap();
    let base = t.path().join("base");
    assert_eq!(code(&compare(&target, &base, &db, 3)), 0);
    let old = variant(
        &base,
        &t.path().join("old"),
        "old",
        &[1000.0, 1010.0, 990.0],
    );
    let check = |new: &Path, extra: &[&str]| {
        bin()
            .args(["check", new.to_str().unwrap(), "--against"])
            .arg(&old)
            .args(["--no-history"])
            .args(extra)
            .output()
            .unwrap()
    };
    let slow = variant(
        &base,
        &t.path().join("slow"),
        "slow",
        &[850.0, 860.0, 845.0],
    );
    // The kernel changed too: the check says so beside the regression.
    let mpath = slow.join("manifest.json");
    let mut m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&mpath).unwrap()).unwrap();
    m["environment"]["kernel"] = "9.9-test".into();
    std::fs::write(&mpath, m.to_string()).unwrap();
    let o = check(&slow, &[]);
    assert_eq!(code(&o), 1, "{}", stdout(&o));
    assert!(stdout(&o).contains("REGRESSED"), "{}", stdout(&o));
    assert!(
        stdout(&o).contains("the environment differs")
            && stdout(&o).contains("kernel")
            && stdout(&o).contains("-> 9.9-test"),
        "{}",
        stdout(&o)
    );
    let o = check(&slow, &["--format", "junit"]);
    assert_eq!(code(&o), 1);
    assert!(stdout(&o).contains("<failure message=\"regressed"));
    let o = check(&slow, &["--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["figures"][0]["verdict"], "regressed");
    // A 15% drop is within a 20% tolerance.
    assert_eq!(code(&check(&slow, &["--tolerance", "20%"])), 0);
    let fast = variant(
        &base,
        &t.path().join("fast"),
        "fast",
        &[1200.0, 1190.0, 1210.0],
    );
    let o = check(&fast, &[]);
    assert_eq!(code(&o), 0);
    assert!(stdout(&o).contains("1 improved"), "{}", stdout(&o));
    let same = variant(
        &base,
        &t.path().join("same"),
        "same",
        &[1005.0, 995.0, 1000.0],
    );
    let o = check(&same, &[]);
    assert_eq!(code(&o), 0);
    assert!(stdout(&o).contains("1 unchanged"), "{}", stdout(&o));
    // One repeat and no history: the gate says it cannot tell, and does not fail.
    let one = variant(&base, &t.path().join("one"), "one", &[700.0]);
    let o = check(&one, &[]);
    assert_eq!(code(&o), 0);
    assert!(
        stdout(&o).contains("cannot tell noise from change"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn one_repeat_against_the_history_uses_its_spread_on_this_fingerprint() {
    let t = tempfile::tempdir().unwrap();
    let (target, db) = (t.path().join("target"), t.path().join("h.db"));
    std::fs::create_dir(&target).unwrap();
    let base = t.path().join("base");
    assert_eq!(code(&compare(&target, &base, &t.path().join("x.db"), 1)), 0);
    let mut dirs = Vec::new();
    for (i, v) in [1000.0, 1010.0, 990.0, 1005.0].iter().enumerate() {
        let id = format!("20260101T00000{i}-1");
        dirs.push(variant(&base, &t.path().join(&id), &id, &[*v]));
    }
    let new = variant(&base, &t.path().join("new"), "20260102T000000-1", &[800.0]);
    dirs.push(new.clone());
    let o = bin()
        .env("FSBENCH_HISTORY", &db)
        .args(["history", "rebuild"])
        .args(&dirs)
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let o = fsb(
        &db,
        &["check", new.to_str().unwrap(), "--against-history", "3"],
    );
    assert_eq!(code(&o), 1, "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("history's spread"), "{}", stdout(&o));
}

#[test]
fn bad_input_is_exit_2_with_what_to_do() {
    let t = tempfile::tempdir().unwrap();
    let (target, db) = (t.path().join("target"), t.path().join("h.db"));
    std::fs::create_dir(&target).unwrap();
    let a = t.path().join("a");
    assert_eq!(code(&compare(&target, &a, &db, 1)), 0);
    // Not a study.
    let o = fsb(
        &db,
        &[
            "check",
            t.path().to_str().unwrap(),
            "--against",
            a.to_str().unwrap(),
        ],
    );
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("not a study"), "{}", stderr(&o));
    // Nothing in common: another target.
    let other = t.path().join("other");
    std::fs::create_dir(&other).unwrap();
    let b = t.path().join("b");
    assert_eq!(code(&compare(&other, &b, &db, 1)), 0);
    let o = fsb(
        &db,
        &[
            "check",
            b.to_str().unwrap(),
            "--against",
            a.to_str().unwrap(),
        ],
    );
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("no figure in common"), "{}", stderr(&o));
    // Neither --against nor --against-history.
    let o = fsb(&db, &["check", a.to_str().unwrap()]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("--against"), "{}", stderr(&o));
    // A history path that is a directory: the study completes with a warning; reading it is
    // exit 2.
    let o = compare(&target, &t.path().join("c"), t.path(), 1);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(stderr(&o).contains("not in the history"), "{}", stderr(&o));
    assert!(t.path().join("c/results.jsonl").exists());
    let o = fsb(t.path(), &["history"]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("is a directory"), "{}", stderr(&o));
    // A corrupt database: exit 2 naming rebuild, the file untouched.
    let junk = t.path().join("junk.db");
    std::fs::write(&junk, vec![b'x'; 4096]).unwrap();
    let o = fsb(&junk, &["history"]);
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("fsbench history rebuild"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read(&junk).unwrap(), vec![b'x'; 4096]);
    // --no-history: nothing indexed.
    let none = t.path().join("none.db");
    let o = bin()
        .env("FSBENCH_HISTORY", &none)
        .args([
            "compare",
            &format!("dir:{}", target.display()),
            "-q",
            "--no-history",
        ])
        .args(["--workload", WL, "--out"])
        .arg(t.path().join("d"))
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(!none.exists());
}

#[test]
fn two_studies_ending_at_once_both_land() {
    let t = tempfile::tempdir().unwrap();
    let db = t.path().join("h.db");
    let kids: Vec<std::process::Child> = (0..2)
        .map(|i| {
            let target = t.path().join(format!("t{i}"));
            std::fs::create_dir(&target).unwrap();
            bin()
                .env("FSBENCH_HISTORY", &db)
                .args(["compare", &format!("dir:{}", target.display()), "-q"])
                .args(["--workload", WL, "--repeat", "2", "--out"])
                .arg(t.path().join(format!("s{i}")))
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut k in kids {
        assert!(k.wait().unwrap().success());
    }
    let l = listed(&db);
    assert_eq!(l.len(), 2);
    assert!(l.iter().all(|s| s["records"] == 2), "{l:?}");
}

#[test]
fn a_study_killed_mid_way_keeps_its_records_in_the_history() {
    let t = tempfile::tempdir().unwrap();
    let (target, db) = (t.path().join("target"), t.path().join("h.db"));
    std::fs::create_dir(&target).unwrap();
    let out = t.path().join("killed");
    let mut k = bin()
        .env("FSBENCH_HISTORY", &db)
        .args(["compare", &format!("dir:{}", target.display()), "-q"])
        .args(["--workload", WL, "--repeat", "20", "--out"])
        .arg(&out)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    wait_for_records(&out.join("results.jsonl"), 3, 120);
    k.kill().unwrap();
    k.wait().unwrap();
    let written = std::fs::read_to_string(out.join("results.jsonl"))
        .unwrap()
        .lines()
        .count() as i64;
    // Each record is indexed after it is written: at most the last one is missing, and the
    // database is whole.
    let l = listed(&db);
    assert_eq!(l.len(), 1);
    let n = l[0]["records"].as_i64().unwrap();
    assert!(n >= 2 && n <= written, "{n} of {written}");
    assert_eq!(l[0]["status"], "running");
    // Rebuilding from the directory gets back everything it holds.
    let o = bin()
        .env("FSBENCH_HISTORY", &db)
        .args(["history", "rebuild"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(listed(&db)[0]["records"].as_i64().unwrap(), written);
}

const J1: &str = "block:ioengine=null,rw=randread,bs=4k,runtime=200ms,size=8m";
const J2: &str = "block:ioengine=null,rw=write,bs=1m,runtime=200ms,size=8m";

/// `fsbench compare dir:TARGET` of these jobs into `out`, indexed in `db`.
fn compare_jobs(target: &Path, out: &Path, db: &Path, jobs: &[&str], repeat: u32) -> Output {
    let mut c = bin();
    c.env("FSBENCH_HISTORY", db)
        .args(["compare", &format!("dir:{}", target.display()), "-q"]);
    for j in jobs {
        c.args(["--workload", j]);
    }
    c.args(["--repeat", &repeat.to_string(), "--out"])
        .arg(out)
        .output()
        .unwrap()
}

fn json(o: &Output) -> serde_json::Value {
    serde_json::from_str(&stdout(o)).unwrap_or_else(|e| panic!("{e}: {}", stdout(o)))
}

#[test]
fn each_block_job_is_a_figure_of_its_own() {
    let t = tempfile::tempdir().unwrap();
    let (target, db) = (t.path().join("target"), t.path().join("h.db"));
    std::fs::create_dir(&target).unwrap();
    let [a, b, c, d] = ["a", "b", "c", "d"].map(|s| t.path().join(s));
    for (out, jobs) in [(&a, &[J1][..]), (&b, &[J2]), (&c, &[J1]), (&d, &[J1, J2])] {
        let o = compare_jobs(&target, out, &db, jobs, 1);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
    }
    let (a_, b_, c_, d_) = (
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        c.to_str().unwrap(),
        d.to_str().unwrap(),
    );
    // A 4k random read against a 1m write: nothing in common, said, exit 2.
    let o = fsb(&db, &["check", a_, "--against", b_]);
    assert_eq!(code(&o), 2, "{}", stdout(&o));
    assert!(stderr(&o).contains("no figure in common"), "{}", stderr(&o));
    assert!(!stdout(&o).contains("REGRESSED"), "{}", stdout(&o));
    // Against the history: only the earlier study of the same job.
    let o = fsb(
        &db,
        &["check", c_, "--against-history", "5", "--format", "json"],
    );
    assert!(code(&o) < 2, "{}", stderr(&o));
    let figs = json(&o)["figures"].as_array().unwrap().clone();
    assert_eq!(figs.len(), 1, "{figs:?}");
    assert_eq!(figs[0]["workload"], J1);
    assert_eq!(figs[0]["old_repeats"], 1, "{figs:?}");
    // A partial overlap: checked on it, the rest named.
    let o = fsb(&db, &["check", d_, "--against", c_]);
    assert!(code(&o) < 2, "{}", stderr(&o));
    assert!(
        stdout(&o).contains("left out") && stdout(&o).contains("NEW only (1): dir:"),
        "{}",
        stdout(&o)
    );
    assert!(stdout(&o).contains(J2), "{}", stdout(&o));
    let o = fsb(&db, &["check", d_, "--against", c_, "--format", "json"]);
    let v = json(&o);
    assert_eq!(v["figures"].as_array().unwrap().len(), 1);
    assert_eq!(v["left_out"]["new_only"][0]["workload"], J2);
    // The trend takes the spec `history` lists (spaces after commas too); a name that covers
    // two jobs is refused, naming them.
    let spec = format!("dir:{}", target.display());
    let list = stdout(&fsb(&db, &["history"]));
    assert!(list.contains(J1) && list.contains(J2), "{list}");
    let page = t.path().join("trend.html");
    let spaced = J1.replace(',', ", ");
    let o = bin()
        .env("FSBENCH_HISTORY", &db)
        .args(["history", "trend", "iops", "--target", &spec, "--workload"])
        .arg(&spaced)
        .arg("--html")
        .arg(&page)
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(stdout(&o).contains("across 3 studies"), "{}", stdout(&o));
    let o = fsb(
        &db,
        &[
            "history",
            "trend",
            "iops",
            "--target",
            &spec,
            "--workload",
            "block",
        ],
    );
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("names 2 jobs") && stderr(&o).contains(J1) && stderr(&o).contains(J2),
        "{}",
        stderr(&o)
    );
    let o = fsb(&db, &["history", "--workload", J2, "--json"]);
    assert_eq!(json(&o).as_array().unwrap().len(), 2);
}

#[test]
fn check_says_a_study_did_not_end_or_lacks_repeats() {
    let t = tempfile::tempdir().unwrap();
    let (target, db) = (t.path().join("target"), t.path().join("h.db"));
    std::fs::create_dir(&target).unwrap();
    let base = t.path().join("base");
    assert_eq!(code(&compare(&target, &base, &db, 3)), 0);
    // Killed after its first repeat: one record of three, its manifest still running.
    let killed = variant(&base, &t.path().join("killed"), "killed", &[1000.0]);
    let mpath = killed.join("manifest.json");
    let mut m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&mpath).unwrap()).unwrap();
    m["plan"]["repeat"] = 3.into();
    m["status"] = "running".into();
    std::fs::write(&mpath, m.to_string()).unwrap();
    let o = fsb(
        &db,
        &[
            "check",
            killed.to_str().unwrap(),
            "--against",
            base.to_str().unwrap(),
        ],
    );
    assert!(code(&o) < 2, "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("INCOMPLETE NEW") && out.contains("manifest says running"),
        "{out}"
    );
    assert!(out.contains("(1 of 3)"), "{out}");
    let o = fsb(
        &db,
        &[
            "check",
            base.to_str().unwrap(),
            "--against",
            killed.to_str().unwrap(),
            "--format",
            "json",
        ],
    );
    let v = json(&o);
    let inc = v["incomplete"].as_array().unwrap();
    assert!(
        inc.len() == 2 && inc.iter().all(|i| i.as_str().unwrap().starts_with("OLD")),
        "{inc:?}"
    );
    // A whole study says nothing of the kind.
    let o = fsb(
        &db,
        &[
            "check",
            base.to_str().unwrap(),
            "--against",
            base.to_str().unwrap(),
        ],
    );
    assert!(!stdout(&o).contains("INCOMPLETE"), "{}", stdout(&o));
}

#[test]
fn rebuilding_a_copied_study_keeps_it_at_its_original() {
    let t = tempfile::tempdir().unwrap();
    let (target, db) = (t.path().join("target"), t.path().join("h.db"));
    std::fs::create_dir(&target).unwrap();
    let a = t.path().join("a");
    assert_eq!(code(&compare(&target, &a, &db, 1)), 0);
    let copy = t.path().join("copy");
    assert!(sh(&format!("cp -a {} {}", a.display(), copy.display())).0);
    let o = fsb(&db, &["history", "rebuild", copy.to_str().unwrap()]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(
        stdout(&o).contains("skipped") && stdout(&o).contains("a copy of study"),
        "{}",
        stdout(&o)
    );
    let l = listed(&db);
    assert_eq!(l.len(), 1);
    let real = |p: &Path| std::fs::canonicalize(p).unwrap().display().to_string();
    assert_eq!(l[0]["dir"], real(&a));
    // A study moved away from where it was indexed is indexed where it is now.
    let moved = t.path().join("moved");
    std::fs::rename(&a, &moved).unwrap();
    let o = fsb(&db, &["history", "rebuild", moved.to_str().unwrap()]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(listed(&db)[0]["dir"], real(&moved));
}

#[test]
fn since_takes_only_dates_that_exist() {
    let t = tempfile::tempdir().unwrap();
    let db = t.path().join("h.db");
    for bad in ["2026-13-45", "2026-02-29", "2026-11-01T25:00:00Z", "soon"] {
        let o = fsb(&db, &["history", "--since", bad]);
        assert_eq!(code(&o), 2, "{bad}");
        assert!(
            stderr(&o).contains(bad) && stderr(&o).contains("2026-11-01"),
            "{}",
            stderr(&o)
        );
    }
    assert!(!db.exists());
}
