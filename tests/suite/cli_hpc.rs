//! The `ior:` and `mdtest:` workloads through the binary, one process on a `dir:` target: the
//! tools' command lines refused by name before anything is made, their records and figures
//! (IOR's bandwidth over open to close, mdtest's phases in its order), what they leave, and
//! `report --format ior|mdtest` read back as IOR's and mdtest's own output is read. And fio's
//! `runtime=0` (no limit) and a phase that moved no data (never `ok`).

use crate::common::*;

use std::path::Path;

fn records(dir: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(dir.join("results.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// `fsbench compare dir:D -w W...` into D/study; D holds the target's files.
fn compare(d: &Path, workloads: &[&str]) -> std::process::Output {
    let target = d.join("t");
    std::fs::create_dir_all(&target).unwrap();
    let target = format!("dir:{}", target.display());
    let out = d.join("study");
    let mut args = vec!["compare", &target, "-q", "--out", out.to_str().unwrap()];
    for w in workloads {
        args.extend(["-w", w]);
    }
    run(&args)
}

fn m(r: &serde_json::Value, k: &str) -> f64 {
    r["metrics"][k]
        .as_f64()
        .unwrap_or_else(|| panic!("{k} in {r}"))
}

#[test]
fn options_fsbench_does_not_implement_are_refused_by_name_before_anything_runs() {
    let dir = workdir();
    for (w, says) in [
        ("ior:-w -W", "-W (checkWrite) is refused"),
        ("ior:-a MPIIO", "POSIX interface only"),
        ("ior:-w -q", "'-q' is not an option"),
        ("ior:-w -O summaryFile=x", "-O summaryFile: not a directive"),
        ("ior:-t 4m -b 6m", "multiple of -t"),
        ("ior:-o /etc/passwd", "relative to the target"),
        ("mdtest:-n 10 -S", "-S (shared file access) is refused"),
        ("mdtest:-n 10 -X -E", "-X (verify the data read) is refused"),
        ("mdtest:-n 10 -d ../x", "inside the target"),
    ] {
        let o = compare(dir.path(), &[w]);
        assert_eq!(o.status.code(), Some(2), "{w}: {}", stderr(&o));
        let e = stderr(&o);
        assert!(e.contains(says), "{w}: {e}");
        assert!(!dir.path().join("study").exists(), "{w}: nothing was made");
    }
}

#[test]
fn ior_times_open_to_close_each_iteration_and_prints_iors_summary() {
    let dir = workdir();
    let w = "ior:-w -r -F -t 64k -b 1m -s 3 -e -i 2 -o f";
    let o = compare(dir.path(), &[w]);
    assert!(o.status.success(), "{}", stderr(&o));
    let recs = records(&dir.path().join("study"));
    let tests: Vec<&str> = recs.iter().map(|r| r["test"].as_str().unwrap()).collect();
    assert_eq!(tests, ["write.0", "read.0", "write.1", "read.1"]);
    for r in &recs {
        assert_eq!(r["outcome"], "ok", "{r}");
        assert_eq!(
            m(r, "bytes"),
            3.0 * 1048576.0,
            "3 segments of a 1 MiB block"
        );
        assert_eq!(m(r, "ios"), 48.0);
        // IOR's bandwidth: every byte over open to close, which holds the transfers.
        let total = m(r, "runtime_s");
        assert!(
            total >= m(r, "ior_xfer_s") && total >= m(r, "ior_open_s"),
            "{r}"
        );
        let bw = m(r, "bytes") / total;
        assert!((m(r, "bytes_per_sec") - bw).abs() / bw < 1e-9);
        assert_eq!(r["config"]["ior"]["access"], "file-per-process");
    }
    assert!(
        recs[1]["notes"]
            .to_string()
            .contains("IOR keeps the page cache"),
        "a buffered read says it may be the cache's"
    );
    // The files went after each iteration (no -k).
    let left: Vec<_> = walk(&dir.path().join("t"));
    assert!(left.iter().all(|p| !p.contains("/f.")), "{left:?}");
    // IOR's own summary, read as IOR's is read: the mean of the iterations' bandwidths.
    let o = run(&[
        "report",
        dir.path().join("study").to_str().unwrap(),
        "--format",
        "ior",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    let mean = |access: &str| -> f64 {
        let at = text
            .lines()
            .position(|l| l.starts_with("Summary of all tests"))
            .unwrap();
        let l = text
            .lines()
            .skip(at + 2)
            .find(|l| l.starts_with(access))
            .unwrap();
        l.split_whitespace().nth(3).unwrap().parse().unwrap()
    };
    let want = (m(&recs[0], "bytes_per_sec") + m(&recs[2], "bytes_per_sec")) / 2.0 / 1048576.0;
    assert!((mean("write") - want).abs() < 0.01, "{text}");
    assert!(
        text.contains("Command line        : ior -w -r -F -t 64k -b 1m -s 3 -e -i 2 -o f"),
        "{text}"
    );
    let results = text
        .split("Results:")
        .nth(1)
        .unwrap()
        .split("Summary")
        .next()
        .unwrap();
    let lines: Vec<&str> = results.lines().filter(|l| l.starts_with("write")).collect();
    assert_eq!(lines.len(), 2, "a Results line per iteration: {text}");
}

fn walk(d: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(d).into_iter().flatten().flatten() {
        let p = e.path();
        out.push(p.display().to_string());
        if p.is_dir() {
            out.extend(walk(&p));
        }
    }
    out
}

#[test]
fn ior_keeps_its_files_with_k_and_a_later_read_checks_them() {
    let dir = workdir();
    // One workload writes and keeps; the next reads with -R and checks every transfer.
    let o = compare(
        dir.path(),
        &[
            "ior:-w -k -t 16k -b 256k -o sub/f",
            "ior:-r -R -k -t 16k -b 256k -o sub/f",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let recs = records(&dir.path().join("study"));
    assert_eq!(recs.len(), 2);
    assert_eq!(recs[1]["test"], "read");
    assert_eq!(m(&recs[1], "wrong_transfers"), 0.0, "{}", recs[1]);
    assert_eq!(recs[1]["outcome"], "ok");
}

#[test]
fn mdtest_runs_its_phases_in_its_order_and_removes_its_tree() {
    let dir = workdir();
    let o = compare(
        dir.path(),
        &["mdtest:-n 40 -u -z 1 -b 2 -w 100 -e 100 -i 2"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let recs = records(&dir.path().join("study"));
    let tests: Vec<&str> = recs.iter().map(|r| r["test"].as_str().unwrap()).collect();
    let order = [
        "tree-create",
        "dir-create",
        "dir-stat",
        "dir-rename",
        "dir-remove",
        "file-create",
        "file-stat",
        "file-read",
        "file-remove",
        "tree-remove",
    ];
    let want: Vec<String> = (0..2)
        .flat_map(|j| order.iter().map(move |t| format!("{t}.{j}")))
        .collect();
    assert_eq!(tests, want);
    for r in &recs {
        assert_eq!(r["outcome"], "ok", "{r}");
        let t = r["test"].as_str().unwrap();
        // 40 items over a tree of 3 directories: 13 each, 39 in all.
        let items = if t.starts_with("tree") { 3.0 } else { 39.0 };
        assert_eq!(m(r, "items"), items, "{t}");
        let rate = m(r, "ops_per_sec");
        assert!(
            (rate - items / m(r, "runtime_s")).abs() / rate < 1e-9,
            "{t}"
        );
    }
    let read = recs.iter().find(|r| r["test"] == "file-read.0").unwrap();
    assert_eq!(m(read, "bytes"), 39.0 * 100.0);
    assert!(read["notes"]
        .to_string()
        .contains("mdtest keeps the page cache"));
    // Nothing left but the test's (empty) directory.
    let left = walk(&dir.path().join("t"));
    assert!(
        left.iter()
            .all(|p| !p.contains("mdtest_tree") && !p.contains("test-dir")),
        "{left:?}"
    );
    let o = run(&[
        "report",
        dir.path().join("study").to_str().unwrap(),
        "--format",
        "mdtest",
    ]);
    let text = stdout(&o);
    assert!(
        text.contains("SUMMARY rate (in ops/sec): (of 2 iterations)"),
        "{text}"
    );
    let row = text
        .lines()
        .find(|l| l.trim_start().starts_with("File creation"))
        .unwrap();
    let f: Vec<f64> = row
        .split_whitespace()
        .skip(2)
        .map(|x| x.parse().unwrap())
        .collect();
    let rates: Vec<f64> = ["file-create.0", "file-create.1"]
        .iter()
        .map(|t| {
            m(
                recs.iter().find(|r| r["test"] == *t).unwrap(),
                "ops_per_sec",
            )
        })
        .collect();
    assert!((f[2] - (rates[0] + rates[1]) / 2.0).abs() < 0.01, "{row}");
    assert!((f[0] - rates[0].max(rates[1])).abs() < 0.01, "{row}");
}

#[test]
fn mdtest_phases_split_over_runs_find_the_tree_a_create_left() {
    let dir = workdir();
    let o = compare(
        dir.path(),
        &[
            "mdtest:-n 30 -F -C -w 64",
            "mdtest:-n 30 -F -T -E -e 64",
            "mdtest:-n 30 -F -r",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let recs = records(&dir.path().join("study"));
    let tests: Vec<&str> = recs.iter().map(|r| r["test"].as_str().unwrap()).collect();
    assert_eq!(
        tests,
        [
            "tree-create",
            "file-create",
            "file-stat",
            "file-read",
            "file-remove",
            "tree-remove"
        ]
    );
    assert!(recs.iter().all(|r| r["outcome"] == "ok"), "{recs:?}");
}

#[test]
fn a_phase_that_moved_no_data_is_never_ok_and_is_said_first() {
    let dir = workdir();
    let o = compare(dir.path(), &["mdtest:-n 0 -F -C"]);
    assert_eq!(o.status.code(), Some(1), "a failed phase: {}", stderr(&o));
    let recs = records(&dir.path().join("study"));
    let create = recs.iter().find(|r| r["test"] == "file-create").unwrap();
    assert_eq!(create["outcome"], "failed");
    assert!(
        create["error"].as_str().unwrap().contains("moved no data"),
        "{create}"
    );
    let table = stdout(&o);
    let at = table.find("moved no data").expect("the report says it");
    assert!(
        at < table.find("What limited").unwrap_or(usize::MAX),
        "{table}"
    );
}

#[test]
fn runtime_0_is_no_limit_as_fio() {
    let dir = workdir();
    let o = compare(
        dir.path(),
        &["block:rw=write,bs=64k,size=2m,ioengine=psync,direct=0,runtime=0"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let r = &records(&dir.path().join("study"))[0];
    assert_eq!(r["outcome"], "ok");
    assert_eq!(
        m(r, "bytes"),
        2.0 * 1048576.0,
        "the whole size, not nothing"
    );
    assert!(
        r["notes"]
            .to_string()
            .contains("time_based without a runtime"),
        "{r}"
    );
}
