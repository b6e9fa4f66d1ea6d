//! `fsbench study`: the shipped studies resolve and run nothing with --check; a study file is a
//! compare written down; every compare writes a study.toml that runs it again; bad input is
//! exit 2 with nothing created; a small study on tmpfs ends with "Published vs this host".

use crate::common::*;

use std::path::Path;

const SHIPPED: [&str; 6] = [
    "hpc-btrfs-zfs",
    "ssd-ext4-xfs-btrfs",
    "btrfs-vs-zfs",
    "billion-files",
    "iozone-vs-xfs",
    "io500",
];

#[test]
fn the_list_names_the_shipped_studies_and_each_checks_without_running() {
    let o = run(&["study", "--list"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    for name in SHIPPED {
        assert!(out.contains(name), "{name} missing from {out}");
    }
    assert!(out.contains("Computers 2024"), "{out}");
    assert!(!out.to_ascii_lowercase().contains("seed"), "{out}");
    let t = tempfile::tempdir().unwrap();
    for name in SHIPPED {
        for scale in ["small", "full"] {
            // A work directory that does not exist: no room measured before, the tables'.
            let o = bin()
                .current_dir(t.path())
                .args(["study", name, "--check", "--scale", scale])
                .args(["--workdir", "/var/tmp/fsbench-tests/no-such-workdir"])
                .output()
                .unwrap();
            assert!(o.status.success(), "{name} {scale}: {}", stderr(&o));
            let text = stdout(&o);
            // (io500 is a benchmark, not a published study: it has no findings to check.)
            assert!(
                text.contains("targets:")
                    && (name == "io500" || text.contains("claims"))
                    && text.contains("nothing was run"),
                "{name}: {text}"
            );
            // Every target's space is judged and fits as shipped.
            let space: Vec<&str> = text
                .lines()
                .skip_while(|l| !l.starts_with("space, judged before the run"))
                .skip(1)
                .take_while(|l| !l.is_empty())
                .collect();
            assert!(!space.is_empty(), "{name} {scale}: no space judged: {text}");
            for l in space {
                assert!(l.contains(": fits "), "{name} {scale}: {l}");
            }
        }
    }
    assert_eq!(
        std::fs::read_dir(t.path()).unwrap().count(),
        0,
        "--check created something"
    );
}

fn usage(o: &std::process::Output) -> String {
    let e = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(!e.contains("panicked"), "{e}");
    e
}

#[test]
fn bad_study_input_is_exit_2_and_creates_nothing() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("s");
    let o_ = out.to_str().unwrap();
    let ok = format!(
        "targets = [\"dir:{}\"]\nworkloads = [\"smoke:size=1M\"]\n",
        t.path().display()
    );
    let cases: Vec<(String, &str)> = vec![
        ("/nonexistent/study.toml".to_string(), "no such study file"),
        ("no-such-study".to_string(), "billion-files"),
        (write(t.path(), "syntax.toml", "targets = [\"ext4\"\nworkloads = 1\n"), "line"),
        (write(t.path(), "key.toml", &format!("{ok}colour = 1\n")), "colour"),
        (
            write(
                t.path(),
                "metric.toml",
                &format!(
                    "{ok}[[claim]]\nsays = \"s\"\ntarget = \"dir:{}\"\nmetric = \"speed\"\nexpect = \"> 1\"\n",
                    t.path().display()
                ),
            ),
            "no workload emits a metric 'speed'",
        ),
        (
            write(
                t.path(),
                "label.toml",
                &format!("{ok}[[claim]]\nsays = \"s\"\ntarget = \"zfs\"\nmetric = \"iops\"\nexpect = \"> 1\"\n"),
            ),
            "not a target of the study",
        ),
    ];
    // What the command line refuses, a study file refuses (exit 2 before anything runs, the line
    // and what the key takes).
    let values: Vec<(String, &str)> = [
        (
            "repeat = 1000000000",
            "repeat takes a whole number from 1 to 1000",
        ),
        ("repeat = 0", "repeat takes a whole number from 1 to 1000"),
        ("size = \"0\"", "size takes a size of more than 0 bytes"),
        (
            "runtime = \"0s\"",
            "runtime takes a duration of more than 0",
        ),
        (
            "interval = \"1ms\"",
            "interval takes an interval from 100ms to 1h",
        ),
    ]
    .iter()
    .enumerate()
    .map(|(i, (line, want))| {
        (
            write(t.path(), &format!("v{i}.toml"), &format!("{ok}{line}\n")),
            *want,
        )
    })
    .collect();
    // A file that is not a study file is said to be one, where, and not shown back.
    let secrets: Vec<(String, &str)> = [
        "root:$6$SECRETSALT$SECRETHASH:19000:0:99999:7:::\n",
        &format!("{ok}repeat = \"SECRETHASH\"\n"),
        &format!("{ok}size = \"SECRETHASH\"\n"),
        &format!("{ok}\"SECRETHASH x\" = 1\n"),
    ]
    .iter()
    .enumerate()
    .map(|(i, text)| (write(t.path(), &format!("x{i}.toml"), text), "line"))
    .collect();
    for (arg, word) in cases.into_iter().chain(values).chain(secrets) {
        let e = usage(&run(&["study", &arg, "--out", o_]));
        assert!(e.contains(word), "{arg}: {e}");
        assert!(!e.contains("SECRET"), "{arg}: {e}");
        assert!(!out.exists(), "{arg}: a study directory was made");
    }
    let good = write(t.path(), "good.toml", &ok);
    for set in [
        "repeat=2\ntargets=[\"ext4\"]",
        "repeat=0",
        "repeat=1001",
        "size=0",
    ] {
        let e = usage(&run(&["study", &good, "--set", set, "--out", o_]));
        assert!(e.contains("--set"), "{set}: {e}");
        assert!(!out.exists(), "{set}: a study directory was made");
    }
    let e = usage(&run(&[
        "study",
        "billion-files",
        "--set",
        "colour=red",
        "--check",
    ]));
    assert!(e.contains("valid keys"), "{e}");
}

#[test]
fn a_study_file_runs_as_its_compare_and_a_compare_writes_one_that_runs_it_again() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().display();
    let workload = "block:ioengine=null,size=4m,runtime=100ms";
    // The compare line.
    let a = t.path().join("a");
    let o = Compare::new(&[&format!("dir:{d}")])
        .workload(workload)
        .args(&["--repeat", "2", "-q", "--seed", "7"])
        .out(a.to_str().unwrap())
        .run();
    assert!(o.status.success(), "{}", stderr(&o));
    // The same written down.
    let file = write(
        t.path(),
        "same.toml",
        &format!("targets = [\"dir:{d}\"]\nworkloads = [\"{workload}\"]\nrepeat = 2\nseed = 7\n"),
    );
    let b = t.path().join("b");
    let o = run(&["study", &file, "--out", b.to_str().unwrap(), "-q"]);
    assert!(o.status.success(), "{}", stderr(&o));
    // And the compare's own study.toml, run again.
    let c = t.path().join("c");
    let toml = a.join("study.toml");
    assert!(toml.exists());
    let o = run(&[
        "study",
        toml.to_str().unwrap(),
        "--out",
        c.to_str().unwrap(),
        "-q",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let keys = |dir: &Path| {
        let mut k: Vec<(String, String, String, u64)> = records_of(dir)
            .iter()
            .map(|r| {
                (
                    r["target"].as_str().unwrap().to_string(),
                    r["workload"].as_str().unwrap().to_string(),
                    r["test"].as_str().unwrap().to_string(),
                    r["repeat"].as_u64().unwrap(),
                )
            })
            .collect();
        k.sort();
        k
    };
    assert_eq!(keys(&a), keys(&b));
    assert_eq!(keys(&a), keys(&c));
    let plan = |dir: &Path| {
        let m: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap())
                .unwrap();
        let mut p = m["plan"].clone();
        p.as_object_mut().unwrap().remove("study");
        p
    };
    assert_eq!(
        plan(&a),
        plan(&b),
        "the study file's plan differs from the compare's"
    );
    assert_eq!(
        plan(&a),
        plan(&c),
        "study.toml does not give the compare's plan"
    );
    // The report of two studies of one plan merges them.
    let o = run(&["report", a.to_str().unwrap(), c.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn a_small_study_on_tmpfs_ends_with_published_vs_this_host() {
    if skip(!is_root(), "tmpfs targets need root") {
        return;
    }
    let _g = serial();
    let t = workdir();
    let file = write(
        t.path(),
        "small.toml",
        r#"
title = "Two tmpfs"
source = "this test"
targets = ["tmpfs:label=a", "tmpfs:label=b"]
workloads = ["block:rw=randread,bs=4k,iodepth=8,size=16m,runtime=300ms,ioengine=null"]
repeat = 3
size = "64M"

[[claim]]
says = "a is about as fast as b"
quote = "the same filesystem"
published = "1"
target = "a"
vs = "b"
metric = "iops"
# Wide: three 300 ms repeats of two alike targets on a loaded host still land inside.
expect = "0.01..100"

[[claim]]
says = "a is ten times b"
target = "a"
vs = "b"
metric = "iops"
expect = "> 10"

[[claim]]
says = "a runs a test nobody ran"
target = "a"
test = "missing"
metric = "iops"
expect = "> 1"
"#,
    );
    let out = t.path().join("s");
    let o = run(&[
        "study",
        &file,
        "--out",
        out.to_str().unwrap(),
        "--workdir",
        t.path().to_str().unwrap(),
        "-q",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let term = stdout(&o);
    assert!(term.contains("Published vs this host"), "{term}");
    for verdict in ["agrees", "disagrees", "inconclusive"] {
        assert!(term.contains(verdict), "{verdict}: {term}");
    }
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("Published vs this host") && md.contains("a is ten times b"));
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("Published vs this host"));
    let o = run(&["report", out.to_str().unwrap(), "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let claims = v["claims"].as_array().unwrap();
    let verdicts: Vec<&str> = claims
        .iter()
        .map(|c| c["verdict"].as_str().unwrap())
        .collect();
    assert_eq!(verdicts, ["agrees", "disagrees", "inconclusive"], "{v}");
    assert!(claims[0]["ci_lo"].as_f64().unwrap() <= claims[0]["value"].as_f64().unwrap());
    no_leftovers(t.path());
}

/// Every file of a study directory, by name, with its bytes.
fn files_of(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}

#[test]
fn a_resume_checks_without_running_and_refuses_an_edited_study_file() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().display();
    let file = write(
        t.path(),
        "s.toml",
        &format!(
            "targets = [\"dir:{d},label=a\", \"dir:{d},label=b\"]\nworkloads = [\"block:rw=randread,bs=4k,size=8m,runtime=300ms,ioengine=null\"]\nrepeat = 3\n"
        ),
    );
    let res = t.path().join("res");
    let r = res.to_str().unwrap();
    let mut child = bin()
        .args(["study", &file, "--out", r, "-q"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    wait_for_records(&res.join("results.jsonl"), 1, 60);
    let _ = child.kill();
    let _ = child.wait();
    let before = files_of(&res);
    let recorded = records_of(&res).len();
    assert!(recorded < 6, "the study ended before it was killed");
    // --check says what the resume would run, and runs nothing.
    let o = run(&["study", "--resume", r, "--check"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains("would run") && text.contains("nothing was run"),
        "{text}"
    );
    assert_eq!(files_of(&res), before, "--resume --check changed the study");
    // The flags of a new study do not apply to a resume.
    let o = run(&["study", "--resume", r, "--set", "repeat=5"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(files_of(&res), before);
    // An edited study.toml is refused, named, and left as the user wrote it.
    let toml = res.join("study.toml");
    let written = std::fs::read_to_string(&toml).unwrap();
    let edited = written.replace("repeat = 3", "repeat = 5");
    assert_ne!(edited, written);
    std::fs::write(&toml, &edited).unwrap();
    let before = files_of(&res);
    for args in [
        &["study", "--resume", r][..],
        &["study", "--resume", r, "--check"][..],
        &["compare", "--resume", r][..],
    ] {
        let e = usage(&run(args));
        assert!(
            e.contains("was edited") && e.contains("'repeat' (recorded: 3)"),
            "{args:?}: {e}"
        );
        assert_eq!(files_of(&res), before, "{args:?}");
    }
    // Put back, the resume runs the rest.
    std::fs::write(&toml, &written).unwrap();
    let o = run(&["study", "--resume", r, "-q"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(records_of(&res).len(), 6);
}

/// `compare ... --check`'s exit code and standard error (or output).
fn checked(args: &[&str]) -> (Option<i32>, String) {
    let mut v = vec!["compare"];
    v.extend_from_slice(args);
    v.push("--check");
    let o = run(&v);
    (o.status.code(), format!("{}{}", stderr(&o), stdout(&o)))
}

#[test]
fn files_are_judged_for_inodes_snapshots_by_rate_and_time_and_layouts_by_their_data() {
    // 10,000 files and their 111 folders on an ext4 of 3,000 inodes.
    let files = "files:tops=10,subs=10,files=100";
    let (code, e) = checked(&["ext4:inodes=3000", "-w", files, "--size", "1G"]);
    assert_eq!(code, Some(2), "{e}");
    assert!(
        e.contains("10,111 inodes of 2,989 free") && e.contains("(ext4:inodes=10628)"),
        "{e}"
    );
    let (code, e) = checked(&["ext4:inodes=20000", "-w", files, "--size", "1G"]);
    assert_eq!(code, Some(0), "{e}");
    // mdtest's 5,000 directories, then its 5,000 files (the directories removed first), its
    // tree and test directory: 5,003 at once.
    let md = |n: &str| format!("mdtest:-n {n} -u");
    let (code, e) = checked(&["ext4:inodes=3000", "-w", &md("5000"), "--size", "1G"]);
    assert_eq!(code, Some(2), "{e}");
    assert!(e.contains("5,003 inodes of 2,989 free"), "{e}");
    let (code, e) = checked(&["ext4:inodes=3000", "-w", &md("2000"), "--size", "1G"]);
    assert_eq!(code, Some(0), "{e}");
    // 2 snapshots a second for 10 s pin 20 copies of the 256 MiB rewritten: 5.25 GiB.
    let job = "block:rw=randwrite,bs=4k,size=256m,runtime=10s,snapshots=2/s";
    let (code, e) = checked(&["btrfs", "-w", job, "--size", "4G"]);
    assert_eq!(code, Some(2), "{e}");
    assert!(
        e.contains("5.25 GiB of rewrites") && e.contains("20 copies its snapshots pin"),
        "{e}"
    );
    let (code, e) = checked(&["btrfs", "-w", &format!("{job},keep=4"), "--size", "4G"]);
    assert_eq!(code, Some(0), "keep=4 pins 4 copies: {e}");
    // 1.5 GiB on three 1 GiB images: a raidz holds two of data, a mirror one.
    let (code, e) = checked(&["zfs:raidz", "-w", "smoke:size=1536M", "--size", "1G"]);
    assert_eq!(code, Some(0), "{e}");
    assert!(e.contains("3 images of 1 GiB (2 of them hold data)"), "{e}");
    let (code, e) = checked(&[
        "zfs:mirror,devices=3",
        "-w",
        "smoke:size=1536M",
        "--size",
        "1G",
    ]);
    assert_eq!(code, Some(2), "{e}");
}

#[test]
fn a_plan_whose_rewrites_cannot_fit_a_copy_on_write_target_is_refused_with_the_size_that_fits() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("study");
    let args = |check: bool| {
        let mut v = vec![
            "compare",
            "xfs",
            "btrfs",
            "-w",
            "hpc-battery",
            "--size",
            "2G",
            "--file-size",
            "256M",
            "--runtime",
            "1s",
            "--workdir",
        ];
        v.push(t.path().to_str().unwrap());
        if check {
            v.push("--check");
        } else {
            v.extend(["--out", out.to_str().unwrap()]);
        }
        v.into_iter().map(String::from).collect::<Vec<_>>()
    };
    for check in [true, false] {
        let o = bin().args(args(check)).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        let e = stderr(&o);
        assert!(e.contains("target 'btrfs'"), "{e}");
        assert!(
            e.contains("overwrites counted twice on copy-on-write btrfs"),
            "{e}"
        );
        assert!(e.contains("give --size 3G"), "{e}");
    }
    assert!(!out.exists(), "a refused plan made its study directory");
    assert!(
        !mounts_text().contains(t.path().to_str().unwrap()),
        "something was mounted"
    );
    // In place, or with btrfs's copy on write off, the same plan fits.
    let o = run(&[
        "compare",
        "xfs",
        "btrfs:nodatacow",
        "-w",
        "hpc-battery",
        "--size",
        "2G",
        "--file-size",
        "256M",
        "--check",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("btrfs:nodatacow: fits"), "{text}");
}
