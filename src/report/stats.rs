//! Statistics over repeats: mean, standard deviation, 95% confidence intervals (Student t), the
//! ratio of two means with its interval, and Welch's t-test. Pure functions.

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, StudentsT};

/// Two-sided 95%: the t quantile used for every interval.
pub const LEVEL: f64 = 0.95;
/// A coefficient of variation above this marks a result as noisy.
pub const NOISY_CV: f64 = 0.10;

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Summary {
    pub n: usize,
    pub mean: f64,
    pub sd: f64,
    /// 95% confidence interval of the mean (equal to the mean when n < 2).
    pub ci_lo: f64,
    pub ci_hi: f64,
    /// sd / mean.
    pub cv: f64,
}

/// The t quantile for a two-sided interval at `level` with `df` degrees of freedom.
pub fn t_quantile(level: f64, df: f64) -> f64 {
    let t = StudentsT::new(0.0, 1.0, df).expect("df > 0");
    t.inverse_cdf(0.5 + level / 2.0)
}

pub fn summarize(xs: &[f64]) -> Summary {
    let n = xs.len();
    let mean = if n == 0 {
        f64::NAN
    } else {
        xs.iter().sum::<f64>() / n as f64
    };
    let sd = if n < 2 {
        0.0
    } else {
        (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
    };
    let half = if n < 2 {
        0.0
    } else {
        t_quantile(LEVEL, (n - 1) as f64) * sd / (n as f64).sqrt()
    };
    Summary {
        n,
        mean,
        sd,
        ci_lo: mean - half,
        ci_hi: mean + half,
        cv: if mean != 0.0 { sd / mean.abs() } else { 0.0 },
    }
}

/// Welch's t-test of two samples: (t, degrees of freedom, two-sided p-value). None when either
/// sample has fewer than 2 values or both have no spread.
pub fn welch(a: &Summary, b: &Summary) -> Option<(f64, f64, f64)> {
    if a.n < 2 || b.n < 2 {
        return None;
    }
    let va = a.sd * a.sd / a.n as f64;
    let vb = b.sd * b.sd / b.n as f64;
    if va + vb == 0.0 {
        return None;
    }
    let t = (a.mean - b.mean) / (va + vb).sqrt();
    let df = (va + vb).powi(2) / (va * va / (a.n - 1) as f64 + vb * vb / (b.n - 1) as f64);
    let dist = StudentsT::new(0.0, 1.0, df).ok()?;
    let p = 2.0 * (1.0 - dist.cdf(t.abs()));
    Some((t, df, p))
}

/// The ratio of two means (a / b) with a 95% interval from the delta method on the log scale,
/// with Welch-Satterthwaite degrees of freedom. The interval is None when n < 2 on either side.
pub fn ratio(a: &Summary, b: &Summary) -> (f64, Option<(f64, f64)>) {
    let r = a.mean / b.mean;
    if a.n < 2 || b.n < 2 || a.mean <= 0.0 || b.mean <= 0.0 {
        return (r, None);
    }
    let va = (a.sd / a.mean).powi(2) / a.n as f64;
    let vb = (b.sd / b.mean).powi(2) / b.n as f64;
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
    fn mean_sd_and_interval() {
        let s = summarize(&[10.0, 12.0, 14.0, 16.0, 18.0]);
        assert_eq!((s.n, s.mean), (5, 14.0));
        assert!(close(s.sd, 3.1623, 1e-4));
        // 14 +- 2.776 * 3.1623 / sqrt(5) = 14 +- 3.926
        assert!(close(s.ci_lo, 10.074, 1e-3) && close(s.ci_hi, 17.926, 1e-3));
        let one = summarize(&[5.0]);
        assert_eq!((one.sd, one.ci_lo, one.ci_hi), (0.0, 5.0, 5.0));
    }

    #[test]
    fn welch_matches_the_reference_example() {
        // Welch's t-test, example 1 of the Wikipedia article (t = -2.46, df = 24.98, p = 0.021).
        let a = summarize(&[
            27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7,
            21.4,
        ]);
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
    fn ratio_interval_contains_the_ratio_and_narrows_with_n() {
        let a = summarize(&[110.0, 112.0, 108.0, 111.0, 109.0]);
        let b = summarize(&[100.0, 102.0, 98.0, 101.0, 99.0]);
        let (r, ci) = ratio(&a, &b);
        let (lo, hi) = ci.unwrap();
        assert!(
            close(r, 1.1, 1e-9) && lo < r && r < hi && lo > 1.0,
            "{lo} {r} {hi}"
        );
        let (_, none) = ratio(&a, &summarize(&[100.0]));
        assert!(none.is_none());
    }
}
