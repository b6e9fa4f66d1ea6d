//! One coordinator for `compare` and `run`.

use std::path::PathBuf;

use super::sink::Sink;
use super::targets::{here_ctx, release, Getter, Got};
use crate::frame::{run_session, RankCtx, RunError};
use crate::metrics::clock::now_rfc3339;
use crate::plan::{Plan, TargetSpec};
use crate::provision::exec::Sys;
use crate::ranks::Team;
use crate::stop::StopReason;
use crate::store::{Manifest, Record, RecordKey, Status, StoreError, Study};
use crate::workload::{self, Opened, SpecError, Workload};

/// Where the targets come from.
pub enum Where {
    /// Provision each target of the plan in turn (`compare`).
    Provision { workdir: PathBuf, keep: bool },
    /// The paths the jobs name (`run`): one target, labelled "local", nothing provisioned.
    Here {
        fs: String,
        device: Option<PathBuf>,
        /// A directory on that filesystem (statvfs, syncfs).
        dir: PathBuf,
        wipe: bool,
    },
}

pub struct Options {
    pub plan: Plan,
    pub out: PathBuf,
    pub place: Where,
    pub dry_run: bool,
    pub quiet: bool,
    pub command_line: Vec<String>,
    /// Continue the study in `out`: skip what ran to completion, redo the rest.
    pub resume: bool,
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ended {
    /// Every case ran (some may have been skipped or failed; the records say which).
    Complete,
    /// A stop request (a signal) ended it; everything measured so far is saved.
    Interrupted(StopReason),
    /// A guard refused the device: nothing was formatted.
    Refused(String),
    /// A multi-rank run lost a rank (gone, or no answer in time); the manifest names it.
    Ranks(String),
}

pub struct Summary {
    pub records: Vec<Record>,
    pub ended: Ended,
    /// The study, still locked, for the reports written into it (none on a dry run or on ranks
    /// other than 0).
    pub study: Option<Study>,
}

#[derive(Debug, thiserror::Error)]
pub enum RunnerError {
    #[error(transparent)]
    Spec(#[from] SpecError),
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The jobs cannot run where they say (`run`): nothing was created.
    #[error("{0}")]
    Invalid(String),
}

/// The target list: the plan's, or the one "here" target of `run`.
fn targets_of(opts: &Options) -> Vec<TargetSpec> {
    match &opts.place {
        Where::Provision { .. } => opts.plan.targets.clone(),
        Where::Here { fs, .. } => vec![TargetSpec {
            spec: "local".into(),
            fs: fs.clone(),
            label: "local".into(),
            options: Vec::new(),
            extra_mkfs: Vec::new(),
            extra_mount: Vec::new(),
            size: None,
            path: None,
            fault: None,
        }],
    }
}

/// Opens the study: new, resumed (records of unfinished targets set aside), or none (dry run).
fn open_study(opts: &Options, manifest: &mut Manifest) -> Result<Sink, RunnerError> {
    if opts.dry_run {
        return Ok(Sink {
            study: None,
            records: Vec::new(),
        });
    }
    if !opts.resume {
        let study = Study::create(&opts.out, manifest)?;
        return Ok(Sink {
            study: Some(study),
            records: Vec::new(),
        });
    }
    let (mut s, mut old) = Study::open(&opts.out)?;
    let (earlier, torn) = crate::store::load_results_torn(&opts.out)?;
    // A torn last record (a crash while it was written): its bytes go to results.partial.jsonl
    // and the run it belongs to is measured again, even if the manifest counted it done.
    let torn_note = torn.as_deref().map(|t| undo_torn(&mut old.completed, t));
    // Records of a (target, repeat) that did not reach its teardown are set aside and measured
    // again, so that every (target, test, repeat) ends up in results.jsonl once.
    let (keep, moved): (Vec<Record>, Vec<Record>) = earlier
        .into_iter()
        .partition(|r| old.completed.contains(&(r.target.clone(), r.repeat)));
    s.set_aside(&keep, &moved, torn.as_deref())?;
    *manifest = Manifest {
        status: Status::Running,
        finished_at: None,
        stopped_by: None,
        rank_failure: None,
        ..old
    };
    manifest.warnings.push(format!(
        "resumed at {}: {} target runs were complete; {} records of unfinished ones moved to results.partial.jsonl",
        now_rfc3339(),
        manifest.completed.len(),
        moved.len()
    ));
    manifest.warnings.extend(torn_note);
    s.save_manifest(manifest)?;
    Ok(Sink {
        study: Some(s),
        records: keep,
    })
}

/// A torn last record names its target and repeat as far as its bytes go: that run is taken out
/// of the completed list (the last completed run of that target, or the last of all, when the
/// bytes stop before the repeat or the target). Returns the manifest's note.
fn undo_torn(completed: &mut Vec<(String, u32)>, torn: &str) -> String {
    let (target, repeat) = crate::store::torn_key(torn);
    let at = completed.iter().rposition(|(t, r)| {
        target.as_ref().is_none_or(|want| want == t) && repeat.is_none_or(|want| want == *r)
    });
    let redone = at.map(|i| completed.remove(i));
    format!(
        "results.jsonl ended with a torn record ({} bytes, a crash while it was written): moved to results.partial.jsonl{}",
        torn.len(),
        match redone {
            Some((t, r)) => format!("; target {t} (repeat {}) is measured again", r + 1),
            None => String::new(),
        }
    )
}

/// In `run`, the jobs must fit where they say before the study directory is created.
fn check_here(
    opts: &Options,
    workloads: &[(String, Box<dyn Workload>)],
    ranks: RankCtx,
) -> Result<(), RunnerError> {
    let Some(ctx) = here_ctx(&opts.place, opts.quiet, ranks) else {
        return Ok(());
    };
    for (_, w) in workloads {
        w.open(&ctx)
            .map_err(|e| RunnerError::Invalid(e.to_string()))?;
    }
    Ok(())
}

/// In `compare --device`, the device must pass the guards before the study directory is
/// created: a refusal is an exit 2 that leaves nothing behind.
fn check_device(opts: &Options) -> Result<(), RunnerError> {
    match (&opts.place, &opts.plan.device) {
        (Where::Provision { .. }, Some(dev)) => {
            crate::provision::safety::check_device(std::path::Path::new(dev), opts.plan.wipe)
                .map_err(|e| RunnerError::Invalid(e.to_string()))
        }
        _ => Ok(()),
    }
}

/// With several ranks, `compare` runs on a directory every rank sees (`dir:`): a target that
/// formats or mounts something would be provisioned by every rank on its own.
fn check_ranks(opts: &Options, many: bool) -> Result<(), SpecError> {
    if !many {
        return Ok(());
    }
    // (`run`'s one target is where the job file says: nothing is provisioned.)
    let provisions = matches!(opts.place, Where::Provision { .. });
    if let Some(t) = opts
        .plan
        .targets
        .iter()
        .find(|t| provisions && t.fs != "dir")
    {
        return Err(SpecError(format!(
            "target '{}' formats or mounts a filesystem: under mpirun every rank would provision its own. Run multi-rank studies on a directory every rank sees: dir:/shared/path (NFS, Lustre, CephFS, BeeGFS, or a local directory for ranks on one node)",
            t.label
        )));
    }
    if provisions && opts.plan.device.is_some() {
        return Err(SpecError(
            "--device formats a device: under mpirun use dir:/shared/path targets".into(),
        ));
    }
    crate::workload::check_ranks(&opts.plan.workloads)
}

/// Every rank agrees on the plan; rank 0's run id and seed become everyone's.
fn agree(opts: &Options, team: &dyn Team, manifest: &mut Manifest) -> Result<RankCtx, RunnerError> {
    let rank = team.rank();
    let seed = crate::plan::fio::values::fresh_seed();
    let mut ctx = RankCtx {
        rank,
        seed,
        plan: opts.plan.ranks,
    };
    if !rank.many() {
        return Ok(ctx);
    }
    let plan = serde_json::to_string(&opts.plan).unwrap_or_default();
    let args: Vec<String> = opts.command_line.iter().skip(1).cloned().collect();
    let digest = crate::ranks::digest(&plan, &args);
    let offer = serde_json::to_string(&(&manifest.run_id, seed)).unwrap_or_default();
    let agreed = team
        .agree(&digest, &offer)
        .map_err(|e| RunnerError::Invalid(e.to_string()))?;
    let (run_id, seed): (String, u64) = serde_json::from_str(&agreed)
        .map_err(|e| RunnerError::Invalid(format!("rank 0's run id does not read: {e}")))?;
    manifest.run_id = run_id;
    ctx.seed = seed;
    manifest.warnings.push(format!(
        "{} ranks (mpirun): rank 0 on {} owns this study; records carry every rank's figures in `ranks`",
        rank.size,
        team.host()
    ));
    Ok(ctx)
}

/// In `compare`, every workload must be able to run on every target as planned (sizes, options)
/// before the first target is provisioned.
fn check_targets(
    opts: &Options,
    workloads: &[(String, Box<dyn Workload>)],
) -> Result<(), SpecError> {
    if !matches!(opts.place, Where::Provision { .. }) {
        return Ok(());
    }
    for t in &opts.plan.targets {
        if let Some(why) = crate::provision::faultdev::refuse(t, opts.plan.device.is_some(), false)
        {
            return Err(SpecError(why));
        }
        crate::provision::safety::check_named_devices(t).map_err(SpecError)?;
        if let Some(p) = t
            .path
            .as_deref()
            .filter(|p| !std::path::Path::new(p).is_dir())
        {
            return Err(SpecError(format!(
                "target '{}': {p} is not an existing directory; mount it first, or name another",
                t.label
            )));
        }
        let size = match t.fs.as_str() {
            "dir" => None,
            _ => Some(t.size.unwrap_or(opts.plan.size_bytes)),
        };
        for (_, w) in workloads {
            w.check_target(t, size)?;
        }
    }
    Ok(())
}

/// The name a workload's records carry: its name, or the spec as written when the plan runs the
/// same workload twice (`aging` and `aging:snapshots=3/s`), so their records stay apart.
fn record_name(w: &crate::plan::WorkloadSpec, all: &[crate::plan::WorkloadSpec]) -> String {
    if all.iter().filter(|o| o.name == w.name).count() > 1 {
        w.spec.clone()
    } else {
        w.name.clone()
    }
}

pub fn run(opts: &Options, team: &dyn Team) -> Result<Summary, RunnerError> {
    let rank = team.rank();
    let sys = Sys::new(opts.dry_run);
    let workloads: Vec<(String, Box<dyn Workload>)> = opts
        .plan
        .workloads
        .iter()
        .map(|w| {
            workload::build(w, &opts.plan.overrides)
                .map(|b| (record_name(w, &opts.plan.workloads), b))
        })
        .collect::<Result<_, _>>()?;
    check_ranks(opts, rank.many())?;
    let mut manifest = Manifest::new(
        opts.plan.clone(),
        opts.command_line.clone(),
        crate::sys::host::Environment::probe(),
    );
    let ranks = agree(opts, team, &mut manifest)?;
    check_here(opts, &workloads, ranks)?;
    check_targets(opts, &workloads)?;
    check_device(opts)?;
    let mut sink = if rank.leads() {
        open_study(opts, &mut manifest)?
    } else {
        Sink {
            study: None,
            records: Vec::new(),
        }
    };
    let run_id = manifest.run_id.clone();
    let targets = targets_of(opts);
    let getter = Getter {
        sys: &sys,
        run_id: &run_id,
        plan: &opts.plan,
        place: &opts.place,
        quiet: opts.quiet || !rank.leads(),
        ranks,
    };
    let mut ended = Ended::Complete;
    'repeats: for repeat in 0..opts.plan.repeat {
        // Interleave: each repeat starts one target later, so drift of the machine over the
        // study does not always fall on the same filesystem.
        let n = targets.len();
        for index in (0..n).map(|i| (i + repeat as usize) % n) {
            let spec = &targets[index];
            if manifest.completed.contains(&(spec.label.clone(), repeat)) {
                continue;
            }
            if let Some(why) = crate::stop::requested() {
                ended = Ended::Interrupted(why);
                break 'repeats;
            }
            let got = if rank.many() && matches!(opts.place, Where::Provision { .. }) {
                match getter.get_shared(team, spec, index, repeat) {
                    Ok(g) => g,
                    Err(e) => {
                        ended = lost(&mut manifest, e);
                        break 'repeats;
                    }
                }
            } else {
                getter.get(spec, index, repeat)
            };
            let got = match got {
                Ok(g) => g,
                Err(m) => {
                    if let Some(why) = &m.unsupported {
                        manifest.completed.push((spec.label.clone(), repeat));
                        manifest
                            .warnings
                            .push(format!("{} skipped: {why}", spec.label));
                    }
                    sink.save(m.record)?;
                    if let Some(why) = m.refused {
                        ended = Ended::Refused(why);
                        break 'repeats;
                    }
                    continue;
                }
            };
            manifest.warnings.extend(options_not_in_effect(&got));
            let failed = match opts.dry_run {
                true => None,
                false => measure(&got, opts, &workloads, repeat, &mut sink, team)?,
            };
            let (info, warning) = release(got, &sys);
            manifest.targets.extend(info);
            manifest.warnings.extend(warning);
            if let Some(e) = failed {
                ended = lost(&mut manifest, e);
                break 'repeats;
            }
            if !crate::stop::stop_requested() {
                manifest.completed.push((spec.label.clone(), repeat));
            }
            if let Some(s) = &sink.study {
                s.save_manifest(&manifest)?;
            }
        }
    }
    let ended = finish_manifest(&mut manifest, ended);
    // (Ranks other than 0 keep no study.)
    if let Some(s) = &sink.study {
        s.save_manifest(&manifest)?;
    }
    Ok(Summary {
        records: sink.records,
        ended,
        study: sink.study,
    })
}

/// The warning for mount options or properties the kernel or ZFS did not keep.
fn options_not_in_effect(got: &Got) -> Option<String> {
    let m = got.mounted.as_ref()?;
    (!m.info.options_not_in_effect.is_empty()).then(|| {
        format!(
            "{}: requested options not in effect after mounting: {}",
            got.label,
            m.info.options_not_in_effect.join(", ")
        )
    })
}

/// How the study ended, in the manifest: status, end time, the signal that stopped it.
fn finish_manifest(manifest: &mut Manifest, mut ended: Ended) -> Ended {
    if let (Some(why), false) = (crate::stop::requested(), matches!(ended, Ended::Ranks(_))) {
        ended = Ended::Interrupted(why);
    }
    manifest.finished_at = Some(now_rfc3339());
    manifest.status = match &ended {
        Ended::Complete => Status::Complete,
        Ended::Interrupted(_) => Status::Interrupted,
        Ended::Refused(_) => Status::Refused,
        Ended::Ranks(_) => Status::Failed,
    };
    if let Some(why) = crate::stop::requested() {
        manifest.stopped_by = Some(why.to_string());
    }
    ended
}

/// Every workload on a target that is ready; with several ranks, a barrier after them (rank 0
/// tears down once every rank is done with the target). Returns the error that ends a
/// multi-rank run.
fn measure(
    got: &Got,
    opts: &Options,
    workloads: &[(String, Box<dyn Workload>)],
    repeat: u32,
    sink: &mut Sink,
    team: &dyn Team,
) -> Result<Option<RunError>, StoreError> {
    let shown = if opts.plan.repeat > 1 {
        format!("{}, repeat {}/{}", got.label, repeat + 1, opts.plan.repeat)
    } else {
        got.label.clone()
    };
    let mut failed = run_workloads(got, &shown, workloads, repeat, sink, team)?;
    if failed.is_none() && team.rank().many() {
        failed = team
            .barrier(&format!("the teardown of {}", got.label))
            .err();
    }
    Ok(failed)
}

/// A multi-rank run lost a rank: the manifest says which, at which phase; the target is not
/// complete, so `compare --resume` runs it again.
fn lost(manifest: &mut Manifest, e: RunError) -> Ended {
    let msg = e.to_string();
    eprintln!("fsbench: error: {msg}");
    manifest.rank_failure = Some(msg.clone());
    manifest
        .warnings
        .push(format!("the run lost a rank: {msg}"));
    Ended::Ranks(msg)
}

/// Every workload on one target, each phase through the frame; a workload that fails is one
/// failed record and the next workload runs. Returns the error that ends a multi-rank run (a
/// rank lost).
fn run_workloads(
    got: &Got,
    shown: &str,
    workloads: &[(String, Box<dyn Workload>)],
    repeat: u32,
    sink: &mut Sink,
    team: &dyn Team,
) -> Result<Option<RunError>, StoreError> {
    for (wname, w) in workloads {
        if crate::stop::stop_requested() {
            break;
        }
        let key = RecordKey {
            target: &got.label,
            fs: &got.fs,
            workload: wname,
            repeat,
        };
        let result = match w.open(&got.ctx) {
            Ok(Opened::Skip { test, reason }) => {
                let p = crate::frame::Phase {
                    test,
                    skipped: Some(reason),
                    ..Default::default()
                };
                sink.save(Record::from_phase(&key, p))?;
                continue;
            }
            Ok(Opened::Run(mut s)) => {
                run_session(s.as_mut(), &got.ctx, shown, team.cluster(), &mut |p| {
                    sink.save(Record::from_phase(&key, p))
                        .map_err(RunError::from)
                })
            }
            Err(e) => Err(e),
        };
        match result {
            Ok(_) | Err(RunError::Stopped(_)) => {}
            Err(RunError::Store(e)) => return Err(e),
            Err(e @ RunError::Ranks(_)) => return Ok(Some(e)),
            Err(e) => {
                let mut failure = match &e {
                    RunError::Io { context, source } => {
                        Some(crate::io::Failure::io(context, source))
                    }
                    _ => None,
                };
                if let (Some(f), Some(d)) = (&mut failure, got.ctx.stat_dir.as_deref()) {
                    if let Ok(st) = crate::sys::statvfs(d) {
                        f.add_space(&st);
                    }
                }
                let p = crate::frame::Phase {
                    test: "run".into(),
                    error: Some(e.to_string()),
                    failure,
                    ..Default::default()
                };
                eprintln!("fsbench: [{}] {wname} failed: {e}", got.label);
                sink.save(Record::from_phase(&key, p))?;
            }
        }
    }
    Ok(None)
}

#[cfg(test)]
mod torn_tests {
    use super::undo_torn;

    #[test]
    fn a_torn_record_takes_its_run_out_of_the_completed_list() {
        let done = || {
            vec![
                ("ext4".to_string(), 0),
                ("xfs".to_string(), 0),
                ("ext4".to_string(), 1),
            ]
        };
        let mut c = done();
        let note = undo_torn(
            &mut c,
            r#"{"schema":1,"target":"xfs","fs":"xfs","workload":"w","test":"t","repeat":0,"#,
        );
        assert_eq!(c, vec![("ext4".to_string(), 0), ("ext4".to_string(), 1)]);
        assert!(
            note.contains("target xfs (repeat 1) is measured again"),
            "{note}"
        );
        // Only the target: its last completed run.
        let mut c = done();
        undo_torn(&mut c, r#"{"schema":1,"target":"ext4","fs"#);
        assert_eq!(c, vec![("ext4".to_string(), 0), ("xfs".to_string(), 0)]);
        // Nothing readable: the last completed run of all.
        let mut c = done();
        undo_torn(&mut c, "{\"sch");
        assert_eq!(c.len(), 2);
    }
}
