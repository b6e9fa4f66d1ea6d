//! `fsbench history` and `fsbench check`, and where the history database is (`--history`,
//! `FSBENCH_HISTORY`, `--no-history`).

use std::path::PathBuf;

use clap::{Args, Subcommand};

/// Where the history is, for every command that runs or reads studies.
#[derive(Args, Debug, Clone, Default)]
pub struct HistoryArgs {
    /// The history database every study is indexed in (default: as root
    /// /var/lib/fsbench/history.db, else $XDG_DATA_HOME/fsbench/history.db)
    #[arg(long, global = true, env = "FSBENCH_HISTORY", value_name = "PATH")]
    pub history: Option<PathBuf>,
    /// Do not index this study in the history (nor read it)
    #[arg(long, global = true)]
    pub no_history: bool,
}

#[derive(Args, Debug)]
pub struct HistoryCmd {
    #[command(subcommand)]
    pub action: Option<HistoryAction>,
    #[command(flatten)]
    pub filter: ListArgs,
    /// Machine-readable output
    #[arg(long, global = true)]
    pub json: bool,
    #[command(flatten)]
    pub where_: HistoryArgs,
}

/// Filters of the list.
#[derive(Args, Debug, Clone, Default)]
pub struct ListArgs {
    /// Studies with a target whose label or spec contains this
    #[arg(long)]
    pub target: Option<String>,
    /// Studies that ran this job (its spec as listed) or a workload of this name
    #[arg(long)]
    pub workload: Option<String>,
    /// Studies run on this host
    #[arg(long)]
    pub host: Option<String>,
    /// Studies started on or after this date (2026-11-01, or an RFC 3339 time)
    #[arg(long, value_name = "DATE", value_parser = since_arg)]
    pub since: Option<String>,
}

#[derive(Subcommand, Debug)]
pub enum HistoryAction {
    /// A metric of one target and workload across the studies, with intervals; writes an HTML
    /// page with the trend chart
    #[command(
        after_help = "Examples:\n  fsbench history trend iops --target ext4 --workload cdm\n  fsbench history trend files_per_sec --target xfs --workload files --html trend.html\n\nEach study is a point (its repeats' geometric mean and 95% interval); a point where the\nenvironment's fingerprint changed (kernel, mkfs tool, mount options, ...) is marked and the\nfields that changed are named."
    )]
    Trend {
        /// A metric of the records (iops, bytes_per_sec, lat_p99_ns, files_per_sec, ...)
        metric: String,
        /// The target's label or spec as written
        #[arg(long)]
        target: String,
        /// The job as `fsbench history` lists it (block:rw=randread,bs=4k), or a workload's
        /// name when the target ran one job of it
        #[arg(long)]
        workload: String,
        /// Where the HTML page goes (default: fsbench-trend-METRIC.html)
        #[arg(long, value_name = "FILE")]
        html: Option<PathBuf>,
    },
    /// Rebuild the history from study directories (the source of truth): each is indexed again
    #[command(
        after_help = "Examples:\n  fsbench history rebuild study-*\n  fsbench history rebuild --history new.db /srv/studies/*\n\nA study already in the database is replaced by what its directory holds now."
    )]
    Rebuild {
        /// Study directories
        #[arg(required = true, value_name = "DIR")]
        dirs: Vec<PathBuf>,
    },
}

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// The study to check
    #[arg(value_name = "NEW")]
    pub new: PathBuf,
    /// The study to check it against
    #[arg(long, value_name = "OLD", conflicts_with = "against_history")]
    pub against: Option<PathBuf>,
    /// Check it against the last N studies in the history that share its figures
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub against_history: Option<u32>,
    /// A figure is regressed when its whole 95% interval lies below 1 - tolerance, improved
    /// when above 1 + tolerance (5% = 0.05; 5% also reads)
    #[arg(long, default_value = "5%", value_parser = tolerance_arg)]
    pub tolerance: f64,
    /// Output: text, json, or junit (JUnit XML for CI systems)
    #[arg(long, default_value = "text", value_parser = ["text", "json", "junit"])]
    pub format: String,
    #[command(flatten)]
    pub where_: HistoryArgs,
}

/// `--since`: a date (YYYY-MM-DD) that exists, optionally with a time as RFC 3339 writes it
/// (`T12:00`, `T12:00:00`, `T12:00:00.5`, then `Z` or `+02:00`).
pub fn since_arg(s: &str) -> Result<String, String> {
    let fix = "give a date as 2026-11-01 (YYYY-MM-DD) or a time as 2026-11-01T12:00:00Z";
    let (date, time) = match s.find(['T', 't', ' ']) {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    };
    check_date(date).map_err(|why| format!("--since {s}: {why}: {fix}"))?;
    if let Some(t) = time {
        check_time(t).map_err(|why| format!("--since {s}: {why}: {fix}"))?;
    }
    Ok(s.to_string())
}

/// The number `text` writes in exactly `digits` digits, if it does.
fn number(text: &str, digits: usize) -> Option<u32> {
    (text.len() == digits && text.bytes().all(|b| b.is_ascii_digit()))
        .then(|| text.parse().ok())
        .flatten()
}

/// YYYY-MM-DD, a day that exists (2026-02-29 does not).
fn check_date(d: &str) -> Result<(), String> {
    let mut parts = d.split('-');
    let (Some(y), Some(m), Some(day), None) = (
        parts.next().and_then(|p| number(p, 4)),
        parts.next().and_then(|p| number(p, 2)),
        parts.next().and_then(|p| number(p, 2)),
        parts.next(),
    ) else {
        return Err("not a date of the form YYYY-MM-DD".into());
    };
    if !(1..=12).contains(&m) {
        return Err(format!("there is no month {m}"));
    }
    let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    let days = match m {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    if !(1..=days).contains(&day) {
        return Err(format!("month {m} of {y} has no day {day}"));
    }
    Ok(())
}

/// HH:MM[:SS[.fraction]][Z|+HH:MM|-HH:MM], each field in its range.
fn check_time(t: &str) -> Result<(), String> {
    let bad = || "not a time of the form 12:00:00Z".to_string();
    let (clock, zone) = match t.find(['Z', 'z', '+', '-']) {
        Some(i) => (&t[..i], &t[i..]),
        None => (t, ""),
    };
    let (clock, fraction) = clock.split_once('.').unwrap_or((clock, "0"));
    if fraction.is_empty() || !fraction.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let f: Vec<&str> = clock.split(':').collect();
    let (h, m, sec) = match f.as_slice() {
        [h, m] => (number(h, 2), number(m, 2), Some(0)),
        [h, m, s] => (number(h, 2), number(m, 2), number(s, 2)),
        _ => return Err(bad()),
    };
    match (h, m, sec) {
        (Some(h), Some(m), Some(s)) if h < 24 && m < 60 && s < 61 => {}
        _ => return Err("no such time of day".into()),
    }
    let in_range = |text: &str, below: u32| number(text, 2).is_some_and(|v| v < below);
    match zone {
        "" | "Z" | "z" => Ok(()),
        z => match z[1..].split_once(':') {
            Some((h, m)) if in_range(h, 24) && in_range(m, 60) => Ok(()),
            _ => Err("not a time zone of the form Z or +02:00".into()),
        },
    }
}

/// `--tolerance`: 5% or 0.05, from 0 up to 100%.
fn tolerance_arg(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let v = match t.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|v| v / 100.0),
        None => t.parse::<f64>(),
    }
    .map_err(|_| format!("--tolerance {s}: give a share such as 5% or 0.05"))?;
    if !(0.0..1.0).contains(&v) {
        return Err(format!(
            "--tolerance {s}: give a share from 0% up to (not including) 100%, e.g. 5%"
        ));
    }
    Ok(v)
}

pub const HISTORY_HELP: &str = "Examples:\n  fsbench history                              every study indexed, oldest first\n  fsbench history --target ext4 --since 2026-11-01\n  fsbench history --workload cdm --host db1 --json\n  fsbench history trend iops --target ext4 --workload cdm\n  fsbench history rebuild study-*               the database again from the study directories\n\nEvery study (compare, study, audit, tune, run) is indexed as it runs, each record the moment\nit is written, in FSBENCH_HISTORY or --history (default: as root /var/lib/fsbench/history.db,\nelse $XDG_DATA_HOME/fsbench/history.db); --no-history skips it.";

pub const CHECK_HELP: &str = "Examples:\n  fsbench check new-study --against old-study\n  fsbench check new-study --against-history 5 --tolerance 3%\n  fsbench check new-study --against old-study --format junit > check.xml\n\nFor each headline figure both have (a target, job and test), the ratio NEW/OLD with its 95%\ninterval from the repeats of both (on the log scale): regressed when the whole interval is\nbelow 1 - tolerance, improved when above 1 + tolerance, else unchanged. With one repeat on a side the history's spread of\nthat figure on the same fingerprint is used, if it has one. The environment fields that differ\n(kernel, mkfs tool, mount options, ...) are printed, and so are the figures only one side has\nand a study that is incomplete (it did not end, or has fewer repeats than planned).\n\nExit status: 0 nothing regressed, 1 something regressed, 2 bad input.";

#[cfg(test)]
mod tests {
    #[test]
    fn tolerance_reads_percent_and_share() {
        assert_eq!(super::tolerance_arg("5%").unwrap(), 0.05);
        assert_eq!(super::tolerance_arg("0.1").unwrap(), 0.1);
        assert!(super::tolerance_arg("150%").is_err());
        assert!(super::tolerance_arg("x").is_err());
        assert!(super::since_arg("2026-11-01").is_ok());
        assert!(super::since_arg("2026-11-01T10:00:00Z").is_ok());
        assert!(super::since_arg("yesterday").is_err());
        for ok in [
            "2024-02-29",
            "2026-12-31T23:59:60Z",
            "2026-11-01T12:00",
            "2026-11-01T10:00:00.25+02:00",
        ] {
            assert!(super::since_arg(ok).is_ok(), "{ok}");
        }
        for bad in [
            "2026-13-45",
            "2026-00-10",
            "2026-02-29",
            "2026-04-31",
            "2026-11-00",
            "2026-11-1",
            "20261-11-01",
            "2026-11-01T25:00",
            "2026-11-01T12:60",
            "2026-11-01T12:00:00+25:00",
            "2026-11-01Tnoon",
            "2026-11-01T12:00:00.",
            "",
            "\u{e9}\u{e9}-11-01",
        ] {
            let e = super::since_arg(bad).unwrap_err();
            assert!(e.contains(bad) && e.contains("2026-11-01"), "{bad}: {e}");
        }
    }
}
