//! fio's verify state (verify_state_save, verify_state_load): a writing job records how far it
//! wrote, so that a later verifying job (in this run or the next, as fio's pre and post jobs)
//! checks only what was written. The file has fio's name, `local-JOB-CLONE-verify.state`, in
//! the current directory as fio writes it; its contents are fsbench's own (the byte ranges the
//! writer completed, in the loop's offsets), not fio's binary layout, which fsbench refuses with
//! the reason.
//!
//! A state is read whole and checked before anything runs: a torn, edited or other job's state
//! would otherwise leave blocks unchecked (a range missing) or checked against nothing. Its
//! lines are never echoed: the file could be anything the job file's directory holds.

use crate::plan::units::Span;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use crate::plan::job::Job;
use crate::sys::outfile::{self, Create};

const HEADER: &str = "fsbench verify state 1";

/// fio's name for worker `clone`'s state file, in `dir` (fsbench passes the current directory,
/// where fio writes it).
pub fn path(dir: &Path, job: &Job, clone: u32) -> PathBuf {
    dir.join(format!("local-{}-{clone}-verify.state", job.name))
}

/// Whether a worker of `job` may save a state: verify_state_save on a job that writes (a
/// verify_only job reads; a replayed trace may write whatever the job's rw says).
pub fn saves(job: &Job) -> bool {
    let only = job.verify.as_ref().is_some_and(|v| v.only);
    job.verify_state_save && ((job.rw.writes() && !only) || job.replay.is_some())
}

/// The ranges `written` covers, sorted and merged.
pub fn ranges(written: &[(u64, u32)]) -> Vec<Span> {
    let mut r: Vec<Span> = written
        .iter()
        .map(|&(o, l)| Span::new(o, o + l as u64))
        .collect();
    r.sort_unstable();
    let mut out: Vec<Span> = Vec::with_capacity(r.len());
    for s in r {
        match out.last_mut() {
            Some(last) if s.start <= last.end => last.end = last.end.max(s.end),
            _ => out.push(s),
        }
    }
    out
}

/// The text of a state: what worker `clone` of job `name` wrote.
fn text(name: &str, clone: u32, written: &[(u64, u32)]) -> String {
    let r = ranges(written);
    let mut text = format!(
        "{HEADER}\njob {name}\nclone {clone}\nwrites {}\nranges {}\n",
        written.len(),
        r.len()
    );
    for s in &r {
        let _ = writeln!(text, "{} {}", s.start, s.len());
    }
    text
}

/// Writes worker `clone`'s state: what it wrote (never through a link, nor in a kernel
/// filesystem: `sys::outfile`).
pub fn save(dir: &Path, job: &Job, clone: u32, written: &[(u64, u32)]) -> Result<PathBuf, String> {
    let p = path(dir, job, clone);
    let mut f =
        outfile::create(&p, Create::Replace).map_err(|e| format!("verify_state_save: {e}"))?;
    f.write_all(text(&job.name, clone, written).as_bytes())
        .map_err(|e| format!("verify_state_save: writing {}: {e}", p.display()))?;
    Ok(p)
}

/// Why a state cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Bad {
    /// Not text: fio's own binary layout, or not a state at all.
    Foreign,
    /// Line `n` (from 1) is not what was expected there (said without the line itself).
    Line(usize, String),
}

/// The ranges a state's text lists, checked whole: the header; the job's name and worker; the
/// count of writes and of ranges; each range `START LENGTH` non-empty, ascending, apart from
/// the one before and inside `span` (the reader's offsets, [start, end)); as many ranges as
/// counted; nothing after them; the last line ended (a torn file is refused).
pub fn parse(bytes: &[u8], job: &str, clone: u32, span: Span) -> Result<Vec<Span>, Bad> {
    let text = std::str::from_utf8(bytes).map_err(|_| Bad::Foreign)?;
    let lines: Vec<&str> = text.split_terminator('\n').collect();
    let bad = |n: usize, what: String| Bad::Line(n, what);
    let head = |n: usize, want: String| -> Result<(), Bad> {
        match lines.get(n - 1) {
            Some(l) if *l == want => Ok(()),
            Some(_) => Err(bad(n, format!("expected '{want}'"))),
            None => Err(bad(n, format!("the file ends before '{want}'"))),
        }
    };
    head(1, HEADER.to_string())?;
    head(2, format!("job {job}"))?;
    head(3, format!("clone {clone}"))?;
    let count = |n: usize, key: &str| -> Result<u64, Bad> {
        let what = || format!("expected '{key} N' (a whole number)");
        let l = lines.get(n - 1).ok_or_else(|| bad(n, what()))?;
        l.strip_prefix(key)
            .and_then(|r| r.strip_prefix(' '))
            .and_then(number)
            .ok_or_else(|| bad(n, what()))
    };
    let writes = count(4, "writes")?;
    let nranges = count(5, "ranges")?;
    if nranges > writes {
        return Err(bad(5, "expected no more ranges than writes".into()));
    }
    let body = &lines[5..];
    if body.len() as u64 != nranges {
        return Err(bad(
            6 + body.len().min(nranges as usize),
            format!(
                "expected {nranges} range line(s) after line 5 as its 'ranges' line counts, and nothing after them"
            ),
        ));
    }
    let mut out = Vec::with_capacity(body.len());
    let mut prev = span.start;
    for (i, l) in body.iter().enumerate() {
        let n = i + 6;
        let expected = || bad(n, "expected 'START LENGTH' (two whole numbers)".into());
        let (s, len) = l.split_once(' ').ok_or_else(expected)?;
        let (s, len) = (
            number(s).ok_or_else(expected)?,
            number(len).ok_or_else(expected)?,
        );
        let e = s.checked_add(len).filter(|_| len > 0).ok_or_else(|| {
            bad(
                n,
                "expected a range of at least a byte that ends below 2^64".into(),
            )
        })?;
        if s < prev {
            return Err(bad(
                n,
                if i == 0 {
                    format!(
                        "expected a range from the job's region start (byte {}) on",
                        span.start
                    )
                } else {
                    "expected a range past the end of the one before (ranges ascend and do not touch)".into()
                },
            ));
        }
        if e > span.end {
            return Err(bad(
                n,
                format!(
                    "expected a range inside the job's region, which ends at byte {} (a state another size or offset= saved?)",
                    span.end
                ),
            ));
        }
        out.push(Span::new(s, e));
        prev = e.saturating_add(1);
    }
    if !text.ends_with('\n') {
        return Err(bad(
            lines.len(),
            "the line is not ended (a torn file)".into(),
        ));
    }
    Ok(out)
}

/// A whole number as `save` writes it: ASCII digits only.
fn number(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// Reads worker `clone`'s state: the ranges its writer completed, inside `span` (the reader's
/// offsets, [start, end)).
pub fn load(dir: &Path, job: &Job, clone: u32, span: Span) -> Result<Vec<Span>, String> {
    let p = path(dir, job, clone);
    let bytes = std::fs::read(&p).map_err(|e| {
        format!(
            "verify_state_load=1: {} cannot be read ({e}): run the writing job with verify_state_save=1 first, in this directory",
            p.display()
        )
    })?;
    parse(&bytes, &job.name, clone, span).map_err(|b| match b {
        Bad::Foreign => format!("verify_state_load=1: {} is not fsbench's verify state (a state file fio wrote is fio's binary layout, which fsbench does not read): write it with fsbench's verify_state_save=1, or run both jobs with fio", p.display()),
        Bad::Line(n, what) => format!(
            "verify_state_load=1: {} line {n}: {what}; the state is damaged (torn or edited) or not this worker's: run the writing job again with verify_state_save=1, or leave verify_state_load out to check every block read",
            p.display()
        ),
    })
}

#[cfg(test)]
mod tests;
