//! The keys of a study file as a table (each key's kind: what its value must be), where each
//! value came from (a line of the file, a scale's table, `--set`), and the checks of a document
//! against the table before it is read as a `StudyFile`. Every message names the file, the line
//! and what was expected, and never quotes the file: a file that is not a study file may hold
//! anything (a password hash), and a value that is not what its key takes is not shown back.

use std::collections::BTreeMap;

use serde::de::IgnoredAny;
use serde::Deserialize;
use toml::{Spanned, Value};

/// What a key's value must be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Text,
    List,
    Repeat,
    Size,
    Runtime,
    Interval,
    Steady,
    Seed,
    Scales,
    Claims,
}

impl Kind {
    /// What a value of this kind is, as a message says it.
    pub fn expects(self) -> &'static str {
        match self {
            Kind::Text => "a string in quotes",
            Kind::List => "a list of strings, e.g. [\"ext4\", \"xfs\"]",
            Kind::Repeat => "a whole number from 1 to 1000, e.g. 3",
            Kind::Size => "a size of more than 0 bytes in quotes, e.g. \"4G\"",
            Kind::Runtime => "a duration of more than 0 in quotes, e.g. \"2s\"",
            Kind::Interval => "an interval from 100ms to 1h in quotes, e.g. \"1s\"",
            Kind::Steady => {
                "a steady-state criterion in quotes, e.g. \"iops_slope:0.5%,dur=10s,ramp=5s,max=120s\""
            }
            Kind::Seed => "a whole number of 0 or more, e.g. 42",
            Kind::Scales => "tables of keys, e.g. [scale.small] then size = \"1G\"",
            Kind::Claims => "[[claim]] tables of strings with says, target, metric and expect",
        }
    }

    /// Whether `v` is a value of this kind (strings are read further when the study is lowered).
    fn holds(self, v: &Value) -> bool {
        match (self, v) {
            (Kind::List, Value::Array(a)) => a.iter().all(Value::is_str),
            (Kind::Repeat, Value::Integer(n)) => super::super::flags::repeat(*n).is_ok(),
            (Kind::Seed, Value::Integer(n)) => *n >= 0,
            (Kind::Scales, Value::Table(t)) => t.values().all(Value::is_table),
            (Kind::Claims, Value::Array(a)) => a.iter().all(Value::is_table),
            (Kind::Text | Kind::Size | Kind::Runtime | Kind::Interval | Kind::Steady, v) => {
                v.is_str()
            }
            _ => false,
        }
    }
}

/// The keys of a study file (and of a scale's table), as `compare`'s flags are named.
pub const KEYS: &[(&str, Kind)] = &[
    ("title", Kind::Text),
    ("source", Kind::Text),
    ("notes", Kind::Text),
    ("targets", Kind::List),
    ("workloads", Kind::List),
    ("repeat", Kind::Repeat),
    ("size", Kind::Size),
    ("runtime", Kind::Runtime),
    ("file_size", Kind::Size),
    ("baseline", Kind::Text),
    ("seed", Kind::Seed),
    ("interval", Kind::Interval),
    ("until_steady", Kind::Steady),
    ("fsbench_version", Kind::Text),
    ("scale", Kind::Scales),
    ("claim", Kind::Claims),
];

/// The keys of a `[[claim]]` table, and whether each is required.
pub const CLAIM_KEYS: &[(&str, bool)] = &[
    ("says", true),
    ("quote", false),
    ("published", false),
    ("target", true),
    ("workload", false),
    ("test", false),
    ("metric", true),
    ("vs", false),
    ("vs_test", false),
    ("expect", true),
    ("why", false),
];

/// The kind of a key of the file; None for a key it does not take.
pub fn kind_of(key: &str) -> Option<Kind> {
    KEYS.iter().find(|(k, _)| *k == key).map(|(_, kind)| *kind)
}

/// The keys a scale's table and `--set` take (all but `scale` and `claim`).
pub fn settable() -> Vec<&'static str> {
    KEYS.iter()
        .filter(|(_, k)| !matches!(k, Kind::Scales | Kind::Claims))
        .map(|(n, _)| *n)
        .collect()
}

/// A key a message may name: itself when it reads as a key (ASCII letters, digits, `_`, `-`,
/// at most 40 of them), else "a key" (a quoted key may hold anything).
pub fn shown(key: &str) -> String {
    let plain = !key.is_empty()
        && key.len() <= 40
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if plain {
        format!("key '{key}'")
    } else {
        "a key".to_string()
    }
}

/// Where each key's value came from, for messages: "line 3", "line 12 ([scale.small])",
/// "--set"; and the line of each `[[claim]]`.
#[derive(Debug, Default)]
pub struct Places {
    keys: BTreeMap<String, String>,
    claims: Vec<usize>,
}

/// The spans of what a scale's tables and the claims hold (a document of other shapes gives
/// none: its values are refused by their kind first).
#[derive(Deserialize)]
struct Spans {
    #[serde(default)]
    scale: BTreeMap<String, BTreeMap<Spanned<String>, IgnoredAny>>,
    #[serde(default)]
    claim: Vec<Spanned<IgnoredAny>>,
}

/// The 1-based line of byte `at` of `text`.
pub fn line_of(text: &str, at: usize) -> usize {
    text.as_bytes()[..at.min(text.len())]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

impl Places {
    /// The lines of the file's own keys, and of those of the scale `picked` (which lie over
    /// them), and of its claims.
    pub fn of(text: &str, picked: Option<&str>) -> Places {
        let mut p = Places::default();
        let top: BTreeMap<Spanned<String>, IgnoredAny> = toml::from_str(text).unwrap_or_default();
        for k in top.keys() {
            let line = line_of(text, k.span().start);
            p.keys.insert(k.get_ref().clone(), format!("line {line}"));
        }
        let Ok(spans) = toml::from_str::<Spans>(text) else {
            return p;
        };
        if let Some(keys) = picked.and_then(|s| spans.scale.get(s)) {
            for k in keys.keys() {
                let line = line_of(text, k.span().start);
                p.keys.insert(
                    k.get_ref().clone(),
                    format!("line {line} ([scale.{}])", picked.unwrap_or_default()),
                );
            }
        }
        p.claims = spans
            .claim
            .iter()
            .map(|c| line_of(text, c.span().start))
            .collect();
        p
    }

    /// `key`'s value came from `--set`.
    pub fn set(&mut self, key: &str) {
        self.keys.insert(key.to_string(), "--set".to_string());
    }

    /// `origin` and where `key`'s value came from: "s.toml: line 3".
    pub fn at(&self, origin: &str, key: &str) -> String {
        match self.keys.get(key) {
            Some(place) => format!("{origin}: {place}"),
            None => origin.to_string(),
        }
    }

    /// `origin` and claim `i` (0-based): "s.toml: claim 2 (line 14)".
    pub fn claim(&self, origin: &str, i: usize) -> String {
        match self.claims.get(i) {
            Some(line) => format!("{origin}: claim {} (line {line})", i + 1),
            None => format!("{origin}: claim {}", i + 1),
        }
    }
}

/// Every key of `doc` is the file's and holds a value of its kind; every claim holds the claim
/// keys as strings, the required ones present.
pub fn check(doc: &toml::Table, origin: &str, places: &Places) -> Result<(), String> {
    for (k, v) in doc {
        let at = places.at(origin, k);
        let Some(kind) = kind_of(k) else {
            return Err(format!(
                "{at}: {} that a study file does not take: its keys are compare's flags: {}",
                shown(k),
                KEYS.iter().map(|(k, _)| *k).collect::<Vec<_>>().join(", ")
            ));
        };
        if !kind.holds(v) {
            return Err(format!("{at}: {k} takes {}", kind.expects()));
        }
    }
    let claims = doc.get("claim").and_then(Value::as_array);
    for (i, c) in claims.into_iter().flatten().enumerate() {
        let at = places.claim(origin, i);
        let table = c.as_table().into_iter().flatten();
        for (k, v) in table {
            if !CLAIM_KEYS.iter().any(|(n, _)| n == k) {
                return Err(format!(
                    "{at}: {} that a claim does not take: its keys are {}",
                    shown(k),
                    claim_keys()
                ));
            }
            if !v.is_str() {
                return Err(format!("{at}: {k} takes a string in quotes"));
            }
        }
        for (k, _) in CLAIM_KEYS.iter().filter(|(_, required)| *required) {
            if c.get(k).is_none() {
                return Err(format!(
                    "{at}: no {k}: a claim needs says, target, metric and expect (its keys are {})",
                    claim_keys()
                ));
            }
        }
    }
    Ok(())
}

fn claim_keys() -> String {
    CLAIM_KEYS
        .iter()
        .map(|(k, _)| *k)
        .collect::<Vec<_>>()
        .join(", ")
}

/// toml's message for a document that does not parse, without anything of the document: its
/// messages name tokens in backquotes (`=`, `]`); a longer quoted piece is the file's text (the
/// name of a key given twice) and is left out.
pub fn syntax_message(message: &str) -> String {
    let mut out = String::new();
    for (i, piece) in message.split('`').enumerate() {
        let token = piece.chars().count() == 1 && !piece.starts_with(char::is_whitespace);
        match (i % 2, token) {
            (1, true) => out.push_str(&format!("`{piece}`")),
            (1, false) => out.push_str("(a name of the file)"),
            _ => out.push_str(piece),
        }
    }
    out.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ")
}

/// `--set KEY=VALUE`'s value: VALUE in TOML's syntax (one value: a second line of keys is
/// refused, not dropped), or else taken as a string; a string where a key takes a list is a list
/// of it, and a number or a word where it takes a string is the text as given.
pub fn set_value(key: &str, v: &str) -> Result<Value, String> {
    let kind = kind_of(key).unwrap_or(Kind::Text);
    let value = match toml::from_str::<toml::Table>(&format!("v = {v}")) {
        Ok(mut t) if t.len() == 1 => t.remove("v"),
        Ok(_) => None,
        Err(_) if v.contains('\n') => None,
        Err(_) => Some(Value::String(v.to_string())),
    };
    let Some(value) = value else {
        return Err(format!(
            "--set {key}=...: the value holds more than one line or key: give each key its own --set, e.g. --set repeat=2 --set 'targets=[\"ext4\"]'"
        ));
    };
    Ok(match (kind, value) {
        (Kind::List, Value::String(s)) => Value::Array(vec![Value::String(s)]),
        (Kind::Text | Kind::Size | Kind::Runtime | Kind::Interval | Kind::Steady, other)
            if !other.is_str() =>
        {
            Value::String(v.trim().to_string())
        }
        (_, value) => value,
    })
}
