//! A fuzzer for the history's inputs: the database file itself (random bytes, a real database
//! cut short, with damaged pages, bytes flipped, odd header fields, schema versions and
//! application ids), `fsbench history`'s filters (`--since`, `--target`, `--workload`, the
//! trend's target and workload), and a study directory's manifest.json and results.jsonl as the
//! indexer reads them. No input may panic: each case runs under catch_unwind, and every 40th
//! damaged database also goes through the binary (`history`, `history trend`, `check
//! --against-history`), which must not exit 101.
//!
//! `FSBENCH_FUZZ_CASES` sets the number of cases (the suite runs 1,500; `FSBENCH_FUZZ_CASES=100000`
//! for a longer run); `FSBENCH_FUZZ_SEED` replays a run.

use crate::common::fuzz::{cases_and_seed, Rng};
use crate::common::*;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use fsbench::history::{Db, ListFilter};

const WL: &str = "block:ioengine=null,rw=randread,size=8m,runtime=100ms";

/// Texts that have broken filters and JSON readers before, or could.
const TEXTS: &[&str] = &[
    "",
    " ",
    "%",
    "_",
    "%_%",
    "'",
    "\"",
    "';DROP TABLE studies;--",
    "\\",
    "\u{0}",
    "block",
    "block:",
    "block:rw=read",
    "block: rw = read ,bs=4k",
    "fio:",
    "fio:/etc/passwd",
    "dir:/tmp",
    "dir:",
    "é",
    "日本語",
    "2026-11-01",
    "2026-13-45",
    "2026-02-29",
    "2024-02-29T23:59:60Z",
    "2026-11-01T12:00:00+25:00",
    "2026-11-01T",
    "9999-99-99",
    "0000-00-00",
    "-1",
    "1e308",
    "NaN",
    "18446744073709551616",
    ":",
    "::::",
    "a=b=c",
];

/// JSON values a study file's field could hold instead of what fsbench wrote.
const VALUES: &[&str] = &[
    "null",
    "true",
    "0",
    "-1",
    "4294967296",
    "18446744073709551616",
    "1e308",
    "-1e308",
    "0.5",
    "\"\"",
    "\"x\"",
    "\"running\"",
    "\"complete\"",
    "\"ok\"",
    "\"failed\"",
    "\"é日本\"",
    "[]",
    "[[\"a\",\"b\"]]",
    "{}",
    "{\"iops\":1e308}",
    "{\"iops\":-5}",
    "{\"iops\":0}",
];

fn panics(f: impl FnOnce()) -> Option<String> {
    catch_unwind(AssertUnwindSafe(f)).err().map(|p| {
        p.downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "a panic".into())
    })
}

/// A random text: one of TEXTS, random bytes made text, or both.
fn text(r: &mut Rng) -> String {
    match r.below(3) {
        0 => r.pick(TEXTS).to_string(),
        1 => (0..r.below(24))
            .map(|_| char::from_u32(r.below(0x3000) as u32).unwrap_or('x'))
            .collect(),
        _ => format!("{}{}", r.pick(TEXTS), r.pick(TEXTS)),
    }
}

/// A database's bytes, damaged one of several ways from a real one.
fn damaged_db(r: &mut Rng, base: &[u8]) -> Vec<u8> {
    let mut b = base.to_vec();
    match r.below(7) {
        0 => {
            let mut v: Vec<u8> = (0..r.below(9000)).map(|_| r.next() as u8).collect();
            if r.chance(50) && v.len() >= 16 {
                v[..16].copy_from_slice(b"SQLite format 3\0");
            }
            return v;
        }
        1 => b.truncate(r.below(base.len())),
        2 => {
            for _ in 0..1 + r.below(16) {
                let i = r.below(b.len());
                b[i] ^= 1 << r.below(8);
            }
        }
        3 => {
            let page = 4096 * r.below(b.len() / 4096);
            let zero = r.chance(50);
            for x in b.iter_mut().skip(page).take(4096) {
                *x = if zero { 0 } else { r.next() as u8 };
            }
        }
        4 => {
            // user_version (offset 60) and application_id (68).
            let odd = [-1i32, i32::MIN, i32::MAX, 0, 1, 2, 3, 4, 0x6673_6268];
            let at = if r.chance(70) { 60 } else { 68 };
            let v = if r.chance(70) {
                odd[r.below(odd.len())]
            } else {
                r.next() as i32
            };
            b[at..at + 4].copy_from_slice(&v.to_be_bytes());
        }
        5 => {
            // The header's own fields: page size, reserved bytes, sizes, counts, formats.
            let at = [
                16, 17, 18, 19, 20, 21, 22, 23, 28, 32, 36, 44, 48, 52, 56, 64,
            ][r.below(16)];
            b[at] = r.next() as u8;
        }
        _ => {
            // A page's header (a b-tree page's type, cell count, pointers).
            let page = 4096 * r.below(b.len() / 4096);
            let at = page + if page == 0 { 100 } else { 0 } + r.below(12);
            b[at] = r.next() as u8;
        }
    }
    b
}

/// A study file's text, damaged: a field's value replaced, a field dropped, bytes flipped, or
/// the text cut short.
fn damaged_json(r: &mut Rng, text: &str) -> String {
    let mut v: serde_json::Value = match serde_json::from_str(text) {
        Ok(v) if r.chance(75) => v,
        _ => {
            let mut b = text.as_bytes().to_vec();
            if r.chance(50) {
                b.truncate(r.below(b.len() + 1));
            } else if !b.is_empty() {
                for _ in 0..1 + r.below(4) {
                    let i = r.below(b.len());
                    b[i] = r.next() as u8;
                }
            }
            return String::from_utf8_lossy(&b).into_owned();
        }
    };
    for _ in 0..1 + r.below(3) {
        // A random node, as a JSON pointer walked down from the top.
        let mut pointer = String::new();
        let mut at = &v;
        for _ in 0..r.below(5) {
            let next = match at {
                serde_json::Value::Object(m) if !m.is_empty() => {
                    let k = m.keys().nth(r.below(m.len())).unwrap();
                    pointer.push_str(&format!("/{}", k.replace('~', "~0").replace('/', "~1")));
                    &m[k]
                }
                serde_json::Value::Array(a) if !a.is_empty() => {
                    let i = r.below(a.len());
                    pointer.push_str(&format!("/{i}"));
                    &a[i]
                }
                _ => break,
            };
            at = next;
        }
        let node = v.pointer_mut(&pointer).unwrap();
        match node {
            serde_json::Value::Object(m) if r.chance(30) && !m.is_empty() => {
                let k = m.keys().nth(r.below(m.len())).cloned().unwrap();
                m.remove(&k);
            }
            node => {
                let s = r.pick(VALUES);
                *node = serde_json::from_str(s).unwrap_or(serde_json::Value::Null);
            }
        }
    }
    v.to_string()
}

/// Every query a reading command makes, with these filters.
fn read_all(db: &Db, r: &mut Rng, target: &str) {
    let pick = |r: &mut Rng| -> Option<String> { r.chance(50).then(|| text(r)) };
    let f = ListFilter {
        target: pick(r),
        workload: pick(r),
        host: pick(r),
        since: pick(r),
    };
    let _ = db.list(&f);
    let _ = db.list(&ListFilter::default());
    let t = if r.chance(50) {
        target.to_string()
    } else {
        text(r)
    };
    let w = if r.chance(50) {
        WL.to_string()
    } else {
        text(r)
    };
    let _ = db.jobs_of(&t, &w);
    let _ = db.metrics_of(&t, &w);
    let _ = db.series(&t, &w, if r.chance(70) { "iops" } else { "x" });
    let _ = db.count();
}

fn remove_db(p: &Path) {
    for s in ["", "-wal", "-shm", "-journal"] {
        let _ = std::fs::remove_file(format!("{}{s}", p.display()));
    }
}

/// The binary on a damaged database: any exit but a panic's.
fn through_the_binary(db: &Path, study: &Path, target: &str) -> Option<String> {
    let s = study.to_str().unwrap();
    for args in [
        vec!["history"],
        vec![
            "history",
            "trend",
            "iops",
            "--target",
            target,
            "--workload",
            WL,
            "--json",
        ],
        vec!["check", s, "--against-history", "2"],
    ] {
        let o = bin()
            .env("FSBENCH_HISTORY", db)
            .current_dir(db.parent().unwrap())
            .args(&args)
            .output()
            .unwrap();
        let e = stderr(&o);
        if o.status.code().is_none_or(|c| c == 101) || e.contains("panicked") {
            return Some(format!("{args:?}: {:?}\n{e}", o.status));
        }
    }
    None
}

/// Two studies of one target in `t` (the second the newer), and a database of them.
fn material(t: &Path) -> (PathBuf, PathBuf, String, Vec<u8>) {
    let target = t.join("target");
    std::fs::create_dir(&target).unwrap();
    let spec = format!("dir:{}", target.display());
    let studies: Vec<PathBuf> = ["s1", "s2"].iter().map(|s| t.join(s)).collect();
    for s in &studies {
        let o = bin()
            .env("FSBENCH_HISTORY", t.join("made.db"))
            .args([
                "compare",
                &spec,
                "-q",
                "--workload",
                WL,
                "--repeat",
                "2",
                "--out",
            ])
            .arg(s)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let base = t.join("base.db");
    {
        let mut db = Db::open(&base).unwrap();
        for s in &studies {
            db.index_study(s).unwrap();
        }
    }
    let bytes = std::fs::read(&base).unwrap();
    (studies[0].clone(), studies[1].clone(), spec, bytes)
}

#[test]
fn no_history_input_panics() {
    let (cases, seed) = cases_and_seed(1_500, 0x5eed_0b15_7041_0001);
    let t = tempfile::tempdir().unwrap();
    let (s1, s2, spec, base) = material(t.path());
    let manifest = std::fs::read_to_string(s1.join("manifest.json")).unwrap();
    let results = std::fs::read_to_string(s1.join("results.jsonl")).unwrap();
    let reader = Db::open_read(&t.path().join("base.db")).unwrap();
    let case_db = t.path().join("case.db");
    let scratch = t.path().join("scratch");
    std::fs::create_dir(&scratch).unwrap();
    let mut index = Db::open(&t.path().join("index.db")).unwrap();
    std::panic::set_hook(Box::new(|_| {}));
    let mut r = Rng(seed | 1);
    let mut found: Vec<String> = Vec::new();
    let (mut dbs, mut filters, mut files, mut runs) = (0, 0, 0, 0);
    // How many damaged databases still opened, and how many damaged studies still indexed:
    // a fuzzer whose every case is refused at the door tests only the door.
    let (mut opened, mut indexed) = (0, 0);
    for case in 0..cases {
        match case % 3 {
            0 => {
                dbs += 1;
                remove_db(&case_db);
                let bytes = damaged_db(&mut r, &base);
                std::fs::write(&case_db, &bytes).unwrap();
                let write = r.chance(30);
                let mut r2 = Rng(r.next() | 1);
                if let Some(m) = panics(|| {
                    if let Ok(db) = Db::open_read(&case_db) {
                        opened += 1;
                        read_all(&db, &mut r2, &spec);
                    }
                    if write {
                        if let Ok(mut db) = Db::open(&case_db) {
                            let _ = db.index_study(&s2);
                            read_all(&db, &mut r2, &spec);
                        }
                    }
                }) {
                    found.push(format!("case {case}: a damaged database panicked ({m})"));
                }
                if dbs % 40 == 1 {
                    runs += 1;
                    remove_db(&case_db);
                    std::fs::write(&case_db, &bytes).unwrap();
                    if let Some(m) = through_the_binary(&case_db, &s2, &spec) {
                        found.push(format!("case {case}: the binary panicked: {m}"));
                    }
                }
            }
            1 => {
                filters += 1;
                let since = text(&mut r);
                let mut r2 = Rng(r.next() | 1);
                if let Some(m) = panics(|| {
                    let _ = fsbench::cli::history::since_arg(&since);
                    read_all(&reader, &mut r2, &spec);
                }) {
                    found.push(format!("case {case}: a filter panicked ({m}): {since:?}"));
                }
            }
            _ => {
                files += 1;
                let (m, res) = if r.chance(50) {
                    (damaged_json(&mut r, &manifest), results.clone())
                } else {
                    let lines: Vec<String> = results
                        .lines()
                        .map(|l| {
                            if r.chance(60) {
                                damaged_json(&mut r, l)
                            } else {
                                l.to_string()
                            }
                        })
                        .collect();
                    (manifest.clone(), lines.join("\n") + "\n")
                };
                std::fs::write(scratch.join("manifest.json"), &m).unwrap();
                std::fs::write(scratch.join("results.jsonl"), &res).unwrap();
                if let Some(p) = panics(|| {
                    indexed += usize::from(index.index_study(&scratch).is_ok());
                }) {
                    found.push(format!(
                        "case {case}: indexing panicked ({p}):\n{m}\n--\n{res}"
                    ));
                }
            }
        }
        if found.len() >= 5 {
            break;
        }
    }
    let _ = std::panic::take_hook();
    assert!(
        found.is_empty(),
        "{} panics (seed {seed}):\n{}",
        found.len(),
        found.join("\n\n")
    );
    eprintln!(
        "fuzz: {cases} cases ({dbs} damaged databases, {opened} of them opened, {runs} through the binary; {filters} filters; {files} study files, {indexed} of them indexed), no panic (seed {seed})"
    );
}
