//! The driver on the null engine: sizes, runtimes, the random map, fresh data.

use super::*;
use crate::engine;
use crate::io::Permutation;
use crate::plan::job::EngineKind;
use std::time::Duration;

fn pattern(rw: Rw, bs: BlockSize, limit: u64) -> Pattern {
    let mut p = Pattern::basic(rw, bs, 8, 1 << 20);
    p.rwmixread = 70;
    p.limit_bytes = Some(limit);
    p.seed = 42;
    p.refill = false;
    p
}

fn null_engine(p: &Pattern) -> engine::Engine {
    (engine::def(EngineKind::Null).open)(
        Vec::new(),
        engine::Slots::new(p.buffers.max(p.depth), p.max_bs() as usize),
    )
    .unwrap()
}

#[test]
fn null_engine_drives_the_runner_deterministically() {
    let p = pattern(Rw::RandRw, BlockSize::Fixed(4096), 40 << 20);
    let data = WriteData::new(1, 4096, 0);
    let a = drive(&mut null_engine(&p), &p, &data, Live::of(&Progress::new()));
    let b = drive(&mut null_engine(&p), &p, &data, Live::of(&Progress::new()));
    assert!(a.error.is_none());
    assert_eq!(a.reads + a.writes, 10240, "40 MiB in 4 KiB I/Os");
    assert_eq!(
        (a.reads, a.writes),
        (b.reads, b.writes),
        "same seed, same mix"
    );
    let share = a.reads as f64 / (a.reads + a.writes) as f64;
    assert!((0.67..0.73).contains(&share), "rwmixread=70 gave {share}");
    assert_eq!(a.read_bytes + a.write_bytes, 40 << 20);
    assert_eq!(a.lat.len(), 10240);
}

#[test]
fn sequential_jobs_stop_at_their_size_and_ranges_stay_in_bounds() {
    let p = pattern(Rw::Read, BlockSize::Fixed(65536), 1 << 20);
    let s = drive(
        &mut null_engine(&p),
        &p,
        &WriteData::new(1, 65536, 0),
        Live::of(&Progress::new()),
    );
    assert_eq!((s.reads, s.read_bytes), (16, 1 << 20));
    let mut rng = DataGen::new(3);
    for _ in 0..1000 {
        let b = pick_bs(&BlockSize::Range(8192, 65536), &mut rng);
        assert!(b % 8192 == 0 && (8192..=65536).contains(&b));
    }
    let split = BlockSize::Split(vec![(4096, 75), (65536, 25)]);
    let small = (0..4000)
        .filter(|_| pick_bs(&split, &mut rng) == 4096)
        .count();
    assert!((2800..3200).contains(&small), "{small}");
}

#[test]
fn time_based_jobs_run_for_their_runtime() {
    let mut p = pattern(Rw::RandRead, BlockSize::Fixed(4096), 1 << 20);
    p.limit_bytes = None;
    p.runtime = Some(Duration::from_millis(300));
    let t = Instant::now();
    let s = drive(
        &mut null_engine(&p),
        &p,
        &WriteData::new(1, 4096, 0),
        Live::of(&Progress::new()),
    );
    let took = t.elapsed();
    assert!(took >= Duration::from_millis(300) && took < Duration::from_secs(3));
    assert!(s.reads > 1000);
}

#[test]
fn the_random_map_visits_every_block_once_per_pass() {
    let mut rng = DataGen::new(5);
    for n in [1u64, 2, 3, 1000, 4097] {
        let mut p = Permutation::new(n, &mut rng);
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
    let mut p = Permutation::new(1000, &mut rng);
    let first: Vec<u64> = (0..10).map(|_| p.next(&mut rng)).collect();
    assert_ne!(first, (0..10).collect::<Vec<u64>>());
}

#[test]
fn every_write_gets_fresh_data() {
    let data = WriteData::new(9, 4096, 0);
    let mut rng = DataGen::new(1);
    let (mut a, mut b) = (vec![0u8; 4096], vec![0u8; 4096]);
    data.fill(&mut a, &mut rng);
    data.fill(&mut b, &mut rng);
    assert_ne!(a, b);
    let before = b.clone();
    data.scramble(&mut b, 512, &mut rng);
    let changed = b
        .chunks(512)
        .zip(before.chunks(512))
        .filter(|(x, y)| x != y)
        .count();
    assert_eq!(changed, 8, "every sector gets a fresh stamp");
    let half = WriteData::new(9, 4096, 50);
    half.fill(&mut a, &mut rng);
    assert!(a[..2048].iter().all(|&x| x == 0));
    assert!(a[2048..].iter().filter(|&&x| x == 0).count() < 64);
}

/// fio's rw=rw walks reads and writes on their own (last_pos[ddir]): each direction goes 0, 4k,
/// 8k..., and a time-based (or more-than-one-pass writing) job ends each pass of its only file by
/// dropping the file's cached pages (loop_cache_invalidate), as a random job does when its
/// random map is full; a sized job of one pass never does.
#[test]
fn each_direction_walks_on_its_own_and_a_pass_ends_with_fios_invalidate() {
    let p = pattern(Rw::Rw, BlockSize::Fixed(4096), 64 << 10);
    let mut rng = DataGen::new(1);
    let mut o = crate::io::offsets::Offsets::new(&p, &mut rng);
    let mut next = [0u64; 2];
    for i in 0..16 {
        let write = i % 3 == 0;
        let at = o.next(&mut 4096, write, &mut rng).unwrap();
        assert_eq!(at, next[usize::from(write)], "I/O {i}");
        next[usize::from(write)] += 4096;
    }

    let (_dir, _path, file) = crate::engine::scratch_file();
    let files = [file];
    let progress = Progress::new();
    let passes = |p: &Pattern| {
        let live = Live {
            invalidate: Some(&files[..]),
            ..Live::of(&progress)
        };
        drive(&mut null_engine(p), p, &WriteData::new(1, 4096, 0), live).invalidated
    };
    // Four passes of writes over 64 KiB: three ends of a pass before the fourth.
    let mut p = pattern(Rw::Write, BlockSize::Fixed(4096), 256 << 10);
    p.region = 64 << 10;
    assert_eq!(passes(&p), 3);
    // Reads asked for more than the file, not time based: fio wraps without invalidating, even
    // with a runtime (which only caps a sized job).
    p.rw = Rw::Read;
    p.runtime = Some(Duration::from_secs(60));
    assert_eq!(passes(&p), 0);
    // loops=4: fio opens the file again for each loop, dropping its cache each time.
    p.loops = 4;
    assert_eq!(passes(&p), 3);
    // A time-based random job: once per pass of the random map.
    let mut p = pattern(Rw::RandRead, BlockSize::Fixed(4096), 1 << 40);
    p.region = 64 << 10;
    p.limit_bytes = None;
    p.runtime = Some(Duration::from_millis(100));
    let s = drive(
        &mut null_engine(&p),
        &p,
        &WriteData::new(1, 4096, 0),
        Live {
            invalidate: Some(&files[..]),
            ..Live::of(&progress)
        },
    );
    assert!(s.reads > 64, "{}", s.reads);
    // Time-based sequential reads wrap with it; with holes (rw=read:8k) fio wraps without it.
    let mut q = p.clone();
    q.rw = Rw::Read;
    assert!(passes(&q) > 2);
    q.shape.rw_mod = Some(8192);
    assert_eq!(passes(&q), 0);
    // (Up to a queue's depth more were drawn than read when the time ran out.)
    let least = (s.reads - 1) / 16;
    assert!(
        (least..=least + 1).contains(&s.invalidated),
        "{} passes ended in {} reads",
        s.invalidated,
        s.reads
    );
}
