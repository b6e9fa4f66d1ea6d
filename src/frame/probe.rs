//! What the frame measures around a phase, as one table (PROBES). The frame reads the machine,
//! the target's devices and every process before the workers start, when the last has ended,
//! and after the flush that follows a writing phase (`reading::Readings`: one reading of each /proc file
//! at each point, for every probe), and statvfs before and after. Each probe starts before the
//! workers, takes what it needs from the readings, puts its figures in the frame (they travel
//! to rank 0 with it) and writes its own part of every record.

use std::path::Path;

use super::reading::{Probe, Readings, Running, Start};
use super::{explain, pool::PoolRun, profiled, DevIo, Frame, Merged, Phase, PhaseSpec, TargetCtx};
use crate::metrics::evidence::{Role, Snapshot, Watch};
use crate::metrics::limiter::Moves;
use crate::metrics::name as metric;

/// The probes, in the order each writes its part (the limiter reads the profile's split).
pub(super) static PROBES: &[&dyn Probe] = &[
    &Space,
    &Cpu,
    &Device,
    &profiled::Profiles,
    &explain::Explained,
    &Feeding,
];

/// Every probe started for one phase.
pub(super) struct Probes(Vec<Option<Box<dyn Running>>>);

pub(super) fn start(s: &Start) -> Probes {
    Probes(PROBES.iter().map(|p| p.start(s)).collect())
}

impl Probes {
    pub fn workers_done(&mut self, run: &PoolRun) {
        for p in self.0.iter_mut().flatten() {
            p.workers_done(run);
        }
    }

    pub fn end(self, r: &Readings, parts: &[super::WorkerOut], f: &mut Frame) {
        for (probe, running) in PROBES.iter().zip(self.0) {
            probe.end(r, f);
            if let Some(x) = running {
                x.end(r, parts, f);
            }
        }
    }
}

/// Every probe's part of record `k`.
pub(super) fn write(p: &mut Phase, k: usize, m: &Merged, spec: &PhaseSpec, t: &TargetCtx) {
    for probe in PROBES {
        probe.write(p, k, m, spec, t);
    }
}

/// statvfs of the target's directory. For a phase that reports space figures the target settles
/// first (a ZFS pool commits), or its figures lag behind what was written.
pub(super) fn statvfs(
    dir: Option<&Path>,
    t: &TargetCtx,
    space: bool,
) -> Option<crate::sys::FsStat> {
    let dir = dir?;
    let settled = t.target.as_ref().filter(|_| space).and_then(|h| h.settle());
    if let Some(Err(e)) = settled {
        crate::out::eline!("fsbench: warning: before statvfs: {e}");
    }
    crate::sys::statvfs(dir).ok()
}

/// The target's space before and after; a failed phase's record keeps it as it ended.
struct Space;

impl Probe for Space {
    fn end(&self, r: &Readings, f: &mut Frame) {
        [f.statvfs_before, f.statvfs_after] = r.statvfs;
    }
    fn write(&self, p: &mut Phase, _k: usize, m: &Merged, _spec: &PhaseSpec, _t: &TargetCtx) {
        if let (Some(fl), Some(st)) = (&mut p.failure, &m.frame.statvfs_after) {
            if fl.space.is_empty() {
                fl.add_space(st);
            }
        }
    }
}

/// fsbench's CPU over the phase (its workers' start to the last one's end) and the machine's.
struct Cpu;

impl Probe for Cpu {
    fn end(&self, r: &Readings, f: &mut Frame) {
        let (a, b) = (&r.before, &r.done);
        let wall = b.at.saturating_duration_since(a.at).as_nanos().max(1) as f64;
        let du = b.own_ns.0.saturating_sub(a.own_ns.0);
        let ds = b.own_ns.1.saturating_sub(a.own_ns.1);
        f.cpu_user_ns = du;
        f.cpu
            .insert(metric::CPU_USER_PCT.into(), du as f64 / wall * 100.0);
        f.cpu
            .insert(metric::CPU_SYS_PCT.into(), ds as f64 / wall * 100.0);
        if let (Some(x), Some(y)) = (a.machine, b.machine) {
            let total = y.total.saturating_sub(x.total).max(1) as f64;
            let pct = |a: u64, b: u64| b.saturating_sub(a) as f64 / total * 100.0;
            f.cpu
                .insert(metric::SYSTEM_CPU_USER_PCT.into(), pct(x.user, y.user));
            // The kernel's time, interrupts included.
            f.cpu.insert(
                metric::SYSTEM_CPU_SYS_PCT.into(),
                pct(x.system + x.irq, y.system + y.irq),
            );
            f.cpu.insert(
                metric::SYSTEM_CPU_IOWAIT_PCT.into(),
                pct(x.iowait, y.iowait),
            );
        }
    }
    fn write(&self, p: &mut Phase, _k: usize, m: &Merged, _spec: &PhaseSpec, _t: &TargetCtx) {
        for (name, v) in &m.frame.cpu {
            p.metrics.entry(name.clone()).or_insert(*v);
        }
    }
}

/// What the target's devices (every member) read and wrote, the flush's write-back included,
/// and the write amplification it gives.
struct Device;

impl Probe for Device {
    fn end(&self, r: &Readings, f: &mut Frame) {
        f.device = device_io(&r.watch, &r.before, r.last());
    }
    fn write(&self, p: &mut Phase, _k: usize, m: &Merged, _spec: &PhaseSpec, _t: &TargetCtx) {
        let Some(d) = m.frame.device else {
            return;
        };
        p.metrics
            .insert(metric::DEVICE_WRITE_BYTES.into(), d.write_bytes as f64);
        p.metrics
            .insert(metric::DEVICE_READ_BYTES.into(), d.read_bytes as f64);
        let written: f64 = m.parts.iter().map(|x| x.counter(metric::WRITE_BYTES)).sum();
        if written > 0.0 {
            p.metrics.insert(
                metric::WRITE_AMPLIFICATION.into(),
                d.write_bytes as f64 / written,
            );
        }
    }
}

/// The bytes the target's own devices (its device, or every member) moved between two readings.
pub fn device_io(watch: &Watch, a: &Snapshot, b: &Snapshot) -> Option<DevIo> {
    let mut total: Option<DevIo> = None;
    for (i, d) in watch.devices.iter().enumerate() {
        if d.role == Role::Backing {
            continue;
        }
        let (Some(Some(x)), Some(Some(y))) = (a.devices.get(i), b.devices.get(i)) else {
            continue;
        };
        let t = total.get_or_insert_with(DevIo::default);
        t.read_bytes += y.read_sectors.saturating_sub(x.read_sectors) * 512;
        t.write_bytes += y.write_sectors.saturating_sub(x.write_sectors) * 512;
    }
    total
}

/// Whoever observes the run (`observe`: the live metrics endpoint): what decides the running
/// phase's limiter so far; a phase that runs with no other thread alive stops the observer's
/// threads for its length.
struct Feeding;

impl Probe for Feeding {
    fn start(&self, s: &Start) -> Option<Box<dyn Running>> {
        let hushed = super::pool::inline(s.spec)
            .then(super::observe::hush)
            .flatten();
        super::observe::evidence(|| crate::metrics::evidence::sofar::SoFar {
            watch: s.watch.clone(),
            first: s.before.clone(),
            board: s.board.clone(),
            pacing: s.spec.parts.iter().find_map(|p| p.pacing.clone()),
            medium: super::explain::medium(s.t),
            reads: Moves::of(s.spec.reads),
            writes: Moves::of(
                s.spec.parts.iter().any(|p| p.writes) || s.spec.parts.is_empty() && s.spec.writes,
            ),
        });
        hushed.map(|h| Box::new(Hushed { _until: h }) as Box<dyn Running>)
    }
}

/// The endpoint's thread, started again when the phase's readings are in.
struct Hushed {
    _until: super::observe::Scope,
}

impl Running for Hushed {}
