//! The I/O loop's clock: nanoseconds since the loop began. It reads the CPU's time stamp counter
//! where the kernel itself keeps time by it (its clocksource is tsc: a constant rate, in step
//! across CPUs), as fio's default clocksource=cpu does, at a fraction of a vDSO clock_gettime's
//! cost; elsewhere CLOCK_MONOTONIC (`Instant`). The counter's rate is measured once per process
//! against CLOCK_MONOTONIC (`calibrate`, called before a phase's clock starts).

use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// A reading of a loop's clock: nanoseconds since its origin.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Ns(pub u64);

impl Ns {
    /// The nanoseconds from `earlier` to this (0 if it is later).
    #[inline]
    pub fn since(self, earlier: Ns) -> u64 {
        self.0.saturating_sub(earlier.0)
    }

    #[inline]
    pub fn after(self, d: Duration) -> Ns {
        Ns(self.0.saturating_add(d.as_nanos() as u64))
    }
}

#[derive(Debug, Clone, Copy)]
pub struct Clock {
    origin: Instant,
    tsc: Option<Tsc>,
}

/// The counter at the origin, and nanoseconds per tick as a 32.32 fixed-point number.
#[derive(Debug, Clone, Copy)]
struct Tsc {
    base: u64,
    ns_per_tick: u64,
}

/// Nanoseconds per counter tick (32.32 fixed point), measured once; None where the counter is
/// not the kernel's clock.
static RATE: OnceLock<Option<u64>> = OnceLock::new();

/// Measures the counter's rate now, if it has not been (about 10 ms, once per process).
pub fn calibrate() {
    RATE.get_or_init(measure);
}

#[cfg(target_arch = "x86_64")]
fn measure() -> Option<u64> {
    if !crate::sys::host::clock_is_tsc() {
        return None;
    }
    let (t0, c0) = pair();
    std::thread::sleep(Duration::from_millis(10));
    let (t1, c1) = pair();
    let (ns, ticks) = (t1.duration_since(t0).as_nanos(), c1.saturating_sub(c0));
    (ticks > 0).then(|| ((ns << 32) / ticks as u128) as u64)
}

#[cfg(not(target_arch = "x86_64"))]
fn measure() -> Option<u64> {
    None
}

/// CLOCK_MONOTONIC and the counter read together: of a few tries, the one whose two counter
/// readings around the clock's are closest (a preemption between them would skew the rate).
#[cfg(target_arch = "x86_64")]
fn pair() -> (Instant, u64) {
    let mut best = (Instant::now(), 0, u64::MAX);
    for _ in 0..16 {
        let a = crate::sys::tsc();
        let t = Instant::now();
        let b = crate::sys::tsc();
        if b.saturating_sub(a) < best.2 {
            best = (t, a + (b.saturating_sub(a)) / 2, b.saturating_sub(a));
        }
    }
    (best.0, best.1)
}

impl Clock {
    /// A clock whose origin is now.
    pub fn start() -> Clock {
        let tsc = RATE.get_or_init(measure).map(|ns_per_tick| Tsc {
            base: tick(),
            ns_per_tick,
        });
        Clock {
            origin: Instant::now(),
            tsc,
        }
    }

    #[inline]
    pub fn now(&self) -> Ns {
        match self.tsc {
            Some(t) => {
                let ticks = tick().saturating_sub(t.base) as u128;
                Ns(((ticks * t.ns_per_tick as u128) >> 32) as u64)
            }
            None => Ns(self.origin.elapsed().as_nanos() as u64),
        }
    }

    /// The instant of a reading (to sleep until it, or for the latency-over-time cuts).
    pub fn instant(&self, t: Ns) -> Instant {
        self.origin + Duration::from_nanos(t.0)
    }
}

#[cfg(target_arch = "x86_64")]
#[inline]
fn tick() -> u64 {
    crate::sys::tsc()
}

#[cfg(not(target_arch = "x86_64"))]
#[inline]
fn tick() -> u64 {
    0
}

/// A completed I/O's latency, ns from its queueing, and its parts when the loop times them apart
/// (fio's clat and slat).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Latency {
    pub ns: u64,
    pub parts: Option<LatParts>,
}

/// An I/O's latency in two: from its submission to its completion, and from its queueing to its
/// submission.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LatParts {
    pub clat_ns: u64,
    pub slat_ns: u64,
}

impl Latency {
    /// A latency not timed apart.
    pub const fn whole(ns: u64) -> Latency {
        Latency { ns, parts: None }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Over 50 ms of sleep the loop's clock and CLOCK_MONOTONIC agree within 1%, whichever
    /// the clock reads; readings never go back.
    #[test]
    fn the_loops_clock_keeps_monotonic_time() {
        calibrate();
        let c = Clock::start();
        let t0 = Instant::now();
        let a = c.now();
        std::thread::sleep(Duration::from_millis(50));
        let b = c.now();
        let wall = t0.elapsed().as_nanos() as f64;
        let ours = b.since(a) as f64;
        assert!(
            (ours / wall - 1.0).abs() < 0.01,
            "{ours} ns against {wall} ns"
        );
        let mut last = c.now();
        for _ in 0..10_000 {
            let n = c.now();
            assert!(n >= last);
            last = n;
        }
        assert_eq!(c.instant(Ns(0)), c.origin);
    }
}
