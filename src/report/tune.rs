//! `fsbench tune`'s race, decided from the records alone (so a resumed tune, and `fsbench report`
//! of one, decide exactly as the run did). Round r is repeat r: every surviving candidate ran
//! once more. After each round, the candidate with the best geometric mean is the leader; each
//! other survivor is compared with it by a t-test on the logs of their trials with the variance
//! pooled over the round's survivors (all ran the same number of trials, where the pooled test is
//! robust to unequal variances and has the degrees of freedom of the whole round: Welch's, with two
//! trials a side, has about one and could drop nothing before the fourth round on a noisy host),
//! with Holm's correction over the comparisons of that round, and dropped when significantly
//! worse. A
//! candidate whose interval shows it misses an SLO is dropped too. The race ends when one
//! candidate stands, when the survivors are tied (every ratio to the leader within the tie
//! margin), or when the rounds or the budget run out.

use crate::metrics::name as metric;
use serde::Serialize;

use super::stats::{pooled_t, ratio, summarize, welch, Summary};

pub use crate::plan::tune::{Slo, TuneMeta};
use crate::store::{Outcome, Record};

/// One candidate's standing.
#[derive(Debug, Clone, Serialize)]
pub struct Standing {
    pub label: String,
    /// The objective per trial (round), in round order.
    #[serde(skip)]
    pub trials: Vec<f64>,
    pub mean: Option<f64>,
    pub ci_lo: Option<f64>,
    pub ci_hi: Option<f64>,
    /// Its ratio to the winner (or leader), and that ratio's interval.
    pub ratio: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ratio_lo: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ratio_hi: Option<f64>,
    /// The round (1-based) it was dropped in, and why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dropped_round: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dropped_why: Option<String>,
    /// Its p99 latency and space overhead, when its records carry them (the Pareto front).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lat_p99_ns: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub space_overhead_pct: Option<f64>,
    /// On the Pareto front of objective, p99 latency and space overhead.
    pub pareto: bool,
}

impl Standing {
    pub fn trials_spent(&self) -> usize {
        self.trials.len()
    }
}

/// How the race stands, or ended.
#[derive(Debug, Clone, Serialize)]
pub struct Race {
    pub winner: Option<String>,
    /// Survivors that cannot be told from the winner.
    pub tied: Vec<String>,
    /// The largest difference a tie can hide (the widest ratio interval's far end, as a share).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tied_within: Option<f64>,
    /// The p-value of the winner against the closest survivor, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tied_p: Option<f64>,
    /// Why the race ended (or "running").
    pub ended: String,
    pub rounds: u32,
    pub trials: usize,
    pub candidates: Vec<Standing>,
    /// The winner's ratio to the default (the first candidate), with its interval.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vs_default: Option<(f64, f64, f64)>,
}

/// The objective of one trial: the geometric mean of the metric over the records of that
/// candidate and round (one test's, when the tune names one). None when none carries it.
fn trial(records: &[&Record], meta: &TuneMeta, label: &str, round: u32) -> Option<f64> {
    let xs: Vec<f64> = records
        .iter()
        .filter(|r| r.target == label && r.repeat == round && r.outcome == Outcome::Ok)
        .filter(|r| meta.test.as_ref().is_none_or(|t| &r.test == t))
        .filter_map(|r| r.metrics.get(&meta.metric).copied())
        .filter(|v| *v > 0.0 && v.is_finite())
        .collect();
    (!xs.is_empty()).then(|| (xs.iter().map(|x| x.ln()).sum::<f64>() / xs.len() as f64).exp())
}

/// The mean of a metric over a candidate's records (all rounds), for SLOs and the Pareto front.
fn metric_samples(records: &[&Record], label: &str, metric: &str, rounds: u32) -> Vec<f64> {
    records
        .iter()
        .filter(|r| r.target == label && r.repeat < rounds && r.outcome == Outcome::Ok)
        .filter_map(|r| r.metrics.get(metric).copied())
        .filter(|v| v.is_finite())
        .collect()
}

/// Holm's step-down over (index, p): the indexes whose hypothesis is rejected at `alpha`.
pub fn holm(ps: &[(usize, f64)], alpha: f64) -> Vec<usize> {
    let mut sorted = ps.to_vec();
    sorted.sort_by(|a, b| a.1.total_cmp(&b.1));
    let m = sorted.len();
    let mut out = Vec::new();
    for (k, (i, p)) in sorted.iter().enumerate() {
        if *p <= alpha / (m - k) as f64 {
            out.push(*i);
        } else {
            break;
        }
    }
    out
}

/// Better of two means in the objective's direction.
fn better(meta: &TuneMeta, a: f64, b: f64) -> bool {
    if meta.higher_is_better {
        a > b
    } else {
        a < b
    }
}

/// Whether a candidate's samples show it misses an SLO (its interval on the wrong side; a
/// single sample: its value).
fn misses(slo: &Slo, xs: &[f64]) -> Option<String> {
    if xs.is_empty() {
        return None;
    }
    let s = summarize(xs);
    let (lo, hi) = if s.n >= 2 {
        (s.ci_lo, s.ci_hi)
    } else {
        (s.mean, s.mean)
    };
    let missed = if slo.below {
        lo >= slo.value
    } else {
        hi <= slo.value
    };
    let v = |x: f64| super::summary::fmt_value(&slo.metric, x);
    missed.then(|| {
        if s.n >= 2 {
            format!(
                "SLO {} missed: {} (95% CI {} .. {})",
                slo.text,
                v(s.mean),
                v(lo),
                v(hi)
            )
        } else {
            format!("SLO {} missed: {} (one trial)", slo.text, v(s.mean))
        }
    })
}

/// The race replayed over `rounds` rounds of records.
pub fn race(meta: &TuneMeta, records: &[Record], rounds: u32) -> Race {
    let recs: Vec<&Record> = records.iter().collect();
    let mut stand: Vec<Standing> = meta
        .candidates
        .iter()
        .map(|l| Standing {
            label: l.clone(),
            trials: Vec::new(),
            mean: None,
            ci_lo: None,
            ci_hi: None,
            ratio: None,
            ratio_lo: None,
            ratio_hi: None,
            dropped_round: None,
            dropped_why: None,
            lat_p99_ns: None,
            space_overhead_pct: None,
            pareto: false,
        })
        .collect();
    let mut ended = String::from("running");
    let mut played = 0;
    for round in 0..rounds {
        let alive: Vec<usize> = (0..stand.len())
            .filter(|&i| stand[i].dropped_round.is_none())
            .collect();
        if alive.len() <= 1 {
            break;
        }
        played = round + 1;
        for &i in &alive {
            match trial(&recs, meta, &stand[i].label, round) {
                Some(v) => stand[i].trials.push(v),
                None if stand[i].trials.is_empty() => {
                    stand[i].dropped_round = Some(round + 1);
                    stand[i].dropped_why = Some(skip_reason(records, &stand[i].label));
                }
                None => {}
            }
        }
        drop_round(meta, &recs, &mut stand, round);
        let left: Vec<usize> = (0..stand.len())
            .filter(|&i| stand[i].dropped_round.is_none())
            .collect();
        if left.len() == 1 {
            ended = "one candidate stands".into();
            break;
        }
        if left.is_empty() {
            ended = "no candidate is left: each was dropped (an SLO missed, or no figure)".into();
            break;
        }
        if left.len() > 1 && tied(meta, &stand, &left) {
            ended = format!("the survivors are tied within {:.0}%", meta.tie * 100.0);
            break;
        }
    }
    finish(meta, &recs, stand, played, ended)
}

/// Why a candidate has no trial: its provisioning was skipped or it failed.
fn skip_reason(records: &[Record], label: &str) -> String {
    records
        .iter()
        .find(|r| r.target == label && r.outcome != Outcome::Ok)
        .and_then(|r| r.reason.clone().or(r.error.clone()))
        .map(|w| {
            // A command's failure: its own last word (`cannot create ...: 'recordsize' must be
            // power of 2 from 512 to 128k`), not the command line.
            let said = w.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("");
            format!("no figure on this host: {}", said.trim())
        })
        .unwrap_or_else(|| "no figure: its records do not carry the objective".into())
}

/// After a round: SLO misses, then the significantly worse (pooled t on the logs, Holm over the
/// comparisons with the leader).
fn drop_round(meta: &TuneMeta, recs: &[&Record], stand: &mut [Standing], round: u32) {
    let alive: Vec<usize> = (0..stand.len())
        .filter(|&i| stand[i].dropped_round.is_none() && !stand[i].trials.is_empty())
        .collect();
    for &i in &alive {
        for slo in &meta.slos {
            let xs = metric_samples(recs, &stand[i].label, &slo.metric, round + 1);
            if let Some(why) = misses(slo, &xs) {
                stand[i].dropped_round = Some(round + 1);
                stand[i].dropped_why = Some(why);
                break;
            }
        }
    }
    let alive: Vec<usize> = alive
        .into_iter()
        .filter(|&i| stand[i].dropped_round.is_none())
        .collect();
    let Some(&lead) = alive.iter().max_by(|&&a, &&b| {
        let (ma, mb) = (
            summarize(&stand[a].trials).mean,
            summarize(&stand[b].trials).mean,
        );
        if better(meta, ma, mb) {
            std::cmp::Ordering::Greater
        } else {
            std::cmp::Ordering::Less
        }
    }) else {
        return;
    };
    let ls = summarize(&stand[lead].trials);
    let group: Vec<Summary> = alive.iter().map(|&i| summarize(&stand[i].trials)).collect();
    let ps: Vec<(usize, f64)> = alive
        .iter()
        .filter(|&&i| i != lead)
        .filter_map(|&i| {
            let s = summarize(&stand[i].trials);
            let (_, _, p) = pooled_t(&ls, &s, &group)?;
            better(meta, ls.mean, s.mean).then_some((i, p))
        })
        .collect();
    for i in holm(&ps, meta.alpha) {
        let p = ps.iter().find(|(j, _)| *j == i).map_or(1.0, |x| x.1);
        stand[i].dropped_round = Some(round + 1);
        stand[i].dropped_why = Some(format!(
            "{} than {} (p={p:.3})",
            if meta.higher_is_better {
                "slower"
            } else {
                "worse"
            },
            stand[lead].label
        ));
    }
}

/// Every survivor's ratio to the leader lies within the tie margin.
fn tied(meta: &TuneMeta, stand: &[Standing], left: &[usize]) -> bool {
    let sums: Vec<Summary> = left.iter().map(|&i| summarize(&stand[i].trials)).collect();
    let lead = (0..sums.len())
        .max_by(|&a, &b| better(meta, sums[a].mean, sums[b].mean).cmp(&false))
        .unwrap_or(0);
    sums.iter().enumerate().all(|(k, s)| {
        k == lead
            || matches!(ratio(s, &sums[lead]).1, Some((lo, hi)) if lo >= 1.0 - meta.tie && hi <= 1.0 + meta.tie)
    })
}

/// The final standings: means, intervals, ratios to the winner, the Pareto front.
fn finish(
    meta: &TuneMeta,
    recs: &[&Record],
    mut stand: Vec<Standing>,
    rounds: u32,
    mut ended: String,
) -> Race {
    // ("running": the rounds so far decide nothing yet; whoever stops the race says why.)
    for s in &mut stand {
        if s.trials.is_empty() {
            continue;
        }
        let sm = summarize(&s.trials);
        s.mean = Some(sm.mean);
        (s.ci_lo, s.ci_hi) = if sm.n >= 2 {
            (Some(sm.ci_lo), Some(sm.ci_hi))
        } else {
            (None, None)
        };
        let mean = |m: &str| {
            let xs = metric_samples(recs, &s.label, m, rounds);
            (!xs.is_empty()).then(|| summarize(&xs).mean)
        };
        s.lat_p99_ns = mean(metric::LAT_P99_NS);
        s.space_overhead_pct = mean(metric::SPACE_OVERHEAD_PCT);
    }
    let alive: Vec<usize> = (0..stand.len())
        .filter(|&i| stand[i].dropped_round.is_none() && stand[i].mean.is_some())
        .collect();
    let winner = alive.iter().copied().max_by(|&a, &b| {
        better(
            meta,
            stand[a].mean.unwrap_or(0.0),
            stand[b].mean.unwrap_or(0.0),
        )
        .cmp(&false)
    });
    let mut tied_list = Vec::new();
    let (mut tied_within, mut tied_p) = (None::<f64>, None::<f64>);
    if let Some(w) = winner {
        let ws = summarize(&stand[w].trials);
        for (i, c) in stand.iter_mut().enumerate() {
            if c.trials.is_empty() {
                continue;
            }
            let s = summarize(&c.trials);
            let (r, ci) = ratio(&s, &ws);
            c.ratio = Some(r);
            if let Some((lo, hi)) = ci {
                (c.ratio_lo, c.ratio_hi) = (Some(lo), Some(hi));
            }
            if i != w && alive.contains(&i) {
                tied_list.push(c.label.clone());
                let far = ci.map_or(1.0 - r, |(lo, hi)| (1.0 - lo).abs().max((hi - 1.0).abs()));
                tied_within = Some(tied_within.map_or(far, |t| t.max(far)));
                if let Some((_, _, p)) = welch(&ws, &s) {
                    tied_p = Some(tied_p.map_or(p, |t| t.min(p)));
                }
            }
        }
    }
    pareto(meta, &mut stand);
    if ended == "running" && winner.is_some() && stand.len() == 1 {
        ended = "one candidate stands".into();
    }
    let vs_default = winner.and_then(|w| {
        let d = summarize(stand.first()?.trials.as_slice());
        (w != 0 && d.n > 0).then(|| {
            let (r, ci) = ratio(&summarize(&stand[w].trials), &d);
            let (lo, hi) = ci.unwrap_or((r, r));
            (r, lo, hi)
        })
    });
    Race {
        winner: winner.map(|w| stand[w].label.clone()),
        tied: tied_list,
        tied_within,
        tied_p,
        ended,
        rounds,
        trials: stand.iter().map(Standing::trials_spent).sum(),
        candidates: stand,
        vs_default,
    }
}

/// Marks the candidates no other beats on every one of objective, p99 latency and space
/// overhead (lower latency and overhead are better; a missing figure is not compared).
/// (objective, p99 latency, space overhead) of a candidate with figures.
type Point = (f64, Option<f64>, Option<f64>);

fn pareto(meta: &TuneMeta, stand: &mut [Standing]) {
    let pts: Vec<Option<Point>> = stand
        .iter()
        .map(|s| s.mean.map(|m| (m, s.lat_p99_ns, s.space_overhead_pct)))
        .collect();
    let no_worse = |a: f64, b: f64, hi: bool| if hi { a >= b } else { a <= b };
    for i in 0..stand.len() {
        let Some(p) = pts[i] else { continue };
        let dominated = pts.iter().enumerate().any(|(j, q)| {
            let Some(q) = q else { return false };
            if i == j {
                return false;
            }
            let obj = no_worse(q.0, p.0, meta.higher_is_better);
            let lat = matches!((q.1, p.1), (Some(a), Some(b)) if a <= b) || p.1.is_none();
            let spc = matches!((q.2, p.2), (Some(a), Some(b)) if a <= b) || p.2.is_none();
            let strictly = q.0 != p.0 || q.1 != p.1 || q.2 != p.2;
            obj && lat && spc && strictly
        });
        stand[i].pareto = !dominated;
    }
}

/// `lat_p99<2ms` into an SLO on the catalogue's metric (`lat_p99_ns`), the value in its unit.
pub fn parse_slo(
    text: &str,
    known: &dyn Fn(&str) -> Option<crate::metrics::catalog::Unit>,
) -> Result<Slo, String> {
    use crate::metrics::catalog::Unit;
    let (name, below, rest) = match (text.split_once('<'), text.split_once('>')) {
        (Some((n, v)), None) => (n.trim(), true, v.trim()),
        (None, Some((n, v))) => (n.trim(), false, v.trim()),
        _ => {
            return Err(format!(
                "--slo '{text}': write METRIC<VALUE or METRIC>VALUE, e.g. 'lat_p99<2ms' or 'space_overhead<40%'"
            ))
        }
    };
    let candidates = crate::metrics::catalog::spellings(name);
    let Some((metric, unit)) = candidates
        .iter()
        .find_map(|c| known(c).map(|u| (c.clone(), u)))
    else {
        return Err(format!(
            "--slo '{text}': no workload emits a metric '{name}' (fsbench list --json names them)"
        ));
    };
    let split = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(rest.len());
    let (num, suffix) = rest.split_at(split);
    let n: f64 = num
        .parse()
        .map_err(|_| format!("--slo '{text}': '{rest}' is not a number with a unit"))?;
    let scale = match (unit, suffix.trim()) {
        (Unit::Nanoseconds, "ns") => 1.0,
        (Unit::Nanoseconds, "us") => 1e3,
        (Unit::Nanoseconds, "ms") => 1e6,
        (Unit::Nanoseconds, "s") => 1e9,
        (Unit::Percent, "%" | "") => 1.0,
        (Unit::Bytes, s) => match crate::plan::units::parse_size(&format!("{n}{s}")) {
            Ok(b) => b as f64 / n.max(f64::MIN_POSITIVE),
            Err(_) => return Err(format!("--slo '{text}': '{suffix}' is not a size unit")),
        },
        (Unit::BytesPerSec, "MB/s") => 1e6,
        (Unit::BytesPerSec, "GB/s") => 1e9,
        (Unit::OpsPerSec | Unit::Count | Unit::Ratio | Unit::KibPerSec | Unit::BytesPerSec, "") => {
            1.0
        }
        (Unit::Seconds, "s" | "") => 1.0,
        (_, s) => {
            return Err(format!(
                "--slo '{text}': '{s}' is not a unit of {metric} ({})",
                unit.symbol()
            ))
        }
    };
    Ok(Slo {
        metric,
        below,
        value: n * scale,
        text: text.to_string(),
    })
}

#[cfg(test)]
mod tests;
