//! A grammar fuzzer for every parser that takes a user's text: fio job files (syntax, options,
//! includes, substitutions, arithmetic, then resolution against a directory target), target specs,
//! workload specs and verify states (verify_state_load's files: real ones mutated or cut short,
//! lines of their grammar, random bytes); and study files (random TOML of the study keys with
//! [scale.*] and [[claim]] tables, and the shipped studies with lines changed, with scales and
//! `--set`s) through the study loader, the plan and its resolution. No input may panic: each case
//! runs under catch_unwind and any panic fails the test with the input that caused it.
//!
//! `FSBENCH_FUZZ_CASES` sets the number of cases (the suite runs 20,000, and a quarter as many study
//! files; `FSBENCH_FUZZ_CASES=100000` for a longer run); `FSBENCH_FUZZ_SEED` replays a run.

use crate::common::fuzz::{cases_and_seed, Rng};

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

use fsbench::plan::fio::syntax::Host;

/// Values that have broken parsers before, or could: huge, negative, empty, odd units, ranges,
/// lists, percentages, substitutions, arithmetic.
const VALUES: &[&str] = &[
    "0",
    "1",
    "-1",
    "4k",
    "1m",
    "64m",
    "1g",
    "1p",
    "16e",
    "18446744073709551616",
    "99999999999999999999999",
    "99999999999999999999999s",
    "-5s",
    "1.5",
    "1e308",
    "nan",
    "inf",
    "",
    " ",
    "0x10",
    "4k-64k",
    "4k:64k",
    "4k/50:64k/50",
    "4k/:8k/",
    "/",
    "50%",
    "101%",
    "0%",
    "-3%",
    "1,2",
    "4k,8k,16k",
    ",,",
    "read",
    "randrw",
    "randread:8",
    "write:-4k",
    "zipf:1.2",
    "zipf:0",
    "pareto:0.9",
    "normal:20",
    "zoned:50/10:50/90",
    "zoned:200/10",
    "zoned_abs:50/1g:50/2g",
    "random",
    "sync",
    "io_uring",
    "null",
    "libaio",
    "crc32c",
    "md5",
    "meta",
    "pattern",
    "0xdeadbeef",
    "\"abc\"",
    "${X}",
    "${UNSET}",
    "${",
    "$ncpus",
    "$pagesize*2",
    "$mb_memory/0",
    "(4+4)k",
    "(1/0)",
    "((((1))))",
    "2^64",
    "9^99",
    "(",
    ")",
    "1ms",
    "1us",
    "1h",
    "1d",
    "366d",
    "400d",
    "1000000000h",
    "poisson",
    "linear",
    "1:2:3",
    "a:b",
    "file:1",
    "/dev/null",
    "f1:f2",
];

fn option_names() -> Vec<&'static str> {
    fsbench::plan::fio::options::all()
        .flat_map(|o| std::iter::once(o.name).chain(o.aliases.iter().copied()))
        .chain([
            "ioengine",
            "direct",
            "verify",
            "verify_pattern",
            "include",
            "bogus_option",
        ])
        .collect()
}

fn job_file(r: &mut Rng, names: &[&'static str]) -> String {
    let mut s = String::new();
    let sections = 1 + r.below(3);
    for k in 0..sections {
        s.push_str(
            match r.below(6) {
                0 => "[global]\n".to_string(),
                1 => "[\n".to_string(),
                _ => format!("[job{k}]\n"),
            }
            .as_str(),
        );
        for _ in 0..r.below(10) {
            let name = r.pick(names);
            match r.below(12) {
                0 => s.push_str(&format!("{name}\n")),
                1 if r.chance(30) => s.push_str(&format!("include inc{}.fio\n", r.below(3))),
                2 => s.push_str(&format!("{name} = {} ; c\n", r.pick(VALUES))),
                3 => s.push_str(&format!("{name}={}{}\n", r.pick(VALUES), r.pick(VALUES))),
                4 => {
                    let bytes: String = (0..r.below(12))
                        .map(|_| (b' ' + (r.below(95)) as u8) as char)
                        .collect();
                    s.push_str(&format!("{name}={bytes}\n"));
                }
                _ => s.push_str(&format!("{name}={}\n", r.pick(VALUES))),
            }
        }
    }
    if r.chance(10) {
        // A random cut, as a torn or truncated file.
        let cut = r.below(s.len() + 1);
        let mut cut = cut;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
    }
    s
}

fn target_spec(r: &mut Rng) -> String {
    let fs = r.pick(&[
        "ext4", "xfs", "btrfs", "zfs", "f2fs", "tmpfs", "dir", "raw", "EXT4", "nope", "",
    ]);
    let keys = [
        "inodes",
        "bytes_per_inode",
        "blocksize",
        "nojournal",
        "maxpct",
        "agcount",
        "recordsize",
        "compression",
        "nodatacow",
        "compress",
        "size",
        "label",
        "faulty",
        "fail_writes_after",
        "mkfs",
        "mount",
        "devices",
        "raid1",
        "mirror",
        "raidz",
        "zvol",
        "ashift",
        "bogus",
    ];
    let mut s = fs.to_string();
    if fs == "dir" && r.chance(70) {
        s.push_str(":/tmp");
    }
    for i in 0..r.below(5) {
        s.push(if i == 0 && !s.contains(':') { ':' } else { ',' });
        let k = r.pick(&keys);
        match r.below(4) {
            0 => s.push_str(k),
            1 => s.push_str(&format!("{k}='{} {}'", r.pick(VALUES), r.pick(VALUES))),
            _ => s.push_str(&format!("{k}={}", r.pick(VALUES))),
        }
    }
    if r.chance(5) {
        s.push('\'');
    }
    s
}

fn workload_spec(r: &mut Rng) -> String {
    let name = r.pick(&[
        "block",
        "cdm",
        "seq-read",
        "files",
        "bonnie",
        "iozone",
        "aging",
        "smoke",
        "idle",
        "db-server",
        "hpc",
        "nope",
    ]);
    let keys = [
        "rw",
        "bs",
        "iodepth",
        "size",
        "runtime",
        "count",
        "threads",
        "schedule",
        "max_file",
        "min_file",
        "snapshots",
        "seconds",
        "ram",
        "ioengine",
        "rate",
        "rate_iops",
        "numjobs",
        "file_size",
        "dirs",
        "verify",
        "resume",
        "keep",
    ];
    let mut s = name.to_string();
    for i in 0..r.below(5) {
        s.push(if i == 0 { ':' } else { ',' });
        s.push_str(&format!("{}={}", r.pick(&keys), r.pick(VALUES)));
    }
    s
}

/// A verify state (`verify_state_save`'s file): a real one (sorted, apart ranges) mutated, cut
/// short, or lines from its grammar in any order, or random bytes.
fn verify_state(r: &mut Rng) -> Vec<u8> {
    let nums = [
        "0",
        "1",
        "4096",
        "65536",
        "18446744073709551615",
        "18446744073709551616",
        "-1",
        "",
        "x",
        "1e3",
    ];
    let mut s = format!(
        "fsbench verify state 1\njob {}\nclone {}\n",
        r.pick(&["vjob", "other", ""]),
        r.below(3)
    );
    let n = r.below(6);
    s.push_str(&format!("writes {}\nranges {n}\n", n + r.below(3)));
    let mut at = 0u64;
    for _ in 0..n {
        at += 4096 * (1 + r.below(16) as u64);
        let len = 4096 * (1 + r.below(16) as u64);
        s.push_str(&format!("{at} {len}\n"));
        at += len;
    }
    let mut b = s.into_bytes();
    match r.below(6) {
        0 => b.truncate(r.below(b.len() + 1)),
        1 => {
            for _ in 0..1 + r.below(4) {
                let i = r.below(b.len());
                b[i] = r.next() as u8;
            }
        }
        2 => {
            let lines = [
                "fsbench verify state 1",
                "job vjob",
                "clone 0",
                "writes",
                "ranges 3",
                "writes 18446744073709551615",
                "0 4096",
                "  ",
                "4096 0",
            ];
            b.clear();
            for _ in 0..r.below(10) {
                let line = match r.below(3) {
                    0 => format!("{} {}", r.pick(&nums), r.pick(&nums)),
                    _ => r.pick(&lines).to_string(),
                };
                b.extend_from_slice(line.as_bytes());
                b.push(if r.chance(90) { b'\n' } else { b'\r' });
            }
        }
        3 => b = (0..r.below(64)).map(|_| r.next() as u8).collect(),
        _ => {}
    }
    b
}

/// Runs `f` and returns the panic message, if it panicked.
fn panics(f: impl FnOnce()) -> Option<String> {
    catch_unwind(AssertUnwindSafe(f)).err().map(|e| {
        e.downcast_ref::<String>()
            .cloned()
            .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default()
    })
}

#[test]
fn no_input_panics_a_parser() {
    let (cases, seed) = cases_and_seed(20_000, 0x5eed_f00d_1234_5678);
    let names = option_names();
    let host = Host {
        pagesize: 4096,
        mb_memory: 24000,
        ncpus: 2,
    };
    let dir = tempfile::tempdir().unwrap();
    let target = fsbench::frame::TargetCtx {
        place: fsbench::frame::Place::Mount(dir.path().to_path_buf()),
        fs: "tmpfs".into(),
        device: None,
        stat_dir: Some(dir.path().to_path_buf()),
        caps: Default::default(),
        target: None,
        quiet: true,
        ranks: Default::default(),
        interval: std::time::Duration::from_secs(1),
        profile: None,
    };
    // Panics are caught; keep their default report out of the test's output.
    std::panic::set_hook(Box::new(|_| {}));
    let mut r = Rng(seed | 1);
    let mut found: Vec<String> = Vec::new();
    let trace = std::env::var_os("FSBENCH_FUZZ_TRACE");
    for case in 0..cases {
        let text = job_file(&mut r, &names);
        let t0 = std::time::Instant::now();
        if let Some(t) = &trace {
            std::fs::write(t, format!("case {case}\n{text}")).unwrap();
        }
        let incs: Vec<String> = (0..3).map(|_| job_file(&mut r, &names)).collect();
        let t = target_spec(&mut r);
        let w = workload_spec(&mut r);
        let read = |p: &Path| -> std::io::Result<String> {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            match name
                .strip_prefix("inc")
                .and_then(|n| n.strip_suffix(".fio"))
            {
                Some(i) => Ok(incs[i.parse::<usize>().unwrap_or(0) % 3].clone()),
                None => Err(std::io::Error::from(std::io::ErrorKind::NotFound)),
            }
        };
        let env = |v: &str| (v == "X").then(|| "64k".to_string());
        let job = panics(|| {
            let Ok(f) = fsbench::plan::fio::jobfile::parse_with(
                &text,
                "fuzz.fio",
                Path::new("/nonexistent"),
                &read,
                &host,
                &env,
            ) else {
                return;
            };
            // Resolution against a target (sizes, offsets, regions): nothing is created.
            let block = fsbench::workload::block::Block::from_jobs(f.jobs, &Default::default());
            let _ = block.check(&target);
        });
        let t_job = t0.elapsed();
        if let Some(m) = job {
            found.push(format!("case {case}: job file panicked ({m}):\n{text}"));
        }
        if let Some(m) = panics(|| {
            let _ = fsbench::provision::parse_target(&t);
        }) {
            found.push(format!("case {case}: target spec {t:?} panicked ({m})"));
        }
        if let Some(m) = panics(|| {
            if let Ok(spec) = fsbench::plan::workload::parse_workload(&w) {
                let _ = fsbench::workload::build(&spec, &Default::default());
            }
        }) {
            found.push(format!("case {case}: workload spec {w:?} panicked ({m})"));
        }
        let state = verify_state(&mut r);
        let span = [(0, 1 << 20), (4096, 65536), (0, u64::MAX)][r.below(3)];
        let span = fsbench::plan::units::Span::new(span.0, span.1);
        if let Some(m) = panics(|| {
            let _ = fsbench::workload::block::vstate::parse(&state, "vjob", 0, span);
        }) {
            let text = String::from_utf8_lossy(&state);
            found.push(format!("case {case}: verify state {text:?} panicked ({m})"));
        }
        if trace.is_some() && t0.elapsed().as_millis() > 50 {
            eprintln!(
                "slow case {case}: {:?} (job file {t_job:?})\n{text}\nINCLUDES:\n{}\n{t}\n{w}",
                t0.elapsed(),
                incs.join("\n--\n")
            );
        }
        if found.len() >= 5 {
            break;
        }
    }
    let _ = std::panic::take_hook();
    assert!(
        found.is_empty(),
        "{} panics (seed {seed}):\n{}",
        found.len(),
        found.join("\n\n")
    );
    eprintln!(
        "fuzz: {cases} cases of job files, target specs, workload specs and verify states, no panic (seed {seed})"
    );
}

/// A TOML value for a study key: a string of VALUES or a spec, a number, a list, a table, or a
/// wrong type, written as TOML writes it.
fn toml_value(r: &mut Rng) -> String {
    let s = |x: &str| toml::Value::String(x.to_string()).to_string();
    match r.below(12) {
        0 => r
            .pick(&[
                "0",
                "1",
                "-1",
                "3",
                "1000",
                "1001",
                "1000000000",
                "9223372036854775807",
            ])
            .to_string(),
        1 => r
            .pick(&[
                "true",
                "1.5",
                "nan",
                "inf",
                "1979-05-27",
                "{}",
                "[]",
                "[1, 2]",
            ])
            .to_string(),
        2 => format!(
            "[{}]",
            (0..r.below(3))
                .map(|_| s(&target_spec(r)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        3 => format!(
            "[{}]",
            (0..r.below(3))
                .map(|_| s(&workload_spec(r)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        4 => format!("{{ a = {} }}", s(r.pick(VALUES))),
        _ => s(r.pick(VALUES)),
    }
}

/// A value the key takes, so that cases reach the plan and its resolution.
fn good_value(key: &str) -> String {
    match key {
        "repeat" => "2",
        "seed" => "42",
        "size" => "\"64M\"",
        "file_size" => "\"1M\"",
        "runtime" => "\"1s\"",
        "interval" => "\"500ms\"",
        "until_steady" => "\"iops_slope:0.5%,dur=10s,ramp=5s,max=120s\"",
        "baseline" => "\"b\"",
        "targets" => "[\"dir:/tmp\", \"tmpfs:label=b\"]",
        "workloads" => "[\"smoke:size=1M\"]",
        _ => "\"text\"",
    }
    .to_string()
}

/// The study keys, a claim's keys, and names no study file takes.
const STUDY_KEYS: &[&str] = &[
    "title",
    "source",
    "notes",
    "targets",
    "workloads",
    "repeat",
    "size",
    "runtime",
    "file_size",
    "baseline",
    "seed",
    "interval",
    "until_steady",
    "fsbench_version",
    "scale",
    "claim",
    "colour",
    "\"quoted key\"",
    "a.b",
];
const CLAIM_KEYS: &[&str] = &[
    "says",
    "quote",
    "published",
    "target",
    "workload",
    "test",
    "metric",
    "vs",
    "vs_test",
    "expect",
    "why",
    "unit",
];

/// A random study file: keys with values of the right kind or not, good targets and workloads
/// often enough to reach the plan, [scale.*] tables and [[claim]]s.
fn study_file(r: &mut Rng) -> String {
    let s = |x: &str| toml::Value::String(x.to_string()).to_string();
    let mut t = String::new();
    if r.chance(80) {
        let dir = if r.chance(70) {
            "dir:/tmp".to_string()
        } else {
            target_spec(r)
        };
        t.push_str(&format!(
            "targets = [{}, {}]\n",
            s(&dir),
            s("tmpfs:label=b")
        ));
    }
    if r.chance(80) {
        let w = if r.chance(50) {
            workload_spec(r)
        } else {
            "smoke:size=1M".to_string()
        };
        t.push_str(&format!("workloads = [{}]\n", s(&w)));
    }
    table_keys(r, &mut t, &["targets", "workloads", "scale", "claim"]);
    let mut scales: Vec<&str> = Vec::new();
    for _ in 0..r.below(3) {
        let name = r.pick(&["small", "full", "huge", "\"x y\""]);
        if scales.contains(&name) && r.chance(95) {
            continue;
        }
        scales.push(name);
        t.push_str(&format!("[scale.{name}]\n"));
        table_keys(r, &mut t, &[]);
    }
    for _ in 0..r.below(3) {
        t.push_str("[[claim]]\n");
        let mut used: Vec<&str> = Vec::new();
        for _ in 0..r.below(8) {
            let k = r.pick(CLAIM_KEYS);
            if used.contains(&k) && r.chance(95) {
                continue;
            }
            used.push(k);
            let v = match (k, r.below(3)) {
                ("expect", 0) => {
                    s(r.pick(&["> 1", "< 0.5", "0.5..2", "2..0.5", ">", "..", "< nan"]))
                }
                ("target" | "vs", 0) => s(r.pick(&["dir:/tmp", "b", "zfs"])),
                ("metric", 0) => s(r.pick(&["iops", "bytes_per_sec", "lat_p99_ns", "speed"])),
                _ => toml_value(r),
            };
            t.push_str(&format!("{k} = {v}\n"));
        }
    }
    t
}

/// Up to five keys of the study file into `t` (a key twice, a TOML error, now and then), each
/// with a value it takes more often than not, leaving out `skip`.
fn table_keys(r: &mut Rng, t: &mut String, skip: &[&str]) {
    let mut used: Vec<&str> = skip.to_vec();
    for _ in 0..r.below(6) {
        let k = r.pick(STUDY_KEYS);
        if used.contains(&k) && r.chance(97) {
            continue;
        }
        used.push(k);
        let v = if r.chance(60) {
            good_value(k)
        } else {
            toml_value(r)
        };
        t.push_str(&format!("{k} = {v}\n"));
    }
}

/// A shipped study with a few of its lines changed: dropped, doubled, a value replaced, noise
/// put in, or the text cut short.
fn mutated(r: &mut Rng, text: &str) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    for _ in 0..1 + r.below(4) {
        if lines.is_empty() {
            break;
        }
        let i = r.below(lines.len());
        match r.below(5) {
            0 => {
                lines.remove(i);
            }
            1 => {
                let l = lines[i].clone();
                lines.insert(i, l);
            }
            2 => {
                if let Some((k, _)) = lines[i].clone().split_once('=') {
                    lines[i] = format!("{k}= {}", toml_value(r));
                }
            }
            3 => lines.insert(
                i,
                (0..r.below(20))
                    .map(|_| (b' ' + r.below(95) as u8) as char)
                    .collect(),
            ),
            _ => lines.truncate(i),
        }
    }
    lines.join("\n")
}

#[test]
fn no_study_file_panics_the_loader_or_the_plan() {
    // A quarter as many cases as the job files get.
    let (cases, seed) = cases_and_seed(20_000, 0x57d1_e5f0_0d12_3456);
    let cases = cases / 4;
    std::panic::set_hook(Box::new(|_| {}));
    let mut r = Rng(seed | 1);
    let shipped = fsbench::plan::study::SHIPPED;
    let mut found: Vec<String> = Vec::new();
    let mut resolved = 0usize;
    for case in 0..cases {
        let text = if r.chance(30) {
            let which = r.below(shipped.len());
            mutated(&mut r, shipped[which].1)
        } else {
            study_file(&mut r)
        };
        let scale = [None, None, None, Some("small"), Some("full"), Some("huge")][r.below(6)];
        let n_sets = if r.chance(60) { 0 } else { 1 + r.below(2) };
        let sets: Vec<String> = (0..n_sets)
            .map(|_| {
                let k = r.pick(STUDY_KEYS);
                match r.below(4) {
                    0 => format!("{k}={}", r.pick(VALUES)),
                    1 => format!(
                        "{k}={}\n{}={}",
                        toml_value(&mut r),
                        r.pick(STUDY_KEYS),
                        r.pick(VALUES)
                    ),
                    2 => format!("{k}={}", toml_value(&mut r)),
                    _ => format!("{k}={}", good_value(k)),
                }
            })
            .collect();
        if let Some(m) = panics(|| {
            if fsbench::cmd::study::resolve_text(&text, "fuzz.toml", scale, &sets).is_ok() {
                resolved += 1;
            }
        }) {
            found.push(format!(
                "case {case}: study file panicked ({m}) with {scale:?} {sets:?}:\n{text}"
            ));
        }
        if found.len() >= 5 {
            break;
        }
    }
    let _ = std::panic::take_hook();
    assert!(
        found.is_empty(),
        "{} panics (seed {seed}):\n{}",
        found.len(),
        found.join("\n\n")
    );
    // Enough of them read as a study and resolve for the plan's code to be reached.
    assert!(
        resolved * 50 >= cases,
        "only {resolved} of {cases} resolved"
    );
    eprintln!(
        "fuzz: {cases} study files (random and mutated shipped ones), {resolved} resolved, no panic (seed {seed})"
    );
}
