//! A plan run as a study: what `compare` and `audit` share (and every command that runs a plan on
//! provisioned targets): root where it provisions, the signals, the leftovers of dead runs, the
//! work directory, the coordinator, report.md and report.html in the study, the short terminal
//! report, and the exit status.

use std::path::PathBuf;

use super::{exit_for, need_root, Exit};
use crate::cli::Common;
use crate::plan::Plan;
use crate::ranks::Team;
use crate::report::StudyReport;
use crate::runner::{self, Ended, Where};
use crate::store::{self, Record};

/// A plan to run, where, and how the command was asked.
pub struct Run<'a> {
    /// The command's name, for messages (`fsbench compare`).
    pub command: &'static str,
    pub plan: Plan,
    /// The study directory given (`--out`, or `--resume DIR`), else `default_out` with the time.
    pub out: Option<PathBuf>,
    pub default_out: &'static str,
    pub resume: bool,
    pub keep: bool,
    pub common: &'a Common,
    /// `--metrics ADDR`: the live endpoint, open while the plan runs.
    pub metrics: Option<std::net::SocketAddr>,
}

/// The plan of a study to resume: its manifest's (resolved like any plan, so a fio job file that
/// moved is an error before anything runs).
/// An edited `study.toml` is refused (exit 2, naming the changed keys): the resume runs the
/// recorded plan, which the file would then misdescribe, and the edit is the user's to undo or to
/// run as a new study (`fsbench study DIR/study.toml --out NEW`); fsbench changes neither.
pub fn resumed_plan(dir: &std::path::Path, command: &str) -> anyhow::Result<Plan> {
    let plan = store::read_manifest(dir)
        .map_err(|e| anyhow::anyhow!("{e}: --resume needs the directory of an earlier {command}"))?
        .plan;
    study_file_unchanged(dir, &plan)?;
    Ok(plan)
}

fn study_file_unchanged(dir: &std::path::Path, plan: &Plan) -> anyhow::Result<()> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let path = dir.join("study.toml");
    // (Not through a symbolic link: only the file fsbench wrote.)
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(&path);
    let mut file = match file {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => anyhow::bail!(
            "{}: cannot read it ({e}): a resume checks that it still describes the study; put back the file fsbench wrote, or remove it",
            path.display()
        ),
    };
    let mut text = String::new();
    if !file.metadata()?.is_file() || file.read_to_string(&mut text).is_err() {
        anyhow::bail!(
            "{}: not the text file fsbench wrote: put it back, or remove it to resume",
            path.display()
        );
    }
    let origin = path.display().to_string();
    let recorded = crate::plan::study::from_plan(plan);
    let Some(changed) = crate::plan::study::changed_keys(&recorded, &text, &origin)? else {
        return Ok(());
    };
    if changed.is_empty() {
        return Ok(());
    }
    let listed: Vec<String> = changed
        .iter()
        .map(|(k, v)| {
            if v.len() <= 60 {
                format!("{k} (recorded: {v})")
            } else {
                k.clone()
            }
        })
        .collect();
    anyhow::bail!(
        "{origin} was edited since the study began: {} differ{} from the plan it records, which a resume runs. Nothing was resumed or changed: undo the edit to resume, or run the edited file as a new study: fsbench study {origin} --out NEW",
        listed.join(", "),
        if changed.len() == 1 { "s" } else { "" }
    )
}

/// Needs root only for what it provisions: an existing directory formats nothing.
fn needs_root(plan: &Plan) -> bool {
    plan.targets
        .iter()
        .any(|t| !crate::provision::caps(&t.fs).existing_dir)
}

/// Runs the plan on its targets, writes the reports into the study and prints the short one.
pub fn run(r: Run, team: &dyn Team) -> anyhow::Result<Exit> {
    let command = r.command;
    let (opts, endpoint) = super::before_agreeing(team, prepare(r, team))?;
    let summary = runner::run(&opts, team)?;
    // The endpoint closes when the run ends, before the reports.
    drop(endpoint);
    end(&opts, summary, command, team)
}

/// Everything before the first target: the study's seed, the resolved plan (every workload
/// built, every check passed, before anything exists), the live metrics endpoint (`--metrics`),
/// root, the signals, the leftovers of dead runs, the work directory.
pub fn prepare(
    mut r: Run,
    team: &dyn Team,
) -> anyhow::Result<(runner::Options, Option<crate::endpoint::Endpoint>)> {
    let lead = team.rank().leads();
    // The study's seed, drawn once and recorded (study.toml, the manifest's plan), so that every
    // workload derives its data from it and the study re-runs alike. (Several ranks take rank
    // 0's when they agree on the plan: each drawing its own would make the plans differ.)
    if !team.rank().many() {
        r.plan
            .overrides
            .seed
            .get_or_insert_with(crate::plan::fio::values::fresh_seed);
    }
    let checking = Where::Provision {
        workdir: r.common.workdir.clone(),
        keep: r.keep,
    };
    let resolved = runner::resolve(r.plan, &checking, team.rank().many())?;
    let out = r.out.clone().unwrap_or_else(|| {
        PathBuf::from(format!(
            "{}-{}",
            r.default_out,
            crate::metrics::clock::run_id()
        ))
    });
    // Bound before anything is made: a taken port leaves nothing behind.
    let quiet = r.common.quiet;
    let endpoint = super::endpoint::open(r.metrics, r.command, &out, team, quiet)?;
    let dry_run = r.common.dry_run;
    // A history fsbench must not write refuses the study before anything is made.
    let observer = super::history::recorder(&r.common.history, dry_run || !lead)?;
    if !dry_run {
        if needs_root(&resolved.plan) {
            need_root(&format!("fsbench {}", r.command))?;
        }
        super::install_signals()?;
        if crate::sys::is_root() && lead {
            super::cleanup::leftovers(r.common.quiet);
        }
    }
    // The work directory is checked before the study directory exists (a refusal leaves nothing).
    let workdir = if !dry_run && needs_root(&resolved.plan) {
        crate::provision::workdir::secure(&r.common.workdir)?
    } else {
        r.common.workdir.clone()
    };
    // Said before anything runs (a tune would otherwise announce its first round): the study
    // directory opens again only to resume. (Opening it checks again, under its lock.)
    // A symbolic link there is not a study: opening refuses it with its own reason.
    let holds = std::fs::symlink_metadata(out.join("results.jsonl"))
        .is_ok_and(|m| m.file_type().is_file() && m.len() > 0);
    if !r.resume && !dry_run && holds {
        return Err(crate::store::StoreError::Exists(out.display().to_string()).into());
    }
    let opts = runner::Options {
        resolved,
        out,
        place: Where::Provision {
            workdir,
            keep: r.keep,
        },
        dry_run,
        quiet,
        command_line: std::env::args().collect(),
        resume: r.resume,
        select: None,
        observer,
    };
    Ok((opts, endpoint))
}

/// After the last target: the reports in the study, the short one printed, the exit status.
pub fn end(
    opts: &runner::Options,
    summary: runner::Summary,
    command: &str,
    team: &dyn Team,
) -> anyhow::Result<Exit> {
    let out = &opts.out;
    if !team.rank().leads() {
        return Ok(super::rank_exit(team, &summary.ended).unwrap_or(Exit::Ok));
    }
    if let Some(study) = &summary.study {
        if let Some(o) = &opts.observer {
            o.finish(&study.dir);
        }
        report_at_end(study, &opts.resolved.plan, &summary.records);
    }
    Ok(match summary.ended {
        Ended::Refused(why) => {
            crate::out::eline!("fsbench: error: {why}");
            Exit::Usage
        }
        Ended::Interrupted(why) => {
            crate::out::eline!(
                "fsbench: interrupted; targets torn down, results so far kept in {}: continue with fsbench {command} --resume {}",
                out.display(),
                out.display()
            );
            Exit::Stopped(why)
        }
        Ended::Complete => exit_for(&summary.records),
        Ended::Ranks(why) => {
            crate::out::eline!(
                "fsbench: the run lost a rank ({why}); results so far kept in {}: continue with fsbench {command} --resume {}",
                out.display(),
                out.display()
            );
            super::settle_ranks(team, &Ended::Ranks(why));
            Exit::CheckFailed
        }
    })
}

/// The flame graphs of a profiled study as SVG files in its `profiles/` (report.md links them).
fn write_graphs(study: &store::Study, rep: &StudyReport) {
    for g in rep.flame_graphs() {
        let Some((folder, name)) = g.file.split_once('/') else {
            continue;
        };
        if let Err(e) = study.write_in(folder, name, g.svg.as_bytes()) {
            crate::out::eline!("fsbench: warning: cannot write {}: {e}", g.file);
            return;
        }
    }
}

/// report.md and report.html in the study, then the short terminal report (the tables a person
/// decides from, grouped warnings). The files are written first: a closed standard output must
/// not cost them.
fn report_at_end(study: &store::Study, plan: &Plan, records: &[Record]) {
    let out = study.dir.as_path();
    let mut manifest_warnings = store::read_manifest(out)
        .map(|m| m.warnings)
        .unwrap_or_default();
    // (A resumed study's earlier records come back without their profiles' stacks.)
    let mut records = records.to_vec();
    manifest_warnings.extend(store::attach_profiles(out, &mut records));
    match StudyReport::build(records, plan.baseline.as_deref(), &manifest_warnings) {
        Ok(rep) => {
            let mut rep = rep.with(crate::report::Given::of(Some(plan)));
            rep.color = super::stdout_wants_color();
            let title = format!("fsbench study {}", out.display());
            for (file, text) in [
                ("report.md", format!("# {title}\n\n{}", rep.markdown())),
                ("report.html", rep.html(&title)),
            ] {
                if let Err(e) = study.write_file(file, text.as_bytes()) {
                    crate::out::eline!("fsbench: warning: cannot write {file}: {e}");
                }
            }
            write_graphs(study, &rep);
            crate::out::print(&rep.term(false));
            crate::out::to_stderr(&rep.warnings_text(false));
        }
        Err(e) => crate::out::eline!("fsbench: {e}"),
    }
    crate::out::line(&format!(
        "results: {} (every table and the statistics: fsbench report {} --full, or report.md; the charts and heat maps: report.html)",
        out.join("results.jsonl").display(),
        out.display()
    ));
}
