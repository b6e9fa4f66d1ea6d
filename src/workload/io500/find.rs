//! io500's find phase, fsbench's own: a walk of the tree the write phases made, matching io500's
//! criteria (pfind's `-newer timestampfile -size 3901c -name "*01*"`): the name holds "01", the
//! file is 3,901 bytes and was modified after the timestamp file. Its rate is io500's: the items
//! scanned over the walk's time. A name is tested first and only a name that matches is
//! stat'ed (lstat: links are never followed); each rank walks the run directory's entries
//! dealt to it by index.

use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime};

use crate::frame::{
    CachePolicy, Empty, Merged, Phase, PhaseSpec, RunError, Session, TargetCtx, WorkerCtx,
    WorkerOut,
};
use crate::metrics::name as metric;

/// What a file must be to be found.
#[derive(Debug, Clone)]
pub struct Criteria {
    pub name_holds: &'static str,
    pub size: u64,
    pub newer: SystemTime,
}

impl Criteria {
    pub fn io500(newer: SystemTime) -> Criteria {
        Criteria {
            name_holds: "01",
            size: 3901,
            newer,
        }
    }

    pub fn name(&self, name: &str) -> bool {
        name.contains(self.name_holds)
    }

    pub fn file(&self, m: &std::fs::Metadata) -> bool {
        m.is_file() && m.len() == self.size && m.modified().is_ok_and(|t| t > self.newer)
    }
}

/// What a walk saw.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Tally {
    pub scanned: u64,
    pub found: u64,
}

/// Walks `dir` (its entries, recursively; directories by their entry's type, never through a
/// link), counting every entry scanned and every file the criteria match.
pub fn walk(
    dir: &Path,
    c: &Criteria,
    t: &mut Tally,
    progress: &crate::metrics::progress::Progress,
) -> std::io::Result<()> {
    for e in std::fs::read_dir(dir)? {
        visit(&e?, c, t, progress)?;
    }
    Ok(())
}

/// One entry: counted, walked into when a directory, matched when not.
fn visit(
    e: &std::fs::DirEntry,
    c: &Criteria,
    t: &mut Tally,
    progress: &crate::metrics::progress::Progress,
) -> std::io::Result<()> {
    t.scanned += 1;
    progress.add(1, 0);
    if e.file_type()?.is_dir() {
        walk(&e.path(), c, t, progress)?;
    } else if c.name(&e.file_name().to_string_lossy()) && c.file(&e.metadata()?) {
        t.found += 1;
    }
    Ok(())
}

pub struct FindSession {
    root: PathBuf,
    stamp: PathBuf,
    rank: usize,
    ranks: usize,
    specs: Vec<PhaseSpec>,
}

impl FindSession {
    pub fn new(t: &TargetCtx, dir: &Path) -> FindSession {
        FindSession {
            root: dir.join(super::phases::DIR),
            stamp: dir.join(super::phases::TIMESTAMP),
            rank: t.ranks.rank.index,
            ranks: t.ranks.rank.size.max(1),
            specs: vec![PhaseSpec {
                name: "find".into(),
                does: "io500's find: the run's tree walked, files matched by name, size, age"
                    .into(),
                cache: CachePolicy::Keep,
                workers: 1,
                unit: "items",
                empty: Empty::Fails,
                ..Default::default()
            }],
        }
    }

    /// This rank's share: the run directory's entries dealt by index.
    fn share(&self, c: &Criteria, t: &mut Tally, ctx: &WorkerCtx) -> std::io::Result<()> {
        let mut top: Vec<std::fs::DirEntry> =
            std::fs::read_dir(&self.root)?.collect::<Result<_, _>>()?;
        top.sort_by_key(|e| e.file_name());
        for e in top.iter().skip(self.rank).step_by(self.ranks) {
            visit(e, c, t, ctx.progress)?;
        }
        Ok(())
    }
}

impl Session for FindSession {
    fn phases(&self) -> &[PhaseSpec] {
        &self.specs
    }

    fn work(&self, _phase: usize, ctx: &WorkerCtx) -> WorkerOut {
        let newer = std::fs::symlink_metadata(&self.stamp).and_then(|m| m.modified());
        let mut t = Tally::default();
        ctx.start_line();
        let t0 = Instant::now();
        let walked = newer.and_then(|n| self.share(&Criteria::io500(n), &mut t, ctx));
        let t1 = Instant::now();
        let mut out = WorkerOut::default();
        if let Err(e) = walked {
            out.error = Some(format!("find {}: {e}", self.root.display()));
            out.failure = Some(crate::io::Failure::io("find", &e).path(&self.root));
        }
        out.spans.insert("walk", ctx.span(t0, t1));
        out.counters.insert("items", t.scanned as f64);
        out.counters.insert("found", t.found as f64);
        out.window = t1 - t0;
        out
    }

    fn finish(&mut self, _phase: usize, m: &Merged) -> Result<Vec<Phase>, RunError> {
        let part = &m.parts[0];
        let secs = part.spans.get("walk").map_or(0.0, |s| s.secs()).max(1e-9);
        let items = part.counter("items");
        let mut mt = std::collections::BTreeMap::new();
        mt.insert(metric::OPS_PER_SEC.to_string(), items / secs);
        mt.insert("items".into(), items);
        mt.insert("found".into(), part.counter("found"));
        mt.insert(metric::RUNTIME_S.into(), secs);
        Ok(vec![Phase {
            test: "find".into(),
            duration_s: secs,
            error: part.error.clone(),
            metrics: mt,
            config: Some(serde_json::json!({
                "tool": "find",
                "dir": super::phases::DIR,
                "newer": super::phases::TIMESTAMP,
                "size": 3901,
                "name": "*01*",
                "ranks": self.ranks,
            })),
            ..Default::default()
        }])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn io500s_criteria_name_size_and_age() {
        let d = tempfile::tempdir().unwrap();
        let old = SystemTime::now() - Duration::from_secs(3600);
        let c = Criteria::io500(old);
        std::fs::create_dir(d.path().join("sub")).unwrap();
        for (name, len) in [
            ("file.mdtest.0.101", 3901),
            ("sub/file.mdtest.0.2010", 3901),
            ("file.mdtest.0.7", 3901),
            ("file.mdtest.0.01x", 3900),
        ] {
            std::fs::write(d.path().join(name), vec![1u8; len]).unwrap();
        }
        let tally = |c: &Criteria| {
            let mut t = Tally::default();
            walk(d.path(), c, &mut t, &Default::default()).unwrap();
            t
        };
        assert_eq!(
            tally(&c),
            Tally {
                scanned: 5,
                found: 2
            }
        );
        // Nothing is newer than a timestamp taken after the files were written.
        let later = Criteria::io500(SystemTime::now() + Duration::from_secs(60));
        assert_eq!(
            tally(&later),
            Tally {
                scanned: 5,
                found: 0
            }
        );
    }
}
