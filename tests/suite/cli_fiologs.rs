//! fio's log files through the binary: a job with every log option run in a temporary
//! directory writes fio's files with fio's names and columns (compared with the files the real
//! fio writes for the same job when fio is installed), and a log path that cannot be written is
//! refused before anything runs.

use crate::common::*;

use std::collections::BTreeMap;
use std::path::Path;

const EVERY_LOG: &str = "\
[global]
size=2m
bs=4k
ioengine=psync
runtime=1
time_based
[each]
rw=randrw
number_ios=50
time_based=0
write_bw_log
write_lat_log=lat
write_iops_log
log_offset=1
log_prio=1
[window]
rw=randread
numjobs=2
write_bw_log=win
write_lat_log=win
write_iops_log=win
write_hist_log=win
log_avg_msec=200
log_hist_msec=500
log_hist_coarseness=3
log_max_value=1
per_job_logs=0
";

/// The `.log` files of a directory: name -> (lines, columns of the first line, directions).
fn logs(dir: &Path) -> BTreeMap<String, (usize, usize, Vec<String>)> {
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        if !name.ends_with(".log") {
            continue;
        }
        let text = std::fs::read_to_string(dir.join(&name)).unwrap();
        let rows: Vec<Vec<&str>> = text.lines().map(|l| l.split(", ").collect()).collect();
        let cols = rows.first().map_or(0, |r| r.len());
        let ddir = if name.contains("hist") { 1 } else { 2 };
        let mut dirs: Vec<String> = rows.iter().map(|r| r[ddir].to_string()).collect();
        dirs.sort();
        dirs.dedup();
        out.insert(name, (rows.len(), cols, dirs));
    }
    out
}

fn job_in(dir: &Path) -> std::path::PathBuf {
    let p = dir.join("logs.fio");
    std::fs::write(&p, EVERY_LOG).unwrap();
    p
}

#[test]
fn every_log_option_writes_fios_files_names_and_columns() {
    let dir = workdir();
    let job = job_in(dir.path());
    let o = bin()
        .current_dir(dir.path())
        .args(["run", "logs.fio", "--out", "study"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let ours = logs(dir.path());
    let names: Vec<&str> = ours.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        [
            "each_bw.1.log",
            "each_iops.1.log",
            "lat_clat.1.log",
            "lat_lat.1.log",
            "lat_slat.1.log",
            "win_bw.log",
            "win_clat.log",
            "win_clat_hist.log",
            "win_iops.log",
            "win_lat.log",
            "win_slat.log",
        ]
    );
    // A line per I/O: time, value, ddir, bs, offset, prio (log_prio: hexadecimal).
    assert_eq!(ours["each_bw.1.log"].0, 50);
    assert_eq!(ours["each_bw.1.log"].1, 6);
    let first = std::fs::read_to_string(dir.path().join("lat_clat.1.log")).unwrap();
    assert!(first.lines().all(|l| l.ends_with(", 0x0000")), "{first}");
    // Windows: time, value, ddir, 0, 0; both workers in one file (per_job_logs=0).
    assert_eq!(ours["win_iops.log"].1, 5);
    assert!(ours["win_iops.log"].0 >= 8, "{:?}", ours["win_iops.log"]);
    assert_eq!(ours["win_clat_hist.log"].1, 3 + 1856 / 8);
    assert_eq!(ours["win_lat.log"].2, ["0"]);
    if !have("fio") {
        eprintln!("SKIPPED: the comparison with fio (fio is not installed)");
        return;
    }
    let fio_dir = workdir();
    std::fs::copy(&job, fio_dir.path().join("logs.fio")).unwrap();
    let (ok, out) = sh(&format!(
        "cd {} && fio --output=/dev/null logs.fio",
        fio_dir.path().display()
    ));
    assert!(ok, "{out}");
    let theirs = logs(fio_dir.path());
    assert_eq!(
        ours.keys().collect::<Vec<_>>(),
        theirs.keys().collect::<Vec<_>>()
    );
    for (name, (_, cols, dirs)) in &theirs {
        if *cols == 0 {
            assert_eq!(ours[name].1, 0, "{name}: empty in fio's too");
            continue;
        }
        assert_eq!((&ours[name].1, &ours[name].2), (cols, dirs), "{name}");
    }
}

#[test]
fn a_log_that_cannot_be_written_is_refused_before_the_job_runs() {
    let dir = workdir();
    std::fs::write(
        dir.path().join("bad.fio"),
        "[j]\nrw=write\nsize=1m\nwrite_lat_log=missing/dir/x\n",
    )
    .unwrap();
    let o = bin()
        .current_dir(dir.path())
        .args(["run", "bad.fio", "--out", "study"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("write_lat_log") && e.contains("missing/dir/x_lat.1.log"),
        "{e}"
    );
    assert!(!dir.path().join("j.0.0").exists(), "the job did not run");
    let o = bin()
        .current_dir(dir.path())
        .args(["run", "--check", "bad.fio"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    std::fs::write(
        dir.path().join("z.fio"),
        "[j]\nrw=write\nsize=1m\nwrite_bw_log\nlog_compression=4m\n",
    )
    .unwrap();
    let o = bin()
        .current_dir(dir.path())
        .args(["run", "--check", "z.fio"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("z.fio:5: log_compression=4m"),
        "{}",
        stderr(&o)
    );
}

/// The (action, offset, length) lines of an iolog, without times and file names.
fn ops(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() == 5).then(|| f[2..].join(" "))
        })
        .collect()
}

#[test]
fn a_recorded_iolog_replays_on_two_targets_with_the_same_offsets_and_sizes() {
    let dir = workdir();
    let d = dir.path();
    for sub in ["a", "b", "c"] {
        std::fs::create_dir(d.join(sub)).unwrap();
    }
    std::fs::write(
        d.join("rec.fio"),
        "[rec]\ndirectory=a\nrw=randrw\nsize=256k\nbssplit=4k/50:16k/50\nnumber_ios=40\nfsync=8\nwrite_iolog=rec.iolog\n",
    )
    .unwrap();
    let o = bin()
        .current_dir(d)
        .args(["run", "rec.fio", "--out", "s0"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let recorded = ops(&d.join("rec.iolog"));
    // 40 I/Os or one pass over the 256 KiB, whichever comes first.
    assert!(recorded.iter().filter(|l| !l.starts_with("sync")).count() > 10);
    assert!(recorded.iter().any(|l| l == "sync 0 0"), "{recorded:?}");
    for (sub, extra) in [
        ("b", ""),
        ("c", "replay_no_stall=1\nreplay_time_scale=200\n"),
    ] {
        std::fs::write(
            d.join(format!("{sub}.fio")),
            format!(
                "[play]\ndirectory={sub}\nread_iolog=rec.iolog\nwrite_iolog={sub}.iolog\n{extra}"
            ),
        )
        .unwrap();
        let o = bin()
            .current_dir(d)
            .args(["run", &format!("{sub}.fio"), "--out", &format!("s{sub}")])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(ops(&d.join(format!("{sub}.iolog"))), recorded, "{sub}");
    }
}

/// A job of `opts` in `d` is refused with `want` (exit 2) and nothing runs.
fn refused_replay(d: &Path, opts: &str, want: &str) {
    std::fs::write(d.join("j.fio"), format!("[j]\n{opts}")).unwrap();
    let o = bin()
        .current_dir(d)
        .args(["run", "j.fio", "--out", "s"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{opts}: {}", stderr(&o));
    assert!(stderr(&o).contains(want), "{opts}: {}", stderr(&o));
    assert!(
        !d.join("j.0.0").exists() && !d.join("s").exists(),
        "{opts}: nothing ran"
    );
}

#[test]
fn a_replay_past_the_end_of_its_file_is_refused_before_it_starts() {
    let dir = workdir();
    let d = dir.path();
    let trace = r#"fio version 2 iolog
/x add
/x open
/x write 1048576 4096
/x close
"#;
    std::fs::write(d.join("t.iolog"), trace).unwrap();
    refused_replay(d, "size=64k\nread_iolog=t.iolog\n", "reaches byte 1052672");
}

/// A trace that does not read is refused with its line (an iolog), its byte (a blktrace), or
/// what it is not; a missing one by its name.
#[test]
fn a_trace_that_does_not_read_is_refused_with_where_it_failed() {
    let dir = workdir();
    let d = dir.path();
    std::fs::write(
        d.join("bad.iolog"),
        "fio version 3 iolog\n0 /x add\n7 /x read 0 zero\n",
    )
    .unwrap();
    std::fs::write(d.join("bt.bin"), [0x07u8, 0x74, 0x61, 0x65, 0, 0, 0, 1]).unwrap();
    std::fs::write(d.join("junk.bin"), [0xffu8, 0xfe, 0, 1, 2, 3]).unwrap();
    refused_replay(d, "read_iolog=bad.iolog\n", "bad.iolog:3: length 'zero'");
    refused_replay(
        d,
        "read_iolog=bt.bin\n",
        "byte 0 of a blktrace: a truncated event",
    );
    refused_replay(d, "read_iolog=junk.bin\n", "bad magic");
    refused_replay(d, "read_iolog=missing.iolog\n", "missing.iolog");
}

#[test]
fn an_asynchronous_engine_times_submission_and_completion_apart() {
    let dir = workdir();
    let d = dir.path();
    std::fs::write(
        d.join("s.fio"),
        "[s]\nfilename=s.dat\nsize=1m\nbs=4k\nrw=randread\nioengine=libaio\niodepth=4\nwrite_lat_log=s\nslat_percentiles=1\n",
    )
    .unwrap();
    let o = bin()
        .current_dir(d)
        .args(["run", "s.fio", "--out", "st", "--output-format", "json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let read = |n: &str| -> Vec<u64> {
        std::fs::read_to_string(d.join(n))
            .unwrap()
            .lines()
            .map(|l| l.split(", ").nth(1).unwrap().parse().unwrap())
            .collect()
    };
    let (lat, clat, slat) = (
        read("s_lat.1.log"),
        read("s_clat.1.log"),
        read("s_slat.1.log"),
    );
    assert_eq!(lat.len(), 256, "a line per I/O");
    assert_eq!((clat.len(), slat.len()), (256, 256));
    for i in 0..lat.len() {
        assert!(slat[i] > 0, "line {i}: the submission took time");
        assert_eq!(clat[i] + slat[i], lat[i], "line {i}: lat = slat + clat");
    }
    // fio's JSON carries the submission latency too.
    let j: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let r = &j["jobs"][0]["read"];
    assert_eq!(r["slat_ns"]["N"], 256, "{r}");
    assert!(r["slat_ns"]["mean"].as_f64().unwrap() > 0.0);
    assert!(r["clat_ns"]["mean"].as_f64().unwrap() < r["lat_ns"]["mean"].as_f64().unwrap());
}

/// `fsbench run` (or `run --check` with `check`) of a job file `text` in `dir`: its exit code
/// and what it said.
fn run_job(dir: &Path, text: &str, check: bool) -> (Option<i32>, String) {
    std::fs::write(dir.join("o.fio"), text).unwrap();
    let mut c = bin();
    c.current_dir(dir).arg("run");
    if check {
        c.arg("--check");
    }
    let o = c.args(["o.fio", "--out", "study"]).output().unwrap();
    (o.status.code(), stderr(&o))
}

#[test]
fn a_log_iolog_or_verify_state_aimed_at_a_symbolic_link_is_refused_and_its_file_kept() {
    let dir = workdir();
    let d = dir.path();
    std::fs::write(d.join("decoy"), "keep").unwrap();
    for link in ["iolog", "lnk_bw.1.log", "local-j-0-verify.state"] {
        std::os::unix::fs::symlink(d.join("decoy"), d.join(link)).unwrap();
    }
    let job = "[j]\nrw=write\nsize=64k\nbs=4k\nfilename=data\n";
    for (opt, path) in [
        ("write_iolog=iolog", "iolog"),
        ("write_bw_log=lnk", "lnk_bw.1.log"),
        (
            "verify=crc32c\nverify_state_save=1",
            "local-j-0-verify.state",
        ),
    ] {
        for check in [true, false] {
            let (code, e) = run_job(d, &format!("{job}{opt}\n"), check);
            assert_eq!(code, Some(2), "{opt}: {e}");
            assert!(
                e.contains(&format!("{path}: is a symbolic link")),
                "{opt}: {e}"
            );
        }
        assert!(
            !d.join("study").exists() && !d.join("data").exists(),
            "{opt}: nothing made"
        );
        assert_eq!(std::fs::read_to_string(d.join("decoy")).unwrap(), "keep");
    }
    // compare checks it before any target is got.
    std::fs::create_dir(d.join("t")).unwrap();
    let o = bin()
        .current_dir(d)
        .args(["compare", &format!("dir:{}", d.join("t").display())])
        .args(["-w", "fio:o.fio", "--out", "study"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("is a symbolic link"), "{}", stderr(&o));
    assert!(!d.join("study").exists());
    assert_eq!(std::fs::read_to_string(d.join("decoy")).unwrap(), "keep");
}

#[test]
fn a_log_or_iolog_in_a_kernel_filesystem_is_refused_before_anything_runs() {
    let dir = workdir();
    let d = dir.path();
    // --check only: a run that was not refused would write there.
    for opt in [
        "write_iolog=/proc/sys/kernel/hostname",
        "write_bw_log=/proc/sys/kernel/x",
        "write_lat_log=/sys/kernel/x",
        "write_iops_log=/dev/x",
    ] {
        let (code, e) = run_job(d, &format!("[j]\nrw=write\nsize=64k\n{opt}\n"), true);
        assert_eq!(code, Some(2), "{opt}: {e}");
        assert!(e.contains("fsbench writes no file there"), "{opt}: {e}");
        let key = opt.split('=').next().unwrap();
        assert!(e.contains(&format!("job 'j': {key}")), "{opt}: {e}");
    }
    assert!(!d.join("j.0.0").exists() && !d.join("study").exists());
}
