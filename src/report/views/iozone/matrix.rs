//! A study's iozone figures as matrices, what every layout of the view reads: per test, per
//! target, the cells (file size x record size) with each repeat's KiB/s; throughput-mode records
//! apart. A cell's figure is the centre of its repeats as the statistics take it (the geometric
//! mean), so a cell's ratio, the summary over cells and a study's claims agree. Pure.

use std::collections::BTreeMap;

use crate::metrics::name as metric;
use crate::report::records::targets;
use crate::report::stats::summarize;
use crate::store::{Outcome, Record};
use crate::workload::iozone::{NAME, TESTS};

/// The headline tests: the terminal's summary and its matrices, one each.
pub(crate) const HEADLINES: [&str; 4] = ["write", "read", "random_read", "random_write"];

/// Where a cell of iozone's matrix is: its file size and record size, bytes (its row, then its
/// column).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct FileRecord {
    pub(crate) file: u64,
    pub(crate) record: u64,
}

/// Each cell -> KiB/s of each repeat.
pub(crate) type Cells = BTreeMap<FileRecord, Vec<f64>>;

/// A study's iozone figures: per target, per test, the cells; and throughput-mode records.
#[derive(Default)]
pub(crate) struct Iozone {
    pub(crate) targets: Vec<String>,
    /// Per test, per target: the cells.
    matrix: BTreeMap<&'static str, BTreeMap<String, Cells>>,
    pub(crate) throughput: Vec<Record>,
}

fn is_iozone(r: &Record) -> bool {
    r.workload_name() == NAME
}

/// A number of the record's configuration (0 when absent).
pub(crate) fn cfg(r: &Record, k: &str) -> u64 {
    r.config
        .as_ref()
        .and_then(|c| c.get(k))
        .and_then(|v| v.as_u64())
        .unwrap_or(0)
}

/// A cell's figure: the centre of its repeats (the geometric mean of positive figures).
pub(crate) fn centre(v: &[f64]) -> f64 {
    summarize(v).mean
}

/// A size as iozone's tables and fsbench's names write it (64K, 512M).
pub(crate) fn label(bytes: u64) -> String {
    crate::workload::iozone::size_label(bytes)
}

/// A cell as "file/record": 16M/4K.
pub(crate) fn cell_name(cell: FileRecord) -> String {
    format!("{}/{}", label(cell.file), label(cell.record))
}

impl Iozone {
    pub(crate) fn collect<'a>(records: impl IntoIterator<Item = &'a Record>) -> Iozone {
        let ok: Vec<&Record> = records
            .into_iter()
            .filter(|r| is_iozone(r) && r.outcome == Outcome::Ok)
            .collect();
        let mut z = Iozone {
            targets: targets(ok.iter().map(|r| r.target.as_str()))
                .into_iter()
                .map(String::from)
                .collect(),
            ..Default::default()
        };
        for r in ok {
            if cfg(r, "threads") > 0 {
                z.throughput.push(r.clone());
                continue;
            }
            let name = r.test.split('/').next().unwrap_or("");
            let (Some(t), Some(v)) = (
                TESTS.iter().find(|t| t.name == name),
                r.metrics.get(metric::KIB_PER_SEC),
            ) else {
                continue;
            };
            z.matrix
                .entry(t.name)
                .or_default()
                .entry(r.target.clone())
                .or_default()
                .entry(FileRecord {
                    file: cfg(r, "file_size"),
                    record: cfg(r, "record_size"),
                })
                .or_default()
                .push(*v);
        }
        z
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.targets.is_empty()
    }

    pub(crate) fn cells(&self, target: &str, test: &str) -> Option<&Cells> {
        self.matrix.get(test)?.get(target)
    }

    /// The file sizes (rows) and record sizes (columns) of a test over all targets.
    pub(crate) fn axes(&self, test: &str) -> (Vec<u64>, Vec<u64>) {
        let mut files: Vec<u64> = Vec::new();
        let mut records: Vec<u64> = Vec::new();
        for cells in self.matrix.get(test).into_iter().flat_map(|m| m.values()) {
            for c in cells.keys() {
                files.push(c.file);
                records.push(c.record);
            }
        }
        files.sort_unstable();
        files.dedup();
        records.sort_unstable();
        records.dedup();
        (files, records)
    }

    /// The ratio of a target's cell to the baseline's.
    #[cfg(test)]
    pub(crate) fn ratio(
        &self,
        target: &str,
        baseline: &str,
        test: &str,
        cell: FileRecord,
    ) -> Option<f64> {
        ratio_of(self.cells(target, test)?, self.cells(baseline, test)?, cell)
    }

    /// Every (test, target) matrix of `tests`, in order, with the test's axes (file sizes, record
    /// sizes) over all targets and the baseline's cells to divide by.
    pub(crate) fn each<'a>(&'a self, tests: &[&'static str], baseline: &str) -> Vec<Matrix<'a>> {
        let mut out = Vec::new();
        for test in tests.iter().copied() {
            let (files, records) = self.axes(test);
            let base = self.cells(baseline, test);
            for target in &self.targets {
                if let Some(cells) = self.cells(target, test) {
                    out.push(Matrix {
                        test,
                        target,
                        cells,
                        base: base.filter(|_| target != baseline),
                        files: files.clone(),
                        records: records.clone(),
                    });
                }
            }
        }
        out
    }

    /// The tests that have figures, in iozone's order.
    pub(crate) fn tests(&self) -> Vec<&'static str> {
        TESTS
            .iter()
            .map(|t| t.name)
            .filter(|n| self.matrix.contains_key(n))
            .collect()
    }

    /// The headline tests that have figures, in iozone's order.
    pub(crate) fn headlines(&self) -> Vec<&'static str> {
        self.tests()
            .into_iter()
            .filter(|t| HEADLINES.contains(t))
            .collect()
    }
}

/// The ratio of two cells' figures.
pub(crate) fn ratio_of(cells: &Cells, base: &Cells, cell: FileRecord) -> Option<f64> {
    let (a, b) = (centre(cells.get(&cell)?), centre(base.get(&cell)?));
    (b > 0.0).then(|| a / b)
}

/// One test's figures on one target, with the axes of the test and, for a target other than
/// the baseline, the baseline's cells.
pub(crate) struct Matrix<'a> {
    pub(crate) test: &'static str,
    pub(crate) target: &'a String,
    pub(crate) cells: &'a Cells,
    pub(crate) base: Option<&'a Cells>,
    pub(crate) files: Vec<u64>,
    pub(crate) records: Vec<u64>,
}

impl Matrix<'_> {
    /// A cell's figure in bytes per second.
    pub(crate) fn bytes(&self, cell: FileRecord) -> Option<f64> {
        self.cells.get(&cell).map(|v| centre(v) * 1024.0)
    }

    pub(crate) fn ratio(&self, cell: FileRecord) -> Option<f64> {
        ratio_of(self.cells, self.base?, cell)
    }
}

/// A target's iozone figures, and how many of them measured the page cache or took under 1 ms.
struct Counts {
    target: String,
    figures: usize,
    cached: usize,
    fast: usize,
}

/// What an iozone warning is about.
#[derive(Clone, Copy)]
enum Caveat {
    PageCache,
    TooFast,
}

/// One line per kind of iozone figure that measured the page cache, or ran too fast to trust,
/// naming the targets (a study of five targets says each once, not five times).
pub(crate) fn warnings<'a>(records: impl IntoIterator<Item = &'a Record>) -> Vec<String> {
    use crate::store::note;
    let mut per: Vec<Counts> = Vec::new();
    for r in records
        .into_iter()
        .filter(|r| is_iozone(r) && r.outcome == Outcome::Ok)
    {
        let i = match per.iter().position(|p| p.target == r.target) {
            Some(i) => i,
            None => {
                per.push(Counts {
                    target: r.target.clone(),
                    figures: 0,
                    cached: 0,
                    fast: 0,
                });
                per.len() - 1
            }
        };
        per[i].figures += 1;
        per[i].cached += usize::from(note::has(&r.notes, note::Kind::PageCache));
        per[i].fast += usize::from(note::has(&r.notes, note::Kind::TooFast));
    }
    let mut out = Vec::new();
    for caveat in [Caveat::PageCache, Caveat::TooFast] {
        let count = |c: &Counts| match caveat {
            Caveat::PageCache => c.cached,
            Caveat::TooFast => c.fast,
        };
        let what = match caveat {
            Caveat::PageCache => "measure the page cache (files smaller than RAM, or tmpfs): set direct=1 or purge=1 for the device's figures",
            Caveat::TooFast => "took under 1 ms: the small cells are noisy, as in iozone",
        };
        let hit: Vec<&Counts> = per.iter().filter(|c| count(c) > 0).collect();
        if hit.is_empty() {
            continue;
        }
        let n: usize = hit.iter().map(|c| c.figures).sum();
        let k: usize = hit.iter().map(|c| count(c)).sum();
        let on: Vec<&str> = hit.iter().map(|c| c.target.as_str()).collect();
        out.push(format!(
            "iozone on {}: {k} of {n} figures {what}",
            on.join(", ")
        ));
    }
    out
}
