//! `bonnie`: the battery of the ext4/XFS/btrfs SSD study, re-implemented from bonnie++ 2.00a's documented behaviour (not
//! its code): sequential output per character, per block and rewrite; sequential input per
//! character and per block; random seeks by several seekers; then sequential and random
//! create / read (stat) / delete of many files. One record per test, named as bonnie++'s CSV
//! names them, with bonnie++'s figures (KiB/s, seeks/s, files/s, %CP, the maximum latency) and
//! the whole latency histogram. `fsbench report --format bonnie-csv` writes bonnie++'s CSV.
//!
//! Keys follow bonnie++'s flags one to one: size (-s), ram (-r), chunk (-s SIZE:CHUNK),
//! perchar=0 (-f), files=N[:max[:min[:dirs]]] (-n), fsync=1 (-b), direct=1 (-D), seeks, seekers;
//! repeats are `--repeat` (-x).

mod files;
mod io;
mod options;
mod session;

use super::{Opened, Workload, WorkloadDef};
use crate::frame::{RunError, TargetCtx};
use crate::metrics::catalog::{key, m, Better::*, MetricDef, Unit::*};
use crate::metrics::name as metric;

pub use options::Bonnie;

pub const DEF: WorkloadDef = WorkloadDef {
    name: "bonnie",
    summary: "bonnie++'s battery (the ext4/XFS/btrfs SSD study): per-char, block and rewrite I/O, random seeks, file create/stat/delete; bonnie:size=1G,ram=512M",
    params: &[
        ("size", "IO file size (bonnie++ -s); default twice ram, at least 300M, rounded up to a whole GiB"),
        ("ram", "RAM to outsize (-r; default this machine's); size must be at least twice it; ram=0 lifts the rule"),
        ("chunk", "block size of the IO tests (-s SIZE:CHUNK), default 8K"),
        ("perchar", "0 skips the per-character tests (-f), default 1"),
        ("files", "N[:max[:min[:dirs]]] (-n): N x 1024 files of min..max bytes in dirs folders; default 16; 0 skips the file tests"),
        ("fsync", "1: fsync every file written in the file tests (-b), default 0"),
        ("direct", "1: O_DIRECT for the block, rewrite and seek tests (-D), default 0"),
        ("seeks", "random seeks in all, default 8192"),
        ("seekers", "seeker threads, default 5"),
        ("seed", "random seed (bonnie++ -z), default from the clock; recorded"),
    ],
    takes: super::Takes::Listed,
    metrics: METRICS,
    build: options::build,
    ranks: false,
};

/// What bonnie records carry besides the frame's figures.
pub static METRICS: &[MetricDef] = &[
    key(metric::BYTES_PER_SEC, BytesPerSec, Higher),
    key(metric::SEEKS_PER_SEC, OpsPerSec, Higher),
    m(metric::KIB_PER_SEC, KibPerSec, Higher),
    m(metric::FILES_PER_SEC, OpsPerSec, Higher),
    m("bytes", Bytes, Neither),
    m("files", Count, Neither),
    m("seeks", Count, Neither),
    m(metric::SEEK_REWRITES, Count, Neither),
    m(metric::SEEK_CLOSE_S, Seconds, Lower),
    m(metric::CPU_PCT, Percent, Lower),
    m(metric::TOO_FAST, Ratio, Neither),
    m("lat_*_ns", Nanoseconds, Lower),
];

/// The tests in bonnie++'s order, with their CSV names.
pub const TESTS: &[&str] = &[
    "putc",
    "put_block",
    "rewrite",
    "getc",
    "get_block",
    "seeks",
    "seq_create",
    "seq_stat",
    "seq_del",
    "ran_create",
    "ran_stat",
    "ran_del",
];

impl Workload for Bonnie {
    /// The IO file (rewritten in place by the rewrite test) and the file tests' data.
    fn footprint(&self) -> Option<super::Footprint> {
        Some(super::Footprint {
            kept: self.size + self.files_bytes(),
            rewritten: self.size,
            // The IO file, the file tests' files and their folders.
            inodes: 1 + self.files + self.dirs.max(1),
            ..Default::default()
        })
    }

    fn tests(&self) -> Option<Vec<String>> {
        Some(TESTS.iter().map(|t| t.to_string()).collect())
    }

    fn open(&self, t: &TargetCtx) -> Result<Opened, RunError> {
        let Some(dir) = t.dir() else {
            return Ok(Opened::Skip {
                test: "putc".into(),
                reason: "bonnie needs a filesystem; raw targets run block workloads".into(),
            });
        };
        if self.size > 0 {
            if let Ok(s) = crate::sys::statvfs(dir) {
                let avail = s.blocks_avail * s.block_size;
                // The IO file, and room for the file tests' data besides.
                let need = self.size + self.files_bytes();
                if need > avail {
                    return Err(RunError::Invalid(format!(
                        "bonnie needs {} on {} but it has {} free: lower size= or give the target more room (--size)",
                        crate::plan::units::format_bytes(need),
                        dir.display(),
                        crate::plan::units::format_bytes(avail)
                    )));
                }
            }
        }
        Ok(Opened::Run(Box::new(session::BonnieSession::new(
            self.clone(),
            dir.to_path_buf(),
            t.fs.clone(),
            t.caps.memory_backed,
        ))))
    }
}
