//! A replayed trace in the loop (fio's read_iolog): the next operation when it is due.

use std::time::Instant;

use super::{Driver, Hold};
use crate::io::iolog::{OpKind, Replay};

/// What a replayed trace gives next.
pub(super) enum Step {
    Io(bool, u64, u64),
    /// Not due yet, or a sync first.
    Wait,
    End,
}

impl Driver<'_> {
    /// The next operation of a replayed trace: an I/O, a wait until it is due (or for the
    /// queue to drain before a sync), or the end.
    pub(super) fn replay_next(&mut self, r: &Replay) -> Step {
        let Some(op) = r.ops.get(self.rpos) else {
            return Step::End;
        };
        if !r.no_stall {
            let due = self.began + op.at;
            if Instant::now() < due {
                self.hold = Some(Hold::Until(due));
                return Step::Wait;
            }
        }
        self.rpos += 1;
        match op.kind {
            OpKind::Read | OpKind::Write => Step::Io(op.kind == OpKind::Write, op.len, op.offset),
            OpKind::Sync | OpKind::Datasync => {
                self.sync_due = Some(op.kind == OpKind::Datasync);
                Step::Wait
            }
            // Not replayed (fsbench issues no trims; the parser leaves them out).
            OpKind::Trim => Step::Wait,
        }
    }
}
