//! fsbench: wiring only: parse -> plan -> run -> report -> exit code.

use std::process::ExitCode;

use clap::Parser;

use fsbench::{cli, metrics, provision, report, runner, store, sys};

use fsbench::cli::{Cli, Command};
use provision::cleanup::{self, Scope};
use provision::exec::Sys;

/// 0 ok, 1 a check failed, 2 usage or environment error.
enum Exit {
    Ok,
    CheckFailed,
    Usage(String),
    Signal(i32),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let exit = match run(cli) {
        Ok(e) => e,
        Err(msg) => Exit::Usage(msg),
    };
    match exit {
        Exit::Ok => ExitCode::SUCCESS,
        Exit::CheckFailed => ExitCode::from(1),
        Exit::Usage(msg) => {
            eprintln!("fsbench: error: {msg}");
            ExitCode::from(2)
        }
        Exit::Signal(code) => ExitCode::from(code as u8),
    }
}

/// 1 when any record failed (e.g. a verification), else 0.
fn exit_for(records: &[store::Record]) -> Exit {
    if records.iter().any(|r| r.outcome == store::Outcome::Failed) {
        Exit::CheckFailed
    } else {
        Exit::Ok
    }
}

fn need_root(what: &str) -> Result<(), String> {
    if sys::is_root() {
        Ok(())
    } else {
        Err(format!("{what} needs root (it manages mounts, loop devices and pools): run it with sudo, or add --dry-run to see the commands it would run"))
    }
}

/// Cleans what dead runs left, with a notice; run at the start of every provisioning command.
fn clean_leftovers(quiet: bool) {
    let rep = cleanup::cleanup(&Sys::new(false), Scope::Leftovers, None);
    if !rep.found.is_empty() && !quiet {
        eprintln!("fsbench: cleaned up what an earlier run left behind:");
        for a in &rep.actions {
            eprintln!("  {a}");
        }
    }
    for e in &rep.errors {
        eprintln!("fsbench: warning: leftover cleanup: {e}");
    }
}

fn run(cli: Cli) -> Result<Exit, String> {
    match cli.command {
        Command::Doctor { json } => {
            let d = provision::probe::doctor();
            if json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&d).map_err(|e| e.to_string())?
                );
            } else {
                print!("{}", report::doctor::render(&d));
            }
            Ok(Exit::Ok)
        }
        Command::List { json, preset } => {
            if let Some(name) = preset {
                print!("{}", report::list::preset_jobfile(&name)?);
            } else if json {
                println!("{}", report::list::json());
            } else {
                print!("{}", report::list::render());
            }
            Ok(Exit::Ok)
        }
        Command::Report {
            dir,
            format,
            baseline,
        } => {
            let records = store::load_results(&dir).map_err(|e| {
                format!("{e}: give the directory of a study (what `fsbench compare --out DIR` or `fsbench run --out DIR` wrote)")
            })?;
            let manifest_warnings = store::read_manifest(&dir)
                .map(|m| m.warnings)
                .unwrap_or_default();
            let rep = report::StudyReport::build(records, baseline.as_deref(), &manifest_warnings)?;
            let text = match format.as_str() {
                "md" => rep.markdown(),
                "csv" => rep.csv(),
                "html" => rep.html(&format!("fsbench study {}", dir.display())),
                "json" => rep.json(),
                _ => rep.term(true) + &rep.warnings_text(false),
            };
            print!("{text}");
            Ok(Exit::Ok)
        }
        Command::Run {
            jobfile,
            out,
            wipe,
            block,
            quiet,
        } => {
            let out = out.unwrap_or_else(|| {
                std::path::PathBuf::from(format!("fsbench-run-{}", metrics::clock::run_id()))
            });
            let opts = runner::jobrun::Options {
                jobfile,
                out: out.clone(),
                wipe,
                overrides: block.overrides(),
                quiet,
                command_line: std::env::args().collect(),
            };
            let jobs = runner::jobrun::load(&opts)?;
            runner::install_signal_handlers().map_err(|e| e.to_string())?;
            let summary = runner::jobrun::run(&opts, &jobs)?;
            print!("{}", report::block::tables(&summary.records));
            for r in summary.records.iter().filter(|r| r.error.is_some()) {
                eprintln!(
                    "fsbench: {} failed: {}",
                    r.test,
                    r.error.as_deref().unwrap_or("")
                );
            }
            println!("results: {}", out.join("results.jsonl").display());
            if summary.interrupted {
                return Ok(Exit::Signal(runner::stop_exit_code().unwrap_or(130)));
            }
            Ok(exit_for(&summary.records))
        }
        Command::Provision {
            spec,
            backing,
            common,
        } => {
            let spec = provision::parse_target(&spec)?;
            if !common.dry_run {
                need_root("fsbench provision")?;
                runner::install_signal_handlers().map_err(|e| e.to_string())?;
                clean_leftovers(common.quiet);
            }
            let sys = Sys::new(common.dry_run);
            let run_id = metrics::clock::run_id();
            let req = provision::lifecycle::Request {
                workdir: &common.workdir,
                run_id: &run_id,
                index: 0,
                size: backing.size,
                device: backing.device.as_deref(),
                wipe: backing.wipe,
                keep_image: false,
                persistent: true,
            };
            let m =
                provision::lifecycle::provision(&sys, &spec, &req).map_err(|e| e.to_string())?;
            if !common.quiet {
                eprintln!(
                    "fsbench: provisioned '{}' ({}) on {}",
                    m.info.label, m.info.fs, m.info.backing
                );
                if !m.info.mount_options.is_empty() {
                    eprintln!(
                        "fsbench: mount options in effect: {}",
                        m.info.mount_options.join(",")
                    );
                }
                for (k, v) in &m.info.zfs_properties {
                    eprintln!("fsbench: zfs {k}={v}");
                }
                if !m.info.options_not_in_effect.is_empty() {
                    eprintln!(
                        "fsbench: warning: not in effect: {}",
                        m.info.options_not_in_effect.join(", ")
                    );
                }
                eprintln!(
                    "fsbench: remove it with: fsbench teardown {}",
                    m.mountpoint.display()
                );
            }
            println!("{}", m.mountpoint.display());
            Ok(Exit::Ok)
        }
        Command::Teardown {
            mountpoint,
            keep,
            common,
        } => {
            if !common.dry_run {
                need_root("fsbench teardown")?;
            }
            let sys = Sys::new(common.dry_run);
            if let Some(mp) = &mountpoint {
                let reg = provision::registry::Registry::open().map_err(|e| e.to_string())?;
                let Some(mut state) = reg
                    .list()
                    .into_iter()
                    .find(|s| s.mountpoint.as_deref() == Some(mp.as_path()))
                else {
                    return Err(format!(
                        "{} is not a target fsbench provisioned; `fsbench teardown` with no argument removes all of them",
                        mp.display()
                    ));
                };
                if state.owner.alive() && !state.persistent {
                    return Err(format!(
                        "{} belongs to a running fsbench (pid {}); stop that run instead",
                        mp.display(),
                        state.owner.pid
                    ));
                }
                state.keep_image |= keep;
                let notices = cleanup::clean_state(&sys, Some(&reg), &state)
                    .map_err(|e| format!("teardown of {}: {e}", mp.display()))?;
                for n in notices {
                    eprintln!("fsbench: {n}");
                }
                return Ok(Exit::Ok);
            }
            let rep = cleanup::cleanup(&sys, Scope::AllProvisioned, None);
            print_cleanup(&rep, common.dry_run);
            Ok(if rep.errors.is_empty() {
                Exit::Ok
            } else {
                Exit::Usage("some resources could not be removed (see above)".into())
            })
        }
        Command::Cleanup { common } => {
            if !common.dry_run {
                need_root("fsbench cleanup")?;
            }
            let rep = cleanup::cleanup(&Sys::new(common.dry_run), Scope::Leftovers, None);
            print_cleanup(&rep, common.dry_run);
            Ok(if rep.errors.is_empty() {
                Exit::Ok
            } else {
                Exit::Usage("some leftovers could not be removed (see above)".into())
            })
        }
        Command::Compare {
            targets,
            workloads,
            out,
            repeat,
            baseline,
            resume,
            keep,
            block,
            backing,
            common,
        } => {
            let plan = match &resume {
                Some(dir) => store::Study::open(dir)?.1.plan,
                None => cli::build_plan(
                    &targets,
                    &workloads,
                    &backing,
                    repeat,
                    &block,
                    baseline.as_deref(),
                )?,
            };
            // The workloads of a resumed plan must still build (e.g. a fio job file that moved).
            for w in &plan.workloads {
                fsbench::workload::build(w, &plan.overrides)?;
            }
            let out = resume.clone().or(out);
            if !common.dry_run {
                need_root("fsbench compare")?;
                runner::install_signal_handlers().map_err(|e| e.to_string())?;
                clean_leftovers(common.quiet);
            }
            let out = out.unwrap_or_else(|| {
                std::path::PathBuf::from(format!("fsbench-study-{}", metrics::clock::run_id()))
            });
            let opts = runner::compare::Options {
                plan,
                out: out.clone(),
                workdir: common.workdir.clone(),
                keep,
                dry_run: common.dry_run,
                quiet: common.quiet,
                command_line: std::env::args().collect(),
                resume: resume.is_some(),
            };
            let summary = runner::compare::run(&opts)?;
            if !common.dry_run {
                let others: Vec<store::Record> = summary
                    .records
                    .iter()
                    .filter(|r| !report::block::is_block(r))
                    .cloned()
                    .collect();
                if !others.is_empty() {
                    println!("{}", report::terminal_table(&others));
                }
                let mut manifest = store::read_manifest(&out).ok();
                let manifest_warnings = manifest
                    .as_ref()
                    .map(|m| m.warnings.clone())
                    .unwrap_or_default();
                if let Ok(rep) = report::StudyReport::build(
                    summary.records.clone(),
                    opts.plan.baseline.as_deref(),
                    &manifest_warnings,
                ) {
                    print!("{}", rep.term(opts.plan.repeat > 1));
                    eprint!("{}", rep.warnings_text(false));
                    let title = format!("fsbench study {}", out.display());
                    for (file, text) in [
                        ("report.md", format!("# {title}\n\n{}", rep.markdown())),
                        ("report.html", rep.html(&title)),
                    ] {
                        if let Err(e) = std::fs::write(out.join(file), text) {
                            eprintln!("fsbench: warning: cannot write {file}: {e}");
                        }
                    }
                    if let Some(m) = manifest.as_mut() {
                        m.warnings = rep.warnings.clone();
                        let _ = store::Study::save_manifest_at(&out, m);
                    }
                }
                println!("results: {}", out.join("results.jsonl").display());
            }
            Ok(match summary.ended {
                runner::compare::Ended::Refused(why) => Exit::Usage(why),
                runner::compare::Ended::Interrupted => {
                    eprintln!(
                        "fsbench: interrupted; targets torn down, results so far kept in {}",
                        out.display()
                    );
                    Exit::Signal(runner::stop_exit_code().unwrap_or(130))
                }
                runner::compare::Ended::Complete => exit_for(&summary.records),
            })
        }
    }
}

fn print_cleanup(rep: &cleanup::Report, dry_run: bool) {
    if rep.found.is_empty() {
        println!("nothing of fsbench's to clean up");
    }
    for f in &rep.found {
        println!("{}{f}", if dry_run { "found: " } else { "removed: " });
    }
    for a in &rep.actions {
        eprintln!("  {a}");
    }
    for p in &rep.provisioned_left {
        println!("left alone: {p} (use `fsbench teardown`)");
    }
    for e in &rep.errors {
        eprintln!("fsbench: error: {e}");
    }
}
