//! bonnie's parameters, one key per bonnie++ flag, checked before anything runs.

use crate::plan::units::parse_size;
use crate::plan::WorkloadSpec;
use crate::workload::{SpecError, Workload};

const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

/// Bytes of the per-character tests, as bonnie++ 2.00a (3 MiB of one-byte calls).
pub const PERCHAR_BYTES: u64 = 3 * MIB;

#[derive(Debug, Clone)]
pub struct Bonnie {
    /// IO file size in bytes (0: the IO tests are skipped, bonnie++ -s 0).
    pub size: u64,
    pub ram: u64,
    pub chunk: u64,
    pub perchar: bool,
    /// Files of the file tests (N x 1024; 0: skipped), their sizes and folders.
    pub files: u64,
    pub max: u64,
    pub min: u64,
    pub dirs: u64,
    pub fsync: bool,
    pub direct: bool,
    pub seeks: u64,
    pub seekers: usize,
    pub seed: u64,
}

impl Bonnie {
    /// Bytes the file tests write at most.
    pub fn files_bytes(&self) -> u64 {
        self.files * self.max
    }
}

/// A size; a bare number is MiB, as bonnie++'s -s and -r.
fn mib_size(spec: &WorkloadSpec, key: &str) -> Result<Option<u64>, SpecError> {
    let Some(v) = spec.param(key) else {
        return Ok(None);
    };
    let v = v.trim();
    let bytes = match v.parse::<u64>() {
        Ok(n) => n * MIB,
        Err(_) => parse_size(v).map_err(|e| spec.bad(format!("{key}: {e}")))?,
    };
    Ok(Some(bytes))
}

/// files=N[:max[:min[:dirs]]]: (N x 1024, max, min, dirs), sizes in bytes.
fn files_param(spec: &WorkloadSpec) -> Result<(u64, u64, u64, u64), SpecError> {
    let Some(v) = spec.param("files") else {
        return Ok((16 * 1024, 0, 0, 0));
    };
    let parts: Vec<&str> = v.split(':').collect();
    if parts.len() > 4 {
        return Err(spec.bad(format!(
            "files={v}: write N[:max[:min[:dirs]]], e.g. files=16:4k:1k:8"
        )));
    }
    let n: u64 = parts[0].trim().parse().map_err(|_| {
        spec.bad(format!(
            "files={v}: N (in units of 1024 files) is a whole number"
        ))
    })?;
    let size = |i: usize| -> Result<u64, SpecError> {
        match parts.get(i).map(|s| s.trim()).filter(|s| !s.is_empty()) {
            None => Ok(0),
            Some(s) => match s.parse::<u64>() {
                Ok(b) => Ok(b),
                Err(_) => parse_size(s).map_err(|e| spec.bad(format!("files: {e}"))),
            },
        }
    };
    let (max, min) = (size(1)?, size(2)?);
    let dirs: u64 = match parts.get(3) {
        Some(d) => d
            .trim()
            .parse()
            .map_err(|_| spec.bad(format!("files={v}: dirs is a whole number")))?,
        None => 0,
    };
    if min > max {
        return Err(spec.bad(format!("files={v}: min ({min}) is larger than max ({max})")));
    }
    Ok((n * 1024, max, min, dirs))
}

pub fn build(
    spec: &WorkloadSpec,
    o: &crate::plan::Overrides,
) -> Result<Box<dyn Workload>, SpecError> {
    let ram = mib_size(spec, "ram")?.unwrap_or_else(crate::sys::host::mem_total_bytes);
    let size = match mib_size(spec, "size")? {
        Some(s) => s,
        None if ram == 0 => GIB,
        None => ram
            .saturating_mul(2)
            .max(300 * MIB)
            .div_ceil(GIB)
            .saturating_mul(GIB),
    };
    if ram > 0 && size > 0 && size < ram.saturating_mul(2) {
        return Err(spec.bad(format!(
                "size={} is less than twice the RAM ({}): the reads would come from the page cache, as bonnie++ refuses -s below twice -r. Give ram= (what to outsize) or ram=0 to run it anyway (bonnie++ -r 0)",
                crate::plan::units::format_bytes(size),
                crate::plan::units::format_bytes(ram)
            ),
        ));
    }
    let chunk = match spec.param("chunk") {
        Some(c) => parse_size(c).map_err(|e| spec.bad(format!("chunk: {e}")))?,
        None => 8192,
    };
    if chunk == 0 || chunk > 64 * MIB {
        return Err(spec.bad("chunk is from 1 byte to 64M"));
    }
    if size > 0 && size < chunk {
        return Err(spec.bad(format!(
            "size ({size} bytes) is smaller than a chunk ({chunk})"
        )));
    }
    let direct = spec.flag("direct", false)?;
    if direct && chunk % 512 != 0 {
        return Err(spec.bad(format!(
            "direct=1 needs chunk to be a multiple of 512 bytes, not {chunk}"
        )));
    }
    let (files, max, min, dirs) = files_param(spec)?;
    let seekers = spec.number("seekers", 5)? as usize;
    if seekers == 0 {
        return Err(spec.bad("seekers must be at least 1"));
    }
    let seed = match spec.param("seed") {
        Some(_) => spec.number("seed", 0)?,
        None => o.seed.unwrap_or_else(crate::plan::fio::values::fresh_seed) & 0xffff_ffff,
    };
    Ok(Box::new(Bonnie {
        size,
        ram,
        chunk,
        perchar: spec.flag("perchar", true)?,
        files,
        max,
        min,
        dirs,
        fsync: spec.flag("fsync", false)?,
        direct,
        seeks: spec.number("seeks", 8192)?,
        seekers,
        seed,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(s: &str) -> Result<Box<dyn Workload>, SpecError> {
        build(
            &crate::plan::workload::parse_workload(s).unwrap(),
            &Default::default(),
        )
    }

    fn err(s: &str) -> String {
        b(s).err().expect(s).0
    }

    #[test]
    fn sizes_follow_bonnies_rules() {
        // -s below twice -r is refused with the way out; -r 0 lifts the rule.
        let e = err("bonnie:size=100M,ram=100M");
        assert!(e.contains("twice the RAM") && e.contains("ram=0"), "{e}");
        assert!(b("bonnie:size=100M,ram=0").is_ok());
        assert!(
            b("bonnie:size=200,ram=100").is_ok(),
            "bare numbers are MiB, as -s and -r"
        );
        assert!(err("bonnie:size=100,ram=100").contains("twice"));
        assert!(
            b("bonnie:size=0,ram=0").is_ok(),
            "size=0 skips the IO tests (-s 0)"
        );
        assert!(err("bonnie:chunk=1000,direct=1,ram=0,size=64M").contains("multiple of 512"));
        assert!(err("bonnie:seekers=0,ram=0").contains("seekers"));
        assert!(err("bonnie:perchar=maybe,ram=0").contains("use 1 or 0"));
    }

    #[test]
    fn files_is_n_max_min_dirs_in_units_of_1024() {
        let spec = |s: &str| crate::plan::workload::parse_workload(s).unwrap();
        assert_eq!(files_param(&spec("bonnie")).unwrap(), (16 * 1024, 0, 0, 0));
        assert_eq!(
            files_param(&spec("bonnie:files=2:4k:1k:8")).unwrap(),
            (2048, 4096, 1024, 8)
        );
        assert_eq!(files_param(&spec("bonnie:files=0")).unwrap(), (0, 0, 0, 0));
        assert!(
            files_param(&spec("bonnie:files=1:1k:4k")).is_err(),
            "min > max"
        );
        assert!(files_param(&spec("bonnie:files=x")).is_err());
    }
}
