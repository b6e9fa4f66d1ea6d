//! The frame's part in profiling a phase (`--profile`, `crate::profile`; a row of
//! `probe::PROBES`): started beside the
//! workers with the board that tells it of each worker's thread, finished when they have ended,
//! and each part's profile put on its record, with a note where the host did not allow what was
//! asked (the phase then runs unprofiled, or with what it allows).

use super::pool::PoolRun;
use super::reading::{Probe, Readings, Running, Start};
use super::{Frame, Merged, Phase, PhaseSpec, TargetCtx, WorkerOut};
use crate::profile::{Profiled, Profiling};
use crate::store::note;

/// A phase's profiling: running (None once finished or when the host refused it), and what it
/// gives (the refusal's note alone when refused).
struct Profile {
    on: Option<Profiling>,
    got: Profiled,
}

/// Each part's profile on its record (a row of `probe::PROBES`).
pub(super) struct Profiles;

impl Probe for Profiles {
    /// Starts profiling the phase as the plan asks; the board tells it of the workers.
    fn start(&self, s: &Start) -> Option<Box<dyn Running>> {
        let mode = s.t.profile?;
        Some(Box::new(match Profiling::start(mode, &s.t.caps.threads) {
            Ok(p) => {
                s.board.watch(p.watch());
                Profile {
                    on: Some(p),
                    got: Profiled::default(),
                }
            }
            Err(why) => Profile {
                on: None,
                got: Profiled {
                    parts: Vec::new(),
                    notes: vec![why],
                },
            },
        }))
    }

    /// Part `k`'s profile and the profile's notes on its record (none on a skipped one).
    fn write(&self, p: &mut Phase, k: usize, m: &Merged, spec: &PhaseSpec, _t: &TargetCtx) {
        let Some(pr) = &m.frame.profile else {
            return;
        };
        if p.skipped.is_some() {
            return;
        }
        p.profile = pr.parts.get(spec.worked_by(k)).cloned();
        for n in &pr.notes {
            let n = note::make(note::Kind::Profile, n);
            if !p.notes.contains(&n) {
                p.notes.push(n);
            }
        }
    }
}

impl Running for Profile {
    /// Stops it (the workers have ended) and folds each part's stacks.
    fn workers_done(&mut self, run: &PoolRun) {
        if let Some(p) = self.on.take() {
            let part_of: Vec<usize> = run.outs.iter().map(|o| o.part).collect();
            self.got = p.finish(&part_of);
        }
    }

    fn end(self: Box<Self>, _r: &Readings, _parts: &[WorkerOut], f: &mut Frame) {
        f.profile = Some(self.got);
    }
}

#[cfg(test)]
mod tests {
    use super::super::*;
    use std::time::{Duration, Instant};

    /// Two workers in two parts: each spins in a function of its own, after spinning in another
    /// before its start line.
    struct Spinner {
        specs: Vec<PhaseSpec>,
    }

    /// Spins until the thread has had `d` of CPU (not of the wall clock: the tick samples a
    /// thread only while it runs, so a loaded machine would otherwise give fewer samples).
    #[inline(never)]
    fn spin(d: Duration) -> u64 {
        let cpu = || {
            let (user, system) = crate::sys::thread_cpu_ns();
            Duration::from_nanos(user + system)
        };
        let (t0, c0) = (Instant::now(), cpu());
        let mut x = 1u64;
        while cpu() - c0 < d && t0.elapsed() < 50 * d {
            for i in 0..1000u64 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(i);
            }
        }
        x
    }

    #[inline(never)]
    fn setup_before_the_start_line() -> u64 {
        spin(Duration::from_millis(150))
    }

    #[inline(never)]
    fn measured_work_of_part_zero() -> u64 {
        spin(Duration::from_millis(400))
    }

    #[inline(never)]
    fn measured_work_of_part_one() -> u64 {
        spin(Duration::from_millis(400))
    }

    impl Session for Spinner {
        fn phases(&self) -> &[PhaseSpec] {
            &self.specs
        }
        fn work(&self, _phase: usize, ctx: &WorkerCtx) -> WorkerOut {
            std::hint::black_box(setup_before_the_start_line());
            ctx.start_line();
            std::hint::black_box(match ctx.index {
                0 => measured_work_of_part_zero(),
                _ => measured_work_of_part_one(),
            });
            WorkerOut {
                part: ctx.index,
                ..Default::default()
            }
        }
        fn finish(&mut self, _phase: usize, m: &Merged) -> Result<Vec<Phase>, RunError> {
            Ok(crate::frame::tests::a_record_per_part(m))
        }
    }

    #[test]
    fn each_part_gets_its_workers_stacks_from_their_start_line_to_their_end() {
        if let Err(why) = &crate::profile::host::access().on_cpu {
            eprintln!("SKIPPED: {why}");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let mut s = Spinner {
            specs: vec![PhaseSpec {
                name: "spin".into(),
                workers: 2,
                unit: "ops",
                ..Default::default()
            }],
        };
        let t = TargetCtx {
            place: Place::Mount(dir.path().to_path_buf()),
            fs: "tmpfs".into(),
            device: None,
            stat_dir: Some(dir.path().to_path_buf()),
            caps: crate::provision::caps("tmpfs"),
            target: None,
            quiet: true,
            ranks: Default::default(),
            interval: Duration::from_secs(1),
            profile: Some(crate::plan::profile::ProfileMode::OnCpu),
        };
        let mut saved = Vec::new();
        run_session(&mut s, &t, "x", &Local, &mut |p| {
            saved.push(p);
            Ok(())
        })
        .unwrap();
        assert_eq!(saved.len(), 2);
        let text = |k: usize| {
            let p = saved[k]
                .profile
                .as_ref()
                .expect("a profile on every record");
            let s = p.on_cpu.as_ref().expect("on-CPU stacks");
            // Half of what 400 ms on a CPU gives at the clock's rate (the tick's: 100 at least).
            let hz = p.hz.max(100);
            assert!(s.total * 5 > hz, "{} samples in 400 ms at {hz} Hz", s.total);
            s.folded.as_ref().unwrap().text()
        };
        let (zero, one) = (text(0), text(1));
        assert!(zero.contains("::measured_work_of_part_zero;"), "{zero}");
        assert!(!zero.contains("measured_work_of_part_one"), "{zero}");
        assert!(one.contains("::measured_work_of_part_one;"), "{one}");
        for t in [&zero, &one] {
            assert!(!t.contains("setup_before_the_start_line"), "{t}");
            assert!(t.lines().all(|l| l.starts_with("fsbench;")), "{t}");
        }
        assert!(zero.contains("fsbench::frame::profiled::tests::"), "{zero}");
    }
}
