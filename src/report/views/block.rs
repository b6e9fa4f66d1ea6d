//! The block workloads' view (the presets, `block`, `fio` job files and fio results imported):
//! the CrystalDiskMark-like table, per target, one row per test (read and write side by side),
//! MB/s, IOPS and p99 completion latency; means over repeats. In the terminal only (report.md and
//! the HTML page have the ratio matrix and a chart per test). Pure.

use crate::metrics::name as metric;
use crate::plan::units::{format_count, format_ns};
use crate::report::records::targets;
use crate::report::termtable;
use crate::report::view::{Body, Grid, Keep, Section, Shown, Study, WorkloadView};
use crate::store::note;
use crate::store::{Outcome, Record};
use crate::workload::{block, presets};

pub(crate) struct Block;

impl WorkloadView for Block {
    fn claims(&self, workload: &str) -> bool {
        workload == block::DEF_BLOCK.name
            || workload == block::DEF_FIO.name
            || presets::find(workload).is_some()
    }

    fn sections(&self, mine: &[&Record], _study: &Study) -> Vec<Section> {
        sections(mine)
    }

    /// The ratio matrix says the same briefly.
    fn keep(&self) -> Keep {
        Keep::Spare
    }
}

/// (bytes/s, IOPS, p99 latency in ns) of one direction.
type Side = (f64, f64, Option<f64>);

#[derive(Default)]
struct Row {
    test: String,
    read: Option<Side>,
    write: Option<Side>,
    /// Repeats summed into read and write (the table shows means).
    reads: u32,
    writes: u32,
    note: String,
}

fn add(acc: &mut Option<Side>, x: Side) {
    *acc = Some(match acc.take() {
        None => x,
        Some(a) => (a.0 + x.0, a.1 + x.1, a.2.zip(x.2).map(|(p, q)| p + q)),
    });
}

fn mean(x: Option<Side>, n: u32) -> Option<Side> {
    let n = n.max(1) as f64;
    x.map(|s| (s.0 / n, s.1 / n, s.2.map(|p| p / n)))
}

/// The table of a block run's records as text for a terminal `columns` wide (`fsbench run`).
pub(crate) fn tables(records: &[Record], columns: usize) -> String {
    let mine: Vec<&Record> = records
        .iter()
        .filter(|r| Block.claims(r.workload_name()))
        .collect();
    let mut out = String::new();
    for s in sections(&mine) {
        if let Body::Table(g) = &s.body {
            out.push_str(&format!("{}\n{}\n", s.title, termtable::short(g, columns)));
        }
    }
    out
}

/// A target's rows, one per test (its read and write side by side), sums over repeats.
fn rows_of(mine: &[&&Record]) -> Vec<Row> {
    let mut rows: Vec<Row> = Vec::new();
    for r in mine {
        let base = r
            .test
            .strip_suffix("-read")
            .or_else(|| r.test.strip_suffix("-write"))
            .unwrap_or(&r.test)
            .to_string();
        let i = match rows.iter().position(|x| x.test == base) {
            Some(i) => i,
            None => {
                rows.push(Row {
                    test: base.clone(),
                    ..Default::default()
                });
                rows.len() - 1
            }
        };
        let row = &mut rows[i];
        if r.outcome != Outcome::Ok {
            row.note = r
                .error
                .clone()
                .or_else(|| r.reason.clone())
                .unwrap_or_default();
            continue;
        }
        let m = |k: &str| r.metrics.get(k).copied().unwrap_or(0.0);
        let mixed = m(metric::READ_IOS) > 0.0 && m(metric::WRITE_IOS) > 0.0;
        if m(metric::READ_IOS) > 0.0 {
            let p99 = r
                .metrics
                .get(if mixed {
                    "read_lat_p99_ns"
                } else {
                    metric::LAT_P99_NS
                })
                .copied();
            add(
                &mut row.read,
                (m(metric::READ_BYTES_PER_SEC), m(metric::READ_IOPS), p99),
            );
            row.reads += 1;
        }
        if m(metric::WRITE_IOS) > 0.0 {
            let p99 = r
                .metrics
                .get(if mixed {
                    "write_lat_p99_ns"
                } else {
                    metric::LAT_P99_NS
                })
                .copied();
            add(
                &mut row.write,
                (m(metric::WRITE_BYTES_PER_SEC), m(metric::WRITE_IOPS), p99),
            );
            row.writes += 1;
        }
        if note::has(&r.notes, note::Kind::PageCache) {
            row.note = "page cache".into();
        }
        add_note(&mut row.note, steady_note(r));
        if r.less_work().is_some() {
            row.note = format!("{} less work than asked", super::less::MARK);
        }
    }
    rows
}

/// One table of every target that ran block jobs, a target's rows together under its name
/// (one table, not one per target: a study of five targets is 25 rows, not 45 lines); none when
/// none did. A record without IOPS (skipped, or failed before its first I/O) has nothing for
/// the table: the table of the records no view shows lists it.
fn sections(records: &[&Record]) -> Vec<Section> {
    let measured: Vec<&Record> = records
        .iter()
        .copied()
        .filter(|r| r.metrics.contains_key("iops"))
        .collect();
    let mut lines = Vec::new();
    for target in targets(measured.iter().map(|r| r.target.as_str())) {
        let mine: Vec<&&Record> = measured.iter().filter(|r| r.target == target).collect();
        let fs = mine.first().map(|r| r.fs.as_str()).unwrap_or("");
        let rows = rows_of(&mine);
        for (k, mut row) in rows.into_iter().enumerate() {
            row.read = mean(row.read, row.reads);
            row.write = mean(row.write, row.writes);
            let pick = |x: &Option<Side>, f: &dyn Fn(&Side) -> String| {
                x.as_ref().map(f).unwrap_or_else(|| "-".into())
            };
            lines.push(vec![
                if k == 0 {
                    format!("{target} ({fs})")
                } else {
                    String::new()
                },
                row.test.clone(),
                pick(&row.read, &|x| format!("{:.1}", x.0 / 1e6)),
                pick(&row.write, &|x| format!("{:.1}", x.0 / 1e6)),
                pick(&row.read, &|x| format_count(x.1)),
                pick(&row.write, &|x| format_count(x.1)),
                pick(&row.read, &|x| x.2.map(format_ns).unwrap_or_default()),
                pick(&row.write, &|x| x.2.map(format_ns).unwrap_or_default()),
                row.note,
            ]);
        }
    }
    if lines.is_empty() {
        return Vec::new();
    }
    let header = [
        "target",
        "test",
        "read MB/s",
        "write MB/s",
        "read IOPS",
        "write IOPS",
        "read p99",
        "write p99",
        "note",
    ];
    vec![Section {
        title: "Block tests, per target (means over repeats)".into(),
        shown: Shown::TERMINAL,
        body: Body::Table(Grid {
            header: header.map(String::from).to_vec(),
            rows: lines,
            note: None,
            right: (2..8).collect(),
            // (The latencies go first, then the IOPS: MB/s says the same at a block size.)
            spare: vec![4, 5, 6, 7],
        }),
    }]
}

/// Whether a job that judged steady state reached it (fio's steadystate, --until-steady).
fn steady_note(r: &Record) -> Option<String> {
    let reached = *r.metrics.get(metric::STEADY_REACHED)?;
    Some(match r.metrics.get(metric::STEADY_AT_S) {
        Some(at) if reached > 0.0 => format!("steady at {at:.0} s"),
        _ => "not steady".to_string(),
    })
}

/// Adds a remark to a row's note once.
fn add_note(note: &mut String, more: Option<String>) {
    let Some(more) = more.filter(|m| !note.contains(m.as_str())) else {
        return;
    };
    if !note.is_empty() {
        note.push_str("; ");
    }
    note.push_str(&more);
}
