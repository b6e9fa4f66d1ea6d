//! The frame with a fake session and a fake cluster: the order of the steps, the merge, and the
//! figures the frame adds to every record.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use super::*;

struct Fake {
    specs: Vec<PhaseSpec>,
    log: Mutex<Vec<String>>,
}

impl Session for Fake {
    fn phases(&self) -> &[PhaseSpec] {
        &self.specs
    }
    fn prepare(&mut self, phase: usize) -> Result<(), RunError> {
        self.log.lock().unwrap().push(format!("prepare {phase}"));
        Ok(())
    }
    fn work(&self, phase: usize, ctx: &WorkerCtx) -> WorkerOut {
        self.log.lock().unwrap().push(format!("work {phase}"));
        // Progress before the start line: every worker has it when the first one finishes.
        ctx.progress.add(10, 4096);
        ctx.start_line();
        let mut out = WorkerOut {
            part: ctx.index % 2,
            window: Duration::from_millis(5),
            ..Default::default()
        };
        out.counters.insert("write_bytes", 4096.0);
        out.counters.insert("reads", 0.0);
        let mut h = crate::metrics::hist::new();
        h.record(1000 * (ctx.index as u64 + 1)).unwrap();
        // Latency over time: one op in the first interval of each worker.
        let origin = std::time::Instant::now();
        let slicer = crate::metrics::timeline::Slicer::new(ctx.interval, origin);
        out.timeline = Some(slicer.finish_hist(origin + Duration::from_millis(5), &h));
        out.hists.insert("lat", h);
        out.series.insert("iops", vec![1.0, 2.0]);
        out
    }
    fn finish(&mut self, phase: usize, m: &Merged) -> Result<Vec<Phase>, RunError> {
        self.log.lock().unwrap().push(format!("finish {phase}"));
        Ok(m.parts
            .iter()
            .map(|p| {
                let mut ph = Phase {
                    test: format!("t{phase}.{}", p.part),
                    ..Default::default()
                };
                ph.metrics
                    .insert("write_bytes".into(), p.counter("write_bytes"));
                ph.metrics
                    .insert("n".into(), p.hists.get("lat").map_or(0, |h| h.len()) as f64);
                ph.metrics.insert("s1".into(), p.series["iops"][1]);
                ph
            })
            .collect())
    }
}

#[derive(Default)]
struct CountingCluster {
    barriers: AtomicUsize,
    reductions: AtomicUsize,
}

impl Cluster for CountingCluster {
    fn barrier(&self, _what: &str) -> Result<(), RunError> {
        self.barriers.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }
    fn reduce(&self, local: Merged) -> Result<Merged, RunError> {
        self.reductions.fetch_add(1, Ordering::SeqCst);
        Ok(local)
    }
}

/// A phase that writes and reads with `workers` workers (the pool's tests use it too).
pub(super) fn spec(name: &str, workers: usize, cache: CachePolicy) -> PhaseSpec {
    PhaseSpec {
        name: name.into(),
        does: "test".into(),
        cache,
        writes: true,
        reads: true,
        workers,
        unit: "ops",
        ..Default::default()
    }
}

#[test]
fn every_phase_goes_through_the_same_steps_and_merges_per_part() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Fake {
        specs: vec![
            spec("a", 4, CachePolicy::Keep),
            spec("b", 1, CachePolicy::Keep),
        ],
        log: Mutex::new(Vec::new()),
    };
    let t = TargetCtx {
        stat_dir: Some(dir.path().to_path_buf()),
        ..TargetCtx::for_tests(dir.path())
    };
    let cluster = CountingCluster::default();
    let mut saved = Vec::new();
    let stopped = run_session(&mut s, &t, "x", &cluster, &mut |p| {
        saved.push(p);
        Ok(())
    })
    .unwrap();
    assert!(stopped.is_none());
    assert_eq!(cluster.barriers.load(Ordering::SeqCst), 2);
    assert_eq!(cluster.reductions.load(Ordering::SeqCst), 2);
    let log = s.log.into_inner().unwrap();
    assert_eq!(log[0], "prepare 0");
    assert_eq!(log.iter().filter(|l| *l == "work 0").count(), 4);
    assert_eq!(log[5], "finish 0");
    assert_eq!(&log[6..], ["prepare 1", "work 1", "finish 1"]);
    // Phase a: 4 workers in 2 parts of 2: counters, histograms and series add per part.
    let names: Vec<&str> = saved.iter().map(|p| p.test.as_str()).collect();
    assert_eq!(names, ["t0.0", "t0.1", "t1.0"]);
    let a0 = &saved[0].metrics;
    assert_eq!(a0["write_bytes"], 8192.0);
    assert_eq!(a0["n"], 2.0);
    assert_eq!(a0["s1"], 4.0);
    // Latency over time merges per part like the whole-run histograms: the frame puts the
    // part's on its record.
    let lt = saved[0]
        .latency
        .as_ref()
        .expect("the part's latency over time");
    assert_eq!((lt.width_s, lt.slices.len()), (1.0, 1));
    assert_eq!(lt.total().count(), 2, "2 workers, one op each");
    let max = lt.total().to_hist(3).max();
    assert!(
        (3000..3031).contains(&max),
        "workers 0 and 2 in part 0 (2 digits): {max}"
    );
    // The frame's own figures: CPU on every record, first-done with more than one worker.
    for p in &saved {
        assert!(p.metrics.contains_key("cpu_user_pct"), "{:?}", p.metrics);
        assert!(!p.started_at.is_empty() && p.duration_s > 0.0);
    }
    assert_eq!(a0["first_done_ops"], 20.0, "2 workers x 10 ops in part 0");
    assert!(a0["first_done_s"] <= a0["last_done_s"]);
    assert!(
        !saved[2].metrics.contains_key("first_done_ops"),
        "one worker"
    );
    assert!(saved[0]
        .notes
        .iter()
        .any(|n| n.contains("2 jobs that ran together")));
    // Reads on tmpfs are flagged, except for a part that read nothing ("reads" = 0).
    assert!(!saved[0].notes.iter().any(|n| n.starts_with("page_cache")));
}

/// A session whose one worker counts `ops` operations (none: it moved no data).
struct Counted {
    specs: Vec<PhaseSpec>,
    ops: u64,
}

impl Session for Counted {
    fn phases(&self) -> &[PhaseSpec] {
        &self.specs
    }
    fn work(&self, _phase: usize, ctx: &WorkerCtx) -> WorkerOut {
        ctx.start_line();
        ctx.progress.add(self.ops, self.ops * 4096);
        WorkerOut::default()
    }
    fn finish(&mut self, _phase: usize, _m: &Merged) -> Result<Vec<Phase>, RunError> {
        Ok(vec![Phase {
            test: "w".into(),
            ..Default::default()
        }])
    }
}

#[test]
fn a_counted_phase_that_moved_no_data_fails_and_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let t = TargetCtx::for_tests(dir.path());
    for (empty, ops, fails) in [
        (Empty::Fails, 0, true),
        (Empty::Fails, 3, false),
        (Empty::Judged, 0, false),
    ] {
        let mut specs = vec![spec("w", 1, CachePolicy::Keep)];
        specs[0].writes = false;
        specs[0].empty = empty;
        let mut s = Counted { specs, ops };
        let out = run_phase(&mut s, 0, &t, "x", &Local, &mut None).unwrap();
        let e = out.phases[0].error.clone().unwrap_or_default();
        assert_eq!(e.contains("moved no data"), fails, "{empty:?} {ops}: {e}");
    }
}

/// A session whose one worker does 5 operations of its own, then 1 of a part run at once after
/// them (mdtest's tree removal after its removals).
struct Chained {
    specs: Vec<PhaseSpec>,
    totals: Vec<(u64, u64)>,
}

impl Session for Chained {
    fn phases(&self) -> &[PhaseSpec] {
        &self.specs
    }
    fn work(&self, _phase: usize, ctx: &WorkerCtx) -> WorkerOut {
        ctx.start_line();
        ctx.progress.add(5, 0);
        ctx.progress.add(1, 0);
        let then = WorkerOut {
            part: 1,
            ..Default::default()
        };
        WorkerOut {
            then: Some(Box::new(Then {
                out: then,
                ops: 1,
                bytes: 0,
            })),
            ..Default::default()
        }
    }
    fn finish(&mut self, _phase: usize, m: &Merged) -> Result<Vec<Phase>, RunError> {
        self.totals = m.frame.rank.totals.clone();
        Ok(a_record_per_part(m))
    }
}

/// A record per part of `m`, its test `part<k>` (the profile's tests use it too).
pub(super) fn a_record_per_part(m: &Merged) -> Vec<Phase> {
    m.parts
        .iter()
        .map(|p| Phase {
            test: format!("part{}", p.part),
            ..Default::default()
        })
        .collect()
}

#[test]
fn a_part_run_at_once_after_its_worker_has_a_record_and_its_own_counts() {
    let dir = tempfile::tempdir().unwrap();
    let t = TargetCtx::for_tests(dir.path());
    let mut phase = spec("rm", 1, CachePolicy::Keep);
    (phase.writes, phase.reads, phase.empty) = (false, false, Empty::Fails);
    phase.parts = vec![
        PartSpec::default(),
        PartSpec {
            runs: Runs::AtOnce,
            ..Default::default()
        },
    ];
    assert_eq!((phase.worked_by(0), phase.worked_by(1)), (0, 0));
    let mut s = Chained {
        specs: vec![phase],
        totals: Vec::new(),
    };
    let out = run_phase(&mut s, 0, &t, "x", &Local, &mut None).unwrap();
    assert_eq!(
        s.totals,
        [(5, 0), (1, 0)],
        "the worker's 6 split between the parts"
    );
    let names: Vec<&str> = out.phases.iter().map(|p| p.test.as_str()).collect();
    assert_eq!(names, ["part0", "part1"]);
    for p in &out.phases {
        assert!(p.error.is_none(), "{}: {:?}", p.test, p.error);
        assert!(
            !p.notes.iter().any(|n| n.contains("ran together")),
            "{:?}",
            p.notes
        );
    }
    let at_once = |p: &Phase| p.notes.iter().any(|n| n.contains("run at once after 'rm'"));
    assert!(!at_once(&out.phases[0]) && at_once(&out.phases[1]));
}
