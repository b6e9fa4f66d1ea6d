//! iozone's parameters, one key per iozone flag, and the matrix of its automatic mode; checked
//! before anything runs.

use super::battery::{Group, GROUPS};
use crate::plan::units::format_bytes;
use crate::plan::WorkloadSpec;
use crate::workload::{SpecError, Workload};

const KIB: u64 = 1024;
const MIB: u64 = 1 << 20;

/// One cell of the matrix: a file size and a record size, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cell {
    pub file: u64,
    pub record: u64,
}

#[derive(Debug, Clone)]
pub struct Iozone {
    pub min_file: u64,
    pub max_file: u64,
    pub min_record: u64,
    pub max_record: u64,
    /// Keep records under 64 KiB for files of 32 MiB and more (-z).
    pub all_records: bool,
    /// The test groups to run, in iozone's order (write always: the others need the file).
    pub groups: Vec<Group>,
    /// fsync inside the timed part (-e), close inside it (-c), O_DIRECT (-I), caches dropped
    /// before every test (fsbench's stand-in for -U's remount).
    pub fsync: bool,
    pub close: bool,
    pub direct: bool,
    pub purge: bool,
    /// Records between the starts of two stride reads (-j).
    pub stride: u64,
    /// Throughput mode (-t N): N workers, each on its own file of `max_file` in `max_record`s.
    pub threads: usize,
    /// The random tests' one shuffle.
    pub seed: u64,
}

/// Records below this are skipped for files of `SMALL_RECORDS_UP_TO` and more (unless -z).
const SKIP_BELOW: u64 = 64 * KIB;
const SMALL_RECORDS_UP_TO: u64 = 32 * MIB;

impl Iozone {
    /// The cells in iozone's order: file sizes doubling, then record sizes doubling; a record
    /// never larger than its file; records under 64 KiB skipped for files of 32 MiB and more
    /// unless `all_records`.
    pub fn cells(&self) -> Vec<Cell> {
        let mut out = Vec::new();
        let mut file = self.min_file;
        while file <= self.max_file {
            let mut record = self.min_record;
            while record <= self.max_record.min(file) {
                if self.all_records || file < SMALL_RECORDS_UP_TO || record >= SKIP_BELOW {
                    out.push(Cell { file, record });
                }
                record *= 2;
            }
            file *= 2;
        }
        out
    }

    /// The most bytes on the target at once: the largest file per worker.
    pub fn peak_bytes(&self) -> u64 {
        self.cells().iter().map(|c| c.file).max().unwrap_or(0) * self.threads.max(1) as u64
    }

    pub fn throughput_mode(&self) -> bool {
        self.threads > 0
    }
}

/// tests=write+read+random+...: group names (or iozone's -i numbers 0 to 7).
fn groups(spec: &WorkloadSpec) -> Result<Vec<Group>, SpecError> {
    let Some(v) = spec.param("tests") else {
        return Ok(GROUPS.to_vec());
    };
    let mut picked = vec![Group::Write];
    for name in v.split('+').map(str::trim).filter(|s| !s.is_empty()) {
        let g = GROUPS
            .iter()
            .copied()
            .enumerate()
            .find(|(i, g)| g.names().contains(&name) || name == i.to_string())
            .map(|(_, g)| g)
            .ok_or_else(|| {
                let all: Vec<&str> = GROUPS.iter().map(|g| g.names()[0]).collect();
                spec.bad(format!(
                    "tests: unknown test '{name}': use {} (or iozone's -i numbers 0 to 7), joined with +",
                    all.join(", ")
                ))
            })?;
        if !picked.contains(&g) {
            picked.push(g);
        }
    }
    picked.sort_by_key(|g| GROUPS.iter().position(|x| x == g));
    Ok(picked)
}

fn power_of_two(spec: &WorkloadSpec, key: &str, v: u64) -> Result<u64, SpecError> {
    if v < 512 || !v.is_power_of_two() {
        return Err(spec.bad(format!(
            "{key}={} must be a power of two of at least 512 bytes (the matrix doubles from it)",
            format_bytes(v)
        )));
    }
    Ok(v)
}

pub fn build(
    spec: &WorkloadSpec,
    _o: &crate::plan::Overrides,
) -> Result<Box<dyn Workload>, SpecError> {
    Ok(Box::new(parse(spec)?))
}

pub fn parse(spec: &WorkloadSpec) -> Result<Iozone, SpecError> {
    let threads = spec.number("threads", 0)? as usize;
    // size= and record= (iozone -s and -r) pin the matrix to one cell; the defaults are those
    // of -a, or of -t with its one cell.
    let size = spec.size("size")?;
    let record = spec.size("record")?;
    let (dmin_f, dmax_f, dmin_r, dmax_r) = if threads > 0 {
        (64 * MIB, 64 * MIB, 64 * KIB, 64 * KIB)
    } else {
        (64 * KIB, 512 * MIB, 4 * KIB, 16 * MIB)
    };
    let min_file = size.or(spec.size("min_file")?).unwrap_or(dmin_f);
    let max_file = size.or(spec.size("max_file")?).unwrap_or(dmax_f);
    let min_record = record.or(spec.size("min_record")?).unwrap_or(dmin_r);
    let max_record = record.or(spec.size("max_record")?).unwrap_or(dmax_r);
    for (k, v) in [
        ("min_file", min_file),
        ("max_file", max_file),
        ("min_record", min_record),
        ("max_record", max_record),
    ] {
        power_of_two(spec, k, v)?;
    }
    if min_file > max_file || min_record > max_record {
        return Err(spec.bad("min_file must not exceed max_file, nor min_record max_record"));
    }
    if min_record > min_file {
        return Err(spec.bad(format!(
            "a record ({}) bigger than the file ({}): lower min_record (or record=) or raise min_file (or size=)",
            format_bytes(min_record),
            format_bytes(min_file)
        )));
    }
    if threads > 0 && (min_file != max_file || min_record != max_record) {
        return Err(spec.bad(
            "threads= (throughput mode, iozone -t) runs one file size and one record size: give size= and record=",
        ));
    }
    let stride = spec.number("stride", 17)?;
    if stride == 0 {
        return Err(spec.bad("stride must be at least 1 record"));
    }
    let z = Iozone {
        min_file,
        max_file,
        min_record,
        max_record,
        // The skip of small records for big files is -a's; a record named outright is run.
        all_records: spec.flag("all_records", record.is_some())?,
        groups: groups(spec)?,
        fsync: spec.flag("fsync", false)?,
        close: spec.flag("close", false)?,
        direct: spec.flag("direct", false)?,
        purge: spec.flag("purge", false)?,
        stride,
        threads,
        seed: spec.number("seed", 0x10_2030)?,
    };
    if z.cells().is_empty() {
        return Err(spec.bad(
            "the matrix has no cell: records of 64K and more are kept for files of 32M and more; set all_records=1 or lower min_record",
        ));
    }
    Ok(z)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn z(s: &str) -> Result<Iozone, SpecError> {
        parse(&crate::plan::workload::parse_workload(s).unwrap())
    }

    #[test]
    fn the_default_matrix_is_iozone_minus_a() {
        let z = z("iozone").unwrap();
        let cells = z.cells();
        assert_eq!(cells.len(), 126, "126 cells of 13 figures");
        let files: std::collections::BTreeSet<u64> = cells.iter().map(|c| c.file).collect();
        assert_eq!(files.len(), 14);
        assert_eq!(*files.first().unwrap(), 64 * KIB);
        assert_eq!(*files.last().unwrap(), 512 * MIB);
        for c in &cells {
            assert!(c.record <= c.file && c.record <= 16 * MIB && c.record >= 4 * KIB);
            if c.file >= 32 * MIB {
                assert!(c.record >= 64 * KIB, "{c:?}");
            }
        }
        let row = |f: u64| cells.iter().filter(|c| c.file == f).count();
        assert_eq!(row(64 * KIB), 5);
        assert_eq!(row(16 * MIB), 13);
        assert_eq!(row(32 * MIB), 9);
        assert_eq!(row(512 * MIB), 9);
        let records: std::collections::BTreeSet<u64> = cells.iter().map(|c| c.record).collect();
        assert_eq!(records.len(), 13);
        assert_eq!(z.groups.len(), 8);
        // -z keeps the small records of the big files.
        let mut all = z;
        all.all_records = true;
        assert_eq!(all.cells().len(), 81 + 5 * 13);
    }

    #[test]
    fn options_pick_the_matrix_and_the_tests() {
        let z1 = z("iozone:min_file=64k,max_file=64m").unwrap();
        assert_eq!(z1.cells().len(), 99);
        let z2 = z("iozone:tests=random+read").unwrap();
        assert_eq!(z2.groups, vec![Group::Write, Group::Read, Group::Random]);
        let z3 = z("iozone:tests=0+1+2").unwrap();
        assert_eq!(z3.groups, z2.groups);
        let one = z("iozone:size=4m,record=64k").unwrap();
        assert_eq!(
            one.cells(),
            vec![Cell {
                file: 4 * MIB,
                record: 64 * KIB
            }]
        );
        assert_eq!(
            z("iozone:size=64m,record=4k").unwrap().cells().len(),
            1,
            "record= is run even below 64K on a big file (the skip is -a's)"
        );
        assert!(z("iozone:threads=4,size=8m,record=4k")
            .unwrap()
            .throughput_mode());
    }

    #[test]
    fn bad_matrices_are_refused_with_the_reason() {
        let e = z("iozone:size=64k,record=128k").unwrap_err().0;
        assert!(e.contains("bigger than the file"), "{e}");
        let e = z("iozone:min_record=1m,min_file=64k").unwrap_err().0;
        assert!(e.contains("bigger than the file"), "{e}");
        assert!(z("iozone:max_file=100k")
            .unwrap_err()
            .0
            .contains("power of two"));
        assert!(z("iozone:tests=mmap")
            .unwrap_err()
            .0
            .contains("unknown test"));
        assert!(
            z("iozone:threads=2").is_ok(),
            "throughput mode has its own cell"
        );
        assert!(z("iozone:threads=2,min_file=1m")
            .unwrap_err()
            .0
            .contains("one file size"));
        assert!(z("iozone:direct=maybe")
            .unwrap_err()
            .0
            .contains("use 1 or 0"));
        assert!(z("iozone:stride=0").is_err());
    }
}
