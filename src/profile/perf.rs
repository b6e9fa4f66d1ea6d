//! The perf events of one thread, through perf_event_open(2) (the perf-event2 crate): a software
//! clock sampled at a fixed rate with call chains (on the CPU), and a sample at every switch off
//! the CPU with the context-switch records that time it (off the CPU). One event per thread:
//! the kernel refuses a ring buffer on an inheriting event for every CPU, so each thread is
//! attached as it starts. Events are opened disabled and enabled for the measured phase only.

use std::collections::HashMap;
use std::io;

use perf_event::events::Software;
use perf_event::{Builder, SampleFlag, Sampler};

/// Whose a profiled thread is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Whose {
    /// A worker of the phase, by index.
    Worker(usize),
    /// Another thread of fsbench doing the workload's work (io_uring's io-wq workers).
    Helper,
    /// A thread of the filesystem's daemon (its name is the stack's root).
    Daemon,
}

/// Ring buffer sizes: a drain every few milliseconds empties them long before they fill at
/// 999 Hz; a switch-heavy thread (fsync per write) fills the off-CPU one faster.
const ON_BYTES: usize = 64 << 10;
const OFF_BYTES: usize = 256 << 10;

/// perf's record types and the flags of a context-switch record.
const RECORD_LOST: u32 = 2;
const RECORD_SAMPLE: u32 = 9;
const RECORD_SWITCH: u32 = 14;
const MISC_SWITCH_OUT: u16 = 1 << 13;
const MISC_SWITCH_OUT_PREEMPT: u16 = 1 << 14;

/// What is being sampled, and how.
#[derive(Debug, Clone, Copy)]
pub struct Sampling {
    pub on_cpu: bool,
    pub off_cpu: bool,
    pub hz: u64,
    /// Kernel frames too (root, or kernel.perf_event_paranoid at most 1).
    pub kernel: bool,
}

/// The clock sampled for on-CPU profiles: `cpu-clock`, what `perf record` falls back to where
/// the machine (a VM) has no hardware counters.
pub fn on_cpu_event(tid: u32, s: &Sampling) -> io::Result<Sampler> {
    let mut b = Builder::new(Software::CPU_CLOCK);
    b.observe_pid(tid as i32)
        .any_cpu()
        .sample_frequency(s.hz)
        .sample(SampleFlag::TID | SampleFlag::TIME | SampleFlag::CALLCHAIN)
        .exclude_kernel(!s.kernel)
        .exclude_hv(true);
    b.build()?.sampled(ON_BYTES)
}

/// A sample with its call chain at every switch off the CPU, and the switch records (out, with
/// whether it was preempted, and back in) that say how long the thread stayed off.
pub fn off_cpu_event(tid: u32, s: &Sampling) -> io::Result<Sampler> {
    let mut b = Builder::new(Software::CONTEXT_SWITCHES);
    b.observe_pid(tid as i32)
        .any_cpu()
        .sample_period(1)
        .sample(SampleFlag::TID | SampleFlag::TIME | SampleFlag::CALLCHAIN)
        .context_switch(true)
        .sample_id_all(true)
        .exclude_kernel(!s.kernel)
        .exclude_hv(true);
    b.build()?.sampled(OFF_BYTES)
}

/// A thread being profiled.
pub struct Stream {
    pub tid: u32,
    /// Its process (whose binary names its user frames).
    pub pid: u32,
    pub whose: Whose,
    /// The stack's root: `fsbench`, or the daemon's name.
    pub root: String,
    on: Option<Sampler>,
    off: Option<Sampler>,
    pub enabled: bool,
    /// What its ring buffers held so far.
    pub chains: Chains,
}

/// Where a thread that went off the CPU stands.
#[derive(Debug, Default)]
struct Wait {
    stack: Option<Vec<u64>>,
    out_ns: Option<u64>,
    preempted: bool,
}

/// Call chains gathered so far, per thread: on the CPU, samples; off it, microseconds blocked.
#[derive(Debug, Default)]
pub struct Chains {
    pub on: HashMap<u32, HashMap<Vec<u64>, u64>>,
    pub off: HashMap<u32, HashMap<Vec<u64>, u64>>,
    /// Records the kernel could not write (a full ring buffer), on and off the CPU.
    pub lost_on: u64,
    pub lost_off: u64,
    waits: HashMap<u32, Wait>,
}

impl Chains {
    fn sample(map: &mut HashMap<u32, HashMap<Vec<u64>, u64>>, tid: u32, chain: &[u64], n: u64) {
        let per = map.entry(tid).or_default();
        match per.get_mut(chain) {
            Some(c) => *c += n,
            None => {
                per.insert(chain.to_vec(), n);
            }
        }
    }

    /// An off-CPU sample: the chain where the thread is about to switch out.
    pub fn switching(&mut self, tid: u32, chain: &[u64]) {
        self.waits.entry(tid).or_default().stack = Some(chain.to_vec());
    }

    /// A switch record: out (and whether preempted) or back in. Back in from a blocked switch
    /// out charges its chain with the time off the CPU; a preempted thread was runnable, not
    /// blocked, and is not charged.
    pub fn switched(&mut self, tid: u32, out: bool, preempted: bool, ns: u64) {
        let w = self.waits.entry(tid).or_default();
        if out {
            w.out_ns = Some(ns);
            w.preempted = preempted;
            return;
        }
        let w = std::mem::take(w);
        if let (Some(stack), Some(t0), false) = (w.stack, w.out_ns, w.preempted) {
            let us = ns.saturating_sub(t0) / 1000;
            if us > 0 {
                Chains::sample(&mut self.off, tid, &stack, us);
            }
        }
    }
}

impl Stream {
    /// Opens the events of thread `tid`, disabled.
    pub fn open(tid: u32, pid: u32, whose: Whose, root: &str, s: &Sampling) -> io::Result<Stream> {
        Ok(Stream {
            tid,
            pid,
            whose,
            root: root.to_string(),
            on: s.on_cpu.then(|| on_cpu_event(tid, s)).transpose()?,
            off: s.off_cpu.then(|| off_cpu_event(tid, s)).transpose()?,
            enabled: false,
            chains: Chains::default(),
        })
    }

    /// Starts (or stops) sampling; a thread that has exited cannot be told either (ignored).
    pub fn enable(&mut self, on: bool) {
        for s in [self.on.as_mut(), self.off.as_mut()].into_iter().flatten() {
            let _ = if on { s.enable() } else { s.disable() };
        }
        self.enabled = on;
    }

    /// Forgets what it has gathered so far (a worker's setup before its start line).
    pub fn forget(&mut self) {
        for s in [self.on.as_mut(), self.off.as_mut()].into_iter().flatten() {
            while s.next_record().is_some() {}
        }
        self.chains = Chains::default();
    }

    /// Moves every record in the ring buffers into its chains.
    pub fn drain(&mut self) {
        let tid = self.tid;
        let into = &mut self.chains;
        if let Some(s) = self.on.as_mut() {
            while let Some(r) = s.next_record() {
                match r.ty() {
                    RECORD_SAMPLE => {
                        if let Ok(perf_event::data::Record::Sample(x)) = r.parse_record() {
                            if let Some(chain) = x.callchain() {
                                Chains::sample(&mut into.on, tid, chain, 1);
                            }
                        }
                    }
                    RECORD_LOST => into.lost_on += lost(&r),
                    _ => {}
                }
            }
        }
        if let Some(s) = self.off.as_mut() {
            while let Some(r) = s.next_record() {
                match r.ty() {
                    RECORD_SAMPLE => {
                        if let Ok(perf_event::data::Record::Sample(x)) = r.parse_record() {
                            if let Some(chain) = x.callchain() {
                                into.switching(tid, chain);
                            }
                        }
                    }
                    RECORD_SWITCH => {
                        // The record's body is its sample_id: pid, tid (u32 each), then time.
                        let body = r.to_contiguous();
                        if let Some(t) = body.get(8..16) {
                            let ns = u64::from_ne_bytes(t.try_into().unwrap_or([0; 8]));
                            let misc = r.misc();
                            into.switched(
                                tid,
                                misc & MISC_SWITCH_OUT != 0,
                                misc & MISC_SWITCH_OUT_PREEMPT != 0,
                                ns,
                            );
                        }
                    }
                    RECORD_LOST => into.lost_off += lost(&r),
                    _ => {}
                }
            }
        }
    }
}

fn lost(r: &perf_event::Record) -> u64 {
    match r.parse_record() {
        Ok(perf_event::data::Record::Lost(l)) => l.lost,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocked_time_is_charged_to_the_chain_where_the_thread_switched_out() {
        let mut c = Chains::default();
        c.switching(5, &[1, 2, 3]);
        c.switched(5, true, false, 1_000_000);
        c.switched(5, false, false, 3_500_000);
        // Preempted: runnable, not blocked.
        c.switching(5, &[1, 2, 3]);
        c.switched(5, true, true, 4_000_000);
        c.switched(5, false, false, 9_000_000);
        // Back in without a switch out seen (the thread was off when sampling began).
        c.switched(5, false, false, 10_000_000);
        c.switching(5, &[7]);
        c.switched(5, true, false, 11_000_000);
        c.switched(5, false, false, 11_250_000);
        let per = &c.off[&5];
        assert_eq!(per[&vec![1, 2, 3]], 2500);
        assert_eq!(per[&vec![7]], 250);
        assert_eq!(per.len(), 2);
    }
}
