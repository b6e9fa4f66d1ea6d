//! Where a measured phase spent its time: call-chain profiles of its workers, of fsbench's
//! threads that do their I/O (io_uring's io-wq workers) and of the filesystem's daemons
//! (zfs-fuse), on the CPU (a sample at each timer tick that interrupts them, or `cpu-clock` at
//! `DEFAULT_HZ` where the tick's tracepoint cannot be opened) and off it (a call chain at each
//! switch off the CPU, weighted by the time until the thread ran again), through
//! perf_event_open(2), one event per thread, for the measured phase only. The frame starts a
//! `Profiling` before the workers and finishes it after them; the workers' threads are attached
//! as each begins (`metrics::evidence::ThreadWatch`), sampled from its start line (from its
//! start when the workload has none) to its end. A thread drains the ring buffers every few
//! milliseconds; the chains are named (`symbolize.rs`) and folded (`folded.rs`) when the phase
//! ends. Where the host cannot, the phase runs unprofiled and its records say why.

pub mod elf;
pub mod folded;
pub mod host;
pub mod kallsyms;
pub mod perf;
pub mod record;
pub mod shares;
pub mod symbolize;

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::metrics::evidence::{FsThreads, ThreadWatch};
use crate::plan::profile::ProfileMode;
use folded::{Folded, Kind, FSBENCH};
use perf::{Sampling, Stream, Whose};
pub use record::RecordProfile;
use record::Stacks;

/// The cpu-clock's rate where the tick cannot be sampled: an odd figure, so sampling does not
/// beat in step with work that runs every millisecond or every 10 (perf's and bpftrace's habit).
pub const DEFAULT_HZ: u64 = 999;

/// How often the ring buffers are emptied: often enough that none fills. Off the CPU a thread
/// switching 35,000 times a second fills its 256 KiB in about 20 ms; on it, 64 KiB hold 60 or
/// more chains, a quarter of a second at the tick's 250 Hz. Fewer wake-ups disturb the run less.
const DRAIN_OFF_CPU: Duration = Duration::from_millis(10);
const DRAIN_ON_CPU: Duration = Duration::from_millis(40);
/// How often new threads of the daemons are looked for.
const RESCAN: Duration = Duration::from_millis(250);

/// The state the workers' threads, the draining thread and the frame share.
struct Shared {
    sampling: Sampling,
    daemons: &'static [&'static str],
    streams: Mutex<Vec<Arc<Mutex<Stream>>>>,
    done: AtomicBool,
    /// Threads that could not be attached, and why (one line per reason).
    refused: Mutex<Vec<(String, usize)>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Shared {
    fn attach(&self, tid: u32, pid: u32, whose: Whose, root: &str, enabled: bool) {
        match Stream::open(tid, pid, whose, root, &self.sampling) {
            Ok(mut s) => {
                if enabled {
                    s.enable(true);
                }
                lock(&self.streams).push(Arc::new(Mutex::new(s)));
            }
            Err(e) => {
                let who = match whose {
                    Whose::Daemon => format!("threads of {root}"),
                    _ => "fsbench threads".into(),
                };
                let why = format!(
                    "{who} not profiled: {}",
                    host::refusal("sampling them", &e, None, crate::sys::is_root())
                );
                let mut r = lock(&self.refused);
                match r.iter_mut().find(|(w, _)| *w == why) {
                    Some(x) => x.1 += 1,
                    None => r.push((why, 1)),
                }
            }
        }
    }

    fn all(&self) -> Vec<Arc<Mutex<Stream>>> {
        lock(&self.streams).clone()
    }

    fn worker(&self, index: usize) -> Option<Arc<Mutex<Stream>>> {
        self.all()
            .into_iter()
            .find(|s| lock(s).whose == Whose::Worker(index))
    }

    /// Attaches to threads of the daemons and to fsbench's io_uring workers not yet attached.
    fn rescan(&self) {
        let known: HashSet<u32> = self.all().iter().map(|s| lock(s).tid).collect();
        let me = std::process::id();
        for tid in tasks(me) {
            if !known.contains(&tid) && helper(&comm(me, tid)) {
                self.attach(tid, me, Whose::Helper, FSBENCH, true);
            }
        }
        if self.daemons.is_empty() {
            return;
        }
        for t in crate::metrics::procfs::processes() {
            let (pid, name) = (t.pid, t.comm);
            if t.cpu.kernel_thread(pid) || !self.daemons.contains(&name.as_str()) {
                continue;
            }
            for tid in tasks(pid) {
                if !known.contains(&tid) {
                    self.attach(tid, pid, Whose::Daemon, &name, true);
                }
            }
        }
    }

    fn drain(&self) {
        for s in self.all() {
            lock(&s).drain();
        }
    }
}

impl ThreadWatch for Shared {
    fn began(&self, index: usize, tid: u32) {
        // Sampled from here: a workload whose workers have no start line measures all they do.
        self.attach(tid, std::process::id(), Whose::Worker(index), FSBENCH, true);
    }

    fn started(&self, index: usize) {
        // What it did before the start line (opening its files) is not the phase's.
        if let Some(s) = self.worker(index) {
            lock(&s).forget();
        }
    }

    fn ended(&self, index: usize) {
        if let Some(s) = self.worker(index) {
            lock(&s).enable(false);
        }
    }
}

/// The threads of a process.
fn tasks(pid: u32) -> Vec<u32> {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|d| {
            d.flatten()
                .filter_map(|e| e.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

fn comm(pid: u32, tid: u32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/comm"))
        .map(|s| s.trim_end().to_string())
        .unwrap_or_default()
}

/// fsbench's threads that do the workers' I/O for them: io_uring's io-wq workers and its
/// submission-queue poller.
fn helper(comm: &str) -> bool {
    comm.starts_with("iou-wrk") || comm.starts_with("iou-sqp")
}

/// A phase being profiled.
pub struct Profiling {
    mode: ProfileMode,
    /// How the filesystem's kernel functions are named (the kernel time's split).
    code: &'static [&'static str],
    shared: Arc<Shared>,
    drainer: Option<std::thread::JoinHandle<()>>,
    /// What the host does not allow, said on every record of the phase.
    notes: Vec<String>,
}

/// A phase's profiles, per part (a record each), and what its records should say about them.
#[derive(Debug, Clone, Default)]
pub struct Profiled {
    pub parts: Vec<RecordProfile>,
    pub notes: Vec<String>,
}

impl Profiling {
    /// Starts profiling a phase as `mode` asks, for the filesystem's `threads`; Err: why it
    /// cannot here (the phase then runs unprofiled).
    pub fn start(mode: ProfileMode, threads: &FsThreads) -> Result<Profiling, String> {
        let a = host::access();
        let mut notes = Vec::new();
        let on_cpu = mode.on_cpu() && a.on_cpu.is_ok();
        let off_cpu = mode.off_cpu() && a.off_cpu.is_ok();
        for (asked, r, what) in [
            (mode.on_cpu(), &a.on_cpu, "on-CPU"),
            (mode.off_cpu(), &a.off_cpu, "off-CPU"),
        ] {
            if let (true, Err(why)) = (asked, r) {
                notes.push(format!("no {what} profile: {why}"));
            }
        }
        if !on_cpu && !off_cpu {
            return Err(format!("{}; the phase ran unprofiled", notes.join("; ")));
        }
        if let Some(note) = a.clock_note().filter(|_| on_cpu) {
            notes.push(note);
        }
        if let Err(why) = &a.kernel {
            notes.push(format!("user frames only: {why}"));
        } else if let Err(why) = &a.symbols {
            notes.push(why.clone());
        }
        let shared = Arc::new(Shared {
            sampling: Sampling {
                on_cpu,
                off_cpu,
                clock: a.clock,
                hz: a.hz,
                kernel: a.kernel.is_ok(),
            },
            daemons: threads.daemons,
            streams: Mutex::new(Vec::new()),
            done: AtomicBool::new(false),
            refused: Mutex::new(Vec::new()),
        });
        shared.rescan();
        let s = shared.clone();
        let drain = if off_cpu { DRAIN_OFF_CPU } else { DRAIN_ON_CPU };
        let drainer = std::thread::Builder::new()
            .name("fsbench-profile".into())
            .spawn(move || {
                let mut scanned = Instant::now();
                while !s.done.load(Ordering::Acquire) {
                    std::thread::sleep(drain);
                    s.drain();
                    if scanned.elapsed() >= RESCAN {
                        scanned = Instant::now();
                        s.rescan();
                    }
                }
            })
            .map_err(|e| format!("cannot start the profile's thread: {e}"))?;
        Ok(Profiling {
            mode,
            code: threads.code,
            shared,
            drainer: Some(drainer),
            notes,
        })
    }

    /// What the board tells of its workers.
    pub fn watch(&self) -> Arc<dyn ThreadWatch> {
        self.shared.clone()
    }

    /// Stops sampling and names and folds what was gathered, per part: `part_of[i]` is the part
    /// worker i's figures went to; the other threads' samples count in every part.
    pub fn finish(mut self, part_of: &[usize]) -> Profiled {
        self.shared.done.store(true, Ordering::Release);
        if let Some(h) = self.drainer.take() {
            let _ = h.join();
        }
        let streams = self.shared.all();
        for s in &streams {
            let mut s = lock(s);
            s.enable(false);
            s.drain();
        }
        let parts = part_of.iter().copied().max().map_or(1, |m| m + 1);
        let mut on = vec![Folded::default(); parts];
        let mut off = vec![Folded::default(); parts];
        let (mut lost_on, mut lost_off) = (0, 0);
        let kernel = kallsyms::host();
        let mut sym = symbolize::Symbolizer::new(&kernel);
        // The tick's samples, and those whose chain did not hold its entry.
        let mut ticks = (0u64, 0u64);
        for s in &streams {
            let s = lock(s);
            sym.load_process(s.pid);
            let to: Vec<usize> = match s.whose {
                Whose::Worker(i) => vec![part_of.get(i).copied().unwrap_or(0)],
                _ => (0..parts).collect(),
            };
            // A tick's chain starts in the timer interrupt: the thread's own frames begin below
            // its entry.
            let on_entry =
                (self.shared.sampling.clock == perf::Clock::Tick).then_some(perf::TICK_ENTRY);
            for (per, folded, entry) in [
                (&s.chains.on, &mut on, on_entry),
                (&s.chains.off, &mut off, None),
            ] {
                for chains in per.values() {
                    for (chain, n) in chains {
                        let frames = sym.stack(&s.root, s.pid, chain, entry);
                        if entry.is_some() {
                            ticks.0 += n;
                            ticks.1 += if sym.entered() { 0 } else { *n };
                        }
                        for &p in &to {
                            folded[p].add(&frames, *n);
                        }
                    }
                }
            }
            lost_on += s.chains.lost_on;
            lost_off += s.chains.lost_off;
        }
        let mut notes = self.notes.clone();
        for (why, n) in lock(&self.shared.refused).iter() {
            notes.push(format!("{why} ({n} threads)"));
        }
        if ticks.1 > 0 && self.shared.sampling.kernel {
            notes.push(format!(
                "{} of {} on-CPU samples had no timer interrupt entry ({}) in their chain: kept whole, their kernel frames may be the interrupt's own (fsbench doctor: profile: tick entry)",
                ticks.1,
                ticks.0,
                perf::TICK_ENTRY
            ));
        }
        if lost_on + lost_off > 0 {
            notes.push(format!(
                "{} samples lost (the kernel's ring buffer was full); the profile has the rest",
                lost_on + lost_off
            ));
        }
        let sampling = self.shared.sampling;
        let parts = on
            .into_iter()
            .zip(off)
            .map(|(on, off)| RecordProfile {
                mode: self.mode,
                clock: sampling.clock,
                hz: sampling.hz,
                on_cpu: sampling
                    .on_cpu
                    .then(|| Stacks::of(on, Kind::OnCpu, lost_on, self.code)),
                off_cpu: sampling
                    .off_cpu
                    .then(|| Stacks::of(off, Kind::OffCpu, lost_off, self.code)),
            })
            .collect();
        Profiled { parts, notes }
    }
}

impl Drop for Profiling {
    fn drop(&mut self) {
        self.shared.done.store(true, Ordering::Release);
        if let Some(h) = self.drainer.take() {
            let _ = h.join();
        }
    }
}
