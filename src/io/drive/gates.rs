//! What holds the next I/O back (fio's rate, thinktime, flow, latency target and overlap
//! checks): a hold until an instant or a pause once the queue drains, a flow ahead of its share,
//! the queue's depth (searched, with a latency target), a rate not yet due, an overlap with an
//! I/O in flight. A gate the worker does not use is None and costs it a test per I/O.

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use super::flight::Flight;
use crate::io::clock::{Clock, Ns};
use crate::io::pace::{self, Pacer, Think, Thinker};
use crate::io::probe::{Probe, Verdict};
use crate::io::worker::{FlowSeat, GatePlan, Overlap};
use crate::io::DataGen;
use crate::plan::dir::Dir;

/// What holds the next I/O back.
#[derive(Clone, Copy)]
enum Hold {
    /// Until then (a rate, a replayed operation not due, a flow ahead).
    Until(Ns),
    /// A pause once the queue has drained.
    Think(Think),
}

pub struct Gates {
    hold: Option<Hold>,
    rate: Option<Pacer>,
    think: Option<Thinker>,
    flow: Option<FlowSeat>,
    probe: Option<Probe>,
    overlap: Overlap,
    depth: usize,
}

impl Gates {
    pub fn new(plan: &GatePlan, depth: usize, start: Ns) -> Gates {
        Gates {
            hold: None,
            rate: plan.rate.as_ref().map(|r| Pacer::new(r, start)),
            think: plan.think.map(Thinker::new),
            flow: plan.flow.clone(),
            probe: plan
                .latency
                .as_ref()
                .filter(|t| !t.target.is_zero())
                .map(|t| Probe::new(t, depth, start)),
            overlap: plan.overlap,
            depth: depth.max(1),
        }
    }

    /// Whether another I/O may go now, `busy` being in flight: no hold, the flow not ahead,
    /// the queue not full.
    #[inline]
    pub fn open(&mut self, busy: usize, clock: &Clock) -> bool {
        match self.hold {
            Some(Hold::Think(_)) => return false,
            Some(Hold::Until(t)) if clock.now() < t => return false,
            Some(Hold::Until(_)) => self.hold = None,
            None => {}
        }
        if let Some(f) = &self.flow {
            if f.flow.ahead(f.seat) {
                let wait = f.sleep.max(Duration::from_micros(50));
                self.hold = Some(Hold::Until(clock.now().after(wait)));
                return false;
            }
        }
        busy < self.depth(busy)
    }

    /// The most I/Os in flight now: the queue's depth, or the depth the latency search is at
    /// (none while it waits for the queue to drain).
    #[inline]
    fn depth(&mut self, busy: usize) -> usize {
        match self.probe.as_mut() {
            Some(p) => p.depth(busy),
            None => self.depth,
        }
    }

    /// When an I/O of `len` bytes in direction `d` may go: None for now, or the time the rate
    /// allows it (the loop holds it until then).
    #[inline]
    pub fn admit(&mut self, d: Dir, len: u64, rng: &mut DataGen, clock: &Clock) -> Option<Ns> {
        let t = self.rate.as_mut()?.admit(d, len, rng, clock)?;
        self.hold = Some(Hold::Until(t));
        Some(t)
    }

    /// Nothing goes before `t`.
    pub fn hold_until(&mut self, t: Ns) {
        self.hold = Some(Hold::Until(t));
    }

    /// Whether an I/O over the loop offsets [at, at + len) must wait for one in flight it
    /// overlaps (serialized overlap).
    #[inline]
    pub fn overlaps(&self, flight: &Flight, at: u64, len: u64) -> bool {
        self.overlap == Overlap::Serialized && flight.busy() > 0 && flight.overlaps(at, len)
    }

    /// An I/O went: the flow counts it, and a pause may be due.
    #[inline]
    pub fn issued(&mut self) {
        if let Some(f) = &self.flow {
            f.flow.count(f.seat);
        }
        if let Some(t) = self.think.as_mut().and_then(Thinker::issued) {
            self.hold = Some(Hold::Think(t));
        }
    }

    /// A completion's latency, for the depth search.
    #[inline]
    pub fn on_done(&mut self, ns: u64, now: Ns) -> Verdict {
        match self.probe.as_mut() {
            Some(p) => p.on_done(ns, now),
            None => Verdict::Go,
        }
    }

    /// Whether the queue must drain before the next I/O (a pause is due).
    #[inline]
    pub fn draining(&self) -> bool {
        matches!(self.hold, Some(Hold::Think(_)))
    }

    /// Nothing in flight: waits out the hold (cut short by a raised flag or a stop request).
    pub fn wait(&mut self, clock: &Clock, ends: &[Option<&AtomicBool>]) {
        match self.hold.take() {
            Some(Hold::Until(t)) => pace::wait_until_or(clock.instant(t), ends),
            Some(Hold::Think(t)) => pace::think(t, ends),
            None => {}
        }
    }

    /// The worker takes (or leaves) its seat in its flow.
    pub fn seated(&self, on: bool) {
        if let Some(f) = &self.flow {
            if on {
                f.flow.join(f.seat);
            } else {
                f.flow.leave(f.seat);
            }
        }
    }

    /// The depth latency_target's search settled on (or was at).
    pub fn depth_found(&self) -> Option<u32> {
        self.probe.as_ref().and_then(Probe::found)
    }
}
