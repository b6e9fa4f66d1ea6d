//! The interference note against evidence shaped as real phases: other processes' CPU, come
//! and gone, a worker kept from its CPU, other processes' I/O on the target's devices.

use super::*;
use crate::metrics::evidence::OthersIo;

fn machine(processes: f64) -> MachineFigures {
    MachineFigures {
        busy: 1.0,
        others: processes,
        processes,
        other_top: vec![Busy {
            name: "stress".into(),
            cores: processes,
            kind: None,
        }],
        ..Default::default()
    }
}

#[test]
fn others_taking_a_tenth_of_the_machine_is_interference_and_background_is_not() {
    let mut e = evidence(worker(0.5, 0.4, 0.1));
    e.machine = Some(machine(1.9));
    let why = interference(&e).expect("interference");
    assert!(
        why.contains("other processes took 1.90 of 2 CPUs (stress 1.90)"),
        "{why}"
    );
    assert!(why.contains("waited 10% of its time for a CPU"), "{why}");
    let quiet = evidence(worker(0.5, 0.4, 0.0));
    assert!(interference(&quiet).is_none());
    // Both sides of 10% of the machine (2 CPUs: 0.2 cores).
    let mut e = evidence(worker(0.5, 0.4, 0.0));
    e.machine = Some(machine(0.18));
    assert!(interference(&e).is_none());
    e.machine = Some(machine(0.22));
    assert!(interference(&e).is_some());
    // Both sides of 5% stolen.
    let mut stolen = evidence(worker(0.5, 0.4, 0.0));
    stolen.machine.as_mut().unwrap().steal = 0.04;
    assert!(interference(&stolen).is_none());
    stolen.machine.as_mut().unwrap().steal = 0.06;
    assert!(interference(&stolen).unwrap().contains("stole 6%"));
}

#[test]
fn processes_that_came_and_went_count_as_others() {
    let mut e = evidence(worker(0.5, 0.4, 0.0));
    let mut m = machine(0.0);
    m.other_top.clear();
    m.gone = 0.4;
    e.machine = Some(m);
    let why = interference(&e).expect("interference");
    assert!(
        why.contains("0.40 of it processes that came and went"),
        "{why}"
    );
}

#[test]
fn a_worker_kept_from_its_cpu_by_another_process_is_interference_on_a_large_machine() {
    // A hog pinned to the worker's CPU on a 16-CPU host: one core is 6% of the machine.
    let mut e = evidence(worker(0.3, 0.2, 0.5));
    e.cpus = 16;
    e.machine = Some(machine(1.0));
    let why = interference(&e).expect("interference");
    assert!(why.contains("waited 50% of its time for a CPU"), "{why}");
    // Both sides of RUNQ_SHARE.
    e.workers[0] = worker(0.5, 0.26, 0.24);
    assert!(interference(&e).is_none());
    e.workers[0] = worker(0.5, 0.24, 0.26);
    assert!(interference(&e).is_some());
    // More workers than CPUs and nothing else running: its own doing, not interference.
    e.machine = Some(machine(0.0));
    assert!(interference(&e).is_none());
}

#[test]
fn other_processes_io_on_the_targets_devices_is_interference() {
    let mut e = evidence(worker(0.01, 0.04, 0.0));
    let mut d = dev("loop1", Role::Target, 0.95, 25600);
    d.read_bytes = 200 << 20;
    e.devices = vec![d];
    let mut m = machine(0.0);
    m.other_top.clear();
    m.io = Some(OthersIo {
        bytes: 100 << 20,
        on_stack: 100 << 20,
        top: vec![("dd".into(), 100 << 20)],
    });
    e.machine = Some(m.clone());
    let why = interference(&e).expect("interference");
    assert!(
        why.contains("other processes moved 100.0 MiB of storage I/O (dd 100.0 MiB)"),
        "{why}"
    );
    // Both sides of a tenth of what the stack moved.
    m.io.as_mut().unwrap().on_stack = 19 << 20;
    e.machine = Some(m.clone());
    assert!(interference(&e).is_none());
    m.io.as_mut().unwrap().on_stack = 21 << 20;
    e.machine = Some(m);
    assert!(interference(&e).is_some());
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
