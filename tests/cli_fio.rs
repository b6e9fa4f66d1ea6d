//! fio job files end to end through the binary: `run --check` (every group of options, includes
//! and substitutions, each with its line; nothing touched), errors said once, a run whose
//! options take effect (offsets, rates, verify catching a flipped byte in fio's words), fio's
//! JSON out, and a fio JSON result imported into a study.

mod common;
use common::*;

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
    let o = run(&["run", "--help"]);
    for opt in [
        "random_distribution",
        "verify_pattern",
        "offset_increment",
        "rate_iops",
    ] {
        assert!(stdout(&o).contains(opt), "run --help lists {opt}");
    }
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

#[test]
fn a_run_applies_the_options_and_writes_fio_json() {
    let dir = workdir();
    let job = write(
        dir.path(),
        "run.fio",
        &format!(
            "[global]\ndirectory={d}\nioengine=psync\nsize=4m\n\
             [rated]\nrw=write\nbs=4k\nrate_iops=400\nruntime=1\ntime_based\n\
             [verified]\nstonewall\nrw=randwrite\nbs=8k\nverify=crc32c\noffset=1m\n\
             [pair]\nstonewall\nrw=read\nnumjobs=2\ngroup_reporting\nbs=64k\n",
            d = dir.path().display()
        ),
    );
    let out = dir.path().join("study");
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
    let jobs = v["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 3);
    let rated = &jobs[0]["write"];
    let iops = rated["iops"].as_f64().unwrap();
    assert!((380.0..=420.0).contains(&iops), "rate_iops=400 gave {iops}");
    let recs = records_of(&out);
    let verified = recs.iter().find(|r| r["test"] == "verified").unwrap();
    assert_eq!(
        verified["metrics"]["verify_blocks"], 512.0,
        "size=4m from offset=1m (as fio: a 5 MiB file), 8 KiB writes read back"
    );
    assert_eq!(verified["metrics"]["verify_errors"], 0.0);
    assert_eq!(
        jobs[1]["write"]["total_ios"].as_f64(),
        verified["metrics"]["write_ios"].as_f64()
    );
    let pair = recs.iter().find(|r| r["test"] == "pair").unwrap();
    assert_eq!(
        pair["metrics"]["read_bytes"],
        (8u64 << 20) as f64,
        "two workers, 4 MiB each"
    );
    // The verified file, with one byte flipped, fails a verifying read in fio's words.
    let file = dir.path().join("verified.0.0");
    let mut data = std::fs::read(&file).unwrap();
    data[(1 << 20) + 3 * 8192 + 77] ^= 1;
    std::fs::write(&file, &data).unwrap();
    let check = write(
        dir.path(),
        "check.fio",
        &format!(
            "[verified]\nfilename={}\nrw=read\nbs=8k\nsize=3m\noffset=1m\nverify=crc32c\n",
            file.display()
        ),
    );
    let out2 = dir.path().join("study2");
    let o = run(&["run", &check, "--out", out2.to_str().unwrap(), "-q"]);
    assert_eq!(o.status.code(), Some(1), "a verify failure fails the run");
    let e = stderr(&o);
    let want = format!(
        "crc32c: verify failed at file {} offset {}, length 8192",
        file.display(),
        (1 << 20) + 3 * 8192
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
