//! The block I/O job model (one struct, serde), as fio understands a job; the fio job-file parser
//! and the presets both produce it. Pure data: nothing here does I/O.

use super::PlanError;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::units::parse_size;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Rw {
    Read,
    Write,
    RandRead,
    RandWrite,
    /// Sequential mixed reads and writes (fio `rw` / `readwrite`).
    Rw,
    RandRw,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BlockSize {
    Fixed(u64),
    /// Uniformly chosen between the bounds, in multiples of the lower one (fio `bsrange`).
    Range(u64, u64),
    /// Sizes with percentages that add up to 100 (fio `bssplit`).
    Split(Vec<(u64, u32)>),
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SizeSpec {
    Bytes(u64),
    /// A share of the target's free space.
    Percent(f64),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EngineKind {
    /// pread/pwrite (fio `sync` and `psync`).
    Sync,
    IoUring,
    /// No I/O: measures the framework itself.
    Null,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Job {
    pub name: String,
    pub rw: Rw,
    /// Percentage of reads in mixed jobs.
    pub rwmixread: u32,
    pub bs: BlockSize,
    pub iodepth: u32,
    pub numjobs: u32,
    pub direct: bool,
    pub size: Option<SizeSpec>,
    /// Bytes of I/O to do before the job ends (fio io_size / io_limit); without it, one pass over
    /// `size`. With the random map, a random job below its size visits that many distinct blocks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_size: Option<u64>,
    pub runtime: Option<Duration>,
    pub time_based: bool,
    pub ramp_time: Option<Duration>,
    /// fsync after every N writes (0: never).
    pub fsync: u32,
    /// fdatasync after every N writes (0: never).
    pub fdatasync: u32,
    pub end_fsync: bool,
    pub engine: EngineKind,
    /// Percentage of each buffer that compresses (0: incompressible, the default).
    pub compress_pct: u32,
    /// Regenerate every write buffer in full (fio refill_buffers), the default: fio's own default
    /// (scramble: a new stamp per sector over a reused buffer) is cheaper but compresses when a
    /// filesystem's compression unit spans several small writes. `refill_buffers=0` chooses it.
    #[serde(default = "yes")]
    pub refill_buffers: bool,
    /// Draw random offsets independently (fio norandommap); by default every block is visited
    /// once per pass over the file, as fio does.
    #[serde(default)]
    pub norandommap: bool,
    pub filename: Option<String>,
    pub directory: Option<String>,
    pub stonewall: bool,
    pub group_reporting: bool,
}

fn yes() -> bool {
    true
}

impl Default for Job {
    /// fio's defaults: sequential reads of 4 KiB, queue depth 1, one job, buffered, psync; except
    /// that write buffers are refilled for every write (incompressible, see refill_buffers).
    fn default() -> Job {
        Job {
            name: "job".into(),
            rw: Rw::Read,
            rwmixread: 50,
            bs: BlockSize::Fixed(4096),
            iodepth: 1,
            numjobs: 1,
            direct: false,
            size: None,
            io_size: None,
            runtime: None,
            time_based: false,
            ramp_time: None,
            fsync: 0,
            fdatasync: 0,
            end_fsync: false,
            engine: EngineKind::Sync,
            compress_pct: 0,
            refill_buffers: true,
            norandommap: false,
            filename: None,
            directory: None,
            stonewall: false,
            group_reporting: false,
        }
    }
}

/// The options fsbench accepts, in fio's spelling; anything else is an error naming it.
pub const OPTIONS: &[&str] = &[
    "name",
    "rw",
    "readwrite",
    "rwmixread",
    "rwmixwrite",
    "bs",
    "blocksize",
    "bsrange",
    "bssplit",
    "iodepth",
    "numjobs",
    "direct",
    "buffered",
    "size",
    "io_size",
    "io_limit",
    "runtime",
    "time_based",
    "ramp_time",
    "fsync",
    "fdatasync",
    "end_fsync",
    "ioengine",
    "filename",
    "directory",
    "stonewall",
    "wait_for_previous",
    "group_reporting",
    "buffer_compress_percentage",
    "refill_buffers",
    "scramble_buffers",
    "norandommap",
    "fixedbufs",
    "registerfiles",
];

/// A size in fio's spelling: `4k`, `1M`, `10 G` (space allowed), `4ki`, `1MiB`.
pub fn parse_fio_size(v: &str) -> Result<u64, PlanError> {
    let compact: String = v.chars().filter(|c| !c.is_whitespace()).collect();
    parse_size(&compact)
}

/// A duration in fio's spelling: plain seconds, or with us, ms, s, m, h, d.
pub fn parse_duration(v: &str) -> Result<Duration, PlanError> {
    let t: String = v
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect::<String>()
        .to_ascii_lowercase();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: f64 = num.parse().map_err(|_| {
        format!("'{v}' is not a duration: write seconds, or a number with us, ms, s, m or h")
    })?;
    let secs = match unit {
        "" | "s" | "sec" => n,
        "us" | "usec" => n / 1e6,
        "ms" | "msec" => n / 1e3,
        "m" | "min" => n * 60.0,
        "h" => n * 3600.0,
        "d" => n * 86400.0,
        _ => {
            return Err(
                format!("'{v}' has an unknown time unit '{unit}': use us, ms, s, m or h").into(),
            )
        }
    };
    Ok(Duration::from_secs_f64(secs))
}

fn parse_bool(key: &str, v: Option<&str>) -> Result<bool, PlanError> {
    match v.map(str::trim) {
        None | Some("1") | Some("true") | Some("yes") | Some("on") => Ok(true),
        Some("0") | Some("false") | Some("no") | Some("off") => Ok(false),
        Some(o) => Err(format!("{key}={o}: expected 0 or 1").into()),
    }
}

fn parse_u32(key: &str, v: &str, min: u32, max: u32) -> Result<u32, PlanError> {
    v.trim()
        .parse::<u32>()
        .ok()
        .filter(|n| (min..=max).contains(n))
        .ok_or_else(|| format!("{key}={v}: expected a whole number from {min} to {max}").into())
}

fn need<'a>(key: &str, v: Option<&'a str>) -> Result<&'a str, PlanError> {
    match v {
        Some(v) if !v.trim().is_empty() => Ok(v.trim()),
        _ => Err(format!("option '{key}' needs a value, e.g. {key}={}", example(key)).into()),
    }
}

fn example(key: &str) -> &'static str {
    match key {
        "rw" | "readwrite" => "randread",
        "bs" | "blocksize" => "4k",
        "bsrange" => "4k-64k",
        "bssplit" => "4k/50:64k/50",
        "size" | "io_size" | "io_limit" => "1G",
        "runtime" | "ramp_time" => "30s",
        "ioengine" => "io_uring",
        _ => "1",
    }
}

impl Job {
    /// Applies one `key[=value]` option. Returns a note when the option was translated
    /// (libaio runs on io_uring); an error names what is wrong and what would be right.
    pub fn apply(&mut self, key: &str, value: Option<&str>) -> Result<Option<String>, PlanError> {
        match key {
            "name" => self.name = need(key, value)?.to_string(),
            "rw" | "readwrite" => self.rw = parse_rw(need(key, value)?)?,
            "rwmixread" => self.rwmixread = parse_u32(key, need(key, value)?, 0, 100)?,
            "rwmixwrite" => self.rwmixread = 100 - parse_u32(key, need(key, value)?, 0, 100)?,
            "bs" | "blocksize" => {
                let v = need(key, value)?;
                if v.contains('-') || v.contains('–') {
                    return Err(format!(
                        "{key}={v}: a block size range is written bsrange=8k-64k (ASCII hyphen, no spaces)"
                    ).into());
                }
                self.bs = BlockSize::Fixed(block_size(key, v)?);
            }
            "bsrange" => self.bs = parse_bsrange(need(key, value)?)?,
            "bssplit" => self.bs = parse_bssplit(need(key, value)?)?,
            "iodepth" => self.iodepth = parse_u32(key, need(key, value)?, 1, 65536)?,
            "numjobs" => self.numjobs = parse_u32(key, need(key, value)?, 1, 4096)?,
            "direct" => self.direct = parse_bool(key, value)?,
            "buffered" => self.direct = !parse_bool(key, value)?,
            "size" => self.size = Some(parse_size_spec(need(key, value)?)?),
            "io_size" | "io_limit" => {
                self.io_size =
                    Some(parse_fio_size(need(key, value)?).map_err(|e| format!("{key}: {e}"))?)
            }
            "runtime" => {
                self.runtime =
                    Some(parse_duration(need(key, value)?).map_err(|e| format!("runtime: {e}"))?)
            }
            "ramp_time" => {
                self.ramp_time =
                    Some(parse_duration(need(key, value)?).map_err(|e| format!("ramp_time: {e}"))?)
            }
            "time_based" => self.time_based = parse_bool(key, value)?,
            "fsync" => self.fsync = parse_u32(key, need(key, value)?, 0, u32::MAX)?,
            "fdatasync" => self.fdatasync = parse_u32(key, need(key, value)?, 0, u32::MAX)?,
            "end_fsync" => self.end_fsync = parse_bool(key, value)?,
            "ioengine" => {
                let (engine, note) = parse_engine(need(key, value)?)?;
                self.engine = engine;
                if note.is_some() {
                    return Ok(note);
                }
            }
            "filename" => self.filename = Some(need(key, value)?.to_string()),
            "directory" => self.directory = Some(need(key, value)?.to_string()),
            "stonewall" | "wait_for_previous" => self.stonewall = parse_bool(key, value)?,
            "group_reporting" => self.group_reporting = parse_bool(key, value)?,
            "refill_buffers" => self.refill_buffers = parse_bool(key, value)?,
            "norandommap" => self.norandommap = parse_bool(key, value)?,
            // fio's io_uring options, which fsbench's io_uring always has on where the kernel
            // allows (it registers its buffers and file): fio without them pins every buffer's
            // pages per I/O and writes 1 MiB blocks up to a quarter slower on a CPU-bound path.
            "fixedbufs" | "registerfiles" => {
                if !parse_bool(key, value)? {
                    return Err(format!("{key}=0: fsbench's io_uring always registers its buffers and file where the kernel allows (fio's fixedbufs=1 and registerfiles=1); leave {key} out or set it to 1").into());
                }
            }
            "scramble_buffers" => {
                if !parse_bool(key, value)? {
                    return Err("scramble_buffers=0 would write one repeated buffer; fsbench always scrambles (or refills, with refill_buffers=1)".into());
                }
            }
            "buffer_compress_percentage" => {
                self.compress_pct = parse_u32(key, need(key, value)?, 0, 100)?
            }
            other => {
                return Err(format!(
                    "option '{other}' is not supported by fsbench (supported: {})",
                    OPTIONS.join(", ")
                )
                .into())
            }
        }
        Ok(None)
    }
}

fn parse_rw(v: &str) -> Result<Rw, PlanError> {
    Ok(match v {
        "read" => Rw::Read,
        "write" => Rw::Write,
        "randread" => Rw::RandRead,
        "randwrite" => Rw::RandWrite,
        "rw" | "readwrite" => Rw::Rw,
        "randrw" => Rw::RandRw,
        o => {
            return Err(
                format!("rw={o}: expected read, write, randread, randwrite, rw or randrw").into(),
            )
        }
    })
}

fn parse_bsrange(v: &str) -> Result<BlockSize, PlanError> {
    let key = "bsrange";
    let Some((lo, hi)) = v.split_once('-') else {
        return Err(
            format!("bsrange={v}: write two sizes with a hyphen, e.g. bsrange=4k-64k").into(),
        );
    };
    let (lo, hi) = (block_size(key, lo)?, block_size(key, hi)?);
    if lo > hi {
        return Err(format!("bsrange={v}: the first size must not exceed the second").into());
    }
    Ok(BlockSize::Range(lo, hi))
}

fn parse_bssplit(v: &str) -> Result<BlockSize, PlanError> {
    let key = "bssplit";
    if v.contains(',') {
        return Err(format!("bssplit={v}: separate read and write splits are not supported; give one list, e.g. 4k/50:64k/50").into());
    }
    let mut parts = Vec::new();
    for p in v.split(':') {
        let (size, pct) = p
            .split_once('/')
            .ok_or_else(|| format!("bssplit={v}: each entry is SIZE/PERCENT, e.g. 4k/50"))?;
        parts.push((block_size(key, size)?, parse_u32(key, pct, 0, 100)?));
    }
    let total: u32 = parts.iter().map(|p| p.1).sum();
    if total != 100 {
        return Err(format!("bssplit={v}: the percentages add up to {total}, not 100").into());
    }
    Ok(BlockSize::Split(parts))
}

fn parse_size_spec(v: &str) -> Result<SizeSpec, PlanError> {
    Ok(match v.strip_suffix('%') {
        Some(p) => SizeSpec::Percent(
            p.trim()
                .parse::<f64>()
                .ok()
                .filter(|x| *x > 0.0 && *x <= 100.0)
                .ok_or_else(|| format!("size={v}: a percentage is from 1% to 100%"))?,
        ),
        None => SizeSpec::Bytes(parse_fio_size(v).map_err(|e| format!("size: {e}"))?),
    })
}

/// The engine, and a note when it was translated (libaio runs on io_uring).
fn parse_engine(v: &str) -> Result<(EngineKind, Option<String>), PlanError> {
    Ok(match v {
        "sync" | "psync" => (EngineKind::Sync, None),
        "io_uring" => (EngineKind::IoUring, None),
        "null" => (EngineKind::Null, None),
        "libaio" => (
            EngineKind::IoUring,
            Some("ioengine=libaio runs on io_uring (same queue depth, direct I/O as given)".into()),
        ),
        o => {
            return Err(format!(
            "ioengine={o}: fsbench has sync, psync, io_uring, libaio (run on io_uring) and null"
        )
            .into())
        }
    })
}

fn block_size(key: &str, v: &str) -> Result<u64, PlanError> {
    let n = parse_fio_size(v).map_err(|e| format!("{key}: {e}"))?;
    if n == 0 || n % 512 != 0 {
        return Err(format!("{key}={v}: a block size is a non-zero multiple of 512 bytes").into());
    }
    Ok(n)
}
