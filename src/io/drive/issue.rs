//! How the loop issues each I/O beyond its offset and size (`plan::issue`): the worker's I/O
//! priority (fio's prio, prioclass, priohint: ioprio_set(2) before the first I/O, as fio does)
//! and each I/O's own (fio's cmdprio_*: the engine passes it with the I/O).

use super::Driver;
use crate::sys::issue::IoFlags;

impl Driver<'_> {
    /// Sets the worker thread's I/O priority when the job gives one; false (and the worker's
    /// error) when the kernel refuses it.
    pub(super) fn set_priority(&mut self) -> bool {
        let Some(v) = self.p.issue.ioprio() else {
            return true;
        };
        match crate::sys::issue::ioprio_set(v) {
            Ok(()) => true,
            Err(e) => {
                self.st.fail(super::super::Failure::io("ioprio_set", &e));
                false
            }
        }
    }

    /// The priority and flags of the next I/O: a cmdprio priority for the share of I/Os its
    /// options give (drawn as fio draws it), else the job's own (0: the thread's).
    #[inline]
    pub(super) fn flags_of(&mut self, write: bool, len: u64) -> IoFlags {
        let io = &self.p.issue;
        let mut prio = 0;
        if !io.cmdprio.is_off() && io.cmdprio.share(write, len) > 0 {
            let r = (self.rng.next_u64() % 100) as u32;
            prio = io.cmdprio.pick(write, len, r).unwrap_or(0);
        }
        if prio == 0 && !io.cmdprio.is_off() {
            prio = io.ioprio().unwrap_or(0);
        }
        IoFlags { prio, rw_flags: 0 }
    }
}

#[cfg(test)]
mod tests {
    use super::super::*;
    use crate::plan::issue::ioprio_value;

    /// Completes every I/O at once, keeping the flags each came with.
    #[derive(Default)]
    struct Flags {
        buf: Vec<u8>,
        seen: Vec<(bool, usize, crate::sys::issue::IoFlags)>,
        done: Vec<(usize, i64)>,
    }

    impl IoEngine for Flags {
        fn buffer(&mut self, slot: usize) -> &mut [u8] {
            if self.buf.len() < (slot + 1) << 20 {
                self.buf.resize((slot + 1) << 20, 0);
            }
            &mut self.buf[slot << 20..(slot + 1) << 20]
        }
        fn queue(&mut self, io: Io) -> std::io::Result<()> {
            self.seen.push((io.write, io.len, io.flags));
            self.done.push((io.slot, io.len as i64));
            Ok(())
        }
        fn complete(&mut self, _: usize, done: &mut dyn FnMut(usize, i64)) -> std::io::Result<()> {
            self.done.drain(..).for_each(|(s, r)| done(s, r));
            Ok(())
        }
        fn sync(&mut self, _: bool) -> std::io::Result<()> {
            Ok(())
        }
        fn describe(&self) -> String {
            "flags".into()
        }
    }

    fn run(p: &Pattern) -> Vec<(bool, usize, crate::sys::issue::IoFlags)> {
        let mut e = Flags::default();
        let progress = crate::metrics::progress::Progress::new();
        let st = drive(&mut e, p, &WriteData::new(1, 4096, 0), Live::of(&progress));
        assert!(st.error.is_none(), "{:?}", st.error);
        e.seen
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
