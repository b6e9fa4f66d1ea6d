//! fio's verify state (verify_state_save, verify_state_load): a writing job records how far it
//! wrote, so that a later verifying job (in this run or the next, as fio's pre and post jobs)
//! checks only what was written. The file has fio's name, `local-JOB-CLONE-verify.state`, in
//! the current directory as fio writes it; its contents are fsbench's own (the byte ranges the
//! writer completed, in the loop's offsets), not fio's binary layout, which fsbench refuses with
//! the reason.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::plan::job::Job;

const HEADER: &str = "fsbench verify state 1";

/// fio's name for worker `clone`'s state file, in `dir` (fsbench passes the current directory,
/// where fio writes it).
pub fn path(dir: &Path, job: &Job, clone: u32) -> PathBuf {
    dir.join(format!("local-{}-{clone}-verify.state", job.name))
}

/// The ranges `written` covers, sorted and merged: [start, end).
pub fn ranges(written: &[(u64, u32)]) -> Vec<(u64, u64)> {
    let mut r: Vec<(u64, u64)> = written.iter().map(|&(o, l)| (o, o + l as u64)).collect();
    r.sort_unstable();
    let mut out: Vec<(u64, u64)> = Vec::with_capacity(r.len());
    for (s, e) in r {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

/// Writes worker `clone`'s state: what it wrote.
pub fn save(dir: &Path, job: &Job, clone: u32, written: &[(u64, u32)]) -> Result<PathBuf, String> {
    let p = path(dir, job, clone);
    let r = ranges(written);
    let mut text = format!(
        "{HEADER}\njob {}\nclone {clone}\nwrites {}\nranges {}\n",
        job.name,
        written.len(),
        r.len()
    );
    for (s, e) in &r {
        let _ = writeln!(text, "{s} {}", e - s);
    }
    std::fs::write(&p, text)
        .map_err(|e| format!("verify_state_save: writing {}: {e}", p.display()))?;
    Ok(p)
}

/// Reads worker `clone`'s state: the ranges its writer completed.
pub fn load(dir: &Path, job: &Job, clone: u32) -> Result<Vec<(u64, u64)>, String> {
    let p = path(dir, job, clone);
    let bytes = std::fs::read(&p).map_err(|e| {
        format!(
            "verify_state_load=1: {} cannot be read ({e}): run the writing job with verify_state_save=1 first, in this directory",
            p.display()
        )
    })?;
    let Ok(text) = std::str::from_utf8(&bytes) else {
        return Err(format!("verify_state_load=1: {} is not fsbench's verify state (a state file fio wrote is fio's binary layout, which fsbench does not read): write it with fsbench's verify_state_save=1, or run both jobs with fio", p.display()));
    };
    let mut lines = text.lines();
    if lines.next() != Some(HEADER) {
        return Err(format!(
            "verify_state_load=1: {} is not fsbench's verify state (its first line is not '{HEADER}')",
            p.display()
        ));
    }
    let mut out = Vec::new();
    for (n, line) in lines.enumerate() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() == 2 && f[0].bytes().all(|b| b.is_ascii_digit()) {
            let bad = || {
                format!(
                    "verify_state_load=1: {} line {}: expected 'START LENGTH'",
                    p.display(),
                    n + 2
                )
            };
            let s: u64 = f[0].parse().map_err(|_| bad())?;
            let l: u64 = f[1].parse().map_err(|_| bad())?;
            out.push((s, s + l));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::verify::covered;

    #[test]
    fn writes_merge_into_ranges_and_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let job = Job {
            name: "j".into(),
            ..Job::default()
        };
        let written = [(8192, 4096), (0, 4096), (4096, 4096), (65536, 4096)];
        let r = ranges(&written);
        assert_eq!(r, [(0, 12288), (65536, 69632)]);
        assert!(covered(&r, 4096, 4096));
        assert!(covered(&r, 65536, 4096));
        assert!(!covered(&r, 12288, 4096), "past the first range");
        assert!(!covered(&r, 8192, 8192), "across its end");
        let d = dir.path();
        let saved = save(d, &job, 0, &written).unwrap();
        assert_eq!(saved, d.join("local-j-0-verify.state"));
        assert_eq!(load(d, &job, 0).unwrap(), r);
        assert!(load(d, &job, 1)
            .unwrap_err()
            .contains("verify_state_save=1 first"));
        std::fs::write(path(d, &job, 2), [7u8, 0, 0, 0, 0xff, 0xfe]).unwrap();
        let foreign = load(d, &job, 2);
        assert!(foreign.unwrap_err().contains("fio's binary layout"));
    }
}
