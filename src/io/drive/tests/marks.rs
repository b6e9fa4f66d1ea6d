//! The flags each I/O carries: its priority (the worker's, or cmdprio's for a share of I/Os)
//! and RWF_ATOMIC on writes.

use super::*;
use crate::io::worker::Atomic;
use crate::plan::job::per_io::{ioprio_value, CmdPrio, SplitPrio};
use crate::sys::ioflags::RWF_ATOMIC;

fn flags(p: &WorkerPlan) -> Vec<(Dir, usize, crate::sys::ioflags::IoFlags)> {
    let (e, _) = seen(p);
    e.ops.iter().map(|io| (io.dir, io.len, io.flags)).collect()
}

#[test]
fn cmdprio_percentage_gives_that_share_of_ios_the_priority_and_the_rest_the_workers() {
    let mut p = plan(reads(), random(), BlockSize::Fixed(4096), 8, 40 << 20);
    p.ops.marks = Marks {
        thread: Some(3 << 13),
        per_io: Some(CmdPrio {
            percentage: [20, 20],
            class: [1, 1],
            ..CmdPrio::default()
        }),
        atomic: Atomic::No,
    };
    let seen = flags(&p);
    let rt = seen.iter().filter(|s| s.2.prio == 1 << 13).count();
    let idle = seen.iter().filter(|s| s.2.prio == 3 << 13).count();
    assert_eq!(rt + idle, seen.len());
    let share = rt as f64 / seen.len() as f64;
    assert!((0.17..0.23).contains(&share), "{share}");
    p.ops.marks.per_io = None;
    assert!(
        flags(&p).iter().all(|s| s.2.prio == 3 << 13),
        "the worker's own, every I/O"
    );
}

#[test]
fn cmdprio_bssplit_gives_priorities_by_block_size_and_direction() {
    let split = BlockSize::Split(vec![(65536, 40), (1 << 20, 60)]);
    let mixed = Mix::Mixed { read_pct: 50 };
    let mut p = plan(mixed, random(), split, 4, 256 << 20);
    p.ops.bs[Dir::Write] = BlockSize::Fixed(1 << 20);
    let (a, b) = (ioprio_value(1, 1, 0), ioprio_value(3, 2, 0));
    let e = |bs, perc, prio| SplitPrio { bs, perc, prio };
    p.ops.marks.per_io = Some(CmdPrio {
        bssplit: Some([
            vec![
                e(65536, 25, Some(a)),
                e(65536, 75, Some(b)),
                e(1 << 20, 0, None),
            ],
            vec![e(1 << 20, 0, None)],
        ]),
        ..CmdPrio::default()
    });
    let seen = flags(&p);
    for (dir, len, f) in &seen {
        match (dir, len) {
            (Dir::Read, 65536) => assert!([a, b].contains(&f.prio)),
            _ => assert_eq!(f.prio, 0),
        }
    }
    let small: Vec<_> = seen.iter().filter(|s| s.1 == 65536).collect();
    let share = small.iter().filter(|s| s.2.prio == a).count() as f64 / small.len() as f64;
    assert!((0.18..0.32).contains(&share), "{share}");
}

#[test]
fn atomic_marks_writes_only() {
    let mixed = Mix::Mixed { read_pct: 50 };
    let mut p = plan(mixed, random(), BlockSize::Fixed(4096), 4, 1 << 20);
    p.ops.marks.atomic = Atomic::Writes;
    let seen = flags(&p);
    assert!(seen.iter().any(|s| s.0 == Dir::Read));
    for (dir, _, f) in seen {
        let want = if dir == Dir::Write { RWF_ATOMIC } else { 0 };
        assert_eq!(f.rw_flags, want, "{dir:?}");
    }
}
