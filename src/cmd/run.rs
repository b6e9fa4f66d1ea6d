//! `fsbench run JOBFILE`: a fio job file run where its filename/directory say, recorded as a
//! study in the same format as `compare`, by the same coordinator.

use std::path::{Path, PathBuf};

use super::{exit_for, Exit};
use crate::cli::RunArgs;
use crate::plan::fio::jobfile::JobFile;
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
    (
        fs,
        crate::metrics::evidence::watch::devices_of_dir(&dir)
            .into_iter()
            .next(),
    )
}

/// `--check`: every job as it would run, each option with the line it came from.
fn check(a: &RunArgs) -> anyhow::Result<Exit> {
    let overrides = a.block.overrides();
    let mut text = String::new();
    let mut failed = Vec::new();
    for path in &a.jobfiles {
        match crate::workload::block::read_jobfile(path) {
            Ok(f) => {
                text.push_str(&describe(path, &f, &overrides));
                // Every rule `run` applies before it starts (sizes against blocks, the files the
                // jobs need, a device's guards), on the same paths; nothing is created.
                if let Err(e) = resolvable(path, &overrides, a.wipe) {
                    failed.push(format!("{}: {e}", path.display()));
                }
            }
            Err(e) => failed.push(e.to_string()),
        }
    }
    crate::out::print(&text);
    if failed.is_empty() {
        Ok(Exit::Ok)
    } else {
        anyhow::bail!("{}", failed.join("\n"))
    }
}

/// The jobs resolved where `run` would run them, as `run` does before anything is created.
fn resolvable(path: &Path, overrides: &crate::plan::Overrides, wipe: bool) -> anyhow::Result<()> {
    let block = crate::workload::block::from_jobfile(path, overrides)?;
    let dir = first_dir(block.jobs());
    let (fs, device) = where_is(&dir);
    let place = Where::Here {
        fs,
        device,
        dir,
        wipe,
    };
    let ctx = crate::runner::here_ctx(&place, true, Default::default()).expect("a here target");
    block.check(&ctx).map_err(anyhow::Error::msg)
}

fn describe(path: &Path, f: &JobFile, o: &crate::plan::Overrides) -> String {
    let mut s = String::new();
    let mut group = 0;
    s.push_str(&format!(
        "{}: {} job{}, nothing run\n",
        path.display(),
        f.jobs.len(),
        if f.jobs.len() == 1 { "" } else { "s" }
    ));
    for (i, job) in f.jobs.iter().enumerate() {
        if i == 0 || job.stonewall {
            group += 1;
        }
        s.push_str(&format!("\n[{}]  phase {group}\n", job.name));
        for src in &f.sources[i] {
            let kv = match &src.value {
                Some(v) => format!("{}={v}", src.key),
                None => src.key.clone(),
            };
            s.push_str(&format!("  {kv:<40} {}\n", src.at));
        }
        let mut run = job.clone();
        crate::workload::presets::apply_overrides(&mut run, o);
        s.push_str(&format!("  as run: {}\n", run.line()));
    }
    if !f.notes.is_empty() {
        s.push_str("\nnotes:\n");
        for n in &f.notes {
            s.push_str(&format!("  {n}\n"));
        }
    }
    s
}

pub fn run(a: RunArgs) -> anyhow::Result<Exit> {
    if a.block.until_steady.is_some() {
        anyhow::bail!(
            "--until-steady applies to compare's presets; in a job file write fio's options instead: steadystate=iops_slope:0.5%, ss_dur=10s, ss_ramp=5s, time_based and runtime= (the longest it may run)"
        );
    }
    if a.check {
        return check(&a);
    }
    if a.jobfiles.len() != 1 {
        anyhow::bail!(
            "give one job file to run ({} given); --check takes several",
            a.jobfiles.len()
        );
    }
    let team = super::join_ranks(&a.ranks)?;
    let jobfile = a.jobfiles[0].clone();
    let overrides = a.block.overrides();
    let block = crate::workload::block::from_jobfile(&jobfile, &overrides)?;
    let dir = first_dir(block.jobs());
    let (fs, device) = where_is(&dir);
    let out = a.out.unwrap_or_else(|| {
        PathBuf::from(format!("fsbench-run-{}", crate::metrics::clock::run_id()))
    });
    let plan = Plan {
        targets: Vec::new(),
        workloads: vec![WorkloadSpec {
            spec: format!("fio:{}", jobfile.display()),
            name: "fio".into(),
            params: vec![("file".into(), Some(jobfile.display().to_string()))],
        }],
        size_bytes: 0,
        device: None,
        wipe: a.wipe,
        repeat: 1,
        baseline: None,
        overrides,
        ranks: a.ranks.plan(),
        study: None,
        tune: None,
        on_interference: Default::default(),
        on_misfit: Default::default(),
    };
    let place = Where::Here {
        fs,
        device,
        dir,
        wipe: a.wipe,
    };
    let checked = runner::resolve(plan, &place, team.rank().many())
        .map_err(anyhow::Error::from)
        .and_then(|resolved| {
            // Bound before anything is made: a taken port leaves nothing behind.
            super::endpoint::open(a.metrics.metrics, "run", &out, team.as_ref(), a.quiet)
                .map(|e| (resolved, e))
        });
    let (resolved, endpoint) = super::before_agreeing(team.as_ref(), checked)?;
    super::install_signals()?;
    let opts = runner::Options {
        resolved,
        out: out.clone(),
        place,
        dry_run: false,
        quiet: a.quiet,
        command_line: std::env::args().collect(),
        resume: false,
        select: None,
        observer: super::history::recorder(&a.history, !team.rank().leads())?,
    };
    let summary = runner::run(&opts, team.as_ref())?;
    // The endpoint closes when the run ends.
    drop(endpoint);
    if let (Some(o), Some(s)) = (&opts.observer, &summary.study) {
        o.finish(&s.dir);
    }
    if let Some(exit) = super::rank_exit(team.as_ref(), &summary.ended) {
        return Ok(exit);
    }
    if a.output_format == "json" {
        let v = crate::report::fiojson::render(&summary.records);
        crate::out::print(&(serde_json::to_string_pretty(&v)? + "\n"));
    } else {
        crate::out::print(&crate::report::views::block::tables(
            &summary.records,
            super::screen(0).columns,
        ));
    }
    for r in summary.records.iter().filter(|r| r.error.is_some()) {
        crate::out::eline!(
            "fsbench: {} failed: {}",
            r.test,
            r.error.as_deref().unwrap_or("")
        );
    }
    if a.output_format != "json" {
        crate::out::line(&format!("results: {}", out.join("results.jsonl").display()));
    }
    super::settle_ranks(team.as_ref(), &summary.ended);
    Ok(match summary.ended {
        Ended::Interrupted(why) => Exit::Stopped(why),
        Ended::Ranks(_) => Exit::CheckFailed,
        _ => exit_for(&summary.records),
    })
}
