//! `smoke`: write a file of random data, fsync, drop caches, read it back from the device and
//! verify every byte. It proves a target works end to end; the real workloads measure it.

use crate::metrics::name as metric;
use std::fs::File;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::time::Instant;

use super::{Opened, SpecError, Workload, WorkloadDef};
use crate::frame::{
    CachePolicy, Merged, Phase, PhaseSpec, RunError, Session, TargetCtx, WorkerCtx, WorkerOut,
};
use crate::io::DataGen;
use crate::metrics::catalog::{key, m, Better::*, Unit::*};
use crate::plan::units::parse_size;
use crate::plan::WorkloadSpec;

pub const DEF: WorkloadDef = WorkloadDef {
    name: "smoke",
    summary: "write a file, fsync, drop caches, read it back and verify (default 64 MiB)",
    params: &[
        ("size", "file size, default 64M"),
        ("seed", "data seed, default 1"),
    ],
    takes: super::Takes::Listed,
    metrics: &[
        m("bytes", Bytes, Neither),
        key(metric::BYTES_PER_SEC, BytesPerSec, Higher),
        m(metric::FSYNC_NS, Nanoseconds, Lower),
        m(metric::SPACE_USED_BYTES, Bytes, Lower),
        m(metric::VERIFIED_BYTES, Bytes, Neither),
    ],
    build,
    ranks: true,
};

const CHUNK: usize = 1 << 20;

pub struct Smoke {
    size: u64,
    seed: u64,
}

fn build(spec: &WorkloadSpec, _o: &crate::plan::Overrides) -> Result<Box<dyn Workload>, SpecError> {
    let bad = |what: String| SpecError(format!("workload '{}': {what}", spec.spec));
    let size = match spec.param("size") {
        Some(s) => parse_size(s).map_err(|e| bad(format!("size: {e}")))?,
        None => 64 << 20,
    };
    if size == 0 {
        return Err(bad("size must be more than 0".into()));
    }
    let seed = match spec.param("seed") {
        Some(s) => s
            .parse()
            .map_err(|_| bad(format!("seed '{s}' is not a whole number")))?,
        None => 1,
    };
    Ok(Box::new(Smoke { size, seed }))
}

impl Workload for Smoke {
    fn footprint(&self) -> Option<super::Footprint> {
        Some(super::Footprint::kept(self.size, 1))
    }

    fn open(&self, t: &TargetCtx) -> Result<Opened, RunError> {
        let Some(dir) = t.dir() else {
            return Ok(Opened::Skip {
                test: "smoke".into(),
                reason: "smoke needs a filesystem; raw targets run block workloads".into(),
            });
        };
        let phase = |name: &str, does: &str, cache, writes| PhaseSpec {
            name: name.into(),
            does: does.into(),
            cache,
            writes,
            reads: !writes,
            workers: 1,
            unit: "bytes",
            // The write phase reports the space it used.
            space: writes,
            ..Default::default()
        };
        Ok(Opened::Run(Box::new(SmokeSession {
            // Several ranks: a file each.
            path: dir.join(if t.ranks.rank.many() {
                format!("fsbench-smoke.dat.r{}", t.ranks.rank.index)
            } else {
                "fsbench-smoke.dat".to_string()
            }),
            size: self.size,
            seed: self.seed,
            specs: vec![
                phase(
                    "write",
                    "write the file and fsync it",
                    CachePolicy::Keep,
                    true,
                ),
                phase(
                    "read",
                    "read it back from the device and verify",
                    CachePolicy::Drop,
                    false,
                ),
            ],
        })))
    }
}

struct SmokeSession {
    path: PathBuf,
    size: u64,
    seed: u64,
    specs: Vec<PhaseSpec>,
}

impl SmokeSession {
    fn write(&self, out: &mut WorkerOut) -> std::io::Result<()> {
        let mut buf = vec![0u8; CHUNK];
        let mut f = File::create(&self.path)?;
        let mut gen = DataGen::new(self.seed);
        let mut left = self.size;
        while left > 0 {
            let n = left.min(CHUNK as u64) as usize;
            gen.fill(&mut buf[..n]);
            f.write_all(&buf[..n])?;
            left -= n as u64;
            if let Some(why) = crate::stop::requested() {
                out.stopped = Some(why);
                return Ok(());
            }
        }
        let t = Instant::now();
        f.sync_all()?;
        out.counters
            .insert(metric::FSYNC_NS, t.elapsed().as_nanos() as f64);
        out.counters.insert("bytes", self.size as f64);
        Ok(())
    }

    fn read(&self, out: &mut WorkerOut) -> std::io::Result<()> {
        let mut buf = vec![0u8; CHUNK];
        let mut expect = vec![0u8; CHUNK];
        let mut f = File::open(&self.path)?;
        let _ = crate::sys::fadvise_dontneed(&f);
        let mut gen = DataGen::new(self.seed);
        let mut offset = 0u64;
        while offset < self.size {
            let n = (self.size - offset).min(CHUNK as u64) as usize;
            f.read_exact(&mut buf[..n])?;
            gen.fill(&mut expect[..n]);
            if let Some(at) = buf[..n].iter().zip(&expect[..n]).position(|(a, b)| a != b) {
                out.error = Some(format!(
                    "verification failed: {} differs from what was written at byte {}",
                    self.path.display(),
                    offset + at as u64
                ));
                break;
            }
            offset += n as u64;
        }
        out.counters.insert("bytes", offset as f64);
        Ok(())
    }
}

impl Session for SmokeSession {
    fn phases(&self) -> &[PhaseSpec] {
        &self.specs
    }

    fn work(&self, phase: usize, _ctx: &WorkerCtx) -> WorkerOut {
        let mut out = WorkerOut::default();
        let t0 = Instant::now();
        let r = if phase == 0 {
            self.write(&mut out)
        } else {
            self.read(&mut out)
        };
        if let Err(e) = r {
            out.error = Some(format!("{}: {e}", self.path.display()));
        }
        out.window = t0.elapsed();
        out
    }

    fn finish(&mut self, phase: usize, m: &Merged) -> Result<Vec<Phase>, RunError> {
        let part = &m.parts[0];
        let secs = part.window.as_secs_f64().max(1e-9);
        let bytes = part.counter("bytes");
        let mut p = Phase {
            test: self.specs[phase].name.clone(),
            duration_s: part.window.as_secs_f64(),
            error: part.error.clone(),
            ..Default::default()
        };
        p.metrics.insert("bytes".into(), bytes);
        p.metrics.insert(metric::BYTES_PER_SEC.into(), bytes / secs);
        if phase == 0 {
            p.metrics
                .insert(metric::FSYNC_NS.into(), part.counter(metric::FSYNC_NS));
            if let (Some(b), Some(a)) = (&m.frame.statvfs_before, &m.frame.statvfs_after) {
                let used = |s: &crate::sys::FsStat| (s.blocks - s.blocks_free) * s.block_size;
                p.metrics.insert(
                    metric::SPACE_USED_BYTES.into(),
                    used(a).saturating_sub(used(b)) as f64,
                );
            }
        } else {
            p.metrics.insert(metric::VERIFIED_BYTES.into(), bytes);
        }
        Ok(vec![p])
    }

    fn close(&mut self) -> Result<(), RunError> {
        std::fs::remove_file(&self.path).map_err(RunError::io(self.path.display()))
    }
}
