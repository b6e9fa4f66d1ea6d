//! fio's log files of a block job (`write_bw_log` and its companions), named and placed as fio
//! does: `PREFIX_bw.N.log` (N: the worker's number in the job file, from 1; no `.N` with
//! `per_job_logs=0`, every worker appending to one file), relative paths from the current
//! directory. The lines are the loop's (`io::fiolog`); this writes them (through `sys::outfile`:
//! never through a link, nor in /proc, /sys or /dev) and checks, before anything runs, that every
//! file a job writes (its verify state too) may and can be written.

use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::frame::RunError;
use crate::io::fiolog::LogBook;
use crate::plan::job::{FioLogs, Job};
use crate::sys::outfile::{self, Create};

/// A log's option, its file's kind and the text it holds.
type Kind = (&'static str, &'static str);

/// Every file a job's worker number `n` writes: (the option, the path, which text).
fn files(job: &Job, logs: &FioLogs, n: usize) -> Vec<(Kind, PathBuf)> {
    let mut out = Vec::new();
    let name = |prefix: &str, kind: &str| {
        let prefix = if prefix.is_empty() { &job.name } else { prefix };
        PathBuf::from(if logs.per_job {
            format!("{prefix}_{kind}.{n}.log")
        } else {
            format!("{prefix}_{kind}.log")
        })
    };
    let mut add = |opt: &'static str, prefix: &Option<String>, kinds: &[&'static str]| {
        if let Some(p) = prefix {
            for k in kinds {
                out.push(((opt, *k), name(p, k)));
            }
        }
    };
    add("write_bw_log", &logs.bw, &["bw"]);
    add("write_iops_log", &logs.iops, &["iops"]);
    add("write_lat_log", &logs.lat, &["lat", "clat", "slat"]);
    add("write_hist_log", &logs.hist, &["clat_hist"]);
    out
}

/// The text of one kind of log.
fn text<'a>(book: &'a LogBook, kind: &str) -> &'a str {
    match kind {
        "bw" => &book.text.bw,
        "iops" => &book.text.iops,
        "lat" => &book.text.lat,
        // Timed apart (the asynchronous engines): fio's completion and submission latency.
        // Otherwise an I/O is timed from its queueing to its completion, and the sync engines
        // leave slat empty, as fio's do.
        "clat" if book.text.split => &book.text.clat,
        "clat" => &book.text.lat,
        "slat" => &book.text.slat,
        "clat_hist" => &book.text.hist,
        _ => "",
    }
}

/// The iolog worker `clone` of a job records to (fio's write_iolog; a clone after the first
/// writes NAME.CLONE).
pub fn record_of(job: &Job, clone: u32) -> Option<PathBuf> {
    let name = job.write_iolog.as_deref()?;
    Some(PathBuf::from(if clone == 0 {
        name.to_string()
    } else {
        format!("{name}.{clone}")
    }))
}

/// Refuses, before anything runs, a file a job would write (its logs, its iologs, its verify
/// state) whose directory does not exist or cannot be written, that is a symbolic link or not a
/// regular file, or that lies in a kernel filesystem (/proc, /sys, /dev): `sys::outfile`'s
/// rules. `numjobs` per job gives each worker its number.
pub fn check(jobs: &[Job]) -> Result<(), RunError> {
    let mut n = 0;
    for job in jobs {
        for clone in 0..job.numjobs.max(1) {
            n += 1;
            if let Some(path) = record_of(job, clone) {
                writable(&path).map_err(|why| {
                    RunError::Invalid(format!(
                        "job '{}': write_iolog: {why}; give write_iolog a file in a directory that exists and that you may write to",
                        job.name,
                    ))
                })?;
            }
            if super::vstate::saves(job) {
                let path = super::vstate::path(Path::new("."), job, clone);
                writable(&path).map_err(|why| {
                    RunError::Invalid(format!(
                        "job '{}': verify_state_save=1: the state file {why}; run the job in a directory where that name is free for a regular file, or leave verify_state_save out",
                        job.name,
                    ))
                })?;
            }
            if job
                .logs
                .as_ref()
                .is_some_and(|l| l.issue_time && !(l.lat.is_some() && l.offset))
            {
                return Err(RunError::Invalid(format!("job '{}': log_issue_time needs write_lat_log and log_offset (as in fio): add them, or leave log_issue_time out", job.name)));
            }
            let Some(logs) = job.logs.as_ref().filter(|l| l.any()) else {
                continue;
            };
            for ((opt, _), path) in files(job, logs, n) {
                writable(&path).map_err(|why| {
                    RunError::Invalid(format!(
                        "job '{}': {opt}: the log file {why}; give {opt} a prefix in a directory that exists and that you may write to (e.g. {opt}=/tmp/{})",
                        job.name,
                        path.file_name().map_or(String::new(), |f| f.to_string_lossy().split('_').next().unwrap_or("").to_string())
                    ))
                })?;
            }
        }
    }
    Ok(())
}

/// Whether the file may be written (`sys::outfile::check`: its directory exists, and it is no
/// link, special file or kernel file) and can be (the file, or when it does not exist yet its
/// directory, is writable). Nothing is opened or created. The reason starts with the path.
fn writable(path: &Path) -> Result<(), String> {
    crate::sys::outfile::check(path).map_err(|e| e.to_string())?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let cannot = |e| format!("{} cannot be written: {e}", path.display());
    match path.symlink_metadata() {
        Ok(_) => crate::sys::may_write(path).map_err(cannot),
        Err(_) => crate::sys::may_write(dir).map_err(|e| {
            format!(
                "{} cannot be written: its directory {}: {e}",
                path.display(),
                dir.display()
            )
        }),
    }
}

/// Writes worker `clone`'s recorded I/O (write_iolog): never through a link, nor in a kernel
/// filesystem (`sys::outfile`).
pub fn write_iolog(job: &Job, clone: u32, text: &str) -> Result<(), String> {
    let Some(path) = record_of(job, clone) else {
        return Ok(());
    };
    write_file("write_iolog", &path, Create::Replace, text)
}

/// Writes `text` to a file a job's option `opt` names, opened as `how` says through
/// `sys::outfile` (whose errors name the path).
pub fn write_file(opt: &str, path: &Path, how: Create, text: &str) -> Result<(), String> {
    let mut f = outfile::create(path, how).map_err(|e| format!("{opt}: {e}"))?;
    f.write_all(text.as_bytes())
        .map_err(|e| format!("{opt}: writing {}: {e}", path.display()))
}

/// Writes the workers' logs: a file of its own per worker, or (per_job_logs=0) the first
/// worker to write a name truncates it and the others append.
#[derive(Default)]
pub struct Writer {
    started: Mutex<HashSet<PathBuf>>,
}

impl Writer {
    /// Worker `n`'s (from 1) logs.
    pub fn write(&self, job: &Job, n: usize, book: &LogBook) -> Result<(), String> {
        let Some(logs) = job.logs.as_ref() else {
            return Ok(());
        };
        let mut started = self.started.lock().unwrap_or_else(|e| e.into_inner());
        for ((opt, kind), path) in files(job, logs, n) {
            let how = if started.insert(path.clone()) {
                Create::Replace
            } else {
                Create::Append
            };
            write_file(opt, &path, how, text(book, kind))?;
        }
        Ok(())
    }
}
