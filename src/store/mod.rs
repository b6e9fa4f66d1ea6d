//! The study directory: `manifest.json` (the plan, the environment, what was provisioned and how)
//! and `results.jsonl` (one record per measured phase, appended and flushed the moment it exists).
//! The format is documented in docs/results-schema.md.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::plan::Plan;
use crate::plan::TargetInfo;

/// Why the study directory could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: {why}")]
    Format { path: String, why: String },
    #[error(
        "{0} already holds a study (results.jsonl is not empty): choose a new --out directory"
    )]
    Exists(String),
}

fn io_at(path: &Path) -> impl FnOnce(std::io::Error) -> StoreError + '_ {
    move |source| StoreError::Io {
        path: path.display().to_string(),
        source,
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
}

/// One rank's share of a multi-rank phase. Times are seconds after the barrier that started the
/// phase, on the rank's own monotonic clock (wall clocks of different nodes are never compared).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RankFigures {
    pub rank: usize,
    pub host: String,
    /// Its workers started, and the last of them ended.
    pub start_s: f64,
    pub end_s: f64,
    /// Operations (I/Os, files) and bytes it did, and its rates over its own window.
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
    /// The job as run, with every option that changes results.
    pub config: Option<serde_json::Value>,
    /// Some(reason) when the phase could not run on this target.
    pub skipped: Option<String>,
    /// The failed call behind `error`, when it was one.
    pub failure: Option<crate::io::Failure>,
    /// Each rank's figures (multi-rank runs).
    pub ranks: Vec<RankFigures>,
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

    /// The one way to build a record: a phase as measured, with its key.
    pub fn from_phase(key: &RecordKey, p: Phase) -> Record {
        let outcome = if p.error.is_some() {
            Outcome::Failed
        } else if p.skipped.is_some() {
            Outcome::Skipped
        } else {
            Outcome::Ok
        };
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
            config: p.config,
            failure: p.failure,
            ranks: p.ranks,
        }
    }
}

/// Reads a study's manifest.json.
pub fn read_manifest(dir: &Path) -> Result<Manifest, StoreError> {
    let mpath = dir.join("manifest.json");
    let text = std::fs::read_to_string(&mpath).map_err(io_at(&mpath))?;
    serde_json::from_str(&text).map_err(|e| StoreError::Format {
        path: mpath.display().to_string(),
        why: e.to_string(),
    })
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

pub struct Study {
    pub dir: PathBuf,
    results: File,
}

fn open_append(path: &Path) -> Result<File, StoreError> {
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(io_at(path))
}

fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = path.with_extension("tmp");
    let mut f = File::create(&tmp)?;
    f.write_all(bytes)?;
    f.sync_all()?;
    std::fs::rename(&tmp, path)
}

impl Study {
    /// Creates a new study directory; refuses one that already holds results.
    pub fn create(dir: &Path, manifest: &Manifest) -> Result<Study, StoreError> {
        let results_path = dir.join("results.jsonl");
        if results_path
            .metadata()
            .map(|m| m.len() > 0)
            .unwrap_or(false)
        {
            return Err(StoreError::Exists(dir.display().to_string()));
        }
        std::fs::create_dir_all(dir).map_err(io_at(dir))?;
        let study = Study {
            dir: dir.to_path_buf(),
            results: open_append(&results_path)?,
        };
        study.save_manifest(manifest)?;
        Ok(study)
    }

    /// Opens an existing study to continue it (`compare --resume`).
    pub fn open(dir: &Path) -> Result<(Study, Manifest), StoreError> {
        let manifest = read_manifest(dir)?;
        let results = open_append(&dir.join("results.jsonl"))?;
        let study = Study {
            dir: dir.to_path_buf(),
            results,
        };
        Ok((study, manifest))
    }

    /// Replaces results.jsonl with `keep` (atomically); `moved` are appended to
    /// results.partial.jsonl, so that nothing measured is lost.
    pub fn set_aside(&mut self, keep: &[Record], moved: &[Record]) -> Result<(), StoreError> {
        let lines = |rs: &[Record]| -> std::io::Result<Vec<u8>> {
            let mut out = Vec::new();
            for r in rs {
                out.extend(serde_json::to_vec(r).map_err(std::io::Error::other)?);
                out.push(b'\n');
            }
            Ok(out)
        };
        let ppath = self.dir.join("results.partial.jsonl");
        let mut partial = open_append(&ppath)?;
        lines(moved)
            .and_then(|b| partial.write_all(&b))
            .and_then(|_| partial.sync_data())
            .map_err(io_at(&ppath))?;
        let rpath = self.dir.join("results.jsonl");
        lines(keep)
            .and_then(|b| write_atomic(&rpath, &b))
            .map_err(io_at(&rpath))?;
        self.results = open_append(&rpath)?;
        Ok(())
    }

    /// Appends one record and makes it durable before returning.
    pub fn append(&mut self, rec: &Record) -> Result<(), StoreError> {
        let path = self.dir.join("results.jsonl");
        let mut line = serde_json::to_vec(rec)
            .map_err(std::io::Error::other)
            .map_err(io_at(&path))?;
        line.push(b'\n');
        self.results.write_all(&line).map_err(io_at(&path))?;
        self.results.sync_data().map_err(io_at(&path))
    }

    /// Rewrites the manifest of a study that is not open (e.g. to add the report's warnings).
    pub fn save_manifest_at(dir: &Path, m: &Manifest) -> Result<(), StoreError> {
        let path = dir.join("manifest.json");
        let bytes = serde_json::to_vec_pretty(m)
            .map_err(std::io::Error::other)
            .map_err(io_at(&path))?;
        write_atomic(&path, &bytes).map_err(io_at(&path))
    }

    pub fn save_manifest(&self, m: &Manifest) -> Result<(), StoreError> {
        Study::save_manifest_at(&self.dir, m)
    }
}

/// Appends records to a study's results.jsonl (made, with its directory, when missing), each
/// durable before the next (an imported result).
pub fn append_records(dir: &Path, records: &[Record]) -> Result<(), StoreError> {
    std::fs::create_dir_all(dir).map_err(io_at(dir))?;
    let mut study = Study {
        dir: dir.to_path_buf(),
        results: open_append(&dir.join("results.jsonl"))?,
    };
    records.iter().try_for_each(|r| study.append(r))
}

/// Reads every complete record of a study; a torn last line (a crash mid-write) is skipped.
pub fn load_results(dir: &Path) -> Result<Vec<Record>, StoreError> {
    let path = dir.join("results.jsonl");
    let text = std::fs::read_to_string(&path).map_err(io_at(&path))?;
    let mut out = Vec::new();
    let lines: Vec<&str> = text.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str(line) {
            Ok(r) => out.push(r),
            Err(_) if i + 1 == lines.len() && !text.ends_with('\n') => {}
            Err(e) => {
                return Err(StoreError::Format {
                    path: format!("{} line {}", path.display(), i + 1),
                    why: e.to_string(),
                })
            }
        }
    }
    Ok(out)
}
