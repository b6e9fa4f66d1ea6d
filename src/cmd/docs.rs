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
/// fsbench-targets.5. Each page is written whole or not at all (a temporary file, renamed over
/// the page once complete, removed when a write fails: a full disk leaves no partial page), and
/// never through a link or in the kernel's directories (`sys::outfile`).
pub fn man(dir: &Path) -> anyhow::Result<Exit> {
    match std::fs::metadata(dir) {
        Ok(m) if !m.is_dir() => anyhow::bail!(
            "{}: not a directory: give the directory the man pages go in (made when missing), e.g. fsbench man ./man",
            dir.display()
        ),
        Ok(_) => {}
        Err(_) => {
            // (Not made in the kernel's directories: /dev/shm/man is refused like /dev/shm.)
            let existing = dir.ancestors().find(|a| a.exists()).unwrap_or(Path::new("."));
            if let Some(why) = crate::sys::outfile::kernel_dir(existing) {
                anyhow::bail!(
                    "{}: {why}: fsbench writes no file there (choose a directory on a data filesystem)",
                    dir.display()
                );
            }
            std::fs::create_dir_all(dir)
                .map_err(|e| anyhow::anyhow!("{}: cannot create it ({e})", dir.display()))?
        }
    }
    let mut cmd = Cli::command().disable_help_subcommand(true);
    cmd.build();
    let mut pages = Vec::new();
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let name = format!("fsbench-{}", sub.get_name());
        pages.push((format!("{name}.1"), page(sub.clone().name(&name), &name)?));
    }
    pages.push(("fsbench.1".into(), page(cmd.clone(), "fsbench")?));
    pages.push(("fsbench-targets.5".into(), targets_page().into_bytes()));
    for (name, bytes) in &pages {
        write_whole(&dir.join(name), bytes)?;
        crate::out::line(&dir.join(name).display().to_string());
    }
    Ok(Exit::Ok)
}

/// `bytes` at `path`, whole or not at all.
fn write_whole(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    use crate::sys::outfile::{self, Create};
    let failed = |e: std::io::Error| {
        anyhow::anyhow!(
            "{}: not written ({e}); the pages listed before it are whole",
            path.display()
        )
    };
    // (A page that is a link or a directory is refused before anything is written.)
    outfile::check(path).map_err(failed)?;
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let tmp = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    let mut f = outfile::create(&tmp, Create::New).map_err(failed)?;
    // (From here the temporary file is ours: removed when it cannot become the page.)
    let done = f
        .write_all(bytes)
        .and_then(|_| f.sync_all())
        .and_then(|_| std::fs::rename(&tmp, path));
    done.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        failed(e)
    })
}
