//! `fsbench provision SPEC`: create one target and leave it mounted; prints the mount point.

use super::{need_root, Exit};
use crate::cli::ProvisionArgs;
use crate::provision::exec::Sys;
use crate::provision::Request;

pub fn run(a: ProvisionArgs) -> anyhow::Result<Exit> {
    let spec = crate::provision::parse_target(&a.spec).map_err(anyhow::Error::msg)?;
    let common = &a.common;
    if !common.dry_run {
        need_root("fsbench provision")?;
        super::install_signals()?;
        super::cleanup::leftovers(common.quiet);
    }
    let sys = Sys::new(common.dry_run);
    let run_id = crate::metrics::clock::run_id();
    let req = Request {
        workdir: &common.workdir,
        run_id: &run_id,
        index: 0,
        size: a.backing.size(),
        device: a.backing.device.as_deref(),
        wipe: a.backing.wipe,
        keep_image: false,
        persistent: true,
    };
    let m = crate::provision::provision(&sys, &spec, &req)?;
    if !common.quiet {
        let i = &m.info;
        crate::out::eline!(
            "fsbench: provisioned '{}' ({}) on {}",
            i.label,
            i.fs,
            i.backing
        );
        if !i.mount_options.is_empty() {
            crate::out::eline!(
                "fsbench: mount options in effect: {}",
                i.mount_options.join(",")
            );
        }
        for (k, v) in &i.zfs_properties {
            crate::out::eline!("fsbench: zfs {k}={v}");
        }
        if !i.options_not_in_effect.is_empty() {
            crate::out::eline!(
                "fsbench: warning: not in effect: {}",
                i.options_not_in_effect.join(", ")
            );
        }
        crate::out::eline!(
            "fsbench: remove it with: fsbench teardown {}",
            m.mountpoint.display()
        );
    }
    crate::out::line(&m.mountpoint.display().to_string());
    Ok(Exit::Ok)
}
