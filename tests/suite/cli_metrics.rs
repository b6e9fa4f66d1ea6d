//! The live metrics endpoint (`--metrics ADDR`) through the binary, against real parts:
//! `promtool check metrics` (Debian's prometheus package) on two scrapes of a 6 s run, the
//! operations counter rising between them; the port closed after the run; a taken port refused
//! with exit 2 before anything is made; a single-threaded phase run with no other thread alive;
//! and a real Prometheus server scraping fsbench every second, the counter read back through its
//! HTTP API. A test whose tool is missing prints `SKIPPED: why`.

use crate::common::http::{free_port, get, get_as, sample_sum as counter, wait_for_phase};
use crate::common::*;

use std::io::Write;
use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// `compare` on a directory target of `dir`: one null-engine block job of `secs` (flat out), with
/// `--metrics` on `port` of 127.0.0.1.
fn compare(dir: &Path, secs: u32, port: u16) -> Command {
    let job = format!("block:ioengine=null,rw=randrw,bs=4k,iodepth=8,size=8m,runtime={secs}s");
    compare_job(dir, &job, &format!("127.0.0.1:{port}"))
}

/// `compare` on a directory target of `dir`: `job`, with `--metrics addr`.
fn compare_job(dir: &Path, job: &str, addr: &str) -> Command {
    let target = format!("dir:{}", dir.display());
    let mut c = bin();
    c.args(["compare", &target, "-w", job, "-q", "--metrics", addr])
        .arg("--out")
        .arg(dir.join("study"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    c
}

fn promtool_accepts(text: &str) -> Result<(), String> {
    let mut p = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    p.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    let o = p.wait_with_output().unwrap();
    if o.status.success() {
        Ok(())
    } else {
        Err(format!("{}{}", stdout(&o), stderr(&o)))
    }
}

#[test]
fn two_scrapes_of_a_6s_run_pass_promtool_and_the_counter_rises() {
    let dir = workdir();
    let port = free_port();
    let mut child = compare(dir.path(), 6, port).spawn().unwrap();
    assert!(wait_for_phase(port, &mut child), "no phase served");
    let (s1, first) = get(port, "/metrics", None).unwrap();
    std::thread::sleep(Duration::from_secs(2));
    let (s2, second) = get(port, "/metrics", None).unwrap();
    let (s3, om) = get(port, "/metrics", Some("application/openmetrics-text")).unwrap();
    // Nothing but GET /metrics.
    assert_eq!(get(port, "/", None).map(|x| x.0), Some(404));
    assert_eq!(get(port, "/metrics/../", None).map(|x| x.0), Some(404));
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains("warning"), "{}", stderr(&o));
    assert_eq!((s1, s2, s3), (200, 200, 200));
    let (a, b) = (
        counter(&first, "fsbench_operations_total", "direction=\"read\""),
        counter(&second, "fsbench_operations_total", "direction=\"read\""),
    );
    assert!(b > a, "the operations counter rose: {a} -> {b}\n{second}");
    assert!(
        second.contains("fsbench_interval_latency_seconds{"),
        "{second}"
    );
    assert!(second.contains("fsbench_phase_eta_seconds{"), "{second}");
    assert!(second.contains("limiter=\"benchmark-cpu\"} 1"), "{second}");
    assert!(
        om.ends_with("# EOF\n") && om.contains("# TYPE fsbench info\n"),
        "{om}"
    );
    // The endpoint closed when the run ended: nothing answers, and the port binds again.
    assert!(get(port, "/metrics", None).is_none());
    TcpListener::bind(("127.0.0.1", port)).expect("the port is free after the run");
    if skip(
        !have("promtool"),
        "promtool not found (apt-get install prometheus)",
    ) {
        return;
    }
    for text in [&first, &second] {
        if let Err(e) = promtool_accepts(text) {
            panic!("promtool check metrics refused the scrape: {e}\n{text}");
        }
    }
}

#[test]
fn every_address_is_warned_of_and_a_foreign_host_gets_nothing() {
    // Bound on every address: said on standard error (even with -q). A request through
    // 127.0.0.1 that names another host (a page's name rebound to 127.0.0.1) is refused.
    let dir = workdir();
    let port = free_port();
    // Paced: the test is about the endpoint, not the job (a flat-out one took a core for 3 s).
    let job = "block:ioengine=null,rw=randrw,bs=4k,iodepth=8,size=8m,rate_iops=2000,runtime=3s";
    let mut child = compare_job(dir.path(), job, &format!("0.0.0.0:{port}"))
        .spawn()
        .unwrap();
    assert!(wait_for_phase(port, &mut child), "no phase served");
    let rebound = get_as(port, "/metrics", None, &format!("rebound.example:{port}"));
    let local = get_as(port, "/metrics", None, &format!("localhost:{port}"));
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let (status, body) = rebound.expect("an answer");
    assert_eq!(status, 421, "{body}");
    assert!(!body.contains("fsbench_info"), "{body}");
    assert_eq!(local.map(|r| r.0), Some(200));
    assert!(
        stderr(&o).contains(&format!(
            "fsbench: warning: --metrics 0.0.0.0:{port} is every address of this host"
        )),
        "{}",
        stderr(&o)
    );
}

/// Asserts `args` with `--metrics` on a port another listener holds exit 2, saying so, having
/// made neither the study directory nor a mount in the work directory.
fn refused_on_a_taken_port(dir: &Path, args: &[&str]) {
    let held = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = held.local_addr().unwrap().to_string();
    let (study, work) = (dir.join("study"), dir.join("work"));
    let o = bin()
        .args(args)
        .args(["--metrics", &addr, "--out"])
        .arg(&study)
        .env("FSBENCH_WORKDIR", &work)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("the port is taken"), "{}", stderr(&o));
    assert!(!study.exists(), "no study directory");
    assert!(!work.exists(), "no work directory");
    assert!(
        !mounts_text().contains(&*work.to_string_lossy()),
        "no mount"
    );
}

#[test]
fn a_taken_port_is_refused_with_exit_2_before_anything_is_made() {
    let dir = workdir();
    refused_on_a_taken_port(
        dir.path(),
        &["compare", "tmpfs", "ext4", "-w", "smoke", "--size", "256M"],
    );
    let job = write(
        dir.path(),
        "j.fio",
        &format!(
            "[j]\nioengine=null\nrw=read\nsize=1m\ndirectory={}\n",
            dir.path().display()
        ),
    );
    refused_on_a_taken_port(dir.path(), &["run", &job]);
    // An address that is not one is a usage error too.
    let o = run(&["compare", "tmpfs", "--metrics", "localhost:9464"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("give an IP address and a port"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_single_threaded_phase_runs_with_no_other_thread_alive() {
    // bonnie++'s tests run on one thread with no other in the process; the endpoint's thread
    // stops for them.
    let dir = workdir();
    let study = dir.path().join("study");
    let target = format!("dir:{}", dir.path().display());
    let o = bin()
        .args([
            "compare",
            &target,
            "--workload",
            "bonnie:size=8M,ram=0,files=1:2k:1k:4,seeks=400",
            "-q",
            "--metrics",
        ])
        .arg(format!("127.0.0.1:{}", free_port()))
        .arg("--out")
        .arg(&study)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(study.join("results.jsonl")).unwrap();
    assert!(text.lines().count() > 3);
    for l in text.lines() {
        assert!(!l.contains("threads were alive"), "{l}");
    }
}

/// A Prometheus server of the test's own; killed when dropped.
struct Prometheus(Child);

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The value of an instant query's first sample, when it has one.
fn query(port: u16, q: &str) -> Option<f64> {
    let (status, body) = get(port, &format!("/api/v1/query?query={q}"), None)?;
    if status != 200 {
        return None;
    }
    let v: serde_json::Value = serde_json::from_str(&body).ok()?;
    v["data"]["result"][0]["value"][1].as_str()?.parse().ok()
}

#[test]
fn a_real_prometheus_scrapes_the_counter() {
    if skip(
        !have("prometheus"),
        "prometheus not found (apt-get install prometheus)",
    ) {
        return;
    }
    let dir = workdir();
    let (ours, theirs) = (free_port(), free_port());
    let config = write(
        dir.path(),
        "prometheus.yml",
        &format!(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: fsbench\n    static_configs:\n      - targets: ['127.0.0.1:{ours}']\n"
        ),
    );
    let server = Command::new("prometheus")
        .arg(format!("--config.file={config}"))
        .arg(format!(
            "--storage.tsdb.path={}",
            dir.path().join("data").display()
        ))
        .arg(format!("--web.listen-address=127.0.0.1:{theirs}"))
        .arg("--log.level=warn")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let _server = Prometheus(server);
    // Paced: the job waits out its 12 s rather than spin a core beside the rest of the suite.
    let job = "block:ioengine=null,rw=randrw,bs=4k,iodepth=8,size=8m,rate_iops=2000,runtime=12s";
    let mut child = compare_job(dir.path(), job, &format!("127.0.0.1:{ours}"))
        .spawn()
        .unwrap();
    assert!(wait_for_phase(ours, &mut child), "no phase served");
    // Prometheus scrapes every second; the counter shows up through its API.
    let t0 = Instant::now();
    let mut seen = None;
    while t0.elapsed() < Duration::from_secs(30) && seen.is_none() {
        std::thread::sleep(Duration::from_millis(500));
        seen = query(theirs, "sum%28fsbench_operations_total%29").filter(|v| *v > 0.0);
    }
    let up = query(theirs, "up%7Bjob%3D%22fsbench%22%7D");
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let ops = seen.expect("Prometheus has fsbench_operations_total");
    assert!(ops > 0.0);
    assert_eq!(up, Some(1.0), "Prometheus's scrapes succeed (OpenMetrics)");
}

#[test]
fn ended_phases_keep_their_counters_by_direction() {
    // iozone's write tests, then a null-engine job: while the job runs, the endpoint still counts
    // what iozone did, as writes.
    let dir = workdir();
    let port = free_port();
    let target = format!("dir:{}", dir.path().display());
    let mut child = bin()
        .args([
            "compare",
            &target,
            "-w",
            "iozone:threads=2,size=256k,record=64k,tests=write",
            "-w",
            "block:ioengine=null,rw=read,bs=4k,size=8m,rate_iops=2000,runtime=4s",
            "-q",
            "--metrics",
        ])
        .arg(format!("127.0.0.1:{port}"))
        .arg("--out")
        .arg(dir.path().join("study"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    let mut during = None;
    while t0.elapsed() < Duration::from_secs(60) && during.is_none() {
        if let Some((200, text)) = get(port, "/metrics", None) {
            if text.contains("fsbench_phase_elapsed_seconds{")
                && text.contains("workload=\"block\"")
            {
                during = Some(text);
            }
        }
        if matches!(child.try_wait(), Ok(Some(_))) {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let text = during.expect("a scrape during the block job");
    let iozone = |d: &str| {
        counter(
            &text,
            "fsbench_operations_total",
            &format!("workload=\"iozone\",test=\"write\",direction=\"{d}\""),
        )
    };
    assert!(iozone("write") > 0, "{text}");
    assert_eq!((iozone("read"), iozone("other")), (0, 0), "{text}");
}
