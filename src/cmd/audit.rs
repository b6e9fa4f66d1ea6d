//! `fsbench audit TARGET...`: the `audit` workload's cases on each target, provisioned on loop
//! images, as a study of the coordinator (so it repeats and resumes as `compare` does).

use super::Exit;
use crate::cli::{AuditArgs, AuditCase};
use crate::plan::{Plan, WorkloadSpec};
use crate::workload::audit::{self, Case};

/// The workload spec of one case with the command's options.
fn case_spec(case: Case, a: &AuditArgs) -> WorkloadSpec {
    let mut params = vec![("case".to_string(), Some(case.name().to_string()))];
    if case == Case::Corruption {
        params.push(("files".into(), Some(a.files.to_string())));
        params.push(("file_size".into(), Some(a.file_size.to_string())));
    }
    WorkloadSpec {
        spec: format!(
            "{}:{}",
            audit::NAME,
            crate::plan::workload::options_text(&params)
        ),
        name: audit::NAME.into(),
        params,
    }
}

/// The plan: a resumed audit's, or the targets with one workload per case.
fn plan_of(a: &AuditArgs) -> anyhow::Result<Plan> {
    if let Some(dir) = &a.resume {
        return super::studyrun::resumed_plan(dir, "audit");
    }
    let mut targets = Vec::new();
    for t in &a.targets {
        let spec = crate::provision::parse_target(t).map_err(anyhow::Error::msg)?;
        if let Some(why) = audit::refuse(&spec) {
            anyhow::bail!("{why}");
        }
        targets.push(spec);
    }
    let cases = match a.case {
        AuditCase::Corruption => vec![Case::Corruption],
        AuditCase::Fsync => vec![Case::Fsync],
        AuditCase::All => vec![Case::Corruption, Case::Fsync],
    };
    let workloads: Vec<WorkloadSpec> = cases.iter().map(|c| case_spec(*c, a)).collect();
    for w in &workloads {
        crate::workload::build(w, &Default::default())?;
    }
    Ok(Plan {
        targets,
        workloads,
        size_bytes: a.size,
        device: None,
        wipe: false,
        repeat: a.repeat,
        baseline: None,
        overrides: Default::default(),
        ranks: Default::default(),
        study: None,
        tune: None,
        on_interference: Default::default(),
        on_misfit: Default::default(),
    })
}

pub fn run(a: AuditArgs) -> anyhow::Result<Exit> {
    let plan = plan_of(&a)?;
    let r = super::studyrun::Run {
        command: "audit",
        plan,
        out: a.resume.clone().or(a.out.clone()),
        default_out: "fsbench-audit",
        resume: a.resume.is_some(),
        keep: false,
        common: &a.common,
        metrics: None,
    };
    super::studyrun::run(r, &crate::frame::Local)
}
