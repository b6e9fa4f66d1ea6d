//! fio's other option families through the binary: exitall ends the rest of a phase,
//! buffer_pattern is what the file holds, cpus_allowed pins (split: a CPU each), fio's aliases
//! (ratemin, fill_fs, ...) read as their options, and what cannot be done is refused by name.

mod common;
use common::*;

#[test]
fn exitall_buffer_pattern_cpus_and_aliases_take_effect() {
    let dir = workdir();
    let d = dir.path();
    std::fs::write(
        d.join("e.fio"),
        "[global]\nsize=256k\n[short]\nrw=write\nbuffer_pattern=\"abc\"\nexitall\ncpus_allowed=0\ncpus_allowed_policy=split\n\
         [long]\nrw=randread\ntime_based\nruntime=60\nratemin=1\nratecycle=1000\nio_submit_mode=offload\ncontinue_on_error=read\nfill_fs=0\nfileoffset=0\nslat_percentiles=1\n",
    )
    .unwrap();
    let t = std::time::Instant::now();
    let o = bin()
        .current_dir(d)
        .args(["run", "e.fio", "--out", "s"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    // The 60 s job ended with the short one (exitall).
    assert!(t.elapsed() < std::time::Duration::from_secs(30));
    let data = std::fs::read(d.join("short.0.0")).unwrap();
    assert_eq!(data.len(), 256 << 10);
    // Every 4 KiB write buffer holds the pattern from its start, as fio fills it.
    let block: Vec<u8> = b"abc".iter().copied().cycle().take(4096).collect();
    assert!(
        data.chunks(4096).all(|c| c == block),
        "the pattern, repeated"
    );
    let bad = |opts: &str| refused_opts(d, opts);
    assert!(bad("cpus_allowed=3-1").contains("cpus_allowed=3-1"));
    assert!(bad("cpus_allowed=0,1000").contains("names CPU 1000"));
    assert!(bad("continue_on_error=some").contains("expected none, read"));
    assert!(bad("exit_what=some").contains("exit_what=some"));
    assert!(bad("buffer_pattern='file'").contains("cannot read the pattern file 'file'"));
    assert!(bad("zonemode=zbd").contains("zoned block devices"));
    assert!(bad("flow=-1").contains("positive weights"));
    assert!(bad("cpuload=1").contains("'cpuload' is not supported"));
}

#[test]
fn exit_what_all_ends_every_job_and_no_later_group_runs() {
    let dir = workdir();
    let d = dir.path();
    std::fs::write(
        d.join("x.fio"),
        "[global]\nsize=256k\nexitall\n[short]\nrw=write\nexit_what=all\n[long]\nrw=randread\ntime_based\nruntime=60\n\
         [later]\nstonewall\nrw=read\ntime_based\nruntime=60\n",
    )
    .unwrap();
    let t = std::time::Instant::now();
    let o = bin()
        .current_dir(d)
        .args(["run", "x.fio", "--out", "s"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(t.elapsed() < std::time::Duration::from_secs(30));
    let text = std::fs::read_to_string(d.join("s/results.jsonl")).unwrap();
    let later: serde_json::Value = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|r| r["test"] == "later")
        .expect("a record of the later job");
    assert_eq!(
        later["metrics"]["reads"].as_f64().unwrap_or(0.0),
        0.0,
        "{later}"
    );
    assert!(
        later["notes"].to_string().contains("exit_what=all"),
        "{later}"
    );
}

#[test]
fn a_pattern_file_is_read_when_the_job_runs_and_verified() {
    // fio's t/jobs/t0027.fio: a writer fills the file from a pattern file, a reader verifies it.
    let dir = workdir();
    let d = dir.path();
    let pat: Vec<u8> = (0..=255u8).chain(*b"xyz").collect();
    std::fs::write(d.join("t.pattern"), &pat).unwrap();
    std::fs::write(
        d.join("t.fio"),
        "[global]\nfilename=tfile\nsize=16k\nbs=16k\n[write_job]\nreadwrite=write\nbuffer_pattern='t.pattern'\n\
         [read_job]\nstonewall=1\nreadwrite=read\nverify=pattern\nverify_pattern='t.pattern'\n",
    )
    .unwrap();
    let o = bin()
        .current_dir(d)
        .args(["run", "t.fio", "--out", "s"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let data = std::fs::read(d.join("tfile")).unwrap();
    let want: Vec<u8> = pat.iter().copied().cycle().take(16 << 10).collect();
    assert_eq!(data, want);
    let text = std::fs::read_to_string(d.join("s/results.jsonl")).unwrap();
    assert!(
        text.contains("\"verify_errors\":0.0") || text.contains("\"verify_errors\":0"),
        "{text}"
    );
}

#[test]
fn wait_for_starts_a_job_once_its_waitee_is_done() {
    let dir = workdir();
    let d = dir.path();
    // One group: without wait_for the reader would check blocks the writer has not written yet.
    std::fs::write(
        d.join("w.fio"),
        "[global]\nfilename=f\nsize=4m\nbs=4k\nverify=crc32c\n[writer]\nrw=write\ndo_verify=0\nnumjobs=1\nrate=8m\n[reader]\nwait_for=writer\nrw=read\n",
    )
    .unwrap();
    let o = bin()
        .current_dir(d)
        .args(["run", "w.fio", "--out", "s"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(d.join("s/results.jsonl")).unwrap();
    assert!(text.contains("wait_for: started when every worker of 'writer' was done"));
    let bad = |opts: &str| refused_job(d, opts);
    assert!(bad("[r]\nsize=1m\nwait_for=w\n[w]\nsize=1m\n").contains("defined earlier"));
}
