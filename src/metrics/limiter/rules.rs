//! The rules' findings: each reads the facts and scores its kind (0 to 1), with its line.

use super::{Facts, Finding, KernelSplit, Limit, Moves};
use crate::metrics::evidence::{DeviceFigures, Evidence, Medium, WorkerFigures};

pub(super) fn pct(x: f64) -> String {
    format!("{:.0}%", x * 100.0)
}

/// fsbench's kernel helpers (io_uring's io-wq) below this many cores are not counted as the
/// workers' own work.
const HELPERS: f64 = 0.05;

/// A share of a worker's time as if it had never waited for a CPU: of the time it was on a
/// CPU or blocked. Waiting for a CPU is not what the workload asked of the system (other
/// processes, or more workers than CPUs, caused it); `interference` says when others did.
fn of_runnable(w: &WorkerFigures, share: f64) -> f64 {
    let ran = 1.0 - w.runq;
    if ran <= 1e-6 {
        0.0
    } else {
        (share / ran).clamp(0.0, 1.0)
    }
}

/// The share of each worker's time that fsbench's kernel helpers (io-wq) spent on its behalf:
/// their kernel CPU over the phase, spread over the workers' windows. Off the CPU for the
/// worker, it was the kernel doing its I/O: its work, not waiting.
fn helped(e: &Evidence) -> f64 {
    let seconds: f64 = e.workers.iter().map(|w| w.seconds).sum();
    if e.helpers.system < HELPERS || seconds <= 0.0 {
        return 0.0;
    }
    let mean_blocked = e.workers.iter().map(|w| w.blocked).sum::<f64>() / e.workers.len() as f64;
    (e.helpers.system * e.wall_s / seconds).min(mean_blocked)
}

/// The workers' mean blocked share of their runnable time, io-wq's work for them left out.
fn blocked(e: &Evidence) -> f64 {
    if e.workers.is_empty() {
        return 0.0;
    }
    let h = helped(e);
    e.workers
        .iter()
        .map(|w| of_runnable(w, (w.blocked - h).max(0.0)))
        .sum::<f64>()
        / e.workers.len() as f64
}

/// The share of the phase during which the target's devices had a request in flight: one
/// device's busy share; for several members, the chance any of them was busy with their busy
/// times taken as independent (a mirror read at QD1 keeps one busy at a time, a raidz read
/// all at once: between the two).
fn busy(e: &Evidence) -> f64 {
    let idle: f64 = e.top_devices().map(|d| 1.0 - d.util).product();
    (1.0 - idle).max(bound(e).map_or(0.0, |d| d.util))
}

/// The share of the workers' blocked time that `busy_s` seconds could have covered: at most
/// those seconds over the workers' mean blocked seconds (io-wq's work for them left out).
fn cover(e: &Evidence, busy_s: f64) -> f64 {
    let n = e.workers.len().max(1) as f64;
    let h = helped(e);
    let blocked_s: f64 = e
        .workers
        .iter()
        .map(|w| (w.blocked - h).max(0.0) * w.seconds)
        .sum::<f64>()
        / n;
    if blocked_s > 1e-6 {
        (busy_s / blocked_s).min(1.0)
    } else {
        0.0
    }
}

/// The share of the workers' blocked time during which the target's devices had a request in
/// flight, over one window (the readings before the workers and when they ended).
fn device_cover(e: &Evidence) -> f64 {
    cover(e, busy(e) * e.wall_s)
}

/// The share of the workers' blocked time during which the filesystem's own processes and
/// kernel threads were on a CPU (a FUSE daemon serving their calls, a journal thread their
/// commits): time they waited for the filesystem's work, not for nothing.
fn filesystem_cover(e: &Evidence) -> f64 {
    let own: f64 = e.filesystem.iter().map(|b| b.cores).sum();
    cover(e, own.min(1.0) * e.wall_s)
}

/// The target's busiest own device (its device, or its busiest member).
fn busiest_top(e: &Evidence) -> Option<&DeviceFigures> {
    e.top_devices().max_by(|a, b| a.util.total_cmp(&b.util))
}

/// The device the workers' waits are set against: the target's busiest own device (the disk
/// under a loop image is busy at most while the loop device is, for the target's I/O).
fn bound(e: &Evidence) -> Option<&DeviceFigures> {
    busiest_top(e).or_else(|| e.busiest_device())
}

/// The disk under the target's images, when the stack has one, in words.
fn under(e: &Evidence) -> String {
    e.devices
        .iter()
        .find(|d| !d.top())
        .map_or(String::new(), |d| {
            format!("; {} under it {} busy", d.name, pct(d.util))
        })
}

/// A device named with what it is: one of several members, a memory-backed loop.
fn named(e: &Evidence, d: &DeviceFigures) -> String {
    let members = e.top_devices().count();
    let mut s = format!("{} {} busy", d.name, pct(d.util));
    if d.top() && members > 1 {
        s += &format!(
            " (the busiest of {members} members; any of them {})",
            pct(busy(e))
        );
    }
    if d.medium == Medium::Memory {
        s += " (a memory-backed loop: its worker's CPU copying, not a disk)";
    }
    s
}

/// A device's flush requests, when it had any.
fn flushes(d: &DeviceFigures) -> String {
    if d.flushes == 0 {
        return String::new();
    }
    format!(
        ", {} flushes ({:.2} ms each)",
        d.flushes,
        d.flush_ms as f64 / d.flushes as f64
    )
}

pub(super) fn paced(f: &Facts) -> Option<Finding> {
    let p = f.pacing?;
    if p.reached.is_some_and(|r| r < super::REACHED) {
        return None;
    }
    let b = blocked(f.evidence);
    let util = bound(f.evidence).map_or(0.0, |d| d.util);
    Some(Finding {
        score: if util < 0.8 { b } else { b * 0.5 },
        headline: format!("{} held the workers", p.how),
        detail: format!(" ({} of their time off the CPU)", pct(b)),
        ..Default::default()
    })
}

pub(super) fn cache(f: &Facts) -> Option<Finding> {
    if f.medium != Medium::Disk {
        return None;
    }
    let e = f.evidence;
    let top = busiest_top(e)?;
    // Memory served the phase only where the device neither was busy nor held the workers.
    let idle = (1.0 - top.util).min(1.0 - blocked(e) * device_cover(e));
    let to = if e.top_devices().count() > 1 {
        format!("the {} members", e.top_devices().count())
    } else {
        top.name.clone()
    };
    // A side's finding: memory served what did not reach the devices, while they were idle.
    let found = |reached: f64, headline: String, detail: String| Finding {
        score: (1.0 - reached).min(idle),
        headline,
        detail,
        device: Some(top.name.clone()),
        ..Default::default()
    };
    let reads = f
        .volume
        .read_ops
        .filter(|n| *n >= 1.0 && f.reads == Moves::Data)
        .map(|ops| {
            let requests: u64 = e.top_devices().map(|d| d.reads).sum();
            let reached = (requests as f64 / ops).min(1.0);
            let bytes = e.reached.as_ref().and_then(|r| r.read_device);
            found(
                reached,
                format!("{} of the reads came from memory", pct(1.0 - reached)),
                format!(
                    " ({} of the read requests reached {to}{}, idle {} of the time)",
                    pct(reached),
                    bytes.map_or(String::new(), |b| format!(
                        ", {} of the bytes",
                        pct(b.min(1.0))
                    )),
                    pct(idle)
                ),
            )
        });
    let writes = f
        .volume
        .written
        .filter(|w| *w >= 1.0 && f.writes == Moves::Data)
        .map(|w| {
            let bytes: u64 = e.top_devices().map(|d| d.write_bytes).sum();
            let reached = (bytes as f64 / w).min(1.0);
            found(
                reached,
                format!(
                    "the page cache absorbed {} of the writes",
                    pct(1.0 - reached)
                ),
                format!(
                    " ({} reached {to} within the phase, idle {} of the time; the copying: {})",
                    pct(reached),
                    pct(idle),
                    copying(e)
                ),
            )
        });
    match (reads, writes) {
        (Some(r), Some(w)) => Some(if r.score >= w.score { r } else { w }),
        (r, w) => r.or(w),
    }
}

/// Who did the copying of buffered writes: the busiest worker in the kernel, io-wq.
fn copying(e: &Evidence) -> String {
    let mut who = Vec::new();
    if let Some(w) = e.busiest_worker() {
        who.push(format!(
            "worker {} {} in the kernel",
            w.index,
            pct(w.system)
        ));
    }
    if e.helpers.system >= HELPERS {
        who.push(format!("io-wq {:.2} cores", e.helpers.system));
    }
    who.join(", ")
}

pub(super) fn device(f: &Facts) -> Option<Finding> {
    let e = f.evidence;
    let d = bound(e)?;
    Some(Finding {
        score: blocked(e) * device_cover(e),
        headline: named(e, d),
        detail: format!(
            ", {:.1} in flight, {:.2} ms per request{}{}",
            d.in_flight,
            d.wait_ms,
            flushes(d),
            under(e)
        ),
        device: Some(d.name.clone()),
        ..Default::default()
    })
}

/// The busiest worker's kernel share (of its runnable time, io-wq's work for it included), and
/// its line: where the time went when a profile says, "kernel" when none does.
fn kernel_time(f: &Facts) -> Option<(f64, String, String)> {
    let e = f.evidence;
    let w = e.busiest_worker()?;
    let h = helped(e);
    let sys = of_runnable(w, w.system + h);
    let busy = of_runnable(w, w.on_cpu() + h);
    let mut detail = format!(
        ", {} of it in the kernel",
        pct(if busy > 0.0 { sys / busy } else { 0.0 })
    );
    if h > 0.0 {
        detail += &format!(
            " (io-wq's {:.2} cores for the workers included)",
            e.helpers.system
        );
    }
    detail += &match f.split {
        Some(s) => format!(": {}", said(s)),
        None => "; run with --profile to split it (filesystem, block layer, driver, copies)".into(),
    };
    if let Some(d) = e.devices.iter().find(|d| d.medium == Medium::Memory) {
        detail += &format!(
            "; {} is a memory-backed loop: its I/O is the kernel copying pages",
            d.name
        );
    }
    Some((
        sys,
        format!("worker {} {} busy", w.index, pct(busy)),
        detail,
    ))
}

/// A kernel split in words, largest first.
fn said(s: &KernelSplit) -> String {
    let mut parts = [
        ("the filesystem's code", s.filesystem),
        ("the block layer", s.block),
        ("the device driver", s.driver),
        ("memory copies", s.copies),
        ("the rest of the kernel", s.other),
    ];
    parts.sort_by(|a, b| b.1.total_cmp(&a.1));
    parts
        .iter()
        .filter(|p| p.1 >= 0.01)
        .map(|(n, x)| format!("{n} {}", pct(*x)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Whether a profile shows the filesystem's own code as the largest part of the kernel time.
fn filesystems_own(s: Option<&KernelSplit>) -> bool {
    s.is_some_and(|s| s.filesystem >= s.block.max(s.driver).max(s.copies).max(s.other))
}

pub(super) fn filesystem_cpu(f: &Facts) -> Option<Finding> {
    let e = f.evidence;
    let own: f64 = e.filesystem.iter().map(|b| b.cores).sum();
    let kernel = kernel_time(f);
    let sys = kernel.as_ref().map_or(0.0, |k| k.0);
    if own.min(1.0) > sys {
        let t = e.filesystem.first()?;
        return Some(Finding {
            score: own.min(1.0),
            headline: format!("{} took {:.2} cores", t.name, t.cores),
            detail: if e.filesystem.len() > 1 {
                format!(" ({own:.2} with the filesystem's other threads)")
            } else {
                String::new()
            },
            ..Default::default()
        });
    }
    let (sys, headline, detail) = kernel.filter(|_| filesystems_own(f.split))?;
    Some(Finding {
        score: sys,
        headline,
        detail,
        ..Default::default()
    })
}

pub(super) fn kernel_cpu(f: &Facts) -> Option<Finding> {
    if filesystems_own(f.split) {
        return None;
    }
    let (sys, headline, detail) = kernel_time(f)?;
    Some(Finding {
        score: sys,
        headline,
        detail,
        device: f
            .evidence
            .devices
            .iter()
            .find(|d| d.medium == Medium::Memory)
            .map(|d| d.name.clone()),
        ..Default::default()
    })
}

pub(super) fn benchmark_cpu(f: &Facts) -> Option<Finding> {
    let w = f.evidence.busiest_worker()?;
    let busy = of_runnable(w, w.on_cpu());
    Some(Finding {
        score: of_runnable(w, w.user),
        headline: format!("worker {} {} busy", w.index, pct(busy)),
        detail: format!(
            ", {} of it in fsbench's own code",
            pct(if w.on_cpu() > 0.0 {
                w.user / w.on_cpu()
            } else {
                0.0
            })
        ),
        ..Default::default()
    })
}

pub(super) fn waiting(f: &Facts) -> Option<Finding> {
    if f.pacing
        .is_some_and(|p| p.reached.is_none_or(|r| r >= super::REACHED))
    {
        return None;
    }
    let e = f.evidence;
    let b = blocked(e);
    let off = format!("the workers were off the CPU {} of their time", pct(b));
    let Some(d) = bound(e) else {
        return Some(match f.medium {
            // A filesystem whose devices cannot be found (a directory on ZFS): the device may
            // be what they waited for, or not.
            Medium::Disk => Finding {
                score: b,
                headline: format!("{off}, and no device of the target could be found"),
                detail: ": device and waiting cannot be told apart".into(),
                undecided: Some([Limit::Device, Limit::Waiting]),
                ..Default::default()
            },
            // With io-wq doing the workers' I/O, each I/O is a hand-off: the worker sleeps
            // until io-wq's thread, woken on another CPU, has done it and woken the worker. The
            // time beyond io-wq's CPU is those wake-ups, with no device to wait for: the
            // kernel's way of doing the I/O, which `kernel-cpu` names, not a wait.
            Medium::Memory if helped(e) > 0.0 => Finding {
                score: 0.0,
                headline: off,
                detail: ", handing each I/O to io-wq and waiting for its wake-ups".into(),
                ..Default::default()
            },
            Medium::Memory => Finding {
                score: b,
                headline: off,
                detail: ", with no device under a memory-backed target".into(),
                ..Default::default()
            },
        });
    };
    Some(Finding {
        score: b * (1.0 - device_cover(e)) * (1.0 - filesystem_cover(e)),
        headline: off,
        detail: format!(", {} only {} busy{}", d.name, pct(d.util), flushes(d)),
        device: Some(d.name.clone()),
        ..Default::default()
    })
}
