//! When a worker stops issuing: its bytes or I/Os done, its runtime over, a raised flag (its
//! job's steady state reached, exitall), a stop request, or the loop's own reasons (the end of
//! its files or trace, a failure, a full filesystem).

use crate::io::clock::Ns;
use crate::io::worker::Ends;
use crate::metrics::progress::Count;
use crate::stop::StopReason;
use std::sync::atomic::{AtomicBool, Ordering};

pub struct End<'a> {
    issuing: bool,
    limit: (Option<u64>, Option<u64>),
    /// I/Os and bytes issued so far.
    issued: Count,
    deadline: Option<Ns>,
    /// Raised when the job is to end now: its steady state reached, another job's exitall.
    flags: [Option<&'a AtomicBool>; 2],
    stopped: Option<StopReason>,
}

impl<'a> End<'a> {
    /// The ends of `plan`, the runtime counted from `from` (the ramp's end).
    pub fn new(plan: &Ends, from: Ns, flags: [Option<&'a AtomicBool>; 2]) -> End<'a> {
        End {
            issuing: true,
            limit: (plan.bytes, plan.ios),
            issued: Count::default(),
            deadline: plan.runtime.map(|r| from.after(r)),
            flags,
            stopped: None,
        }
    }

    #[inline]
    pub fn issuing(&self) -> bool {
        self.issuing
    }

    /// Stops issuing (what is in flight completes).
    pub fn stop(&mut self) {
        self.issuing = false;
    }

    /// An I/O of `len` bytes went: the worker stops once it has done its bytes or I/Os.
    #[inline]
    pub fn count(&mut self, len: u64) {
        self.issued += Count::new(1, len);
        let (bytes, ios) = self.limit;
        if bytes.is_some_and(|b| self.issued.bytes >= b)
            || ios.is_some_and(|n| self.issued.ops >= n)
        {
            self.issuing = false;
        }
    }

    /// Stops issuing at the deadline (`now` being the loop's last clock reading), on a raised
    /// flag or on a stop request.
    #[inline]
    pub fn check(&mut self, now: Ns) {
        if !self.issuing {
            return;
        }
        if self.deadline.is_some_and(|d| now >= d)
            || self
                .flags
                .iter()
                .flatten()
                .any(|f| f.load(Ordering::Relaxed))
        {
            self.issuing = false;
        }
        if let Some(why) = crate::stop::requested() {
            self.stopped = Some(why);
            self.issuing = false;
        }
    }

    /// The flags that cut a wait short.
    pub fn flags(&self) -> [Option<&'a AtomicBool>; 2] {
        self.flags
    }

    /// Why the worker was stopped early, if it was.
    pub fn stopped(&self) -> Option<StopReason> {
        self.stopped
    }
}
