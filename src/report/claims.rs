//! "Published vs this host": a study's published findings (`[[claim]]` in its file) checked
//! against the records. Each claim's figure (a metric of a target's records, or its ratio to
//! another target's or another test's) is summarised as the statistics rows are (geometric mean,
//! 95% t-interval on the log scale; a ratio's interval is Welch's), and the verdict is *agrees*
//! when the whole interval satisfies the expectation, *disagrees* when none of it does, else
//! *inconclusive* (the interval does not decide, or there is none: a single sample).

use serde::Serialize;

use super::stats::{ratio, summarize};
use crate::plan::study::{Claim, Expect};
use crate::store::{Outcome, Record};

/// What a claim's check found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Agrees,
    Disagrees,
    Inconclusive,
}

impl Verdict {
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Agrees => "agrees",
            Verdict::Disagrees => "disagrees",
            Verdict::Inconclusive => "inconclusive",
        }
    }
}

/// One claim, checked.
#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    pub says: String,
    pub quote: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub published: Option<String>,
    /// What was measured, in words: `bytes_per_sec of zfs / xfs in seq-read`.
    pub measured_as: String,
    pub expect: String,
    /// The figure (or ratio) and its 95% interval, when there are samples.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ci_lo: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ci_hi: Option<f64>,
    /// Samples on each side (the records the figure comes from).
    pub n: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub n_vs: Option<usize>,
    pub verdict: Verdict,
    /// Why the verdict is inconclusive when it is for want of data.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Why this host may differ from the study's (the claim's own note).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

/// A record's test is the claim's, or one of its cells: iozone names a cell `write/64K/4K`, and
/// a claim on `write` (or `write/64K`) covers each cell below it.
fn test_matches(test: &str, claimed: &str) -> bool {
    test == claimed
        || test
            .strip_prefix(claimed)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// The values of `metric` in the ok records of `target` (and the workload and test, when given),
/// by test.
fn samples(
    records: &[Record],
    target: &str,
    workload: Option<&str>,
    test: Option<&str>,
    metric: &str,
) -> std::collections::BTreeMap<String, Vec<f64>> {
    let mut out: std::collections::BTreeMap<String, Vec<f64>> = Default::default();
    for r in records
        .iter()
        .filter(|r| r.outcome == Outcome::Ok && r.target == target)
        .filter(|r| workload.is_none_or(|w| r.workload_name() == w))
        .filter(|r| test.is_none_or(|t| test_matches(&r.test, t)))
    {
        if let Some(v) = r.metrics.get(metric).filter(|v| v.is_finite()) {
            out.entry(r.test.clone()).or_default().push(*v);
        }
    }
    out
}

/// Every value of the samples, whatever the test.
fn all(by_test: &std::collections::BTreeMap<String, Vec<f64>>) -> Vec<f64> {
    by_test.values().flatten().copied().collect()
}

/// A ratio over several tests (cells) that both sides ran: the ratio of each test's means,
/// summarised over the tests (the geometric mean ratio and its interval), so the spread between
/// cells of different sizes does not blur the comparison. None when fewer than two tests pair.
/// (iozone's summary over a test's cells uses it too, so its figures are the claims'.)
pub(crate) fn paired<K: Ord>(
    a: &std::collections::BTreeMap<K, Vec<f64>>,
    b: &std::collections::BTreeMap<K, Vec<f64>>,
) -> Option<(f64, Option<(f64, f64)>)> {
    let ratios: Vec<f64> = a
        .iter()
        .filter_map(|(t, xs)| {
            let ys = b.get(t)?;
            let (ma, mb) = (summarize(xs).mean, summarize(ys).mean);
            (ma > 0.0 && mb > 0.0).then(|| ma / mb)
        })
        .collect();
    if ratios.len() < 2 {
        return None;
    }
    let s = summarize(&ratios);
    Some((s.mean, Some((s.ci_lo, s.ci_hi))))
}

/// The verdict of an interval against an expectation.
pub fn judge(expect: Expect, lo: f64, hi: f64) -> Verdict {
    let (all, none) = match expect {
        Expect::Below(x) => (hi < x, lo >= x),
        Expect::Above(x) => (lo > x, hi <= x),
        Expect::Between(a, b) => (lo >= a && hi <= b, hi < a || lo > b),
    };
    if all {
        Verdict::Agrees
    } else if none {
        Verdict::Disagrees
    } else {
        Verdict::Inconclusive
    }
}

fn measured_as(c: &Claim) -> String {
    let test = c
        .test
        .as_deref()
        .map(|t| format!(" in {t}"))
        .unwrap_or_default();
    match (&c.vs, &c.vs_test) {
        (Some(v), Some(t)) => format!("{} of {}{test} / of {v} in {t}", c.metric, c.target),
        (Some(v), None) => format!("{} of {} / {v}{test}", c.metric, c.target),
        (None, Some(t)) => format!("{} of {}{test} / its {t}", c.metric, c.target),
        (None, None) => format!("{} of {}{test}", c.metric, c.target),
    }
}

/// Checks one claim against the records.
pub fn check(c: &Claim, records: &[Record]) -> Finding {
    let w = c.workload.as_deref();
    let by_test = samples(records, &c.target, w, c.test.as_deref(), &c.metric);
    let a = all(&by_test);
    let b_by_test = (c.vs.is_some() || c.vs_test.is_some()).then(|| {
        let target = c.vs.as_deref().unwrap_or(&c.target);
        let test = c.vs_test.as_deref().or(c.test.as_deref());
        samples(records, target, w, test, &c.metric)
    });
    let b = b_by_test.as_ref().map(all);
    let mut f = Finding {
        says: c.says.clone(),
        quote: c.quote.clone(),
        published: c.published.clone(),
        measured_as: measured_as(c),
        expect: c.expect.clone(),
        value: None,
        ci_lo: None,
        ci_hi: None,
        n: a.len(),
        n_vs: b.as_ref().map(Vec::len),
        verdict: Verdict::Inconclusive,
        reason: None,
        why: c.why.clone(),
    };
    if a.is_empty() || b.as_ref().is_some_and(Vec::is_empty) {
        f.reason =
            Some("no records to measure it (a target skipped or failed on this host?)".into());
        return f;
    }
    let sa = summarize(&a);
    // Two targets over the same cells: paired by cell (a test of one target against another's
    // of another name, vs_test, is not paired).
    let cells = b_by_test
        .as_ref()
        .filter(|_| c.vs_test.is_none())
        .and_then(|bt| paired(&by_test, bt));
    let (value, interval) = match (&b, cells) {
        (_, Some(p)) => p,
        (Some(b), None) => ratio(&sa, &summarize(b)),
        (None, None) => (sa.mean, (sa.n >= 2).then_some((sa.ci_lo, sa.ci_hi))),
    };
    f.value = Some(value);
    let Ok(expect) = c.expectation() else {
        f.reason = Some(format!("expect = \"{}\" does not read", c.expect));
        return f;
    };
    match interval {
        Some((lo, hi)) => {
            f.ci_lo = Some(lo);
            f.ci_hi = Some(hi);
            f.verdict = judge(expect, lo, hi);
        }
        None => {
            f.reason = Some(
                "one sample on a side (or a figure that can be 0): no interval; run more repeats (--set repeat=3)".into(),
            );
        }
    }
    f
}

pub fn check_all(claims: &[Claim], records: &[Record]) -> Vec<Finding> {
    claims.iter().map(|c| check(c, records)).collect()
}

/// A figure as the table shows it: three significant digits.
pub fn fmt(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let digits = (2 - v.abs().log10().floor() as i32).clamp(0, 6) as usize;
    format!("{v:.digits$}")
}

/// "1.23 (0.98-1.5)", or "-" with no figure.
pub fn measured(f: &Finding) -> String {
    match (f.value, f.ci_lo, f.ci_hi) {
        (Some(v), Some(lo), Some(hi)) => format!("{} ({}-{})", fmt(v), fmt(lo), fmt(hi)),
        (Some(v), ..) => format!("{} (no interval)", fmt(v)),
        _ => "-".into(),
    }
}

/// Why a host's figures differ from a paper's, in general (the report says it once).
pub const WHY_THEY_DIFFER: &str = "A study's figures come from its own hardware, kernel and tool versions. On this host the filesystems sit on loop images (a file on the host's own disk, often in its page cache), not on a disk of their own; a VM's disk is shared and may be an SSD where the study had spinning disks; ZFS may be zfs-fuse (a userspace daemon) where the study had kernel ZFS; sizes are smaller at the small scale, so more of the data fits in memory. A disagreement says the finding does not carry over to this host as it is, not that the study was wrong.";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Record;

    fn rec(target: &str, test: &str, metric: &str, v: f64) -> Record {
        serde_json::from_value(serde_json::json!({
            "schema": 1, "target": target, "fs": "x", "workload": "w", "test": test,
            "repeat": 0, "started_at": "", "duration_s": 1.0, "outcome": "ok",
            "metrics": { metric: v }
        }))
        .unwrap()
    }

    fn claim(expect: &str) -> Claim {
        Claim {
            says: "a beats b".into(),
            target: "a".into(),
            vs: Some("b".into()),
            test: Some("t".into()),
            metric: "iops".into(),
            expect: expect.into(),
            ..Default::default()
        }
    }

    fn records(a: &[f64], b: &[f64]) -> Vec<Record> {
        a.iter()
            .map(|v| rec("a", "t", "iops", *v))
            .chain(b.iter().map(|v| rec("b", "t", "iops", *v)))
            .collect()
    }

    #[test]
    fn a_clear_difference_agrees_or_disagrees_and_a_blur_is_inconclusive() {
        let clear = records(&[200.0, 210.0, 205.0], &[100.0, 102.0, 98.0]);
        let f = check(&claim("> 1"), &clear);
        assert_eq!(f.verdict, Verdict::Agrees, "{f:?}");
        assert!((f.value.unwrap() - 2.05).abs() < 0.01);
        assert!(f.ci_lo.unwrap() > 1.0);
        assert_eq!(check(&claim("< 1"), &clear).verdict, Verdict::Disagrees);
        assert_eq!(check(&claim("1.5..3"), &clear).verdict, Verdict::Agrees);
        let blur = records(&[90.0, 130.0, 100.0], &[100.0, 105.0, 95.0]);
        assert_eq!(check(&claim("> 1"), &blur).verdict, Verdict::Inconclusive);
    }

    #[test]
    fn one_sample_or_none_is_inconclusive_and_says_why() {
        let one = records(&[200.0], &[100.0]);
        let f = check(&claim("> 1"), &one);
        assert_eq!(f.verdict, Verdict::Inconclusive);
        assert!(f.reason.unwrap().contains("repeat"));
        let f = check(&claim("> 1"), &records(&[200.0, 210.0], &[]));
        assert_eq!(f.verdict, Verdict::Inconclusive);
        assert!(f.reason.unwrap().contains("no records"));
    }

    #[test]
    fn a_ratio_of_two_tests_of_one_target_and_a_plain_figure() {
        let mut rs = vec![
            rec("z", "read", "files_per_sec", 10.0),
            rec("z", "read", "files_per_sec", 11.0),
            rec("z", "write", "files_per_sec", 100.0),
            rec("z", "write", "files_per_sec", 105.0),
        ];
        let c = Claim {
            target: "z".into(),
            test: Some("read".into()),
            vs_test: Some("write".into()),
            metric: "files_per_sec".into(),
            expect: "< 1".into(),
            ..Default::default()
        };
        assert_eq!(check(&c, &rs).verdict, Verdict::Agrees);
        for v in [0.020, 0.021, 0.022] {
            rs.push(rec("z", "read-post", "post_pre_ratio", v));
        }
        let c = Claim {
            target: "z".into(),
            metric: "post_pre_ratio".into(),
            expect: "< 0.1".into(),
            ..Default::default()
        };
        let f = check(&c, &rs);
        assert_eq!(f.verdict, Verdict::Agrees, "{f:?}");
        assert_eq!(f.measured_as, "post_pre_ratio of z");
    }

    #[test]
    fn a_claim_on_a_test_covers_its_cells_paired_by_cell() {
        // Two cells an order of magnitude apart; b is 10% faster in each.
        let mut rs = Vec::new();
        for (cell, base) in [
            ("write/64K/4K", 1000.0),
            ("write/16M/1M", 9000.0),
            ("write/1M/64K", 4000.0),
        ] {
            for k in [0.99, 1.0, 1.01] {
                rs.push(rec("a", cell, "kib_per_sec", base * k));
                rs.push(rec("b", cell, "kib_per_sec", base * k * 1.1));
            }
        }
        rs.push(rec("a", "writeback", "kib_per_sec", 1.0));
        let c = Claim {
            target: "b".into(),
            vs: Some("a".into()),
            test: Some("write".into()),
            metric: "kib_per_sec".into(),
            expect: "> 1".into(),
            ..Default::default()
        };
        let f = check(&c, &rs);
        assert_eq!(f.verdict, Verdict::Agrees, "{f:?}");
        assert!((f.value.unwrap() - 1.1).abs() < 1e-6, "{f:?}");
        assert!(f.ci_lo.unwrap() > 1.09 && f.ci_hi.unwrap() < 1.11, "{f:?}");
        assert!(test_matches("write/64K/4K", "write") && test_matches("write", "write"));
        assert!(!test_matches("writeback", "write") && !test_matches("rewrite/64K/4K", "write"));
    }

    #[test]
    fn judging_an_interval() {
        assert_eq!(judge(Expect::Below(1.0), 0.5, 0.9), Verdict::Agrees);
        assert_eq!(judge(Expect::Below(1.0), 0.9, 1.1), Verdict::Inconclusive);
        assert_eq!(judge(Expect::Below(1.0), 1.0, 1.1), Verdict::Disagrees);
        assert_eq!(
            judge(Expect::Between(0.5, 2.0), 2.1, 3.0),
            Verdict::Disagrees
        );
        assert_eq!(fmt(1.23456), "1.23");
        assert_eq!(fmt(1234.5), "1234");
        assert_eq!(fmt(0.01234), "0.0123");
    }
}
