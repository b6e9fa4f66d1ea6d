//! `fsbench doctor`: what this host can test, and why not.

use super::Exit;

pub fn run(json: bool) -> anyhow::Result<Exit> {
    let d = crate::provision::probe::doctor();
    if json {
        crate::out::line(&serde_json::to_string_pretty(&d)?);
    } else {
        crate::out::print(&crate::report::doctor::render(&d));
    }
    Ok(Exit::Ok)
}
