//! How the loop issues each I/O beyond its offset and size (`plan::issue`): the worker's I/O
//! priority (fio's prio, prioclass, priohint: ioprio_set(2) before the first I/O, as fio does)
//! and each I/O's own (fio's cmdprio_*: the engine passes it with the I/O); fio's
//! serialize_overlap (an I/O overlapping one in flight waits until that one completes).

use std::time::Instant;

use super::latency::Probe;
use super::{Driver, Pattern};
use crate::sys::ioflags::IoFlags;

/// What the issuing options keep between I/Os.
pub(super) struct State {
    /// An I/O drawn but held back (write, length, file, offset in the region): it overlaps one
    /// in flight (serialize_overlap). It is issued next, once that one completes.
    pub held: Option<(bool, u64, usize, u64)>,
    /// The queue-depth search of latency_target.
    pub probe: Option<Probe>,
    /// The priority each slot's I/O was issued at (for the logs' priority column).
    pub slot_prio: Vec<u16>,
}

impl State {
    pub fn new(p: &Pattern, start: Instant) -> State {
        State {
            held: None,
            slot_prio: vec![p.issue.ioprio().unwrap_or(0); p.buffers.max(p.depth).max(1)],
            probe: p
                .issue
                .latency
                .as_ref()
                .filter(|t| !t.target.is_zero())
                .map(|t| Probe::new(t, p.depth, start)),
        }
    }
}

impl Driver<'_> {
    /// The most I/Os in flight now: the job's iodepth, or the depth latency_target's search
    /// is at (none while it waits for the queue to drain).
    #[inline]
    pub(super) fn depth(&mut self) -> usize {
        let Some(pr) = self.issue.probe.as_mut() else {
            return self.p.depth.max(1);
        };
        if pr.quiesce {
            if self.free.len() < self.slots {
                return 0;
            }
            pr.quiesce = false;
        }
        pr.qd
    }

    /// With serialize_overlap, holds back an I/O whose bytes overlap one in flight (fio's
    /// in_flight_overlap): its slot goes back and it is issued first once something completes.
    #[inline]
    pub(super) fn hold_overlap(&mut self, slot: usize, io: (bool, u64, usize, u64)) -> bool {
        if !self.p.issue.serialize_overlap || self.free.len() + 1 >= self.slots {
            return false;
        }
        // In the loop's offsets, as the I/Os in flight keep theirs (unique across files).
        let start = self.files.virt(io.2, self.p.base + io.3);
        let end = start + io.1;
        let busy = (0..self.slots).filter(|s| *s != slot && !self.free.contains(s));
        let overlap = busy
            .map(|s| self.kind[s])
            .any(|(_, len, off)| off < end && start < off + len as u64);
        if overlap {
            self.issue.held = Some(io);
            self.free.push_front(slot);
        }
        overlap
    }

    /// Sets the worker thread's I/O priority when the job gives one; false (and the worker's
    /// error) when the kernel refuses it.
    pub(super) fn set_priority(&mut self) -> bool {
        let Some(v) = self.p.issue.ioprio() else {
            return true;
        };
        match crate::sys::ioflags::ioprio_set(v) {
            Ok(()) => true,
            Err(e) => {
                self.st.fail(super::super::Failure::io("ioprio_set", &e));
                false
            }
        }
    }

    /// The priority and flags of the next I/O: a cmdprio priority for the share of I/Os its
    /// options give (drawn as fio draws it), else the job's own (0: none given).
    #[inline]
    pub(super) fn flags_of(&mut self, slot: usize, write: bool, len: u64) -> IoFlags {
        let pattern = self.p;
        let io = &pattern.issue;
        let mut prio = 0;
        if !io.cmdprio.is_off() && io.cmdprio.share(write, len) > 0 {
            let r = (self.rng.next_u64() % 100) as u32;
            prio = io.cmdprio.pick(write, len, r).unwrap_or(0);
        }
        // Else the job's (fio's io_uring puts td->ioprio in every SQE: a submitting context
        // need not be the worker's; for libaio it is the priority ioprio_set gave the thread).
        if prio == 0 {
            prio = io.ioprio().unwrap_or(0);
        }
        // What the logs say it ran at: its own, else the job's (prio is that by now).
        self.issue.slot_prio[slot] = prio;
        let atomic = write && io.atomic;
        IoFlags {
            prio,
            rw_flags: if atomic {
                crate::sys::ioflags::RWF_ATOMIC
            } else {
                0
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::*;
    use crate::plan::issue::ioprio_value;

    fn run(p: &Pattern) -> Vec<(bool, usize, crate::sys::ioflags::IoFlags)> {
        let mut e = super::super::fake::Seen::default();
        let progress = crate::metrics::progress::Progress::new();
        let st = drive_on(&mut e, p, &WriteData::new(1, 4096, 0), Live::of(&progress));
        assert!(st.error.is_none(), "{:?}", st.error);
        e.ops
            .iter()
            .map(|(_, io)| (io.dir == crate::plan::dir::Dir::Write, io.len, io.flags))
            .collect()
    }

    /// Keeps every I/O in flight until asked for completions, then completes the oldest; counts
    /// the I/Os queued while an overlapping one was in flight.
    #[derive(Default)]
    struct Slow {
        buf: Vec<u8>,
        flight: std::collections::VecDeque<(usize, u64, usize)>,
        queued: usize,
        overlapped: usize,
    }

    impl IoEngine for Slow {
        fn buffer(&mut self, slot: usize) -> &mut [u8] {
            super::super::fake::slot(&mut self.buf, slot, 8192)
        }
        fn queue(&mut self, io: Io) -> std::io::Result<()> {
            let end = io.offset + io.len as u64;
            let hit = |f: &(usize, u64, usize)| f.1 < end && io.offset < f.1 + f.2 as u64;
            self.overlapped += self.flight.iter().any(hit) as usize;
            self.queued += 1;
            self.flight.push_back((io.slot, io.offset, io.len));
            Ok(())
        }
        fn complete(
            &mut self,
            _: usize,
            mut hand: impl FnMut(&[crate::engine::Reaped]),
        ) -> std::io::Result<()> {
            let mut out = Vec::new();
            let mut done = |slot: usize, res: i64| out.push(crate::engine::Reaped { slot, res });
            if let Some((s, _, l)) = self.flight.pop_front() {
                done(s, l as i64);
            }
            hand(&out);
            Ok(())
        }
        fn sync(&mut self, _: crate::engine::SyncKind) -> std::io::Result<()> {
            Ok(())
        }
        fn describe(&self) -> String {
            "slow".into()
        }
    }

    #[test]
    fn serialize_overlap_never_has_two_overlapping_ios_in_flight() {
        let mut p = Pattern::basic(Rw::RandWrite, BlockSize::Range(512, 8192), 8, 64 << 10);
        p.randommap = false;
        p.limit_bytes = Some(4 << 20);
        let progress = crate::metrics::progress::Progress::new();
        let data = WriteData::new(1, 8192, 0);
        let mut e = Slow::default();
        drive_on(&mut e, &p, &data, Live::of(&progress));
        assert!(e.overlapped > 100, "{} of {}", e.overlapped, e.queued);
        p.issue.serialize_overlap = true;
        let mut e = Slow::default();
        let st = drive_on(&mut e, &p, &data, Live::of(&progress));
        assert!(st.error.is_none());
        assert_eq!(e.overlapped, 0, "of {}", e.queued);
        assert!(st.write_bytes >= 4 << 20);
    }

    #[test]
    fn cmdprio_percentage_gives_that_share_of_ios_the_priority_and_the_rest_the_jobs() {
        let mut p = Pattern::basic(Rw::RandRead, BlockSize::Fixed(4096), 8, 40 << 20);
        p.issue.class = Some(3);
        p.issue.cmdprio.percentage = [20, 20];
        p.issue.cmdprio.class = [1, 1];
        let seen = run(&p);
        let rt = seen.iter().filter(|s| s.2.prio == 1 << 13).count();
        let idle = seen.iter().filter(|s| s.2.prio == 3 << 13).count();
        assert_eq!(rt + idle, seen.len());
        let share = rt as f64 / seen.len() as f64;
        assert!((0.17..0.23).contains(&share), "{share}");
        p.issue.cmdprio = Default::default();
        assert!(
            run(&p).iter().all(|s| s.2.prio == 3 << 13),
            "the job's own, every I/O"
        );
    }

    /// The latency log's priority column says each I/O's priority, as fio's log_prio does.
    #[test]
    fn the_logs_say_each_ios_priority() {
        let mut p = Pattern::basic(Rw::RandRead, BlockSize::Fixed(4096), 4, 4 << 20);
        p.issue.class = Some(3);
        p.issue.cmdprio.percentage = [20, 20];
        for (log_prio, rt, idle) in [(true, "0x2000", "0x6000"), (false, "1", "0")] {
            let mut logs = crate::plan::job::FioLogs::new();
            (logs.lat, logs.prio) = (Some("l".into()), log_prio);
            p.logs = Some(logs);
            let mut e = super::super::fake::Seen::default();
            let progress = crate::metrics::progress::Progress::new();
            let st = drive_on(&mut e, &p, &WriteData::new(1, 4096, 0), Live::of(&progress));
            let text = st.logs.unwrap().lat;
            let last = |l: &str| l.rsplit(", ").next().unwrap().to_string();
            let cols: Vec<String> = text.lines().map(last).collect();
            let n_rt = cols.iter().filter(|c| *c == rt).count();
            assert_eq!(n_rt + cols.iter().filter(|c| *c == idle).count(), 1024);
            assert!((150..260).contains(&n_rt), "{n_rt}");
        }
    }

    #[test]
    fn cmdprio_bssplit_gives_priorities_by_block_size_and_direction() {
        let mut p = Pattern::basic(
            Rw::RandRw,
            BlockSize::Split(vec![(65536, 40), (1 << 20, 60)]),
            4,
            256 << 20,
        );
        p.wbs = Some(BlockSize::Fixed(1 << 20));
        let (a, b) = (ioprio_value(1, 1, 0), ioprio_value(3, 2, 0));
        let e = |bs, perc, prio| crate::plan::issue::SplitPrio { bs, perc, prio };
        p.issue.cmdprio.bssplit = Some([
            vec![
                e(65536, 25, Some(a)),
                e(65536, 75, Some(b)),
                e(1 << 20, 0, None),
            ],
            vec![e(1 << 20, 0, None)],
        ]);
        let seen = run(&p);
        for (write, len, f) in &seen {
            match (write, len) {
                (false, 65536) => assert!([a, b].contains(&f.prio)),
                _ => assert_eq!(f.prio, 0),
            }
        }
        let small: Vec<_> = seen.iter().filter(|s| s.1 == 65536).collect();
        let share = small.iter().filter(|s| s.2.prio == a).count() as f64 / small.len() as f64;
        assert!((0.18..0.32).contains(&share), "{share}");
    }
}
