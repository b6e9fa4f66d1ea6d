//! The loop on engines without a device: each family of its parts alone (where I/Os go, the
//! gates, the write data, the flags, the sinks, the errors, trims), and the whole on the null
//! engine.

use std::time::{Duration, Instant};

use super::*;
use crate::engine::{self, SyncKind};
use crate::io::files::{Files, Region, Walk};
use crate::io::offsets::{AtEnd, Draw, Order, Run, Step};
use crate::io::worker::{
    Data, Ends, FillPlan, Fresh, GatePlan, Marks, Mix, OnError, Ops, Queue, SinkPlan, Syncs,
};
use crate::io::WriteData;
use crate::plan::dir::PerDir;
use crate::plan::job::{BlockSize, EngineKind};

mod errors;
mod fake;
mod fill;
mod gates;
mod marks;
mod sinks;
mod trims;
mod walk;

/// In turn from the region's start, ending (or wrapping) at its end.
pub fn in_turn(at_end: AtEnd) -> Order {
    Order::InTurn {
        step: Step::Forward { hole: 0 },
        at_end,
    }
}

/// At random through the random map.
pub fn random() -> Order {
    Order::Random {
        draw: Draw::Map,
        random_pct: 100,
        run: Run::ONE,
    }
}

/// A worker's plan around these essentials: one file of `region` bytes done once, `depth` in
/// flight, every write's data fresh, nothing else asked.
pub fn plan(mix: Mix, order: Order, bs: BlockSize, depth: usize, region: u64) -> WorkerPlan {
    WorkerPlan {
        seed: 1,
        queue: Queue {
            depth,
            slots: depth,
        },
        source: Source::Walk(Box::new(Walk {
            region: Region {
                base: 0,
                len: region,
                align: crate::io::worker::min_bs(&bs),
            },
            order,
            files: Files::ONE,
            zones: None,
            pass_ends: PassEnds::Nothing,
        })),
        ops: Ops {
            mix,
            bs: PerDir::new(|_| bs.clone()),
            syncs: Syncs::default(),
            marks: Marks::default(),
        },
        gates: GatePlan::default(),
        fill: FillPlan {
            data: Data::Fresh(Fresh::Refill),
            compress_pct: 0,
            stamp: None,
        },
        sinks: SinkPlan::default(),
        on_error: OnError::default(),
        ends: Ends {
            bytes: Some(region),
            ..Ends::default()
        },
    }
}

/// The walk of a plan, to change.
pub fn walk(p: &mut WorkerPlan) -> &mut Walk {
    match &mut p.source {
        Source::Walk(w) => w,
        Source::Replay(_) => panic!("a walk"),
    }
}

pub fn reads() -> Mix {
    Mix::Only(Dir::Read)
}

pub fn writes() -> Mix {
    Mix::Only(Dir::Write)
}

/// `p` driven on `e`, its data from seed 1.
pub fn drive_with<E: IoEngine>(e: &mut E, p: &WorkerPlan) -> Stats {
    let progress = Progress::new();
    let data = WriteData::new(1, p.max_bs(), 0);
    drive_on(e, p, &data, Live::of(&progress))
}

/// `p` on an engine that does every I/O at once: what it was asked, and the figures.
pub fn seen(p: &WorkerPlan) -> (fake::Seen, Stats) {
    let mut e = fake::Seen::default();
    let st = drive_with(&mut e, p);
    assert!(st.ended.error.is_none(), "{:?}", st.ended.error);
    (e, st)
}

fn null_engine(p: &WorkerPlan) -> engine::Engine {
    let slots = engine::Slots::new(p.queue.slots.max(p.queue.depth), p.max_bs() as usize);
    (engine::def(EngineKind::Null).open)(Vec::new(), slots).unwrap()
}

fn on_null(p: &WorkerPlan) -> Stats {
    let progress = Progress::new();
    let data = WriteData::new(1, p.max_bs(), 0);
    drive(&mut null_engine(p), p, &data, Live::of(&progress))
}

#[test]
fn null_engine_drives_the_runner_deterministically() {
    let mixed = Mix::Mixed { read_pct: 70 };
    let mut p = plan(mixed, random(), BlockSize::Fixed(4096), 8, 1 << 20);
    p.ends.bytes = Some(40 << 20);
    p.seed = 42;
    p.fill.data = Data::Fresh(Fresh::Scramble { every: 512 });
    let (a, b) = (on_null(&p), on_null(&p));
    assert!(a.ended.error.is_none());
    let ios = |s: &Stats, d: Dir| s.tally.dirs[d].ios;
    let (reads, writes) = (ios(&a, Dir::Read), ios(&a, Dir::Write));
    assert_eq!(reads + writes, 10240, "40 MiB in 4 KiB I/Os");
    assert_eq!(
        (reads, writes),
        (ios(&b, Dir::Read), ios(&b, Dir::Write)),
        "same seed, same mix"
    );
    let share = reads as f64 / (reads + writes) as f64;
    assert!((0.67..0.73).contains(&share), "rwmixread=70 gave {share}");
    let bytes = a.tally.dirs[Dir::Read].bytes + a.tally.dirs[Dir::Write].bytes;
    assert_eq!(bytes, 40 << 20);
    assert_eq!(a.tally.lat().len(), 10240);
}

#[test]
fn in_turn_jobs_stop_at_their_size() {
    let p = plan(
        reads(),
        in_turn(AtEnd::Stop),
        BlockSize::Fixed(65536),
        8,
        1 << 20,
    );
    let s = on_null(&p);
    let r = &s.tally.dirs[Dir::Read];
    assert_eq!((r.ios, r.bytes), (16, 1 << 20));
}

#[test]
fn sizes_are_drawn_from_a_range_in_steps_and_from_a_split_by_shares() {
    let mut rng = DataGen::new(3);
    for _ in 0..1000 {
        let b = next::pick_bs(&BlockSize::Range(8192, 65536), &mut rng);
        assert!(b % 8192 == 0 && (8192..=65536).contains(&b));
    }
    let split = BlockSize::Split(vec![(4096, 75), (65536, 25)]);
    let small = (0..4000)
        .filter(|_| next::pick_bs(&split, &mut rng) == 4096)
        .count();
    assert!((2800..3200).contains(&small), "{small}");
}

#[test]
fn time_based_jobs_run_for_their_runtime() {
    let mut p = plan(reads(), random(), BlockSize::Fixed(4096), 8, 1 << 20);
    p.ends.bytes = None;
    p.ends.runtime = Some(Duration::from_millis(300));
    let t = Instant::now();
    let s = on_null(&p);
    let took = t.elapsed();
    assert!(took >= Duration::from_millis(300) && took < Duration::from_secs(3));
    assert!(s.tally.dirs[Dir::Read].ios > 1000);
}

#[test]
fn the_random_map_visits_every_block_once_per_pass() {
    let mut rng = DataGen::new(5);
    for n in [1u64, 2, 3, 1000, 4097] {
        let mut p = crate::io::Permutation::new(n, &mut rng);
        for _pass in 0..2 {
            let mut seen = vec![false; n as usize];
            for _ in 0..n {
                let v = p.next(&mut rng) as usize;
                assert!(!seen[v], "n={n}: {v} twice in one pass");
                seen[v] = true;
            }
        }
    }
    // Not the identity: the order is shuffled.
    let mut p = crate::io::Permutation::new(1000, &mut rng);
    let first: Vec<u64> = (0..10).map(|_| p.next(&mut rng)).collect();
    assert_ne!(first, (0..10).collect::<Vec<u64>>());
}

/// fsync every 4 writes and fdatasync every 6: each sync once the writes before it completed;
/// an fsync due with an fdatasync is one fsync. And the worker ends with its own.
#[test]
fn syncs_come_every_so_many_writes_and_at_the_end() {
    let mut p = plan(
        writes(),
        in_turn(AtEnd::Stop),
        BlockSize::Fixed(4096),
        1,
        48 << 10,
    );
    p.ops.syncs = Syncs {
        fsync_every: 4,
        fdatasync_every: 6,
        at_end: Some(SyncKind::Fsync),
    };
    let (e, _) = seen(&p);
    use SyncKind::{Fdatasync as D, Fsync as F};
    assert_eq!(e.syncs, [F, D, F, F, F]);
}
