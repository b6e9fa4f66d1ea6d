//! fio's engine options through the binary (issue 29 part 5): trims punch holes and are counted
//! as fio's trim direction, cmdprio puts each I/O's priority in the logs and the record's notes,
//! latency_target records the depth it found, and atomic writes are refused with the reason
//! where the file cannot take them.

mod common;
use common::*;

fn record(d: &std::path::Path) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(d.join("s/results.jsonl")).unwrap();
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn trims_priorities_and_the_latency_search_take_effect() {
    let dir = workdir();
    let d = dir.path();
    std::fs::write(
        d.join("e.fio"),
        "[global]\nsize=1m\nbs=64k\n[trim]\nrw=randtrim\n\
         [prio]\nstonewall\nrw=randread\nbs=4k\nioengine=libaio\niodepth=8\nprioclass=3\ncmdprio_percentage=20\ncmdprio_class=1\nwrite_lat_log=p\nlog_prio=1\n\
         [lat]\nstonewall\nrw=randread\nbs=4k\nioengine=libaio\niodepth=16\nlatency_target=1s\nlatency_window=20ms\ntime_based\nruntime=20\n",
    )
    .unwrap();
    let o = bin()
        .current_dir(d)
        .args(["run", "e.fio", "--out", "s"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let recs = record(d);
    let by = |t: &str| recs.iter().find(|r| r["test"] == t).unwrap().clone();
    // 16 holes of 64 KiB: the file keeps its size and holds nothing.
    let trim = by("trim");
    assert_eq!(trim["metrics"]["trim_ios"], 16.0);
    assert_eq!(trim["metrics"]["trim_bytes"], (1 << 20) as f64);
    let f = std::fs::metadata(d.join("trim.0.0")).unwrap();
    use std::os::unix::fs::MetadataExt;
    assert_eq!((f.len(), f.blocks()), (1 << 20, 0));
    // The log's last column is each I/O's priority: realtime for about a fifth, idle else.
    let log = std::fs::read_to_string(d.join("p_lat.2.log")).unwrap();
    let rt = log.lines().filter(|l| l.ends_with("0x2000")).count();
    let idle = log.lines().filter(|l| l.ends_with("0x6000")).count();
    assert_eq!(rt + idle, 256, "{log}");
    assert!((25..80).contains(&rt), "{rt}");
    let notes = by("prio")["notes"].to_string();
    assert!(notes.contains("idle level 0") && notes.contains("20% of reads at realtime"));
    // A 1 s target every depth meets: the search doubles up to iodepth, then the job ends
    // (well before its 20 s).
    let lat = by("lat");
    assert_eq!(lat["metrics"]["latency_qd"], 16.0);
    assert!(lat["duration_s"].as_f64().unwrap() < 10.0);
    let bad = |opts: &str| refused_opts(d, opts);
    assert!(bad("rw=write\natomic=1\nioengine=psync").contains("does not support atomic"));
    assert!(bad("rw=write\natomic=1\nioengine=libaio").contains("direct=1"));
    assert!(bad("rw=read\ncmdprio_percentage=10").contains("io_uring and libaio"));
    assert!(bad("cmdprio_bssplit=4k/50:4k/60").contains("more than 100"));
}

/// `fsbench run` of the fio job `job` (as a.fio in `d`, its study in d/s) under strace of
/// `calls`: the trace (None, said, without strace).
fn straced_job(d: &std::path::Path, job: &str, calls: &str) -> Option<String> {
    std::fs::write(d.join("a.fio"), job).unwrap();
    let _ = std::fs::remove_dir_all(d.join("s"));
    let o = straced(d, calls, false, &["run", "a.fio", "--out", "s", "-q"])?;
    assert!(o.status.success(), "{}", stderr(&o));
    Some(std::fs::read_to_string(d.join("t")).unwrap())
}

/// A buffered libaio job reaps as fio does (iodepth_batch_complete_max defaults to 1: one
/// io_getevents per completion) from buffers 16 bytes past a page boundary, where fio's malloc'd
/// buffers sit; iodepth_batch_complete_max and iomem_align change both. Seen with strace.
#[test]
fn libaio_reaps_and_places_its_buffers_as_fio() {
    let dir = workdir();
    let d = dir.path();
    let calls = |extra: &str| {
        let job = format!(
            "[a]\nfilename=a.dat\nsize=1m\nbs=4k\nrw=randread\nioengine=libaio\niodepth=8\n{extra}"
        );
        let trace = straced_job(d, &job, "io_submit,io_getevents,fadvise64")?;
        // io_getevents(ctx, min_nr, nr, ...) and io_submit's aio_buf=0x...
        let nrs: Vec<u64> = trace
            .lines()
            .filter_map(|l| l.split("io_getevents(").nth(1))
            .map(|a| a.split(", ").nth(2).unwrap().parse().unwrap())
            .collect();
        let leads: std::collections::BTreeSet<u64> = trace
            .lines()
            .filter_map(|l| l.split("aio_buf=0x").nth(1))
            .map(|a| u64::from_str_radix(a.split(',').next().unwrap(), 16).unwrap() % 4096)
            .collect();
        // fio's invalidate and fadvise_hint: the job's own file only, before its reads.
        let advice: Vec<&str> = trace
            .lines()
            .filter(|l| l.contains("fadvise64("))
            .filter_map(|l| l.split("POSIX_FADV_").nth(1))
            .map(|a| a.split(')').next().unwrap())
            .collect();
        assert!(advice.contains(&"DONTNEED"), "{advice:?}");
        assert!(advice.contains(&"RANDOM"), "{advice:?}");
        Some((nrs, leads))
    };
    // 256 reads at depth 8: one reap per read once the queue is full, then the last 8 at once.
    let Some((nrs, leads)) = calls("") else {
        return;
    };
    let ones = nrs.iter().filter(|&&n| n == 1).count();
    assert!(ones >= 240, "{ones} single reaps for 256 reads: {nrs:?}");
    assert!(nrs.iter().all(|&n| n <= 8), "{nrs:?}");
    assert_eq!(leads, [16].into());
    let (nrs, leads) = calls("iodepth_batch_complete_max=8\niomem_align=0\n").unwrap();
    assert!(nrs.iter().all(|&n| n == 8), "{nrs:?}");
    assert_eq!(leads, [0].into());
    let bad = refused_opts(d, "rw=read\niomem=mmaphuge");
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
            "[a]\nfilename=a.dat\nsize=256k\nbs=64k\nrw=read\nioengine=psync\ntime_based\nruntime=200ms\n{extra}"
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
