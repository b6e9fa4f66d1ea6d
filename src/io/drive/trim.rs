//! fio's trims (rw=trim, randtrim, trimwrite, randtrimwrite): each block is trimmed through the
//! engine, synchronously as fio's engines trim (hole punching on a file, discard on a block
//! device: `sys::ioflags::trim`), and counted as fio's trim direction; with trimwrite the block is
//! then written.

use std::time::Instant;

use super::{Driver, OpKind};
use crate::engine::IoEngine;
use crate::plan::job::Rw;

impl Driver<'_> {
    /// Trims the drawn block [offset, offset + len) of the region; true when the I/O goes on as
    /// a write of the same block (trimwrite), false when the slot is free again (a trim, or a
    /// failed one: the job then stops).
    pub(super) fn trim_first(
        &mut self,
        engine: &mut impl IoEngine,
        slot: usize,
        len: u64,
        (file, offset): (usize, u64),
    ) -> bool {
        let at = self.p.base + offset;
        let start = Instant::now();
        if let Err(e) = engine.trim(file, at, len) {
            self.st
                .fail(super::super::Failure::io("trim", &e).at(at).in_file(file));
            self.free.push_front(slot);
            self.issuing = false;
            return false;
        }
        let now = Instant::now();
        if let Some(rec) = self.st.iolog.as_mut() {
            rec.op(start - self.began, OpKind::Trim, (file, at), len);
        }
        self.count_trim(start, now, len);
        if matches!(self.p.rw, Rw::TrimWrite | Rw::RandTrimWrite) {
            return true;
        }
        self.free.push_front(slot);
        self.issued += len;
        self.issued_ios += 1;
        if self.p.limit_bytes.is_some_and(|limit| self.issued >= limit)
            || self.p.pace.limit_ios.is_some_and(|n| self.issued_ios >= n)
        {
            self.issuing = false;
        }
        self.last_done = now;
        false
    }

    /// Records a trim done (after the ramp): its latency, bytes, and the second it ended in.
    fn count_trim(&mut self, start: Instant, now: Instant, len: u64) {
        if now < self.measure_from {
            return;
        }
        let ns = (now.duration_since(start).as_nanos() as u64).max(1);
        if self.slicer.due(now) {
            self.slicer.cut_hist(now, &self.st.lat);
        }
        let st = &mut self.st;
        st.lat.saturating_record(ns);
        st.issued.trim_lat.saturating_record(ns);
        st.issued.trims += 1;
        st.issued.trim_bytes += len;
        let sec = now.duration_since(self.measure_from).as_secs() as usize;
        if st.per_sec.len() <= sec {
            st.per_sec.resize(sec + 1, (0, 0));
        }
        st.per_sec[sec].0 += 1;
        st.per_sec[sec].1 += len;
        self.progress.add(1, len);
    }
}

#[cfg(test)]
mod tests {
    use super::super::*;

    fn run(rw: Rw) -> (Vec<(char, u64, u64)>, Stats) {
        run_bs(rw, BlockSize::Fixed(8192), None)
    }

    fn run_bs(rw: Rw, bs: BlockSize, trim_bs: Option<BlockSize>) -> (Vec<(char, u64, u64)>, Stats) {
        let mut p = Pattern::basic(rw, bs, 4, 256 << 10);
        p.trim_bs = trim_bs;
        let progress = crate::metrics::progress::Progress::new();
        let mut e = super::super::fake::Seen::default();
        let st = drive_on(&mut e, &p, &WriteData::new(1, 8192, 0), Live::of(&progress));
        assert!(st.error.is_none(), "{:?}", st.error);
        let ops = e.ops.iter().map(|(c, io)| (*c, io.offset, io.len as u64));
        (ops.collect(), st)
    }

    #[test]
    fn a_trim_job_trims_every_block_once_and_counts_them_as_trims() {
        for rw in [Rw::Trim, Rw::RandTrim] {
            let (ops, st) = run(rw);
            assert_eq!(ops.len(), 32, "{rw:?}");
            assert!(ops.iter().all(|o| o.0 == 't' && o.2 == 8192));
            let mut at: Vec<u64> = ops.iter().map(|o| o.1).collect();
            assert_eq!(at.windows(2).all(|w| w[0] < w[1]), rw == Rw::Trim);
            at.sort_unstable();
            assert_eq!(at, (0..32).map(|i| i * 8192).collect::<Vec<_>>());
            assert_eq!(
                (st.issued.trims, st.issued.trim_bytes, st.writes),
                (32, 256 << 10, 0)
            );
            assert_eq!(st.issued.trim_lat.len(), 32);
        }
    }

    /// bs=4k,4k,8k: trims of 8 KiB, and trimwrite writes each trimmed block whole.
    #[test]
    fn trims_take_their_own_block_size() {
        let eight = Some(BlockSize::Fixed(8192));
        let (ops, st) = run_bs(Rw::RandTrim, BlockSize::Fixed(4096), eight.clone());
        assert!(ops.len() == 32 && ops.iter().all(|o| o.2 == 8192));
        assert_eq!(st.issued.trim_bytes, 256 << 10);
        let (ops, _) = run_bs(Rw::RandTrimWrite, BlockSize::Fixed(4096), eight);
        assert!(ops.len() == 64 && ops.iter().all(|o| o.2 == 8192));
    }

    #[test]
    fn trimwrite_trims_each_block_then_writes_it() {
        for rw in [Rw::TrimWrite, Rw::RandTrimWrite] {
            let (ops, st) = run(rw);
            assert_eq!(ops.len(), 64, "{rw:?}");
            for pair in ops.chunks(2) {
                assert_eq!((pair[0].0, pair[1].0), ('t', 'w'));
                assert_eq!((pair[0].1, pair[0].2), (pair[1].1, pair[1].2));
            }
            assert_eq!(
                (st.issued.trims, st.writes, st.write_bytes),
                (32, 32, 256 << 10)
            );
        }
    }
}
