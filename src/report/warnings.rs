//! What the reader must know before trusting the tables, grouped: one line per kind of problem
//! that says what to do, with the figures it concerns kept as details (listed in report.md,
//! collapsed in the HTML, left out of the terminal). Pure.

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
    let mut out: Vec<Warning> = manifest
        .iter()
        .filter(|w| !computed.iter().any(|c| w.contains(c)))
        .map(Warning::line)
        .collect();
    let mut cached: Vec<String> = Vec::new();
    for r in records {
        if r.notes.iter().any(|n| n.starts_with("page_cache")) && !cached.contains(&name(r)) {
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
