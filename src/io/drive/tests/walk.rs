//! Where I/Os go: holes, passes, runs, partly random, skewed offsets, and the pages dropped at
//! the end of each pass.

use super::*;
use crate::io::offsets::RunNext;
use crate::plan::job::Distribution;

fn offsets(e: &fake::Seen) -> Vec<u64> {
    e.ops.iter().map(|io| io.offset).collect()
}

#[test]
fn a_hole_after_each_io_from_the_regions_base() {
    let mut p = plan(
        reads(),
        in_turn(AtEnd::Stop),
        BlockSize::Fixed(4096),
        1,
        64 << 10,
    );
    walk(&mut p).region.base = 1 << 20;
    walk(&mut p).order = Order::InTurn {
        step: Step::Forward { hole: 4096 },
        at_end: AtEnd::Stop,
    };
    let (e, _) = seen(&p);
    let want: Vec<u64> = (0..8).map(|i| (1 << 20) + i * 8192).collect();
    assert_eq!(offsets(&e), want, "rw=read:4k from offset=1M");
}

#[test]
fn more_bytes_than_the_region_wrap_for_more_passes() {
    let mut p = plan(
        writes(),
        in_turn(AtEnd::Wrap),
        BlockSize::Fixed(4096),
        4,
        64 << 10,
    );
    p.ends.bytes = Some(3 * (64 << 10));
    let (e, st) = seen(&p);
    assert_eq!((e.ops.len(), st.tally.dirs[Dir::Write].ios), (48, 48));
    assert!(e
        .ops
        .iter()
        .all(|io| io.dir == Dir::Write && io.offset < 64 << 10));
    p.ends.ios = Some(10);
    assert_eq!(seen(&p).0.ops.len(), 10, "number_ios=10");
}

#[test]
fn reads_and_writes_take_their_own_sizes() {
    let mixed = Mix::Mixed { read_pct: 50 };
    let mut p = plan(mixed, random(), BlockSize::Fixed(4096), 2, 1 << 20);
    p.ops.bs[Dir::Write] = BlockSize::Fixed(65536);
    p.ends.bytes = Some(8 << 20);
    let (e, _) = seen(&p);
    assert!(e.ops.iter().all(|io| {
        let want = if io.dir == Dir::Write { 65536 } else { 4096 };
        io.len == want && io.offset % 4096 == 0 && io.offset + io.len as u64 <= 1 << 20
    }));
}

fn runs(then: RunNext, random_pct: u32) -> Order {
    Order::Random {
        draw: Draw::Map,
        random_pct,
        run: Run { len: 4, then },
    }
}

#[test]
fn a_run_of_ios_follows_each_random_offset() {
    let order = runs(RunNext::Sequential, 100);
    let p = plan(reads(), order, BlockSize::Fixed(4096), 1, 4 << 20);
    let at = offsets(&seen(&p).0);
    for run in at
        .chunks(4)
        .filter(|c| c.len() == 4 && c[0] + 4 * 4096 <= 4 << 20)
    {
        assert_eq!(run[1], run[0] + 4096, "randread:4, sequential: {run:?}");
        assert_eq!(run[3], run[0] + 3 * 4096);
    }
    let order = runs(RunNext::Identical, 100);
    let p = plan(reads(), order, BlockSize::Fixed(4096), 1, 4 << 20);
    let at = offsets(&seen(&p).0);
    assert!(
        at.chunks(4).all(|c| c.iter().all(|x| *x == c[0])),
        "identical"
    );
}

#[test]
fn percentage_random_continues_in_turn_for_the_rest() {
    let order = Order::Random {
        draw: Draw::Map,
        random_pct: 25,
        run: Run::ONE,
    };
    let p = plan(reads(), order, BlockSize::Fixed(4096), 1, 64 << 20);
    let at = offsets(&seen(&p).0);
    let next = at.windows(2).filter(|w| w[1] == w[0] + 4096).count();
    let share = next as f64 / (at.len() - 1) as f64;
    assert!((0.72..0.78).contains(&share), "{share} in turn");
}

#[test]
fn zipf_offsets_concentrate() {
    let order = Order::Random {
        draw: Draw::Skewed(Distribution::Zipf(1.2), None),
        random_pct: 100,
        run: Run::ONE,
    };
    let mut p = plan(reads(), order, BlockSize::Fixed(4096), 1, 16 << 20);
    p.ends.bytes = Some(64 << 20);
    let at = offsets(&seen(&p).0);
    let mut counts = std::collections::HashMap::new();
    for x in &at {
        *counts.entry(*x).or_insert(0u64) += 1;
    }
    let hottest = counts.into_values().max().unwrap();
    let zeta: f64 = (1..=4096).map(|i| (i as f64).powf(-1.2)).sum();
    let (got, want) = (hottest as f64 / at.len() as f64, 1.0 / zeta);
    assert!(
        (got - want).abs() < want * 0.1,
        "hottest block {got} vs {want}"
    );
}

/// With the walk's pass ends dropping pages: each end of a pass over the file drops them, as
/// fio's loop_cache_invalidate (once per pass of the random map, none with holes).
#[test]
fn each_pass_that_ends_drops_the_files_cached_pages() {
    let (_dir, _path, file) = crate::engine::scratch_file();
    let files = [file];
    let progress = Progress::new();
    let dropped = |p: &WorkerPlan| {
        let live = Live {
            files: Some(&files[..]),
            ..Live::of(&progress)
        };
        let data = WriteData::new(1, 4096, 0);
        drive_on(&mut fake::Seen::default(), p, &data, live)
    };
    let mut p = plan(
        writes(),
        in_turn(AtEnd::Wrap),
        BlockSize::Fixed(4096),
        8,
        64 << 10,
    );
    p.ends.bytes = Some(256 << 10);
    assert_eq!(dropped(&p).pages_dropped, 0, "unless the walk says so");
    walk(&mut p).pass_ends = PassEnds::DropPages;
    assert_eq!(
        dropped(&p).pages_dropped,
        3,
        "four passes: three ends before the fourth"
    );
    walk(&mut p).order = Order::InTurn {
        step: Step::Forward { hole: 4096 },
        at_end: AtEnd::Wrap,
    };
    assert_eq!(
        dropped(&p).pages_dropped,
        0,
        "with holes fio wraps without it"
    );
    let mut p = plan(reads(), random(), BlockSize::Fixed(4096), 8, 64 << 10);
    walk(&mut p).pass_ends = PassEnds::DropPages;
    (p.ends.bytes, p.ends.runtime) = (None, Some(Duration::from_millis(100)));
    let s = dropped(&p);
    let reads = s.tally.dirs[Dir::Read].ios;
    assert!(reads > 64, "{reads}");
    // (Up to a queue's depth more were drawn than read when the time ran out.)
    let least = (reads - 1) / 16;
    assert!(
        (least..=least + 1).contains(&s.pages_dropped),
        "{} passes ended in {reads} reads",
        s.pages_dropped
    );
}
