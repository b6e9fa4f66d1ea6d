//! Privileged tier, what limited each result: phases whose limit is known come out with it, each
//! record's kind and the device it names (none where the limit is a CPU), through the binary on
//! real targets: fsbench's own CPU, the kernel's, pacing reached and not, caches on the read and
//! the write side, the device under ext4, every member of btrfs raid1, a ZFS mirror and raidz,
//! a directory on btrfs and on ZFS, a memory-backed loop, fsync's flushes, the jobs of one phase
//! each judged alone; and what disturbs a run: CPU hogs, a hog on the worker's CPU, another
//! process reading the target's device (and nothing on a quiet machine). Needs root (tmpfs and
//! loop images); tests run one at a time.

use crate::common::*;

use std::path::Path;
use std::process::{Child, Command};

/// Every record of a study, as JSON.
fn records(out: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(out.join("results.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// `compare TARGETS -w WORKLOAD` in a fresh work directory; returns the study directory and
/// what the terminal said.
fn compare(
    wd: &Path,
    targets: &[&str],
    workload: &str,
    extra: &[&str],
) -> (std::path::PathBuf, String) {
    compare_sized(wd, targets, workload, "512M", extra)
}

fn compare_sized(
    wd: &Path,
    targets: &[&str],
    workload: &str,
    size: &str,
    extra: &[&str],
) -> (std::path::PathBuf, String) {
    let (o, out) = run_study_with(wd, "study", targets, &[workload], size, extra);
    assert!(o.status.success(), "{}", stderr(&o));
    // The report on standard output, its warnings on standard error.
    (out, format!("{}{}", stdout(&o), stderr(&o)))
}

/// The first record of `compare TARGETS -w WORKLOAD` on 512 MiB images in a fresh work
/// directory, with the tests' lock held.
fn one(targets: &[&str], workload: &str, extra: &[&str]) -> serde_json::Value {
    one_sized(targets, workload, "512M", extra)
}

fn one_sized(targets: &[&str], workload: &str, size: &str, extra: &[&str]) -> serde_json::Value {
    let _g = serial();
    let wd = workdir();
    let (out, _) = compare_sized(wd.path(), targets, workload, size, extra);
    records(&out).remove(0)
}

/// A record's limiter: its kind, the device it names, its rule, and for `mixed` the two kinds.
struct Said {
    kind: String,
    device: Option<String>,
    rule: String,
    between: Vec<String>,
}

fn said(r: &serde_json::Value) -> Said {
    let l = &r["limiter"];
    assert!(l.is_object(), "no limiter: {r}");
    Said {
        kind: l["kind"].as_str().unwrap().to_string(),
        device: l["device"].as_str().map(str::to_string),
        rule: l["rule"].as_str().unwrap().to_string(),
        between: l["between"]
            .as_array()
            .map(|v| v.iter().map(|x| x.as_str().unwrap().to_string()).collect())
            .unwrap_or_default(),
    }
}

/// The device a limiter should name.
enum Names {
    /// None: the limit is a CPU or the pacing.
    Nothing,
    /// The target's own device, or one of its members (a loop device, never the disk under).
    Target,
}

/// Asserts a record's kind (or a `mixed` that names it beside another as close: two limits
/// within the rules' margin, which a quiet host gives one run in a few) and the device it
/// names; returns what it said.
fn judged(r: &serde_json::Value, kind: &str, names: Names) -> Said {
    let s = said(r);
    let named = s.kind == kind || (s.kind == "mixed" && s.between.iter().any(|k| k == kind));
    assert!(named, "{kind} expected: {}: {}", s.rule, r["evidence"]);
    match names {
        Names::Nothing => assert_eq!(s.device, None, "{}", s.rule),
        Names::Target => {
            let d = s
                .device
                .clone()
                .unwrap_or_else(|| panic!("no device: {}", s.rule));
            let own = r["evidence"]["devices"]
                .as_array()
                .unwrap()
                .iter()
                .any(|x| x["name"] == d.as_str() && x["role"] != "backing");
            assert!(own, "{d} is not the target's: {}", r["evidence"]["devices"]);
        }
    }
    s
}

/// A limit that is a worker's CPU: the kernel's or fsbench's own, or too close to tell which
/// (a debug build's own code per operation can weigh as much as the kernel's).
fn on_a_cpu(s: &Said) -> bool {
    let cpu = |k: &str| ["kernel-cpu", "benchmark-cpu"].contains(&k);
    cpu(&s.kind) || (s.kind == "mixed" && s.between.iter().all(|k| cpu(k)))
}

fn interference(r: &serde_json::Value) -> Option<String> {
    r["notes"]
        .as_array()?
        .iter()
        .filter_map(|n| n.as_str())
        .find(|n| n.starts_with("interference:"))
        .map(str::to_string)
}

fn needs_root() -> bool {
    skip(!is_root(), "needs root (tmpfs and loop images)")
}

fn needs_ext4() -> bool {
    needs("ext4", "mkfs.ext4")
}

const NULL: &str = "block:rw=randread,bs=4k,ioengine=null,runtime=1s,size=16m";
const PSYNC_TMPFS: &str = "block:rw=randread,bs=64k,ioengine=psync,runtime=1s,size=64m";
const DIRECT_QD1: &str =
    "block:rw=randread,bs=4k,direct=1,iodepth=1,ioengine=psync,runtime=2s,time_based=1,size=64m";

#[test]
fn a_null_engine_job_measures_fsbench_and_says_so() {
    if needs_root() {
        return;
    }
    let _g = serial();
    let wd = workdir();
    let (out, term) = compare(wd.path(), &["tmpfs"], NULL, &[]);
    let recs = records(&out);
    let s = judged(&recs[0], "benchmark-cpu", Names::Nothing);
    assert!(s.rule.contains("fsbench's own code"), "{}", s.rule);
    let w = &recs[0]["evidence"]["workers"][0];
    assert!(w["user"].as_f64() > w["system"].as_f64(), "{w}");
    assert!(term.contains("What limited each result"), "{term}");
    assert!(term.contains("benchmark-cpu: worker 0"), "{term}");
    assert!(term.contains("measure fsbench's own CPU"), "{term}");
}

#[test]
fn psync_reads_on_tmpfs_are_the_kernels_cpu_without_a_profile() {
    if needs_root() {
        return;
    }
    // 64 KiB reads: the kernel's copy outweighs the debug build's own work per read.
    let s = judged(
        &one(&["tmpfs"], PSYNC_TMPFS, &[]),
        "kernel-cpu",
        Names::Nothing,
    );
    assert!(s.rule.contains("in the kernel"), "{}", s.rule);
    assert!(
        s.rule.contains("run with --profile to split it"),
        "{}",
        s.rule
    );
}

#[test]
fn with_a_profile_the_kernels_time_is_split() {
    if needs_root() {
        return;
    }
    if let Err(why) = fsbench::profile::host::access().on_cpu.as_ref() {
        skip(true, &format!("no on-CPU profile here: {why}"));
        return;
    }
    let r = &one(&["tmpfs"], PSYNC_TMPFS, &["--profile"]);
    // 64 KiB reads from tmpfs: copying pages to the reader is most of the kernel's time, and
    // shmem's own functions are the filesystem's code.
    let s = judged(r, "kernel-cpu", Names::Nothing);
    let split = &r["profile"]["on_cpu"]["shares"]["split"];
    assert!(
        split["copies"].as_f64() > split["filesystem"].as_f64(),
        "{split}"
    );
    assert!(split["filesystem"].as_f64() > Some(0.0), "{split}");
    assert!(s.rule.contains(": memory copies "), "{}", s.rule);
}

/// A job that paces itself on tmpfs is `paced`, its line naming how (`pacing`).
fn paced(job: &str, pacing: &str) {
    if needs_root() {
        return;
    }
    let s = judged(&one(&["tmpfs"], job, &[]), "paced", Names::Nothing);
    assert!(s.rule.contains(pacing), "{}", s.rule);
}

#[test]
fn a_job_held_by_its_rate_is_paced() {
    paced(
        "block:rw=randread,bs=4k,rate_iops=200,runtime=1s,size=16m",
        "rate_iops=200",
    );
}

#[test]
fn a_job_that_thinks_between_ios_is_paced() {
    paced(
        "block:rw=randread,bs=4k,thinktime=10ms,runtime=1s,size=16m",
        "thinktime=10ms",
    );
}

#[test]
fn a_rate_not_reached_is_the_real_limit_held_below_it() {
    if needs_ext4() {
        return;
    }
    let job = format!("{DIRECT_QD1},rate_iops=10000000");
    let s = judged(&one(&["ext4"], &job, &[]), "device", Names::Target);
    assert!(
        s.rule.contains("held below its rate (rate_iops=10000000"),
        "{}",
        s.rule
    );
}

/// `n` processes that spin on a CPU until killed (on CPU `cpu` when given).
fn hogs(n: usize, cpu: Option<usize>) -> Vec<Child> {
    (0..n)
        .map(|_| {
            let mut c = match cpu {
                Some(k) => {
                    let mut c = Command::new("taskset");
                    c.args(["-c", &k.to_string(), "sh"]);
                    c
                }
                None => Command::new("sh"),
            };
            c.args(["-c", "while :; do :; done"]).spawn().unwrap()
        })
        .collect()
}

fn stop(children: &mut [Child]) {
    for c in children {
        let _ = c.kill();
        let _ = c.wait();
    }
}

#[test]
fn two_cpu_hogs_beside_a_run_are_named_as_interference_and_none_is_without_them() {
    if needs_root() {
        return;
    }
    let _g = serial();
    let job = "block:rw=randread,bs=4k,ioengine=psync,runtime=1s,size=16m";
    // Without hogs: no note, or on a host busy with other work (other agents' builds) a note
    // that names that work and no hog and not fsbench itself (three tries for a quiet one).
    let mut said = Vec::new();
    for _ in 0..3 {
        let quiet = workdir();
        let (out, _) = compare(quiet.path(), &["tmpfs"], job, &[]);
        let r = &records(&out)[0];
        match interference(r) {
            None => {
                said.clear();
                break;
            }
            Some(n) => said.push((n, r["evidence"].to_string())),
        }
    }
    for (n, e) in &said {
        assert!(
            !n.contains("(sh ") && !n.contains(", sh "),
            "no hog ran: {n}: {e}"
        );
        let own = n.contains("(fsbench ") || n.contains(", fsbench ");
        assert!(!own, "fsbench is not another process: {n}: {e}");
    }
    let loaded = workdir();
    let mut hs = hogs(2, None);
    let (out, term) = compare(loaded.path(), &["tmpfs"], PSYNC_TMPFS, &[]);
    stop(&mut hs);
    let r = &records(&out)[0];
    // Waiting for a CPU is left out of the worker's shares: its limit is still the kernel's.
    judged(r, "kernel-cpu", Names::Nothing);
    let why = interference(r).unwrap_or_else(|| panic!("no interference: {}", r["evidence"]));
    assert!(why.contains("other processes took"), "{why}");
    // (Among the top three: on a busy host other work may come before them.)
    assert!(
        why.contains("(sh ") || why.contains(", sh "),
        "the hogs are named: {why}"
    );
    assert!(term.contains("disturbed by other processes"), "{term}");
}

#[test]
fn a_hog_on_the_workers_own_cpu_is_named_by_the_workers_wait() {
    if needs_root() {
        return;
    }
    let _g = serial();
    let wd = workdir();
    let mut hs = hogs(1, Some(0));
    let job = format!("{PSYNC_TMPFS},cpus_allowed=0");
    let (out, _) = compare(wd.path(), &["tmpfs"], &job, &[]);
    stop(&mut hs);
    let r = &records(&out)[0];
    judged(r, "kernel-cpu", Names::Nothing);
    let why = interference(r).unwrap_or_else(|| panic!("no interference: {}", r["evidence"]));
    let runq = r["evidence"]["workers"][0]["runq"].as_f64().unwrap();
    assert!(runq >= 0.25, "the worker shared its CPU: {}", r["evidence"]);
    assert!(why.contains("of its time for a CPU"), "{why}");
}

#[test]
fn a_disturbed_repeat_is_measured_again_once_with_retry_interfered() {
    if needs_root() {
        return;
    }
    let _g = serial();
    let wd = workdir();
    let mut hs = hogs(2, None);
    let (out, _) = compare(
        wd.path(),
        &["tmpfs"],
        "block:rw=randread,bs=4k,ioengine=psync,runtime=500ms,size=16m",
        &["--retry-interfered"],
    );
    stop(&mut hs);
    assert_eq!(
        records(&out).len(),
        1,
        "one record per test in results.jsonl"
    );
    let partial = std::fs::read_to_string(out.join("results.partial.jsonl")).unwrap();
    assert_eq!(partial.lines().count(), 1, "the first attempt kept aside");
    let manifest = std::fs::read_to_string(out.join("manifest.json")).unwrap();
    assert!(manifest.contains("measured again"), "{manifest}");
    assert!(
        manifest.contains("\"on_interference\": \"retry-once\""),
        "{manifest}"
    );
}

#[test]
fn direct_reads_on_ext4_are_the_device_and_tmpfs_beside_it_the_kernel() {
    if needs_ext4() {
        return;
    }
    let _g = serial();
    let wd = workdir();
    let (out, term) = compare(
        wd.path(),
        &["ext4", "tmpfs"],
        "block:rw=randread,bs=4k,direct=1,ioengine=psync,runtime=1s,size=64m",
        &[],
    );
    let recs = records(&out);
    let ext4 = recs.iter().find(|r| r["target"] == "ext4").unwrap();
    let s = judged(ext4, "device", Names::Target);
    assert!(s.rule.starts_with("device: loop"), "{}", s.rule);
    // tmpfs has no device: its 4 KiB reads are the kernel's work or fsbench's own.
    let tmpfs = recs.iter().find(|r| r["target"] == "tmpfs").unwrap();
    let t = said(tmpfs);
    assert!(on_a_cpu(&t) && t.device.is_none(), "{}", t.rule);
    assert!(
        term.contains("best tmpfs ("),
        "the verdict names the limiter: {term}"
    );
    assert!(term.contains("ext4 (device)"), "{term}");
    assert!(term.contains("compares different limits"), "{term}");
    assert!(term.contains("device: loop"), "the table's cell: {term}");
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        md.contains("What limited each result: the evidence"),
        "{md}"
    );
    no_leftovers(wd.path());
}

#[test]
fn buffered_rereads_on_ext4_are_cache() {
    if needs_ext4() {
        return;
    }
    // The same 8 MiB file read again and again through the page cache.
    let job = "block:rw=randread,bs=4k,direct=0,runtime=3s,time_based=1,size=8m";
    let s = judged(&one(&["ext4"], job, &[]), "cache", Names::Target);
    assert!(
        s.rule.contains("of the reads came from memory"),
        "{}",
        s.rule
    );
}

#[test]
fn buffered_writes_the_page_cache_absorbed_are_cache_and_the_flush_is_shown() {
    if needs_ext4() {
        return;
    }
    let job = "block:rw=randwrite,bs=4k,direct=0,size=64m,runtime=2s,time_based=1";
    let r = &one(&["ext4"], job, &[]);
    let s = judged(r, "cache", Names::Target);
    assert!(s.rule.contains("the page cache absorbed"), "{}", s.rule);
    assert!(s.rule.contains("the copying:"), "{}", s.rule);
    // The flush is measured on its own; the line says it from a tenth of a second (a host
    // busy with other work lets the workers dirty less, and the flush may be shorter).
    let secs = r["evidence"]["flush"]["seconds"]
        .as_f64()
        .unwrap_or_else(|| panic!("no flush: {r}"));
    assert!(secs > 0.0, "{r}");
    assert_eq!(
        s.rule.contains("; then flush "),
        secs >= 0.1,
        "{secs} s: {}",
        s.rule
    );
}

#[test]
fn buffered_writes_through_io_uring_on_tmpfs_are_cpu_not_waiting() {
    if needs_root() {
        return;
    }
    let job =
        "block:rw=randwrite,bs=4k,size=64m,ioengine=io_uring,iodepth=1,runtime=2s,time_based=1";
    let r = &one(&["tmpfs"], job, &[]);
    let s = said(r);
    // io-wq copying for the worker is the worker's kernel time, not waiting; the debug build's
    // own code per write (the data it writes) may weigh more.
    assert!(on_a_cpu(&s), "{}: {}", s.rule, r["evidence"]);
    assert_eq!(s.device, None);
}

#[test]
fn fio_rand_rw_on_ext4_is_the_device_not_cache() {
    if needs_ext4() {
        return;
    }
    // fio's examples/fio-rand-RW job, sized down (to 512 MiB: at 256 MiB a fast host cached the
    // whole file within 2 s and the last second was fsbench's CPU alone): buffered 60/40 random
    // reads and writes by four jobs at QD16. Its writes stay in the page cache; its reads wait for the device. On
    // this 2-CPU host a debug build's four workers are half CPU-bound and most reads come from
    // the pages its writes left, but loop0 is about half busy: the device, or the device beside
    // fsbench's own CPU (mixed), never `cache`.
    let job = "block:rw=randrw,rwmixread=60,bs=4k,direct=0,numjobs=4,ioengine=libaio,iodepth=16,size=512m,runtime=3s,time_based=1";
    let s = judged(
        &one_sized(&["ext4"], job, "1G", &[]),
        "device",
        Names::Target,
    );
    assert!(!s.rule.contains("cache"), "{}", s.rule);
}

#[test]
fn a_job_that_syncs_every_write_names_the_flushes() {
    if needs_ext4() {
        return;
    }
    let job =
        "block:rw=randwrite,bs=4k,direct=0,fsync=1,ioengine=psync,size=16m,runtime=2s,time_based=1";
    let r = &one(&["ext4"], job, &[]);
    let s = judged(r, "device", Names::Target);
    assert!(s.rule.contains(" flushes ("), "{}", s.rule);
    let flushes = r["evidence"]["devices"][0]["flushes"].as_u64().unwrap_or(0);
    assert!(flushes > 10, "{}", r["evidence"]["devices"]);
}

#[test]
fn a_loop_image_in_memory_is_named_a_memory_backed_loop() {
    if needs_ext4() {
        return;
    }
    let _g = serial();
    let wd = workdir();
    // The work directory on a tmpfs of its own: the loop image lives in memory.
    let ram = wd.path().join("ram");
    std::fs::create_dir(&ram).unwrap();
    assert!(
        sh(&format!(
            "mount -t tmpfs -o size=700m,mode=0755 tmpfs {}",
            ram.display()
        ))
        .0
    );
    let out = wd.path().join("study");
    let o = Compare::new(&["ext4"])
        .workload(DIRECT_QD1)
        .size("512M")
        .out(out.to_str().unwrap())
        .workdir(ram.to_str().unwrap())
        .run();
    let _ = Command::new("umount").arg(&ram).status();
    assert!(o.status.success(), "{}", stderr(&o));
    let r = &records(&out)[0];
    // At QD1 the worker waits while the loop device's thread copies the pages; the kernel's
    // CPU of the copy may weigh as much (mixed), but the device is never the disk's.
    let s = judged(r, "device", Names::Target);
    assert!(s.rule.contains("a memory-backed loop"), "{}", s.rule);
    assert_eq!(r["evidence"]["devices"][0]["medium"], "memory", "{r}");
}

#[test]
fn another_process_reading_the_targets_device_is_interference() {
    if needs_ext4() {
        return;
    }
    let _g = serial();
    let wd = workdir();
    let mp = provision(wd.path(), "ext4", &["--size", "1G", "-q"]);
    let dev = sh(&format!("findmnt -n -o SOURCE {mp}"))
        .1
        .trim()
        .to_string();
    let mut dd = Command::new("dd")
        .args([
            &format!("if={dev}"),
            "of=/dev/null",
            "bs=4k",
            "iflag=direct",
            "status=none",
        ])
        .spawn()
        .unwrap();
    let (out, _) = compare(wd.path(), &[&format!("dir:{mp}")], DIRECT_QD1, &[]);
    stop(std::slice::from_mut(&mut dd));
    teardown(&mp);
    let r = &records(&out)[0];
    judged(r, "device", Names::Target);
    let why = interference(r).unwrap_or_else(|| panic!("no interference: {}", r["evidence"]));
    assert!(why.contains("on the target's devices"), "{why}");
    let io = &r["evidence"]["machine"]["io"];
    let dd = io["top"].as_array().unwrap().iter().any(|p| p[0] == "dd");
    assert!(dd && io["on_stack"].as_u64() > Some(1 << 20), "{io}");
}

#[test]
fn each_job_of_a_phase_has_its_own_limiter() {
    if needs_ext4() {
        return;
    }
    let _g = serial();
    let wd = workdir();
    // Two jobs that run together: one moves no data, one waits for the device.
    let jobs = write(
        wd.path(),
        "two.fio",
        "[global]\nsize=64m\nruntime=2\ntime_based=1\n\n[spin]\nrw=randread\nbs=4k\nioengine=null\n\n[disk]\nrw=randread\nbs=4k\ndirect=1\nioengine=psync\n",
    );
    let (out, _) = compare(wd.path(), &["ext4"], &format!("fio:{jobs}"), &[]);
    let recs = records(&out);
    let of = |test: &str| recs.iter().find(|r| r["test"] == test).unwrap();
    judged(of("spin"), "benchmark-cpu", Names::Nothing);
    judged(of("disk"), "device", Names::Target);
}

#[test]
fn direct_reads_on_btrfs_raid1_name_the_busiest_member_every_repeat() {
    if needs("btrfs", "mkfs.btrfs") {
        return;
    }
    let _g = serial();
    let wd = workdir();
    let (out, _) = compare_sized(
        wd.path(),
        &["btrfs:raid1"],
        "block:rw=randread,bs=4k,direct=1,iodepth=1,size=128m,runtime=2s,time_based=1",
        "1G",
        &["--repeat", "3"],
    );
    let recs = records(&out);
    assert_eq!(recs.len(), 3);
    for r in &recs {
        let s = judged(r, "device", Names::Target);
        assert!(s.rule.contains("the busiest of 2 members"), "{}", s.rule);
        let members = r["evidence"]["devices"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| d["role"] == "member")
            .count();
        assert_eq!(members, 2, "{}", r["evidence"]["devices"]);
    }
    no_leftovers(wd.path());
}

#[test]
fn a_directory_on_btrfs_raid1_is_watched_through_its_devices() {
    if needs("btrfs", "mkfs.btrfs") {
        return;
    }
    let _g = serial();
    let (a, b) = (TestLoop::new(512), TestLoop::new(512));
    let mkfs = format!(
        "mkfs.btrfs -q -f -d raid1 -m raid1 {} {}",
        a.device, b.device
    );
    assert!(sh(&format!("{mkfs} >/dev/null 2>&1")).0, "{mkfs}");
    let mnt = a.dir.path().join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    assert!(sh(&format!("mount {} {}", a.device, mnt.display())).0);
    let wd = workdir();
    let (out, _) = compare(
        wd.path(),
        &[&format!("dir:{}", mnt.display())],
        DIRECT_QD1,
        &[],
    );
    let r = &records(&out)[0];
    let s = judged(r, "device", Names::Target);
    let names: Vec<&str> = [&a.device, &b.device]
        .iter()
        .map(|d| d.trim_start_matches("/dev/"))
        .collect();
    assert!(names.contains(&s.device.as_deref().unwrap()), "{}", s.rule);
    drop((a, b));
}

/// zfs-fuse's direct reads at QD1 over a file larger than its cache (ARC): a member of the pool
/// is named (never the disk under the images), and the members together decide: the device, or
/// the device beside the daemon's CPU or the wait (the rest of each read's time is the daemon's
/// and FUSE's), too close to tell.
fn zfs_reads_name_a_member(layout: &str, members: usize) {
    if needs_zfs() {
        return;
    }
    let _g = serial();
    let before = zfs_fuse_running();
    let wd = workdir();
    let (out, _) = compare_sized(
        wd.path(),
        &[&format!("zfs:{layout}")],
        "block:rw=randread,bs=4k,direct=1,iodepth=1,size=512m,runtime=2s,time_based=1",
        "1G",
        &[],
    );
    let r = &records(&out)[0];
    let s = said(r);
    let pair =
        |a: &str, b: &str| s.between.iter().any(|k| k == a) && s.between.iter().any(|k| k == b);
    // Other processes kept the daemon from a CPU (the note says so): the workers then waited
    // for a daemon that waited, and a member only partly busy is named as what it was.
    let starved = interference(r).is_some_and(|n| n.contains("other processes took"));
    // (zfs-fuse's mirror: the daemon between 0.14 and 0.46 cores from run to run beside
    // members a quarter busy each, the members together near half: mixed, the device one of
    // the two.)
    let decided = s.kind == "device"
        || (s.kind == "mixed" && (pair("device", "waiting") || pair("device", "filesystem-cpu")));
    assert!(
        decided || (starved && s.kind == "waiting"),
        "{}: {}",
        s.rule,
        r["evidence"]
    );
    let d = s.device.clone().unwrap();
    let devices = r["evidence"]["devices"].as_array().unwrap();
    assert!(
        devices
            .iter()
            .any(|x| x["name"] == d.as_str() && x["role"] == "member"),
        "{d}: {}",
        r["evidence"]["devices"]
    );
    assert_eq!(
        devices.iter().filter(|x| x["role"] == "member").count(),
        members
    );
    assert!(
        !decided
            || s.rule
                .contains(&format!("the busiest of {members} members")),
        "{}",
        s.rule
    );
    daemon_as_before(before);
}

#[test]
fn direct_reads_on_a_zfs_mirror_name_a_member_not_the_disk_under() {
    zfs_reads_name_a_member("mirror", 2);
}

#[test]
fn direct_reads_on_raidz_name_a_member_not_the_disk_under() {
    zfs_reads_name_a_member("raidz", 3);
}

#[test]
fn a_directory_on_zfs_has_no_device_to_tell_the_wait_from() {
    if needs_zfs() {
        return;
    }
    let _g = serial();
    let before = zfs_fuse_running();
    let wd = workdir();
    let mp = provision(wd.path(), "zfs", &["--size", "1G", "-q"]);
    let (out, _) = compare(wd.path(), &[&format!("dir:{mp}")], DIRECT_QD1, &[]);
    teardown(&mp);
    let r = &records(&out)[0];
    let s = said(r);
    assert_eq!(s.kind, "mixed", "{}: {}", s.rule, r["evidence"]);
    assert_eq!(s.between, ["device", "waiting"], "{}", s.rule);
    assert!(s.rule.contains("cannot be told apart"), "{}", s.rule);
    assert_eq!(s.device, None);
    daemon_as_before(before);
}

#[test]
fn random_writes_on_zfs_fuse_are_limited_by_its_daemon() {
    if needs_zfs() {
        return;
    }
    let _g = serial();
    let before = zfs_fuse_running();
    let wd = workdir();
    let (out, _) = compare(
        wd.path(),
        &["zfs"],
        "block:rw=randwrite,bs=4k,ioengine=psync,runtime=2s,size=64m",
        &[],
    );
    let r = &records(&out)[0];
    let s = said(r);
    let fs = r["evidence"]["filesystem"].to_string();
    assert!(
        fs.contains("zfs-fuse"),
        "the daemon's CPU in the evidence: {fs}"
    );
    // The daemon is the limit: alone, or too close to tell from the loop device under the pool
    // (zfs-fuse writes ~29x the job's bytes: 0.63 cores against 48% busy came within the rules'
    // margin on one run, the unit test holds that boundary; on a host whose other processes
    // slow its disk, or keep the daemon from a CPU, the device comes first).
    let pair =
        |a: &str, b: &str| s.between.iter().any(|k| k == a) && s.between.iter().any(|k| k == b);
    // Other processes kept the daemon from a CPU (the note says so): the workers then waited
    // for a daemon that waited, and the device or that wait is what shows.
    let starved = interference(r).is_some_and(|n| n.contains("other processes took"));
    let waited = s.kind == "device" || s.kind == "waiting" || pair("device", "waiting");
    if starved && waited {
        return daemon_as_before(before);
    }
    assert!(
        s.kind == "filesystem-cpu" || (s.kind == "mixed" && pair("filesystem-cpu", "device")),
        "{}: {}",
        s.rule,
        r["evidence"]
    );
    assert!(s.rule.contains("zfs-fuse took"), "{}", s.rule);
    daemon_as_before(before);
}
