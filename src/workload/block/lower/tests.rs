//! Jobs lowered into the loop's parts: each part from the options that make it.

use super::*;
use crate::io::worker::Atomic;
use std::time::Duration;

fn job(opts: &[(&str, &str)]) -> Job {
    let mut j = Job::default();
    for (k, v) in opts {
        j.apply(k, Some(v))
            .unwrap_or_else(|e| panic!("{k}={v}: {e}"));
    }
    j
}

const PLACED: Placed = Placed {
    base: 0,
    region: 64 << 10,
    total: 64 << 10,
};

fn lowered(j: &Job, origin: Origin) -> WorkerPlan {
    plan(j, (0, 0), PLACED, origin)
}

fn walk_of(p: &WorkerPlan) -> &Walk {
    match &p.source {
        Source::Walk(w) => w,
        Source::Replay(_) => panic!("a walk"),
    }
}

fn drops(opts: &[(&str, &str)]) -> bool {
    let p = lowered(&job(opts), Origin::JobFile);
    walk_of(&p).pass_ends == PassEnds::DropPages
}

/// fio's loop_cache_invalidate, as fio decides it: a job file's time-based job (in turn on its
/// only file, or random), one asked to write more than its file, each of several loops; not a
/// sized read of one pass however long its runtime, nor a job without invalidate, nor
/// fsbench's own jobs (they drop the whole cache before a phase instead).
#[test]
fn a_pass_end_drops_the_files_pages_where_fio_does() {
    assert!(drops(&[
        ("rw", "read"),
        ("time_based", "1"),
        ("runtime", "1")
    ]));
    assert!(drops(&[
        ("rw", "randread"),
        ("time_based", "1"),
        ("runtime", "1")
    ]));
    assert!(drops(&[("rw", "write"), ("io_size", "256k")]));
    assert!(drops(&[("rw", "read"), ("loops", "4")]));
    assert!(!drops(&[
        ("rw", "read"),
        ("io_size", "256k"),
        ("runtime", "60")
    ]));
    assert!(!drops(&[("rw", "randread")]));
    assert!(!drops(&[
        ("rw", "read"),
        ("time_based", "1"),
        ("invalidate", "0")
    ]));
    let timed = job(&[("rw", "read"), ("time_based", "1"), ("runtime", "1")]);
    let p = lowered(&timed, Origin::Fsbench);
    assert_eq!(walk_of(&p).pass_ends, PassEnds::Nothing);
}

#[test]
fn the_order_of_offsets_follows_rw_and_its_modifiers() {
    let order =
        |opts: &[(&str, &str)]| walk_of(&lowered(&job(opts), Origin::Fsbench)).order.clone();
    let hole = |at_end| Order::InTurn {
        step: Step::Forward { hole: 8192 },
        at_end,
    };
    assert_eq!(order(&[("rw", "read:8k")]), hole(AtEnd::Stop));
    assert_eq!(
        order(&[("rw", "read:8k"), ("loops", "2")]),
        hole(AtEnd::Wrap)
    );
    let back = order(&[("rw", "read:-8k")]);
    assert!(matches!(
        back,
        Order::InTurn {
            step: Step::Back { by: 8192 },
            ..
        }
    ));
    let draw = |opts: &[(&str, &str)]| match order(opts) {
        Order::Random { draw, .. } => draw,
        o => panic!("{o:?}"),
    };
    assert_eq!(draw(&[("rw", "randread")]), Draw::Map);
    assert_eq!(
        draw(&[("rw", "randread"), ("norandommap", "1")]),
        Draw::Independent
    );
    assert_eq!(
        draw(&[("rw", "randrw"), ("bsrange", "4k-64k")]),
        Draw::MapCut
    );
    assert_eq!(
        draw(&[("rw", "randrw"), ("bs", "4k,64k")]),
        Draw::Map,
        "a size per direction"
    );
    let zipf = draw(&[("rw", "randread"), ("random_distribution", "zipf:1.2")]);
    assert_eq!(zipf, Draw::Skewed(Distribution::Zipf(1.2), None));
    let runs = order(&[("rw", "randread:8"), ("rw_sequencer", "identical")]);
    let want = Run {
        len: 8,
        then: RunNext::Identical,
    };
    assert!(matches!(runs, Order::Random { run, .. } if run == want));
}

#[test]
fn the_mix_sizes_and_flags_of_the_ios() {
    let p = lowered(
        &job(&[("rw", "randrw"), ("rwmixread", "70"), ("bs", "4k,64k")]),
        Origin::Fsbench,
    );
    assert_eq!(p.ops.mix, Mix::Mixed { read_pct: 70 });
    assert_eq!(p.ops.bs[Dir::Write], BlockSize::Fixed(65536));
    assert_eq!(
        p.ops.bs[Dir::Trim],
        BlockSize::Fixed(65536),
        "trims as writes"
    );
    let p = lowered(
        &job(&[("rw", "trimwrite"), ("bs", "4k,4k,8k")]),
        Origin::Fsbench,
    );
    assert_eq!(p.ops.mix, Mix::TrimThenWrite);
    assert_eq!(p.ops.bs[Dir::Trim], BlockSize::Fixed(8192));
    let opts = [
        ("prio", "3"),
        ("atomic", "1"),
        ("fsync", "8"),
        ("end_fsync", "1"),
    ];
    let p = lowered(&job(&opts), Origin::Fsbench);
    assert_eq!(p.ops.marks.thread, Some((2 << 13) | 3));
    assert_eq!(
        (p.ops.marks.per_io.is_none(), p.ops.marks.atomic),
        (true, Atomic::Writes)
    );
    assert_eq!(
        (p.ops.syncs.fsync_every, p.ops.syncs.at_end),
        (8, Some(SyncKind::Fsync))
    );
}

#[test]
fn gates_only_where_the_job_asks() {
    let g = lowered(&job(&[]), Origin::Fsbench).gates;
    assert!(g.rate.is_none() && g.think.is_none() && g.latency.is_none());
    assert_eq!(g.overlap, Overlap::Allowed);
    let opts = [
        ("rate_iops", "500,100"),
        ("thinktime", "20"),
        ("serialize_overlap", "1"),
    ];
    let g = lowered(&job(&opts), Origin::Fsbench).gates;
    let r = g.rate.unwrap();
    assert_eq!(
        (r.ios[Dir::Read], r.ios[Dir::Write]),
        (Some(500), Some(100))
    );
    assert_eq!(g.think.unwrap().total, Duration::from_micros(20));
    assert_eq!(g.overlap, Overlap::Serialized);
}

#[test]
fn large_plain_writes_go_through_a_ring_and_the_rest_are_refilled() {
    let ring = lowered(&job(&[("rw", "write"), ("bs", "1m")]), Origin::Fsbench);
    assert_eq!(ring.queue.slots, 16);
    assert_eq!(
        ring.fill.data,
        Data::Fresh(Fresh::Scramble {
            every: RING_STAMP_EVERY
        })
    );
    for opts in [
        [("rw", "write"), ("bs", "4k")],
        [("rw", "randrw"), ("bs", "1m")],
        [("rw", "write"), ("buffer_compress_percentage", "50")],
    ] {
        let p = lowered(&job(&opts), Origin::Fsbench);
        assert_eq!(p.queue.slots, 1, "{opts:?}");
    }
    let own = lowered(
        &job(&[("rw", "write"), ("refill_buffers", "0")]),
        Origin::Fsbench,
    );
    assert_eq!(own.fill.data, Data::Fresh(Fresh::Scramble { every: 512 }));
}

#[test]
fn errors_gone_past_per_direction_and_a_full_filesystem_that_ends_a_fill() {
    let p = lowered(
        &job(&[("continue_on_error", "write"), ("fill_device", "1")]),
        Origin::Fsbench,
    );
    assert!(p.on_error.go_past[Dir::Read].is_empty());
    assert_eq!(p.on_error.go_past[Dir::Write], [libc::EIO, libc::EILSEQ]);
    assert_eq!(p.on_error.when_full, WhenFull::Ends);
    let p = lowered(&job(&[("ignore_error", ",ENOSPC")]), Origin::Fsbench);
    assert_eq!(p.on_error.go_past[Dir::Write], [libc::ENOSPC]);
}

#[test]
fn a_reader_of_a_verifying_job_checks_and_a_writer_keeps_its_writes() {
    let w = lowered(&job(&[("rw", "write"), ("verify", "md5")]), Origin::Fsbench);
    assert!(w.fill.stamp.is_some() && w.sinks.checks.is_none());
    assert_eq!(w.sinks.written, Written::Keep);
    let r = lowered(&job(&[("rw", "read"), ("verify", "md5")]), Origin::Fsbench);
    assert!(r.fill.stamp.is_none() && r.sinks.checks.is_some());
    let only = lowered(
        &job(&[("rw", "randwrite"), ("verify", "md5"), ("verify_only", "1")]),
        Origin::Fsbench,
    );
    assert_eq!(only.ops.mix, Mix::Only(Dir::Read), "verify_only reads");
}

#[test]
fn ends_by_bytes_ios_or_time() {
    let e = lowered(&job(&[("loops", "3")]), Origin::Fsbench).ends;
    assert_eq!(
        (e.bytes, e.ios, e.runtime),
        (Some(3 * (64 << 10)), None, None)
    );
    let opts = [
        ("time_based", "1"),
        ("runtime", "2"),
        ("ramp_time", "1"),
        ("number_ios", "9"),
    ];
    let e = lowered(&job(&opts), Origin::Fsbench).ends;
    assert_eq!((e.bytes, e.ios), (None, Some(9)));
    assert_eq!(
        (e.runtime, e.ramp),
        (Some(Duration::from_secs(2)), Duration::from_secs(1))
    );
}
