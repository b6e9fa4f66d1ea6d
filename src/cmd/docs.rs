//! `fsbench completions SHELL` and `fsbench man DIR`: shell completions and man pages generated
//! from the clap definitions (the same text as `--help`), and `fsbench-targets(5)`, the target and
//! workload spec syntax, from the same tables `fsbench list` prints, so none of them can drift.

use std::io::Write;
use std::path::Path;

use clap::CommandFactory;
use clap_mangen::roff::{roman, Roff};

use super::Exit;
use crate::cli::Cli;

/// The exit statuses every page lists.
const EXIT_STATUS: &[(&str, &str)] = &[
    ("0", "everything ran"),
    (
        "1",
        "a check failed (a verification, an integrity count, a failed phase)",
    ),
    (
        "2",
        "a usage or environment error (the message says what to fix); nothing was destroyed",
    ),
    (
        "3",
        "teardown or cleanup could not remove everything (listed above it)",
    ),
    (
        "129, 130, 143",
        "stopped by SIGHUP (a closed terminal), SIGINT or SIGTERM: results kept, targets torn down",
    ),
];

pub fn completions(shell: clap_complete::Shell) -> anyhow::Result<Exit> {
    let mut cmd = Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut cmd, "fsbench", &mut out);
    crate::out::print(&String::from_utf8_lossy(&out));
    Ok(Exit::Ok)
}

/// A man page: clap's rendering of `cmd`, then EXIT STATUS and SEE ALSO.
fn page(cmd: clap::Command, name: &str) -> anyhow::Result<Vec<u8>> {
    let man = clap_mangen::Man::new(cmd)
        .title(name.to_ascii_uppercase())
        .source(format!("fsbench {}", env!("CARGO_PKG_VERSION")))
        .manual("fsbench manual");
    let mut out = Vec::new();
    man.render(&mut out)?;
    let mut r = Roff::default();
    r.control("SH", ["EXIT STATUS"]);
    for (code, what) in EXIT_STATUS {
        r.control("TP", [])
            .text([roman(*code)])
            .text([roman(*what)]);
    }
    r.control("SH", ["SEE ALSO"]);
    r.text([roman(
        "fsbench(1), fsbench-targets(5), and the README and docs/ of fsbench's source (results-schema.md: the study directory's format)",
    )]);
    out.extend(r.render().into_bytes());
    Ok(out)
}

/// fsbench-targets(5): filesystems with their keys, workloads with their parameters, presets.
fn targets_page() -> String {
    use crate::plan::spec::key_usage;
    let mut r = Roff::default();
    r.control(
        "TH",
        [
            "FSBENCH-TARGETS",
            "5",
            "",
            &format!("fsbench {}", env!("CARGO_PKG_VERSION")),
            "fsbench manual",
        ],
    );
    r.control("SH", ["NAME"]);
    r.text([roman(
        "fsbench-targets - the target and workload specs fsbench takes",
    )]);
    r.control("SH", ["SYNOPSIS"]);
    r.text([roman("FS[:KEY[=VALUE],...]    WORKLOAD[:KEY=VALUE,...]")]);
    r.control("SH", ["DESCRIPTION"]);
    r.text([roman("A target is a filesystem fsbench provisions (or a directory it is given) with its options as data; every target also takes label=NAME and size=SIZE, and a loop-image target faulty and fail_writes_after=SIZE. An unknown key is an error that lists the valid ones.")]);
    r.control("SH", ["FILESYSTEMS"]);
    for d in crate::provision::FILESYSTEMS {
        r.control("SS", [d.schema.name]);
        r.text([roman(d.summary)]);
        for k in d.schema.all_keys() {
            r.control("TP", [])
                .text([roman(key_usage(k))])
                .text([roman(k.help)]);
        }
        if d.schema.extra_mkfs {
            r.control("TP", [])
                .text([roman("mkfs='ARGS'")])
                .text([roman(
                    "extra mkfs arguments, split on spaces (never a device or a file: refused)",
                )]);
        }
        if d.schema.extra_mount {
            r.control("TP", [])
                .text([roman("mount='OPTS'")])
                .text([roman("extra mount options, comma-separated")]);
        }
    }
    r.control("SH", ["WORKLOADS"]);
    for w in crate::workload::WORKLOADS {
        r.control("SS", [w.name]);
        r.text([roman(w.summary)]);
        for (p, h) in w.params {
            r.control("TP", []).text([roman(*p)]).text([roman(*h)]);
        }
    }
    r.control("SH", ["BLOCK PRESETS"]);
    for p in crate::workload::presets::PRESETS {
        r.control("TP", [])
            .text([roman(p.name)])
            .text([roman(p.summary)]);
    }
    r.control("SH", ["SEE ALSO"]);
    r.text([roman("fsbench(1), fsbench-compare(1), fsbench-list(1)")]);
    r.render()
}

/// Every man page into `dir`: fsbench.1, fsbench-SUBCOMMAND.1 for each (visible) subcommand,
/// fsbench-targets.5.
pub fn man(dir: &Path) -> anyhow::Result<Exit> {
    std::fs::create_dir_all(dir)
        .map_err(|e| anyhow::anyhow!("{}: cannot create it ({e})", dir.display()))?;
    let mut cmd = Cli::command().disable_help_subcommand(true);
    cmd.build();
    let mut written = Vec::new();
    let mut write = |name: String, bytes: Vec<u8>| -> anyhow::Result<()> {
        let path = dir.join(&name);
        std::fs::File::create(&path)
            .and_then(|mut f| f.write_all(&bytes))
            .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        written.push(name);
        Ok(())
    };
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let name = format!("fsbench-{}", sub.get_name());
        write(format!("{name}.1"), page(sub.clone().name(&name), &name)?)?;
    }
    write("fsbench.1".into(), page(cmd.clone(), "fsbench")?)?;
    write("fsbench-targets.5".into(), targets_page().into_bytes())?;
    for w in &written {
        crate::out::line(&dir.join(w).display().to_string());
    }
    Ok(Exit::Ok)
}
