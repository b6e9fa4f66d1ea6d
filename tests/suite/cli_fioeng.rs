//! fio's engine options through the binary, one behaviour a test: trims punch holes and are
//! counted as fio's trim direction, cmdprio puts each I/O's priority in the logs and the notes,
//! latency_target records the depth it found, atomic writes and cmdprio are refused where they
//! cannot take effect, libaio reaps and places its buffers as fio does, and a buffered
//! time-based job drops its file's cached pages at each pass as fio does.

use crate::common::*;

use std::path::Path;

/// Runs the job file `text` (as e.fio in `d`, its study in d/s); its records.
fn ran(d: &Path, text: &str) -> Vec<serde_json::Value> {
    std::fs::write(d.join("e.fio"), text).unwrap();
    let _ = std::fs::remove_dir_all(d.join("s"));
    let o = bin()
        .current_dir(d)
        .args(["run", "e.fio", "--out", "s", "-q"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    records_of(&d.join("s"))
}

#[test]
fn randtrim_punches_a_hole_in_every_block_and_counts_fios_trim_direction() {
    let dir = workdir();
    let recs = ran(
        dir.path(),
        r#"
[trim]
size=1m
bs=64k
rw=randtrim
"#,
    );
    let m = &recs[0]["metrics"];
    assert_eq!(
        (m["trim_ios"].as_f64(), m["trim_bytes"].as_f64()),
        (Some(16.0), Some((1 << 20) as f64))
    );
    // The file keeps its size and holds nothing.
    use std::os::unix::fs::MetadataExt;
    let f = std::fs::metadata(dir.path().join("trim.0.0")).unwrap();
    assert_eq!((f.len(), f.blocks()), (1 << 20, 0));
}

#[test]
fn cmdprio_puts_each_ios_priority_in_the_latency_log() {
    let dir = workdir();
    ran(
        dir.path(),
        r#"
[prio]
size=1m
rw=randread
bs=4k
ioengine=libaio
iodepth=8
prioclass=3
cmdprio_percentage=20
cmdprio_class=1
write_lat_log=p
log_prio=1
"#,
    );
    // The last column: realtime for about a fifth, the job's idle class for the rest.
    let log = std::fs::read_to_string(dir.path().join("p_lat.1.log")).unwrap();
    let rt = log.lines().filter(|l| l.ends_with("0x2000")).count();
    let idle = log.lines().filter(|l| l.ends_with("0x6000")).count();
    assert_eq!(rt + idle, 256, "{log}");
    assert!((25..80).contains(&rt), "{rt}");
}

#[test]
fn cmdprio_and_the_workers_priority_are_said_in_the_notes() {
    let dir = workdir();
    let recs = ran(
        dir.path(),
        r#"
[prio]
size=256k
rw=randread
bs=4k
ioengine=libaio
prioclass=3
cmdprio_percentage=20
cmdprio_class=1
"#,
    );
    let notes = recs[0]["notes"].to_string();
    assert!(notes.contains("idle level 0"), "{notes}");
    assert!(notes.contains("20% of reads at realtime"), "{notes}");
}

/// A 1 s target every depth meets: the search doubles up to iodepth, runs one last window
/// there, and the job ends well before its 20 s.
#[test]
fn latency_target_records_the_depth_it_found_and_ends_the_job() {
    let dir = workdir();
    let recs = ran(
        dir.path(),
        r#"
[lat]
size=1m
rw=randread
bs=4k
ioengine=libaio
iodepth=16
latency_target=1s
latency_window=20ms
time_based
runtime=20
"#,
    );
    assert_eq!(recs[0]["metrics"]["latency_qd"], 16.0);
    assert!(recs[0]["duration_s"].as_f64().unwrap() < 10.0);
}

#[test]
fn atomic_writes_are_refused_without_an_engine_that_passes_them() {
    let dir = workdir();
    let e = refused_opts(dir.path(), "rw=write\natomic=1\nioengine=psync");
    assert!(e.contains("does not support atomic"), "{e}");
}

#[test]
fn atomic_writes_are_refused_without_direct_io() {
    let dir = workdir();
    let e = refused_opts(dir.path(), "rw=write\natomic=1\nioengine=libaio");
    assert!(e.contains("direct=1"), "{e}");
}

#[test]
fn cmdprio_is_refused_without_an_engine_that_passes_a_priority_per_io() {
    let dir = workdir();
    let e = refused_opts(dir.path(), "rw=read\ncmdprio_percentage=10");
    assert!(e.contains("io_uring and libaio"), "{e}");
}

#[test]
fn cmdprio_bssplit_shares_over_100_percent_are_refused() {
    let dir = workdir();
    let e = refused_opts(dir.path(), "cmdprio_bssplit=4k/50:4k/60");
    assert!(e.contains("more than 100"), "{e}");
}

/// `fsbench run` of the fio job `job` (as a.fio in `d`, its study in d/s) under strace of
/// `calls`: the trace (None, said, without strace).
fn straced_job(d: &Path, job: &str, calls: &str) -> Option<String> {
    std::fs::write(d.join("a.fio"), job).unwrap();
    let _ = std::fs::remove_dir_all(d.join("s"));
    let o = straced(d, calls, false, &["run", "a.fio", "--out", "s", "-q"])?;
    assert!(o.status.success(), "{}", stderr(&o));
    Some(std::fs::read_to_string(d.join("t")).unwrap())
}

/// A buffered libaio job of 256 random reads at depth 8, with `extra` options, under strace.
fn libaio_job(d: &Path, extra: &str) -> Option<String> {
    let job = format!(
        r#"
[a]
filename=a.dat
size=1m
bs=4k
rw=randread
ioengine=libaio
iodepth=8
{extra}
"#
    );
    straced_job(d, &job, "io_submit,io_getevents,fadvise64")
}

/// The events each io_getevents(ctx, min_nr, nr, ...) asked for at most.
fn reaps(trace: &str) -> Vec<u64> {
    trace
        .lines()
        .filter_map(|l| l.split("io_getevents(").nth(1))
        .map(|a| a.split(", ").nth(2).unwrap().parse().unwrap())
        .collect()
}

/// Where io_submit's buffers start, past a page boundary.
fn leads(trace: &str) -> std::collections::BTreeSet<u64> {
    trace
        .lines()
        .filter_map(|l| l.split("aio_buf=0x").nth(1))
        .map(|a| u64::from_str_radix(a.split(',').next().unwrap(), 16).unwrap() % 4096)
        .collect()
}

/// fio's iodepth_batch_complete_max defaults to 1: one io_getevents per completion once the
/// queue is full (the last 8 at once); set to 8, every reap takes up to 8.
#[test]
fn libaio_reaps_one_completion_per_call_unless_told_more_as_fio() {
    let dir = workdir();
    let Some(trace) = libaio_job(dir.path(), "") else {
        return;
    };
    let nrs = reaps(&trace);
    let ones = nrs.iter().filter(|&&n| n == 1).count();
    assert!(ones >= 240, "{ones} single reaps for 256 reads: {nrs:?}");
    assert!(nrs.iter().all(|&n| n <= 8), "{nrs:?}");
    let trace = libaio_job(dir.path(), "iodepth_batch_complete_max=8").unwrap();
    let nrs = reaps(&trace);
    assert!(nrs.iter().all(|&n| n == 8), "{nrs:?}");
}

/// A buffered job's buffers sit 16 bytes past a page boundary, where fio's malloc'd ones do;
/// iomem_align places them.
#[test]
fn a_buffered_jobs_buffers_sit_where_fios_malloc_puts_them() {
    let dir = workdir();
    let Some(trace) = libaio_job(dir.path(), "") else {
        return;
    };
    assert_eq!(leads(&trace), [16].into());
    let trace = libaio_job(dir.path(), "iomem_align=0").unwrap();
    assert_eq!(leads(&trace), [0].into());
}

/// fio's invalidate and fadvise_hint: the job's own file only, before its reads.
#[test]
fn a_random_job_advises_random_access_and_drops_its_files_pages_first() {
    let dir = workdir();
    let Some(trace) = libaio_job(dir.path(), "") else {
        return;
    };
    let advice: Vec<&str> = trace
        .lines()
        .filter(|l| l.contains("fadvise64("))
        .filter_map(|l| l.split("POSIX_FADV_").nth(1))
        .map(|a| a.split(')').next().unwrap())
        .collect();
    assert!(advice.contains(&"DONTNEED"), "{advice:?}");
    assert!(advice.contains(&"RANDOM"), "{advice:?}");
}

#[test]
fn huge_page_buffers_are_refused_by_name() {
    let dir = workdir();
    let bad = refused_opts(dir.path(), "rw=read\niomem=mmaphuge");
    assert!(
        bad.contains("iomem=mmaphuge") && bad.contains("huge pages"),
        "{bad}"
    );
}

/// A buffered time-based job drops its file's cached pages each time a pass over it ends (fio's
/// loop_cache_invalidate), besides once before it starts; with invalidate=0 never. Seen with
/// strace: posix_fadvise DONTNEED on the job's file, counted against the passes the record names.
#[test]
fn a_time_based_buffered_job_invalidates_its_file_at_each_pass_as_fio() {
    let dir = workdir();
    let d = dir.path();
    let dontneeds = |extra: &str| {
        let job = format!(
            r#"
[a]
filename=a.dat
size=256k
bs=64k
rw=read
ioengine=psync
time_based
runtime=200ms
{extra}
"#
        );
        let trace = straced_job(d, &job, "fadvise64")?;
        let n = trace
            .lines()
            .filter(|l| l.contains("fadvise64(") && l.contains("DONTNEED"))
            .count();
        let record = std::fs::read_to_string(d.join("s/results.jsonl")).unwrap();
        let passes = record
            .split("dropped at the end of each pass (")
            .nth(1)
            .map(|t| t.split(' ').next().unwrap().parse::<usize>().unwrap());
        Some((n, passes))
    };
    let Some((n, passes)) = dontneeds("") else {
        return;
    };
    let passes = passes.expect("the record names the passes that ended");
    assert!(passes >= 2, "{passes} passes over 256 KiB in 200 ms");
    // Once before the job (fio's invalidate at open), then once per pass that ended.
    assert_eq!(n, passes + 1, "{n} DONTNEED for {passes} passes");
    assert_eq!(dontneeds("invalidate=0").unwrap(), (0, None));
}
