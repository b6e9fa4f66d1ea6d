//! `fsbench cleanup`: remove what killed runs left behind (only fsbench's own).

use super::{need_root, Exit};
use crate::cli::Common;
use crate::provision::cleanup::{self, Scope};
use crate::provision::exec::Sys;

pub fn run(common: Common) -> anyhow::Result<Exit> {
    if !common.dry_run {
        need_root("fsbench cleanup")?;
    }
    let rep = cleanup::cleanup(&Sys::new(common.dry_run), Scope::Leftovers, None);
    print(&rep, common.dry_run);
    Ok(if rep.errors.is_empty() {
        Exit::Ok
    } else {
        crate::out::eline!("fsbench: some leftovers could not be removed (see above)");
        Exit::CleanupIncomplete
    })
}

/// Cleans what dead runs left, with a notice; run at the start of every provisioning command.
pub fn leftovers(quiet: bool) {
    let rep = cleanup::cleanup(&Sys::new(false), Scope::Leftovers, None);
    if !rep.found.is_empty() && !quiet {
        crate::out::eline!("fsbench: cleaned up what an earlier run left behind:");
        for a in &rep.actions {
            crate::out::eline!("  {a}");
        }
    }
    for e in &rep.errors {
        crate::out::eline!("fsbench: warning: leftover cleanup: {e}");
    }
}

pub fn print(rep: &cleanup::Report, dry_run: bool) {
    if rep.found.is_empty() {
        crate::out::line("nothing of fsbench's to clean up");
    }
    for f in &rep.found {
        crate::out::line(&format!(
            "{}{f}",
            if dry_run { "found: " } else { "removed: " }
        ));
    }
    for a in &rep.actions {
        crate::out::eline!("  {a}");
    }
    for p in &rep.provisioned_left {
        crate::out::line(&format!("left alone: {p} (use `fsbench teardown`)"));
    }
    for p in &rep.left_alone {
        crate::out::line(&format!("left alone: {p}"));
    }
    for e in &rep.errors {
        crate::out::eline!("fsbench: error: {e}");
    }
}
