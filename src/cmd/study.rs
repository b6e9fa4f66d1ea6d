//! `fsbench study FILE|NAME`: a study written down, run with compare's machinery, its published
//! findings checked in the report. `--list` names the shipped studies; `--check` prints the
//! resolved plan and runs nothing.

use std::path::Path;

use super::Exit;
use crate::cli::{Backing, BlockArgs, StudyArgs};
use crate::plan::study::{self, StudyFile, StudyMeta};
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
fn plan_of(f: &StudyFile, name: &str, scale: Option<String>) -> anyhow::Result<Plan> {
    let bad = |what: &str, e: &dyn std::fmt::Display| anyhow::anyhow!("{name}: {what}: {e}");
    let size = match &f.size {
        Some(s) => crate::plan::units::parse_size(s).map_err(|e| bad("size", &e))?,
        None => 4 << 30,
    };
    let runtime = match &f.runtime {
        Some(r) => {
            Some(crate::plan::fio::values::parse_duration(r).map_err(|e| bad("runtime", &e))?)
        }
        None => None,
    };
    let file_size = match &f.file_size {
        Some(s) => Some(crate::plan::units::parse_size(s).map_err(|e| bad("file_size", &e))?),
        None => None,
    };
    let backing = Backing {
        size: Some(size),
        device: None,
        wipe: false,
    };
    let interval = match &f.interval {
        Some(i) => Some(crate::cli::interval_arg(i).map_err(|e| bad("interval", &e))?),
        None => None,
    };
    let until_steady = match &f.until_steady {
        Some(u) => Some(u.parse().map_err(|e| bad("until_steady", &e))?),
        None => None,
    };
    let block = BlockArgs {
        runtime,
        file_size,
        seed: f.seed,
        interval,
        until_steady,
    };
    let plan = crate::cli::build_plan(
        &f.targets,
        &f.workloads,
        &backing,
        f.repeat.unwrap_or(1).max(1),
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
            scale,
            claims: f.claims.clone(),
        }),
        ..plan
    })
}

/// Every claim names a target of the plan, a workload it runs and a metric some workload emits.
fn check_claims(f: &StudyFile, plan: &Plan, name: &str) -> anyhow::Result<()> {
    let labels: Vec<&str> = plan.targets.iter().map(|t| t.label.as_str()).collect();
    for (i, c) in f.claims.iter().enumerate() {
        let at = format!("{name}: claim {} (\"{}\")", i + 1, c.says);
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
        let (f, _) = study::parse(text, name, None, &[])?;
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

/// `--check`: the plan as it will run; nothing is touched.
fn describe(r: &crate::runner::Resolved, f: &StudyFile) -> String {
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
    if !f.claims.is_empty() {
        s.push_str("\nclaims (checked in the report's \"Published vs this host\"):\n");
        for (i, c) in f.claims.iter().enumerate() {
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
    s.push_str("\nnothing was run\n");
    s
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
        (None, Some(arg)) => {
            let (text, name) = load(arg)?;
            let sets = a
                .sets
                .iter()
                .map(|s| study::parse_set(s))
                .collect::<Result<Vec<_>, _>>()?;
            let (f, scale) = study::parse(&text, &name, a.scale.as_deref(), &sets)?;
            let mut plan = plan_of(&f, &name, scale)?;
            if a.interval.is_some() {
                plan.overrides.interval = a.interval;
            }
            if a.check {
                let place = crate::runner::Where::Provision {
                    workdir: a.common.workdir.clone(),
                    keep: a.keep,
                };
                let resolved = crate::runner::resolve(plan, &place, false)?;
                crate::out::print(&describe(&resolved, &f));
                return Ok(Exit::Ok);
            }
            (plan, a.out.clone())
        }
        (None, None) => {
            anyhow::bail!("name a study file or a shipped study (fsbench study --list)")
        }
    };
    let r = super::studyrun::Run {
        command: "study",
        plan,
        out,
        default_out: "fsbench-study",
        resume: a.resume.is_some(),
        keep: a.keep,
        common: &a.common,
    };
    super::studyrun::run(r, &crate::frame::Local)
}
