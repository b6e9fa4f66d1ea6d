//! Evidence from two snapshots: shares, the machine's accounts, the devices, what reached them.

use std::time::{Duration, Instant};

use super::procfs::{MachineCpu, Pressure, TaskCpu, TaskSched};
use super::watch::ThreadSample;
use super::*;

fn watch() -> Watch {
    Watch {
        devices: vec![
            StackDevice {
                name: "loop1".into(),
                role: Role::Target,
            },
            StackDevice {
                name: "vda".into(),
                role: Role::Backing,
            },
        ],
        threads: FsThreads {
            daemons: &["zfs-fuse"],
            kernel: &["jbd2/"],
        },
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

fn cpu(user: u64, system: u64, ppid: u32) -> TaskCpu {
    TaskCpu { user, system, ppid }
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
        processes: vec![
            (me, "fsbench".into(), cpu(0, 0, 1)),
            (400, "zfs-fuse".into(), cpu(10, 10, 1)),
            (55, "jbd2/loop1-8".into(), cpu(0, 0, 2)),
            (900, "stress".into(), cpu(100, 0, 1)),
        ],
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
        processes: vec![
            (me, "fsbench".into(), cpu(80, 120, 1)),
            (400, "zfs-fuse".into(), cpu(60, 60, 1)),
            (55, "jbd2/loop1-8".into(), cpu(0, 20, 2)),
            (900, "stress".into(), cpu(160, 0, 1)),
        ],
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
    };
    let e = Evidence::between(
        &watch(),
        &a,
        &b,
        &[w],
        Vec::new(),
        Volume {
            read: Some(4096.0 * 2000.0),
            written: None,
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
    };
    let e = Evidence::between(&watch(), &a, &b, &[w], Vec::new(), Volume::default());
    assert!(e.workers.is_empty() && e.busiest.is_none());
}

#[test]
fn this_machine_can_be_read() {
    let w = Watch::default();
    let s = Snapshot::take(&w, Scan::Last);
    assert!(s.machine.is_some(), "/proc/stat");
    assert!(
        s.processes.iter().any(|(p, _, _)| *p == std::process::id()),
        "fsbench's own process in the scan"
    );
    let t = ThreadSample::now();
    assert!(t.at.is_some());
}
