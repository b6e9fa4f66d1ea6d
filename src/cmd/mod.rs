//! The command edge: one file per subcommand. Errors become messages with their context here
//! (anyhow), and outcomes become exit statuses whose names say what happened.

pub(crate) mod audit;
pub(crate) mod check;
pub(crate) mod cleanup;
pub(crate) mod compare;
pub(crate) mod docs;
pub(crate) mod doctor;
pub(crate) mod endpoint;
pub(crate) mod history;
pub(crate) mod list;
pub(crate) mod provision;
pub(crate) mod report;
pub(crate) mod run;
pub mod study;
pub(crate) mod studyrun;
pub(crate) mod teardown;
pub(crate) mod tune;

use crate::cli::{Cli, Command};
use crate::stop::StopReason;
use crate::store::{Outcome, Record};

/// How a command ended; `code` is the process exit status.
#[derive(Debug, PartialEq, Eq)]
pub enum Exit {
    /// 0: everything ran.
    Ok,
    /// 1: a check failed (a verification, an integrity count, a failed phase).
    CheckFailed,
    /// 2: a usage or environment error (the message says what to fix); nothing was destroyed.
    Usage,
    /// 3: teardown or cleanup could not remove everything (listed above it).
    CleanupIncomplete,
    /// 128 + the signal's number: stopped by a signal, results kept, targets torn down.
    Stopped(StopReason),
}

impl Exit {
    pub fn code(&self) -> u8 {
        match self {
            Exit::Ok => 0,
            Exit::CheckFailed => 1,
            Exit::Usage => 2,
            Exit::CleanupIncomplete => 3,
            Exit::Stopped(why) => why.exit_code(),
        }
    }
}

/// 1 when any record failed (e.g. a verification), else 0.
pub fn exit_for(records: &[Record]) -> Exit {
    if records.iter().any(|r| r.outcome == Outcome::Failed) {
        Exit::CheckFailed
    } else {
        Exit::Ok
    }
}

/// SIGINT, SIGTERM and SIGHUP end a run in order (stop.rs); after a hangup, the outputs that
/// were the terminal go to /dev/null.
pub fn install_signals() -> std::io::Result<()> {
    crate::sys::note_terminals();
    crate::stop::install_signal_handlers()?;
    crate::sys::install_hangup(crate::stop::hangup_flag())
}

/// Joins the ranks an MPI launcher started (one process without a launcher); a binary without
/// MPI under a launcher of several ranks is refused here (exit 2), before anything runs.
pub fn join_ranks(a: &crate::cli::RankArgs) -> anyhow::Result<Box<dyn crate::ranks::Team>> {
    crate::ranks::join(std::time::Duration::from_secs(a.rank_timeout)).map_err(anyhow::Error::msg)
}

/// What a rank of several found wrong before the ranks agreed on the plan (a device in use or a
/// port taken on its node only): the others would wait for it at the agreement, so once it said
/// why, it ends every rank (MPI_Abort, exit 2). Nothing was made yet.
pub fn before_agreeing<T>(
    team: &dyn crate::ranks::Team,
    r: anyhow::Result<T>,
) -> anyhow::Result<T> {
    match r {
        Err(e) if team.rank().many() => {
            let r = team.rank().index;
            crate::out::eline!("fsbench: error: rank {r} on {}: {e:#}", team.host());
            team.abandon(2)
        }
        r => r,
    }
}

/// A run that lost a rank, with no signal ending it all: every process of the run ends
/// (MPI_Abort), so that none waits forever. Rank 0 calls it once its study and report are out.
pub fn settle_ranks(team: &dyn crate::ranks::Team, ended: &crate::runner::Ended) {
    if matches!(ended, crate::runner::Ended::Ranks(_)) && !crate::stop::stop_requested() {
        team.abandon(1);
    }
}

/// How a rank other than 0 ends (rank 0 reports): None on rank 0.
pub fn rank_exit(team: &dyn crate::ranks::Team, ended: &crate::runner::Ended) -> Option<Exit> {
    use crate::runner::Ended;
    if team.rank().leads() {
        return None;
    }
    settle_ranks(team, ended);
    Some(match ended {
        Ended::Interrupted(why) => Exit::Stopped(*why),
        Ended::Ranks(_) => Exit::CheckFailed,
        Ended::Refused(_) => Exit::Usage,
        Ended::Complete => Exit::Ok,
    })
}

pub fn need_root(what: &str) -> anyhow::Result<()> {
    if crate::sys::is_root() {
        Ok(())
    } else {
        anyhow::bail!("{what} needs root (it manages mounts, loop devices and pools): run it with sudo, or add --dry-run to see the commands it would run")
    }
}

/// Runs one command; an error is a usage or environment error (exit 2). Standard output that
/// could not be written (not a closed pipe: a full disk) makes an exit 0 an exit 1.
pub fn dispatch(cli: Cli) -> anyhow::Result<Exit> {
    let exit = command(cli)?;
    Ok(match crate::out::failed() {
        Some(e) if exit == Exit::Ok => {
            crate::out::eline!(
                "fsbench: error: cannot write to standard output ({e}): what it printed is incomplete"
            );
            Exit::CheckFailed
        }
        _ => exit,
    })
}

fn command(cli: Cli) -> anyhow::Result<Exit> {
    match cli.command {
        Command::Doctor { json } => doctor::run(json),
        Command::List { json, preset } => list::run(json, preset.as_deref()),
        Command::Report(a) => report::run(a),
        Command::Run(a) => run::run(a),
        Command::Provision(a) => provision::run(a),
        Command::Teardown(a) => teardown::run(a),
        Command::Cleanup { common } => cleanup::run(common),
        Command::Compare(a) => compare::run(*a),
        Command::Study(a) => study::run(a),
        Command::Tune(a) => tune::run(*a),
        Command::Completions { shell } => docs::completions(shell),
        Command::Man { dir } => docs::man(&dir),
        Command::Audit(a) => audit::run(a),
        Command::History(a) => history::run(a),
        Command::Check(a) => check::run(a),
    }
}

/// Colour on standard output: a terminal, and no NO_COLOR (no-color.org).
pub fn stdout_wants_color() -> bool {
    std::io::IsTerminal::is_terminal(&std::io::stdout()) && std::env::var_os("NO_COLOR").is_none()
}
