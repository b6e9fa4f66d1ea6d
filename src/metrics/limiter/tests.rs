//! The limiter rules against evidence recorded on this project's 2-core VM (the figures of real
//! phases, rounded), one rule per test, and the interference note.

use super::*;
use crate::metrics::evidence::{
    Busy, DeviceFigures, FsKind, MachineFigures, Reached, Role, WorkerFigures,
};

fn worker(user: f64, system: f64, runq: f64) -> WorkerFigures {
    WorkerFigures {
        index: 0,
        user,
        system,
        runq,
        blocked: (1.0 - user - system - runq).max(0.0),
        ..Default::default()
    }
}

fn dev(name: &str, role: Role, util: f64, read_bytes: u64) -> DeviceFigures {
    DeviceFigures {
        name: name.into(),
        role,
        reads: read_bytes / 4096,
        writes: 0,
        read_bytes,
        write_bytes: 0,
        util,
        in_flight: util,
        wait_ms: 0.2,
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

fn facts(e: &Evidence) -> Facts<'_> {
    Facts {
        evidence: e,
        pacing: None,
        reads: Reads::Device,
    }
}

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
}

#[test]
fn psync_random_reads_on_tmpfs_are_filesystem_cpu() {
    // One worker, 4k psync random reads on tmpfs: 18% user, 82% system.
    let e = evidence(worker(0.18, 0.81, 0.0));
    let f = Facts {
        reads: Reads::Memory,
        ..facts(&e)
    };
    let l = classify(&f).unwrap();
    assert_eq!(l.kind, Limit::FilesystemCpu);
    assert!(l.rule.contains("in the kernel"), "{}", l.rule);
}

#[test]
fn waiting_for_a_cpu_is_left_out_of_the_workers_shares() {
    // The same tmpfs job beside two CPU hogs: it waited 56% of its time for a CPU.
    let e = evidence(worker(0.08, 0.36, 0.56));
    let f = Facts {
        reads: Reads::Memory,
        ..facts(&e)
    };
    assert_eq!(kind(&f), Limit::FilesystemCpu);
}

#[test]
fn a_paced_job_is_paced_when_its_workers_sat_idle() {
    let e = evidence(worker(0.004, 0.007, 0.0));
    let f = Facts {
        pacing: Some("rate_iops=200"),
        ..facts(&e)
    };
    let l = classify(&f).unwrap();
    assert_eq!(l.kind, Limit::Paced);
    assert!(l.rule.contains("rate_iops=200"), "{}", l.rule);
    // A rate it cannot reach does not hold it: then its CPU decides.
    let busy = evidence(worker(0.9, 0.08, 0.0));
    let f = Facts {
        pacing: Some("rate_iops=100000000"),
        ..facts(&busy)
    };
    assert_eq!(kind(&f), Limit::BenchmarkCpu);
}

#[test]
fn buffered_rereads_that_never_reach_the_device_are_cache() {
    let mut e = evidence(worker(0.2, 0.78, 0.0));
    e.devices = vec![
        dev("loop1", Role::Target, 0.01, 32 << 20),
        dev("vda", Role::Backing, 0.01, 0),
    ];
    e.reached = Some(Reached {
        read_device: Some(0.02),
        read_bottom: Some(0.0),
        ..Default::default()
    });
    let l = classify(&facts(&e)).unwrap();
    assert_eq!(l.kind, Limit::Cache);
    assert!(
        l.rule.contains("98% of the reads came from memory"),
        "{}",
        l.rule
    );
    // On tmpfs there is no device to miss: its reads are the filesystem's own work.
    let f = Facts {
        reads: Reads::Memory,
        ..facts(&e)
    };
    assert_eq!(kind(&f), Limit::FilesystemCpu);
}

#[test]
fn direct_qd1_reads_on_a_loop_image_are_device() {
    // Recorded beside two compilers: 39% of its time waiting for a CPU, 57% blocked.
    let mut e = evidence(worker(0.004, 0.037, 0.39));
    e.devices = vec![
        dev("loop1", Role::Target, 0.97, 28 << 20),
        dev("vda", Role::Backing, 0.44, 28 << 20),
    ];
    e.reached = Some(Reached {
        read_device: Some(1.0),
        ..Default::default()
    });
    let l = classify(&facts(&e)).unwrap();
    assert_eq!(l.kind, Limit::Device);
    assert!(l.rule.starts_with("device: loop1 97% busy"), "{}", l.rule);
}

#[test]
fn random_writes_on_zfs_fuse_are_filesystem_cpu_in_the_daemon() {
    let mut e = evidence(worker(0.02, 0.05, 0.0));
    e.filesystem = vec![Busy {
        name: "zfs-fuse".into(),
        cores: 1.3,
        kind: Some(FsKind::Daemon),
    }];
    e.devices = vec![dev("loop2", Role::Member, 0.2, 0)];
    let l = classify(&facts(&e)).unwrap();
    assert_eq!(l.kind, Limit::FilesystemCpu);
    assert!(l.rule.contains("zfs-fuse took 1.30 cores"), "{}", l.rule);
}

#[test]
fn a_journal_bound_fsync_job_with_an_idle_device_is_waiting() {
    let mut e = evidence(worker(0.02, 0.08, 0.0));
    e.devices = vec![dev("loop1", Role::Target, 0.15, 0)];
    let l = classify(&facts(&e)).unwrap();
    assert_eq!(l.kind, Limit::Waiting);
    assert!(l.rule.contains("loop1 only 15% busy"), "{}", l.rule);
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
    assert!(l.between.contains(&Limit::FilesystemCpu), "{:?}", l.between);
}

#[test]
fn no_workers_no_limiter() {
    let e = Evidence::default();
    assert!(classify(&facts(&e)).is_none());
}

#[test]
fn others_taking_a_tenth_of_the_machine_is_interference_and_background_is_not() {
    let mut e = evidence(worker(0.5, 0.4, 0.1));
    e.machine = Some(MachineFigures {
        busy: 1.0,
        others: 1.9,
        processes: 1.9,
        other_top: vec![Busy {
            name: "stress".into(),
            cores: 1.9,
            kind: None,
        }],
        ..Default::default()
    });
    let why = interference(&e).expect("interference");
    assert!(
        why.contains("other processes took 1.90 of 2 CPUs (stress 1.90)"),
        "{why}"
    );
    assert!(why.contains("waited 10% of its time for a CPU"), "{why}");
    let quiet = evidence(worker(0.5, 0.4, 0.0));
    assert!(interference(&quiet).is_none());
    let mut stolen = evidence(worker(0.5, 0.4, 0.0));
    stolen.machine.as_mut().unwrap().steal = 0.08;
    assert!(interference(&stolen).unwrap().contains("stole 8%"));
}

#[test]
fn kernel_threads_doing_the_runs_io_are_not_interference() {
    // The loop device's workers and writeback: busy, but no other user process.
    let mut e = evidence(worker(0.5, 0.4, 0.0));
    e.machine = Some(MachineFigures {
        busy: 0.6,
        others: 0.5,
        processes: 0.01,
        ..Default::default()
    });
    assert!(interference(&e).is_none());
}

#[test]
fn every_kind_but_mixed_has_one_rule() {
    let kinds: Vec<Limit> = RULES.iter().map(|r| r.limit).collect();
    for k in [
        Limit::Device,
        Limit::FilesystemCpu,
        Limit::BenchmarkCpu,
        Limit::Waiting,
        Limit::Paced,
        Limit::Cache,
    ] {
        assert_eq!(kinds.iter().filter(|x| **x == k).count(), 1, "{k}");
    }
}
