//! The values of `compare`'s flags, and of the study-file keys named after them, checked one way:
//! a study file (or its `--set`) holds nothing the command line refuses, and the reverse.

use std::ops::RangeInclusive;
use std::time::Duration;

use super::PlanError;

/// How many times a study may run everything (`--repeat`, `repeat =`).
pub const REPEATS: RangeInclusive<u32> = 1..=1000;

/// The shortest and longest interval of the latency-over-time histograms (`--interval`).
pub const INTERVAL_MIN: Duration = Duration::from_millis(100);
pub const INTERVAL_MAX: Duration = Duration::from_secs(3600);

/// A repeat count: a whole number in `REPEATS`.
pub fn repeat(n: i64) -> Result<u32, PlanError> {
    u32::try_from(n)
        .ok()
        .filter(|n| REPEATS.contains(n))
        .ok_or_else(|| {
            format!(
                "repeat {n}: give a whole number from {} to {}, e.g. 3",
                REPEATS.start(),
                REPEATS.end()
            )
            .into()
        })
}

/// `--repeat N`.
pub fn repeat_arg(s: &str) -> Result<u32, PlanError> {
    let n: i64 = s.trim().parse().map_err(|_| {
        PlanError(format!(
            "'{s}' is not a whole number: give one from {} to {}, e.g. 3",
            REPEATS.start(),
            REPEATS.end()
        ))
    })?;
    repeat(n)
}

/// A size of more than 0 bytes (a backing, a test file).
pub fn nonzero_size(s: &str) -> Result<u64, PlanError> {
    match super::units::parse_size(s)? {
        0 => Err(format!("'{s}' is 0 bytes: give a size of more than 0, e.g. 256M").into()),
        n => Ok(n),
    }
}

/// A runtime of more than 0.
pub fn runtime(s: &str) -> Result<Duration, PlanError> {
    let d = super::fio::values::parse_duration(s)?;
    if d.is_zero() {
        return Err("the runtime must be more than 0, e.g. 2s".into());
    }
    Ok(d)
}

/// The interval of the latency-over-time histograms, `INTERVAL_MIN` to `INTERVAL_MAX`.
pub fn interval(s: &str) -> Result<Duration, PlanError> {
    let d = super::fio::values::parse_duration(s)?;
    if !(INTERVAL_MIN..=INTERVAL_MAX).contains(&d) {
        return Err(format!(
            "--interval {s}: give an interval from 100ms to 1h, e.g. 1s (the default) or 500ms"
        )
        .into());
    }
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_value_is_refused_where_the_command_line_refuses_it() {
        assert_eq!(repeat(1).unwrap(), 1);
        assert_eq!(repeat(1000).unwrap(), 1000);
        for n in [0, -1, 1001, 1_000_000_000, i64::MAX] {
            assert!(repeat(n).is_err(), "{n}");
        }
        assert_eq!(repeat_arg("3").unwrap(), 3);
        assert!(repeat_arg("three").is_err());
        assert!(nonzero_size("0").is_err());
        assert_eq!(nonzero_size("1k").unwrap(), 1024);
        assert!(runtime("0s").is_err());
        assert!(interval("10ms").is_err() && interval("2h").is_err());
        assert_eq!(interval("1s").unwrap(), Duration::from_secs(1));
    }
}
