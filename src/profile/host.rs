//! What this host lets fsbench profile, found by trying (an event opened on the calling thread
//! and closed), and why not, with the fix: for the records' notes and `fsbench doctor`.

use std::io;
use std::sync::OnceLock;

use super::perf::{off_cpu_event, on_cpu_event, Clock, Sampling};

fn sysctl(name: &str) -> Option<i64> {
    std::fs::read_to_string(format!("/proc/sys/kernel/{name}"))
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// Why perf_event_open(2) refused `what`, and what to do about it.
pub fn refusal(what: &str, e: &io::Error, paranoid: Option<i64>, root: bool) -> String {
    let setting = match paranoid {
        Some(p) => format!("kernel.perf_event_paranoid is {p}"),
        None => "kernel.perf_event_paranoid cannot be read".into(),
    };
    let who = if root { "" } else { " and fsbench is not root" };
    match e.raw_os_error() {
        Some(libc::EACCES) | Some(libc::EPERM) => format!(
            "perf_event_open refused {what} ({setting}{who}): run fsbench as root, or allow it with sysctl kernel.perf_event_paranoid=1"
        ),
        Some(libc::ENOSYS) => format!(
            "this kernel has no perf_event_open, so no {what} (it was built without CONFIG_PERF_EVENTS)"
        ),
        Some(libc::ENOENT) | Some(libc::ENODEV) | Some(libc::EOPNOTSUPP) | Some(libc::EINVAL) => {
            format!("this kernel cannot sample {what} ({e})")
        }
        Some(libc::EMFILE) | Some(libc::ENFILE) => format!(
            "no file descriptor left for {what} ({e}): raise the limit (ulimit -n)"
        ),
        _ => format!("perf_event_open failed for {what}: {e}"),
    }
}

/// Why the tick's tracepoint cannot be read, and the one command that enables it.
fn tracefs_refusal(e: &io::Error, root: bool) -> String {
    let what = format!(
        "tracefs does not show its tracepoint {} to fsbench",
        super::perf::TICK_TRACEPOINT
    );
    match e.kind() {
        io::ErrorKind::NotFound if root => format!(
            "{what}: tracefs is not mounted and fsbench could not mount it; `{}` enables the tick",
            super::perf::MOUNT_TRACEFS
        ),
        io::ErrorKind::NotFound => format!(
            "{what}: tracefs is not mounted and only root can mount it; `{}` as root enables the tick (fsbench run as root mounts it for a profiled run)",
            super::perf::MOUNT_TRACEFS
        ),
        _ if !root => format!("{what}: {e}; as root it does"),
        _ => format!("{what}: {e}"),
    }
}

/// What the host allows: each profile, kernel frames in them, and kernel symbols.
#[derive(Debug, Clone)]
pub struct Access {
    /// Err: why on-CPU profiles cannot be taken.
    pub on_cpu: Result<(), String>,
    /// What on-CPU samples are taken at here (the tick, or cpu-clock where it cannot), its
    /// rate, and why not the tick when it is not.
    pub clock: Clock,
    pub hz: u64,
    pub not_tick: Option<String>,
    pub off_cpu: Result<(), String>,
    /// Err: why kernel frames are not sampled (user frames still are).
    pub kernel: Result<(), String>,
    /// Err: why kernel frames cannot be named.
    pub symbols: Result<usize, String>,
}

type Open = fn(u32, &Sampling) -> io::Result<perf_event::Sampler>;

/// Opens an event on the calling thread with kernel frames, then without: Ok(None) with them,
/// Ok(Some(why)) user frames only, Err(why) not at all.
fn try_open(open: Open, with: &Sampling, what: &str) -> Result<Option<String>, String> {
    let paranoid = sysctl("perf_event_paranoid");
    let root = crate::sys::is_root();
    let me = crate::sys::gettid();
    match open(me, with) {
        Ok(_) => Ok(None),
        Err(e) => match open(
            me,
            &Sampling {
                kernel: false,
                ..*with
            },
        ) {
            Ok(_) => Ok(Some(refusal("kernel call chains", &e, paranoid, root))),
            Err(e) => Err(refusal(what, &e, paranoid, root)),
        },
    }
}

/// Tries each event on the calling thread, with kernel frames and then without; on the CPU the
/// tick first, then cpu-clock.
pub fn probe() -> Access {
    let tick = Sampling {
        on_cpu: true,
        off_cpu: true,
        clock: Clock::Tick,
        hz: super::perf::tick_hz(),
        kernel: true,
    };
    let cpu = Sampling {
        clock: Clock::CpuClock,
        hz: super::DEFAULT_HZ,
        ..tick
    };
    let tickless = std::fs::read_to_string("/sys/devices/system/cpu/nohz_full")
        .map(|s| s.trim().to_string())
        .unwrap_or_default();
    let tick_open = match super::perf::tick_id() {
        // A CPU that runs one task has no tick there: the profile of that task would be empty.
        _ if !tickless.is_empty() && tickless != "(null)" => Err(format!(
            "the kernel stops the tick on CPUs {tickless} (nohz_full), where a busy thread is never sampled"
        )),
        Ok(_) => try_open(on_cpu_event, &tick, "the timer tick's tracepoint"),
        Err(e) => Err(tracefs_refusal(&e, crate::sys::is_root())),
    };
    let (on, used, not_tick) = match tick_open {
        Ok(k) => (Ok(k), tick, None),
        Err(why) => (
            try_open(on_cpu_event, &cpu, "cpu-clock sampling"),
            cpu,
            Some(why),
        ),
    };
    let off = try_open(off_cpu_event, &cpu, "context-switch sampling");
    let kernel = match (&on, &off) {
        (Ok(Some(why)), _) | (_, Ok(Some(why))) => Err(why.clone()),
        _ => Ok(()),
    };
    let k = super::kallsyms::host();
    let symbols = if k.hidden {
        Err(format!(
            "/proc/kallsyms shows every address as 0 to fsbench (kernel.kptr_restrict is {}): kernel frames stay [unknown]; run as root, or sysctl kernel.kptr_restrict=0",
            sysctl("kptr_restrict").map_or("unreadable".into(), |v| v.to_string())
        ))
    } else if k.is_empty() {
        Err("/proc/kallsyms cannot be read: kernel frames stay [unknown]".into())
    } else {
        Ok(k.len())
    };
    Access {
        on_cpu: on.map(drop),
        not_tick,
        clock: used.clock,
        hz: used.hz,
        off_cpu: off.map(drop),
        kernel,
        symbols,
    }
}

impl Access {
    /// Why on-CPU samples are taken on cpu-clock here, and what that costs (a record's note).
    pub fn clock_note(&self) -> Option<String> {
        let why = self.not_tick.as_ref()?;
        Some(format!(
            "on-CPU samples on {} per thread, not the timer tick ({why}): a profiled run that switches often loses up to a fifth of its rate (docs/profiles.md, \"Cost\")",
            self.clock.describe(self.hz)
        ))
    }
}

/// The probe, once per process (what the kernel allows does not change while fsbench runs).
pub fn access() -> &'static Access {
    static A: OnceLock<Access> = OnceLock::new();
    A.get_or_init(probe)
}

/// `fsbench doctor`'s lines: (check, works, detail).
pub fn checks() -> Vec<(String, bool, String)> {
    let a = access();
    let say = |r: &Result<(), String>, ok: &str| match r {
        Ok(()) => (true, ok.to_string()),
        Err(why) => (false, why.clone()),
    };
    let on_what = match a.clock_note() {
        Some(note) => note,
        None => format!("sampled at {} per thread", a.clock.describe(a.hz)),
    };
    let (on, on_d) = say(&a.on_cpu, &on_what);
    let (off, off_d) = say(&a.off_cpu, "a call chain at every switch off the CPU");
    let (k, k_d) = say(&a.kernel, "kernel and user call chains");
    let (sym, sym_d) = match &a.symbols {
        Ok(n) => (true, format!("{n} kernel functions in /proc/kallsyms")),
        Err(why) => (false, why.clone()),
    };
    let (entry, entry_d) = tick_entry(a, &super::kallsyms::host());
    vec![
        ("profile: on-CPU".into(), on, on_d),
        ("profile: off-CPU".into(), off, off_d),
        ("profile: kernel frames".into(), k, k_d),
        ("profile: kernel symbols".into(), sym, sym_d),
        ("profile: tick entry".into(), entry, entry_d),
    ]
}

/// Whether a tick's chain can be cut at the timer interrupt's entry, so that its samples name
/// the interrupted frame and not the interrupt's own.
fn tick_entry(a: &Access, k: &super::kallsyms::Kallsyms) -> (bool, String) {
    let entry = super::perf::TICK_ENTRY;
    if a.clock != Clock::Tick || a.symbols.is_err() {
        return (
            true,
            "not needed: the on-CPU samples are not the tick's, or carry no kernel names".into(),
        );
    }
    if k.has(entry) {
        (
            true,
            format!("{entry} is in /proc/kallsyms: each tick's own frames are cut"),
        )
    } else {
        (
            false,
            format!("{entry} is not in /proc/kallsyms (an older kernel names it apic_timer_interrupt; FRED enters otherwise): on-CPU chains are kept whole, their kernel frames may be the interrupt's, and each record says how many"),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_says_the_setting_and_the_fix() {
        let e = io::Error::from_raw_os_error(libc::EACCES);
        let t = refusal("cpu-clock sampling", &e, Some(3), false);
        assert!(
            t.contains("kernel.perf_event_paranoid is 3 and fsbench is not root"),
            "{t}"
        );
        assert!(t.contains("sysctl kernel.perf_event_paranoid=1"), "{t}");
        let e = io::Error::from_raw_os_error(libc::ENOSYS);
        assert!(refusal("x", &e, None, true).contains("CONFIG_PERF_EVENTS"));
        let e = io::Error::from_raw_os_error(libc::EMFILE);
        assert!(refusal("x", &e, None, true).contains("ulimit -n"));
        // No tracefs: the one command that enables the tick, whoever runs fsbench.
        let e = io::Error::from_raw_os_error(libc::ENOENT);
        for root in [true, false] {
            let t = tracefs_refusal(&e, root);
            assert!(
                t.contains("`mount -t tracefs nodev /sys/kernel/tracing`")
                    && t.contains("enables the tick"),
                "{t}"
            );
        }
        let e = io::Error::from_raw_os_error(libc::EACCES);
        assert!(tracefs_refusal(&e, false).ends_with("as root it does"));
    }

    #[test]
    fn the_probe_answers_every_question() {
        let a = probe();
        let lines = checks();
        assert_eq!(lines.len(), 5);
        // Whatever this host allows, a refusal says why in words.
        for r in [&a.on_cpu, &a.off_cpu, &a.kernel] {
            if let Err(why) = r {
                assert!(!why.is_empty());
            }
        }
    }
}
