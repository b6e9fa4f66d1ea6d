//! bonnie++'s outputs from bonnie records: its CSV (format 1.98, the 50 fields bonnie++ 2.00a
//! writes, read by `bon_csv2txt` and `bon_csv2html`) and its familiar two-block text table.
//!
//! 2.00a's quirks kept: the chunk size field is empty for the default 8 KiB; the seek count and
//! seeker count follow it; a test measured in under 0.5 s prints `+++++` (its %CP `+++`), as
//! bonnie++ does, although the record keeps the figure; latencies carry their unit (`us`, `ms`).
//! The version field says `fsbench-VERSION`, not bonnie++'s.

use crate::metrics::name as metric;
use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::report::view::{Body, Section, Shown, Study, WorkloadView};
use crate::store::{Outcome, Record};
use crate::workload::bonnie::{DEF, TESTS};

/// bonnie++'s two blocks, under the title "bonnie++".
pub(crate) struct Bonnie;

impl WorkloadView for Bonnie {
    fn claims(&self, workload: &str) -> bool {
        workload == DEF.name
    }

    /// The short terminal report has one line per target (means over repeats, no latency
    /// lines): a study of five targets and three repeats is 15 lines, not 67. The others have a
    /// line per run with its latencies, as bonnie++ prints them.
    fn sections(&self, mine: &[&Record], _study: &Study) -> Vec<Section> {
        let every = text(mine, Latency::Shown);
        if every.is_empty() {
            return Vec::new();
        }
        let means = per_target(mine);
        let means: Vec<&Record> = means.iter().collect();
        vec![
            Section {
                title: "bonnie++".into(),
                shown: Shown::SHORT,
                body: Body::Text {
                    text: text(&means, Latency::Left),
                    legend: "fsbench's bonnie workload, means over repeats; + marks a test under 0.5 s; each run and its latencies: report.md, --full".into(),
                },
            },
            Section {
                title: "bonnie++".into(),
                shown: Shown::DETAIL,
                body: Body::Text {
                    text: every,
                    legend: "fsbench's bonnie workload, a line per run; + marks a test under 0.5 s".into(),
                },
            },
        ]
    }
}

/// Whether the text table has bonnie++'s latency line under each run.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Latency {
    Shown,
    Left,
}

/// One run per target standing for its repeats: each test's figures and CPU the means over the
/// repeats, marked under 0.5 s when any repeat was, its latency the largest.
fn per_target(records: &[&Record]) -> Vec<Record> {
    let mut out: Vec<Record> = Vec::new();
    let ok: Vec<&Record> = records
        .iter()
        .copied()
        .filter(|r| r.workload_name() == DEF.name && r.outcome == Outcome::Ok)
        .collect();
    for r in &ok {
        if out.iter().any(|m| m.target == r.target && m.test == r.test) {
            continue;
        }
        let same: Vec<&Record> = ok
            .iter()
            .copied()
            .filter(|x| x.target == r.target && x.test == r.test)
            .collect();
        let mut m = (*r).clone();
        m.repeat = 0;
        for (k, v) in m.metrics.iter_mut() {
            let all = same.iter().filter_map(|x| x.metrics.get(k).copied());
            *v = match k.as_str() {
                metric::TOO_FAST | "lat_max_ns" => all.fold(f64::MIN, f64::max),
                _ => crate::report::records::mean_of(&same, k).unwrap_or(*v),
            };
        }
        out.push(m);
    }
    out
}

/// One run of the battery: a target's records of one repeat, by test.
struct Run<'a> {
    target: &'a str,
    tests: BTreeMap<&'a str, &'a Record>,
}

fn runs<'a>(records: &[&'a Record]) -> Vec<Run<'a>> {
    let mut out: Vec<(String, u32, Run)> = Vec::new();
    for r in records
        .iter()
        .copied()
        .filter(|r| r.workload_name() == DEF.name && r.outcome == Outcome::Ok)
    {
        let i = match out
            .iter()
            .position(|(t, k, _)| *t == r.target && *k == r.repeat)
        {
            Some(i) => i,
            None => {
                out.push((
                    r.target.clone(),
                    r.repeat,
                    Run {
                        target: &r.target,
                        tests: BTreeMap::new(),
                    },
                ));
                out.len() - 1
            }
        };
        out[i].2.tests.insert(&r.test, r);
    }
    out.into_iter().map(|(_, _, r)| r).collect()
}

fn config(run: &Run) -> serde_json::Value {
    run.tests
        .values()
        .find_map(|r| r.config.clone())
        .unwrap_or_default()
}

fn cfg_u64(c: &serde_json::Value, k: &str) -> u64 {
    c.get(k).and_then(|v| v.as_u64()).unwrap_or(0)
}

/// bonnie++'s size field: whole GiB as `NG`, else MiB as `NM`.
fn size_field(bytes: u64) -> String {
    if bytes >= 1 << 30 && bytes % (1 << 30) == 0 {
        format!("{}G", bytes >> 30)
    } else {
        format!("{}M", bytes >> 20)
    }
}

/// A latency with its unit, the smallest that keeps it to five digits.
fn latency(ns: f64) -> String {
    if ns < 1000.0 {
        format!("{ns:.0}ns")
    } else if ns < 1e8 {
        format!("{:.0}us", ns / 1e3)
    } else if ns < 1e11 {
        format!("{:.0}ms", ns / 1e6)
    } else {
        format!("{:.0}s", ns / 1e9)
    }
}

/// (figure, %CP) as bonnie++ prints them: `+++++`/`+++` for a test under 0.5 s, empty if absent.
fn figure(r: Option<&&Record>, key: &str, decimals: usize) -> (String, String) {
    let Some(r) = r else {
        return (String::new(), String::new());
    };
    if r.metrics.get(metric::TOO_FAST).copied().unwrap_or(0.0) > 0.0 {
        return ("+++++".into(), "+++".into());
    }
    let v = r.metrics.get(key).copied().unwrap_or(0.0);
    let cpu = r.metrics.get(metric::CPU_PCT).copied().unwrap_or(0.0);
    (format!("{v:.decimals$}"), format!("{cpu:.0}"))
}

fn lat_of(r: Option<&&Record>) -> String {
    r.and_then(|r| r.metrics.get("lat_max_ns"))
        .map(|v| latency(*v))
        .unwrap_or_default()
}

/// One CSV line per (target, repeat).
pub(crate) fn csv(records: &[&Record]) -> String {
    let mut out = String::new();
    for run in runs(records) {
        let c = config(&run);
        let chunk = cfg_u64(&c, "chunk");
        let mut f: Vec<String> = vec![
            "1.98".into(),
            format!("fsbench-{}", env!("CARGO_PKG_VERSION")),
            run.target.replace(',', ";"),
            "1".into(),
            cfg_u64(&c, "seed").to_string(),
            size_field(cfg_u64(&c, "size")),
            match chunk {
                8192 => String::new(),
                c if c % 1024 == 0 => format!("{}k", c / 1024),
                c => c.to_string(),
            },
            cfg_u64(&c, "seeks").to_string(),
            cfg_u64(&c, "seekers").to_string(),
        ];
        for t in &TESTS[..6] {
            let (key, dec) = match *t {
                "seeks" => (metric::SEEKS_PER_SEC, 1),
                _ => (metric::KIB_PER_SEC, 0),
            };
            let (v, cpu) = figure(run.tests.get(t), key, dec);
            f.push(v);
            f.push(cpu);
        }
        let opt = |k: &str| match cfg_u64(&c, k) {
            0 => String::new(),
            v => v.to_string(),
        };
        f.push((cfg_u64(&c, "files") / 1024).to_string());
        f.extend([opt("max"), opt("min"), opt("dirs"), String::new()]);
        for t in &TESTS[6..] {
            let (v, cpu) = figure(run.tests.get(t), metric::FILES_PER_SEC, 0);
            f.push(v);
            f.push(cpu);
        }
        for t in TESTS {
            f.push(lat_of(run.tests.get(t)));
        }
        out.push_str(&f.join(","));
        out.push('\n');
    }
    out
}

/// K/s as bon_csv2txt shows it: `1727k`, `667m`, `1.2g`.
fn speed(v: &str) -> String {
    let Ok(k) = v.parse::<f64>() else {
        return v.to_string();
    };
    if k < 10000.0 {
        format!("{:4.0}k", k)
    } else if k / 1024.0 < 100.0 {
        format!("{:4.1}m", k / 1024.0)
    } else if k / 1024.0 < 1000.0 {
        format!("{:4.0}m", k / 1024.0)
    } else {
        format!("{:4.1}g", k / 1024.0 / 1024.0)
    }
}

fn name_col(name: &str, size: &str) -> String {
    if size.len() < 18 {
        let mut d: String = format!("{name}{}", " ".repeat(19))
            .chars()
            .take(18 - size.len())
            .collect();
        d.push(' ');
        d.push_str(size);
        format!("{d:>19}")
    } else {
        format!("{size:>19}")
    }
}

/// bonnie++'s two-block text table (as `bon_csv2txt` prints it), one line per run (with its
/// latency line under it, when shown).
fn text(records: &[&Record], latency: Latency) -> String {
    let lines: Vec<Vec<String>> = csv(records)
        .lines()
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect();
    if lines.is_empty() {
        return String::new();
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Version {:>9}   ------Sequential Output------ --Sequential Input- --Random-",
        // (bonnie++'s 9 columns: its own version there; fsbench's is in the study's manifest.)
        "fsbench"
    );
    out.push_str(
        "                    -Per Chr- --Block-- -Rewrite- -Per Chr- --Block-- --Seeks--\n",
    );
    out.push_str(
        "Name:Size etc        /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP\n",
    );
    for a in &lines {
        let size = a[5..9].join(":").trim_end_matches(':').to_string();
        let mut row = name_col(&a[2], &size);
        for i in 0..6 {
            let v = &a[9 + 2 * i];
            let shown = if i < 5 { speed(v) } else { v.clone() };
            let _ = write!(row, " {:>5} {:>3}", shown, a[10 + 2 * i]);
        }
        let _ = writeln!(out, "{row}");
        if latency == Latency::Left {
            continue;
        }
        let _ = writeln!(
            out,
            "Latency           {}",
            a[38..44]
                .iter()
                .map(|x| format!("{x:>9}"))
                .collect::<Vec<_>>()
                .join(" ")
        );
    }
    out.push_str(
        "                    ------Sequential Create------ --------Random Create--------\n",
    );
    out.push_str(
        "                    -Create-- --Read--- -Delete-- -Create-- --Read--- -Delete--\n",
    );
    out.push_str(
        "      files:max:min  /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP\n",
    );
    for a in &lines {
        let mut files = a[21].clone();
        for (i, sep) in [(22, ":"), (23, ":"), (24, "/")] {
            if !a[i].is_empty() {
                files.push_str(sep);
                files.push_str(&a[i]);
            }
        }
        let mut row = name_col(&a[2], &files);
        for i in 0..6 {
            let _ = write!(row, " {:>5} {:>3}", a[26 + 2 * i], a[27 + 2 * i]);
        }
        let _ = writeln!(out, "{row}");
        if latency == Latency::Left {
            continue;
        }
        let _ = writeln!(
            out,
            "Latency           {}",
            a[44..50]
                .iter()
                .map(|x| format!("{x:>9}"))
                .collect::<Vec<_>>()
                .join(" ")
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(test: &str, metrics: &[(&str, f64)]) -> Record {
        let mut p = crate::store::Phase {
            test: test.into(),
            started_at: "t".into(),
            ..Default::default()
        };
        for (k, v) in metrics {
            p.metrics.insert(k.to_string(), *v);
        }
        p.config = Some(
            serde_json::json!({"size": 1u64 << 30, "chunk": 8192, "seeks": 8192,
            "seekers": 5, "files": 16384, "max": 0, "min": 0, "dirs": 0, "seed": 42}),
        );
        let key = crate::store::RecordKey {
            target: "ext4",
            fs: "ext4",
            workload: "bonnie",
            repeat: 0,
        };
        crate::store::Record::from_phase(&key, p)
    }

    #[test]
    fn csv_has_bonnies_fifty_fields_and_text_its_two_blocks() {
        let mut rs = Vec::new();
        for &t in TESTS {
            let key = match t {
                "seeks" => "seeks_per_sec",
                t if t.contains('_') && !t.contains("block") => "files_per_sec",
                _ => "kib_per_sec",
            };
            let fast = if t == "seq_stat" { 1.0 } else { 0.0 };
            rs.push(rec(
                t,
                &[
                    (key, 1234.5),
                    ("cpu_pct", 42.0),
                    ("too_fast", fast),
                    ("lat_max_ns", 8_759_000.0),
                ],
            ));
        }
        let rs: Vec<&Record> = rs.iter().collect();
        let line = csv(&rs);
        let f: Vec<&str> = line.trim_end().split(',').collect();
        assert_eq!(f.len(), 50, "{line}");
        assert_eq!(
            &f[..9],
            [
                "1.98",
                &format!("fsbench-{}", env!("CARGO_PKG_VERSION")),
                "ext4",
                "1",
                "42",
                "1G",
                "",
                "8192",
                "5"
            ]
        );
        assert_eq!((f[9], f[10]), ("1234", "42"), "putc K/s and %CP");
        assert_eq!(f[19], "1234.5", "seeks/s with one decimal");
        assert_eq!(f[21], "16", "files in units of 1024");
        assert_eq!((f[28], f[29]), ("+++++", "+++"), "a test under 0.5 s");
        assert_eq!(f[38], "8759us");
        let t = text(&rs, Latency::Shown);
        assert!(
            t.contains("-Per Chr- --Block-- -Rewrite-")
                && t.contains("-Create-- --Read--- -Delete--")
        );
        assert!(t.contains("1234k  42"), "{t}");
    }
}
