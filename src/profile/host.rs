//! What this host lets fsbench profile, found by trying (an event opened on the calling thread
//! and closed), and why not, with the fix: for the records' notes and `fsbench doctor`.

use std::io;
use std::sync::OnceLock;

use super::perf::{off_cpu_event, on_cpu_event, Sampling};

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

/// What the host allows: each profile, kernel frames in them, and kernel symbols.
#[derive(Debug, Clone)]
pub struct Access {
    /// Err: why on-CPU profiles cannot be taken.
    pub on_cpu: Result<(), String>,
    pub off_cpu: Result<(), String>,
    /// Err: why kernel frames are not sampled (user frames still are).
    pub kernel: Result<(), String>,
    /// Err: why kernel frames cannot be named.
    pub symbols: Result<usize, String>,
}

fn try_open(
    open: fn(u32, &Sampling) -> io::Result<perf_event::Sampler>,
    s: &Sampling,
) -> io::Result<()> {
    open(crate::sys::gettid(), s).map(drop)
}

/// Tries each event on the calling thread, with kernel frames and then without.
pub fn probe() -> Access {
    let paranoid = sysctl("perf_event_paranoid");
    let root = crate::sys::is_root();
    let with = Sampling {
        on_cpu: true,
        off_cpu: true,
        hz: super::DEFAULT_HZ,
        kernel: true,
    };
    let without = Sampling {
        kernel: false,
        ..with
    };
    let mut kernel = Ok(());
    let mut each =
        |open: fn(u32, &Sampling) -> io::Result<perf_event::Sampler>, what: &str| match try_open(
            open, &with,
        ) {
            Ok(()) => Ok(()),
            Err(e) => match try_open(open, &without) {
                Ok(()) => {
                    kernel = Err(refusal("kernel call chains", &e, paranoid, root));
                    Ok(())
                }
                Err(e) => Err(refusal(what, &e, paranoid, root)),
            },
        };
    let on_cpu = each(on_cpu_event, "cpu-clock sampling");
    let off_cpu = each(off_cpu_event, "context-switch sampling");
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
        on_cpu,
        off_cpu,
        kernel,
        symbols,
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
    let (on, on_d) = say(
        &a.on_cpu,
        &format!("cpu-clock sampled at {} Hz per thread", super::DEFAULT_HZ),
    );
    let (off, off_d) = say(&a.off_cpu, "a call chain at every switch off the CPU");
    let (k, k_d) = say(&a.kernel, "kernel and user call chains");
    let (sym, sym_d) = match &a.symbols {
        Ok(n) => (true, format!("{n} kernel functions in /proc/kallsyms")),
        Err(why) => (false, why.clone()),
    };
    vec![
        ("profile: on-CPU".into(), on, on_d),
        ("profile: off-CPU".into(), off, off_d),
        ("profile: kernel frames".into(), k, k_d),
        ("profile: kernel symbols".into(), sym, sym_d),
    ]
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
    }

    #[test]
    fn the_probe_answers_every_question() {
        let a = probe();
        let lines = checks();
        assert_eq!(lines.len(), 4);
        // Whatever this host allows, a refusal says why in words.
        for r in [&a.on_cpu, &a.off_cpu, &a.kernel] {
            if let Err(why) = r {
                assert!(!why.is_empty());
            }
        }
    }
}
