//! `fsbench run JOBFILE`: a fio job file run where its filename/directory say, recorded as a
//! study in the same format as `compare`, by the same coordinator.

use std::path::{Path, PathBuf};

use super::{exit_for, Exit};
use crate::cli::RunArgs;
use crate::plan::{Plan, WorkloadSpec};
use crate::runner::{self, Ended, Where};

/// The directory the first job works in (its filename's or directory's, or here).
fn first_dir(jobs: &[crate::plan::job::Job]) -> PathBuf {
    jobs.first()
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
        .unwrap_or_else(|| PathBuf::from("."))
}

/// The filesystem type and block device under a directory (for the record and diskstats).
fn where_is(dir: &Path) -> (String, Option<PathBuf>) {
    let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let fs = crate::sys::mounts::containing(&dir)
        .map(|m| m.fstype)
        .unwrap_or_else(|| "unknown".into());
    (fs, crate::metrics::diskstats::device_of_dir(&dir))
}

pub fn run(a: RunArgs) -> anyhow::Result<Exit> {
    let overrides = a.block.overrides();
    let block = crate::workload::block::from_jobfile(&a.jobfile, &overrides)?;
    let dir = first_dir(block.jobs());
    let (fs, device) = where_is(&dir);
    let out = a.out.unwrap_or_else(|| {
        PathBuf::from(format!("fsbench-run-{}", crate::metrics::clock::run_id()))
    });
    let plan = Plan {
        targets: Vec::new(),
        workloads: vec![WorkloadSpec {
            spec: format!("fio:{}", a.jobfile.display()),
            name: "fio".into(),
            params: vec![("file".into(), a.jobfile.display().to_string())],
        }],
        size_bytes: 0,
        device: None,
        wipe: a.wipe,
        repeat: 1,
        baseline: None,
        overrides,
    };
    super::install_signals()?;
    let opts = runner::Options {
        plan,
        out: out.clone(),
        place: Where::Here {
            fs,
            device,
            dir,
            wipe: a.wipe,
        },
        dry_run: false,
        quiet: a.quiet,
        command_line: std::env::args().collect(),
        resume: false,
    };
    let summary = runner::run(&opts)?;
    crate::out::print(&crate::report::block::tables(&summary.records));
    for r in summary.records.iter().filter(|r| r.error.is_some()) {
        eprintln!(
            "fsbench: {} failed: {}",
            r.test,
            r.error.as_deref().unwrap_or("")
        );
    }
    crate::out::line(&format!("results: {}", out.join("results.jsonl").display()));
    Ok(match summary.ended {
        Ended::Interrupted(why) => Exit::Stopped(why),
        _ => exit_for(&summary.records),
    })
}
