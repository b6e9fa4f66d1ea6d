//! Block workload tests through the frame, on a scratch directory (no root needed).
use super::*;
use crate::frame::{Local, Phase, Place};
use crate::metrics::hist;
use std::collections::HashSet;

fn target(dir: &Path) -> TargetCtx {
    TargetCtx {
        place: Place::Mount(dir.to_path_buf()),
        fs: "test".into(),
        device: None,
        stat_dir: Some(dir.to_path_buf()),
        caps: Default::default(),
        target: None,
        quiet: true,
        ranks: Default::default(),
        interval: std::time::Duration::from_secs(1),
        profile: None,
    }
}

fn run_in(dir: &Path, jobfile: &str) -> Vec<Phase> {
    let path = dir.join("t.fio");
    std::fs::write(&path, jobfile).unwrap();
    let b = from_jobfile(&path, &Overrides::default()).unwrap();
    let t = target(dir);
    let Ok(Opened::Run(mut s)) = b.open(&t) else {
        panic!("does not open")
    };
    let mut phases = Vec::new();
    crate::frame::run_session(s.as_mut(), &t, "test", &Local, &mut |p| {
        phases.push(p);
        Ok(())
    })
    .unwrap();
    phases
}

#[test]
fn written_data_is_incompressible_and_never_repeats() {
    let dir = tempfile::tempdir().unwrap();
    let phases = run_in(
        dir.path(),
        "[w]\nrw=write\nbs=64k\nsize=4m\nfilename=data\nioengine=sync\n",
    );
    assert_eq!(phases.len(), 1);
    assert!(phases[0].error.is_none(), "{:?}", phases[0].error);
    assert_eq!(phases[0].metrics["write_bytes"], (4 << 20) as f64);
    let data = std::fs::read(dir.path().join("data")).unwrap();
    assert_eq!(data.len(), 4 << 20);
    // gzip -9 gains less than 1%.
    let out = std::process::Command::new("gzip")
        .args(["-9", "-c"])
        .arg(dir.path().join("data"))
        .output()
        .unwrap();
    let ratio = out.stdout.len() as f64 / data.len() as f64;
    assert!(ratio > 0.99, "compressed to {ratio}");
    // No 4 KiB block appears twice.
    let blocks: HashSet<&[u8]> = data.chunks(4096).collect();
    assert_eq!(blocks.len(), data.len() / 4096);
}

/// Large writes go through the ring of buffers (io::data): three turns of it on disk, and still
/// no 4 KiB block twice and nothing gzip, zstd -1 or lz4 can shrink (zstd and lz4 where their
/// command-line tools are installed; gzip always).
#[test]
fn large_writes_through_the_ring_stay_unique_and_incompressible() {
    let dir = tempfile::tempdir().unwrap();
    let size = 3 * crate::io::data::RING_BYTES;
    let phases = run_in(
        dir.path(),
        &format!("[w]\nrw=write\nbs=1m\niodepth=4\nsize={size}\nfilename=data\nioengine=sync\n"),
    );
    assert!(phases[0].error.is_none(), "{:?}", phases[0].error);
    let data = std::fs::read(dir.path().join("data")).unwrap();
    assert_eq!(data.len() as u64, size);
    let blocks: HashSet<&[u8]> = data.chunks(4096).collect();
    assert_eq!(blocks.len(), data.len() / 4096);
    for (tool, args) in [
        ("gzip", &["-1", "-c"][..]),
        ("zstd", &["-1", "-c"]),
        ("lz4", &["-1", "-c"]),
    ] {
        let Ok(out) = std::process::Command::new(tool)
            .args(args)
            .arg(dir.path().join("data"))
            .output()
        else {
            assert_ne!(tool, "gzip", "gzip is missing");
            eprintln!("SKIPPED: {tool} is not installed (its ratio is not checked)");
            continue;
        };
        assert!(out.status.success(), "{tool} failed");
        let ratio = data.len() as f64 / out.stdout.len() as f64;
        assert!(ratio < 1.01, "{tool} compressed it by {ratio}");
    }
}

/// Compressible data (buffer_compress_percentage) is regenerated for every write, not taken
/// through the ring: its zeros would cover the ring's stamps, and blocks would repeat.
#[test]
fn compressible_large_writes_stay_unique() {
    let dir = tempfile::tempdir().unwrap();
    let size = 2 * crate::io::data::RING_BYTES;
    let phases = run_in(
        dir.path(),
        &format!("[w]\nrw=write\nbs=1m\nsize={size}\nfilename=data\nioengine=sync\nbuffer_compress_percentage=50\n"),
    );
    assert!(phases[0].error.is_none(), "{:?}", phases[0].error);
    let data = std::fs::read(dir.path().join("data")).unwrap();
    let blocks: HashSet<&[u8]> = data.chunks(4096).collect();
    assert_eq!(blocks.len(), data.len() / 4096);
}

#[test]
fn jobs_record_every_metric_and_the_histogram_decodes() {
    let dir = tempfile::tempdir().unwrap();
    let phases = run_in(
        dir.path(),
        "[global]\nsize=2m\nfilename=f\n[r]\nrw=randread\nbs=4k\nstonewall\n[m]\nrw=randrw\nrwmixread=50\nbs=4k\nnumjobs=2\nstonewall\n",
    );
    assert_eq!(phases.len(), 2);
    let r = &phases[0];
    assert_eq!(r.test, "r");
    for p in &phases {
        for k in p.metrics.keys() {
            assert!(
                crate::workload::catalog::find(k).is_some(),
                "{k} is not in the metrics catalog"
            );
        }
    }
    let m = &phases[1];
    assert!(
        m.metrics["first_done_ops"] <= m.metrics["ios"],
        "first done <= last done"
    );
    assert!(m.metrics["first_done_s"] <= m.metrics["last_done_s"]);
    for k in RECORD_METRICS {
        assert!(r.metrics.contains_key(*k), "missing {k}");
    }
    assert_eq!(r.metrics["read_bytes"], (2 << 20) as f64);
    let h = hist::decode(&r.histograms["lat_ns"]).unwrap();
    assert_eq!(h.len() as f64, r.metrics["ios"]);
    let m = &phases[1];
    assert_eq!(m.metrics["bytes"], (4 << 20) as f64, "2 workers x 2 MiB");
    assert!(
        m.metrics.contains_key("read_lat_p99_ns") && m.metrics.contains_key("write_lat_p99_ns")
    );
    assert!(m.notes.iter().any(|n| n.contains("2 workers")));
    assert!(
        r.notes.iter().any(|n| n.starts_with("page_cache")),
        "{:?}",
        r.notes
    );
}

#[test]
fn bad_jobs_are_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.fio");
    std::fs::write(&path, "[a]\nrw=read\nfilename=/etc/passwd\nsize=1m\n").unwrap();
    let b = from_jobfile(&path, &Overrides::default()).unwrap();
    let t = target(dir.path());
    let e = b.open(&t).err().unwrap().to_string();
    assert!(e.contains("absolute"), "{e}");
    std::fs::write(&path, "[a]\nrw=read\nfilename=nofile\n").unwrap();
    let b = from_jobfile(&path, &Overrides::default()).unwrap();
    let e = b.open(&t).err().unwrap().to_string();
    assert!(e.contains("no size"), "{e}");
    std::fs::write(&path, "[a]\nrw=read\nsize=1p\n").unwrap();
    let e = from_jobfile(&path, &Overrides::default()).err().unwrap().0;
    assert!(e.contains("t.fio:3:"), "{e}");
}
