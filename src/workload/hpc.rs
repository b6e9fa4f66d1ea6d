//! What the workloads that take an HPC tool's own command line (`ior:`, `mdtest:`) share: one
//! workload over the tool's plan (`Hpc<P>`: the plan read once from the words after the tool's
//! name, a session per target in its directory, the tool's seed, else `--seed`, else the
//! ranks'), each tool a `Tool` row its plan fills in; and the pieces their sessions share
//! (the tools' barriers and maxima, the stonewall status file, the latencies).

use std::path::Path;
use std::time::Instant;

use super::{Footprint, Opened, SpecError, Workload};
use crate::frame::{RunError, Session, TargetCtx, WorkerCtx, WorkerOut};
use crate::io::calls::Lat;
use crate::metrics::hist;
use crate::plan::{Overrides, PlanError, WorkloadSpec};

/// A tool's plan, as its workload runs it.
pub trait Tool: Sized + Send + Sync + 'static {
    /// The workload's name, and the test of the record a raw target gets (its first phase's).
    const NAME: &'static str;
    const FIRST: &'static str;
    /// Reads the tool's command line once.
    fn parse(args: &str) -> Result<Self, PlanError>;
    /// The data's seed the command line gives (`-G`).
    fn seed(&self) -> Option<i64>;
    /// The session of one target: the plan run in `dir`.
    fn session(&self, dir: &Path, t: &TargetCtx, seed: u64) -> Box<dyn Session>;
    /// Its records' tests, in the order it runs them.
    fn tests(&self) -> Vec<String>;
    /// What it will run, as a line (`fsbench study --check`).
    fn describe(&self) -> String;
    fn footprint(&self) -> Option<Footprint> {
        None
    }
}

/// The workload of a tool: its plan and the command line's `--seed`.
pub struct Hpc<P> {
    plan: P,
    seed: Option<u64>,
}

/// Builds the workload of tool `P` from its spec (`ior:-w -r ...`).
pub fn build<P: Tool>(spec: &WorkloadSpec, o: &Overrides) -> Result<Box<dyn Workload>, SpecError> {
    let plan = P::parse(spec.param("args").unwrap_or_default()).map_err(|e| spec.bad(e))?;
    Ok(Box::new(Hpc { plan, seed: o.seed }))
}

impl<P: Tool> Workload for Hpc<P> {
    fn open(&self, t: &TargetCtx) -> Result<Opened, RunError> {
        let Some(dir) = t.dir() else {
            return Ok(Opened::Skip {
                test: P::FIRST.into(),
                reason: format!(
                    "{} works in a filesystem's directory; raw targets run block workloads",
                    P::NAME
                ),
            });
        };
        let seed = self.plan.seed().map(|s| s as u64).or(self.seed);
        let seed = seed.unwrap_or(t.ranks.seed);
        Ok(Opened::Run(self.plan.session(dir, t, seed)))
    }

    fn describe(&self) -> Vec<String> {
        vec![self.plan.describe()]
    }

    fn tests(&self) -> Option<Vec<String>> {
        Some(self.plan.tests())
    }

    fn footprint(&self) -> Option<Footprint> {
        self.plan.footprint()
    }
}

/// One phase of a tool's run: what it does (IOR's access, mdtest's operation) in one iteration.
#[derive(Debug, Clone, Copy)]
pub struct Step<K> {
    pub iteration: u32,
    pub kind: K,
}

/// What a step does, by the name the tool gives it (`write`, `file-create`).
pub trait Kind: Copy {
    fn name(self) -> &'static str;
}

impl<K: Kind> Step<K> {
    /// Each of `iterations` runs `kinds`, in order.
    pub fn all(iterations: u32, kinds: &[K]) -> Vec<Step<K>> {
        (0..iterations)
            .flat_map(|iteration| kinds.iter().map(move |&kind| Step { iteration, kind }))
            .collect()
    }

    /// The records' tests of `steps`, in order.
    pub fn names(steps: &[Step<K>], iterations: u32) -> Vec<String> {
        steps.iter().map(|s| s.name(iterations)).collect()
    }

    /// The record's test: the kind's name, with the iteration when there are several
    /// (`write`; `write.0`, `read.0`, `write.1`, ...).
    pub fn name(&self, iterations: u32) -> String {
        match iterations {
            1 => self.kind.name().into(),
            _ => format!("{}.{}", self.kind.name(), self.iteration),
        }
    }
}

/// The tools' barrier (MPI's across ranks): a stop on the way is the phase's.
pub fn barrier(ctx: &WorkerCtx, out: &mut WorkerOut) {
    if let Err(why) = ctx.barrier() {
        out.stopped = Some(why);
    }
}

/// The most of `v` over every rank (`v` itself after a stop, which is the phase's).
pub fn agree(ctx: &WorkerCtx, out: &mut WorkerOut, v: u64) -> u64 {
    ctx.agree_max(v).unwrap_or_else(|why| {
        out.stopped = Some(why);
        v
    })
}

/// The count a stonewalled phase left in the status file (IOR's -O stoneWallingStatusFile,
/// mdtest's -x), as rank 0 reads it: 0 on every other rank, or when there is none.
pub fn status_count(rank: usize, path: &Path) -> u64 {
    match rank {
        0 => std::fs::read_to_string(path)
            .ok()
            .and_then(|t| t.trim().parse().ok())
            .unwrap_or(0),
        _ => 0,
    }
}

/// Keeps the count for a later phase in the status file (written anew).
pub fn keep_status(path: &Path, n: u64) -> Result<(), RunError> {
    crate::sys::outfile::create(path, crate::sys::outfile::Create::Replace)
        .and_then(|mut f| std::io::Write::write_all(&mut f, n.to_string().as_bytes()))
        .map_err(RunError::io(path.display()))
}

/// A worker's latencies up to `end`: over time, and whole as the histogram `lat`.
pub fn keep_lat(out: &mut WorkerOut, mut lat: Lat, end: Instant) {
    out.timeline = lat.timeline(end);
    let mut h = hist::new();
    lat.into_hist(&mut h);
    out.hists.insert("lat", h);
}

/// The record's latency figures (`lat_*_ns`) and histogram (`lat_ns`), from the part's merged
/// `lat`.
pub fn lat_figures(part: &WorkerOut, metrics: &mut Metrics, histograms: &mut Histograms) {
    if let Some(h) = part.hists.get("lat").filter(|h| !h.is_empty()) {
        hist::summarize(h, "lat", metrics);
        histograms.insert("lat_ns".into(), hist::encode(h));
    }
}

type Metrics = std::collections::BTreeMap<String, f64>;
type Histograms = std::collections::BTreeMap<String, String>;

#[cfg(test)]
mod tests {
    use super::*;

    impl Kind for &'static str {
        fn name(self) -> &'static str {
            self
        }
    }

    #[test]
    fn steps_run_every_iteration_in_order_and_name_the_iteration_when_several() {
        let steps = Step::all(2, &["write", "read"]);
        let names = Step::names(&steps, 2);
        assert_eq!(names, ["write.0", "read.0", "write.1", "read.1"]);
        assert_eq!(steps[0].name(1), "write");
        assert!(Step::all(0, &["write"]).is_empty());
    }

    #[test]
    fn each_tool_runs_in_a_targets_directory_and_a_raw_target_gets_its_first_test_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let here = TargetCtx::for_tests(dir.path());
        let raw = TargetCtx {
            place: crate::frame::Place::Raw("/dev/null".into()),
            ..TargetCtx::for_tests(dir.path())
        };
        let built = |spec: &str| {
            let spec = crate::plan::workload::parse_workload(spec).unwrap();
            super::super::build(&spec, &Overrides::default()).unwrap()
        };
        // The phases: the tests, less those run at once after the one before (mdtest's tree
        // removal, a part of its removals' phase).
        for (spec, first, tests, phases) in [
            (
                "ior:-w -r -i 2 -t 4k -b 8k",
                "write",
                "write.0 read.0 write.1 read.1",
                "write.0 read.0 write.1 read.1",
            ),
            (
                "mdtest:-n 4 -F -C -r",
                "tree-create",
                "tree-create file-create file-remove tree-remove",
                "tree-create file-create file-remove",
            ),
        ] {
            let w = built(spec);
            assert_eq!(w.tests().unwrap().join(" "), tests, "{spec}");
            assert!(w.describe()[0].starts_with(&spec.replacen(':', " ", 1)));
            match w.open(&raw).unwrap() {
                Opened::Skip { test, reason } => {
                    assert_eq!(test, first);
                    assert!(
                        reason.starts_with(spec.split(':').next().unwrap()),
                        "{reason}"
                    );
                }
                Opened::Run(_) => panic!("{spec} ran on a raw target"),
            }
            let Ok(Opened::Run(s)) = w.open(&here) else {
                panic!("{spec} did not run in a directory")
            };
            let names: Vec<&str> = s.phases().iter().map(|p| p.name.as_str()).collect();
            assert_eq!(names.join(" "), phases);
        }
    }

    #[test]
    fn the_status_file_is_rank_0s_to_read_and_keeps_a_count() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sw");
        assert_eq!(status_count(0, &path), 0, "no file yet");
        keep_status(&path, 1234).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "1234");
        assert_eq!(status_count(0, &path), 1234);
        assert_eq!(status_count(1, &path), 0, "other ranks get it from rank 0");
        keep_status(&path, 7).unwrap();
        assert_eq!(status_count(0, &path), 7, "written anew");
        std::fs::write(&path, "x").unwrap();
        assert_eq!(status_count(0, &path), 0, "what is not a count is none");
    }
}
