//! Evidence from two snapshots: shares, the machine's accounts, the devices, what reached them.

use std::time::{Duration, Instant};

use super::procfs::{MachineCpu, Pressure, Task, TaskCpu, TaskIo, TaskSched};
use super::watch::{ThreadSample, WALK_EVERY};
use super::*;

fn watch() -> Watch {
    Watch {
        devices: vec![
            StackDevice {
                name: "loop1".into(),
                role: Role::Target,
                medium: Medium::Disk,
            },
            StackDevice {
                name: "vda".into(),
                role: Role::Backing,
                medium: Medium::Disk,
            },
        ],
        threads: FsThreads {
            daemons: &["zfs-fuse"],
            kernel: &["jbd2/"],
            code: &[],
        },
        ranks: None,
    }
}

fn disk(reads: u64, sectors: u64, busy_ms: u64, queue_ms: u64) -> DiskLine {
    DiskLine {
        reads,
        read_sectors: sectors,
        read_ms: reads / 10,
        busy_ms,
        queue_ms,
        ..Default::default()
    }
}

fn task(pid: u32, comm: &str, user: u64, system: u64, ppid: u32) -> Task {
    Task {
        pid,
        comm: comm.into(),
        cpu: TaskCpu {
            user,
            system,
            ppid,
            ..Default::default()
        },
        io: None,
    }
}

fn between(a: &Snapshot, b: &Snapshot, w: &[WorkerThread], v: Volume) -> Evidence {
    watched(&watch(), a, b, w, v)
}

fn watched(watch: &Watch, a: &Snapshot, b: &Snapshot, w: &[WorkerThread], v: Volume) -> Evidence {
    let r = Readings {
        watch,
        a,
        b,
        flushed: None,
    };
    Evidence::between(&r, w, &[], Vec::new(), v)
}

/// Two seconds of a 2-CPU machine: fsbench took 1 core (ns), zfs-fuse 0.5, jbd2 0.1, a hog
/// named stress 0.3; the machine was busy 2 of 4 CPU-seconds.
fn snapshots() -> (Snapshot, Snapshot) {
    let t0 = Instant::now();
    let me = std::process::id();
    let a = Snapshot {
        at: t0,
        machine: Some(MachineCpu {
            user: 1000,
            system: 1000,
            idle: 5000,
            total: 7000,
            ..Default::default()
        }),
        pressure: Some(Pressure {
            cpu_some: 1_000_000,
            ..Default::default()
        }),
        devices: vec![
            Some(disk(100, 800, 1000, 1000)),
            Some(disk(10, 80, 500, 500)),
        ],
        own_ns: (0, 0),
        own_io: None,
        processes: vec![
            task(me, "fsbench", 0, 0, 1),
            task(400, "zfs-fuse", 10, 10, 1),
            task(55, "jbd2/loop1-8", 0, 0, 2),
            task(900, "stress", 100, 0, 1),
        ],
        walked: Some(t0),
    };
    let b = Snapshot {
        at: t0 + Duration::from_secs(2),
        machine: Some(MachineCpu {
            user: 1150,
            system: 1050,
            idle: 5200,
            total: 7400,
            ..Default::default()
        }),
        pressure: Some(Pressure {
            cpu_some: 1_500_000,
            ..Default::default()
        }),
        // loop1: 1000 more reads of 4 KiB (8 sectors), busy 1.8 of 2 s, 1 in flight on average.
        devices: vec![
            Some(disk(1100, 8800, 2800, 3000)),
            Some(disk(10, 80, 500, 500)),
        ],
        own_ns: (800_000_000, 1_200_000_000),
        own_io: None,
        processes: vec![
            task(me, "fsbench", 80, 120, 1),
            task(400, "zfs-fuse", 60, 60, 1),
            task(55, "jbd2/loop1-8", 0, 20, 2),
            task(900, "stress", 160, 0, 1),
        ],
        walked: Some(t0 + Duration::from_secs(2)),
    };
    (a, b)
}

fn thread(at: Instant, user_ms: u64, sys_ms: u64, runq_ms: u64) -> ThreadSample {
    ThreadSample {
        at: Some(at),
        user_ns: user_ms * 1_000_000,
        sys_ns: sys_ms * 1_000_000,
        sched: TaskSched {
            on_cpu_ns: (user_ms + sys_ms) * 1_000_000,
            runq_ns: runq_ms * 1_000_000,
            voluntary: user_ms,
            involuntary: sys_ms,
        },
    }
}

#[test]
fn shares_accounts_and_devices_come_from_the_two_snapshots() {
    let (a, b) = snapshots();
    let w = WorkerThread {
        tid: 1,
        start: Some(thread(a.at, 0, 0, 0)),
        end: Some(thread(b.at, 200, 1400, 100)),
        crossed: true,
    };
    let e = between(
        &a,
        &b,
        &[w],
        Volume {
            read: Some(4096.0 * 2000.0),
            ..Default::default()
        },
    );
    let wf = &e.workers[0];
    assert!((wf.user - 0.1).abs() < 1e-9 && (wf.system - 0.7).abs() < 1e-9);
    assert!((wf.runq - 0.05).abs() < 1e-9 && (wf.blocked - 0.15).abs() < 1e-9);
    assert_eq!(
        (wf.voluntary_switches, wf.involuntary_switches),
        (200, 1400)
    );
    assert_eq!(e.busiest, Some(0));
    assert!((e.fsbench.user - 0.4).abs() < 1e-9 && (e.fsbench.system - 0.6).abs() < 1e-9);
    let names: Vec<(&str, Option<FsKind>)> = e
        .filesystem
        .iter()
        .map(|b| (b.name.as_str(), b.kind))
        .collect();
    assert_eq!(
        names,
        [
            ("zfs-fuse", Some(FsKind::Daemon)),
            ("jbd2", Some(FsKind::Kernel))
        ]
    );
    assert!((e.daemon_cores() - 0.5).abs() < 1e-9);
    let m = e.machine.as_ref().unwrap();
    // Busy 400 - 200 idle = 200 ticks of 400: half the machine, 1 core; others: 1 - fsbench's 1
    // - the filesystem's 0.6 -> none left for others, clamped at 0.
    assert!((m.busy - 0.5).abs() < 1e-9, "{m:?}");
    assert_eq!(m.other_top[0].name, "stress");
    assert!((m.other_top[0].cores - 0.3).abs() < 1e-9);
    assert!((e.pressure.as_ref().unwrap().cpu_some - 0.25).abs() < 1e-9);
    let d = &e.devices[0];
    assert_eq!((d.reads, d.read_bytes), (1000, 4096 * 1000));
    assert!((d.util - 0.9).abs() < 1e-9 && (d.in_flight - 1.0).abs() < 1e-9);
    assert_eq!(e.bottom().unwrap().name, "vda");
    assert_eq!(e.busiest_device().unwrap().name, "loop1");
    let r = e.reached.as_ref().unwrap();
    assert_eq!((r.read_device, r.read_bottom), (Some(0.5), Some(0.0)));
    assert_eq!(r.write_device, None);
}

#[test]
fn a_worker_without_an_end_is_left_out() {
    let (a, b) = snapshots();
    let w = WorkerThread {
        tid: 1,
        start: Some(thread(a.at, 0, 0, 0)),
        end: None,
        crossed: true,
    };
    let e = between(&a, &b, &[w], Volume::default());
    assert!(e.workers.is_empty() && e.busiest.is_none());
}

#[test]
fn a_worker_counts_from_its_first_start_line_and_reads_nothing_at_the_next() {
    // A whole iozone cell crosses one start line per test: a reading before each test's clock
    // would cost its first calls, and would leave the worker's figures those of the last test.
    let b = Board::new(1);
    b.begin(0);
    b.started(0);
    let first = b.peek()[0].start.unwrap().at;
    std::thread::sleep(std::time::Duration::from_millis(2));
    b.started(0);
    let w = b.peek()[0];
    assert!(w.crossed);
    assert_eq!(w.start.unwrap().at, first);
}

#[test]
fn a_phase_right_after_another_starts_from_its_last_walk() {
    // A process no walk of /proc can find (pid 0): present only in the walk handed over.
    let w = Watch::default();
    let mut last = Snapshot::take(&w, Scan::No);
    last.processes = vec![task(0, "handed-over", 1, 0, 0)];
    last.walked = Some(Instant::now());
    let next = Snapshot::first(&w, last.clone().into_walk());
    assert_eq!(next.processes, last.processes);
    assert_eq!(next.walked, last.walked);
    assert!(next.at > last.at && next.machine.is_some());
    // Too old (the phase before ended more than WALK_EVERY ago): a walk of its own.
    last.walked = Some(Instant::now() - WALK_EVERY - Duration::from_millis(50));
    let next = Snapshot::first(&w, last.into_walk());
    assert!(next.processes.iter().all(|t| t.pid != 0));
    assert!(next.processes.iter().any(|t| t.pid == std::process::id()));
    assert!(next.walked.unwrap() > next.at - WALK_EVERY);
}

#[test]
fn a_phase_ends_with_a_walk_only_when_the_one_it_began_from_is_old_enough() {
    let w = Watch::default();
    let first = Snapshot::first(&w, None);
    let end = Snapshot::last(&w, &first);
    assert!(end.walked.is_none() && end.processes.is_empty());
    assert_eq!(first.walk_s(&end), None);
    let mut older = first.clone();
    older.walked = Some(Instant::now() - WALK_EVERY);
    let end = Snapshot::last(&w, &older);
    assert!(end.processes.iter().any(|t| t.pid == std::process::id()));
    assert!(older.walk_s(&end).unwrap() >= WALK_EVERY.as_secs_f64());
}

#[test]
fn without_a_walk_at_its_end_a_phase_counts_no_process() {
    // Whole ticks over a few milliseconds said "other processes took 6.40 of 2 CPUs".
    let (a, mut b) = snapshots();
    b.processes.clear();
    b.walked = None;
    let e = between(&a, &b, &[], Volume::default());
    let m = e.machine.as_ref().unwrap();
    assert_eq!((m.walk_s, m.processes, m.gone), (None, 0.0, 0.0));
    assert!(m.other_top.is_empty() && m.io.is_none() && e.filesystem.is_empty());
    assert!(crate::metrics::limiter::interference(&e).is_none());
    assert!(m.busy > 0.0, "the machine's own figures stay");
}

#[test]
fn the_processes_figures_are_over_the_window_between_their_walks() {
    // The walk the phase began from was taken 2 s before its first reading (phases back to
    // back): stress's 60 ticks are 0.15 of a core over the 4 s between the walks, not 0.3.
    let (mut a, b) = snapshots();
    a.walked = Some(a.at - Duration::from_secs(2));
    let e = between(&a, &b, &[], Volume::default());
    let m = e.machine.as_ref().unwrap();
    assert_eq!(m.walk_s, Some(4.0));
    assert!((m.processes - 0.15).abs() < 1e-9, "{m:?}");
}

#[test]
fn this_machine_can_be_read() {
    let w = Watch::default();
    let s = Snapshot::take(&w, Scan::Last);
    assert!(s.machine.is_some(), "/proc/stat");
    assert!(
        s.processes.iter().any(|t| t.pid == std::process::id()),
        "fsbench's own process in the scan"
    );
    let t = ThreadSample::now();
    assert!(t.at.is_some());
}

#[test]
fn the_runs_other_ranks_are_its_own_and_processes_that_came_and_went_are_others() {
    let (mut a, mut b) = snapshots();
    // The machine 280 ticks busier than before (1.4 cores more over 2 s).
    let m = b.machine.as_mut().unwrap();
    m.user += 280;
    m.total += 280;
    // A sibling rank (same parent, same name) that took 0.5 cores.
    let me = Siblings::of_self().unwrap();
    let mut rank = task(901, &me.comm, 0, 0, me.parent);
    a.processes.push(rank.clone());
    rank.cpu.user = 100;
    b.processes.push(rank);
    let mut w = watch();
    w.ranks = Some(me);
    let e = watched(&w, &a, &b, &[], Volume::default());
    let m = e.machine.as_ref().unwrap();
    // Others alive: the hog alone (0.3 cores); the rank is the run's own.
    assert!((m.processes - 0.3).abs() < 1e-9, "{m:?}");
    assert!(m.other_top.iter().all(|b| b.name != "fsbench"), "{m:?}");
    // Busy 480 ticks over 2 s = 2.4 cores: fsbench 1, its rank 0.5, zfs-fuse 0.5, jbd2 0.1, the
    // hog 0.3: all accounted for, none gone.
    assert!(m.gone < 1e-9, "{m:?}");
    // Without the rank's share, 1 more core busy than accounted for: came and went.
    let mm = b.machine.as_mut().unwrap();
    mm.user += 200;
    mm.total += 200;
    let e = watched(&w, &a, &b, &[], Volume::default());
    let gone = e.machine.as_ref().unwrap().gone;
    assert!(gone > 0.5, "{gone}");
}

#[test]
fn other_processes_io_that_the_stack_moved_beyond_the_runs_is_on_the_stack() {
    let (mut a, mut b) = snapshots();
    let io = |read: u64| Some(TaskIo { read, written: 0 });
    // fsbench read 4000 KiB (the 1000 reads of loop1); dd read 8 MiB of loop1 as well.
    a.own_io = io(0);
    b.own_io = io(4096 * 1000);
    let mut dd = task(950, "dd", 0, 0, 1);
    dd.io = io(0);
    a.processes.push(dd.clone());
    dd.io = io(8 << 20);
    b.processes.push(dd);
    b.devices[0] = Some(disk(1100 + 2048, 8800 + 16384, 2800, 3000));
    let e = between(&a, &b, &[], Volume::default());
    let x = e
        .machine
        .as_ref()
        .unwrap()
        .io
        .as_ref()
        .expect("others' I/O");
    assert_eq!(x.bytes, 8 << 20);
    assert_eq!(x.on_stack, 8 << 20);
    assert_eq!(x.top[0].0, "dd");
}

#[test]
fn the_flush_after_a_writing_phase_is_measured_on_its_own() {
    let (a, b) = snapshots();
    let mut c = b.clone();
    c.at = b.at + Duration::from_secs(2);
    let mut l = disk(1100, 8800, 4800, 5000);
    l.flushes = 4;
    l.write_sectors = 2048;
    c.devices[0] = Some(l);
    let r = Readings {
        watch: &watch(),
        a: &a,
        b: &b,
        flushed: Some(&c),
    };
    let e = Evidence::between(&r, &[], &[], Vec::new(), Volume::default());
    let f = e.flush.expect("the flush");
    assert!(
        (f.seconds - 2.0).abs() < 1e-9 && (f.util - 1.0).abs() < 1e-9,
        "{f:?}"
    );
    assert_eq!(f.device.as_deref(), Some("loop1"));
    assert_eq!((f.flushes, f.write_bytes), (4, 2048 * 512));
    // The phase's own figures stop where the workers did.
    assert!((e.devices[0].util - 0.9).abs() < 1e-9);
}
