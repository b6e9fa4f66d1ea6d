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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::profile::ProfileMode;
    use crate::profile::record::{RecordProfile, Stacks};
    use crate::store::{Manifest, RecordKey, StoreError, Study};

    fn profiled(test: &str) -> Record {
        let mut f = Folded::default();
        f.add(
            &[
                "fsbench",
                "fsbench::io::drive::drive",
                "btrfs_do_write_iter_[k]",
            ],
            7,
        );
        let p = crate::store::Phase {
            test: test.into(),
            profile: Some(RecordProfile {
                mode: ProfileMode::OnCpu,
                clock: Default::default(),
                hz: 999,
                on_cpu: Some(Stacks::of(f, Kind::OnCpu, 0, &[])),
                off_cpu: None,
            }),
            ..Default::default()
        };
        let key = RecordKey {
            target: "btrfs:compress=zstd",
            fs: "btrfs",
            workload: "block",
            repeat: 0,
        };
        Record::from_phase(&key, p)
    }

    fn manifest() -> Manifest {
        Manifest::new(
            crate::plan::Plan::default(),
            vec!["fsbench".into()],
            crate::sys::host::Environment::default(),
        )
    }

    #[test]
    fn a_records_stacks_go_to_the_file_it_names_and_come_back_for_the_report() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("s");
        let mut study = Study::create(&dir, &manifest()).unwrap();
        let rec = profiled("randwrite");
        study.append(&rec).unwrap();
        let file = "profiles/btrfs_compress=zstd.1.randwrite.on-cpu.folded";
        assert_eq!(
            std::fs::read_to_string(dir.join(file)).unwrap(),
            "fsbench;fsbench::io::drive::drive;btrfs_do_write_iter_[k] 7\n"
        );
        let mut back = crate::store::load_results(&dir).unwrap();
        let s = back[0].profile.as_ref().unwrap().on_cpu.as_ref().unwrap();
        assert_eq!(
            (s.file.as_str(), s.total, s.folded.is_none()),
            (file, 7, true)
        );
        assert!(attach_profiles(&dir, &mut back).is_empty());
        let s = back[0].profile.as_ref().unwrap().on_cpu.as_ref().unwrap();
        assert_eq!(s.folded, rec.profile.unwrap().on_cpu.unwrap().folded);
    }

    #[test]
    fn profiles_are_never_written_or_read_through_a_link_or_outside_the_folder() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("s");
        let victim = t.path().join("victim");
        std::fs::create_dir(&victim).unwrap();
        let mut study = Study::create(&dir, &manifest()).unwrap();
        std::os::unix::fs::symlink(&victim, dir.join(DIR)).unwrap();
        let e = study.append(&profiled("randwrite")).unwrap_err();
        assert!(matches!(e, StoreError::Link { .. }), "{e}");
        assert_eq!(std::fs::read_dir(&victim).unwrap().count(), 0);
        // A record naming a file elsewhere, or through the link, is not read.
        std::fs::write(victim.join("x.folded"), "secret;words 1\n").unwrap();
        let mut recs = vec![profiled("a"), profiled("b")];
        for (r, file) in recs
            .iter_mut()
            .zip(["profiles/x.folded", "profiles/../../victim/x.folded"])
        {
            let s = r.profile.as_mut().unwrap().on_cpu.as_mut().unwrap();
            s.file = file.into();
            s.folded = None;
        }
        let problems = attach_profiles(&dir, &mut recs);
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems.iter().all(|p| !p.contains("secret")));
        assert!(recs.iter().all(|r| r
            .profile
            .as_ref()
            .unwrap()
            .on_cpu
            .as_ref()
            .unwrap()
            .folded
            .is_none()));
    }
}
