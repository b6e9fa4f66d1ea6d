//! `fsbench list`: filesystems and their keys, workloads, presets, engines, metrics, formats.

use super::Exit;
use crate::report::list;

pub fn run(json: bool, preset: Option<&str>) -> anyhow::Result<Exit> {
    if let Some(name) = preset {
        crate::out::print(&list::preset_jobfile(name).map_err(anyhow::Error::msg)?);
    } else if json {
        crate::out::line(&list::json());
    } else {
        crate::out::print(&list::render());
    }
    Ok(Exit::Ok)
}
