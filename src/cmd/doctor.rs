//! `fsbench doctor`: what this host can test, and why not (a table, or JSON).

use comfy_table::{presets::UTF8_FULL_CONDENSED, Table};

use super::Exit;
use crate::provision::exec::Sys;
use crate::provision::probe::Doctor;

fn render(d: &Doctor) -> String {
    let mut host = Table::new();
    host.load_preset(UTF8_FULL_CONDENSED);
    host.set_header(vec!["host check", "ok", "detail"]);
    for c in &d.host {
        host.add_row(vec![
            c.name.as_str(),
            if c.ok { "yes" } else { "NO" },
            c.detail.as_str(),
        ]);
    }
    let mut fs = Table::new();
    fs.load_preset(UTF8_FULL_CONDENSED);
    fs.set_header(vec!["filesystem", "testable", "kernel", "tool", "why not"]);
    for f in &d.filesystems {
        let tool = match (&f.tool, &f.version) {
            (Some(_), Some(v)) => v.clone(),
            (Some(t), None) => format!("{t}: not found"),
            (None, _) => "-".into(),
        };
        fs.add_row(vec![
            f.fs.clone(),
            if f.available {
                "yes".into()
            } else {
                "no".into()
            },
            f.kernel.clone(),
            tool,
            f.reason.clone().unwrap_or_default(),
        ]);
    }
    format!(
        "fsbench {} on Linux {}\n{host}\n{fs}\n",
        d.fsbench_version, d.kernel
    )
}

pub fn run(json: bool) -> anyhow::Result<Exit> {
    let mut d = crate::provision::probe::doctor();
    // What `--profile` can record here: as a profiled run finds it (tracefs mounted for the
    // probe where the run would mount it, and taken away at once).
    let tracefs = crate::provision::tracefs::for_profiles(&Sys::default());
    d.host.extend(
        crate::profile::host::checks()
            .into_iter()
            .map(|(name, ok, detail)| crate::provision::probe::Check { name, ok, detail }),
    );
    drop(tracefs);
    if json {
        crate::out::line(&serde_json::to_string_pretty(&d)?);
    } else {
        crate::out::print(&render(&d));
    }
    Ok(Exit::Ok)
}
