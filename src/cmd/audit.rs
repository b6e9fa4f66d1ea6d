//! `fsbench audit TARGET...`: provision each target on loop images, damage its image under known
//! files, record what the filesystem and its checker do, tear down, print the table.

use std::path::PathBuf;

use super::{need_root, Exit};
use crate::audit::{self, Case, Options};
use crate::cli::{AuditArgs, AuditCase};
use crate::plan::{Plan, WorkloadSpec};
use crate::provision::exec::Sys;
use crate::provision::Request;
use crate::report::StudyReport;
use crate::store::{Manifest, Record, RecordKey, Status, Study};

pub fn run(a: AuditArgs) -> anyhow::Result<Exit> {
    let mut targets = Vec::new();
    for t in &a.targets {
        let spec = crate::provision::parse_target(t).map_err(anyhow::Error::msg)?;
        if let Some(why) = audit::refuse(&spec) {
            anyhow::bail!("{why}");
        }
        targets.push(spec);
    }
    if a.file_size < 8 << 10 {
        anyhow::bail!(
            "--file-size {}: at least 8K, so that no filesystem keeps the files inline in its metadata",
            a.file_size
        );
    }
    let dry_run = a.common.dry_run;
    let workdir = if dry_run {
        a.common.workdir.clone()
    } else {
        need_root("fsbench audit")?;
        super::install_signals()?;
        super::cleanup::leftovers(a.common.quiet);
        crate::provision::workdir::secure(&a.common.workdir)?
    };
    let o = options(&a);
    let sys = Sys::new(dry_run);
    let run_id = crate::metrics::clock::run_id();
    if dry_run {
        return dry(&sys, &targets, &workdir, &run_id, a.size, &o);
    }
    let out = a
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("fsbench-audit-{run_id}")));
    let plan = Plan {
        targets: targets.clone(),
        workloads: vec![WorkloadSpec {
            spec: "audit".into(),
            name: "audit".into(),
            params: vec![
                ("files".into(), o.files.to_string()),
                ("file_size".into(), o.file_size.to_string()),
                ("dir_files".into(), o.dir_files.to_string()),
                (
                    "cases".into(),
                    o.cases
                        .iter()
                        .map(|c| c.name())
                        .collect::<Vec<_>>()
                        .join("+"),
                ),
            ],
        }],
        size_bytes: a.size,
        device: None,
        wipe: false,
        repeat: 1,
        baseline: None,
        overrides: Default::default(),
        ranks: Default::default(),
    };
    let mut manifest = Manifest::new(
        plan,
        std::env::args().collect(),
        crate::sys::host::Environment::probe(),
    );
    let mut study = Study::create(&out, &manifest)?;
    let mut records = Vec::new();
    for (i, spec) in targets.iter().enumerate() {
        if crate::stop::stop_requested() {
            break;
        }
        if !a.common.quiet {
            eprintln!("fsbench: auditing '{}'", spec.label);
        }
        let req = request(&workdir, &run_id, i, a.size);
        let phases = audit::provision_and_audit(&sys, spec, &req, &o);
        let key = RecordKey {
            target: &spec.label,
            fs: &spec.fs,
            workload: "audit",
            repeat: 0,
        };
        for p in phases {
            let r = Record::from_phase(&key, p);
            study.append(&r)?;
            records.push(r);
        }
        manifest.completed.push((spec.label.clone(), 0));
        study.save_manifest(&manifest)?;
    }
    let stopped = crate::stop::requested();
    manifest.finished_at = Some(crate::metrics::clock::now_rfc3339());
    manifest.status = if stopped.is_some() {
        Status::Interrupted
    } else {
        Status::Complete
    };
    manifest.stopped_by = stopped.map(|s| s.to_string());
    study.save_manifest(&manifest)?;
    print_report(&study, &records);
    Ok(match stopped {
        Some(why) => Exit::Stopped(why),
        None => super::exit_for(&records),
    })
}

fn options(a: &AuditArgs) -> Options {
    Options {
        files: a.files,
        file_size: a.file_size,
        cases: match a.case {
            AuditCase::Corruption => vec![Case::Corruption],
            AuditCase::Fsync => vec![Case::Fsync],
            AuditCase::All => vec![Case::Corruption, Case::Fsync],
        },
        ..Options::default()
    }
}

/// `--dry-run`: the provisioning commands and what would be done on each target.
fn dry(
    sys: &Sys,
    targets: &[crate::plan::TargetSpec],
    workdir: &std::path::Path,
    run_id: &str,
    size: u64,
    o: &Options,
) -> anyhow::Result<Exit> {
    for (i, spec) in targets.iter().enumerate() {
        let req = request(workdir, run_id, i, size);
        crate::provision::provision(sys, spec, &req)?;
        if o.cases.contains(&Case::Corruption) {
            crate::out::line(&format!(
                "would write {} files of {} and {} small files on '{}', unmount, flip 16 bytes of one copy of every other file's data and of a directory block in the image, mount again, read everything back, run its checker, tear down",
                o.files, crate::plan::units::format_bytes(o.file_size), o.dir_files, spec.label
            ));
        }
        if o.cases.contains(&Case::Fsync) {
            crate::out::line(&format!(
                "would provision '{}' again behind fsbench's fault device, fsync a 1 MiB file, overwrite it, fail the disk, fsync, heal it, fsync again, read it through the cache and after a remount, tear down",
                spec.label
            ));
        }
    }
    Ok(Exit::Ok)
}

fn request<'a>(
    workdir: &'a std::path::Path,
    run_id: &'a str,
    index: usize,
    size: u64,
) -> Request<'a> {
    Request {
        workdir,
        run_id,
        index,
        size,
        device: None,
        wipe: false,
        keep_image: false,
        persistent: false,
    }
}

fn print_report(study: &Study, records: &[Record]) {
    let out = &study.dir;
    match StudyReport::build(records.to_vec(), None, &[]) {
        Ok(rep) => {
            let _ = study.write_file("report.md", rep.markdown().as_bytes());
            crate::out::print(&rep.term(false));
        }
        Err(e) => eprintln!("fsbench: {e}"),
    }
    crate::out::line(&format!("results: {}", out.join("results.jsonl").display()));
}
