//! What holds I/Os back: rates, pauses, overlaps, the latency target's depth, the start delay.

use super::*;
use crate::io::pace::{Arrivals, Rate, Think};
use crate::io::worker::Overlap;
use crate::plan::job::per_io::LatencyTarget;

fn timed(ms: u64) -> WorkerPlan {
    let mut p = plan(reads(), random(), BlockSize::Fixed(4096), 4, 1 << 20);
    (p.ends.bytes, p.ends.runtime) = (None, Some(Duration::from_millis(ms)));
    p
}

#[test]
fn rate_iops_spaces_the_ios_evenly() {
    let mut p = timed(600);
    p.gates.rate = Some(Rate {
        bytes: PerDir::default(),
        ios: PerDir::rw(Some(500), None),
        arrivals: Arrivals::Even,
    });
    let (_, st) = seen(&p);
    let iops = st.tally.dirs[Dir::Read].ios as f64 / 0.6;
    assert!((450.0..=560.0).contains(&iops), "rate_iops=500 gave {iops}");
}

#[test]
fn a_rate_in_bytes_holds_with_poisson_arrivals() {
    let mut p = timed(600);
    p.gates.rate = Some(Rate {
        bytes: PerDir::rw(Some(1 << 20), None),
        ios: PerDir::default(),
        arrivals: Arrivals::Poisson,
    });
    let (_, st) = seen(&p);
    let bw = st.tally.dirs[Dir::Read].bytes as f64 / 0.6;
    assert!(
        (0.7..1.3).contains(&(bw / (1 << 20) as f64)),
        "rate=1m poisson gave {bw}"
    );
}

#[test]
fn thinktime_pauses_after_every_so_many_ios() {
    let mut p = plan(
        reads(),
        in_turn(AtEnd::Stop),
        BlockSize::Fixed(4096),
        1,
        1 << 20,
    );
    p.ends.ios = Some(10);
    p.gates.think = Some(Think {
        total: Duration::from_millis(20),
        spin: Duration::ZERO,
        every: 2,
    });
    let t = Instant::now();
    seen(&p);
    assert!(
        t.elapsed() >= Duration::from_millis(80),
        "5 pauses of 20 ms"
    );
}

#[test]
fn a_start_delay_is_waited_out_before_the_first_io() {
    let mut p = plan(
        reads(),
        in_turn(AtEnd::Stop),
        BlockSize::Fixed(4096),
        1,
        8192,
    );
    p.gates.start_delay = Duration::from_millis(50);
    let t = Instant::now();
    seen(&p);
    assert!(t.elapsed() >= Duration::from_millis(50));
}

#[test]
fn serialize_overlap_never_has_two_overlapping_ios_in_flight() {
    let order = Order::Random {
        draw: Draw::Independent,
        random_pct: 100,
        run: Run::ONE,
    };
    let mut p = plan(writes(), order, BlockSize::Range(512, 8192), 8, 64 << 10);
    walk(&mut p).region.align = 512;
    p.ends.bytes = Some(4 << 20);
    let mut e = fake::Slow::default();
    drive_with(&mut e, &p);
    assert!(e.overlapped > 100, "{} of {}", e.overlapped, e.queued);
    p.gates.overlap = Overlap::Serialized;
    let mut e = fake::Slow::default();
    let st = drive_with(&mut e, &p);
    assert!(st.ended.error.is_none());
    assert_eq!(e.overlapped, 0, "of {}", e.queued);
    assert!(st.tally.dirs[Dir::Write].bytes >= 4 << 20);
}

fn latency(target_us: u64, pct: f64) -> (Stats, usize) {
    let mut p = timed(20_000);
    p.queue.depth = 32;
    p.queue.slots = 32;
    p.gates.latency = Some(LatencyTarget {
        target: Duration::from_micros(target_us),
        window: Duration::from_millis(60),
        percentile: pct,
        run: false,
    });
    let mut e = fake::Queue::default();
    let st = drive_with(&mut e, &p);
    (st, e.deepest)
}

/// A device whose I/Os take 2 ms per I/O in flight against a 13 ms target: the search goes
/// past the depth that meets it, comes back, ends once found, and the figures are that
/// depth's.
#[test]
fn latency_target_finds_the_deepest_queue_that_meets_it_and_ends() {
    // 70%: a batch slowed by a busy host does not fail a window.
    let (st, deepest) = latency(13_000, 70.0);
    assert!(st.ended.error.is_none(), "{:?}", st.ended.error);
    let qd = st.latency_qd.unwrap();
    // 6 nominally; fewer when the host is busy and the fake device's sleeps overshoot (down
    // to 1 on a host running a build beside the tests). Never deeper than meets the target.
    assert!((1..=6).contains(&qd), "{qd}");
    // Past the depth it settled on (8 nominally; 4 when a busy host already failed depth 4),
    // never to the queue's whole depth.
    assert!(
        deepest > qd as usize && deepest < 32,
        "it probed past the target: {deepest} (settled on {qd})"
    );
    assert!(st.measured < Duration::from_secs(10), "it ended once found");
    assert!(
        st.tally.dirs[Dir::Read].ios > 0,
        "the found depth's figures"
    );
}

#[test]
fn latency_target_below_what_depth_1_does_fails_the_job_as_in_fio() {
    let (st, _) = latency(400, 100.0);
    let e = st.ended.error.unwrap();
    assert!(e.contains("latency target"), "{e}");
    assert_eq!(st.latency_qd, Some(1));
}
