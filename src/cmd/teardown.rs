//! `fsbench teardown [MOUNTPOINT]`: remove one provisioned target, or all of them.

use super::{need_root, Exit};
use crate::cli::TeardownArgs;
use crate::provision::cleanup::{self, Scope};
use crate::provision::exec::Sys;
use crate::provision::registry::Registry;

pub fn run(a: TeardownArgs) -> anyhow::Result<Exit> {
    if !a.common.dry_run {
        need_root("fsbench teardown")?;
    }
    let sys = Sys::new(a.common.dry_run);
    let Some(mp) = &a.mountpoint else {
        let rep = cleanup::cleanup(&sys, Scope::AllProvisioned, None);
        super::cleanup::print(&rep, a.common.dry_run);
        return Ok(if rep.errors.is_empty() {
            Exit::Ok
        } else {
            crate::out::eline!("fsbench: some resources could not be removed (see above)");
            Exit::CleanupIncomplete
        });
    };
    let reg = Registry::open()?;
    let Some(mut state) = reg
        .list()
        .into_iter()
        .find(|s| s.mountpoint.as_deref() == Some(mp.as_path()))
    else {
        anyhow::bail!(
            "{} is not a target fsbench provisioned; `fsbench teardown` with no argument removes all of them",
            mp.display()
        );
    };
    if state.owner.alive() && !state.persistent {
        anyhow::bail!(
            "{} belongs to a running fsbench (pid {}); stop that run instead",
            mp.display(),
            state.owner.pid
        );
    }
    state.keep_image |= a.keep;
    match cleanup::clean_state(&sys, Some(&reg), &state) {
        Ok(notices) => {
            for n in notices {
                crate::out::eline!("fsbench: {n}");
            }
            Ok(Exit::Ok)
        }
        Err(e) => {
            crate::out::eline!("fsbench: error: teardown of {}: {e}", mp.display());
            Ok(Exit::CleanupIncomplete)
        }
    }
}
