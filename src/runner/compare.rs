//! `fsbench compare`: for each repeat and target, provision, run every workload, append each phase
//! as it finishes, tear down. A target that cannot be provisioned is recorded as skipped.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

use crate::metrics::clock::now_rfc3339;
use crate::plan::Plan;
use crate::provision::exec::Sys;
use crate::provision::{self, ProvisionError, Request};
use crate::store::{Environment, Manifest, Outcome, Record, Study, SCHEMA_VERSION};
use crate::workload::{self, Context, Phase};

pub struct Options {
    pub plan: Plan,
    pub out: PathBuf,
    pub workdir: PathBuf,
    pub keep: bool,
    pub dry_run: bool,
    pub quiet: bool,
    pub command_line: Vec<String>,
    /// Continue the study in `out`: skip what ran to completion, redo the rest.
    pub resume: bool,
}

/// How a compare ended.
pub enum Ended {
    /// Every case ran (some may have been skipped or failed; the records say which).
    Complete,
    /// A signal stopped it; everything measured so far is saved.
    Interrupted,
    /// A guard refused the device: nothing was formatted.
    Refused(String),
}

pub struct Summary {
    pub records: Vec<Record>,
    pub ended: Ended,
}

fn record(label: &str, fs: &str, workload: &str, test: &str, repeat: u32) -> Record {
    Record {
        schema: SCHEMA_VERSION,
        target: label.to_string(),
        fs: fs.to_string(),
        workload: workload.to_string(),
        test: test.to_string(),
        repeat,
        started_at: now_rfc3339(),
        duration_s: 0.0,
        outcome: Outcome::Ok,
        reason: None,
        error: None,
        metrics: BTreeMap::new(),
        notes: Vec::new(),
        histograms: BTreeMap::new(),
        series: BTreeMap::new(),
        config: None,
    }
}

pub fn run(opts: &Options) -> Result<Summary, String> {
    let sys = Sys::new(opts.dry_run);
    let run_id = crate::metrics::clock::run_id();
    let mut manifest = Manifest {
        schema: SCHEMA_VERSION,
        fsbench_version: env!("CARGO_PKG_VERSION").to_string(),
        run_id: run_id.clone(),
        created_at: now_rfc3339(),
        finished_at: None,
        status: "running".into(),
        command_line: opts.command_line.clone(),
        plan: opts.plan.clone(),
        environment: Environment::probe(),
        targets: Vec::new(),
        warnings: Vec::new(),
        completed: Vec::new(),
    };
    let mut records: Vec<Record> = Vec::new();
    let mut study = if opts.dry_run {
        None
    } else if opts.resume {
        let (mut s, old) = Study::open(&opts.out)?;
        let earlier = crate::store::load_results(&opts.out)?;
        // Records of a (target, repeat) that did not reach its teardown are set aside and
        // measured again, so that every (target, test, repeat) ends up in results.jsonl once.
        let (keep, moved): (Vec<Record>, Vec<Record>) = earlier
            .into_iter()
            .partition(|r| old.completed.contains(&(r.target.clone(), r.repeat)));
        s.set_aside(&keep, &moved)
            .map_err(|e| format!("cannot rewrite results.jsonl: {e}"))?;
        manifest = Manifest {
            status: "running".into(),
            finished_at: None,
            ..old
        };
        manifest.warnings.push(format!(
            "resumed at {}: {} target runs were complete; {} records of unfinished ones moved to results.partial.jsonl",
            now_rfc3339(),
            manifest.completed.len(),
            moved.len()
        ));
        s.save_manifest(&manifest)
            .map_err(|e| format!("cannot write the manifest: {e}"))?;
        records = keep;
        Some(s)
    } else {
        Some(Study::create(&opts.out, &manifest)?)
    };
    let workloads: Vec<_> = opts
        .plan
        .workloads
        .iter()
        .map(|w| workload::build(w, &opts.plan.overrides).map(|b| (w.name.clone(), b)))
        .collect::<Result<_, _>>()?;
    let save =
        |study: &mut Option<Study>, rec: Record, records: &mut Vec<Record>| -> Result<(), String> {
            if let Some(s) = study.as_mut() {
                s.append(&rec)
                    .map_err(|e| format!("cannot write results.jsonl: {e}"))?;
            }
            records.push(rec);
            Ok(())
        };
    let device = opts.plan.device.as_ref().map(PathBuf::from);
    let mut ended = Ended::Complete;
    'repeats: for repeat in 0..opts.plan.repeat {
        // Interleave: each repeat starts one target later, so drift of the machine over the
        // study does not always fall on the same filesystem.
        let n = opts.plan.targets.len();
        let order: Vec<usize> = (0..n).map(|i| (i + repeat as usize) % n).collect();
        for index in order {
            let spec = &opts.plan.targets[index];
            if manifest.completed.contains(&(spec.label.clone(), repeat)) {
                continue;
            }
            if crate::runner::stop_requested() {
                ended = Ended::Interrupted;
                break 'repeats;
            }
            if !opts.quiet {
                eprintln!("fsbench: [{}] provisioning {}", spec.label, spec.spec);
            }
            let req = Request {
                workdir: &opts.workdir,
                run_id: &run_id,
                index: index + repeat as usize * opts.plan.targets.len(),
                size: opts.plan.size_bytes,
                device: device.as_deref(),
                wipe: opts.plan.wipe,
                keep_image: opts.keep,
                persistent: false,
            };
            let t0 = Instant::now();
            let mounted = match provision::provision(&sys, spec, &req) {
                Ok(m) => m,
                Err(e) => {
                    let mut rec = record(&spec.label, &spec.fs, "provision", "provision", repeat);
                    rec.duration_s = t0.elapsed().as_secs_f64();
                    match &e {
                        ProvisionError::Unsupported(why) => {
                            rec.outcome = Outcome::Skipped;
                            rec.reason = Some(why.clone());
                            manifest.completed.push((spec.label.clone(), repeat));
                            manifest
                                .warnings
                                .push(format!("{} skipped: {why}", spec.label));
                        }
                        ProvisionError::Refused(why) => {
                            rec.outcome = Outcome::Skipped;
                            rec.reason = Some(why.clone());
                            ended = Ended::Refused(why.clone());
                        }
                        ProvisionError::Failed(err) => {
                            rec.outcome = Outcome::Failed;
                            rec.error = Some(err.clone());
                        }
                    }
                    eprintln!(
                        "fsbench: [{}] {}: {e}",
                        spec.label,
                        match rec.outcome {
                            Outcome::Skipped => "skipped",
                            _ => "failed",
                        }
                    );
                    save(&mut study, rec, &mut records)?;
                    if matches!(ended, Ended::Refused(_)) {
                        break 'repeats;
                    }
                    continue;
                }
            };
            if !opts.quiet {
                eprintln!(
                    "fsbench: [{}] {} {} ({})",
                    spec.label,
                    if mounted.info.fs == "raw" {
                        "using the device"
                    } else {
                        "mounted on"
                    },
                    mounted.mountpoint.display(),
                    mounted.info.backing
                );
            }
            let fs = mounted.info.fs.clone();
            let device_path: Option<PathBuf> = mounted.info.device.as_ref().map(PathBuf::from);
            if !mounted.info.options_not_in_effect.is_empty() {
                manifest.warnings.push(format!(
                    "{}: requested options not in effect after mounting: {}",
                    spec.label,
                    mounted.info.options_not_in_effect.join(", ")
                ));
            }
            for (wname, w) in &workloads {
                if crate::runner::stop_requested() || opts.dry_run {
                    break;
                }
                let mut emit_err = None;
                let result = {
                    let mut emit = |p: Phase| -> std::io::Result<()> {
                        let mut rec = record(&spec.label, &fs, wname, &p.test, repeat);
                        rec.started_at = p.started_at.clone();
                        rec.duration_s = p.duration_s;
                        rec.metrics = p.metrics;
                        rec.notes = p.notes;
                        rec.histograms = p.histograms;
                        rec.series = p.series;
                        rec.config = p.config;
                        if let Some(why) = p.skipped {
                            rec.outcome = Outcome::Skipped;
                            rec.reason = Some(why);
                        }
                        if let Some(e) = &p.error {
                            rec.outcome = Outcome::Failed;
                            rec.error = Some(e.clone());
                        }
                        if let Err(e) = save(&mut study, rec, &mut records) {
                            emit_err = Some(e.clone());
                            return Err(std::io::Error::other(e));
                        }
                        Ok(())
                    };
                    let mut ctx = Context {
                        dir: &mounted.mountpoint,
                        fs: &fs,
                        device: device_path.as_deref(),
                        raw_device: if fs == "raw" {
                            device_path.as_deref()
                        } else {
                            None
                        },
                        quiet: opts.quiet,
                        emit: &mut emit,
                    };
                    w.run(&mut ctx)
                };
                if let Some(e) = emit_err {
                    return Err(e);
                }
                if let Err(e) = result {
                    let mut rec = record(&spec.label, &fs, wname, "run", repeat);
                    rec.outcome = Outcome::Failed;
                    rec.error = Some(e.clone());
                    eprintln!("fsbench: [{}] {wname} failed: {e}", spec.label);
                    save(&mut study, rec, &mut records)?;
                }
            }
            let mut info = mounted.info.clone();
            match mounted.teardown() {
                Ok(_) => {}
                Err(e) => manifest
                    .warnings
                    .push(format!("{}: teardown: {e}", spec.label)),
            }
            info.commands.extend(sys.take_log());
            manifest.targets.push(info);
            if !crate::runner::stop_requested() {
                manifest.completed.push((spec.label.clone(), repeat));
            }
            if let Some(s) = &study {
                s.save_manifest(&manifest)
                    .map_err(|e| format!("cannot write the manifest: {e}"))?;
            }
        }
    }
    if crate::runner::stop_requested() {
        ended = Ended::Interrupted;
    }
    manifest.finished_at = Some(now_rfc3339());
    manifest.status = match &ended {
        Ended::Complete => "complete",
        Ended::Interrupted => "interrupted",
        Ended::Refused(_) => "refused",
    }
    .into();
    if let Some(s) = &study {
        s.save_manifest(&manifest)
            .map_err(|e| format!("cannot write the manifest: {e}"))?;
    }
    Ok(Summary { records, ended })
}
