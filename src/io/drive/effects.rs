//! The job options' effects, seen through an engine that records every I/O.
use super::*;
use crate::plan::job::Distribution;

#[derive(Default)]
struct Rec {
    ios: Vec<(bool, u64, usize)>,
    buf: Vec<u8>,
    bs: usize,
    done: Vec<(usize, i64)>,
    /// The "device": writes land here, reads come from here.
    disk: Vec<u8>,
    /// Every write fails with this errno.
    write_errno: Option<i32>,
}

impl IoEngine for Rec {
    fn buffer(&mut self, slot: usize) -> &mut [u8] {
        super::fake::slot(&mut self.buf, slot, self.bs)
    }
    fn queue(&mut self, io: Io) -> std::io::Result<()> {
        self.ios
            .push((io.dir == crate::plan::dir::Dir::Write, io.offset, io.len));
        if let Some(e) = self
            .write_errno
            .filter(|_| io.dir == crate::plan::dir::Dir::Write)
        {
            self.done.push((io.slot, -(e as i64)));
            return Ok(());
        }
        let end = io.offset as usize + io.len;
        if self.disk.len() < end {
            self.disk.resize(end, 0);
        }
        let b = io.slot * self.bs;
        if io.dir == crate::plan::dir::Dir::Write {
            self.disk[io.offset as usize..end].copy_from_slice(&self.buf[b..b + io.len]);
        } else {
            self.buf[b..b + io.len].copy_from_slice(&self.disk[io.offset as usize..end]);
        }
        self.done.push((io.slot, io.len as i64));
        Ok(())
    }
    fn complete(
        &mut self,
        _min: usize,
        mut hand: impl FnMut(&[crate::engine::Reaped]),
    ) -> std::io::Result<()> {
        let mut out = Vec::new();
        let mut done = |slot: usize, res: i64| out.push(crate::engine::Reaped { slot, res });
        for (s, r) in self.done.drain(..) {
            done(s, r);
        }
        hand(&out);
        Ok(())
    }
    fn sync(&mut self, _: crate::engine::SyncKind) -> std::io::Result<()> {
        Ok(())
    }
    fn describe(&self) -> String {
        "recorder".into()
    }
}

fn run(p: &Pattern) -> (Rec, Stats) {
    run_on(p, Vec::new())
}

fn run_on(p: &Pattern, disk: Vec<u8>) -> (Rec, Stats) {
    let mut e = Rec {
        bs: p.max_bs() as usize,
        buf: vec![0; p.max_bs() as usize * p.depth.max(1)],
        disk,
        ..Rec::default()
    };
    let st = drive_on(
        &mut e,
        p,
        &WriteData::new(1, p.max_bs(), 0),
        crate::io::Live::of(&Progress::new()),
    );
    (e, st)
}

#[test]
fn offsets_holes_loops_and_counts() {
    let mut p = Pattern::basic(Rw::Read, BlockSize::Fixed(4096), 1, 64 << 10);
    p.base = 1 << 20;
    p.shape.rw_mod = Some(4096);
    let (e, _) = run(&p);
    let offs: Vec<u64> = e.ios.iter().map(|x| x.1).collect();
    assert_eq!(
        offs,
        (0..8).map(|i| (1 << 20) + i * 8192).collect::<Vec<_>>(),
        "rw=read:4k from offset=1M"
    );
    let mut p = Pattern::basic(Rw::Write, BlockSize::Fixed(4096), 4, 64 << 10);
    p.limit_bytes = Some(3 * (64 << 10));
    let (e, st) = run(&p);
    assert_eq!((e.ios.len(), st.writes), (48, 48), "loops=3: three passes");
    assert!(e.ios.iter().all(|x| x.0 && x.1 < 64 << 10));
    p.pace.limit_ios = Some(10);
    assert_eq!(run(&p).0.ios.len(), 10, "number_ios=10");
    let mut p = Pattern::basic(Rw::RandRw, BlockSize::Fixed(4096), 2, 1 << 20);
    p.wbs = Some(BlockSize::Fixed(65536));
    p.limit_bytes = Some(8 << 20);
    let (e, _) = run(&p);
    assert!(e
        .ios
        .iter()
        .all(|(w, o, l)| (*l == if *w { 65536 } else { 4096 })
            && o % 4096 == 0
            && o + *l as u64 <= 1 << 20));
}

#[test]
fn random_runs_and_partly_random() {
    let mut p = Pattern::basic(Rw::RandRead, BlockSize::Fixed(4096), 1, 4 << 20);
    p.shape.rw_mod = Some(4);
    let (e, _) = run(&p);
    for run in e
        .ios
        .chunks(4)
        .filter(|c| c.len() == 4 && c[0].1 + 4 * 4096 <= 4 << 20)
    {
        assert_eq!(run[1].1, run[0].1 + 4096, "randread:4, sequential: {run:?}");
        assert_eq!(run[3].1, run[0].1 + 3 * 4096);
    }
    p.shape.rw_identical = true;
    let (e, _) = run(&p);
    assert!(
        e.ios.chunks(4).all(|c| c.iter().all(|x| x.1 == c[0].1)),
        "identical"
    );
    let mut p = Pattern::basic(Rw::RandRead, BlockSize::Fixed(4096), 1, 64 << 20);
    p.shape.random_pct = 25;
    let (e, _) = run(&p);
    let seq = e.ios.windows(2).filter(|w| w[1].1 == w[0].1 + 4096).count();
    let share = seq as f64 / (e.ios.len() - 1) as f64;
    assert!(
        (0.72..0.78).contains(&share),
        "percentage_random=25: {share} sequential"
    );
}

#[test]
fn zipf_offsets_concentrate() {
    let mut p = Pattern::basic(Rw::RandRead, BlockSize::Fixed(4096), 1, 16 << 20);
    p.shape.dist = Distribution::Zipf(1.2);
    p.limit_bytes = Some(64 << 20);
    let (e, _) = run(&p);
    let mut counts = std::collections::HashMap::new();
    for x in &e.ios {
        *counts.entry(x.1).or_insert(0u64) += 1;
    }
    let mut c: Vec<u64> = counts.into_values().collect();
    c.sort_unstable_by(|a, b| b.cmp(a));
    let n = 4096f64;
    let zeta: f64 = (1..=4096).map(|i| (i as f64).powf(-1.2)).sum();
    let want = 1.0 / zeta;
    let got = c[0] as f64 / e.ios.len() as f64;
    assert!(
        (got - want).abs() < want * 0.1,
        "hottest block {got} vs {want} (n={n})"
    );
}

#[test]
fn rates_and_thinktime_pace_the_job() {
    let mut p = Pattern::basic(Rw::RandRead, BlockSize::Fixed(4096), 4, 1 << 20);
    p.limit_bytes = None;
    p.runtime = Some(Duration::from_millis(600));
    p.pace.rate_iops = [Some(500), None];
    let (_, st) = run(&p);
    let iops = st.reads as f64 / 0.6;
    assert!((450.0..=560.0).contains(&iops), "rate_iops=500 gave {iops}");
    p.pace.rate_iops = [None, None];
    p.pace.rate = [Some(1 << 20), None];
    p.pace.poisson = true;
    let (_, st) = run(&p);
    let bw = st.read_bytes as f64 / 0.6;
    assert!(
        (0.7..1.3).contains(&(bw / (1 << 20) as f64)),
        "rate=1m poisson gave {bw}"
    );
    let mut p = Pattern::basic(Rw::Read, BlockSize::Fixed(4096), 1, 1 << 20);
    p.pace.limit_ios = Some(10);
    p.pace.thinktime = Some(Duration::from_millis(20));
    p.pace.thinktime_blocks = 2;
    let t = Instant::now();
    run(&p);
    assert!(
        t.elapsed() >= Duration::from_millis(80),
        "5 pauses of 20 ms"
    );
}

#[test]
fn a_verifying_reader_catches_a_flipped_byte() {
    use crate::plan::job::Verify;
    let mut w = Pattern::basic(Rw::RandWrite, BlockSize::Fixed(4096), 4, 64 << 10);
    w.verify = Some(Verify {
        kind: "md5".into(),
        ..Verify::default()
    });
    let (e, st) = run(&w);
    assert_eq!(st.written.len(), 16, "every write kept for the read back");
    let mut r = w.clone();
    r.rw = Rw::Read;
    let (_, ok) = run_on(&r, e.disk.clone());
    assert_eq!((ok.verified, ok.verify_errors, ok.error), (16, 0, None));
    let mut disk = e.disk;
    disk[5 * 4096 + 100] ^= 0x20;
    let (_, bad) = run_on(&r, disk);
    assert_eq!(bad.verify_errors, 1);
    let m = bad.mismatch.expect("the bad block");
    assert!(
        m.describe("/f").starts_with("md5: verify failed at file /f offset 20480, length 4096 (requested block: offset=20480, length=4096)"),
        "{}",
        m.describe("/f")
    );
    assert_eq!(bad.failure.map(|f| f.op), Some("verify".to_string()));
}

/// Large writes through a ring of buffers (`io::data::ring_buffers`): every 4 KiB block written is
/// unique, and a stamped stretch's body (all but its fresh 8-byte stamp) recurs no closer than
/// the ring's bytes; the same seed writes the same bytes.
#[test]
fn a_ring_of_buffers_keeps_every_block_unique_and_repeats_far_apart() {
    use std::collections::HashMap;
    use std::collections::HashSet;
    let bs = 1u64 << 20;
    let mut p = Pattern::basic(Rw::Write, BlockSize::Fixed(bs), 8, 64 << 20);
    p.buffers = crate::io::data::ring_buffers(bs, 8).unwrap();
    p.refill = false;
    p.stamp_every = crate::io::data::RING_STAMP_EVERY;
    let (e, st) = run(&p);
    assert_eq!(st.writes, 64);
    assert_eq!(
        e.buf.len(),
        p.buffers * bs as usize,
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
    let every = p.stamp_every;
    for (i, stretch) in e.disk.chunks(every).enumerate() {
        if let Some(j) = last.insert(&stretch[8..], i) {
            closest = closest.min((i - j) * every);
        }
    }
    // Unique however aligned: every 4 KiB from any offset holds a stamp of its own.
    let shifted: HashSet<&[u8]> = e.disk[1000..].chunks_exact(4096).collect();
    assert_eq!(shifted.len(), (e.disk.len() - 1000) / 4096);
    assert_eq!(closest as u64, crate::io::data::RING_BYTES);
    assert_eq!(run(&p).0.disk, e.disk);
}

#[test]
fn continue_on_error_goes_past_the_listed_errnos_only() {
    let fails = |errno: i32, cont: bool, ignore: Vec<i32>| {
        let mut p = Pattern::basic(Rw::Write, BlockSize::Fixed(4096), 1, 64 << 10);
        p.continue_on = [false, cont];
        p.ignore_errors = [vec![], ignore];
        let mut e = Rec {
            bs: 4096,
            buf: vec![0; 4096],
            write_errno: Some(errno),
            ..Rec::default()
        };
        let st = drive_on(
            &mut e,
            &p,
            &WriteData::new(1, 4096, 0),
            crate::io::Live::of(&Progress::new()),
        );
        (st.failure.is_some(), st.io_errors)
    };
    // fio's default non-fatal errors (EIO) with continue_on_error=write: all 16 gone past.
    let eio = vec![libc::EIO, libc::EILSEQ];
    assert_eq!(fails(libc::EIO, true, eio.clone()), (false, 16));
    // ENOSPC is fatal unless ignore_error lists it.
    assert!(fails(libc::ENOSPC, true, eio).0);
    assert_eq!(fails(libc::ENOSPC, true, vec![libc::ENOSPC]), (false, 16));
    // Without continue_on_error nothing is gone past.
    assert_eq!(fails(libc::EIO, false, vec![libc::EIO]), (true, 0));
}

#[test]
fn a_dedupe_working_set_is_the_first_unique_pages() {
    let mut p = Pattern::basic(Rw::Write, BlockSize::Fixed(4096), 1, 64 * 4096);
    p.dedupe_pct = 50;
    let ws = crate::io::WorkingSet {
        key: 7,
        per: 8,
        me: 0,
        of: 1,
    };
    p.working_set = Some(ws);
    let (e, _) = run(&p);
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
