//! The folded stacks of a study's profiles read back onto its records (the report's flame
//! graphs), each from the file its record names in the study's `profiles/`, opened without
//! following a link; a name that is not a plain file name there is not read.

use std::path::Path;

use super::Record;
use crate::profile::folded::{Folded, Kind};
use crate::profile::record::DIR;

/// Reads the stacks of every profile that has none in memory; returns what could not be read
/// (a line each, naming the file, never its content).
pub fn attach_profiles(dir: &Path, records: &mut [Record]) -> Vec<String> {
    let mut problems = Vec::new();
    let folder = crate::sys::dirfd::Dir::open_nofollow(&dir.join(DIR)).ok();
    for r in records.iter_mut() {
        let Some(p) = r.profile.as_mut() else {
            continue;
        };
        for kind in Kind::ALL {
            let Some(s) = p.get_mut(kind) else { continue };
            if s.folded.is_some() {
                continue;
            }
            let name = s.file.strip_prefix(&format!("{DIR}/")).unwrap_or("");
            let plain = !name.is_empty() && !name.contains('/') && !name.starts_with('.');
            let text = match (&folder, plain) {
                (Some(f), true) => f.open_read_nofollow(name).and_then(|mut h| {
                    let mut t = String::new();
                    std::io::Read::read_to_string(&mut h, &mut t).map(|_| t)
                }),
                _ => Err(std::io::Error::from(std::io::ErrorKind::NotFound)),
            };
            match text {
                Ok(t) => {
                    let (f, bad) = Folded::parse(&t);
                    if bad > 0 {
                        problems.push(format!(
                            "{}: {bad} lines are not folded stacks (frames and a count); left out",
                            s.file
                        ));
                    }
                    s.folded = Some(f);
                }
                Err(e) => problems.push(format!(
                    "{}: cannot be read ({e}): its flame graph is left out",
                    s.file
                )),
            }
        }
    }
    problems
}
