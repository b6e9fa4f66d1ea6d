//! `smoke`: write a file of random data, fsync, drop caches, read it back from the device and
//! verify every byte. It proves a target works end to end; the real workloads measure it.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{Read, Write};
use std::time::Instant;

use super::data::DataGen;
use super::{Context, Phase, Workload, WorkloadDef};
use crate::metrics::clock::now_rfc3339;
use crate::plan::units::parse_size;
use crate::plan::WorkloadSpec;

pub const DEF: WorkloadDef = WorkloadDef {
    name: "smoke",
    summary: "write a file, fsync, drop caches, read it back and verify (default 64 MiB)",
    params: &[
        ("size", "file size, default 64M"),
        ("seed", "data seed, default 1"),
    ],
    fio_params: false,
    build,
};

const CHUNK: usize = 1 << 20;

pub struct Smoke {
    size: u64,
    seed: u64,
}

fn build(spec: &WorkloadSpec, _o: &crate::plan::Overrides) -> Result<Box<dyn Workload>, String> {
    let size = match spec.param("size") {
        Some(s) => parse_size(s).map_err(|e| format!("workload '{}': size: {e}", spec.spec))?,
        None => 64 << 20,
    };
    if size == 0 {
        return Err(format!(
            "workload '{}': size must be more than 0",
            spec.spec
        ));
    }
    let seed = match spec.param("seed") {
        Some(s) => s
            .parse()
            .map_err(|_| format!("workload '{}': seed '{s}' is not a whole number", spec.spec))?,
        None => 1,
    };
    Ok(Box::new(Smoke { size, seed }))
}

impl Workload for Smoke {
    fn run(&self, ctx: &mut Context) -> Result<(), String> {
        if ctx.raw_device.is_some() {
            return (ctx.emit)(Phase {
                test: "smoke".into(),
                started_at: now_rfc3339(),
                skipped: Some("smoke needs a filesystem; raw targets run block workloads".into()),
                ..Default::default()
            })
            .map_err(|e| format!("cannot save the record: {e}"));
        }
        let path = ctx.dir.join("fsbench-smoke.dat");
        let io = |e: std::io::Error| format!("{}: {e}", path.display());
        let mut buf = vec![0u8; CHUNK];

        // write + fsync
        let used = |d: &std::path::Path| {
            crate::sys::statvfs(d)
                .ok()
                .map(|s| (s.blocks - s.blocks_free) * s.block_size)
        };
        let used_before = used(ctx.dir);
        let started_at = now_rfc3339();
        let t0 = Instant::now();
        let mut f = File::create(&path).map_err(io)?;
        let mut gen = DataGen::new(self.seed);
        let mut left = self.size;
        while left > 0 {
            let n = left.min(CHUNK as u64) as usize;
            gen.fill(&mut buf[..n]);
            f.write_all(&buf[..n]).map_err(io)?;
            left -= n as u64;
            if crate::runner::stop_requested() {
                return Err("interrupted".into());
            }
        }
        let t_fsync = Instant::now();
        f.sync_all().map_err(io)?;
        let fsync_s = t_fsync.elapsed().as_secs_f64();
        let write_s = t0.elapsed().as_secs_f64();
        drop(f);
        let mut metrics = BTreeMap::new();
        metrics.insert("bytes".into(), self.size as f64);
        metrics.insert("bytes_per_sec".into(), self.size as f64 / write_s);
        metrics.insert("fsync_ns".into(), fsync_s * 1e9);
        if let (Some(before), Some(after)) = (used_before, used(ctx.dir)) {
            metrics.insert(
                "space_used_bytes".into(),
                after.saturating_sub(before) as f64,
            );
        }
        (ctx.emit)(Phase {
            test: "write".into(),
            started_at,
            duration_s: write_s,
            error: None,
            metrics,
            ..Default::default()
        })
        .map_err(|e| format!("cannot save the record: {e}"))?;

        // drop caches, read back, verify
        let mut notes = Vec::new();
        if !crate::runner::sync_and_drop_caches() {
            notes.push("page_cache: caches could not be dropped (not root); the read may be served from memory".to_string());
        }
        if ctx.fs == "tmpfs" {
            notes.push(
                "page_cache: tmpfs lives in the page cache; reads measure memory".to_string(),
            );
        }
        let started_at = now_rfc3339();
        let t0 = Instant::now();
        let mut f = File::open(&path).map_err(io)?;
        let _ = crate::sys::fadvise_dontneed(&f);
        let mut gen = DataGen::new(self.seed);
        let mut expect = vec![0u8; CHUNK];
        let mut offset = 0u64;
        let mut error = None;
        while offset < self.size {
            let n = (self.size - offset).min(CHUNK as u64) as usize;
            f.read_exact(&mut buf[..n]).map_err(io)?;
            gen.fill(&mut expect[..n]);
            if buf[..n] != expect[..n] {
                let at = buf[..n]
                    .iter()
                    .zip(&expect[..n])
                    .position(|(a, b)| a != b)
                    .unwrap_or(0);
                error = Some(format!(
                    "verification failed: {} differs from what was written at byte {}",
                    path.display(),
                    offset + at as u64
                ));
                break;
            }
            offset += n as u64;
        }
        let read_s = t0.elapsed().as_secs_f64();
        let mut metrics = BTreeMap::new();
        metrics.insert("bytes".into(), offset as f64);
        metrics.insert("bytes_per_sec".into(), offset as f64 / read_s);
        metrics.insert("verified_bytes".into(), offset as f64);
        (ctx.emit)(Phase {
            test: "read".into(),
            started_at,
            duration_s: read_s,
            error,
            metrics,
            notes,
            ..Default::default()
        })
        .map_err(|e| format!("cannot save the record: {e}"))?;
        drop(f);
        std::fs::remove_file(&path).map_err(io)?;
        Ok(())
    }
}
