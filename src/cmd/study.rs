//! `fsbench study FILE|NAME`: a study written down, run with compare's machinery, its published
//! findings checked in the report. `--list` names the shipped studies; `--check` prints the
//! resolved plan and runs nothing.

use std::path::Path;

use super::Exit;
use crate::cli::{Backing, BlockArgs, StudyArgs};
use crate::plan::study::{self, Parsed, StudyFile, StudyMeta};
use crate::plan::Plan;

/// The study's text and the name it goes by: a file, or a shipped study.
fn load(arg: &str) -> anyhow::Result<(String, String)> {
    let path = Path::new(arg);
    if path.exists() {
        let text = std::fs::read_to_string(path).map_err(|e| {
            anyhow::anyhow!(
                "{arg}: cannot read it ({e}); give a study file or a shipped study's name"
            )
        })?;
        return Ok((text, arg.to_string()));
    }
    if let Some(text) = study::shipped(arg) {
        return Ok((text.to_string(), arg.to_string()));
    }
    let names: Vec<&str> = study::SHIPPED.iter().map(|(n, _)| *n).collect();
    anyhow::bail!(
        "{arg}: no such study file, and no shipped study of that name: the shipped studies are {} (fsbench study --list)",
        names.join(", ")
    )
}

/// The plan a study file stands for, as `compare` with the same flags would make it.
fn plan_of(p: &Parsed, name: &str) -> anyhow::Result<Plan> {
    let (f, v) = (&p.file, &p.values);
    let backing = Backing {
        size: v.size,
        device: None,
        wipe: false,
    };
    let block = BlockArgs {
        runtime: v.runtime,
        file_size: v.file_size,
        seed: f.seed,
        interval: v.interval,
        until_steady: v.until_steady,
        profile: None,
    };
    let plan = crate::cli::build_plan(
        &f.targets,
        &f.workloads,
        &backing,
        v.repeat,
        &block,
        f.baseline.as_deref(),
    )
    .map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
    check_claims(f, &plan, name)?;
    Ok(Plan {
        study: Some(StudyMeta {
            name: name.to_string(),
            title: f.title.clone(),
            source: f.source.clone(),
            notes: f.notes.clone(),
            scale: p.scale.clone(),
            claims: f.claims.clone(),
        }),
        ..plan
    })
}

/// Every claim names a target of the plan, a workload it runs and a metric some workload emits.
fn check_claims(f: &StudyFile, plan: &Plan, name: &str) -> anyhow::Result<()> {
    let labels: Vec<&str> = plan.targets.iter().map(|t| t.label.as_str()).collect();
    for (i, c) in f.claims.iter().enumerate() {
        let at = format!("{name}: claim {}", i + 1);
        for t in std::iter::once(&c.target).chain(c.vs.as_ref()) {
            if !labels.contains(&t.as_str()) {
                anyhow::bail!(
                    "{at}: target '{t}' is not a target of the study: its labels are {}",
                    labels.join(", ")
                );
            }
        }
        if let Some(w) = &c.workload {
            if !plan.workloads.iter().any(|x| &x.name == w) {
                anyhow::bail!("{at}: workload '{w}' is not one the study runs");
            }
        }
        let known = crate::workload::catalog::all()
            .iter()
            .any(|e| crate::metrics::catalog::matches(e.def.name, &c.metric));
        if !known {
            anyhow::bail!(
                "{at}: no workload emits a metric '{}' (fsbench list --json names every metric)",
                c.metric
            );
        }
    }
    Ok(())
}

/// `--list`: the shipped studies.
fn list() -> anyhow::Result<Exit> {
    let mut out = String::new();
    for (name, text) in study::SHIPPED {
        let f = study::parse(text, name, None, &[])?.file;
        out.push_str(&format!(
            "{name}\n  {}\n  {}\n",
            f.title.unwrap_or_default(),
            f.source.unwrap_or_default()
        ));
    }
    out.push_str("\nRun one: fsbench study NAME (--check prints its plan; --scale full for the published sizes)\n");
    crate::out::print(&out);
    Ok(Exit::Ok)
}

/// `--check`: the plan as it will run.
fn describe(r: &crate::runner::Resolved) -> String {
    let plan = &r.plan;
    let mut s = String::new();
    let meta = plan.study.clone().unwrap_or_default();
    s.push_str(&format!(
        "study: {}\n",
        meta.title.as_deref().unwrap_or(&meta.name)
    ));
    if let Some(src) = &meta.source {
        s.push_str(&format!("source: {src}\n"));
    }
    s.push_str(&format!(
        "scale: {}   repeat: {}   size: {}   runtime: {}   file_size: {}   baseline: {}\n",
        meta.scale.as_deref().unwrap_or("as written"),
        plan.repeat,
        crate::plan::units::format_bytes(plan.size_bytes),
        plan.overrides
            .runtime
            .map_or("each job's own".into(), |d| format!("{d:?}")),
        plan.overrides
            .file_size
            .map_or("each job's own".into(), crate::plan::units::format_bytes),
        plan.baseline.as_deref().unwrap_or("the first target"),
    ));
    s.push_str("\ntargets:\n");
    for t in &plan.targets {
        s.push_str(&format!("  {}\n", t.label));
        for line in crate::provision::describe(t, plan.size_bytes) {
            s.push_str(&format!("      {line}\n"));
        }
    }
    s.push_str("\nworkloads:\n");
    for (w, built) in plan.workloads.iter().zip(r.workloads()) {
        s.push_str(&format!("  {}\n", w.spec));
        for line in built.describe() {
            s.push_str(&format!("      {line}\n"));
        }
    }
    if !meta.claims.is_empty() {
        s.push_str("\nclaims (checked in the report's \"Published vs this host\"):\n");
        for (i, c) in meta.claims.iter().enumerate() {
            let of = match (&c.vs, &c.vs_test) {
                (Some(v), Some(t)) => format!(" / {v}'s {t}"),
                (Some(v), None) => format!(" / {v}'s"),
                (None, Some(t)) => format!(" / its {t}"),
                (None, None) => String::new(),
            };
            s.push_str(&format!(
                "  {}. {}\n     {} of {}{}{}, expect {}{}\n",
                i + 1,
                c.says,
                c.metric,
                c.target,
                c.test
                    .as_deref()
                    .map(|t| format!(" in {t}"))
                    .unwrap_or_default(),
                of,
                c.expect,
                c.published
                    .as_deref()
                    .map(|p| format!(" (published: {p})"))
                    .unwrap_or_default()
            ));
        }
    }
    s
}

/// `--resume DIR --check`: what the resume would run, and what it keeps and sets aside.
fn describe_resume(dir: &Path, plan: &Plan) -> anyhow::Result<String> {
    let p = crate::runner::pending(dir, plan)?;
    let total = plan.targets.len() * plan.repeat as usize;
    let mut s = format!(
        "\nresume of {}: {} of {total} target runs complete, their records kept\n",
        dir.display(),
        p.done
    );
    if p.to_run.is_empty() {
        s.push_str("  nothing left to run: the resume would write the reports again\n");
    }
    for (label, repeat) in &p.to_run {
        s.push_str(&format!("  would run {label} (repeat {})\n", repeat + 1));
    }
    if p.set_aside > 0 || p.torn {
        s.push_str(&format!(
            "  would set aside {} records of unfinished runs{} in results.partial.jsonl\n",
            p.set_aside,
            if p.torn {
                " and a torn last record"
            } else {
                ""
            }
        ));
    }
    Ok(s)
}

/// A new study's plan: the file (or shipped study) with its scale, `--set` and `--interval`.
fn new_plan(arg: &str, a: &StudyArgs) -> anyhow::Result<Plan> {
    let (text, name) = load(arg)?;
    let mut plan = plan_of_text(&text, &name, a.scale.as_deref(), &a.sets)?;
    if a.interval.is_some() {
        plan.overrides.interval = a.interval;
    }
    if a.profile.is_some() {
        plan.overrides.profile = a.profile;
    }
    Ok(plan)
}

/// The plan of a study file's text with a scale and `--set`s.
fn plan_of_text(
    text: &str,
    name: &str,
    scale: Option<&str>,
    sets: &[String],
) -> anyhow::Result<Plan> {
    let sets = sets
        .iter()
        .map(|s| study::parse_set(s))
        .collect::<Result<Vec<_>, _>>()?;
    plan_of(&study::parse(text, name, scale, &sets)?, name)
}

/// A study file's text through all that `study FILE --check` does before it prints: the loader,
/// the plan, its resolution (every workload built, every target checked); nothing is created or
/// run. (`tests/suite/fuzz_parsers.rs` drives it with random and mutated study files.)
pub fn resolve_text(
    text: &str,
    name: &str,
    scale: Option<&str>,
    sets: &[String],
) -> anyhow::Result<()> {
    let plan = plan_of_text(text, name, scale, sets)?;
    let place = crate::runner::Where::Provision {
        workdir: crate::cli::DEFAULT_WORKDIR.into(),
        keep: false,
    };
    crate::runner::resolve(plan, &place, false)?;
    Ok(())
}

pub fn run(a: StudyArgs) -> anyhow::Result<Exit> {
    if a.list {
        return list();
    }
    let (plan, out) = match (&a.resume, &a.study) {
        (Some(dir), _) => (
            super::studyrun::resumed_plan(dir, "study")?,
            Some(dir.clone()),
        ),
        (None, Some(arg)) => (new_plan(arg, &a)?, a.out.clone()),
        (None, None) => {
            anyhow::bail!("name a study file or a shipped study (fsbench study --list)")
        }
    };
    let mut plan = plan;
    plan.on_interference =
        crate::plan::OnInterference::from_flag(a.retry_interfered, plan.on_interference);
    plan.on_misfit = a.room.unwrap_or(plan.on_misfit);
    // --check touches nothing, a resume's included: it says what the run would do.
    if a.check {
        let place = crate::runner::Where::Provision {
            workdir: a.common.workdir.clone(),
            keep: a.keep,
        };
        let resolved = crate::runner::resolve(plan, &place, false)?;
        let mut text = describe(&resolved);
        text.push_str(&resolved.space_text(&place));
        if let Some(dir) = &a.resume {
            text.push_str(&describe_resume(dir, &resolved.plan)?);
        }
        text.push_str("\nnothing was run\n");
        crate::out::print(&text);
        return Ok(Exit::Ok);
    }
    let r = super::studyrun::Run {
        command: "study",
        plan,
        out,
        default_out: "fsbench-study",
        resume: a.resume.is_some(),
        keep: a.keep,
        common: &a.common,
        metrics: a.metrics.metrics,
    };
    super::studyrun::run(r, &crate::frame::Local)
}
