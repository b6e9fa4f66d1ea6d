//! What a worker's errors do (fio's continue_on_error, ignore_error, fill_device, verify_fatal):
//! a failed completion is gone past (counted), ends the worker when the filesystem is full, or
//! is its failure; the first failure is the worker's error.

use crate::io::stats::Ended;
use crate::io::worker::{BadBlock, OnError, WhenFull};
use crate::io::Failure;
use crate::plan::dir::Dir;

/// What a completion's result comes to.
pub enum Verdict {
    /// It did this many bytes.
    Done(u64),
    /// It failed, and the worker goes past it (or has failed already).
    Dropped,
    /// A write met a full filesystem: the worker ends, not as an error.
    Full,
}

/// Which kind of failure a completion's is: an I/O's, or a bad block's (which may not stop
/// the worker).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    Io,
    BadBlock,
}

pub struct Outcome {
    policy: OnError,
    ended: Ended,
    /// The first failure among the completions of a reap, settled once it is done.
    pending: Option<(Fault, Failure)>,
}

impl Outcome {
    pub fn new(policy: &OnError) -> Outcome {
        Outcome {
            policy: policy.clone(),
            ended: Ended::default(),
            pending: None,
        }
    }

    /// What a completion in direction `d` with result `res` (bytes, or a negative errno) of an
    /// I/O of `len` bytes comes to; `place` says where it was (file, byte) for the failure.
    #[inline]
    pub fn judge(&mut self, d: Dir, (res, len): (i64, u64), place: (usize, u64)) -> Verdict {
        if res > 0 || (res == 0 && len == 0) {
            return Verdict::Done(res as u64);
        }
        self.failed(d, res, place)
    }

    #[cold]
    fn failed(&mut self, d: Dir, res: i64, (file, at): (usize, u64)) -> Verdict {
        if res == 0 {
            self.pending.get_or_insert_with(|| {
                let f = Failure {
                    op: "read".into(),
                    message: "read returned 0 bytes: the file is shorter than the job's size"
                        .into(),
                    ..Default::default()
                };
                (Fault::Io, f.at(at).in_file(file))
            });
            return Verdict::Dropped;
        }
        let errno = (-res) as i32;
        let full = [libc::ENOSPC, libc::EDQUOT].contains(&errno);
        if d == Dir::Write && full && self.policy.when_full == WhenFull::Ends {
            self.ended.filled = true;
            return Verdict::Full;
        }
        let f = Failure::errno(d.name(), errno).at(at).in_file(file);
        if self.policy.go_past[d].contains(&errno) {
            self.ended.gone_past += 1;
            self.ended
                .first_gone_past
                .get_or_insert_with(|| f.to_string());
            return Verdict::Dropped;
        }
        self.pending.get_or_insert((Fault::Io, f));
        Verdict::Dropped
    }

    /// A read's block failed its check at `at` of file `file` (the session words it).
    pub fn bad_block(&mut self, (file, at): (usize, u64)) {
        if self.pending.is_none() && self.ended.error.is_none() {
            let f = Failure {
                op: "verify".into(),
                offset: Some(at),
                file,
                ..Default::default()
            };
            self.pending = Some((Fault::BadBlock, f));
        }
    }

    /// The reap is done: its failure becomes the worker's; whether the worker stops.
    pub fn settle(&mut self) -> bool {
        let Some((fault, f)) = self.pending.take() else {
            return false;
        };
        self.fail(f);
        fault == Fault::Io || self.policy.bad_block == BadBlock::Stops
    }

    /// Keeps the first failure (and its words as the error); later ones are consequences.
    pub fn fail(&mut self, f: Failure) {
        if self.ended.error.is_none() {
            self.ended.error = Some(f.to_string());
            self.ended.failure = Some(f);
        }
    }

    /// Whether the worker has failed.
    pub fn failed_already(&self) -> bool {
        self.ended.error.is_some()
    }

    pub fn finish(self) -> Ended {
        self.ended
    }
}
