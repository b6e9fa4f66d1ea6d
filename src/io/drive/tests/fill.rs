//! What writes carry: fresh data, a ring of buffers stamped afresh, a pattern, a dedupe working
//! set, the verify header.

use super::*;
use crate::io::worker::WorkingSet;

fn disk(p: &WorkerPlan) -> fake::Disk {
    let mut e = fake::Disk::new(p.max_bs(), Vec::new());
    let st = drive_with(&mut e, p);
    assert!(st.ended.error.is_none(), "{:?}", st.ended.error);
    e
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

/// Large writes through a ring of buffers (`io::data::ring_buffers`): every 4 KiB block written is
/// unique, and a stamped stretch's body (all but its fresh 8-byte stamp) recurs no closer than
/// the ring's bytes; the same seed writes the same bytes.
#[test]
fn a_ring_of_buffers_keeps_every_block_unique_and_repeats_far_apart() {
    use std::collections::{HashMap, HashSet};
    let bs = 1u64 << 20;
    let mut p = plan(
        writes(),
        in_turn(AtEnd::Stop),
        BlockSize::Fixed(bs),
        8,
        64 << 20,
    );
    p.queue.slots = crate::io::data::ring_buffers(bs, 8).unwrap();
    let every = crate::io::data::RING_STAMP_EVERY;
    p.fill.data = Data::Fresh(Fresh::Scramble { every });
    let e = disk(&p);
    assert_eq!(e.ios.len(), 64);
    assert_eq!(
        e.buf.len(),
        p.queue.slots * bs as usize,
        "every buffer of the ring was used"
    );
    let blocks: HashSet<&[u8]> = e.disk.chunks(4096).collect();
    assert_eq!(
        blocks.len(),
        e.disk.len() / 4096,
        "no two 4 KiB blocks are equal"
    );
    let mut last: HashMap<&[u8], usize> = HashMap::new();
    let mut closest = usize::MAX;
    for (i, stretch) in e.disk.chunks(every).enumerate() {
        if let Some(j) = last.insert(&stretch[8..], i) {
            closest = closest.min((i - j) * every);
        }
    }
    // Unique however aligned: every 4 KiB from any offset holds a stamp of its own.
    let shifted: HashSet<&[u8]> = e.disk[1000..].chunks_exact(4096).collect();
    assert_eq!(shifted.len(), (e.disk.len() - 1000) / 4096);
    assert_eq!(closest as u64, crate::io::data::RING_BYTES);
    assert_eq!(disk(&p).disk, e.disk);
}

#[test]
fn a_pattern_fills_every_write() {
    let mut p = plan(
        writes(),
        in_turn(AtEnd::Stop),
        BlockSize::Fixed(4096),
        2,
        64 << 10,
    );
    p.fill.data = Data::Pattern(vec![0xde, 0xad]);
    let e = disk(&p);
    assert!(e.disk.chunks(2).all(|c| c == [0xde, 0xad]));
}

#[test]
fn a_dedupe_working_set_is_the_first_unique_pages() {
    let mut p = plan(
        writes(),
        in_turn(AtEnd::Stop),
        BlockSize::Fixed(4096),
        1,
        64 * 4096,
    );
    let ws = WorkingSet {
        key: 7,
        per: 8,
        me: 0,
        of: 1,
    };
    p.fill.data = Data::Dedupe {
        pct: 50,
        set: Some(ws),
        fresh: Fresh::Refill,
    };
    let e = disk(&p);
    let data = WriteData::new(1, 4096, 0);
    let pages: Vec<Vec<u8>> = (0..8)
        .map(|k| {
            let mut b = vec![0u8; 4096];
            data.fill_page(&mut b, &mut ws.page(0, k));
            b
        })
        .collect();
    let blocks: Vec<&[u8]> = e.disk.chunks(4096).collect();
    // The first unique writes are the pages, and about half the writes copy one of them.
    assert!(pages.iter().all(|pg| blocks.contains(&pg.as_slice())));
    let copies = blocks
        .iter()
        .filter(|b| pages.contains(&b.to_vec()))
        .count();
    assert!(
        (24..=56).contains(&copies),
        "{copies} of 64 blocks are pages"
    );
    let mut others: Vec<&[u8]> = blocks
        .iter()
        .filter(|b| !pages.contains(&b.to_vec()))
        .copied()
        .collect();
    let n = others.len();
    others.sort();
    others.dedup();
    assert_eq!(others.len(), n, "the other writes are unique");
}
