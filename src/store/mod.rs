//! The study directory: `manifest.json` (the plan, the environment, what was provisioned and how)
//! and `results.jsonl` (one record per measured phase, appended and flushed the moment it exists).
//! The format is documented in docs/results-schema.md.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::plan::Plan;
use crate::plan::TargetInfo;

pub mod hlog;
pub mod note;
mod profiles;
mod study;
pub use hlog::LatencyLog;
pub use profiles::attach_profiles;
pub use study::{lock_state, LockState, Study};

/// The workload name of the record of a target that could not be provisioned.
pub const PROVISION: &str = "provision";

/// Why the study directory could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The error's text is said once (no source chain that repeats it), with what to do.
    #[error("{path}: {}{}", io_text(.err), fix_for(.err))]
    Io { path: String, err: std::io::Error },
    #[error("{path}: {why}")]
    Format { path: String, why: String },
    #[error(
        "{0} already holds a study (results.jsonl is not empty): choose a new --out directory"
    )]
    Exists(String),
    /// Another process is writing the study (it holds the study's lock).
    #[error("{dir} is being written by another fsbench ({holder}): wait for it to end, or choose another directory; `fsbench report {dir}` shows what it has so far")]
    Busy { dir: String, holder: String },
    /// The study path, or a file in it, is a symbolic link: fsbench never writes through one.
    #[error("{path} is a symbolic link: fsbench writes a study only into a real directory and never through a link (remove the link, or give another --out)")]
    Link { path: String },
}

/// An I/O error's text without the "(os error N)" the fix repeats in words.
fn io_text(e: &std::io::Error) -> String {
    let t = e.to_string();
    t.split(" (os error").next().unwrap_or(&t).to_string()
}

/// What to do about an I/O error on a study file, after its text.
fn fix_for(e: &std::io::Error) -> &'static str {
    match e.raw_os_error() {
        Some(libc::ENOSPC) | Some(libc::EDQUOT) => {
            ": the disk holding the study is full; free space there, or give --out on another filesystem"
        }
        Some(libc::EACCES) | Some(libc::EPERM) | Some(libc::EROFS) => {
            ": fsbench cannot write there; give --out a directory it can write"
        }
        Some(libc::ENOENT) => ": check the path (--out, --resume or the study named)",
        Some(libc::ENOTDIR) => ": give --out a path whose every part is a directory",
        Some(libc::ELOOP) => ": it is a symbolic link, and fsbench never writes a study through one",
        _ => "",
    }
}

pub(crate) fn io_at(path: &Path) -> impl FnOnce(std::io::Error) -> StoreError + '_ {
    move |err| StoreError::Io {
        path: path.display().to_string(),
        err,
    }
}

/// The state of a study, as its manifest says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Running,
    Complete,
    Interrupted,
    Failed,
    Refused,
}

/// Version of the record and manifest format (docs/results-schema.md).
pub const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Ok,
    Skipped,
    Failed,
}

/// One measured phase (or one skipped or failed case).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Record {
    pub schema: u32,
    pub target: String,
    pub fs: String,
    pub workload: String,
    pub test: String,
    pub repeat: u32,
    pub started_at: String,
    pub duration_s: f64,
    pub outcome: Outcome,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub error: Option<String>,
    pub metrics: BTreeMap<String, f64>,
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub notes: Vec<String>,
    /// Whole latency histograms (HdrHistogram V2, deflated, base64), by name, e.g. `lat_ns`.
    #[serde(skip_serializing_if = "BTreeMap::is_empty", default)]
    pub histograms: BTreeMap<String, String>,
    /// Per-second series by name (`iops`, `bytes_per_sec`).
    #[serde(skip_serializing_if = "BTreeMap::is_empty", default)]
    pub series: BTreeMap<String, Vec<f64>>,
    /// Latency over time: where its interval histograms are (`latency.hlog`, under a tag); the
    /// intervals themselves are read with the records.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub latency_log: Option<LatencyLog>,
    /// The job as run (block workloads): every option that changes results.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub config: Option<serde_json::Value>,
    /// What failed (a failed record): the call, errno, path, offset, and the target's space.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub failure: Option<crate::io::Failure>,
    /// A multi-rank run (mpirun): each rank's figures for this phase; the metrics are the
    /// aggregate.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub ranks: Vec<RankFigures>,
    /// A multi-rank run over several nodes: each node's figures (its ranks added up).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub nodes: Vec<NodeFigures>,
    /// A block job of several workers (numjobs, fio's clones): each clone's own figures; the
    /// metrics are their aggregate (fio's group_reporting).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub clones: Vec<CloneFigures>,
    /// What limited the phase, decided from `evidence` (metrics::limiter's rules).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub limiter: Option<crate::metrics::limiter::Limiter>,
    /// What the workers, the filesystem's processes, the machine and the devices did during the
    /// phase (metrics::evidence).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub evidence: Option<crate::metrics::evidence::Evidence>,
    /// Where the phase spent its time (`--profile`): its profiles' folded stacks in the study's
    /// `profiles/` and the shares of fsbench, the kernel and the filesystem's daemons.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub profile: Option<crate::profile::RecordProfile>,
}

/// One clone (worker) of a block job of `numjobs` above 1: what it did over its own measured
/// window, and its latency (queue to completion) in nanoseconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CloneFigures {
    pub clone: u32,
    pub read_ios: u64,
    pub read_bytes: u64,
    pub write_ios: u64,
    pub write_bytes: u64,
    pub runtime_s: f64,
    /// Its latencies: min, mean, stddev, max and fio's percentiles 1 to 99.99 (`"50.000000"`
    /// keys, as fio names them), over reads and writes alike.
    pub lat_ns: CloneLat,
    /// A clone that both read and wrote: each direction's latency apart.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub read_lat_ns: Option<CloneLat>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub write_lat_ns: Option<CloneLat>,
    /// Its bandwidth second by second (bytes/s): the slowest and fastest second, the mean, and
    /// how many seconds.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub bw_per_sec: Option<CloneBw>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub error: Option<String>,
}

/// A clone's per-second bandwidth (bytes/s).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CloneBw {
    pub min: f64,
    pub max: f64,
    pub mean: f64,
    pub samples: usize,
}

/// A clone's latency summary (nanoseconds).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CloneLat {
    pub min: u64,
    pub mean: f64,
    pub stddev: f64,
    pub max: u64,
    pub percentile: BTreeMap<String, u64>,
}

/// One rank's share of a multi-rank phase, its work over its own window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RankFigures {
    pub rank: usize,
    /// Its node (ranks with one processor name), numbered by their first rank.
    #[serde(default)]
    pub node: usize,
    pub host: String,
    #[serde(flatten)]
    pub work: WorkFigures,
}

/// One node's share of a multi-rank phase (runs over several nodes): its ranks' work added up,
/// over its earliest start to its latest end.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NodeFigures {
    pub node: usize,
    pub host: String,
    /// How many ranks ran on it.
    pub ranks: usize,
    #[serde(flatten)]
    pub work: WorkFigures,
}

/// What a rank or a node did in a phase. Times are seconds after the barrier that started the
/// phase, on the host's own monotonic clock (wall clocks of different nodes are never compared).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WorkFigures {
    /// Its workers started, and the last of them ended.
    pub start_s: f64,
    pub end_s: f64,
    /// Operations (I/Os, files) and bytes it did, and its rates over its window.
    pub ops: u64,
    pub bytes: u64,
    pub ops_per_sec: f64,
    pub bytes_per_sec: f64,
    /// What it had done when the fastest worker of all ranks finished (stonewall).
    pub first_done_ops: u64,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub error: Option<String>,
}

pub use crate::sys::host::Environment;

/// One measured phase, as a workload reports it; the coordinator adds target, repeat and times.
#[derive(Debug, Clone, Default)]
pub struct Phase {
    pub test: String,
    pub started_at: String,
    pub duration_s: f64,
    /// Some(error) when the phase failed (e.g. a verification mismatch).
    pub error: Option<String>,
    pub metrics: BTreeMap<String, f64>,
    /// Flags about how far to trust the numbers, e.g. "page_cache".
    pub notes: Vec<String>,
    /// Whole latency histograms, encoded (metrics::hist::encode), by name.
    pub histograms: BTreeMap<String, String>,
    /// Per-second series, by name (e.g. iops, bytes_per_sec).
    pub series: BTreeMap<String, Vec<f64>>,
    /// Latency over time (one histogram per interval); the frame sets the part's.
    pub latency: Option<crate::metrics::timeline::Timeline>,
    /// The job as run, with every option that changes results.
    pub config: Option<serde_json::Value>,
    /// Some(reason) when the phase could not run on this target.
    pub skipped: Option<String>,
    /// The failed call behind `error`, when it was one.
    pub failure: Option<crate::io::Failure>,
    /// Each rank's figures (multi-rank runs), and each node's (over several nodes).
    pub ranks: Vec<RankFigures>,
    pub nodes: Vec<NodeFigures>,
    /// Each clone's figures (a block job of numjobs above 1).
    pub clones: Vec<CloneFigures>,
    /// What limited the phase, and its evidence (the frame decides both).
    pub limiter: Option<crate::metrics::limiter::Limiter>,
    pub evidence: Option<crate::metrics::evidence::Evidence>,
    /// Its profiles (`--profile`), their stacks in memory until the study writes them.
    pub profile: Option<crate::profile::RecordProfile>,
}

/// Which target, workload and repeat a record belongs to.
#[derive(Debug, Clone)]
pub struct RecordKey<'a> {
    pub target: &'a str,
    pub fs: &'a str,
    pub workload: &'a str,
    pub repeat: u32,
}

impl Record {
    /// The workload's name without its parameters: a plan that runs a workload twice names the
    /// records by the spec as written (`aging:snapshots=3/s`).
    pub fn workload_name(&self) -> &str {
        self.workload.split(':').next().unwrap_or(&self.workload)
    }

    /// The first note that says this record did less work than asked (ran out of inodes or
    /// space, stopped early, a rate not reached), whole.
    pub fn less_work(&self) -> Option<&str> {
        self.notes
            .iter()
            .find(|n| note::kind(n).less_work())
            .map(String::as_str)
    }

    /// The one way to build a record: a phase as measured, with its key.
    pub fn from_phase(key: &RecordKey, p: Phase) -> Record {
        let outcome = if p.error.is_some() {
            Outcome::Failed
        } else if p.skipped.is_some() {
            Outcome::Skipped
        } else {
            Outcome::Ok
        };
        let profile = p.profile.map(|mut x| {
            x.name_files(key.target, key.repeat, &p.test);
            x
        });
        Record {
            schema: SCHEMA_VERSION,
            target: key.target.to_string(),
            fs: key.fs.to_string(),
            workload: key.workload.to_string(),
            test: p.test,
            repeat: key.repeat,
            started_at: if p.started_at.is_empty() {
                crate::metrics::clock::now_rfc3339()
            } else {
                p.started_at
            },
            duration_s: p.duration_s,
            outcome,
            reason: p.skipped,
            error: p.error,
            metrics: p.metrics,
            notes: p.notes,
            histograms: p.histograms,
            series: p.series,
            latency_log: p
                .latency
                .as_ref()
                .filter(|t| !t.slices.is_empty())
                .map(LatencyLog::of),
            config: p.config,
            failure: p.failure,
            ranks: p.ranks,
            nodes: p.nodes,
            clones: p.clones,
            limiter: p.limiter,
            evidence: p.evidence,
            profile,
        }
    }
}

/// Told of each record the moment the study holds it (the history indexes it there). It must
/// not fail the study: it says what went wrong itself, once.
pub trait Observer: Send + Sync {
    fn record(&self, dir: &Path, rec: &Record);
    /// The study ended (its manifest says how).
    fn finish(&self, _dir: &Path) {}
}

/// Reads a study's manifest.json.
pub fn read_manifest(dir: &Path) -> Result<Manifest, StoreError> {
    let mpath = dir.join("manifest.json");
    let text = std::fs::read_to_string(&mpath).map_err(io_at(&mpath))?;
    serde_json::from_str(&text).map_err(|e| StoreError::Format {
        path: mpath.display().to_string(),
        why: json_why(&e),
    })
}

/// Why a study file's JSON does not read, without a word of its content (serde's messages
/// quote the values they refuse: a file of secrets would be echoed).
fn json_why(e: &serde_json::Error) -> String {
    use serde_json::error::Category;
    let at = format!("at line {} column {}", e.line(), e.column());
    match e.classify() {
        Category::Syntax => format!("not valid JSON {at}"),
        Category::Eof => format!("cut short {at}"),
        Category::Io => format!("unreadable {at}"),
        Category::Data => match e.to_string().split(" at line").next() {
            // The field's name is fsbench's own, not the file's.
            Some(m) if m.starts_with("missing field") => format!("{m} {at}"),
            _ => format!("a value of the wrong kind {at}"),
        },
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Manifest {
    pub schema: u32,
    pub fsbench_version: String,
    pub run_id: String,
    pub created_at: String,
    #[serde(default)]
    pub finished_at: Option<String>,
    pub status: Status,
    pub command_line: Vec<String>,
    pub plan: Plan,
    pub environment: Environment,
    /// Each target as provisioned: backing, commands as run, options in effect.
    pub targets: Vec<TargetInfo>,
    pub warnings: Vec<String>,
    /// (target label, repeat) pairs that ran to their teardown: `compare --resume` skips them.
    #[serde(default)]
    pub completed: Vec<(String, u32)>,
    /// Why an interrupted study stopped ("interrupted by SIGHUP (the terminal closed)").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_by: Option<String>,
    /// A multi-rank run that lost a rank: which rank, at which phase, and why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rank_failure: Option<String>,
}

impl Manifest {
    /// The one way to build a manifest: a new study of `plan`, running.
    pub fn new(plan: Plan, command_line: Vec<String>, environment: Environment) -> Manifest {
        Manifest {
            schema: SCHEMA_VERSION,
            fsbench_version: env!("CARGO_PKG_VERSION").to_string(),
            run_id: crate::metrics::clock::run_id(),
            created_at: crate::metrics::clock::now_rfc3339(),
            finished_at: None,
            status: Status::Running,
            command_line,
            plan,
            environment,
            targets: Vec::new(),
            warnings: Vec::new(),
            completed: Vec::new(),
            stopped_by: None,
            rank_failure: None,
        }
    }
}

/// Reads every complete record of a study; a torn last line (a crash mid-write) is skipped
/// (`load_results_torn` says what it was).
pub fn load_results(dir: &Path) -> Result<Vec<Record>, StoreError> {
    load_results_torn(dir).map(|(r, _)| r)
}

/// Every complete record of a study, and the torn last line, if the file ends with one (a crash
/// while a record was written: its bytes up to where they stop).
pub fn load_results_torn(dir: &Path) -> Result<(Vec<Record>, Option<String>), StoreError> {
    let path = dir.join("results.jsonl");
    let text = std::fs::read_to_string(&path).map_err(io_at(&path))?;
    let mut out: Vec<Record> = Vec::new();
    let mut torn = None;
    let lines: Vec<&str> = text.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str(line) {
            Ok(r) => out.push(r),
            Err(_) if i + 1 == lines.len() && !text.ends_with('\n') => {
                torn = Some(line.to_string());
            }
            Err(e) => {
                return Err(StoreError::Format {
                    path: format!("{} line {}", path.display(), i + 1),
                    why: json_why(&e),
                })
            }
        }
    }
    attach_latency_logs(dir, &mut out);
    Ok((out, torn))
}

/// The intervals of the records that have a latency log, read from the study's `latency.hlog`
/// (a study without one, or a line that does not read, leaves them empty: the report then draws
/// no latency over time for them).
fn attach_latency_logs(dir: &Path, records: &mut [Record]) {
    if !records.iter().any(|r| r.latency_log.is_some()) {
        return;
    }
    let Ok(text) = std::fs::read_to_string(dir.join(hlog::FILE)) else {
        return;
    };
    let mut by_tag = hlog::parse(&text);
    for r in records.iter_mut() {
        if let Some(l) = r.latency_log.as_mut() {
            l.lines = by_tag.remove(&l.tag).unwrap_or_default();
        }
    }
}

/// The target and repeat a torn record names, as far as its bytes go (the key fields come first
/// in a record).
pub fn torn_key(torn: &str) -> (Option<String>, Option<u32>) {
    let after = |field: &str| {
        torn.find(&format!("\"{field}\":"))
            .map(|i| &torn[i + field.len() + 3..])
    };
    let target = after("target").and_then(|rest| {
        serde_json::Deserializer::from_str(rest)
            .into_iter::<String>()
            .next()
            .and_then(Result::ok)
    });
    let repeat = after("repeat").and_then(|rest| {
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        // A number cut short by the tear is not the repeat.
        (digits.len() < rest.len())
            .then(|| digits.parse().ok())
            .flatten()
    });
    (target, repeat)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_torn_record_names_its_target_and_repeat_as_far_as_its_bytes_go() {
        let whole = r#"{"schema":1,"target":"ext4:inodes=9","fs":"ext4","workload":"smoke","test":"write","repeat":2,"started_at":"x""#;
        assert_eq!(torn_key(whole), (Some("ext4:inodes=9".into()), Some(2)));
        assert_eq!(torn_key(&whole[..60]), (Some("ext4:inodes=9".into()), None));
        // A repeat cut short is not a repeat: "repeat":1 may be 12.
        let cut = &whole[..whole.find(r#""repeat":2"#).unwrap() + 10];
        assert_eq!(torn_key(cut).1, None);
        assert_eq!(torn_key(r#"{"schema":1,"target":"ex"#), (None, None));
    }

    #[test]
    fn load_results_returns_the_torn_last_line() {
        let t = tempfile::tempdir().unwrap();
        std::fs::write(t.path().join("results.jsonl"), "{\"schema\":1,\"tar").unwrap();
        let (recs, torn) = load_results_torn(t.path()).unwrap();
        assert!(recs.is_empty());
        assert_eq!(torn.as_deref(), Some("{\"schema\":1,\"tar"));
    }

    #[test]
    fn a_study_file_that_does_not_read_is_not_echoed() {
        let t = tempfile::tempdir().unwrap();
        let line = r#"{"schema":1,"target":"t","fs":"f","workload":"w","test":"x","repeat":"hunter2","started_at":"","duration_s":1,"outcome":"ok","metrics":{}}"#;
        std::fs::write(t.path().join("results.jsonl"), format!("{line}\n")).unwrap();
        let e = load_results(t.path()).unwrap_err().to_string();
        assert!(!e.contains("hunter2") && e.contains("line 1"), "{e}");
        std::fs::write(t.path().join("manifest.json"), r#"{"status":"hunter2"}"#).unwrap();
        let e = read_manifest(t.path()).unwrap_err().to_string();
        assert!(!e.contains("hunter2") && e.contains("manifest.json"), "{e}");
        std::fs::write(t.path().join("manifest.json"), "hunter2 {").unwrap();
        let e = read_manifest(t.path()).unwrap_err().to_string();
        assert!(
            !e.contains("hunter2") && e.contains("not valid JSON"),
            "{e}"
        );
    }

    #[test]
    fn a_ranks_and_a_nodes_work_stand_beside_their_names_in_the_record() {
        let work = WorkFigures {
            start_s: 0.5,
            end_s: 2.0,
            ops: 3,
            bytes: 4096,
            ops_per_sec: 2.0,
            bytes_per_sec: 2048.0,
            first_done_ops: 1,
            error: None,
        };
        let rank = RankFigures {
            rank: 1,
            node: 0,
            host: "a".into(),
            work: work.clone(),
        };
        let figures = r#""start_s":0.5,"end_s":2.0,"ops":3,"bytes":4096,"ops_per_sec":2.0,"bytes_per_sec":2048.0,"first_done_ops":1"#;
        let json = serde_json::to_string(&rank).unwrap();
        assert_eq!(
            json,
            format!(r#"{{"rank":1,"node":0,"host":"a",{figures}}}"#)
        );
        assert_eq!(serde_json::from_str::<RankFigures>(&json).unwrap(), rank);
        let node = NodeFigures {
            node: 1,
            host: "b".into(),
            ranks: 2,
            work: WorkFigures {
                error: Some("x".into()),
                ..work
            },
        };
        let json = serde_json::to_string(&node).unwrap();
        let want = format!(r#"{{"node":1,"host":"b","ranks":2,{figures},"error":"x"}}"#);
        assert_eq!(json, want);
        assert_eq!(serde_json::from_str::<NodeFigures>(&json).unwrap(), node);
        // A record written before ranks had nodes, with whole numbers where it wrote them.
        let old = r#"{"rank":0,"host":"a","start_s":0,"end_s":1,"ops":1,"bytes":0,"ops_per_sec":1,"bytes_per_sec":0,"first_done_ops":1}"#;
        let r: RankFigures = serde_json::from_str(old).unwrap();
        assert_eq!((r.node, r.work.end_s, r.work.error), (0, 1.0, None));
    }
}
