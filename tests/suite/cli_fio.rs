//! fio job files end to end through the binary, one behaviour a test: `run --check` (every
//! family of options, includes and substitutions, each with its line; nothing touched), errors
//! said once, `run --help`'s table, options that take effect (rates, verify read back, verify
//! catching a flipped byte in fio's words, numjobs), fio's JSON out, and a fio JSON result
//! imported into a study.

use crate::common::*;

const EVERY_GROUP: &str = "\
; one job file with an option of every group
[global]
include common.fio
ioengine=posixaio
size=${FSBENCH_TEST_SIZE}
runtime=(2*1000000)
iodepth=($ncpus*0+4)
percentile_list=50:99.99
[zipf]
rw=randread:2
rw_sequencer=identical
bs=4k,64k
random_distribution=zipf:1.2
rate=10m,5m
thinktime=10
thinktime_blocks=8
numjobs=2
offset_increment=1m
[verify]
stonewall
rw=randwrite
bssplit=4k/:8k/:64k/50
verify=sha256
verify_interval=4k
zero_buffers=0
sync=dsync
unlink=1
";

#[test]
fn check_prints_each_option_with_its_line_and_touches_nothing() {
    let dir = workdir();
    write(dir.path(), "common.fio", "thread\ngroup_reporting=1\n");
    let job = write(dir.path(), "every.fio", EVERY_GROUP);
    let check = |flag: &str| {
        bin()
            .args(["run", flag, &job])
            .env("FSBENCH_TEST_SIZE", "16m")
            .output()
            .unwrap()
    };
    let o = check("--check");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    let has = |kv: &str, at: &str| {
        lines
            .iter()
            .any(|l| l.trim_start().starts_with(kv) && l.trim_end().ends_with(at))
    };
    assert!(has("thread", "common.fio:1"), "{out}");
    assert!(has("size=16m", "every.fio:5"), "{out}");
    assert!(has("runtime=2000000us", "every.fio:6"), "{out}");
    assert!(has("iodepth=4", "every.fio:7"), "{out}");
    assert!(has("random_distribution=zipf:1.2", "every.fio:13"), "{out}");
    assert!(
        out.contains("as run: rw=randread bs=4 KiB write_bs=64 KiB size=16 MiB"),
        "{out}"
    );
    assert!(out.contains("[verify]  phase 2"), "{out}");
    assert!(out.contains("ioengine=posixaio runs on io_uring"), "{out}");
    // --dry-run is the same thing; nothing was created next to the job file.
    let o = check("--dry-run");
    assert_eq!(o.status.code(), Some(0));
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
}

#[test]
fn errors_name_their_cause_once_and_exit_2() {
    let dir = workdir();
    let job = write(
        dir.path(),
        "bad.fio",
        "[a]\ncpuload=10\n[b]\ncpuload=10\nioengine=rbd\nsize=$pagesizes\n[c]\ncpuload=10\n",
    );
    let o = run(&["run", "--check", &job]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert_eq!(e.matches("'cpuload' is not supported").count(), 1, "{e}");
    assert!(e.contains("bad.fio:2, 4, 8: option 'cpuload'"), "{e}");
    assert!(e.contains("engine rbd is not available in fsbench"), "{e}");
    assert!(e.contains("'$pagesizes' is not a substitution"), "{e}");
    assert!(
        !e.contains("rwmixread"),
        "the supported list is not repeated: {e}"
    );
}

/// `run --help` lists the option table by family, fio's other names beside each option.
#[test]
fn run_help_lists_every_option_by_family() {
    let o = run(&["run", "--help"]);
    let out = stdout(&o);
    for opt in [
        "random_distribution",
        "verify_pattern",
        "offset_increment",
        "rate_iops",
        "fill_device (fill_fs)",
    ] {
        assert!(out.contains(opt), "run --help lists {opt}: {out}");
    }
    assert!(out.contains("how each I/O is issued:"), "{out}");
}

#[test]
fn a_file_that_is_not_a_job_file_is_refused_by_line_without_its_lines() {
    let dir = workdir();
    let d = dir.path();
    let shadow = write(
        d,
        "shadow",
        "root:$6$s3cr3t$hash:20228:0:99999:7:::\ndaemon:*:20228:0:99999:7:::\n",
    );
    // Not a job file at all; a job file with lines of another shape after its section.
    let ini = write(d, "ini", "[a]\nsize=1m\npass: s3cr3t\npassword=s3cr3t$x\n");
    let study = write(
        d,
        "s.toml",
        &format!(
            "targets = [\"dir:{}\"]\nworkloads = [\"fio:{shadow}\"]\n",
            d.display()
        ),
    );
    for (args, line) in [
        (
            vec!["run", "--check", &shadow],
            format!("{shadow}:1: not a fio job file"),
        ),
        (
            vec!["run", "--check", &ini],
            format!("{ini}:3: not an option line"),
        ),
        (
            vec!["study", &study, "--check"],
            format!("{shadow}:1: not a fio job file"),
        ),
    ] {
        let o = bin().current_dir(d).args(&args).output().unwrap();
        let (out, e) = (stdout(&o), stderr(&o));
        assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
        assert!(e.contains(&line), "{args:?}: {e}");
        assert!(
            !out.contains("s3cr3t") && !e.contains("s3cr3t"),
            "{args:?}: {out}{e}"
        );
        assert!(
            !e.contains("daemon") && !e.contains("99999"),
            "{args:?}: {e}"
        );
    }
}

/// fio's JSON has a job per clone (numjobs) without group_reporting, each with its own figures,
/// and one merged job with it; the clones' io_bytes add up to the merged job's.
#[test]
fn clones_are_fio_jobs_of_their_own_without_group_reporting() {
    let dir = workdir();
    let shape = |grouped: bool| {
        let name = if grouped { "grouped" } else { "split" };
        let job = write(
            dir.path(),
            &format!("{name}.fio"),
            &format!(
                "[t]\ndirectory={d}\nioengine=psync\nrw=randread\nbs=4k\nsize=1m\nnumjobs=3\n{g}",
                d = dir.path().display(),
                g = if grouped { "group_reporting\n" } else { "" }
            ),
        );
        let out = dir.path().join(name);
        let o = run(&[
            "run",
            &job,
            "--out",
            out.to_str().unwrap(),
            "-q",
            "--output-format=json",
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("fio's JSON");
        let recs = records_of(&out);
        assert_eq!(recs.len(), 1, "one record per job either way");
        let clones = recs[0]["clones"]
            .as_array()
            .expect("the clones' own figures");
        assert_eq!(clones.len(), 3);
        v["jobs"].as_array().unwrap().clone()
    };
    let split = shape(false);
    assert_eq!(split.len(), 3, "a job per clone, as fio");
    let bytes = |j: &serde_json::Value| j["read"]["io_bytes"].as_u64().unwrap();
    for (i, j) in split.iter().enumerate() {
        assert_eq!(j["jobname"], "t");
        assert_eq!(j["groupid"], 0);
        assert_eq!(j["fsbench"]["clone"], i);
        assert_eq!(bytes(j), 1 << 20, "each clone reads its own 1 MiB");
        assert_eq!(j["read"]["total_ios"], 256);
        assert_eq!(j["read"]["clat_ns"]["N"], 256);
        assert!(
            j["read"]["clat_ns"]["percentile"]["99.000000"]
                .as_u64()
                .unwrap()
                > 0
        );
        assert!(j["job_runtime"].is_u64() && j["job options"]["numjobs"] == "3");
    }
    let grouped = shape(true);
    assert_eq!(grouped.len(), 1, "group_reporting: one merged job, as fio");
    assert_eq!(grouped[0]["read"]["total_ios"], 768);
    assert_eq!(split.iter().map(bytes).sum::<u64>(), bytes(&grouped[0]));
}

/// Runs the job file `text` (its `{d}` the directory) as `name`.fio with fio's JSON out: the
/// JSON's jobs and the study's records.
fn run_json(
    d: &std::path::Path,
    name: &str,
    text: &str,
) -> (Vec<serde_json::Value>, Vec<serde_json::Value>) {
    let job = write(
        d,
        &format!("{name}.fio"),
        &text.replace("{d}", &d.display().to_string()),
    );
    let out = d.join(name);
    let o = run(&[
        "run",
        &job,
        "--out",
        out.to_str().unwrap(),
        "-q",
        "--output-format=json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value =
        serde_json::from_str(&stdout(&o)).expect("fio-shaped JSON on stdout");
    (v["jobs"].as_array().unwrap().clone(), records_of(&out))
}

#[test]
fn rate_iops_paces_a_job_and_fios_json_says_its_iops() {
    let dir = workdir();
    let (jobs, _) = run_json(
        dir.path(),
        "rated",
        r#"
[rated]
directory={d}
ioengine=psync
size=4m
rw=write
bs=4k
rate_iops=400
runtime=1
time_based
"#,
    );
    let iops = jobs[0]["write"]["iops"].as_f64().unwrap();
    assert!((380.0..=420.0).contains(&iops), "rate_iops=400 gave {iops}");
}

/// size=4m from offset=1m (as fio: a 5 MiB file): every 8 KiB write read back and checked.
#[test]
fn a_verifying_writer_reads_back_every_block_it_wrote() {
    let dir = workdir();
    let (jobs, recs) = run_json(
        dir.path(),
        "verified",
        r#"
[verified]
directory={d}
ioengine=psync
size=4m
rw=randwrite
bs=8k
verify=crc32c
offset=1m
"#,
    );
    let m = &recs[0]["metrics"];
    assert_eq!(m["verify_blocks"], 512.0);
    assert_eq!(m["verify_errors"], 0.0);
    assert_eq!(
        jobs[0]["write"]["total_ios"].as_f64(),
        m["write_ios"].as_f64()
    );
}

#[test]
fn numjobs_with_group_reporting_adds_up_its_workers() {
    let dir = workdir();
    let (_, recs) = run_json(
        dir.path(),
        "pair",
        r#"
[pair]
directory={d}
ioengine=psync
size=4m
rw=read
numjobs=2
group_reporting
bs=64k
"#,
    );
    assert_eq!(
        recs[0]["metrics"]["read_bytes"],
        (8u64 << 20) as f64,
        "two workers, 4 MiB each"
    );
}

/// A verified file with one byte flipped fails a verifying read, in fio's words.
#[test]
fn a_flipped_byte_fails_a_verifying_reader_in_fios_words() {
    let dir = workdir();
    let d = dir.path();
    run_json(
        d,
        "verified",
        "[verified]\ndirectory={d}\nioengine=psync\nsize=4m\nrw=randwrite\nbs=8k\nverify=crc32c\noffset=1m\n",
    );
    let file = d.join("verified.0.0");
    let mut data = std::fs::read(&file).unwrap();
    data[(1 << 20) + 3 * 8192 + 77] ^= 1;
    std::fs::write(&file, &data).unwrap();
    let check = write(
        d,
        "check.fio",
        &format!(
            r#"
[verified]
filename={}
rw=read
bs=8k
size=3m
offset=1m
verify=crc32c
"#,
            file.display()
        ),
    );
    let out = d.join("study2");
    let o = run(&["run", &check, "--out", out.to_str().unwrap(), "-q"]);
    assert_eq!(o.status.code(), Some(1), "a verify failure fails the run");
    let e = stderr(&o);
    let offset = (1 << 20) + 3 * 8192;
    let want = format!(
        "crc32c: verify failed at file {} offset {offset}, length 8192",
        file.display()
    );
    assert!(e.contains(&want), "{e}");
    assert!(
        e.contains("Expected CRC: ") && e.contains("Received CRC: "),
        "{e}"
    );
}

#[test]
fn a_fio_json_result_imports_into_a_study() {
    let dir = workdir();
    let study = dir.path().join("study");
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/fio-3.33-null.json"
    );
    let import = |more: &[&str]| {
        let mut args = vec![
            "report",
            study.to_str().unwrap(),
            "--import",
            fixture,
            "--label",
            "old-fio",
        ];
        args.extend_from_slice(more);
        run(&args)
    };
    let o = import(&["--format", "fio-json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let recs = records_of(&study);
    assert_eq!(
        (recs.len(), recs[0]["target"].as_str()),
        (1, Some("old-fio"))
    );
    let fio: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture).unwrap()).unwrap();
    let back: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    for d in ["read", "write"] {
        assert_eq!(
            back["jobs"][0][d]["io_bytes"], fio["jobs"][0][d]["io_bytes"],
            "{d}"
        );
    }
    let o = import(&[]);
    assert_eq!(o.status.code(), Some(2), "the same label twice is refused");
}

#[test]
fn rate_min_fails_a_job_that_runs_slower() {
    let dir = workdir();
    let job = write(
        dir.path(),
        "slow.fio",
        &format!(
            "[slow]\ndirectory={}\nrw=write\nbs=4k\nsize=4m\nrate=1m\nrate_min=2m\nruntime=1\ntime_based\n",
            dir.path().display()
        ),
    );
    let out = dir.path().join("study");
    let o = run(&["run", &job, "--out", out.to_str().unwrap(), "-q"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("rate_min: the writes ran at"),
        "{}",
        stderr(&o)
    );
}
