//! The regression gate of `fsbench check`: for each headline figure two studies share, the ratio
//! NEW/OLD with its 95% interval from the repeats of both on the log scale (`stats::ratio`, as
//! the report's ratios), judged against a tolerance: regressed when the whole interval lies below
//! 1 - tolerance, improved when above 1 + tolerance, else unchanged. With one repeat on a side
//! the repeats cannot tell noise from change: the history's spread of the figure on the same
//! fingerprint stands in when there is one, else the figure is undecided. Pure: the figures come
//! in as data, the verdicts go out as text, JSON or JUnit XML.

use std::collections::BTreeMap;
use std::fmt::Write;

use serde::Serialize;

use super::markup::esc;
use super::stats::{self, LEVEL};
use crate::metrics::limiter::Limit;
use crate::plan::workload::{job_of, WorkloadSpec};
use crate::store::{Manifest, Outcome, Record, Status};

/// A figure: target, job (`WorkloadSpec::canonical`: two block jobs are two figures, never
/// one `block`), test and its headline metric.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub(crate) struct Key {
    pub(crate) target: String,
    pub(crate) workload: String,
    pub(crate) test: String,
    pub(crate) metric: String,
}

impl std::fmt::Display for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(
            f,
            "{} {}/{} {}",
            self.target, self.workload, self.test, self.metric
        )
    }
}

/// The headline figures of a study's records, keyed by their job in the plan's `workloads`,
/// one value per repeat (the mean of a repeat's records, which is one record in every workload
/// but a multi-job block file). Failed and skipped records, and those that did less work than
/// asked, are left out.
pub(crate) fn figures(records: &[Record], workloads: &[WorkloadSpec]) -> BTreeMap<Key, Vec<f64>> {
    let mut per: BTreeMap<(Key, u32), Vec<f64>> = BTreeMap::new();
    for r in records {
        if r.outcome != Outcome::Ok || r.less_work().is_some() {
            continue;
        }
        let Some((m, v)) = crate::metrics::catalog::HEADLINES
            .iter()
            .find_map(|m| r.metrics.get(*m).map(|v| (*m, *v)))
        else {
            continue;
        };
        let key = Key {
            target: r.target.clone(),
            workload: job_of(workloads, &r.workload),
            test: r.test.clone(),
            metric: m.to_string(),
        };
        per.entry((key, r.repeat)).or_default().push(v);
    }
    let mut out: BTreeMap<Key, Vec<f64>> = BTreeMap::new();
    for ((k, _), vs) in per {
        out.entry(k)
            .or_default()
            .push(vs.iter().sum::<f64>() / vs.len() as f64);
    }
    out
}

/// The limiter of each figure: the most common over its records (none for records that carry
/// none), keyed as `figures` keys them.
pub(crate) fn limits(records: &[Record], workloads: &[WorkloadSpec]) -> BTreeMap<Key, Limit> {
    let mut per: BTreeMap<Key, Vec<&Record>> = BTreeMap::new();
    for r in records {
        if r.outcome != Outcome::Ok || r.less_work().is_some() {
            continue;
        }
        let Some(m) = crate::metrics::catalog::HEADLINES
            .iter()
            .find(|m| r.metrics.contains_key(**m))
        else {
            continue;
        };
        let key = Key {
            target: r.target.clone(),
            workload: job_of(workloads, &r.workload),
            test: r.test.clone(),
            metric: m.to_string(),
        };
        per.entry(key).or_default().push(r);
    }
    per.into_iter()
        .filter_map(|(k, rs)| super::limits::held(rs).map(|h| (k, h.kind)))
        .collect()
}

/// The most common of limiters given by their words (the history's), if any reads.
pub(crate) fn most_common(words: &[String]) -> Option<Limit> {
    let mut counts: Vec<(Limit, usize)> = Vec::new();
    for w in words {
        let Ok(l) = serde_json::from_value::<Limit>(serde_json::Value::String(w.clone())) else {
            continue;
        };
        match counts.iter_mut().find(|c| c.0 == l) {
            Some(c) => c.1 += 1,
            None => counts.push((l, 1)),
        }
    }
    counts.into_iter().max_by_key(|c| c.1).map(|c| c.0)
}

/// What a study lacks of its plan, one sentence each (none for a study that ended and has
/// every planned repeat of its figures): `role` and `name` say which study.
pub(crate) fn incomplete(
    role: &str,
    name: &str,
    m: &Manifest,
    records: &[Record],
    figs: &BTreeMap<Key, Vec<f64>>,
) -> Vec<String> {
    let mut out = Vec::new();
    if m.status != Status::Complete {
        let status = serde_json::to_value(m.status)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        out.push(format!(
            "{role} {name} did not end as planned (its manifest says {status}): its figures are what it measured before it stopped"
        ));
    }
    let planned = m.plan.repeat.max(1) as usize;
    let short: Vec<String> = figs
        .iter()
        .filter(|(_, v)| v.len() < planned)
        .map(|(k, v)| format!("{k} ({} of {planned})", v.len()))
        .collect();
    if !short.is_empty() {
        out.push(format!(
            "{role} {name} has fewer repeats than the {planned} planned for {} figures: {}",
            short.len(),
            first_few(&short)
        ));
    }
    let missing: Vec<String> = m
        .plan
        .targets
        .iter()
        .filter(|t| !records.iter().any(|r| r.target == t.label))
        .map(|t| t.label.clone())
        .collect();
    if !missing.is_empty() {
        out.push(format!(
            "{role} {name} has no records of planned targets: {}",
            first_few(&missing)
        ));
    }
    out
}

/// At most six items of a list, and how many more.
fn first_few(items: &[String]) -> String {
    let mut v: Vec<String> = items.iter().take(6).cloned().collect();
    if items.len() > 6 {
        v.push(format!("and {} more", items.len() - 6));
    }
    v.join(", ")
}

/// Figures one side has and the other does not: the gate judges the overlap and names these.
#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct LeftOut {
    pub(crate) new_only: Vec<Key>,
    pub(crate) old_only: Vec<Key>,
}

impl LeftOut {
    fn is_empty(&self) -> bool {
        self.new_only.is_empty() && self.old_only.is_empty()
    }
}

/// A figure's samples on both sides, and the history's spread of it on this fingerprint: the
/// standard deviation of its log between studies, with its degrees of freedom.
#[derive(Debug, Clone)]
pub(crate) struct Pair {
    pub(crate) key: Key,
    pub(crate) new: Vec<f64>,
    pub(crate) old: Vec<f64>,
    pub(crate) history_spread: Option<(f64, f64)>,
    /// What limited the figure on each side, where its records say.
    pub(crate) limits: Sides<Option<Limit>>,
}

/// The old and new side of a figure's something.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub(crate) struct Sides<T> {
    pub(crate) old: T,
    pub(crate) new: T,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Verdict {
    Regressed,
    Improved,
    Unchanged,
    /// One repeat on a side and no history to tell noise from change.
    Undecided,
}

/// Where a figure's interval came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Basis {
    Repeats,
    HistorySpread,
    None,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct Judged {
    #[serde(flatten)]
    pub(crate) key: Key,
    pub(crate) new_repeats: usize,
    pub(crate) old_repeats: usize,
    pub(crate) ratio: f64,
    pub(crate) interval: Option<(f64, f64)>,
    pub(crate) verdict: Verdict,
    pub(crate) basis: Basis,
    /// The figure's limiter changed between the two sides: a different limit was measured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) limiter_changed: Option<Sides<Limit>>,
}

/// The rule on an interval.
pub(crate) fn rule(interval: (f64, f64), tolerance: f64) -> Verdict {
    if interval.1 < 1.0 - tolerance {
        Verdict::Regressed
    } else if interval.0 > 1.0 + tolerance {
        Verdict::Improved
    } else {
        Verdict::Unchanged
    }
}

/// One figure judged.
pub(crate) fn judge(p: &Pair, tolerance: f64) -> Judged {
    let (a, b) = (stats::summarize(&p.new), stats::summarize(&p.old));
    let (ratio, by_repeats) = stats::ratio(&a, &b);
    let (interval, basis) = match by_repeats {
        Some(i) => (Some(i), Basis::Repeats),
        None => match p.history_spread {
            Some((sd, df)) if df >= 1.0 && a.log_scale && b.log_scale && ratio.is_finite() => {
                let se = sd * (1.0 / a.n as f64 + 1.0 / b.n as f64).sqrt();
                let t = stats::t_quantile(LEVEL, df);
                (
                    Some((ratio * (-t * se).exp(), ratio * (t * se).exp())),
                    Basis::HistorySpread,
                )
            }
            _ => (None, Basis::None),
        },
    };
    Judged {
        key: p.key.clone(),
        new_repeats: a.n,
        old_repeats: b.n,
        ratio,
        interval,
        verdict: interval.map_or(Verdict::Undecided, |i| rule(i, tolerance)),
        basis,
        limiter_changed: match p.limits {
            Sides {
                old: Some(old),
                new: Some(new),
            } if old != new => Some(Sides { old, new }),
            _ => None,
        },
    }
}

/// The gate's answer over every figure the two sides share.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Gate {
    pub(crate) new: String,
    pub(crate) old: String,
    pub(crate) tolerance: f64,
    pub(crate) figures: Vec<Judged>,
    /// Fingerprint fields that differ: (target, field, old, new).
    pub(crate) differences: Vec<(String, String, String, String)>,
    /// Figures in one side only, not judged.
    pub(crate) left_out: LeftOut,
    /// What either study lacks of its plan (`incomplete`).
    pub(crate) incomplete: Vec<String>,
}

impl Gate {
    pub(crate) fn new(new: &str, old: &str, pairs: &[Pair], tolerance: f64) -> Gate {
        Gate {
            new: new.to_string(),
            old: old.to_string(),
            tolerance,
            figures: pairs.iter().map(|p| judge(p, tolerance)).collect(),
            differences: Vec::new(),
            left_out: LeftOut::default(),
            incomplete: Vec::new(),
        }
    }

    pub(crate) fn regressed(&self) -> impl Iterator<Item = &Judged> {
        self.figures
            .iter()
            .filter(|j| j.verdict == Verdict::Regressed)
    }

    fn count(&self, v: Verdict) -> usize {
        self.figures.iter().filter(|j| j.verdict == v).count()
    }

    /// The terminal's (and a log's) answer: the regressions first, then every figure.
    pub(crate) fn text(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "check {} against {} (tolerance {}%, 95% intervals): {} regressed, {} improved, {} unchanged, {} undecided",
            self.new,
            self.old,
            pct(self.tolerance),
            self.count(Verdict::Regressed),
            self.count(Verdict::Improved),
            self.count(Verdict::Unchanged),
            self.count(Verdict::Undecided)
        );
        for i in &self.incomplete {
            let _ = writeln!(s, "INCOMPLETE {i}");
        }
        for j in self.regressed() {
            let _ = writeln!(s, "REGRESSED {}: {}{}", j.key, ratio_text(j), changed(j));
        }
        if !self.left_out.is_empty() {
            let names = |k: &[Key]| first_few(&k.iter().map(Key::to_string).collect::<Vec<_>>());
            let _ = writeln!(
                s,
                "checked on the {} figures both have; left out, in one side only:",
                self.figures.len()
            );
            for (side, keys) in [
                ("NEW", &self.left_out.new_only),
                ("OLD", &self.left_out.old_only),
            ] {
                if !keys.is_empty() {
                    let _ = writeln!(s, "  {side} only ({}): {}", keys.len(), names(keys));
                }
            }
        }
        if !self.differences.is_empty() {
            let _ = writeln!(s, "the environment differs:");
            for (t, f, o, n) in &self.differences {
                let _ = writeln!(s, "  {t}: {f} {o} -> {n}");
            }
        }
        for j in &self.figures {
            let _ = writeln!(
                s,
                "  {:<10} {}: {}{}{}",
                format!("{:?}", j.verdict).to_lowercase(),
                j.key,
                ratio_text(j),
                changed(j),
                match j.basis {
                    Basis::HistorySpread =>
                        " (one repeat: interval from the history's spread on this fingerprint)",
                    Basis::None if j.new_repeats < 2 || j.old_repeats < 2 =>
                        " (one repeat on a side and no history on this fingerprint: the gate cannot tell noise from change; run --repeat 3 or more)",
                    _ => "",
                }
            );
        }
        s
    }

    pub(crate) fn json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default() + "\n"
    }

    /// JUnit XML: a test case per figure, a failure per regression.
    pub(crate) fn junit(&self) -> String {
        let mut s = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        let _ = writeln!(
            s,
            r#"<testsuite name="fsbench check" tests="{}" failures="{}">"#,
            self.figures.len(),
            self.count(Verdict::Regressed)
        );
        if !self.incomplete.is_empty() {
            s.push_str("  <properties>\n");
            for i in &self.incomplete {
                let _ = writeln!(s, r#"    <property name="incomplete" value="{}"/>"#, esc(i));
            }
            s.push_str("  </properties>\n");
        }
        for j in &self.figures {
            let _ = write!(
                s,
                r#"  <testcase classname="{}" name="{}">"#,
                esc(&format!("{}.{}", j.key.target, j.key.workload)),
                esc(&format!("{} {}", j.key.test, j.key.metric))
            );
            match j.verdict {
                Verdict::Regressed => {
                    let _ = write!(
                        s,
                        r#"<failure message="regressed: {}"/>"#,
                        esc(&ratio_text(j))
                    );
                }
                Verdict::Undecided => s.push_str(
                    r#"<skipped message="one repeat on a side: the gate cannot tell noise from change"/>"#,
                ),
                _ => {}
            }
            s.push_str("</testcase>\n");
        }
        s.push_str("</testsuite>\n");
        s
    }
}

/// "; limited by device before, filesystem-cpu now" when the limiter changed.
fn changed(j: &Judged) -> String {
    j.limiter_changed.map_or_else(String::new, |c| {
        format!(
            "; its limiter changed: {} before, {} now (a different limit was measured)",
            c.old, c.new
        )
    })
}

fn pct(f: f64) -> String {
    let t = format!("{:.2}", f * 100.0);
    t.trim_end_matches('0').trim_end_matches('.').to_string()
}

fn ratio_text(j: &Judged) -> String {
    match j.interval {
        Some((lo, hi)) => format!("x{:.3} [{:.3}, {:.3}]", j.ratio, lo, hi),
        None => format!("x{:.3} (no interval)", j.ratio),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(new: &[f64], old: &[f64], spread: Option<(f64, f64)>) -> Pair {
        Pair {
            key: Key {
                target: "t".into(),
                workload: "w".into(),
                test: "x".into(),
                metric: "iops".into(),
            },
            new: new.to_vec(),
            old: old.to_vec(),
            history_spread: spread,
            limits: Sides::default(),
        }
    }

    #[test]
    fn a_regression_that_comes_with_another_limiter_says_so() {
        let mut p = pair(&[700.0, 710.0, 690.0], &[1000.0, 1010.0, 990.0], None);
        p.limits = Sides {
            old: Some(Limit::Device),
            new: Some(Limit::FilesystemCpu),
        };
        let g = Gate::new("new", "old", &[p.clone()], 0.05);
        assert_eq!(g.figures[0].verdict, Verdict::Regressed);
        let text = g.text();
        assert!(
            text.contains("REGRESSED")
                && text.contains("its limiter changed: device before, filesystem-cpu now"),
            "{text}"
        );
        assert!(g.json().contains("\"limiter_changed\""), "{}", g.json());
        p.limits.new = Some(Limit::Device);
        let same = Gate::new("new", "old", &[p], 0.05);
        assert!(!same.text().contains("limiter changed"));
        assert_eq!(
            most_common(&["device".into(), "cache".into(), "device".into(), "x".into()]),
            Some(Limit::Device)
        );
    }

    #[test]
    fn the_rule_needs_the_whole_interval_past_the_tolerance() {
        assert_eq!(rule((0.80, 0.94), 0.05), Verdict::Regressed);
        assert_eq!(rule((0.80, 0.96), 0.05), Verdict::Unchanged);
        assert_eq!(rule((1.06, 1.2), 0.05), Verdict::Improved);
        assert_eq!(rule((1.04, 1.2), 0.05), Verdict::Unchanged);
    }

    #[test]
    fn regressed_improved_and_unchanged_from_repeats() {
        let old = [1000.0, 1010.0, 990.0, 1005.0];
        let j = judge(&pair(&[850.0, 855.0, 845.0, 852.0], &old, None), 0.05);
        assert_eq!((j.verdict, j.basis), (Verdict::Regressed, Basis::Repeats));
        assert!(j.interval.unwrap().1 < 0.95);
        let j = judge(&pair(&[1200.0, 1190.0, 1210.0, 1205.0], &old, None), 0.05);
        assert_eq!(j.verdict, Verdict::Improved);
        let j = judge(&pair(&[1001.0, 995.0, 1008.0, 998.0], &old, None), 0.05);
        assert_eq!(j.verdict, Verdict::Unchanged);
        // A drop inside the noise: the interval straddles the tolerance.
        let noisy = [700.0, 1300.0, 900.0, 1100.0];
        let j = judge(&pair(&[850.0, 860.0, 840.0, 855.0], &noisy, None), 0.05);
        assert_eq!(j.verdict, Verdict::Unchanged);
    }

    #[test]
    fn one_repeat_uses_the_history_spread_or_says_it_cannot_tell() {
        let j = judge(&pair(&[800.0], &[1000.0], None), 0.05);
        assert_eq!((j.verdict, j.basis), (Verdict::Undecided, Basis::None));
        let gate = Gate::new("a", "b", &[pair(&[800.0], &[1000.0], None)], 0.05);
        assert!(gate.text().contains("cannot tell noise from change"));
        // The history: a 1% spread between studies over 5 degrees of freedom.
        let j = judge(&pair(&[800.0], &[1000.0], Some((0.01, 5.0))), 0.05);
        assert_eq!(
            (j.verdict, j.basis),
            (Verdict::Regressed, Basis::HistorySpread)
        );
        // A 20% spread: a 20% drop is within the noise.
        let j = judge(&pair(&[800.0], &[1000.0], Some((0.2, 5.0))), 0.05);
        assert_eq!(j.verdict, Verdict::Unchanged);
    }

    #[test]
    fn figures_are_the_headline_per_repeat_without_failed_or_short_records() {
        let rec = |repeat: u32, iops: f64, outcome: Outcome, notes: Vec<String>| Record {
            schema: 1,
            target: "t".into(),
            fs: "dir".into(),
            workload: "w".into(),
            test: "x".into(),
            repeat,
            started_at: String::new(),
            duration_s: 1.0,
            outcome,
            reason: None,
            error: None,
            metrics: BTreeMap::from([
                ("iops".to_string(), iops),
                ("bytes_per_sec".to_string(), iops * 4096.0),
            ]),
            notes,
            histograms: BTreeMap::new(),
            series: BTreeMap::new(),
            latency_log: None,
            config: None,
            failure: None,
            ranks: vec![],
            nodes: vec![],
            clones: Vec::new(),
            limiter: None,
            evidence: None,
            profile: None,
        };
        let short = vec![crate::store::note::make(
            crate::store::note::Kind::Interrupted,
            "stopped early",
        )];
        let recs = vec![
            rec(0, 100.0, Outcome::Ok, vec![]),
            rec(0, 200.0, Outcome::Ok, vec![]),
            rec(1, 120.0, Outcome::Ok, vec![]),
            rec(2, 1.0, Outcome::Failed, vec![]),
            rec(3, 1.0, Outcome::Ok, short),
        ];
        let f = figures(&recs, &[]);
        assert_eq!(f.len(), 1);
        let (k, v) = f.iter().next().unwrap();
        assert_eq!(k.metric, "iops");
        assert_eq!(v, &vec![150.0, 120.0]);
    }

    #[test]
    fn junit_and_json_name_the_regression() {
        let old = [1000.0, 1010.0, 990.0];
        let g = Gate::new("n", "o", &[pair(&[850.0, 855.0, 845.0], &old, None)], 0.05);
        assert_eq!(g.regressed().count(), 1);
        assert!(g.junit().contains("<failure message=\"regressed: x0."));
        let v: serde_json::Value = serde_json::from_str(&g.json()).unwrap();
        assert_eq!(v["figures"][0]["verdict"], "regressed");
        assert!(g.text().contains("REGRESSED t w/x iops"));
    }
}
