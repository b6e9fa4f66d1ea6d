//! The values of fio's options: sizes, times, per-direction lists, block sizes, distributions,
//! verify kinds and patterns, engines. Each parser's error names the option and the fix.

use std::time::Duration;

use crate::plan::job::{BlockSize, Distribution, EngineKind, Rw, SizeSpec, SteadyKind};
use crate::plan::units::parse_size;
use crate::plan::PlanError;

type R<T> = Result<T, PlanError>;

/// A size in fio's spelling: `4k`, `1M`, `10 G` (space allowed), `4ki`, `1MiB`.
pub fn parse_fio_size(v: &str) -> R<u64> {
    let compact: String = v.chars().filter(|c| !c.is_whitespace()).collect();
    parse_size(&compact)
}

/// A duration in fio's spelling: plain seconds, or with us, ms, s, m, h, d.
pub fn parse_duration(v: &str) -> R<Duration> {
    parse_duration_unit(v, 1.0)
}

/// A duration whose bare numbers are in `unit` seconds (fio: microseconds for thinktime).
pub(super) fn parse_duration_unit(v: &str, unit_s: f64) -> R<Duration> {
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
        "" => n * unit_s,
        "s" | "sec" => n,
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
    checked_secs(v, secs)
}

/// The longest duration fsbench takes (a year): longer ones are typing mistakes, and would
/// overflow the clock arithmetic of a run.
pub const MAX_DURATION_S: f64 = 366.0 * 86400.0;

/// `secs` as a Duration, refused (naming `v`) when it is negative, not a number, or longer than
/// fsbench runs.
pub fn checked_secs(v: &str, secs: f64) -> R<Duration> {
    if !secs.is_finite() || secs < 0.0 {
        return Err(
            format!("'{v}' is not a duration: write a positive time such as 30s or 5m").into(),
        );
    }
    if secs > MAX_DURATION_S {
        return Err(format!(
            "'{v}' is longer than fsbench runs anything (at most 366d): give a shorter time"
        )
        .into());
    }
    Ok(Duration::from_secs_f64(secs))
}

pub(super) fn parse_bool(key: &str, v: Option<&str>) -> R<bool> {
    match v.map(str::trim) {
        None | Some("1") | Some("true") | Some("yes") | Some("on") => Ok(true),
        Some("0") | Some("false") | Some("no") | Some("off") => Ok(false),
        Some(o) => Err(format!("{key}={o}: expected 0 or 1").into()),
    }
}

pub(super) fn parse_u32(key: &str, v: &str, min: u32, max: u32) -> R<u32> {
    v.trim()
        .parse::<u32>()
        .ok()
        .filter(|n| (min..=max).contains(n))
        .ok_or_else(|| format!("{key}={v}: expected a whole number from {min} to {max}").into())
}

pub(super) fn parse_u64(key: &str, v: &str) -> R<u64> {
    parse_fio_size(v).map_err(|_| format!("{key}={v}: expected a whole number").into())
}

/// fio's per-direction values: `X` for reads and writes, `X,Y` reads X and writes Y, `,Y` writes
/// only, `X,` reads only; a third (trims) is accepted and unused (fsbench issues no trims).
pub(super) fn per_dir<T: Clone>(v: &str, f: impl Fn(&str) -> R<T>) -> R<[Option<T>; 2]> {
    let parts: Vec<&str> = v.split(',').map(str::trim).collect();
    if parts.len() > 3 {
        return Err(format!("'{v}': at most three values (reads, writes, trims)").into());
    }
    let one = |s: &str| -> R<Option<T>> {
        if s.is_empty() {
            Ok(None)
        } else {
            f(s).map(Some)
        }
    };
    let read = one(parts[0])?;
    let write = if parts.len() == 1 {
        read.clone()
    } else {
        one(parts[1])?
    };
    if parts.len() == 3 {
        one(parts[2])?;
    }
    Ok([read, write])
}

/// fio's steadystate value, `KIND:LIMIT[%]`: the kind, the limit, and whether it is a
/// percentage of the mean. A bandwidth limit takes a size (`bw:10m`, bytes per second), a
/// latency limit a time (`lat:500us`; a bare number is ns, as fio compares it).
pub fn parse_steady(v: &str) -> R<(SteadyKind, f64, bool)> {
    let fix =
        "write steadystate=iops|iops_slope|bw|bw_slope|lat|lat_slope:LIMIT[%], e.g. steadystate=iops_slope:0.3%";
    let Some((kind, limit)) = v.split_once(':') else {
        return Err(format!("steadystate={v}: no limit after the criterion: {fix}").into());
    };
    let kind = SteadyKind::ALL
        .iter()
        .find(|k| k.1 == kind.trim().to_ascii_lowercase())
        .map(|k| k.0)
        .ok_or_else(|| {
            format!(
                "steadystate={v}: unknown criterion '{}': {fix}",
                kind.trim()
            )
        })?;
    let limit = limit.trim();
    let (num, pct) = match limit.strip_suffix('%') {
        Some(n) => (n.trim(), true),
        None => (limit, false),
    };
    let bad = || format!("steadystate={v}: '{limit}' is not a limit: {fix}");
    let value = if pct || kind.iops() {
        num.parse::<f64>().map_err(|_| bad())?
    } else if kind.lat() {
        parse_duration_unit(num, 1e-9)
            .map_err(|_| bad())?
            .as_nanos() as f64
    } else {
        parse_fio_size(num).map_err(|_| bad())? as f64
    };
    if !value.is_finite() || value <= 0.0 {
        return Err(format!(
            "steadystate={v}: the limit must be above 0 (a criterion below 0 is never met): {fix}"
        )
        .into());
    }
    Ok((kind, value, pct))
}

/// A seed from the clock, for runs that were not given one (recorded with the results).
pub fn fresh_seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(1)
}

pub(super) fn parse_rw(v: &str) -> R<(Rw, Option<u64>)> {
    let (base, m) = match v.split_once(':') {
        Some((b, m)) => (b.trim(), Some(m.trim())),
        None => (v, None),
    };
    let rw = match base {
        "read" => Rw::Read,
        "write" => Rw::Write,
        "randread" => Rw::RandRead,
        "randwrite" => Rw::RandWrite,
        "rw" | "readwrite" => Rw::Rw,
        "randrw" => Rw::RandRw,
        "trim" => Rw::Trim,
        "randtrim" => Rw::RandTrim,
        "trimwrite" => Rw::TrimWrite,
        "randtrimwrite" => Rw::RandTrimWrite,
        o => {
            return Err(
                format!("rw={o}: expected read, write, randread, randwrite, rw, randrw, trim, randtrim, trimwrite or randtrimwrite").into(),
            )
        }
    };
    // rw=read:-8k: a negative hole, sequential I/O going backwards (the caller marks it).
    let m = match m.map(|s| s.strip_prefix('-').unwrap_or(s)) {
        None => None,
        Some(s) => Some(
            parse_fio_size(s)
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| format!("rw={v}: the modifier after ':' is a number (rw=read:8k skips 8 KiB after each I/O; rw=randread:8 seeks every 8 I/Os)"))?,
        ),
    };
    Ok((rw, m))
}

pub(super) fn parse_bsrange(v: &str) -> R<BlockSize> {
    let key = "bsrange";
    let Some((lo, hi)) = v.split_once('-').or_else(|| v.split_once(':')) else {
        return Err(format!("bsrange={v}: write two sizes, e.g. bsrange=4k-64k").into());
    };
    let (lo, hi) = (block_size(key, lo)?, block_size(key, hi)?);
    if lo > hi {
        return Err(format!("bsrange={v}: the first size must not exceed the second").into());
    }
    Ok(if lo == hi {
        BlockSize::Fixed(lo)
    } else {
        BlockSize::Range(lo, hi)
    })
}

pub(super) fn parse_bssplit(v: &str) -> R<BlockSize> {
    let key = "bssplit";
    let mut parts: Vec<(u64, Option<u32>)> = Vec::new();
    for p in v.split(':') {
        let (size, pct) = p
            .split_once('/')
            .ok_or_else(|| format!("bssplit={v}: each entry is SIZE/PERCENT, e.g. 4k/50"))?;
        let pct = match pct.trim() {
            "" => None,
            s => Some(parse_u32(key, s, 0, 100)?),
        };
        parts.push((block_size(key, size)?, pct));
    }
    let given: u32 = parts.iter().filter_map(|p| p.1).sum();
    let blanks = parts.iter().filter(|p| p.1.is_none()).count() as u32;
    if given > 100 || (blanks == 0 && given != 100) {
        return Err(format!("bssplit={v}: the percentages add up to {given}, not 100").into());
    }
    // Blanks share what is left evenly; the first blanks take the remainder of the division.
    let share = (100 - given).checked_div(blanks).unwrap_or(0);
    let mut extra = (100 - given).checked_rem(blanks).unwrap_or(0);
    let split = parts
        .into_iter()
        .map(|(s, p)| {
            let p = p.unwrap_or_else(|| {
                let e = u32::from(extra > 0);
                extra = extra.saturating_sub(1);
                share + e
            });
            (s, p)
        })
        .filter(|p| p.1 > 0)
        .collect();
    Ok(BlockSize::Split(split))
}

/// Bytes or a share of the file, device or free space (`50%`; 0% only where `zero`).
pub(super) fn size_spec(key: &str, v: &str, zero: bool) -> R<SizeSpec> {
    Ok(match v.strip_suffix('%') {
        Some(p) => SizeSpec::Percent(
            p.trim()
                .parse::<f64>()
                .ok()
                .filter(|x| *x >= 0.0 && *x <= 100.0 && (*x > 0.0 || zero))
                .ok_or_else(|| format!("{key}={v}: a percentage is from 1% to 100%"))?,
        ),
        None => SizeSpec::Bytes(parse_fio_size(v).map_err(|e| format!("{key}: {e}"))?),
    })
}

pub(super) fn parse_distribution(v: &str) -> R<(Distribution, Option<f64>)> {
    let mut it = v.split(':');
    let name = it.next().unwrap_or("").trim();
    let rest: Vec<&str> = it.collect();
    let num = |i: usize, what: &str| -> R<f64> {
        rest.get(i)
            .and_then(|s| s.trim().parse::<f64>().ok())
            .filter(|x| x.is_finite())
            .ok_or_else(|| {
                format!(
                    "random_distribution={v}: {name} needs {what}, e.g. {name}:{}",
                    match name {
                        "zipf" => "1.2",
                        "pareto" => "0.2",
                        _ => "10",
                    }
                )
                .into()
            })
    };
    let center = |i: usize| -> R<Option<f64>> {
        match rest.get(i) {
            None => Ok(None),
            Some(s) => s
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|c| (0.0..=1.0).contains(c))
                .map(Some)
                .ok_or_else(|| {
                    format!("random_distribution={v}: the centre is from 0 to 1").into()
                }),
        }
    };
    Ok(match name {
        "random" => (Distribution::Random, None),
        "zipf" => {
            let t = num(0, "a theta")?;
            if t <= 0.0 || t == 1.0 {
                return Err(format!("random_distribution={v}: zipf's theta is above 0 and not 1 (e.g. 0.9 or 1.2)").into());
            }
            (Distribution::Zipf(t), center(1)?)
        }
        "pareto" => {
            let h = num(0, "a power")?;
            if h <= 0.0 || h >= 1.0 {
                return Err(
                    format!("random_distribution={v}: pareto's power is between 0 and 1").into(),
                );
            }
            (Distribution::Pareto(h), center(1)?)
        }
        "normal" | "gauss" => {
            let s = num(0, "a deviation")?;
            if s <= 0.0 || s > 100.0 {
                return Err(format!(
                    "random_distribution={v}: normal's deviation is from 0 to 100 (percent)"
                )
                .into());
            }
            (Distribution::Normal(s), center(1)?)
        }
        "zoned" | "zoned_abs" => (parse_zones(v, name, &rest)?, None),
        o => return Err(format!("random_distribution={o}: expected random, zipf:θ, pareto:h, normal:σ, zoned:A/S:... or zoned_abs:A/SIZE:...").into()),
    })
}

pub(super) fn parse_zones(v: &str, name: &str, rest: &[&str]) -> R<Distribution> {
    if rest.is_empty() || rest.iter().any(|z| z.contains(',')) {
        return Err(format!("random_distribution={v}: zones are ACCESS%/SIZE pairs separated by ':' (one list for reads and writes), e.g. zoned:60/10:40/90").into());
    }
    let mut access = 0.0;
    let mut zones = Vec::new();
    for z in rest {
        let (a, s) = z
            .split_once('/')
            .ok_or_else(|| format!("random_distribution={v}: zone '{z}' is ACCESS/SIZE"))?;
        let a: f64 = a
            .trim()
            .parse()
            .map_err(|_| format!("random_distribution={v}: '{a}' is not a percentage"))?;
        access += a;
        zones.push((a, s.trim()));
    }
    if (access - 100.0).abs() > 1e-9 {
        return Err(format!(
            "random_distribution={v}: the zones' access shares add up to {access}, not 100"
        )
        .into());
    }
    if name == "zoned" {
        // fio's last zone may leave its size out: the rest of the region.
        let known: f64 = zones
            .iter()
            .filter_map(|(_, s)| s.parse::<f64>().ok())
            .sum();
        let last = zones.len() - 1;
        let rest_pct = format!("{}", 100.0 - known);
        if zones[last].1.is_empty() {
            zones[last].1 = &rest_pct;
        }
        let z: Vec<(f64, f64)> = zones
            .iter()
            .map(|(a, s)| {
                s.parse::<f64>()
                    .map(|s| (*a, s))
                    .map_err(|_| format!("random_distribution={v}: '{s}' is not a percentage"))
            })
            .collect::<Result<_, _>>()?;
        let total: f64 = z.iter().map(|x| x.1).sum();
        if (total - 100.0).abs() > 1e-9 {
            return Err(format!(
                "random_distribution={v}: the zones' sizes add up to {total}%, not 100%"
            )
            .into());
        }
        Ok(Distribution::Zoned(z))
    } else {
        let z = zones
            .iter()
            .map(|(a, s)| Ok((*a, parse_fio_size(s).map_err(|e| format!("{v}: {e}"))?)))
            .collect::<R<Vec<_>>>()?;
        Ok(Distribution::ZonedAbs(z))
    }
}

/// The verify kinds fsbench checks; None for `null` (verification off).
pub(super) fn parse_verify_kind(v: &str) -> R<Option<&'static str>> {
    Ok(Some(match v {
        "0" | "null" => return Ok(None),
        "md5" => "md5",
        "crc32c" | "crc32c-intel" | "1" => "crc32c",
        "crc32" => "crc32",
        "crc64" => "crc64",
        "sha1" => "sha1",
        "sha256" => "sha256",
        "sha512" => "sha512",
        "xxhash" => "xxhash",
        "meta" => "meta",
        "pattern" => "pattern",
        o => {
            return Err(format!(
                "verify={o}: fsbench verifies md5, crc32c (crc32c-intel), crc32, crc64, sha1, sha256, sha512, xxhash, meta, pattern and null; run this job with fio for {o}"
            )
            .into())
        }
    }))
}

/// A verify_pattern, read as fio does (`pattern.rs`).
pub(super) fn parse_pattern(v: &str) -> R<Vec<u8>> {
    super::pattern::parse_pattern("verify_pattern", v)
}

/// The engine, and a note when it was translated.
pub(super) fn parse_engine(v: &str) -> R<(EngineKind, Option<String>)> {
    Ok(match v {
        "sync" | "psync" => (EngineKind::Sync, None),
        "io_uring" => (EngineKind::IoUring, None),
        "null" => (EngineKind::Null, None),
        "libaio" => (EngineKind::Libaio, None),
        "pvsync" => (EngineKind::Pvsync, None),
        "pvsync2" => (EngineKind::Pvsync2, None),
        "posixaio" => (
            EngineKind::IoUring,
            Some(format!("ioengine={v} runs on io_uring (same queue depth, direct I/O as given)")),
        ),
        "vsync" => (
            EngineKind::Sync,
            Some(format!("ioengine={v} runs on sync (pread/pwrite, one I/O at a time, as {v} does with one buffer per I/O)")),
        ),
        o if FIO_ONLY_ENGINES.split_whitespace().any(|e| e == o) || o.starts_with("external:") => {
            return Err(format!(
                "ioengine={o}: engine {o} is not available in fsbench (it has sync, psync, pvsync, pvsync2, vsync, io_uring, libaio, posixaio and null); run this job with fio"
            )
            .into())
        }
        o => {
            return Err(format!(
            "ioengine={o}: not an engine fsbench knows (sync, psync, pvsync, pvsync2, vsync, io_uring, libaio, posixaio, null)"
        )
            .into())
        }
    })
}

pub(super) fn byte_size(key: &str, v: &str) -> R<u64> {
    parse_fio_size(v).map_err(|e| format!("{key}: {e}").into())
}

pub(super) fn block_size(key: &str, v: &str) -> R<u64> {
    let n = byte_size(key, v)?;
    if n == 0 || n % 512 != 0 {
        return Err(format!("{key}={v}: a block size is a non-zero multiple of 512 bytes").into());
    }
    Ok(n)
}

/// Engines fio has and fsbench does not: named in a clear error.
pub(super) const FIO_ONLY_ENGINES: &str = "mmap splice sg net netsplice cpuio guasi rdma rados rbd http nbd nfs gfapi gfapi_async libhdfs mtd pmemblk dev-dax libpmem filecreate filestat filedelete dircreate dirstat dirdelete exec xnvme libblkio windowsaio solarisaio e4defrag falloc ftruncate io_uring_cmd libcufile libiscsi libzbc external";
