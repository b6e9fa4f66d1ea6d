//! The `files` workload's parameters, checked before anything runs.

use std::path::PathBuf;

use super::{Files, PhaseKind};
use crate::io::content::{Checksum, Dist, Fsync, Tree};
use crate::plan::WorkloadSpec;
use crate::workload::{SpecError, Workload};

fn num(spec: &WorkloadSpec, key: &str) -> Result<Option<u64>, SpecError> {
    spec.param(key)
        .map(|v| {
            let t = v.trim();
            let scaled = t
                .strip_suffix(['M', 'm'])
                .map(|x| (x, 1_000_000))
                .or_else(|| t.strip_suffix(['B', 'b']).map(|x| (x, 1_000_000_000)))
                .or_else(|| t.strip_suffix(['k', 'K']).map(|x| (x, 1000)));
            match scaled {
                Some((x, m)) if key != "mean" && key != "sd" => x.parse::<u64>().map(|n| n * m),
                _ => t.parse::<u64>(),
            }
            .map_err(|_| spec.bad(format!("{key}={v} is not a whole number")))
        })
        .transpose()
}

/// (tops, subs, files per subfolder, count): from count=, schedule= or the shape itself.
fn shape(spec: &WorkloadSpec) -> Result<(u64, u64, u64, u64), SpecError> {
    let (mut tops, mut subs, mut per_sub) = (10u64, 10u64, None);
    let mut count = num(spec, "count")?;
    if let Some(s) = spec.param("schedule") {
        let (c, s_) = match s.to_ascii_uppercase().as_str() {
            "10M" => (10_000_000, 1),
            "100M" => (100_000_000, 10),
            "1B" => (1_000_000_000, 100),
            o => {
                return Err(spec.bad(format!(
                    "schedule={o}: the billion-files study's schedules are 10M, 100M and 1B"
                )))
            }
        };
        if count.is_some() {
            return Err(spec.bad("give count or schedule, not both"));
        }
        count = Some(c);
        tops = 100;
        subs = s_;
        per_sub = Some(100_000);
    }
    tops = num(spec, "tops")?.unwrap_or(tops);
    subs = num(spec, "subs")?.unwrap_or(subs);
    per_sub = num(spec, "files")?.or(per_sub);
    if tops == 0 || subs == 0 || per_sub == Some(0) {
        return Err(spec.bad("tops, subs and files must be at least 1"));
    }
    let count = match (count, per_sub) {
        (Some(c), _) => c,
        (None, Some(p)) => tops * subs * p,
        (None, None) => 100_000,
    };
    let per_sub = per_sub.unwrap_or_else(|| count.div_ceil(tops * subs).max(1));
    if count > tops * subs * per_sub {
        return Err(spec.bad(format!(
            "{count} files do not fit in {tops} tops x {subs} subfolders x {per_sub} files"
        )));
    }
    Ok((tops, subs, per_sub, count))
}

/// (dist, mean, sd, min, max).
fn sizes(spec: &WorkloadSpec) -> Result<(Dist, f64, f64, u64, u64), SpecError> {
    let dist = match spec.param("dist").unwrap_or("normal") {
        "normal" => Dist::Normal,
        "fixed" => Dist::Fixed,
        "uniform" => Dist::Uniform,
        "lognormal" => Dist::LogNormal,
        "exponential" => Dist::Exponential,
        o => {
            return Err(spec.bad(format!(
                "dist={o}: use normal, fixed, uniform, lognormal or exponential"
            )))
        }
    };
    let min = spec.size("min")?.unwrap_or(1024);
    let max = spec.size("max")?.unwrap_or(10240);
    let fixed = spec.size("size")?;
    if fixed.is_some() && dist != Dist::Fixed && spec.param("dist").is_some() {
        return Err(spec.bad("size= is for dist=fixed"));
    }
    let dist = if fixed.is_some() { Dist::Fixed } else { dist };
    let mean = match (dist, fixed) {
        (Dist::Fixed, Some(s)) => s as f64,
        _ => spec.size("mean")?.map(|v| v as f64).unwrap_or(5500.0),
    };
    let sd = spec.size("sd")?.map(|v| v as f64).unwrap_or(1000.0);
    if min > max {
        return Err(spec.bad(format!("min ({min}) is larger than max ({max})")));
    }
    if max > 64 << 20 {
        return Err(spec.bad("max is at most 64M (this is the small-files workload)"));
    }
    Ok((dist, mean, sd, min, max))
}

fn phases(spec: &WorkloadSpec) -> Result<Vec<PhaseKind>, SpecError> {
    let mut phases = Vec::new();
    for p in spec
        .param("phases")
        .unwrap_or("write+read")
        .split(['+', ' '])
    {
        let k = match p.trim() {
            "write" => PhaseKind::Write,
            "read" => PhaseKind::Read,
            "stat" => PhaseKind::Stat,
            "delete" => PhaseKind::Delete,
            "" => continue,
            o => return Err(spec.bad(format!("phase '{o}': phases are write, read, stat and delete, joined by + (e.g. phases=write+read)"))),
        };
        if !phases.contains(&k) {
            phases.push(k);
        }
    }
    Ok(phases)
}

fn run_options(
    spec: &WorkloadSpec,
    study_seed: Option<u64>,
) -> Result<(usize, Fsync, Checksum, u64), SpecError> {
    let threads = match num(spec, "threads")? {
        Some(0) => return Err(spec.bad("threads must be at least 1")),
        Some(t) => t as usize,
        None => crate::sys::host::cpus(),
    };
    const FSYNC: [(&str, Fsync); 4] = [
        ("none", Fsync::None),
        ("file", Fsync::File),
        ("dir", Fsync::Dir),
        ("end", Fsync::End),
    ];
    let want = spec.param("fsync").unwrap_or("none");
    let Some(&(_, fsync)) = FSYNC.iter().find(|(name, _)| *name == want) else {
        return Err(spec.bad(format!("fsync={want}: use none, file, dir or end")));
    };
    let checksum = match spec.param("checksum").unwrap_or("crc32c") {
        "crc32c" => Checksum::Crc32c,
        "crc32" => Checksum::Crc32,
        o => return Err(spec.bad(format!("checksum={o}: use crc32c or crc32"))),
    };
    let seed = match num(spec, "seed")? {
        Some(s) => s,
        None => study_seed.unwrap_or_else(crate::plan::fio::values::fresh_seed),
    };
    Ok((threads, fsync, checksum, seed))
}

pub fn build(
    spec: &WorkloadSpec,
    o: &crate::plan::Overrides,
) -> Result<Box<dyn Workload>, SpecError> {
    let (tops, subs, per_sub, count) = shape(spec)?;
    let (dist, mean, sd, min, max) = sizes(spec)?;
    let (threads, fsync, checksum, seed) = run_options(spec, o.seed)?;
    let path = spec.param("path").map(PathBuf::from);
    if let Some(p) = &path {
        if !p.is_absolute() {
            return Err(spec.bad(format!("path={} must be absolute", p.display())));
        }
    }
    let resume = matches!(spec.param("resume"), Some("1") | Some("yes") | Some("true"));
    let explicit = spec.params.iter().any(|(k, _)| {
        !matches!(
            k.as_str(),
            "phases" | "threads" | "path" | "resume" | "fsync"
        )
    });
    Ok(Box::new(Files {
        tree: Tree {
            version: 1,
            seed,
            tops,
            subs,
            per_sub,
            count,
            dist,
            mean,
            sd,
            min,
            max,
            checksum,
        },
        threads,
        fsync,
        phases: phases(spec)?,
        path,
        resume,
        explicit,
        seed_given: spec.param("seed").is_some(),
    }))
}
