//! Trims (fio's third direction): each block trimmed through the engine once, counted as
//! trims; trim then write writes each trimmed block whole.

use super::*;

fn trims(mix: Mix, order: Order, trim_bs: u64) -> (Vec<(Dir, u64, usize)>, Stats) {
    let mut p = plan(mix, order, BlockSize::Fixed(8192), 4, 256 << 10);
    p.ops.bs[Dir::Trim] = BlockSize::Fixed(trim_bs);
    let (e, st) = seen(&p);
    let ops = e.ops.iter().map(|io| (io.dir, io.offset, io.len));
    (ops.collect(), st)
}

#[test]
fn a_trim_job_trims_every_block_once_and_counts_them_as_trims() {
    for order in [in_turn(AtEnd::Stop), random()] {
        let in_turn = matches!(order, Order::InTurn { .. });
        let (ops, st) = trims(Mix::Only(Dir::Trim), order, 8192);
        assert_eq!(ops.len(), 32);
        assert!(ops.iter().all(|o| o.0 == Dir::Trim && o.2 == 8192));
        let mut at: Vec<u64> = ops.iter().map(|o| o.1).collect();
        assert_eq!(at.windows(2).all(|w| w[0] < w[1]), in_turn);
        at.sort_unstable();
        assert_eq!(at, (0..32).map(|i| i * 8192).collect::<Vec<_>>());
        let t = &st.tally.dirs[Dir::Trim];
        assert_eq!(
            (t.ios, t.bytes, st.tally.dirs[Dir::Write].ios),
            (32, 256 << 10, 0)
        );
        assert_eq!(t.lat.len(), 32);
    }
}

#[test]
fn trims_take_their_own_block_size() {
    let (ops, st) = trims(Mix::Only(Dir::Trim), random(), 16384);
    assert!(ops.len() == 16 && ops.iter().all(|o| o.2 == 16384));
    assert_eq!(st.tally.dirs[Dir::Trim].bytes, 256 << 10);
}

#[test]
fn trim_then_write_trims_each_block_then_writes_it() {
    for order in [in_turn(AtEnd::Stop), random()] {
        let (ops, st) = trims(Mix::TrimThenWrite, order, 8192);
        assert_eq!(ops.len(), 64);
        for pair in ops.chunks(2) {
            assert_eq!((pair[0].0, pair[1].0), (Dir::Trim, Dir::Write));
            assert_eq!((pair[0].1, pair[0].2), (pair[1].1, pair[1].2));
        }
        let (t, w) = (&st.tally.dirs[Dir::Trim], &st.tally.dirs[Dir::Write]);
        assert_eq!((t.ios, w.ios, w.bytes), (32, 32, 256 << 10));
    }
}
