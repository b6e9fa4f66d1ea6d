//! fio's other option families through the binary, one behaviour a test: exitall ends the rest
//! of a phase, buffer_pattern is what the file holds, fio's other names (ratemin, fill_fs, ...)
//! read as their options, and what cannot be done is refused by name.

use crate::common::*;

/// Runs the job file `text` (as e.fio in `d`, its study in d/s).
fn ran(d: &std::path::Path, text: &str) {
    std::fs::write(d.join("e.fio"), text).unwrap();
    let o = bin()
        .current_dir(d)
        .args(["run", "e.fio", "--out", "s", "-q"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn exitall_ends_the_rest_of_its_phase_when_it_ends() {
    let dir = workdir();
    let t = std::time::Instant::now();
    ran(
        dir.path(),
        r#"
[global]
size=256k
[short]
rw=write
exitall
[long]
rw=randread
time_based
runtime=60
"#,
    );
    assert!(
        t.elapsed() < std::time::Duration::from_secs(30),
        "the 60 s job ended with the short one"
    );
}

/// Every 4 KiB write buffer holds the pattern from its start, as fio fills it.
#[test]
fn buffer_pattern_is_what_every_write_holds() {
    let dir = workdir();
    ran(
        dir.path(),
        "[p]
size=256k
rw=write
buffer_pattern=\"abc\"
",
    );
    let data = std::fs::read(dir.path().join("p.0.0")).unwrap();
    assert_eq!(data.len(), 256 << 10);
    let block: Vec<u8> = b"abc".iter().copied().cycle().take(4096).collect();
    assert!(
        data.chunks(4096).all(|c| c == block),
        "the pattern, repeated"
    );
}

/// fio's other names and options fsbench does its own way are taken: ratemin, ratecycle,
/// io_submit_mode=offload, fill_fs, fileoffset, a CPU list split.
#[test]
fn fios_other_option_names_read_as_their_options() {
    let dir = workdir();
    ran(
        dir.path(),
        r#"
[a]
size=256k
rw=randread
ratemin=1
ratecycle=1000
io_submit_mode=offload
continue_on_error=read
fill_fs=0
fileoffset=0
slat_percentiles=1
cpus_allowed=0
cpus_allowed_policy=split
"#,
    );
}

#[test]
fn a_cpu_list_the_host_lacks_or_reversed_is_refused() {
    let dir = workdir();
    let d = dir.path();
    assert!(refused_opts(d, "cpus_allowed=3-1").contains("cpus_allowed=3-1"));
    assert!(refused_opts(d, "cpus_allowed=0,1000").contains("names CPU 1000"));
}

#[test]
fn an_option_value_outside_fios_choices_is_refused_by_name() {
    let dir = workdir();
    let d = dir.path();
    assert!(refused_opts(d, "continue_on_error=some").contains("expected none, read"));
    assert!(refused_opts(d, "exit_what=some").contains("exit_what=some"));
    assert!(refused_opts(d, "flow=-1").contains("positive weights"));
}

#[test]
fn a_pattern_file_that_cannot_be_read_is_refused() {
    let dir = workdir();
    let e = refused_opts(dir.path(), "buffer_pattern='file'");
    assert!(e.contains("cannot read the pattern file 'file'"), "{e}");
}

#[test]
fn zoned_block_devices_and_unknown_options_are_refused_by_name() {
    let dir = workdir();
    let d = dir.path();
    assert!(refused_opts(d, "zonemode=zbd").contains("zoned block devices"));
    assert!(refused_opts(d, "cpuload=1").contains("'cpuload' is not supported"));
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

/// Whether fio itself takes `name` bare in a job file: it parses, and a null-engine job with it
/// runs to the end (fio 3.33 parses a few string options bare and then crashes on them).
fn fio_takes_bare(dir: &std::path::Path, name: &str) -> bool {
    let job = dir.join("bare.fio");
    std::fs::write(
        &job,
        format!(
            "[x]\nfilename={}\nsize=64k\nrw=read\nioengine=null\nruntime=100ms\n{name}\n",
            dir.join("data").display()
        ),
    )
    .unwrap();
    let fio = |args: &[&str]| {
        std::process::Command::new("fio")
            .current_dir(dir)
            .args(args)
            .arg(&job)
            .output()
            .unwrap()
    };
    let parsed = fio(&["--parse-only"]);
    parsed.status.success()
        && !stderr(&parsed).contains("requires an argument")
        && fio(&["--output=/dev/null"]).status.success()
}

#[test]
fn fios_switches_are_taken_bare_in_an_inline_job() {
    if skip(!have("fio"), "fio not found (apt-get install fio)") {
        return;
    }
    use fsbench::plan::workload::parse_workload;
    let dir = workdir();
    let build = |text: &str| {
        fsbench::workload::build(&parse_workload(text).unwrap(), &Default::default())
            .map(|_| ())
            .map_err(|e| e.to_string())
    };
    let mut switches = Vec::new();
    for o in fsbench::plan::fio::options::all() {
        for name in std::iter::once(o.name).chain(o.aliases.iter().copied()) {
            if fio_takes_bare(dir.path(), name) {
                switches.push(name);
                let spec = format!("block:rw=randread,bs=4k,runtime=2s,{name}");
                assert_eq!(build(&spec), Ok(()), "{spec}");
            }
        }
    }
    // fio's own switches among them (what its command line takes as --time_based).
    for s in ["time_based", "group_reporting", "norandommap", "stonewall"] {
        assert!(switches.contains(&s), "{s} in {switches:?}");
    }
    // An option that needs a value is refused with an example of that option.
    let e = build("block:rw=randread,bs").unwrap_err();
    assert!(e.contains("option 'bs' needs a value, e.g. bs=4k"), "{e}");
    let e = build("smoke:size").unwrap_err();
    assert!(
        e.contains("parameter 'size' needs a value, e.g. smoke:size="),
        "{e}"
    );
}

#[test]
fn an_inline_job_with_time_based_bare_runs_for_its_runtime() {
    // 64 KiB at a null engine's pace ends in a millisecond; time_based bare keeps it going
    // over the file again and again for its 2 s.
    let dir = workdir();
    let o = Compare::new(&[&format!("dir:{}", dir.path().display())])
        .workload("block:ioengine=null,rw=randread,bs=4k,size=64k,runtime=2s,time_based")
        .out(dir.path().join("s").to_str().unwrap())
        .args(&["-q"])
        .run();
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(dir.path().join("s/results.jsonl")).unwrap();
    let r: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    let m = &r["metrics"];
    assert!(m["runtime_s"].as_f64().unwrap() > 1.5, "{m}");
    assert!(m["read_bytes"].as_f64().unwrap() > 4.0 * 65536.0, "{m}");
}
