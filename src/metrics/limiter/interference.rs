//! Whether something outside the run disturbed a phase: other processes' CPU (alive at its end,
//! or come and gone within it), the hypervisor's steal, a worker kept waiting for a CPU while
//! others ran, other processes' storage I/O on the target's devices. The run's own ranks and
//! the kernel threads that do its I/O are never others.

use super::rules::pct;
use crate::metrics::evidence::Evidence;

/// Others' CPU (cores) at or above this share of the machine disturbs a phase.
pub const OTHERS_SHARE: f64 = 0.10;
/// Steal (the hypervisor's) at or above this share of the machine.
pub const STEAL_SHARE: f64 = 0.05;
/// A worker that waited this share of its time for a CPU while other processes ran (a process
/// on its CPU, which a share of a large machine does not show).
pub const RUNQ_SHARE: f64 = 0.25;
/// ... while others took at least this many cores.
const RUNQ_OTHERS: f64 = 0.05;
/// Others' storage I/O on the target's devices at or above this share of what they moved (and
/// at least IO_BYTES).
const IO_SHARE: f64 = 0.10;
const IO_BYTES: u64 = 1 << 20;

/// The interference note's text, when others took a documented share of the machine or the
/// target's devices during the phase.
pub fn interference(e: &Evidence) -> Option<String> {
    let m = e.machine.as_ref()?;
    let cpus = e.cpus.max(1) as f64;
    // Other user processes: kernel threads serve the phase's own I/O.
    let others = m.processes + m.gone;
    let cpu = others / cpus >= OTHERS_SHARE;
    let steal = m.steal >= STEAL_SHARE;
    let runq = e.workers.iter().map(|w| w.runq).fold(0.0, f64::max);
    let queued = runq >= RUNQ_SHARE && others >= RUNQ_OTHERS;
    let moved: u64 = e.devices.iter().map(|d| d.read_bytes + d.write_bytes).sum();
    let io =
        m.io.as_ref()
            .filter(|x| x.on_stack >= IO_BYTES && x.on_stack as f64 >= IO_SHARE * moved as f64);
    if !(cpu || steal || queued || io.is_some()) {
        return None;
    }
    let mut parts = Vec::new();
    if cpu || queued {
        let top: Vec<String> = m
            .other_top
            .iter()
            .map(|b| format!("{} {:.2}", b.name, b.cores))
            .collect();
        parts.push(format!(
            "other processes took {:.2} of {} CPUs{}{}",
            others,
            e.cpus,
            if top.is_empty() {
                String::new()
            } else {
                format!(" ({})", top.join(", "))
            },
            if m.gone >= 0.01 {
                format!(", {:.2} of it processes that came and went", m.gone)
            } else {
                String::new()
            }
        ));
    }
    if steal {
        parts.push(format!("the hypervisor stole {}", pct(m.steal)));
    }
    if runq > 0.0 {
        parts.push(format!(
            "a worker waited {} of its time for a CPU",
            pct(runq)
        ));
    }
    if let Some(x) = io {
        let top: Vec<String> = x
            .top
            .iter()
            .map(|(n, b)| format!("{n} {}", mib(*b)))
            .collect();
        parts.push(format!(
            "other processes moved {} of storage I/O ({}), {} of it on the target's devices",
            mib(x.bytes),
            top.join(", "),
            mib(x.on_stack)
        ));
    }
    if let Some(p) = &e.pressure {
        if cpu || queued {
            parts.push(format!("cpu pressure {}", pct(p.cpu_some)));
        }
        if io.is_some() {
            parts.push(format!("io pressure {}", pct(p.io_some)));
        }
    }
    Some(parts.join("; "))
}

fn mib(b: u64) -> String {
    format!("{:.1} MiB", b as f64 / (1 << 20) as f64)
}
