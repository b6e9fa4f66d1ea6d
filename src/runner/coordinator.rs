//! The loop: every repeat, every target in a rotating order, every workload on it.

use super::preflight::agree;
use super::study::{finish_manifest, open_study, Sink};
use super::targets::{release, released_everywhere, Getter, Got};
use super::{Ended, Named, Options, RunnerError, Summary, Where};
use crate::frame::{run_session, RunError};
use crate::plan::{OnInterference, TargetSpec};
use crate::provision::exec::Sys;
use crate::ranks::Team;
use crate::store::note;
use crate::store::{Manifest, Record, RecordKey, StoreError};
use crate::workload::{self, Opened};

/// The target list: the plan's, or the one "here" target of `run`.
fn targets_of(opts: &Options) -> Vec<TargetSpec> {
    match &opts.place {
        Where::Provision { .. } => opts.resolved.plan.targets.clone(),
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

/// The loop over a resolved plan (`resolve` built its workloads and checked it: nothing here
/// refuses the plan, except the ranks' agreement on it).
pub fn run(opts: &Options, team: &dyn Team) -> Result<Summary, RunnerError> {
    let rank = team.rank();
    let sys = Sys::new(opts.dry_run);
    let plan = &opts.resolved.plan;
    // On-CPU profiles sample the timer tick's tracepoint: tracefs for the run where it is
    // absent (unmounted when the run ends).
    let _tracefs = plan
        .overrides
        .profile
        .filter(|p| p.on_cpu())
        .and_then(|_| {
            crate::provision::tracefs::for_profiles(&sys)
                .map_err(|e| {
                    crate::out::eline!(
                        "fsbench: warning: cannot mount tracefs for the timer tick ({e}): profiles sample cpu-clock"
                    )
                })
                .ok()
                .flatten()
        });
    let workloads = &opts.resolved.workloads;
    let mut manifest = Manifest::new(
        plan.clone(),
        opts.command_line.clone(),
        crate::sys::host::Environment::probe(),
    );
    let ranks = agree(opts, team, &mut manifest)?;
    let sink = if rank.leads() {
        open_study(opts, &mut manifest)?
    } else {
        Sink {
            study: None,
            records: Vec::new(),
            observer: None,
        }
    };
    team.last_word(last_word(sink.study.as_ref(), &sys));
    let run_id = manifest.run_id.clone();
    let targets = targets_of(opts);
    let mut l = Loop {
        opts,
        team,
        sys: &sys,
        workloads,
        getter: Getter {
            sys: &sys,
            run_id: &run_id,
            plan,
            place: &opts.place,
            quiet: opts.quiet || !rank.leads(),
            ranks,
        },
        manifest,
        sink,
    };
    let mut ended = Ended::Complete;
    'repeats: for repeat in 0..plan.repeat {
        // Interleave: each repeat starts one target later, so drift of the machine over the
        // study does not always fall on the same filesystem.
        let n = targets.len();
        for index in (0..n).map(|i| (i + repeat as usize) % n) {
            let spec = &targets[index];
            if l.manifest.completed.contains(&(spec.label.clone(), repeat)) {
                continue;
            }
            if let Some(s) = &opts.select {
                if s.repeat != repeat || !s.labels.contains(&spec.label) {
                    continue;
                }
            }
            if let Some(why) = crate::stop::requested() {
                ended = Ended::Interrupted(why);
                break 'repeats;
            }
            if let Some(e) = l.target_once_more(spec, index, repeat)? {
                ended = e;
                break 'repeats;
            }
            if !crate::stop::stop_requested() {
                l.manifest.completed.push((spec.label.clone(), repeat));
            }
            if let Some(s) = &l.sink.study {
                s.save_manifest(&l.manifest)?;
            }
        }
    }
    let Loop {
        mut manifest, sink, ..
    } = l;
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

/// What the loop carries from one target to the next.
struct Loop<'a> {
    opts: &'a Options,
    team: &'a dyn Team,
    sys: &'a Sys,
    workloads: &'a [Named],
    getter: Getter<'a>,
    manifest: Manifest,
    sink: Sink,
}

impl Loop<'_> {
    /// Every workload on one (target, repeat), and, when the plan retries disturbed repeats and
    /// this one was (a record's interference note), once more on a fresh target: the first
    /// attempt's records go to results.partial.jsonl, and the manifest says why.
    fn target_once_more(
        &mut self,
        spec: &TargetSpec,
        index: usize,
        repeat: u32,
    ) -> Result<Option<Ended>, RunnerError> {
        let before = self.sink.records.len();
        let ended = self.target(spec, index, repeat)?;
        if ended.is_some()
            || crate::stop::stop_requested()
            || self.opts.resolved.plan.on_interference != OnInterference::RetryOnce
        {
            return Ok(ended);
        }
        let Some(why) = self.sink.records[before..]
            .iter()
            .find_map(|r| note::find(&r.notes, note::Kind::Interference))
            .map(str::to_string)
        else {
            return Ok(None);
        };
        let moved = self.sink.set_aside(&spec.label, repeat)?;
        let said = format!(
            "{} (repeat {}) was disturbed by other processes ({why}): measured again; its {moved} first records are in results.partial.jsonl",
            spec.label,
            repeat + 1
        );
        if !self.opts.quiet {
            crate::out::eline!("fsbench: [{}] {said}", spec.label);
        }
        self.manifest.warnings.push(said);
        self.target(spec, index, repeat)
    }

    /// Every workload on one (target, repeat): those that take the plan's target on it, then
    /// each workload that needs a target of its own on one provisioned afresh for it. Returns how
    /// the study ends when it must end here.
    fn target(
        &mut self,
        spec: &TargetSpec,
        index: usize,
        repeat: u32,
    ) -> Result<Option<Ended>, RunnerError> {
        let mut same: Vec<&Named> = Vec::new();
        let mut own: Vec<(&Named, TargetSpec, String)> = Vec::new();
        for w in self.workloads {
            match w.1.variant(spec) {
                workload::Variant::Same => same.push(w),
                workload::Variant::Own { spec: v, test } => own.push((w, v, test)),
                workload::Variant::Skip { test, reason } => {
                    let key = key_of(spec, &w.0, repeat);
                    let p = crate::frame::Phase {
                        test,
                        skipped: Some(reason),
                        ..Default::default()
                    };
                    self.sink.save(Record::from_phase(&key, p))?;
                }
            }
        }
        if !same.is_empty() {
            if let Some(e) = self.on(spec, spec, index, repeat, &same, None)? {
                return Ok(Some(e));
            }
        }
        for (w, variant, test) in own {
            if crate::stop::stop_requested() {
                break;
            }
            let named = Some((w.0.as_str(), test.as_str()));
            if let Some(e) = self.on(spec, &variant, index, repeat, &[w], named)? {
                return Ok(Some(e));
            }
        }
        Ok(None)
    }

    /// Provisions `target` (the plan's `spec`, or a workload's own variant of it: `own` names
    /// the workload and test its provisioning records carry), runs `workloads` on it, tears it
    /// down.
    fn on(
        &mut self,
        spec: &TargetSpec,
        target: &TargetSpec,
        index: usize,
        repeat: u32,
        workloads: &[&Named],
        own: Option<(&str, &str)>,
    ) -> Result<Option<Ended>, RunnerError> {
        let ranked = self.team.rank().many() && matches!(self.opts.place, Where::Provision { .. });
        let got = if ranked {
            match self.getter.get_ranked(self.team, target, index, repeat) {
                Ok(g) => g,
                Err(e) => return Ok(Some(lost(&mut self.manifest, e))),
            }
        } else {
            self.getter.get(target, index, repeat)
        };
        let got = match got {
            Ok(g) => g,
            Err(m) => {
                let mut record = m.record;
                if let Some((w, test)) = own {
                    (record.workload, record.test) = (w.to_string(), test.to_string());
                }
                if let Some(why) = &m.unsupported {
                    if own.is_none() {
                        self.manifest.completed.push((spec.label.clone(), repeat));
                    }
                    self.manifest
                        .warnings
                        .push(format!("{} skipped: {why}", spec.label));
                }
                self.sink.save(record)?;
                return Ok(m.refused.map(Ended::Refused));
            }
        };
        self.manifest.warnings.extend(options_not_in_effect(&got));
        let failed = match self.opts.dry_run {
            true => None,
            false => measure(
                &got,
                self.opts,
                workloads,
                repeat,
                &mut self.sink,
                self.team,
            )?,
        };
        let label = got.label.clone();
        let (info, warning) = release(got, self.sys);
        if let Some(e) = failed {
            self.manifest.targets.extend(info);
            self.manifest.warnings.extend(warning);
            return Ok(Some(lost(&mut self.manifest, e)));
        }
        // Every node's target and teardown, in rank 0's manifest.
        let (infos, warnings) = match ranked {
            true => match released_everywhere(self.team, &label, info, warning) {
                Ok(all) => all,
                Err(e) => return Ok(Some(lost(&mut self.manifest, e))),
            },
            false => (info.into_iter().collect(), warning.into_iter().collect()),
        };
        self.manifest.targets.extend(infos);
        self.manifest.warnings.extend(warnings);
        Ok(None)
    }
}

fn key_of<'a>(spec: &'a TargetSpec, workload: &'a str, repeat: u32) -> RecordKey<'a> {
    RecordKey {
        target: &spec.label,
        fs: &spec.fs,
        workload,
        repeat,
    }
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

/// Every workload on a target that is ready; with several ranks, a barrier after them (rank 0
/// tears down once every rank is done with the target). Returns the error that ends a
/// multi-rank run.
fn measure(
    got: &Got,
    opts: &Options,
    workloads: &[&Named],
    repeat: u32,
    sink: &mut Sink,
    team: &dyn Team,
) -> Result<Option<RunError>, StoreError> {
    let repeats = opts.resolved.plan.repeat;
    let shown = if repeats > 1 {
        format!("{}, repeat {}/{}", got.label, repeat + 1, repeats)
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
    crate::out::eline!("fsbench: error: {msg}");
    record_lost(manifest, &msg)
}

fn record_lost(manifest: &mut Manifest, msg: &str) -> Ended {
    manifest.rank_failure = Some(msg.to_string());
    manifest
        .warnings
        .push(format!("the run lost a rank: {msg}"));
    Ended::Ranks(msg.to_string())
}

/// What a rank does when it must end in the middle of a phase (`Team::last_word`): every rank
/// tears down what it made (its state files), as `fsbench cleanup` would after it; then rank 0
/// records the lost rank in the manifest as `lost` does and ends it failed.
fn last_word(study: Option<&crate::store::Study>, sys: &Sys) -> crate::ranks::LastWord {
    let keeper = study.and_then(|s| s.manifest_keeper().ok());
    let sys = sys.clone();
    Box::new(move |msg| {
        // The teardown first: the manifest's word is what a waiting launcher or person acts on.
        for said in crate::provision::cleanup::release_own(&sys) {
            crate::out::eline!("fsbench: {said}");
        }
        if let Some(k) = &keeper {
            let saved = k.update(|m| {
                let ended = record_lost(m, msg);
                finish_manifest(m, ended);
            });
            if let Err(e) = saved {
                crate::out::eline!("fsbench: error: the manifest does not say so: {e}");
            }
        }
    })
}

/// Every workload on one target, each phase through the frame; a workload that fails is one
/// failed record and the next workload runs. Returns the error that ends a multi-rank run (a
/// rank lost).
fn run_workloads(
    got: &Got,
    shown: &str,
    workloads: &[&Named],
    repeat: u32,
    sink: &mut Sink,
    team: &dyn Team,
) -> Result<Option<RunError>, StoreError> {
    for (wname, w) in workloads.iter().map(|n| (&n.0, &n.1)) {
        if crate::stop::stop_requested() {
            break;
        }
        let key = RecordKey {
            target: &got.label,
            fs: &got.fs,
            workload: wname,
            repeat,
        };
        let _live = crate::frame::observe::workload(&got.label, repeat, wname);
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
                // What a workload derives from its records needs their figures, not their
                // histograms.
                let mut seen = Vec::new();
                let ran = run_session(s.as_mut(), &got.ctx, shown, team.cluster(), &mut |p| {
                    seen.push(crate::frame::Phase {
                        test: p.test.clone(),
                        duration_s: p.duration_s,
                        error: p.error.clone(),
                        metrics: p.metrics.clone(),
                        ..Default::default()
                    });
                    sink.save(Record::from_phase(&key, p))
                        .map_err(RunError::from)
                });
                if ran.is_ok() {
                    for p in w.derive(&seen) {
                        sink.save(Record::from_phase(&key, p))?;
                    }
                }
                ran
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
                crate::out::eline!("fsbench: [{}] {wname} failed: {e}", got.label);
                sink.save(Record::from_phase(&key, p))?;
            }
        }
    }
    Ok(None)
}
