//! Workload specs: `name[:key=value,...]`, e.g. `smoke`, `smoke:size=16M`.

use super::PlanError;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkloadSpec {
    /// As written on the command line.
    pub spec: String,
    pub name: String,
    /// Each parameter and its value; None for a key written bare (`time_based`), which only a
    /// fio option that is a switch takes (the workload says: `workload::build`).
    pub params: Vec<(String, Option<String>)>,
}

impl WorkloadSpec {
    /// The value of `key` (None when absent or written bare).
    pub fn param(&self, key: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(k, _)| k == key)
            .and_then(|(_, v)| v.as_deref())
    }

    /// The first key written bare, if any.
    pub fn bare(&self) -> Option<&str> {
        self.params
            .iter()
            .find(|(_, v)| v.is_none())
            .map(|(k, _)| k.as_str())
    }

    /// A usage error about this spec, naming it.
    pub fn bad(&self, what: impl std::fmt::Display) -> PlanError {
        PlanError(format!("workload '{}': {what}", self.spec))
    }

    /// A whole number (`default` when absent).
    pub fn number(&self, key: &str, default: u64) -> Result<u64, PlanError> {
        match self.param(key) {
            None => Ok(default),
            Some(v) => v
                .trim()
                .parse()
                .map_err(|_| self.bad(format!("{key}={v} is not a whole number"))),
        }
    }

    /// A switch written 1/0, yes/no or true/false (`default` when absent).
    pub fn flag(&self, key: &str, default: bool) -> Result<bool, PlanError> {
        match self.param(key) {
            None => Ok(default),
            Some("1") | Some("yes") | Some("true") => Ok(true),
            Some("0") | Some("no") | Some("false") => Ok(false),
            Some(v) => Err(self.bad(format!("{key}={v}: use 1 or 0"))),
        }
    }

    /// A size such as 64K or 1G, in bytes (None when absent).
    pub fn size(&self, key: &str) -> Result<Option<u64>, PlanError> {
        self.param(key)
            .map(|v| super::units::parse_size(v).map_err(|e| self.bad(format!("{key}: {e}"))))
            .transpose()
    }

    /// The job as the history and `fsbench check` key its figures: the name, then each
    /// parameter as `key=value` (or `key` when bare) in the order written, spaces trimmed
    /// (`block:rw=randread,bs=4k,time_based`);
    /// `fio:PATH` as written. Two studies of one job share it; jobs that differ never do.
    pub fn canonical(&self) -> String {
        if let Some((_, key)) = WHOLE.iter().find(|(n, _)| *n == self.name) {
            if let Some(rest) = self.param(key) {
                return format!("{}:{rest}", self.name);
            }
        }
        if self.params.is_empty() {
            return self.name.clone();
        }
        format!("{}:{}", self.name, options_text(&self.params))
    }
}

/// The job a record belongs to, as `WorkloadSpec::canonical` names it: records carry their
/// workload's name, or its spec as written when the plan runs one workload twice. A name the
/// plan does not tell apart (the audit's two cases both write `audit`) stays as recorded.
pub fn job_of(workloads: &[WorkloadSpec], recorded: &str) -> String {
    if let Some(w) = workloads.iter().find(|w| w.spec == recorded) {
        return w.canonical();
    }
    let mut named = workloads.iter().filter(|w| w.name == recorded);
    match (named.next(), named.next()) {
        (Some(w), None) => w.canonical(),
        _ => recorded.to_string(),
    }
}

/// The workloads whose spec's rest is one value, not `key=value` parameters: the name, and the
/// parameter that holds it (a fio job file's path; IOR's and mdtest's command lines).
pub const WHOLE: &[(&str, &str)] = &[("fio", "file"), ("ior", "args"), ("mdtest", "args")];

/// Parameters as written in a spec: `key=value` or a bare `key`, joined by commas.
pub fn options_text(params: &[(String, Option<String>)]) -> String {
    let one = |(k, v): &(String, Option<String>)| match v {
        Some(v) => format!("{k}={v}"),
        None => k.clone(),
    };
    params.iter().map(one).collect::<Vec<_>>().join(",")
}

/// Splits a workload spec into its name and `key=value` (or bare `key`) parameters; the
/// workload checks them.
pub fn parse_workload(text: &str) -> Result<WorkloadSpec, PlanError> {
    let spec = text.trim();
    let (name, rest) = spec.split_once(':').unwrap_or((spec, ""));
    if let Some((whole, key)) = WHOLE.iter().find(|(n, _)| name.eq_ignore_ascii_case(n)) {
        if *whole == "fio" && rest.trim().is_empty() {
            return Err("workload 'fio' needs a job file: --workload fio:PATH/TO/JOB.fio".into());
        }
        return Ok(WorkloadSpec {
            spec: spec.to_string(),
            name: whole.to_string(),
            params: vec![(key.to_string(), Some(rest.trim().to_string()))],
        });
    }
    if name.is_empty() {
        return Err("empty workload: name one, e.g. --workload smoke".into());
    }
    let mut params = Vec::new();
    for token in rest.split(',').filter(|t| !t.trim().is_empty()) {
        params.push(match token.split_once('=') {
            Some((k, v)) => (k.trim().to_string(), Some(v.trim().to_string())),
            None => (token.trim().to_string(), None),
        });
    }
    Ok(WorkloadSpec {
        spec: spec.to_string(),
        name: name.to_ascii_lowercase(),
        params,
    })
}

/// Global overrides from the command line for quick runs of block jobs: `--runtime 2s` makes
/// every job time based with that runtime, `--file-size 256M` sets every job's file size.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Overrides {
    pub runtime: Option<std::time::Duration>,
    pub file_size: Option<u64>,
    /// The study's seed: every workload without a seed of its own derives its data from it, so
    /// that the study re-runs alike (`study.toml`); None draws a fresh one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// The interval of the latency-over-time histograms of every phase (`--interval`); None: 1 s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<std::time::Duration>,
    /// `compare --until-steady`: every preset job runs until its steady state, or its maximum.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until_steady: Option<UntilSteady>,
    /// `--profile`: the call-chain profiles every measured phase records (none when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<crate::plan::profile::ProfileMode>,
}

/// `--until-steady[=CRITERION[,dur=D][,ramp=D][,max=D]]`: fio's steadystate criterion, its window
/// and ramp, and the longest a job may run waiting for it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct UntilSteady {
    pub steady: crate::plan::job::Steady,
    pub max: std::time::Duration,
}

/// What `--until-steady` alone means.
pub const UNTIL_STEADY_DEFAULT: &str = "iops_slope:0.5%,dur=10s,ramp=5s,max=120s";

impl std::fmt::Display for UntilSteady {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        let s = &self.steady;
        write!(
            f,
            "{},dur={}s,ramp={}s,max={}s",
            s.criterion(),
            s.dur.as_secs_f64(),
            s.ramp.as_secs_f64(),
            self.max.as_secs_f64()
        )
    }
}

impl std::str::FromStr for UntilSteady {
    type Err = PlanError;

    fn from_str(s: &str) -> Result<UntilSteady, PlanError> {
        use crate::plan::fio::values::{parse_duration, parse_steady};
        let fix = format!("e.g. --until-steady={UNTIL_STEADY_DEFAULT} (the default)");
        let mut parts = s.split(',').map(str::trim);
        let (kind, limit, pct) = parse_steady(parts.next().unwrap_or(""))
            .map_err(|e| PlanError(format!("--until-steady: {e}")))?;
        let mut u = UntilSteady {
            steady: crate::plan::job::Steady {
                kind,
                limit,
                pct,
                dur: std::time::Duration::from_secs(10),
                ramp: std::time::Duration::from_secs(5),
                headline: true,
                interval: std::time::Duration::ZERO,
            },
            max: std::time::Duration::from_secs(120),
        };
        for p in parts {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            let d = parse_duration(v).map_err(|e| format!("--until-steady {p}: {e}; {fix}"))?;
            match k.trim() {
                "dur" | "ss_dur" => u.steady.dur = d,
                "ramp" | "ss_ramp" => u.steady.ramp = d,
                "max" => u.max = d,
                other => {
                    return Err(format!(
                    "--until-steady: unknown key '{other}': the keys are dur, ramp and max; {fix}"
                )
                    .into())
                }
            }
        }
        if u.steady.dur < std::time::Duration::from_secs(1) {
            return Err(format!(
                "--until-steady: dur is the window of one sample a second: give 1s or more; {fix}"
            )
            .into());
        }
        if u.max < u.steady.ramp + u.steady.dur {
            return Err(format!("--until-steady: max ({:?}) is shorter than ramp + dur, so the state could never be judged: give a longer max; {fix}", u.max).into());
        }
        Ok(u)
    }
}

impl Overrides {
    /// The interval of the latency-over-time histograms.
    pub fn interval(&self) -> std::time::Duration {
        self.interval.unwrap_or(DEFAULT_INTERVAL)
    }
}

/// The interval of the latency-over-time histograms when `--interval` is not given.
pub const DEFAULT_INTERVAL: std::time::Duration = std::time::Duration::from_secs(1);

#[cfg(test)]
mod until_steady_tests {
    use super::*;

    #[test]
    fn until_steady_reads_its_criterion_and_keys_and_says_them_back() {
        let u: UntilSteady = UNTIL_STEADY_DEFAULT.parse().unwrap();
        assert_eq!(u.steady.criterion(), "iops_slope:0.5%");
        assert_eq!(u.max, std::time::Duration::from_secs(120));
        assert!(u.steady.headline);
        assert_eq!(u.to_string().parse::<UntilSteady>().unwrap(), u);
        let u: UntilSteady = "bw:50m,dur=20s,max=5m".parse().unwrap();
        assert_eq!((u.steady.limit, u.steady.pct), (52428800.0, false));
        assert_eq!(u.steady.dur, std::time::Duration::from_secs(20));
        for (bad, says) in [
            ("clat:1%", "unknown criterion 'clat'"),
            ("iops:1%,len=3s", "unknown key 'len'"),
            ("iops:1%,max=5s", "shorter than ramp + dur"),
            ("iops:1%,dur=0", "1s or more"),
        ] {
            let e = bad.parse::<UntilSteady>().unwrap_err().to_string();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }
}

#[cfg(test)]
mod spec_tests {
    use super::*;

    #[test]
    fn a_bare_key_is_kept_bare_and_said_back_bare() {
        let w = parse_workload("block:rw=randread, time_based ,bs=4k").unwrap();
        assert_eq!(
            w.params,
            vec![
                ("rw".into(), Some("randread".into())),
                ("time_based".into(), None),
                ("bs".into(), Some("4k".into())),
            ]
        );
        assert_eq!(
            (w.param("time_based"), w.bare()),
            (None, Some("time_based"))
        );
        assert_eq!(w.canonical(), "block:rw=randread,time_based,bs=4k");
        // `key=` is a value, empty, not a bare key.
        assert_eq!(parse_workload("smoke:size=").unwrap().bare(), None);
    }
}
