//! The iozone workload's views: per target the matrix of a test (file size x record size) with
//! the ratio-to-baseline matrix beside it (the iozone ratio study's view), the HTML heat-maps of the ratio
//! surface, the throughput-mode table, and iozone's `-R` text tables (`--format iozone`), which
//! the iozone graphing scripts read. Means over repeats. Pure.

use crate::metrics::name as metric;
use crate::store::note;
use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::report::markup::esc;
use crate::report::records::targets;
use crate::report::view::{Body, Section, Shown, Statistics, Study, WorkloadView};
use crate::store::{Outcome, Record};
use crate::workload::iozone::{NAME, TESTS};

/// The matrices, in a layout of each format's own.
pub(crate) struct IozoneView;

impl WorkloadView for IozoneView {
    fn claims(&self, workload: &str) -> bool {
        workload == NAME
    }

    /// Hundreds of cells per target would drown the statistics rows and the ratio matrix.
    fn statistics(&self) -> Statistics {
        Statistics::Exported
    }

    fn sections(&self, mine: &[&Record], study: &Study) -> Vec<Section> {
        let z = Iozone::collect(mine.iter().copied());
        if z.is_empty() {
            return Vec::new();
        }
        vec![Section {
            title: "iozone".into(),
            shown: Shown::BRIEF,
            body: Body::Own {
                term: term(&z, study.baseline, study.width, study.color),
                md: markdown(&z, study.baseline),
                html: html(&z, study.baseline),
            },
        }]
    }

    fn warnings(&self, mine: &[&Record]) -> Vec<String> {
        warnings(mine.iter().copied())
    }
}

/// The headline tests of the terminal view, one matrix each.
const HEADLINES: [&str; 4] = ["write", "read", "random_read", "random_write"];

/// (file bytes, record bytes) -> KiB/s of each repeat.
type Cells = BTreeMap<(u64, u64), Vec<f64>>;

/// A study's iozone figures: per target, per test, the cells; and throughput-mode records.
#[derive(Default)]
pub(crate) struct Iozone {
    targets: Vec<String>,
    /// Per test, per target: the cells.
    matrix: BTreeMap<&'static str, BTreeMap<String, Cells>>,
    throughput: Vec<Record>,
}

fn is_iozone(r: &Record) -> bool {
    r.workload_name() == NAME
}

fn cfg(r: &Record, k: &str) -> u64 {
    r.config
        .as_ref()
        .and_then(|c| c.get(k))
        .and_then(|v| v.as_u64())
        .unwrap_or(0)
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

/// A size in KiB as iozone's tables and fsbench's names write it (64K, 512M).
fn label(bytes: u64) -> String {
    crate::workload::iozone::size_label(bytes)
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
                .entry((cfg(r, "file_size"), cfg(r, "record_size")))
                .or_default()
                .push(*v);
        }
        z
    }

    fn is_empty(&self) -> bool {
        self.targets.is_empty()
    }

    fn cells(&self, target: &str, test: &str) -> Option<&Cells> {
        self.matrix.get(test)?.get(target)
    }

    /// The file sizes (rows) and record sizes (columns) of a test over all targets.
    fn axes(&self, test: &str) -> (Vec<u64>, Vec<u64>) {
        let mut files: Vec<u64> = Vec::new();
        let mut records: Vec<u64> = Vec::new();
        for cells in self.matrix.get(test).into_iter().flat_map(|m| m.values()) {
            for (f, r) in cells.keys() {
                files.push(*f);
                records.push(*r);
            }
        }
        files.sort_unstable();
        files.dedup();
        records.sort_unstable();
        records.dedup();
        (files, records)
    }

    /// The ratio of a target's cell to the baseline's (means over repeats).
    #[cfg(test)]
    fn ratio(&self, target: &str, baseline: &str, test: &str, cell: (u64, u64)) -> Option<f64> {
        ratio_of(self.cells(target, test)?, self.cells(baseline, test)?, cell)
    }

    /// Every (test, target) matrix of `tests`, in order, with the test's axes (file sizes, record
    /// sizes) over all targets and the baseline's cells to divide by.
    fn each<'a>(&'a self, tests: &[&'static str], baseline: &str) -> Vec<Matrix<'a>> {
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
    fn tests(&self) -> Vec<&'static str> {
        TESTS
            .iter()
            .map(|t| t.name)
            .filter(|n| self.matrix.contains_key(n))
            .collect()
    }
}

fn ratio_of(cells: &Cells, base: &Cells, cell: (u64, u64)) -> Option<f64> {
    let (a, b) = (mean(cells.get(&cell)?), mean(base.get(&cell)?));
    (b > 0.0).then(|| a / b)
}

/// One test's figures on one target, with the axes of the test and, for a target other than
/// the baseline, the baseline's cells.
struct Matrix<'a> {
    test: &'static str,
    target: &'a String,
    cells: &'a Cells,
    base: Option<&'a Cells>,
    files: Vec<u64>,
    records: Vec<u64>,
}

impl Matrix<'_> {
    fn ratio(&self, cell: (u64, u64)) -> Option<f64> {
        ratio_of(self.cells, self.base?, cell)
    }
}

/// A grid of text: a corner label, column heads, one row per file size.
fn grid(
    corner: &str,
    cols: &[u64],
    rows: &[u64],
    cell: &dyn Fn(u64, u64) -> Option<String>,
) -> Vec<String> {
    let mut out = vec![format!(
        "{corner:>6}{}",
        cols.iter()
            .map(|c| format!("{:>7}", label(*c)))
            .collect::<String>()
    )];
    for f in rows {
        let mut line = format!("{:>6}", label(*f));
        for r in cols {
            let text = cell(*f, *r).unwrap_or_default();
            line.push_str(&" ".repeat(7usize.saturating_sub(visible_len(&text))));
            line.push_str(&text);
        }
        out.push(line.trim_end().to_string());
    }
    out
}

/// Characters a terminal shows: colour codes take no room.
fn visible_len(s: &str) -> usize {
    let mut n = 0;
    let mut in_code = false;
    for c in s.chars() {
        match (in_code, c) {
            (false, '\x1b') => in_code = true,
            (true, 'm') => in_code = false,
            (false, _) => n += 1,
            _ => {}
        }
    }
    n
}

fn colored(x: f64, color: bool) -> String {
    let s = format!("{x:.2}");
    match (color, x) {
        (true, x) if x > 1.0 => format!("\x1b[32m{s}\x1b[0m"),
        (true, x) if x < 1.0 => format!("\x1b[31m{s}\x1b[0m"),
        _ => s,
    }
}

/// Two blocks of lines side by side, or one under the other when they do not fit `width`.
fn beside(a: Vec<String>, b: Vec<String>, width: usize) -> String {
    let wa = a.iter().map(|l| visible_len(l)).max().unwrap_or(0);
    let wb = b.iter().map(|l| visible_len(l)).max().unwrap_or(0);
    if b.is_empty() {
        return a.join("\n") + "\n";
    }
    if wa + 4 + wb > width {
        return a.join("\n") + "\n\n" + &b.join("\n") + "\n";
    }
    let n = a.len().max(b.len());
    (0..n)
        .map(|i| {
            let l = a.get(i).map(String::as_str).unwrap_or("");
            let pad = wa + 4 - visible_len(l);
            format!(
                "{l}{}{}\n",
                " ".repeat(pad),
                b.get(i).map(String::as_str).unwrap_or("")
            )
        })
        .collect()
}

/// The terminal view: per headline test and target, MiB/s per cell (iozone's KiB/s / 1024)
/// and, for targets other than the baseline, the ratio to it beside (green above 1, red below,
/// when `color`); then the throughput-mode table.
fn term(z: &Iozone, baseline: &str, width: usize, color: bool) -> String {
    let mut out = String::new();
    let headlines: Vec<&'static str> = HEADLINES
        .iter()
        .copied()
        .filter(|t| z.tests().contains(t))
        .collect();
    for m in z.each(&headlines, baseline) {
        let (test, target) = (m.test, m.target);
        let values = grid("MiB/s", &m.records, &m.files, &|f, r| {
            m.cells
                .get(&(f, r))
                .map(|v| format!("{:.0}", mean(v) / 1024.0))
        });
        let ratios = match m.base {
            Some(_) => grid("ratio", &m.records, &m.files, &|f, r| {
                m.ratio((f, r)).map(|x| colored(x, color))
            }),
            None => Vec::new(),
        };
        let _ = writeln!(
            out,
            "iozone {test} on {target}: rows file size, columns record size{}",
            if ratios.is_empty() {
                String::new()
            } else {
                format!("; beside, the ratio to {baseline} (above 1 is faster)")
            }
        );
        out.push_str(&beside(values, ratios, width));
        out.push('\n');
    }
    out.push_str(&throughput_table(z));
    out
}

fn throughput_table(z: &Iozone) -> String {
    if z.throughput.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "iozone throughput mode (KiB/s; children see = sum of the workers' rates, parent sees = all bytes / wall time)\n",
    );
    let _ = writeln!(
        out,
        "{:<16} {:<14} {:>14} {:>14} {:>12} {:>12} {:>12}",
        "test", "target", "children see", "parent sees", "min", "max", "avg"
    );
    let mut groups: Vec<(&str, &str, Vec<&Record>)> = Vec::new();
    for r in &z.throughput {
        match groups.iter_mut().find(|g| g.0 == r.test && g.1 == r.target) {
            Some(g) => g.2.push(r),
            None => groups.push((&r.test, &r.target, vec![r])),
        }
    }
    for (test, target, rs) in groups {
        let m = |k: &str| {
            let v: Vec<f64> = rs
                .iter()
                .filter_map(|r| r.metrics.get(k).copied())
                .collect();
            format!("{:.0}", mean(&v))
        };
        let _ = writeln!(
            out,
            "{test:<16} {target:<14} {:>14} {:>14} {:>12} {:>12} {:>12}",
            m(metric::CHILDREN_KIB_PER_SEC),
            m(metric::PARENT_KIB_PER_SEC),
            m(metric::MIN_KIB_PER_SEC),
            m(metric::MAX_KIB_PER_SEC),
            m(metric::AVG_KIB_PER_SEC)
        );
    }
    out + "\n"
}

/// Markdown: every test's matrix per target (KiB/s, as iozone) and its ratio matrix.
fn markdown(z: &Iozone, baseline: &str) -> String {
    let mut out = String::new();
    if z.is_empty() {
        return out;
    }
    out.push_str("## iozone\n\nKiB/s per cell (rows file size, columns record size), means over repeats; the ratio tables divide by the baseline's cell.\n\n");
    for m in z.each(&z.tests(), baseline) {
        let (test, target) = (m.test, m.target);
        let head: Vec<String> = m.records.iter().map(|r| label(*r)).collect();
        let table = |title: String, cell: &dyn Fn(u64, u64) -> Option<String>| {
            let mut t = format!(
                "{title}\n\n| file | {} |\n|---|{}\n",
                head.join(" | "),
                "---|".repeat(head.len())
            );
            for f in &m.files {
                let row: Vec<String> = m
                    .records
                    .iter()
                    .map(|r| cell(*f, *r).unwrap_or_default())
                    .collect();
                let _ = writeln!(t, "| {} | {} |", label(*f), row.join(" | "));
            }
            t + "\n"
        };
        out.push_str(&table(
            format!("### {test} on {target} (KiB/s)"),
            &|f, r| m.cells.get(&(f, r)).map(|v| format!("{:.0}", mean(v))),
        ));
        if m.base.is_some() {
            out.push_str(&table(
                format!("### {test} on {target}, ratio to {baseline}"),
                &|f, r| m.ratio((f, r)).map(|x| format!("{x:.2}")),
            ));
        }
    }
    let tp = throughput_table(z);
    if !tp.is_empty() {
        let _ = write!(out, "```text\n{tp}```\n\n");
    }
    out
}

/// A ratio's background: white at 1, greener above, redder below (log scale, full at 2x).
fn shade(x: f64) -> String {
    let t = (x.max(1e-9).log2().clamp(-1.0, 1.0) * 150.0) as i32;
    if t >= 0 {
        format!("rgb({},{},{})", 255 - t, 255, 255 - t)
    } else {
        format!("rgb({},{},{})", 255, 255 + t, 255 + t)
    }
}

/// HTML: one heat-map per test and target of the ratio surface (the value in each cell, both
/// KiB/s figures on hover); the baseline's own matrix when it is the only target.
fn html(z: &Iozone, baseline: &str) -> String {
    let mut out = String::new();
    if z.is_empty() {
        return out;
    }
    out.push_str("<h2>iozone</h2><p class=\"note\">Rows file size, columns record size. Each cell is the target's KiB/s over the baseline's (green above 1, red below); hover for both figures.</p>");
    for m in z.each(&z.tests(), baseline) {
        let (test, target) = (m.test, m.target);
        let vs_base = m.base.is_some();
        if !vs_base && z.targets.len() > 1 {
            continue;
        }
        let _ = write!(
            out,
            "<h3>{} on {}{}</h3><table class=\"iozone heat\"><tr><th>file \\ record</th>",
            esc(test),
            esc(target),
            if vs_base {
                format!(", ratio to {}", esc(baseline))
            } else {
                " (KiB/s)".into()
            }
        );
        for r in &m.records {
            let _ = write!(out, "<th>{}</th>", label(*r));
        }
        out.push_str("</tr>");
        for f in &m.files {
            let _ = write!(out, "<tr><th>{}</th>", label(*f));
            for r in &m.records {
                let v = m.cells.get(&(*f, *r)).map(|v| mean(v));
                let b = m.base.and_then(|c| c.get(&(*f, *r))).map(|v| mean(v));
                match (v, b, vs_base) {
                    (Some(v), Some(b), true) if b > 0.0 => {
                        let x = v / b;
                        let _ = write!(
                            out,
                            "<td style=\"background:{}\" title=\"{target}: {v:.0} KiB/s; {baseline}: {b:.0} KiB/s\">{x:.2}</td>",
                            shade(x),
                            target = esc(target),
                            baseline = esc(baseline)
                        );
                    }
                    (Some(v), _, false) => {
                        let _ = write!(out, "<td>{v:.0}</td>");
                    }
                    _ => out.push_str("<td></td>"),
                }
            }
            out.push_str("</tr>");
        }
        out.push_str("</table>");
    }
    let tp = throughput_table(z);
    if !tp.is_empty() {
        let _ = write!(out, "<pre>{}</pre>", esc(&tp));
    }
    out
}

/// iozone's `-R` text: per target, one block per test (a record-size header row, one row per
/// file size, 0 in the cells the matrix skipped), KiB/s as whole numbers; and the throughput
/// mode's children/parent lines.
pub(crate) fn r_text(z: &Iozone) -> String {
    let mut out = String::new();
    for target in &z.targets {
        let tests: Vec<&'static str> = z
            .tests()
            .into_iter()
            .filter(|t| z.cells(target, t).is_some())
            .collect();
        if !tests.is_empty() {
            let _ = writeln!(
                out,
                "fsbench iozone: target {target}, means over repeats\nExcel output is below:\n"
            );
        }
        for test in tests {
            let Some(cells) = z.cells(target, test) else {
                continue;
            };
            let (files, records) = z.axes(test);
            let title = TESTS
                .iter()
                .find(|t| t.name == test)
                .map_or("", |t| t.report);
            let _ = writeln!(out, "\"{title}\"");
            out.push_str("        ");
            for r in &records {
                let _ = write!(out, "\"{}\"  ", r / 1024);
            }
            out.push('\n');
            for f in &files {
                let _ = write!(out, "\"{}\"   ", f / 1024);
                for r in records.iter().filter(|r| *r <= f) {
                    let v = cells.get(&(*f, *r)).map_or(0.0, |v| mean(v));
                    let _ = write!(out, "{v:.0}  ");
                }
                out.push('\n');
            }
            out.push('\n');
        }
        for r in z.throughput.iter().filter(|r| &r.target == target) {
            let name = r.test.as_str();
            let actors = TESTS
                .iter()
                .find(|t| t.name == name)
                .map_or(name, |t| t.actors);
            let n = cfg(r, "threads");
            let m = |k: &str| r.metrics.get(k).copied().unwrap_or(0.0);
            let _ = write!(
                out,
                "\tChildren see throughput for {n:>2} {actors}\t= {:>12.2} kB/sec\n\tParent sees throughput for {n:>2} {actors}\t= {:>12.2} kB/sec\n\tMin throughput per process\t\t\t= {:>12.2} kB/sec\n\tMax throughput per process\t\t\t= {:>12.2} kB/sec\n\tAvg throughput per process\t\t\t= {:>12.2} kB/sec\n\n",
                m(metric::CHILDREN_KIB_PER_SEC),
                m(metric::PARENT_KIB_PER_SEC),
                m(metric::MIN_KIB_PER_SEC),
                m(metric::MAX_KIB_PER_SEC),
                m(metric::AVG_KIB_PER_SEC)
            );
        }
    }
    out
}

/// One block of `-R` text read back: title, record sizes (KiB), rows of (file KiB, values).
#[cfg(test)]
type RBlock = (String, Vec<u64>, Vec<(u64, Vec<u64>)>);

/// Reads `-R` text (iozone's or fsbench's) back into its blocks.
#[cfg(test)]
fn parse_r(text: &str) -> Vec<RBlock> {
    let mut out: Vec<RBlock> = Vec::new();
    let unquote = |s: &str| s.trim_matches('"').parse::<u64>().ok();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let t = line.trim();
        if !(t.starts_with('"') && t.ends_with("report\"")) {
            continue;
        }
        let title = t.trim_matches('"').to_string();
        let head: Vec<u64> = lines
            .next()
            .unwrap_or("")
            .split_whitespace()
            .filter_map(unquote)
            .collect();
        let mut rows = Vec::new();
        while let Some(l) = lines.peek() {
            let mut parts = l.split_whitespace();
            let Some(file) = parts.next().and_then(unquote) else {
                break;
            };
            rows.push((file, parts.filter_map(|v| v.parse().ok()).collect()));
            lines.next();
        }
        out.push((title, head, rows));
    }
    out
}

/// One line per target whose iozone cells measured the page cache, or ran too fast to trust.
fn warnings<'a>(records: impl IntoIterator<Item = &'a Record>) -> Vec<String> {
    let mut per: Vec<(String, usize, usize, usize)> = Vec::new();
    for r in records
        .into_iter()
        .filter(|r| is_iozone(r) && r.outcome == Outcome::Ok)
    {
        let i = match per.iter().position(|p| p.0 == r.target) {
            Some(i) => i,
            None => {
                per.push((r.target.clone(), 0, 0, 0));
                per.len() - 1
            }
        };
        per[i].1 += 1;
        if note::has(&r.notes, note::Kind::PageCache) {
            per[i].2 += 1;
        }
        if note::has(&r.notes, note::Kind::TooFast) {
            per[i].3 += 1;
        }
    }
    let mut out = Vec::new();
    for (target, n, cached, fast) in per {
        if cached > 0 {
            out.push(format!(
                "iozone on {target}: {cached} of {n} figures measure the page cache (files smaller than RAM, or tmpfs): set direct=1 or purge=1 for the device's figures"
            ));
        }
        if fast > 0 {
            out.push(format!(
                "iozone on {target}: {fast} of {n} figures took under 1 ms: the small cells are noisy, as in iozone"
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests;
