//! The coordinator on a "here" target (no root, nothing provisioned): records persisted as
//! they come, one manifest, a refusal before anything is created.

use super::*;
use crate::plan::{Plan, WorkloadSpec};

/// The plan of one job file here, resolved (an error when the jobs cannot run here).
fn opts(dir: &std::path::Path, jobfile: &str) -> Result<Options, RunnerError> {
    let path = dir.join("t.fio");
    std::fs::write(&path, jobfile).unwrap();
    let place = || Where::Here {
        fs: "test".into(),
        device: None,
        dir: dir.to_path_buf(),
        wipe: false,
    };
    Ok(Options {
        resolved: resolve(
            Plan {
                targets: Vec::new(),
                workloads: vec![WorkloadSpec {
                    spec: format!("fio:{}", path.display()),
                    name: "fio".into(),
                    params: vec![("file".into(), Some(path.display().to_string()))],
                }],
                size_bytes: 0,
                device: None,
                wipe: false,
                repeat: 1,
                baseline: None,
                overrides: Default::default(),
                ranks: Default::default(),
                study: None,
                tune: None,
                on_interference: Default::default(),
                on_misfit: Default::default(),
            },
            &place(),
            false,
        )?,
        out: dir.join("study"),
        place: place(),
        dry_run: false,
        quiet: true,
        command_line: vec!["test".into()],
        resume: false,
        select: None,
        observer: None,
    })
}

#[test]
fn a_job_file_here_gives_one_record_per_job_and_a_complete_manifest() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display();
    let o = opts(
        dir.path(),
        &format!("[global]\ndirectory={d}\nsize=1m\nioengine=null\n[a]\nrw=read\n[b]\nrw=write\nstonewall\n"),
    )
    .unwrap();
    let s = run(&o, &crate::frame::Local).unwrap();
    assert_eq!(s.ended, Ended::Complete);
    let tests: Vec<&str> = s.records.iter().map(|r| r.test.as_str()).collect();
    assert_eq!(tests, ["a", "b"]);
    let stored = crate::store::load_results(&o.out).unwrap();
    assert_eq!(stored.len(), 2);
    assert!(stored
        .iter()
        .all(|r| r.target == "local" && r.workload == "fio"));
    let m = crate::store::read_manifest(&o.out).unwrap();
    assert_eq!(m.status, crate::store::Status::Complete);
    assert_eq!(m.completed, [("local".to_string(), 0)]);
}

#[test]
fn jobs_that_cannot_run_here_create_nothing() {
    let dir = tempfile::tempdir().unwrap();
    // Refused when the plan is resolved, before anything exists.
    let e = opts(dir.path(), "[a]\nrw=read\nfilename=does-not-exist\n")
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("no size"), "{e}");
    assert!(
        !dir.path().join("study").exists(),
        "a refused run creates no study"
    );
}
