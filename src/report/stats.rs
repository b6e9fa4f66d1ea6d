//! Statistics over repeats: the centre, spread and 95% confidence interval (Student t) of a
//! metric's repeats, the ratio of two targets with its interval, and Welch's t-test. Pure.
//!
//! Figures whose repeats are all positive (throughput, IOPS, latencies, sizes) are summarised on
//! the log scale: the centre is the geometric mean and the interval is the t-interval of the mean
//! log, mapped back, so it is never below zero and is as wide in ratio terms above as below. The
//! ratio of two targets and Welch's test use the same logs. Anything else (a figure that can be 0
//! or negative) uses the arithmetic mean and a plain t-interval, clamped at 0 when no repeat is
//! negative.

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, StudentsT};

/// Two-sided 95%: the t quantile used for every interval.
pub(crate) const LEVEL: f64 = 0.95;
/// A coefficient of variation above this marks a result as noisy.
pub(crate) const NOISY_CV: f64 = 0.10;

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub(crate) struct Summary {
    pub(crate) n: usize,
    /// The centre: the geometric mean on the log scale, else the arithmetic mean.
    pub(crate) mean: f64,
    /// The arithmetic mean, whatever the scale.
    pub(crate) arith_mean: f64,
    /// Standard deviation of the values (not of their logs).
    pub(crate) sd: f64,
    /// 95% confidence interval of the centre (equal to it when n < 2).
    pub(crate) ci_lo: f64,
    pub(crate) ci_hi: f64,
    /// sd / arithmetic mean.
    pub(crate) cv: f64,
    /// Whether the centre and interval were computed from logs.
    pub(crate) log_scale: bool,
    /// Mean and standard deviation of the logs (log scale only), for ratios and tests.
    #[serde(skip)]
    pub(crate) log_mean: f64,
    #[serde(skip)]
    pub(crate) log_sd: f64,
}

/// The t quantile for a two-sided interval at `level` with `df` degrees of freedom.
pub(crate) fn t_quantile(level: f64, df: f64) -> f64 {
    let t = StudentsT::new(0.0, 1.0, df).expect("df > 0");
    t.inverse_cdf(0.5 + level / 2.0)
}

/// Mean and sample standard deviation (0 when fewer than 2 values).
fn mean_sd(xs: &[f64]) -> (f64, f64) {
    let n = xs.len();
    if n == 0 {
        return (f64::NAN, 0.0);
    }
    let mean = xs.iter().sum::<f64>() / n as f64;
    let sd = if n < 2 {
        0.0
    } else {
        (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
    };
    (mean, sd)
}

/// Half the width of the t-interval of a mean.
fn half_width(sd: f64, n: usize) -> f64 {
    if n < 2 {
        0.0
    } else {
        t_quantile(LEVEL, (n - 1) as f64) * sd / (n as f64).sqrt()
    }
}

/// The summary of a metric's repeats: on the log scale when every repeat is positive.
pub(crate) fn summarize(xs: &[f64]) -> Summary {
    summarize_on(xs, !xs.is_empty() && xs.iter().all(|x| *x > 0.0))
}

fn summarize_on(xs: &[f64], log_scale: bool) -> Summary {
    let n = xs.len();
    let (arith, sd) = mean_sd(xs);
    let cv = if arith != 0.0 { sd / arith.abs() } else { 0.0 };
    if log_scale {
        let logs: Vec<f64> = xs.iter().map(|x| x.ln()).collect();
        let (lm, lsd) = mean_sd(&logs);
        let h = half_width(lsd, n);
        return Summary {
            n,
            mean: lm.exp(),
            arith_mean: arith,
            sd,
            ci_lo: (lm - h).exp(),
            ci_hi: (lm + h).exp(),
            cv,
            log_scale: true,
            log_mean: lm,
            log_sd: lsd,
        };
    }
    let h = half_width(sd, n);
    let floor = if xs.iter().all(|x| *x >= 0.0) {
        0.0
    } else {
        f64::NEG_INFINITY
    };
    Summary {
        n,
        mean: arith,
        arith_mean: arith,
        sd,
        ci_lo: (arith - h).max(floor),
        ci_hi: arith + h,
        cv,
        log_scale: false,
        log_mean: f64::NAN,
        log_sd: 0.0,
    }
}

/// (centre, sd, n) of what a test compares: the logs on the log scale, else the values.
fn tested(s: &Summary, logs: bool) -> (f64, f64, f64) {
    if logs {
        (s.log_mean, s.log_sd, s.n as f64)
    } else {
        (s.arith_mean, s.sd, s.n as f64)
    }
}

/// Welch's t-test of two samples: (t, degrees of freedom, two-sided p-value), on the logs when
/// both are on the log scale. None when either sample has fewer than 2 values or neither has
/// any spread.
pub(crate) fn welch(a: &Summary, b: &Summary) -> Option<(f64, f64, f64)> {
    if a.n < 2 || b.n < 2 {
        return None;
    }
    let logs = a.log_scale && b.log_scale;
    let (ma, sa, na) = tested(a, logs);
    let (mb, sb, nb) = tested(b, logs);
    let (va, vb) = (sa * sa / na, sb * sb / nb);
    if va + vb == 0.0 {
        return None;
    }
    let t = (ma - mb) / (va + vb).sqrt();
    let df = (va + vb).powi(2) / (va * va / (na - 1.0) + vb * vb / (nb - 1.0));
    let dist = StudentsT::new(0.0, 1.0, df).ok()?;
    let p = 2.0 * (1.0 - dist.cdf(t.abs()));
    Some((t, df, p))
}

/// Student's t-test of two samples' log means with the variance pooled over a group of samples
/// on the log scale (the pair among them): (t, degrees of freedom, two-sided p-value). A race
/// compares survivors that all ran the same number of trials, where the pooled test is robust
/// to unequal variances and has the degrees of freedom of the whole group (Welch's, with two
/// trials a side, has about one). None when the group has no degrees of freedom or no spread,
/// or a sample is not on the log scale.
pub(crate) fn pooled_t(a: &Summary, b: &Summary, group: &[Summary]) -> Option<(f64, f64, f64)> {
    if !(a.log_scale && b.log_scale) || group.iter().any(|s| !s.log_scale) {
        return None;
    }
    let df: f64 = group.iter().map(|s| s.n.saturating_sub(1) as f64).sum();
    let ss: f64 = group
        .iter()
        .filter(|s| s.n >= 2)
        .map(|s| s.log_sd.powi(2) * (s.n - 1) as f64)
        .sum();
    if df < 1.0 || ss <= 0.0 || a.n == 0 || b.n == 0 {
        return None;
    }
    let se = (ss / df * (1.0 / a.n as f64 + 1.0 / b.n as f64)).sqrt();
    let t = (a.log_mean - b.log_mean) / se;
    let dist = StudentsT::new(0.0, 1.0, df).ok()?;
    Some((t, df, 2.0 * (1.0 - dist.cdf(t.abs()))))
}

/// The ratio of two centres (a / b) with its 95% interval: the Welch interval of the difference
/// of the mean logs, mapped back. The interval is None when n < 2 on either side or either is
/// not on the log scale (a ratio of figures that can be 0 has no interval here).
pub(crate) fn ratio(a: &Summary, b: &Summary) -> (f64, Option<(f64, f64)>) {
    let r = a.mean / b.mean;
    if a.n < 2 || b.n < 2 || !a.log_scale || !b.log_scale {
        return (r, None);
    }
    let va = a.log_sd.powi(2) / a.n as f64;
    let vb = b.log_sd.powi(2) / b.n as f64;
    let se = (va + vb).sqrt();
    if se == 0.0 {
        return (r, Some((r, r)));
    }
    let df = (va + vb).powi(2) / (va * va / (a.n - 1) as f64 + vb * vb / (b.n - 1) as f64);
    let t = t_quantile(LEVEL, df.max(1.0));
    (r, Some((r * (-t * se).exp(), r * (t * se).exp())))
}
#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn t_quantiles_match_the_table() {
        // Two-sided 95% critical values of Student's t.
        for (df, want) in [
            (1.0, 12.706),
            (2.0, 4.303),
            (4.0, 2.776),
            (9.0, 2.262),
            (10.0, 2.228),
            (30.0, 2.042),
            (1000.0, 1.962),
        ] {
            let got = t_quantile(0.95, df);
            assert!(close(got, want, 0.001), "df {df}: {got}");
        }
    }

    #[test]
    fn positive_figures_get_the_geometric_mean_and_a_log_scale_interval() {
        let s = summarize(&[10.0, 12.0, 14.0, 16.0, 18.0]);
        assert!(s.log_scale);
        assert_eq!((s.n, s.arith_mean), (5, 14.0));
        assert!(close(s.sd, 3.1623, 1e-4));
        // exp(mean of logs +- t(4) * sd of logs / sqrt(5)), worked out by hand.
        assert!(close(s.mean, 13.70694, 1e-4), "{}", s.mean);
        assert!(close(s.ci_lo, 10.27329, 1e-4), "{}", s.ci_lo);
        assert!(close(s.ci_hi, 18.28821, 1e-4), "{}", s.ci_hi);
        let one = summarize(&[5.0]);
        assert!(close(one.mean, 5.0, 1e-12) && one.sd == 0.0);
        assert!(one.ci_lo == one.mean && one.ci_hi == one.mean);
    }

    #[test]
    fn a_skewed_latency_never_gets_a_negative_bound() {
        // The report's old "-23 ms .. 49 ms": one slow repeat among three.
        let s = summarize(&[1e6, 1.2e6, 23e6]);
        let linear = summarize_on(&[1e6, 1.2e6, 23e6], false);
        assert!(linear.ci_lo == 0.0, "clamped: {}", linear.ci_lo);
        assert!(close(s.mean, 3_022_059.6, 1.0), "{}", s.mean);
        assert!(close(s.ci_lo, 38_152.4, 1.0), "{}", s.ci_lo);
        assert!(close(s.ci_hi, 239_377_970.0, 100.0), "{}", s.ci_hi);
        assert!(s.ci_lo > 0.0 && s.ci_lo < s.mean && s.mean < s.ci_hi);
    }

    #[test]
    fn figures_that_can_be_zero_stay_linear_and_clamp_at_zero() {
        let s = summarize(&[0.0, 1.0, 5.0]);
        assert!(!s.log_scale);
        assert_eq!((s.mean, s.ci_lo), (2.0, 0.0));
        assert!(s.ci_hi > 5.0);
        let neg = summarize(&[-3.0, 1.0, 2.0]);
        assert!(
            neg.ci_lo < -3.0,
            "a figure that can be negative is not clamped"
        );
    }

    #[test]
    fn welch_matches_the_reference_example() {
        // Welch's t-test, example 1 of the Wikipedia article (t = -2.46, df = 24.98, p = 0.021).
        let a = summarize_on(
            &[
                27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7,
                21.4,
            ],
            false,
        );
        // One linear side: the test runs on the values, as the article's example does.
        let b = summarize(&[
            27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5,
            24.4,
        ]);
        let (t, df, p) = welch(&a, &b).unwrap();
        assert!(close(t, -2.46, 0.01), "t {t}");
        assert!(close(df, 24.98, 0.05), "df {df}");
        assert!(close(p, 0.021, 0.001), "p {p}");
        assert!(welch(&a, &summarize(&[1.0])).is_none());
    }

    #[test]
    fn the_pooled_test_has_the_group_s_degrees_of_freedom() {
        // Six samples of two, one clearly lower: Welch has about one degree of freedom and cannot
        // tell; pooled over the six it has six and can.
        let group: Vec<Summary> = [
            [100.0, 110.0],
            [98.0, 108.0],
            [105.0, 95.0],
            [101.0, 97.0],
            [102.0, 92.0],
            [30.0, 36.0],
        ]
        .iter()
        .map(|x| summarize(x))
        .collect();
        let (_, df, p) = pooled_t(&group[0], &group[5], &group).unwrap();
        assert_eq!(df, 6.0);
        assert!(p < 0.001, "{p}");
        let (_, wdf, wp) = welch(&group[0], &group[5]).unwrap();
        assert!(wdf < 2.0 && wp > p, "{wdf} {wp}");
        let (_, _, p_same) = pooled_t(&group[0], &group[1], &group).unwrap();
        assert!(p_same > 0.5, "{p_same}");
        assert!(pooled_t(&group[0], &group[1], &[summarize(&[1.0])]).is_none());
    }

    #[test]
    fn ratio_interval_contains_the_ratio_and_narrows_with_n() {
        let a = summarize(&[110.0, 112.0, 108.0, 111.0, 109.0]);
        let b = summarize(&[100.0, 102.0, 98.0, 101.0, 99.0]);
        let (r, ci) = ratio(&a, &b);
        let (lo, hi) = ci.unwrap();
        assert!(
            close(r, 1.1, 1e-3) && lo < r && r < hi && lo > 1.0,
            "{lo} {r} {hi}"
        );
        let (_, none) = ratio(&a, &summarize(&[100.0]));
        assert!(none.is_none());
    }
}
