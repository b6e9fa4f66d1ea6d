//! Many ranks under a real `mpirun -np 4 --oversubscribe` (OpenMPI), against a `dir:` target:
//! IOR's accounting on a null-engine block job (the aggregate is the sum of the ranks; the
//! window runs from the first start to the last end; first done <= last done), files written by
//! rank k verified by rank k+1, a killed rank leaving a study that resumes, a hung rank ended by
//! the timeout, a rank with another plan refused. Without the `mpi` feature: the refusal.

// The helpers below serve the multi-rank tests (built with --features mpi).
#![cfg_attr(not(feature = "mpi"), allow(dead_code, unused_imports))]

use crate::common::*;

use std::path::Path;
use std::process::{Command, Output};

pub(crate) fn records(dir: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(dir.join("results.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

pub(crate) fn manifest(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap()
}

pub(crate) fn ranks(r: &serde_json::Value) -> Vec<serde_json::Value> {
    r["ranks"].as_array().cloned().unwrap_or_default()
}

#[test]
fn without_mpi_several_ranks_are_refused_with_how_to_build() {
    // (scripts/test runs the suite on the shipped build, which has MPI.)
    let version = stdout(&run(&["--version"]));
    if skip(
        version.contains("mpi"),
        "the fsbench under test is built with MPI (the refusal is a build's without it)",
    ) {
        return;
    }
    // What an OpenMPI launcher sets in each rank's environment.
    let dir = workdir();
    let out = dir.path().join("study");
    let o = bin()
        .env("OMPI_COMM_WORLD_SIZE", "4")
        .env("OMPI_COMM_WORLD_RANK", "1")
        .args(["compare", "dir:/tmp", "-w", "smoke", "-q", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("built without MPI") && e.contains("4 ranks"),
        "{e}"
    );
    assert!(e.contains("--features mpi"), "{e}");
    assert!(!out.exists(), "nothing is created");
    // One rank is one process: it runs.
    let o = bin()
        .env("OMPI_COMM_WORLD_SIZE", "1")
        .env("OMPI_COMM_WORLD_RANK", "0")
        .args(["compare", "dir:/tmp", "-w", "smoke:size=1M", "-q", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

/// One multi-rank test's places: a directory every rank sees (the `dir:` target) and the study
/// directory. None (printed) without mpirun. Holds the test lock while it lives.
pub(crate) struct Setup {
    _lock: crate::common::Ranks,
    _dir: tempfile::TempDir,
    pub(crate) shared: std::path::PathBuf,
    pub(crate) out: std::path::PathBuf,
    pub(crate) target: String,
}

pub(crate) fn setup() -> Option<Setup> {
    let lock = crate::common::ranks_lock();
    if skip(
        !have("mpirun"),
        "mpirun not found (apt-get install openmpi-bin)",
    ) {
        return None;
    }
    let dir = workdir();
    let (shared, out) = (dir.path().join("shared"), dir.path().join("study"));
    std::fs::create_dir(&shared).unwrap();
    let target = format!("dir:{}", shared.display());
    Some(Setup {
        _lock: lock,
        _dir: dir,
        shared,
        out,
        target,
    })
}

/// `mpirun -np N --oversubscribe fsbench ARGS...` as root.
pub(crate) fn mpirun(np: usize, args: &[&str]) -> Output {
    mpi_cmd(np, args).output().expect("mpirun runs")
}

pub(crate) fn mpi_cmd(np: usize, args: &[&str]) -> Command {
    mpi_launch(np, &[], args)
}

/// `mpirun --oversubscribe LAUNCHER... -np N fsbench ARGS...` as root (LAUNCHER: mpirun's own
/// options, a binding).
pub(crate) fn mpi_launch(np: usize, launcher: &[&str], args: &[&str]) -> Command {
    let mut c = Command::new("mpirun");
    c.env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env_remove("FSBENCH_WORKDIR")
        .env("FSBENCH_HISTORY", crate::common::history_path())
        .arg("--oversubscribe")
        .args(launcher)
        .args(["-np", &np.to_string()])
        .arg(crate::common::exe())
        .args(args);
    c
}

pub(crate) fn ok(o: &Output) {
    assert!(
        o.status.success(),
        "mpirun failed: {}\n{}",
        stdout(o),
        stderr(o)
    );
}

#[cfg(feature = "mpi")]
#[test]
fn a_null_block_job_adds_up_over_ranks_from_first_start_to_last_end() {
    // (The lock and the directory live to the end of the test.)
    let Some(Setup {
        _lock,
        _dir,
        shared,
        out,
        target,
    }) = setup()
    else {
        return;
    };
    let o = mpirun(
        4,
        &[
            "compare",
            &target,
            "-w",
            "block:rw=randwrite,bs=4k,size=8m,ioengine=null,numjobs=2,runtime=1",
            "-q",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    ok(&o);
    let recs = records(&out);
    assert!(!recs.is_empty());
    for r in &recs {
        let m = &r["metrics"];
        let rk = ranks(r);
        assert_eq!(rk.len(), 4, "{r}");
        let sum: f64 = rk.iter().map(|x| x["ops"].as_f64().unwrap()).sum();
        assert_eq!(
            m["ios"].as_f64().unwrap(),
            sum,
            "the aggregate is the ranks' sum"
        );
        assert!(sum > 0.0);
        // IOR: all bytes over the earliest start to the latest end, on each rank's own clock.
        let start = rk
            .iter()
            .map(|x| x["start_s"].as_f64().unwrap())
            .fold(f64::MAX, f64::min);
        let end = rk
            .iter()
            .map(|x| x["end_s"].as_f64().unwrap())
            .fold(0.0, f64::max);
        let last = m["last_done_s"].as_f64().unwrap();
        assert!(
            (last - (end - start)).abs() < 1e-6,
            "{last} vs {end} - {start}"
        );
        let first = m["first_done_s"].as_f64().unwrap();
        assert!(
            first > 0.0 && first <= last,
            "first done {first} <= last done {last}"
        );
        assert!(m["first_done_ops"].as_f64().unwrap() <= sum);
        // The rate's window spans every rank's: no shorter than any rank's own, no longer than
        // first start to last end.
        let window = m["runtime_s"].as_f64().unwrap();
        for x in &rk {
            let own = x["ops"].as_f64().unwrap() / x["ops_per_sec"].as_f64().unwrap();
            assert!(window >= own - 1e-6, "{window} >= {own}");
        }
        assert!(window <= last + 1e-6, "{window} <= {last}");
        let bw = m["bytes"].as_f64().unwrap() / window;
        let bw_rec = m["bytes_per_sec"].as_f64().unwrap();
        assert!((bw - bw_rec).abs() / bw < 1e-6, "{bw} vs {bw_rec}");
        assert!(m["rank_ops_per_sec_min"].as_f64() <= m["rank_ops_per_sec_max"].as_f64());
        assert_eq!(m["ranks"].as_f64(), Some(4.0));
        let notes = r["notes"].to_string();
        assert!(notes.contains("a file each (N-N)"), "{notes}");
        // The other ranks are the run's own, never other processes that disturbed it.
        let others = &r["evidence"]["machine"]["other_top"];
        let ranks_as_others = others
            .as_array()
            .into_iter()
            .flatten()
            .any(|b| b["name"] == "fsbench" && b["cores"].as_f64() >= Some(0.1));
        assert!(!ranks_as_others, "{others}");
    }
    assert_eq!(manifest(&out)["status"], "complete");
    assert_eq!(
        std::fs::read_dir(&shared).unwrap().count(),
        0,
        "scratch removed"
    );
}

#[cfg(feature = "mpi")]
#[test]
fn files_written_by_one_rank_are_verified_by_the_next() {
    // (The lock and the directory live to the end of the test.)
    let Some(Setup {
        _lock,
        _dir,
        shared: _,
        out,
        target,
    }) = setup()
    else {
        return;
    };
    for mode in ["", "--shared-tree"] {
        let _ = std::fs::remove_dir_all(&out);
        let mut args = vec![
            "compare",
            &target,
            "-w",
            "files:count=300,threads=1",
            "-q",
            "--out",
            out.to_str().unwrap(),
        ];
        if !mode.is_empty() {
            args.push(mode);
        }
        let o = mpirun(4, &args);
        ok(&o);
        let recs = records(&out);
        let write = recs.iter().find(|r| r["test"] == "write").unwrap();
        let read = recs.iter().find(|r| r["test"] == "read").unwrap();
        let (w, r) = (ranks(write), ranks(read));
        let files = if mode.is_empty() { 4.0 * 300.0 } else { 300.0 };
        assert_eq!(
            read["metrics"]["integrity_ok"].as_f64(),
            Some(files),
            "{mode}"
        );
        assert_eq!(read["metrics"]["wrong_identity"].as_f64(), Some(0.0));
        assert_eq!(read["outcome"], "ok", "{read}");
        if mode.is_empty() {
            // A subtree each: rank k reads what rank k-1 wrote (the bytes match exactly).
            for (k, rk) in r.iter().enumerate() {
                let prev = (k + 3) % 4;
                assert_eq!(
                    rk["bytes"], w[prev]["bytes"],
                    "rank {k} reads rank {prev}'s"
                );
            }
            assert_ne!(w[0]["bytes"], w[1]["bytes"], "each rank its own content");
        }
    }
}

#[cfg(feature = "mpi")]
#[test]
fn a_rank_with_another_plan_is_refused_at_the_start() {
    let _g = crate::common::ranks_lock();
    if skip(
        !have("mpirun"),
        "mpirun not found (apt-get install openmpi-bin)",
    ) {
        return;
    }
    let dir = workdir();
    let out = dir.path().join("study");
    let o = out.to_str().unwrap();
    let base = [
        "compare",
        "dir:/tmp",
        "-w",
        "smoke:size=1M",
        "-q",
        "--out",
        o,
    ];
    // MPMD: rank 0 and rank 1 get different arguments.
    let fsbench = crate::common::exe();
    let mut c = mpi_cmd(1, &base);
    c.arg(":")
        .args(["-np", "1"])
        .arg(&fsbench)
        .args(base)
        .arg("--repeat=2");
    let r = c.output().unwrap();
    assert!(!r.status.success());
    let e = stderr(&r);
    assert!(e.contains("rank 1") && e.contains("different plan"), "{e}");
    assert!(!out.exists(), "nothing was created");
}

/// Kills (SIGKILL) or stops (SIGSTOP) the fsbench process of `rank` writing to `out` once `out`
/// has `n` records; returns its process id.
pub(crate) fn hit_rank(out: &Path, n: usize, rank: usize, signal: &str) -> String {
    for _ in 0..600 {
        if records(out).len() >= n {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    signal_rank(out, rank, signal)
}

/// Sends `signal` to the one fsbench process of `rank` writing to `out`; returns its process id.
/// Other fsbench processes come and go meanwhile (other tiers of the suite): one that ends
/// between the listing and the look at it is passed by quietly, since a word on standard error
/// would spoil the id returned.
pub(crate) fn signal_rank(out: &Path, rank: usize, signal: &str) -> String {
    let (_, said) = sh(&format!(
        "for p in $(pgrep -x fsbench); do grep -qaF -- '{}' /proc/$p/cmdline && tr '\\0' '\\n' < /proc/$p/environ | grep -qx OMPI_COMM_WORLD_RANK={rank} && kill -{signal} $p && echo hit $p; done 2>/dev/null",
        out.display()
    ));
    assert_eq!(said.matches("hit").count(), 1, "{said}");
    said.trim().trim_start_matches("hit ").to_string()
}

#[cfg(feature = "mpi")]
#[test]
fn a_killed_rank_leaves_a_study_that_resumes_and_nothing_behind() {
    // (The lock and the directory live to the end of the test.)
    let Some(Setup {
        _lock,
        _dir,
        shared,
        out,
        target,
    }) = setup()
    else {
        return;
    };
    let args = [
        "compare",
        &target,
        "-w",
        "smoke:size=1M",
        "-w",
        "block:rw=write,bs=4k,size=8m,ioengine=null,runtime=4",
        "-q",
        "--out",
        out.to_str().unwrap(),
    ];
    let mut child = mpi_cmd(4, &args).spawn().unwrap();
    // After smoke's two records, during the 4 s block job.
    let _ = hit_rank(&out, 2, 2, "9");
    let status = child.wait().unwrap();
    assert!(!status.success());
    let m = manifest(&out);
    let failure = m["rank_failure"].as_str().unwrap_or_default().to_string();
    assert!(
        failure.contains("rank 2") && failure.contains("phase 'block'"),
        "{m}"
    );
    assert_eq!(m["completed"].as_array().unwrap().len(), 0, "{m}");
    assert_eq!(records(&out).len(), 2, "smoke's records kept");
    assert_eq!(
        std::fs::read_dir(&shared).unwrap().count(),
        0,
        "rank 0 tore down"
    );
    assert!(!mounts_text().contains(shared.to_str().unwrap()));
    // --resume runs the unfinished target again.
    let o = mpi_cmd(4, &["compare", "--resume", out.to_str().unwrap(), "-q"])
        .output()
        .unwrap();
    ok(&o);
    let m = manifest(&out);
    assert_eq!(m["status"], "complete", "{m}");
    assert!(m.get("rank_failure").is_none(), "{m}");
    let recs = records(&out);
    assert_eq!(recs.len(), 3, "smoke write + read, block: once each");
}

#[cfg(feature = "mpi")]
#[test]
fn a_rank_that_hangs_ends_the_run_at_the_timeout() {
    // (The lock and the directory live to the end of the test.)
    let Some(Setup {
        _lock,
        _dir,
        shared: _,
        out,
        target,
    }) = setup()
    else {
        return;
    };
    let args = [
        "compare",
        &target,
        "-w",
        "smoke:size=1M",
        "-w",
        "smoke:size=2M",
        "-q",
        "--rank-timeout",
        "3",
        "--out",
        out.to_str().unwrap(),
    ];
    let t0 = std::time::Instant::now();
    let mut child = mpi_cmd(3, &args).spawn().unwrap();
    let pid = hit_rank(&out, 1, 1, "STOP");
    let status = child.wait().unwrap();
    assert!(!status.success());
    assert!(t0.elapsed().as_secs() < 60, "ended by the timeout");
    let m = manifest(&out);
    let failure = m["rank_failure"].as_str().unwrap_or_default();
    assert!(
        failure.contains("rank 1") && failure.contains("within 3 s"),
        "{m}"
    );
    assert_eq!(m["status"], "failed");
    // The launcher ended the stopped rank with the others (MPI_Abort); in case it did not:
    let _ = sh(&format!("kill -KILL {pid} 2>/dev/null"));
}

#[cfg(feature = "mpi")]
#[test]
fn each_rank_serves_its_own_metrics_on_the_port_plus_its_rank() {
    use crate::common::http::{free_port, get, sample_sum, wait_for_phase};
    // (The lock and the directory live to the end of the test.)
    let Some(Setup {
        _lock,
        _dir,
        shared: _,
        out,
        target,
    }) = setup()
    else {
        return;
    };
    // Two ports in a row that nothing listens on.
    let port = (0..50)
        .map(|_| free_port())
        .find(|p| *p < u16::MAX && std::net::TcpListener::bind(("127.0.0.1", p + 1)).is_ok())
        .expect("two free ports in a row");
    let addr = format!("127.0.0.1:{port}");
    let args = [
        "compare",
        &target,
        "-w",
        "block:rw=randwrite,bs=4k,size=8m,ioengine=null,runtime=6s",
        "-q",
        "--metrics",
        &addr,
        "--out",
        out.to_str().unwrap(),
    ];
    // Rank 1's port taken: it exits 2, the launcher ends rank 0, no study is made.
    let held = std::net::TcpListener::bind(("127.0.0.1", port + 1)).unwrap();
    let o = mpirun(2, &args);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("the port is taken"), "{}", stderr(&o));
    assert!(!out.exists(), "no study directory");
    drop(held);
    let mut child = mpi_cmd(2, &args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    for rank in 0..2u16 {
        assert!(
            wait_for_phase(port + rank, &mut child),
            "rank {rank} serves"
        );
        let (status, text) = get(port + rank, "/metrics", None).unwrap();
        assert_eq!(status, 200);
        assert!(text.contains(&format!("rank=\"{rank}\"")), "{text}");
        let ops = sample_sum(&text, "fsbench_operations_total", "direction=\"write\"");
        assert!(ops > 0, "rank {rank} counts its own workers' I/O: {text}");
    }
    let o = child.wait_with_output().unwrap();
    ok(&o);
    for rank in 0..2u16 {
        assert!(
            get(port + rank, "/metrics", None).is_none(),
            "closed after the run"
        );
    }
}
