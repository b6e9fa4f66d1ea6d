//! Target specs: `fs[:key[=value],...]`, e.g. `ext4:inodes=2000000`, `zfs:recordsize=128k,primarycache=metadata`,
//! `btrfs:nodatacow,label=btrfs-nocow`, `xfs:mkfs='-m crc=0',mount='noatime,logbufs=8'`, `dir:/mnt/nfs`.
//!
//! Parsing is pure: it checks every key and value against the filesystem's schema (from the
//! FILESYSTEMS table in `target`) and says exactly what is wrong and what would be right.

use super::PlanError;
use serde::{Deserialize, Serialize};

use super::units::parse_size;

/// What a key's value must look like.
#[derive(Debug, Clone, Copy)]
pub enum ValueKind {
    /// No value: `nodatacow`.
    Flag,
    /// A whole number within bounds.
    Int { min: u64, max: u64 },
    /// A size with an optional unit, e.g. `4k`, `128K`, `1M`.
    Size,
    /// One of a fixed list.
    Choice(&'static [&'static str]),
    /// Anything non-empty (passed through; the tool checks it).
    Text,
}

/// What a key does to the filesystem under test.
#[derive(Debug, Clone, Copy)]
pub enum Effect {
    /// Adds mkfs arguments; `{}` in an argument is replaced by the value.
    Mkfs(&'static [&'static str]),
    /// Adds a mount option `key` or `key=value`.
    Mount,
    /// Adds a mount option with another name: `Mount` but spelled as given, `{}` replaced by the value.
    MountAs(&'static str),
    /// A ZFS dataset property, `zpool create -O key=value`.
    ZfsProperty,
    /// A ZFS pool property, `zpool create -o key=value`.
    ZpoolProperty,
    /// Shapes what is provisioned (devices, redundancy, a ZFS volume): read by the provisioner
    /// (`provision::layout`), passed to no command as written.
    Layout,
}

/// One valid key of a filesystem.
#[derive(Debug, Clone, Copy)]
pub struct OptKey {
    pub name: &'static str,
    pub value: ValueKind,
    pub effect: Effect,
    pub help: &'static str,
}

/// The parser's view of a filesystem: its name and which keys it accepts.
#[derive(Debug, Clone, Copy)]
pub struct FsSchema {
    pub name: &'static str,
    pub keys: &'static [OptKey],
    /// Accepts `mkfs='...'` (extra mkfs arguments).
    pub extra_mkfs: bool,
    /// Accepts `mount='...'` (extra mount options).
    pub extra_mount: bool,
    /// The spec starts with a path: `dir:/mnt/nfs`.
    pub takes_path: bool,
    /// Accepts the VFS mount flags every mounted filesystem has (VFS_KEYS).
    pub vfs_mount: bool,
}

/// Mount flags of the VFS itself, valid for every filesystem that is mounted with `mount`.
pub const VFS_KEYS: &[OptKey] = &[
    OptKey {
        name: "noatime",
        value: ValueKind::Flag,
        effect: Effect::Mount,
        help: "do not update access times",
    },
    OptKey {
        name: "nodiratime",
        value: ValueKind::Flag,
        effect: Effect::Mount,
        help: "do not update directory access times",
    },
    OptKey {
        name: "relatime",
        value: ValueKind::Flag,
        effect: Effect::Mount,
        help: "update access times relative to modify time",
    },
    OptKey {
        name: "lazytime",
        value: ValueKind::Flag,
        effect: Effect::Mount,
        help: "keep timestamps in memory, write them lazily",
    },
];

impl FsSchema {
    /// The filesystem's own key of that name, or a VFS one where it takes those.
    pub fn key(&self, name: &str) -> Option<&'static OptKey> {
        self.all_keys().find(|k| k.name == name)
    }

    /// Its own keys, then the VFS keys where it takes them.
    pub fn all_keys(&self) -> impl Iterator<Item = &'static OptKey> {
        let vfs: &'static [OptKey] = if self.vfs_mount { VFS_KEYS } else { &[] };
        self.keys.iter().chain(vfs.iter())
    }
}

/// A validated key of a target, with its value as written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TargetOption {
    pub key: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub value: Option<String>,
}

/// One filesystem under test, as data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TargetSpec {
    /// The spec as written on the command line.
    pub spec: String,
    /// Filesystem name from the FILESYSTEMS table.
    pub fs: String,
    /// Name used in reports; defaults to the spec.
    pub label: String,
    /// Filesystem keys, in the order written.
    pub options: Vec<TargetOption>,
    /// Extra mkfs arguments (`mkfs='...'`), split on white space.
    pub extra_mkfs: Vec<String>,
    /// Extra mount options (`mount='...'`), split on commas.
    pub extra_mount: Vec<String>,
    /// Backing size for this target only (`size=2G`), overriding `--size`.
    pub size: Option<u64>,
    /// The directory of a `dir:` target.
    pub path: Option<String>,
    /// The image sits behind fsbench's fault device (`faulty`, `fail_writes_after=SIZE`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub fault: Option<FaultPlan>,
}

/// A target whose disk fails on command: fsbench's fault device under its loop device.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FaultPlan {
    /// Once this many bytes are written to the disk after the target is mounted, every write and
    /// flush fails with EIO (`fail_writes_after=SIZE`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub fail_writes_after: Option<u64>,
}

impl TargetSpec {
    pub fn option(&self, key: &str) -> Option<&TargetOption> {
        self.options.iter().find(|o| o.key == key)
    }
}

/// The keys every filesystem accepts, besides its own.
const COMMON_KEYS: &str = "label=NAME, size=SIZE, faulty, fail_writes_after=SIZE";

/// The directory of a `dir:` target: absolute, and not the kernel's.
fn dir_path(spec: &str, schema: &FsSchema, path: String) -> Result<String, PlanError> {
    if !path.starts_with('/') {
        return Err(format!(
            "target '{spec}': the directory '{path}' must be an absolute path, e.g. {}:/mnt/nfs",
            schema.name
        )
        .into());
    }
    if let Some(k) = kernel_path(&path) {
        return Err(format!(
            "target '{spec}': {path} is under {k}, the kernel's: fsbench makes no files there; name a directory on a data filesystem, e.g. {}:/mnt/nfs",
            schema.name
        )
        .into());
    }
    Ok(path)
}

/// The kernel's directory (`/proc`, `/sys`, `/dev`) a path lies in, read from its text alone
/// (`/./proc/x` too; a path through a link is judged once resolved, before anything runs).
fn kernel_path(path: &str) -> Option<&'static str> {
    use std::path::Component;
    let mut parts = std::path::Path::new(path)
        .components()
        .filter(|c| !matches!(c, Component::CurDir));
    if parts.next() != Some(Component::RootDir) {
        return None;
    }
    let first = parts.next()?;
    ["/proc", "/sys", "/dev"]
        .into_iter()
        .find(|k| Component::Normal(k[1..].as_ref()) == first)
}

/// The known filesystems' names, for errors: `ext4, xfs, ...`.
fn known_names(schemas: &[FsSchema]) -> String {
    schemas
        .iter()
        .map(|s| s.name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Parses one target spec against the schemas of the known filesystems.
pub fn parse_target(text: &str, schemas: &[FsSchema]) -> Result<TargetSpec, PlanError> {
    let spec = text.trim();
    let known = || known_names(schemas);
    if spec.is_empty() {
        return Err(format!(
            "empty target: name a filesystem ({}), optionally with options, e.g. ext4:inodes=2000000",
            known()
        ).into());
    }
    let (fs, rest) = match spec.split_once(':') {
        Some((fs, rest)) => (fs, Some(rest)),
        None => (spec, None),
    };
    let fs_lower = fs.to_ascii_lowercase();
    let schema = schemas.iter().find(|s| s.name == fs_lower).ok_or_else(|| {
        format!(
            "unknown filesystem '{fs}' in target '{spec}': valid filesystems are {}",
            known()
        )
    })?;
    let mut target = TargetSpec {
        spec: spec.to_string(),
        fs: schema.name.to_string(),
        label: spec.to_string(),
        options: Vec::new(),
        extra_mkfs: Vec::new(),
        extra_mount: Vec::new(),
        size: None,
        path: None,
        fault: None,
    };
    let mut tokens = match rest {
        Some(rest) => split_tokens(rest).map_err(|e| format!("target '{spec}': {e}"))?,
        None => Vec::new(),
    };
    if schema.takes_path {
        if tokens.is_empty() || tokens[0].is_empty() {
            return Err(format!(
                "target '{spec}' needs a directory: write {}:/path/to/mounted/dir",
                schema.name
            )
            .into());
        }
        target.path = Some(dir_path(spec, schema, tokens.remove(0))?);
    }
    let mut seen: Vec<String> = Vec::new();
    for token in tokens {
        if token.is_empty() {
            return Err(format!(
                "target '{spec}' has an empty option (two commas in a row, or a trailing comma)"
            )
            .into());
        }
        let (key, value) = match token.split_once('=') {
            Some((k, v)) => (k.trim().to_string(), Some(unquote(v.trim()))),
            None => (token.trim().to_string(), None),
        };
        if seen.contains(&key) && key != "mkfs" && key != "mount" {
            return Err(format!("target '{spec}' gives '{key}' twice: keep one").into());
        }
        seen.push(key.clone());
        match key.as_str() {
            "label" => {
                target.label = need_value(spec, &key, value, "label=my-ext4")?;
                continue;
            }
            "size" => {
                let v = need_value(spec, &key, value, "size=2G")?;
                target.size =
                    Some(parse_size(&v).map_err(|e| format!("target '{spec}': size: {e}"))?);
                continue;
            }
            "faulty" | "fail_writes_after" if !schema.takes_path => {
                fault_key(&mut target, &key, value)?;
                continue;
            }
            "mkfs" if schema.extra_mkfs => {
                let v = need_value(spec, &key, value, "mkfs='-O ^has_journal'")?;
                target
                    .extra_mkfs
                    .extend(v.split_whitespace().map(str::to_string));
                continue;
            }
            "mount" if schema.extra_mount => {
                let v = need_value(spec, &key, value, "mount='noatime,discard'")?;
                target.extra_mount.extend(
                    v.split(',')
                        .map(str::trim)
                        .filter(|s| !s.is_empty())
                        .map(str::to_string),
                );
                continue;
            }
            _ => {}
        }
        let Some(def) = schema.key(&key) else {
            return Err(format!(
                "unknown option '{key}' for {} in target '{spec}': valid options are {}",
                schema.name,
                valid_keys(schema)
            )
            .into());
        };
        let value = check_value(spec, def, value)?;
        target.options.push(TargetOption { key, value });
    }
    Ok(target)
}

/// `faulty` and `fail_writes_after=SIZE`: the target behind fsbench's fault device.
fn fault_key(target: &mut TargetSpec, key: &str, value: Option<String>) -> Result<(), PlanError> {
    let spec = target.spec.clone();
    let plan = target.fault.get_or_insert_with(FaultPlan::default);
    match key {
        "faulty" if value.is_some() => Err(format!(
            "target '{spec}': faulty takes no value (write faulty, or fail_writes_after=SIZE)"
        )
        .into()),
        "faulty" => Ok(()),
        _ => {
            let v = need_value(&spec, key, value, "fail_writes_after=64M")?;
            let n =
                parse_size(&v).map_err(|e| format!("target '{spec}': fail_writes_after: {e}"))?;
            plan.fail_writes_after = Some(n);
            Ok(())
        }
    }
}

/// Every key a filesystem accepts, spelled as it is written: `inodes=N, nojournal, ...`.
pub fn valid_keys(schema: &FsSchema) -> String {
    let mut out: Vec<String> = schema.all_keys().map(key_usage).collect();
    out.push(COMMON_KEYS.to_string());
    if schema.extra_mkfs {
        out.push("mkfs='ARGS'".to_string());
    }
    if schema.extra_mount {
        out.push("mount='OPTS'".to_string());
    }
    out.join(", ")
}

/// How one key is written: `inodes=N`, `compress=zstd|lzo|zlib|no`, `nodatacow`.
pub fn key_usage(key: &OptKey) -> String {
    match key.value {
        ValueKind::Flag => key.name.to_string(),
        ValueKind::Int { .. } => format!("{}=N", key.name),
        ValueKind::Size => format!("{}=SIZE", key.name),
        ValueKind::Choice(c) => format!("{}={}", key.name, c.join("|")),
        ValueKind::Text => format!("{}=VALUE", key.name),
    }
}

fn need_value(
    spec: &str,
    key: &str,
    value: Option<String>,
    example: &str,
) -> Result<String, PlanError> {
    match value {
        Some(v) if !v.is_empty() => Ok(v),
        _ => Err(format!("option '{key}' in target '{spec}' needs a value, e.g. {example}").into()),
    }
}

fn check_value(
    spec: &str,
    def: &OptKey,
    value: Option<String>,
) -> Result<Option<String>, PlanError> {
    let key = def.name;
    match def.value {
        ValueKind::Flag => match value {
            None => Ok(None),
            Some(v) => Err(format!(
                "option '{key}' in target '{spec}' takes no value (got '{key}={v}'): write just '{key}'"
            ).into()),
        },
        kind => {
            let example = key_usage(def);
            let v = need_value(spec, key, value, &example)?;
            match kind {
                ValueKind::Int { min, max } => {
                    let n: u64 = v.parse().map_err(|_| {
                        format!(
                            "invalid value '{v}' for '{key}' in target '{spec}': expected a whole number from {min} to {max}"
                        )
                    })?;
                    if n < min || n > max {
                        return Err(format!(
                            "invalid value '{v}' for '{key}' in target '{spec}': expected a whole number from {min} to {max}"
                        ).into());
                    }
                }
                ValueKind::Size => {
                    parse_size(&v).map_err(|e| {
                        format!("invalid value for '{key}' in target '{spec}': {e}")
                    })?;
                }
                ValueKind::Choice(choices) => {
                    if !choices.contains(&v.as_str()) {
                        return Err(format!(
                            "invalid value '{v}' for '{key}' in target '{spec}': expected one of {}",
                            choices.join(", ")
                        ).into());
                    }
                }
                ValueKind::Text | ValueKind::Flag => {}
            }
            Ok(Some(v))
        }
    }
}

/// Splits on commas that are not inside single or double quotes.
fn split_tokens(text: &str) -> Result<Vec<String>, PlanError> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    for c in text.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => {
                quote = None;
                cur.push(c);
            }
            (Some(_), c) => cur.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                cur.push(c);
            }
            (None, ',') => out.push(std::mem::take(&mut cur)),
            (None, c) => cur.push(c),
        }
    }
    if let Some(q) = quote {
        return Err(format!("unbalanced {q} quote: close it, e.g. mkfs='-O ^has_journal'").into());
    }
    out.push(cur);
    Ok(out)
}

fn unquote(v: &str) -> String {
    let b = v.as_bytes();
    if b.len() >= 2 && (b[0] == b'\'' || b[0] == b'"') && b[b.len() - 1] == b[0] {
        v[1..v.len() - 1].to_string()
    } else {
        v.to_string()
    }
}
