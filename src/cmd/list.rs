//! `fsbench list`: filesystems and their keys, workloads, presets, engines, metrics, formats,
//! from the tables, as text or JSON.

use super::Exit;
use crate::engine::ENGINES;
use crate::plan::spec::key_usage;
use crate::provision::FILESYSTEMS;
use crate::workload::presets::PRESETS;
use crate::workload::WORKLOADS;

fn render() -> String {
    let mut out = String::from("Filesystems (target spec: FS[:KEY[=VALUE],...]; every target also takes label=NAME and size=SIZE; a loop-image target also takes faulty and fail_writes_after=SIZE, which put it behind fsbench's fault device):\n");
    for d in FILESYSTEMS {
        out.push_str(&format!("\n  {:<7} {}\n", d.schema.name, d.summary));
        for k in d.schema.all_keys() {
            out.push_str(&format!("      {:<36} {}\n", key_usage(k), k.help));
        }
        if d.schema.extra_mkfs {
            out.push_str(&format!(
                "      {:<36} {}\n",
                "mkfs='ARGS'", "extra mkfs arguments, split on spaces"
            ));
        }
        if d.schema.extra_mount {
            out.push_str(&format!(
                "      {:<36} {}\n",
                "mount='OPTS'", "extra mount options, comma-separated"
            ));
        }
        if !d.axes.is_empty() {
            out.push_str(&format!(
                "      tune --axes tries                    {}\n",
                axes_text(d.axes)
            ));
        }
    }
    out.push_str("\nWorkloads (--workload NAME[:KEY=VALUE,...]):\n");
    for w in WORKLOADS {
        out.push_str(&format!("\n  {:<7} {}\n", w.name, w.summary));
        for (p, h) in w.params {
            out.push_str(&format!("      {p:<36} {h}\n"));
        }
    }
    for (tool, options) in crate::plan::hpc::tools() {
        out.push_str(&format!(
            "\n{tool}'s options (--workload '{tool}:...'; any other is refused by name):\n\n"
        ));
        for (names, help) in options {
            out.push_str(&format!("  {names:<36} {help}\n"));
        }
    }
    out.push_str("\nBlock presets (--workload NAME[:FIO_OPTION=VALUE,...]; `fsbench list --preset NAME` prints the fio job file each equals):\n\n");
    for p in PRESETS {
        out.push_str(&format!("  {:<11} {}\n", p.name, p.summary));
    }
    out.push_str("\nI/O engines (ioengine=NAME in block jobs):\n\n");
    for e in ENGINES {
        let avail = match (e.available)() {
            Ok(()) => String::new(),
            Err(why) => format!(" [not available here: {why}]"),
        };
        out.push_str(&format!("  {:<11} {}{avail}\n", e.name, e.summary));
    }
    out.push_str("\nReport formats (fsbench report DIR --format NAME):\n\n");
    for f in crate::report::formats::FORMATS {
        out.push_str(&format!("  {:<11} {}\n", f.name(), f.help()));
    }
    out.push_str("\nMetrics (records' `metrics`; * is min, mean, p50, p90, p99, p999 or max; docs/results-schema.md):\n\n");
    for e in crate::workload::catalog::all() {
        out.push_str(&format!(
            "  {:<26} {:<5} {:<7} {}{}\n",
            e.def.name,
            e.def.unit.symbol(),
            format!("{:?}", e.def.better).to_lowercase(),
            e.by.join(", "),
            if e.def.key { " (key)" } else { "" }
        ));
    }
    out
}

/// A filesystem's tune axes as a person reads them: `{data=ordered,data=writeback} x {...}`,
/// the default written as "default".
fn axes_text(axes: &[&[&str]]) -> String {
    axes.iter()
        .map(|a| {
            let alts: Vec<&str> = a
                .iter()
                .map(|x| if x.is_empty() { "default" } else { x })
                .collect();
            format!("{{{}}}", alts.join(", "))
        })
        .collect::<Vec<_>>()
        .join(" x ")
}

/// The fio job file a preset equals.
fn preset_jobfile(name: &str) -> Result<String, crate::plan::PlanError> {
    crate::workload::presets::find(name)
        .map(crate::workload::presets::to_fio)
        .ok_or_else(|| {
            let names: Vec<&str> = PRESETS.iter().map(|p| p.name).collect();
            format!("unknown preset '{name}': presets are {}", names.join(", ")).into()
        })
}

fn json_text() -> String {
    let fs: Vec<serde_json::Value> = FILESYSTEMS
        .iter()
        .map(|d| {
            serde_json::json!({
                "name": d.schema.name,
                "summary": d.summary,
                "keys": d.schema.all_keys().map(|k| serde_json::json!({"key": key_usage(k), "help": k.help})).collect::<Vec<_>>(),
                "extra_mkfs": d.schema.extra_mkfs,
                "extra_mount": d.schema.extra_mount,
                "tune_axes": d.axes,
            })
        })
        .collect();
    let wl: Vec<serde_json::Value> = WORKLOADS
        .iter()
        .map(|w| serde_json::json!({"name": w.name, "summary": w.summary, "params": w.params}))
        .collect();
    let presets: Vec<serde_json::Value> = PRESETS
        .iter()
        .map(|p| serde_json::json!({"name": p.name, "summary": p.summary, "why": p.why, "fio": crate::workload::presets::to_fio(p)}))
        .collect();
    let engines: Vec<serde_json::Value> = ENGINES
        .iter()
        .map(|e| serde_json::json!({"name": e.name, "summary": e.summary, "available": (e.available)().is_ok()}))
        .collect();
    let formats: Vec<serde_json::Value> = crate::report::formats::FORMATS
        .iter()
        .map(|f| serde_json::json!({"name": f.name(), "help": f.help()}))
        .collect();
    serde_json::to_string_pretty(&serde_json::json!({"filesystems": fs, "workloads": wl, "presets": presets, "engines": engines, "formats": formats, "metrics": crate::workload::catalog::all()}))
        .unwrap_or_default()
}

pub fn run(json: bool, preset: Option<&str>) -> anyhow::Result<Exit> {
    if let Some(name) = preset {
        crate::out::print(&preset_jobfile(name).map_err(anyhow::Error::msg)?);
    } else if json {
        crate::out::line(&json_text());
    } else {
        crate::out::print(&render());
    }
    Ok(Exit::Ok)
}
