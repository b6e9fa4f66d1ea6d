//! `fsbench list`: filesystems and their keys, workloads, presets, engines, metrics, formats.

use super::Exit;
use crate::report::list;

pub fn run(json: bool, preset: Option<&str>) -> anyhow::Result<Exit> {
    if let Some(name) = preset {
        print!(
            "{}",
            list::preset_jobfile(name).map_err(anyhow::Error::msg)?
        );
    } else if json {
        println!("{}", list::json());
    } else {
        print!("{}", list::render());
    }
    Ok(Exit::Ok)
}
