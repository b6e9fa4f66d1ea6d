//! iozone through the binary, its calls seen with strace: in throughput mode each worker ends as
//! iozone's children do, with an fsync and a close after its clock stops, and the parent's figure
//! spans them; in the matrix a cell's write test first reads the file of the cell before (untimed)
//! and then removes it.

use crate::common::*;

/// `fsbench compare dir:D --workload W` under strace (these calls, a file per thread), and each
/// thread's log; None when strace is missing (the test says why it skips).
fn traced_threads(d: &std::path::Path, w: &str, calls: &str) -> Option<Vec<String>> {
    let target = format!("dir:{}", d.display());
    let args = ["compare", &target, "--workload", w, "-q", "--out", "s"];
    let o = straced(d, calls, true, &args)?;
    assert!(o.status.success(), "{}", stderr(&o));
    let mut logs = Vec::new();
    for e in std::fs::read_dir(d).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().to_string();
        if name.starts_with("t.") {
            logs.push(std::fs::read_to_string(d.join(&name)).unwrap());
        }
    }
    Some(logs)
}

#[test]
fn throughput_workers_fsync_after_their_clock_as_iozones_children() {
    let dir = workdir();
    let d = dir.path();
    let w = "iozone:threads=2,size=256k,record=64k,tests=write";
    let Some(logs) = traced_threads(d, w, "pwrite64,write,fsync") else {
        return;
    };
    // Per thread (strace -ff: a file each): its 64 KiB writes and fsyncs, in order.
    let by: Vec<Vec<&str>> = logs
        .iter()
        .map(|text| {
            let mut calls = Vec::new();
            for l in text.lines() {
                if l.starts_with("fsync(") {
                    calls.push("fsync");
                } else if l.ends_with("65536) = 65536") {
                    calls.push("write");
                }
            }
            calls
        })
        .collect();
    let workers: Vec<&Vec<&str>> = by.iter().filter(|c| c.contains(&"write")).collect();
    // Two writers, then two rewriters (tests=write is iozone's -i 0: both).
    assert_eq!(workers.len(), 4, "{by:?}");
    for calls in workers {
        assert_eq!(
            calls,
            &["write", "write", "write", "write", "fsync"],
            "{by:?}"
        );
    }
    let text = std::fs::read_to_string(d.join("s/results.jsonl")).unwrap();
    let r: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    let m = &r["metrics"];
    let (children, parent) = (
        m["children_kib_per_sec"].as_f64().unwrap(),
        m["parent_kib_per_sec"].as_f64().unwrap(),
    );
    assert!(parent > 0.0 && parent < children, "{m}");
    assert!(
        r["notes"]
            .to_string()
            .contains("after it, an fsync and the close"),
        "{r}"
    );
}

#[test]
fn a_cells_write_test_reads_the_file_of_the_cell_before_then_removes_it() {
    let dir = workdir();
    let d = dir.path();
    let w = "iozone:min_file=64k,max_file=128k,min_record=64k,max_record=64k,tests=write";
    let Some(logs) = traced_threads(d, w, "openat,read,write,unlink,unlinkat") else {
        return;
    };
    // Per thread, the calls on the cell's file: its opens, its removal and its 64 KiB calls.
    let mut cells = Vec::new();
    for text in &logs {
        let mut calls = Vec::new();
        for l in text.lines() {
            let on_file = l.contains("fsbench-iozone.tmp");
            if on_file && (l.starts_with("unlink(") || l.starts_with("unlinkat(")) {
                calls.push("unlink");
            } else if on_file && l.starts_with("openat(") && !l.contains("= -1") {
                calls.push(if l.contains("O_CREAT") {
                    "create"
                } else if l.contains("O_RDONLY") {
                    "open to read"
                } else {
                    "open to write"
                });
            } else if l.starts_with("read(") && l.ends_with("65536) = 65536") {
                calls.push("read");
            } else if l.starts_with("write(") && l.ends_with("65536) = 65536") {
                calls.push("write");
            }
        }
        if calls.contains(&"create") {
            cells.push(calls);
        }
    }
    cells.sort_by_key(|c| c.len());
    // The first cell has no file before it; the second reads the first's (64 KiB) once, untimed,
    // before its write test removes it and writes its own 128 KiB.
    assert_eq!(
        cells,
        vec![
            vec!["unlink", "create", "write", "open to write", "write"],
            vec![
                "open to read",
                "read",
                "unlink",
                "create",
                "write",
                "write",
                "open to write",
                "write",
                "write"
            ],
        ]
    );
    let text = std::fs::read_to_string(d.join("s/results.jsonl")).unwrap();
    let notes = |test: &str| {
        text.lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .find(|r| r["test"] == test)
            .map(|r| r["notes"].to_string())
            .unwrap_or_default()
    };
    assert!(
        notes("write/128K/64K").contains("the previous cell's file read once and removed"),
        "{text}"
    );
    assert!(!notes("write/64K/64K").contains("previous cell"), "{text}");
}
