//! What the reader must know before trusting the tables, grouped: one line per kind of problem
//! that says what to do, with the figures it concerns kept as details (listed in report.md,
//! collapsed in the HTML, left out of the terminal). Pure.

use crate::store::note;
use serde::Serialize;

use super::stats::NOISY_CV;
use super::summary::{is_key, Row};
use crate::store::{Outcome, Record};

#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Warning {
    /// One line: what is wrong and what to do.
    pub(crate) text: String,
    /// The figures it concerns, one per line (may be empty).
    pub(crate) details: Vec<String>,
}

impl Warning {
    pub(crate) fn line(text: impl Into<String>) -> Warning {
        Warning {
            text: text.into(),
            details: Vec::new(),
        }
    }
}

/// "ext4 SEQ1M_Q8T1-read": a record's target and test.
fn name(r: &Record) -> String {
    format!("{} {}", r.target, r.test)
}

/// The study's warnings: the manifest's own (options the kernel changed, targets skipped), then
/// reads from the page cache, too few repeats, noisy figures and skipped tests.
pub(crate) fn build(records: &[Record], rows: &[Row], manifest: &[String]) -> Vec<Warning> {
    // Studies written before warnings were grouped kept the computed ones in their manifest too.
    let computed = ["noisy (coefficient", "page cache: reads", "repeat(s) only"];
    let mut out: Vec<Warning> = Vec::new();
    // (A target skipped in each repeat is said once.)
    for w in manifest
        .iter()
        .filter(|w| !computed.iter().any(|c| w.contains(c)))
    {
        if !out.iter().any(|x| &x.text == w) {
            out.push(Warning::line(w));
        }
    }
    // A target that ran out of room is said first: its figures stop where the room did.
    if let Some(w) = out_of_room(records) {
        out.insert(0, w);
    }
    out.extend(profiled(records));
    let less: Vec<String> = records
        .iter()
        .filter(|r| r.outcome == Outcome::Ok)
        .filter_map(|r| {
            r.less_work()
                .map(|n| format!("{}: {}", name(r), note::text(n)))
        })
        .collect();
    if !less.is_empty() {
        let inodes = less.iter().any(|l| l.contains("inodes"));
        let fix = if inodes {
            "give the filesystem more inodes (ext4:inodes=N, or a larger --size) or ask for fewer files"
        } else {
            "give it more room (--size), or resume the study to measure it anew"
        };
        out.insert(
            0,
            Warning {
                text: format!(
                    "{} record(s) did less work than asked (marked ! in the tables, not comparable with the others): {fix}; the list is in report.md",
                    less.len()
                ),
                details: less,
            },
        );
    }
    let mut cached: Vec<String> = Vec::new();
    for r in records {
        if note::has(&r.notes, note::Kind::PageCache) && !cached.contains(&name(r)) {
            cached.push(name(r));
        }
    }
    if !cached.is_empty() {
        out.push(Warning {
            text: format!(
                "{} result(s) may have read from the page cache, not the device (data smaller than RAM, tmpfs, or caches not dropped): use a --file-size above RAM or direct I/O; the list is in report.md",
                cached.len()
            ),
            details: cached,
        });
    }
    if let Some((text, details)) = super::overtime::warning(records) {
        out.push(Warning { text, details });
    }
    let max_n = rows.iter().map(|r| r.summary.n).max().unwrap_or(0);
    if max_n > 0 && max_n < 3 {
        out.push(Warning::line(format!(
            "{max_n} repeat(s) only: confidence intervals and significance need at least 3 (--repeat 3)"
        )));
    }
    let key: Vec<&Row> = rows.iter().filter(|r| is_key(&r.metric)).collect();
    let noisy: Vec<String> = key
        .iter()
        .filter(|r| r.noisy)
        .map(|r| {
            format!(
                "{} {} {} (CV {:.0}%)",
                r.target,
                r.test,
                r.metric,
                r.summary.cv * 100.0
            )
        })
        .collect();
    if !noisy.is_empty() {
        out.push(Warning {
            text: format!(
                "{} of {} figures vary more than {:.0}% between repeats (this machine is noisy): use --repeat 5 or a longer --runtime; the list is in report.md",
                noisy.len(),
                key.len(),
                NOISY_CV * 100.0
            ),
            details: noisy,
        });
    }
    let mut skipped: Vec<(String, Vec<String>)> = Vec::new();
    for r in records.iter().filter(|r| r.outcome == Outcome::Skipped) {
        let reason = r.reason.as_deref().unwrap_or("no reason given");
        // The manifest already says why a target was skipped; say it once.
        if out.iter().any(|x| x.text.contains(reason)) {
            continue;
        }
        match skipped.iter_mut().find(|s| s.0 == reason) {
            Some(s) if !s.1.contains(&name(r)) => s.1.push(name(r)),
            Some(_) => {}
            None => skipped.push((reason.to_string(), vec![name(r)])),
        }
    }
    for (reason, which) in skipped {
        out.push(Warning {
            text: format!("skipped ({}): {reason}", which.join(", ")),
            details: Vec::new(),
        });
    }
    out
}

/// The warnings as text: each line, and in Markdown each detail under it.
pub(crate) fn text(w: &[Warning], markdown: bool) -> String {
    if w.is_empty() {
        return String::new();
    }
    let mut out = String::from(if markdown {
        "## Warnings\n\n"
    } else {
        "Warnings:\n"
    });
    for x in w {
        out.push_str(&format!("- {}\n", x.text));
        if markdown {
            for d in &x.details {
                out.push_str(&format!("  - {d}\n"));
            }
        }
    }
    out.push('\n');
    out
}

/// Records measured while profiled on a per-thread cpu-clock (`--profile` where the tick cannot
/// be sampled): that clock costs each profiled thread at every context switch, so their figures
/// compare with such runs only. (On the tick a profile keeps the run's rate.)
fn profiled(records: &[Record]) -> Option<Warning> {
    use crate::profile::record::Clock;
    let with: Vec<String> = records
        .iter()
        .filter(|r| r.outcome == Outcome::Ok)
        .filter(|r| {
            r.profile
                .as_ref()
                .is_some_and(|p| p.clock == Clock::CpuClock && p.on_cpu.is_some())
        })
        .map(name)
        .collect();
    (!with.is_empty()).then(|| Warning {
        text: format!(
            "{} record(s) were measured while profiled on a per-thread cpu-clock (--profile, where the timer tick could not be sampled), which costs a switch-heavy job up to a fifth of its rate: compare them with runs profiled the same way (docs/profiles.md, \"Cost\")",
            with.len()
        ),
        details: with,
    })
}

/// The records that failed for want of space (ENOSPC, EDQUOT), each with the room its target had
/// when it failed: one warning that says so plainly.
fn out_of_room(records: &[Record]) -> Option<Warning> {
    use crate::plan::units::format_bytes;
    let full: Vec<String> = records
        .iter()
        .filter(|r| r.outcome == Outcome::Failed)
        .filter_map(|r| {
            let f = r.failure.as_ref()?;
            matches!(f.errno.as_deref(), Some("ENOSPC") | Some("EDQUOT")).then(|| {
                let total = f.space.get("bytes_total").copied();
                let avail = f.space.get("bytes_avail").copied();
                format!(
                    "{} {} (repeat {}): {} failed with {}{}",
                    r.target,
                    r.test,
                    r.repeat + 1,
                    f.op,
                    f.errno.as_deref().unwrap_or_default(),
                    match (total, avail) {
                        (Some(t), Some(a)) => format!(
                            "; the target had {} in all, {} available when it failed",
                            format_bytes(t),
                            format_bytes(a)
                        ),
                        _ => String::new(),
                    }
                )
            })
        })
        .collect();
    let first = full.first()?.clone();
    Some(Warning {
        text: format!(
            "{} record(s) ran out of room on their target ({first}): give the target more room (--size; `--check` judges the space a plan needs before the run, rewrites on copy-on-write filesystems counted twice)",
            full.len()
        ),
        details: full,
    })
}
