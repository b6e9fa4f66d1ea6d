//! The study directory: `manifest.json` (the plan, the environment, what was provisioned and how)
//! and `results.jsonl` (one record per measured phase, appended and flushed the moment it exists).
//! The format is documented in docs/results-schema.md.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::plan::Plan;
use crate::provision::lifecycle::TargetInfo;

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
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Environment {
    pub hostname: String,
    pub kernel: String,
    pub cpu_model: String,
    pub cpus: usize,
    pub mem_total_bytes: u64,
    pub fsbench_version: String,
}

impl Environment {
    pub fn probe() -> Environment {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let cpu_model = cpuinfo
            .lines()
            .find(|l| l.starts_with("model name"))
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim().to_string())
            .unwrap_or_else(|| "unknown".into());
        let mem_total_bytes = mem_total_bytes();
        Environment {
            hostname: std::fs::read_to_string("/proc/sys/kernel/hostname")
                .map(|s| s.trim().to_string())
                .unwrap_or_default(),
            kernel: crate::provision::probe::kernel_release(),
            cpu_model,
            cpus: std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1),
            mem_total_bytes,
            fsbench_version: env!("CARGO_PKG_VERSION").to_string(),
        }
    }
}

/// MemTotal from /proc/meminfo, in bytes (0 when unknown).
pub fn mem_total_bytes() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("MemTotal:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse::<u64>().ok())
        .map(|kb| kb * 1024)
        .unwrap_or(0)
}

/// Reads a study's manifest.json.
pub fn read_manifest(dir: &Path) -> Result<Manifest, String> {
    let mpath = dir.join("manifest.json");
    let text = std::fs::read_to_string(&mpath).map_err(|e| format!("{}: {e}", mpath.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", mpath.display()))
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Manifest {
    pub schema: u32,
    pub fsbench_version: String,
    pub run_id: String,
    pub created_at: String,
    #[serde(default)]
    pub finished_at: Option<String>,
    /// running, complete, interrupted, failed
    pub status: String,
    pub command_line: Vec<String>,
    pub plan: Plan,
    pub environment: Environment,
    /// Each target as provisioned: backing, commands as run, options in effect.
    pub targets: Vec<TargetInfo>,
    pub warnings: Vec<String>,
    /// (target label, repeat) pairs that ran to their teardown: `compare --resume` skips them.
    #[serde(default)]
    pub completed: Vec<(String, u32)>,
}

pub struct Study {
    pub dir: PathBuf,
    results: File,
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
    pub fn create(dir: &Path, manifest: &Manifest) -> Result<Study, String> {
        let results_path = dir.join("results.jsonl");
        if results_path
            .metadata()
            .map(|m| m.len() > 0)
            .unwrap_or(false)
        {
            return Err(format!(
                "{} already holds a study (results.jsonl is not empty): choose a new --out directory",
                dir.display()
            ));
        }
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let results = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&results_path)
            .map_err(|e| format!("cannot open {}: {e}", results_path.display()))?;
        let study = Study {
            dir: dir.to_path_buf(),
            results,
        };
        study
            .save_manifest(manifest)
            .map_err(|e| format!("cannot write the manifest in {}: {e}", dir.display()))?;
        Ok(study)
    }

    /// Opens an existing study to continue it (`compare --resume`).
    pub fn open(dir: &Path) -> Result<(Study, Manifest), String> {
        let manifest = read_manifest(dir)
            .map_err(|e| format!("{e}: --resume needs the directory of an earlier compare"))?;
        let results_path = dir.join("results.jsonl");
        let results = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&results_path)
            .map_err(|e| format!("cannot open {}: {e}", results_path.display()))?;
        Ok((
            Study {
                dir: dir.to_path_buf(),
                results,
            },
            manifest,
        ))
    }

    /// Replaces results.jsonl with `keep` (atomically); `moved` are appended to
    /// results.partial.jsonl, so that nothing measured is lost.
    pub fn set_aside(&mut self, keep: &[Record], moved: &[Record]) -> std::io::Result<()> {
        let lines = |rs: &[Record]| -> std::io::Result<Vec<u8>> {
            let mut out = Vec::new();
            for r in rs {
                out.extend(serde_json::to_vec(r).map_err(std::io::Error::other)?);
                out.push(b'\n');
            }
            Ok(out)
        };
        let mut partial = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.join("results.partial.jsonl"))?;
        partial.write_all(&lines(moved)?)?;
        partial.sync_data()?;
        write_atomic(&self.dir.join("results.jsonl"), &lines(keep)?)?;
        self.results = std::fs::OpenOptions::new()
            .append(true)
            .open(self.dir.join("results.jsonl"))?;
        Ok(())
    }

    /// Appends one record and makes it durable before returning.
    pub fn append(&mut self, rec: &Record) -> std::io::Result<()> {
        let mut line = serde_json::to_vec(rec).map_err(std::io::Error::other)?;
        line.push(b'\n');
        self.results.write_all(&line)?;
        self.results.sync_data()
    }

    /// Rewrites the manifest of a study that is not open (e.g. to add the report's warnings).
    pub fn save_manifest_at(dir: &Path, m: &Manifest) -> std::io::Result<()> {
        let bytes = serde_json::to_vec_pretty(m).map_err(std::io::Error::other)?;
        write_atomic(&dir.join("manifest.json"), &bytes)
    }

    pub fn save_manifest(&self, m: &Manifest) -> std::io::Result<()> {
        let bytes = serde_json::to_vec_pretty(m).map_err(std::io::Error::other)?;
        write_atomic(&self.dir.join("manifest.json"), &bytes)
    }
}

/// Reads every complete record of a study; a torn last line (a crash mid-write) is skipped.
pub fn load_results(dir: &Path) -> Result<Vec<Record>, String> {
    let path = dir.join("results.jsonl");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut out = Vec::new();
    let lines: Vec<&str> = text.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str(line) {
            Ok(r) => out.push(r),
            Err(_) if i + 1 == lines.len() && !text.ends_with('\n') => {}
            Err(e) => return Err(format!("{} line {}: {e}", path.display(), i + 1)),
        }
    }
    Ok(out)
}
