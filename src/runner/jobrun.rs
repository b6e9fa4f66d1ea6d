//! `fsbench run JOBFILE`: a fio job file run as fio would, recorded as a study (one record per
//! job) in the same format as `compare`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::metrics::clock::now_rfc3339;
use crate::plan::{Overrides, Plan, WorkloadSpec};
use crate::store::{Environment, Manifest, Outcome, Record, Study, SCHEMA_VERSION};
use crate::workload::block::{self, Env, Place};

pub struct Options {
    pub jobfile: PathBuf,
    pub out: PathBuf,
    pub wipe: bool,
    pub overrides: Overrides,
    pub quiet: bool,
    pub command_line: Vec<String>,
}

pub struct Summary {
    pub records: Vec<Record>,
    pub interrupted: bool,
}

/// The filesystem type and block device under a directory (for the record and diskstats).
fn where_is(dir: &Path) -> (String, Option<PathBuf>) {
    let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let fs = crate::provision::mounts::mounts()
        .into_iter()
        .rev()
        .find(|m| dir.starts_with(&m.mountpoint))
        .map(|m| m.fstype)
        .unwrap_or_else(|| "unknown".into());
    (fs, crate::metrics::diskstats::device_of_dir(&dir))
}

/// Checks the job file; errors (with line numbers) come before anything runs.
pub fn load(opts: &Options) -> Result<block::Block, String> {
    block::from_jobfile(&opts.jobfile, &opts.overrides)
}

pub fn run(opts: &Options, jobs: &block::Block) -> Result<Summary, String> {
    // Where the first job works decides the filesystem recorded (fio's directory, or here).
    let first_dir = jobs
        .jobs()
        .first()
        .and_then(|j| {
            j.filename
                .as_deref()
                .filter(|f| Path::new(f).is_absolute())
                .map(|f| {
                    Path::new(f)
                        .parent()
                        .unwrap_or(Path::new("/"))
                        .to_path_buf()
                })
                .or_else(|| j.directory.as_deref().map(PathBuf::from))
        })
        .unwrap_or_else(|| PathBuf::from("."));
    let (fs, stats_device) = where_is(&first_dir);
    let spec = WorkloadSpec {
        spec: format!("fio:{}", opts.jobfile.display()),
        name: "fio".into(),
        params: vec![("file".into(), opts.jobfile.display().to_string())],
    };
    let mut manifest = Manifest {
        schema: SCHEMA_VERSION,
        fsbench_version: env!("CARGO_PKG_VERSION").to_string(),
        run_id: crate::metrics::clock::run_id(),
        created_at: now_rfc3339(),
        finished_at: None,
        status: "running".into(),
        command_line: opts.command_line.clone(),
        plan: Plan {
            targets: Vec::new(),
            workloads: vec![spec],
            size_bytes: 0,
            device: None,
            wipe: opts.wipe,
            repeat: 1,
            baseline: None,
            overrides: opts.overrides.clone(),
        },
        environment: Environment::probe(),
        targets: Vec::new(),
        warnings: Vec::new(),
        completed: Vec::new(),
    };
    let env = Env {
        place: Place::AsFio { wipe: opts.wipe },
        fs: &fs,
        stats_device,
        quiet: opts.quiet,
    };
    jobs.check(&env)?;
    let mut study = Study::create(&opts.out, &manifest)?;
    let mut records = Vec::new();
    let mut save_err = None;
    let result = jobs.execute(&env, &mut |p| {
        let rec = Record {
            schema: SCHEMA_VERSION,
            target: "local".into(),
            fs: fs.clone(),
            workload: "fio".into(),
            test: p.test,
            repeat: 0,
            started_at: p.started_at,
            duration_s: p.duration_s,
            outcome: if p.error.is_some() {
                Outcome::Failed
            } else {
                Outcome::Ok
            },
            reason: None,
            error: p.error,
            metrics: p.metrics,
            notes: p.notes,
            histograms: p.histograms,
            series: p.series,
            config: p.config,
        };
        if let Err(e) = study.append(&rec) {
            save_err = Some(e.to_string());
            return Err(e);
        }
        records.push(rec);
        Ok(())
    });
    if let Some(e) = save_err {
        return Err(format!("cannot write results.jsonl: {e}"));
    }
    let interrupted = crate::runner::stop_requested();
    if let Err(e) = &result {
        if !interrupted {
            let rec = Record {
                schema: SCHEMA_VERSION,
                target: "local".into(),
                fs: fs.clone(),
                workload: "fio".into(),
                test: "run".into(),
                repeat: 0,
                started_at: now_rfc3339(),
                duration_s: 0.0,
                outcome: Outcome::Failed,
                reason: None,
                error: Some(e.clone()),
                metrics: BTreeMap::new(),
                notes: Vec::new(),
                histograms: BTreeMap::new(),
                series: BTreeMap::new(),
                config: None,
            };
            study
                .append(&rec)
                .map_err(|e| format!("cannot write results.jsonl: {e}"))?;
            records.push(rec);
        }
    }
    manifest.finished_at = Some(now_rfc3339());
    manifest.status = if interrupted {
        "interrupted"
    } else if result.is_err() {
        "failed"
    } else {
        "complete"
    }
    .into();
    study
        .save_manifest(&manifest)
        .map_err(|e| format!("cannot write the manifest: {e}"))?;
    Ok(Summary {
        records,
        interrupted,
    })
}
