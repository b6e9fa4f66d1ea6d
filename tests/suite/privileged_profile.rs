//! `--profile` against real parts: a profiled compare of tmpfs and btrfs random writes holds
//! folded stacks with btrfs's and shmem's kernel frames and fsbench's own frames named, flame
//! graphs and a differential in the report (rendered in headless Chromium); an off-CPU profile
//! of fsync-heavy writes on ext4 shows where they blocked; without root, user frames only and a
//! note that says why. Each test skips, with the reason, where the host cannot.

use crate::common::*;

use std::path::Path;

fn records(study: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(study.join("results.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The folded stacks a record's profile names, read from the study.
fn folded(study: &Path, rec: &serde_json::Value, kind: &str) -> String {
    let file = rec["profile"][kind]["file"]
        .as_str()
        .unwrap_or_else(|| panic!("no {kind} profile: {rec}"));
    assert!(file.starts_with("profiles/"), "{file}");
    std::fs::read_to_string(study.join(file)).unwrap()
}

/// Why the host cannot profile, from the records' notes; None when it could.
fn refused(recs: &[serde_json::Value]) -> Option<String> {
    recs.iter()
        .flat_map(|r| r["notes"].as_array().cloned().unwrap_or_default())
        .filter_map(|n| n.as_str().map(str::to_string))
        .find(|n| n.starts_with("profile:") && n.contains("unprofiled"))
}

/// Every line `frames count`, frames from the root.
fn frames(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .map(|l| {
            let (stack, n) = l.rsplit_once(' ').expect("frames and a count");
            assert!(n.parse::<u64>().is_ok(), "{l}");
            stack.split(';').map(str::to_string).collect()
        })
        .collect()
}

/// A tick profile's leaves: none is a frame of the timer interrupt; some are kernel frames of
/// the thread's (named), some user frames (where the tick interrupted user code).
fn tick_leaves_are_the_threads(stacks: &[Vec<String>], text: &str) {
    let leaves: Vec<&str> = stacks
        .iter()
        .filter_map(|s| s.last())
        .map(String::as_str)
        .collect();
    let interrupt = |f: &str| {
        [
            "sysvec_apic_timer_interrupt",
            "hrtimer_interrupt",
            "local_timer",
        ]
        .iter()
        .any(|i| f.contains(i))
    };
    assert!(
        !leaves.iter().any(|f| interrupt(f)),
        "a leaf is the interrupt's: {text}"
    );
    let kernel = |f: &&str| f.ends_with("_[k]");
    assert!(
        leaves.iter().any(|f| kernel(f) && !f.starts_with('[')),
        "no named kernel leaf: {text}"
    );
    assert!(
        leaves.iter().any(|f| !kernel(f) && *f != "fsbench"),
        "no leaf in user code: {text}"
    );
}

#[test]
fn a_profiled_compare_names_the_filesystems_kernel_frames_and_fsbenchs_own() {
    if skip(!is_root(), "needs root (btrfs on a loop device)")
        || skip(!kernel_has("btrfs") || !have("mkfs.btrfs"), "no btrfs here")
    {
        return;
    }
    let _serial = serial();
    let work = workdir();
    let study = work.path().join("study");
    let o = Compare::new(&["tmpfs", "btrfs"])
        .workload("block:rw=randwrite,bs=4k,size=64m,runtime=2s")
        .size("512M")
        .out(study.to_str().unwrap())
        .workdir(work.path().join("w").to_str().unwrap())
        .args(&["--profile"])
        .run();
    assert!(o.status.success(), "{}", stderr(&o));
    let recs = records(&study);
    if let Some(why) = refused(&recs) {
        skip(true, &why);
        return;
    }
    // On the tick a profile keeps the run's rate; on a per-thread cpu-clock (where the tick
    // cannot be sampled) the figures are said to be profiled: it costs a switch-heavy job.
    let clock = recs[0]["profile"]["clock"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let warned =
        stderr(&o).contains("2 record(s) were measured while profiled on a per-thread cpu-clock");
    match clock.as_str() {
        "tick" => assert!(!warned, "{}", stderr(&o)),
        "cpu-clock" => assert!(warned, "{}", stderr(&o)),
        other => panic!("profile.clock {other:?}: {}", recs[0]),
    }
    let of = |target: &str| {
        recs.iter()
            .find(|r| r["target"] == target)
            .unwrap_or_else(|| panic!("no {target} record"))
    };
    let (tmpfs, btrfs) = (of("tmpfs"), of("btrfs"));
    for (r, fs_frame) in [(tmpfs, "shmem_"), (btrfs, "btrfs_")] {
        assert_eq!(r["profile"]["mode"], "on-cpu", "{r}");
        assert_eq!(r["profile"]["clock"], clock.as_str(), "{r}");
        if clock == "cpu-clock" {
            assert_eq!(r["profile"]["hz"], 999);
        }
        assert!(r["profile"]["off_cpu"].is_null());
        let text = folded(&study, r, "on_cpu");
        let stacks = frames(&text);
        assert!(stacks.iter().all(|s| s[0] == "fsbench"), "root: {text}");
        // A tick's stacks end in what it interrupted, not in the interrupt's entry: no frame
        // of the interrupt is kept, no leaf is one, and the leaves are the thread's own work
        // in both places it runs (without the cut every leaf would be the interrupt's, in the
        // kernel, even for a tick that came in from user code).
        if clock == "tick" {
            assert!(
                !text.contains("asm_sysvec_apic_timer_interrupt_[k]"),
                "the interrupt's own frames were kept: {text}"
            );
            tick_leaves_are_the_threads(&stacks, &text);
            assert!(
                !r["notes"].to_string().contains("no timer interrupt entry"),
                "{}",
                r["notes"]
            );
            // Where the kernel's time went, split.
            assert!(r["profile"]["on_cpu"]["shares"]["split"].is_object(), "{r}");
        }
        // The filesystem's kernel functions, named and marked as the kernel's.
        assert!(
            stacks
                .iter()
                .flatten()
                .any(|f| f.starts_with(fs_frame) && f.ends_with("_[k]")),
            "no {fs_frame} kernel frame in {}: {text}",
            r["target"]
        );
        // fsbench's own frames, demangled, with their callers: the I/O loop under the worker.
        let own: Vec<&Vec<String>> = stacks
            .iter()
            .filter(|s| s.iter().any(|f| f.starts_with("fsbench::io::")))
            .collect();
        assert!(!own.is_empty(), "no fsbench::io frame: {text}");
        assert!(
            own.iter()
                .any(|s| s.iter().any(|f| f.starts_with("fsbench::frame::pool::"))),
            "call chains through fsbench's code reach the pool: {text}"
        );
        let shares = &r["profile"]["on_cpu"]["shares"];
        let sum: f64 = ["fsbench", "libraries", "kernel", "daemon", "unknown"]
            .iter()
            .map(|k| shares[k].as_f64().unwrap())
            .sum();
        assert!((sum - 1.0).abs() < 1e-6, "{shares}");
        assert!(shares["kernel"].as_f64().unwrap() > 0.05, "{shares}");
    }
    // The report: the table, a flame graph per target, the differential against the baseline.
    let md = std::fs::read_to_string(study.join("report.md")).unwrap();
    assert!(
        md.contains("## Where the time went, on the CPU: block"),
        "{md}"
    );
    assert!(md.contains("| kernel |"), "{md}");
    for svg in [
        "profiles/tmpfs.block.on-cpu.svg",
        "profiles/btrfs.block.on-cpu.svg",
        "profiles/btrfs.vs.tmpfs.block.on-cpu.svg",
    ] {
        assert!(md.contains(&format!("]({svg})")), "report.md links {svg}");
        let text = std::fs::read_to_string(study.join(svg)).unwrap();
        assert!(
            text.starts_with("<?xml") && text.contains("</svg>"),
            "{svg}"
        );
    }
    let diff =
        std::fs::read_to_string(study.join("profiles/btrfs.vs.tmpfs.block.on-cpu.svg")).unwrap();
    assert!(
        diff.contains("btrfs_"),
        "the differential shows btrfs's frames"
    );
    let html = std::fs::read_to_string(study.join("report.html")).unwrap();
    assert_eq!(
        html.matches("<object class=\"flame\"").count(),
        3,
        "2 graphs + 1 differential"
    );
    assert!(html.contains("btrfs against tmpfs, block, on the CPU"));
    browser_check(&study);
}

/// The page loads offline in headless Chromium and fetches nothing; each SVG renders on its own
/// with its frames (its script run), and a screenshot is kept for people to look at.
fn browser_check(study: &Path) {
    let Some(chromium) = ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|c| have(c))
    else {
        skip(true, "no chromium: the page is not looked at in a browser");
        return;
    };
    let profile = study.join("chromium-profile");
    let base = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--virtual-time-budget=3000",
        "--window-size=1200,6000",
    ];
    let dom = |url: String| {
        let o = std::process::Command::new(chromium)
            .args(base)
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg("--dump-dom")
            .arg(url)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let page = dom(format!("file://{}", study.join("report.html").display()));
    assert!(page.contains("data-ready=\"1\""), "the page script ran");
    assert!(
        page.contains("data-external=\"0\""),
        "the page fetched nothing"
    );
    let svg = dom(format!(
        "file://{}",
        study
            .join("profiles/btrfs.vs.tmpfs.block.on-cpu.svg")
            .display()
    ));
    assert!(
        svg.contains("btrfs_") && svg.contains("<g"),
        "the SVG renders its frames"
    );
    let shot = Path::new(env!("CARGO_TARGET_TMPDIR")).join("profile-report.png");
    let o = std::process::Command::new(chromium)
        .args(base)
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("--hide-scrollbars")
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("file://{}", study.join("report.html").display()))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn an_off_cpu_profile_of_fsync_heavy_writes_shows_where_they_blocked() {
    if skip(!is_root(), "needs root (ext4 on a loop device)")
        || skip(!have("mkfs.ext4"), "no mkfs.ext4 here")
    {
        return;
    }
    let _serial = serial();
    let work = workdir();
    let study = work.path().join("study");
    let o = Compare::new(&["ext4"])
        .workload("block:rw=randwrite,bs=4k,size=16m,runtime=2s,fsync=1,ioengine=sync")
        .size("512M")
        .out(study.to_str().unwrap())
        .workdir(work.path().join("w").to_str().unwrap())
        .args(&["--profile=off-cpu"])
        .run();
    assert!(o.status.success(), "{}", stderr(&o));
    let recs = records(&study);
    if let Some(why) = refused(&recs) {
        skip(true, &why);
        return;
    }
    let r = &recs[0];
    assert_eq!(r["profile"]["mode"], "off-cpu", "{r}");
    assert!(r["profile"]["on_cpu"].is_null());
    let text = folded(&study, r, "off_cpu");
    let stacks = frames(&text);
    // Every stack ends in the scheduler: where the thread left the CPU.
    assert!(
        stacks.iter().all(|s| s
            .last()
            .is_some_and(|f| f.contains("schedule") || f.contains("switch"))),
        "{text}"
    );
    // The writes' fsyncs waited for the journal or the device.
    let waited = |name: &str| stacks.iter().flatten().any(|f| f.starts_with(name));
    assert!(
        waited("ext4_sync_file") || waited("jbd2_"),
        "no fsync wait in {text}"
    );
    let top = &r["profile"]["off_cpu"]["shares"]["top_kernel"];
    let first = top[0]["function"].as_str().unwrap();
    assert!(
        !first.contains("schedule"),
        "the wait, not the scheduler: {top}"
    );
    assert!(
        r["profile"]["off_cpu"]["total"].as_u64().unwrap() > 100_000,
        "{r}"
    );
    let md = std::fs::read_to_string(study.join("report.md")).unwrap();
    assert!(
        md.contains("## Where the time went, off the CPU (blocked): block"),
        "{md}"
    );
}

#[test]
fn without_root_a_profile_keeps_user_frames_and_says_why_not_the_kernels() {
    let Some(mut cmd) = unprivileged() else {
        return;
    };
    let paranoid: i64 = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(4);
    if skip(
        paranoid < 2,
        "kernel.perf_event_paranoid below 2 lets anyone sample the kernel",
    ) {
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let study = dir.path().join("study");
    let o = cmd
        .env("XDG_RUNTIME_DIR", dir.path().join("state"))
        .current_dir(dir.path())
        .args([
            "compare",
            &format!("dir:{}", dir.path().display()),
            "--workload",
            "block:ioengine=null,size=8m,runtime=500ms",
            "--profile=both",
            "--out",
        ])
        .arg(&study)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let recs = records(&study);
    let r = &recs[0];
    let notes: Vec<&str> = r["notes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|n| n.as_str())
        .filter(|n| n.starts_with("profile:"))
        .collect();
    if paranoid >= 3 {
        // Debian's level: nothing for unprivileged users; the run goes on unprofiled.
        assert!(notes.iter().any(|n| n.contains("unprofiled")), "{notes:?}");
        skip(
            true,
            "user frames without root: kernel.perf_event_paranoid is 3 or more (Debian's level)",
        );
        return;
    }
    assert!(
        notes.iter().any(|n| n.contains("user frames only")
            && n.contains("kernel.perf_event_paranoid is 2 and fsbench is not root")),
        "{notes:?}"
    );
    let text = folded(&study, r, "on_cpu");
    assert!(!text.contains("_[k]"), "no kernel frame: {text}");
    assert!(text.contains("fsbench::"), "user frames named: {text}");
    let md = std::fs::read_to_string(study.join("report.md")).unwrap();
    assert!(
        md.contains("## Profiles: what this host did not allow"),
        "{md}"
    );
}
