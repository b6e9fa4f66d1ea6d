//! Several files per job through the binary (fio's filename=a:b:c, nrfiles, file_service_type):
//! the files fio would make, I/O taken from them in fio's order (checked against fio's own
//! write_iolog when fio is installed), a reading job verifying every file, and bad values refused;
//! fio's verify state (verify_state_save / verify_state_load) between two runs.

use crate::common::*;

use std::path::Path;

const JOB: &str = "\
[global]
filename=a.1:b.2:c.3
ioengine=io_uring
iodepth=4
size=96k
bs=4k
verify=crc32c
[w]
rw=write
do_verify=0
file_service_type=roundrobin:2
write_iolog=w.log
[r]
stonewall
rw=randread
file_service_type=random
";

/// (file, offset) of each write in an iolog, the file's leading "./" dropped.
fn writes(log: &Path) -> Vec<(String, u64)> {
    std::fs::read_to_string(log)
        .unwrap()
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() == 5 && f[2] == "write").then(|| {
                (
                    f[1].trim_start_matches("./").to_string(),
                    f[3].parse().unwrap(),
                )
            })
        })
        .collect()
}

/// The metric `key` of the record of test `test` in a study.
fn metric(study: &Path, test: &str, key: &str) -> f64 {
    let text = std::fs::read_to_string(study.join("results.jsonl")).unwrap();
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        if v["test"] == test {
            if let Some(x) = v["metrics"][key].as_f64() {
                return x;
            }
        }
    }
    panic!("no {key} for {test} in {text}");
}

/// Runs `JOB` in `d` (its study in d/s).
fn ran_job(d: &Path) {
    std::fs::write(d.join("m.fio"), JOB).unwrap();
    let o = bin()
        .current_dir(d)
        .args(["run", "m.fio", "--out", "s"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
}

/// roundrobin:2: two blocks of a file, then the next file, each file from its start; the same
/// order as fio's own write_iolog of the job (when fio is here).
#[test]
fn several_files_are_taken_in_fios_order() {
    let dir = workdir();
    let d = dir.path();
    ran_job(d);
    for f in ["a.1", "b.2", "c.3"] {
        assert_eq!(std::fs::metadata(d.join(f)).unwrap().len(), 32 << 10, "{f}");
    }
    let got = writes(&d.join("w.log"));
    assert_eq!(got.len(), 24);
    let expect: Vec<(String, u64)> = (0..24u64)
        .map(|i| {
            let (pair, k) = (i / 2, i % 2);
            let file = ["a.1", "b.2", "c.3"][(pair % 3) as usize];
            (file.to_string(), ((pair / 3) * 2 + k) * 4096)
        })
        .collect();
    assert_eq!(got, expect);
    if !have("fio") {
        eprintln!("SKIPPED: the comparison with fio's order (fio is not installed)");
        return;
    }
    let fio_dir = workdir();
    std::fs::write(fio_dir.path().join("m.fio"), JOB).unwrap();
    let (ok, out) = sh(&format!(
        "cd {} && fio --output=/dev/null m.fio",
        fio_dir.path().display()
    ));
    assert!(ok, "{out}");
    assert_eq!(got, writes(&fio_dir.path().join("w.log")), "fio's order");
}

#[test]
fn a_reader_of_several_files_verifies_each_block_of_each_once() {
    let dir = workdir();
    let d = dir.path();
    ran_job(d);
    let study = d.join("s");
    assert_eq!(
        metric(&study, "r", "read_ios"),
        24.0,
        "each block of each file once"
    );
    assert_eq!(metric(&study, "r", "verify_errors"), 0.0);
}

/// nrfiles=3 with numjobs=2: each worker its own three files, fio's names, size shared.
#[test]
fn nrfiles_makes_fios_files_for_each_worker() {
    let dir = workdir();
    let d = dir.path();
    std::fs::write(
        d.join("n.fio"),
        r#"
[j]
rw=randwrite
size=48k
nrfiles=3
numjobs=2
file_service_type=sequential
openfiles=1
"#,
    )
    .unwrap();
    let o = bin()
        .current_dir(d)
        .args(["run", "n.fio", "--out", "s"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    for clone in 0..2 {
        for i in 0..3 {
            let f = d.join(format!("j.{clone}.{i}"));
            assert_eq!(std::fs::metadata(&f).unwrap().len(), 16 << 10, "{f:?}");
        }
    }
    assert_eq!(metric(&d.join("s"), "j", "write_ios"), 24.0);
}

/// A data file in the kernel's files (/proc, /sys, a character device), or a symbolic link, is
/// refused before anything is written: fsbench runs as root.
#[test]
fn a_data_file_in_the_kernels_files_or_through_a_link_is_refused() {
    let dir = workdir();
    let d = dir.path();
    let victim = d.join("victim");
    std::fs::write(&victim, "keep me").unwrap();
    std::os::unix::fs::symlink(&victim, d.join("link")).unwrap();
    for (file, says) in [
        ("/proc/sys/kernel/hostname", "one of the kernel's files"),
        ("/sys/kernel/mm/ksm/run", "one of the kernel's files"),
        ("/dev/nvme9n9", "fsbench makes no file there"),
        ("/dev/null", "not a regular file"),
        ("link", "symbolic link"),
    ] {
        std::fs::write(
            d.join("k.fio"),
            format!("[k]\nrw=write\nbs=4k\nsize=4k\nfilename={file}\n"),
        )
        .unwrap();
        let o = bin()
            .current_dir(d)
            .args(["run", "k.fio", "--out", "s", "--no-history"])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{file}: {}", stderr(&o));
        assert!(stderr(&o).contains(says), "{file}: {}", stderr(&o));
        assert!(!d.join("s").exists(), "{file}: a study was made");
    }
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
}

#[test]
fn a_file_service_or_file_list_fio_does_not_take_is_refused() {
    let dir = workdir();
    let bad = |opts: &str| refused_opts(dir.path(), opts);
    assert!(bad("file_service_type=zipf:1.1").contains("use random"));
    assert!(bad("file_service_type=roundrobin:x").contains("at least 1"));
    assert!(bad("filename=a::b").contains("empty file name"));
}

#[test]
fn a_reader_verifies_only_what_an_interrupted_writer_saved_in_its_state() {
    let dir = workdir();
    let d = dir.path();
    let common = "[global]\nfilename=v\nsize=4m\nbs=64k\nverify=crc32c\n";
    std::fs::write(
        d.join("pre.fio"),
        format!("{common}[job]\nrw=write\nrate=1m\nruntime=1\ndo_verify=0\nverify_state_save=1\n"),
    )
    .unwrap();
    let post = |load: &str| {
        std::fs::write(
            d.join("post.fio"),
            format!("{common}[job]\nrw=read\nverify_fatal=0\nverify_state_load={load}\n"),
        )
        .unwrap();
        let study = format!("post{load}");
        let o = bin()
            .current_dir(d)
            .args(["run", "post.fio", "--out", &study])
            .output()
            .unwrap();
        (o, d.join(study))
    };
    // No state yet: refused before anything runs, naming the file and the fix.
    let (o, _) = post("1");
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("local-job-0-verify.state"),
        "{}",
        stderr(&o)
    );
    let o = bin()
        .current_dir(d)
        .args(["run", "pre.fio", "--out", "pre"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let state = std::fs::read_to_string(d.join("local-job-0-verify.state")).unwrap();
    assert!(state.starts_with("fsbench verify state 1\n"), "{state}");
    let wrote = metric(&d.join("pre"), "job", "write_ios");
    assert!(
        wrote > 0.0 && wrote < 64.0,
        "the rate cut the writer short: {wrote}"
    );
    // With the state: only what was written is checked, and all of it is good.
    let (o, study) = post("1");
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(metric(&study, "job", "verify_errors"), 0.0);
    assert_eq!(metric(&study, "job", "verify_blocks"), wrote);
    assert_eq!(metric(&study, "job", "verify_skipped"), 64.0 - wrote);
    let record = std::fs::read_to_string(study.join("results.jsonl")).unwrap();
    assert!(
        record.contains("verify state lists as written are checked")
            && !record.contains("every block read is checked"),
        "the note says what is checked: {record}"
    );
    // Without it the reader checks the blocks never written, as fio does, and they are bad.
    let (_, study) = post("0");
    assert_eq!(metric(&study, "job", "verify_errors"), 64.0 - wrote);
}

#[test]
fn strided_zones_read_where_fio_reads() {
    let job = "[global]\nbs=64k\nrw=read\nioengine=libaio\niodepth=2\nzonemode=strided\nzonesize=1m\nzoneskip=3m\n[zones]\nfilename=disk\nsize=16m\nwrite_iolog=z.log\n";
    let reads = |dir: &Path| -> Vec<u64> {
        std::fs::read_to_string(dir.join("z.log"))
            .unwrap()
            .lines()
            .filter_map(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                (f.len() == 5 && f[2] == "read").then(|| f[3].parse().unwrap())
            })
            .collect()
    };
    let dir = workdir();
    std::fs::write(dir.path().join("z.fio"), job).unwrap();
    let o = bin()
        .current_dir(dir.path())
        .args(["run", "z.fio", "--out", "s"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let ours = reads(dir.path());
    // 1 MiB (16 reads) in each zone at 0, 4, 8 and 12 MiB, then from the start again, until
    // 16 MiB were read (fio does not count the skipped bytes).
    assert_eq!(ours.len(), 256);
    let mib = 1 << 20;
    let expect: Vec<u64> = (0..256u64)
        .map(|i| (i / 16 % 4) * 4 * mib + (i % 16) * 65536)
        .collect();
    assert_eq!(ours, expect);
    if !have("fio") {
        eprintln!("SKIPPED: the comparison with fio (fio is not installed)");
        return;
    }
    let fio_dir = workdir();
    std::fs::write(fio_dir.path().join("z.fio"), job).unwrap();
    let (ok, out) = sh(&format!(
        "cd {} && fio --output=/dev/null z.fio",
        fio_dir.path().display()
    ));
    assert!(ok, "{out}");
    assert_eq!(ours, reads(fio_dir.path()), "fio's offsets");
    let bad = |opts: &str| refused_opts(dir.path(), opts);
    assert!(bad("zonemode=strided").contains("needs zonesize="));
    assert!(bad("zonemode=strided\nzonesize=4m").contains("fit in the job's region"));
}

#[test]
fn a_damaged_or_foreign_verify_state_is_refused_before_the_reader_runs() {
    let dir = workdir();
    let d = dir.path();
    let common = "[global]\nfilename=v\nsize=256k\nbs=4k\nverify=crc32c\n";
    std::fs::write(
        d.join("pre.fio"),
        format!("{common}[vjob]\nrw=write\ndo_verify=0\nverify_state_save=1\n"),
    )
    .unwrap();
    std::fs::write(
        d.join("post.fio"),
        format!("{common}[vjob]\nrw=read\nverify_state_load=1\n"),
    )
    .unwrap();
    let o = bin()
        .current_dir(d)
        .args(["run", "pre.fio", "--out", "pre"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    // A block damaged behind the writer's back: the reader with the intact state finds it.
    let mut data = std::fs::read(d.join("v")).unwrap();
    data[8192..12288].fill(0);
    std::fs::write(d.join("v"), &data).unwrap();
    let post = |out: &str| {
        bin()
            .current_dir(d)
            .args(["run", "post.fio", "--out", out])
            .output()
            .unwrap()
    };
    let o = post("intact");
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let state = d.join("local-vjob-0-verify.state");
    let intact = std::fs::read_to_string(&state).unwrap();
    let head = "fsbench verify state 1\njob vjob\nclone 0\n";
    let cases = [
        // The issue's: torn in its counts.
        (format!("{head}writ"), "line 4"),
        // Torn in its only range.
        (intact[..intact.len() - 3].to_string(), "line 6"),
        (intact.replace("job vjob", "job s3cr3t"), "line 2"),
        (intact.replace("ranges 1", "ranges 2"), "line 7"),
        (
            format!("{head}writes 2\nranges 2\n8192 4096\n0 4096\n"),
            "line 7",
        ),
        (format!("{head}writes 1\nranges 1\n0 1048576\n"), "line 6"),
        (
            format!("{head}writes 1\nranges 1\n4096 18446744073709551615\n"),
            "line 6",
        ),
    ];
    for (i, (text, line)) in cases.iter().enumerate() {
        std::fs::write(&state, text).unwrap();
        let out = format!("post{i}");
        let o = post(&out);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{text:?}: {e}");
        assert!(
            e.contains(&format!("local-vjob-0-verify.state {line}:"))
                && e.contains("verify_state_save=1"),
            "{text:?}: {e}"
        );
        assert!(
            !e.contains("s3cr3t") && !e.contains("18446744073709551615"),
            "{e}"
        );
        assert!(!d.join(&out).exists(), "no study for a refused run");
        let o = bin()
            .current_dir(d)
            .args(["run", "--check", "post.fio"])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "--check: {text:?}");
    }
    assert_eq!(
        std::fs::read(d.join("v")).unwrap(),
        data,
        "the file untouched"
    );
}

/// The most files fio's nrfiles allows resolve in linear time: `run --check` of 2^20 files
/// (each name, its checks and its span in the layout) ends well within the bound; in quadratic
/// time it took hours (16,384 files took 47 s).
#[test]
fn a_million_files_per_worker_resolve_in_linear_time() {
    let dir = workdir();
    let d = dir.path();
    std::fs::write(
        d.join("many.fio"),
        "[many]\nrw=randwrite\nbs=512\nsize=512m\nnrfiles=1048576\n",
    )
    .unwrap();
    let mut child = bin()
        .current_dir(d)
        .args(["run", "--check", "many.fio"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if std::time::Instant::now() > deadline {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("run --check of 2^20 files still resolving after 120 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    let mut e = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut e).unwrap();
    assert!(status.success(), "{e}");
    assert!(!d.join("many.0.0").exists(), "--check makes no file");
}
