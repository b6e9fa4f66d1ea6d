use super::*;

/// `region` bytes at 4 KiB, I/Os of up to `max_bs`.
fn geo(region: u64, max_bs: u64) -> Geometry {
    Geometry {
        region,
        align: 4096,
        max_bs,
    }
}

fn in_turn(step: Step) -> Order {
    Order::InTurn {
        step,
        at_end: AtEnd::Wrap,
    }
}

fn random(draw: Draw, run: Run) -> Order {
    Order::Random {
        draw,
        random_pct: 100,
        run,
    }
}

#[test]
fn a_negative_hole_reads_backwards_wrapping_as_fio_does() {
    let mut rng = DataGen::new(1);
    let order = in_turn(Step::Back { by: 8192 });
    let mut o = Offsets::new(&order, geo(32768, 4096), &mut rng);
    let got: Vec<u64> = (0..9)
        .map(|_| o.next(Dir::Read, 4096, &mut rng).unwrap().offset / 1024)
        .collect();
    // fio 3.33, rw=read:-8k bs=4k size=32k: 0 24576 20480 ... 4096 0 (its write_iolog).
    assert_eq!(got, [0, 24, 20, 16, 12, 8, 4, 0, 24]);
}

/// rw=randrw:4 as fio 3.33's write_iolog shows it: a random I/O, then three that go on in
/// their own direction (a write after a random read continues the writes, from 0 at first);
/// with rw_sequencer=identical, each repeats its direction's last start.
#[test]
fn a_run_goes_on_in_each_direction_as_fio_does() {
    let mut rng = DataGen::new(3);
    let run = Run {
        len: 4,
        then: RunNext::Sequential,
    };
    let mut o = Offsets::new(&random(Draw::Map, run), geo(1 << 20, 4096), &mut rng);
    let mut at = |d: Dir| o.next(d, 4096, &mut rng).unwrap().offset;
    let r0 = at(Dir::Read);
    assert_eq!(
        [at(Dir::Write), at(Dir::Write), at(Dir::Read)],
        [0, 4096, r0 + 4096]
    );
    let w1 = at(Dir::Write);
    assert_eq!(
        [at(Dir::Read), at(Dir::Write), at(Dir::Write)],
        [r0 + 8192, w1 + 4096, w1 + 8192]
    );
    let identical = Run {
        then: RunNext::Identical,
        ..run
    };
    let mut o = Offsets::new(&random(Draw::Map, identical), geo(1 << 20, 4096), &mut rng);
    let mut at = |d: Dir| o.next(d, 4096, &mut rng).unwrap().offset;
    let r0 = at(Dir::Read);
    assert_eq!([at(Dir::Write), at(Dir::Read), at(Dir::Read)], [0, r0, r0]);
}

fn sequence(stride: Stride, n: usize) -> Vec<Option<u64>> {
    let draw = Draw::Sequence {
        blocks: vec![2, 0, 1],
        stride,
    };
    let mut rng = DataGen::new(1);
    let mut o = Offsets::new(&random(draw, Run::ONE), geo(48 << 10, 4096), &mut rng);
    (0..n)
        .map(|_| o.next(Dir::Read, 4096, &mut rng).map(|x| x.offset / 4096))
        .collect()
}

#[test]
fn a_sequence_repeats_or_strides_on_as_fio_does() {
    // fio's examples/sequence-distribution.fio (12 blocks, 6 I/Os).
    assert_eq!(sequence(Stride::Repeat, 6), [2, 0, 1, 2, 0, 1].map(Some));
    assert_eq!(sequence(Stride::On, 6), [2, 0, 1, 5, 3, 4].map(Some));
    // Strided past the region's end: the job ends there.
    let w = sequence(Stride::On, 13);
    assert_eq!(w[11], Some(10));
    assert_eq!(w[12], None);
}

#[test]
fn a_spread_of_sizes_is_cut_at_blocks_done_this_pass_as_fio_does() {
    let mut rng = DataGen::new(9);
    let region = geo(1 << 20, 65536);
    let mut o = Offsets::new(&random(Draw::MapCut, Run::ONE), region, &mut rng);
    let mut done = vec![false; 256];
    let mut ios = Vec::new();
    // One pass: I/Os until every block an I/O may start at is done (the last 15 blocks can
    // only be reached by an I/O starting before them).
    while done[..241].iter().any(|d| !d) {
        let asked = if rng.next_u64() % 2 == 0 { 4096 } else { 65536 };
        let Extent { offset: at, len } = o.next(Dir::Read, asked, &mut rng).unwrap();
        assert!(len % 4096 == 0 && (4096..=65536).contains(&len));
        for b in at / 4096..(at + len) / 4096 {
            assert!(!done[b as usize], "block {b} twice in a pass");
            done[b as usize] = true;
        }
        ios.push(len);
    }
    let cut = ios.iter().filter(|&&l| l != 4096 && l != 65536).count();
    assert!(cut > 0, "some 64 KiB I/Os were cut short");
    // The pass ends with the next I/O, which says so (fio invalidates there).
    assert!(!o.take_wrapped(), "no pass ended during the first");
    o.next(Dir::Read, 4096, &mut rng).unwrap();
    assert!(o.take_wrapped());
    // Through the plain map, sizes are never cut.
    let mut o = Offsets::new(&random(Draw::Map, Run::ONE), region, &mut rng);
    for _ in 0..64 {
        assert_eq!(o.next(Dir::Read, 65536, &mut rng).unwrap().len, 65536);
    }
}

/// fio's rw=rw walks reads and writes on their own (last_pos[ddir]): each direction goes 0, 4k,
/// 8k...
#[test]
fn each_direction_walks_on_its_own() {
    let mut rng = DataGen::new(1);
    let order = in_turn(Step::Forward { hole: 0 });
    let mut o = Offsets::new(&order, geo(64 << 10, 4096), &mut rng);
    let mut next = PerDir::<u64>::default();
    for i in 0..16 {
        let d = if i % 3 == 0 { Dir::Write } else { Dir::Read };
        assert_eq!(
            o.next(d, 4096, &mut rng).unwrap().offset,
            next[d],
            "I/O {i}"
        );
        next[d] += 4096;
    }
}
