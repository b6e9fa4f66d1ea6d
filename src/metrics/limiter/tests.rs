//! The limiter rules against evidence shaped as real phases on this project's 2-core VM
//! (rounded), one rule per test, each threshold from both sides, and the interference note.

use super::*;
use crate::metrics::evidence::{
    Busy, DeviceFigures, FlushFigures, FsKind, MachineFigures, Reached, Role, WorkerFigures,
};

fn worker(user: f64, system: f64, runq: f64) -> WorkerFigures {
    WorkerFigures {
        index: 0,
        user,
        system,
        runq,
        blocked: (1.0 - user - system - runq).max(0.0),
        seconds: 3.0,
        ..Default::default()
    }
}

fn dev(name: &str, role: Role, util: f64, reads: u64) -> DeviceFigures {
    DeviceFigures {
        name: name.into(),
        role,
        medium: Medium::Disk,
        reads,
        writes: 0,
        read_bytes: reads * 4096,
        write_bytes: 0,
        util,
        in_flight: util,
        wait_ms: 0.2,
        flushes: 0,
        flush_ms: 0,
    }
}

fn evidence(w: WorkerFigures) -> Evidence {
    Evidence {
        wall_s: 3.0,
        cpus: 2,
        workers: vec![w],
        busiest: Some(0),
        machine: Some(MachineFigures {
            busy: 0.5,
            others: 0.02,
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// 4 KiB reads: `ops` of them.
fn reads(ops: f64) -> Volume {
    Volume {
        read: Some(ops * 4096.0),
        read_ops: Some(ops),
        ..Default::default()
    }
}

fn facts(e: &Evidence) -> Facts<'_> {
    Facts {
        evidence: e,
        volume: Volume::default(),
        pacing: None,
        medium: Medium::Disk,
        reads: Moves::Data,
        writes: Moves::Data,
        split: None,
    }
}

/// The interference note's tests, on the same evidence.
mod interference;

fn kind(f: &Facts) -> Limit {
    classify(f).expect("a limiter").kind
}

#[test]
fn a_null_engine_job_is_benchmark_cpu() {
    // ioengine=null, 4k random reads: 97% user, 3% system.
    let e = evidence(worker(0.96, 0.03, 0.0));
    let l = classify(&facts(&e)).unwrap();
    assert_eq!(l.kind, Limit::BenchmarkCpu);
    assert!(l.rule.contains("fsbench's own code"), "{}", l.rule);
    assert_eq!(l.headline, "worker 0 99% busy");
}

#[test]
fn kernel_time_without_a_profile_is_the_kernels_not_the_filesystems() {
    // One worker, 4k psync random reads on tmpfs: 18% user, 82% system.
    let e = evidence(worker(0.18, 0.81, 0.0));
    let f = Facts {
        medium: Medium::Memory,
        ..facts(&e)
    };
    let l = classify(&f).unwrap();
    assert_eq!(l.kind, Limit::KernelCpu, "{}", l.rule);
    assert!(l.rule.contains("in the kernel"), "{}", l.rule);
    assert!(l.rule.contains("--profile"), "{}", l.rule);
    // A profile that shows the filesystem's code took most of it: the filesystem's CPU.
    let own = KernelSplit {
        filesystem: 0.5,
        copies: 0.3,
        other: 0.2,
        ..Default::default()
    };
    let l = classify(&Facts {
        split: Some(&own),
        ..f
    })
    .unwrap();
    assert_eq!(l.kind, Limit::FilesystemCpu, "{}", l.rule);
    assert!(
        l.rule
            .contains("the filesystem's code 50%, memory copies 30%"),
        "{}",
        l.rule
    );
    // One that shows copies and the block layer took most: the kernel's.
    let not = KernelSplit {
        filesystem: 0.2,
        block: 0.3,
        copies: 0.4,
        other: 0.1,
        ..Default::default()
    };
    let l = classify(&Facts {
        split: Some(&not),
        ..f
    })
    .unwrap();
    assert_eq!(l.kind, Limit::KernelCpu, "{}", l.rule);
    assert!(l.rule.contains("memory copies 40%"), "{}", l.rule);
}

#[test]
fn waiting_for_a_cpu_is_left_out_of_the_workers_shares() {
    // The same tmpfs job beside two CPU hogs: it waited 56% of its time for a CPU.
    let e = evidence(worker(0.08, 0.36, 0.56));
    let f = Facts {
        medium: Medium::Memory,
        ..facts(&e)
    };
    assert_eq!(kind(&f), Limit::KernelCpu);
}

fn paced(how: &Pacing, reached: Option<f64>) -> Option<Paced<'_>> {
    Some(Paced { how, reached })
}

#[test]
fn a_paced_job_is_paced_only_when_it_reached_its_rate() {
    let rate = Pacing {
        iops: [Some(200), Some(200)],
        ..Default::default()
    };
    let e = evidence(worker(0.004, 0.007, 0.0));
    let l = classify(&Facts {
        pacing: paced(&rate, Some(0.91)),
        ..facts(&e)
    })
    .unwrap();
    assert_eq!(l.kind, Limit::Paced);
    assert!(l.rule.contains("rate_iops=200"), "{}", l.rule);
    // Below 90% of its rate: something else held it, said with the rate it did not reach.
    let mut slow = evidence(worker(0.004, 0.007, 0.0));
    slow.devices = vec![dev("loop1", Role::Target, 0.97, 600)];
    let l = classify(&Facts {
        pacing: paced(&rate, Some(0.89)),
        ..facts(&slow)
    })
    .unwrap();
    assert_eq!(l.kind, Limit::Device, "{}", l.rule);
    assert!(
        l.rule
            .contains("held below its rate (rate_iops=200: 89% of it reached)"),
        "{}",
        l.rule
    );
    // A rate it cannot reach on the CPU either: its CPU decides.
    let busy = evidence(worker(0.9, 0.08, 0.0));
    let f = Facts {
        pacing: paced(&rate, Some(0.02)),
        ..facts(&busy)
    };
    assert_eq!(kind(&f), Limit::BenchmarkCpu);
    // A think time asks no rate: its idle workers are paced.
    let pause = Pacing {
        thinktime: Some(std::time::Duration::from_millis(5)),
        ..Default::default()
    };
    let f = Facts {
        pacing: paced(&pause, None),
        ..facts(&e)
    };
    assert_eq!(kind(&f), Limit::Paced);
}

#[test]
fn buffered_rereads_with_an_idle_device_are_cache() {
    let mut e = evidence(worker(0.2, 0.78, 0.0));
    e.devices = vec![
        dev("loop1", Role::Target, 0.01, 160),
        dev("vda", Role::Backing, 0.01, 0),
    ];
    e.reached = Some(Reached {
        read_device: Some(0.02),
        read_bottom: Some(0.0),
        ..Default::default()
    });
    let f = Facts {
        volume: reads(8192.0),
        ..facts(&e)
    };
    let l = classify(&f).unwrap();
    assert_eq!(l.kind, Limit::Cache);
    assert!(
        l.rule.contains("98% of the reads came from memory"),
        "{}",
        l.rule
    );
    assert_eq!(l.device.as_deref(), Some("loop1"));
    // On tmpfs there is no device to miss: its reads are the kernel's own work.
    let f = Facts {
        medium: Medium::Memory,
        ..f
    };
    assert_eq!(kind(&f), Limit::KernelCpu);
}

#[test]
fn cache_is_decided_by_where_the_time_went_not_by_bytes() {
    // Readahead at the device's pace: few requests for many reads, but the device was busy
    // all the while the workers waited.
    let mut e = evidence(worker(0.02, 0.1, 0.0));
    e.devices = vec![dev("loop1", Role::Target, 0.95, 256)];
    let f = Facts {
        volume: reads(8192.0),
        ..facts(&e)
    };
    assert_eq!(kind(&f), Limit::Device);
    // Both sides of CACHED: the device idle 76% of the time vs 74%.
    let mut idle = evidence(worker(0.3, 0.6, 0.0));
    idle.devices = vec![dev("loop1", Role::Target, 0.24, 16)];
    let f = Facts {
        volume: reads(8192.0),
        ..facts(&idle)
    };
    assert_eq!(kind(&f), Limit::Cache);
    idle.devices[0].util = 0.26;
    let f = Facts {
        volume: reads(8192.0),
        ..facts(&idle)
    };
    assert_ne!(kind(&f), Limit::Cache);
}

#[test]
fn fio_rand_rw_on_ext4_with_a_busy_device_is_the_device_not_cache() {
    // docs/performance.md's fio-rand-RW: 75% of the read bytes from memory, workers blocked 50%,
    // runq 28%, loop0 78% busy.
    let mut e = evidence(worker(0.07, 0.15, 0.28));
    e.devices = vec![dev("loop0", Role::Target, 0.78, 2000)];
    e.reached = Some(Reached {
        read_device: Some(0.25),
        ..Default::default()
    });
    let f = Facts {
        volume: reads(8000.0),
        ..facts(&e)
    };
    let l = classify(&f).unwrap();
    assert_eq!(l.kind, Limit::Device, "{}", l.rule);
    assert_eq!(l.device.as_deref(), Some("loop0"));
    // Its buffered writes absorbed by the page cache (none reached the device in the phase)
    // while the device, half idle, held the workers for their reads: still the device.
    e.devices[0].util = 0.47;
    e.workers[0] = worker(0.08, 0.02, 0.5);
    let f = Facts {
        volume: Volume {
            written: Some((12 << 20) as f64),
            ..reads(8000.0)
        },
        ..facts(&e)
    };
    let l = classify(&f).unwrap();
    assert_eq!(l.kind, Limit::Device, "{}", l.rule);
    // The debug build's four workers on two CPUs, as measured: each waited half its time for
    // a CPU, 48% of the rest in fsbench's code, 38% blocked; loop0 47% busy; 75% of the reads
    // from the page cache. The device was not idle: never `cache`, but the device and the
    // workers' own CPU, too close to tell, with the device named.
    let mut busy = evidence(worker(0.238, 0.069, 0.519));
    busy.workers = (0..4)
        .map(|i| WorkerFigures {
            index: i,
            ..worker(0.238 - 0.01 * i as f64, 0.069 + 0.005 * i as f64, 0.519)
        })
        .collect();
    busy.wall_s = 3.1;
    busy.devices = vec![dev("loop0", Role::Target, 0.471, 39184)];
    let f = Facts {
        volume: Volume {
            written: Some(420e6),
            ..reads(154000.0)
        },
        ..facts(&busy)
    };
    let l = classify(&f).unwrap();
    assert_eq!(l.kind, Limit::Mixed, "{}", l.rule);
    assert!(l.between.contains(&Limit::Device), "{}", l.rule);
    assert!(l.between.contains(&Limit::BenchmarkCpu), "{}", l.rule);
    assert_eq!(l.device.as_deref(), Some("loop0"));
    assert!(!l.rule.contains("cache"), "{}", l.rule);
}

#[test]
fn buffered_writes_the_page_cache_absorbed_are_cache_with_the_copying_cpu() {
    // ext4, 4k buffered random writes through io_uring: workers off the CPU 66% (io-wq did the
    // copying, 0.38 cores), loop0 1% busy, nothing written within the phase; the flush after.
    let mut e = evidence(worker(0.1, 0.24, 0.0));
    e.helpers.system = 0.38;
    e.devices = vec![dev("loop0", Role::Target, 0.01, 0)];
    e.flush = Some(FlushFigures {
        seconds: 2.0,
        device: Some("loop0".into()),
        util: 1.0,
        flushes: 3,
        write_bytes: 64 << 20,
    });
    let f = Facts {
        volume: Volume {
            written: Some((64 << 20) as f64),
            ..Default::default()
        },
        reads: Moves::Nothing,
        ..facts(&e)
    };
    let l = classify(&f).unwrap();
    assert_eq!(l.kind, Limit::Cache, "{}", l.rule);
    assert!(
        l.rule
            .contains("the page cache absorbed 100% of the writes"),
        "{}",
        l.rule
    );
    assert!(l.rule.contains("io-wq 0.38 cores"), "{}", l.rule);
    assert!(
        l.rule.contains("then flush 2.0 s, loop0 100% busy"),
        "{}",
        l.rule
    );
    // The same on tmpfs: io-wq's work is the workers', in the kernel; nothing waited.
    let mut t = evidence(worker(0.1, 0.3, 0.0));
    t.helpers.system = 0.39;
    let f = Facts {
        medium: Medium::Memory,
        volume: Volume {
            written: Some((64 << 20) as f64),
            ..Default::default()
        },
        reads: Moves::Nothing,
        ..facts(&t)
    };
    let l = classify(&f).unwrap();
    assert_eq!(l.kind, Limit::KernelCpu, "{}", l.rule);
    assert!(l.rule.contains("io-wq"), "{}", l.rule);
    // The same seen in a VM, where every hand-off's wake-ups cost ~30 us: off the CPU 54%, of
    // which io-wq's CPU 17% (tmpfs, iodepth=1, 12% steal).
    let mut vm = evidence(worker(0.28, 0.18, 0.0));
    vm.helpers.system = 0.17;
    let l = classify(&Facts { evidence: &vm, ..f }).unwrap();
    let cpu = |k: &Limit| [Limit::KernelCpu, Limit::BenchmarkCpu].contains(k);
    assert!(cpu(&l.kind) || l.between.iter().all(cpu), "{}", l.rule);
    // Without io-wq, a worker off the CPU on tmpfs waited for something else (a lock).
    let lock = evidence(worker(0.1, 0.2, 0.0));
    let l = classify(&Facts {
        evidence: &lock,
        ..f
    })
    .unwrap();
    assert_eq!(l.kind, Limit::Waiting, "{}", l.rule);
    // The null engine's writes move no data: nothing for a cache to absorb.
    let null = evidence(worker(0.9, 0.05, 0.0));
    let mut null = null;
    null.devices = e.devices.clone();
    let f = Facts {
        volume: Volume {
            written: Some((64 << 20) as f64),
            ..Default::default()
        },
        reads: Moves::Nothing,
        writes: Moves::Nothing,
        ..facts(&null)
    };
    assert_eq!(kind(&f), Limit::BenchmarkCpu);
}

#[test]
fn direct_qd1_reads_on_a_loop_image_are_device() {
    // Recorded beside two compilers: 39% of its time waiting for a CPU, 57% blocked.
    let mut e = evidence(worker(0.004, 0.037, 0.39));
    e.devices = vec![
        dev("loop1", Role::Target, 0.97, 7000),
        dev("vda", Role::Backing, 0.44, 7000),
    ];
    let f = Facts {
        volume: reads(7000.0),
        ..facts(&e)
    };
    let l = classify(&f).unwrap();
    assert_eq!(l.kind, Limit::Device);
    assert!(l.rule.starts_with("device: loop1 97% busy"), "{}", l.rule);
    assert_eq!(l.headline, "loop1 97% busy");
    assert_eq!(l.device.as_deref(), Some("loop1"));
}

#[test]
fn a_mirror_is_read_from_every_member_and_the_busiest_is_named() {
    // btrfs raid1 or a ZFS mirror, direct reads at QD1: this reader's mirror is the second.
    let mut e = evidence(worker(0.01, 0.04, 0.0));
    e.devices = vec![
        dev("loop0", Role::Member, 0.0, 0),
        dev("loop1", Role::Member, 0.7, 6000),
        dev("vda", Role::Backing, 0.8, 6000),
    ];
    let f = Facts {
        volume: reads(6000.0),
        ..facts(&e)
    };
    let l = classify(&f).unwrap();
    assert_eq!(l.kind, Limit::Device, "{}", l.rule);
    assert_eq!(l.device.as_deref(), Some("loop1"));
    assert!(l.rule.contains("the busiest of 2 members"), "{}", l.rule);
    // A mirror that splits its reads is not half cached.
    e.devices[0] = dev("loop0", Role::Member, 0.5, 3000);
    e.devices[1] = dev("loop1", Role::Member, 0.5, 3000);
    let f = Facts {
        volume: reads(6000.0),
        ..facts(&e)
    };
    assert_ne!(kind(&f), Limit::Cache);
    // zfs-fuse's mirror at QD1: each member 30% busy, the worker blocked 91% (the rest in the
    // daemon and FUSE): the members together are not a device held idle.
    let mut z = evidence(worker(0.013, 0.028, 0.05));
    z.devices = vec![
        dev("loop2", Role::Member, 0.28, 942),
        dev("loop3", Role::Member, 0.31, 955),
        dev("vda", Role::Backing, 0.21, 2787),
    ];
    let l = classify(&Facts {
        volume: reads(3078.0),
        ..facts(&z)
    })
    .unwrap();
    assert_eq!(l.kind, Limit::Mixed, "{}", l.rule);
    assert_eq!(l.between, [Limit::Device, Limit::Waiting]);
    assert_eq!(l.device.as_deref(), Some("loop3"));
    assert!(l.rule.contains("any of them 50%"), "{}", l.rule);
}

#[test]
fn a_memory_backed_loop_is_named_as_such() {
    // Direct 4K reads at QD32 on ext4 over a loop image in /dev/shm: the worker in the kernel.
    let mut e = evidence(worker(0.06, 0.75, 0.0));
    let mut loop0 = dev("loop0", Role::Target, 0.97, 90000);
    loop0.medium = Medium::Memory;
    e.devices = vec![loop0];
    let f = Facts {
        volume: reads(90000.0),
        ..facts(&e)
    };
    let l = classify(&f).unwrap();
    assert_eq!(l.kind, Limit::KernelCpu, "{}", l.rule);
    assert!(
        l.rule.contains("loop0 is a memory-backed loop"),
        "{}",
        l.rule
    );
    assert_eq!(l.device.as_deref(), Some("loop0"));
    // Blocked on it instead: the device rule says what that device is.
    let mut b = evidence(worker(0.01, 0.05, 0.0));
    b.devices = e.devices.clone();
    let l = classify(&facts(&b)).unwrap();
    assert_eq!(l.kind, Limit::Device, "{}", l.rule);
    assert!(l.rule.contains("a memory-backed loop"), "{}", l.rule);
}

#[test]
fn zfs_fuses_daemon_against_a_half_busy_member_is_the_real_boundary() {
    // Seen for real: 0.63 cores of zfs-fuse against 48% busy came within the margin.
    let mut e = evidence(worker(0.02, 0.08, 0.0));
    e.workers[0].seconds = 2.9;
    e.filesystem = vec![Busy {
        name: "zfs-fuse".into(),
        cores: 0.63,
        kind: Some(FsKind::Daemon),
    }];
    e.devices = vec![dev("loop2", Role::Member, 0.48, 0)];
    let l = classify(&facts(&e)).unwrap();
    assert_eq!(l.kind, Limit::Mixed, "{}", l.rule);
    assert_eq!(l.between, [Limit::FilesystemCpu, Limit::Device]);
    assert!(l
        .rule
        .starts_with("mixed: filesystem-cpu: zfs-fuse took 0.63 cores"));
    // Mixed names the device although the daemon came first.
    assert_eq!(l.device.as_deref(), Some("loop2"));
    // Both sides of LEAD against the member's 0.50: the daemon at 0.82 cores, and at 0.84.
    e.filesystem[0].cores = 0.82;
    assert_eq!(kind(&facts(&e)), Limit::Mixed);
    e.filesystem[0].cores = 0.84;
    let l = classify(&facts(&e)).unwrap();
    assert_eq!(l.kind, Limit::FilesystemCpu, "{}", l.rule);
    assert!(l.rule.contains("zfs-fuse took 0.84 cores"), "{}", l.rule);
}

#[test]
fn the_winner_decides_when_the_next_scores_at_most_sixty_percent_of_it() {
    // filesystem-cpu 0.70 against device 0.43 (61% of it): mixed; against 0.41: decided.
    let mut e = evidence(worker(0.0, 0.0, 0.0));
    e.workers[0].blocked = 0.43;
    e.filesystem = vec![Busy {
        name: "jbd2".into(),
        cores: 0.70,
        kind: Some(FsKind::Kernel),
    }];
    e.devices = vec![dev("loop1", Role::Target, 1.0, 0)];
    assert_eq!(kind(&facts(&e)), Limit::Mixed);
    e.workers[0].blocked = 0.41;
    assert_eq!(kind(&facts(&e)), Limit::FilesystemCpu);
    // A winner below DECIDES is mixed however far it leads: 0.49 against nothing else.
    let mut lone = evidence(worker(0.0, 0.0, 0.0));
    lone.filesystem = vec![Busy {
        name: "jbd2".into(),
        cores: 0.49,
        kind: Some(FsKind::Kernel),
    }];
    lone.workers[0].blocked = 0.02;
    lone.devices = vec![dev("loop1", Role::Target, 1.0, 0)];
    assert_eq!(kind(&facts(&lone)), Limit::Mixed);
    lone.filesystem[0].cores = 0.51;
    assert_eq!(kind(&facts(&lone)), Limit::FilesystemCpu);
}

/// zfs-fuse's mirror, direct 4K reads at QD1, as measured on this VM: the worker blocked 87%,
/// each member a quarter busy, the daemon between 0.14 and 0.46 cores from run to run.
fn zfs_mirror(daemon: f64) -> Evidence {
    let mut e = evidence(worker(0.07, 0.054, 0.003));
    e.wall_s = 2.01;
    e.workers[0].seconds = 2.01;
    e.filesystem = vec![Busy {
        name: "zfs-fuse".into(),
        cores: daemon,
        kind: Some(FsKind::Daemon),
    }];
    e.devices = vec![
        dev("loop0", Role::Member, 0.256, 4009),
        dev("loop1", Role::Member, 0.246, 4000),
        dev("vda", Role::Backing, 0.475, 8150),
    ];
    e
}

#[test]
fn zfs_fuses_mirror_is_the_members_beside_the_daemon_or_the_wait_and_names_a_member() {
    // Whatever the daemon took, the members (44% busy together) are one of the two closest,
    // and the limiter names the busiest of them, never the disk under the images.
    for daemon in [0.14, 0.3, 0.46, 0.6] {
        let e = zfs_mirror(daemon);
        let l = classify(&Facts {
            volume: reads(10000.0),
            ..facts(&e)
        })
        .unwrap();
        assert_eq!(l.kind, Limit::Mixed, "{daemon}: {}", l.rule);
        assert!(l.between.contains(&Limit::Device), "{daemon}: {}", l.rule);
        assert_eq!(l.device.as_deref(), Some("loop0"), "{daemon}: {}", l.rule);
        assert!(l.rule.contains("the busiest of 2 members"), "{}", l.rule);
    }
    // At 0.46 cores the daemon is the other one: the time it was on a CPU is not time the
    // worker waited for nothing.
    let l = classify(&facts(&zfs_mirror(0.46))).unwrap();
    assert_eq!(
        l.between,
        [Limit::FilesystemCpu, Limit::Device],
        "{}",
        l.rule
    );
}

#[test]
fn the_filesystems_own_cpu_is_not_waiting() {
    // Blocked 90% with the device idle: waiting, unless the filesystem's daemon was on a CPU
    // meanwhile (FUSE: the worker waits for the daemon's work).
    let mut e = evidence(worker(0.02, 0.08, 0.0));
    e.devices = vec![dev("loop1", Role::Target, 0.0, 0)];
    assert_eq!(kind(&facts(&e)), Limit::Waiting);
    e.filesystem = vec![Busy {
        name: "zfs-fuse".into(),
        cores: 0.7,
        kind: Some(FsKind::Daemon),
    }];
    assert_eq!(kind(&facts(&e)), Limit::FilesystemCpu);
}

#[test]
fn a_journal_bound_fsync_job_with_an_idle_device_is_waiting_and_its_flushes_are_counted() {
    let mut e = evidence(worker(0.02, 0.08, 0.0));
    let mut d = dev("loop1", Role::Target, 0.15, 0);
    d.flushes = 3000;
    d.flush_ms = 900;
    e.devices = vec![d];
    let l = classify(&facts(&e)).unwrap();
    assert_eq!(l.kind, Limit::Waiting);
    assert!(l.rule.contains("loop1 only 15% busy"), "{}", l.rule);
    assert!(l.rule.contains("3000 flushes (0.30 ms each)"), "{}", l.rule);
}

#[test]
fn with_no_device_found_device_and_waiting_cannot_be_told_apart() {
    // A directory on a filesystem whose device cannot be found (ZFS): blocked 90%.
    let e = evidence(worker(0.02, 0.08, 0.0));
    let l = classify(&facts(&e)).unwrap();
    assert_eq!(l.kind, Limit::Mixed, "{}", l.rule);
    assert_eq!(l.between, [Limit::Device, Limit::Waiting]);
    assert!(l.rule.contains("cannot be told apart"), "{}", l.rule);
    // On a memory-backed target there is no device to wait for.
    let f = Facts {
        medium: Medium::Memory,
        ..facts(&e)
    };
    assert_eq!(kind(&f), Limit::Waiting);
}

#[test]
fn evidence_that_does_not_decide_is_mixed_with_the_two_closest() {
    // Half blocked on a half-busy device, half in the kernel.
    let mut e = evidence(worker(0.05, 0.45, 0.0));
    e.devices = vec![dev("loop1", Role::Target, 0.9, 0)];
    let l = classify(&facts(&e)).unwrap();
    assert_eq!(l.kind, Limit::Mixed);
    assert_eq!(l.between.len(), 2);
    assert!(l.between.contains(&Limit::Device), "{:?}", l.between);
    assert!(l.between.contains(&Limit::KernelCpu), "{:?}", l.between);
}

#[test]
fn each_part_of_a_phase_is_judged_by_its_own_workers() {
    let mut e = evidence(worker(0.96, 0.03, 0.0));
    let mut other = worker(0.01, 0.04, 0.0);
    other.index = 1;
    other.part = 1;
    e.workers.push(other);
    e.devices = vec![dev("loop1", Role::Target, 0.95, 1000)];
    assert_eq!(kind(&facts(&e.part(0))), Limit::BenchmarkCpu);
    assert_eq!(kind(&facts(&e.part(1))), Limit::Device);
}

#[test]
fn no_workers_no_limiter() {
    let e = Evidence::default();
    assert!(classify(&facts(&e)).is_none());
}

#[test]
fn every_kind_but_mixed_has_one_rule() {
    let kinds: Vec<Limit> = RULES.iter().map(|r| r.limit).collect();
    for k in Limit::ALL.iter().filter(|k| **k != Limit::Mixed) {
        assert_eq!(kinds.iter().filter(|x| *x == k).count(), 1, "{k}");
    }
}

/// docs/results-schema.md says each rule in the table's own words, and gives one worked example
/// per kind with the record's line and the terminal's cell: the docs cannot drift from RULES.
#[test]
fn the_docs_say_each_rule_in_its_own_words_with_an_example_of_each_kind() {
    let doc = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/docs/results-schema.md"
    ))
    .unwrap();
    for r in RULES {
        let row = format!("| `{}` | {} |", r.limit, r.evidence);
        assert!(doc.contains(&row), "docs/results-schema.md lacks: {row}");
    }
    for k in Limit::ALL {
        let example = doc
            .lines()
            .find(|l| l.starts_with(&format!("| `{k}` | `")))
            .unwrap_or_else(|| panic!("no worked example of {k}"));
        let cells: Vec<&str> = example.trim_matches('|').split(" | ").collect();
        assert_eq!(cells.len(), 4, "{example}");
        assert!(cells[2].starts_with(&format!("`{k}: ")), "{example}");
        assert!(cells[3].trim().starts_with(&format!("`{k}")), "{example}");
    }
}
