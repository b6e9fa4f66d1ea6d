//! What limited a target's figures, from its records' limiters (decided when each phase ran,
//! `metrics::limiter`): the most common kind over a set of records, said short for the verdict
//! and the tables, and the warnings a reader needs (ratios across different limits, figures that
//! measure fsbench, interfered repeats). Pure.

use crate::metrics::limiter::{Limit, Limiter};
use crate::store::{note, Outcome, Record};

use super::warnings::Warning;

/// The limiter of a set of records: the most common kind, with one record of that kind's
/// limiter, and how many of the records it holds for.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Held {
    pub(crate) kind: Limit,
    pub(crate) limiter: Limiter,
    pub(crate) of: usize,
    pub(crate) total: usize,
}

impl Held {
    /// `device: loop1 97% busy`: the kind and what it names; `mixed (device or waiting)` for a
    /// limiter the evidence did not decide.
    pub(crate) fn short(&self) -> String {
        short(&self.limiter)
    }
}

/// A limiter in a few words: its kind and its headline (the kind alone on records made before
/// limiters had one).
pub(crate) fn short(l: &Limiter) -> String {
    match l.between.as_slice() {
        [a, b] if l.kind == Limit::Mixed => format!("mixed ({a} or {b})"),
        _ if l.headline.is_empty() => l.kind.to_string(),
        _ => format!("{}: {}", l.kind, l.headline),
    }
}

/// The measured records (ok) that carry a limiter.
fn judged<'a>(records: impl IntoIterator<Item = &'a Record>) -> Vec<&'a Limiter> {
    records
        .into_iter()
        .filter(|r| r.outcome == Outcome::Ok)
        .filter_map(|r| r.limiter.as_ref())
        .collect()
}

/// The most common limiter of `records` (ties go to the kind seen first), None when none
/// carries one (studies recorded before limiters existed).
pub(crate) fn held<'a>(records: impl IntoIterator<Item = &'a Record>) -> Option<Held> {
    let ls = judged(records);
    let mut counts: Vec<(Limit, usize, &Limiter)> = Vec::new();
    for l in &ls {
        match counts.iter_mut().find(|c| c.0 == l.kind) {
            Some(c) => c.1 += 1,
            None => counts.push((l.kind, 1, l)),
        }
    }
    let best = counts
        .iter()
        .enumerate()
        .max_by(|a, b| a.1 .1.cmp(&b.1 .1).then(b.0.cmp(&a.0)))?
        .1;
    Some(Held {
        kind: best.0,
        limiter: best.2.clone(),
        of: best.1,
        total: ls.len(),
    })
}

/// A target's limiter in one workload.
pub(crate) fn of_target(records: &[Record], target: &str, workload: &str) -> Option<Held> {
    held(
        records
            .iter()
            .filter(|r| r.target == target && r.workload_name() == workload),
    )
}

/// The table "What limited each result": a row per target, a column per workload; each cell
/// the most common limiter over its tests and repeats (with how many held it when not all).
pub(crate) fn table(records: &[Record]) -> Option<(Vec<String>, Vec<Vec<String>>)> {
    let mut targets: Vec<&str> = Vec::new();
    let mut workloads: Vec<&str> = Vec::new();
    for r in records.iter().filter(|r| r.limiter.is_some()) {
        if !targets.contains(&r.target.as_str()) {
            targets.push(&r.target);
        }
        if !workloads.contains(&r.workload_name()) {
            workloads.push(r.workload_name());
        }
    }
    if targets.is_empty() {
        return None;
    }
    let mut header = vec!["target".to_string()];
    header.extend(workloads.iter().map(|w| w.to_string()));
    let rows = targets
        .iter()
        .map(|t| {
            let mut row = vec![t.to_string()];
            for w in &workloads {
                row.push(match of_target(records, t, w) {
                    Some(h) if h.of == h.total => h.short(),
                    Some(h) => format!("{} ({} of {})", h.short(), h.of, h.total),
                    None => "-".into(),
                });
            }
            row
        })
        .collect();
    Some((header, rows))
}

/// The warnings about limits: per workload, targets limited by different things; figures that
/// measure fsbench's CPU; repeats other processes disturbed.
pub(crate) fn warnings(records: &[Record]) -> Vec<Warning> {
    let mut out = Vec::new();
    let mut workloads: Vec<&str> = Vec::new();
    for r in records {
        if !workloads.contains(&r.workload_name()) {
            workloads.push(r.workload_name());
        }
    }
    let mut apart = Vec::new();
    for w in &workloads {
        let mut kinds: Vec<(String, Limit)> = Vec::new();
        for r in records.iter().filter(|r| r.workload_name() == *w) {
            if kinds.iter().any(|k| k.0 == r.target) {
                continue;
            }
            if let Some(h) = of_target(records, &r.target, w) {
                kinds.push((r.target.clone(), h.kind));
            }
        }
        let first = kinds.first().map(|k| k.1);
        if kinds.iter().any(|k| Some(k.1) != first) {
            let said: Vec<String> = kinds.iter().map(|(t, k)| format!("{t} {k}")).collect();
            apart.push(format!("{w}: {}", said.join(", ")));
        }
    }
    if !apart.is_empty() {
        out.push(Warning {
            text: format!(
                "targets limited by different things: a ratio between them compares different limits, not the filesystems alone ({})",
                apart.join("; ")
            ),
            details: apart,
        });
    }
    let bench: Vec<String> = records
        .iter()
        .filter(|r| r.outcome == Outcome::Ok)
        .filter(|r| {
            r.limiter
                .as_ref()
                .is_some_and(|l| l.kind == Limit::BenchmarkCpu)
        })
        .map(|r| format!("{} {} repeat {}", r.target, r.test, r.repeat + 1))
        .collect();
    if !bench.is_empty() {
        out.push(Warning {
            text: format!(
                "{} figure(s) measure fsbench's own CPU, not the filesystem (benchmark-cpu): use more jobs or a slower device",
                bench.len()
            ),
            details: bench,
        });
    }
    let disturbed: Vec<String> = records
        .iter()
        .filter_map(|r| {
            let n = note::find(&r.notes, note::Kind::Interference)?;
            Some(format!(
                "{} {} repeat {}: {}",
                r.target,
                r.test,
                r.repeat + 1,
                note::text(n)
            ))
        })
        .collect();
    if !disturbed.is_empty() {
        out.push(Warning {
            text: format!(
                "{} record(s) were disturbed by other processes (interference): run again on a quiet machine, or with --retry-interfered",
                disturbed.len()
            ),
            details: disturbed,
        });
    }
    out
}

/// Each measured record's limiter and evidence, for the JSON report (None when no record
/// carries one).
pub(crate) fn json(records: &[Record]) -> Option<serde_json::Value> {
    let v: Vec<serde_json::Value> = records
        .iter()
        .filter(|r| r.limiter.is_some())
        .map(|r| {
            serde_json::json!({
                "target": r.target,
                "workload": r.workload,
                "test": r.test,
                "repeat": r.repeat,
                "limiter": r.limiter,
                "evidence": r.evidence,
            })
        })
        .collect();
    (!v.is_empty()).then_some(serde_json::Value::Array(v))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::limiter::Limiter;

    fn rec(target: &str, repeat: u32, kind: Limit, headline: &str) -> Record {
        let mut r: Record = serde_json::from_value(serde_json::json!({
            "schema": 1, "target": target, "fs": target, "workload": "block", "test": "t",
            "repeat": repeat, "started_at": "", "duration_s": 1.0, "outcome": "ok",
            "metrics": {"iops": 100.0}
        }))
        .unwrap();
        r.limiter = Some(Limiter {
            kind,
            rule: format!("{kind}: {headline}, and more"),
            between: if kind == Limit::Mixed {
                vec![Limit::Device, Limit::Waiting]
            } else {
                Vec::new()
            },
            headline: headline.into(),
            device: None,
        });
        r
    }

    #[test]
    fn the_most_common_limiter_holds_and_is_said_short() {
        let rs = vec![
            rec("ext4", 0, Limit::Device, "loop0 97% busy"),
            rec("ext4", 1, Limit::Device, "loop0 95% busy"),
            rec("ext4", 2, Limit::Mixed, ""),
            rec("tmpfs", 0, Limit::KernelCpu, "worker 0 99% busy"),
        ];
        let h = of_target(&rs, "ext4", "block").unwrap();
        assert_eq!((h.kind, h.of, h.total), (Limit::Device, 2, 3));
        assert_eq!(h.short(), "device: loop0 97% busy");
        let (header, rows) = table(&rs).unwrap();
        assert_eq!(header, ["target", "block"]);
        assert_eq!(rows[0], ["ext4", "device: loop0 97% busy (2 of 3)"]);
        assert_eq!(rows[1], ["tmpfs", "kernel-cpu: worker 0 99% busy"]);
        let w = warnings(&rs);
        assert!(w[0].text.contains("compares different limits"), "{:?}", w);
        assert!(
            w[0].text.contains("ext4 device, tmpfs kernel-cpu"),
            "{:?}",
            w
        );
        let mixed = held([&rs[2]]).unwrap();
        assert_eq!(mixed.short(), "mixed (device or waiting)");
    }

    #[test]
    fn benchmark_cpu_figures_and_interference_are_warned_of() {
        let mut a = rec(
            "null",
            0,
            Limit::BenchmarkCpu,
            "benchmark-cpu: worker 0 100% busy",
        );
        a.notes.push(note::make(
            note::Kind::Interference,
            "other processes took 1.9 of 2 CPUs",
        ));
        let w = warnings(&[a]);
        assert!(
            w.iter()
                .any(|x| x.text.contains("measure fsbench's own CPU")),
            "{w:?}"
        );
        assert!(
            w.iter()
                .any(|x| x.text.contains("disturbed by other processes")),
            "{w:?}"
        );
        assert!(warnings(&[rec("x", 0, Limit::Device, "d")]).is_empty());
    }
}
