//! `fsbench compare TARGET...`: provision each target, run the workloads, record every phase,
//! tear down, then report.

use std::path::PathBuf;

use super::{exit_for, need_root, Exit};
use crate::cli::CompareArgs;
use crate::plan::Plan;
use crate::report::StudyReport;
use crate::runner::{self, Ended, Where};
use crate::store::{self, Record};

/// The plan: a resumed study's, or one built from the arguments.
fn plan_of(a: &CompareArgs) -> anyhow::Result<Plan> {
    let plan = match &a.resume {
        Some(dir) => {
            store::read_manifest(dir)
                .map_err(|e| {
                    anyhow::anyhow!("{e}: --resume needs the directory of an earlier compare")
                })?
                .plan
        }
        None => crate::cli::build_plan(
            &a.targets,
            &a.workloads,
            &a.backing,
            a.repeat,
            &a.block,
            a.baseline.as_deref(),
        )
        .map_err(anyhow::Error::msg)?,
    };
    // The workloads of a resumed plan must still build (e.g. a fio job file that moved).
    for w in &plan.workloads {
        crate::workload::build(w, &plan.overrides)?;
    }
    Ok(plan)
}

/// Needs root only for what it provisions: `dir:` targets format nothing.
fn needs_root(plan: &Plan) -> bool {
    plan.targets.iter().any(|t| t.fs != "dir")
}

pub fn run(a: CompareArgs) -> anyhow::Result<Exit> {
    let team = super::join_ranks(&a.ranks)?;
    let lead = team.rank().leads();
    let mut plan = plan_of(&a)?;
    if a.resume.is_none() {
        plan.ranks = a.ranks.plan();
    }
    let dry_run = a.common.dry_run;
    if !dry_run {
        if needs_root(&plan) {
            need_root("fsbench compare")?;
        }
        super::install_signals()?;
        if crate::sys::is_root() && lead {
            super::cleanup::leftovers(a.common.quiet);
        }
    }
    // The work directory is checked before the study directory exists (a refusal leaves nothing).
    let workdir = if !dry_run && needs_root(&plan) {
        crate::provision::workdir::secure(&a.common.workdir)?
    } else {
        a.common.workdir.clone()
    };
    let out = a.resume.clone().or(a.out.clone()).unwrap_or_else(|| {
        PathBuf::from(format!("fsbench-study-{}", crate::metrics::clock::run_id()))
    });
    let opts = runner::Options {
        plan,
        out: out.clone(),
        place: Where::Provision {
            workdir,
            keep: a.keep,
        },
        dry_run,
        quiet: a.common.quiet,
        command_line: std::env::args().collect(),
        resume: a.resume.is_some(),
    };
    let summary = runner::run(&opts, team.as_ref())?;
    if !lead {
        return Ok(super::rank_exit(team.as_ref(), &summary.ended).unwrap_or(Exit::Ok));
    }
    if let Some(study) = &summary.study {
        report_at_end(study, &opts.plan, &summary.records);
    }
    Ok(match summary.ended {
        Ended::Refused(why) => {
            eprintln!("fsbench: error: {why}");
            Exit::Usage
        }
        Ended::Interrupted(why) => {
            eprintln!(
                "fsbench: interrupted; targets torn down, results so far kept in {}",
                out.display()
            );
            Exit::Stopped(why)
        }
        Ended::Complete => exit_for(&summary.records),
        Ended::Ranks(why) => {
            eprintln!(
                "fsbench: the run lost a rank ({why}); results so far kept in {}: continue with fsbench compare --resume {}",
                out.display(),
                out.display()
            );
            super::settle_ranks(team.as_ref(), &Ended::Ranks(why));
            Exit::CheckFailed
        }
    })
}

/// report.md and report.html in the study, then the short terminal report (the tables a person
/// decides from, grouped warnings). The files are written first: a closed standard output must
/// not cost them.
fn report_at_end(study: &store::Study, plan: &Plan, records: &[Record]) {
    let out = study.dir.as_path();
    let manifest_warnings = store::read_manifest(out)
        .map(|m| m.warnings)
        .unwrap_or_default();
    match StudyReport::build(
        records.to_vec(),
        plan.baseline.as_deref(),
        &manifest_warnings,
    ) {
        Ok(mut rep) => {
            rep.color = super::stdout_wants_color();
            let title = format!("fsbench study {}", out.display());
            for (file, text) in [
                ("report.md", format!("# {title}\n\n{}", rep.markdown())),
                ("report.html", rep.html(&title)),
            ] {
                if let Err(e) = study.write_file(file, text.as_bytes()) {
                    eprintln!("fsbench: warning: cannot write {file}: {e}");
                }
            }
            crate::out::print(&rep.term(false));
            eprint!("{}", rep.warnings_text(false));
        }
        Err(e) => eprintln!("fsbench: {e}"),
    }
    crate::out::line(&format!(
        "results: {} (every table and the statistics: fsbench report {} --full, or report.md)",
        out.join("results.jsonl").display(),
        out.display()
    ));
}
