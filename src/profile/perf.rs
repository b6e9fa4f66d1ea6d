//! The perf events of one thread, through perf_event_open(2) (the perf-event2 crate): a sample
//! with its call chain at each timer tick that interrupts the thread (on the CPU; a software
//! `cpu-clock` at a fixed rate where the tick's tracepoint cannot be opened), and a sample at every
//! switch off the CPU with the context-switch records that time it (off the CPU). Sampling on the
//! tick rather than on a clock of the thread's own is what keeps a profiled run's rate: a
//! per-thread clock is a timer stopped and restarted at every context switch, which in a VM costs
//! a switch-heavy job 5-25% of its IOPS (docs/performance.md, "What a profile costs"). One event per thread:
//! the kernel refuses a ring buffer on an inheriting event for every CPU, so each thread is
//! attached as it starts. Events are opened disabled and enabled for the measured phase only.

use std::collections::HashMap;
use std::io;

pub use super::record::Clock;

use perf_event::events::{Software, Tracepoint};
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
/// the tick (or 999 Hz); a switch-heavy thread (fsync per write) fills the off-CPU one faster.
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
    /// What the on-CPU samples are taken at, and at what rate (the tick's: CONFIG_HZ, or 0).
    pub clock: Clock,
    pub hz: u64,
    /// Kernel frames too (root, or kernel.perf_event_paranoid at most 1).
    pub kernel: bool,
}

/// The tracepoint the tick is sampled at, and the kernel frame its call chains enter it by (what
/// lies leafward of that frame is the interrupt's own work, not the thread's).
pub const TICK_TRACEPOINT: &str = "irq_vectors/local_timer_entry";
pub const TICK_ENTRY: &str = "asm_sysvec_apic_timer_interrupt";

/// tracefs, where the kernel mounts it today and where it did before.
pub const TRACEFS: [&str; 2] = ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"];

/// The one command that shows the tick's tracepoint on a host whose tracefs is not mounted
/// (what libtracefs does when it finds none; fsbench as root does it for a profiled run).
pub const MOUNT_TRACEFS: &str = "mount -t tracefs nodev /sys/kernel/tracing";

/// The tick tracepoint's id, from tracefs, read once (every thread's event is opened with it).
pub fn tick_id() -> io::Result<u64> {
    static ID: std::sync::OnceLock<Result<u64, (io::ErrorKind, String)>> =
        std::sync::OnceLock::new();
    ID.get_or_init(|| read_tick_id().map_err(|e| (e.kind(), e.to_string())))
        .clone()
        .map_err(|(kind, text)| io::Error::new(kind, text))
}

fn read_tick_id() -> io::Result<u64> {
    let mut last = io::Error::new(io::ErrorKind::NotFound, "tracefs is not mounted");
    for root in TRACEFS {
        match std::fs::read_to_string(format!("{root}/events/{TICK_TRACEPOINT}/id")) {
            Ok(s) => {
                return s.trim().parse().map_err(|_| {
                    io::Error::new(
                        io::ErrorKind::InvalidData,
                        "the tracepoint's id is not a number",
                    )
                })
            }
            Err(e) => last = e,
        }
    }
    Err(last)
}

/// The kernel's tick rate (CONFIG_HZ) from its configuration, where the host keeps it; 0 if not.
pub fn tick_hz() -> u64 {
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let text = std::fs::read_to_string(format!("/boot/config-{}", release.trim()))
        .ok()
        .or_else(|| {
            use std::io::Read;
            let f = std::fs::File::open("/proc/config.gz").ok()?;
            let mut s = String::new();
            flate2::read::GzDecoder::new(f)
                .read_to_string(&mut s)
                .ok()?;
            Some(s)
        })
        .unwrap_or_default();
    config_hz(&text)
}

fn config_hz(config: &str) -> u64 {
    config
        .lines()
        .find_map(|l| l.strip_prefix("CONFIG_HZ=")?.trim().parse().ok())
        .unwrap_or(0)
}

/// The event sampled for on-CPU profiles: the tick's tracepoint (a sample at each timer interrupt
/// of the thread), or `cpu-clock` at `hz`, what `perf record` falls back to where the machine (a
/// VM) has no hardware counters.
pub fn on_cpu_event(tid: u32, s: &Sampling) -> io::Result<Sampler> {
    let mut b = match s.clock {
        Clock::Tick => {
            let mut b = Builder::new(Tracepoint::with_id(tick_id()?));
            b.sample_period(1);
            b
        }
        Clock::CpuClock => {
            let mut b = Builder::new(Software::CPU_CLOCK);
            b.sample_frequency(s.hz);
            b
        }
    };
    b.observe_pid(tid as i32)
        .any_cpu()
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
    fn the_tick_rate_is_read_from_the_kernels_configuration() {
        assert_eq!(
            config_hz("# CONFIG_HZ_100 is not set\nCONFIG_HZ_250=y\nCONFIG_HZ=250\n"),
            250
        );
        assert_eq!(config_hz("CONFIG_HZ_1000=y\nCONFIG_HZ=1000"), 1000);
        assert_eq!(config_hz("CONFIG_NO_HZ=y\n"), 0);
    }

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
