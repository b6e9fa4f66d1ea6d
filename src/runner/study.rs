//! The study a run writes: opened new or resumed (the records of unfinished runs set aside, a
//! torn last record kept), every record appended the moment it exists, and how it ended.

use super::{Ended, Options, RunnerError};
use crate::metrics::clock::now_rfc3339;
use crate::store::{Manifest, Observer, Record, Status, StoreError, Study};
use std::sync::Arc;

pub struct Sink {
    pub study: Option<Study>,
    pub records: Vec<Record>,
    pub observer: Option<Arc<dyn Observer>>,
}

impl Sink {
    pub fn save(&mut self, mut rec: Record) -> Result<(), StoreError> {
        if let Some(p) = rec.profile.as_mut() {
            let earlier = &self.records;
            p.avoid(|f| {
                earlier
                    .iter()
                    .filter_map(|r| r.profile.as_ref())
                    .any(|q| q.files().any(|g| g == f))
            });
        }
        if let Some(s) = self.study.as_mut() {
            s.append(&rec)?;
            if let Some(o) = &self.observer {
                o.record(&s.dir, &rec);
            }
        }
        self.records.push(rec);
        Ok(())
    }

    /// Moves the records of `label`'s `repeat` out of results.jsonl into results.partial.jsonl
    /// (a disturbed repeat measured again); returns how many.
    pub fn set_aside(&mut self, label: &str, repeat: u32) -> Result<usize, StoreError> {
        let (moved, keep): (Vec<Record>, Vec<Record>) = std::mem::take(&mut self.records)
            .into_iter()
            .partition(|r| r.target == label && r.repeat == repeat);
        if let Some(s) = self.study.as_mut() {
            s.set_aside(&keep, &moved, None)?;
        }
        self.records = keep;
        Ok(moved.len())
    }
}

/// Opens the study: new, resumed (records of unfinished targets set aside), or none (dry run).
pub(super) fn open_study(opts: &Options, manifest: &mut Manifest) -> Result<Sink, RunnerError> {
    if opts.dry_run {
        return Ok(Sink {
            study: None,
            records: Vec::new(),
            observer: None,
        });
    }
    if !opts.resume {
        let study = Study::create(&opts.out, manifest)?;
        // The plan as a study file that runs it again (`fsbench study DIR/study.toml`).
        if !opts.resolved.plan.targets.is_empty() {
            let text =
                crate::plan::study::to_toml(&crate::plan::study::from_plan(&opts.resolved.plan));
            study.write_file("study.toml", text.as_bytes())?;
        }
        return Ok(Sink {
            study: Some(study),
            records: Vec::new(),
            observer: opts.observer.clone(),
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
    // (A tune's next round continues the study: no warning unless something was set aside.)
    if opts.select.is_none() || !moved.is_empty() {
        manifest.warnings.push(format!(
        "resumed at {}: {} target runs were complete; {} records of unfinished ones moved to results.partial.jsonl",
        now_rfc3339(),
        manifest.completed.len(),
        moved.len()
    ));
    }
    manifest.warnings.extend(torn_note);
    s.save_manifest(manifest)?;
    Ok(Sink {
        study: Some(s),
        records: keep,
        observer: opts.observer.clone(),
    })
}

/// What a resume of the study in `dir` would do, read without opening it for writing
/// (`study --resume DIR --check`): the (target, repeat) runs complete, those it would run in the
/// coordinator's order, and how many records of unfinished runs it would set aside.
#[derive(Debug, Default, PartialEq)]
pub struct Pending {
    pub done: usize,
    pub to_run: Vec<(String, u32)>,
    pub set_aside: usize,
    pub torn: bool,
}

pub fn pending(dir: &std::path::Path, plan: &crate::plan::Plan) -> Result<Pending, RunnerError> {
    let mut completed = crate::store::read_manifest(dir)?.completed;
    let (earlier, torn) = crate::store::load_results_torn(dir)?;
    if let Some(t) = &torn {
        undo_torn(&mut completed, t);
    }
    let n = plan.targets.len();
    let mut to_run = Vec::new();
    for repeat in 0..plan.repeat {
        for index in (0..n).map(|i| (i + repeat as usize) % n.max(1)) {
            let key = (plan.targets[index].label.clone(), repeat);
            if !completed.contains(&key) {
                to_run.push(key);
            }
        }
    }
    Ok(Pending {
        done: completed.len(),
        set_aside: earlier
            .iter()
            .filter(|r| !completed.contains(&(r.target.clone(), r.repeat)))
            .count(),
        to_run,
        torn: torn.is_some(),
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

/// How the study ended, in the manifest: status, end time, the signal that stopped it.
pub(super) fn finish_manifest(manifest: &mut Manifest, mut ended: Ended) -> Ended {
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
