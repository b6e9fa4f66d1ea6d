//! Privileged tier, the iozone workload on a real filesystem: every cell of a small matrix on
//! ext4, its -R text, O_DIRECT, and the throughput mode. Needs root; tests run one at a time.

use crate::common::*;

const TESTS: [&str; 13] = [
    "write",
    "rewrite",
    "read",
    "reread",
    "random_read",
    "random_write",
    "backward_read",
    "record_rewrite",
    "stride_read",
    "fwrite",
    "frewrite",
    "fread",
    "freread",
];

/// `compare ext4 --size 256M` with the workloads, in a study under `wd`.
fn on_ext4(wd: &std::path::Path, workloads: &[&str]) -> (std::process::Output, std::path::PathBuf) {
    run_study(wd, "study", &["ext4"], workloads, "256M")
}

#[test]
fn iozone_on_ext4_gives_every_cell_and_its_r_text() {
    if needs("ext4", "mkfs.ext4") {
        return;
    }
    let _g = serial();
    let wd = workdir();
    let (o, out) = on_ext4(wd.path(), &["iozone:max_file=4M"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let recs = records_of(&out);
    // Files 64K..4M (7 sizes), records 4K up to the file: 5+6+...+11 = 56 cells, 13 tests each.
    assert_eq!(recs.len(), 56 * 13, "{}", stderr(&o));
    for r in &recs {
        assert_eq!(r["outcome"], "ok", "{r}");
        let m = &r["metrics"];
        assert!(m["kib_per_sec"].as_f64().unwrap() > 0.0, "{r}");
        let c = &r["config"];
        let (file, record) = (
            c["file_size"].as_u64().unwrap(),
            c["record_size"].as_u64().unwrap(),
        );
        assert_eq!(m["records"].as_f64().unwrap() as u64, file / record, "{r}");
        assert_eq!(m["bytes"].as_f64().unwrap() as u64, file, "{r}");
    }
    for t in TESTS {
        let name = format!("{t}/4M/4K");
        assert!(recs.iter().any(|r| r["test"] == name.as_str()), "{name}");
    }
    // A cell's tests run back to back in one phase, as iozone runs them: one record each, in
    // iozone's order, each timed on its own and saying so.
    let cell: Vec<_> = recs
        .iter()
        .filter(|r| r["test"].as_str().unwrap().ends_with("/4M/4K"))
        .collect();
    let order: Vec<&str> = cell
        .iter()
        .map(|r| r["test"].as_str().unwrap().split('/').next().unwrap())
        .collect();
    assert_eq!(order, TESTS);
    for w in cell.windows(2) {
        assert!(w[0]["started_at"].as_str() <= w[1]["started_at"].as_str());
        assert_ne!(
            w[0]["duration_s"], w[1]["duration_s"],
            "each test's own clock"
        );
    }
    assert!(cell
        .iter()
        .all(|r| r["notes"].to_string().contains("ran back to back")));
    // Smaller than RAM and buffered: the records say they measured the page cache.
    let read = recs.iter().find(|r| r["test"] == "read/4M/64K").unwrap();
    assert!(read["notes"].to_string().contains("page_cache"), "{read}");
    // The terminal has the summary over each test's cells (the matrices are in report.md,
    // report.html and --full).
    assert!(
        stdout(&o).contains("iozone over each test's cells")
            && stdout(&o).contains(" MiB/s at ")
            && !stdout(&o).contains("iozone write on ext4"),
        "{}",
        stdout(&o)
    );
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("write on ext4, MiB/s"), "a heat map per test");

    let rep = run(&["report", out.to_str().unwrap(), "--format", "iozone"]);
    assert!(rep.status.success(), "{}", stderr(&rep));
    let text = stdout(&rep);
    for title in [
        "\"Writer report\"",
        "\"Random write report\"",
        "\"Re-Fread report\"",
    ] {
        assert!(text.contains(title), "{title}\n{text}");
    }
    let header = text
        .lines()
        .nth(text.lines().position(|l| l == "\"Writer report\"").unwrap() + 1);
    assert_eq!(
        header.unwrap().split_whitespace().collect::<Vec<_>>(),
        [
            "\"4\"", "\"8\"", "\"16\"", "\"32\"", "\"64\"", "\"128\"", "\"256\"", "\"512\"",
            "\"1024\"", "\"2048\"", "\"4096\""
        ]
    );
    let row = text.lines().find(|l| l.starts_with("\"4096\"")).unwrap();
    assert_eq!(
        row.split_whitespace().count(),
        12,
        "every cell of the 4M row: {row}"
    );
    assert!(!row.split_whitespace().skip(1).any(|v| v == "0"), "{row}");
    no_leftovers(wd.path());
}

#[test]
fn iozone_direct_and_throughput_mode_on_ext4() {
    if needs("ext4", "mkfs.ext4") {
        return;
    }
    let _g = serial();
    let wd = workdir();
    let (o, out) = on_ext4(
        wd.path(),
        &[
            "iozone:size=8M,record=64K,direct=1,tests=read+fread,purge=1",
            "iozone:threads=2,size=8M,record=64K,tests=read",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let recs = records_of(&out);
    let direct: Vec<_> = recs
        .iter()
        .filter(|r| r["config"]["threads"] == 0)
        .collect();
    assert_eq!(
        direct.len(),
        6,
        "write, rewrite, read, reread, fread, freread"
    );
    let read = direct.iter().find(|r| r["test"] == "read/8M/64K").unwrap();
    assert_eq!(read["config"]["direct"], true);
    assert!(!read["notes"].to_string().contains("page_cache"), "{read}");
    // purge=1 drops the caches before every test: each test is a phase of its own.
    assert!(
        !read["notes"].to_string().contains("back to back"),
        "{read}"
    );
    // O_DIRECT reads come from the device.
    assert!(
        read["metrics"]["device_read_bytes"].as_f64().unwrap() >= (8u64 << 20) as f64,
        "{read}"
    );
    let fread = direct.iter().find(|r| r["test"] == "fread/8M/64K").unwrap();
    assert_eq!(
        fread["config"]["direct"], false,
        "streams are never O_DIRECT"
    );

    let tp: Vec<_> = recs
        .iter()
        .filter(|r| r["config"]["threads"] == 2)
        .collect();
    assert_eq!(tp.len(), 4);
    for r in &tp {
        let m = &r["metrics"];
        let (children, parent) = (
            m["children_kib_per_sec"].as_f64().unwrap(),
            m["parent_kib_per_sec"].as_f64().unwrap(),
        );
        assert!(children > 0.0 && parent > 0.0, "{r}");
        assert!(m["min_kib_per_sec"].as_f64().unwrap() <= m["max_kib_per_sec"].as_f64().unwrap());
        assert_eq!(m["bytes"].as_f64().unwrap() as u64, 2 * (8u64 << 20), "{r}");
    }
    let rep = run(&["report", out.to_str().unwrap(), "--format", "iozone"]);
    assert!(
        stdout(&rep).contains("Children see throughput for  2 initial writers"),
        "{}",
        stdout(&rep)
    );
    no_leftovers(wd.path());
}
