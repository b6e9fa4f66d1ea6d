//! `iozone`: the iozone shoot-out's matrix (ext4 and btrfs as ratios to XFS), re-implemented from iozone's documented behaviour (not its code).
//! The automatic mode (`iozone -a`): file sizes 64 KiB to 512 MiB doubling, record sizes 4 KiB
//! to 16 MiB doubling (never larger than the file; from 64 KiB for files of 32 MiB and more
//! unless all_records=1), and per cell: sync, then the tests in iozone's order (write, rewrite,
//! read, reread, random read, random write, backward read, record rewrite, stride read, fwrite,
//! frewrite, fread, freread), then the file is removed. One record per test and cell, named
//! `TEST/FILE/RECORD` (e.g. `random_read/64M/4K`), with iozone's KiB/s, ops/s and the latency
//! histogram of the calls. `threads=N` is iozone's throughput mode (-t N): N workers on their own
//! files, started together, with "children see" and "parent sees" figures.
//!
//! Keys follow iozone's flags: min_file/max_file (-n/-g), min_record/max_record (-y/-q),
//! size/record (-s/-r), all_records (-z), tests (-i), fsync (-e), close (-c), direct (-I),
//! purge (caches dropped before each test, for -U), stride (-j), threads (-t).

mod battery;
mod options;
mod session;

use super::{Opened, Workload, WorkloadDef};
use crate::frame::{RunError, TargetCtx};
use crate::metrics::catalog::{m, Better::*, MetricDef, Unit::*};
use crate::metrics::name as metric;
use crate::plan::units::format_bytes;
use crate::plan::TargetSpec;

pub use battery::{Test, TESTS};
pub use options::{Cell, Iozone};
pub use session::size_label;

pub const NAME: &str = "iozone";

pub const DEF: WorkloadDef = WorkloadDef {
    name: NAME,
    summary: "iozone's matrix (the iozone shoot-out): 13 tests over file size x record size, as iozone -a; iozone:max_file=64M,tests=write+read+random",
    params: &[
        ("min_file", "smallest file (iozone -n), default 64K"),
        ("max_file", "largest file (-g), default 512M"),
        ("min_record", "smallest record (-y), default 4K"),
        ("max_record", "largest record (-q), default 16M"),
        ("size", "one file size (-s): min_file = max_file"),
        ("record", "one record size (-r): min_record = max_record"),
        ("all_records", "1: keep records under 64K for files of 32M and more (-z)"),
        ("tests", "write+read+random+backward+record_rewrite+stride+fwrite+fread or -i numbers 0-7, default all (write always runs)"),
        ("fsync", "1: fsync inside the timed part (-e)"),
        ("close", "1: close inside the timed part (-c)"),
        ("direct", "1: O_DIRECT for all but the stream tests (-I)"),
        ("purge", "1: sync and drop caches before every test (for -U's remount)"),
        ("stride", "records between stride reads (-j), default 17"),
        ("threads", "N workers on their own files (-t N, throughput mode); with size= and record= (default 64M, 64K)"),
        ("seed", "seed of the random tests' one shuffle; recorded"),
    ],
    takes: super::Takes::Listed,
    metrics: METRICS,
    build: options::build,
    ranks: false,
};

/// What iozone records carry besides the frame's figures. None is a key metric of the generic
/// tables: the iozone matrices show them (report/views/iozone).
pub static METRICS: &[MetricDef] = &[
    m(metric::KIB_PER_SEC, KibPerSec, Higher),
    m(metric::CHILDREN_KIB_PER_SEC, KibPerSec, Higher),
    m(metric::PARENT_KIB_PER_SEC, KibPerSec, Higher),
    m(metric::MIN_KIB_PER_SEC, KibPerSec, Higher),
    m(metric::MAX_KIB_PER_SEC, KibPerSec, Higher),
    m(metric::AVG_KIB_PER_SEC, KibPerSec, Higher),
    m(metric::OPS_PER_SEC, OpsPerSec, Higher),
    m(metric::BYTES_PER_SEC, BytesPerSec, Higher),
    m("bytes", Bytes, Neither),
    m("records", Count, Neither),
    m("lat_*_ns", Nanoseconds, Lower),
];

/// Whether a target takes O_DIRECT (a memory-backed filesystem: refused here, as the issue of
/// record is about device I/O and it has none).
fn direct_refused(fs: &str, caps: crate::provision::Caps) -> Option<String> {
    caps.memory_backed.then(|| {
        format!("direct=1 on {fs}: {fs} has no device to bypass the cache to; drop direct=1 or use a disk-backed target")
    })
}

impl Workload for Iozone {
    /// The largest file per worker, rewritten in place by the rewrite and random write tests.
    fn footprint(&self) -> Option<super::Footprint> {
        Some(super::Footprint {
            kept: self.peak_bytes(),
            rewritten: self.peak_bytes(),
            inodes: self.threads.max(1) as u64,
            ..Default::default()
        })
    }

    fn check_target(&self, t: &TargetSpec, size: Option<u64>) -> Result<(), super::SpecError> {
        if self.direct {
            if let Some(why) = direct_refused(&t.fs, crate::provision::caps(&t.fs)) {
                return Err(super::SpecError(format!("{}: {why}", t.label)));
            }
        }
        match size {
            Some(s) if self.peak_bytes() > s => Err(super::SpecError(format!(
                "{}: the iozone matrix needs {} at once but the target is {}: raise --size (or the target's size=) or lower max_file",
                t.label,
                format_bytes(self.peak_bytes()),
                format_bytes(s)
            ))),
            _ => Ok(()),
        }
    }

    fn open(&self, t: &TargetCtx) -> Result<Opened, RunError> {
        let Some(dir) = t.dir() else {
            return Ok(Opened::Skip {
                test: "write".into(),
                reason: "iozone needs a filesystem; raw targets run block workloads".into(),
            });
        };
        if self.direct {
            if let Some(why) = direct_refused(&t.fs, t.caps) {
                return Err(RunError::Invalid(why));
            }
            if let Some(lbs) = t
                .device
                .as_deref()
                .and_then(crate::sys::host::logical_block_size)
            {
                if self.min_record % lbs != 0 {
                    return Err(RunError::Invalid(format!(
                        "direct=1 needs records that are multiples of the device's logical block size ({lbs} bytes); min_record is {}",
                        format_bytes(self.min_record)
                    )));
                }
            }
            session::probe_direct(dir, &t.fs)?;
        }
        if let Ok(s) = crate::sys::statvfs(dir) {
            let avail = s.blocks_avail * s.block_size;
            if self.peak_bytes() > avail {
                return Err(RunError::Invalid(format!(
                    "the iozone matrix needs {} on {} but it has {} free: lower max_file or give the target more room (--size)",
                    format_bytes(self.peak_bytes()),
                    dir.display(),
                    format_bytes(avail)
                )));
            }
        }
        Ok(Opened::Run(Box::new(session::IozoneSession::new(
            self.clone(),
            dir.to_path_buf(),
            t.caps.memory_backed,
            t.quiet,
        ))))
    }
}
