//! A study written down: `compare`'s flags as a TOML file (`targets`, `workloads`, `repeat`,
//! `size`, `runtime`, `file_size`, `baseline`, `seed`), with what it is (`title`, `source`,
//! `notes`), tables of overrides per scale (`[scale.small]`, `[scale.full]`) and the published
//! findings it checks (`[[claim]]`). Pure: a file's text in, a checked study out; `--set` and the
//! scale are applied to the document before it is read, so an unknown key is the same error
//! wherever it comes from.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::PlanError;

/// The study files fsbench ships (also in `studies/` of the repository), by name.
pub const SHIPPED: &[(&str, &str)] = &[
    (
        "hpc-btrfs-zfs",
        include_str!("../../studies/hpc-btrfs-zfs.toml"),
    ),
    (
        "ssd-ext4-xfs-btrfs",
        include_str!("../../studies/ssd-ext4-xfs-btrfs.toml"),
    ),
    (
        "btrfs-vs-zfs",
        include_str!("../../studies/btrfs-vs-zfs.toml"),
    ),
    (
        "billion-files",
        include_str!("../../studies/billion-files.toml"),
    ),
    (
        "iozone-vs-xfs",
        include_str!("../../studies/iozone-vs-xfs.toml"),
    ),
];

/// The keys of a study file (and of a scale's table), as `compare`'s flags are named.
pub const KEYS: &[&str] = &[
    "title",
    "source",
    "notes",
    "targets",
    "workloads",
    "repeat",
    "size",
    "runtime",
    "file_size",
    "baseline",
    "seed",
    "interval",
    "until_steady",
    "fsbench_version",
    "scale",
    "claim",
];

/// A study as its file says, after the scale and `--set` were applied.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StudyFile {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Where the study comes from: a citation or a URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// What a reader should know: what the study used that this host may lack, and what stands
    /// in for it here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
    #[serde(default)]
    pub targets: Vec<String>,
    #[serde(default)]
    pub workloads: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_size: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<String>,
    /// The seed every workload without a seed of its own derives its data from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// The interval of the latency-over-time histograms (`--interval`), e.g. "1s".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<String>,
    /// `compare --until-steady`'s criterion, window, ramp and maximum, e.g.
    /// "iops_slope:0.5%,dur=10s,ramp=5s,max=120s".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until_steady: Option<String>,
    /// The fsbench that wrote the file (`study.toml` of a study directory); informational.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fsbench_version: Option<String>,
    /// Overrides by scale: `[scale.small]` (the default when present), `[scale.full]`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub scale: BTreeMap<String, toml::Table>,
    #[serde(default, rename = "claim", skip_serializing_if = "Vec::is_empty")]
    pub claims: Vec<Claim>,
}

/// A published finding, and what would confirm it on this host.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Claim {
    /// The finding, in a sentence.
    pub says: String,
    /// The sentence or table it comes from.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub quote: String,
    /// The published figure, as published.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub published: Option<String>,
    /// What is measured: a metric of the records of a target (its label), optionally of one
    /// workload and one test.
    pub target: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test: Option<String>,
    pub metric: String,
    /// Divided by the same metric of another target (`vs`) and/or another test (`vs_test`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vs: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vs_test: Option<String>,
    /// What confirms it: `< X`, `> X`, or `A..B` (between), for the figure or the ratio.
    pub expect: String,
    /// Why this host may differ from the study's (a loop image is not a disk; zfs-fuse is not
    /// kernel ZFS).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

/// What a claim expects of a figure.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Expect {
    Below(f64),
    Above(f64),
    Between(f64, f64),
}

impl Expect {
    pub fn parse(text: &str) -> Result<Expect, String> {
        let t = text.trim();
        let num = |s: &str| -> Result<f64, String> {
            s.trim()
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| format!("expect = \"{text}\": '{}' is not a number", s.trim()))
        };
        if let Some(v) = t.strip_prefix('<') {
            return Ok(Expect::Below(num(v)?));
        }
        if let Some(v) = t.strip_prefix('>') {
            return Ok(Expect::Above(num(v)?));
        }
        if let Some((a, b)) = t.split_once("..") {
            let (a, b) = (num(a)?, num(b)?);
            if a < b {
                return Ok(Expect::Between(a, b));
            }
        }
        Err(format!(
            "expect = \"{text}\": write \"< X\", \"> X\" or \"A..B\" (A below B)"
        ))
    }

    pub fn describe(&self) -> String {
        match self {
            Expect::Below(x) => format!("< {x}"),
            Expect::Above(x) => format!("> {x}"),
            Expect::Between(a, b) => format!("{a}..{b}"),
        }
    }
}

impl Claim {
    pub fn expectation(&self) -> Result<Expect, String> {
        Expect::parse(&self.expect)
    }
}

/// What a study is, as the plan carries it into the manifest (the report reads its claims).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StudyMeta {
    /// The shipped study's name, or the file it came from.
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
    /// The scale it ran at (`small`, `full`), when the file has scales.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub claims: Vec<Claim>,
}

/// `KEY=VALUE` of `--set`: VALUE in TOML's syntax (`repeat=5`, `targets=["ext4","xfs"]`), or
/// else taken as a string (`size=2G`).
pub fn parse_set(text: &str) -> Result<(String, toml::Value), PlanError> {
    let Some((k, v)) = text.split_once('=') else {
        return Err(format!("--set {text}: write KEY=VALUE, e.g. --set repeat=5").into());
    };
    let k = k.trim();
    if !KEYS.contains(&k) || k == "scale" || k == "claim" {
        return Err(format!(
            "--set {text}: unknown key '{k}': valid keys are {}",
            settable().join(", ")
        )
        .into());
    }
    let value = toml::from_str::<toml::Table>(&format!("v = {v}"))
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| toml::Value::String(v.to_string()));
    Ok((k.to_string(), value))
}

fn settable() -> Vec<&'static str> {
    KEYS.iter()
        .copied()
        .filter(|k| *k != "scale" && *k != "claim")
        .collect()
}

/// Reads a study file: the `[scale.NAME]` table (`scale`, or `small` when the file has one and
/// none is asked for) laid over the top-level keys, then the `--set` pairs; unknown keys, a TOML
/// syntax error (with its line and column) or a bad claim are errors naming `origin` and the fix.
pub fn parse(
    text: &str,
    origin: &str,
    scale: Option<&str>,
    sets: &[(String, toml::Value)],
) -> Result<(StudyFile, Option<String>), PlanError> {
    let mut doc: toml::Table = toml::from_str(text).map_err(|e| {
        format!(
            "{origin}: not a study file: {}",
            e.to_string().trim_end().replace('\n', "\n  ")
        )
    })?;
    let scales = match doc.get("scale") {
        Some(toml::Value::Table(t)) => t.clone(),
        Some(_) => return Err(format!("{origin}: scale must be a table: [scale.small]").into()),
        None => toml::Table::new(),
    };
    let picked = match scale {
        Some(s) if scales.contains_key(s) => Some(s.to_string()),
        Some(s) => {
            let known: Vec<&String> = scales.keys().collect();
            return Err(format!(
                "{origin}: no [scale.{s}] table{}",
                if known.is_empty() {
                    " (the file has no scales: drop --scale)".to_string()
                } else {
                    format!(
                        ": it has {}",
                        known
                            .iter()
                            .map(|k| k.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                }
            )
            .into());
        }
        None => scales.contains_key("small").then(|| "small".to_string()),
    };
    if let Some(s) = &picked {
        let Some(toml::Value::Table(over)) = scales.get(s) else {
            return Err(format!("{origin}: [scale.{s}] must be a table of keys").into());
        };
        for (k, v) in over {
            if !KEYS.contains(&k.as_str()) || k == "scale" || k == "claim" {
                return Err(format!(
                    "{origin}: unknown key '{k}' in [scale.{s}]: valid keys are {}",
                    settable().join(", ")
                )
                .into());
            }
            doc.insert(k.clone(), v.clone());
        }
    }
    for (k, v) in sets {
        doc.insert(k.clone(), v.clone());
    }
    let file: StudyFile = toml::Value::Table(doc).try_into().map_err(|e| {
        let e = e.to_string();
        format!(
            "{origin}: {}{}",
            e.trim_end(),
            if e.contains("unknown field") {
                format!(
                    " (the keys of a study file are compare's flags: {})",
                    KEYS.join(", ")
                )
            } else {
                String::new()
            }
        )
    })?;
    check(&file, origin)?;
    Ok((file, picked))
}

/// What a study file must hold to run: targets, workloads, claims whose expectations read.
fn check(f: &StudyFile, origin: &str) -> Result<(), PlanError> {
    if f.targets.is_empty() {
        return Err(format!("{origin}: no targets: add targets = [\"ext4\", \"xfs\"]").into());
    }
    if f.workloads.is_empty() {
        return Err(format!(
            "{origin}: no workloads: add workloads = [\"cdm\"] (fsbench list names them)"
        )
        .into());
    }
    for (i, c) in f.claims.iter().enumerate() {
        c.expectation()
            .map_err(|e| format!("{origin}: claim {} (\"{}\"): {e}", i + 1, c.says))?;
    }
    Ok(())
}

/// The study's text back (what `compare` writes as `study.toml`).
pub fn to_toml(f: &StudyFile) -> String {
    toml::to_string(f).unwrap_or_default()
}

/// A plan written down as a study file, with every default resolved (sizes in bytes, the
/// runtime in seconds, the seed), so that `fsbench study DIR/study.toml` runs it again.
pub fn from_plan(plan: &super::Plan) -> StudyFile {
    let meta = plan.study.clone().unwrap_or_default();
    StudyFile {
        title: meta.title,
        source: meta.source,
        notes: meta.notes,
        targets: plan.targets.iter().map(|t| t.spec.clone()).collect(),
        workloads: plan.workloads.iter().map(|w| w.spec.clone()).collect(),
        repeat: Some(plan.repeat),
        size: Some(plan.size_bytes.to_string()),
        runtime: plan
            .overrides
            .runtime
            .map(|d| format!("{}s", d.as_secs_f64())),
        file_size: plan.overrides.file_size.map(|b| b.to_string()),
        baseline: plan.baseline.clone(),
        seed: plan.overrides.seed,
        interval: plan
            .overrides
            .interval
            .map(|d| format!("{}s", d.as_secs_f64())),
        until_steady: plan.overrides.until_steady.map(|u| u.to_string()),
        fsbench_version: Some(env!("CARGO_PKG_VERSION").to_string()),
        scale: BTreeMap::new(),
        claims: meta.claims,
    }
}

/// A shipped study's text by name.
pub fn shipped(name: &str) -> Option<&'static str> {
    SHIPPED.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}

#[cfg(test)]
mod tests;
