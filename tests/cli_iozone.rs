//! iozone's throughput mode through the binary: each worker ends as iozone's children do, with an
//! fsync and a close after its clock stops, and the parent's figure spans them (seen with strace).

mod common;
use common::*;

#[test]
fn throughput_workers_fsync_after_their_clock_as_iozones_children() {
    let dir = workdir();
    let d = dir.path();
    let target = format!("dir:{}", d.display());
    let w = "iozone:threads=2,size=256k,record=64k,tests=write";
    let args = ["compare", &target, "--workload", w, "-q", "--out", "s"];
    let Some(o) = straced(d, "pwrite64,write,fsync", true, &args) else {
        return;
    };
    assert!(o.status.success(), "{}", stderr(&o));
    // Per thread (strace -ff: a file each): its 64 KiB writes and fsyncs, in order.
    let mut by: std::collections::BTreeMap<String, Vec<&str>> = Default::default();
    for e in std::fs::read_dir(d).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().to_string();
        let Some(tid) = name.strip_prefix("t.") else {
            continue;
        };
        let text = std::fs::read_to_string(d.join(&name)).unwrap();
        let calls = by.entry(tid.to_string()).or_default();
        for l in text.lines() {
            if l.starts_with("fsync(") {
                calls.push("fsync");
            } else if l.ends_with("65536) = 65536") {
                calls.push("write");
            }
        }
    }
    let workers: Vec<&Vec<&str>> = by.values().filter(|c| c.contains(&"write")).collect();
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
