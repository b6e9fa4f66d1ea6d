//! `fsbench report DIR...`: a study's report (several studies merged), in any of the report
//! formats. Needs no root.

use std::path::Path;

use anyhow::Context;

use super::Exit;
use crate::cli::ReportArgs;
use crate::report::{formats, merge, Given, StudyReport};

/// A study directory's name for merged labels: its last component.
fn name_of(dir: &Path) -> String {
    dir.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| dir.display().to_string())
}

/// `--import fio.json --label NAME`: the fio result's jobs appended to the first study as records
/// of target NAME.
fn import(a: &ReportArgs) -> anyhow::Result<()> {
    let (Some(file), Some(label)) = (&a.import, &a.label) else {
        return Ok(());
    };
    let text = std::fs::read_to_string(file)
        .with_context(|| format!("--import {}: cannot read it", file.display()))?;
    let records = crate::report::fiojson::import(&text, label)
        .map_err(|e| anyhow::anyhow!("--import {}: {e}", file.display()))?;
    let dir = &a.dirs[0];
    let existing = crate::store::load_results(dir).unwrap_or_default();
    if existing.iter().any(|r| &r.target == label) {
        anyhow::bail!(
            "--label {label}: {} already has a target of that name: choose another label",
            dir.display()
        );
    }
    let mut study = crate::store::Study::open_or_create(dir)?;
    records.iter().try_for_each(|r| study.append(r))?;
    crate::out::eline!(
        "fsbench: imported {} job(s) from {} into {} as target '{label}'",
        records.len(),
        file.display(),
        dir.display()
    );
    Ok(())
}

pub fn run(a: ReportArgs) -> anyhow::Result<Exit> {
    import(&a)?;
    let mut studies = Vec::new();
    let mut given: Vec<Given> = Vec::new();
    // One study's own baseline (its plan's) unless --baseline names another, so the report
    // re-rendered says what the study said when it ended.
    let mut planned: Option<String> = None;
    for dir in &a.dirs {
        let (mut records, torn) = crate::store::load_results_torn(dir).with_context(|| {
            format!("{}: give the directory of a study (what `fsbench compare --out DIR` or `fsbench run --out DIR` wrote)", dir.display())
        })?;
        let manifest = crate::store::read_manifest(dir).ok();
        given.push(Given::of(manifest.as_ref().map(|m| &m.plan)));
        if a.dirs.len() == 1 {
            planned = manifest.as_ref().and_then(|m| m.plan.baseline.clone());
        }
        let mut warnings = manifest.map(|m| m.warnings).unwrap_or_default();
        warnings.extend(crate::store::attach_profiles(dir, &mut records));
        if let crate::store::LockState::Held(pid) = crate::store::lock_state(dir) {
            let by = pid.map(|p| format!(" (pid {p})")).unwrap_or_default();
            crate::out::eline!(
                "fsbench: {} is in progress: another fsbench{by} is still writing it; this report shows the records so far",
                dir.display()
            );
            warnings.push(format!(
                "the study was in progress when this report was made{by}: it shows the records so far"
            ));
        }
        if let Some(t) = torn {
            warnings.push(format!(
                "results.jsonl ends with a torn record ({} bytes, a crash while it was written): it is not in this report; `fsbench compare --resume {}` moves it to results.partial.jsonl and measures that run again",
                t.len(),
                dir.display()
            ));
        }
        studies.push(merge::Study {
            name: name_of(dir),
            records,
            warnings,
        });
    }
    let (records, manifest_warnings) = merge::merge(studies);
    // One study's plan says what its report adds (claims, a tune); merged studies are compared
    // as targets, so only the claims of a study file carry over (a tune's race does not).
    let given = if given.len() == 1 {
        given.pop().unwrap_or_default()
    } else {
        Given {
            study: given.into_iter().find_map(|g| g.study),
            ..Given::default()
        }
    };
    let baseline = a.baseline.as_deref().or(planned
        .as_deref()
        .filter(|b| records.iter().any(|r| r.target == *b)));
    let mut rep = StudyReport::build(records, baseline, &manifest_warnings)
        .map_err(anyhow::Error::msg)?
        .with(given);
    rep.color = a.format == "term" && super::stdout_wants_color();
    rep.full = a.full;
    rep.screen = super::screen(1);
    let f = formats::find(&a.format).with_context(|| format!("unknown format '{}'", a.format))?;
    let shown: Vec<String> = a.dirs.iter().map(|d| d.display().to_string()).collect();
    crate::out::print(&f.render(&rep, &format!("fsbench study {}", shown.join(" + "))));
    Ok(Exit::Ok)
}
