//! A study written down: `compare`'s flags as a TOML file (`targets`, `workloads`, `repeat`,
//! `size`, `runtime`, `file_size`, `baseline`, `seed`), with what it is (`title`, `source`,
//! `notes`), tables of overrides per scale (`[scale.small]`, `[scale.full]`) and the published
//! findings it checks (`[[claim]]`). Pure: a file's text in, a checked study out; `--set` and the
//! scale are applied to the document before it is read, so an unknown key is the same error
//! wherever it comes from.

mod keys;

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::PlanError;
pub use keys::{Kind, KEYS};

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
    ("io500", include_str!("../../studies/io500.toml")),
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
/// else taken as a string (`size=2G`); one value (`keys::set_value`).
pub fn parse_set(text: &str) -> Result<(String, toml::Value), PlanError> {
    let Some((k, v)) = text.split_once('=') else {
        return Err(format!("--set {text}: write KEY=VALUE, e.g. --set repeat=5").into());
    };
    let k = k.trim();
    if !keys::settable().contains(&k) {
        return Err(format!(
            "--set: unknown {}: valid keys are {}",
            keys::shown(k),
            keys::settable().join(", ")
        )
        .into());
    }
    Ok((k.to_string(), keys::set_value(k, v)?))
}

/// What a study file's values are, read once (the checks `compare`'s flags make, in
/// `plan::flags`): a size, runtime or interval the command line refuses is refused here too.
#[derive(Debug, Clone, PartialEq)]
pub struct Values {
    pub repeat: u32,
    pub size: Option<u64>,
    pub runtime: Option<Duration>,
    pub file_size: Option<u64>,
    pub interval: Option<Duration>,
    pub until_steady: Option<super::workload::UntilSteady>,
}

/// A study file read: the file as it says (after its scale and `--set`), the scale it took, and
/// its values.
#[derive(Debug, Clone)]
pub struct Parsed {
    pub file: StudyFile,
    pub scale: Option<String>,
    pub values: Values,
}

/// Reads a study file: the `[scale.NAME]` table (`scale`, or `small` when the file has one and
/// none is asked for) laid over the top-level keys, then the `--set` pairs; an unknown key, a
/// value its key does not take, a TOML syntax error or a bad claim is an error naming `origin`,
/// the line and the fix, never quoting the file.
pub fn parse(
    text: &str,
    origin: &str,
    scale: Option<&str>,
    sets: &[(String, toml::Value)],
) -> Result<Parsed, PlanError> {
    let mut doc: toml::Table = toml::from_str(text).map_err(|e| {
        let at = e
            .span()
            .map(|s| format!("line {}: ", keys::line_of(text, s.start)))
            .unwrap_or_default();
        format!(
            "{origin}: not a study file (TOML with compare's flags as keys): {at}{}",
            keys::syntax_message(e.message())
        )
    })?;
    let picked = pick_scale(&doc, origin, scale)?;
    let mut places = keys::Places::of(text, picked.as_deref());
    keys::check(&doc, origin, &places)?;
    if let Some(s) = &picked {
        let over = doc
            .get("scale")
            .and_then(|t| t.get(s))
            .and_then(toml::Value::as_table)
            .cloned()
            .unwrap_or_default();
        for (k, v) in over {
            if !keys::settable().contains(&k.as_str()) {
                return Err(format!(
                    "{}: unknown {} in [scale.{s}]: valid keys are {}",
                    places.at(origin, &k),
                    keys::shown(&k),
                    keys::settable().join(", ")
                )
                .into());
            }
            doc.insert(k, v);
        }
    }
    for (k, v) in sets {
        places.set(k);
        doc.insert(k.clone(), v.clone());
    }
    keys::check(&doc, origin, &places)?;
    // (Every key and type was checked: what does not read is not shown back.)
    let file: StudyFile = toml::Value::Table(doc)
        .try_into()
        .map_err(|_| format!("{origin}: does not read as a study file"))?;
    let values = check(&file, origin, &places)?;
    Ok(Parsed {
        file,
        scale: picked,
        values,
    })
}

/// The scale whose table applies: `asked`, or `small` when the file has one.
fn pick_scale(
    doc: &toml::Table,
    origin: &str,
    asked: Option<&str>,
) -> Result<Option<String>, PlanError> {
    let scales = match doc.get("scale") {
        Some(toml::Value::Table(t)) => t.clone(),
        Some(_) => return Err(format!("{origin}: scale must be a table: [scale.small]").into()),
        None => toml::Table::new(),
    };
    match asked {
        Some(s) if scales.contains_key(s) => Ok(Some(s.to_string())),
        Some(s) => {
            let known: Vec<&str> = scales.keys().map(String::as_str).collect();
            Err(format!(
                "{origin}: no [scale.{s}] table{}",
                if known.is_empty() {
                    " (the file has no scales: drop --scale)".to_string()
                } else {
                    format!(": it has {}", known.join(", "))
                }
            )
            .into())
        }
        None => Ok(scales.contains_key("small").then(|| "small".to_string())),
    }
}

/// What a study file must hold to run: targets, workloads, values the command line would take,
/// claims whose expectations read. Returns the values.
fn check(f: &StudyFile, origin: &str, places: &keys::Places) -> Result<Values, PlanError> {
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
        if c.expectation().is_err() {
            return Err(format!(
                "{}: expect takes \"< X\", \"> X\" or \"A..B\" (A below B), X a number",
                places.claim(origin, i)
            )
            .into());
        }
    }
    // A value its key does not take: where, and what it takes (the value is not shown back).
    fn read<T, E>(
        text: &Option<String>,
        key: &str,
        parse: impl Fn(&str) -> Result<T, E>,
        at: &dyn Fn(&str) -> String,
    ) -> Result<Option<T>, PlanError> {
        text.as_deref()
            .map(|t| {
                parse(t).map_err(|_| {
                    let kind = keys::kind_of(key).unwrap_or(Kind::Text);
                    PlanError(format!("{}: {key} takes {}", at(key), kind.expects()))
                })
            })
            .transpose()
    }
    let at = |k: &str| places.at(origin, k);
    Ok(Values {
        repeat: f.repeat.unwrap_or(1),
        size: read(&f.size, "size", super::flags::nonzero_size, &at)?,
        runtime: read(&f.runtime, "runtime", super::flags::runtime, &at)?,
        file_size: read(&f.file_size, "file_size", super::flags::nonzero_size, &at)?,
        interval: read(&f.interval, "interval", super::flags::interval, &at)?,
        until_steady: read(&f.until_steady, "until_steady", str::parse, &at)?,
    })
}

/// The study's text back (what `compare` writes as `study.toml`).
pub fn to_toml(f: &StudyFile) -> String {
    toml::to_string(f).unwrap_or_default()
}

/// How a study directory's `study.toml` (`text`) differs from the study file of the plan its
/// manifest records (`recorded`): each changed key with its recorded value as TOML writes it
/// (`fsbench_version`, informational, left out). None when the recorded file cannot be written
/// as TOML (a seed above TOML's integers): there is nothing to compare with. A file that is no
/// longer TOML is an error naming its line, never quoting it.
pub fn changed_keys(
    recorded: &StudyFile,
    text: &str,
    origin: &str,
) -> Result<Option<Vec<(String, String)>>, PlanError> {
    let Ok(was) = toml::Table::try_from(recorded) else {
        return Ok(None);
    };
    let now: toml::Table = toml::from_str(text).map_err(|e| {
        let at = e
            .span()
            .map(|s| format!("line {}: ", keys::line_of(text, s.start)))
            .unwrap_or_default();
        format!(
            "{origin}: no longer reads as TOML ({at}{}): restore it, or remove it to resume",
            keys::syntax_message(e.message())
        )
    })?;
    let mut names: Vec<&String> = was.keys().chain(now.keys()).collect();
    names.sort();
    names.dedup();
    Ok(Some(
        names
            .into_iter()
            .filter(|k| *k != "fsbench_version" && was.get(*k) != now.get(*k))
            .map(|k| {
                let value = was.get(k).map_or("(none)".to_string(), |v| v.to_string());
                (keys::shown(k), value)
            })
            .collect(),
    ))
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
