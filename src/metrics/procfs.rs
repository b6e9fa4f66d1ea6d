//! The kernel's counters that explain a phase, read from /proc: the machine's CPU time
//! (/proc/stat), pressure stall totals (/proc/pressure), a block device's full statistics
//! (/proc/diskstats), a thread's or a process's CPU time, run-queue wait and context switches
//! (stat, schedstat, status). Parsers take text (tested on recorded lines); readers return None
//! where the kernel has no such file.

use std::path::Path;

/// Clock ticks per second of /proc's tick counts (USER_HZ, 100 on Linux everywhere).
pub const TICKS_PER_SEC: f64 = 100.0;

/// The machine's CPU time, summed over its CPUs, in ticks (the first line of /proc/stat).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct MachineCpu {
    pub user: u64,
    pub system: u64,
    pub idle: u64,
    pub iowait: u64,
    pub irq: u64,
    pub steal: u64,
    /// Every field but guest time (already counted in user).
    pub total: u64,
    /// The CPUs online (its cpuN lines).
    pub cpus: usize,
    /// When the machine booted, in seconds since the epoch (its btime line; 0 without one).
    pub boot_time: u64,
}

pub fn parse_machine_cpu(text: &str) -> Option<MachineCpu> {
    let line = text.lines().find(|l| l.starts_with("cpu "))?;
    let v: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .map_while(|x| x.parse().ok())
        .collect();
    if v.len() < 5 {
        return None;
    }
    let at = |i: usize| v.get(i).copied().unwrap_or(0);
    // user nice system idle iowait irq softirq steal guest guest_nice
    Some(MachineCpu {
        user: at(0) + at(1),
        system: at(2),
        idle: at(3),
        iowait: at(4),
        irq: at(5) + at(6),
        steal: at(7),
        total: v.iter().take(8).sum(),
        cpus: text
            .lines()
            .filter(|l| l.starts_with("cpu") && l.as_bytes().get(3).is_some_and(u8::is_ascii_digit))
            .count(),
        boot_time: text
            .lines()
            .find_map(|l| l.strip_prefix("btime ")?.trim().parse().ok())
            .unwrap_or(0),
    })
}

pub fn machine_cpu() -> Option<MachineCpu> {
    parse_machine_cpu(&std::fs::read_to_string("/proc/stat").ok()?)
}

/// How many CPUs the machine has online (the cpuN lines of /proc/stat).
pub fn cpus() -> usize {
    machine_cpu().map_or(1, |m| m.cpus.max(1))
}

/// Pressure stall totals in microseconds (/proc/pressure/{cpu,io,memory}: `some` and `full`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Pressure {
    pub cpu_some: u64,
    pub io_some: u64,
    pub io_full: u64,
    pub memory_some: u64,
    pub memory_full: u64,
}

/// The `total=` of the `some` and `full` lines of one pressure file.
pub fn parse_pressure(text: &str) -> (Option<u64>, Option<u64>) {
    let total = |kind: &str| {
        text.lines()
            .find(|l| l.starts_with(kind))?
            .split_whitespace()
            .find_map(|f| f.strip_prefix("total="))?
            .parse()
            .ok()
    };
    (total("some "), total("full "))
}

/// None where the kernel has no PSI (built without it, or `psi=0`).
pub fn pressure() -> Option<Pressure> {
    let read = |what: &str| {
        std::fs::read_to_string(format!("/proc/pressure/{what}"))
            .ok()
            .map(|t| parse_pressure(&t))
    };
    let (cpu, io, mem) = (read("cpu")?, read("io")?, read("memory")?);
    Some(Pressure {
        cpu_some: cpu.0?,
        io_some: io.0?,
        io_full: io.1.unwrap_or(0),
        memory_some: mem.0.unwrap_or(0),
        memory_full: mem.1.unwrap_or(0),
    })
}

/// One block device's line of /proc/diskstats (Documentation/admin-guide/iostats.rst).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct DiskLine {
    pub reads: u64,
    pub read_sectors: u64,
    pub read_ms: u64,
    pub writes: u64,
    pub write_sectors: u64,
    pub write_ms: u64,
    pub in_flight: u64,
    /// Milliseconds with at least one request in flight (utilisation's numerator).
    pub busy_ms: u64,
    /// Milliseconds of requests in flight, weighted by how many (mean queue's numerator).
    pub queue_ms: u64,
    pub discards: u64,
    pub discard_ms: u64,
    pub flushes: u64,
    pub flush_ms: u64,
}

/// /proc/diskstats' text (empty where it cannot be read): one reading for every device.
pub fn diskstats() -> String {
    std::fs::read_to_string("/proc/diskstats").unwrap_or_default()
}

pub fn parse_disk_line(text: &str, name: &str) -> Option<DiskLine> {
    text.lines().find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.len() < 14 || f[2] != name {
            return None;
        }
        let n = |i: usize| f.get(i).and_then(|x| x.parse::<u64>().ok()).unwrap_or(0);
        Some(DiskLine {
            reads: n(3),
            read_sectors: n(5),
            read_ms: n(6),
            writes: n(7),
            write_sectors: n(9),
            write_ms: n(10),
            in_flight: n(11),
            busy_ms: n(12),
            queue_ms: n(13),
            discards: n(14),
            discard_ms: n(17),
            flushes: n(18),
            flush_ms: n(19),
        })
    })
}

/// A thread's or process's CPU time (ticks), from its `stat` file: utime and stime (fields 14
/// and 15, counted after the command name, which may hold spaces and parentheses).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct TaskCpu {
    pub user: u64,
    pub system: u64,
    /// Its parent's pid (2 for the kernel's threads).
    pub ppid: u32,
    /// Its state (field 3: R, S, D, Z, ...) and start time in ticks since boot (field 22).
    pub state: char,
    pub start_ticks: u64,
}

impl TaskCpu {
    /// Whether process `pid` with these figures is a kernel thread: kthreadd (2) or its child.
    pub fn kernel_thread(&self, pid: u32) -> bool {
        self.ppid == 2 || pid == 2
    }
}

/// The command name and the CPU figures of one `stat` line.
pub fn parse_task_stat(text: &str) -> Option<(String, TaskCpu)> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let comm = text.get(open + 1..close)?.to_string();
    let rest: Vec<&str> = text.get(close + 1..)?.split_whitespace().collect();
    // rest[0] is the state (field 3): utime is field 14, stime 15, ppid 4, starttime 22.
    let n = |i: usize| rest.get(i).and_then(|x| x.parse::<u64>().ok());
    Some((
        comm,
        TaskCpu {
            ppid: n(1)? as u32,
            user: n(11)?,
            system: n(12)?,
            state: rest.first()?.chars().next()?,
            start_ticks: n(19)?,
        },
    ))
}

/// A thread's scheduler figures (schedstat: nanoseconds on a CPU, nanoseconds runnable but
/// waiting for one, timeslices) and its context switches (status).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct TaskSched {
    pub on_cpu_ns: u64,
    pub runq_ns: u64,
    pub voluntary: u64,
    pub involuntary: u64,
}

pub fn parse_schedstat(text: &str) -> Option<(u64, u64)> {
    let mut f = text.split_whitespace().map(|x| x.parse::<u64>().ok());
    Some((f.next()??, f.next()??))
}

pub fn parse_switches(status: &str) -> (u64, u64) {
    let field = |key: &str| crate::sys::host::status_field(status, key).unwrap_or(0);
    (
        field("voluntary_ctxt_switches:"),
        field("nonvoluntary_ctxt_switches:"),
    )
}

/// A task directory's (`/proc/self/task/TID`, `/proc/thread-self`) scheduler figures.
pub fn task_sched(dir: &Path) -> Option<TaskSched> {
    let (on_cpu_ns, runq_ns) =
        parse_schedstat(&std::fs::read_to_string(dir.join("schedstat")).ok()?)?;
    let (voluntary, involuntary) =
        parse_switches(&std::fs::read_to_string(dir.join("status")).unwrap_or_default());
    Some(TaskSched {
        on_cpu_ns,
        runq_ns,
        voluntary,
        involuntary,
    })
}

/// The bytes a task caused to be read from and written to storage (`read_bytes`,
/// `write_bytes` of /proc/PID/io: block I/O it submitted, pages it dirtied).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct TaskIo {
    pub read: u64,
    pub written: u64,
}

pub fn parse_task_io(text: &str) -> Option<TaskIo> {
    let field = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.trim().parse().ok())
    };
    Some(TaskIo {
        read: field("read_bytes:")?,
        written: field("write_bytes:")?,
    })
}

/// A process's (or this process's, `self`) storage I/O so far.
pub fn task_io(pid: &str) -> Option<TaskIo> {
    let mut buf = [0u8; 512];
    parse_task_io(small(&format!("/proc/{pid}/io"), &mut buf)?)
}

/// A small /proc file read with one open, one read into `buf` and one close: no stat for its
/// size and no allocation (the walk over every process reads two per process right before a
/// phase's workers start, and what it touches the workers' first calls find cold). None when
/// it cannot be read or does not fit.
fn small<'a>(path: &str, buf: &'a mut [u8]) -> Option<&'a str> {
    use std::io::Read;
    let n = std::fs::File::open(path).ok()?.read(buf).ok()?;
    if n == buf.len() {
        return None;
    }
    std::str::from_utf8(&buf[..n]).ok()
}

/// One process of the machine: its pid, command name, CPU so far and storage I/O so far (None
/// where it cannot be read: a kernel thread, or not allowed).
#[derive(Debug, Clone, PartialEq)]
pub struct Task {
    pub pid: u32,
    pub comm: String,
    pub cpu: TaskCpu,
    pub io: Option<TaskIo>,
}

/// Every process of the machine. Kernel threads are the children of kthreadd (ppid 2) and
/// kthreadd itself.
pub fn processes() -> Vec<Task> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| {
        let e = e.ok()?;
        let name = e.file_name();
        let pid: u32 = name.to_str()?.parse().ok()?;
        let mut buf = [0u8; 1024];
        let (comm, cpu) = parse_task_stat(small(&format!("/proc/{pid}/stat"), &mut buf)?)?;
        let io = (!cpu.kernel_thread(pid))
            .then(|| task_io(name.to_str()?))
            .flatten();
        Some(Task { pid, comm, cpu, io })
    })
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_machine_line_of_proc_stat_is_read_with_steal_and_irq() {
        let t = parse_machine_cpu("cpu  100 5 50 1000 20 3 2 7 9 0\ncpu0 1 2 3 4\n").unwrap();
        assert_eq!(
            (t.user, t.system, t.idle, t.iowait, t.irq, t.steal, t.total),
            (105, 50, 1000, 20, 5, 7, 1187)
        );
        assert!(parse_machine_cpu("intr 1 2\n").is_none());
        assert_eq!(t.boot_time, 0);
        let t = parse_machine_cpu("cpu  1 0 1 1 0\nbtime 1795734000\nprocesses 9\n").unwrap();
        assert_eq!(t.boot_time, 1_795_734_000);
    }

    #[test]
    fn pressure_totals_are_read_from_some_and_full() {
        let t = "some avg10=1.00 avg60=0.83 avg300=3.66 total=43201316\nfull avg10=0.00 avg60=0.43 avg300=2.72 total=32367517\n";
        assert_eq!(parse_pressure(t), (Some(43201316), Some(32367517)));
        assert_eq!(parse_pressure("some avg10=0.00 total=5\n"), (Some(5), None));
    }

    #[test]
    fn a_diskstats_line_gives_busy_and_queue_time() {
        let t = "   7       0 loop0 190237 386 39930287 97230 316048 115464 33147342 231680 2 48932 335167 86 0 56787174 31 28616 6224\n";
        let d = parse_disk_line(t, "loop0").unwrap();
        assert_eq!(
            (d.reads, d.read_sectors, d.writes, d.in_flight),
            (190237, 39930287, 316048, 2)
        );
        assert_eq!(
            (d.busy_ms, d.queue_ms, d.flushes, d.flush_ms),
            (48932, 335167, 28616, 6224)
        );
        assert!(parse_disk_line(t, "loop1").is_none());
    }

    #[test]
    fn a_stat_line_with_spaces_and_parentheses_in_its_name_is_read() {
        let t =
            "4242 (my (odd) name) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 75 0 0 20 0 3 0 1 0 0\n";
        let (comm, c) = parse_task_stat(t).unwrap();
        assert_eq!(comm, "my (odd) name");
        assert_eq!((c.ppid, c.user, c.system), (1, 250, 75));
    }

    #[test]
    fn schedstat_and_switches_are_read() {
        assert_eq!(
            parse_schedstat("346707 6977482 2\n"),
            Some((346707, 6977482))
        );
        let s = "Name:\tx\nvoluntary_ctxt_switches:\t12\nnonvoluntary_ctxt_switches:\t3\n";
        assert_eq!(parse_switches(s), (12, 3));
    }

    #[test]
    fn a_tasks_storage_io_is_read_from_its_io_file() {
        let t = "rchar: 10\nwchar: 20\nsyscr: 1\nsyscw: 2\nread_bytes: 4096\nwrite_bytes: 8192\ncancelled_write_bytes: 0\n";
        assert_eq!(
            parse_task_io(t),
            Some(TaskIo {
                read: 4096,
                written: 8192
            })
        );
        assert_eq!(parse_task_io("rchar: 1\n"), None);
    }

    #[test]
    fn a_small_proc_file_is_read_whole_or_not_at_all() {
        let mut buf = [0u8; 1024];
        let stat = small("/proc/self/stat", &mut buf).expect("this process's stat");
        assert_eq!(parse_task_stat(stat).map(|x| x.1.ppid > 0), Some(true));
        // One that does not fit is not cut: its end would be another figure.
        let mut tiny = [0u8; 8];
        assert_eq!(small("/proc/self/stat", &mut tiny), None);
        assert_eq!(small("/proc/no-such-file", &mut buf), None);
    }
}
